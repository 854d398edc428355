#!/usr/bin/env bash
# How models/belief.pt was made (models/belief.md): the games, then the fit. Generation resumes
# shard by shard where it stopped (the shards used are committed under models/belief_run/data);
# the fit writes its file after every epoch. DATA (default models/belief_run/data) holds the
# games; one core each step.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=${DATA:-models/belief_run/data}
gen() { python -m scrofazero.train.belief generate "$@"; }
# Round 0: the players our player meets and is, on fresh random deals (never the standard ones).
gen --out "$data/r0_cheap" --games 16384 --seed 11 --shard-games 512 \
    --mix "greed:greed=2,raw:greed=3,if:greed=1,random:greed=0.5,raw:raw=1,if:raw=0.5,raw:random=0.5"
gen --out "$data/r0_full" --games "${FULL_GAMES:-1024}" --seed 12 --shard-games 128 \
    --mix "scrofazero:greed=4,scrofazero:raw=1,scrofazero:if=0.5"
gen --out "$data/r0_full_b" --games "${FULL_B_GAMES:-1728}" --seed 13 --shard-games 64 \
    --mix "scrofazero:greed=4,scrofazero:raw=1,scrofazero:if=0.5"
python -m scrofazero.train.belief fit --data "$data"/r0_cheap "$data"/r0_full "$data"/r0_full_b --out models/belief.pt \
    --hidden 512 --blocks 2 --epochs 1.5 --batch 512 --lr 1e-3 --dropout 0.3 --weight-decay 0.01
python -m scrofazero.train.belief report --data "$data"/r0_cheap "$data"/r0_full "$data"/r0_full_b --beliefs models/belief.pt \
    --games 400 --json docs/figures/belief_report.json
