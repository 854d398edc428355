"""PettingZoo interface: AEC environments for Gongzhu (gongzhu.env) and Fish (fish.env).

Only this package needs pettingzoo (the `pettingzoo` extra); every rule is delegated to
scrofazero.games, so a move the environment accepts is one the rules engine accepts.
"""

try:
    import pettingzoo  # noqa: F401
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "scrofazero.pettingzoo needs pettingzoo; install the extra: "
        "pip install 'scrofazero[pettingzoo]'"
    ) from err
