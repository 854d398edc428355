"""The table server: play.py's web page, bot protocol and game records (docs/protocol.md)."""
