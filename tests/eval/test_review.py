"""The review of a person's moves (scrofazero/eval/review.py): a move the AI itself makes costs
0; a seeded review reproduces; a review never uses a card its seat could not see (the hidden
cards changed consistently with the seat's view give the same review); the paired judgement
agrees with a plain loop over the deals and calls a mistake only beyond both thresholds; each
move says where it happened. The small shipped network, 16 deals and the first two tricks
keep it fast.
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pytest

from scrofazero.agents import decide
from scrofazero.eval.review import (
    ReviewSettings,
    check_review,
    judge,
    make_reviewer,
    move_rng,
    review_hand,
    review_move,
    seat_moves,
    weighted_mean_se,
)
from scrofazero.games.gongzhu.cards import card_code, card_index
from scrofazero.games.gongzhu.deals import load_deals
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.checkpoint import load_model

SMALL = Path(__file__).resolve().parents[2] / "models" / "scrofazero_small.pt"
SEAT = 0
FAST = ReviewSettings(worlds=16)


@pytest.fixture(scope="module")
def model():
    return load_model(str(SMALL))


def played_moves(deal, plies: int, pick) -> list[int]:
    """`plies` cards from deal's start, each chosen by pick(state) among the legal ones."""
    state = GongzhuState(list(deal), leader=0)
    moves = []
    for _ in range(plies):
        card = pick(state)
        moves.append(card)
        state.apply(card)
    return moves


def test_the_ais_own_move_costs_nothing(model):
    deal = load_deals()[5]
    # seat 0 plays what a reviewer itself would choose with the review's rng; others the lowest
    chooser = make_reviewer(model, FAST)
    moves = played_moves(deal, 8, lambda s: int(decide(chooser, s.view(0), move_rng(
        3, len(s.history) + 1))[0]) if s.current_player == SEAT else int(s.legal_actions()[0]))
    review = review_hand(deal, 0, moves, SEAT, model, seed=3, settings=FAST)
    assert len(review["moves"]) == 2 and review["moves"][0]["ply"] == 1
    assert all(m["card"] == m["ai_card"] and m["given_up"] == 0 and m["verdict"] == "best"
               for m in review["moves"])
    assert review["total_given_up"] == 0 and review["costliest"] == []
    assert review["mistakes"] == 0 and review["result"] is None  # the hand is not over
    assert "none of your 2 moves was a mistake" in review["explanation"].lower()


def test_a_seeded_review_reproduces_and_sees_only_the_seats_view(model):
    deal = list(load_deals()[9])
    moves = played_moves(deal, 8, lambda s: int(s.legal_actions()[-1]))  # the highest legal
    first = review_hand(deal, 0, moves, SEAT, model, seed=11, settings=FAST)
    assert review_hand(deal, 0, moves, SEAT, model, seed=11,
                       settings=FAST) == first
    for m in first["moves"]:
        values = [v["value"] for v in m["values"] if v["value"] is not None]
        if not m["forced"]:  # the AI's card is the best value; the verdicts follow the rule
            assert next(v["value"] for v in m["values"] if v["card"] == m["ai_card"]) == max(
                values)
            for v in m["values"]:
                beyond = v["loss"] > FAST.min_loss and v["loss"] > FAST.z * v["loss_se"]
                assert v["verdict"] == ("best" if v["card"] == m["ai_card"] else
                                        "mistake" if beyond else "as_good")
        mine = next(v for v in m["values"] if v["card"] == m["card"])
        assert (m["verdict"], m["loss"]) == (mine["verdict"], mine["loss"])
        assert m["given_up"] == (m["loss"] if m["verdict"] == "mistake" else 0)

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
    views = [s.view(SEAT) for _, s, _ in seat_moves(deal, 0, moves, SEAT)]
    assert views == [s.view(SEAT) for _, s, _ in seat_moves(other, 0, moves, SEAT)]
    assert review_hand(other, 0, moves, SEAT, model, seed=11,
                       settings=FAST) == first


def reference_judgement(q, w, legal):
    """The paired, cross-fitted judgement written out deal by deal: weighted means, the AI's
    card, and each card's loss against the card each half of the deals picks, measured on the
    other half, with the standard error of the per-deal differences."""
    d, n = q.shape

    def mean_se(rows, x):
        total = sum(w[i] for i in rows)
        p = {i: w[i] / total for i in rows}
        ess = 1.0 / sum(v * v for v in p.values())
        mean = sum(p[i] * x[i] for i in rows)
        return mean, sum(p[i] * (x[i] - mean) ** 2 for i in rows) / (ess - 1)

    def pick(rows):
        return max(range(n), key=lambda c: (mean_se(rows, q[:, c])[0], -c))

    means = [mean_se(range(d), q[:, c])[0] for c in range(n)]
    best = pick(range(d))
    halves = [[i for i in range(d) if i % 2 == 0], [i for i in range(d) if i % 2 == 1]]
    losses, ses = [], []
    for c in range(n):
        parts = [mean_se(other, q[:, pick(rows)] - q[:, c])
                 for rows, other in ((halves[0], halves[1]), (halves[1], halves[0]))]
        loss = max(0.0, (parts[0][0] + parts[1][0]) / 2)
        se = (parts[0][1] + parts[1][1]) ** 0.5 / 2
        losses.append(0.0 if c == best else loss)
        ses.append(0.0 if c == best else se)
    return means, best, losses, ses


def test_the_paired_judgement_agrees_with_a_loop_over_the_deals():
    rng = np.random.default_rng(0)
    for _ in range(20):
        d, n = int(rng.integers(6, 30)), int(rng.integers(2, 8))
        q = rng.normal(0, 40, (d, 1)) + rng.normal(0, 10, (d, n)) + rng.normal(0, 5, n)
        w = rng.random(d) + 0.1
        w /= w.sum()
        j = judge(q, w, list(range(n)))
        means, best, losses, ses = reference_judgement(q, w, list(range(n)))
        assert j.best == best
        assert np.allclose(j.value, means) and np.allclose(j.loss, losses)
        assert np.allclose(j.loss_se, ses)
    # equal weights: the textbook standard error of a mean, s / sqrt(D)
    x = rng.normal(0, 1, 50)
    mean, se = weighted_mean_se(x, np.full(50, 1 / 50))
    assert mean == pytest.approx(x.mean()) and se == pytest.approx(x.std(ddof=1) / 50 ** 0.5)


def centred(x: np.ndarray) -> np.ndarray:
    return x - x.mean()


def test_a_mistake_needs_a_loss_beyond_both_the_minimum_and_the_noise():
    rng = np.random.default_rng(1)
    deals = 64
    common = rng.normal(0, 50, (deals, 1))  # what the deal decides, whichever card is played
    q = np.hstack([common + 10 + rng.normal(0, 0.5, (deals, 1)),  # best
                   common + rng.normal(0, 0.5, (deals, 1)),  # 10 worse on every deal: a mistake
                   common + centred(rng.normal(0, 80, (deals, 1))),  # 10 worse, in the noise
                   common + 7 + rng.normal(0, 0.5, (deals, 1))])  # 3 worse: below the minimum
    j = judge(q, np.full(deals, 1 / deals), [0, 1, 2, 3])
    assert j.best == 0
    assert j.verdicts(ReviewSettings(min_loss=5)) == ["best", "mistake", "as_good", "as_good"]
    assert j.verdicts(ReviewSettings(min_loss=15)) == ["best", "as_good", "as_good", "as_good"]
    # the deal's own spread (50 points) is not noise of the difference: paired, card 1's error
    # is under a point, unpaired it would be about 9
    assert j.loss_se[1] < 1 and j.value_se[1] > 5
    assert j.verdicts(ReviewSettings(min_loss=2)) == ["best", "mistake", "as_good", "mistake"]


def test_each_move_says_where_it_happened_and_bad_settings_are_refused(model):
    deal = list(load_deals()[2])
    moves = played_moves(deal, 9, lambda s: int(s.legal_actions()[0]))
    seat = 1  # follows seat 0's lead in trick 1; in trick 2 its place depends on trick 1
    review = review_hand(deal, 0, moves, seat, model, seed=0, settings=FAST)
    state = GongzhuState(deal, leader=0)
    for ply, card in enumerate(moves, start=1):
        if state.current_player == seat:
            m = next(m for m in review["moves"] if m["ply"] == ply)
            assert m["trick"] == (ply - 1) // 4 + 1 and m["leader"] == state.leader
            assert m["position"] == len(state.trick) + 1
            assert [card_index(t["card"]) for t in m["table"]] == state.trick
            assert sorted(card_index(c) for c in m["hand"]) == [
                c for c in range(52) if state.hands[seat] >> c & 1]
            assert m["card"] == card_code(card)
            assert [v["card"] for v in m["values"]] == [card_code(c)
                                                        for c in state.legal_actions()]
        state.apply(card)
    assert review["moves"][0]["position"] == 2 and review["moves"][0]["table"][0]["seat"] == 0
    for bad, name in ((ReviewSettings(worlds=1), "review.worlds"),
                      (ReviewSettings(z=0), "review.z"),
                      (ReviewSettings(min_loss=-1), "review.min_loss")):
        with pytest.raises(ValueError, match=name):
            check_review(bad)


class Judged:
    """A stand-in reviewer whose search finds the given values q [D, L] on D equal deals."""

    def __init__(self, q: np.ndarray):
        self.q, self.asked = q, 0

    def search_worlds(self, view, rng):
        self.asked += 1
        return None, np.full(len(self.q), 1 / len(self.q)), 0, self.q


class Pair:
    def __init__(self, first: Judged, second: Judged, settings: ReviewSettings):
        self.first, self._second, self.settings = first, second, settings

    def second(self) -> Judged:
        return self._second


def test_a_mistake_must_be_found_again_on_other_deals():
    view = GongzhuState(list(load_deals()[0]), leader=0).view(0)
    legal = view.legal_actions()
    rng = np.random.default_rng(2)
    common = rng.normal(0, 60, (64, 1))

    def values(lead: float) -> np.ndarray:  # card 0 `lead` points better than the others
        q = common + centred(rng.normal(0, 1, (64, len(legal))))
        q[:, 0] += lead
        return q

    settings = ReviewSettings()
    for first, second, confirm, verdict, loss in (
            (40, 0, True, "as_good", 20),  # the second judgement finds no loss: not a mistake
            (40, 30, True, "mistake", 35),  # both find one: a mistake, the mean of the two
            (40, 0, False, "mistake", 40),  # without confirmation the first decides
            (10, 40, True, "as_good", 10)):  # the first alone calls none: no second look
        pair = Pair(Judged(values(first)), Judged(values(second)),
                    ReviewSettings(confirm=confirm) if not confirm else settings)
        move = review_move(pair, view, legal[1], ply=1, seed=0)
        assert move["verdict"] == verdict and move["loss"] == pytest.approx(loss, abs=1)
        assert pair._second.asked == (first > settings.min_loss and confirm)
        assert move["given_up"] == (move["loss"] if verdict == "mistake" else 0)
        played = next(v for v in move["values"] if v["card"] == move["card"])
        assert (played["verdict"], played["loss"]) == (verdict, move["loss"])


def test_an_unknown_error_is_null_in_the_answer_and_never_a_mistake(model):
    """Two deals leave a half with one deal: its error is infinite, which JSON cannot hold (the
    server answered 500); it is answered as null and no loss with it is called a mistake."""
    deal = list(load_deals()[1])
    moves = played_moves(deal, 12, lambda s: int(s.legal_actions()[-1]))
    review = review_hand(deal, 0, moves, SEAT, model, settings=ReviewSettings(worlds=2))
    json.dumps(review, allow_nan=False)  # raises on an infinite or NaN number
    unknown = [v for m in review["moves"] for v in m["values"] if v["loss_se"] is None]
    assert unknown and all(v["verdict"] != "mistake" for v in unknown)
