"""Numba kernels of the exact Fish belief count (fish.belief builds their inputs): the table of
one set's consistent assignments grouped by per-seat count vector, and the forward/backward pass
over the vectors of remaining seat capacities. Plain arrays only; seats here are the "active"
seats (other than the observer, with free capacity), indexed 0..A-1 in a mixed-radix box.
"""

from __future__ import annotations

import numba
import numpy as np


@numba.njit(cache=True)
def set_table(masks, num_seats, al_seat, al_cards, nn_cards, nn_seat, exact, sf_seat, sf_known,
              soft, max_slots, lk_seat, lk_known, lk_cards, lk_a, lk_b):
    """All assignments of one set's f free cards to seats 0..num_seats-1 that satisfy the set's
    constraints, grouped by count vector d (capacities are applied later, by the caller).

    masks [f]: allowed seats per card (bit p = seat p). al_seat/al_cards [k]: "seat holds at
    least one of these cards" (bit i = free card i). nn_cards [m], nn_seat [m, f]: "not every
    listed card is with its named seat". exact [A] (exact[0] < 0: none): d must equal it.
    sf_seat/sf_known [s]: one factor soft_factor(sf_known + d[seat]) per ask. lk_* [m]: one
    behaviour factor each: lk_a if lk_known > 0 or the seat holds one of lk_cards (bits), else
    lk_b. Returns dvec
    [n, A], weight [n] and card_weight [n, f, A] (the part of weight with card i at seat p)."""
    f = masks.shape[0]
    allowed, n_allowed, named_at, seat_factor, power = _table_inputs(
        masks, num_seats, nn_cards, nn_seat, sf_seat, sf_known, soft)
    dvec = np.zeros((max_slots, num_seats), np.int64)
    weight = np.zeros(max_slots)
    card_weight = np.zeros((max_slots, f, num_seats))
    lookup = np.zeros((f + 1) ** num_seats, np.int64)  # d's index -> slot + 1
    n_slots = 0
    # odometer over the cards' allowed seats, keeping d, its index and each seat's cards in step
    choice = np.zeros(f, np.int64)
    assign = allowed[:, 0].copy()
    d = np.zeros(num_seats, np.int64)
    held = np.zeros(num_seats, np.int64)  # bit i: card i is with the seat
    index = 0
    for i in range(f):
        index += _move(i, -1, assign[i], d, held, power, 0)
    while True:
        w = _assignment_weight(d, held, al_seat, al_cards, named_at, exact, seat_factor)
        for j in range(lk_seat.shape[0]):
            if lk_known[j] > 0 or held[lk_seat[j]] & lk_cards[j] != 0:
                w *= lk_a[j]
            else:
                w *= lk_b[j]
        if w != 0.0:
            slot = lookup[index] - 1
            if slot < 0:
                slot = n_slots
                n_slots += 1
                lookup[index] = n_slots
                dvec[slot, :] = d
            weight[slot] += w
            for i in range(f):
                card_weight[slot, i, assign[i]] += w
        i = 0
        while i < f and choice[i] == n_allowed[i] - 1:
            choice[i] = 0
            index += _move(i, assign[i], allowed[i, 0], d, held, power, 0)
            assign[i] = allowed[i, 0]
            i += 1
        if i == f:
            break
        choice[i] += 1
        index += _move(i, assign[i], allowed[i, choice[i]], d, held, power, 0)
        assign[i] = allowed[i, choice[i]]
    return dvec[:n_slots], weight[:n_slots], card_weight[:n_slots]


@numba.njit(cache=True)
def _table_inputs(masks, num_seats, nn_cards, nn_seat, sf_seat, sf_known, soft):
    """allowed [f, A] / n_allowed [f]: each card's seats; named_at [m, A]: per wrong call, the
    cards it named to each seat; seat_factor [A, f + 1]: product of a seat's soft factors given
    its count of the set's free cards; power [A]: d's index weights (radix f + 1)."""
    f = masks.shape[0]
    allowed = np.zeros((f, num_seats), np.int64)
    n_allowed = np.zeros(f, np.int64)
    for i in range(f):
        for p in range(num_seats):
            if (masks[i] >> p) & 1:
                allowed[i, n_allowed[i]] = p
                n_allowed[i] += 1
    named_at = np.zeros((nn_cards.shape[0], num_seats), np.int64)
    for j in range(nn_cards.shape[0]):
        for i in range(f):
            if (nn_cards[j] >> i) & 1:
                named_at[j, nn_seat[j, i]] |= 1 << i
    seat_factor = np.ones((num_seats, f + 1))
    for j in range(sf_seat.shape[0]):
        for k in range(f + 1):
            seat_factor[sf_seat[j], k] *= soft_factor(sf_known[j] + k, soft)
    power = np.ones(num_seats, np.int64)
    for p in range(1, num_seats):
        power[p] = power[p - 1] * (f + 1)
    return allowed, n_allowed, named_at, seat_factor, power


@numba.njit(cache=True)
def _move(i, old, new, d, held, power, index):
    """Card i goes from seat old (-1: nowhere) to new; returns the change of d's index."""
    if old >= 0:
        d[old] -= 1
        held[old] &= ~(1 << i)
        index -= power[old]
    d[new] += 1
    held[new] |= 1 << i
    return index + power[new]


@numba.njit(cache=True)
def _assignment_weight(d, held, al_seat, al_cards, named_at, exact, seat_factor):
    num_seats = d.shape[0]
    if exact[0] >= 0:
        for p in range(num_seats):
            if d[p] != exact[p]:
                return 0.0
    for j in range(al_seat.shape[0]):
        if held[al_seat[j]] & al_cards[j] == 0:
            return 0.0
    for j in range(named_at.shape[0]):
        named = True
        for p in range(num_seats):
            if named_at[j, p] & ~held[p]:
                named = False
        if named:
            return 0.0
    w = 1.0
    for p in range(num_seats):
        w *= seat_factor[p, d[p]]
    return w


@numba.njit(cache=True)
def soft_factor(h, soft):
    """(h / (6 - h)) ** soft: the asker's chance of picking this set's card, up to a constant
    (fish.belief docstring); 6 - h floored at 1 for trolling asks of a full set."""
    if soft == 0.0:
        return 1.0
    return (h / max(6 - h, 1)) ** soft


@numba.njit(cache=True)
def count_deals(radix, strides, start, item_off, dvec, didx, weight, pool_size, fact, scratch):
    """Weighted number of initial deals: the items (set tables or single cards, rows of dvec /
    didx / weight between item_off[k] and item_off[k + 1]) take their count vector d out of the
    capacities, then the pool of interchangeable cards fills the rest (multinomial).

    scratch: three float [box] arrays of zeros and one int [box] array (left zero). Returns the
    total, rest [n]: the weight of everything but item k given that k uses row d (so the row's
    share of the total is weight[d] * rest[d]), and pool [A]: sum over final vectors r of
    F(r) * multinomial(r) * r_p / pool_size."""
    num_items = item_off.shape[0] - 1
    packed = _pack_rows(dvec)
    sup_idx, sup_val = _forward(radix, strides, start, item_off, packed, didx, weight, scratch)
    num_seats = radix.shape[0]
    nxt, cur = scratch[1], scratch[2]
    pool = np.zeros(num_seats)
    last_idx, last_val = sup_idx[num_items], sup_val[num_items]
    r = np.zeros(num_seats, np.int64)
    for j in range(last_idx.shape[0]):
        _digits(last_idx[j], radix, strides, r)
        m = fact[pool_size]
        for p in range(num_seats):
            m /= fact[r[p]]
        nxt[last_idx[j]] = m
        if pool_size > 0:
            for p in range(num_seats):
                pool[p] += last_val[j] * m * r[p] / pool_size
    rest = np.zeros(dvec.shape[0])
    for k in range(num_items - 1, -1, -1):
        _backward_item(sup_idx[k], sup_val[k], item_off[k], item_off[k + 1], radix, strides,
                       packed, didx, weight, nxt, cur, rest)
        for j in range(sup_idx[k + 1].shape[0]):
            nxt[sup_idx[k + 1][j]] = 0.0
        nxt, cur = cur, nxt
    total = nxt[start]
    nxt[start] = 0.0
    return total, rest, pool


@numba.njit(cache=True)
def _digits(index, radix, strides, out):
    for p in range(radix.shape[0]):
        out[p] = (index // strides[p]) % radix[p]


@numba.njit(cache=True)
def _forward(radix, strides, start, item_off, packed, didx, weight, scratch):
    """Supports (sorted indices, values) of F_0 = delta(start), F_k = F_{k-1} pushed through
    item k: F_k(r - d) += weight[d] F_{k-1}(r). Rows outside, sorted states inside, so the
    writes walk the dense array in order."""
    dense, touched = scratch[0], scratch[3]
    sup_idx = [np.array([start], np.int64)]
    sup_val = [np.array([1.0])]
    for k in range(item_off.shape[0] - 1):
        idx_in, val_in = sup_idx[k], sup_val[k]
        state = _pack_states(idx_in, radix, strides)
        n_out = 0
        for row in range(item_off[k], item_off[k + 1]):
            w, shift, d = weight[row], didx[row], packed[row]
            for j in range(idx_in.shape[0]):
                if (state[j] - d) & _GUARD == _GUARD:  # d <= r on every seat
                    target = idx_in[j] - shift
                    if dense[target] == 0.0:
                        touched[n_out] = target
                        n_out += 1
                    dense[target] += w * val_in[j]
        out_idx = np.sort(touched[:n_out])
        out_val = np.empty(n_out)
        for j in range(n_out):
            out_val[j] = dense[out_idx[j]]
            dense[out_idx[j]] = 0.0
            touched[j] = 0
        sup_idx.append(out_idx)
        sup_val.append(out_val)
    return sup_idx, sup_val


# Fit test d <= r on all seats at once (SWAR): one byte per seat, r's bytes with their top bit
# set; a seat with d > r borrows that bit. Counts are <= 9 < 128 and there are <= 7 seats.
_GUARD = np.int64(sum(0x80 << (8 * p) for p in range(7)))


@numba.njit(cache=True)
def _pack(values):
    out = np.int64(0)
    for p in range(values.shape[0] - 1, -1, -1):
        out = (out << 8) | values[p]
    return out


@numba.njit(cache=True)
def _pack_rows(dvec):
    out = np.empty(dvec.shape[0], np.int64)
    for row in range(dvec.shape[0]):
        out[row] = _pack(dvec[row])
    return out


@numba.njit(cache=True)
def _pack_states(idx, radix, strides):
    """[S] each state's capacity vector, one byte per seat, top bits set (see _GUARD)."""
    out = np.empty(idx.shape[0], np.int64)
    r = np.empty(radix.shape[0], np.int64)
    for j in range(idx.shape[0]):
        _digits(idx[j], radix, strides, r)
        out[j] = _pack(r) | _GUARD
    return out


@numba.njit(cache=True)
def _backward_item(idx_in, val_in, lo, hi, radix, strides, packed, didx, weight, nxt, cur,
                   rest):
    """cur(r) = sum_d weight[d] nxt(r - d) over r in F_{k-1}'s support, and
    rest[d] += F_{k-1}(r) nxt(r - d)."""
    state = _pack_states(idx_in, radix, strides)
    acc = np.zeros(idx_in.shape[0])
    for row in range(lo, hi):
        w, shift, d = weight[row], didx[row], packed[row]
        share = 0.0
        for j in range(idx_in.shape[0]):
            if (state[j] - d) & _GUARD == _GUARD:
                b = nxt[idx_in[j] - shift]
                acc[j] += w * b
                share += val_in[j] * b
        rest[row] += share
    for j in range(idx_in.shape[0]):
        cur[idx_in[j]] = acc[j]
