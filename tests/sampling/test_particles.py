"""Worlds weighed by the plays (scrofazero/sampling/particles.py, sampling/policy.py and the
sampler's policy and posterior methods).

Invariants: on small endgames the pool's weighted belief equals the exact posterior (every
consistent world enumerated, weighted by the play model's floored, tempered probabilities of
every earlier play), whatever belief proposes the worlds (the multiple-importance weights undo
the proposal) and also after the pool is carried to a later decision of the same hand; with
prior=belief the target is the proposal's product times the likelihood; every world drawn is
consistent with the view; a new hand starts a new pool; the behaviour play model's fast rows
equal its plain path; the posterior method is refused wherever no arena names Mr. Greeds, and
in the arena the raw player with it plays legal, reproducible games; the full player explains a
move by the weighed worlds' belief.
"""

import dataclasses
import itertools

import numpy as np
import pytest
from positions import random_position

from scrofazero.agents import check_real_game, make_agent
from scrofazero.agents.mr_greed import GreedPlayModel, MrGreed, play_probability
from scrofazero.agents.scrofazero_agent import ScrofaZeroAgent
from scrofazero.eval.arena import play_game
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.behaviour import BehaviourModel, BehaviourNet, follow_suit, save_behaviour
from scrofazero.nn.network import PolicyValueNet
from scrofazero.sampling.particles import ParticleWeigher, PublicHistory, WeighingConfig
from scrofazero.sampling.policy import BehaviourPlayModel
from scrofazero.sampling.sampler import PosteriorError, Sampler, SamplingConfig
from scrofazero.sampling.uniform import view_constraints

SUIT = np.arange(NUM_CARDS) // 13


class TopCardModel:
    """A play model that depends on the hand: the highest legal card with probability 0.7, the
    other legal cards share the rest."""

    def prob(self, hand: np.ndarray, card: int, led: int) -> float:
        legal = np.flatnonzero(follow_suit(hand[None, :], np.array([led]))[0])
        if card not in legal:
            return 0.0
        if len(legal) == 1:
            return 1.0
        return 0.7 if card == legal.max() else 0.3 / (len(legal) - 1)

    def log_probs(self, public, plies, hands):
        with np.errstate(divide="ignore"):
            return np.log([self.prob(h, int(public.cards[t]), int(public.led[t]))
                           for t, h in zip(plies, hands)])


def exact_posterior(view, model, floor, temperature, prior=None):
    """[52, 4] the posterior belief over every consistent world (brute force)."""
    public = PublicHistory()
    public.update(view)
    cards, sizes, voids, others = view_constraints(view)
    total = np.zeros((NUM_CARDS, 4))
    for combo in itertools.product(range(3), repeat=len(cards)):
        if [combo.count(j) for j in range(3)] != list(sizes):
            continue
        if any(voids[j] >> (card // 13) & 1 for card, j in zip(cards, combo)):
            continue
        start = np.full(NUM_CARDS, view.seat)
        start[cards] = [others[j] for j in combo]
        start[public.cards] = public.seats
        weight = 1.0 if prior is None else prior(cards, combo)
        for t, (seat, card) in enumerate(view.history):
            if seat == view.seat:
                continue
            hand = (start == seat) & ~np.isin(np.arange(NUM_CARDS), public.cards[:t])
            p = model.prob(hand, card, int(public.led[t]))
            weight *= 0.0 if p == 0 else max(p, floor) ** temperature
        for card, j in zip(cards, combo):
            total[card, others[j]] += weight
    return total / total[cards].sum(axis=1).mean()


def endgame(seed: int, plies: int):
    state = random_position(seed, plies)
    return state, state.view(state.current_player)


def weighed(view, belief, config, seed=0, weigher=None):
    weigher = weigher or ParticleWeigher(config, calibrate=20)
    models = {s: TopCardModel() for s in range(4) if s != view.seat}
    return weigher, weigher.weigh(view, belief, models, 5, np.random.default_rng(seed))


def uniform_belief(view):
    belief = np.zeros((NUM_CARDS, 4))
    cards, _, _, others = view_constraints(view)
    belief[np.ix_(cards, others)] = 1 / 3
    return belief


@pytest.mark.parametrize("seed,plies", [(3, 44), (8, 45), (11, 42)])
def test_pool_belief_is_the_exact_posterior(seed, plies):
    state, view = endgame(seed, plies)
    config = WeighingConfig(proposals=6000, keep=6000, temperature=0.8, floor=0.05)
    exact = exact_posterior(view, TopCardModel(), 0.05, 0.8)
    cards = view_constraints(view)[0]
    for belief in (uniform_belief(view), skewed_belief(view, seed)):
        _, result = weighed(view, belief, config)
        np.testing.assert_allclose(result.marginals[cards], exact[cards], atol=0.04)
        assert 1 <= result.ess <= 6000 and np.isclose(result.weights.sum(), 1)
        for owners in result.owners:
            assert all(owners[c] == view.seat for c in range(52) if view.hand >> c & 1)
            assert all(owners[c] == -1 for c in range(52) if view.played >> c & 1)


def skewed_belief(view, seed):
    """A belief far from the posterior (some cells near 0): the proposal the weights must undo,
    with the uniform share of the proposals covering what it misses."""
    belief = np.zeros((NUM_CARDS, 4))
    cards, _, _, others = view_constraints(view)
    rng = np.random.default_rng(seed)
    belief[np.ix_(cards, others)] = rng.dirichlet([0.7] * 3, size=len(cards))
    return belief


def test_prior_belief_multiplies_the_proposal():
    state, view = endgame(3, 44)
    belief = skewed_belief(view, 3)
    cards, _, _, others = view_constraints(view)

    def product(cs, combo):  # the calibrated product is the belief's when no fitting
        return np.prod([belief[c, others[j]] for c, j in zip(cs, combo)])

    exact = exact_posterior(view, TopCardModel(), 0.05, 1.0, prior=product)
    config = WeighingConfig(proposals=6000, keep=6000, floor=0.05, prior="belief",
                            uniform_share=0.5)
    weigher = ParticleWeigher(config, calibrate=0)
    models = {s: TopCardModel() for s in range(4) if s != view.seat}
    result = weigher.weigh(view, belief, models, 5, np.random.default_rng(1))
    np.testing.assert_allclose(result.marginals[cards], exact[cards], atol=0.04)


def test_pool_carried_to_a_later_decision_stays_exact():
    state, first = endgame(5, 36)
    # refresh at every decision: the weights then mix the proposals of both decisions
    config = WeighingConfig(proposals=3000, keep=3000, floor=0.05, refresh_ess=1e9)
    weigher, _ = weighed(first, uniform_belief(first), config)
    seat = first.seat
    rng = np.random.default_rng(2)
    state.apply(int(rng.choice(state.legal_actions())))
    while state.current_player != seat:
        state.apply(int(rng.choice(state.legal_actions())))
    later = state.view(seat)
    pool = weigher._pools[seat]
    weigher, result = weighed(later, uniform_belief(later), config, weigher=weigher)
    assert weigher._pools[seat] is pool and len(pool.proposals) == 4  # belief + uniform, twice
    exact = exact_posterior(later, TopCardModel(), 0.05, 1.0)
    cards = view_constraints(later)[0]
    np.testing.assert_allclose(result.marginals[cards], exact[cards], atol=0.04)
    # every world kept is consistent with the plays since: the card was in its player's hand
    for _t, (s, card) in enumerate(later.history):
        assert np.all(pool.start[:, card] == s)
    # another hand (a new deal) starts a new pool
    other = GongzhuState(seed=99, leader=seat).view(seat)
    weighed(other, uniform_belief(other), config, weigher=weigher)
    assert weigher._pools[seat] is not pool


def test_behaviour_rows_match_the_plain_path(tmp_path):
    state, view = endgame(4, 30)
    net = BehaviourNet(32, 1)
    for param in net.parameters():  # a network that cares about the hand
        param.data.normal_(0, 0.3)
    model = BehaviourModel(net)
    public = PublicHistory()
    public.update(view)
    plies = [t for t, (s, _) in enumerate(view.history) if s != view.seat]
    truth = []  # the true hands before each of those plays
    replay = GongzhuState.from_hands(_start_hands(state), state.first_leader)
    for t, (seat, card) in enumerate(view.history):
        if t in plies:
            truth.append([replay.hands[seat] >> c & 1 for c in range(NUM_CARDS)])
        replay.apply(card)
    truth, plies = np.array(truth, dtype=bool), np.array(plies)
    fast = BehaviourPlayModel(model).log_probs(public, plies, truth)
    legal = follow_suit(truth, public.led[plies])
    plain = model.log_prob_rows_plain(public.positions, plies, truth, public.cards[plies], legal)
    np.testing.assert_allclose(fast, plain, atol=1e-5)
    assert np.all(np.isfinite(fast))
    # a second decision of the hand reuses the public parts computed for the first
    assert len(public.cache) == 1


def _start_hands(state):
    hands = list(state.hands)
    for seat, card in state.history:
        hands[seat] |= 1 << card
    return hands


def tiny_net():
    return PolicyValueNet(hidden=(16,), num_blocks=1)


@pytest.fixture(scope="module")
def behaviour_file(tmp_path_factory):
    return str(save_behaviour(tmp_path_factory.mktemp("behaviour") / "b.pt", BehaviourNet(16, 1)))


def test_posterior_is_refused_outside_the_arena(behaviour_file):
    config = SamplingConfig(method="posterior", num_deals=3, proposals=8, greed_draws=8,
                            behaviour=behaviour_file)
    agent = make_agent("raw", model=tiny_net(), sampling=config)
    with pytest.raises(ValueError, match="evaluation only"):
        check_real_game(agent, "a table")
    _, view = endgame(6, 9)
    with pytest.raises(PosteriorError, match="evaluation only"):
        Sampler(config).draw(view, np.random.default_rng(0))
    check_real_game(make_agent("raw", model=tiny_net()))  # the defaults play for real


def test_posterior_raw_player_plays_in_the_arena(behaviour_file):
    config = SamplingConfig(method="posterior", num_deals=3, proposals=6, keep=12,
                            greed_draws=8, behaviour=behaviour_file)
    raw = make_agent("raw", model=tiny_net(), sampling=config)
    greed = MrGreed(num_samples=4)
    deal = np.random.default_rng(3).permutation(52)
    first = play_game(deal, 0, [raw, greed, raw, greed], 11)
    again = play_game(deal, 0, [raw, greed, raw, greed], 11)
    assert first == again and sum(first) == 0
    assert set(raw.sampler.models) == {1, 3}
    assert raw.sampler.weigher._pools  # the worlds were weighed


def test_greed_play_model_is_greeds_probability():
    state, view = endgame(7, 13)
    public = PublicHistory()
    public.update(view)
    t = next(t for t, v in enumerate(public.views) if len(v.trick) < 3 and v.seat != view.seat)
    seat, card = view.history[t]
    hand = _start_hands(state)[seat]
    for s, c in view.history[:t]:
        if s == seat:
            hand &= ~(1 << c)
    row = np.array([[hand >> c & 1 for c in range(NUM_CARDS)]], dtype=bool)
    model = GreedPlayModel(num_samples=20, draws=64)
    got = model.log_probs(public, np.array([t]), row)
    again = model.log_probs(public, np.array([t]), row)
    assert got == again  # seeded by (seed, ply, hand), kept in the cache
    rng = np.random.default_rng([0, t, hand & 0xFFFFFFFF, hand >> 32])
    view_t = dataclasses.replace(public.views[t], hand=hand)
    want = play_probability(view_t, card, num_samples=20, draws=64, bootstraps=256, rng=rng)
    assert got[0] == pytest.approx(np.log(max(want, 1e-12)))


def test_policy_sampler_plays_with_a_behaviour_file(behaviour_file):
    config = SamplingConfig(method="policy", num_deals=4, proposals=8, behaviour=behaviour_file)
    raw = make_agent("raw", model=tiny_net(), sampling=config)
    check_real_game(raw)  # policy inference needs nothing a real game lacks
    deal = np.random.default_rng(4).permutation(52)
    greed = MrGreed(num_samples=4)
    first = play_game(deal, 1, [raw, greed, raw, greed], 5)
    assert first == play_game(deal, 1, [raw, greed, raw, greed], 5)


def test_fresh_worlds_only_while_the_pool_is_thin():
    state, first = endgame(5, 36)
    rng = np.random.default_rng(2)
    while True:
        state.apply(int(rng.choice(state.legal_actions())))
        if state.current_player == first.seat:
            break
    later = state.view(first.seat)
    for refresh, more in ((0.0, 0), (1e9, 2)):  # never thin; always thin (belief + uniform)
        config = WeighingConfig(proposals=400, keep=400, floor=0.05, refresh_ess=refresh)
        weigher, _ = weighed(first, uniform_belief(first), config)
        pool = weigher._pools[first.seat]
        weighed(later, uniform_belief(later), config, weigher=weigher)
        assert len(pool.proposals) == 2 + more and len(pool.start)


def test_full_player_explains_with_the_weighed_worlds(behaviour_file):
    agent = ScrofaZeroAgent(model=tiny_net(), sampling=SamplingConfig(
        method="policy", num_deals=6, proposals=16, behaviour=behaviour_file))
    state, view = endgame(2, 21)
    while len(view.legal_actions()) < 2:
        state.apply(view.legal_actions()[0])
        view = state.view(state.current_player)
    card, why = agent.decide(view, np.random.default_rng(0))
    assert card in view.legal_actions() and not why.forced
    unseen = [c for c in range(52) if view.unseen >> c & 1]
    np.testing.assert_allclose(why.belief[unseen].sum(axis=1), 1.0, atol=1e-9)
    # the pool's belief, not the network's: it is what the weighed worlds say
    np.testing.assert_allclose(why.belief[unseen], agent.last.sample.marginals[unseen])
    assert 1 <= why.ess <= why.deals  # the pool's worlds and their effective number
