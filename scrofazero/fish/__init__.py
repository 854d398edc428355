"""Fish beyond its rules: the exact belief tracker (with its brute-force reference), the
hand-prediction metric on recorded games, the players, team matches, and the runner behind
`evaluate.py game=fish` (runner.py). The rules, views, moves and transcripts are
scrofazero.games.fish."""
