"""How the recorded humans ask (`measure_habits`): rates of hits, held cards and certain misses
over the recorded asks, and the conditional logit over the legal asks on the imitation player's
features (fish/players/imitation.py: HABIT_FEATURES, DEFAULT_HABITS were fitted here), from each
asker's true hand and exact belief before its ask; also run on simulated games to check the
imitation."""

from __future__ import annotations

import contextlib
from collections.abc import Sequence

import numpy as np
import torch

from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.fish.players.imitation import HABIT_FEATURES, ask_features
from scrofazero.fish.prediction.data import GameArrays, to_recorded_game
from scrofazero.games.fish.cards import set_cards, set_of, team_of
from scrofazero.games.fish.events import Ask, Event


def _recording_candidates(holders: Sequence[int], asker: int, num_players: int):
    """Every ask the recording rules allow `asker` with the true cards `holders` (any card of a
    set it holds, held ones included, from an opponent with cards)."""
    hand = [c for c, h in enumerate(holders) if h == asker]
    held_sets = sorted({set_of(c) for c in hand})
    targets = [t for t in range(num_players)
               if team_of(t) != team_of(asker) and any(h == t for h in holders)]
    return hand, [(t, c) for t in targets for s in held_sets for c in set_cards(s)]


def measure_habits(games: Sequence, iterations: int = 200,
                   kinds: set | None = None) -> dict:
    """The asking habits in `games` (RecordedGames, e.g. the recordings, whose askers' beliefs
    are computed here, or GameArrays of simulated games, whose recorded beliefs are used), from
    each asker's true hand and exact belief before its ask: rates (hit, held card, held card
    that is its only one of the set, cards of the set held besides the asked one, target asked
    in the set before, certain misses) and the conditional logit over the legal asks on
    HABIT_FEATURES fitted by maximum likelihood (weights, log-likelihood per ask against
    uniform choice among the legal asks). kinds: count only askers of these player kinds
    (GameArrays only)."""
    feats, chosen, skipped = [], [], 0
    rates = {"asks": 0, "hits": 0, "held": 0, "held_only": 0, "certain_miss": 0,
             "target_asked_set": 0}
    own = np.zeros(6, np.int64)
    for item in games:
        if isinstance(item, GameArrays):
            game, recorded, seat_kinds = to_recorded_game(item), item.probs, item.kinds
        else:
            game, recorded, seat_kinds = item, None, ()
        n = game.num_players
        trackers = [] if recorded is not None else [
            BeliefTracker(n, s, game.hands[s], ask_held_allowed=game.ask_held_allowed,
                          ask_needs_other=game.ask_needs_other) for s in range(n)]
        asked_sets: list[set[int]] = [set() for _ in range(n)]
        prev: Event | None = None
        for t, event in enumerate(game.events):
            counted = kinds is None or (bool(seat_kinds) and isinstance(event, Ask)
                                        and seat_kinds[event.asker] in kinds)
            if isinstance(event, Ask) and counted:
                hand, cands = _recording_candidates(game.holders[t], event.asker, n)
                last = ((prev.target, set_of(prev.card)) if isinstance(prev, Ask)
                        and prev.asker == event.asker else None)
                belief = (recorded[event.asker, t].astype(np.float64) if recorded is not None
                          else trackers[event.asker].probabilities())
                f = ask_features(cands, belief, hand, asked_sets, last)
                pick = (event.target, event.card)
                row = None
                if pick in cands:
                    row = f[cands.index(pick)]
                    feats.append(f)
                    chosen.append(cands.index(pick))
                else:
                    skipped += 1
                rates["asks"] += 1
                rates["hits"] += event.success
                held = event.card in hand
                rates["held"] += held
                others = sum(1 for c in hand if set_of(c) == set_of(event.card)) - held
                rates["held_only"] += held and others == 0
                own[others] += 1
                rates["certain_miss"] += bool(row is not None and row[1])
                rates["target_asked_set"] += set_of(event.card) in asked_sets[event.target]
            if isinstance(event, Ask):
                asked_sets[event.asker].add(set_of(event.card))
            for tracker in trackers:
                # a slip this seat's tracker cannot place: its belief stays as it was
                with contextlib.suppress(ValueError):
                    tracker.update(event)
            prev = event
    weights, loglik, null = fit_choice_model(feats, chosen, iterations)
    asks = rates["asks"]
    return {"features": HABIT_FEATURES, "weights": [round(w, 2) for w in weights],
            "loglik_per_ask": loglik, "uniform_loglik_per_ask": null, "skipped": skipped,
            "asks": asks, "hit_rate": rates["hits"] / asks, "held_rate": rates["held"] / asks,
            "held_only_rate": rates["held_only"] / asks,
            "certain_miss_rate": rates["certain_miss"] / asks,
            "target_asked_set_rate": rates["target_asked_set"] / asks,
            "own_in_set": (own / asks).round(4).tolist()}


def fit_choice_model(feats: Sequence[np.ndarray], chosen: Sequence[int],
                     iterations: int = 200) -> tuple[list[float], float, float]:
    """Maximum-likelihood weights w of P(choice) = softmax(feats @ w) (L-BFGS); returns (w, mean
    log-likelihood per choice, mean log-likelihood of a uniform choice)."""
    sizes = np.array([len(f) for f in feats])
    x = np.zeros((len(feats), sizes.max(), feats[0].shape[1]))
    for i, f in enumerate(feats):
        x[i, :len(f)] = f
    x = torch.tensor(x)
    pad = torch.tensor(np.arange(sizes.max())[None, :] >= sizes[:, None])
    pick = torch.tensor(np.asarray(chosen))[:, None]
    w = torch.zeros(x.shape[2], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=iterations, line_search_fn="strong_wolfe")

    def nll():
        opt.zero_grad()
        scores = (x @ w).masked_fill(pad, -torch.inf)
        loss = (torch.logsumexp(scores, 1) - scores.gather(1, pick)[:, 0]).mean()
        loss.backward()
        return loss

    opt.step(nll)
    loss = float(nll().detach())
    return w.detach().tolist(), -loss, float(-np.log(sizes).mean())
