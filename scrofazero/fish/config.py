"""Fish's options: the `game=fish` config group of evaluate.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Annotated, Optional

from pydantic import Field

from scrofazero.config import GameConfig
from scrofazero.fish.predictor import CORES, load_predictor
from scrofazero.fish.train import CALL_CHECKS, LEARNERS, OPPONENTS
from scrofazero.games.fish.cards import TABLE_SIZES
from scrofazero.games.fish.rules import CALL_MODES
from scrofazero.settings import (
    Count,
    Finite,
    Fraction,
    NonNegative,
    NonNegativeInt,
    Positive,
    Seed,
    Share,
    at_most,
    one_of,
)

TableSizes = Annotated[list[one_of(*TABLE_SIZES)], Field(min_length=1)]  # 6 and/or 8 players
Probabilities = Annotated[list[Fraction], Field(min_length=2, max_length=2)]  # [start, end]


@dataclass
class FishConfig(GameConfig):
    name: str = "fish"
    table_sizes: TableSizes = field(default_factory=lambda: [6, 8])  # mode=match: table sizes played (6 and/or 8 players)
    calls: one_of(*CALL_MODES) = "any_time"  # mode=match: any_time (any seat between moves) | own_turn
    ask_held_allowed: bool = False  # mode=match: asking for a card one holds is legal (breaks the "asker lacks it" inference)
    soft: NonNegative = 0.0  # belief tracker: tempering of the soft ask evidence (0: pure logic)
    ask_other: Fraction = 0.5  # belief tracker: weight of "the asker holds another card of the set" (1: a rule, 0.5: no evidence)
    ask_lacks: Fraction = 0.5  # belief tracker: weight of "the asker lacks the asked card" (1: a rule, 0.5: no evidence)
    ask_target: Fraction = 0.5  # belief tracker: weight of "the target holds another card of the set" (0.5: no evidence)
    fit_ask_model: bool = False  # mode=track: fit the three ask weights on a grid, leave-one-file-out (several minutes)
    fit_stride: Count = 4  # mode=track with fit_ask_model: score every n-th position while fitting
    max_moves: Count = 1000  # mode=match: past this many moves the player to move must call
    random_call_prob: Fraction = 0.05  # the random player's chance of a random call on its turn
    hide_margin: Fraction = 0.0  # logic player: hit probability it may give up to ask in a set it has already shown
    transcripts: Optional[list[str]] = None  # mode=track: recorded games (None: the shipped recordings)
    games: Count = 50  # mode=match: deals per table size, each played twice with the teams swapped
    learner: one_of(*LEARNERS) = "player"  # train.py: player (the self-play scorer, fish/train.py) | predictor (the hand predictor on simulated games, fish/predictor.py)
    predictor_core: one_of(*CORES) = "gru"  # train.py game.learner=predictor: gru | lstm | transformer | none (the ablation)
    predictor_steps: Count = 300  # train.py game.learner=predictor: Adam steps of 8 sequences
    predictor_games: Count = 200  # train.py game.learner=predictor: simulated games per table size (generated into predictor_data/train when empty)
    predictor_data: str = "results/fish_predictor"  # train.py game.learner=predictor: folder of the simulated games (train/, val/)
    predictor_minutes: Positive = 60.0  # train.py game.learner=predictor: stop training after this long
    learned_greedy: bool = True  # learned player (evaluate.py): play the best-scored move (false: draw from the softmax)
    updates: Count = 300  # train.py: Adam steps, each on game.games_per_update self-play games
    games_per_update: Count = 8  # train.py: self-play games per update
    train_sizes: TableSizes = field(default_factory=lambda: [6, 8])  # train.py: table sizes of the self-play games, alternating
    opponent: one_of(*OPPONENTS) = "self"  # train.py: self (every seat the learner) | logic (one team the learner, the other logic)
    lr: Positive = 1.0e-3  # train.py: Adam learning rate
    hidden: at_most(65536) = 64  # train.py: width of the scorer's two hidden layers
    alpha: Finite = 10.0  # train.py: initial weight of the move's success probability in its score
    gamma: Share = 0.98  # train.py: discount per move of the set and win rewards
    hit_reward: Finite = 0.1  # train.py: shaping, +this for a hit, -this for a miss (the ask's own return)
    win_reward: Finite = 1.0  # train.py: reward of winning (-: losing) the game
    value_weight: NonNegative = 0.5  # train.py: weight of the baseline's squared error in the loss
    entropy_weight: NonNegative = 0.01  # train.py: weight of the policy entropy bonus
    helping: Probabilities = field(default_factory=lambda: [0.0, 0.0])  # train.py: [start,end] probability that the learner's move is replaced by a call of a set its team holds or a hitting ask (linear over the run)
    eval_every: NonNegativeInt = 50  # train.py: updates between evaluations against logic, also at the end (0: never)
    eval_games: Count = 6  # train.py: deals per table size (x2, teams swapped) at each evaluation against logic
    eval_seed: Seed = 1  # train.py: seed of the evaluation deals (evaluate.py's default is 0)
    checkpoint_every: Count = 10  # train.py: updates between checkpoints (and always at the end)
    call_checks: one_of(*CALL_CHECKS) = "mover"  # train.py: learner seats call certain sets on their turn (mover) or between any two moves (every_seat, as in matches; slower)


def check_fish_inputs(cfg) -> None:
    """evaluate.py game=fish: the learned hand predictor (model=PATH) is read and checked before
    the tracker runs, so a damaged file costs nothing (the transcripts are read first anyway)."""
    if cfg.get("predictor"):
        load_predictor(cfg.predictor)
