"""Network input encoding (scrofazero/nn/encoding.py).

Invariants: encode() equals a slow per-state reference written from docs/rules.md section 11 on
thousands of
random positions at every ply (terminal ones included); relabelling every seat by +k (hands,
piles, leader) leaves the encoding unchanged because it is relative to the mover, while moving
the hands alone changes it; a just-played S2 and CA both get three ones in their block (the
original lost S2); trick blocks run most recent first; [B, 434] float32 of 0/1, B = 0 included.
encode_holders: one-hot holders of the true deal give encode() exactly, 1/3 in every hidden slot
at the mover gives encode_own_view(), whoever the viewer, a mover's probabilities land in its
block 0; a holders array of the wrong shape is refused.
"""

import numpy as np
import pytest
from positions import random_positions

from scrofazero.games.gongzhu.batch import StateBatch
from scrofazero.games.gongzhu.cards import card_index
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.encoding import (
    ENCODING_VERSION,
    INPUT_SIZE,
    encode,
    encode_holders,
    encode_own_view,
)


def reference_encode(s: GongzhuState) -> np.ndarray:
    """docs/rules.md section 11 read literally, one state at a time."""
    x = np.zeros(434, dtype=np.float32)
    p = s.current_player
    for k in range(4):  # seat offsets 0, +1, +2, +3 from the player to move
        seat = (p + k) % 4
        for card in range(52):
            if s.hands[seat] >> card & 1:
                x[52 * k + card] = 1
        for bit in range(16):
            if s.piles[seat] >> bit & 1:
                x[208 + 16 * k + bit] = 1
    for j, card in enumerate(reversed(s.trick)):  # most recent first
        block = 272 + 54 * j
        slot = block + 1 + card  # one padding slot at the start of the block
        x[slot - 1] = x[slot] = x[slot + 1] = 1  # the card's slot and its two neighbours
    return x




def rotated(s: GongzhuState, k: int) -> GongzhuState:
    """The same position with every seat's hand, pile and the leader moved k seats on."""
    t = s.clone()
    for seat in range(4):
        t.hands[(seat + k) % 4] = s.hands[seat]
        t.piles[(seat + k) % 4] = s.piles[seat]
    t.leader = (s.leader + k) % 4
    t.first_leader = (s.first_leader + k) % 4
    return t


def test_matches_reference_at_all_plies():
    states = random_positions(60, seed=1)  # 60 games x 53 positions
    x = encode(StateBatch.from_states(states))
    ref = np.stack([reference_encode(s) for s in states])
    assert len(states) > 3000
    assert np.array_equal(x, ref)


def test_shape_dtype_and_values():
    states = random_positions(2, seed=2)
    x = encode(StateBatch.from_states(states))
    assert INPUT_SIZE == 434 and ENCODING_VERSION == 1
    assert x.shape == (len(states), 434) and x.dtype == np.float32
    assert set(np.unique(x)) <= {0.0, 1.0}
    # Ones: every card in a hand, every captured scoring card, three per card in the trick.
    batch = StateBatch.from_states(states)
    expected = [
        sum(bin(h).count("1") for h in s.hands)
        + sum(bin(p).count("1") for p in s.piles) + 3 * len(s.trick)
        for s in states
    ]
    assert np.array_equal(x.sum(axis=1), expected)
    assert encode(batch.take(np.arange(0))).shape == (0, 434)


def test_rotating_seats_leaves_encoding_unchanged():
    states = random_positions(3, seed=3)
    base = encode(StateBatch.from_states(states))
    for k in (1, 2, 3):
        turned = [rotated(s, k) for s in states]
        assert [t.current_player for t in turned] == [(s.current_player + k) % 4 for s in states]
        assert np.array_equal(encode(StateBatch.from_states(turned)), base)
        # Moving the hands alone (not the leader) must change it: the seats are relative.
        moved = []
        for s, t in zip(states, turned):
            m = s.clone()
            m.hands = list(t.hands)
            moved.append(m)
        x = encode(StateBatch.from_states(moved))
        live = np.array([not s.is_terminal() for s in states])
        assert not np.any(np.all(x[live] == base[live], axis=1))


def _dealt_by_residue() -> list[int]:
    """Seat i holds the cards whose index is i mod 4: S2 -> seat 0, S3 -> 1, S4 -> 2, CA -> 3."""
    return [sum(1 << c for c in range(52) if c % 4 == seat) for seat in range(4)]


def test_edge_cards_get_three_ones():
    s2 = GongzhuState.from_hands(_dealt_by_residue(), leader=0)
    s2.apply(card_index("S2"))
    ca = GongzhuState.from_hands(_dealt_by_residue(), leader=3)
    ca.apply(card_index("CA"))
    x = encode(StateBatch.from_states([s2, ca]))
    block0 = x[:, 272:326]  # [2, 54]
    assert np.array_equal(np.flatnonzero(block0[0]), [0, 1, 2])
    assert np.array_equal(np.flatnonzero(block0[1]), [51, 52, 53])
    assert not x[:, 326:].any()  # blocks 1 and 2 empty


def test_trick_blocks_most_recent_first():
    s = GongzhuState.from_hands(_dealt_by_residue(), leader=0)
    for code in ("S2", "S3", "S4"):
        s.apply(card_index(code))
    x = encode(StateBatch.from_states([s]))[0]
    blocks = x[272:].reshape(3, 54)
    # Own slot of card c is c + 1: S4 (2) just played, then S3 (1), then the lead S2 (0).
    assert [int(np.flatnonzero(b)[1]) - 1 for b in blocks] == [2, 1, 0]
    assert s.current_player == 3
    assert np.array_equal(np.flatnonzero(x[:52]), [c for c in range(52) if c % 4 == 3])


def true_holders(states) -> np.ndarray:
    """[B, 52, 4] one-hot: who holds each card in each state (all 0 for played cards)."""
    out = np.zeros((len(states), 52, 4))
    for row, s in enumerate(states):
        for seat in range(4):
            for card in range(52):
                out[row, card, seat] = s.hands[seat] >> card & 1
    return out


def test_holders_of_the_true_deal_give_encode():
    states = random_positions(3, seed=21)
    batch = StateBatch.from_states(states)
    assert np.array_equal(encode_holders(batch, true_holders(states)), encode(batch))
    # the hands of the batch are not read: empty ones give the same input
    empty = StateBatch(np.zeros_like(batch.hands), batch.piles, batch.trick, batch.trick_len,
                       batch.leader, batch.num_played)
    assert np.array_equal(encode_holders(empty, true_holders(states)), encode(batch))


def test_a_third_in_every_hidden_slot_gives_encode_own_view():
    states = [s for s in random_positions(2, seed=22) if not s.is_terminal()]
    batch = StateBatch.from_states(states)
    holders = true_holders(states)
    for row, s in enumerate(states):
        mover = s.current_player
        hidden = holders[row].sum(axis=1) - holders[row, :, mover] > 0  # [52] others' cards
        holders[row, hidden] = 1.0 / 3.0
        holders[row, hidden, mover] = 0.0
    assert np.allclose(encode_holders(batch, holders), encode_own_view(batch), atol=1e-7)


def test_probabilities_are_rotated_to_the_mover():
    s = GongzhuState(seed=4, leader=2)  # seat 2 to move
    holders = np.zeros((1, 52, 4))
    holders[0, 7, 2] = 0.25  # the mover's block
    holders[0, 8, 3] = 0.5  # the next seat's
    x = encode_holders(StateBatch.from_states([s]), holders)[0]
    assert x[7] == np.float32(0.25) and x[52 + 8] == np.float32(0.5)
    assert np.count_nonzero(x[:208]) == 2
    with pytest.raises(ValueError, match="shape"):
        encode_holders(StateBatch.from_states([s]), np.zeros((1, 52, 3)))
