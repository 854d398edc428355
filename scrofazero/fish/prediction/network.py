"""A learned Fish hand predictor: a sequence model over one seat's public history that corrects
the exact belief (fish/belief/tracker.py) with what the asks say about how people play.

Input, per step t (before event t, as metric.evaluate_game scores): the observer's exact
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

`HandPredictor` (fish/prediction/session.py) is the tracker-like session (update(event),
probabilities()); `predict` does a whole game-so-far at once; `train_predictor`
(prediction/training.py) and `evaluate_predictor` (prediction/scoring.py) are the entry points
(train.py / evaluate.py game=fish mode=track model=PATH). Training data: simulated games only
(fish/prediction/data.py); the recordings are only ever evaluated on.
"""

from __future__ import annotations

import math
from dataclasses import asdict, dataclass, fields
from pathlib import Path
from typing import cast

import torch
from torch import nn

from scrofazero.atomic import write_atomic
from scrofazero.games.fish.cards import hand_size
from scrofazero.settings import at_most, check_bounds, one_of

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

    core: one_of(*CORES) = "gru"  # type: ignore[valid-type]
    embed: at_most(MAX_WIDTH) = 16  # type: ignore[valid-type]
    hidden: at_most(MAX_WIDTH) = 32  # type: ignore[valid-type]
    layers: at_most(MAX_LAYERS) = 1  # type: ignore[valid-type]
    ask_held_allowed: bool = True
    ask_needs_other: bool = False

    def __post_init__(self):
        if self.core not in CORES:
            raise ValueError(f"core must be one of {CORES}, got {self.core!r}")


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
            self.rnn: nn.Module = nn.GRU(width, cfg.hidden, cfg.layers, batch_first=True)
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
        # (torch types an item of a Sequential as a Module, whose attributes it cannot know)
        head_in = cast(nn.Linear, self.head[0])
        w = head_in.weight
        h = (e @ w[:, :E].T + head_in.bias + _to_cards(z @ w[:, E:2 * E].T)
             + e.mean(-3, keepdim=True) @ w[:, 2 * E:].T)
        return self.head[2](torch.relu(h)).squeeze(-1)

    def forward(self, probs: torch.Tensor, events: torch.Tensor):
        return masked_output(self.delta(probs, events), probs)

    def zero_head(self) -> PredictorNet:
        """Zeroes the last layer: the model then predicts exactly the tracker's marginals."""
        last = cast(nn.Linear, self.head[-1])  # (see delta)
        nn.init.zeros_(last.weight)
        nn.init.zeros_(last.bias)
        return self


def num_parameters(model: nn.Module) -> int:
    return sum(p.numel() for p in model.parameters())


def save_predictor(path, model: PredictorNet, meta: dict | None = None) -> Path:
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
        model = PredictorNet(check_bounds(
            PredictorConfig(**{k: v for k, v in config.items() if k in known}), "config"))
        model.load_state_dict(state)
    except (ValueError, TypeError, RuntimeError) as err:  # RuntimeError: shapes or names
        raise ValueError(f"{path}: not a Fish hand predictor ({err})") from None
    bad = [k for k, v in state.items() if v.is_floating_point() and not torch.isfinite(v).all()]
    if bad:
        raise ValueError(f"{path}: weight {bad[0]} holds NaN or infinite values")
    model.meta = payload.get("meta", {})
    return model.eval()
