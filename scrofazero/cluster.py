"""Ray, the optional engine of `distributed=ray` (the `[ray]` extra): importing it with a clear
error when it is missing, and joining or starting a cluster with a clear error when the one named
cannot be reached. Nothing else of the package is imported here, so every layer may use it."""

from __future__ import annotations

import socket


def ray_module():
    """The `ray` package, or a ValueError that says how to install it."""
    try:
        import ray
    except ImportError as err:
        raise ValueError(f"distributed=ray needs Ray: pip install -e '.[ray]' ({err})") from None
    return ray


def _check_reachable(address: str, timeout: float = 5.0) -> None:
    """A host:port address (optionally ray://) must accept a TCP connection within `timeout`:
    ray.init waits for an unreachable head for minutes. "auto" is left to Ray, which fails at
    once when no cluster runs on this machine."""
    if address == "auto":
        return
    hostport = address.split("://", 1)[-1]
    host, _, port = hostport.rpartition(":")
    if not host or not port.isdigit():
        raise ValueError(f"ray.address={address}: expected auto or host:port")
    try:
        socket.create_connection((host, int(port)), timeout=timeout).close()
    except OSError as err:
        raise ValueError(f"ray.address={address}: cannot reach a Ray cluster there ({err}); "
                         "start one with `ray start --head` or leave ray.address unset to run "
                         "a local one") from None


def connect(address: str | None = None, num_cpus: int | None = None,
            num_gpus: float | None = None):
    """ray.init once per process: address None starts a local instance (num_cpus / num_gpus
    limit what it offers), "auto" or "host:port" joins a running cluster. Returns the ray module.
    An address that cannot be reached fails at once with a ValueError naming it."""
    ray = ray_module()
    if ray.is_initialized():
        return ray
    kwargs = {"include_dashboard": False, "log_to_driver": False,
              "configure_logging": False, "ignore_reinit_error": True}
    if address:
        _check_reachable(address)
        try:
            ray.init(address=address, **kwargs)
        except Exception as err:  # noqa: BLE001 - Ray raises ConnectionError, RuntimeError or ValueError by version and cause; all are named
            raise ValueError(f"ray.address={address}: cannot reach a Ray cluster there "
                             f"({type(err).__name__}: {str(err).splitlines()[0] if str(err) else ''}); "
                             "start one with `ray start --head` or leave ray.address unset to "
                             "run a local one") from None
    else:
        ray.init(num_cpus=num_cpus, num_gpus=num_gpus, **kwargs)
    return ray
