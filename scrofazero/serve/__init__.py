"""The table server: play.py's web page, bot protocol and game records (docs/protocol.md).

`common/` holds what both games use, `gongzhu/` and `fish/` each game's tables, and `app.py`
the application that mounts both (tests/test_layering.py keeps the game folders apart)."""
