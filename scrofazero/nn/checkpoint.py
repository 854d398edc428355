"""Crash-safe training checkpoints: model, optimiser, step, config and encoding version.

Every file is written to a temporary file in the same directory, fsynced and renamed into place,
so a kill at any moment leaves either the old or the new `latest.pt`, never a torn one.
`load_model` rebuilds the network from the checkpoint alone (its stored `model_config`). A run
that averages its weights (train.ema) also stores the average, `ema`, beside the weights it
trains, `model`; the average is the checkpoint's network for load_model, the weights are what a
resumed run continues from.
"""

from __future__ import annotations

import hashlib
import io
import os
import pickle
import re
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any

import numpy as np
import torch

from scrofazero.atomic import strict_json, write_atomic
from scrofazero.nn.encoding import ENCODING_VERSION
from scrofazero.nn.netfile import SavedNet
from scrofazero.nn.network import PolicyValueNet

# Every game's trainer refuses a damaged file with these, so they live in the run harness.
from scrofazero.runs import CheckpointError, check_finite

FORMAT = "scrofazero-checkpoint"
FORMAT_VERSION = 1
LATEST = "latest.pt"
_NDARRAY = "__ndarray__"  # tag of a numpy array stored as a tensor inside `extra`
_SNAPSHOT = re.compile(r"^ckpt_(\d{7,})\.pt$")
ZIP_MAGIC = b"PK\x03\x04"  # how every file torch.save writes begins (a zip archive)


def _fsync_dir(path: Path) -> None:
    """Make a rename in `path` durable; not every platform lets a directory be opened."""
    try:
        fd = os.open(path, os.O_RDONLY)
    except OSError:
        return
    try:
        os.fsync(fd)
    except OSError:
        pass
    finally:
        os.close(fd)


def _atomic_save(payload: dict[str, Any], target: Path) -> None:
    """torch.save to a temp file next to `target`, fsync, then os.replace onto `target`; the
    previous target is untouched if anything fails. Serialised in memory first, so a failed
    write (a full disk) is write_atomic's OSError naming `target`, not torch's wrapped one."""
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    data = buffer.getbuffer()
    write_atomic(target, lambda f: f.write(data), fsync=True)
    _fsync_dir(target.parent)


def _pack(obj: Any) -> Any:
    """numpy arrays -> tagged tensors (recursively), so `extra` (replay records, rng state)
    loads with weights_only=True, which refuses pickled numpy objects."""
    if isinstance(obj, np.ndarray):
        if obj.dtype == object:
            raise TypeError("object arrays cannot be stored in a checkpoint")
        return {_NDARRAY: torch.from_numpy(np.ascontiguousarray(obj))}
    if isinstance(obj, np.generic):
        return obj.item()
    if isinstance(obj, dict):
        return {k: _pack(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_pack(v) for v in obj)
    return obj


def _unpack(obj: Any) -> Any:
    if isinstance(obj, dict):
        if len(obj) == 1 and _NDARRAY in obj:
            return obj[_NDARRAY].cpu().numpy()  # map_location may have moved it
        return {k: _unpack(v) for k, v in obj.items()}
    if isinstance(obj, (list, tuple)):
        return type(obj)(_unpack(v) for v in obj)
    return obj


def _snapshots(run_dir: Path) -> list[tuple[int, Path]]:
    """Numbered snapshots in `run_dir`, oldest first."""
    found = []
    for p in run_dir.iterdir():
        m = _SNAPSHOT.match(p.name)
        if m:
            found.append((int(m.group(1)), p))
    return sorted(found)


def _payload(model: SavedNet, optimizer: torch.optim.Optimizer | None, step: int,
             config: Mapping[str, Any], extra: Mapping[str, Any] | None,
             run: Mapping[str, Any] | None = None, ema: SavedNet | None = None
             ) -> dict[str, Any]:
    """What a checkpoint file holds (format, versions, the model and its shape, the rest; `run`:
    the run harness's envelope header, scrofazero/runs.py, absent from model-only files; `ema`:
    the network holding the average of `model`'s weights, of the same shape, if there is one)."""
    payload = {
        "format": FORMAT,
        "format_version": FORMAT_VERSION,
        "encoding_version": ENCODING_VERSION,
        "model_config": model.config(),
        "model": model.state_dict(),
        "optimizer": optimizer.state_dict() if optimizer is not None else None,
        "step": int(step),
        "config": config,
        "extra": _pack(extra) if extra is not None else {},
    }
    if run is not None:
        payload["run"] = run
    if ema is not None:
        payload["ema"] = ema.state_dict()
    return payload


def save_checkpoint(
    run_dir: str | os.PathLike[str],
    *,
    model: SavedNet,
    optimizer: torch.optim.Optimizer | None,
    step: int,
    config: Mapping[str, Any],
    extra: Mapping[str, Any] | None = None,
    keep: int = 5,
    before_latest: Callable[[Path], None] | None = None,
    run: Mapping[str, Any] | None = None,
    ema: SavedNet | None = None,
) -> Path:
    """Write run_dir/ckpt_{step:07d}.pt and run_dir/latest.pt; keep the newest `keep` snapshots.

    `latest.pt` is never pruned.

    Args:
        run_dir: the run's checkpoint folder; made if missing.
        model: the PolicyValueNet saved (its config() and state_dict()).
        optimizer: its optimiser, or None.
        step: the training step, which names the snapshot.
        config: the resolved run config as plain data.
        extra: plain data (dicts, lists, numbers, strings, numpy arrays, tensors), e.g. the rng
            state and the replay.
        keep: how many of the newest numbered snapshots are kept (0: all).
        before_latest: called with the snapshot's path after it is complete and before latest.pt
            moves to it (milestone copies made there are redone on resume if a kill comes first).
        run: the run envelope's header.
        ema: the network averaging `model`'s weights (train.ema), stored as `ema`; or None.

    Returns:
        The path of the numbered snapshot.
    """
    run_dir = Path(run_dir)
    run_dir.mkdir(parents=True, exist_ok=True)
    payload = _payload(model, optimizer, step, config, extra, run, ema)
    snapshot = run_dir / f"ckpt_{int(step):07d}.pt"
    _atomic_save(payload, snapshot)
    if before_latest is not None:
        before_latest(snapshot)
    # Written last: latest.pt only ever moves forward to a snapshot that is already complete.
    _atomic_save(payload, run_dir / LATEST)
    if keep > 0:
        for _, old in _snapshots(run_dir)[:-keep]:
            old.unlink(missing_ok=True)
    return snapshot


MOMENTS = ("float32", "bfloat16")
WEIGHTS = ("float32", "float16")


def _stored(state: dict[str, Any], dtype: str, where: str) -> dict[str, Any]:
    """A state dict's floating-point tensors cast to `dtype` (one of WEIGHTS) for storage;
    load_state_dict casts them back to the network's float32 when the file is read."""
    if dtype not in WEIGHTS:
        raise ValueError(f"{where} must be one of {', '.join(WEIGHTS)}, got {dtype!r}")
    if dtype == "float32":
        return state
    return {k: (t.to(torch.float16) if torch.is_tensor(t) and t.is_floating_point() else t)
            for k, t in state.items()}


def save_model_file(path: str | os.PathLike[str], model: SavedNet, step: int = 0,
                    weights: str = "float32", meta: Mapping[str, Any] | None = None) -> Path:
    """A checkpoint holding only the network (no optimiser, config or extra), written atomically:
    what load_model needs, e.g. for the players of a periodic evaluation.

    Args:
        path: the file to write.
        model: the PolicyValueNet saved.
        step: the training step recorded with it.
        weights: "float32", or "float16" for half the size (a shipped network; load_model reads
            them into float32).
        meta: plain data describing the network (what it was trained on, what input it reads),
            stored as the payload's "meta" (load_checkpoint returns it).

    Returns:
        `path`.
    """
    path = Path(path)
    payload = _payload(model, None, step, {}, None)
    if meta is not None:
        payload["meta"] = strict_json(dict(meta))
    payload["model"] = _stored(payload["model"], weights, "model file weights")
    _atomic_save(payload, path)
    return path


def save_state_file(path: str | os.PathLike[str], *, model: SavedNet,
                    optimizer: torch.optim.Optimizer | None, step: int,
                    config: Mapping[str, Any], extra: Mapping[str, Any] | None = None,
                    moments: str = "float32", run: Mapping[str, Any] | None = None,
                    weights: str = "float32", ema: SavedNet | None = None) -> Path:
    """The compact resumable state of a run, written atomically: a checkpoint (load_checkpoint and
    load_model read it) with model, optimiser, step, config and `extra`, small enough to commit.
    moments="bfloat16" stores Adam's moment estimates at half size and weights="float16" the
    weights; loading casts both back to float32, so a continuation is then exact but for their
    rounding (once per stop: a float16 weight is within 2^-11 of its value, a fraction of
    one Adam step at the learning rates of a long run's late phases).

    Args:
        path: the file to write; missing parent folders are made.
        model: the PolicyValueNet saved.
        optimizer: its optimiser, or None.
        step: the training step.
        config: the resolved run config as plain data.
        extra: plain data to resume from, as save_checkpoint's.
        moments: "float32" or "bfloat16", how Adam's moment estimates are stored.
        run: the run envelope's header.
        weights: "float32" or "float16", how the network's weights are stored.
        ema: the network averaging the weights (train.ema), stored like them (`weights`): the
            average of a run continued from the file starts where the saved one was, rounded
            alike; or None.

    Returns:
        `path`.
    """
    if moments not in MOMENTS:
        raise ValueError(f"state moments must be one of {', '.join(MOMENTS)}, got {moments!r}")
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    payload = _payload(model, optimizer, step, config, extra, run, ema)
    payload["model"] = _stored(payload["model"], weights, "state weights")
    if ema is not None:
        payload["ema"] = _stored(payload["ema"], weights, "state weights")
    if moments == "bfloat16" and payload["optimizer"] is not None:
        payload["optimizer"]["state"] = {
            key: {name: (t.to(torch.bfloat16) if torch.is_tensor(t) and t.is_floating_point()
                         and t.dim() > 0 else t) for name, t in state.items()}
            for key, state in payload["optimizer"]["state"].items()}
    _atomic_save(payload, path)
    return path


def recast_weights(path: str | os.PathLike[str], weights: str = "float16") -> Path:
    """Rewrite a checkpoint, state or model file in place (atomically) with its network's weights
    stored as `weights` (one of WEIGHTS); everything else is kept as it is. For a state file
    written by a run that started before train.state_weights was set (models/long_run/).

    Args:
        path: the file rewritten.
        weights: "float32" or "float16".

    Returns:
        `path`.
    """
    path = Path(path)
    payload = load_checkpoint(path)
    payload.pop("path")
    payload["extra"] = _pack(payload["extra"])
    payload["model"] = _stored(payload["model"], weights, "weights")
    if payload.get("ema") is not None:
        payload["ema"] = _stored(payload["ema"], weights, "weights")
    _atomic_save(payload, path)
    return path


def load_checkpoint(path: str | os.PathLike[str],
                    map_location: str | torch.device = "cpu") -> dict[str, Any]:
    """Read and validate a checkpoint; a CheckpointError naming the file otherwise.

    Args:
        path: a checkpoint, state or model file.
        map_location: where torch.load puts the tensors.

    Returns:
        The payload dict (model_config, model, optimizer, step, config, extra, ...), with `extra`
        unpacked to numpy arrays again and `path` added.
    """
    path = Path(path)
    if not path.is_file():
        raise CheckpointError(f"{path}: checkpoint not found")
    try:
        # weights_only=True: a checkpoint is data (tensors, dicts, numbers, strings), never code.
        payload = torch.load(path, map_location=map_location, weights_only=True)
    except Exception as err:  # truncated zip, not a torch file, unpickling refused...
        raise CheckpointError(f"{path}: {_unreadable(path, err)}") from err
    if not isinstance(payload, dict) or payload.get("format") != FORMAT:
        raise CheckpointError(f"{path}: not a {FORMAT} file")
    if payload.get("format_version") != FORMAT_VERSION:
        raise CheckpointError(
            f"{path}: format_version {payload.get('format_version')!r}, "
            f"this code reads {FORMAT_VERSION}"
        )
    missing = [k for k in ("encoding_version", "model_config", "model", "step") if k not in payload]
    if missing:
        raise CheckpointError(f"{path}: missing fields {missing}")
    expected = ENCODING_VERSION
    if payload["encoding_version"] != expected:
        raise CheckpointError(
            f"{path}: encoding_version {payload['encoding_version']!r} is incompatible with the "
            f"current encoder (version {expected})"
        )
    payload["extra"] = _unpack(payload.get("extra") or {})
    payload["path"] = str(path)
    return payload


def _unreadable(path: Path, err: Exception) -> str:
    """Why torch.load could not read `path`, in a few words (torch's own messages run to
    paragraphs of advice on unsafe loading): not a file torch.save writes (its zip archive), a
    damaged one, or one holding Python objects besides data (never loaded: they could run code)."""
    with open(path, "rb") as f:
        if f.read(4) != ZIP_MAGIC:
            return "not a checkpoint (not a file torch.save writes)"
    if isinstance(err, pickle.UnpicklingError):
        return "not a checkpoint: it holds Python objects besides tensors and data (not loaded)"
    first = str(err).split(". ")[0].strip().splitlines()  # torch's first sentence
    return f"a damaged checkpoint ({first[0] if first else type(err).__name__})"


def file_sha256(path: str | os.PathLike[str]) -> str:
    """Hex SHA-256 of the bytes of the file at `path`: what names a network file in lineages
    and caches."""
    digest = hashlib.sha256()
    with open(path, "rb") as f:
        for chunk in iter(lambda: f.read(1 << 20), b""):
            digest.update(chunk)
    return digest.hexdigest()


def latest_checkpoint(run_dir: str | os.PathLike[str]) -> Path | None:
    """run_dir/latest.pt if present, else the newest numbered snapshot, else None (also when
    the folder `run_dir` does not exist)."""
    run_dir = Path(run_dir)
    if not run_dir.is_dir():
        return None
    latest = run_dir / LATEST
    if latest.is_file():
        return latest
    snaps = _snapshots(run_dir)
    return snaps[-1][1] if snaps else None


def load_model(path_or_payload: str | os.PathLike[str] | dict[str, Any],
               map_location: str | torch.device = "cpu", averaged: bool = True
               ) -> PolicyValueNet:
    """A PolicyValueNet rebuilt from a checkpoint, in eval mode.

    The network of a checkpoint whose run averaged its weights (train.ema) is the average, the
    one the run evaluated and the one to ship.

    Args:
        path_or_payload: a checkpoint, state or model file, or a payload load_checkpoint
            returned.
        map_location: where torch.load puts the tensors when given a path.
        averaged: False gives the weights the run trained instead of their average (the same
            network for a checkpoint without an average).
    """
    payload = path_or_payload
    if not isinstance(payload, dict):
        payload = load_checkpoint(payload, map_location=map_location)
    where = payload.get("path", "checkpoint")
    key = "ema" if averaged and payload.get("ema") is not None else "model"
    try:
        model = PolicyValueNet.from_config(payload["model_config"])
        model.load_state_dict(payload[key])
    except (KeyError, TypeError, RuntimeError) as err:
        raise CheckpointError(f"{where}: {key} does not match its config ({err})") from err
    check_finite(payload[key], where)
    return model.eval()


def is_model_only(payload: Mapping[str, Any]) -> bool:
    """Whether a loaded checkpoint `payload` holds a network only (save_model_file, a shipped
    model such as models/scrofazero.pt): no optimiser, settings or training history."""
    return payload.get("optimizer") is None and not payload.get("config") and not (
        payload.get("extra"))
