"""A learned Fish hand predictor: a sequence model over one seat's public history that corrects
the exact belief (fish/belief.py) with what the asks say about how people play.

Input, per step t (before event t, as prediction.evaluate_game scores): the observer's exact
marginals [P, C] in the observer-relative seat order (seat - observer) % P, the event just seen
(asker, target, card, set, success; or caller, set, named seats, correctness, cards given up),
and the public hand counts. Every (seat, card) pair is one element with features of its own
(`feature_groups`, `element_features`), including log-counts of the earlier asks by and to its
seat for its card and its set; one shared network runs over all elements, so it is
equivariant by construction under the game's symmetries: permuting sets, cards within a set,
and seats within the observer's team or within the other team, or swapping the teams
(`Symmetry`, `random_symmetry`; tested on the untrained model). The network (PredictorNet):
an element embedding; pooled (mean, max) over each set's cards and over the seats, it feeds the
recurrent core over time that runs per (seat, set) pair (a GRU by default; LSTM, a causal
transformer, or none for the ablation); the core's state, pooled over seats and over the seat's
sets, goes back to the set's cards, and a head per element gives a delta that is added to
log P_tracker (a zero head is exactly the tracker). `masked_output` turns that into
probabilities: a seat the tracker rules out gets exactly 0 (masked before the softmax), a card
the tracker knows (or that is out of play) is copied from the tracker, every column in play
sums to 1.

`HandPredictor` is the tracker-like session (update(event), probabilities()); `predict` does a
whole game-so-far at once; `train_predictor` and `evaluate_predictor` are the entry points
(train.py / evaluate.py game=fish mode=track model=PATH). Training data: simulated games only
(fish/predictor_data.py); the recordings are only ever evaluated on.
"""

from __future__ import annotations

import math
import time
from dataclasses import asdict, dataclass, field, fields
from pathlib import Path
from typing import Callable, Optional, Sequence

import numpy as np
import torch
from torch import nn

from scrofazero.atomic import write_atomic, write_json_atomic
from scrofazero.fish.belief import BeliefTracker
from scrofazero.fish.prediction import (
    LOG_FLOOR,
    RecordedGame,
    game_from_events,
    load_recordings,
)
from scrofazero.fish.predictor_data import (
    DEFAULT_MIX,
    GameArrays,
    encode_events,
    game_arrays,
    generate_dataset,
    load_dataset,
)
from scrofazero.games.fish.cards import hand_size, num_cards, num_sets
from scrofazero.games.fish.events import Ask, Call, Event
from scrofazero.settings import at_most, check_settings

CERTAIN = 1.0 - 1e-9  # as prediction.py: a tracker probability this close to 1 is a certainty
CHECKPOINT_FORMAT = "scrofazero.fish.predictor/1"
CORES = ("gru", "lstm", "transformer", "none")
DEFAULT_MODEL = "models/fish_predictor.pt"  # the shipped predictor (models/fish_predictor.md)
MAX_WIDTH, MAX_LAYERS = 4096, 64  # generous bounds on a predictor's shape (a file's or a run's)


@dataclass
class PredictorConfig:
    """The network: core "gru" | "lstm" | "transformer" (causal, `layers` layers, 2 heads) |
    "none" (no memory beyond the features' ask counts: the ablation); embed = width of the
    element embedding, hidden = the core's. The rule flags are the trackers' the model was
    trained with (the recordings' rules)."""

    core: str = "gru"
    embed: at_most(MAX_WIDTH) = 16
    hidden: at_most(MAX_WIDTH) = 32
    layers: at_most(MAX_LAYERS) = 1
    ask_held_allowed: bool = True
    ask_needs_other: bool = False

    def __post_init__(self):
        if self.core not in CORES:
            raise ValueError(f"core must be one of {CORES}, got {self.core!r}")


# ---- sequences: one observer's view of one game, relative seats


@dataclass
class ObserverSequence:
    """One observer's inputs and labels, seats relative to the observer (k = (seat - o) % P).
    probs [T, P, C] float32; events [T, EVENT_COLUMNS] int16, row t = the event seen just before
    step t (row 0 is empty); target [T, C] int64 true relative holder (-1 out of play)."""

    num_players: int
    probs: np.ndarray
    events: np.ndarray
    target: np.ndarray


def relative_seats(num_players: int, observer: int) -> np.ndarray:
    """[P] absolute seat of each relative seat k: (observer + k) % P."""
    return (observer + np.arange(num_players)) % num_players


def observer_sequence(arrays: GameArrays, observer: int) -> ObserverSequence:
    """The observer's ObserverSequence from a game's arrays (all seats' beliefs, absolute
    seats)."""
    n = arrays.num_players
    order = relative_seats(n, observer)
    probs = arrays.probs[observer][:, order, :].astype(np.float32)
    events = np.full_like(arrays.events, -1)
    events[:, 0] = 0
    events[1:] = rotate_events(arrays.events[:-1], n, observer)
    holders = arrays.holders.astype(np.int64)
    target = np.where(holders >= 0, (holders - observer) % n, -1)
    return ObserverSequence(n, probs, events, target)


def rotate_events(rows: np.ndarray, num_players: int, observer: int) -> np.ndarray:
    """Event rows (predictor_data.encode_events) with seats made relative to `observer`."""
    out = rows.copy()
    for col in (1, 2, 6, 7, 8, 9, 10, 11):
        seats = out[:, col]
        out[:, col] = np.where(seats >= 0, (seats - observer) % num_players, seats)
    removed = out[:, 12:12 + num_players].copy()
    out[:, 12:12 + num_players] = removed[:, relative_seats(num_players, observer)]
    return out


@dataclass
class Batch:
    num_players: int
    probs: torch.Tensor  # [B, T, P, C] float32
    events: torch.Tensor  # [B, T, EVENT_COLUMNS] int64
    target: torch.Tensor  # [B, T, C] int64, -1 out of play or padding
    valid: torch.Tensor  # [B, T] bool


def collate(seqs: Sequence[ObserverSequence]) -> Batch:
    """Pads sequences of one table size to the longest (padding: empty columns, invalid)."""
    n = seqs[0].num_players
    if any(s.num_players != n for s in seqs):
        raise ValueError("a batch holds sequences of one table size")
    T = max(len(s.target) for s in seqs)
    B, C = len(seqs), seqs[0].probs.shape[2]
    probs = np.zeros((B, T, n, C), np.float32)
    events = np.full((B, T, seqs[0].events.shape[1]), -1, np.int64)
    events[:, :, 0] = 0
    target = np.full((B, T, C), -1, np.int64)
    valid = np.zeros((B, T), bool)
    for i, s in enumerate(seqs):
        L = len(s.target)
        probs[i, :L], events[i, :L], target[i, :L], valid[i, :L] = s.probs, s.events, s.target, True
    return Batch(n, torch.from_numpy(probs), torch.from_numpy(events), torch.from_numpy(target),
                 torch.from_numpy(valid))


# ---- features and masking


FEATURE_GROUPS = (("element", 22), ("seat", 11), ("card", 9), ("step", 3))
"""Feature blocks by what they vary with: element [B, T, P, C], seat [B, T, P, 1], card
[B, T, 1, C], step [B, T, 1, 1]; element_features stacks them in this order."""
NUM_FEATURES = sum(k for _, k in FEATURE_GROUPS)


def feature_groups(probs: torch.Tensor, events: torch.Tensor) -> list[torch.Tensor]:
    """The element features in four blocks (FEATURE_GROUPS), each [B, T, P or 1, C or 1, F],
    from the tracker probabilities [B, T, P, C] and the event rows [B, T, EVENT_COLUMNS]
    (relative seats; row t = the event seen just before step t). Nothing depends on a set's,
    card's or seat's identity beyond the seat's role (observer, teammate, opponent) and the
    event's relation to the element.
    element: P, -log P / log 1e6 (clipped), P is 1, the seat's share of the card's set, the last
      ask's asker / target x the card / the rest of its set x got it / not, a call's named
      seat for a card x correct / wrong, and log(1 + count) of the asks so far by / to the
      seat for the card / a card of its set x got it / not;
    seat: expected hand count / hand size, empty hand, role (observer, teammate, opponent),
      last ask's asker / target x got it / not, a call's caller, the cards it gave up;
    card: the card is known, in play, share of seats possible, last ask's card / rest of its
      set x got it / not, a call's set x correct / wrong;
    step: sets called, step / 128, 8-player table."""
    B, T, P, C = probs.shape
    S = C // 6
    f = lambda x: x.to(probs.dtype)  # noqa: E731
    in_play = f(probs.sum(2, keepdim=True) > 0.5)  # [B, T, 1, C]
    certain_col = f(probs.max(2, keepdim=True).values >= CERTAIN) * in_play
    support = f(probs > 0).sum(2, keepdim=True) / P
    log_p = torch.log(probs.clamp_min(1e-6)) / math.log(1e-6)  # 0 (certain) .. 1 (below 1e-6)
    counts = probs.sum(3, keepdim=True) / hand_size(P)  # [B, T, P, 1]
    set_mass = probs.reshape(B, T, P, S, 6).sum(-1, keepdim=True).expand(B, T, P, S, 6)
    seat = torch.arange(P)
    role = torch.stack([seat == 0, (seat % 2 == 0) & (seat > 0), seat % 2 == 1], 1)  # [P, 3]
    kind, a, b, card, flag, set_id = (events[..., i] for i in range(6))  # [B, T]
    ask, call = f(kind == 1), f(kind == 2)
    ok, bad = f(flag == 1), f(flag == 0)
    seat_a = f(seat.view(1, 1, P) == a.unsqueeze(-1)).unsqueeze(-1)  # [B, T, P, 1]
    seat_b = f(seat.view(1, 1, P) == b.unsqueeze(-1)).unsqueeze(-1)
    cards = torch.arange(C)
    card_is = f(cards.view(1, 1, C) == card.unsqueeze(-1)).unsqueeze(2)  # [B, T, 1, C]
    set_is = f((cards // 6).view(1, 1, C) == set_id.unsqueeze(-1)).unsqueeze(2)
    set_other = set_is * (1 - card_is)
    # the seat named for each card of a called set: [B, T, P, C]
    named_seats = torch.where(kind.unsqueeze(-1) == 2, events[..., 6:12],
                              torch.full_like(events[..., 6:12], -1))  # [B, T, 6]
    named_at = torch.full((B, T, C), -1, dtype=torch.long)
    pos = set_id.clamp_min(0).unsqueeze(-1) * 6 + torch.arange(6)  # [B, T, 6]
    named_at.scatter_(2, pos.clamp_max(C - 1), named_seats)
    named = f(named_at.unsqueeze(2) == seat.view(1, 1, P, 1))
    removed = (events[..., 12:12 + P].clamp_min(0).to(probs.dtype) / 6).unsqueeze(-1)

    def e(x):  # [B, T] -> [B, T, 1, 1]
        return x[..., None, None]

    ask_ok, ask_bad, call_ok, call_bad = e(ask * ok), e(ask * bad), e(call * ok), e(call * bad)
    element = [probs, log_p, f(probs >= CERTAIN), set_mass.reshape(B, T, P, C) / 6]
    for who in (seat_a, seat_b):  # the ask's asker / target, the card / the rest of its set
        for what in (card_is, set_other):
            for outcome in (ask_ok, ask_bad):
                element.append(who * what * outcome)
    for outcome in (call_ok, call_bad):
        element.append(named * outcome)
    for who in (seat_a, seat_b):  # history: the asks so far by / to the seat for card / set
        for what in (card_is, set_is):
            for outcome in (ask_ok, ask_bad):
                element.append(torch.log1p(torch.cumsum(who * what * outcome, 1)))
    seat_f = [counts, f(counts == 0), *[role[:, i].to(probs.dtype).view(1, 1, P, 1)
                                        .expand(B, T, P, 1) for i in range(3)]]
    for who in (seat_a, seat_b):
        for outcome in (ask_ok, ask_bad):
            seat_f.append(who * outcome)
    seat_f += [seat_a * e(call), removed * e(call)]
    card_f = [certain_col, in_play, support]
    for what in (card_is, set_other):
        for outcome in (ask_ok, ask_bad):
            card_f.append(what * outcome)
    card_f += [set_is * call_ok, set_is * call_bad]
    step = torch.arange(T, dtype=probs.dtype).view(1, T, 1, 1).expand(B, T, 1, 1)
    step_f = [1 - in_play.mean(-1, keepdim=True), step / 128, torch.full_like(step, float(P == 8))]
    shapes = ((B, T, P, C), (B, T, P, 1), (B, T, 1, C), (B, T, 1, 1))
    out = [torch.stack([x.expand(shape) for x in block], -1)
           for block, shape in zip((element, seat_f, card_f, step_f), shapes)]
    assert [x.shape[-1] for x in out] == [k for _, k in FEATURE_GROUPS]
    return out


def element_features(probs: torch.Tensor, events: torch.Tensor) -> torch.Tensor:
    """[B, T, P, C, NUM_FEATURES] every element's features (feature_groups, broadcast and
    stacked): what the network's input layer sees, computed there block by block."""
    B, T, P, C = probs.shape
    return torch.cat([x.expand(B, T, P, C, -1) for x in feature_groups(probs, events)], -1)


def masked_output(delta: torch.Tensor, tracker: torch.Tensor) -> tuple[torch.Tensor, torch.Tensor]:
    """(probabilities, log-probabilities) [..., P, C] from the network's delta and the tracker's
    probabilities (both [..., P, C]): log P_tracker + delta, seats the tracker rules out masked
    to -inf before the softmax over seats (so they get exactly 0), and every column the tracker
    knows for certain, or that is out of play, copied from the tracker."""
    possible = tracker > 0
    logits = torch.where(possible, torch.log(tracker.clamp_min(1e-30)) + delta,
                         torch.full_like(delta, -1e30))
    log_p = torch.log_softmax(logits, dim=-2)
    copy = (tracker.max(-2, keepdim=True).values >= CERTAIN) | ~possible.any(-2, keepdim=True)
    probs = torch.where(copy | ~possible, tracker * copy, torch.exp(log_p))
    log_p = torch.where(possible, log_p, torch.full_like(log_p, -math.inf))
    log_p = torch.where(copy, torch.log(tracker.clamp_min(0)), log_p)
    return probs, log_p


# ---- the network


def _set_pool(x: torch.Tensor) -> torch.Tensor:
    """x [..., P, C, F] -> [..., P, S, 2F]: the mean and the max over each set's 6 cards (the
    same seat): invariant under permuting the cards within a set."""
    *lead, P, C, F = x.shape
    x = x.reshape(*lead, P, C // 6, 6, F)
    return torch.cat([x.mean(-2), x.max(-2).values], -1)


def _to_cards(x: torch.Tensor) -> torch.Tensor:
    """[..., P, S, F] -> [..., P, C, F]: each set's value repeated for its 6 cards."""
    return x.repeat_interleave(6, dim=-2)


def _mean_seats(x: torch.Tensor) -> torch.Tensor:
    """[..., P, X, F]: the mean over the seats, broadcast back to every seat."""
    return x.mean(-3, keepdim=True).expand_as(x)


def _mean_sets(x: torch.Tensor) -> torch.Tensor:
    """[..., P, S, F]: the mean over the sets (same seat), broadcast back to every set."""
    return x.mean(-2, keepdim=True).expand_as(x)


class _Core(nn.Module):
    """The memory over time, run on each (seat, set) pair: GRU, LSTM, causal transformer, or
    none (each step alone: the ablation)."""

    def __init__(self, cfg: PredictorConfig, width: int):
        super().__init__()
        self.kind = cfg.core
        if cfg.core == "gru":
            self.rnn = nn.GRU(width, cfg.hidden, cfg.layers, batch_first=True)
        elif cfg.core == "lstm":
            self.rnn = nn.LSTM(width, cfg.hidden, cfg.layers, batch_first=True)
        else:
            self.proj = nn.Linear(width, cfg.hidden)
        if cfg.core == "transformer":
            layer = nn.TransformerEncoderLayer(cfg.hidden, 2, 2 * cfg.hidden, dropout=0.0,
                                               batch_first=True)
            self.rnn = nn.TransformerEncoder(layer, cfg.layers, enable_nested_tensor=False)

    def forward(self, x: torch.Tensor) -> torch.Tensor:
        """x [N, T, W] -> [N, T, H], causal in time."""
        if self.kind in ("gru", "lstm"):
            return self.rnn(x)[0]
        x = self.proj(x)
        if self.kind == "none":
            return torch.relu(x)
        T = x.shape[1]
        mask = torch.triu(torch.full((T, T), -math.inf), diagonal=1)
        return self.rnn(x + _time_code(T, x.shape[2]), mask=mask)


def _time_code(T: int, width: int) -> torch.Tensor:
    pos = torch.arange(T, dtype=torch.float32)[:, None]
    freq = torch.exp(-math.log(1000.0) * torch.arange(0, width, 2) / width)
    code = torch.zeros(T, width)
    code[:, 0::2] = torch.sin(pos * freq)
    code[:, 1::2] = torch.cos(pos * freq)[:, :width // 2]
    return code


class PredictorNet(nn.Module):
    """forward(probs [B, T, P, C], events [B, T, EVENT_COLUMNS]) -> (probs, log-probs)
    [B, T, P, C]. Element features -> an element embedding (embed); pooled over each set's
    cards (mean, max) and over the seats, into the recurrent core per (seat, set) (hidden);
    the core's state, its means over the seats and over the seat's sets, projected (embed) and
    handed back to the set's cards; a head per element on [its embedding, that state, the mean
    embedding of its card over the seats] -> delta. Every step is shared by all elements, sets
    and seats, and pools only by mean or max: equivariant by construction."""

    def __init__(self, cfg: PredictorConfig):
        super().__init__()
        self.cfg = cfg
        E, H = cfg.embed, cfg.hidden
        self.inp = nn.Linear(NUM_FEATURES, E)
        self.core = _Core(cfg, 4 * E)
        self.back = nn.Linear(3 * H, E)
        self.head = nn.Sequential(nn.Linear(3 * E, E), nn.ReLU(), nn.Linear(E, 1))
        self.meta: dict = {}

    def delta(self, probs: torch.Tensor, events: torch.Tensor) -> torch.Tensor:
        # self.inp on element_features, block by block (the smaller blocks broadcast)
        weight, first = self.inp.weight, 0
        e = self.inp.bias
        for block in feature_groups(probs, events):
            k = block.shape[-1]
            e = e + block @ weight[:, first:first + k].T
            first += k
        e = torch.relu(e)  # [B, T, P, C, E]
        B, T, P, C, E = e.shape
        S = C // 6
        pooled = _set_pool(e)  # [B, T, P, S, 2E]
        pooled = torch.cat([pooled, _mean_seats(pooled)], -1)  # [B, T, P, S, 4E]
        z = self.core(pooled.permute(0, 2, 3, 1, 4).reshape(B * P * S, T, 4 * E))
        z = z.reshape(B, P, S, T, -1).permute(0, 3, 1, 2, 4)  # [B, T, P, S, H]
        z = torch.relu(self.back(torch.cat([z, _mean_seats(z), _mean_sets(z)], -1)))
        # self.head on [e, z of the card's set, mean of e over the seats], block by block
        w = self.head[0].weight
        h = (e @ w[:, :E].T + self.head[0].bias + _to_cards(z @ w[:, E:2 * E].T)
             + e.mean(-3, keepdim=True) @ w[:, 2 * E:].T)
        return self.head[2](torch.relu(h)).squeeze(-1)

    def forward(self, probs: torch.Tensor, events: torch.Tensor):
        return masked_output(self.delta(probs, events), probs)

    def zero_head(self) -> "PredictorNet":
        """Zeroes the last layer: the model then predicts exactly the tracker's marginals."""
        nn.init.zeros_(self.head[-1].weight)
        nn.init.zeros_(self.head[-1].bias)
        return self


def num_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


# ---- checkpoints


def save_predictor(path, model: PredictorNet, meta: Optional[dict] = None) -> Path:
    """A small checkpoint: the config, the weights (float32) and free-form training notes."""
    payload = {"format": CHECKPOINT_FORMAT, "config": asdict(model.cfg),
               "state": {k: v.detach().clone() for k, v in model.state_dict().items()},
               "meta": meta or {}}
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, lambda f: torch.save(payload, f))


def load_predictor(path) -> PredictorNet:
    """The model saved by save_predictor (eval mode); its notes in model.meta. A file that is
    missing (FileNotFoundError), unreadable, of another format, or whose config, weight shapes
    or weight values (NaN, infinite) do not make a predictor is refused naming it (ValueError)."""
    path = Path(path)
    if not path.is_file():
        raise FileNotFoundError(f"Fish hand predictor {path} not found")
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # pickle, zip and torch raise many types for a damaged file
        raise ValueError(f"{path}: not a readable Fish hand predictor checkpoint "
                         f"({type(err).__name__}: {err})") from None
    if not isinstance(payload, dict) or payload.get("format") != CHECKPOINT_FORMAT:
        raise ValueError(f"{path}: not a Fish hand predictor checkpoint")
    config, state = payload.get("config"), payload.get("state")
    if not isinstance(config, dict) or not isinstance(state, dict) or not all(
            torch.is_tensor(v) for v in state.values()):
        raise ValueError(f"{path}: a Fish hand predictor checkpoint without its config or weights")
    known = {f.name for f in fields(PredictorConfig)}
    try:
        model = PredictorNet(check_settings(
            PredictorConfig(**{k: v for k, v in config.items() if k in known}), "config"))
        model.load_state_dict(state)
    except (ValueError, TypeError, RuntimeError) as err:  # RuntimeError: shapes or names
        raise ValueError(f"{path}: not a Fish hand predictor ({err})") from None
    bad = [k for k, v in state.items() if v.is_floating_point() and not torch.isfinite(v).all()]
    if bad:
        raise ValueError(f"{path}: weight {bad[0]} holds NaN or infinite values")
    model.meta = payload.get("meta", {})
    return model.eval()


# ---- prediction


def predict_sequence(model: PredictorNet, seq: ObserverSequence) -> np.ndarray:
    """[T, P, C] the model's probabilities at every step of one observer's sequence (relative
    seats, as the sequence)."""
    with torch.no_grad():
        probs, _ = model(torch.from_numpy(seq.probs)[None],
                         torch.from_numpy(seq.events.astype(np.int64))[None])
    return probs[0].numpy()


def predict_game(model: PredictorNet, arrays: GameArrays, observer: int) -> np.ndarray:
    """[T, P, C] the model's probabilities before every event, absolute seats."""
    rel = predict_sequence(model, observer_sequence(arrays, observer))
    out = np.empty_like(rel)
    out[:, relative_seats(arrays.num_players, observer), :] = rel
    return out


_NO_EVENT = Ask(0, 1, 0, False)  # the placeholder last row of a session's sequence (never read)


class HandPredictor:
    """The learned predictor as a tracker-like session for seat `observer` (dealt `hand`):
    update(event) adds a public event, probabilities() gives [P, C] P(card held by seat now),
    absolute seats, like BeliefTracker.probabilities(). The rule flags default to the ones the
    model was trained with (the recordings' rules); its exact tracker is `self.tracker`. Each
    probabilities() call after an update reruns the model over the whole history (cheap)."""

    def __init__(self, model: PredictorNet, num_players: int, observer: int, hand: Sequence[int],
                 *, ask_held_allowed: Optional[bool] = None,
                 ask_needs_other: Optional[bool] = None):
        cfg = model.cfg
        self.model, self.num_players, self.observer = model, num_players, observer
        self.tracker = BeliefTracker(
            num_players, observer, hand,
            ask_held_allowed=cfg.ask_held_allowed if ask_held_allowed is None else ask_held_allowed,
            ask_needs_other=cfg.ask_needs_other if ask_needs_other is None else ask_needs_other)
        self.events: list[Event] = []
        self._probs = [self.tracker.probabilities()]  # before each step
        self._cache: Optional[np.ndarray] = None

    def update(self, event: Event) -> None:
        """Adds a public event (ValueError, state unchanged, if the tracker finds it
        impossible)."""
        self.tracker.update(event)
        self.events.append(event)
        self._probs.append(self.tracker.probabilities())
        self._cache = None

    def probabilities(self) -> np.ndarray:
        if self._cache is None:
            n, T = self.num_players, len(self._probs)
            beliefs = np.zeros((n, T, n, num_cards(n)), np.float32)  # only the observer's read
            beliefs[self.observer] = np.stack(self._probs)
            arrays = GameArrays(n, beliefs, encode_events(self.events + [_NO_EVENT], n),
                                np.zeros((T, num_cards(n)), np.int8),
                                np.zeros((n, hand_size(n)), np.int8))
            self._cache = predict_game(self.model, arrays, self.observer)[-1].astype(np.float64)
        return self._cache.copy()


def predict(model: PredictorNet, num_players: int, observer: int, hand: Sequence[int],
            events: Sequence[Event], **rules) -> np.ndarray:
    """[P, C] the model's P(card held by seat now) for `observer` after `events` (the game so
    far), like BeliefTracker(...).probabilities() after the same updates."""
    session = HandPredictor(model, num_players, observer, hand, **rules)
    for event in events:
        session.update(event)
    return session.probabilities()


# ---- symmetries (augmentation, and the equivariance tests)


@dataclass(frozen=True)
class Symmetry:
    """A relabelling of a game that keeps its rules and teams: set s -> set_perm[s]; card at
    position i of set s -> position card_perm[s][i] of set_perm[s]; seat -> seat_perm[seat]
    (seats stay within a team or all teams swap, so teammates stay teammates)."""

    set_perm: tuple
    card_perm: tuple
    seat_perm: tuple

    def card(self, c: int) -> int:
        s, i = divmod(int(c), 6)
        return self.set_perm[s] * 6 + self.card_perm[s][i]

    def seat(self, s: int) -> int:
        return self.seat_perm[int(s)] if s >= 0 else s

    def card_index(self, num_players: int) -> np.ndarray:
        """[C] new id of each card."""
        return np.array([self.card(c) for c in range(num_cards(num_players))])


def keeps_teams(seat_perm: Sequence[int]) -> bool:
    """True when the seat permutation maps teammates to teammates (seat parity is kept for
    every seat, or flipped for every seat)."""
    flips = {(int(new) - s) % 2 for s, new in enumerate(seat_perm)}
    return sorted(seat_perm) == list(range(len(seat_perm))) and len(flips) == 1


def random_symmetry(rng: np.random.Generator, num_players: int, swap_teams: bool = True
                    ) -> Symmetry:
    """A uniformly random team-keeping relabelling: sets, cards within each set, the seats of
    each team, and (with swap_teams) a coin flip that swaps the two teams."""
    S = num_sets(num_players)
    sets = tuple(int(x) for x in rng.permutation(S))
    cards = tuple(tuple(int(x) for x in rng.permutation(6)) for _ in range(S))
    seats = np.empty(num_players, np.int64)
    flip = int(swap_teams and rng.random() < 0.5)
    for team in (0, 1):
        mine = np.arange(team, num_players, 2)
        seats[mine] = rng.permutation(np.arange((team + flip) % 2, num_players, 2))
    return Symmetry(sets, cards, tuple(int(x) for x in seats))


def permute_event(event: Event, g: Symmetry) -> Event:
    if isinstance(event, Ask):
        return Ask(g.seat(event.asker), g.seat(event.target), g.card(event.card), event.success)
    removed = None
    if event.removed is not None:
        removed = [0] * len(event.removed)
        for seat, k in enumerate(event.removed):
            removed[g.seat(seat)] = k
        removed = tuple(removed)
    return Call(g.seat(event.caller), g.set_perm[event.set_id],
                tuple(sorted((g.card(c), g.seat(s)) for c, s in event.assignment)),
                event.correct, removed)


def permute_game(game: RecordedGame, g: Symmetry) -> RecordedGame:
    """The same game relabelled by g (hands, events and true holders)."""
    hands = [()] * game.num_players
    for seat, hand in enumerate(game.hands):
        hands[g.seat(seat)] = tuple(sorted(g.card(c) for c in hand))
    return game_from_events(game.name, game.num_players, hands,
                            [permute_event(e, g) for e in game.events],
                            ask_held_allowed=game.ask_held_allowed,
                            ask_needs_other=game.ask_needs_other)


def permute_arrays(arrays: GameArrays, g: Symmetry) -> GameArrays:
    """The same relabelling on cached arrays (no tracker rerun): observers, seats and cards of
    the beliefs, the event rows and the holders."""
    n = arrays.num_players
    cards = g.card_index(n)
    seats = np.array([g.seat(s) for s in range(n)])
    probs = np.empty_like(arrays.probs)
    probs[np.ix_(seats, np.arange(probs.shape[1]), seats, cards)] = arrays.probs
    holders = np.full_like(arrays.holders, -1)
    holders[:, cards] = np.where(arrays.holders >= 0, seats[np.clip(arrays.holders, 0, None)], -1)
    ev = arrays.events.copy()
    for col in (1, 2, 6, 7, 8, 9, 10, 11):
        ev[:, col] = np.where(ev[:, col] >= 0, seats[np.clip(ev[:, col], 0, None)], ev[:, col])
    ev[:, 3] = np.where(ev[:, 3] >= 0, cards[np.clip(ev[:, 3], 0, None)], -1)
    ev[:, 5] = np.where(ev[:, 5] >= 0, np.array(g.set_perm)[np.clip(ev[:, 5], 0, None)], -1)
    for t in np.flatnonzero(arrays.events[:, 0] == 2):  # named seats follow their cards
        old_set = int(arrays.events[t, 5])
        named = np.empty(6, np.int64)
        for i in range(6):
            named[g.card_perm[old_set][i]] = seats[arrays.events[t, 6 + i]]
        ev[t, 6:12] = named
    removed = np.empty_like(arrays.events[:, 12:12 + n])
    removed[:, seats] = arrays.events[:, 12:12 + n]
    ev[:, 12:12 + n] = removed
    hands = np.empty_like(arrays.hands)
    for seat in range(n):
        hands[seats[seat]] = np.sort(cards[arrays.hands[seat]])
    return GameArrays(n, probs, ev, holders, hands, arrays.kinds, arrays.name, arrays.rejected)


# ---- training


@dataclass
class TrainConfig:
    """train_predictor's arguments. data / val: folders of simulated-game shards (generated
    there when empty: `games` per table size with seed `seed`, val_games with seed + 1);
    steps of `batch` sequences (one table size per step, alternating); Adam at `lr` with
    cosine decay; validation loss every `eval_every` steps, the best weights kept; stops at
    `max_minutes`. augment: a random team-keeping relabelling per sequence (for this
    equivariant network it changes the loss only by rounding, see the tests; kept so that a
    non-equivariant variant trains the same way)."""

    out: str = DEFAULT_MODEL
    data: str = "results/fish_predictor/train"
    val: str = "results/fish_predictor/val"
    games: int = 200
    val_games: int = 6
    table_sizes: tuple = (6, 8)
    mix: dict = field(default_factory=lambda: dict(DEFAULT_MIX))
    limit_games: Optional[int] = None
    model: PredictorConfig = field(default_factory=PredictorConfig)
    steps: int = 1200
    batch: int = 8
    lr: float = 3e-3
    weight_decay: float = 0.0
    eval_every: int = 100
    max_minutes: float = 60.0
    augment: bool = True
    seed: int = 0
    threads: int = 1
    log: Optional[str] = None


def _as_config(args) -> TrainConfig:
    if isinstance(args, TrainConfig):
        return args
    args = dict(args or {})
    model = args.pop("model", {})
    cfg = TrainConfig(**args)
    cfg.model = model if isinstance(model, PredictorConfig) else PredictorConfig(**model)
    cfg.table_sizes = tuple(cfg.table_sizes)
    return cfg


def sequence_loss(model: PredictorNet, batch: Batch) -> tuple[torch.Tensor, int]:
    """(mean log-loss of the true holder over the scored elements, their number): in-play cards
    the tracker does not know for certain, at valid steps, true holder possible under the
    tracker (always, for a consistent game)."""
    _, log_p = model(batch.probs, batch.events)
    target = batch.target.clamp_min(0)  # [B, T, C]
    picked = log_p.gather(2, target.unsqueeze(2)).squeeze(2)  # [B, T, C]
    tracker_true = batch.probs.gather(2, target.unsqueeze(2)).squeeze(2)
    uncertain = batch.probs.max(2).values < CERTAIN
    mask = (batch.target >= 0) & uncertain & batch.valid.unsqueeze(-1) & (tracker_true > 0)
    count = int(mask.sum())
    return -torch.where(mask, picked, torch.zeros_like(picked)).sum() / max(count, 1), count


def all_sequences(games: Sequence[GameArrays]) -> list[ObserverSequence]:
    return [observer_sequence(g, o) for g in games for o in range(g.num_players)]


def evaluate_loss(model: PredictorNet, seqs: Sequence[ObserverSequence], batch: int = 8) -> float:
    """Mean log-loss over every scored element of `seqs` (a simulated validation set)."""
    total = count = 0.0
    with torch.no_grad():
        for n in sorted({s.num_players for s in seqs}):
            group = [s for s in seqs if s.num_players == n]
            for i in range(0, len(group), batch):
                loss, k = sequence_loss(model, collate(group[i:i + batch]))
                total += float(loss) * k
                count += k
    return total / max(count, 1)


def train_on(model: PredictorNet, games: Sequence[GameArrays], cfg: TrainConfig,
             val: Sequence[ObserverSequence] = (),
             log: Optional[Callable[[str], None]] = None) -> dict:
    """Trains `model` in place on `games`; returns the history (and leaves the best weights by
    validation loss in the model when `val` is given)."""
    rng = np.random.default_rng(cfg.seed)
    torch.manual_seed(cfg.seed)
    by_size = {n: [g for g in games if g.num_players == n] for n in cfg.table_sizes}
    by_size = {n: gs for n, gs in by_size.items() if gs}
    sizes = sorted(by_size)
    opt = torch.optim.Adam(model.parameters(), lr=cfg.lr, weight_decay=cfg.weight_decay)
    sched = torch.optim.lr_scheduler.LambdaLR(
        opt, lambda k: 0.5 * (1 + math.cos(math.pi * min(k, cfg.steps) / cfg.steps)))
    started = time.perf_counter()
    history = {"step": [], "train_loss": [], "val_loss": [], "seconds": []}
    best = (math.inf, None, 0)
    running, seen = 0.0, 0

    def validate(step: int) -> None:
        nonlocal best
        model.eval()
        v = evaluate_loss(model, val) if val else math.nan
        model.train()
        history["step"].append(step)
        history["train_loss"].append(running / max(seen, 1))
        history["val_loss"].append(v)
        history["seconds"].append(time.perf_counter() - started)
        if val and v < best[0]:
            best = (v, {k: t.clone() for k, t in model.state_dict().items()}, step)
        if log:
            log(f"step {step}: train {running / max(seen, 1):.4f} val {v:.4f} "
                f"({time.perf_counter() - started:.0f} s)")

    model.train()
    if val:
        validate(0)
    step = 0
    for step in range(1, cfg.steps + 1):
        n = sizes[step % len(sizes)]
        pool = by_size[n]
        seqs = []
        for _ in range(cfg.batch):
            g = pool[int(rng.integers(len(pool)))]
            if cfg.augment:
                g = permute_arrays(g, random_symmetry(rng, n))
            seqs.append(observer_sequence(g, int(rng.integers(n))))
        loss, _ = sequence_loss(model, collate(seqs))
        opt.zero_grad()
        loss.backward()
        nn.utils.clip_grad_norm_(model.parameters(), 1.0)
        opt.step()
        sched.step()
        running, seen = running + float(loss.detach()), seen + 1
        if step % cfg.eval_every == 0 or step == cfg.steps:
            validate(step)
            running, seen = 0.0, 0
        if time.perf_counter() - started > 60 * cfg.max_minutes:
            if step % cfg.eval_every:
                validate(step)
            break
    model.eval()
    if best[1] is not None:
        model.load_state_dict(best[1])
    history["best_step"], history["best_val_loss"] = best[2], best[0]
    history["steps_run"] = step
    history["minutes"] = (time.perf_counter() - started) / 60
    return history


def train_predictor(args=None, progress: Optional[Callable[[str], None]] = print) -> Path:
    """Trains the predictor from a TrainConfig or a dict of its fields (model: a dict of
    PredictorConfig's); generates the simulated data first where the folders are empty. Saves
    the model (config and training notes inside) to cfg.out and returns that path."""
    cfg = _as_config(args)
    torch.set_num_threads(cfg.threads)
    logs = []

    def log(msg: str) -> None:
        logs.append(msg)
        if progress:
            progress(msg)

    for folder, count, seed in ((cfg.data, cfg.games, cfg.seed),
                                (cfg.val, cfg.val_games, cfg.seed + 1)):
        if folder and count and not any(Path(folder).glob("*.npz")):
            log(f"generating {count} games per table size into {folder}")
            generate_dataset(folder, count, cfg.table_sizes, seed=seed, mix=cfg.mix,
                             shard_size=20 if folder == cfg.data else count, progress=log)
    data = [g for g in load_dataset(cfg.data, cfg.limit_games).games
            if g.num_players in cfg.table_sizes]
    val = all_sequences([g for g in load_dataset(cfg.val).games
                         if g.num_players in cfg.table_sizes]) if cfg.val else []
    log(f"{len(data)} training games ({sum(g.num_steps for g in data)} steps), "
        f"{len(val)} validation sequences")
    torch.manual_seed(cfg.seed)
    model = PredictorNet(cfg.model).zero_head()
    history = train_on(model, data, cfg, val, log)
    meta = {"train_config": _jsonable(asdict(cfg)), "history": history,
            "train_games": len(data), "parameters": num_parameters(model)}
    path = save_predictor(cfg.out, model, meta)
    log(f"saved {path} ({num_parameters(model)} parameters, best step {history['best_step']}, "
        f"val {history['best_val_loss']:.4f}, {history['minutes']:.1f} min)")
    if cfg.log:
        write_json_atomic(cfg.log, {"log": logs, **meta})
    return path


def _jsonable(x):
    if isinstance(x, dict):
        return {k: _jsonable(v) for k, v in x.items()}
    if isinstance(x, (list, tuple)):
        return [_jsonable(v) for v in x]
    return x


# ---- evaluation on recorded games


MODEL_TIE = 1e-6  # the model computes in float32: closer than this is a tie, to the lowest seat


def _argmax_other(probs: np.ndarray, observer: int, tie: float) -> np.ndarray:
    """[T, C] most likely seat other than the observer; seats within `tie` of the best count
    as tied and the lowest wins (prediction.py: 1e-12 on its strict count, 0 = plain argmax on
    the count including certain cards)."""
    masked = probs.copy()
    masked[:, observer, :] = -1.0
    if tie <= 0:
        return masked.argmax(axis=1)
    return (masked >= masked.max(axis=1, keepdims=True) - tie).argmax(axis=1)


class _Tally:
    """Counts for one predictor (model or tracker) over some games; tie_strict / tie_wide: the
    tie rules of the two accuracy counts (_argmax_other)."""

    def __init__(self, tie_strict: float, tie_wide: float, bins: int = 10):
        self.tie_strict, self.tie_wide = tie_strict, tie_wide
        self.n = self.correct = self.wide = self.wide_correct = self.zero_truth = 0
        self.loss = 0.0
        self.bins = bins
        self.bin_n = np.zeros(bins, np.int64)
        self.bin_conf = np.zeros(bins)
        self.bin_hit = np.zeros(bins)

    def add(self, probs: np.ndarray, truth: np.ndarray, observer: int, strict: np.ndarray,
            wide: np.ndarray) -> None:
        """probs [T, P, C]; truth [T, C]; strict / wide [T, C] bool: scored elements (strict:
        the tracker is uncertain; wide: every in-play card outside the observer's hand)."""
        guess = _argmax_other(probs, observer, self.tie_strict)
        hit = guess == truth
        self.n += int(strict.sum())
        self.correct += int((hit & strict).sum())
        self.wide += int(wide.sum())
        self.wide_correct += int(((_argmax_other(probs, observer, self.tie_wide) == truth)
                                  & wide).sum())
        p_true = np.take_along_axis(probs, np.clip(truth, 0, None)[:, None, :], 1)[:, 0, :]
        p_true = p_true[strict]
        self.zero_truth += int((p_true < LOG_FLOOR).sum())
        self.loss -= float(np.log(np.maximum(p_true, LOG_FLOOR)).sum())
        conf = np.take_along_axis(probs, guess[:, None, :], 1)[:, 0, :][strict]
        b = np.minimum((conf * self.bins).astype(int), self.bins - 1)
        np.add.at(self.bin_n, b, 1)
        np.add.at(self.bin_conf, b, conf)
        np.add.at(self.bin_hit, b, hit[strict])

    def result(self, rejected: Optional[int] = None) -> dict:
        r = lambda a, b: a / b if b else None  # noqa: E731
        out = {"accuracy": r(self.correct, self.n), "predictions": self.n,
               "correct": self.correct, "accuracy_incl_certain": r(self.wide_correct, self.wide),
               "predictions_incl_certain": self.wide, "correct_incl_certain": self.wide_correct,
               "log_loss": r(self.loss, self.n), "loss_sum": self.loss,
               "zero_truth": self.zero_truth, "log_loss_incl_certain": r(self.loss, self.wide)}
        if rejected is not None:
            out["rejected"] = rejected
        return out

    def calibration(self) -> dict:
        """Reliability of the argmax's probability over the strict elements: per bin of width
        1 / bins, the count, mean confidence and observed accuracy; ECE = sum over bins of
        count / total * |accuracy - confidence|."""
        total = max(int(self.bin_n.sum()), 1)
        rows, ece = [], 0.0
        for i in range(self.bins):
            k = int(self.bin_n[i])
            conf = self.bin_conf[i] / k if k else None
            acc = self.bin_hit[i] / k if k else None
            if k:
                ece += k / total * abs(acc - conf)
            rows.append({"bin": [i / self.bins, (i + 1) / self.bins], "count": k,
                         "confidence": conf, "accuracy": acc})
        return {"ece": ece, "bins": rows}

    def merge(self, other: "_Tally") -> None:
        for name in ("n", "correct", "wide", "wide_correct", "loss", "zero_truth"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.bin_n += other.bin_n
        self.bin_conf += other.bin_conf
        self.bin_hit += other.bin_hit


def evaluate_arrays(model: PredictorNet, games: Sequence[GameArrays]) -> dict:
    """The model beside its exact tracker on games given as arrays (float64 beliefs computed
    with the evaluation's rules, at prediction.evaluate_game's positions). Returns the keys of
    prediction.evaluate_predictions (accuracy: cards the tracker does not know for certain;
    accuracy_incl_certain: the seed's metric, every in-play card outside the observer's hand;
    log_loss: mean -ln P(true holder) over the cards the tracker does not know, floored at
    prediction.LOG_FLOOR; known cards are copied and cost 0) plus log_loss_incl_certain (the
    same sum over the seed metric's count) and calibration; the same for the tracker under
    "tracker" (prediction.py's tie rules, so its figures are evaluate.py's) and
    "tracker_matched" (the model's tie rule, MODEL_TIE on both counts: like for like)."""
    rules = {"model": (MODEL_TIE, MODEL_TIE), "tracker": (1e-12, 0.0),
             "tracker_matched": (MODEL_TIE, MODEL_TIE)}
    out: dict = {"per_file": {}, "tracker": {"per_file": {}}, "tracker_matched": {"per_file": {}}}
    totals = {key: _Tally(*rule) for key, rule in rules.items()}
    for arrays in games:
        n = arrays.num_players
        tallies = {key: _Tally(*rule) for key, rule in rules.items()}
        truth = arrays.holders.astype(np.int64)
        in_play = truth >= 0
        for observer in range(n):
            tracker = arrays.probs[observer].astype(np.float64)
            model_p = predict_game(model, arrays, observer).astype(np.float64)
            wide = in_play & (truth != observer)
            strict = in_play & (tracker.max(axis=1) < CERTAIN)
            for key, probs in (("model", model_p), ("tracker", tracker),
                               ("tracker_matched", tracker)):
                tallies[key].add(probs, truth, observer, strict, wide)
        for key in rules:
            target = out if key == "model" else out[key]
            target["per_file"][arrays.name] = tallies[key].result(arrays.rejected)
            totals[key].merge(tallies[key])
    for key in rules:
        target = out if key == "model" else out[key]
        target.update(totals[key].result())
        target["calibration"] = totals[key].calibration()
    return out


def evaluate_predictor(model_path, games: Optional[Sequence[RecordedGame]] = None,
                       cache: Optional[str] = None) -> dict:
    """The saved model (a path, or a PredictorNet) on recorded games (default: the six shipped
    human recordings) beside the exact tracker on the same positions (evaluate_arrays). cache:
    an .npz path where the trackers' beliefs are kept between runs (they cost about a
    minute)."""
    model = model_path if isinstance(model_path, nn.Module) else load_predictor(model_path)
    if games is None:
        games = load_recordings()[0]
    result = evaluate_arrays(model, recording_arrays(games, cache))
    result["model"] = None if isinstance(model_path, nn.Module) else str(model_path)
    return result


def recording_arrays(games: Sequence[RecordedGame], cache: Optional[str] = None
                     ) -> list[GameArrays]:
    """game_arrays of every game (float64 beliefs), from `cache` when it holds the same games."""
    key = [f"{g.name}:{len(g.events)}:{hash((g.hands, g.events))}" for g in games]
    if cache and Path(cache).exists():
        with np.load(cache, allow_pickle=False) as z:
            if list(z["keys"]) == key:
                return [GameArrays(int(z[f"n{i}"]), z[f"probs{i}"], z[f"events{i}"],
                                   z[f"holders{i}"], z[f"hands{i}"], name=g.name,
                                   rejected=int(z[f"rejected{i}"]))
                        for i, g in enumerate(games)]
    arrays = [game_arrays(game, dtype=np.float64) for game in games]
    if cache:
        payload = {"keys": np.array(key)}
        for i, a in enumerate(arrays):
            payload.update({f"n{i}": np.array(a.num_players), f"probs{i}": a.probs,
                            f"events{i}": a.events, f"holders{i}": a.holders,
                            f"hands{i}": a.hands, f"rejected{i}": np.array(a.rejected)})
        Path(cache).parent.mkdir(parents=True, exist_ok=True)
        write_atomic(cache, lambda f: np.savez(f, **payload))
    return arrays
