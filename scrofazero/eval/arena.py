"""Duplicate arena (docs/rules.md section 6): single games, 2v2 duplicate matches and matrices.

Players are named by the agent registry (scrofazero.agents.make_agent). They are built once in
the calling process, so that a player that cannot be built fails there with its own error, and
then again inside each worker process. Every decision's rng comes from
SeedSequence([seed, deal_index, play, seat]), so a match gives the same per-deal values whatever
the number of workers. A worker that dies (crash, os._exit, kill) fails the whole match at once
with BrokenProcessPool; an error inside a worker comes back as itself.
"""

from __future__ import annotations

import math
import multiprocessing as mp
import sys
from collections.abc import Sequence
from concurrent.futures import ProcessPoolExecutor, as_completed
from concurrent.futures.process import BrokenProcessPool
from dataclasses import dataclass
from typing import cast

import numpy as np
from tqdm import tqdm

from scrofazero.agents import Agent, make_agent
from scrofazero.agents.base import ObservingAgent
from scrofazero.cluster import connect
from scrofazero.games.gongzhu.deals import check_deal, rotate_deal
from scrofazero.games.gongzhu.rules import GongzhuState

NUM_PLAYS = 2  # each deal is played as dealt and rotated one seat on


@dataclass
class MatchResult:
    """Outcome of duplicate_match: A's team difference per deal (mean of its two plays)."""

    values: np.ndarray  # [D] float64
    mean: float
    stderr: float  # std(ddof=1) / sqrt(D); nan for a single deal
    deals: int


def play_game(deal, leader: int, agents: Sequence[Agent], rngs) -> list[int]:
    """Play one game to the end; returns the team difference per seat [4].

    deal: [52] card indices; agents: 4 players by seat; rngs: 4 numpy Generators by seat, or an
    int seed (seat s then uses SeedSequence([seed, s])).
    """
    if len(agents) != 4:
        raise ValueError(f"play_game needs 4 agents (one per seat), got {len(agents)}")
    if isinstance(rngs, (int, np.integer)):
        rngs = [np.random.default_rng(np.random.SeedSequence([int(rngs), s])) for s in range(4)]
    elif len(rngs) != 4:
        raise ValueError(f"play_game needs 4 rngs (one per seat) or a seed, got {len(rngs)}")
    state = GongzhuState(deal, leader)
    for agent in agents:
        if getattr(agent, "needs_players", False):  # the posterior setting: evaluation only
            cast(ObservingAgent, agent).observe_players(agents)
    for _ in range(52):
        seat = state.current_player
        if getattr(agents[seat], "needs_deal", False):  # an oracle setting: evaluation only
            cast(ObservingAgent, agents[seat]).observe_deal(state.hands)
        card = agents[seat].act(state.view(seat), rngs[seat])
        try:
            state.apply(card)
        except ValueError as err:
            name = getattr(agents[seat], "name", type(agents[seat]).__name__)
            msg = f"player {name!r} at seat {seat} made an illegal move: {err}"
            raise ValueError(msg) from None
    return state.returns()


def _decision_rngs(seed: int, deal_index: int, play: int) -> list[np.random.Generator]:
    return [
        np.random.default_rng(np.random.SeedSequence([seed, deal_index, play, seat]))
        for seat in range(4)
    ]


def deal_value(deal, agents: Sequence[Agent], seed: int, deal_index: int) -> float:
    """Duplicate value of one deal for the team at seats 0/2: the mean of its two plays.

    Play 0 is the deal as dealt with leader 0; play 1 moves every hand one seat on with leader 1,
    so the same hand leads and each team holds the other side's cards.
    """
    first = play_game(deal, 0, agents, _decision_rngs(seed, deal_index, 0))[0]
    second = play_game(rotate_deal(deal, 1), 1, agents, _decision_rngs(seed, deal_index, 1))[0]
    return (first + second) / 2


# --- worker side (top-level functions so that spawned processes can import them) -----------
_WORKER: dict = {}


def _build_agents(player_a: str, player_b: str, agent_kwargs: dict) -> list[Agent]:
    a = make_agent(player_a, **agent_kwargs.get(player_a, {}))
    b = make_agent(player_b, **agent_kwargs.get(player_b, {}))
    return [a, b, a, b]  # agents act on views only, so one instance serves both partners


def _init_worker(player_a: str, player_b: str, agent_kwargs: dict, seed: int) -> None:
    # An initializer that raises leaves the executor only "a child process terminated
    # abruptly" plus a logged traceback per worker; keeping the error and raising it from the
    # first task sends it back to the caller as itself, with its own message.
    try:
        _WORKER["agents"] = _build_agents(player_a, player_b, agent_kwargs)
    except Exception as err:  # noqa: BLE001 - any error: it is raised again, not swallowed
        _WORKER["error"] = err
    _WORKER["seed"] = seed
    torch = sys.modules.get("torch")  # loaded by network players only
    if torch is not None:
        torch.set_num_threads(1)  # one thread per worker process: workers share the cores


def _play_chunk(start: int, deals: np.ndarray) -> list[float]:
    if "error" in _WORKER:
        raise _WORKER["error"]
    agents, seed = _WORKER["agents"], _WORKER["seed"]
    return [deal_value(d, agents, seed, start + k) for k, d in enumerate(deals)]


def _play_in_workers(player_a: str, player_b: str, agent_kwargs: dict, deals: np.ndarray,
                     seed: int, workers: int, bar) -> list[float]:
    """Per-deal values [D] of deals played by `workers` spawned processes, in deal order.

    concurrent.futures rather than multiprocessing.Pool: Pool replaces a worker that dies (and
    re-runs a failing initializer) without end, and the lost task is waited for forever;
    ProcessPoolExecutor marks the pool broken and fails every pending task at once.
    """
    num = len(deals)
    # Small chunks keep the bar moving and the load balanced.
    size = max(1, min(16, num // (4 * workers)))
    ctx = mp.get_context("spawn")  # safe with torch-using agents and on every platform
    init = (player_a, player_b, agent_kwargs, seed)
    pool = ProcessPoolExecutor(workers, mp_context=ctx, initializer=_init_worker, initargs=init)
    chunks: dict[int, list[float]] = {}  # first deal index -> the chunk's values
    try:
        starts = {pool.submit(_play_chunk, s, deals[s : s + size]): s for s in range(0, num, size)}
        # As they finish, not in deal order: the first chunk to fail ends the match at once
        # even while an earlier chunk is still being played.
        for future in as_completed(starts):
            chunks[starts[future]] = future.result()
            bar.update(len(chunks[starts[future]]))
    except BrokenProcessPool as err:
        raise BrokenProcessPool(
            f"{player_a} vs {player_b}: a worker process died (it crashed, ran out of memory "
            f"or was killed), so the match was abandoned ({err})") from None
    except BaseException:
        # An error in one chunk (or Ctrl-C) ends the match: stop the other workers now
        # rather than let them finish chunks whose results nobody will read.
        _stop_workers(pool)
        raise
    finally:
        pool.shutdown(wait=True, cancel_futures=True)
    return [v for start in sorted(chunks) for v in chunks[start]]  # deal order


def _play_ray_chunk(player_a: str, player_b: str, agent_kwargs: dict, seed: int, start: int,
                    deals: np.ndarray) -> list[float]:
    """One Ray task: its own players, deals start.. of the match."""
    torch = sys.modules.get("torch")
    if torch is not None:
        torch.set_num_threads(1)
    agents = _build_agents(player_a, player_b, agent_kwargs)
    return [deal_value(d, agents, seed, start + k) for k, d in enumerate(deals)]


def _play_in_ray(player_a: str, player_b: str, agent_kwargs: dict, deals: np.ndarray,
                 seed: int, tasks: int, bar) -> list[float]:
    """Per-deal values [D] of deals split over `tasks` Ray tasks (one CPU each), in deal order;
    the first task to fail ends the match with its error (the others are cancelled)."""
    ray = connect()  # the cluster this process joined, or a local one
    task = ray.remote(num_cpus=1, max_retries=0)(_play_ray_chunk)
    num = len(deals)
    size = max(1, math.ceil(num / tasks))
    refs = {task.remote(player_a, player_b, agent_kwargs, seed, s, deals[s : s + size]): s
            for s in range(0, num, size)}
    chunks: dict[int, list[float]] = {}
    try:
        waiting = list(refs)
        while waiting:
            done, waiting = ray.wait(waiting, num_returns=1)
            try:
                chunks[refs[done[0]]] = ray.get(done[0])
            except ray.exceptions.RayTaskError as err:
                raise err.as_instanceof_cause() from None  # the task's own error type
            bar.update(len(chunks[refs[done[0]]]))
    except BaseException:
        for ref in refs:
            ray.cancel(ref, force=True)
        raise
    return [v for start in sorted(chunks) for v in chunks[start]]  # deal order


def _stop_workers(pool: ProcessPoolExecutor) -> None:
    """Cancel the queued chunks and terminate the running worker processes."""
    # The executor has no public way to stop running tasks before Python 3.14
    # (terminate_workers); its process table, which shutdown() drops, is the only handle on them.
    processes = list((getattr(pool, "_processes", None) or {}).values())
    pool.shutdown(wait=False, cancel_futures=True)
    for process in processes:
        if process.is_alive():
            process.terminate()


def _check_deals(deals) -> np.ndarray:
    arr = np.asarray(deals)
    if arr.ndim != 2 or arr.shape[1] != 52 or arr.shape[0] == 0:
        raise ValueError(f"deals must have shape [D, 52] with D >= 1, got {arr.shape}")
    return np.stack([check_deal(d, f"deal {i}") for i, d in enumerate(arr)])  # [D, 52]


def _check_kwargs(agent_kwargs: dict | None, players: Sequence[str]) -> dict:
    agent_kwargs = dict(agent_kwargs or {})
    for key, value in agent_kwargs.items():
        if key not in players:
            raise ValueError(f"agent_kwargs key {key!r} is not a player of this match {players}")
        if not isinstance(value, dict):
            raise ValueError(f"agent_kwargs[{key!r}] must be a dict of keyword arguments")
    return agent_kwargs


def duplicate_match(
    player_a: str,
    player_b: str,
    deals,
    seed: int,
    workers: int = 1,
    progress: bool = True,
    agent_kwargs: dict | None = None,
    backend: str = "processes",
) -> MatchResult:
    """A (seats 0/2) against B (seats 1/3) over deals [D, 52], each played twice.

    agent_kwargs maps a player name to the keyword arguments of make_agent for it, e.g.
    {"greed": {"num_samples": 20}}. Returns A's per-deal values [D], their mean and stderr.
    backend: "processes" (`workers` spawned processes; one: this process) or "ray" (the deals
    split over `workers` Ray tasks on the cluster this process is connected to, see
    scrofazero/cluster.py). Every deal's randomness comes from (seed, deal index), so the values
    are the same whichever way the deals are split.
    """
    if backend not in ("processes", "ray"):
        raise ValueError(f"backend must be processes or ray, got {backend!r}")
    deals = _check_deals(deals)
    agent_kwargs = _check_kwargs(agent_kwargs, (player_a, player_b))
    if workers < 1:
        raise ValueError(f"workers must be >= 1, got {workers}")
    num = len(deals)
    # Built here whatever the number of workers: a player that cannot be built (a missing or
    # corrupt checkpoint, a bad setting) fails now, with its own error, before any worker starts.
    agents = _build_agents(player_a, player_b, agent_kwargs)
    bar = _progress_bar(num, f"{player_a} vs {player_b}", progress)
    try:
        if backend == "ray":
            del agents
            values = _play_in_ray(player_a, player_b, agent_kwargs, deals, seed, workers, bar)
        elif workers == 1:
            values = []
            for i, deal in enumerate(deals):
                values.append(deal_value(deal, agents, seed, i))
                bar.update(1)
        else:
            del agents  # each worker builds its own; these were the check
            values = _play_in_workers(player_a, player_b, agent_kwargs, deals, seed, workers,
                                      bar)
    finally:
        bar.close()
    arr = np.asarray(values, dtype=np.float64)  # [D]
    stderr = float(arr.std(ddof=1) / math.sqrt(num)) if num > 1 else math.nan
    return MatchResult(values=arr, mean=float(arr.mean()), stderr=stderr, deals=num)


class _NoBar:
    def update(self, n: int = 1) -> None:
        pass

    def close(self) -> None:
        pass


def _progress_bar(total: int, desc: str, enabled: bool):
    if not enabled:
        return _NoBar()

    return tqdm(total=total, desc=desc, unit="deal")


def matrix(
    players: list[str],
    deals,
    seed: int,
    workers: int = 1,
    progress: bool = True,
    agent_kwargs: dict | None = None,
    backend: str = "processes",
) -> dict:
    """Duplicate margins between every pair of players (each unordered pair played once;
    workers and backend as duplicate_match).

    agent_kwargs maps player names to make_agent keyword arguments (names not in a pair are
    ignored for that pair).
    Returns {"players", "margin", "stderr", "deals"}: margin[i][j] = points per game by which
    players[j] beats players[i] (j at seats 0/2), margin[j][i] = -margin[i][j], diagonal 0.
    """
    if len(set(players)) != len(players):
        raise ValueError(f"players must be distinct names, got {players}")
    n = len(players)
    margin = [[0.0] * n for _ in range(n)]
    stderr = [[0.0] * n for _ in range(n)]
    num = 0
    for i in range(n):
        for j in range(i + 1, n):
            pair = {k: v for k, v in (agent_kwargs or {}).items() if k in (players[i], players[j])}
            res = duplicate_match(players[j], players[i], deals, seed, workers, progress, pair,
                                  backend=backend)
            margin[i][j], margin[j][i] = res.mean, -res.mean
            stderr[i][j] = stderr[j][i] = res.stderr
            num = res.deals
    if num == 0:
        num = len(_check_deals(deals))
    return {"players": list(players), "margin": margin, "stderr": stderr, "deals": num}


def format_matrix(result: dict) -> str:
    """A text table of a matrix() result: rows i, columns j, cells 'margin (stderr)'."""
    players = result["players"]
    cells = [
        [
            "0" if i == j else f"{result['margin'][i][j]:.1f} ({result['stderr'][i][j]:.1f})"
            for j in range(len(players))
        ]
        for i in range(len(players))
    ]
    corner = "row \\ column"
    width = max([len(corner)] + [len(p) for p in players] + [len(c) for r in cells for c in r])
    lines = [f"{corner:<{width}}  " + "  ".join(f"{p:>{width}}" for p in players)]
    for name, row in zip(players, cells):
        lines.append(f"{name:<{width}}  " + "  ".join(f"{c:>{width}}" for c in row))
    lines.append(f"points per game by which the column player beats the row player; "
                 f"{result['deals']} deals x 2 plays, standard error in brackets")
    return "\n".join(lines)
