"""A fingerprint of what the code does, to show that a refactor changed no behaviour.

    python benchmarks/fingerprint.py [--out PATH] [--only matrix,wpg,train,server,fish]
        [--keep DIR]

Parts (each deterministic: seeded, one worker, timing left out):
  matrix  evaluate.py --matrix players=[random,if,greed] on 64 standard deals: the margins and
          each pair's per-deal values (duplicate_match, as the matrix plays it)
  wpg     evaluate.py --wpg player=raw with the shipped network on 64 deals x 2: per-deal values
  train   train.py experiment=smoke for one batch, then resume=true to two, with a state file:
          sha256 of the network weights, optimiser, replay and rng after each, eval.jsonl less
          its timing (and so the time milestones: only the one at 0 minutes is sure to pass);
          --keep DIR keeps the run's folder as it was after the first batch (DIR/after_1) and the
          state file, so later code can be shown to resume them
  server  a seeded all-bot table (Mr. Greed and Mr. Random) at the table server: its record
          (deal, leader, each move's seat and card, scores), hashed
  fish    a seeded 6-player Fish game of `logic` against `random`: its events and score, hashed
  inference  the players' ways of drawing deals on 8 deals x 2 (the full player's default, the
          raw player with uniform, belief and oracle_important deals): per-deal values; and the
          card-location network's pipeline at toy size: 8 generated games (shard hash), a seeded
          fit of a small network (weights hash) and its report on those games
Writes the JSON to --out (default: print only); compare two with `diff`.
"""

from __future__ import annotations

import argparse
import asyncio
import hashlib
import json
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT))

import numpy as np  # noqa: E402
import torch  # noqa: E402

PARTS = ("matrix", "wpg", "train", "server", "fish", "inference")
TIMING = ("eval_seconds", "train_minutes")  # wall time: not behaviour
DEALS = 64


def sha(data) -> str:
    if not isinstance(data, bytes):
        data = json.dumps(data, sort_keys=True).encode()
    return hashlib.sha256(data).hexdigest()


def tensors_sha(tree) -> str:
    """sha256 over every tensor of a (nested) state dict, in key order, values as bytes."""
    h = hashlib.sha256()

    def visit(x, path):
        if isinstance(x, torch.Tensor):
            h.update(path.encode())
            h.update(x.detach().cpu().contiguous().numpy().tobytes())
        elif isinstance(x, dict):
            for k in sorted(x, key=str):
                visit(x[k], f"{path}.{k}")
        elif isinstance(x, (list, tuple)):
            for i, item in enumerate(x):
                visit(item, f"{path}[{i}]")
        else:
            h.update(f"{path}={x!r}".encode())

    visit(tree, "")
    return h.hexdigest()


def script(name: str, *args: str, cwd=ROOT) -> subprocess.CompletedProcess:
    proc = subprocess.run([sys.executable, str(ROOT / name), *args], cwd=cwd,
                          capture_output=True, text=True, check=False)
    if proc.returncode != 0:
        raise SystemExit(f"{name} {' '.join(args)} failed:\n{proc.stderr[-3000:]}")
    return proc


def evaluate_json(*args: str) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        out = Path(tmp) / "out.json"
        script("evaluate.py", *args, "workers=1", "progress=false", f"out={out}")
        return json.loads(out.read_text())


def part_matrix() -> dict:
    from scrofazero.eval.arena import duplicate_match
    from scrofazero.games.gongzhu.deals import load_deals

    result = evaluate_json("--matrix", "players=[random,if,greed]", f"deals={DEALS}")
    players = result["players"]
    deals = load_deals(limit=DEALS)
    per_deal = {}
    for i in range(len(players)):
        for j in range(i + 1, len(players)):
            match = duplicate_match(players[j], players[i], deals, seed=0, workers=1,
                                    progress=False)
            per_deal[f"{players[j]}_vs_{players[i]}"] = match.values.tolist()
    return {"players": players, "margin": result["margin"], "stderr": result["stderr"],
            "intransitivity": result.get("intransitivity"), "per_deal": per_deal}


def part_wpg() -> dict:
    result = evaluate_json("--wpg", "player=raw", f"checkpoint={ROOT / 'models' / 'scrofazero.pt'}",
                           f"deals={DEALS}")
    return {k: result[k] for k in ("player", "opponent", "wpg", "stderr", "deals", "values",
                                   "settings")}


def _run_state(run_dir: Path) -> dict:
    from scrofazero.nn.checkpoint import load_checkpoint

    payload = load_checkpoint(run_dir / "latest.pt", map_location="cpu")
    extra = payload.get("extra") or {}
    evals = [{k: v for k, v in json.loads(line).items() if k not in TIMING}
             for line in (run_dir / "eval.jsonl").read_text().splitlines()]
    return {"step": payload["step"], "games": extra.get("games"),
            "model_sha256": tensors_sha(payload["model"]),
            "optimizer_sha256": tensors_sha(payload["optimizer"]),
            "replay_sha256": sha(json.dumps([{k: (np.asarray(v).tobytes().hex()
                                                  if isinstance(v, np.ndarray) else v)
                                              for k, v in sorted(r.items()) if k != "seconds"}
                                             for r in extra.get("replay", [])])),
            "rng_state": sha(extra.get("rng_state")), "evals": evals,
            "files": sorted(p.name for p in run_dir.iterdir() if not p.name.startswith("."))}


def part_train(keep: Path | None) -> dict:
    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        state = tmp / "state.pt"
        args = ["experiment=smoke", "run=fp", f"checkpoint_dir={tmp / 'ckpt'}",
                f"log_dir={tmp / 'runs'}", "progress=false", "seed=7", "train.eval_every=1",
                "train.games_per_batch=2", f"train.state_file={state}"]
        run_dir = tmp / "ckpt" / "fp"
        script("train.py", *args, "train.max_batches=1")
        first = _run_state(run_dir)
        first["state_file_sha256"] = tensors_sha(torch.load(state, weights_only=False)["model"])
        shutil.copy(state, tmp / "state_after_1.pt")
        if keep is not None:
            if keep.exists():
                shutil.rmtree(keep)
            shutil.copytree(run_dir, keep / "after_1")
            shutil.copy(state, keep / "state_after_1.pt")
            (keep / "args.json").write_text(json.dumps(args))
        script("train.py", *args, "train.max_batches=2", "resume=true")
        second = _run_state(run_dir)
        # a new run folder continuing the state file of batch 1 (resume_from)
        state2 = tmp / "state2.pt"
        shutil.copy(tmp / "state_after_1.pt", state2)
        other = [a for a in args if not a.startswith(("run=", "train.state_file="))]
        script("train.py", *other, "run=fp2", f"resume_from={state2}", "train.max_batches=2")
        from_state = _run_state(tmp / "ckpt" / "fp2")
        return {"after_1": first, "after_2_resumed": second, "after_2_from_state": from_state}


def part_server() -> dict:
    from scrofazero.serve.gongzhu.hub import Hub, HubSettings
    from scrofazero.serve.gongzhu.messages import Create
    from scrofazero.serve.gongzhu.records import Records
    from scrofazero.serve.gongzhu.table import TableSettings

    with tempfile.TemporaryDirectory() as tmp:
        hub = Hub(Records(str(Path(tmp) / "games.sqlite")),
                  HubSettings(checkpoint=str(ROOT / "models" / "scrofazero_small.pt"),
                              table=TableSettings(move_deadline_s=60.0, next_hand_s=10.0),
                              seed=0))

        async def main():
            try:
                table, _ = await hub.create_table(Create(seats=["greed", "random", "greed",
                                                                "random"], hands=2, leader=1,
                                                         deal=17))
                await asyncio.wait_for(table.done.wait(), 300)
                return table
            finally:
                await hub.shutdown()

        table = asyncio.run(main())
        match = hub.records.match(table.match_id)
        games = []
        for summary in match["games"]:
            game = hub.records.game(summary["id"])
            games.append({"deal": game["deal"], "leader": game.get("leader"),
                          "deal_number": game.get("deal_number"), "hand": game.get("hand"),
                          "moves": [(m["ply"], m["seat"], m["card"], m["fallback"])
                                    for m in game["moves"]],
                          "result": {k: game[k] for k in game if k in (
                              "scores", "team", "returns", "status", "piles")}})
        record = {"totals": match["totals"], "status": match["status"], "games": games}
        return {"sha256": sha(record), "totals": match["totals"],
                "moves": sum(len(g["moves"]) for g in games)}


def part_fish() -> dict:
    from scrofazero.fish.match import play_move
    from scrofazero.fish.players.roster import make_fish_player
    from scrofazero.games.fish.rules import FishState, Params

    out = {}
    for n in (6, 8):
        params = Params(num_players=n)
        players = [make_fish_player("logic" if seat % 2 == 0 else "random", seed=11 + seat)
                   for seat in range(n)]
        state = FishState.deal(params, np.random.default_rng(5), first_player=1)
        for seat, player in enumerate(players):
            player.reset(n, seat, state.hand(seat), ask_held_allowed=params.ask_held_allowed,
                         ask_needs_other=params.ask_needs_other)
        events = []
        while not state.is_terminal:
            event = play_move(state, players, force_call=len(events) >= 1000)
            events.append(repr(event))
            for player in players:
                player.observe(event)
        record = {"events": events, "score": list(state.score),
                  "returns": [float(r) for r in state.returns()]}
        out[f"players_{n}"] = {"sha256": sha(record), "score": record["score"],
                               "moves": len(events)}
    return out


INFERENCE_DEALS = 8


def part_inference() -> dict:
    out = {}
    shipped = f"checkpoint={ROOT / 'models' / 'scrofazero.pt'}"
    rows = {"full": [], "raw_uniform": ["player=raw", "raw.sampling.method=uniform"],
            "raw_belief": ["player=raw", "raw.sampling.method=belief"],
            "raw_oracle_important": ["player=raw", "raw.sampling.method=oracle_important"]}
    for name, overrides in rows.items():
        result = evaluate_json("--wpg", shipped, f"deals={INFERENCE_DEALS}", *overrides)
        out[name] = {k: result[k] for k in ("wpg", "values", "settings")}
    out["belief_pipeline"] = _belief_pipeline()
    return out


def _belief_pipeline() -> dict:
    """Generate 8 games, fit a small network on them for a few steps, report on them."""
    from scrofazero.nn.belief import load_belief
    from scrofazero.train.belief_report import report
    from scrofazero.train.hidden_games import generate
    from scrofazero.train.inference_fit import TASKS, InferenceFitConfig, fit

    with tempfile.TemporaryDirectory() as tmp:
        tmp = Path(tmp)
        mix = "greed:raw=1,belief_raw:if=1,random:greed=1"
        generate(tmp / "games", 8, mix, seed=5, shard_games=4, progress=False,
                 checkpoint=str(ROOT / "models" / "scrofazero.pt"))
        shards = {p.name: sha(p.read_bytes()) for p in sorted((tmp / "games").glob("*.npz"))}
        settings = InferenceFitConfig(data=[str(tmp / "games")], hidden=32, num_blocks=1,
                                      epochs=1.0, batch=64, lr=1e-3, val_fraction=0.3,
                                      dropout=0.0, weight_decay=0.0)
        fit(settings, TASKS["belief"], 3, tmp / "net.pt")
        net = tensors_sha(load_belief(tmp / "net.pt").net.state_dict())
        result = report([tmp / "games"], tmp / "net.pt", games=8, val_fraction=0.3)
        return {"shards": shards, "net_sha256": net, "report_sha256": sha(result),
                "report_all": result["all"]}


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--out", help="write the fingerprint here as JSON")
    parser.add_argument("--only", help=f"comma-separated parts of {','.join(PARTS)}")
    parser.add_argument("--keep", help="keep the training run's folder after batch 1 here")
    args = parser.parse_args()
    parts = PARTS if not args.only else tuple(p.strip() for p in args.only.split(","))
    unknown = [p for p in parts if p not in PARTS]
    if unknown:
        parser.error(f"unknown parts {unknown}; choose from {','.join(PARTS)}")
    result = {}
    for part in parts:
        if part == "train":
            result[part] = part_train(Path(args.keep) if args.keep else None)
        else:
            result[part] = globals()[f"part_{part}"]()
        print(f"{part}: done", file=sys.stderr, flush=True)
    text = json.dumps(result, indent=1, sort_keys=True)
    print(text)
    if args.out:
        Path(args.out).write_text(text + "\n")


if __name__ == "__main__":
    main()
