"""Fine-tuning the policy/value network to read a belief's marginals instead of sampled hands.

The network's hand blocks take probabilities (the paper's raw input already writes 1/3 in every
hidden slot, nn/encoding.py encode_own_view). Here a seat's view is encoded with the card-location
network's calibrated marginals in those blocks (encode_holders), and the network is fine-tuned
to give there what it gives on the TRUE state: the teacher is the shipped network itself with
perfect information (its masked policy and its value), in the spirit of oracle guiding. The
player that results needs no sampled deals (`raw.sampling.method=marginals`, agents/raw_net.py).

`build` takes positions from recorded hidden-hand games (train/belief.py's shards: fresh random
deals, never one of the standard evaluation deals; every deal is checked) and, at each, the
mover's view (a root) and the child after each of its legal cards, still seen by that mover (the
inputs of the raw player's 1-ply value search). `fit` trains on them with the trainer's loss
(train/learner.py loss_fn: KL to the teacher's masked policy and the value error) and writes a
model file that says what input it was trained for. Used by
`python -m scrofazero.train.marginal_input` (build | fit).
"""

from __future__ import annotations

import argparse
import copy
import io
import json
import sys
import time
from collections.abc import Iterable, Sequence
from pathlib import Path
from typing import Any

import numpy as np
import torch

from scrofazero import shipped
from scrofazero.atomic import write_atomic
from scrofazero.games.gongzhu.batch import StateBatch, is_terminal, legal_mask, step
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.belief import BeliefModel, load_belief, relative_to_absolute, view_positions
from scrofazero.nn.checkpoint import load_model, save_model_file
from scrofazero.nn.encoding import encode, encode_holders
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.nn.network import masked_log_softmax
from scrofazero.sampling.belief import view_holders
from scrofazero.train.hidden_games import GameRecords, check_not_standard, load_shards, split
from scrofazero.train.learner import loss_fn, make_optimizer

INPUT = "belief_marginals"  # what a fine-tuned file's meta["input"] says
ROOT, CHILD = 0, 1  # kinds of rows


def _replay(records: GameRecords, game: int, ply: int) -> GongzhuState:
    state = GongzhuState(records.deal[game], int(records.leader[game]))
    for t in range(ply):
        state.apply(int(records.cards[game, t]))
    return state


def _teacher(evaluator: NetworkEvaluator, states: StateBatch
             ) -> tuple[np.ndarray, np.ndarray, np.ndarray]:
    """The teacher's targets on true states: (legal [B, 52], masked policy [B, 52], value [B])."""
    logits, value = evaluator.forward_features(encode(states))
    legal = legal_mask(states)
    z = np.where(legal, logits.astype(np.float64), -np.inf)
    p = np.exp(z - z.max(axis=1, keepdims=True))
    return legal, (p / p.sum(axis=1, keepdims=True)).astype(np.float32), value


def build_rows(records: GameRecords, games: np.ndarray, plies: np.ndarray,
               evaluator: NetworkEvaluator, belief: BeliefModel, calibrate: int = 20
               ) -> dict[str, np.ndarray]:
    """Student inputs and teacher targets of the positions (game, ply) and their children.

    Each position is the mover's view before its play at that ply; its root row and one child
    row per legal card (the card played; the child's mover may be anyone, the hands are still
    as the root's mover knows them) are kept; children that end the game are left out.

    Args:
        records: train/belief.py GameRecords.
        games, plies: [P] the positions.
        evaluator: the teacher (a NetworkEvaluator of the perfect-information network).
        belief: a loaded card-location network (nn/belief.py BeliefModel).
        calibrate: fitting passes of the marginals toward the belief's (sampling/belief.py).

    Returns:
        inputs [N, 434] float32, legal [N, 52] bool, policy [N, 52] float32, value [N] float32
        (the teacher's points to come for the mover's team), kind [N] int8 (ROOT or CHILD),
        game [N] int32, ply [N] int8.
    """
    states = [_replay(records, int(g), int(t)) for g, t in zip(games, plies)]
    views = [s.view(s.current_player) for s in states]
    relative = belief.relative(view_positions(views))  # [P, 52, 3]
    holders = np.stack([view_holders(v, relative_to_absolute(r, v.seat), calibrate)
                        for v, r in zip(views, relative)])  # [P, 52, 4]
    roots = StateBatch.from_states(states)
    legal_roots = legal_mask(roots)  # [P, 52]
    parents, cards = np.nonzero(legal_roots)
    children = step(roots.take(parents), cards)
    child_holders = holders[parents]
    child_holders[np.arange(len(parents)), cards] = 0.0  # the card played lies in the trick
    keep = ~is_terminal(children)
    children, child_holders, parents = children.take(keep), child_holders[keep], parents[keep]
    everything = StateBatch.concat([roots, children])
    legal, policy, value = _teacher(evaluator, everything)
    inputs = np.concatenate([encode_holders(roots, holders),
                             encode_holders(children, child_holders)])
    origin = np.concatenate([np.arange(len(states)), parents])
    return {"inputs": inputs, "legal": legal, "policy": policy,
            "value": value.astype(np.float32),
            "kind": np.repeat(np.array([ROOT, CHILD], np.int8), [len(states), len(parents)]),
            "game": np.asarray(games)[origin].astype(np.int32),
            "ply": np.asarray(plies)[origin].astype(np.int8)}


def build(data: str | Path | Iterable[str | Path], out: str | Path, games: int = 4000,
          plies_per_game: int = 6, seed: int = 0,
          checkpoint: str | None = None, beliefs: str | None = None, calibrate: int = 20,
          val_fraction: float = 0.05, chunk: int = 256, progress: bool = True
          ) -> dict[str, Any]:
    """Positions of `games` recorded games (drawn from the shards of `data`) with their inputs
    and targets, written to the .npz `out` atomically; returns a summary.

    Args:
        data: a shard folder or a list of them (train/belief.py generate).
        out: the .npz file to write.
        games: how many games to draw positions from (at most all of them).
        plies_per_game: positions per game, at random plies where the mover has a choice.
        seed: of the draw of games and plies.
        checkpoint: the teacher (default: the shipped models/scrofazero.pt).
        beliefs: the card-location network (default: the shipped models/belief.pt).
        calibrate: fitting passes of the marginals toward the belief's.
        val_fraction: share of games held out (by deal, train/belief.py split).
        chunk: positions per batch of network calls.
        progress: print progress to stderr.
    """
    folders = [data] if isinstance(data, (str, Path)) else list(data)
    records = load_shards(folders)
    for deal in records.deal:  # these are training data: never an evaluation deal
        check_not_standard(deal)
    _, val_games = split(records, val_fraction)
    rng = np.random.default_rng(seed)
    chosen = np.sort(rng.choice(len(records), min(games, len(records)), replace=False))
    pair_list: list[tuple[int, int]] = []
    for g in chosen:
        plies: list[int] = []
        for t in rng.permutation(NUM_CARDS):
            if len(plies) == plies_per_game:
                break
            if len(_replay(records, int(g), int(t)).legal_actions()) > 1:
                plies.append(int(t))
        pair_list.extend((int(g), t) for t in sorted(plies))
    pairs = np.array(pair_list, dtype=np.int64).reshape(-1, 2)
    checkpoint = shipped.network_file(checkpoint)
    evaluator = NetworkEvaluator(load_model(checkpoint))
    belief = load_belief(beliefs)
    started = time.perf_counter()
    parts = []
    for s in range(0, len(pairs), chunk):
        parts.append(build_rows(records, pairs[s:s + chunk, 0], pairs[s:s + chunk, 1],
                                evaluator, belief, calibrate))
        if progress:
            print(f"positions {min(s + chunk, len(pairs))}/{len(pairs)} "
                  f"{time.perf_counter() - started:.0f} s", file=sys.stderr)
    rows = {k: np.concatenate([p[k] for p in parts]) for k in parts[0]}
    rows["val"] = np.isin(rows["game"], val_games)
    info = {"data": [str(f) for f in folders], "games": int(len(chosen)),
            "positions": int(len(pairs)), "rows": int(len(rows["kind"])),
            "val_rows": int(rows["val"].sum()), "checkpoint": str(checkpoint),
            "beliefs": str(beliefs or shipped.BELIEF), "calibrate": calibrate, "seed": seed,
            "seconds": time.perf_counter() - started}
    buffer = io.BytesIO()
    # (numpy's stub lets **rows fill savez's allow_pickle: flag; rows holds arrays only)
    np.savez(buffer, info=np.array(json.dumps(info)), **rows)  # type: ignore[arg-type]
    data_bytes = buffer.getvalue()
    write_atomic(out, lambda f: f.write(data_bytes))
    return info


def _batch(rows: dict[str, np.ndarray], idx: np.ndarray) -> dict[str, torch.Tensor]:
    return {"inputs": torch.from_numpy(rows["inputs"][idx]),
            "legal": torch.from_numpy(rows["legal"][idx]),
            "policy_target": torch.from_numpy(rows["policy"][idx]),
            "value_target": torch.from_numpy(rows["value"][idx])}


@torch.no_grad()
def evaluate_rows(model: torch.nn.Module, rows: dict[str, np.ndarray], idx: np.ndarray,
                  chunk: int = 2048) -> dict[str, dict[str, Any]]:
    """Mean KL(teacher || student masked policy) and value squared error (points^2) of the
    rows `idx`, for roots, children and all.

    Args:
        model: the student network.
        rows: the arrays `build` writes.
        idx: the rows to score.
        chunk: rows per forward.
    """
    model.eval()
    kl, se = np.zeros(len(idx)), np.zeros(len(idx))
    for s in range(0, len(idx), chunk):
        b = _batch(rows, idx[s:s + chunk])
        logits, value = model(b["inputs"])
        log_p = masked_log_softmax(logits.float(), b["legal"])
        log_p = torch.where(b["legal"], log_p, torch.zeros_like(log_p))
        t = b["policy_target"]
        kl[s:s + chunk] = (torch.special.xlogy(t, t) - t * log_p).sum(dim=1).numpy()
        se[s:s + chunk] = ((value.float() - b["value_target"]) ** 2).numpy()
    kind = rows["kind"][idx]
    out: dict[str, dict[str, Any]] = {}
    for name, sel in (("root", kind == ROOT), ("child", kind == CHILD),
                      ("all", np.ones(len(idx), bool))):
        n = int(sel.sum())
        out[name] = {"rows": n, "kl": float(kl[sel].mean()) if n else None,
                     "value_mse": float(se[sel].mean()) if n else None}
    return out


def fit(data: str | Path, out: str | Path, checkpoint: str | None = None, epochs: float = 1.0,
        batch: int = 512,
        lr: float = 2e-4, value_weight: float = 1.0, value_unit: float = 50.0, seed: int = 0,
        max_minutes: float = 0.0, progress: bool = True) -> dict[str, Any]:
    """Fine-tune the network of `checkpoint` on the rows of `data` (from `build`) and write it
    to `out` (atomically, after every epoch) with meta saying its input; returns the summary,
    held-out figures before and after included.

    Loss: train/learner.py loss_fn with value_loss="mse": KL(teacher policy || masked student
    policy) + value_weight x ((value error) / value_unit)^2.

    Args:
        data: the .npz of `build`.
        out: the model file to write.
        checkpoint: the network to start from (default: the shipped models/scrofazero.pt).
        epochs: passes over the training rows.
        batch: rows per step.
        lr: Adam's learning rate (train/learner.py make_optimizer, constant).
        value_weight, value_unit: of the value error (see above).
        seed: of the row order.
        max_minutes: stop after the evaluation that follows this many minutes (0: no limit).
        progress: print progress to stderr.
    """
    with np.load(data) as z:
        rows = {k: z[k] for k in z.files}
    info = json.loads(str(rows.pop("info")))
    train_idx, val_idx = np.flatnonzero(~rows["val"]), np.flatnonzero(rows["val"])
    if not len(train_idx) or not len(val_idx):
        raise ValueError(f"{data}: {len(train_idx)} training and {len(val_idx)} held-out rows; "
                         "both are needed (build more games)")
    checkpoint = shipped.network_file(checkpoint)
    model = copy.deepcopy(load_model(checkpoint))
    torch.manual_seed(seed)
    rng = np.random.default_rng(seed)
    before = evaluate_rows(model, rows, val_idx)
    if progress:
        print(f"before: {json.dumps(before)}", file=sys.stderr)
    optimizer = make_optimizer(model, lr=lr)
    steps_per_epoch = max(1, len(train_idx) // batch)
    total = int(round(epochs * steps_per_epoch))
    started = time.perf_counter()
    history, step_no, order = [], 0, np.array([], dtype=np.int64)
    summary: dict[str, Any] = {}
    while step_no < total:
        if len(order) < batch:
            order = np.concatenate([order, rng.permutation(train_idx)])
        idx, order = order[:batch], order[batch:]
        model.train()
        tensors = _batch(rows, idx)
        logits, value = model(tensors["inputs"])
        loss, _ = loss_fn(logits, value, tensors, value_weight, value_unit, value_loss="mse")
        optimizer.zero_grad(set_to_none=True)
        loss.backward()  # type: ignore[no-untyped-call]  # torch leaves Tensor.backward unannotated
        optimizer.step()
        step_no += 1
        minutes = (time.perf_counter() - started) / 60
        over = bool(max_minutes) and minutes > max_minutes
        if step_no % steps_per_epoch == 0 or step_no == total or over:
            val = evaluate_rows(model, rows, val_idx)
            history.append({"step": step_no, "train_loss": float(loss.detach()), "minutes": minutes,
                            "val": val})
            if progress:
                print(f"step {step_no}/{total} train {float(loss.detach()):.4f} val kl "
                      f"{val['all']['kl']:.4f} value_mse {val['all']['value_mse']:.1f} "
                      f"{minutes:.1f} min", file=sys.stderr)
            summary = {"input": INPUT, "beliefs": info["beliefs"], "base": str(checkpoint),
                       "data": str(data), "data_info": info, "train_rows": int(len(train_idx)),
                       "val_rows": int(len(val_idx)), "steps": step_no, "batch": batch,
                       "lr": lr, "value_weight": value_weight, "value_unit": value_unit,
                       "minutes": minutes, "val_before": before, "val_after": val,
                       "history": history}
            save_model_file(out, model, step=step_no, meta=summary)
            if over:
                break
    return summary


def main(argv: Sequence[str] | None = None) -> None:
    parser = argparse.ArgumentParser(prog="python -m scrofazero.train.marginal_input",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    b = sub.add_parser("build", help="positions and teacher targets from recorded games")
    b.add_argument("--data", nargs="+", required=True, help="shard folders (train/belief.py)")
    b.add_argument("--out", required=True, help=".npz to write")
    b.add_argument("--games", type=int, default=4000)
    b.add_argument("--plies", type=int, default=6, help="positions per game")
    b.add_argument("--seed", type=int, default=0)
    b.add_argument("--checkpoint", default=None, help="the teacher (default: shipped)")
    b.add_argument("--beliefs", default=None, help="card-location network (default: shipped)")
    b.add_argument("--calibrate", type=int, default=20)
    f = sub.add_parser("fit", help="fine-tune the network on built rows")
    f.add_argument("--data", required=True, help="the .npz of build")
    f.add_argument("--out", required=True, help="model file to write")
    f.add_argument("--checkpoint", default=None, help="start from (default: shipped)")
    f.add_argument("--epochs", type=float, default=1.0)
    f.add_argument("--batch", type=int, default=512)
    f.add_argument("--lr", type=float, default=2e-4)
    f.add_argument("--value-weight", type=float, default=1.0)
    f.add_argument("--value-unit", type=float, default=50.0)
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--max-minutes", type=float, default=0.0)
    f.add_argument("--threads", type=int, default=1, help="torch threads")
    args = parser.parse_args(argv)
    if args.command == "build":
        torch.set_num_threads(1)
        info = build(args.data, args.out, args.games, args.plies, args.seed, args.checkpoint,
                     args.beliefs, args.calibrate)
        print(json.dumps(info))
    else:
        torch.set_num_threads(args.threads)
        summary = fit(args.data, args.out, args.checkpoint, args.epochs, args.batch, args.lr,
                      args.value_weight, args.value_unit, args.seed, args.max_minutes)
        print(json.dumps({k: v for k, v in summary.items() if k not in ("history", "data_info")}))


if __name__ == "__main__":
    main()
