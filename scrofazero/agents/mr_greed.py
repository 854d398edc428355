"""Mr. Greed: samples the hidden hands, optimises the current trick only (docs/rules.md section 9).

Per legal card: in each of N sampled deals (scrofazero.sampling.uniform.sample_owners) the later
seats of the trick answer greedily, the finished trick is valued for our team, the card's relief
is added; the sums are compared and ties broken with the rng. The search is the numba kernel in
greed_kernel.py; tests/helpers/greed_reference.py restates the rule slowly and must give equal
scores.

Choices the published rule left open (docs/rules.md section 9 states the result; the reference
makes the same ones):
- Trick value = change of the team difference (own team - other team) of the pile valuation
  when the trick is collected: the mid-game rule before all 16 scoring cards are captured, the
  final rule once they are (the engine's `returns()`). This equals the published formulas (points,
  doubled when the winner holds C10, 2 x points + winner's pile when C10 is in the trick) and
  is also exact for the all-hearts bonus. If C10 is in the trick, the winner's side also gets
  the points still to come, S = (-200 - base values of all captured piles) / 4, taken from the
  piles before this trick (the trick's own cards count as still to come).
- Relief uses the knowledge of the seat playing the card: a card is "unseen" to it when it is
  neither in its own hand nor played (finished tricks and the cards of this trick before it).
  The C-honour term is -r x (S + that seat's own pile value, mid-game rule).
- Simulated answers see the whole sampled deal (perfect information inside one sample, no
  sampling of their own); ties go to the lowest card index. The answers' own relief counts in
  their choice; only our card's relief is added to our score.
- Every sample adds our card's relief and the lead bonus, so the score is N x the mean value.
  Lead bonus (leading in tricks 1-3 only) = 30 x (unseen cards of the suit / 3 - own length).
- Last to play: one exact evaluation, no sampling; one legal card: played without sampling.
- Units: all terms are multiples of 1/4 point, the kernel adds integers in quarter points, so
  scores and root ties are exact; among exactly tied best cards the rng picks uniformly.

`play_probabilities` gives the chance of each legal card under this rule (exact when forced or
last to play, else a bootstrap estimate over per-deal scores), for inference about the deal
from Mr. Greed's observed plays.
"""

from __future__ import annotations

import dataclasses
from dataclasses import dataclass

import numpy as np

from scrofazero.agents.greed_kernel import BASE_RELIEF, greed_sample_scores_q, greed_scores_q
from scrofazero.games.gongzhu.cards import BASE_VALUE, NUM_CARDS, SCORING_CARDS, SUIT_MASK
from scrofazero.games.gongzhu.rules import InfoView
from scrofazero.games.gongzhu.scoring import MID_SCORE_LIST, pile_scores
from scrofazero.sampling.uniform import sample_owners
from scrofazero.settings import Count, check_bounds

__all__ = [
    "BASE_RELIEF",
    "GreedPlayModel",
    "GreedSettings",
    "MrGreed",
    "greed_models",
    "greed_scores",
    "play_probabilities",
    "play_probability",
    "points_to_come",
]

NO_OWNERS = np.full((0, NUM_CARDS), -1, dtype=np.int8)  # [0, 52] last to play: no samples
_BASE_OF_BIT = np.array([BASE_VALUE[c] for c in SCORING_CARDS])  # [16]
# _PILE_BASE[pile]: sum of base values of a 16-bit pile (no all-hearts bonus; C10 counts 0).
_PILE_BASE = (((np.arange(1 << 16)[:, None] >> np.arange(16)) & 1) @ _BASE_OF_BIT).tolist()


def points_to_come(piles) -> float:
    """S = (-200 - sum of all piles' base values) / 4, the average points still to come."""
    return (-200 - sum(_PILE_BASE[p] for p in piles)) / 4


def _kernel_args(view: InfoView, legal: list[int]) -> tuple:
    """Both kernels' arguments after `owners`: (seat, trick, hand, legal, bonus, ctx)."""
    played = 0
    for _, card in view.history:
        played |= 1 << card
    trick_mask = 0
    for card in view.trick:
        trick_mask |= 1 << card
    piles = view.piles
    s4q = -200 - _PILE_BASE[piles[0]] - _PILE_BASE[piles[1]] - _PILE_BASE[piles[2]] \
        - _PILE_BASE[piles[3]]  # 4 x points still to come
    scores = pile_scores(piles)
    before0 = scores[0] + scores[2] - scores[1] - scores[3]
    pv = [MID_SCORE_LIST[p] for p in piles]
    bonus = [0] * len(legal)
    if not view.trick and len(view.history) < 12:
        unseen = ((1 << NUM_CARDS) - 1) & ~view.hand & ~played
        for i, card in enumerate(legal):
            suit = SUIT_MASK[card // 13]
            # 30 x (unseen / 3 - own) points = 40 x unseen - 120 x own quarter points.
            bonus[i] = 40 * (unseen & suit).bit_count() - 120 * (view.hand & suit).bit_count()
    # Context vector in the kernel's layout: leader, played before this trick, team-0
    # valuation, 4 x points still to come, piles [4], mid-game pile values [4].
    ctx = np.array([view.leader, played & ~trick_mask, before0, s4q, *piles, *pv],
                   dtype=np.int64)  # [CTX_SIZE]
    return (view.seat, np.array(view.trick, dtype=np.int64), view.hand,
            np.array(legal, dtype=np.int64), np.array(bonus, dtype=np.int64), ctx)


def _scores_q(view: InfoView, legal: list[int], owners: np.ndarray) -> np.ndarray:
    """Kernel call: per-card summed scores [K] in quarter points."""
    return greed_scores_q(owners, *_kernel_args(view, legal))


def _check_owners(view: InfoView, owners) -> np.ndarray:
    owners = np.asarray(owners)
    if owners.ndim != 2 or owners.shape[1] != NUM_CARDS or owners.shape[0] < 1:
        raise ValueError(f"owners must have shape [D >= 1, 52], got {owners.shape}")
    if not np.issubdtype(owners.dtype, np.integer):
        raise ValueError(f"owners must hold integer seats, got dtype {owners.dtype}")
    owners = owners.astype(np.int8)
    played = view.played
    cards = np.arange(NUM_CARDS)
    is_played = (played >> cards) & 1 == 1  # [52]
    is_own = (view.hand >> cards) & 1 == 1  # [52]
    if np.any(owners[:, is_played] != -1):
        raise ValueError("owners must be -1 for every played card")
    if np.any(owners[:, is_own] != view.seat):
        raise ValueError(f"owners must give the viewer's own cards to seat {view.seat}")
    hidden = owners[:, ~is_played & ~is_own]  # [D, U]
    for seat in range(4):
        if seat == view.seat:
            if np.any(hidden == seat):
                raise ValueError(f"owners give unseen cards to the viewer's seat {seat}")
            continue
        held = hidden == seat
        if np.any(held.sum(axis=1) != view.hand_sizes[seat]):
            raise ValueError(f"owners must give seat {seat} {view.hand_sizes[seat]} cards")
        suits = cards[~is_played & ~is_own] // 13
        if np.any(held & ((view.voids[seat] >> suits) & 1 == 1)):
            raise ValueError(f"owners give seat {seat} a card of a suit it is void in")
    return owners


def greed_scores(view: InfoView, owners=None) -> tuple[list[int], np.ndarray]:
    """Mr. Greed's per-card scores for the seat to move.

    owners: [D, 52] sampled owners (sample_owners layout); ignored (may be None) when the seat
    is last to play. Returns (legal cards ascending, scores [K] float64 in points: summed over
    the D samples, or the single exact value when last to play).
    """
    if view.current_player != view.seat:
        raise ValueError(f"seat {view.seat} is not to move (seat {view.current_player} is)")
    legal = view.legal_actions()
    if not legal:
        raise ValueError(f"seat {view.seat} has no legal card: the game is over")
    if len(view.trick) == 3:
        owners = NO_OWNERS
    elif owners is None:
        raise ValueError("owners are required unless the seat is last to play")
    else:
        owners = _check_owners(view, owners)
    return legal, _scores_q(view, legal, owners) / 4.0


@dataclass
class GreedSettings:
    """Mr. Greed's settings (its keyword arguments)."""

    # sampled deals of the hidden hands per decision (docs/rules.md section 9)
    num_samples: Count = 20


@dataclass
class _Estimate:
    """The sizes of an estimate of Mr. Greed's play probabilities (play_probabilities)."""

    num_samples: Count  # Greed's deals per decision
    draws: Count  # deals sampled and scored (the bootstrap pool)
    bootstraps: Count  # simulated decisions averaged


class MrGreed:
    """Greedy one-trick player; `num_samples` deals of the hidden hands per decision."""

    name = "greed"

    def __init__(self, num_samples: int = 20):
        self.num_samples = check_bounds(GreedSettings(num_samples), "greed").num_samples

    def act(self, view: InfoView, rng: np.random.Generator) -> int:
        if view.current_player != view.seat:
            raise ValueError(f"seat {view.seat} is not to move (seat {view.current_player} is)")
        legal = view.legal_actions()
        if len(legal) == 1:
            return legal[0]
        if not legal:
            raise ValueError(f"seat {view.seat} has no legal card: the game is over")
        if len(view.trick) == 3:
            owners = NO_OWNERS
        else:
            owners = sample_owners(view, self.num_samples, rng)
        scores = _scores_q(view, legal, owners)  # [K] exact integers
        ties = np.flatnonzero(scores == scores.max())
        if len(ties) == 1:
            return legal[int(ties[0])]
        return legal[int(ties[rng.integers(len(ties))])]


def _tie_shares(scores: np.ndarray) -> np.ndarray:
    """Per row of scores [..., K]: 1/t for each of the t exactly tied best cards, else 0."""
    best = (scores == scores.max(axis=-1, keepdims=True)).astype(np.float64)
    return best / best.sum(axis=-1, keepdims=True)


def play_probabilities(view: InfoView, num_samples: int = 20, draws: int = 64,
                       bootstraps: int = 256, rng: np.random.Generator | None = None
                       ) -> tuple[list[int], np.ndarray]:
    """Probability that Mr. Greed (with `num_samples` samples) plays each legal card.

    Exact for a forced card and when last to play (Greed's exact scores, ties uniform).
    Otherwise a bootstrap estimate: `draws` uniform deals are scored once per deal, then each of
    `bootstraps` groups of `num_samples` of those deals (drawn with replacement) stands for one
    decision of Greed: its argmax card gets credit 1 (1/t each for t exact ties), and the
    credits are averaged. The pool of `draws` deals dominates the error: it fixes the mean score
    that Greed's sums scatter around, so on a close call a card's estimate is off by about
    0.4 x sqrt(num_samples / draws) (0.2 at the defaults, 0.03 at draws=4000), and a card Greed
    plays rarely can get 0.

    Args:
        view: the seat to move's information (view.seat must be view.current_player).
        num_samples: Greed's deals per decision (MrGreed's num_samples).
        draws: deals sampled and scored (the bootstrap pool).
        bootstraps: simulated decisions averaged.
        rng: the random source of the deals and groups (a fresh unseeded one if None).

    Returns:
        (legal cards ascending [K], probabilities [K] float64 summing to 1).
    """
    check_bounds(_Estimate(num_samples, draws, bootstraps), "")
    if view.current_player != view.seat:
        raise ValueError(f"seat {view.seat} is not to move (seat {view.current_player} is)")
    legal = view.legal_actions()
    if not legal:
        raise ValueError(f"seat {view.seat} has no legal card: the game is over")
    if len(legal) == 1:
        return legal, np.ones(1)
    if len(view.trick) == 3:
        return legal, _tie_shares(_scores_q(view, legal, NO_OWNERS))
    if rng is None:
        rng = np.random.default_rng()
    owners = sample_owners(view, draws, rng)  # [draws, 52]
    per_deal = greed_sample_scores_q(owners, *_kernel_args(view, legal))  # [draws, K]
    groups = rng.integers(draws, size=(bootstraps, num_samples))  # [B, N] deal indices
    sums = per_deal[groups].sum(axis=1)  # [B, K] exact integers, as Greed compares them
    return legal, _tie_shares(sums).mean(axis=0)


def play_probability(view: InfoView, card: int, **kwargs) -> float:
    """Probability that Mr. Greed plays `card` in `view` (play_probabilities for one card).

    Args:
        view: the seat to move's information.
        card: the card index 0..51 whose probability is wanted.
        **kwargs: play_probabilities' num_samples, draws, bootstraps, rng.

    Returns:
        The probability; 0.0 when `card` is not legal in `view` (no deal fits the play then),
        without sampling.
    """
    if card not in view.legal_actions():
        return 0.0
    legal, probs = play_probabilities(view, **kwargs)
    return float(probs[legal.index(card)])


class GreedPlayModel:
    """Mr. Greed's own program as a play model of the particle weigher
    (sampling/particles.py PlayModel): the probability that Mr. Greed with `num_samples`
    samples played the card it played, from its hand in a world (`play_probabilities`, a
    bootstrap over `draws` deals). Each row's estimate is seeded by (seed, ply, hand), so a
    world's weight does not depend on which other worlds were weighed with it, and kept in the
    hand's cache."""

    def __init__(self, num_samples: int = 20, draws: int = 128, bootstraps: int = 256,
                 seed: int = 0):
        check_bounds(_Estimate(num_samples, draws, 1), "")
        self.num_samples, self.draws = num_samples, draws
        self.bootstraps, self.seed = bootstraps, seed

    def _log_prob(self, public, t: int, mask: int) -> float:
        view = dataclasses.replace(public.views[t], hand=int(mask))
        card = int(public.cards[t])
        if card not in view.legal_actions():
            return -np.inf  # the world is impossible
        rng = np.random.default_rng([self.seed, t, mask & 0xFFFFFFFF, mask >> 32])
        p = play_probability(view, card, num_samples=self.num_samples, draws=self.draws,
                             bootstraps=self.bootstraps, rng=rng)
        return float(np.log(max(p, 1e-12)))  # an estimate of 0 is a rare play: floored later

    def log_probs(self, public, plies: np.ndarray, hands: np.ndarray) -> np.ndarray:
        bits = np.left_shift(np.uint64(1), np.arange(NUM_CARDS, dtype=np.uint64))
        masks = (np.asarray(hands, dtype=np.uint64) * bits).sum(axis=1)  # [R] hands as masks
        cache = public.cache.setdefault(("greed", self.num_samples, self.draws), {})
        out = np.empty(len(plies))
        for r, (t, mask) in enumerate(zip(plies.tolist(), masks.tolist())):
            if (t, mask) not in cache:
                cache[(t, mask)] = self._log_prob(public, t, mask)
            out[r] = cache[(t, mask)]
        return out


def greed_models(agents, **settings) -> dict:
    """Seat -> GreedPlayModel of every seat that `agents` (the players by seat) gives to a Mr.
    Greed, with its own num_samples; `settings` are GreedPlayModel's others."""
    return {seat: GreedPlayModel(agent.num_samples, **settings)
            for seat, agent in enumerate(agents) if isinstance(agent, MrGreed)}
