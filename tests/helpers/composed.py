"""The configs the scripts run with, composed in-process (so numba and torch load once per test
session instead of once per subprocess), and how a user error ends there."""

import logging
from contextlib import contextmanager
from pathlib import Path

import pytest
from hydra import compose, initialize_config_dir

from scrofazero import entry

ROOT = Path(__file__).resolve().parents[2]


def config(name, *overrides):
    """The config `python {name}.py *overrides progress=false` runs with: hydra's compose of
    configs/{name}.yaml, the schemas registered as the scripts register them."""
    entry.register_configs()
    with initialize_config_dir(config_dir=str(ROOT / "configs"), version_base="1.3"):
        return compose(config_name=name, overrides=[*overrides, "progress=false"])


def refused(job, cfg, capsys, monkeypatch):
    """stderr of `job(cfg)` (entry.train or entry.evaluate), which must end as the scripts end
    on a user error: one line on stderr and exit status 2."""
    monkeypatch.delenv("HYDRA_FULL_ERROR", raising=False)  # it would raise instead
    capsys.readouterr()
    with pytest.raises(SystemExit) as exit_:
        job(cfg)
    assert exit_.value.code == 2
    return capsys.readouterr().err


def settings_of(cfg):
    """The checked dataclasses a composed config gives, as the scripts pass them on: train.py's
    (config.check_train) or evaluate.py's (config.check_evaluate)."""
    from omegaconf import OmegaConf

    from scrofazero.config import EvaluateConfig, check_evaluate, check_train, evaluate_settings

    if OmegaConf.get_type(cfg) is EvaluateConfig:
        return check_evaluate(evaluate_settings(cfg))
    return check_train(OmegaConf.to_object(cfg))


def script(name, *args):
    """`python {name} *args` run in this process, as a CompletedProcess: the script file itself
    (runpy, as `__main__`, with the command line in sys.argv), so hydra parses the arguments and
    `entry.run_script` ends a user error exactly as in a subprocess; only the interpreter's
    start (some 4 s of imports on a 2-core machine) is saved. SystemExit gives the return code
    and an uncaught exception code 1 with its traceback on stderr, as Python's own exit would.
    What a process would have taken with it is given back: sys.argv, the environment, torch's
    thread count, the global random states and logging (below). A test of the process boundary
    itself (a kill, a lock held by another process, the working folder, worker processes) runs
    a subprocess."""
    import contextlib
    import io
    import os
    import runpy
    import subprocess
    import sys
    import traceback

    import torch
    from kill_run import GlobalRandom

    out, err = io.StringIO(), io.StringIO()
    argv, environ, threads = sys.argv, dict(os.environ), torch.get_num_threads()
    sys.argv = [str(ROOT / name), *args]
    code = 0
    try:
        with GlobalRandom(), _logging_kept(), contextlib.redirect_stdout(out), \
                contextlib.redirect_stderr(err):
            try:
                runpy.run_path(str(ROOT / name), run_name="__main__")
            except SystemExit as exit_:
                code = exit_.code if isinstance(exit_.code, int) else int(exit_.code is not None)
                if isinstance(exit_.code, str):
                    print(exit_.code, file=sys.stderr)
            except Exception:
                traceback.print_exc()
                code = 1
    finally:
        sys.argv = argv
        os.environ.clear()
        os.environ.update(environ)
        torch.set_num_threads(threads)
    return subprocess.CompletedProcess([name, *args], code, out.getvalue(), err.getvalue())


@contextmanager
def _logging_kept():
    """Logging as it was, around an in-process hydra run: hydra's logging settings (configs/*.yaml:
    disabled) close the handlers they find (absl's, once OpenSpiel is loaded, holds pytest's
    captured stderr) and disable every existing logger, which would silence the later tests'
    loggers in this process."""
    every = logging.Logger.manager.loggerDict.values()
    loggers = [logging.getLogger(), *(x for x in every if isinstance(x, logging.Logger))]
    kept = [(logger, logger.disabled, logger.level, list(logger.handlers)) for logger in loggers]
    handler_list, handlers = logging._handlerList[:], dict(logging._handlers)
    del logging._handlerList[:]  # nothing of this process's for hydra to close
    try:
        yield
    finally:
        logging._handlerList[:] = handler_list
        logging._handlers.clear()
        logging._handlers.update(handlers)
        for logger, disabled, level, its_handlers in kept:
            logger.disabled, logger.level, logger.handlers[:] = disabled, level, its_handlers
