"""Batched MCTS (search/mcts.py) on real Gongzhu positions.

Invariants: run_mcts equals the plain per-leaf run_mcts_sequential exactly (q, visits, action,
num_simulations, num_evaluations) over many random roots, budgets, evaluators (including values
that are not zero-sum) and both selection rules, with either state store; forced roots are not
searched; budgets are respected and every simulation step makes exactly one evaluator call with
the leaves of all active roots (UCB1's opening step: every root's children in one call);
terminal leaves get exact returns (also when reached again); hand-built endgames with one right
card pick it; rotating the seats (which swaps the teams) leaves the results unchanged; c_uct = 0
is greedy and a huge c_uct spreads visits evenly; a sharp PUCT prior steers the visits.
"""

import random

import numpy as np
import pytest

from scrofazero.games.gongzhu.batch import GongzhuRules, StateBatch
from scrofazero.games.gongzhu.cards import card_index, cards_to_mask, scoring_mask
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.search import MCTSConfig, run_mcts, run_mcts_sequential

GAME = GongzhuRules
FIELDS = ("q", "visits", "action", "num_simulations", "forced", "num_evaluations")


def random_roots(n, seed, plies=(0, 48)):
    """n non-terminal positions reached by random play, plies drawn in [lo, hi)."""
    rng = random.Random(seed)
    states = []
    for i in range(n):
        s = GongzhuState(seed=seed * 10_000 + i, leader=i % 4)
        for _ in range(rng.randrange(*plies)):
            s.apply(rng.choice(s.legal_actions()))
        states.append(s)
    return StateBatch.from_states(states)


def _mix(x):
    """A uint64 hash step (splitmix64 finaliser)."""
    x = (x ^ (x >> np.uint64(30))) * np.uint64(0xBF58476D1CE4E5B9)
    x = (x ^ (x >> np.uint64(27))) * np.uint64(0x94D049BB133111EB)
    return x ^ (x >> np.uint64(31))


def _relative(a, mover):
    """Per-seat columns [B, 4] reordered to start at the mover."""
    return np.take_along_axis(a, (mover[:, None] + np.arange(4)) % 4, axis=1)


def state_hash(s):
    """[B] uint64 hash of a state seen from its mover: unchanged by rotating the seats."""
    mover = GAME.current_player(s)
    h = np.full(len(s), 0x1234567, dtype=np.uint64)
    cols = [_relative(s.hands, mover), _relative(s.piles, mover).astype(np.uint64),
            s.trick.astype(np.int64).astype(np.uint64)]
    for col in np.concatenate(cols, axis=1).T:
        h = _mix(h ^ col)
    return h


class Counting:
    """Records the batch size of every call."""

    def __init__(self):
        self.sizes = []

    def __call__(self, s):
        assert not GAME.is_terminal(s).any()  # terminal leaves are never evaluated
        self.sizes.append(len(s))
        return self.evaluate(s)


class ReturnsEvaluator(Counting):
    """Values = the mid-game valuation of the piles; uniform logits."""

    def evaluate(self, s):
        return np.zeros((len(s), 52), np.float32), GAME.returns(s).astype(np.float32)


class HashEvaluator(Counting):
    """Team values = returns +- a pseudo-random offset per state; pseudo-random logits.
    Computed from the mover's point of view, so rotating the seats rotates the values."""

    def evaluate(self, s):
        h = (state_hash(s) >> np.uint64(11)).astype(np.float64) / 2.0**53  # [B] in [0, 1)
        mover = GAME.current_player(s)
        same = GAME.teams[None, :] == GAME.teams[mover][:, None]  # [B, 4]
        offset = (h * 200 - 100)[:, None]
        values = GAME.returns(s) + np.where(same, offset, -offset)
        logits = 4 * np.sin(h[:, None] * 997 + np.arange(52) * 0.7)
        return logits.astype(np.float32), values.astype(np.float32)


class SeatEvaluator(Counting):
    """Unrelated pseudo-random values per seat (not zero-sum): search must read the mover's."""

    def evaluate(self, s):
        h = state_hash(s)
        seats = _mix(h[:, None] ^ np.arange(1, 5, dtype=np.uint64))  # [B, 4]
        values = (seats >> np.uint64(11)).astype(np.float64) / 2.0**53 * 300 - 150
        logits = ((seats[:, :1] >> np.arange(52, dtype=np.uint64)) & np.uint64(1)) * 2.0
        return logits.astype(np.float32), values.astype(np.float32)


def assert_same(a, b):
    for k in FIELDS:
        assert np.array_equal(getattr(a, k), getattr(b, k), equal_nan=(k == "q")), k


@pytest.mark.parametrize("selection", ["ucb", "puct"])
@pytest.mark.parametrize("budget", [(0, 2), (10, 2), (3, 0), (1, 4), (30, 3)])
def test_fast_equals_sequential(selection, budget):
    seed = budget[0] * 10 + budget[1]
    late = random_roots(16, seed, plies=(44, 51))  # terminal states within reach
    roots = StateBatch.concat([random_roots(32, seed, plies=(0, 44)), late])
    config = MCTSConfig(budget_base=budget[0], budget_per_legal=budget[1], selection=selection)
    for evaluator in (ReturnsEvaluator, HashEvaluator, SeatEvaluator):
        fast = run_mcts(GAME, evaluator(), roots, config)
        slow = run_mcts_sequential(GAME, evaluator(), roots, config)
        assert_same(fast, slow)
    if budget[0] >= 10:  # late roots reach terminal leaves, which are not evaluated
        late = late.take(np.flatnonzero(GAME.legal_mask(late).sum(axis=1) > 1))
        result = run_mcts(GAME, HashEvaluator(), late, config)
        root_evaluations = len(late) if selection == "puct" else 0
        assert result.num_evaluations < result.num_simulations.sum() + root_evaluations


class WrappedGame:
    """Gongzhu with states hidden in a plain object: forces the search's concat-based store."""

    num_actions, num_players, teams = 52, 4, GAME.teams

    class Box:
        def __init__(self, batch):
            self.batch = batch

        def __len__(self):
            return len(self.batch)

    def __getattr__(self, name):  # current_player, is_terminal, legal_mask, returns
        return lambda s: getattr(GAME, name)(s.batch)

    def step(self, s, actions):
        return self.Box(GAME.step(s.batch, actions))

    def take(self, s, idx):
        return self.Box(s.batch.take(idx))

    def concat(self, batches):
        return self.Box(StateBatch.concat([b.batch for b in batches]))


@pytest.mark.parametrize("selection", ["ucb", "puct"])
def test_generic_state_store_gives_the_same_search(selection):
    roots = random_roots(24, seed=5, plies=(20, 50))
    config = MCTSConfig(budget_base=4, selection=selection)
    game = WrappedGame()
    evaluator = HashEvaluator()
    boxed = run_mcts(game, lambda s: evaluator(s.batch), WrappedGame.Box(roots), config)
    assert_same(boxed, run_mcts(GAME, HashEvaluator(), roots, config))


def test_forced_roots_are_not_searched():
    roots = random_roots(200, seed=2, plies=(0, 52))
    roots = roots.take(np.flatnonzero(~GAME.is_terminal(roots)))
    legal = GAME.legal_mask(roots)
    forced = legal.sum(axis=1) == 1
    assert 5 < forced.sum() < len(roots) - 5
    evaluator = HashEvaluator()
    result = run_mcts(GAME, evaluator, roots, MCTSConfig())
    assert np.array_equal(result.forced, forced)
    assert (result.num_simulations[forced] == 0).all() and (result.visits[forced] == 0).all()
    assert np.isnan(result.q[forced]).all()
    assert np.array_equal(result.action[forced], legal[forced].argmax(axis=1))
    # The other rows are searched exactly as if alone.
    alone = run_mcts(GAME, HashEvaluator(), roots.take(np.flatnonzero(~forced)), MCTSConfig())
    assert np.array_equal(result.visits[~forced], alone.visits)
    assert np.array_equal(result.q[~forced], alone.q, equal_nan=True)
    only_forced = HashEvaluator()
    run_mcts(GAME, only_forced, roots.take(np.flatnonzero(forced)), MCTSConfig(selection="puct"))
    assert only_forced.sizes == []


@pytest.mark.parametrize("selection", ["ucb", "puct"])
def test_budget_and_one_evaluator_call_per_step(selection):
    roots = random_roots(64, seed=3, plies=(0, 24))  # too early for terminal leaves
    config = MCTSConfig(budget_base=3, budget_per_legal=2, selection=selection)
    legal = GAME.legal_mask(roots)
    num_legal = legal.sum(axis=1)
    budget = np.where(num_legal == 1, 0, 3 + 2 * num_legal)
    evaluator = ReturnsEvaluator()
    result = run_mcts(GAME, evaluator, roots, config)
    assert np.array_equal(result.num_simulations, budget)
    assert np.array_equal(result.visits.sum(axis=1), budget)
    assert not (result.visits[~legal]).any() and np.isnan(result.q[~legal]).all()
    # One call per step, holding the new leaf of every root with budget left. PUCT first
    # evaluates the roots; UCB1 first expands every legal child of every searched root in one
    # call (its opening simulations), then steps through the rest of the budget.
    if selection == "puct":
        first, rest = [int((budget > 0).sum())], budget
    else:
        opening = np.minimum(budget, num_legal)
        first, rest = [int(opening.sum())], budget - opening
    assert evaluator.sizes == first + [int((rest > t).sum()) for t in range(rest.max())]
    assert result.num_evaluations == sum(evaluator.sizes)
    if selection == "ucb":  # UCB1 tries every legal child before any second visit
        assert (result.visits[legal & (budget[:, None] > 0)] >= 1).all()


def test_scaled_budgets_equal_the_sequential_search_at_those_budgets():
    # Playout-cap randomisation's cheap searches (budget_scale < 1: one simulation per legal
    # card, all of them UCB1's opening step) mixed with full and larger ones in one call.
    roots = random_roots(24, seed=8, plies=(0, 48))
    roots = roots.take(np.flatnonzero(GAME.legal_mask(roots).sum(axis=1) > 1))
    scale = np.resize([0.0, 0.25, 1.0, 1.5], len(roots))
    config = MCTSConfig(budget_base=2, budget_per_legal=2)
    fast = run_mcts(GAME, HashEvaluator(), roots, config, budget_scale=scale)
    num_legal = GAME.legal_mask(roots).sum(axis=1)
    expected = np.maximum(np.ceil((2 + 2 * num_legal) * scale).astype(np.int64), num_legal)
    assert np.array_equal(fast.num_simulations, expected)
    assert (expected == num_legal).sum() >= 6  # some searches are the opening step alone
    for b in range(len(roots)):
        alone = run_mcts_sequential(GAME, HashEvaluator(), roots.take(np.array([b])),
                                    MCTSConfig(budget_base=int(expected[b]), budget_per_legal=0))
        assert np.array_equal(fast.visits[b], alone.visits[0])
        assert np.array_equal(fast.q[b], alone.q[0], equal_nan=True)
        assert fast.action[b] == alone.action[0]


def test_action_is_the_best_q_with_ties_to_the_lowest_card():
    roots = random_roots(64, seed=11, plies=(0, 30))
    result = run_mcts(GAME, ReturnsEvaluator(), roots, MCTSConfig())  # many equal Q values
    ties = 0
    for b in np.flatnonzero(~result.forced):
        best = np.flatnonzero((result.visits[b] > 0) & (result.q[b] == np.nanmax(result.q[b])))
        assert result.action[b] == best[0]
        ties += len(best) > 1
    assert ties >= 5


def test_zero_budget_and_invalid_input():
    roots = random_roots(8, seed=4, plies=(0, 10))
    evaluator = ReturnsEvaluator()
    result = run_mcts(GAME, evaluator, roots, MCTSConfig(budget_per_legal=0))
    assert evaluator.sizes == [] and (result.num_simulations == 0).all()
    assert np.array_equal(result.action, GAME.legal_mask(roots).argmax(axis=1))
    with pytest.raises(ValueError, match="selection"):
        run_mcts(GAME, evaluator, roots, MCTSConfig(selection="alphazero"))
    over = random_roots(1, seed=4, plies=(52, 53))
    with pytest.raises(ValueError, match="terminal"):
        run_mcts(GAME, evaluator, over, MCTSConfig())


class Poison(Counting):
    """Every non-terminal state is worth 1000 to every seat: any such value reaching a Q
    that should be exact shows."""

    def evaluate(self, s):
        return np.zeros((len(s), 52), np.float32), np.full((len(s), 4), 1000, np.float32)


@pytest.mark.parametrize("search", [run_mcts, run_mcts_sequential])
def test_terminal_values_are_exact_and_backed_up_again(search):
    # Ply 47: the mover plays the last card of trick 12; all later moves are forced, so each
    # root child heads a chain of 4 evaluated nodes and then the terminal state.
    roots = random_roots(30, seed=6, plies=(47, 48))
    roots = roots.take(np.flatnonzero(GAME.legal_mask(roots).sum(axis=1) == 2))
    assert len(roots) >= 3
    result = search(GAME, Poison(), roots, MCTSConfig(c_uct=1e9, budget_base=20,
                                                      budget_per_legal=0))
    mover = GAME.current_player(roots)
    for b in range(len(roots)):
        for a in np.flatnonzero(GAME.legal_mask(roots.take([b]))[0]):
            s = GAME.step(roots.take([b]), [a])
            while not GAME.is_terminal(s)[0]:
                s = GAME.step(s, [GAME.legal_mask(s)[0].argmax()])
            exact = GAME.returns(s)[0, mover[b]]
            assert result.visits[b, a] == 10  # huge c_uct: even visits
            assert result.q[b, a] == np.float32((4 * 1000 + 6 * exact) / 10)


def position(hands, trick, leader, piles):
    """One-row StateBatch from card codes: hands / piles {seat: codes}, trick in play order."""
    code = lambda cs: [card_index(c) for c in cs.split()]  # noqa: E731
    held = [cards_to_mask(code(hands.get(seat, ""))) for seat in range(4)]
    in_trick = code(trick)
    captured = [scoring_mask(code(piles.get(seat, ""))) for seat in range(4)]
    live = scoring_mask(sum((code(h) for h in hands.values()), []) + in_trick)
    union = captured[0] | captured[1] | captured[2] | captured[3]
    assert sum(captured) == union == (1 << 16) - 1 - live  # disjoint, all scoring cards placed
    num_played = 52 - sum(bin(h).count("1") for h in held)
    return StateBatch(
        hands=np.array([held], dtype=np.uint64), piles=np.array([captured], dtype=np.int32),
        trick=np.array([in_trick + [-1] * (4 - len(in_trick))], dtype=np.int8),
        trick_len=np.array([len(in_trick)], dtype=np.int8),
        leader=np.array([leader], dtype=np.int8), num_played=np.array([num_played], np.int8))


def rotate(s, k):
    """The same deal with every seat moved k places on (k odd swaps the teams)."""
    return StateBatch(np.roll(s.hands, k, axis=1), np.roll(s.piles, k, axis=1), s.trick,
                      s.trick_len, ((s.leader.astype(np.int64) + k) % 4).astype(np.int8),
                      s.num_played)


def final_return(s, action, seat):
    """Exact final return at `seat` after `action` when every later move is forced."""
    s = GAME.step(s, [action])
    while not GAME.is_terminal(s)[0]:
        assert GAME.legal_mask(s)[0].sum() == 1
        s = GAME.step(s, [GAME.legal_mask(s)[0].argmax()])
    return GAME.returns(s)[0, seat]


HEARTS_13 = "H2 H3 H4 H5 H6 H7 H8 H9 H10 HJ HQ HK HA"
ENDGAMES = {
    # Opponent seat 3 wins this heart trick with HK: dump SQ on it, or win it back later.
    "dump SQ": (position({0: "SQ S2", 1: "D3", 2: "D4", 3: "S3"}, "H5 H2 HK", 1,
                         {0: "DJ", 1: "H3 H4 H6 H7", 2: "H8 H9", 3: "H10 HJ HQ HA C10"}),
                "SQ", "S2"),
    # Duck under S9 with S5: opponent seat 1 then leads SK and takes SQ.
    "duck SQ": (position({0: "SQ S5", 1: "SK", 2: "D3", 3: "C4"}, "S9 D2 S3", 1,
                         {0: "DJ", 1: "H2 H3 H4 H5 H6 H7", 2: "H8 H9 H10 HJ HQ",
                          3: "HK HA C10"}),
                "S5", "SQ"),
}


@pytest.mark.parametrize("name", sorted(ENDGAMES))
@pytest.mark.parametrize("selection", ["ucb", "puct"])
def test_endgame_with_one_right_card(name, selection):
    root, right, wrong = ENDGAMES[name]
    right, wrong = card_index(right), card_index(wrong)
    assert final_return(root, right, 0) > final_return(root, wrong, 0) + 50
    config = MCTSConfig(budget_base=10, selection=selection)
    for k in range(4):  # every seat to move, both teams
        for search in (run_mcts, run_mcts_sequential):
            result = search(GAME, ReturnsEvaluator(), rotate(root, k), config)
            assert result.action[0] == right, (k, search.__name__)


def test_deep_trap_needs_budget():
    # Overtaking DJ with DQ scores +100 now, but then seat 0 must lead D2 into the last trick,
    # partner seat 2 wins it with D4 and SQ lands on its C10 pile (-200). Playing D2 leaves DJ
    # and SQ together to seat 3. The mid-game valuation prefers DQ; the final score D2.
    root = position({0: "DQ D2", 1: "SQ", 2: "D4", 3: "C2"}, "D5 D3 DJ", 1,
                     {1: "H2 H3 H4 H5 H6 H7", 2: "C10", 3: "H8 H9 H10 HJ HQ HK HA"})
    dq, d2 = card_index("DQ"), card_index("D2")
    exact = final_return(root, d2, 0)
    assert exact > final_return(root, dq, 0) + 100
    shallow = run_mcts(GAME, ReturnsEvaluator(), root, MCTSConfig())
    assert shallow.action[0] == dq  # 2 visits each: only evaluations, the trap works
    for k in range(4):
        deep = run_mcts(GAME, ReturnsEvaluator(), rotate(root, k), MCTSConfig(budget_base=200))
        assert deep.action[0] == d2
        assert exact - 10 < deep.q[0, d2] < exact  # nearly all visits reach the terminal
        assert deep.visits[0, d2] > deep.visits[0, dq]


@pytest.mark.parametrize("selection", ["ucb", "puct"])
def test_rotating_seats_rotates_nothing_but_the_seats(selection):
    roots = random_roots(48, seed=8, plies=(0, 50))
    config = MCTSConfig(budget_base=5, selection=selection)
    base = run_mcts(GAME, HashEvaluator(), roots, config)
    for k in (1, 2, 3):  # k = 1, 3 swap the teams
        assert_same(run_mcts(GAME, HashEvaluator(), rotate(roots, k), config), base)


def test_exploration_constant_extremes():
    roots = random_roots(32, seed=9, plies=(0, 40))
    legal = GAME.legal_mask(roots)
    searched = legal.sum(axis=1) > 1
    # Huge c_uct: the least visited child always wins, so 2L simulations visit each twice.
    wide = run_mcts(GAME, HashEvaluator(), roots, MCTSConfig(c_uct=1e9))
    assert (wide.visits[searched] == 2 * legal[searched]).all()
    # c_uct = 0: after one visit each, the next simulation goes to the best Q (lowest index).
    first = run_mcts(GAME, HashEvaluator(), roots, MCTSConfig(c_uct=0.0, budget_per_legal=1))
    greedy = run_mcts(GAME, HashEvaluator(), roots,
                      MCTSConfig(c_uct=0.0, budget_base=1, budget_per_legal=1))
    rows = np.flatnonzero(searched)
    assert (greedy.visits[rows, first.action[rows]] == 2).all()
    assert np.array_equal(greedy.visits.sum(axis=1), first.visits.sum(axis=1) + searched)


class SharpPrior(Counting):
    """Flat values; all policy mass on the highest legal card."""

    def evaluate(self, s):
        legal = GAME.legal_mask(s)
        logits = np.where(np.arange(52) == 51 - legal[:, ::-1].argmax(axis=1)[:, None], 30, 0)
        return logits.astype(np.float32), np.zeros((len(s), 4), np.float32)


def test_puct_prior_steers_visits():
    roots = random_roots(32, seed=10, plies=(0, 30))
    legal = GAME.legal_mask(roots)
    searched = legal.sum(axis=1) > 1
    result = run_mcts(GAME, SharpPrior(), roots, MCTSConfig(selection="puct", budget_base=10))
    top = 51 - legal[:, ::-1].argmax(axis=1)
    rows = np.flatnonzero(searched)
    assert np.array_equal(result.visits[rows, top[rows]], result.num_simulations[rows])
    assert np.array_equal(result.action[rows], top[rows])


def test_ucb_explores_with_2_ln_n():
    """Q + c sqrt(2 ln N / n) (docs/rules.md section 12): with N = 10, c = 30, child A (n = 9, Q =
    10) and
    child B (n = 1, Q = -30) score 31.5 and 34.4, so B is chosen; sqrt(ln N / n) would choose A."""
    from types import SimpleNamespace

    from scrofazero.search.mcts import log_table
    from scrofazero.search.sequential import _select_ucb

    legal = np.zeros(52, dtype=bool)
    legal[[3, 7]] = True
    children = {3: SimpleNamespace(value_sum=np.array([90.0, 0, 0, 0]), visits=9),
                7: SimpleNamespace(value_sum=np.array([-30.0, 0, 0, 0]), visits=1)}
    node = SimpleNamespace(legal=legal, children=children, mover=0, visits=10)
    log = log_table(10)
    assert log[10] == pytest.approx(2 * np.log(10))
    assert _select_ucb(node, 30.0, log) == 7
    assert _select_ucb(node, 30.0, log / 2) == 3  # the plain ln N would pick A


def test_search_forced_searches_single_card_roots():
    roots = random_roots(200, seed=2, plies=(0, 52))
    roots = roots.take(np.flatnonzero(~GAME.is_terminal(roots)))
    forced = GAME.legal_mask(roots).sum(axis=1) == 1
    roots = roots.take(np.flatnonzero(forced))
    config = MCTSConfig(budget_base=0, budget_per_legal=2, search_forced=True)
    results = [search(GAME, HashEvaluator(), roots, config)
               for search in (run_mcts, run_mcts_sequential)]
    for result in results:
        assert not result.forced.any() and (result.num_simulations == 2).all()
        assert (result.visits.sum(axis=1) == 2).all() and np.isfinite(result.q).sum() == len(roots)
    np.testing.assert_array_equal(results[0].q, results[1].q)
