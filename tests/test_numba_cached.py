"""Every numba kernel of the package is cached on disk, so only the first process after a change
compiles it (the Tiny Crew core alone took some 10 s per process on 2 cores, and the suite
starts dozens of processes). numba cannot cache a recursive function, which is why the Tiny
Crew walks are loops."""

import importlib
import importlib.util
import pkgutil
from pathlib import Path

import pytest
from numba.core.registry import CPUDispatcher

import scrofazero

MODULES = sorted(
    m.name for m in pkgutil.walk_packages(scrofazero.__path__, "scrofazero.")
    if "njit" in Path(importlib.util.find_spec(m.name).origin).read_text(encoding="utf-8"))


def test_the_kernel_modules_are_found():
    assert {"scrofazero.tiny_crew.fast.bound", "scrofazero.fish.belief.fast",
            "scrofazero.agents.greed_kernel"} <= set(MODULES)


@pytest.mark.parametrize("name", MODULES)
def test_every_kernel_is_cached(name):
    module = importlib.import_module(name)
    kernels = {k: v for k, v in vars(module).items()
               if isinstance(v, CPUDispatcher) and v.__module__ == name}
    uncached = [k for k, v in kernels.items() if type(v._cache).__name__ != "FunctionCache"]
    assert not uncached, f"{name}: @njit without cache=True: {uncached}"
