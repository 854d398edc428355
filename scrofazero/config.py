"""Structured configs (dataclasses) registered in hydra's ConfigStore.

The YAML files in configs/ build on these schemas; each component receives its own sub-config.
Nothing here reads a config at import time: `register_configs()` is called by the entry points.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Any, Optional

GAMES = ("gongzhu", "tiny_crew", "fish")


@dataclass
class GameConfig:
    name: str = "gongzhu"  # which game: gongzhu | tiny_crew | fish
    leader: Any = 0  # Gongzhu: seat leading the first trick when a game is created without a deal


@dataclass
class TinyCrewConfig(GameConfig):
    name: str = "tiny_crew"
    leader: Any = "seat0"  # who leads the first trick: seat0 | captain (the holder of S3)
    t1: int = 0  # seat owning T1 "win the red 3"
    t2: int = 1  # seat owning T2 "win exactly one blue card"
    search_deals: int = 20  # consistent deals the search player solves per decision (all when fewer)
    improve_rounds: int = 3  # rounds of exact best responses over the seats applied to the search policy
    deal_stride: int = 1  # evaluate every k-th deal only (quick checks and tests; exact figures need 1)
    crossplay: bool = False  # also train a second seed's improved search policy and cross-play the two
    all_bounds: bool = False  # also the open-hand bound for every task assignment and both leader rules
    method: str = "cfr"  # train.py game=tiny_crew: cfr (chance-sampled CFR+) | mccfr (OpenSpiel's external sampling)
    iterations: int = 3000  # train.py: sampled deals (cfr) or iterations (mccfr)
    eval_every: int = 1000  # train.py: exact evaluation and policy checkpoint every this many iterations
    max_states: int = 16777216  # train.py cfr: stop with a clear error beyond this many information states
    cfr_policy: Optional[str] = None  # evaluate.py: a policy.npz written by train.py game.method=cfr
    mccfr_policy: Optional[str] = None  # evaluate.py: a policy.npz written by train.py game.method=mccfr
    improve_learned: int = 0  # evaluate.py: rounds of exact best responses applied to each learned policy (slow: minutes per seat)


@dataclass
class FishConfig(GameConfig):
    name: str = "fish"
    table_sizes: list[int] = field(default_factory=lambda: [6, 8])  # mode=match: table sizes played (6 and/or 8 players)
    calls: str = "any_time"  # mode=match: any_time (any seat between moves) | own_turn
    ask_held_allowed: bool = False  # mode=match: asking for a card one holds is legal (breaks the "asker lacks it" inference)
    soft: float = 0.0  # belief tracker: tempering of the soft ask evidence (0: pure logic)
    max_moves: int = 1000  # mode=match: past this many moves the player to move must call
    random_call_prob: float = 0.05  # the random player's chance of a random call on its turn
    hide_margin: float = 0.0  # logic player: hit probability it may give up to ask in a set it has already shown


@dataclass
class ModelConfig:
    hidden: list[int] = field(default_factory=lambda: [512, 256])  # fully connected trunk widths; the last is the residual width
    num_blocks: int = 4  # residual blocks (width -> width -> width, ReLU, add)
    value_scale: float = 100.0  # value head output x this = points still to come


@dataclass
class SearchConfig:
    c_uct: float = 30.0  # UCB exploration constant on the points scale (paper: 30)
    budget_base: int = 0  # simulations per move = budget_base + budget_per_legal x legal cards
    budget_per_legal: int = 2  # paper: 0 + 2x while training, 10 + 2x when evaluating
    prior: str = "none"  # none: UCB1 as the paper; puct: policy-head prior (an option)
    c_puct: float = 60.0  # exploration constant of the PUCT option


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
    value_unit: float = 10.0  # value error = mean squared error in units of this many points
    beta: float = 0.2  # policy target = softmax(beta x root Q) per point (paper: 0.2)
    outcome_weight: float = 0.0  # value target = (1 - w) x search target (paper) + w x game outcome
    max_batches: Optional[int] = None  # stop after this many self-play batches (None: no limit)
    max_minutes: Optional[float] = None  # stop after this much training wall time (None: no limit)
    eval_every: int = 10  # evaluate the raw network every this many batches (0: never)
    eval_deals: int = 32  # standard deals (x 2 plays) for eval/wpg_raw and eval/vs_random
    eval_raw_deals: int = 5  # sampled deals per decision of the raw-network player (paper: 5)
    eval_workers: int = 1  # processes for the periodic evaluation
    checkpoint_every: int = 1  # write a checkpoint every this many batches
    keep_checkpoints: int = 5  # numbered snapshots kept besides latest
    milestone_minutes: list[float] = field(default_factory=lambda: [0, 30, 60, 120, 240])  # also keep milestone_<M>min.pt once training time passes M minutes
    seed: int = 0  # seeds self-play deals, search and minibatch order
    device: str = "auto"  # auto: cuda when available, else cpu
    threads: int = 0  # torch CPU threads (0: torch's default)


@dataclass
class TrainRootConfig:
    game: GameConfig = field(default_factory=GameConfig)  # the game trained
    model: ModelConfig = field(default_factory=ModelConfig)  # network shape
    search: SearchConfig = field(default_factory=SearchConfig)  # self-play search
    train: TrainConfig = field(default_factory=TrainConfig)  # optimisation and schedule
    experiment: str = "cpu"  # name of the preset that set these values
    run: str = "default"  # run name: checkpoints/<run>/ and runs/<run>/ (tensorboard)
    checkpoint_dir: str = "checkpoints"  # parent folder of run checkpoints
    log_dir: str = "runs"  # parent folder of tensorboard logs
    resume: bool = False  # continue checkpoints/<run>/latest.pt instead of starting anew
    progress: bool = True  # show a tqdm progress bar


@dataclass
class PlayerConfig:
    """The ScrofaZero player (agents/scrofazero_agent.py) as `evaluate.py` builds it."""

    sampling: str = "stratified"  # stratified (on important cards) | uniform
    num_important: int = 2  # important cards per decision (strata: every placement of them)
    per_stratum: int = 1  # deals drawn in each stratum (paper: 2 cards x 1 = up to 9 deals)
    num_deals: int = 9  # deals per decision with sampling=uniform
    prior: str = "exact"  # stratum weights: exact (their uniform probability) | equal (original)
    weighting: bool = True  # Bayesian (IEC) reweighting by the other players' earlier plays
    beta_post: float = 0.015  # IEC: weight x exp(-beta_post x regret in points)
    iec_form: str = "exp"  # exp | linear (the original code's max(0.1, 1 - beta_post x regret))
    iec_draws: int = 1  # deals weighed per searched deal (1: the paper; m > 1: stratum weights from m x more draws)
    budget_base: int = 10  # simulations per deal = budget_base + budget_per_legal x legal cards
    budget_per_legal: int = 2
    c_uct: float = 30.0  # UCB exploration constant in points
    search_prior: str = "none"  # none (UCB, paper) | puct (policy prior)


@dataclass
class EvaluateConfig:
    game: GameConfig = field(default_factory=GameConfig)  # the game being evaluated (game=gongzhu | tiny_crew)
    mode: str = "matrix"  # matrix: every pair of `players`; wpg: `player` vs two Mr. Greeds; belief: eval/belief.py; fish: track | match
    players: list[str] = field(default_factory=lambda: ["random", "if", "greed"])  # matrix rows
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
    transcripts: Optional[list[str]] = None  # game=fish mode=track: recorded games (None: the shipped recordings)
    games: int = 50  # game=fish mode=match: deals per table size, each played twice with the teams swapped
    out: Optional[str] = None  # JSON file for the result (None: print only)
    progress: bool = True  # show a tqdm progress bar


def register_configs() -> None:
    """Register the schemas so the YAML files can extend them."""
    from hydra.core.config_store import ConfigStore

    store = ConfigStore.instance()
    store.store(name="evaluate_schema", node=EvaluateConfig)
    store.store(name="train_schema", node=TrainRootConfig)
    store.store(group="game", name="gongzhu_schema", node=GameConfig)
    store.store(group="game", name="tiny_crew_schema", node=TinyCrewConfig)
    store.store(group="game", name="fish_schema", node=FishConfig)
    store.store(group="model", name="model_schema", node=ModelConfig)
    store.store(group="search", name="search_schema", node=SearchConfig)
    store.store(group="train", name="train_schema", node=TrainConfig)
