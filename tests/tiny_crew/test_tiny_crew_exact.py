"""Compiled Tiny Crew tools (scrofazero/tiny_crew/fast/, exact.py) against the rules.

Invariants: the compiled state agrees with TinyCrewState move by move (mover, legal cards,
terminal, outcome) over random games in every leader rule and task assignment, and its
information-state key is exactly (mover's initial hand, first leader, plays); the open-hand
value, the exact value of a stochastic tabular policy (and of the uniform default) and the
determinized search player's choice equal slow recursions over TinyCrewState; the exact best
response equals a brute-force maximisation for one deal, never loses value, and is not beaten
by perturbing it; coordinate ascent never lowers the win rate.
"""

import random

import numpy as np
import pytest

from scrofazero.games.tiny_crew.rules import Params, TinyCrewState
from scrofazero.tiny_crew import fast
from scrofazero.tiny_crew.exact import Setting, TabularPolicy, deals_table

SETTINGS = [Params(), Params(leader="captain"), Params(t1_seat=2, t2_seat=2),
            Params(leader="captain", t1_seat=1, t2_seat=0)]


def ref_key(s: TinyCrewState) -> int:
    p = s.current_player
    key = s.initial_hands[p] | (s.first_leader << 12) | (len(s.history) << 14)
    for j, card in enumerate(s.history):
        key |= card << (18 + 4 * j)
    return key


def row_of(owners, params):
    r = np.zeros(fast.ROW, dtype=np.int64)
    first = int(owners[11]) if params.leader == "captain" else 0
    fast.start_row(np.asarray(owners, dtype=np.int64), first, params.t1_seat, params.t2_seat, r)
    return r


def play_to(owners, params, plies, rng):
    s = TinyCrewState(owners, params)
    r = row_of(owners, params)
    out = np.zeros_like(r)
    for _ in range(plies):
        if s.is_terminal():
            break
        c = rng.choice(s.legal_actions())
        s.apply(c)
        fast.step(r, c, out)
        r[:] = out
    return s, r


@pytest.mark.parametrize("params", SETTINGS)
def test_compiled_state_matches_rules(params):
    rng = random.Random(1)
    deals = deals_table()
    for _ in range(150):
        owners = deals[rng.randrange(len(deals))]
        s, r = play_to(owners, params, 0, rng)
        while True:
            assert fast.is_terminal(r) == s.is_terminal()
            if s.is_terminal():
                assert fast.won(r) == s.returns()[0]
                break
            assert fast.mover(r) == s.current_player
            assert fast.legal_mask(r) == sum(1 << c for c in s.legal_actions())
            assert fast.info_key(r) == ref_key(s)
            c = rng.choice(s.legal_actions())
            s.apply(c)
            out = np.zeros_like(r)
            fast.step(r, c, out)
            r = out


def open_win(s: TinyCrewState) -> float:
    if s.is_terminal():
        return s.returns()[0]
    for c in s.legal_actions():
        child = s.clone()
        child.apply(c)
        if open_win(child) == 1.0:
            return 1.0
    return 0.0


def policy_value(s: TinyCrewState, probs_of) -> float:
    if s.is_terminal():
        return s.returns()[0]
    legal = s.legal_actions()
    p = probs_of(ref_key(s), legal)
    total = 0.0
    for c in legal:
        if p[c] > 0:
            child = s.clone()
            child.apply(c)
            total += p[c] * policy_value(child, probs_of)
    return total


@pytest.mark.parametrize("params", SETTINGS[:2])
def test_open_hand_values_match_recursion(params):
    picks = np.random.default_rng(0).choice(34650, size=25, replace=False)
    setting = Setting(params, deals=picks)
    got = fast.open_hand_values(*setting._args())
    for i, owners in enumerate(setting.deals):
        assert got[i] == open_win(TinyCrewState(owners, params))


def test_policy_values_match_recursion():
    params = Params(leader="captain")
    picks = np.random.default_rng(1).choice(34650, size=6, replace=False)
    setting = Setting(params, deals=picks)

    def stochastic(key, legal):
        w = np.random.default_rng(key % (2**32)).random(12) * np.isin(np.arange(12), legal)
        return w / w.sum()

    keys, rows = [], []

    def collect(s):
        if s.is_terminal():
            return
        keys.append(ref_key(s))
        rows.append(stochastic(ref_key(s), s.legal_actions()))
        for c in s.legal_actions():
            child = s.clone()
            child.apply(c)
            collect(child)

    for owners in setting.deals:
        collect(TinyCrewState(owners, params))
    policy = TabularPolicy()
    uniq = dict(zip(keys, rows))
    policy.set_rows(list(uniq), np.array(list(uniq.values())))
    got = setting.deal_values(policy)
    uniform = setting.deal_values(TabularPolicy())
    for i, owners in enumerate(setting.deals):
        s = TinyCrewState(owners, params)
        assert got[i] == pytest.approx(policy_value(s, stochastic), abs=1e-12)
        flat = policy_value(s, lambda k, legal: np.isin(np.arange(12), legal) / len(legal))
        assert uniform[i] == pytest.approx(flat, abs=1e-12)


def consistent_hands(s: TinyCrewState):
    """Reference: every split of the unseen cards between the two other seats consistent with
    their hand sizes and the suits they showed void in."""
    p = s.current_player
    a, b = (p + 1) % 3, (p + 2) % 3
    unseen = [c for c in range(12) if (s.hands[a] | s.hands[b]) >> c & 1]
    voids = [set(), set(), set()]
    replay = TinyCrewState(s.owners, s.params)
    for c in s.history:
        q = replay.current_player
        if replay.trick and c // 3 != replay.trick[0] // 3:
            voids[q].add(replay.trick[0] // 3)
        replay.apply(c)
    out = []
    for combo in __import__("itertools").combinations(unseen, bin(s.hands[a]).count("1")):
        ha = set(combo)
        hb = set(unseen) - ha
        if any(c // 3 in voids[a] for c in ha) or any(c // 3 in voids[b] for c in hb):
            continue
        out.append((sum(1 << c for c in ha), sum(1 << c for c in hb)))
    return a, b, out


def test_search_choice_matches_reference():
    rng = random.Random(3)
    deals = deals_table()
    checked = 0
    while checked < 12:
        owners = deals[rng.randrange(len(deals))]
        s, r = play_to(owners, Params(), rng.randrange(2, 7), rng)
        if s.is_terminal() or len(s.legal_actions()) < 2:
            continue
        a, b, options = consistent_hands(s)
        wins = {c: 0.0 for c in s.legal_actions()}
        for ha, hb in options:
            for c in wins:
                t = s.clone()
                t.hands[a], t.hands[b] = ha, hb
                t.apply(c)
                wins[c] += open_win(t)
        best = max(sorted(wins), key=lambda c: wins[c])  # ties to the lowest card
        assert fast.search_choice(r, 100, 0) == best
        checked += 1


def brute_best(s: TinyCrewState, seat: int, others) -> float:
    """One deal: the best the seat can do with the other seats deterministic (others(key))."""
    if s.is_terminal():
        return s.returns()[0]
    if s.current_player != seat:
        child = s.clone()
        child.apply(others(ref_key(s), s.legal_actions()))
        return brute_best(child, seat, others)
    best = 0.0
    for c in s.legal_actions():
        child = s.clone()
        child.apply(c)
        best = max(best, brute_best(child, seat, others))
    return best


def test_best_response_single_deal_equals_brute_force():
    rng = np.random.default_rng(4)
    for trial in range(6):
        idx = int(rng.integers(34650))
        params = SETTINGS[trial % len(SETTINGS)]
        setting = Setting(params, deals=[idx])
        # Others: the lowest legal card (the default uniform would be stochastic).
        keys, rows = [], []

        def lowest(key, legal):
            return min(legal)

        def collect(s):
            if s.is_terminal():
                return
            keys.append(ref_key(s))  # noqa: B023 (called within this iteration)
            rows.append(np.eye(12)[lowest(None, s.legal_actions())])  # noqa: B023
            for c in s.legal_actions():
                child = s.clone()
                child.apply(c)
                collect(child)

        collect(TinyCrewState(setting.deals[0], params))
        policy = TabularPolicy()
        uniq = dict(zip(keys, rows))
        policy.set_rows(list(uniq), np.array(list(uniq.values())))
        for seat in range(3):
            br = setting.best_response(policy, seat)
            want = brute_best(TinyCrewState(setting.deals[0], params), seat, lowest)
            assert setting.evaluate(br) == want


def test_best_response_and_ascent_on_many_deals():
    picks = np.random.default_rng(5).choice(34650, size=60, replace=False)
    setting = Setting(Params(), deals=picks)
    base = TabularPolicy()
    v0 = setting.evaluate(base)
    br = setting.best_response(base, 1)
    v1 = setting.evaluate(br)
    assert v1 >= v0
    # Moving the best response to another card at some of its information states never helps
    # (a move onto an illegal card forfeits that branch, which cannot help either).
    keys, _ = br.to_arrays()
    rng = np.random.default_rng(6)
    changed = 0
    for _ in range(5):
        trial = br.copy()
        rows = rng.choice(len(keys), size=50, replace=False)
        trial.probs[rows] = np.roll(trial.probs[rows], int(rng.integers(1, 12)), axis=1)
        value = setting.evaluate(trial)
        assert value <= v1 + 1e-12
        changed += value < v1
    assert changed > 0  # the perturbations do reach played information states
    improved, history = setting.improve(base, max_rounds=2)
    assert history == sorted(history) and history[-1] >= v1
    assert setting.evaluate(improved) == pytest.approx(history[-1])


def test_cfr_on_a_subset_improves_and_stops_at_its_memory_limit():
    from scrofazero.tiny_crew.cfr import CFRTrainer

    picks = np.random.default_rng(7).choice(34650, size=40, replace=False)
    setting = Setting(Params(), deals=picks)
    trainer = CFRTrainer(setting, seed=0, capacity=1 << 12)  # small: the tables must grow
    trainer.run(400)
    avg, cur = trainer.average_policy(), trainer.current_policy()
    assert trainer.iterations == 400 and len(avg) > 1 << 12
    legal = ((trainer.legal[: len(avg), None] >> np.arange(12)) & 1).astype(bool)
    assert np.allclose(avg.probs.sum(axis=1), 1) and not (avg.probs[~legal] > 0).any()
    uniform = setting.evaluate(TabularPolicy())
    assert setting.evaluate(avg) > uniform + 0.2 and setting.evaluate(cur) > uniform
    small = CFRTrainer(setting, seed=0, capacity=1 << 12, max_states=1 << 13)
    with pytest.raises(MemoryError, match="max_states"):
        small.run(400)
