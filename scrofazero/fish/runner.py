"""`python evaluate.py game=fish mode=track|match`: the Fish reports.

track: the hand-prediction accuracy of the exact belief tracker on recorded human games
(fish/prediction/metric.py) next to plain counting; match: two player kinds as teams at every
configured table size (fish/match.py), win rates with 95% intervals.
"""

from __future__ import annotations

import dataclasses

from tqdm import tqdm

from scrofazero.fish.belief.evidence import AskModel
from scrofazero.fish.match import run_match
from scrofazero.fish.players.roster import FISH_PLAYERS
from scrofazero.fish.players.scorer import DEFAULT_MODEL
from scrofazero.fish.prediction.ask_fit import ask_statistics, fit_leave_one_out, grid_models
from scrofazero.fish.prediction.metric import evaluate_predictions, load_recordings
from scrofazero.fish.prediction.scoring import evaluate_predictor
from scrofazero.games.fish.transcripts import recording_paths

FISH_MODES = ("track", "match")


def evaluate_fish(cfg) -> dict:
    if cfg.mode not in FISH_MODES:
        raise ValueError(f"game=fish supports mode={' | mode='.join(FISH_MODES)}, "
                         f"got mode={cfg.mode!r}")
    return _track(cfg) if cfg.mode == "track" else _match(cfg)


def _track(cfg) -> dict:
    g = cfg.game.track
    paths = list(g.transcripts) if g.transcripts else recording_paths()
    games, issues = load_recordings(paths, tolerant=True)
    model = AskModel(g.ask_other, g.ask_lacks, g.ask_target)
    if g.fit_stride < 1:
        raise ValueError(f"game.track.fit_stride must be >= 1, got {g.fit_stride}")
    result = evaluate_predictions(games, soft=g.soft, model=model)
    if not result["predictions"]:
        # an accuracy of nothing is no result: refuse rather than report NaN with exit 0
        raise ValueError(f"no predictions: {', '.join(str(p) for p in paths)} (no event "
                         "after the deal line to predict from)")
    counting = evaluate_predictions(games, baseline=True)
    result["baseline"] = {"accuracy": counting["accuracy"],
                          "per_file": {k: v["accuracy"] for k, v in counting["per_file"].items()}}
    result["soft"] = g.soft
    result["ask_model"] = vars(model)
    result["ask_statistics"] = ask_statistics(games)
    result["issues"] = [str(issue) for issue in issues]
    print(f"Fish hand prediction: {len(games)} recorded games, every seat as observer, "
          f"{result['predictions']:,} predictions of cards the observer does not know")
    _print_rows("exact tracker" + ("" if model.neutral else f" with {model}")
                + (f", soft={g.soft:g}" if g.soft else ""), result, counting)
    if g.fit_ask_model:
        models = grid_models()
        with tqdm(total=len(models), disable=not cfg.progress, unit="model",
                  desc="ask model, leave-one-file-out") as bar:
            fitted = fit_leave_one_out(games, models, stride=g.fit_stride,
                                       progress=bar.update)
        result["fitted"] = fitted
        _print_rows("behaviour-aware tracker, weights fitted without the file", fitted, counting)
        for name, fold in fitted["folds"].items():
            print(f"    {name}: fitted on the others: {fold}")
    if cfg.predictor:
        result["predictor"] = _predictor_rows(cfg.predictor, games, result)
    stats = result["ask_statistics"]["total"]
    print(f"  asks {stats['asks']}: asker held no other card of the set "
          f"{stats['asker_no_other_card']}, "
          f"held the asked card {stats['asker_held_asked_card']}; target held another card "
          f"{stats['target_held_another_card']} "
          f"({stats['target_held_another_card'] / max(stats['asks'], 1):.3f}, "
          f"other opponents {stats['other_opponents_held_another_card'] or 0:.3f})")
    for issue in result["issues"]:
        print(f"  recording slip: {issue}")
    return result


def _predictor_rows(path: str, games, tracker: dict) -> dict:
    """The learned predictor (fish/prediction/scoring.py) on the same positions as the tracker rows
    above; its own tracker figures use the model's float32 tie rule (`tracker_matched`)."""
    scored = evaluate_predictor(path, games)
    matched = scored["tracker_matched"]
    print(f"  learned predictor {path}: accuracy {_share(scored['accuracy'])}; the seed's metric "
          f"{_share(scored['accuracy_incl_certain'])}; log-loss {_share(scored['log_loss'])}; "
          f"calibration error {scored['calibration']['ece']:.4f}")
    print(f"    vs the tracker above: seed's metric "
          f"{100 * (scored['accuracy_incl_certain'] - tracker['accuracy_incl_certain']):+.2f} "
          f"points, log-loss {scored['log_loss'] - tracker['log_loss']:+.4f}; vs its input (the "
          f"logic tracker, same tie rule): "
          f"{100 * (scored['accuracy_incl_certain'] - matched['accuracy_incl_certain']):+.2f} "
          "points")
    for name, entry in scored["per_file"].items():
        print(f"    {name}: {_share(entry['accuracy'])}, seed's metric "
              f"{_share(entry['accuracy_incl_certain'])}, log-loss {_share(entry['log_loss'])}")
    return scored


def _print_rows(title: str, result: dict, counting: dict) -> None:
    print(f"  {title}: accuracy {_share(result['accuracy'])} (plain counting "
          f"{_share(counting['accuracy'])}); the seed's metric (known cards included) "
          f"{_share(result['accuracy_incl_certain'])}; log-loss {_share(result['log_loss'])}")
    for name, entry in result["per_file"].items():
        print(f"    {name}: {_share(entry['accuracy'])} of {entry['predictions']:,}, seed's "
              f"metric {_share(entry['accuracy_incl_certain'])}, log-loss "
              f"{_share(entry['log_loss'])} "
              f"(counting {_share(counting['per_file'][name]['accuracy'])})")


def _share(accuracy) -> str:
    """An accuracy for the console; None (a file without predictions) as 'n/a'."""
    return "n/a" if accuracy is None else f"{accuracy:.4f}"


def _match(cfg) -> dict:
    names = list(cfg.players)
    if len(names) != 2 or any(name not in FISH_PLAYERS for name in names):
        raise ValueError(f"game=fish mode=match needs players=[A,B] with A, B in "
                         f"{tuple(FISH_PLAYERS)}, got players={names}")
    g = cfg.game.match
    players = cfg.game.player  # FishPlayers: each player's settings
    params = {"calls": g.calls, "ask_held_allowed": bool(g.ask_held_allowed)}
    kwargs = {name: {"settings": getattr(players, "logic" if name == "logic_open" else name)}
              for name in FISH_PLAYERS}
    checkpoint = cfg.checkpoint or DEFAULT_MODEL  # the learned player's scorer file
    tables = {}
    for size in g.table_sizes:
        calls: dict = {}  # the learned players' calls at this table size (fish/players/learned.py)
        kwargs["learned"].update(checkpoint=checkpoint, stats=calls)
        with tqdm(total=2 * g.games, disable=not cfg.progress, unit="game",
                  desc=f"{names[0]} vs {names[1]}, {size} players") as bar:
            tables[str(size)] = run_match(names, int(size), g.games, seed=cfg.seed,
                                          params_kwargs=params, player_kwargs=kwargs,
                                          max_moves=g.max_moves, progress=bar.update)
        if "learned" in names:
            tables[str(size)]["learned_calls"] = {
                "calls": calls.get("calls", 0), "right": calls.get("right", 0),
                "accuracy": calls["right"] / calls["calls"] if calls.get("calls") else None}
    print(f"Fish: {names[0]} (team A) vs {names[1]} (team B), each deal played twice with the "
          "teams swapped; win rate of A, draws count half")
    for size, r in tables.items():
        print(f"  {size} players: {r['win_rate']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] "
              f"over {r['games']} games (W {r['wins']} D {r['draws']} L {r['losses']}; sets "
              f"{r['mean_sets'][0]:.2f}-{r['mean_sets'][1]:.2f}; {r['mean_moves']:.0f} moves; "
              f"{r['seconds']:.0f} s)")
        if "learned_calls" in r:
            c = r["learned_calls"]
            print(f"    learned calls right: {c['right']} of {c['calls']}")
    return {"players": names, "games_per_table": 2 * g.games, "tables": tables,
            "settings": {**params, "max_moves": g.max_moves, "seed": cfg.seed,
                         "players": {name: dataclasses.asdict(getattr(cfg.game.player, name))
                                     for name in sorted({"logic" if n == "logic_open" else n
                                                         for n in names})},
                         **({"checkpoint": checkpoint} if "learned" in names else {})}}
