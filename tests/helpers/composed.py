"""The configs the scripts run with, composed in-process (so numba and torch load once per test
session instead of once per subprocess), and how a user error ends there."""

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
