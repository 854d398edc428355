"""`python train.py game=fish`: the learned Fish player (fish/players/learned.py) by self-play
REINFORCE (fish/learning/selfplay.py, settings `game.selfplay`), or with game.learner=predictor
the hand predictor (fish/prediction/training.py, settings `game.predictor`).

The self-play run (its folder and lock, fresh or resumed, logs, tensorboard) is the run
harness's (scrofazero/runs.py). Files: `checkpoint_dir/run/latest.pt` (weights, Adam state,
update and game counts inside the harness's envelope: the run's settings and random states;
written to a temporary file and renamed), `model.pt` (weights only, what
`evaluate.py ... players=[learned,logic] checkpoint=PATH` reads; so does latest.pt),
`eval.jsonl` (win rate against the logic player at each eval point) and `train.jsonl` (one line
per update); tensorboard under `log_dir/run`. An update's lines are written before its
checkpoint, and on resume the harness drops the lines and events past the checkpoint.
`resume=true` continues a run up to `game.selfplay.updates` in total and ends with exactly the
weights and logs an uninterrupted run gives (every game's randomness is seeded by
(game.selfplay.seed, game index)); without it an existing run is refused. Settings that define
the run (run_meta) are compared with the checkpoint's, `resume_overrides=[game.selfplay.lr,...]`
allowing named ones. A checkpoint written before the settings were split into parts (its
settings `game.lr`, ..., `train.seed`) is read with its settings under today's names.
"""

from __future__ import annotations

import json
import time
from pathlib import Path
from typing import Any

import numpy as np
import torch
from pydantic import BaseModel, ValidationError
from tqdm import tqdm

from scrofazero.fish.learning.selfplay import Tally, helping_probability, play_training_game, update
from scrofazero.fish.match import run_match
from scrofazero.fish.players.scorer import Scorer, model_payload, read_payload, scorer_from_payload
from scrofazero.fish.prediction.training import train_predictor
from scrofazero.run_lock import RunLock
from scrofazero.runs import (
    Envelope,
    RunFolder,
    random_states,
    read_envelope,
    resume_or_start,
    write_torch,
)

OPPONENTS = ("self", "logic")
CALL_CHECKS = ("every_seat", "mover")
CHECKPOINT = "latest.pt"
MODEL = "model.pt"
TRAINER_FORMAT = "scrofazero fish trainer"
GAME = "fish"
LOGS = {"train.jsonl": "update", "eval.jsonl": "update"}  # jsonl logs, key of a line's step


LEARNERS = ("player", "predictor")


def run_fish_training(cfg) -> dict:
    """train.py game=fish: the trainer game.learner names; its settings were checked against
    FishConfig's bounds before (entry.py)."""
    if cfg.game.learner == "predictor":
        return _train_predictor(cfg)
    torch.set_num_threads(1)  # a tiny network: threads only cost on a shared CPU
    with RunFolder(Path(cfg.checkpoint_dir) / cfg.run, Path(cfg.log_dir) / cfg.run,
                   logs=LOGS) as folder:
        return _train(cfg, folder)


def _train_predictor(cfg) -> dict:
    """`game.learner=predictor`: the hand predictor (fish/prediction/training.py) on simulated
    games with the game.predictor settings, saved as checkpoint_dir/run/predictor.pt (refused
    if there, as a finished run)."""
    out = Path(cfg.checkpoint_dir) / cfg.run / "predictor.pt"
    if out.exists():
        raise ValueError(f"{out} exists: a predictor run is not resumed (it takes minutes); "
                         "choose another run= or delete it")
    with RunLock(out.parent):
        path = train_predictor(cfg.game.predictor, out,
                               progress=(print if cfg.progress else None))
    print(f"Fish predictor saved to {path}; score it with: python evaluate.py game=fish "
          f"mode=track model={path}")
    return {"predictor": str(path)}


def run_meta(cfg) -> dict:
    """The settings a run is defined by (checked on resume; game.selfplay.updates may grow),
    flat: the trainer's own record of them (kept in this shape in every checkpoint)."""
    m, g = cfg.game.match, cfg.game.selfplay
    return {"train_sizes": [int(n) for n in g.train_sizes], "calls": m.calls,
            "ask_held_allowed": bool(m.ask_held_allowed), "opponent": g.opponent,
            "games_per_update": int(g.games_per_update), "lr": float(g.lr),
            "hidden": int(g.hidden), "alpha": float(g.alpha), "gamma": float(g.gamma),
            "hit_reward": float(g.hit_reward), "win_reward": float(g.win_reward),
            "value_weight": float(g.value_weight), "entropy_weight": float(g.entropy_weight),
            "helping": [float(h) for h in g.helping], "max_moves": int(m.max_moves),
            "call_checks": g.call_checks,
            "seed": int(g.seed),
            **({"init_from": str(g.init_from)} if g.init_from else {})}


MATCH_KEYS = ("calls", "ask_held_allowed", "max_moves")  # run_meta's keys of game.match


def run_settings(meta: dict) -> dict:
    """run_meta as the settings the harness compares, named as the config names them
    (game.match.calls, game.selfplay.lr, ...)."""
    return {"game": {"match": {k: meta[k] for k in MATCH_KEYS},
                     "selfplay": {k: v for k, v in meta.items() if k not in MATCH_KEYS}}}


def _train(cfg, folder: RunFolder) -> dict:
    g = cfg.game.selfplay
    run_dir = folder.folder
    meta = run_meta(cfg)
    torch.manual_seed(meta["seed"])
    net = Scorer(hidden=meta["hidden"], alpha=meta["alpha"])
    optimizer = torch.optim.Adam(net.parameters(), lr=meta["lr"])
    path = run_dir / CHECKPOINT
    envelope = resume_or_start(
        path, resume=bool(cfg.resume), load=load_envelope, settings=run_settings(meta),
        overrides=list(cfg.resume_overrides),
        found=next((p for p in (path, run_dir / MODEL) if p.exists()), None))
    done, games, elapsed = 0, 0, 0.0
    if envelope is not None:
        done, games, elapsed = _restore(envelope, net, optimizer)
    elif "init_from" in meta:
        _initialise(net, meta["init_from"])
    folder.begin(envelope)
    writer = folder.writer
    assert writer is not None  # begin opened it
    if envelope is None and "init_from" in meta:
        writer.add_text("init_from", f"weights from {meta['init_from']}, fresh Adam", 0)
    bar = tqdm(total=g.updates, initial=done, unit="update", disable=not cfg.progress,
               desc="fish self-play")
    started, last, last_eval = time.perf_counter() - elapsed, {}, None
    while done < g.updates:
        t0 = time.perf_counter()
        help_p = helping_probability(meta["helping"], done, g.updates)
        batch, info = [], Tally()
        for i in range(meta["games_per_update"]):
            batch += play_training_game(net, meta, games + i, help_p, info)
        played = time.perf_counter() - t0
        losses = update(net, optimizer, batch, meta)
        done, games = done + 1, games + meta["games_per_update"]
        seconds = time.perf_counter() - started
        last = {"update": done, "games": games, "seconds": round(seconds, 2), **losses,
                **info.summary(), "helping": help_p, "decisions": len(batch),
                "games_per_s": meta["games_per_update"] / max(played, 1e-9),
                "update_s": time.perf_counter() - t0 - played}
        for key in ("loss", "policy_loss", "value_loss", "entropy", "hit_rate",
                    "call_accuracy", "games_per_s", "helping", "sets_per_game_certain"):
            if last.get(key) is not None:
                writer.add_scalar(f"train/{key}", last[key], done)
        folder.log("train.jsonl", last)
        # Evaluate, then checkpoint: the update's lines come before its checkpoint.
        if g.eval_every and (done % g.eval_every == 0 or done == g.updates):
            last_eval = evaluate_against_logic(net, cfg, done, games, seconds)
            for size, r in last_eval["tables"].items():
                writer.add_scalar(f"eval/win_rate_{size}", r["win_rate"], done)
            writer.add_scalar("eval/win_rate", last_eval["win_rate"], done)
            if last_eval["call_accuracy"] is not None:
                writer.add_scalar("eval/call_accuracy", last_eval["call_accuracy"], done)
            folder.log("eval.jsonl", last_eval)
        if done % g.checkpoint_every == 0 or done == g.updates:
            writer.flush()  # tensorboard holds no less than the checkpoint
            _save(run_dir, net, optimizer, meta, done, games, time.perf_counter() - started)
            folder.checkpointed(done)
        writer.flush()
        bar.update(1)
        bar.set_postfix(loss=f"{losses['loss']:.3f}", hit=f"{last['hit_rate'] or 0:.3f}",
                        gps=f"{last['games_per_s']:.2f}")
    bar.close()
    if not last:
        print(f"{run_dir} already has {done} updates (game.selfplay.updates={g.updates})")
        return {"updates": done}
    line = f"fish: {done} updates, {games} self-play games in {last['seconds']:.0f} s"
    if last_eval:
        line += "; win rate vs logic " + ", ".join(
            f"{s} players {r['win_rate']:.3f}" for s, r in last_eval["tables"].items())
    print(f"{line}; model in {run_dir / MODEL}")
    return {**last, "eval": last_eval}


def evaluate_against_logic(net: Scorer, cfg, done: int, games: int, seconds: float) -> dict:
    """The greedy learned player as team A against logic (fish/match.py: each deal twice with
    the teams swapped), `game.selfplay.eval_games` deals per size in game.match.table_sizes,
    seeded by game.selfplay.eval_seed, both players with their default settings; with the
    learned team's call accuracy."""
    m, g = cfg.game.match, cfg.game.selfplay
    stats: dict = {}
    kwargs = {"learned": {"model": net, "stats": stats}}
    params = {"calls": m.calls, "ask_held_allowed": bool(m.ask_held_allowed)}
    tables = {str(size): run_match(["learned", "logic"], int(size), int(g.eval_games),
                                   seed=int(g.eval_seed), params_kwargs=params,
                                   player_kwargs=kwargs, max_moves=m.max_moves)
              for size in m.table_sizes}
    rates = [r["win_rate"] for r in tables.values()]
    return {"update": done, "games": games, "seconds": round(seconds, 2),
            "win_rate": float(np.mean(rates)),
            "tables": {s: {k: r[k] for k in ("win_rate", "ci95", "wins", "draws", "losses",
                                              "mean_sets")} for s, r in tables.items()},
            "calls": stats.get("calls", 0),
            "call_accuracy": stats["right"] / stats["calls"] if stats.get("calls") else None}


class _Trainer(BaseModel):
    """The trainer's part of latest.pt: the types every field must have, so that a crafted or
    damaged file is refused by name before anything of it is used."""

    format: str
    optimizer: dict[str, Any]
    meta: str
    updates: int
    games: int
    seconds: float


def _save(run_dir: Path, net, optimizer, meta: dict, done: int, games: int,
          seconds: float) -> None:
    info = {"meta": json.dumps(meta), "updates": done, "games": games, "seconds": seconds}
    trainer = {"format": TRAINER_FORMAT, "optimizer": optimizer.state_dict(), **info}
    header = Envelope(GAME, settings=run_settings(meta), step=done,
                      random=random_states()).header()
    write_torch(run_dir / CHECKPOINT, model_payload(net, trainer=trainer, run=header))
    write_torch(run_dir / MODEL, model_payload(net, **info), fsync=False)


def load_envelope(path: Path) -> Envelope:
    """The run envelope of Fish checkpoint `path` (state: the payload); a file written before
    the envelope gives the settings its trainer's meta names and no random states. ValueError
    naming `path` for a model file (model.pt copied in as latest.pt) or a damaged trainer."""
    payload = read_payload(path)
    scorer_from_payload(payload, path)  # a scorer file whose weights fit the network
    trainer = payload.get("trainer")
    if not isinstance(trainer, dict) or trainer.get("format") != TRAINER_FORMAT:
        raise ValueError(f"{path}: a model file without the trainer's state; cannot resume")
    try:
        _Trainer.model_validate(trainer, strict=True)
        meta = json.loads(trainer["meta"])
        if not isinstance(meta, dict) or "seed" not in meta:
            raise ValueError("meta is not the run's settings")
    except (ValidationError, ValueError) as err:
        first = err.errors()[0] if isinstance(err, ValidationError) else None
        reason = (f"trainer.{'.'.join(map(str, first['loc']))}: {first['msg']}" if first
                  else str(err))
        raise ValueError(f"{path}: {reason} (a damaged or crafted checkpoint)") from None
    return read_envelope(payload.get("run"), payload, path, GAME, step=trainer["updates"],
                         legacy_settings=run_settings(meta),
                         counted=f"the trainer's {trainer['updates']} updates",
                         # written before the settings' parts: game.lr, train.seed
                         stale=lambda settings: "train" in settings)


def _initialise(net: Scorer, path: str) -> None:
    """A fresh run's weights from `game.selfplay.init_from` (any scorer file); the optimiser
    starts fresh. ValueError naming the setting when the file's network is another shape."""
    source = scorer_from_payload(read_payload(path), path)
    try:
        net.load_state_dict(source.state_dict())
    except RuntimeError:
        raise ValueError(f"game.selfplay.init_from={path}: its network does not fit "
                         f"game.selfplay.hidden={net.hidden}") from None
    print(f"fish: starting from the weights of {path} (fresh optimiser)")


def _restore(envelope: Envelope, net, optimizer) -> tuple[int, int, float]:
    """(updates done, games played, seconds spent) of the checked envelope, its weights and
    optimiser state loaded."""
    path, payload = envelope.path, envelope.state
    trainer = payload["trainer"]
    net.load_state_dict(scorer_from_payload(payload, path).state_dict())
    try:
        optimizer.load_state_dict(trainer["optimizer"])
    except (ValueError, KeyError, TypeError) as err:
        raise ValueError(f"{path}: cannot restore the optimizer ({err})") from None
    return int(trainer["updates"]), int(trainer["games"]), float(trainer["seconds"])
