"""Fish speed: random games per second and belief-tracker updates per second, in one run.

Random games: `--games` seeded games per table size between random players through the match
runner (fish/match.py), so moves per second is the engine plus views. Tracker: every
shipped recording replayed from every seat's view, one exact update (a full recount) per event,
probabilities read after each. Anchors measured beside them: an engine move (tracker update
cost in engine moves) and, on late positions small enough to enumerate, the brute-force
reference (fish/belief/reference.py) against the tracker on the same positions.
The behaviour-aware tracker (an AskModel, `--ask-model other,lacks,target`) is timed the same
way beside the logic one.
Learners: self-play games/s of `train.py game=fish` (a fresh scorer, the default
settings, `--selfplay-games` per table size) and its update time; the hand predictor's
simulated training games/s (fish/prediction/data.py), training and inference samples/s (one
sample = one observer's prediction of every card before one event) and a play-time session's
update latency (tracker plus network per event, fish/prediction/session.py HandPredictor).
Usage: python benchmarks/fish.py --json PATH [--games 200] [--ask-model 0.75,0.75,0.5]
       [--selfplay-games 4] [--no-learners]
"""

from __future__ import annotations

import argparse
import time

import numpy as np

from scrofazero.atomic import write_json_atomic
from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.fish.belief.evidence import AskModel
from scrofazero.fish.belief.reference import enumerate_consistent_deals, reference_probabilities
from scrofazero.fish.match import play_game
from scrofazero.fish.players.logic import RandomPlayer
from scrofazero.fish.prediction.metric import RecordedGame, load_recordings
from scrofazero.games.fish.rules import Params

import torch
from types import SimpleNamespace

from scrofazero.fish.config import FishConfig
from scrofazero.fish.learning.selfplay import Tally, play_training_game, update
from scrofazero.fish.learning.train import run_meta
from scrofazero.fish.players.scorer import Scorer
from scrofazero.fish.prediction.data import simulate_game, to_recorded_game
from scrofazero.fish.prediction.network import DEFAULT_MODEL as PREDICTOR, load_predictor
from scrofazero.fish.prediction.session import HandPredictor, predict_game
from scrofazero.fish.prediction.training import PredictorTraining, train_on

DEFAULT_MODEL = "0.75,0.75,0.5"  # the weights most folds fitted on the recordings (docs/fish.md)


def random_games(num_players: int, games: int) -> dict:
    params = Params(num_players=num_players)
    moves = 0
    started = time.perf_counter()
    for seed in range(games):
        players = [RandomPlayer(seed=seed * 16 + s) for s in range(num_players)]
        moves += play_game(params, players, seed=seed, first_player=seed % num_players)["moves"]
    seconds = time.perf_counter() - started
    return {"games": games, "games_per_s": games / seconds, "moves_per_s": moves / seconds,
            "mean_moves": moves / games}


def _tracker(game: RecordedGame, seat: int, model: AskModel | None = None) -> BeliefTracker:
    return BeliefTracker(game.num_players, seat, game.hands[seat],
                         ask_held_allowed=game.ask_held_allowed,
                         ask_needs_other=game.ask_needs_other, model=model)


def tracker_updates(model: AskModel | None = None) -> tuple[dict, list]:
    """Every recording from every seat; returns timings and late positions for the anchor.
    One seat of the first recording is replayed untimed first (numba compiles on first use).
    model: the behaviour-aware ask model (None: the logic tracker)."""
    games, _ = load_recordings()
    tracker = _tracker(games[0], 0, model)
    for event in games[0].events:  # every kernel's first call
        tracker.update(event)
        tracker.probabilities()
    times, late = [], []
    for game in games:
        for seat in range(game.num_players):
            tracker = _tracker(game, seat, model)
            for i, event in enumerate(game.events):
                started = time.perf_counter()
                tracker.update(event)
                tracker.probabilities()
                times.append(time.perf_counter() - started)
                if len(late) < 40 and i > 0.8 * len(game.events) and seat == 0:
                    late.append((game, seat, i + 1))
    times = np.array(times)
    return ({"updates": len(times), "updates_per_s": len(times) / times.sum(),
             "mean_ms": 1e3 * times.mean(), "p99_ms": 1e3 * np.quantile(times, 0.99),
             "max_ms": 1e3 * times.max()}, late)


def reference_anchor(late: list) -> dict:
    """Tracker vs brute-force enumeration on the late positions the reference can handle."""
    fast = slow = 0.0
    positions = 0
    for game, seat, length in late:
        events = game.events[:length]
        started = time.perf_counter()
        try:
            deals = enumerate_consistent_deals(
                game.num_players, seat, game.hands[seat], events, limit=20_000,
                ask_held_allowed=game.ask_held_allowed, ask_needs_other=game.ask_needs_other)
        except ValueError:
            continue  # too many deals to enumerate
        reference = reference_probabilities(game.num_players, deals)[0]
        slow += time.perf_counter() - started
        tracker = _tracker(game, seat)
        for event in events[:-1]:
            tracker.update(event)
        started = time.perf_counter()  # the tracker's computation of the same position
        tracker.update(events[-1])
        exact = tracker.initial_probabilities()
        fast += time.perf_counter() - started
        assert np.allclose(exact, reference, atol=1e-9), "tracker and reference disagree"
        positions += 1
    return {"positions": positions, "reference_seconds_per_position": slow / max(positions, 1),
            "tracker_seconds_per_update": fast / max(positions, 1),
            "speedup_vs_reference": slow / fast if fast else None}


def self_play(games: int) -> dict:
    """train.py game=fish's self-play with a fresh scorer: games per table size, then one
    update on all their decisions."""
    meta = run_meta(SimpleNamespace(game=FishConfig()))
    torch.manual_seed(0)
    net = Scorer(hidden=meta["hidden"], alpha=meta["alpha"])
    out, batch = {}, []
    for size in meta["train_sizes"]:
        meta_n = {**meta, "train_sizes": [size]}
        started = time.perf_counter()
        for i in range(games):
            batch += play_training_game(net, meta_n, i, 0.0, Tally())
        seconds = time.perf_counter() - started
        out[str(size)] = {"games": games, "games_per_s": games / seconds}
    optimizer = torch.optim.Adam(net.parameters(), lr=meta["lr"])
    started = time.perf_counter()
    update(net, optimizer, batch, meta)
    out["update"] = {"decisions": len(batch), "seconds": time.perf_counter() - started}
    return out


def predictor_speed() -> dict:
    """The hand predictor: simulated training games (the generator's mix of kinds), training
    and inference samples/s on them, and a session's per-event latency."""
    kinds = {6: ["imitation", "logic"] * 3, 8: ["imitation", "logic", "imitation", "random"] * 2}
    games, sim = [], {}
    for size, seeds in ((6, 3), (8, 2)):
        started = time.perf_counter()
        made = [simulate_game(size, kinds[size], seed=s) for s in range(seeds)]
        sim[str(size)] = {"games": seeds, "games_per_s": seeds / (time.perf_counter() - started)}
        games += made
    samples = sum(g.num_steps * g.num_players for g in games)
    model = load_predictor(PREDICTOR)
    started = time.perf_counter()
    with torch.no_grad():
        for g in games:
            for o in range(g.num_players):
                predict_game(model, g, o)
    infer = samples / (time.perf_counter() - started)
    cfg = PredictorTraining(steps=10, batch=8, eval_every=1000, table_sizes=[6, 8], seed=0)
    mean_steps = {n: np.mean([g.num_steps for g in games if g.num_players == n]) for n in (6, 8)}
    trained = sum(cfg.batch * mean_steps[(6, 8)[k % 2]] for k in range(1, cfg.steps + 1))
    started = time.perf_counter()
    train_on(model, games, cfg)  # a step: `batch` whole sequences of one table size
    train_s = time.perf_counter() - started
    game = to_recorded_game(games[0])
    session = HandPredictor(load_predictor(PREDICTOR), game.num_players, 0, game.hands[0])
    times = []
    for event in game.events:
        started = time.perf_counter()
        session.update(event)
        session.probabilities()
        times.append(time.perf_counter() - started)
    times = np.array(times[1:])  # the first includes one-off set-up
    return {"simulated_games": sim, "inference_samples_per_s": infer,
            "training_samples_per_s": trained / train_s,
            "training_seconds_per_step": train_s / cfg.steps,
            "session_update_ms": {"mean": 1e3 * times.mean(),
                                  "p99": 1e3 * np.quantile(times, 0.99),
                                  "max": 1e3 * times.max()}}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--json", required=True)
    parser.add_argument("--games", type=int, default=200)
    parser.add_argument("--ask-model", default=DEFAULT_MODEL,
                        help="other,lacks,target weights of the behaviour-aware tracker timed "
                             "beside the logic one")
    parser.add_argument("--selfplay-games", type=int, default=4)
    parser.add_argument("--no-learners", action="store_true")
    args = parser.parse_args()
    torch.set_num_threads(1)
    model = AskModel(*(float(x) for x in args.ask_model.split(",")))
    result = {"random_games": {str(n): random_games(n, args.games) for n in (6, 8)}}
    for n, r in result["random_games"].items():
        print(f"random play, {n} players: {r['games_per_s']:.1f} games/s, "
              f"{r['moves_per_s']:.0f} moves/s ({r['mean_moves']:.0f} moves per game)")
    result["tracker"], late = tracker_updates()
    t = result["tracker"]
    print(f"exact tracker on the recordings: {t['updates_per_s']:.1f} updates/s over "
          f"{t['updates']} updates (mean {t['mean_ms']:.1f} ms, p99 {t['p99_ms']:.1f} ms, "
          f"max {t['max_ms']:.1f} ms)")
    result["tracker_ask_model"], _ = tracker_updates(model)
    result["ask_model"] = vars(model)
    t = result["tracker_ask_model"]
    print(f"behaviour-aware tracker ({model}): {t['updates_per_s']:.1f} updates/s (mean "
          f"{t['mean_ms']:.1f} ms, p99 {t['p99_ms']:.1f} ms, max {t['max_ms']:.1f} ms)")
    t = result["tracker"]
    move_s = 1.0 / result["random_games"]["8"]["moves_per_s"]
    result["tracker_update_in_engine_moves"] = (t["mean_ms"] / 1e3) / move_s
    print(f"  one update costs {result['tracker_update_in_engine_moves']:.0f} engine moves")
    result["reference_anchor"] = reference_anchor(late)
    a = result["reference_anchor"]
    if a["positions"]:
        print(f"  brute-force reference on {a['positions']} late positions: "
              f"{a['reference_seconds_per_position']:.3f} s each; tracker "
              f"{a['speedup_vs_reference']:.0f}x faster (same probabilities)")
    if not args.no_learners:
        result["self_play"] = self_play(args.selfplay_games)
        for n in ("6", "8"):
            print(f"train.py game=fish self-play, {n} players: "
                  f"{result['self_play'][n]['games_per_s']:.2f} games/s")
        u = result["self_play"]["update"]
        print(f"  one update on {u['decisions']} decisions: {u['seconds']:.2f} s")
        result["predictor"] = p = predictor_speed()
        print("hand predictor: simulated training games "
              + ", ".join(f"{n} players {r['games_per_s']:.3f} games/s"
                          for n, r in p["simulated_games"].items())
              + f"; training {p['training_samples_per_s']:.0f} samples/s "
              f"({p['training_seconds_per_step']:.2f} s per step of 8 sequences); inference "
              f"{p['inference_samples_per_s']:.0f} samples/s; a session's update (tracker + "
              f"network) mean {p['session_update_ms']['mean']:.1f} ms, p99 "
              f"{p['session_update_ms']['p99']:.1f} ms")
    print(f"wrote {write_json_atomic(args.json, result)}")


if __name__ == "__main__":
    main()
