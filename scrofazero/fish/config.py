"""Fish's options: the `game=fish` config group of evaluate.py."""

from __future__ import annotations

from dataclasses import dataclass, field
from typing import Optional

from scrofazero.config import GameConfig


@dataclass
class FishConfig(GameConfig):
    name: str = "fish"
    table_sizes: list[int] = field(default_factory=lambda: [6, 8])  # mode=match: table sizes played (6 and/or 8 players)
    calls: str = "any_time"  # mode=match: any_time (any seat between moves) | own_turn
    ask_held_allowed: bool = False  # mode=match: asking for a card one holds is legal (breaks the "asker lacks it" inference)
    soft: float = 0.0  # belief tracker: tempering of the soft ask evidence (0: pure logic)
    ask_other: float = 0.5  # belief tracker: weight of "the asker holds another card of the set" (1: a rule, 0.5: no evidence)
    ask_lacks: float = 0.5  # belief tracker: weight of "the asker lacks the asked card" (1: a rule, 0.5: no evidence)
    ask_target: float = 0.5  # belief tracker: weight of "the target holds another card of the set" (0.5: no evidence)
    fit_ask_model: bool = False  # mode=track: fit the three ask weights on a grid, leave-one-file-out (several minutes)
    fit_stride: int = 4  # mode=track with fit_ask_model: score every n-th position while fitting
    max_moves: int = 1000  # mode=match: past this many moves the player to move must call
    random_call_prob: float = 0.05  # the random player's chance of a random call on its turn
    hide_margin: float = 0.0  # logic player: hit probability it may give up to ask in a set it has already shown
    transcripts: Optional[list[str]] = None  # mode=track: recorded games (None: the shipped recordings)
    games: int = 50  # mode=match: deals per table size, each played twice with the teams swapped
    learner: str = "player"  # train.py: player (the self-play scorer, fish/train.py) | predictor (the hand predictor on simulated games, fish/predictor.py)
    predictor_core: str = "gru"  # train.py game.learner=predictor: gru | lstm | transformer | none (the ablation)
    predictor_steps: int = 300  # train.py game.learner=predictor: Adam steps of 8 sequences
    predictor_games: int = 200  # train.py game.learner=predictor: simulated games per table size (generated into predictor_data/train when empty)
    predictor_data: str = "results/fish_predictor"  # train.py game.learner=predictor: folder of the simulated games (train/, val/)
    predictor_minutes: float = 60.0  # train.py game.learner=predictor: stop training after this long
    learned_greedy: bool = True  # learned player (evaluate.py): play the best-scored move (false: draw from the softmax)
    updates: int = 300  # train.py: Adam steps, each on game.games_per_update self-play games
    games_per_update: int = 8  # train.py: self-play games per update
    train_sizes: list[int] = field(default_factory=lambda: [6, 8])  # train.py: table sizes of the self-play games, alternating
    opponent: str = "self"  # train.py: self (every seat the learner) | logic (one team the learner, the other logic)
    lr: float = 1.0e-3  # train.py: Adam learning rate
    hidden: int = 64  # train.py: width of the scorer's two hidden layers
    alpha: float = 10.0  # train.py: initial weight of the move's success probability in its score
    gamma: float = 0.98  # train.py: discount per move of the set and win rewards
    hit_reward: float = 0.1  # train.py: shaping, +this for a hit, -this for a miss (the ask's own return)
    win_reward: float = 1.0  # train.py: reward of winning (-: losing) the game
    value_weight: float = 0.5  # train.py: weight of the baseline's squared error in the loss
    entropy_weight: float = 0.01  # train.py: weight of the policy entropy bonus
    helping: list[float] = field(default_factory=lambda: [0.0, 0.0])  # train.py: [start,end] probability that the learner's move is replaced by a call of a set its team holds or a hitting ask (linear over the run)
    eval_every: int = 50  # train.py: updates between evaluations against logic, also at the end (0: never)
    eval_games: int = 6  # train.py: deals per table size (x2, teams swapped) at each evaluation against logic
    eval_seed: int = 1  # train.py: seed of the evaluation deals (evaluate.py's default is 0)
    checkpoint_every: int = 10  # train.py: updates between checkpoints (and always at the end)
    call_checks: str = "mover"  # train.py: learner seats call certain sets on their turn (mover) or between any two moves (every_seat, as in matches; slower)
