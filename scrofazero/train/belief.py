"""Training data and training for the card-location network (nn/belief.py).

Data: hidden-hand games played by the players our player meets and is (Mr. Greed, Mr. If, Mr.
Random, the raw network, the full player, the full player with a belief), each seat seeing only
its own view, on fresh random deals. Never the standard deals the evaluation uses: the generator
refuses any deal that is one of them (in any rotation), so a network cannot remember them.
Games are written in shards (`shard_00000.npz`, ...) atomically; a generation that is stopped
continues where it stopped, shard by shard, and gives the same games (every game's deal and
every decision's randomness come from (seed, game index)).

Every position is one seat's information at one of its own decisions; the target is the true
holder of each card it cannot see. `fit` trains by cross-entropy over the unseen cards (per card
a softmax over the seats that may hold it) and reports held-out log-loss per trick against the
exact uniform prior under the known constraints. Used by `python -m scrofazero.train.belief`
(generate | fit | report) and benchmarks/inference.py.
"""

from __future__ import annotations

import argparse
import copy
import dataclasses
import io
import json
import math
import multiprocessing as mp
import sys
import time
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import torch

from scrofazero.agents import make_agent
from scrofazero.agents.scrofazero_agent import play_sampling, play_weighting
from scrofazero.atomic import write_atomic, write_json_atomic
from scrofazero.eval.runner import find_checkpoint
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.deals import hands_of, load_deals, random_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.belief import (
    BeliefNet,
    Positions,
    allowed_seats,
    features,
    load_belief,
    masked_log_probs,
    save_belief,
)
from scrofazero.nn.checkpoint import load_model
from scrofazero.nn.evaluator import NetworkEvaluator
from scrofazero.sampling.belief import MIN_WEIGHT, fitted_weights, marginals
from scrofazero.sampling.iec import IECConfig, combine, iec_log_weights
from scrofazero.sampling.oracle import DECIDING
from scrofazero.sampling.stratified import SamplingConfig
from scrofazero.sampling.uniform import owners_to_hands, sample_owners

# The report's alternative to the player's fitting: calibrated only while more than this many cards
# are unseen (tricks 1-8), the plain product after (sampling.calibrate_above).
FIT_EARLY = 15

# The players of the data, by name: the registry's player and its settings, spelled out so that
# a kind plays the same whatever the players' defaults become.
KINDS = {
    "greed": ("greed", {}),
    "if": ("if", {}),
    "random": ("random", {}),
    "raw": ("raw", {"sampling": "uniform"}),  # the paper's raw network player
    # the full player as it was before the belief network: 18 stratified deals, IEC weights
    "scrofazero": ("scrofazero", {"sampling": {"method": "stratified", "per_stratum": 2},
                                  "weighting": {"enabled": True}}),
    "belief_raw": ("raw", {"sampling": "belief"}),
    "belief": ("scrofazero", {"sampling": {"method": "belief", "num_deals": 18},
                              "weighting": {"enabled": False}}),
}


class StandardDealError(ValueError):
    """A deal of the evaluation set was offered as training data."""


def deal_key(deal) -> frozenset:
    """The four hands of a deal as a set of 52-bit masks: equal for a deal and its rotations."""
    return frozenset(hands_of(np.asarray(deal)))


_STANDARD: set | None = None


def check_not_standard(deal) -> None:
    """Refuse a deal that is one of the 1024 standard deals, in any seat rotation."""
    global _STANDARD
    if _STANDARD is None:
        _STANDARD = {deal_key(d) for d in load_deals()}
    if deal_key(deal) in _STANDARD:
        raise StandardDealError("this deal is one of the standard evaluation deals: never "
                                "train on them")


def parse_mix(mix: str) -> list[tuple[str, str, float]]:
    """'scrofazero:greed=3,raw:greed=1' -> [(team A kind, team B kind, weight)], checked."""
    out = []
    for item in mix.split(","):
        pair, _, weight = item.strip().partition("=")
        a, _, b = pair.partition(":")
        for kind in (a, b):
            if kind not in KINDS:
                raise ValueError(f"mix {mix!r}: unknown player kind {kind!r}; choose from "
                                 f"{', '.join(KINDS)}")
        try:
            w = float(weight or 1)
        except ValueError:
            raise ValueError(f"mix {mix!r}: weight {weight!r} is not a number") from None
        if not w > 0:
            raise ValueError(f"mix {mix!r}: weight of {pair} must be > 0")
        out.append((a, b, w))
    return out


@dataclass
class GameRecords:
    """G games: deal [G, 52] (card indices, seat i holds positions 13i..13i+12), leader [G],
    cards [G, 52] and seats [G, 52] (the plays in order), kinds [G, 4] (index into KINDS)."""

    deal: np.ndarray
    leader: np.ndarray
    cards: np.ndarray
    seats: np.ndarray
    kinds: np.ndarray

    def __len__(self) -> int:
        return len(self.leader)

    @staticmethod
    def concat(parts) -> "GameRecords":
        parts = list(parts)
        return GameRecords(*(np.concatenate([getattr(p, f) for p in parts])
                             for f in ("deal", "leader", "cards", "seats", "kinds")))

    def owners(self) -> np.ndarray:
        """[G, 52] the seat that was dealt each card."""
        out = np.empty((len(self), NUM_CARDS), dtype=np.int64)
        out[np.arange(len(self))[:, None], self.deal] = np.repeat(np.arange(4), 13)[None, :]
        return out


# --- generation (worker processes) ---------------------------------------------------------
_AGENTS: dict = {}


def _build(kinds, checkpoint, beliefs) -> dict:
    agents = {}
    for kind in kinds:
        name, settings = KINDS[kind]
        kwargs = {k: dict(v) if isinstance(v, dict) else v for k, v in settings.items()}
        if name in ("raw", "scrofazero"):
            kwargs["checkpoint"] = checkpoint
            if kind.startswith("belief") and beliefs:
                if name == "raw":
                    kwargs["beliefs"] = beliefs
                else:
                    kwargs["sampling"]["beliefs"] = beliefs
        agents[kind] = make_agent(name, **_settings_kwargs(name, kwargs))
    return agents


def _settings_kwargs(name: str, kwargs: dict) -> dict:
    """Nested settings ({'sampling': {'method': ...}}) as the full player's settings objects,
    its defaults for the fields not given."""
    if name != "scrofazero":
        return kwargs
    out = dict(kwargs)
    for group, default in (("sampling", play_sampling), ("weighting", play_weighting)):
        if isinstance(kwargs.get(group), dict):
            out[group] = dataclasses.replace(default(), **kwargs[group])  # checked as it is built
    return out


def _init(kinds, checkpoint, beliefs) -> None:
    torch.set_num_threads(1)
    _AGENTS.update(_build(kinds, checkpoint, beliefs))


def play_recorded(deal, leader: int, agents, rngs) -> tuple[np.ndarray, np.ndarray]:
    """Play one hidden-hand game; returns (cards [52], seats [52]) in play order."""
    state = GongzhuState(deal, leader)
    for _ in range(NUM_CARDS):
        seat = state.current_player
        state.apply(int(agents[seat].act(state.view(seat), rngs[seat])))
    seats, cards = zip(*state.history)
    return np.array(cards, dtype=np.int8), np.array(seats, dtype=np.int8)


def _game(seed: int, index: int, mix) -> tuple:
    """Game `index`: its deal, leader and seating from (seed, index)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, index, 7]))
    deal = random_deal(rng)
    check_not_standard(deal)
    weights = np.array([w for _, _, w in mix])
    a, b, _ = mix[int(rng.choice(len(mix), p=weights / weights.sum()))]
    seating = [a, b, a, b] if rng.random() < 0.5 else [b, a, b, a]
    return deal, int(rng.integers(4)), seating


def _play_games(seed: int, start: int, count: int, mix) -> GameRecords:
    names = list(KINDS)
    rows = []
    for index in range(start, start + count):
        deal, leader, seating = _game(seed, index, mix)
        rngs = [np.random.default_rng(np.random.SeedSequence([seed, index, s])) for s in range(4)]
        cards, seats = play_recorded(deal, leader, [_AGENTS[k] for k in seating], rngs)
        rows.append((deal, leader, cards, seats, [names.index(k) for k in seating]))
    return GameRecords(np.array([r[0] for r in rows], dtype=np.int8),
                       np.array([r[1] for r in rows], dtype=np.int8),
                       np.stack([r[2] for r in rows]), np.stack([r[3] for r in rows]),
                       np.array([r[4] for r in rows], dtype=np.int8))


def save_shard(path, records: GameRecords) -> Path:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{f: getattr(records, f) for f in
                                   ("deal", "leader", "cards", "seats", "kinds")})
    data = buffer.getvalue()
    return write_atomic(path, lambda f: f.write(data))


def load_shards(folders) -> GameRecords:
    """Every shard_*.npz of `folders` (a path or a list), in name order; ValueError naming a bad
    file."""
    folders = [folders] if isinstance(folders, (str, Path)) else list(folders)
    parts = []
    for folder in folders:
        files = sorted(Path(folder).glob("shard_*.npz"))
        if not files:
            raise FileNotFoundError(f"no shard_*.npz in {folder}")
        for path in files:
            try:
                with np.load(path) as z:
                    parts.append(GameRecords(z["deal"], z["leader"], z["cards"], z["seats"],
                                             z["kinds"]))
            except (OSError, KeyError, ValueError) as err:
                raise ValueError(f"{path}: not a game shard ({err})") from None
    return GameRecords.concat(parts)


def generate(out, games: int, mix: str, seed: int, checkpoint: str | None = None,
             beliefs: str | None = None, workers: int = 1, shard_games: int = 256,
             progress: bool = True) -> Path:
    """Play `games` games of the seating `mix` into shards under `out` (resumable)."""
    mix_list = parse_mix(mix)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    info = {"mix": mix, "seed": seed, "shard_games": shard_games, "checkpoint": checkpoint,
            "beliefs": beliefs, "kinds": list(KINDS)}
    info_path = out / "info.json"
    if info_path.exists():
        old = json.loads(info_path.read_text())
        changed = [k for k in ("mix", "seed", "shard_games") if old.get(k) != info[k]]
        if changed:
            raise ValueError(f"{out} holds games of other settings ({', '.join(changed)}); "
                             "use another folder")
    write_json_atomic(info_path, info)
    kinds = sorted({k for a, b, _ in mix_list for k in (a, b)})
    todo = [k for k in range(math.ceil(games / shard_games))
            if not (out / f"shard_{k:05d}.npz").exists()]
    started = time.perf_counter()
    if workers <= 1:
        _init(kinds, checkpoint, beliefs)
        for k in todo:
            count = min(shard_games, games - k * shard_games)
            save_shard(out / f"shard_{k:05d}.npz", _play_games(seed, k * shard_games, count,
                                                                mix_list))
            if progress:
                print(f"shard {k}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
        return out
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init,
                             initargs=(kinds, checkpoint, beliefs)) as pool:
        futures = {pool.submit(_play_games, seed, k * shard_games,
                               min(shard_games, games - k * shard_games), mix_list): k
                   for k in todo}
        for future in futures:
            k = futures[future]
            save_shard(out / f"shard_{k:05d}.npz", future.result())
            if progress:
                print(f"shard {k}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
    return out


# --- positions and targets -----------------------------------------------------------------
def positions(records: GameRecords, games: np.ndarray, plies: np.ndarray, owners=None):
    """Positions of (game, ply) pairs (the mover's view just before its play) and their targets
    [B, 52]: the relative seat index 0..2 (seat viewer + 1 + j) of each unseen card's holder,
    -1 for cards the viewer sees. owners: records.owners(), when the caller keeps it."""
    owners = (records.owners() if owners is None else owners)[games]  # [B, 52]
    cards = records.cards[games].astype(np.int64)
    seats = records.seats[games].astype(np.int64)
    viewer = seats[np.arange(len(games)), plies]
    hand = owners == viewer[:, None]
    before = np.arange(NUM_CARDS)[None, :] < plies[:, None]
    played_by_me = np.zeros_like(hand)
    rows, idx = np.nonzero(before & (seats == viewer[:, None]))
    played_by_me[rows, cards[rows, idx]] = True
    hand &= ~played_by_me
    p = Positions(hand, cards, seats, plies.astype(np.int64), viewer)
    rel = (owners - viewer[:, None]) % 4 - 1
    allowed = allowed_seats(p)
    target = np.where(allowed.any(axis=2), rel, -1)
    return p, target, allowed


def _loss(net, p: Positions, target: np.ndarray, allowed: np.ndarray, device) -> torch.Tensor:
    x = torch.from_numpy(features(p)).to(device)
    allowed_t = torch.from_numpy(allowed).to(device)
    logp = masked_log_probs(net(x), allowed_t)  # [B, 52, 3]
    t = torch.from_numpy(target).to(device)
    mask = t >= 0
    picked = logp.gather(2, t.clamp(min=0).unsqueeze(-1)).squeeze(-1)  # [B, 52]
    picked = torch.where(mask, picked, torch.zeros_like(picked))  # seen cards: -inf, not counted
    return -picked.sum() / mask.sum().clamp(min=1)


_DEAL_HASH = np.random.default_rng(20261204).integers(1, 2**31, size=NUM_CARDS)


def split(records: GameRecords, val_fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Train and validation game indices: every game whose deal hashes into the validation
    fraction is held out, so a game is on the same side whatever folders or shards it is
    loaded with."""
    g = np.arange(len(records))
    key = (records.deal.astype(np.int64) * _DEAL_HASH[None, :]).sum(axis=1) % 1000
    held = key < val_fraction * 1000
    return g[~held], g[held]


def fit(data, out, hidden: int = 512, num_blocks: int = 2, epochs: float = 4.0,
        batch: int = 512, lr: float = 1e-3, val_fraction: float = 0.05, seed: int = 0,
        device: str = "cpu", max_minutes: float = 0.0, init: str | None = None,
        meta: dict | None = None, progress: bool = True, data_weights=None,
        dropout: float = 0.0, weight_decay: float = 0.0) -> dict:
    """Train a belief network on the shards of `data` (a folder or a list) and write it to
    `out` (atomically, after every epoch). data_weights: one weight per folder, how often its
    games are drawn relative to their number (default: all 1). Returns the training summary
    (also stored in the file's meta)."""
    folders = [data] if isinstance(data, (str, Path)) else list(data)
    parts = [load_shards(folder) for folder in folders]
    records = GameRecords.concat(parts)
    weights = np.ones(len(folders)) if data_weights is None else np.asarray(data_weights, float)
    if len(weights) != len(folders) or not np.all(weights > 0):
        raise ValueError(f"data_weights must give one positive weight per data folder "
                         f"({len(folders)}), got {list(weights)}")
    per_game = np.repeat(weights, [len(p) for p in parts])
    train_g, val_g = split(records, val_fraction)
    draw_p = per_game[train_g] / per_game[train_g].sum()
    rng = np.random.default_rng(seed)
    torch.manual_seed(seed)
    # A copy: load_belief's model is shared by every player that loaded the same file.
    net = copy.deepcopy(load_belief(init).net) if init else BeliefNet(hidden, num_blocks, dropout)
    net.to(device).train()
    steps = int(epochs * len(train_g) * NUM_CARDS / batch)
    opt = torch.optim.AdamW(net.parameters(), lr=lr, weight_decay=weight_decay)
    sched = torch.optim.lr_scheduler.OneCycleLR(opt, max_lr=lr, total_steps=max(steps, 1),
                                                pct_start=0.05)
    owners = records.owners()
    val = positions(records, np.repeat(val_g, NUM_CARDS), np.tile(np.arange(NUM_CARDS),
                                                                   len(val_g)), owners)
    started = time.perf_counter()
    history = []
    step = 0
    per_epoch = max(1, math.ceil(steps / max(1, math.ceil(epochs))))  # evaluate once an epoch
    for step in range(steps):
        games = rng.choice(train_g, batch, p=draw_p)
        plies = rng.integers(0, NUM_CARDS, batch)
        p, target, allowed = positions(records, games, plies, owners)
        loss = _loss(net, p, target, allowed, device)
        opt.zero_grad(set_to_none=True)
        loss.backward()
        opt.step()
        sched.step()
        last = step == steps - 1
        minutes = (time.perf_counter() - started) / 60
        if (step + 1) % per_epoch == 0 or last or (max_minutes and minutes > max_minutes):
            val_loss = _val_loss(net, val, device)
            history.append({"step": step + 1, "train_loss": float(loss.detach()),
                            "val_loss": val_loss, "minutes": minutes})
            if progress:
                print(f"step {step + 1}/{steps} train {float(loss.detach()):.4f} "
                      f"val {val_loss:.4f} {minutes:.1f} min", file=sys.stderr)
            summary = {"games": len(records), "train_games": len(train_g),
                       "val_games": len(val_g), "steps": step + 1, "batch": batch, "lr": lr,
                       "minutes": minutes, "history": history, **(meta or {})}
            save_belief(out, net.cpu(), summary)
            net.to(device)
            if max_minutes and minutes > max_minutes:
                break
    return summary


@torch.no_grad()
def _val_loss(net, val, device, chunk: int = 4096) -> float:
    net.eval()
    p, target, allowed = val
    total = count = 0.0
    for s in range(0, len(p), chunk):
        sl = slice(s, s + chunk)
        part = p.take(sl)
        mask = target[sl] >= 0
        total += float(_loss(net, part, target[sl], allowed[sl], device)) * mask.sum()
        count += mask.sum()
    net.train()
    return total / max(count, 1)


def uniform_prior(p: Positions, allowed: np.ndarray) -> np.ndarray:
    """[B, 52, 3] exact marginals of the uniform distribution over the deals consistent with
    each position's hand sizes and voids (the constrained product model with weights 1)."""
    return constrained(p, allowed.astype(np.float64), fit=False)


def constrained(p: Positions, cells: np.ndarray, fit: bool = True,
                above: int = SamplingConfig.calibrate_above) -> np.ndarray:
    """[B, 52, 3] marginals of the deals the sampler draws: the constrained product model of
    `cells` [B, 52, 3] under each position's hand sizes, calibrated to `cells` when `fit` and
    more than `above` cards are unseen (sampling/belief.py fitted_weights; with the defaults the
    distribution `sampling.method=belief` draws from)."""
    allowed = cells > 0
    out = np.zeros(allowed.shape)
    for row in range(len(p)):
        cards = np.flatnonzero(allowed[row].any(axis=1))
        if not len(cards):
            continue
        sizes = np.zeros(3, dtype=np.int64)
        played = p.seats[row, :p.plies[row]]
        for j in range(3):
            sizes[j] = 13 - np.sum(played == (p.viewer[row] + 1 + j) % 4)
        w = cells[row, cards]
        out[row, cards] = marginals(fitted_weights(w, sizes, SamplingConfig.calibrate if fit else 0,
                                                         above), sizes)
    return out


def report(data, beliefs, games: int = 200, val_fraction: float = 0.05) -> dict:
    """Held-out log-loss (nats per unseen card) and accuracy of the belief network against the
    exact uniform prior: all unseen cards and the deciding cards, by trick, and by the kind of
    player holding the card. logloss_belief scores the network's own per-card softmax;
    logloss_sampled the marginals of the deals the player draws from it (the default settings:
    calibrated under the exact hand sizes); logloss_fit_early those calibrated only while more
    than 15 cards are unseen, the product later (`calibrate_above=15`); logloss_product those of
    the constrained product of its probabilities as they are (`calibrate=0`)."""
    records = load_shards(data)
    _, val_g = split(records, val_fraction)
    val_g = val_g[:games]
    p, target, allowed = positions(records, np.repeat(val_g, NUM_CARDS),
                                   np.tile(np.arange(NUM_CARDS), len(val_g)))
    model = load_belief(beliefs)
    probs = np.concatenate([model.relative(p.take(slice(s, s + 4096)))
                            for s in range(0, len(p), 4096)])
    prior = uniform_prior(p, allowed)
    cells = np.where(allowed, np.maximum(probs, MIN_WEIGHT), 0.0)
    fitted = constrained(p, cells)
    early = constrained(p, cells, above=FIT_EARLY)
    product = constrained(p, cells, fit=False)
    rows, cards = np.nonzero(target >= 0)
    t = target[rows, cards]
    ll_net = -np.log(np.maximum(probs[rows, cards, t], 1e-12))
    ll_fit = -np.log(np.maximum(fitted[rows, cards, t], 1e-12))
    ll_early = -np.log(np.maximum(early[rows, cards, t], 1e-12))
    ll_prod = -np.log(np.maximum(product[rows, cards, t], 1e-12))
    ll_uni = -np.log(np.maximum(prior[rows, cards, t], 1e-12))
    uncertain = allowed[rows, cards].sum(axis=1) > 1
    acc_net = probs[rows, cards].argmax(axis=1) == t
    acc_uni = prior[rows, cards].argmax(axis=1) == t
    trick = p.plies[rows] // 4
    deciding = np.isin(cards, DECIDING)
    holder_kind = records.kinds[np.repeat(val_g, NUM_CARDS)[rows],
                                (p.viewer[rows] + 1 + t) % 4]

    def stats(sel) -> dict:
        sel = sel & uncertain
        n = int(sel.sum())
        if not n:
            return {"cards": 0}
        return {"cards": n, "logloss_belief": float(ll_net[sel].mean()),
                "logloss_sampled": float(ll_fit[sel].mean()),
                "logloss_fit_early": float(ll_early[sel].mean()),
                "logloss_product": float(ll_prod[sel].mean()),
                "logloss_uniform": float(ll_uni[sel].mean()),
                "accuracy_belief": float(acc_net[sel].mean()),
                "accuracy_uniform": float(acc_uni[sel].mean())}

    names = list(KINDS)
    return {"games": len(val_g), "all": stats(np.ones_like(uncertain)),
            "deciding": stats(deciding),
            "by_trick": [stats(trick == k) for k in range(13)],
            "deciding_by_trick": [stats(deciding & (trick == k)) for k in range(13)],
            "by_holder_kind": {names[k]: stats(holder_kind == k)
                               for k in np.unique(holder_kind)}}


def iec_comparison(data, beliefs, checkpoint, games: int = 60, draws: int = 32, seed: int = 0,
                   val_fraction: float = 0.05, shrink: float = 0.1) -> dict:
    """The belief network against the paper's inference (IEC) on the same held-out positions.

    One decision per trick of each of the first `games` held-out games (ply 4t + t mod 4). At
    each, `draws` deals exactly uniform over those consistent with the view are weighed by IEC
    (sampling/iec.py, the paper's settings, the policy of `checkpoint`); the card-location
    marginals of the weighted deals are scored against the true holders, beside the same deals
    equally weighted (what IEC starts from), the belief network's probabilities and the exact
    uniform prior. Finite samples give some cells 0, so both sampled estimates are shrunk
    toward the exact prior by `shrink` (p = (1 - shrink) x sampled + shrink x prior) before
    their log-loss; the mean probability given to the true holder needs no shrinking."""
    records = load_shards(data)
    _, val_g = split(records, val_fraction)
    val_g = val_g[:games]
    tricks = np.arange(13)
    g = np.repeat(val_g, 13)
    plies = np.tile(4 * tricks + tricks % 4, len(val_g))
    p, target, allowed = positions(records, g, plies)
    belief = load_belief(beliefs).relative(p)
    prior = uniform_prior(p, allowed)
    evaluator = NetworkEvaluator(load_model(checkpoint))
    policy = lambda x: evaluator.forward_features(x)[0]  # noqa: E731
    rng = np.random.default_rng(seed)
    equal = np.zeros_like(prior)
    weighted = np.zeros_like(prior)
    ess = np.zeros(len(p))
    for row in range(len(p)):
        game, ply = int(g[row]), int(plies[row])
        state = GongzhuState(records.deal[game], int(records.leader[game]))
        for t in range(ply):
            state.apply(int(records.cards[game, t]))
        viewer = int(p.viewer[row])
        view = state.view(viewer)
        owners = sample_owners(view, draws, rng)  # [K, 52]
        log_factor, _ = iec_log_weights(view, owners_to_hands(owners), policy, IECConfig())
        w = combine(np.full(draws, 1.0 / draws), log_factor)
        ess[row] = 1.0 / np.square(w).sum()
        for j in range(3):
            hit = owners == (viewer + 1 + j) % 4  # [K, 52]
            equal[row, :, j] = hit.mean(axis=0)
            weighted[row, :, j] = w @ hit
    equal = (1 - shrink) * equal + shrink * prior
    weighted = (1 - shrink) * weighted + shrink * prior
    rows, cards = np.nonzero(target >= 0)
    t = target[rows, cards]
    uncertain = allowed[rows, cards].sum(axis=1) > 1
    deciding = np.isin(cards, DECIDING)
    late = p.plies[rows] // 4 >= 6

    def score(q, sel) -> dict:
        sel = sel & uncertain
        true = q[rows, cards, t][sel]
        return {"logloss": float(-np.log(np.maximum(true, 1e-12)).mean()),
                "p_true": float(true.mean()),
                "accuracy": float((q[rows, cards].argmax(axis=1) == t)[sel].mean())}

    methods = {"belief": belief, "iec": weighted, "equal_draws": equal, "uniform": prior}
    return {"games": len(val_g), "positions": len(p), "draws": draws, "shrink": shrink,
            "iec_mean_ess": float(ess.mean()),
            "cards": {"all": int(uncertain.sum()), "deciding": int((uncertain & deciding).sum())},
            **{f"{part}": {name: score(q, sel) for name, q in methods.items()}
               for part, sel in (("all", np.ones_like(uncertain)), ("deciding", deciding),
                                 ("tricks_7_13", late))}}


def main(argv=None) -> None:
    parser = argparse.ArgumentParser(prog="python -m scrofazero.train.belief",
                                     description=__doc__.split("\n\n")[0])
    sub = parser.add_subparsers(dest="command", required=True)
    g = sub.add_parser("generate", help="play games into shards (resumable)")
    g.add_argument("--out", required=True)
    g.add_argument("--games", type=int, required=True)
    g.add_argument("--mix", default="scrofazero:greed=3,raw:greed=2,greed:greed=1,if:greed=1,"
                                    "random:greed=0.5,scrofazero:raw=1")
    g.add_argument("--seed", type=int, default=1)
    g.add_argument("--checkpoint", default=None, help="policy/value network (default: shipped)")
    g.add_argument("--beliefs", default=None, help="belief network of the belief players")
    g.add_argument("--workers", type=int, default=1)
    g.add_argument("--shard-games", type=int, default=256)
    f = sub.add_parser("fit", help="train a belief network on shards")
    f.add_argument("--data", nargs="+", required=True)
    f.add_argument("--out", required=True)
    f.add_argument("--hidden", type=int, default=512)
    f.add_argument("--blocks", type=int, default=2)
    f.add_argument("--epochs", type=float, default=4.0)
    f.add_argument("--batch", type=int, default=512)
    f.add_argument("--lr", type=float, default=1e-3)
    f.add_argument("--device", default="cpu")
    f.add_argument("--max-minutes", type=float, default=0.0)
    f.add_argument("--init", default=None)
    f.add_argument("--dropout", type=float, default=0.0)
    f.add_argument("--weight-decay", type=float, default=0.0)
    f.add_argument("--weights", type=float, nargs="+", default=None,
                   help="one weight per --data folder (how often its games are drawn)")
    f.add_argument("--seed", type=int, default=0)
    f.add_argument("--threads", type=int, default=1, help="torch threads")
    r = sub.add_parser("report", help="held-out log-loss against the uniform prior")
    r.add_argument("--data", nargs="+", required=True)
    r.add_argument("--beliefs", default=None)
    r.add_argument("--games", type=int, default=200)
    r.add_argument("--json", default=None)
    r.add_argument("--iec-games", type=int, default=0,
                   help="also score IEC's weighted deals on one decision per trick of this many "
                        "held-out games (slow: the policy network replays the plays)")
    r.add_argument("--iec-draws", type=int, default=32)
    r.add_argument("--checkpoint", default=None, help="IEC's policy network (default: shipped)")
    args = parser.parse_args(argv)
    if args.command == "generate":
        checkpoint = find_checkpoint(args.checkpoint, root="/nonexistent")
        generate(args.out, args.games, args.mix, args.seed, checkpoint, args.beliefs,
                 args.workers, args.shard_games)
    elif args.command == "fit":
        torch.set_num_threads(args.threads)
        summary = fit(args.data, args.out, args.hidden, args.blocks, args.epochs, args.batch,
                      args.lr, seed=args.seed, device=args.device, max_minutes=args.max_minutes,
                      init=args.init, data_weights=args.weights, dropout=args.dropout,
                      weight_decay=args.weight_decay,
                      meta={"data": [str(d) for d in args.data], "data_weights": args.weights})
        print(json.dumps({k: v for k, v in summary.items() if k != "history"}))
    else:
        result = report(args.data, args.beliefs, args.games)
        print(json.dumps({k: result[k] for k in ("games", "all", "deciding")}, indent=1))
        if args.iec_games:
            checkpoint = find_checkpoint(args.checkpoint, root="/nonexistent")
            result["iec_comparison"] = iec_comparison(args.data, args.beliefs, checkpoint,
                                                      args.iec_games, args.iec_draws)
            print(json.dumps(result["iec_comparison"], indent=1))
        if args.json:
            write_json_atomic(args.json, result)


if __name__ == "__main__":
    main()
