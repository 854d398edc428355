"""The settings of Gongzhu's training run, beside the code that reads them: `TrainConfig` (the
`train` group: optimisation, self-play, schedule, checkpoints) and `GongzhuTrainConfig`, the
whole run as train.py game=gongzhu composes it (the root every run has, runs.TrainRootConfig,
with the network's shape, nn/network.py ModelConfig, the self-play search, search/mcts.py
MCTSConfig, and this package's groups). Each field's type bounds it; scrofazero/config.py checks
a composed run once (check_train) and `run_training` receives it as it is.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import AfterValidator, Field

from scrofazero.nn.checkpoint import MOMENTS, WEIGHTS
from scrofazero.nn.network import ModelConfig
from scrofazero.runs import TrainRootConfig
from scrofazero.search.mcts import MCTSConfig
from scrofazero.settings import (
    Count,
    Fraction,
    NonNegative,
    NonNegativeInt,
    Positive,
    Seed,
    Share,
    choice,
)
from scrofazero.train.actors import MAX_ACTORS
from scrofazero.train.inference_fit import InferenceFitConfig
from scrofazero.train.learner import LEARNER_PRECISIONS, VALUE_LOSSES
from scrofazero.train.schedule import INFERENCE, PhaseConfig
from scrofazero.train.selfplay import POLICY_TARGETS
from scrofazero.train.warm_start import WarmStartConfig


def _actors(value: str) -> str:
    if value != "auto" and not (value.isdigit() and int(value) <= MAX_ACTORS):
        raise ValueError(f"choose auto or a number of self-play processes in 0..{MAX_ACTORS}")
    return value


Actors = Annotated[str, AfterValidator(_actors)]  # train.actors: auto or 0..MAX_ACTORS
Betas = Annotated[list[Annotated[float, Field(ge=0, lt=1)]], Field(min_length=2, max_length=2)]
Decay = Annotated[float, Field(ge=0, lt=1, allow_inf_nan=False)]  # an average's decay in [0, 1)
LEARNERS = ("selfplay", "belief", "behaviour")  # what train.py game=gongzhu trains


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
    value_loss: Annotated[str, choice(*VALUE_LOSSES)] = "rmse"
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
    policy_target: Annotated[str, choice(*POLICY_TARGETS)] = "q"
    # the other plies' search budget as a fraction of the full one (>= 1 simulation per legal card);
    # played, not recorded
    playout_cheap: Share = 0.25
    # self-play's search budget (full and cheap plies alike) times this: a stronger target later in
    # training (a schedule key)
    search_scale: Positive = 1.0
    # self-play's network precision: float32 | bfloat16 (a bfloat16 copy of the weights, about 2x
    # faster forwards for the big networks on a CPU with bf16 instructions; a schedule key)
    inference: Annotated[str, choice(*INFERENCE)] = "float32"
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
    state_moments: Annotated[str, choice(*MOMENTS)] = "float32"
    # the network's weights in the state file: float32 (exact) | float16 (half the size)
    state_weights: Annotated[str, choice(*WEIGHTS)] = "float32"
    # average the weights: after every optimiser step average = ema x average + (1 - ema) x
    # weights (0: off); evaluation and saved networks use the average, self-play the weights
    ema: Decay = 0.0
    # self-play processes: 0 or 1: in the learner's process | N: N actors and one inference
    # server (train/actors.py) | auto: one actor per core when the device is CUDA, else 0
    actors: Actors = "0"
    # the learner's arithmetic: auto (bf16 autocast on CUDA, float32 on CPU) | float32 | tf32
    # (TF32 matmuls on CUDA) | bf16 (bf16 autocast, CUDA or CPU)
    learner_precision: Annotated[str, choice(*LEARNER_PRECISIONS)] = "auto"


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
    learner: Annotated[str, choice(*LEARNERS)] = "selfplay"
    # learner=belief|behaviour: the fit's data and settings (train/inference_fit.py)
    inference: InferenceFitConfig = field(default_factory=InferenceFitConfig)
