"""Single-game rules engine.

Invariants: random-play conformance over many seeds (legal set never empty before the end,
cards conserved, each seat plays once per trick, follow-suit respected, the same seed gives the
same game); the highest card of the led suit wins and leads next; scripted deals with known
scores; the leader parameter (an integer seat: not 1.0 or True); bad moves raise and leave the
state unchanged; the information view hides other hands and records voids; clone independence;
from_view rebuilds the state.
"""

import random

import numpy as np
import pytest

from scrofazero.games.gongzhu.cards import FULL_MASK, SUIT_MASK, card_index, mask_to_cards
from scrofazero.games.gongzhu.deals import hands_of, random_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.games.gongzhu.scoring import pile_score_reference, team_returns


def play_random(seed, leader=0):
    rng = random.Random(seed)
    state = GongzhuState(seed=seed, leader=leader)
    moves = []
    while not state.is_terminal():
        card = rng.choice(state.legal_actions())
        moves.append((state.current_player, card))
        state.apply(card)
    return state, moves


def winner_of(trick_cards, leader):
    """Reference trick resolution: highest card of the led suit."""
    led = trick_cards[0] // 13
    best = max(range(4), key=lambda i: (trick_cards[i] // 13 == led, trick_cards[i] % 13))
    return (leader + best) % 4


def test_random_play_conformance():
    for seed in range(300):
        deal = random_deal(seed)
        state = GongzhuState(deal, leader=seed % 4)
        rng = random.Random(seed)
        hands = hands_of(deal)
        piles = [[], [], [], []]
        leader = seed % 4
        for _trick_no in range(13):
            trick = []
            for k in range(4):
                seat = state.current_player
                assert seat == (leader + k) % 4
                legal = state.legal_actions()
                assert legal, "legal set empty before the end"
                hand_cards = mask_to_cards(hands[seat])
                follow = [c for c in hand_cards if trick and c // 13 == trick[0] // 13]
                assert legal == (follow or hand_cards)
                assert np.array_equal(np.flatnonzero(state.legal_mask()), legal)
                card = rng.choice(legal)
                state.apply(card)
                hands[seat] &= ~(1 << card)
                trick.append(card)
            leader = winner_of(trick, leader)
            piles[leader].extend(trick)
            assert state.leader == leader
        assert state.is_terminal() and state.legal_actions() == []
        assert all(h == 0 for h in state.hands)
        scores = [pile_score_reference(p) for p in piles]
        assert state.returns() == team_returns(scores)
        assert sum(state.returns()) == 0
        assert sorted(c for _, c in state.history) == list(range(52))


def test_same_seed_same_game():
    a, moves_a = play_random(11)
    b, moves_b = play_random(11)
    assert moves_a == moves_b and a.returns() == b.returns()
    assert moves_a != play_random(12)[1]


def test_leader_parameter():
    state = GongzhuState(seed=0, leader=2)
    assert state.current_player == 2
    with pytest.raises(ValueError, match="leader"):
        GongzhuState(seed=0, leader=4)


@pytest.mark.parametrize("bad", [1.0, True, False, -1, 4, "1", None, np.float64(2)])
def test_leader_must_be_an_integer_seat(bad):
    # 1.0 == 1 and True == 1, so a membership test alone would accept them
    with pytest.raises(ValueError, match="leader"):
        GongzhuState(seed=0, leader=bad)
    with pytest.raises(ValueError, match="leader"):
        GongzhuState.from_hands(hands_of(random_deal(0)), leader=bad)


def test_numpy_integer_leader_is_a_plain_int():
    state = GongzhuState(seed=0, leader=np.int64(3))
    assert state.current_player == 3 and type(state.leader) is int
    assert type(state.first_leader) is int


def deal_from_hands(*hands):
    cards = [card_index(c) for hand in hands for c in hand.split()]
    return cards


# Seat 0 holds every heart, so after playing all its cards from the lead it wins them all.
SCRIPTED = deal_from_hands(
    "H2 H3 H4 H5 H6 H7 H8 H9 H10 HJ HQ HK HA",
    "S2 S3 S4 S5 S6 S7 S8 S9 S10 SJ SQ SK SA",
    "D2 D3 D4 D5 D6 D7 D8 D9 D10 DJ DQ DK DA",
    "C2 C3 C4 C5 C6 C7 C8 C9 C10 CJ CQ CK CA",
)


def test_scripted_all_hearts_game():
    # Seat 0 leads hearts every trick, nobody can follow, seat 0 wins all 13 tricks and
    # collects all hearts, SQ, DJ and C10: the all-16 pile scores +400.
    state = GongzhuState(SCRIPTED, leader=0)
    order = {s: mask_to_cards(state.hands[s]) for s in range(4)}
    for t in range(13):
        for seat in range(4):
            assert state.current_player == seat
            state.apply(order[seat][12 - t] if seat else order[0][t])
        assert state.leader == 0
    assert state.pile_scores() == [400, 0, 0, 0]
    assert state.returns() == [400, -400, 400, -400]
    assert state.voids == [0, 0b0010, 0b0010, 0b0010]  # seat 0 always leads


def test_scripted_spade_lead_highest_wins():
    state = GongzhuState(SCRIPTED, leader=1)
    state.apply(card_index("S5"))  # seat 1 leads a spade
    state.apply(card_index("D9"))  # seat 2 void in spades
    state.apply(card_index("CA"))  # seat 3: ace of another suit does not win
    state.apply(card_index("HA"))  # seat 0 discards HA
    assert state.leader == 1  # S5 was the only spade
    assert state.returns() == [50, -50, 50, -50]  # seat 1 took -50


def test_bad_moves_leave_state_unchanged():
    state = GongzhuState(SCRIPTED, leader=1)
    state.apply(card_index("S5"))
    before = repr(state), list(state.history), list(state.voids)
    with pytest.raises(ValueError, match="is not in seat 2's hand"):
        state.apply(card_index("S6"))
    with pytest.raises(ValueError, match="out of range"):
        state.apply(60)
    with pytest.raises(ValueError, match="integer"):
        state.apply("SQ")
    assert (repr(state), state.history, state.voids) == before
    state.apply(card_index("D9"))
    state.apply(card_index("C2"))
    # Seat 0 holds only hearts: no revoke possible here; build one for seat 1 instead.
    revoke = GongzhuState(seed=5, leader=0)
    lead = revoke.legal_actions()[0]
    revoke.apply(lead)
    hand = revoke.hands[1]
    off_suit = [c for c in mask_to_cards(hand) if c // 13 != lead // 13]
    if hand & SUIT_MASK[lead // 13] and off_suit:
        with pytest.raises(ValueError, match="must follow"):
            revoke.apply(off_suit[0])
        assert revoke.current_player == 1 and revoke.hands[1] == hand


def test_game_over_raises():
    state, _ = play_random(3)
    with pytest.raises(ValueError, match="over"):
        state.apply(0)


def test_view_hides_and_records_voids():
    state = GongzhuState(SCRIPTED, leader=1)
    state.apply(card_index("S5"))
    state.apply(card_index("D9"))
    view = state.view(3)
    assert view.hand == state.hands[3]
    assert view.voids[2] == 1 << 0  # seat 2 shown void in spades
    assert view.unseen == FULL_MASK & ~state.hands[3] & ~view.played
    assert view.current_player == 3
    assert view.hand_sizes == (13, 12, 12, 13)
    assert not hasattr(view, "hands")


def test_clone_is_independent_and_from_view_rebuilds():
    state, _ = play_random(9)
    fresh = GongzhuState(seed=4)
    rng = random.Random(4)
    for _ in range(22):
        fresh.apply(rng.choice(fresh.legal_actions()))
    copy = fresh.clone()
    copy.apply(copy.legal_actions()[0])
    assert len(fresh.history) == 22 and len(copy.history) == 23
    view = fresh.view(fresh.current_player)
    rebuilt = GongzhuState.from_view(view, fresh.hands)
    while not fresh.is_terminal():
        assert rebuilt.legal_actions() == fresh.legal_actions()
        card = rng.choice(fresh.legal_actions())
        fresh.apply(card)
        rebuilt.apply(card)
        assert rebuilt.returns() == fresh.returns()
    wrong = list(copy.hands)
    with pytest.raises(ValueError):
        GongzhuState.from_view(view, wrong)
