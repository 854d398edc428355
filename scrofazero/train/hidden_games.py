"""Hidden-hand games for the inference networks: playing them, their shards, their positions.

Games played by the players our player meets and is (Mr. Greed, Mr. If, Mr. Random, the raw
network, the full player, the players with a belief), each seat seeing only its own view, on
fresh random deals. Never the standard deals the evaluation uses: the generator refuses any deal
that is one of them (in any rotation), so a network cannot remember them. Games are written in
shards (`shard_00000.npz`, ...) atomically; a generation that is stopped continues where it
stopped, shard by shard, and gives the same games (every game's deal and every decision's
randomness come from (seed, game index)).

A position is one seat's information at one of its own decisions (`positions`); the
card-location network (nn/belief.py) learns the true holder of each card the seat cannot see,
the behaviour network (nn/behaviour.py) the card the seat played. Their fit is
train/inference_fit.py's; the belief's report train/belief_report.py's.

    python -m scrofazero.train.hidden_games out=DIR games=N mix=KIND:KIND=W,... seed=S
        [workers=W] [shard_games=G] [checkpoint=PATH] [beliefs=PATH]
"""

from __future__ import annotations

import dataclasses
import io
import json
import math
import multiprocessing as mp
import sys
import time
from collections.abc import Iterable, Sequence
from concurrent.futures import ProcessPoolExecutor
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import numpy as np
import numpy.typing as npt
import torch

from scrofazero import shipped
from scrofazero.agents import Agent, make_agent
from scrofazero.agents.scrofazero_agent import play_sampling, play_weighting
from scrofazero.atomic import write_atomic, write_json_atomic
from scrofazero.games.gongzhu.cards import NUM_CARDS
from scrofazero.games.gongzhu.deals import hands_of, load_deals, random_deal
from scrofazero.games.gongzhu.rules import GongzhuState
from scrofazero.nn.belief import Positions, allowed_seats
from scrofazero.settings import Count, Seed, run_module

# The players of the data, by name: the registry's player and its settings, spelled out so that
# a kind plays the same whatever the players' defaults become.
KINDS: dict[str, tuple[str, dict[str, Any]]] = {
    "greed": ("greed", {}),
    "if": ("if", {}),
    "random": ("random", {}),
    "raw": ("raw", {"sampling": {"method": "uniform"}}),  # the paper's raw network player
    # the full player as it was before the belief network: 18 stratified deals, IEC weights
    "scrofazero": ("scrofazero", {"sampling": {"method": "stratified", "per_stratum": 2},
                                  "weighting": {"enabled": True}}),
    "belief_raw": ("raw", {"sampling": {"method": "belief"}}),
    "belief": ("scrofazero", {"sampling": {"method": "belief", "num_deals": 18},
                              "weighting": {"enabled": False}}),
    # worlds from the belief weighed by the behaviour network's likelihood of the plays
    # (new kinds go last: shards store a kind by its index here)
    "policy_raw": ("raw", {"sampling": {"method": "policy"}}),
    "policy": ("scrofazero", {"sampling": {"method": "policy", "num_deals": 18},
                              "weighting": {"enabled": False}}),
}


class StandardDealError(ValueError):
    """A deal of the evaluation set was offered as training data."""


def deal_key(deal: npt.ArrayLike) -> frozenset[int]:
    """The four hands of a deal as a set of 52-bit masks: equal for a deal and its rotations."""
    return frozenset(hands_of(np.asarray(deal)))


_STANDARD: set[frozenset[int]] | None = None


def check_not_standard(deal: npt.ArrayLike) -> None:
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
    def concat(parts: Iterable[GameRecords]) -> GameRecords:
        parts = list(parts)
        return GameRecords(*(np.concatenate([getattr(p, f) for p in parts])
                             for f in ("deal", "leader", "cards", "seats", "kinds")))

    def owners(self) -> np.ndarray:
        """[G, 52] the seat that was dealt each card."""
        out = np.empty((len(self), NUM_CARDS), dtype=np.int64)
        out[np.arange(len(self))[:, None], self.deal] = np.repeat(np.arange(4), 13)[None, :]
        return out


# --- generation (worker processes) ---------------------------------------------------------
_AGENTS: dict[str, Agent] = {}


def _build(kinds: Iterable[str], checkpoint: str | None, beliefs: str | None,
           behaviour: str | None = None) -> dict[str, Agent]:
    agents = {}
    for kind in kinds:
        name, settings = KINDS[kind]
        kwargs = {k: dict(v) if isinstance(v, dict) else v for k, v in settings.items()}
        if name in ("raw", "scrofazero"):
            kwargs["checkpoint"] = checkpoint
            if kind.startswith(("belief", "policy")) and beliefs:
                kwargs["sampling"]["beliefs"] = beliefs
            if kind.startswith("policy") and behaviour:
                kwargs["sampling"]["behaviour"] = behaviour
        agents[kind] = make_agent(name, **_settings_kwargs(name, kwargs))
    return agents


def _settings_kwargs(name: str, kwargs: dict[str, Any]) -> dict[str, Any]:
    """Nested settings ({'sampling': {'method': ...}}) as the full player's settings objects,
    its defaults for the fields not given."""
    if name != "scrofazero":
        return kwargs
    out = dict(kwargs)
    for group, default in (("sampling", play_sampling), ("weighting", play_weighting)):
        if isinstance(kwargs.get(group), dict):
            out[group] = dataclasses.replace(default(), **kwargs[group])  # checked as it is built
    return out


def _init(kinds: Iterable[str], checkpoint: str | None, beliefs: str | None,
          behaviour: str | None = None) -> None:
    torch.set_num_threads(1)
    _AGENTS.update(_build(kinds, checkpoint, beliefs, behaviour))


def play_recorded(deal: npt.ArrayLike, leader: int, agents: Sequence[Agent],
                  rngs: Sequence[np.random.Generator]) -> tuple[np.ndarray, np.ndarray]:
    """Play one hidden-hand game; returns (cards [52], seats [52]) in play order."""
    state = GongzhuState(deal, leader)
    for _ in range(NUM_CARDS):
        seat = state.current_player
        state.apply(int(agents[seat].act(state.view(seat), rngs[seat])))
    seats, cards = zip(*state.history)
    return np.array(cards, dtype=np.int8), np.array(seats, dtype=np.int8)


def _game(seed: int, index: int, mix: Sequence[tuple[str, str, float]]
          ) -> tuple[np.ndarray, int, list[str]]:
    """Game `index`: its deal, leader and seating from (seed, index)."""
    rng = np.random.default_rng(np.random.SeedSequence([seed, index, 7]))
    deal = random_deal(rng)
    check_not_standard(deal)
    weights = np.array([w for _, _, w in mix])
    a, b, _ = mix[int(rng.choice(len(mix), p=weights / weights.sum()))]
    seating = [a, b, a, b] if rng.random() < 0.5 else [b, a, b, a]
    return deal, int(rng.integers(4)), seating


def _play_games(seed: int, start: int, count: int, mix: Sequence[tuple[str, str, float]]
                ) -> GameRecords:
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


def save_shard(path: str | Path, records: GameRecords) -> Path:
    buffer = io.BytesIO()
    np.savez_compressed(buffer, **{f: getattr(records, f) for f in
                                   ("deal", "leader", "cards", "seats", "kinds")})
    data = buffer.getvalue()
    return write_atomic(path, lambda f: f.write(data))


def load_shards(folders: str | Path | Iterable[str | Path]) -> GameRecords:
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


def generate(out: str | Path, games: int, mix: str, seed: int, checkpoint: str | None = None,
             beliefs: str | None = None, workers: int = 1, shard_games: int = 256,
             progress: bool = True, behaviour: str | None = None) -> Path:
    """Play `games` games of the seating `mix` into shards under `out` (resumable)."""
    mix_list = parse_mix(mix)
    out = Path(out)
    out.mkdir(parents=True, exist_ok=True)
    info = {"mix": mix, "seed": seed, "shard_games": shard_games, "checkpoint": checkpoint,
            "beliefs": beliefs, "behaviour": behaviour, "kinds": list(KINDS)}
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
        _init(kinds, checkpoint, beliefs, behaviour)
        for k in todo:
            count = min(shard_games, games - k * shard_games)
            save_shard(out / f"shard_{k:05d}.npz", _play_games(seed, k * shard_games, count,
                                                                mix_list))
            if progress:
                print(f"shard {k}: {time.perf_counter() - started:.0f} s", file=sys.stderr)
        return out
    ctx = mp.get_context("spawn")
    with ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init,
                             initargs=(kinds, checkpoint, beliefs, behaviour)) as pool:
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
def positions(records: GameRecords, games: np.ndarray, plies: np.ndarray,
              owners: np.ndarray | None = None) -> tuple[Positions, np.ndarray, np.ndarray]:
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


_DEAL_HASH = np.random.default_rng(20261204).integers(1, 2**31, size=NUM_CARDS)


def split(records: GameRecords, val_fraction: float) -> tuple[np.ndarray, np.ndarray]:
    """Train and validation game indices: every game whose deal hashes into the validation
    fraction is held out, so a game is on the same side whatever folders or shards it is
    loaded with."""
    g = np.arange(len(records))
    key = (records.deal.astype(np.int64) * _DEAL_HASH[None, :]).sum(axis=1) % 1000
    held = key < val_fraction * 1000
    return g[~held], g[held]


@dataclass
class GenerateConfig:
    """`python -m scrofazero.train.hidden_games`: what games to play into which folder."""

    out: str  # the folder of the shards (made if missing; a stopped generation resumes there)
    games: Count  # how many games in all
    # seatings: TEAM_A:TEAM_B=WEIGHT,... over KINDS (e.g. greed:greed=2,belief_raw:greed=3)
    mix: str = "scrofazero:greed=3,raw:greed=2,greed:greed=1,if:greed=1,random:greed=0.5"
    seed: Seed = 1  # every game's deal, seating and decisions come from (seed, game index)
    checkpoint: str | None = None  # policy/value network of the network players (None: shipped)
    beliefs: str | None = None  # belief network of the belief and policy players (None: shipped)
    behaviour: str | None = None  # behaviour network of the policy players (None: shipped)
    workers: Count = 1  # processes playing shards in parallel
    shard_games: Count = 256  # games per shard file


def generate_games(settings: GenerateConfig) -> Path:
    """The module runner's job: `generate` with the settings, the network found (shipped.py)."""
    return generate(settings.out, settings.games, settings.mix, settings.seed,
                    shipped.network_file(settings.checkpoint), settings.beliefs,
                    settings.workers, settings.shard_games, behaviour=settings.behaviour)


if __name__ == "__main__":
    run_module(GenerateConfig, generate_games)
