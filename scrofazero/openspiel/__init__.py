"""OpenSpiel interface: importing this package registers `python_gongzhu` and `python_tiny_crew`.

Only this package needs open_spiel (the `openspiel` extra); the game classes live in gongzhu.py
and tiny_crew.py and delegate every rule to scrofazero.games.
"""

try:
    import pyspiel
except ImportError as err:  # pragma: no cover - depends on the environment
    raise ImportError(
        "scrofazero.openspiel needs open_spiel; install the extra: "
        "pip install 'scrofazero[openspiel]'"
    ) from err

from scrofazero.openspiel import gongzhu, tiny_crew

for _module, _game in ((gongzhu, gongzhu.GongzhuGame), (tiny_crew, tiny_crew.TinyCrewGame)):
    if _module.GAME_TYPE.short_name not in pyspiel.registered_names():
        pyspiel.register_game(_module.GAME_TYPE, _game)

__all__ = ["gongzhu", "tiny_crew"]
