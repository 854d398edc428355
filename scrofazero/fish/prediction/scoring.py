"""The learned hand predictor scored on recorded games beside its exact tracker on the same
positions (`evaluate_predictor`, what `evaluate.py game=fish mode=track model=PATH` adds):
accuracy on uncertain cards, the seed's metric, log-loss and calibration."""

from __future__ import annotations

import os
from collections.abc import Sequence
from pathlib import Path

import numpy as np
from torch import nn

from scrofazero.atomic import write_atomic
from scrofazero.fish.prediction.data import GameArrays, game_arrays
from scrofazero.fish.prediction.metric import LOG_FLOOR, RecordedGame, load_recordings
from scrofazero.fish.prediction.network import CERTAIN, PredictorNet, load_predictor
from scrofazero.fish.prediction.session import predict_game

MODEL_TIE = 1e-6  # the model computes in float32: closer than this is a tie, to the lowest seat


def _argmax_other(probs: np.ndarray, observer: int, tie: float) -> np.ndarray:
    """[T, C] most likely seat other than the observer; seats within `tie` of the best count
    as tied and the lowest wins (prediction/metric.py: 1e-12 on its strict count, 0 = plain
    argmax on the count including certain cards)."""
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

    def result(self, rejected: int | None = None) -> dict:
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
            if acc is not None and conf is not None:  # k > 0
                ece += k / total * abs(acc - conf)
            rows.append({"bin": [i / self.bins, (i + 1) / self.bins], "count": k,
                         "confidence": conf, "accuracy": acc})
        return {"ece": ece, "bins": rows}

    def merge(self, other: _Tally) -> None:
        for name in ("n", "correct", "wide", "wide_correct", "loss", "zero_truth"):
            setattr(self, name, getattr(self, name) + getattr(other, name))
        self.bin_n += other.bin_n
        self.bin_conf += other.bin_conf
        self.bin_hit += other.bin_hit


def evaluate_arrays(model: PredictorNet, games: Sequence[GameArrays]) -> dict:
    """The model beside its exact tracker on games given as arrays (float64 beliefs computed
    with the evaluation's rules, at metric.evaluate_game's positions). Returns the keys of
    metric.evaluate_predictions (accuracy: cards the tracker does not know for certain;
    accuracy_incl_certain: the seed's metric, every in-play card outside the observer's hand;
    log_loss: mean -ln P(true holder) over the cards the tracker does not know, floored at
    metric.LOG_FLOOR; known cards are copied and cost 0) plus log_loss_incl_certain (the
    same sum over the seed metric's count) and calibration; the same for the tracker under
    "tracker" (metric.py's tie rules, so its figures are evaluate.py's) and
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


def evaluate_predictor(model_path: PredictorNet | str | os.PathLike[str],
                       games: Sequence[RecordedGame] | None = None,
                       cache: str | None = None) -> dict:
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


def recording_arrays(games: Sequence[RecordedGame], cache: str | None = None
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
        # (numpy's stub takes **payload for a keyword that might be allow_pickle)
        write_atomic(cache, lambda f: np.savez(f, **payload))  # type: ignore[arg-type]
    return arrays
