"""How people ask in the recorded games, and the behaviour-aware belief fitted to it.

`ask_statistics` counts, from the true hands, how often askers break or keep each rule the
AskModel weighs (another card of the set, not holding the asked card) and whom they ask (does
the target hold another card of the set, against the other opponents they could have asked).
`fit_leave_one_out` picks the AskModel weights on a grid by the log-loss of the true holder on
the other recordings, then scores each recording with the weights fitted without it.
"""

from __future__ import annotations

import itertools
from collections.abc import Callable, Sequence
from typing import Any

from scrofazero.fish.belief.evidence import AskModel
from scrofazero.fish.prediction.metric import RecordedGame, evaluate_game, summarize
from scrofazero.games.fish.cards import set_cards, set_of, team_of
from scrofazero.games.fish.events import Ask

GRID = {"other": (0.5, 0.75, 0.9, 0.97, 0.99), "lacks": (0.5, 0.75, 0.9, 0.97),
        "target": (0.5, 0.6, 0.7, 0.8)}


def ask_statistics(games: Sequence[RecordedGame]) -> dict:
    """Per file and in total: asks, hits, asks whose asker held no other card of the set (the
    another-card rule broken), asks for a card the asker held (trolling), asks whose target held
    another card of the set, and the same share for the other opponents with cards (the rate a
    target picked at random would have)."""
    per_file: dict[str, dict[str, Any]] = {}
    for game in games:
        n = hits = no_other = held = target_other = 0
        base, base_n = 0.0, 0
        for t, event in enumerate(game.events):
            if not isinstance(event, Ask):
                continue
            holder = game.holders[t]
            others = [c for c in set_cards(set_of(event.card)) if c != event.card]
            n += 1
            hits += event.success
            no_other += not any(holder[c] == event.asker for c in others)
            held += holder[event.card] == event.asker
            target_other += any(holder[c] == event.target for c in others)
            counts = [sum(1 for h in holder if h == s) for s in range(game.num_players)]
            rivals = [s for s in range(game.num_players)
                      if team_of(s) != team_of(event.asker) and s != event.target and counts[s]]
            if rivals:
                base += sum(any(holder[c] == s for c in others) for s in rivals) / len(rivals)
                base_n += 1
        per_file[game.name] = {"asks": n, "hits": hits, "asker_no_other_card": no_other,
                               "asker_held_asked_card": held,
                               "target_held_another_card": target_other,
                               "other_opponents_held_another_card": base / base_n if base_n
                               else None}
    total = {k: sum(v[k] for v in per_file.values())
             for k in ("asks", "hits", "asker_no_other_card", "asker_held_asked_card",
                       "target_held_another_card")}
    weights = [v["asks"] for v in per_file.values() if v["other_opponents_held_another_card"]
               is not None]
    rates = [v["other_opponents_held_another_card"] for v in per_file.values()
             if v["other_opponents_held_another_card"] is not None]
    total["other_opponents_held_another_card"] = (
        sum(w * r for w, r in zip(weights, rates)) / sum(weights) if weights else None)
    return {"per_file": per_file, "total": total}


def grid_models(grid: dict | None = None) -> list[AskModel]:
    grid = GRID if grid is None else grid
    return [AskModel(o, lk, tg) for o, lk, tg in itertools.product(grid["other"], grid["lacks"],
                                                                     grid["target"])]


def fit_leave_one_out(games: Sequence[RecordedGame], models: Sequence[AskModel],
                      stride: int = 4, observers: Sequence[int] | None = (0, 3, 5),
                      progress: Callable[[], None] | None = None) -> dict:
    """For each recording, the model of `models` with the least log-loss of the true holder on
    the other recordings (scored on every stride-th position for the given observers, to keep
    the grid affordable), then every recording scored in full (every position, every seat) with
    its fold's model. Returns {"folds": {file: model fields}, "per_file": {file: result},
    "grid": [(model fields, {file: log-loss})], plus the totals of summarize()}."""
    scores = []  # (model, {file: (loss_sum, predictions)})
    for model in models:
        per_file = {}
        for game in games:
            r = evaluate_game(game, observers=_seats(game, observers), model=model,
                              stride=stride)
            per_file[game.name] = (r["loss_sum"], r["predictions"])
        scores.append((model, per_file))
        if progress is not None:
            progress()
    folds = {}
    for game in games:
        def held_out_loss(entry, name=game.name):
            loss = sum(v[0] for k, v in entry[1].items() if k != name)
            count = sum(v[1] for k, v in entry[1].items() if k != name)
            return loss / max(count, 1)
        folds[game.name] = min(scores, key=held_out_loss)[0]
    per_file = {game.name: evaluate_game(game, model=folds[game.name]) for game in games}
    result = summarize(per_file)
    result["folds"] = {name: vars(model) for name, model in folds.items()}
    result["grid"] = [(vars(model), {k: v[0] / max(v[1], 1) for k, v in per_file_scores.items()})
                      for model, per_file_scores in scores]
    return result


def _seats(game: RecordedGame, observers):
    if observers is None:
        return None
    return [s for s in observers if s < game.num_players]
