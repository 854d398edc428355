"""Mr. Greed: the numba fast path equals the slow reference and plays the rule of
docs/rules.md section 9.

Invariants covered: fast scores == tests/greed_reference.py scores (exactly) on random views at
every trick position, early and late, with the same sampled owners; hand-built last-to-play
positions whose exact scores are worked out from the rule text (duck under SQ, dump SQ or C10 on
the opponents, give C10 to a partner's DJ trick but not to the opponents', SA relief while SQ is
unseen, C-honour relief while C10 is unseen, all-hearts and final-rule valuation); an earlier
position with one clearly right card; legality and reproducibility over whole games; bad input
raises ValueError; the reference agent plays the very same game as the fast one; Greed beats
Random and Mr. If over a small duplicate set.
"""

from fractions import Fraction

import numpy as np
import pytest
from greed_reference import ReferenceGreed, reference_scores, still_to_come

from scrofazero.agents import make_agent
from scrofazero.agents.mr_greed import MrGreed, greed_scores, points_to_come
from scrofazero.agents.mr_if import MrIf
from scrofazero.agents.random_agent import RandomAgent
from scrofazero.games.gongzhu.cards import C10, DJ, SQ, card_code, card_index, scoring_mask
from scrofazero.games.gongzhu.deals import load_deals, rotate_deal
from scrofazero.games.gongzhu.rules import GongzhuState, InfoView
from scrofazero.sampling.uniform import sample_owners


def idx(codes: str) -> list[int]:
    return [card_index(c) for c in codes.split()]


def position(hand: str, trick: str, leader: int) -> InfoView:
    """View of the seat to move, holding `hand` (13 codes) in the first trick after `trick`
    was played; the rest of the deck goes to the other seats, off-suit players kept void."""
    hand_cards, trick_cards = idx(hand), idx(trick)
    assert len(hand_cards) == 13
    me = (leader + len(trick_cards)) % 4
    hands = {s: [] for s in range(4)}
    hands[me] = hand_cards
    void = {}
    for k, card in enumerate(trick_cards):
        seat = (leader + k) % 4
        hands[seat].append(card)
        if card // 13 != trick_cards[0] // 13:
            void[seat] = trick_cards[0] // 13
    used = set(hand_cards) | set(trick_cards)
    for card in (c for c in range(52) if c not in used):
        seat = next(s for s in range(4)
                    if s != me and len(hands[s]) < 13 and void.get(s) != card // 13)
        hands[seat].append(card)
    state = GongzhuState.from_hands([sum(1 << c for c in hands[s]) for s in range(4)], leader)
    for card in trick_cards:
        state.apply(card)
    return state.view(me)


def scores_by_code(view, owners=None) -> dict[str, float]:
    legal, fast = greed_scores(view, owners)
    ref_legal, ref = reference_scores(view, owners)
    assert ref_legal == legal
    assert list(fast) == [float(x) for x in ref]  # exact: both are multiples of 1/4
    return {card_code(c): float(v) for c, v in zip(legal, fast)}


def random_view(seed: int, num_played: int) -> InfoView:
    rng = np.random.default_rng(seed)
    state = GongzhuState(seed=seed, leader=seed % 4)
    for _ in range(num_played):
        legal = state.legal_actions()
        state.apply(legal[int(rng.integers(len(legal)))])
    return state.view(state.current_player)


def test_fast_matches_reference_on_random_views():
    rng = np.random.default_rng(7)
    seen = {"pos": set(), "c10_out": 0, "c10_taken": 0, "sq_out": 0, "dj_taken": 0}
    for seed in range(160):
        view = random_view(seed, int(rng.integers(0, 52)))
        owners = sample_owners(view, 3, rng)
        legal, fast = greed_scores(view, owners)
        ref_legal, ref = reference_scores(view, owners)
        assert legal == ref_legal
        assert list(fast) == [float(x) for x in ref], (seed, view)
        seen["pos"].add(len(view.trick))
        captured = view.piles[0] | view.piles[1] | view.piles[2] | view.piles[3]
        seen["c10_out"] += not view.played >> C10 & 1
        seen["c10_taken"] += bool(captured & scoring_mask([C10]))
        seen["sq_out"] += not view.played >> SQ & 1
        seen["dj_taken"] += bool(captured & scoring_mask([DJ]))
    assert seen["pos"] == {0, 1, 2, 3}
    assert min(v for k, v in seen.items() if k != "pos") >= 20, seen


def test_points_to_come_matches_reference():
    for seed in range(20):
        view = random_view(seed, 4 * seed % 52)
        assert points_to_come(view.piles) == still_to_come(view.piles)


def test_last_to_play_ducks_under_sq():
    # Seat 3 wins with SQ if we play S2 (+100 for us); SK would take SQ (-100 + relief 9).
    view = position("SK S2 H2 H3 H4 D2 D3 D4 D6 C2 C3 C4 C5", "S5 S3 SQ", leader=1)
    s = scores_by_code(view)
    assert s == {"S2": 100.0, "SK": -91.0}
    assert card_code(MrGreed().act(view, np.random.default_rng(0))) == "S2"


def test_last_to_play_dumps_sq_on_opponents():
    # Opponents win H5 H3 HA (-60 for them); SQ adds -100 for them and relief 8.
    view = position("SQ S2 S3 D2 D3 D4 D6 D7 C2 C3 C4 C5 C6", "H5 H3 HA", leader=1)
    s = scores_by_code(view)
    assert s["SQ"] == 168.0 and s["S2"] == 60.0 and s["D7"] == 63.0
    assert card_code(MrGreed().act(view, np.random.default_rng(0))) == "SQ"


def test_c10_on_opponents_hearts_beats_sq():
    # C10: opponents' change 2 x (-60) + pile 0 + still-to-come (-200 / 4) = -170, relief 6.
    view = position("SQ C10 S2 S3 D2 D3 D4 D6 D7 C2 C3 C4 C5", "H5 H3 HA", leader=1)
    s = scores_by_code(view)
    assert s["C10"] == 176.0 and s["SQ"] == 168.0
    assert card_code(MrGreed().act(view, np.random.default_rng(0))) == "C10"


def test_c10_goes_to_partner_dj_trick_not_to_opponents():
    hand = "C10 C2 S2 S3 S4 H2 H3 H4 C3 C4 C5 C6 C7"
    partner = scores_by_code(position(hand, "D5 DA DJ", leader=1))  # partner's DA wins DJ
    assert partner["C10"] == 2 * 100 - 50 + 6 and partner["C2"] == 100.0
    assert max(partner, key=partner.get) == "C10"
    opponents = scores_by_code(position(hand, "D5 D3 DJ", leader=1))  # seat 3's DJ wins
    assert opponents["C10"] == -(2 * 100 - 50) + 6 and opponents["C7"] == -100 + 3
    assert max(opponents, key=opponents.get) != "C10"


def test_relief_of_spade_and_club_honours():
    # Void in hearts after H5 H3 H4 (+10 for us whatever we play). SQ unseen: SA 11 + 50,
    # SK 9 + 30. C10 unseen: CA 11 - 0.4 x (-50 + 0), CK 9 - 0.3 x (-50). DJ unseen: DA 11 - 30.
    view = position("SA SK CA CK DA S2 S3 D2 D3 C2 C3 C4 C5", "H5 H3 H4", leader=1)
    s = scores_by_code(view)
    assert s["SA"] == 10 + 61 and s["SK"] == 10 + 39
    assert s["CA"] == 10 + 31 and s["CK"] == 10 + 24 and s["DA"] == 10 - 19
    assert card_code(MrGreed().act(view, np.random.default_rng(0))) == "SA"


def test_all_hearts_and_final_rule_valuation():
    # Trick 12: seat 0 holds H2..HQ; S6 wins HA HK (all 13 hearts: -110 -> +200) and the last
    # capture switches to the final rule (seat 3's lone C10 counts +50); S4 lets seat 1 win.
    hearts = idx("H2 H3 H4 H5 H6 H7 H8 H9 H10 HJ HQ")
    trick = idx("S5 HA HK")
    hidden = idx("D2 D3 D4")
    hand = idx("S4 S6")
    used = set(hearts + trick + hidden + hand)
    rest = [c for c in range(52) if c not in used]  # 33 more cards of finished tricks
    history = [(k % 4, c) for k, c in enumerate(rest + hearts)]
    history += [(1 + k, c) for k, c in enumerate(trick)]
    view = InfoView(
        seat=0, hand=sum(1 << c for c in hand), first_leader=0, leader=1, trick=tuple(trick),
        history=tuple(history),
        piles=(scoring_mask(hearts), scoring_mask([SQ, DJ]), 0, scoring_mask([C10])),
        voids=(0, 0, 1, 1), hand_sizes=(2, 1, 1, 1),
    )
    s = scores_by_code(view)
    assert s == {"S4": (-110 - (-90 + 50)) + 110 + 1, "S6": (200 - 50) + 110 + 2}


def test_second_to_play_throws_sq_under_sa():
    # Seat 3 leads SA: nothing beats it, so SQ goes to the opponents in every sample.
    view = position("SQ S5 H2 H3 H4 D2 D3 D4 D6 C2 C3 C4 C5", "SA", leader=3)
    rng = np.random.default_rng(3)
    owners = sample_owners(view, 6, rng)
    s = scores_by_code(view, owners)
    assert s["SQ"] > s["S5"] + 6 * 90
    for seed in range(4):
        assert card_code(MrGreed().act(view, np.random.default_rng(seed))) == "SQ"


def test_lead_bonus_favours_short_suits():
    # Same hand, trick 1 lead: every sample adds 30 x (unseen / 3 - own) per card.
    view = position("S2 H2 H3 H4 H5 D2 D3 D4 D5 D6 C2 C3 C4", "", leader=0)
    owners = sample_owners(view, 4, np.random.default_rng(0))
    s = scores_by_code(view, owners)
    assert s["S2"] > max(v for k, v in s.items() if k != "S2")


def play_game(deal, leader, agents, seed, record=False):
    state = GongzhuState(deal, leader=leader)
    rngs = [np.random.default_rng([seed, seat]) for seat in range(4)]
    while not state.is_terminal():
        seat = state.current_player
        card = agents[seat].act(state.view(seat), rngs[seat])
        assert card in state.legal_actions()
        state.apply(card)
    return state.history if record else state.returns()[0]


def test_whole_games_are_legal_and_reproducible():
    greed = make_agent("greed")
    assert isinstance(greed, MrGreed) and greed.name == "greed" and greed.num_samples == 20
    agents = [greed, MrGreed(num_samples=5), greed, MrGreed(num_samples=5)]
    for seed in range(3):
        deal = np.random.default_rng(seed).permutation(52)
        first = play_game(deal, seed, agents, seed, record=True)
        assert len(first) == 52 and first == play_game(deal, seed, agents, seed, record=True)


def test_reference_agent_plays_the_same_game():
    # Same rng draws, same scores, same tie-breaks: the two agents play identical games.
    deal = np.random.default_rng(11).permutation(52)
    fast = [MrGreed(num_samples=3), RandomAgent()] * 2
    slow = [ReferenceGreed(num_samples=3), RandomAgent()] * 2
    assert play_game(deal, 2, fast, 5, record=True) == play_game(deal, 2, slow, 5, record=True)


def test_bad_input_raises():
    view = position("SQ S5 H2 H3 H4 D2 D3 D4 D6 C2 C3 C4 C5", "SA", leader=3)
    with pytest.raises(ValueError, match="num_samples"):
        MrGreed(num_samples=0)
    with pytest.raises(ValueError, match="owners are required"):
        greed_scores(view)
    with pytest.raises(ValueError, match="shape"):
        greed_scores(view, np.zeros((2, 51), dtype=np.int8))
    owners = sample_owners(view, 2, np.random.default_rng(0))
    owners[:, idx("SQ")[0]] = 1
    with pytest.raises(ValueError, match="own cards"):
        greed_scores(view, owners)
    other = GongzhuState(seed=0).view(1)
    with pytest.raises(ValueError, match="not to move"):
        MrGreed().act(other, np.random.default_rng(0))


def duplicate_margin(opponent, num_deals: int) -> float:
    """Mean team difference of Greed (seats 0, 2) over deals played from both sides."""
    greed = MrGreed()
    agents = [greed, opponent, greed, opponent]
    values = []
    for i, deal in enumerate(load_deals(limit=num_deals)):
        plays = [play_game(rotate_deal(deal, shift), shift, agents, 1000 * i + shift)
                 for shift in (0, 1)]
        values.append(np.mean(plays))
    return float(np.mean(values))


def test_greed_beats_random_and_mr_if():
    # Published margins: 275 over Random, 80 over Mr. If (docs/rules.md section 15); loose bounds.
    assert duplicate_margin(RandomAgent(), 16) > 150
    assert duplicate_margin(MrIf(), 32) > 20


def test_reference_values_are_exact_fractions():
    view = position("CA CK SA S2 S3 D2 D3 C2 C3 C4 C5 C6 C7", "H5 H3 H4", leader=1)
    _, ref = reference_scores(view)
    assert all(isinstance(v, Fraction) and (4 * v).denominator == 1 for v in ref)
