"""benchmarks/engine.py's batched engine (LockstepRandomGames) against the reference
single-game engine (GongzhuState).

Invariants: over 2000 seeded random games (random leaders) and the shipped standard deals the
batch agrees with the reference move by move: current player, legal mask, hands, voids, piles
and returns (mid-game rule included) after every card; random_actions is always legal, uniform
over the legal cards (chi-square at a lead, a follow and a discard) and reproducible from its
seed; bad actions or deals raise a ValueError naming the first bad game and the card and leave
every game unchanged; from_states / state round trip, also for games at different plies and
finished games; clone independence; random deals are permutations, uniform by position.
"""

import sys
from pathlib import Path

import numpy as np
import pytest
from scipy import stats

from scrofazero.games.gongzhu.cards import card_index
from scrofazero.games.gongzhu.deals import DealError, load_deals
from scrofazero.games.gongzhu.rules import GongzhuState

sys.path.insert(0, str(Path(__file__).resolve().parents[1] / "benchmarks"))
from lockstep_random import NO_ACTION, LockstepRandomGames, random_deals  # noqa: E402

BIT_VALUES = np.uint64(1) << np.arange(52, dtype=np.uint64)  # [52]


def mask_bits(mask: np.ndarray) -> np.ndarray:
    """[N, 52] bool -> [N] uint64 52-bit masks, comparable with GongzhuState.legal_bits()."""
    return (mask.astype(np.uint64) * BIT_VALUES).sum(axis=1, dtype=np.uint64)


def as_u64(ints) -> np.ndarray:
    return np.array(ints, dtype=np.uint64)


def assert_same(batch: LockstepRandomGames, refs: list) -> None:
    """Every public query of the batch equals the reference games."""
    np.testing.assert_array_equal(batch.current_player, [r.current_player for r in refs])
    legal = as_u64([r.legal_bits() for r in refs])
    np.testing.assert_array_equal(mask_bits(batch.legal_mask()), legal)
    np.testing.assert_array_equal(batch.hands, as_u64([r.hands for r in refs]))
    np.testing.assert_array_equal(batch.voids, [r.voids for r in refs])
    np.testing.assert_array_equal(batch.piles, [r.piles for r in refs])
    np.testing.assert_array_equal(batch.returns(), [r.returns() for r in refs])
    np.testing.assert_array_equal(batch.is_terminal(), [r.is_terminal() for r in refs])
    np.testing.assert_array_equal(batch.num_played, [len(r.history) for r in refs])


def play_both(batch: LockstepRandomGames, refs: list, rng: np.random.Generator) -> None:
    """Random play to the end on both engines, comparing after every card."""
    assert_same(batch, refs)
    while not batch.all_terminal():
        actions = batch.random_actions(rng)
        for r, card in zip(refs, actions):
            if r.is_terminal():
                assert card == NO_ACTION
            else:
                assert card in r.legal_actions()
                r.apply(int(card))
        batch.apply(actions)
        assert_same(batch, refs)
    assert all(r.is_terminal() for r in refs)


def snapshot(batch: LockstepRandomGames) -> dict:
    return {
        "hands": batch.hands, "piles": batch.piles, "voids": batch.voids,
        "history": batch.history, "player": batch.current_player, "played": batch.num_played,
        "legal": batch.legal_mask(), "leader": batch.leader, "returns": batch.returns(),
    }


def assert_unchanged(batch: LockstepRandomGames, before: dict) -> None:
    after = snapshot(batch)
    for key, value in before.items():
        np.testing.assert_array_equal(after[key], value, err_msg=key)


def assert_states_equal(a: GongzhuState, b: GongzhuState) -> None:
    assert a.hands == b.hands
    assert (a.first_leader, a.leader, a.trick) == (b.first_leader, b.leader, b.trick)
    assert (a.piles, a.voids, a.history) == (b.piles, b.voids, b.history)
    assert a.legal_actions() == b.legal_actions()


# --- conformance ---------------------------------------------------------------------------
def test_random_games_match_reference_move_by_move():
    rng = np.random.default_rng(2024)
    deals = np.stack([rng.permutation(52) for _ in range(2000)])
    leaders = rng.integers(0, 4, size=2000)
    batch = LockstepRandomGames(deals, leaders)
    refs = [GongzhuState(d, int(lead)) for d, lead in zip(deals, leaders)]
    play_both(batch, refs, np.random.default_rng(7))
    final = batch.returns()
    assert (final.sum(axis=1) == 0).all()  # zero-sum between the teams
    assert (final[:, 0] == final[:, 2]).all()


def test_standard_deals_match_reference():
    deals = load_deals(limit=256)
    batch = LockstepRandomGames(deals, 1)
    refs = [GongzhuState(d, 1) for d in deals]
    play_both(batch, refs, np.random.default_rng(11))


def test_random_constructor_games_are_valid_and_match_their_states():
    batch = LockstepRandomGames.random(300, np.random.default_rng(3), leaders=2)
    refs = [batch.state(i) for i in range(300)]
    assert all(r.first_leader == 2 and not r.history for r in refs)
    play_both(batch, refs, np.random.default_rng(4))


# --- random_actions ------------------------------------------------------------------------
def find_position(seed_base: int, want) -> GongzhuState:
    """First position (from seeded random play) where want(state) holds."""
    for seed in range(seed_base, seed_base + 1000):
        state = GongzhuState(seed=seed)
        rng = np.random.default_rng(seed)
        while not state.is_terminal():
            if want(state):
                return state
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
    raise AssertionError("no such position")


def is_discard(state):  # cannot follow, holds 3+ suits
    hand = state.hands[state.current_player]
    suits = sum(1 for s in range(4) if hand >> (13 * s) & 0x1FFF)
    return bool(state.trick) and state.legal_bits() == hand and suits >= 3 and hand.bit_count() >= 6


def is_follow(state):
    following = state.legal_bits() != state.hands[state.current_player]
    return bool(state.trick) and following and len(state.legal_actions()) >= 5


def is_lead(state):
    return not state.trick and len(state.legal_actions()) >= 8


@pytest.mark.parametrize("want", [is_lead, is_follow, is_discard])
def test_random_actions_uniform_over_legal_cards(want):
    state = find_position(100, want)
    legal = state.legal_actions()
    batch = LockstepRandomGames.from_states([state] * 30000)
    actions = batch.random_actions(np.random.default_rng(5))
    assert set(actions.tolist()) <= set(legal)
    counts = np.array([(actions == c).sum() for c in legal])
    assert counts.sum() == 30000
    assert stats.chisquare(counts).pvalue > 1e-3
    assert_same(batch, [state] * 30000)  # choosing does not move


def test_random_actions_reproducible_from_seed():
    batch = LockstepRandomGames.random(500, np.random.default_rng(0))
    first = batch.clone()
    a = [first.random_actions(np.random.default_rng(9)) for _ in range(2)]
    np.testing.assert_array_equal(a[0], a[1])
    b = batch.random_actions(np.random.default_rng(10))
    assert (a[0] != b).any()


# --- bad input -----------------------------------------------------------------------------
def position_after(batch: LockstepRandomGames, plies: int, seed: int = 1) -> LockstepRandomGames:
    rng = np.random.default_rng(seed)
    for _ in range(plies):
        batch.apply(batch.random_actions(rng))
    return batch


def test_revoke_in_one_game_raises_and_changes_nothing():
    batch = position_after(LockstepRandomGames.random(40, np.random.default_rng(1)), 1)
    actions = batch.random_actions(np.random.default_rng(2))
    # Find a game whose player to move can follow and make it play another suit instead.
    for i in range(40):
        state = batch.state(i)
        hand, legal = state.hands[state.current_player], state.legal_bits()
        offsuit = [c for c in range(52) if hand >> c & 1 and not legal >> c & 1]
        if offsuit and i > 0:
            break
    actions[i] = offsuit[0]
    before = snapshot(batch)
    code = "SHDC"[offsuit[0] // 13]
    message = rf"game {i}: seat \d must follow [SHDC]: {code}\S+ is illegal"
    with pytest.raises(ValueError, match=message):
        batch.apply(actions)
    assert_unchanged(batch, before)


def test_card_not_in_hand_and_first_bad_game_is_named():
    batch = LockstepRandomGames.random(20, np.random.default_rng(4))
    state = batch.state(6)
    not_held = next(c for c in range(52) if not state.hands[state.current_player] >> c & 1)
    actions = batch.random_actions(np.random.default_rng(5))
    actions[6] = not_held
    actions[13] = 52  # a later bad game is not the one reported
    before = snapshot(batch)
    code = ["S", "H", "D", "C"][not_held // 13]
    with pytest.raises(ValueError, match=rf"game 6: {code}\S+ is not in seat 0's hand"):
        batch.apply(actions)
    assert_unchanged(batch, before)


@pytest.mark.parametrize("card", [52, -1, 200])
def test_out_of_range_card(card):
    batch = LockstepRandomGames.random(10, np.random.default_rng(6))
    actions = batch.random_actions(np.random.default_rng(0))
    actions[3] = card
    before = snapshot(batch)
    with pytest.raises(ValueError, match=rf"game 3: card index {card} is out of range"):
        batch.apply(actions)
    assert_unchanged(batch, before)


@pytest.mark.parametrize("actions, message", [
    (np.zeros(11, np.int64), r"shape \(10,\)"),
    (np.zeros((10, 1), np.int64), r"shape \(10,\)"),
    (np.zeros(10, np.float64), "integer"),
])
def test_badly_shaped_actions(actions, message):
    batch = LockstepRandomGames.random(10, np.random.default_rng(6))
    before = snapshot(batch)
    with pytest.raises(ValueError, match=message):
        batch.apply(actions)
    assert_unchanged(batch, before)


def test_finished_games_refuse_cards():
    batch = position_after(LockstepRandomGames.random(5, np.random.default_rng(8)), 52)
    assert batch.all_terminal() and not batch.legal_mask().any()
    assert (batch.random_actions(np.random.default_rng(0)) == NO_ACTION).all()
    with pytest.raises(ValueError, match="over"):
        batch.apply(np.zeros(5, np.int64))


def test_bad_deals_and_leaders():
    deals = random_deals(6, np.random.default_rng(0)).astype(np.int64)
    repeated = deals.copy()
    repeated[3, 7] = repeated[3, 8]
    with pytest.raises(DealError, match="game 3: .*missing .*repeated"):
        LockstepRandomGames(repeated)
    out_of_range = deals.copy()
    out_of_range[4, 0] = 52
    with pytest.raises(DealError, match="game 4: card indices must lie in 0..51"):
        LockstepRandomGames(out_of_range)
    with pytest.raises(DealError, match=r"shape \[N, 52\]"):
        LockstepRandomGames(deals[:, :51])
    with pytest.raises(DealError, match="integer"):
        LockstepRandomGames(deals.astype(float))
    with pytest.raises(ValueError, match="game 2: leader must be a seat 0..3, got 4"):
        LockstepRandomGames(deals, [0, 1, 4, 0, 0, 0])
    with pytest.raises(ValueError, match=r"leaders must be one int or \[6\] ints"):
        LockstepRandomGames(deals, [0, 1])


# --- from_states, state, clone -------------------------------------------------------------
def reference_positions(count: int, seed: int) -> list:
    """Reference games stopped at assorted plies (0..52), random leaders."""
    rng = np.random.default_rng(seed)
    states = []
    for k in range(count):
        state = GongzhuState(seed=seed * 1000 + k, leader=int(rng.integers(4)))
        for _ in range(int(rng.integers(0, 53))):
            legal = state.legal_actions()
            state.apply(legal[int(rng.integers(len(legal)))])
        states.append(state)
    return states


def test_from_states_round_trip_at_mixed_plies():
    states = reference_positions(200, seed=3)
    batch = LockstepRandomGames.from_states(states)
    assert not batch.in_step
    for i, state in enumerate(states):
        assert_states_equal(batch.state(i), state)
    assert_same(batch, states)


def test_mixed_plies_play_to_the_end_like_the_reference():
    states = reference_positions(300, seed=4)
    batch = LockstepRandomGames.from_states(states)
    refs = [s.clone() for s in states]
    play_both(batch, refs, np.random.default_rng(12))
    for i, ref in enumerate(refs):
        assert_states_equal(batch.state(i), ref)


def test_mixed_batch_rejects_cards_for_finished_games():
    states = reference_positions(30, seed=5)
    done = next(i for i, s in enumerate(states) if s.is_terminal())
    batch = LockstepRandomGames.from_states(states)
    actions = batch.random_actions(np.random.default_rng(0))
    assert actions[done] == NO_ACTION
    actions[done] = card_index("S2")
    before = snapshot(batch)
    with pytest.raises(ValueError, match=rf"game {done} is over"):
        batch.apply(actions)
    assert_unchanged(batch, before)


def test_mixed_batch_names_the_first_bad_game():
    states = reference_positions(30, seed=6)
    live = [i for i, s in enumerate(states) if not s.is_terminal()]
    first, last = live[0], live[-1]
    state = states[first]
    not_held = next(c for c in range(52) if not state.hands[state.current_player] >> c & 1)
    batch = LockstepRandomGames.from_states(states)
    actions = batch.random_actions(np.random.default_rng(1))
    actions[first], actions[last] = not_held, 99
    before = snapshot(batch)
    with pytest.raises(ValueError, match=rf"game {first}: \S+ is not in seat \d's hand"):
        batch.apply(actions)
    assert_unchanged(batch, before)


def test_in_step_states_keep_the_fast_path():
    batch = position_after(LockstepRandomGames.random(50, np.random.default_rng(2)), 9)
    states = [batch.state(i) for i in range(50)]
    again = LockstepRandomGames.from_states(states)
    assert again.in_step
    assert_same(again, states)
    np.testing.assert_array_equal(again.history, batch.history)


def test_clone_is_independent():
    batch = position_after(LockstepRandomGames.random(30, np.random.default_rng(1)), 6)
    before = snapshot(batch)
    copy = position_after(batch.clone(), 7, seed=3)
    assert_unchanged(batch, before)
    assert (copy.num_played == 13).all()


def test_from_states_rejects_non_states():
    with pytest.raises(ValueError, match="GongzhuState"):
        LockstepRandomGames.from_states([])
    with pytest.raises(ValueError, match="GongzhuState"):
        LockstepRandomGames.from_states([np.zeros(52)])


# --- random deals --------------------------------------------------------------------------
def test_random_deals_are_uniform_permutations():
    deals = random_deals(52 * 400, np.random.default_rng(21))
    assert (np.sort(deals, axis=1) == np.arange(52)).all()
    for card in (0, 25, 51):
        positions = np.argmax(deals == card, axis=1)
        assert stats.chisquare(np.bincount(positions, minlength=52)).pvalue > 1e-3
    suits = (deals[:, 0] // 13) * 4 + deals[:, 1] // 13  # suits of the first two cards jointly
    counts = np.bincount(suits, minlength=16)
    weight = np.array([12 if a == b else 13 for a in range(4) for b in range(4)], float)
    assert stats.chisquare(counts, weight / weight.sum() * counts.sum()).pvalue > 1e-3
