"""Mr. If follows the rule text of docs/rules.md section 8 on scripted positions.

Invariants covered: leading from the shortest safe suit with its highest card (and the documented
tie-break); a non-dangerous random card when no suit is safe, any card when all are dangerous;
every priority of the discard list (two positions each) and the shortest-suit fallback; a single
card of the led suit; each spades, clubs, diamonds and hearts branch; legality in random games.
"""

import numpy as np
import pytest

from scrofazero.agents import make_agent
from scrofazero.agents.mr_if import MrIf
from scrofazero.games.gongzhu.cards import card_code, card_index
from scrofazero.games.gongzhu.rules import GongzhuState

DANGER = "SQ HA SA SK HK C10 CA HQ HJ CK CQ CJ H10 H9 H8 H7 H6 H5".split()


def idx(codes):
    return [card_index(c) for c in codes.split()] if isinstance(codes, str) else list(
        map(card_index, codes)
    )


def position(hand, trick=(), leader=0):
    """View of the seat to move, holding `hand` (13 codes), after `trick` was played by the seats
    before it; the rest of the deck is dealt to the other seats, keeping off-suit players void."""
    hand, trick = idx(hand), idx(trick)
    assert len(hand) == 13
    me = (leader + len(trick)) % 4
    hands = {s: [] for s in range(4)}
    hands[me] = hand
    void = {}
    for k, card in enumerate(trick):
        seat = (leader + k) % 4
        hands[seat].append(card)
        if card // 13 != trick[0] // 13:
            void[seat] = trick[0] // 13
    used = set(hand) | set(trick)
    for card in (c for c in range(52) if c not in used):
        seat = next(
            s for s in range(4)
            if s != me and len(hands[s]) < 13 and void.get(s) != card // 13
        )
        hands[seat].append(card)
    state = GongzhuState.from_hands(
        [sum(1 << c for c in hands[s]) for s in range(4)], leader=leader
    )
    for card in trick:
        state.apply(card)
    assert state.current_player == me
    return state.view(me)


def play(view, seed=0):
    card = MrIf().act(view, np.random.default_rng(seed))
    assert card in view.legal_actions()
    return card_code(card)


# --- leading ------------------------------------------------------------------------------
def test_leads_highest_card_of_shortest_safe_suit():
    # Clubs (1 card) is shorter but unsafe (CQ); hearts (2) is the shortest safe suit.
    view = position("CQ H3 H7 DJ D5 D6 S2 S3 S4 S5 S6 S7 S8")
    assert play(view) == "H7"


def test_lead_highest_is_by_rank_and_skips_unsafe_suits():
    # Spades hold SK (unsafe), diamonds hold DJ (unsafe); clubs is safe: its highest is C9.
    view = position("SK S2 DJ D2 D3 C9 C2 C5 H2 H3 H4 H5 H6")
    assert play(view) == "C9"


def test_lead_tie_between_equal_length_safe_suits_prefers_lower_top():
    # Clubs (C2 C9) and diamonds (D3 DA) are both safe with two cards: the lower top (C9) leads.
    view = position("C2 C9 D3 DA S2 S3 S4 S5 H2 H3 H4 H5 H6")
    assert play(view) == "C9"


def test_no_safe_suit_leads_random_non_dangerous_card():
    view = position("SQ S3 S4 HA H4 H5 DJ D2 D3 CK C5 C6 C7")
    allowed = set("S3 S4 H4 H5 D2 D3 C5 C6 C7".split())
    seen = {play(view, seed) for seed in range(300)}
    assert seen == allowed  # never a dangerous card, and every allowed card is possible


def test_all_cards_dangerous_leads_any_card():
    hands = [
        "SQ SK SA HA HK C10 CJ CQ CK CA DJ DA DK",
        "D2 D5 S2 S3 S4 S5 S6 S7 S8 S9 S10 SJ H2",
        "D3 D6 H3 H4 H5 H6 H7 H8 H9 H10 HJ HQ C2",
        "D4 D7 C3 C4 C5 C6 C7 C8 C9 D8 D9 D10 DQ",
    ]
    state = GongzhuState.from_hands([sum(1 << c for c in idx(h)) for h in hands])
    for code in "DA D2 D3 D4 DK D5 D6 D7".split():  # seat 0 wins both tricks and leads again
        state.apply(card_index(code))
    view = state.view(0)
    assert view.current_player == 0
    seen = {play(view, seed) for seed in range(200)}
    assert seen == set(hands[0].split()[:11])


# --- void in the led suit -----------------------------------------------------------------
def _discard_hand(k, led):
    """13 cards void in `led`: DANGER[k], up to five later danger cards, then filler that is
    neither in the danger list nor DJ."""
    cards = [c for c in DANGER[k : k + 6] if card_index(c) // 13 != led]
    filler = [
        card_code(c) for c in range(52)
        if c // 13 != led and card_code(c) not in DANGER and card_code(c) != "DJ"
    ]
    return cards + filler[: 13 - len(cards)]


@pytest.mark.parametrize("k", range(len(DANGER)))
def test_discard_follows_danger_list_when_diamonds_led(k):
    view = position(_discard_hand(k, 2), ["D5"])
    assert play(view) == DANGER[k]


@pytest.mark.parametrize("k", range(len(DANGER)))
def test_discard_follows_danger_list_when_another_suit_led(k):
    suit = card_index(DANGER[k]) // 13
    led = {0: 3, 1: 0, 3: 1}[suit]  # a suit other than the card's own and other than diamonds
    view = position(_discard_hand(k, led), [{0: "S2", 1: "H2", 3: "C2"}[led]])
    assert play(view) == DANGER[k]


def test_discard_without_danger_cards_sheds_highest_of_shortest_suit():
    view = position("S2 S3 S4 S5 S6 H2 H3 H4 C2 C3 C4 C5 C6", ["D9"])
    assert play(view) == "H4"


def test_discard_shortest_suit_tie_sheds_the_higher_top():
    view = position("H2 H3 H4 C2 C3 C9 S2 S3 S4 S5 S6 S7 S8", ["D9"])
    assert play(view) == "C9"


def test_single_card_of_led_suit_is_played():
    view = position("HA S2 S3 S4 S5 S6 D2 D3 D4 C2 C3 C4 C5", ["H2"])
    assert play(view) == "HA"


# --- spades -------------------------------------------------------------------------------
FILL = "D2 D3 D4 D5 D6 D7 D8 D9 D10 DQ DK DA"  # harmless cards to complete 13


def hand_of(codes):
    extra = 13 - len(codes.split())
    return codes.split() + FILL.split()[:extra]


@pytest.mark.parametrize("trick", [["S5", "SK"], ["SA", "S5"], ["S5", "S6", "SA"]])
def test_spades_throws_sq_on_sk_or_sa(trick):
    assert play(position(hand_of("SQ S3 S9"), trick)) == "SQ"


def test_spades_last_without_sq_in_trick_plays_highest_non_sq():
    assert play(position(hand_of("SA S2 S4"), ["S5", "S9", "S3"])) == "SA"
    assert play(position(hand_of("SQ SK S2"), ["S5", "S9", "S3"])) == "SK"


def test_spades_last_with_sq_in_trick_stays_below_it():
    assert play(position(hand_of("SK S8 S2"), ["SQ", "S5", "S3"])) == "S8"


def test_spades_highest_below_top_honour_on_table():
    assert play(position(hand_of("SA SJ S4"), ["S5", "SK"])) == "SJ"


def test_spades_without_honour_on_table_stays_below_sq():
    assert play(position(hand_of("SA SK SJ S4"), ["S9"])) == "SJ"


def test_spades_nothing_below_plays_lowest_spade_but_not_sq():
    assert play(position(hand_of("SA SK"), ["S9"])) == "SK"
    assert play(position(hand_of("SQ SA"), ["S9"])) == "SA"


# --- clubs --------------------------------------------------------------------------------
@pytest.mark.parametrize("trick", [["C5", "CJ"], ["CA", "C2", "C4"]])
def test_clubs_throws_c10_under_a_higher_club(trick):
    assert play(position(hand_of("C10 C3 CK"), trick)) == "C10"


def test_clubs_last_without_c10_in_trick_plays_highest_non_c10():
    assert play(position(hand_of("CA C10 C5"), ["C2", "C3", "C4"])) == "CA"


def test_clubs_highest_below_top_honour_or_c10():
    assert play(position(hand_of("CK C8 C3"), ["C9"])) == "C8"
    assert play(position(hand_of("CK CJ C5"), ["CQ"])) == "CJ"
    assert play(position(hand_of("CJ C9 C3"), ["C10", "C2", "C4"])) == "C9"  # last, C10 there


def test_clubs_nothing_below_plays_lowest_but_not_c10():
    assert play(position(hand_of("CA CK"), ["C2"])) == "CK"
    assert play(position(hand_of("C10 CA"), ["C2"])) == "CA"


# --- diamonds and hearts ------------------------------------------------------------------
SPADE_FILL = "S2 S3 S4 S5 S6 S7 S8 S9 S10 SJ SQ SK".split()


def hand_with_spades(codes):
    return codes.split() + SPADE_FILL[: 13 - len(codes.split())]


def test_diamonds_last_wins_with_dj():
    assert play(position(hand_with_spades("DJ D3 DK"), ["D5", "D9", "D2"])) == "DJ"


def test_diamonds_dj_kept_when_higher_diamond_in_trick():
    assert play(position(hand_with_spades("DJ D3 DK"), ["D5", "DQ", "D2"])) == "DK"


def test_diamonds_not_last_plays_highest_non_dj():
    assert play(position(hand_with_spades("DJ DA D3"), ["D5"])) == "DA"


def test_hearts_highest_below_highest_on_table():
    assert play(position(hand_with_spades("HJ H10 H2 HK"), ["H9", "HQ"])) == "HJ"


def test_hearts_nothing_below_plays_lowest():
    assert play(position(hand_with_spades("HA H5"), ["H3"])) == "H5"


# --- always legal -------------------------------------------------------------------------
def test_always_legal_in_random_games():
    agent = make_agent("if")
    assert agent.name == "if"
    rng = np.random.default_rng(7)
    for game in range(300):
        state = GongzhuState(seed=game, leader=game % 4)
        while not state.is_terminal():
            seat = state.current_player
            card = agent.act(state.view(seat), rng)
            assert card in state.legal_actions()
            state.apply(card)
