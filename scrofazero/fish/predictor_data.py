"""Simulated Fish games for the learned hand predictor (fish/predictor.py), never the recordings.

- `ImitationPlayer`: asks like the recorded humans. It picks among its legal asks (recording
  rules: a held card may be asked for) by a conditional logit on a few public-and-own features
  of each ask (HABIT_FEATURES); the coefficients DEFAULT_HABITS were fitted by `measure_habits`
  on the recorded asks, from each asker's true hand and exact belief at that moment (the only
  thing taken from the recordings: seven numbers). It calls like the logic player, and also
  calls a set its team certainly holds whole, as the humans do.
- `measure_habits(games)`: those rates and the fit (on the recordings, or on simulated games to
  check the imitation).
- `simulate_game(...)`: one engine game under the recording rules, one player kind per seat,
  recording every seat's exact belief before every event: the predictor's tracker features
  come from the trackers the players keep anyway (a random player gets one just for this).
- `generate_dataset(...)` / `load_dataset(...)`: shards of such games cached under results/.

Arrays of one game (`GameArrays`): probs [P_obs, T, P, C] (observer o's exact belief before
event t, absolute seats; float32 for simulated games, float64 for evaluation: float16 would
turn 1 - 1e-4 into a certainty and 1e-8 into an impossibility), events [T, EVENT_COLUMNS] int16
(`encode_events`), holders [T, C] int8 (true seat before event t, -1 out of play), hands, and
the player kinds.
"""

from __future__ import annotations

import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import torch

from scrofazero.atomic import write_atomic
from scrofazero.fish.belief import BeliefTracker
from scrofazero.fish.match import play_move
from scrofazero.fish.players import LogicPlayer, RandomPlayer
from scrofazero.fish.prediction import RecordedGame, game_from_events
from scrofazero.games.fish.cards import (
    num_cards,
    num_sets,
    set_cards,
    set_of,
    team_of,
    teammates,
)
from scrofazero.games.fish.events import Ask, Call, Event
from scrofazero.games.fish.rules import AskMove, CallMove, FishState, FishView, Move
from scrofazero.games.fish.transcripts import recording_params

HABIT_FEATURES = ("p_hit", "impossible", "own_in_set", "held", "target_asked_set",
                  "same_target", "same_set")
"""Features of one candidate ask (target, card) of the asker: p_hit = its exact belief that the
target holds the card (0 for a held card); impossible = p_hit is 0 and the card is not held;
own_in_set = its other cards of the set; held = it holds the card; target_asked_set = the
target asked for a card of this set before (public); same_target / same_set = its ask just
before (the turn went on) was to this target / in this set."""

# Fitted by measure_habits on the six shipped recordings (579 asks, log-likelihood -2.66 per
# ask against -4.05 for a uniform choice among the legal asks):
# python -c "from scrofazero.fish.prediction import load_recordings; from
#   scrofazero.fish.predictor_data import measure_habits; print(measure_habits(load_recordings()[0]))"
DEFAULT_HABITS = (4.52, -0.18, 0.40, -0.83, 1.31, 1.80, 2.52)

PLAYER_KINDS = ("imitation", "logic", "random")
DEFAULT_MIX = {"imitation": 0.7, "logic": 0.15, "random": 0.15}

EVENT_COLUMNS = 20
"""encode_events row: kind (0 none, 1 ask, 2 call), asker / caller, target (-1 for a call), card
(-1 for a call), success / correct, set, the seat named for each of the set's 6 cards (calls;
-1 for asks), cards given up per seat (calls, up to 8 seats; -1 when not public or no seat)."""


# ---- the humans' asking habits


def ask_features(asks: Sequence[tuple[int, int]], probs: np.ndarray, hand,
                 asked_sets: Sequence[set], last_ask: Optional[tuple[int, int]]) -> np.ndarray:
    """[len(asks), len(HABIT_FEATURES)] features of the candidate asks (target, card) of one
    asker: probs [P, C] its exact belief, hand its cards, asked_sets[seat] the sets seat has
    asked in (public), last_ask (target, set) of its ask just before, if the turn went on."""
    targets = np.fromiter((a[0] for a in asks), np.int64, len(asks))
    cards = np.fromiter((a[1] for a in asks), np.int64, len(asks))
    sets = cards // 6
    hand = set(int(c) for c in hand)
    held = np.fromiter((c in hand for c in cards.tolist()), bool, len(asks))
    per_set = np.zeros(num_sets(probs.shape[0]), np.int64)
    for card in hand:
        per_set[set_of(card)] += 1
    p_hit = np.where(held, 0.0, probs[targets, cards])
    out = np.zeros((len(asks), len(HABIT_FEATURES)))
    out[:, 0] = p_hit
    out[:, 1] = (p_hit <= 1e-12) & ~held
    out[:, 2] = per_set[sets] - held
    out[:, 3] = held
    out[:, 4] = [s in asked_sets[t] for t, s in zip(targets.tolist(), sets.tolist())]
    if last_ask is not None:
        out[:, 5] = targets == last_ask[0]
        out[:, 6] = sets == last_ask[1]
    return out


def _recording_candidates(holders: Sequence[int], asker: int, num_players: int):
    """Every ask the recording rules allow `asker` with the true cards `holders` (any card of a
    set it holds, held ones included, from an opponent with cards)."""
    hand = [c for c, h in enumerate(holders) if h == asker]
    held_sets = sorted({set_of(c) for c in hand})
    targets = [t for t in range(num_players)
               if team_of(t) != team_of(asker) and any(h == t for h in holders)]
    return hand, [(t, c) for t in targets for s in held_sets for c in set_cards(s)]


def measure_habits(games: Sequence, iterations: int = 200,
                   kinds: Optional[set] = None) -> dict:
    """The asking habits in `games` (RecordedGames, e.g. the recordings, whose askers' beliefs
    are computed here, or GameArrays of simulated games, whose recorded beliefs are used), from
    each asker's true hand and exact belief before its ask: rates (hit, held card, held card
    that is its only one of the set, cards of the set held besides the asked one, target asked
    in the set before, certain misses) and the conditional logit over the legal asks on
    HABIT_FEATURES fitted by maximum likelihood (weights, log-likelihood per ask against
    uniform choice among the legal asks). kinds: count only askers of these player kinds
    (GameArrays only)."""
    feats, chosen, skipped = [], [], 0
    rates = {"asks": 0, "hits": 0, "held": 0, "held_only": 0, "certain_miss": 0,
             "target_asked_set": 0}
    own = np.zeros(6, np.int64)
    for item in games:
        if isinstance(item, GameArrays):
            game, recorded, seat_kinds = to_recorded_game(item), item.probs, item.kinds
        else:
            game, recorded, seat_kinds = item, None, ()
        n = game.num_players
        trackers = [] if recorded is not None else [
            BeliefTracker(n, s, game.hands[s], ask_held_allowed=game.ask_held_allowed,
                          ask_needs_other=game.ask_needs_other) for s in range(n)]
        asked_sets = [set() for _ in range(n)]
        prev: Optional[Event] = None
        for t, event in enumerate(game.events):
            counted = kinds is None or (bool(seat_kinds) and isinstance(event, Ask)
                                        and seat_kinds[event.asker] in kinds)
            if isinstance(event, Ask) and counted:
                hand, cands = _recording_candidates(game.holders[t], event.asker, n)
                last = ((prev.target, set_of(prev.card)) if isinstance(prev, Ask)
                        and prev.asker == event.asker else None)
                belief = (recorded[event.asker, t].astype(np.float64) if recorded is not None
                          else trackers[event.asker].probabilities())
                f = ask_features(cands, belief, hand, asked_sets, last)
                pick = (event.target, event.card)
                row = None
                if pick in cands:
                    row = f[cands.index(pick)]
                    feats.append(f)
                    chosen.append(cands.index(pick))
                else:
                    skipped += 1
                rates["asks"] += 1
                rates["hits"] += event.success
                held = event.card in hand
                rates["held"] += held
                others = sum(1 for c in hand if set_of(c) == set_of(event.card)) - held
                rates["held_only"] += held and others == 0
                own[others] += 1
                rates["certain_miss"] += bool(row is not None and row[1])
                rates["target_asked_set"] += set_of(event.card) in asked_sets[event.target]
            if isinstance(event, Ask):
                asked_sets[event.asker].add(set_of(event.card))
            for tracker in trackers:
                try:
                    tracker.update(event)
                except ValueError:
                    pass  # a slip this seat's tracker cannot place: its belief stays as it was
            prev = event
    weights, loglik, null = fit_choice_model(feats, chosen, iterations)
    asks = rates["asks"]
    return {"features": HABIT_FEATURES, "weights": [round(w, 2) for w in weights],
            "loglik_per_ask": loglik, "uniform_loglik_per_ask": null, "skipped": skipped,
            "asks": asks, "hit_rate": rates["hits"] / asks, "held_rate": rates["held"] / asks,
            "held_only_rate": rates["held_only"] / asks,
            "certain_miss_rate": rates["certain_miss"] / asks,
            "target_asked_set_rate": rates["target_asked_set"] / asks,
            "own_in_set": (own / asks).round(4).tolist()}


def fit_choice_model(feats: Sequence[np.ndarray], chosen: Sequence[int],
                     iterations: int = 200) -> tuple[list[float], float, float]:
    """Maximum-likelihood weights w of P(choice) = softmax(feats @ w) (L-BFGS); returns (w, mean
    log-likelihood per choice, mean log-likelihood of a uniform choice)."""
    sizes = np.array([len(f) for f in feats])
    x = np.zeros((len(feats), sizes.max(), feats[0].shape[1]))
    for i, f in enumerate(feats):
        x[i, :len(f)] = f
    x = torch.tensor(x)
    pad = torch.tensor(np.arange(sizes.max())[None, :] >= sizes[:, None])
    pick = torch.tensor(np.asarray(chosen))[:, None]
    w = torch.zeros(x.shape[2], dtype=torch.float64, requires_grad=True)
    opt = torch.optim.LBFGS([w], max_iter=iterations, line_search_fn="strong_wolfe")

    def nll():
        opt.zero_grad()
        scores = (x @ w).masked_fill(pad, -torch.inf)
        loss = (torch.logsumexp(scores, 1) - scores.gather(1, pick)[:, 0]).mean()
        loss.backward()
        return loss

    opt.step(nll)
    loss = float(nll().detach())
    return w.detach().tolist(), -loss, float(-np.log(sizes).mean())


class ImitationPlayer(LogicPlayer):
    """Asks like the recorded humans: samples its ask from softmax(ask_features @ weights) over
    its legal asks (weights: DEFAULT_HABITS, each multiplied per game by exp(N(0, jitter)) so
    that the table holds a spread of habits); calls like the logic player (a set as soon as its
    team's allocation is certain, and, as the humans do, with its likeliest allocation one its
    team certainly holds whole; the likeliest allocation when it must)."""

    def __init__(self, seed: int = 0, habits: Sequence[float] = DEFAULT_HABITS,
                 jitter: float = 0.0, **kwargs):
        super().__init__(seed=seed, **kwargs)
        self.rng = np.random.default_rng(seed)
        self.base = np.asarray(habits, np.float64)
        if self.base.shape != (len(HABIT_FEATURES),):
            raise ValueError(f"habits needs {len(HABIT_FEATURES)} weights, got {habits!r}")
        self.jitter = float(jitter)

    def reset(self, num_players: int, seat: int, hand, ask_held_allowed: bool = False,
              ask_needs_other: bool = True) -> None:
        super().reset(num_players, seat, hand, ask_held_allowed, ask_needs_other)
        self.weights = self.base * np.exp(self.rng.normal(0.0, self.jitter, self.base.shape))
        self.asked_sets = [set() for _ in range(num_players)]
        self.last: Optional[Event] = None

    def observe(self, event: Event) -> None:
        super().observe(event)
        if isinstance(event, Ask):
            self.asked_sets[event.asker].add(set_of(event.card))
        self.last = event

    def call_now(self, view: FishView) -> Optional[CallMove]:
        probs = self.tracker.probabilities()
        return self._certain_call(view, probs) or self._team_call(view, probs)

    def _team_call(self, view: FishView, probs: np.ndarray) -> Optional[CallMove]:
        """The likeliest allocation of the first set its team certainly holds whole (the humans
        call such sets at once, allocation known or not)."""
        team = list(teammates(self.seat, self.num_players))
        for set_id in view.uncalled_sets:
            cards = list(set_cards(set_id))
            if probs[team][:, cards].sum(axis=0).min() >= 1.0 - 1e-9:
                seats = probs[team][:, cards].argmax(axis=0)
                return CallMove(set_id, tuple(zip(cards, (team[int(i)] for i in seats))))
        return None

    def act(self, view: FishView) -> Move:
        probs = self.tracker.probabilities()
        call = self._certain_call(view, probs) or self._team_call(view, probs)
        if call is not None:
            return call
        if view.must_call or not view.legal_asks:
            return self._likeliest_call(view, probs)
        last = self.last
        last_ask = ((last.target, set_of(last.card)) if isinstance(last, Ask)
                    and last.asker == self.seat else None)
        f = ask_features(view.legal_asks, probs, view.hand, self.asked_sets, last_ask)
        scores = f @ self.weights
        weights = np.exp(scores - scores.max())
        pick = self.rng.choice(len(weights), p=weights / weights.sum())
        return AskMove(*view.legal_asks[int(pick)])


def make_player(kind: str, seed: int, jitter: float = 0.25):
    if kind == "imitation":
        return ImitationPlayer(seed=seed, jitter=jitter)
    if kind == "logic":
        return LogicPlayer(seed=seed)
    if kind == "random":
        return RandomPlayer(seed=seed)
    raise ValueError(f"unknown player kind {kind!r}; choose from {PLAYER_KINDS}")


# ---- games and their arrays


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
    events = []
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


def tracker_sequences(game: RecordedGame, observers: Optional[Sequence[int]] = None,
                      dtype=np.float32) -> tuple[np.ndarray, int]:
    """([len(observers), T, P, C] exact beliefs before each event t < T = len(events), the
    number of events a tracker rejected) as prediction.evaluate_game sees them: a tracker
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


def game_arrays(game: RecordedGame, probs: Optional[np.ndarray] = None,
                dtype=np.float32) -> GameArrays:
    """The arrays of a finished game (a recording, say), running the trackers when `probs` (all
    observers) is not given; float64 beliefs keep prediction.py's certainty test exact."""
    rejected = 0
    if probs is None:
        probs, rejected = tracker_sequences(game, dtype=dtype)
    T = len(game.events)
    return GameArrays(game.num_players, np.asarray(probs, dtype),
                      encode_events(game.events, game.num_players),
                      np.asarray(game.holders[:T], np.int8),
                      np.asarray(game.hands, np.int8), name=game.name, rejected=rejected)


def simulate_game(num_players: int, kinds: Sequence[str], seed: int, max_moves: int = 300,
                  jitter: float = 0.25, max_events: Optional[int] = None) -> GameArrays:
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


# ---- the dataset cache


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
    return write_atomic(path, lambda f: np.savez(f, **payload))


def load_shard(path) -> list[GameArrays]:
    with np.load(path) as z:
        n = int(z["num_players"])
        ends = np.cumsum(z["lengths"])
        starts = ends - z["lengths"]
        probs, events, holders = z["probs"], z["events"], z["holders"]
        return [GameArrays(n, probs[:, a:b], events[a:b], holders[a:b], z["hands"][i],
                           tuple(str(z["kinds"][i]).split(",")), str(z["names"][i]))
                for i, (a, b) in enumerate(zip(starts, ends))]


def load_dataset(folder, limit: Optional[int] = None) -> Dataset:
    """Every shard (*.npz) in `folder`, sorted by name; at most `limit` games."""
    games = []
    for path in sorted(Path(folder).glob("*.npz")):
        games += load_shard(path)
        if limit is not None and len(games) >= limit:
            break
    return Dataset(games[:limit])


def generate_dataset(folder, games: int, table_sizes: Sequence[int] = (6, 8), seed: int = 0,
                     mix: Optional[dict] = None, shard_size: int = 20, max_moves: int = 300,
                     jitter: float = 0.25,
                     progress: Optional[Callable[[str], None]] = None) -> Path:
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
