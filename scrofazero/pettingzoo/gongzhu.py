"""Gongzhu as a PettingZoo AEC environment, in the style of PettingZoo's classic games.

Agents "player_0".."player_3" are seats 0..3 (teams 0+2 and 1+3); an action is the index of the
card played (Discrete(52)). Every move goes through rules.GongzhuState. The observation of a
seat is relative to it (other seats at (seat - me) % 4): its hand, the cards played, the current
trick by seat, every pile's scoring cards, shown voids and the pile scores so far / 1000. Rewards
are 0 until the last card; then each seat gets GongzhuState.returns(): its team's score minus
the other team's (partners get the same reward).
"""

from __future__ import annotations

import numpy as np
from pettingzoo import AECEnv

from scrofazero.games.gongzhu.cards import (
    NUM_CARDS,
    NUM_SEATS,
    card_code,
    format_cards,
    mask_to_cards,
)
from scrofazero.games.gongzhu.deals import random_deal
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView
from scrofazero.games.gongzhu.scoring import pile_scores
from scrofazero.pettingzoo.turns import RENDER_MODES, TurnBasedEnv, wrapped

SCORE_SCALE = 1000.0  # one pile's score is within +-600, so score / 1000 is within [-1, 1]
_SHIFTS = np.arange(NUM_CARDS, dtype=np.uint64)
# hand, played, current trick per relative seat, scoring piles per seat, voids per seat, scores
OBS_SIZE = (NUM_CARDS + NUM_CARDS + NUM_SEATS * NUM_CARDS + NUM_SEATS * 16 + NUM_SEATS * 4
            + NUM_SEATS)


def env(**kwargs) -> AECEnv:
    """The wrapped environment: illegal moves end the game (-1 to the mover), out-of-range
    actions raise, and the AEC call order is enforced."""
    return wrapped(raw_env(**kwargs))


def _bits(mask: int, width: int) -> np.ndarray:
    return ((np.uint64(mask) >> _SHIFTS[:width]) & np.uint64(1)).astype(np.float32)


def observe_view(view: InfoView) -> np.ndarray:
    """One seat's observation vector [OBS_SIZE] (float32, every entry within [-1, 1])."""
    me = view.seat
    trick = np.zeros((NUM_SEATS, NUM_CARDS), np.float32)
    for i, card in enumerate(view.trick):
        trick[(view.leader + i - me) % NUM_SEATS, card] = 1.0
    order = [(me + k) % NUM_SEATS for k in range(NUM_SEATS)]
    scores = pile_scores(view.piles)
    return np.concatenate([
        _bits(view.hand, NUM_CARDS),
        _bits(view.played, NUM_CARDS),
        trick.ravel(),
        *(_bits(view.piles[s], 16) for s in order),
        *(_bits(view.voids[s], 4) for s in order),
        np.array([scores[s] / SCORE_SCALE for s in order], np.float32),
    ])


class raw_env(TurnBasedEnv):
    """Gongzhu for four agents; `leader` is the seat leading the first trick (default 0)."""

    metadata = {"render_modes": list(RENDER_MODES), "name": "scrofazero_gongzhu_v0",
                "is_parallelizable": False, "render_fps": 1}

    def __init__(self, render_mode: str | None = None, leader: int = 0):
        super().__init__()
        GongzhuState(leader=leader, seed=0)  # refuses a bad leader before any game starts
        self.leader = leader
        self._setup(render_mode, NUM_SEATS, OBS_SIZE, NUM_CARDS, low=-1.0)
        # None until reset(), which PettingZoo's API has come before any other call
        self.state_: GongzhuState = None  # type: ignore[assignment]

    def view(self, agent: str) -> InfoView:
        """What `agent`'s seat knows: the view scrofazero's own players act on."""
        return self.state_.view(self.seat(agent))

    def observe(self, agent):
        seat = self.seat(agent)
        mask = np.zeros(NUM_CARDS, np.int8)
        if seat == self.state_.current_player and not self.state_.is_terminal():
            mask[self.state_.legal_actions()] = 1
        return {"observation": observe_view(self.state_.view(seat)), "action_mask": mask}

    def reset(self, seed: int | None = None, options=None):
        """A new random deal; the same seed gives the same deal."""
        self._reseed(seed)
        self.state_ = GongzhuState(deal=random_deal(self._rng), leader=self.leader)
        self._begin_episode()

    def _move(self, action: int) -> None:
        self.state_.apply(action)

    def _over(self) -> bool:
        return self.state_.is_terminal()

    def _returns(self):
        return self.state_.returns()

    def _mover(self) -> int:
        return self.state_.current_player

    def _text(self) -> str:
        return _describe(self.state_)


def _describe(gs: GongzhuState) -> str:
    lines = [f"seat {s}: {format_cards(mask_to_cards(gs.hands[s]))}" for s in range(NUM_SEATS)]
    lines.append(f"trick led by seat {gs.leader}: {format_cards(gs.trick) or '-'}")
    last = f"seat {gs.history[-1][0]} played {card_code(gs.history[-1][1])}" if gs.history else "-"
    lines.append(f"last: {last}; pile scores {gs.pile_scores()}")
    return "\n".join(lines)
