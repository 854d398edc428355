"""`python train.py game=fish`: the learned Fish player (fish/learned.py) by self-play REINFORCE.

Every seat is the learner (`game.opponent=self`, default) or one team is the learner and the
other the logic player (`game.opponent=logic`, alternating by game). Each update plays
`game.games_per_update` games, alternating over `game.train_sizes`, and takes one Adam step on
all of the learner's decisions (the asks and the calls it chose; certain calls are a rule, not a
decision): loss = -(G - V) log pi(move) + value_weight (V - G)^2 - entropy_weight H(pi), where
the return G of a decision at move m is

    hit_reward x (+1 hit, -1 miss; asks only)
    + sum over the sets called at moves m' >= m of gamma^(m' - m) x (+1 to its team, -1 not)
    + win_reward x gamma^(end - m) x (+1 won, -1 lost, 0 draw)

and V the scorer's value read-out (the baseline). `game.helping=[start,end]`: with a probability
going linearly from start to end over the run, the learner's move is replaced: its team calls a
set it holds entirely (with the true allocation) if there is one, else it asks a legal ask that
hits if there is one (recorded as its decision, as the seed's "helping" did); calls so made are
not counted in the call accuracy.

Speed: a seat's exact tracker is recounted only when that seat decides (fish/learned.py,
_LazyBelief). Calls of certain sets: `game.call_checks=every_seat` asks every learner seat
between any two moves, as the match runner does, but only while its team really holds a whole
uncalled set (a certain set is always really held, so this skips only counts whose answer is "no
call": the games are the ones the `learned` player would play in a match); `mover` (default)
asks only the learner to move, on its turn: a set its team holds whole cannot be taken by the
opponents (an asker needs a card of the set), so only the moment of the call changes, and each
move costs one count instead of several (measured in models/fish_learned.md).

The run (its folder and lock, fresh or resumed, logs, tensorboard) is the run harness's
(scrofazero/runs.py). Files: `checkpoint_dir/run/latest.pt` (weights, Adam state, update and game
counts inside the harness's envelope: the run's settings and random states; written to a
temporary file and renamed), `model.pt` (weights only, what
`evaluate.py ... players=[learned,logic] checkpoint=PATH` reads; so does latest.pt),
`eval.jsonl` (win rate against the logic player at each eval point) and `train.jsonl` (one line
per update); tensorboard under `log_dir/run`. An update's lines are written before its
checkpoint, and on resume the harness drops the lines and events past the checkpoint.
`resume=true` continues a run up to `game.updates` in total and ends with exactly the weights
and logs an uninterrupted run gives (every game's randomness is seeded by (train.seed, game
index)); without it an existing run is refused. Settings that define the run (run_meta) are
compared with the checkpoint's, `resume_overrides=[game.lr,...]` allowing named ones.
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

from scrofazero.fish.learned import (
    FishMind,
    Scorer,
    choose,
    model_payload,
    read_payload,
    scorer_from_payload,
)
from scrofazero.fish.match import run_match
from scrofazero.fish.players import LogicPlayer
from scrofazero.fish.predictor import train_predictor
from scrofazero.games.fish.cards import set_cards, team_of
from scrofazero.games.fish.events import Call
from scrofazero.games.fish.rules import AskMove, CallMove, FishState, Params
from scrofazero.run_lock import RunLock
from scrofazero.runs import (
    Envelope,
    RunError,
    RunFolder,
    random_states,
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
    g = cfg.game
    if g.learner not in LEARNERS:
        raise ValueError(f"game.learner must be one of {LEARNERS}, got {g.learner!r}")
    if g.learner == "predictor":
        return _train_predictor(cfg)
    if g.call_checks not in CALL_CHECKS:
        raise ValueError(f"game.call_checks must be one of {CALL_CHECKS}, got {g.call_checks!r}")
    if g.opponent not in OPPONENTS:
        raise ValueError(f"game.opponent must be one of {OPPONENTS}, got {g.opponent!r}")
    if g.updates < 1 or g.games_per_update < 1 or g.eval_every < 0 or g.checkpoint_every < 1:
        raise ValueError("game.updates, game.games_per_update and game.checkpoint_every must be "
                         ">= 1 and game.eval_every >= 0")
    helping = list(g.helping)
    if len(helping) != 2 or not all(0.0 <= float(h) <= 1.0 for h in helping):
        raise ValueError(f"game.helping must be [start,end] probabilities, got {helping}")
    if not g.train_sizes or any(int(n) not in (6, 8) for n in g.train_sizes):
        raise ValueError(f"game.train_sizes must list 6 and/or 8, got {list(g.train_sizes)}")
    if not 0.0 < g.gamma <= 1.0:
        raise ValueError(f"game.gamma must be in (0, 1], got {g.gamma}")
    torch.set_num_threads(1)  # a tiny network: threads only cost on a shared CPU
    with RunFolder(Path(cfg.checkpoint_dir) / cfg.run, Path(cfg.log_dir) / cfg.run,
                   logs=LOGS) as folder:
        return _train(cfg, folder)


def _train_predictor(cfg) -> dict:
    """`game.learner=predictor`: the hand predictor (fish/predictor.py) on simulated games,
    saved as checkpoint_dir/run/predictor.pt (refused if there, as a finished run)."""
    g = cfg.game
    out = Path(cfg.checkpoint_dir) / cfg.run / "predictor.pt"
    if out.exists():
        raise ValueError(f"{out} exists: a predictor run is not resumed (it takes minutes); "
                         "choose another run= or delete it")
    if g.predictor_steps < 1 or g.predictor_games < 1:
        raise ValueError("game.predictor_steps and game.predictor_games must be >= 1")
    data = Path(g.predictor_data)
    with RunLock(out.parent):
        path = train_predictor({
            "out": str(out), "data": str(data / "train"), "val": str(data / "val"),
            "games": int(g.predictor_games), "steps": int(g.predictor_steps),
            "table_sizes": tuple(int(n) for n in g.train_sizes),
            "eval_every": max(1, int(g.predictor_steps) // 6),
            "max_minutes": float(g.predictor_minutes), "seed": int(cfg.train.seed),
            "model": {"core": g.predictor_core}},
            progress=(print if cfg.progress else None))
    print(f"Fish predictor saved to {path}; score it with: python evaluate.py game=fish "
          f"mode=track model={path}")
    return {"predictor": str(path)}


def run_meta(cfg) -> dict:
    """The settings a run is defined by (checked on resume; game.updates may grow)."""
    g = cfg.game
    return {"train_sizes": [int(n) for n in g.train_sizes], "calls": g.calls,
            "ask_held_allowed": bool(g.ask_held_allowed), "opponent": g.opponent,
            "games_per_update": int(g.games_per_update), "lr": float(g.lr),
            "hidden": int(g.hidden), "alpha": float(g.alpha), "gamma": float(g.gamma),
            "hit_reward": float(g.hit_reward), "win_reward": float(g.win_reward),
            "value_weight": float(g.value_weight), "entropy_weight": float(g.entropy_weight),
            "helping": [float(h) for h in g.helping], "max_moves": int(g.max_moves),
            "call_checks": g.call_checks,
            "seed": int(cfg.train.seed)}


def run_settings(meta: dict) -> dict:
    """run_meta as the settings the harness compares, named as the config names them."""
    return {"game": {k: v for k, v in meta.items() if k != "seed"},
            "train": {"seed": meta["seed"]}}


def _train(cfg, folder: RunFolder) -> dict:
    g = cfg.game
    run_dir = folder.folder
    meta = run_meta(cfg)
    torch.manual_seed(meta["seed"])
    net = Scorer(hidden=meta["hidden"], alpha=meta["alpha"])
    optimizer = torch.optim.Adam(net.parameters(), lr=meta["lr"])
    path = run_dir / CHECKPOINT
    envelope = resume_or_start(
        path, resume=bool(cfg.resume), load=load_envelope, settings=run_settings(meta),
        overrides=list(cfg.get("resume_overrides") or []),
        found=next((p for p in (path, run_dir / MODEL) if p.exists()), None))
    done, games, elapsed = 0, 0, 0.0
    if envelope is not None:
        done, games, elapsed = _restore(envelope, net, optimizer)
    folder.begin(envelope)
    writer = folder.writer
    bar = tqdm(total=g.updates, initial=done, unit="update", disable=not cfg.progress,
               desc="fish self-play")
    started, last, last_eval = time.perf_counter() - elapsed, {}, None
    while done < g.updates:
        t0 = time.perf_counter()
        help_p = _helping(meta["helping"], done, g.updates)
        batch, info = [], _Tally()
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
        print(f"{run_dir} already has {done} updates (game.updates={g.updates})")
        return {"updates": done}
    line = f"fish: {done} updates, {games} self-play games in {last['seconds']:.0f} s"
    if last_eval:
        line += "; win rate vs logic " + ", ".join(
            f"{s} players {r['win_rate']:.3f}" for s, r in last_eval["tables"].items())
    print(f"{line}; model in {run_dir / MODEL}")
    return {**last, "eval": last_eval}


def _helping(helping: list[float], done: int, total: int) -> float:
    start, end = helping
    return float(start + (end - start) * done / max(total - 1, 1))


class _Tally:
    def __init__(self):
        self.asks = self.hits = self.calls = self.right = self.helped = self.certain = 0

    def summary(self) -> dict:
        return {"hit_rate": self.hits / self.asks if self.asks else None,
                "call_accuracy": self.right / self.calls if self.calls else None,
                "learner_calls": self.calls, "helped_moves": self.helped,
                "sets_per_game_certain": self.certain}


def _team_holds_a_set(state: FishState, team: int) -> bool:
    holders = state.holders
    return any(all(holders[c] >= 0 and team_of(holders[c]) == team for c in set_cards(k))
               for k in state.uncalled_sets())


def _helped_move(state: FishState, view, rng: np.random.Generator):
    """A call of a set the mover's team holds entirely (true allocation), else a legal ask that
    hits, else None."""
    team = team_of(view.seat)
    for set_id in state.uncalled_sets():
        seats = [state.holder(c) for c in set_cards(set_id)]
        if all(team_of(s) == team for s in seats):
            return CallMove(set_id, tuple(zip(set_cards(set_id), seats)))
    hits = [(t, c) for t, c in view.legal_asks if state.holder(c) == t]
    if hits and not view.must_call:
        return AskMove(*hits[int(rng.integers(len(hits)))])
    return None


def play_training_game(net: Scorer, meta: dict, index: int, help_p: float,
                       tally: _Tally) -> list[dict]:
    """Game `index` of the run (its deal, table size, first player and every draw seeded by
    (seed, index)); the learner's decisions with their returns: dicts x [K, F], a, G."""
    sizes = meta["train_sizes"]
    params = Params(num_players=sizes[index % len(sizes)], calls=meta["calls"],
                    ask_held_allowed=meta["ask_held_allowed"])
    n = params.num_players
    rng = np.random.default_rng([meta["seed"], index, 1])
    state = FishState.deal(params, np.random.default_rng([meta["seed"], index, 0]),
                           first_player=int(rng.integers(n)))
    learner_team = None if meta["opponent"] == "self" else index // len(sizes) % 2
    minds, others = {}, {}
    for seat in range(n):
        if learner_team is None or team_of(seat) == learner_team:
            minds[seat] = FishMind(n, seat, state.hand(seat), params.ask_held_allowed,
                                   params.ask_needs_other)
        else:
            others[seat] = LogicPlayer()
            others[seat].reset(n, seat, state.hand(seat), ask_held_allowed=params.ask_held_allowed,
                               ask_needs_other=params.ask_needs_other)
    decisions, set_events, moves = [], [], 0
    while not state.is_terminal:
        event = None
        if params.calls == "any_time":
            for seat in ((state.current_player + k) % n for k in range(n)):
                if seat in minds:
                    if meta["call_checks"] == "mover" or not _team_holds_a_set(state,
                                                                              team_of(seat)):
                        continue  # "mover": checked on its turn; else no set can be certain
                    move = minds[seat].certain_call(state.view(seat))
                else:
                    move = others[seat].call_now(state.view(seat))
                if move is not None:
                    event = state.call(seat, move.set_id, move.assignment)
                    if seat in minds:
                        tally.calls += 1
                        tally.right += int(event.correct)
                        tally.certain += 1
                    break
        if event is None:
            mover = state.current_player
            view = state.view(mover, force_call=moves >= meta["max_moves"])
            if mover in others:
                move = others[mover].act(view)
                event = _apply(state, mover, move)
            else:
                event, record = _learner_move(net, state, minds[mover], view, rng, help_p, tally)
                if record is not None:
                    record.update(team=team_of(mover), move=moves)
                    decisions.append(record)
        if isinstance(event, Call):
            set_events.append((moves, team_of(event.caller) if event.correct
                               else 1 - team_of(event.caller)))
        moves += 1
        for mind in minds.values():
            mind.observe(event)
        for other in others.values():
            other.observe(event)
    return _returns(decisions, set_events, state, moves, meta)


def _apply(state: FishState, mover: int, move):
    if isinstance(move, AskMove):
        return state.ask(move.target, move.card)
    return state.call(mover, move.set_id, move.assignment)


def _learner_move(net, state, mind: FishMind, view, rng, help_p: float, tally: _Tally):
    """(event, decision record or None) for the learner to move."""
    certain = mind.certain_call(view) if _team_holds_a_set(state, team_of(view.seat)) else None
    if certain is not None:
        event = _apply(state, view.seat, certain)
        tally.calls += 1
        tally.right += int(event.correct)
        tally.certain += 1
        return event, None
    moves, rows, _ = mind.candidates(view)
    scores = net.scores(rows)
    index = choose(scores, rng)
    if help_p > 0 and rng.random() < help_p:
        helped = _helped_move(state, view, rng)
        if isinstance(helped, CallMove):
            tally.helped += 1
            return _apply(state, view.seat, helped), None
        if helped is not None and helped in moves:
            tally.helped += 1
            index = moves.index(helped)
    move = moves[index]
    event = _apply(state, view.seat, move)
    shaping = 0.0
    if isinstance(move, AskMove):
        tally.asks += 1
        tally.hits += int(event.success)
        shaping = 1.0 if event.success else -1.0
    else:
        tally.calls += 1
        tally.right += int(event.correct)
    return event, {"x": rows, "a": index, "shaping": shaping}


def _returns(decisions, set_events, state: FishState, end: int, meta: dict) -> list[dict]:
    if not decisions:
        return []
    gamma = meta["gamma"]
    at = np.array([d["move"] for d in decisions], dtype=float)
    team = np.array([d["team"] for d in decisions])
    g = meta["hit_reward"] * np.array([d["shaping"] for d in decisions])
    for move, winner in set_events:
        later = at <= move
        g += later * np.where(team == winner, 1.0, -1.0) * gamma ** (move - at)
    s = np.array(state.score, dtype=float)
    outcome = np.sign(s[team] - s[1 - team])
    g += meta["win_reward"] * outcome * gamma ** (end - at)
    return [{"x": d["x"], "a": d["a"], "G": float(v)} for d, v in zip(decisions, g)]


def batch_loss(net: Scorer, batch: list[dict], meta: dict) -> dict:
    """The loss of the module doc on `batch` (decisions x [K, F], a, G) as tensors: loss,
    policy_loss, value_loss, entropy."""
    k = max(len(d["x"]) for d in batch)
    x = np.zeros((len(batch), k, batch[0]["x"].shape[1]), dtype=np.float32)
    mask = np.zeros((len(batch), k), dtype=bool)
    for i, d in enumerate(batch):
        x[i, :len(d["x"])] = d["x"]
        mask[i, :len(d["x"])] = True
    x, mask = torch.from_numpy(x), torch.from_numpy(mask)
    a = torch.tensor([d["a"] for d in batch])
    ret = torch.tensor([d["G"] for d in batch], dtype=torch.float32)
    scores, value = net(x, mask)
    logp = torch.log_softmax(scores, dim=1)
    chosen = logp.gather(1, a[:, None]).squeeze(1)
    advantage = (ret - value).detach()
    policy_loss = -(advantage * chosen).mean()
    value_loss = ((value - ret) ** 2).mean()
    entropy = -(logp.exp() * logp.masked_fill(~mask, 0.0)).sum(1).mean()
    loss = policy_loss + meta["value_weight"] * value_loss - meta["entropy_weight"] * entropy
    return {"loss": loss, "policy_loss": policy_loss, "value_loss": value_loss,
            "entropy": entropy}


def update(net: Scorer, optimizer, batch: list[dict], meta: dict) -> dict:
    """One Adam step of REINFORCE with the value baseline on `batch` (see the module doc);
    the losses before the step, as floats."""
    if not batch:
        return {"loss": 0.0, "policy_loss": 0.0, "value_loss": 0.0, "entropy": 0.0}
    net.train()
    losses = batch_loss(net, batch, meta)
    optimizer.zero_grad()
    losses["loss"].backward()
    torch.nn.utils.clip_grad_norm_(net.parameters(), 1.0)
    optimizer.step()
    net.eval()
    return {key: value.item() for key, value in losses.items()}


def evaluate_against_logic(net: Scorer, cfg, done: int, games: int, seconds: float) -> dict:
    """The greedy learned player as team A against logic (fish/match.py: each deal twice with
    the teams swapped), `game.eval_games` deals per size in game.table_sizes, seeded by
    game.eval_seed; with the learned team's call accuracy."""
    g = cfg.game
    stats: dict = {}
    kwargs = {"learned": {"model": net, "stats": stats}}
    params = {"calls": g.calls, "ask_held_allowed": bool(g.ask_held_allowed)}
    tables = {str(size): run_match(["learned", "logic"], int(size), int(g.eval_games),
                                   seed=int(g.eval_seed), params_kwargs=params,
                                   player_kwargs=kwargs, max_moves=g.max_moves)
              for size in g.table_sizes}
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
    header = payload.get("run")
    if header is None:  # the layout before the run harness
        return Envelope(GAME, settings=run_settings(meta), step=trainer["updates"],
                        state=payload, path=str(path))
    envelope = Envelope.read_header(header, payload, path, GAME)
    if envelope.step != trainer["updates"]:
        raise RunError(f"{path}: run header step {envelope.step} differs from the trainer's "
                       f"{trainer['updates']} updates")
    return envelope


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
