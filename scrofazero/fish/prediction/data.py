"""Simulated Fish games for the learned hand predictor (fish/prediction/), never the recordings.

- `simulate_game(...)`: one engine game under the recording rules, one player kind per seat
  (the imitation player of fish/players/imitation.py, logic, random), recording every seat's
  exact belief before every event: the predictor's tracker features come from the trackers the
  players keep anyway (a random player gets one just for this).
- `generate_dataset(...)` / `load_dataset(...)`: shards of such games cached under results/.

Arrays of one game (`GameArrays`): probs [P_obs, T, P, C] (observer o's exact belief before
event t, absolute seats; float32 for simulated games, float64 for evaluation: float16 would
turn 1 - 1e-4 into a certainty and 1e-8 into an impossibility), events [T, EVENT_COLUMNS] int16
(`encode_events`), holders [T, C] int8 (true seat before event t, -1 out of play), hands, and
the player kinds.
"""

from __future__ import annotations

import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np

from scrofazero.atomic import write_atomic
from scrofazero.fish.belief.tracker import BeliefTracker
from scrofazero.fish.match import play_move
from scrofazero.fish.players.imitation import ImitationPlayer
from scrofazero.fish.players.logic import LogicPlayer, RandomPlayer
from scrofazero.fish.prediction.metric import RecordedGame, game_from_events
from scrofazero.games.fish.cards import num_cards, set_cards, set_of
from scrofazero.games.fish.events import Ask, Call, Event
from scrofazero.games.fish.rules import FishState
from scrofazero.games.fish.transcripts import recording_params

PLAYER_KINDS = ("imitation", "logic", "random")
DEFAULT_MIX = {"imitation": 0.7, "logic": 0.15, "random": 0.15}

EVENT_COLUMNS = 20
"""encode_events row: kind (0 none, 1 ask, 2 call), asker / caller, target (-1 for a call), card
(-1 for a call), success / correct, set, the seat named for each of the set's 6 cards (calls;
-1 for asks), cards given up per seat (calls, up to 8 seats; -1 when not public or no seat)."""


def make_player(kind: str, seed: int, jitter: float = 0.25):
    if kind == "imitation":
        return ImitationPlayer(seed=seed, jitter=jitter)
    if kind == "logic":
        return LogicPlayer(seed=seed)
    if kind == "random":
        return RandomPlayer(seed=seed)
    raise ValueError(f"unknown player kind {kind!r}; choose from {PLAYER_KINDS}")


@dataclass
class GameArrays:
    """One game's predictor inputs and labels (module docstring)."""

    num_players: int
    probs: np.ndarray  # [P_obs, T, P, C]
    events: np.ndarray  # [T, EVENT_COLUMNS] int16; row t = events[t]
    holders: np.ndarray  # [T, C] int8, true seat before event t
    hands: np.ndarray  # [P, hand size] int8
    kinds: tuple = ()
    name: str = ""
    rejected: int = 0  # events some seat's tracker could not place (skipped for that seat)

    @property
    def num_steps(self) -> int:
        return self.holders.shape[0]


def encode_events(events: Sequence[Event], num_players: int) -> np.ndarray:
    out = np.full((len(events), EVENT_COLUMNS), -1, np.int16)
    out[:, 0] = 0
    for t, e in enumerate(events):
        if isinstance(e, Ask):
            out[t, :6] = (1, e.asker, e.target, e.card, int(e.success), set_of(e.card))
        elif isinstance(e, Call):
            out[t, :6] = (2, e.caller, -1, -1, int(e.correct), e.set_id)
            named = dict(e.assignment)
            out[t, 6:12] = [named[c] for c in set_cards(e.set_id)]
            if e.removed is not None:
                out[t, 12:12 + num_players] = e.removed
        else:
            raise ValueError(f"not a Fish event: {e!r}")
    return out


def decode_events(rows: np.ndarray, num_players: int) -> list[Event]:
    events: list[Event] = []
    for row in rows.tolist():
        if row[0] == 1:
            events.append(Ask(row[1], row[2], row[3], bool(row[4])))
        elif row[0] == 2:
            cards = set_cards(row[5])
            removed = row[12:12 + num_players]
            events.append(Call(row[1], row[5], tuple(zip(cards, row[6:12])), bool(row[4]),
                               None if min(removed) < 0 else tuple(removed)))
        else:
            raise ValueError(f"not an event row: {row}")
    return events


def to_recorded_game(arrays: GameArrays) -> RecordedGame:
    params = recording_params(arrays.num_players)
    return game_from_events(arrays.name, arrays.num_players, arrays.hands.tolist(),
                            decode_events(arrays.events, arrays.num_players),
                            ask_held_allowed=params.ask_held_allowed,
                            ask_needs_other=params.ask_needs_other)


def tracker_sequences(game: RecordedGame, observers: Sequence[int] | None = None,
                      dtype=np.float32) -> tuple[np.ndarray, int]:
    """([len(observers), T, P, C] exact beliefs before each event t < T = len(events), the
    number of events a tracker rejected) as metric.evaluate_game sees them: a tracker
    rejecting an event skips it for that seat."""
    n, T = game.num_players, len(game.events)
    seats = range(n) if observers is None else observers
    out = np.zeros((len(seats), T, n, num_cards(n)), dtype)
    rejected = 0
    for i, seat in enumerate(seats):
        tracker = BeliefTracker(n, seat, game.hands[seat], ask_held_allowed=game.ask_held_allowed,
                                ask_needs_other=game.ask_needs_other)
        for t in range(T):
            out[i, t] = tracker.probabilities()
            if t + 1 < T:
                try:
                    tracker.update(game.events[t])
                except ValueError:
                    rejected += 1
    return out, rejected


def game_arrays(game: RecordedGame, probs: np.ndarray | None = None,
                dtype=np.float32) -> GameArrays:
    """The arrays of a finished game (a recording, say), running the trackers when `probs` (all
    observers) is not given; float64 beliefs keep prediction/metric.py's certainty test exact."""
    rejected = 0
    if probs is None:
        probs, rejected = tracker_sequences(game, dtype=dtype)
    T = len(game.events)
    return GameArrays(game.num_players, np.asarray(probs, dtype),
                      encode_events(game.events, game.num_players),
                      np.asarray(game.holders[:T], np.int8),
                      np.asarray(game.hands, np.int8), name=game.name, rejected=rejected)


def simulate_game(num_players: int, kinds: Sequence[str], seed: int, max_moves: int = 300,
                  jitter: float = 0.25, max_events: int | None = None) -> GameArrays:
    """One engine game under the recording rules (fish.transcripts.recording_params) with
    kinds[seat] playing each seat, a seeded deal and first player; every seat's exact belief is
    recorded before every event. Past max_moves the player to move must call; with max_events,
    only the game's first max_events events are played (a prefix, for tests)."""
    params = recording_params(num_players)
    rng = np.random.default_rng(seed)
    state = FishState.deal(params, rng, first_player=int(rng.integers(num_players)))
    players = [make_player(kind, seed=seed * 97 + seat, jitter=jitter)
               for seat, kind in enumerate(kinds)]
    trackers, own = [], []
    for seat, player in enumerate(players):
        player.reset(num_players, seat, state.hand(seat), ask_held_allowed=params.ask_held_allowed,
                     ask_needs_other=params.ask_needs_other)
        tracker = getattr(player, "tracker", None)
        own.append(tracker is None)
        trackers.append(tracker or BeliefTracker(num_players, seat, state.hand(seat),
                                                 ask_held_allowed=params.ask_held_allowed,
                                                 ask_needs_other=params.ask_needs_other))
    probs, moves = [], 0
    while not state.is_terminal and (max_events is None or len(state.events) < max_events):
        before = np.stack([tr.probabilities() for tr in trackers]).astype(np.float32)
        event = play_move(state, players, force_call=moves >= max_moves)
        moves += 1
        probs.append(before)
        for seat, player in enumerate(players):
            player.observe(event)
            if own[seat]:
                trackers[seat].update(event)
    game = game_from_events(f"sim{seed}", num_players, state.initial_hands, state.events,
                            ask_held_allowed=params.ask_held_allowed,
                            ask_needs_other=params.ask_needs_other)
    arrays = game_arrays(game, np.stack(probs, axis=1))
    arrays.kinds = tuple(kinds)
    return arrays


def draw_kinds(rng: np.random.Generator, num_players: int, mix: dict) -> list[str]:
    names = list(mix)
    weights = np.array([mix[k] for k in names], np.float64)
    return [names[i] for i in rng.choice(len(names), size=num_players, p=weights / weights.sum())]


@dataclass
class Dataset:
    """Games of one or both table sizes, each as GameArrays."""

    games: list = field(default_factory=list)

    def by_size(self, num_players: int) -> list:
        return [g for g in self.games if g.num_players == num_players]


def save_shard(path, games: Sequence[GameArrays]) -> Path:
    """Games of one table size into one .npz (probs concatenated along time)."""
    sizes = {g.num_players for g in games}
    if len(sizes) != 1:
        raise ValueError(f"a shard holds games of one table size, got {sorted(sizes)}")
    lengths = np.array([g.num_steps for g in games], np.int64)
    payload = {
        "num_players": np.array(sizes.pop()),
        "lengths": lengths,
        "probs": np.concatenate([g.probs for g in games], axis=1),
        "events": np.concatenate([g.events for g in games]),
        "holders": np.concatenate([g.holders for g in games]),
        "hands": np.stack([g.hands for g in games]),
        "kinds": np.array([",".join(g.kinds) for g in games]),
        "names": np.array([g.name for g in games]),
    }
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    # (numpy's stub takes **payload for a keyword that might be allow_pickle)
    return write_atomic(path, lambda f: np.savez(f, **payload))  # type: ignore[arg-type]


def load_shard(path) -> list[GameArrays]:
    with np.load(path) as z:
        n = int(z["num_players"])
        ends = np.cumsum(z["lengths"])
        starts = ends - z["lengths"]
        probs, events, holders = z["probs"], z["events"], z["holders"]
        return [GameArrays(n, probs[:, a:b], events[a:b], holders[a:b], z["hands"][i],
                           tuple(str(z["kinds"][i]).split(",")), str(z["names"][i]))
                for i, (a, b) in enumerate(zip(starts, ends))]


def load_dataset(folder, limit: int | None = None) -> Dataset:
    """Every shard (*.npz) in `folder`, sorted by name; at most `limit` games."""
    games = []
    for path in sorted(Path(folder).glob("*.npz")):
        games += load_shard(path)
        if limit is not None and len(games) >= limit:
            break
    return Dataset(games[:limit])


def generate_dataset(folder, games: int, table_sizes: Sequence[int] = (6, 8), seed: int = 0,
                     mix: dict | None = None, shard_size: int = 20, max_moves: int = 300,
                     jitter: float = 0.25,
                     progress: Callable[[str], None] | None = None) -> Path:
    """`games` simulated games per table size into `folder`/size{P}_{k}.npz shards (shards
    already there are kept, so an interrupted run resumes). Game i of size P uses seed
    seed * 1_000_003 + P * 100_003 + i and draws each seat's kind from `mix` (default
    DEFAULT_MIX)."""
    folder = Path(folder)
    mix = dict(DEFAULT_MIX if mix is None else mix)
    for first in range(0, games, shard_size):  # the table sizes alternate shard by shard
        for num_players in table_sizes:
            path = folder / f"size{num_players}_{first // shard_size:04d}.npz"
            if path.exists():
                continue
            started, shard = time.perf_counter(), []
            for i in range(first, min(games, first + shard_size)):
                game_seed = seed * 1_000_003 + num_players * 100_003 + i
                kinds = draw_kinds(np.random.default_rng(game_seed), num_players, mix)
                shard.append(simulate_game(num_players, kinds, game_seed, max_moves, jitter))
            save_shard(path, shard)
            if progress:
                steps = sum(g.num_steps for g in shard)
                progress(f"{path.name}: {len(shard)} games, {steps} events, "
                         f"{time.perf_counter() - started:.1f} s")
    return folder
