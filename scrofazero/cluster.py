"""Ray, the optional engine of `distributed=ray` (the `[ray]` extra): importing it with a clear
error when it is missing, and joining or starting a cluster with a clear error when the one named
cannot be reached or is not a Ray cluster; and RayConfig, the `ray` settings of train.py and
evaluate.py. Only the settings' types are imported from the package, so every layer above them
may use it."""

from __future__ import annotations

import os
import socket
from dataclasses import dataclass

from scrofazero.settings import Count, NonNegative, NonNegativeInt


@dataclass
class RayConfig:
    """distributed=ray (train.py and evaluate.py; the `[ray]` extra)."""

    # None: start a local Ray instance; auto or host:port: join that cluster
    address: str | None = None
    # local instance only: CPUs it offers (None: all of this machine's)
    num_cpus: Count | None = None
    actors: Count = 2  # train.py: self-play actors
    actor_cpus: NonNegative = 1.0  # train.py: CPUs reserved per actor
    actor_gpus: NonNegative = 0.0  # train.py: GPUs (or a fraction) per actor
    actor_threads: Count = 1  # train.py: torch threads in each actor
    publish_every: Count = 1  # train.py: learner steps between published weight versions
    # train.py: self-play records made with weights more than this many versions old are dropped
    max_staleness: NonNegativeInt = 4
    # train.py: self-play calls queued per actor (2: it starts the next batch while the learner
    # learns)
    in_flight: Count = 2
    # evaluate.py: Ray tasks the deals are split over (None: the cluster's CPUs)
    tasks: Count | None = None


def ray_module():
    """The `ray` package, or a ValueError that says how to install it."""
    try:
        import ray
    except ImportError as err:
        raise ValueError(f"distributed=ray needs Ray: pip install -e '.[ray]' ({err})") from None
    return ray


# HTTP/2's client connection preface and an empty SETTINGS frame (RFC 9113, section 3.4).
_H2_PREFACE = b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + bytes([0, 0, 0, 4, 0, 0, 0, 0, 0])
_H2_SETTINGS = 4  # frame type of SETTINGS, the first frame an HTTP/2 server must send
_HINT = "start one with `ray start --head` or leave ray.address unset to run a local one"


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """A host:port address (optionally ray://) must accept a TCP connection and answer as a
    gRPC server (Ray's head and Ray Client both are) within `timeout`: ray.init waits for an
    unreachable head for minutes, and hangs on an open port of anything else. "auto" is left to
    Ray, which fails at once when no cluster runs on this machine; with RAY_USE_TLS=1 the port
    is only checked to accept connections."""
    if address == "auto":
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"ray.address={address}: expected auto or host:port")
    try:
        with socket.create_connection((host.strip("[]"), int(port)), timeout=timeout) as conn:
            if os.environ.get("RAY_USE_TLS", "0").lower() in ("0", "false", ""):
                answer = _h2_answer(conn, timeout)
                if answer is not None:
                    raise ValueError(f"ray.address={address}: something listens there but it is "
                                     f"not a Ray cluster ({answer}); {_HINT}")
    except OSError as err:
        raise ValueError(f"ray.address={address}: cannot reach a Ray cluster there ({err}); "
                         f"{_HINT}") from None


def _h2_answer(conn: socket.socket, timeout: float) -> str | None:
    """None when the server on `conn` opens an HTTP/2 connection as gRPC servers do (its first
    frame a SETTINGS frame on stream 0), else what it did instead."""
    conn.settimeout(timeout)
    conn.sendall(_H2_PREFACE)
    head = b""
    try:
        while len(head) < 9:
            chunk = conn.recv(9 - len(head))
            if not chunk:
                return "it closed the connection without an HTTP/2 greeting"
            head += chunk
    except TimeoutError:
        return f"no HTTP/2 greeting within {timeout:g} s"
    except OSError as err:
        return f"the connection failed: {err}"
    if head[3] != _H2_SETTINGS or int.from_bytes(head[5:9], "big") & 0x7FFFFFFF:
        return f"it answered {head!r}, not an HTTP/2 greeting"
    return None


def connect(address: str | None = None, num_cpus: int | None = None,
            num_gpus: float | None = None):
    """ray.init once per process: address None starts a local instance (num_cpus / num_gpus
    limit what it offers), "auto" or "host:port" joins a running cluster. Returns the ray module.
    An address that cannot be reached, or where something other than Ray listens, fails within
    seconds with a ValueError naming it."""
    ray = ray_module()
    if ray.is_initialized():
        return ray
    kwargs = {"include_dashboard": False, "log_to_driver": False,
              "configure_logging": False, "ignore_reinit_error": True}
    if address:
        _check_reachable(address)
        try:
            ray.init(address=address, **kwargs)
        except Exception as err:  # noqa: BLE001
            # Ray raises ConnectionError, RuntimeError or ValueError by version and cause; the
            # message names whichever it was.
            raise ValueError(f"ray.address={address}: cannot reach a Ray cluster there "
                             f"({type(err).__name__}: "
                             f"{str(err).splitlines()[0] if str(err) else ''}); "
                             "start one with `ray start --head` or leave ray.address unset to "
                             "run a local one") from None
    else:
        ray.init(num_cpus=num_cpus, num_gpus=num_gpus, **kwargs)
    return ray
