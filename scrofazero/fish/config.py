"""Fish's options: the `game=fish` config group of train.py and evaluate.py, one part per use.

`game.match` (the games played: evaluate.py mode=match, and the rules of self-play and its
evaluations), `game.track` (mode=track: the belief scored on the recordings), `game.player`
(each player's settings, the roster's dataclasses: `game.player.logic.hide_margin=0.05`),
`game.selfplay` (train.py: the learned player's REINFORCE) and `game.predictor` (train.py
game.learner=predictor: the hand predictor's training, the dataclass its loop takes).
Invariant: every part is read where it is used, as it is; nothing is reshaped on the way.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated

from pydantic import Field

from scrofazero.fish.learning.train import CALL_CHECKS, LEARNERS, OPPONENTS
from scrofazero.fish.players.learned import LearnedSettings
from scrofazero.fish.players.logic import LogicSettings, RandomSettings
from scrofazero.fish.players.search import SearchSettings
from scrofazero.fish.prediction.network import load_predictor
from scrofazero.fish.prediction.training import PredictorTraining, TableSizes
from scrofazero.games.fish.rules import CALL_MODES
from scrofazero.settings import (
    Count,
    Finite,
    Fraction,
    GameConfig,
    NonNegative,
    NonNegativeInt,
    Positive,
    Seed,
    Share,
    at_most,
    one_of,
)

Probabilities = Annotated[list[Fraction], Field(min_length=2, max_length=2)]  # [start, end]


@dataclass
class FishMatch:
    """The games played: evaluate.py mode=match's, and the rules of train.py's self-play and of
    its evaluations against logic."""

    games: Count = 50  # mode=match: deals per table size, each played twice with the teams swapped
    # mode=match and self-play's evaluations: table sizes played (6 and/or 8 players)
    table_sizes: TableSizes = field(default_factory=lambda: [6, 8])
    # any_time (any seat between moves) | own_turn
    calls: one_of(*CALL_MODES) = "any_time"  # type: ignore[valid-type]
    # asking for a card one holds is legal (breaks the "asker lacks it" inference)
    ask_held_allowed: bool = False
    max_moves: Count = 1000  # past this many moves the player to move must call


@dataclass
class FishTrack:
    """evaluate.py mode=track: the exact belief's hand prediction on recorded games."""

    transcripts: list[str] | None = None  # recorded games (None: the shipped recordings)
    soft: NonNegative = 0.0  # tempering of the soft ask evidence (0: pure logic)
    # weight of "the asker holds another card of the set" (1: a rule, 0.5: no evidence)
    ask_other: Fraction = 0.5
    # weight of "the asker lacks the asked card" (1: a rule, 0.5: no evidence)
    ask_lacks: Fraction = 0.5
    # weight of "the target holds another card of the set" (0.5: no evidence)
    ask_target: Fraction = 0.5
    # fit the three ask weights on a grid, leave-one-file-out (several minutes)
    fit_ask_model: bool = False
    fit_stride: Count = 4  # with fit_ask_model: score every n-th position while fitting


@dataclass
class FishPlayers:
    """Each player's settings (fish/players/roster.py), by player name; logic_open takes
    logic's. The learned player's scorer file is evaluate.py's `checkpoint=`."""

    random: RandomSettings = field(default_factory=RandomSettings)
    logic: LogicSettings = field(default_factory=LogicSettings)
    search: SearchSettings = field(default_factory=SearchSettings)
    learned: LearnedSettings = field(default_factory=LearnedSettings)


@dataclass
class FishSelfPlay:
    """train.py game.learner=player: the learned player by self-play REINFORCE
    (fish/learning/)."""

    updates: Count = 300  # Adam steps, each on games_per_update self-play games
    games_per_update: Count = 8  # self-play games per update
    # table sizes of the self-play games, alternating
    train_sizes: TableSizes = field(default_factory=lambda: [6, 8])
    # self (every seat the learner) | logic (one team the learner, the other logic)
    opponent: one_of(*OPPONENTS) = "self"  # type: ignore[valid-type]
    lr: Positive = 1.0e-3  # Adam learning rate
    # width of the scorer's two hidden layers
    hidden: at_most(65536) = 64  # type: ignore[valid-type]
    alpha: Finite = 10.0  # initial weight of the move's success probability in its score
    gamma: Share = 0.98  # discount per move of the set and win rewards
    hit_reward: Finite = 0.1  # shaping, +this for a hit, -this for a miss (the ask's own return)
    win_reward: Finite = 1.0  # reward of winning (-: losing) the game
    value_weight: NonNegative = 0.5  # weight of the baseline's squared error in the loss
    entropy_weight: NonNegative = 0.01  # weight of the policy entropy bonus
    # [start,end] probability that the learner's move is replaced by a call of a set its team holds
    # or a hitting ask (linear over the run)
    helping: Probabilities = field(default_factory=lambda: [0.0, 0.0])
    # updates between evaluations against logic, also at the end (0: never)
    eval_every: NonNegativeInt = 50
    # deals per table size of game.match.table_sizes (x2, teams swapped) at each evaluation against
    # logic
    eval_games: Count = 6
    eval_seed: Seed = 1  # seed of the evaluation deals (evaluate.py's default is 0)
    checkpoint_every: Count = 10  # updates between checkpoints (and always at the end)
    # learner seats call certain sets on their turn (mover) or between any two moves (every_seat, as
    # in matches; slower)
    call_checks: one_of(*CALL_CHECKS) = "mover"  # type: ignore[valid-type]
    seed: Seed = 0  # seeds every self-play game (with its index) and the scorer's initial weights
    # start from this scorer's weights (a model.pt, latest.pt or models/fish_learned.pt) with a
    # fresh Adam; kept in the run's settings
    init_from: str | None = None


@dataclass
class FishConfig(GameConfig):
    name: str = "fish"
    # train.py: player (the self-play scorer, game.selfplay) | predictor (the hand predictor on
    # simulated games, game.predictor)
    learner: one_of(*LEARNERS) = "player"  # type: ignore[valid-type]
    match: FishMatch = field(default_factory=FishMatch)
    track: FishTrack = field(default_factory=FishTrack)
    player: FishPlayers = field(default_factory=FishPlayers)
    selfplay: FishSelfPlay = field(default_factory=FishSelfPlay)
    predictor: PredictorTraining = field(default_factory=PredictorTraining)


def check_fish_inputs(cfg) -> None:
    """evaluate.py game=fish: the learned hand predictor (model=PATH) is read and checked before
    the tracker runs, so a damaged file costs nothing (the transcripts are read first anyway)."""
    if cfg.predictor:
        load_predictor(cfg.predictor)
