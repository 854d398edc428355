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
