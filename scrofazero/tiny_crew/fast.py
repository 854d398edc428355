"""Compiled (numba) Tiny Crew core: exact policy evaluation, the open-hand bound, chance-sampled
CFR, exact best response and the determinized search player, over all 34,650 deals.

A state is one int64 row (layout below) so that a depth-first search keeps a preallocated
stack of rows and never allocates. An information state is one int64 key: the mover's initial
hand (12 bits), the first leader (2 bits), the number of plays n (4 bits) and the plays so far
(4 bits each, bits 18 and up), which is the perfect-recall view of docs/rules.md section 16 (tasks
are public
and fixed by the parameters). The slow reference is rules.TinyCrewState; the tests check that
both agree move by move and on every value computed here.
"""

from __future__ import annotations

import numpy as np
from numba import njit, types
from numba.typed import Dict

# Row layout.
H0, LEADER, TL, T0, N, W0, ST1, ST2, SEQ, FIRST, I0, T1SEAT, T2SEAT = (
    0, 3, 4, 5, 8, 9, 12, 13, 14, 15, 16, 19, 20)
ROW = 21
PENDING, SUCCESS, FAILED = 0, 1, 2
MAX_DEPTH = 13


@njit(cache=True)
def start_row(owners, first_leader, t1, t2, out):
    """Fill `out` [ROW] with the initial state of the deal `owners` [12]."""
    out[:] = 0
    for c in range(12):
        out[H0 + owners[c]] |= 1 << c
    for s in range(3):
        out[I0 + s] = out[H0 + s]
    out[LEADER] = first_leader
    out[FIRST] = first_leader
    out[T1SEAT] = t1
    out[T2SEAT] = t2


@njit(cache=True)
def is_terminal(r):
    return r[ST1] == FAILED or r[ST2] == FAILED or (r[ST1] == SUCCESS and r[ST2] == SUCCESS)


@njit(cache=True)
def won(r):
    return 1.0 if (r[ST1] == SUCCESS and r[ST2] == SUCCESS) else 0.0


@njit(cache=True)
def mover(r):
    return (r[LEADER] + r[TL]) % 3


@njit(cache=True)
def legal_mask(r):
    """12-bit mask of the mover's legal cards."""
    hand = r[H0 + mover(r)]
    if r[TL] > 0:
        suit = r[T0] // 3
        follow = hand & (7 << (3 * suit))
        if follow:
            return follow
    return hand


@njit(cache=True)
def info_key(r):
    """Information-state key of the mover (see the module docstring)."""
    n = r[N]
    return (r[I0 + mover(r)] | (r[FIRST] << 12) | (n << 14)
            | ((r[SEQ] & ((1 << (4 * n)) - 1)) << 18))


@njit(cache=True)
def step(r, card, out):
    """out = r after the mover plays `card` (assumed legal)."""
    out[:] = r
    p = mover(r)
    out[H0 + p] &= ~(1 << card)
    out[T0 + r[TL]] = card
    out[SEQ] |= card << (4 * r[N])
    out[N] = r[N] + 1
    out[TL] = r[TL] + 1
    if out[TL] < 3:
        return
    # The trick is complete: the highest submarine wins, else the highest of the led colour.
    best = 0
    for i in range(1, 3):
        c, b = out[T0 + i], out[T0 + best]
        if c // 3 == 3:
            if b // 3 != 3 or c > b:
                best = i
        elif b // 3 != 3 and c // 3 == out[T0] // 3 and c > b:
            best = i
    winner = (out[LEADER] + best) % 3
    blues = 0
    for i in range(3):
        c = out[T0 + i]
        if c == 2:
            out[ST1] = SUCCESS if winner == out[T1SEAT] else FAILED
        if 3 <= c <= 5:
            blues += 1
    out[W0 + winner] += blues
    if out[W0 + out[T2SEAT]] >= 2:
        out[ST2] = FAILED
    else:
        gone = True
        for s in range(3):
            if out[H0 + s] & (7 << 3):
                gone = False
        if gone:
            out[ST2] = SUCCESS if out[W0 + out[T2SEAT]] == 1 else FAILED
    out[LEADER] = winner
    out[TL] = 0


# --- open hands: can the team still win from here? ------------------------------------------
@njit
def _open_win(stack, d):
    r = stack[d]
    if is_terminal(r):
        return won(r)
    legal = legal_mask(r)
    for c in range(12):
        if legal >> c & 1:
            step(r, c, stack[d + 1])
            if _open_win(stack, d + 1) == 1.0:
                return 1.0
    return 0.0


@njit
def open_hand_values(deals, first_leaders, t1, t2):
    """[D] 1.0 where the team wins the deal with open hands and best joint play, else 0."""
    out = np.zeros(len(deals))
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        out[i] = _open_win(stack, 0)
    return out


# --- exact value of a joint tabular policy ---------------------------------------------------
@njit
def _fallback_card(r, key, legal, fb):
    """A state missing from the table: its only legal card, else the search player's card
    (memoised in fb[2]; fb = (max deals, salt per seat [3], cache))."""
    if _popcount(legal) == 1:
        c = 0
        while not legal >> c & 1:
            c += 1
        return c
    cache = fb[2]
    if key in cache:
        return cache[key]
    c = search_choice(r, fb[0], (key + fb[1][mover(r)] * 1000003) % 2147483647)
    cache[key] = c
    return c


@njit
def _policy_value(stack, d, index, probs, fb):
    r = stack[d]
    if is_terminal(r):
        return won(r)
    legal = legal_mask(r)
    key = info_key(r)
    if key not in index and fb[0] > 0:
        step(r, _fallback_card(r, key, legal, fb), stack[d + 1])
        return _policy_value(stack, d + 1, index, probs, fb)
    row = index[key] if key in index else -1
    count = _popcount(legal)
    total = 0.0
    for c in range(12):
        if legal >> c & 1:
            p = probs[row, c] if row >= 0 else 1.0 / count
            if p > 0.0:
                step(r, c, stack[d + 1])
                total += p * _policy_value(stack, d + 1, index, probs, fb)
    return total


@njit
def policy_values(deals, first_leaders, t1, t2, index, probs, fb):
    """[D] exact win probability of every deal under the joint policy (index: key -> row of
    probs [M, 12]). A state missing from index plays uniformly over its legal cards when
    fb[0] == 0, else the search player's card with fb[0] deals (see _fallback_card)."""
    out = np.zeros(len(deals))
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        out[i] = _policy_value(stack, 0, index, probs, fb)
    return out


def new_index():
    """An empty numba dict from information-state key to table row."""
    return Dict.empty(key_type=types.int64, value_type=types.int64)


# --- chance-sampled CFR -----------------------------------------------------------------------
@njit
def _cfr(stack, d, reach, index, regret, strat, legal_rows, t_weight, plus):
    r = stack[d]
    if is_terminal(r):
        return won(r)
    p = mover(r)
    legal = legal_mask(r)
    key = info_key(r)
    if key in index:
        row = index[key]
    else:
        row = len(index)
        index[key] = row
    legal_rows[row] = legal
    # Regret matching over the legal cards.
    sigma = np.zeros(12)
    pos = 0.0
    count = 0
    for c in range(12):
        if legal >> c & 1:
            count += 1
            if regret[row, c] > 0:
                pos += regret[row, c]
    for c in range(12):
        if legal >> c & 1:
            sigma[c] = (regret[row, c] / pos if regret[row, c] > 0 else 0.0) if pos > 0 \
                else 1.0 / count
    values = np.zeros(12)
    v = 0.0
    for c in range(12):
        if legal >> c & 1:
            old = reach[p]
            reach[p] = old * sigma[c]
            step(r, c, stack[d + 1])
            values[c] = _cfr(stack, d + 1, reach, index, regret, strat, legal_rows,
                             t_weight, plus)
            reach[p] = old
            v += sigma[c] * values[c]
    others = 1.0
    for q in range(3):
        if q != p:
            others *= reach[q]
    for c in range(12):
        if legal >> c & 1:
            regret[row, c] += others * (values[c] - v)
            if plus and regret[row, c] < 0:
                regret[row, c] = 0.0
            strat[row, c] += t_weight * reach[p] * sigma[c]
    return v


@njit
def cfr_run(deals, first_leaders, t1, t2, order, start_t, index, regret, strat, legal_rows,
            plus):
    """Chance-sampled CFR on deals[order[k]] for k = 0, 1, ... (iteration start_t + k), each a
    full-width traversal with perfect-recall information states shared across deals. Stops
    early when the tables may not hold one more deal's new states; returns iterations done."""
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    reach = np.ones(3)
    done = 0
    for k in range(len(order)):
        if len(index) + 30000 > regret.shape[0]:
            break
        i = order[k]
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        reach[:] = 1.0
        weight = float(start_t + k + 1) if plus else 1.0  # CFR+ averages linearly
        _cfr(stack, 0, reach, index, regret, strat, legal_rows, weight, plus)
        done += 1
    return done


# --- exact best response of one seat ------------------------------------------------------------
@njit(cache=True)
def _popcount(x):
    n = 0
    while x:
        x &= x - 1
        n += 1
    return n


@njit
def _br_pass(stack, d, seat, k, weight, index, probs, br_index, br_card, q_index, q, q_legal,
             overflow, fb):
    r = stack[d]
    if is_terminal(r):
        return won(r)
    p = mover(r)
    legal = legal_mask(r)
    key = info_key(r)
    if p == seat:
        level = _popcount(r[I0 + seat]) - _popcount(r[H0 + seat])
        if level > k:
            step(r, br_card[br_index[key]], stack[d + 1])
            return _br_pass(stack, d + 1, seat, k, weight, index, probs, br_index, br_card,
                            q_index, q, q_legal, overflow, fb)
        row = -1
        if level == k:
            if key in q_index:
                row = q_index[key]
            elif len(q_index) < q.shape[0]:
                row = len(q_index)
                q_index[key] = row
                q_legal[row] = legal
            else:
                overflow[0] = 1
                return 0.0
        for c in range(12):
            if legal >> c & 1:
                step(r, c, stack[d + 1])
                v = _br_pass(stack, d + 1, seat, k, weight, index, probs, br_index, br_card,
                             q_index, q, q_legal, overflow, fb)
                if row >= 0:
                    q[row, c] += weight * v
        return 0.0  # above level k values are not needed
    if key not in index and fb[0] > 0:
        step(r, _fallback_card(r, key, legal, fb), stack[d + 1])
        return _br_pass(stack, d + 1, seat, k, weight, index, probs, br_index, br_card,
                        q_index, q, q_legal, overflow, fb)
    row = index[key] if key in index else -1
    count = _popcount(legal)
    total = 0.0
    for c in range(12):
        if legal >> c & 1:
            pr = probs[row, c] if row >= 0 else 1.0 / count
            if pr > 0.0:
                step(r, c, stack[d + 1])
                total += pr * _br_pass(stack, d + 1, seat, k, weight * pr, index, probs,
                                       br_index, br_card, q_index, q, q_legal, overflow, fb)
    return total


@njit
def br_level(deals, first_leaders, t1, t2, seat, k, index, probs, br_index, br_card, q_index,
             q, q_legal, overflow, fb):
    """Accumulate q[row, card] = sum over deals and others' play of the win probability after
    `card` at seat's level-k information states, its later levels playing br_card."""
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for i in range(len(deals)):
        start_row(deals[i], first_leaders[i], t1, t2, stack[0])
        _br_pass(stack, 0, seat, k, 1.0, index, probs, br_index, br_card, q_index, q, q_legal,
                 overflow, fb)
        if overflow[0]:
            return


# --- the determinized (open-hand vote) search player -------------------------------------------
@njit(cache=True)
def _voids(r):
    """[3] 4-bit masks of the suits each seat has shown to lack (failed to follow)."""
    v = np.zeros(3, dtype=np.int64)
    leader = r[FIRST]
    n = r[N]
    # Replay the plays to know each card's player and the led suit.
    row = np.zeros(ROW, dtype=np.int64)
    tmp = np.zeros(ROW, dtype=np.int64)
    row[:] = r
    for s in range(3):
        row[H0 + s] = r[I0 + s]
    row[LEADER] = leader
    row[TL] = 0
    row[N] = 0
    row[SEQ] = 0
    row[W0:W0 + 3] = 0
    row[ST1] = PENDING
    row[ST2] = PENDING
    for j in range(n):
        card = (r[SEQ] >> (4 * j)) & 15
        p = mover(row)
        if row[TL] > 0 and card // 3 != row[T0] // 3:
            v[p] |= 1 << (row[T0] // 3)
        step(row, card, tmp)
        row[:] = tmp
    return v


@njit
def search_choice(r, max_deals, seed):
    """The card the determinized player picks at the mover's state r: over the deals of the
    unseen cards consistent with hand sizes and shown voids (all of them, or max_deals of them
    drawn with a seed from the information state), the legal card that wins with open hands in
    the most deals; ties go to the lowest card."""
    p = mover(r)
    a, b = (p + 1) % 3, (p + 2) % 3
    unseen = r[H0 + a] | r[H0 + b]
    need_a = _popcount(r[H0 + a])
    voids = _voids(r)
    cards = np.zeros(12, dtype=np.int64)
    u = 0
    for c in range(12):
        if unseen >> c & 1:
            cards[u] = c
            u += 1
    # Every subset of the unseen cards of size need_a for seat a, consistent with voids.
    options = np.zeros(1 << u, dtype=np.int64)
    m = 0
    for sub in range(1 << u):
        if _popcount(sub) != need_a:
            continue
        ha = 0
        for j in range(u):
            if sub >> j & 1:
                ha |= 1 << cards[j]
        hb = unseen & ~ha
        ok = True
        for s in range(4):
            if (voids[a] >> s & 1) and (ha & (7 << (3 * s))):
                ok = False
            if (voids[b] >> s & 1) and (hb & (7 << (3 * s))):
                ok = False
        if ok:
            options[m] = ha
            m += 1
    if m > max_deals:
        np.random.seed(seed)
        pick = np.random.permutation(m)[:max_deals]
        chosen = options[pick]
        m = max_deals
    else:
        chosen = options[:m]
    legal = legal_mask(r)
    wins = np.zeros(12)
    stack = np.zeros((MAX_DEPTH + 1, ROW), dtype=np.int64)
    for j in range(m):
        for c in range(12):
            if legal >> c & 1:
                stack[0, :] = r
                stack[0, H0 + a] = chosen[j]
                stack[0, H0 + b] = unseen & ~chosen[j]
                step(stack[0], c, stack[1])
                wins[c] += _open_win(stack, 1)
    best = -1
    for c in range(12):
        if legal >> c & 1 and (best < 0 or wins[c] > wins[best]):
            best = c
    return best


# --- table helpers (kept in compiled code: policies hold millions of information states) ------
@njit(cache=True)
def append_index(target, source, start):
    """target[key] = start + row for every (key, row) of source."""
    for k, v in source.items():
        target[k] = start + v


@njit(cache=True)
def count_missing(index, other):
    n = 0
    for k in other.keys():
        if k not in index:
            n += 1
    return n


@njit(cache=True)
def merge_onehot(index, probs, br_index, br_card, start):
    """Set the rows of br_index's keys in (index, probs) to one-hot br_card, adding missing
    keys at rows start, start + 1, ... (probs must already have room)."""
    nxt = start
    for k, v in br_index.items():
        if k in index:
            row = index[k]
        else:
            row = nxt
            index[k] = row
            nxt += 1
        probs[row, :] = 0.0
        probs[row, br_card[v]] = 1.0


@njit(cache=True)
def copy_index(index):
    out = Dict.empty(key_type=types.int64, value_type=types.int64)
    for k, v in index.items():
        out[k] = v
    return out


@njit(cache=True)
def best_cards(q, q_legal, rows):
    """Argmax over legal cards of q[:rows] (ties to the lowest card)."""
    out = np.zeros(rows, dtype=np.int64)
    for i in range(rows):
        best = -1
        for c in range(12):
            if q_legal[i] >> c & 1 and (best < 0 or q[i, c] > q[i, best]):
                best = c
        out[i] = best
    return out
