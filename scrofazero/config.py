"""Structured configs (dataclasses) of the entry points, built from each component's own.

The YAML files in configs/ build on these schemas; each component receives its own sub-config.
train.py's root (TrainRootConfig) holds what every game's run has; Gongzhu's run extends it
(GongzhuTrainConfig: its network, search and optimisation groups), the side games' runs add
only their own game group (tiny_crew/config.py, fish/config.py). evaluate.py's players' settings
are the player registry's settings classes, one group named after each player (`greed.*`,
`raw.*`, `scrofazero.*`: search.mcts.MCTSConfig, sampling.stratified.SamplingConfig and
sampling.iec.IECConfig). A key no schema declares (`+key=value` adds one that hydra lets
through and nothing reads) is refused, naming the nearest declared key of its group
(check_declared). Nothing here reads a config at import time; scrofazero/entry.py registers the
schemas.
"""

from __future__ import annotations

import dataclasses
from collections.abc import Collection, Iterator
from dataclasses import dataclass, field
from difflib import SequenceMatcher
from typing import Annotated

import torch
from omegaconf import DictConfig, OmegaConf
from pydantic import AfterValidator, Field

from scrofazero.agents.mr_greed import GreedSettings
from scrofazero.agents.raw_net import RawSettings
from scrofazero.agents.scrofazero_agent import ScrofaZeroSettings
from scrofazero.agents.settings import renamed
from scrofazero.nn.checkpoint import MOMENTS, WEIGHTS
from scrofazero.nn.network import MAX_BLOCKS, MAX_WIDTH, check_size
from scrofazero.search.mcts import MCTSConfig, check_search
from scrofazero.settings import (
    Count,
    Fraction,
    GameConfig,
    NonNegative,
    NonNegativeInt,
    Positive,
    RunName,
    Seed,
    Share,
    at_most,
    check_bounds,
    one_of,
)
from scrofazero.train.actors import MAX_ACTORS
from scrofazero.train.inference_fit import InferenceFitConfig
from scrofazero.train.learner import LEARNER_PRECISIONS, VALUE_LOSSES
from scrofazero.train.schedule import INFERENCE, PHASE_KEYS, PhaseConfig, check_schedule
from scrofazero.train.selfplay import POLICY_TARGETS
from scrofazero.train.warm_start import WarmStartConfig


def _actors(value: str) -> str:
    if value != "auto" and not (value.isdigit() and int(value) <= MAX_ACTORS):
        raise ValueError(f"choose auto or a number of self-play processes in 0..{MAX_ACTORS}")
    return value


Actors = Annotated[str, AfterValidator(_actors)]  # train.actors: auto or 0..MAX_ACTORS
Width = at_most(MAX_WIDTH)  # a layer width of the network
Blocks = at_most(MAX_BLOCKS, low=0)  # residual blocks of the network
Betas = Annotated[list[Annotated[float, Field(ge=0, lt=1)]], Field(min_length=2, max_length=2)]
Decay = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]  # an average's decay in [0, 1)
DISTRIBUTED = ("none", "ray")
LEARNERS = ("selfplay", "belief", "behaviour")  # what train.py game=gongzhu trains
DEVICE_KINDS = ("cpu", "cuda", "mps")


@dataclass
class ModelConfig:
    # fully connected trunk widths; the last is the residual width
    hidden: list[Width] = field(default_factory=lambda: [512, 256])
    num_blocks: Blocks = 4  # residual blocks (width -> width -> width, ReLU, add)
    value_scale: Positive = 10.0  # value head output x this = points still to come (paper: 10)
    # auxiliary heads trained beside policy and value: each seat's final pile score, who captures
    # each scoring card
    aux: bool = False


@dataclass
class TrainConfig:
    games_per_batch: Count = 64  # self-play games per batch (paper: 64)
    replay_batches: Count = 3  # train on the latest batch plus the previous two (paper)
    passes: Count = 3  # passes over the replay per batch (paper: 3)
    minibatch: Count = 64  # positions per optimiser step (paper: 64)
    lr: Positive = 5e-5  # Adam learning rate (paper: 5e-5)
    betas: Betas = field(default_factory=lambda: [0.3, 0.999])  # Adam betas (paper)
    weight_decay: NonNegative = 1e-4  # Adam weight decay (paper)
    value_weight: NonNegative = 0.03  # loss = KL + value_weight x value error (paper: 0.03)
    # value error: rmse (root mean squared error, paper) | mse
    value_loss: one_of(*VALUE_LOSSES) = "rmse"
    # the value error is measured in units of this many points (paper: 1)
    value_unit: Positive = 1.0
    beta: NonNegative = 0.2  # policy target = softmax(beta x root Q) per point (paper: 0.2)
    # value target = (1 - w) x search target (paper) + w x game outcome
    outcome_weight: Fraction = 0.0
    # playout-cap randomisation: fraction of plies searched in full and recorded (1: every ply, the
    # paper)
    playout_full: Share = 1.0
    # weight of the auxiliary losses (model.aux=true): aux_weight x (value_weight x points RMSE +
    # capture cross-entropy)
    aux_weight: NonNegative = 0.5
    # q: softmax(beta x root Q) (paper) | visits: normalised root visit counts (AlphaZero) | gumbel:
    # the root policy improved by the searched Q (Gumbel MuZero)
    policy_target: one_of(*POLICY_TARGETS) = "q"
    # the other plies' search budget as a fraction of the full one (>= 1 simulation per legal card);
    # played, not recorded
    playout_cheap: Share = 0.25
    # self-play's search budget (full and cheap plies alike) times this: a stronger target later in
    # training (a schedule key)
    search_scale: Positive = 1.0
    # self-play's network precision: float32 | bfloat16 (a bfloat16 copy of the weights, about 2x
    # faster forwards for the big networks on a CPU with bf16 instructions; a schedule key)
    inference: one_of(*INFERENCE) = "float32"
    # stop after this many self-play batches (None: no limit)
    max_batches: NonNegativeInt | None = None
    # stop after this much training wall time (None: no limit)
    max_minutes: NonNegative | None = None
    eval_every: NonNegativeInt = 10  # evaluate the raw network every this many batches (0: never)
    # standard deals (x 2 plays) for eval/wpg_raw and eval/vs_random
    eval_deals: NonNegativeInt = 32
    eval_raw_deals: Count = 5  # sampled deals per decision of the raw-network player (paper: 5)
    eval_workers: Count = 1  # processes for the periodic evaluation
    checkpoint_every: Count = 1  # write a checkpoint every this many batches
    keep_checkpoints: Count = 5  # numbered snapshots kept besides latest
    # also keep milestone_<M>min.pt once training time passes M minutes
    milestone_minutes: list[NonNegative] = field(default_factory=lambda: [0, 30, 60, 120, 240])
    # also keep games_<N>.pt once self-play passes N games
    milestone_games: list[NonNegativeInt] = field(
        default_factory=lambda: [0, 2560, 5120, 10240, 20480, 40960, 81920])
    # seeds self-play deals, search and minibatch order (train.py: the root's seed unless set)
    seed: Seed = 0
    device: str = "auto"  # auto: cuda when available, else cpu
    threads: NonNegativeInt = 0  # torch CPU threads (0: torch's default)
    # imitate Mr. Greed's games before self-play (games=0: off)
    warm_start: WarmStartConfig = field(default_factory=WarmStartConfig)
    # a fresh run starts from this network (model file, checkpoint or state file), grown to `model`
    # if smaller, with a fresh optimiser
    init_from: str | None = None
    # phases by self-play games: batch size, replay, passes, lr, network growth (train/schedule.py)
    schedule: list[PhaseConfig] = field(default_factory=list)
    # also write the compact resumable state (no replay) here at every checkpoint, e.g. to commit it
    state_file: str | None = None
    # Adam moments in the state file: float32 (exact) | bfloat16 (half the optimiser's size)
    state_moments: one_of(*MOMENTS) = "float32"
    # the network's weights in the state file: float32 (exact) | float16 (half the size)
    state_weights: one_of(*WEIGHTS) = "float32"
    # average the weights: after every optimiser step average = ema x average + (1 - ema) x
    # weights (0: off); evaluation and saved networks use the average, self-play the weights
    ema: Decay = 0.0
    # self-play processes: 0 or 1: in the learner's process | N: N actors and one inference
    # server (train/actors.py) | auto: one actor per core when the device is CUDA, else 0
    actors: Actors = "0"
    # the learner's arithmetic: auto (bf16 autocast on CUDA, float32 on CPU) | float32 | tf32
    # (TF32 matmuls on CUDA) | bf16 (bf16 autocast, CUDA or CPU)
    learner_precision: one_of(*LEARNER_PRECISIONS) = "auto"


@dataclass
class RayConfig:
    """distributed=ray (train.py and evaluate.py; the `[ray]` extra)."""

    # None: start a local Ray instance; auto or host:port: join that cluster
    address: str | None = None
    # local instance only: CPUs it offers (None: all of this machine's)
    num_cpus: Count | None = None
    actors: Count = 2  # train.py: self-play actors
    actor_cpus: NonNegative = 1.0  # train.py: CPUs reserved per actor
    actor_gpus: NonNegative = 0.0  # train.py: GPUs (or a fraction) per actor
    actor_threads: Count = 1  # train.py: torch threads in each actor
    publish_every: Count = 1  # train.py: learner steps between published weight versions
    # train.py: self-play records made with weights more than this many versions old are dropped
    max_staleness: NonNegativeInt = 4
    # train.py: self-play calls queued per actor (2: it starts the next batch while the learner
    # learns)
    in_flight: Count = 2
    # evaluate.py: Ray tasks the deals are split over (None: the cluster's CPUs)
    tasks: Count | None = None


@dataclass
class TrainRootConfig:
    """train.py's settings common to every game; a game's run extends it (GongzhuTrainConfig)
    or adds only its `game` group (configs/train_root/ holds the extensions)."""

    game: GameConfig = field(default_factory=GameConfig)  # the game trained
    seed: Seed = 0  # seeds every random decision of the run
    run: RunName = "default"  # run name: checkpoints/<run>/ and runs/<run>/ (tensorboard)
    checkpoint_dir: str = "checkpoints"  # parent folder of run checkpoints
    log_dir: str = "runs"  # parent folder of tensorboard logs
    resume: bool = False  # continue checkpoints/<run>/latest.pt instead of starting anew
    # a new run folder continues this compact state file (train.state_file) exactly, replay aside
    resume_from: str | None = None
    # settings (or groups, e.g. train) that may differ from the checkpoint's on resume
    resume_overrides: list[str] = field(default_factory=list)
    # none: one process (self-play, then learn) | ray: self-play actors and a learner on Ray
    # (train/distributed.py)
    distributed: one_of(*DISTRIBUTED) = "none"
    ray: RayConfig = field(default_factory=RayConfig)  # settings of distributed=ray
    progress: bool = True  # show a tqdm progress bar
    debug: bool = False  # show the full traceback of an error instead of one line


@dataclass
class GongzhuTrainConfig(TrainRootConfig):
    """train.py game=gongzhu: the common root and Gongzhu's own groups
    (configs/train_root/gongzhu.yaml composes them)."""

    model: ModelConfig = field(default_factory=ModelConfig)  # network shape
    search: MCTSConfig = field(default_factory=MCTSConfig)  # self-play search
    train: TrainConfig = field(default_factory=TrainConfig)  # optimisation and schedule
    experiment: str = "cpu"  # name of the preset that set these values
    # what the run trains: selfplay (the policy/value network) | belief (the card-location
    # network) | behaviour (the behaviour network), the last two on recorded games (inference.*)
    learner: one_of(*LEARNERS) = "selfplay"
    # learner=belief|behaviour: the fit's data and settings (train/inference_fit.py)
    inference: InferenceFitConfig = field(default_factory=InferenceFitConfig)


@dataclass
class EvaluateConfig:
    # the game being evaluated (game=gongzhu | tiny_crew | fish)
    game: GameConfig = field(default_factory=GameConfig)
    # gongzhu: matrix (every pair of `players`) | wpg (`player` vs two Mr. Greeds) | belief
    # (eval/iec_diagnostic.py); fish: track | match
    mode: str = "matrix"
    # matrix rows (fish mode=match: the two teams' players)
    players: list[str] = field(default_factory=lambda: ["random", "if", "greed"])
    player: str = "scrofazero"  # the player measured by mode=wpg
    # mode=wpg: the two opponents (Mr. Greed defines WPG; another name measures robustness)
    opponent: str = "greed"
    # network checkpoint of 'raw' and 'scrofazero' (None: the newest checkpoints/*/latest.pt)
    checkpoint: str | None = None
    # the 'scrofazero' player: search, sampling, weighting
    scrofazero: ScrofaZeroSettings = field(default_factory=ScrofaZeroSettings)
    # the 'raw' player: num_deals, mode (value: 1-ply value search, paper | policy)
    raw: RawSettings = field(default_factory=RawSettings)
    # Mr. Greed: num_samples, sampled deals per decision (docs/rules.md section 9)
    greed: GreedSettings = field(default_factory=GreedSettings)
    deals: int | None = None  # how many deals of the deal file to play (None: all)
    # deal file, one 52-code line per deal (None: the 1024 standard deals)
    deals_file: str | None = None
    seed: Seed = 0  # seeds every random decision (per deal, play and seat)
    workers: NonNegativeInt = 0  # processes playing deals in parallel (0: one per CPU core)
    belief_games: Count = 8  # mode=belief: games whose positions are scored
    # mode=belief: None, four copies of `player`; a player name: it sits at seats 1 and 3 and only
    # seats 0 and 2 are scored (as in a WPG game)
    belief_opponent: str | None = None
    out: str | None = None  # JSON file for the result (None: print only)
    # gongzhu --wpg / --matrix: none (worker processes) | ray (deals split over Ray tasks)
    distributed: one_of(*DISTRIBUTED) = "none"
    ray: RayConfig = field(default_factory=RayConfig)  # settings of distributed=ray
    # fish mode=track: a learned hand predictor scored beside the tracker (model=PATH sets it)
    predictor: str | None = None
    progress: bool = True  # show a tqdm progress bar
    debug: bool = False  # show the full traceback of an error instead of one line


def check_declared(cfg: DictConfig, free: Collection[str] = ()) -> None:
    """Refuse a key of the composed config that its group's schema does not declare (hydra
    refuses `key=value` for one, but `+key=value` adds it and nothing would read it): a
    ValueError naming the first and the nearest declared key. `free` names root keys that take
    any settings (evaluate.py's players without a schema group, `+NAME.SETTING=...`)."""
    for path, key, schema in _undeclared(cfg, "", free):
        raise ValueError(unknown_setting(path, key, schema))


def _undeclared(node: DictConfig, where: str, free: Collection[str] = ()
                ) -> Iterator[tuple[str, str, type]]:
    """(dotted path, key, schema) of every key below `node` that its dataclass schema lacks,
    but for the keys `free` of `node` itself."""
    schema = OmegaConf.get_type(node)
    declared = ({f.name for f in dataclasses.fields(schema)} if dataclasses.is_dataclass(schema)
                else None)
    for key, value in node.items_ex(resolve=False):
        path = f"{where}.{key}" if where else str(key)
        if declared is not None and key not in declared:
            if key not in free:
                yield _first_leaf(path, value), str(key), schema
        elif isinstance(value, DictConfig):
            yield from _undeclared(value, path)


def _first_leaf(path: str, value) -> str:
    """The path of the first setting within `value` (at `path`), as the user spelled it on the
    command line: +model.hidden=[8] adds `model` as {hidden: [8]}."""
    while isinstance(value, DictConfig) and len(value) > 0:
        key, value = next(iter(value.items_ex(resolve=False)))
        path = f"{path}.{key}"
    return path


def unknown_setting(path: str, key: str, schema: type) -> str:
    """What to say of setting `path`, whose `key` the dataclass `schema` (its group's) lacks:
    the nearest key the group has, or that the key belongs to Gongzhu's run only."""
    named = key in path.split(".")  # else a key inside a value, e.g. a schedule's phase
    message = f"{path} is not a setting" if named else f"{path}: {key} is not a setting"
    if schema is TrainRootConfig and key in _names(GongzhuTrainConfig):
        return f"{message} of this run ({key} is train.py game=gongzhu's)"
    near = nearest(key, _names(schema))
    if near is None:
        return message
    if named:  # the path with the key replaced: train.batch_size -> train.games_per_batch
        parts = path.split(".")
        parts[len(parts) - 1 - parts[::-1].index(key)] = near
        near = ".".join(parts)
    return f"{message}; the nearest is {near}"


def _names(schema: type) -> list[str]:
    return [f.name for f in dataclasses.fields(schema)]


def nearest(name: str, names: Collection[str]) -> str | None:
    """The one of `names` most like `name`: sharing the most words (parts between
    underscores: batch_size -> games_per_batch), then by difflib's similarity ratio; None when
    it shares no word and is not similar (ratio below difflib's default cutoff, 0.6)."""
    words = set(name.split("_"))

    def likeness(other: str) -> tuple[int, float]:
        return len(words & set(other.split("_"))), SequenceMatcher(None, name, other).ratio()

    best = max(names, key=likeness, default=None)
    if best is None:
        return None
    shared, ratio = likeness(best)
    return best if shared or ratio >= 0.6 else None


def check_device(name: str, where: str = "train.device") -> None:
    """Refuse a device torch does not know, or one this machine lacks, naming the setting."""
    if name == "auto":
        return
    try:
        device = torch.device(name)
    except (RuntimeError, ValueError):
        device = None
    if device is None or device.type not in DEVICE_KINDS:
        raise ValueError(f"{where}={name}: not a device; use auto, cpu, cuda, cuda:N or mps")
    if device.type == "cuda":
        count = torch.cuda.device_count() if torch.cuda.is_available() else 0
        if count == 0 or (device.index or 0) >= count:
            raise ValueError(f"{where}={name}: this machine has {count} CUDA devices; use "
                             f"{where}=auto (cuda when there is one, else cpu) or cpu")
    if device.type == "mps" and not torch.backends.mps.is_available():
        raise ValueError(f"{where}={name}: this machine has no MPS device; use {where}=auto or cpu")


def check_train(settings: TrainRootConfig) -> TrainRootConfig:
    """train.py's settings (OmegaConf.to_object of the composed config), or a ValueError naming
    the first bad one: each field within its declared bounds, every float finite and, for
    Gongzhu, a network that can be built and a device this machine has. Nothing is read or
    written."""
    check_bounds(settings, "")
    check_bounds(settings.game, "game")  # by the game's own schema
    if isinstance(settings, GongzhuTrainConfig):
        check_gongzhu_train(settings)
    return settings


def check_gongzhu_train(settings: GongzhuTrainConfig) -> None:
    """Gongzhu's groups beyond their declared bounds: the network and every shape the schedule
    grows it to can be built, the schedule's phases follow each other, the search is sound, the
    device exists, and the settings that depend on each other agree."""
    model, t = settings.model, settings.train
    check_size(model.hidden, model.num_blocks, model.aux, "model.")
    for i, phase in enumerate(t.schedule):  # the shapes the schedule grows to
        check_size(model.hidden if phase.hidden is None else phase.hidden,
                   model.num_blocks if phase.num_blocks is None else phase.num_blocks,
                   model.aux, f"train.schedule[{i}].")
    check_schedule(t.schedule, {k: getattr(t, k) for k in PHASE_KEYS},
                   {"hidden": model.hidden, "num_blocks": model.num_blocks})
    check_search(settings.search, "search")
    check_device(t.device)
    if t.eval_every > 0 and t.eval_deals < 1:
        raise ValueError(f"train.eval_deals={t.eval_deals}: must be >= 1 while train.eval_every"
                         f"={t.eval_every} (train.eval_every=0 turns the evaluation off)")
    if settings.resume_from and settings.resume:
        raise ValueError("resume=true and resume_from=PATH: resume continues this run's folder, "
                         "resume_from a state file in a new folder; choose one")
    if settings.distributed == "ray" and t.actors not in ("0", "1", "auto"):
        raise ValueError(f"train.actors={t.actors} with distributed=ray: Ray has its own "
                         "self-play actors (ray.actors); choose one")
    if settings.resume_from and t.init_from:
        raise ValueError("train.init_from and resume_from: a continued run keeps its network; "
                         "choose one")


# evaluate.py's groups named after a player, each that player's settings class.
PLAYER_GROUPS = ("scrofazero", "raw", "greed")


def evaluate_settings(cfg) -> EvaluateConfig:
    """evaluate.py's composed config as an EvaluateConfig. A player's settings class checks its
    own values as it is built: a bad one raises its ValueError with the setting named as the
    user spells it (`raw.num_deals must be a positive integer, got 0`)."""
    for name in PLAYER_GROUPS:
        try:
            OmegaConf.to_object(cfg[name])
        except ValueError as err:
            raise renamed(err, {key: f"{name}.{key}" for key in cfg[name]}) from None
    return OmegaConf.to_object(cfg)


def check_evaluate(settings: EvaluateConfig) -> EvaluateConfig:
    """evaluate.py's settings (evaluate_settings of the composed config), or a ValueError naming
    the first bad one (as check_train); the players' own settings are checked by their settings
    classes (evaluate_settings), here only for finite numbers and declared bounds."""
    check_bounds(settings, "")
    check_bounds(settings.game, "game")
    return settings
