"""`python evaluate.py game=fish mode=track|match`: the Fish reports.

track: the hand-prediction accuracy of the exact belief tracker on recorded human games
(fish/prediction.py) next to plain counting; match: two player kinds as teams at every
configured table size (fish/match.py), win rates with 95% intervals.
"""

from __future__ import annotations

from tqdm import tqdm

from scrofazero.fish.match import run_match
from scrofazero.fish.players import FISH_PLAYERS
from scrofazero.fish.prediction import evaluate_predictions, load_recordings
from scrofazero.games.fish.transcripts import recording_paths

FISH_MODES = ("track", "match")


def run_fish(cfg) -> dict:
    if cfg.mode not in FISH_MODES:
        raise ValueError(f"game=fish supports mode={' | mode='.join(FISH_MODES)}, got mode={cfg.mode!r}")
    return _track(cfg) if cfg.mode == "track" else _match(cfg)


def _track(cfg) -> dict:
    paths = list(cfg.game.transcripts) if cfg.game.transcripts else recording_paths()
    games, issues = load_recordings(paths, tolerant=True)
    result = evaluate_predictions(games, soft=cfg.game.soft)
    if not result["predictions"]:
        # an accuracy of nothing is no result: refuse rather than report NaN with exit 0
        raise ValueError(f"no predictions: {', '.join(str(p) for p in paths)} (no event "
                         "after the deal line to predict from)")
    counting = evaluate_predictions(games, baseline=True)
    result["baseline"] = {"accuracy": counting["accuracy"],
                          "per_file": {k: v["accuracy"] for k, v in counting["per_file"].items()}}
    result["soft"] = cfg.game.soft
    result["issues"] = [str(issue) for issue in issues]
    print(f"Fish hand prediction: {len(games)} recorded games, every seat as observer, "
          f"{result['predictions']:,} predictions of cards the observer does not know")
    print(f"  exact tracker (soft={cfg.game.soft:g}): accuracy {_share(result['accuracy'])} "
          f"(plain counting {_share(counting['accuracy'])})")
    for name, entry in result["per_file"].items():
        print(f"    {name}: {_share(entry['accuracy'])} of {entry['predictions']:,} "
              f"(counting {_share(result['baseline']['per_file'][name])})")
    print(f"  scored over every card outside the observer's hand, known ones included: "
          f"{_share(result['accuracy_incl_certain'])}")
    for issue in result["issues"]:
        print(f"  recording slip: {issue}")
    return result


def _share(accuracy) -> str:
    """An accuracy for the console; None (a file without predictions) as 'n/a'."""
    return "n/a" if accuracy is None else f"{accuracy:.4f}"


def _match(cfg) -> dict:

    names = list(cfg.players)
    if len(names) != 2 or any(name not in FISH_PLAYERS for name in names):
        raise ValueError(f"game=fish mode=match needs players=[A,B] with A, B in {FISH_PLAYERS}, "
                         f"got players={names}")
    if cfg.game.games < 1:
        raise ValueError(f"game.games must be >= 1, got {cfg.game.games}")
    g = cfg.game
    params = {"calls": g.calls, "ask_held_allowed": bool(g.ask_held_allowed)}
    kwargs = {"random": {"call_prob": float(g.random_call_prob)},
              "logic": {"soft": float(g.soft), "hide_margin": float(g.hide_margin)},
              "logic_open": {"soft": float(g.soft)}}
    tables = {}
    for size in g.table_sizes:
        with tqdm(total=2 * cfg.game.games, disable=not cfg.progress, unit="game",
                  desc=f"{names[0]} vs {names[1]}, {size} players") as bar:
            tables[str(size)] = run_match(names, int(size), cfg.game.games, seed=cfg.seed,
                                          params_kwargs=params, player_kwargs=kwargs,
                                          max_moves=g.max_moves, progress=bar.update)
    print(f"Fish: {names[0]} (team A) vs {names[1]} (team B), each deal played twice with the "
          "teams swapped; win rate of A, draws count half")
    for size, r in tables.items():
        print(f"  {size} players: {r['win_rate']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}] "
              f"over {r['games']} games (W {r['wins']} D {r['draws']} L {r['losses']}; sets "
              f"{r['mean_sets'][0]:.2f}-{r['mean_sets'][1]:.2f}; {r['mean_moves']:.0f} moves; "
              f"{r['seconds']:.0f} s)")
    return {"players": names, "games_per_table": 2 * cfg.game.games, "tables": tables,
            "settings": {**params, "soft": g.soft, "max_moves": g.max_moves,
                         "hide_margin": g.hide_margin,
                         "random_call_prob": g.random_call_prob, "seed": cfg.seed}}
