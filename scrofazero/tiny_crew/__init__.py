"""Tiny Crew beyond its rules: the compiled exact tools (open-hand bound, exact policy values,
the determinized search player, best responses), CFR+ and OpenSpiel's MCCFR, cross-play, and the
runners behind `train.py game=tiny_crew` (train.py) and `evaluate.py game=tiny_crew` (runner.py).
The rules themselves are scrofazero.games.tiny_crew."""
