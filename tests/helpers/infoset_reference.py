"""The plain search over the player's own information, the reference of
scrofazero/agents/infoset.py: every combination of the worlds' own lines of play, kept where the
player plays one card per information state, played out on the rules engine and scored by
GongzhuState.returns."""

from __future__ import annotations

import itertools

import numpy as np

from scrofazero.agents.mr_greed import MrGreed
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.behaviour import BehaviourModel
from scrofazero.nn.belief import view_positions


def model_card(model: BehaviourModel, state: GongzhuState) -> int:
    """The model's card by the plain path (full features of the seat's view)."""
    view = state.view(state.current_player)
    logp = model.log_probs(view_positions([view]))[0]
    return int(np.argmax(logp))


def others(model: BehaviourModel, me: int, row: int, greed: bool):
    """How the other seats play in world `row`: the model's card, or with `greed` Mr. Greed's
    program at the opponents' seats on draws seeded by (cards played, seat, world), as
    scrofazero/agents/infoset.py promises."""
    def choose(state: GongzhuState) -> int:
        seat = state.current_player
        if greed and seat % 2 != me % 2:
            rng = np.random.default_rng([state.num_played, seat, row])
            return MrGreed().act(state.view(seat), rng)
        return model_card(model, state)
    return choose


def lines(choose, state: GongzhuState, me: int):
    """Every line of play of one world: (the player's cards in order, the observed plays at each
    of its decisions, the final value from `me`'s team), the others playing `choose`'s card."""
    if state.is_terminal():
        yield (), (), state.returns()[me]
        return
    if state.current_player != me:
        child = state.clone()
        child.apply(choose(state))
        yield from lines(choose, child, me)
        return
    seen = tuple(state.history)
    for card in state.legal_actions():
        child = state.clone()
        child.apply(card)
        for mine, obs, value in lines(choose, child, me):
            yield (card,) + mine, (seen,) + obs, value


def consistent(plans) -> bool:
    """One card per information state: wherever two worlds reached the same observed history,
    they played the same card there."""
    choice: dict = {}
    for mine, obs, _ in plans:
        for card, seen in zip(mine, obs):
            if choice.setdefault(seen, card) != card:
                return False
    return True


def brute_force(model, worlds, weights, greed: bool = False) -> np.ndarray:
    """[L] the best weighted value of each legal root card over the combinations of the worlds'
    lines that are one card per information state."""
    me = worlds[0].current_player
    per_world = [list(lines(others(model, me, r, greed), w, me)) for r, w in enumerate(worlds)]
    legal = worlds[0].legal_actions()
    best = np.full(len(legal), -np.inf)
    for plans in itertools.product(*per_world):
        if len({p[0][0] for p in plans}) == 1 and consistent(plans):
            j = legal.index(plans[0][0][0])
            best[j] = max(best[j], sum(w * p[2] for w, p in zip(weights, plans)))
    return best


def fused(model, worlds, weights) -> np.ndarray:
    """[L] the same with each world's best line of its own after the root card (PIMC's strategy
    fusion against the model)."""
    me = worlds[0].current_player
    per_world = [list(lines(others(model, me, r, False), w, me)) for r, w in enumerate(worlds)]
    return np.array([sum(w * max(p[2] for p in lines_ if p[0][0] == card)
                         for w, lines_ in zip(weights, per_world))
                     for card in worlds[0].legal_actions()])
