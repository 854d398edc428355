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
mix="greed:greed=2,raw:greed=3,if:greed=1,random:greed=0.5,raw:raw=1,if:raw=0.5,raw:random=0.5"
gen --out "$data/r0_cheap" --games 16384 --seed 11 --shard-games 512 --mix "$mix"
gen --out "$data/r0_full" --games "${FULL_GAMES:-1024}" --seed 12 --shard-games 128 \
    --mix "scrofazero:greed=4,scrofazero:raw=1,scrofazero:if=0.5"
gen --out "$data/r0_full_b" --games "${FULL_B_GAMES:-1728}" --seed 13 --shard-games 64 \
    --mix "scrofazero:greed=4,scrofazero:raw=1,scrofazero:if=0.5"
r0=("$data"/r0_cheap "$data"/r0_full "$data"/r0_full_b)
fit() { python -m scrofazero.train.belief fit --hidden 512 --blocks 2 --epochs 1.5 --batch 512 \
            --lr 1e-3 --dropout 0.3 --weight-decay 0.01 "$@"; }
fit --data "${r0[@]}" --out "$data/../belief_r0.pt"
# The committed round-1 games were played with the round-0 file shipped at commit 661f8a3
# (sha256 3d11e7af9c03f250...): `git show 661f8a3:models/belief.pt > models/belief_run/belief_r0.pt`
# replays them exactly.
# Round 1 (DAgger): the same kinds of games with the round-0 network's players in place of the
# raw network and the full player, then a fit on the union of both rounds.
gen() { python -m scrofazero.train.belief generate --beliefs "$data/../belief_r0.pt" "$@"; }
gen --out "$data/r1_full" --games 3072 --seed 22 --shard-games 128 \
    --mix "belief:greed=4,belief:belief_raw=1,belief:if=0.5"
mix="greed:greed=1,belief_raw:greed=3,if:greed=0.5,random:greed=0.25"
mix="$mix,belief_raw:belief_raw=1,if:belief_raw=0.5,belief_raw:random=0.5"
gen --out "$data/r1_cheap" --games 8192 --seed 21 --shard-games 512 --mix "$mix"
all=("${r0[@]}" "$data"/r1_cheap "$data"/r1_full)
fit --data "${all[@]}" --out "$data/../belief_r1.pt"
python -m scrofazero.train.belief report --data "${all[@]}" --beliefs "$data/../belief_r1.pt" \
    --games 400 --iec-games 60 --json docs/figures/belief_report.json
