"""Mr. Random: a uniformly random legal card (docs/rules.md section 7)."""

from __future__ import annotations

import numpy as np

from scrofazero.games.gongzhu.rules import InfoView


class RandomAgent:
    name = "random"

    def act(self, view: InfoView, rng: np.random.Generator) -> int:
        legal = view.legal_actions()
        return legal[int(rng.integers(len(legal)))]
