"""The behaviour network as a play model of the particle weigher (sampling/particles.py): how
likely a seat was to play the card it played, from its hand in a world and the public history.

The input layer's public part is computed once per play of the hand and kept in the history's
cache, so each decision evaluates only the new plays' public parts and then every (world, play)
row in one batched call (nn/behaviour.py's fast path).
"""

from __future__ import annotations

import numpy as np
import torch

from scrofazero.nn.behaviour import BehaviourModel, follow_suit
from scrofazero.sampling.particles import PublicHistory

_BITS = np.left_shift(np.uint64(1), np.arange(52, dtype=np.uint64))  # [52] a hand as a mask


class BehaviourPlayModel:
    """PlayModel of the behaviour network `model` (nn/behaviour.py BehaviourModel)."""

    def __init__(self, model: BehaviourModel):
        self.model = model

    def _public_pre(self, public: PublicHistory) -> torch.Tensor:
        """[n, hidden] the public part of every play's input layer, extended as the hand
        goes on."""
        key = ("behaviour_pre", id(self.model))
        have = public.cache.get(key)
        n = len(public.history)
        if have is None or len(have) < n:
            start = 0 if have is None else len(have)
            assert public.positions is not None  # set by the update that extended the history
            new = self.model.public_pre(public.positions.take(slice(start, n)))
            have = new if have is None else torch.cat([have, new])
            public.cache[key] = have
        return have

    def log_probs(self, public: PublicHistory, plies: np.ndarray, hands: np.ndarray
                  ) -> np.ndarray:
        if not len(plies):
            return np.zeros(0)
        # Worlds often agree on a seat's hand at a play: each (play, hand) is evaluated once.
        keys = (hands.astype(np.uint64) @ _BITS) * np.uint64(64) + plies.astype(np.uint64)
        _, first, back = np.unique(keys, return_index=True, return_inverse=True)
        plies, hands = plies[first], hands[first]
        legal = follow_suit(hands, public.led[plies])
        out = self.model.log_prob_rows(self._public_pre(public), plies, hands,
                                       public.cards[plies], legal).astype(np.float64)
        return out[back.reshape(-1)]
