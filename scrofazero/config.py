"""Structured configs (dataclasses) of the entry points, built from each component's own.

The YAML files in configs/ build on these schemas; each component receives its own sub-config:
the search settings are search.mcts.MCTSConfig (self-play and the player alike), the player's
sampling and weighting are sampling.stratified.SamplingConfig and sampling.iec.IECConfig, and
the side games' options are their own game groups (tiny_crew/config.py, fish/config.py).
Nothing here reads a config at import time; scrofazero/entry.py registers the schemas.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

from scrofazero.agents.scrofazero_agent import play_sampling, play_search
from scrofazero.sampling.iec import IECConfig
from scrofazero.sampling.stratified import SamplingConfig
from scrofazero.search.mcts import MCTSConfig
from scrofazero.train.schedule import PhaseConfig
from scrofazero.train.warm_start import WarmStartConfig


@dataclass
class GameConfig:
    name: str = "gongzhu"  # which game: gongzhu | tiny_crew | fish
    leader: Any = 0  # Gongzhu: seat leading the first trick when a game is created without a deal


@dataclass
class ModelConfig:
    hidden: list[int] = field(default_factory=lambda: [512, 256])  # fully connected trunk widths; the last is the residual width
    num_blocks: int = 4  # residual blocks (width -> width -> width, ReLU, add)
    value_scale: float = 10.0  # value head output x this = points still to come (paper: 10)
    aux: bool = False  # auxiliary heads trained beside policy and value: each seat's final pile score, who captures each scoring card


@dataclass
class TrainConfig:
    games_per_batch: int = 64  # self-play games per batch (paper: 64)
    replay_batches: int = 3  # train on the latest batch plus the previous two (paper)
    passes: int = 3  # passes over the replay per batch (paper: 3)
    minibatch: int = 64  # positions per optimiser step (paper: 64)
    lr: float = 5e-5  # Adam learning rate (paper: 5e-5)
    betas: list[float] = field(default_factory=lambda: [0.3, 0.999])  # Adam betas (paper)
    weight_decay: float = 1e-4  # Adam weight decay (paper)
    value_weight: float = 0.03  # loss = KL + value_weight x value error (paper: 0.03)
    value_loss: str = "rmse"  # value error: rmse (root mean squared error, paper) | mse
    value_unit: float = 1.0  # the value error is measured in units of this many points (paper: 1)
    beta: float = 0.2  # policy target = softmax(beta x root Q) per point (paper: 0.2)
    outcome_weight: float = 0.0  # value target = (1 - w) x search target (paper) + w x game outcome
    playout_full: float = 1.0  # playout-cap randomisation: fraction of plies searched in full and recorded (1: every ply, the paper)
    aux_weight: float = 0.5  # weight of the auxiliary losses (model.aux=true): aux_weight x (value_weight x points RMSE + capture cross-entropy)
    policy_target: str = "q"  # q: softmax(beta x root Q) (paper) | visits: normalised root visit counts (AlphaZero) | gumbel: the root policy improved by the searched Q (Gumbel MuZero)
    playout_cheap: float = 0.25  # the other plies' search budget as a fraction of the full one (>= 1 simulation per legal card); played, not recorded
    max_batches: Optional[int] = None  # stop after this many self-play batches (None: no limit)
    max_minutes: Optional[float] = None  # stop after this much training wall time (None: no limit)
    eval_every: int = 10  # evaluate the raw network every this many batches (0: never)
    eval_deals: int = 32  # standard deals (x 2 plays) for eval/wpg_raw and eval/vs_random
    eval_raw_deals: int = 5  # sampled deals per decision of the raw-network player (paper: 5)
    eval_workers: int = 1  # processes for the periodic evaluation
    checkpoint_every: int = 1  # write a checkpoint every this many batches
    keep_checkpoints: int = 5  # numbered snapshots kept besides latest
    milestone_minutes: list[float] = field(default_factory=lambda: [0, 30, 60, 120, 240])  # also keep milestone_<M>min.pt once training time passes M minutes
    milestone_games: list[int] = field(default_factory=lambda: [0, 2560, 5120, 10240, 20480, 40960, 81920])  # also keep games_<N>.pt once self-play passes N games
    seed: int = 0  # seeds self-play deals, search and minibatch order
    device: str = "auto"  # auto: cuda when available, else cpu
    threads: int = 0  # torch CPU threads (0: torch's default)
    warm_start: WarmStartConfig = field(default_factory=WarmStartConfig)  # imitate Mr. Greed's games before self-play (games=0: off)
    init_from: Optional[str] = None  # a fresh run starts from this network (model file, checkpoint or state file), grown to `model` if smaller, with a fresh optimiser
    schedule: list[PhaseConfig] = field(default_factory=list)  # phases by self-play games: batch size, replay, passes, lr, network growth (train/schedule.py)
    state_file: Optional[str] = None  # also write the compact resumable state (no replay) here at every checkpoint, e.g. to commit it
    state_moments: str = "float32"  # Adam moments in the state file: float32 (exact) | bfloat16 (half the optimiser's size)


@dataclass
class RayConfig:
    """distributed=ray (train.py and evaluate.py; the `[ray]` extra)."""

    address: Optional[str] = None  # None: start a local Ray instance; auto or host:port: join that cluster
    num_cpus: Optional[int] = None  # local instance only: CPUs it offers (None: all of this machine's)
    actors: int = 2  # train.py: self-play actors
    actor_cpus: float = 1.0  # train.py: CPUs reserved per actor
    actor_gpus: float = 0.0  # train.py: GPUs (or a fraction) per actor
    actor_threads: int = 1  # train.py: torch threads in each actor
    publish_every: int = 1  # train.py: learner steps between published weight versions
    max_staleness: int = 4  # train.py: self-play records made with weights more than this many versions old are dropped
    in_flight: int = 2  # train.py: self-play calls queued per actor (2: it starts the next batch while the learner learns)
    tasks: Optional[int] = None  # evaluate.py: Ray tasks the deals are split over (None: the cluster's CPUs)


@dataclass
class TrainRootConfig:
    game: GameConfig = field(default_factory=GameConfig)  # the game trained
    model: ModelConfig = field(default_factory=ModelConfig)  # network shape
    search: MCTSConfig = field(default_factory=MCTSConfig)  # self-play search
    train: TrainConfig = field(default_factory=TrainConfig)  # optimisation and schedule
    experiment: str = "cpu"  # name of the preset that set these values
    run: str = "default"  # run name: checkpoints/<run>/ and runs/<run>/ (tensorboard)
    checkpoint_dir: str = "checkpoints"  # parent folder of run checkpoints
    log_dir: str = "runs"  # parent folder of tensorboard logs
    resume: bool = False  # continue checkpoints/<run>/latest.pt instead of starting anew
    resume_from: Optional[str] = None  # a new run folder continues this compact state file (train.state_file) exactly, replay aside
    resume_overrides: list[str] = field(default_factory=list)  # settings (or groups, e.g. train) that may differ from the checkpoint's on resume
    distributed: str = "none"  # none: one process (self-play, then learn) | ray: self-play actors and a learner on Ray (train/distributed.py)
    ray: RayConfig = field(default_factory=RayConfig)  # settings of distributed=ray
    progress: bool = True  # show a tqdm progress bar
    debug: bool = False  # show the full traceback of an error instead of one line


@dataclass
class PlayerConfig:
    """The ScrofaZero player (agents/scrofazero_agent.py) as `evaluate.py` builds it."""

    search: MCTSConfig = field(default_factory=play_search)  # MCTS on every sampled deal: 5 + 1 x legal cards (the paper: 10 + 2 x legal)
    sampling: SamplingConfig = field(default_factory=play_sampling)  # which deals are searched: 2 per stratum, up to 18 (the paper: 1, up to 9)
    weighting: IECConfig = field(default_factory=IECConfig)  # Bayesian (IEC) weights of the deals


@dataclass
class EvaluateConfig:
    game: GameConfig = field(default_factory=GameConfig)  # the game being evaluated (game=gongzhu | tiny_crew | fish)
    mode: str = "matrix"  # gongzhu: matrix (every pair of `players`) | wpg (`player` vs two Mr. Greeds) | belief (eval/iec_diagnostic.py); fish: track | match
    players: list[str] = field(default_factory=lambda: ["random", "if", "greed"])  # matrix rows (fish mode=match: the two teams' players)
    player: str = "scrofazero"  # the player measured by mode=wpg
    checkpoint: Optional[str] = None  # network checkpoint of 'raw' and 'scrofazero' (None: the newest checkpoints/*/latest.pt)
    scrofazero: PlayerConfig = field(default_factory=PlayerConfig)  # settings of the 'scrofazero' player
    raw_mode: str = "value"  # 'raw' player: value (1-ply value search, paper) | policy (argmax of the mean policy)
    raw_deals: int = 5  # sampled deals per decision of the 'raw' player
    deals: Optional[int] = None  # how many deals of the deal file to play (None: all)
    deals_file: Optional[str] = None  # deal file, one 52-code line per deal (None: the 1024 standard deals)
    seed: int = 0  # seeds every random decision (per deal, play and seat)
    workers: int = 0  # processes playing deals in parallel (0: one per CPU core)
    greed_samples: int = 20  # sampled deals per Mr. Greed decision (the doc's N)
    belief_games: int = 8  # mode=belief: games whose positions are scored
    out: Optional[str] = None  # JSON file for the result (None: print only)
    distributed: str = "none"  # gongzhu --wpg / --matrix: none (worker processes) | ray (deals split over Ray tasks)
    ray: RayConfig = field(default_factory=RayConfig)  # settings of distributed=ray
    predictor: Optional[str] = None  # fish mode=track: a learned hand predictor scored beside the tracker (model=PATH sets it)
    progress: bool = True  # show a tqdm progress bar
    debug: bool = False  # show the full traceback of an error instead of one line
