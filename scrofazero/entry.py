"""What the entry points run: one row per game (its config schema, its trainer, its evaluation
runner) and the registration of every hydra schema. train.py and evaluate.py pick the row of
`game.name`; the runners know nothing of each other. The settings are checked against their
dataclasses' declared bounds (config.check_train, config.check_evaluate) and evaluate.py's input
files are read and checked (the row's `inputs`) before any work. User errors (missing or corrupt
files, bad settings, a run folder in use, and a command line hydra cannot compose: a value of the
wrong type, an unknown setting, `+key=value` adding one that no schema declares) end the
command with one line on stderr and exit status 2; the full traceback only with debug=true or
HYDRA_FULL_ERROR=1. Ctrl-C ends train.py and play.py in one line too, saying what was kept and
how to go on (exit status 130, the shell's for an interrupt).
"""

from __future__ import annotations

import dataclasses
import os
import re
import shlex
import sys
from collections.abc import Callable
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from pathlib import Path
from typing import NoReturn
from urllib.parse import urlsplit

from hydra.core.config_store import ConfigStore
from hydra.errors import HydraException
from omegaconf import OmegaConf
from omegaconf.errors import ConfigAttributeError, ConfigKeyError, OmegaConfBaseException

from scrofazero.agents import player_names
from scrofazero.atomic import check_writable, write_json_atomic
from scrofazero.config import (
    EvaluateConfig,
    GongzhuTrainConfig,
    ModelConfig,
    TrainConfig,
    TrainRootConfig,
    check_declared,
    check_evaluate,
    check_train,
    evaluate_settings,
    unknown_setting,
)
from scrofazero.eval.runner import evaluate_gongzhu
from scrofazero.fish.config import FishConfig, check_fish_inputs
from scrofazero.fish.learning.train import run_fish_training
from scrofazero.fish.runner import evaluate_fish
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.nn.checkpoint import LATEST
from scrofazero.run_lock import RunLocked
from scrofazero.search.mcts import MCTSConfig
from scrofazero.serve.common.config import PlayConfig
from scrofazero.settings import GameConfig, check_bounds
from scrofazero.tiny_crew.config import TinyCrewConfig, check_tiny_crew_inputs
from scrofazero.tiny_crew.runner import evaluate_tiny_crew
from scrofazero.tiny_crew.train import TRAINER_FILE, run_tiny_crew_training
from scrofazero.train.distributed import run_training_ray
from scrofazero.train.inference_fit import CHECKPOINT as FIT_CHECKPOINT
from scrofazero.train.inference_fit import run_inference_fit
from scrofazero.train.loop import run_training as train_gongzhu

# What a user can cause and fix: bad values, missing/corrupt/unwritable files (CheckpointError,
# DealError, TranscriptError are ValueErrors), a run folder in use, a player that kills its
# worker process.
USER_ERRORS = (ValueError, OSError, RunLocked, BrokenProcessPool)
# What composing a command line raises before any job runs: a value that cannot be converted to
# its field's type, an unknown setting or option, bad override syntax.
COMPOSE_ERRORS = (HydraException, OmegaConfBaseException)
GONGZHU_GROUPS = ("model", "search", "train", "experiment")  # configs/train_root/gongzhu.yaml

# evaluate.py's mode flags (hydra takes key=value overrides only), a file given as model=PATH
# (`model` names train.py's network group), and the names the players' settings had before
# (flat before each player had its group; the raw player's sampling settings before they were
# the sampler's group): deprecated, each sets today's setting, with a note.
EVALUATE_FLAGS = {"--matrix": "mode=matrix", "--wpg": "mode=wpg"}
EVALUATE_KEYS = {"model": "predictor"}
DEPRECATED_KEYS = {"greed_samples": "greed.num_samples", "raw_deals": "raw.sampling.num_deals",
                   "raw_mode": "raw.mode", "raw.num_deals": "raw.sampling.num_deals",
                   "raw.sampling": "raw.sampling.method", "raw.beliefs": "raw.sampling.beliefs",
                   "raw.calibrate": "raw.sampling.calibrate",
                   "raw.calibrate_above": "raw.sampling.calibrate_above"}


@dataclass(frozen=True)
class GameEntry:
    schema: type  # the game's config group schema (configs/game/<name>.yaml extends it)
    train: Callable  # train.py's runner (its checked settings, TrainRootConfig's) -> run
    evaluate: Callable  # evaluate.py's runner (its checked EvaluateConfig) -> result dict
    # reads and checks evaluate.py's input files (the checked EvaluateConfig)
    inputs: Callable = lambda settings: None
    # the file of the run folder that resume=true continues from (settings) -> its name
    checkpoint: Callable = lambda settings: LATEST


def check_gongzhu_inputs(cfg: EvaluateConfig) -> None:
    """evaluate.py game=gongzhu: the deal file holds the deals asked for (load_deals would play
    fewer, silently), read before any work."""
    name = "belief_games" if cfg.mode == "belief" else "deals"
    asked = getattr(cfg, name)
    if asked is None:
        return
    held = len(load_deals(cfg.deals_file))
    if asked > held:
        source = cfg.deals_file or "the standard deal file"
        hint = "" if cfg.deals_file else " (deals_file=PATH plays another file)"
        raise ValueError(f"{name}={asked}: {source} holds only {held} deals{hint}")


GAMES = {
    "gongzhu": GameEntry(GameConfig, lambda cfg: (train_gongzhu(cfg) if cfg.learner == "selfplay"
                                                 else run_inference_fit(cfg)), evaluate_gongzhu,
                         check_gongzhu_inputs, lambda cfg: (LATEST if cfg.learner == "selfplay"
                                                            else FIT_CHECKPOINT)),
    "tiny_crew": GameEntry(TinyCrewConfig, run_tiny_crew_training, evaluate_tiny_crew,
                           check_tiny_crew_inputs, lambda cfg: TRAINER_FILE),
    "fish": GameEntry(FishConfig, run_fish_training, evaluate_fish, check_fish_inputs),
}


def register_configs() -> None:
    """Register the schemas in hydra's ConfigStore so the YAML files in configs/ can extend them."""
    store = ConfigStore.instance()
    store.store(name="evaluate_schema", node=EvaluateConfig)
    store.store(name="train_schema", node=TrainRootConfig)
    store.store(group="train_root", name="gongzhu_schema", node=GongzhuTrainConfig)
    store.store(name="play_schema", node=PlayConfig)
    for name, entry in GAMES.items():
        store.store(group="game", name=f"{name}_schema", node=entry.schema)
    store.store(group="model", name="model_schema", node=ModelConfig)
    store.store(group="search", name="search_schema", node=MCTSConfig)
    store.store(group="train", name="train_schema", node=TrainConfig)


def game_entry(name: str) -> GameEntry:
    if name not in GAMES:
        raise ValueError(f"unknown game {name!r}; choose from {', '.join(GAMES)}")
    return GAMES[name]


# HYDRA_FULL_ERROR as the user set it while run_script has set it for hydra (None: not within
# run_script, the environment tells).
_user_full_error: bool | None = None


def _full_traceback(debug) -> bool:
    """Whether an error shows its traceback: debug=true, or HYDRA_FULL_ERROR=1 set by the user."""
    if _user_full_error is None:
        return bool(debug) or os.environ.get("HYDRA_FULL_ERROR") == "1"
    return bool(debug) or _user_full_error


def _exit_with(message: str) -> NoReturn:
    """End the command as every user error ends: one line on stderr, exit status 2."""
    message = " ".join(message.split())
    print(f"error: {message} (debug=true shows the traceback)", file=sys.stderr)
    sys.exit(2)


def reported(job: Callable, cfg):
    """job(cfg), with a user error turned into one line on stderr and exit status 2."""
    try:
        return job(cfg)
    except USER_ERRORS as err:
        if _full_traceback(cfg.get("debug")):
            raise
        _exit_with(" ".join(str(err).split()) or type(err).__name__)


def run_script(main: Callable[[], None]) -> None:
    """Run a script's hydra.main function. A command line hydra cannot compose ends like every
    other bad setting, in one line naming it and exit status 2 (hydra alone prints several lines
    and exits 1); hydra's own flags (-m, --help, --cfg, ...) are untouched. Hydra raises its
    errors instead of printing them while HYDRA_FULL_ERROR=1, so it is set meanwhile."""
    global _user_full_error
    before = os.environ.get("HYDRA_FULL_ERROR")
    _user_full_error = before == "1"
    os.environ["HYDRA_FULL_ERROR"] = "1"
    try:
        main()
    except COMPOSE_ERRORS as err:
        debug = any(arg.lower() == "debug=true" for arg in sys.argv[1:])
        if _full_traceback(debug) or _within_a_job(err):
            raise
        _exit_with(composition_message(err))
    finally:
        _user_full_error = None
        if before is None:
            os.environ.pop("HYDRA_FULL_ERROR", None)
        else:
            os.environ["HYDRA_FULL_ERROR"] = before


def _within_a_job(err: BaseException) -> bool:
    """Whether `err` came out of a job (train, evaluate, play) rather than out of composing its
    config: a job's errors pass through `reported`."""
    frame = err.__traceback__
    while frame is not None:
        if frame.tb_frame.f_code is reported.__code__:
            return True
        frame = frame.tb_next
    return False


def composition_message(err: BaseException) -> str:
    """A composition error as `setting=value: what is wrong`: hydra's message without the config
    file it arose in and its config search path, and the first line of OmegaConf's cause (the
    rest repeats the key and names the schema classes); a setting its group lacks as
    config.unknown_setting says it (with the nearest one it has)."""
    message = str(err).split("\nConfig search path")[0].strip()
    message = re.sub(r"^In '[^']*': ", "", message).removeprefix("Error merging override ")
    cause = err.__cause__
    override = re.match(r"Could not override '([\w.]+)'", message)
    # a key the schema lacks
    if (override and isinstance(cause, (ConfigKeyError, ConfigAttributeError))
            and cause.object_type is not None and dataclasses.is_dataclass(cause.object_type)):
        return unknown_setting(override.group(1), str(cause.key), cause.object_type)
    if isinstance(cause, OmegaConfBaseException) and str(cause).strip():
        message += ": " + str(cause).strip().splitlines()[0]
    unknown = re.match(r"Could not override '(\w+)", message)
    if unknown and unknown.group(1) in GONGZHU_GROUPS:  # a side game's run, most likely
        message += f" ({', '.join(GONGZHU_GROUPS)} are settings of train.py game=gongzhu only)"
    return message


def evaluate_arguments(argv: list[str]) -> list[str]:
    """evaluate.py's command line (after the script's name) as hydra takes it: the mode flags
    as `mode=`, model=PATH as predictor=PATH and a deprecated flat name as its group's setting,
    with a note on stderr. Two different modes (--wpg --matrix, or a flag and mode=) end the
    command as a bad setting does: hydra would run the last one."""
    modes = [arg for arg in argv if arg in EVALUATE_FLAGS or arg.startswith("mode=")]
    if len({EVALUATE_FLAGS.get(arg, arg) for arg in modes}) > 1:
        _exit_with(f"{' and '.join(modes)}: choose one mode")
    out = []
    for arg in argv:
        key, equals, value = arg.partition("=")
        if arg in EVALUATE_FLAGS:
            arg = EVALUATE_FLAGS[arg]
        elif equals and key in EVALUATE_KEYS:
            arg = f"{EVALUATE_KEYS[key]}={value}"
        elif equals and key in DEPRECATED_KEYS:
            arg = f"{DEPRECATED_KEYS[key]}={value}"
            print(f"note: {key}= is deprecated; it sets {DEPRECATED_KEYS[key]}=", file=sys.stderr)
        out.append(arg)
    return out


def train(cfg):
    """The game's trainer (a Ctrl-C comes out as KeyboardInterrupt, as any kill would)."""
    return reported(_train, cfg)


def train_command(cfg):
    """train.py: the game's trainer; Ctrl-C ends it in one line naming the last checkpoint and
    the command that continues from it."""
    try:
        return train(cfg)
    except KeyboardInterrupt:
        if _full_traceback(cfg.get("debug")):
            raise
        _stop_with(interrupted_run(cfg, sys.argv))


def interrupted_run(cfg, argv: list[str]) -> str:
    """What a run stopped by Ctrl-C kept: its last checkpoint and the command line (`argv`,
    the script's first) that continues it, or nothing (the run harness removes a fresh run's
    folder before its first checkpoint past step 0)."""
    checkpoint = Path(cfg.checkpoint_dir) / cfg.run / game_entry(cfg.game.name).checkpoint(cfg)
    if not checkpoint.is_file():
        return ("interrupted before the run's first checkpoint: nothing was kept; the same "
                "command starts it again")
    return (f"interrupted: the last checkpoint is {checkpoint}; continue with: "
            f"{resume_command(argv)}")


def resume_command(argv: list[str]) -> str:
    """The command line that continues the run of train.py's `argv`: the same settings, with
    resume=true for any resume= or resume_from= (a resumed run reads its own folder)."""
    kept = [arg for arg in argv[1:]
            if arg.partition("=")[0].lstrip("+~") not in ("resume", "resume_from")]
    return shlex.join(["python", argv[0], *kept, "resume=true"])


def _stop_with(message: str) -> NoReturn:
    """End a command stopped by Ctrl-C: one line on stderr, exit status 130."""
    print(message, file=sys.stderr)
    sys.exit(130)


def evaluate(cfg) -> dict:
    """evaluate.py: the game's evaluation runner; the result is written to cfg.out as JSON."""
    return reported(_evaluate, cfg)


def play(cfg) -> None:
    """play.py: serve tables to people and bots (needs the `[play]` extra) until Ctrl-C, which
    ends it in one line saying where the records are."""
    try:
        reported(_play, cfg)
    except KeyboardInterrupt:
        if _full_traceback(cfg.get("debug")):
            raise
        _stop_with(f"stopped: the records are kept in {shown_database(cfg.db)} (a game left "
                   "unfinished is marked abandoned when the server starts again)")


def shown_database(db: str) -> str:
    """The records database `db` as a message may show it: a file path as given, a URL without
    its password."""
    password = urlsplit(db).password if "://" in db else None
    return db.replace(f":{password}@", ":***@", 1) if password else db


def _play(cfg) -> None:
    check_declared(cfg)
    settings = check_bounds(OmegaConf.to_object(cfg), "")  # a PlayConfig
    try:
        from scrofazero.serve.app import serve
    except ImportError as err:
        raise ValueError(f"python play.py needs the web extra: pip install -e '.[play]' "
                         f"({err})") from None
    serve(settings)


def _train(cfg):
    entry = game_entry(cfg.game.name)
    # The one check of the settings, before any work (nothing is written on a bad setting);
    # the trainers receive the checked dataclasses as they are.
    check_declared(cfg)
    settings = check_train(OmegaConf.to_object(cfg))
    if settings.distributed == "ray":
        if settings.game.name != "gongzhu":
            raise ValueError(f"distributed=ray trains game=gongzhu only, not "
                             f"{settings.game.name!r}")
        if settings.learner != "selfplay":
            raise ValueError(f"distributed=ray trains by self-play only, not learner="
                             f"{settings.learner} (one process fits it)")
        return run_training_ray(settings)
    return entry.train(settings)


def _evaluate(cfg) -> dict:
    entry = game_entry(cfg.game.name)
    # a registered player without a group of the schema takes +NAME.SETTING=...
    check_declared(cfg, free=player_names())
    settings = check_evaluate(evaluate_settings(cfg))
    if settings.predictor and (settings.game.name != "fish" or settings.mode != "track"):
        raise ValueError(f"model={settings.predictor} (a learned hand predictor) is read by "
                         f"game=fish mode=track only, not game={settings.game.name} "
                         f"mode={settings.mode}")
    if settings.out:
        check_writable(settings.out)  # before any work: a bad path must not cost the evaluation
    entry.inputs(settings)  # a damaged input file is named before any work, too
    result = entry.evaluate(settings)
    if settings.out:
        print(f"wrote {write_json_atomic(settings.out, result)}")
    return result
