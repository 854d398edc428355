"""The files of the inference networks (nn/belief.py, nn/behaviour.py): self-describing (format
name, feature version, shape, weights, what the training says of itself), written atomically,
read back with every fault named by the file, and loaded once per file: every player that loads
the same file shares the one model, which is only ever evaluated."""

from __future__ import annotations

import io
import os
from collections.abc import Callable, Mapping
from pathlib import Path
from typing import Any, Protocol, TypeVar, cast

import torch

from scrofazero.atomic import strict_json, write_atomic

_LOADED: dict[tuple[str, str, int, int], Any] = {}  # (format, path, size, mtime) -> the model
_Net = TypeVar("_Net", bound=torch.nn.Module)
_Model = TypeVar("_Model")


class SavedNet(Protocol):
    """A network a file holds: its constructor arguments and its weights."""

    def config(self) -> dict[str, Any]: ...

    def state_dict(self) -> dict[str, Any]: ...


def save_net_file(path: str | os.PathLike[str], fmt: str, feature_version: int, net: SavedNet,
                  meta: Mapping[str, Any] | None = None) -> Path:
    """Write `net` (with a `config()` of its constructor arguments) and `meta` atomically.

    Args:
        path: the file to write; missing parent folders are made.
        fmt: the file's format name (a reader refuses another).
        feature_version: the version of the inputs the network reads.
        net: the network whose shape and weights are saved.
        meta: plain data on its training (what it was trained on, for how long).

    Returns:
        The path written.
    """
    payload = {"format": fmt, "feature_version": feature_version, "config": net.config(),
               "model": net.state_dict(), "meta": strict_json(dict(meta or {}))}
    buffer = io.BytesIO()
    torch.save(payload, buffer)
    data = buffer.getbuffer()
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    return write_atomic(path, lambda f: f.write(data), fsync=True)


def load_net_file(path: Path, fmt: str, feature_version: int, kind: str,
                  build: Callable[..., _Net], wrap: Callable[[_Net, Any], _Model]) -> _Model:
    """wrap(net, meta) of the network file `path`, read once per (path, size, modification
    time); a ValueError naming the file when it is not a `kind` network file of these features
    (unreadable, another format or feature version, a bad shape, weights that do not fit it or
    are not finite).

    Args:
        path: the file (it must exist).
        fmt: the format name it must have.
        feature_version: the feature version it must have.
        kind: what it is, for the messages ("belief", "behaviour").
        build: the network class, called with the stored constructor arguments.
        wrap: (net, meta) -> the model players use.
    """
    stat = path.stat()
    key = (fmt, str(path.resolve()), stat.st_size, stat.st_mtime_ns)
    if key not in _LOADED:
        net, meta = _read(path, fmt, feature_version, kind, build)
        _LOADED[key] = wrap(net, meta)
    return cast(_Model, _LOADED[key])


def _read(path: Path, fmt: str, feature_version: int, kind: str,
          build: Callable[..., _Net]) -> tuple[_Net, Any]:
    try:
        payload = torch.load(path, map_location="cpu", weights_only=True)
    except Exception as err:  # noqa: BLE001 - a corrupt or foreign file: say which
        raise ValueError(f"{path}: not a readable {kind} network file ({err})") from None
    if not isinstance(payload, dict) or payload.get("format") != fmt:
        raise ValueError(f"{path}: not a {kind} network file (format "
                         f"{payload.get('format') if isinstance(payload, dict) else None!r})")
    if payload.get("feature_version") != feature_version:
        raise ValueError(f"{path}: made for {kind} features version "
                         f"{payload.get('feature_version')}, this code reads {feature_version}")
    config: Any = payload.get("config")  # not checked: build(**config) refuses a bad one
    try:
        net = build(**config)
    except (TypeError, ValueError) as err:  # a config that is no dict, or a wrong shape
        raise ValueError(f"{path}: bad network shape {config!r} ({err})") from None
    try:
        weights: Any = payload.get("model")  # not checked: load_state_dict refuses bad ones
        net.load_state_dict(weights)
    except (RuntimeError, TypeError, AttributeError) as err:
        raise ValueError(f"{path}: weights do not fit the stored shape ({err})") from None
    for name, tensor in net.state_dict().items():
        if not torch.isfinite(tensor).all():
            raise ValueError(f"{path}: non-finite weights in {name}")
    return net, payload.get("meta")
