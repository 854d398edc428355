"""A review of one seat's moves in a played Gongzhu hand: the AI as a coach.

For each card the seat played, the full player (`scrofazero` in the registry, with its
defaults) is asked from that seat's InfoView at that moment, never the true deal: the value it
finds for every legal card, the card it would choose, and the points the played card gave up
against the best value (0 when the seat played the AI's card). Each move is decided with its
own rng seeded by (seed, ply), so a review reproduces and a move reviewed alone gets the same
answer as in the whole review.

`review_hand(deal, leader, moves, seat, agent, seed)` works on plain card indices; the table
server (serve/gongzhu/reviews.py) and `python review.py` feed it records and game files.
"""

from __future__ import annotations

from typing import Callable, Sequence

import numpy as np

from scrofazero.agents import decide
from scrofazero.games.gongzhu.cards import card_code
from scrofazero.games.gongzhu.rules import GongzhuState

COSTLIEST = 3  # the moves a hand's summary names


def move_rng(seed: int, ply: int) -> np.random.Generator:
    """The rng of the review of the move at `ply` (1-based): seeded by the review's seed and the
    ply alone, so no move's answer depends on the moves reviewed before it."""
    return np.random.default_rng([int(seed), int(ply)])


def review_move(agent, view, played: int, ply: int, seed: int) -> dict:
    """The review of one move: `played` (a card index) at `view`, the seat's information."""
    legal = [int(c) for c in view.legal_actions()]
    card, why = decide(agent, view, move_rng(seed, ply))
    values = list(why.values) if why is not None else [None] * len(legal)
    forced = len(legal) == 1 or bool(why is not None and why.forced)
    known = [v for v in values if v is not None]
    best = max(known) if known else None
    mine = values[legal.index(played)] if played in legal else None
    if forced or played == card or best is None or mine is None:
        given_up = 0.0
    else:
        given_up = max(0.0, float(best) - float(mine))
    return {"ply": ply, "card": card_code(played), "ai_card": card_code(int(card)),
            "forced": forced, "given_up": round(given_up, 2),
            "values": [{"card": card_code(c), "value": None if v is None else round(float(v), 2)}
                       for c, v in zip(legal, values)]}


def seat_moves(deal: Sequence[int], leader: int, moves: Sequence[int], seat: int):
    """(ply, the seat's view before it played, the card it played) for each of `seat`'s moves
    among `moves` (card indices in play order), replayed on the rules engine."""
    state = GongzhuState(list(deal), leader=leader)
    for ply, card in enumerate(moves, start=1):
        if state.current_player == seat:
            yield ply, state.view(seat), int(card)
        state.apply(int(card))


def review_hand(deal: Sequence[int], leader: int, moves: Sequence[int], seat: int, agent,
                seed: int = 0, progress: Callable[[int, int], None] | None = None) -> dict:
    """The review of `seat`'s moves of one hand, with its summary: the total given up and the
    costliest moves (at most COSTLIEST, those that gave up points, costliest first).
    `progress(done, total)` is called after each move."""
    mine = list(seat_moves(deal, leader, moves, seat))
    reviewed = []
    for ply, view, card in mine:
        reviewed.append(review_move(agent, view, card, ply, seed))
        if progress is not None:
            progress(len(reviewed), len(mine))
    return {"seat": seat, "seed": int(seed), "moves": reviewed, **summary(reviewed)}


def summary(reviewed: list[dict]) -> dict:
    """The totals of reviewed moves: points given up, and the costliest plies."""
    costly = sorted((m for m in reviewed if m["given_up"] > 0),
                    key=lambda m: (-m["given_up"], m["ply"]))[:COSTLIEST]
    return {"total_given_up": round(sum(m["given_up"] for m in reviewed), 2),
            "costliest": [{"ply": m["ply"], "card": m["card"], "ai_card": m["ai_card"],
                           "given_up": m["given_up"]} for m in costly]}


def match_summary(hands: list[dict]) -> dict:
    """A match's summary from the reviews of its hands (in order)."""
    return {"hands": len(hands),
            "total_given_up": round(sum(h["total_given_up"] for h in hands), 2),
            "per_hand": [h["total_given_up"] for h in hands]}
