"""Tiny Crew rules (scrofazero/games/tiny_crew/rules.py), the reference for everything else.

Invariants: card ids and names follow docs/rules.md section 16; every ordered trick of three
distinct cards is won
as the rules say (highest submarine, else highest of the led colour; off-colour cards never win;
a later card of the led colour never beats an earlier submarine), checked against a separately
written ranking; follow suit applies to submarines too; T1 is judged by the trick's winner, not
its last player; T2 fails at two blues, succeeds with exactly one once all blues are gone, fails
with none; the game stops as soon as the outcome is decided; the captain rule gives the lead to
the holder of S3; the deal table holds every deal exactly once; bad input raises, naming it, and
an illegal card leaves the state unchanged.
"""

import itertools
import random

import numpy as np
import pytest

from scrofazero.games.tiny_crew.rules import (
    FAILED,
    PENDING,
    SUCCESS,
    Params,
    TinyCrewState,
    all_deals,
    card_id,
    card_name,
    check_deal,
    trick_winner,
)


def owners_from_hands(*hands):
    owners = [None] * 12
    for seat, names in enumerate(hands):
        for name in names.split():
            owners[card_id(name)] = seat
    return owners


def test_card_ids_and_names():
    names = [card_name(c) for c in range(12)]
    assert names == ["R1", "R2", "R3", "B1", "B2", "B3", "G1", "G2", "G3", "S1", "S2", "S3"]
    assert all(card_id(n) == i for i, n in enumerate(names))
    with pytest.raises(ValueError, match="X9"):
        card_id("X9")


def rank(card, led):
    """Independent ranking: submarines above everything, then the led colour, others 0."""
    if card >= 9:
        return 100 + card
    if card // 3 == led // 3 and led < 9:
        return 10 + card
    return 0


def test_every_trick_winner():
    for trick in itertools.permutations(range(12), 3):
        for leader in range(3):
            best = max(range(3), key=lambda i: rank(trick[i], trick[0]))
            assert trick_winner(trick, leader) == (leader + best) % 3
    # The prototype's defect: a later red card must not beat an earlier submarine.
    assert trick_winner([card_id("R1"), card_id("S1"), card_id("R3")], 0) == 1


def test_follow_suit_including_submarines():
    s = TinyCrewState(owners_from_hands("S1 R1 R2 B1", "S2 G1 G2 G3", "S3 R3 B2 B3"))
    s.apply(card_id("S1"))
    assert s.legal_actions() == [card_id("S2")]
    with pytest.raises(ValueError, match="cannot play G1"):
        s.apply(card_id("G1"))
    assert s.history == [card_id("S1")] and s.current_player == 1  # unchanged


def test_t1_judged_by_winner_not_last_player():
    # Seat 0 leads R3, seat 1 follows R1, seat 2 (last) plays R2: seat 0 wins with R3.
    s = TinyCrewState(owners_from_hands("R3 B1 G1 S1", "R1 B2 G2 S2", "R2 B3 G3 S3"))
    for name in ("R3", "R1", "R2"):
        s.apply(card_id(name))
    assert s.status[0] == SUCCESS and s.leader == 0
    # Another deal: seat 0 leads R1, seat 1 trumps with S1: T1 (seat 0) fails at once.
    s = TinyCrewState(owners_from_hands("R1 B1 G1 S2", "S1 B2 G2 G3", "R2 R3 B3 S3"))
    for name in ("R1", "S1", "R3"):
        s.apply(card_id(name))
    assert s.status[0] == FAILED and s.is_terminal() and s.returns() == [0.0] * 3


def test_t2_exactly_one_blue():
    # Seat 1 owns T2; it wins B3 in trick 1, then B1 and B2 in trick 2 -> fails at two.
    s = TinyCrewState(owners_from_hands("B1 R1 G1 G2", "B3 B2 R2 G3", "S1 S2 S3 R3"),
                      Params(t1_seat=2, t2_seat=1))
    for name in ("B1", "B3", "S1"):  # seat 2 trumps: seat 2 wins B1, B3 -> T2 owner has 0
        s.apply(card_id(name))
    assert s.won_blues == [0, 0, 2] and s.status[1] == PENDING
    # Now the last blue B2: seat 2 leads S2, seat 0 plays R1 (no sub), seat 1 B2 -> seat 2.
    for name in ("S2", "R1", "B2"):
        s.apply(card_id(name))
    assert s.status[1] == FAILED and s.is_terminal()  # all blues gone, owner has none


def test_t2_success_and_win():
    # T1 to seat 0, T2 to seat 1. Seat 0 wins R3 at trick 1; seat 1 wins exactly one blue.
    s = TinyCrewState(owners_from_hands("R3 S3 G1 G2", "R1 B3 S2 G3", "R2 B1 B2 S1"))
    for name in ("R3", "R1", "R2"):
        s.apply(card_id(name))
    assert s.status == [SUCCESS, PENDING] and s.leader == 0
    for name in ("G1", "G3", "B1"):  # seat 1 wins with G3 and takes B1
        s.apply(card_id(name))
    assert s.won_blues[1] == 1 and s.leader == 1
    for name in ("B3", "B2", "G2"):  # seat 1 leads B3, wins B2 too -> two blues: fail
        s.apply(card_id(name))
    assert s.status[1] == FAILED and s.returns() == [0.0] * 3
    # Success: seat 1 takes B3 in trick 2; B2 and B1 go to seat 2's S1 in trick 3.
    s = TinyCrewState(owners_from_hands("R3 S3 G1 B1", "R1 B2 G2 G3", "R2 B3 S1 S2"))
    for name in ("R3", "R1", "R2", "G1", "G3", "B3"):
        s.apply(card_id(name))
    assert s.won_blues == [0, 1, 0] and s.status == [SUCCESS, PENDING] and s.leader == 1
    assert s.legal_actions() == [card_id("B2"), card_id("G2")]
    for name in ("B2", "S1", "B1"):
        s.apply(card_id(name))
    assert s.status == [SUCCESS, SUCCESS] and s.is_terminal() and s.returns() == [1.0] * 3
    assert len(s.history) == 9  # ended early: the outcome was decided


def test_captain_leads_and_deal_checks():
    owners = owners_from_hands("R1 R2 R3 B1", "B2 B3 G1 S3", "G2 G3 S1 S2")
    assert TinyCrewState(owners, Params(leader="captain")).current_player == 1
    assert TinyCrewState(owners).current_player == 0
    with pytest.raises(ValueError, match="4 cards"):
        check_deal([0] * 12)
    with pytest.raises(ValueError, match="leader"):
        Params(leader="dealer")
    with pytest.raises(ValueError, match="t2_seat"):
        Params(t2_seat=3)


def test_random_games_end_decided_and_deal_table():
    deals = all_deals()
    assert deals.shape == (34650, 12)
    assert len({d.tobytes() for d in deals}) == 34650
    assert (np.apply_along_axis(np.bincount, 1, deals, minlength=3) == 4).all()
    rng = random.Random(0)
    for _g in range(300):
        s = TinyCrewState(deals[rng.randrange(len(deals))])
        while not s.is_terminal():
            s.apply(rng.choice(s.legal_actions()))
        assert PENDING not in s.status or FAILED in s.status
        assert len(s.history) <= 12
