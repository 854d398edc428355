"""The review of a person's moves (scrofazero/eval/review.py): a move the AI itself makes costs
0; a seeded review reproduces; a review never uses a card its seat could not see (the hidden
cards changed consistently with the seat's view give the same review). The small shipped
network and the first two tricks keep it fast.
"""

from __future__ import annotations

from pathlib import Path

import pytest

from scrofazero.agents import PLAYERS, decide
from scrofazero.eval.review import move_rng, review_hand, seat_moves
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.checkpoint import load_model

SMALL = Path(__file__).resolve().parents[2] / "models" / "scrofazero_small.pt"
SEAT = 0


@pytest.fixture(scope="module")
def agent():
    return PLAYERS["scrofazero"].make(model=load_model(str(SMALL)))


def played_moves(deal, plies: int, pick) -> list[int]:
    """`plies` cards from deal's start, each chosen by pick(state) among the legal ones."""
    state = GongzhuState(list(deal), leader=0)
    moves = []
    for _ in range(plies):
        card = pick(state)
        moves.append(card)
        state.apply(card)
    return moves


def test_the_ais_own_move_costs_nothing(agent):
    deal = load_deals()[5]
    # seat 0 plays what the reviewer itself would choose with the review's rng; others the lowest
    moves = played_moves(deal, 8, lambda s: int(decide(agent, s.view(0), move_rng(
        3, len(s.history) + 1))[0]) if s.current_player == SEAT else int(s.legal_actions()[0]))
    review = review_hand(deal, 0, moves, SEAT, agent, seed=3)
    assert len(review["moves"]) == 2 and review["moves"][0]["ply"] == 1
    assert all(m["card"] == m["ai_card"] and m["given_up"] == 0 for m in review["moves"])
    assert review["total_given_up"] == 0 and review["costliest"] == []


def test_a_seeded_review_reproduces_and_sees_only_the_seats_view(agent):
    deal = list(load_deals()[9])
    moves = played_moves(deal, 8, lambda s: int(s.legal_actions()[-1]))  # the highest legal
    first = review_hand(deal, 0, moves, SEAT, agent, seed=11)
    assert review_hand(deal, 0, moves, SEAT, agent, seed=11) == first
    for m in first["moves"]:
        values = [v["value"] for v in m["values"] if v["value"] is not None]
        mine = next(v["value"] for v in m["values"] if v["card"] == m["card"])
        if m["card"] != m["ai_card"] and not m["forced"]:
            assert m["given_up"] == pytest.approx(max(0.0, max(values) - mine), abs=0.011)

    # swap the unplayed cards of seats 1 and 2 suit by suit: each keeps its suit counts, so
    # every recorded move stays legal and seat 0's view is the same at each of its moves
    played = set(moves)
    other = list(deal)
    for suit in range(4):
        cards = {s: [i for i in range(13 * s, 13 * s + 13) if deal[i] // 13 == suit
                     and deal[i] not in played] for s in (1, 2)}
        for a, b in zip(cards[1], cards[2]):
            other[a], other[b] = other[b], other[a]
    assert other != deal
    views = [v for _, v, _ in seat_moves(deal, 0, moves, SEAT)]
    assert views == [v for _, v, _ in seat_moves(other, 0, moves, SEAT)]
    assert review_hand(other, 0, moves, SEAT, agent, seed=11) == first
