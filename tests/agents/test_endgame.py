"""The exact endgame (scrofazero/agents/endgame.py) against a plain minimax over the rules engine.

Invariants: on random positions of the last 2-3 tricks (at every trick position, random earlier
play so the piles are varied), the solver's value of every legal card equals a brute-force
minimax over GongzhuState that scores each terminal with the engine's own returns; a hand-built
position whose value is worked out by hand; the value is the same whatever the transposition
table held before (a small table full of other positions, a fresh one); equivalent cards get the
same value as their representative; the early end (no scoring card left) equals playing out.
"""

from __future__ import annotations

import numpy as np
import pytest
from endgame_reference import reference_card_values

from scrofazero.agents.endgame import EndgameSolver
from scrofazero.games.gongzhu.batch import StateBatch
from scrofazero.games.gongzhu.cards import SCORING_BIT, card_index
from scrofazero.games.gongzhu.rules import GongzhuState


def random_position(seed: int, cards_left: int) -> GongzhuState:
    """A random game played at random until `cards_left` cards remain."""
    rng = np.random.default_rng(seed)
    state = GongzhuState(seed=seed, leader=int(rng.integers(4)))
    while 52 - state.num_played > cards_left:
        state.apply(int(rng.choice(state.legal_actions())))
    return state


def solver_values(solver: EndgameSolver, states: list[GongzhuState]) -> np.ndarray:
    batch = StateBatch.from_states(states)
    legal = states[0].legal_actions()
    return solver.card_values(batch.hands, batch.piles, batch.trick, batch.trick_len,
                              batch.leader, legal)


@pytest.mark.parametrize("cards_left", [1, 4, 5, 7, 8, 10, 11, 12])
def test_every_card_value_equals_brute_force(cards_left):
    solver = EndgameSolver(table_bits=12)  # small: collisions of slots are exercised
    for seed in range(12):
        state = random_position(seed * 7 + cards_left, cards_left)
        got = solver_values(solver, [state])[0]
        assert got.tolist() == reference_card_values(state), (seed, cards_left)


def test_values_do_not_depend_on_what_the_table_held():
    states = [random_position(1000 + s, 12) for s in range(6)]
    warm = EndgameSolver(table_bits=10)
    for s in range(30):  # fill a tiny table with other positions
        solver_values(warm, [random_position(2000 + s, 12)])
    for state in states:
        fresh = EndgameSolver(table_bits=16)
        assert solver_values(warm, [state]).tolist() == solver_values(fresh, [state]).tolist()


def test_many_worlds_in_one_call_equal_one_at_a_time():
    # worlds of one view: the mover's hand and the public state shared, the rest dealt anew
    state = random_position(77, 12)
    mover = state.current_player
    rng = np.random.default_rng(3)
    unseen = [c for s in range(4) if s != mover for c in range(52) if state.hands[s] >> c & 1]
    worlds = []
    for _ in range(5):
        cards = list(rng.permutation(unseen))
        hands = list(state.hands)
        for s in range(4):
            if s != mover:
                k = bin(state.hands[s]).count("1")
                hands[s] = sum(1 << int(c) for c in cards[:k])
                cards = cards[k:]
        world = state.clone()
        world.hands = hands
        worlds.append(world)
    together = solver_values(EndgameSolver(12), worlds)
    alone = np.stack([solver_values(EndgameSolver(12), [w])[0] for w in worlds])
    assert together.tolist() == alone.tolist()
    assert together.tolist() == [reference_card_values(w) for w in worlds]


def endgame_state(hands: dict[int, str], piles: dict[int, str], leader: int) -> GongzhuState:
    """Seat s holds hands[s] (codes), every other card has been played, piles[s] holds the
    scoring cards named (every scoring card not held must be in one), `leader` leads."""
    state = GongzhuState(seed=0)
    masks = [sum(1 << card_index(c) for c in hands[s].split()) for s in range(4)]
    held = masks[0] | masks[1] | masks[2] | masks[3]
    state.hands = masks
    state.piles = [sum(SCORING_BIT[card_index(c)] for c in piles.get(s, "").split())
                   for s in range(4)]
    state.history = [(0, c) for c in range(52) if not held >> c & 1]  # only its length is read
    state.leader = leader
    return state


ALL_HEARTS = " ".join(f"H{r}" for r in ("2", "3", "4", "5", "6", "7", "8", "9", "10", "J", "Q",
                                       "K", "A"))


def test_a_position_worked_out_by_hand():
    # Two tricks left, seat 0 to lead SQ or S2. Seat 1 holds the only other high spade, SA, and
    # a pile of all 13 hearts, DJ and C10: (-200 + 400 + 100) x 2 = +600 for the other team.
    # Leading SQ: seat 1 must take it with SA: (200 + 100 - 100) x 2 = 400, team 0 -400.
    # Leading S2: SA takes a trick of no points, seat 1 leads D3, seat 0 must discard SQ on
    # it and seat 3's D5 takes it: 600 - 100, team 0 -500.
    state = endgame_state({0: "SQ S2", 1: "SA D3", 2: "S3 D4", 3: "SK D5"},
                          {1: ALL_HEARTS + " DJ C10"}, leader=0)
    values = solver_values(EndgameSolver(12), [state])[0]
    assert values.tolist() == [-500, -400]  # S2, SQ in card order
    assert values.tolist() == reference_card_values(state)


def test_equivalent_cards_share_a_value_and_the_early_end_equals_play_out():
    # Seat 0 holds S5 S6 S8 with S7 already played: all three plain spades in a row. No
    # scoring card is left: every card's value is the piles' final difference.
    state = endgame_state({0: "S5 S6 S8", 1: "D2 D3 D4", 2: "C2 C3 C4", 3: "S9 D5 C5"},
                          {0: ALL_HEARTS, 1: "SQ", 2: "DJ C10"}, leader=0)
    values = solver_values(EndgameSolver(12), [state])[0]
    assert values.tolist() == reference_card_values(state)
    assert len(set(values.tolist())) == 1


def test_past_the_node_budget_there_is_no_answer_and_the_table_stays_true():
    state = random_position(5, 16)
    batch = StateBatch.from_states([state])
    args = (batch.hands, batch.piles, batch.trick, batch.trick_len, batch.leader,
            state.legal_actions())
    solver = EndgameSolver(table_bits=14)
    assert solver.card_values(*args, nodes=50) is None
    assert solver.nodes <= 51 + 1
    full = EndgameSolver(table_bits=14).card_values(*args)
    assert solver.card_values(*args, nodes=10**9).tolist() == full.tolist()
