#!/usr/bin/env bash
# How the inference networks were made (models/belief.md, models/behaviour.md): the games, then
# the fits. Generation resumes shard by shard where it stopped (the shards used are committed
# under models/belief_run/data); a fit resumes with resume=true. DATA (default
# models/belief_run/data) holds the games; one core each step.
set -euo pipefail
cd "$(dirname "$0")/../.."
data=${DATA:-models/belief_run/data}
gen() { python -m scrofazero.train.hidden_games "$@"; }
fit() { python train.py "$@"; }  # learner=belief|behaviour inference.data=[...] run=NAME
# Round 0: the players our player meets and is, on fresh random deals (never the standard ones).
mix="greed:greed=2,raw:greed=3,if:greed=1,random:greed=0.5,raw:raw=1,if:raw=0.5,raw:random=0.5"
gen out="$data/r0_cheap" games=16384 seed=11 shard_games=512 mix="$mix"
gen out="$data/r0_full" games="${FULL_GAMES:-1024}" seed=12 shard_games=128 \
    mix="scrofazero:greed=4,scrofazero:raw=1,scrofazero:if=0.5"
gen out="$data/r0_full_b" games="${FULL_B_GAMES:-1728}" seed=13 shard_games=64 \
    mix="scrofazero:greed=4,scrofazero:raw=1,scrofazero:if=0.5"
r0="$data/r0_cheap,$data/r0_full,$data/r0_full_b"
fit learner=belief "inference.data=[$r0]" run=belief_r0 inference.out="$data/../belief_r0.pt"
# The committed round-1 and round-2 games were played with the round-0 file shipped at commit
# 661f8a3 (sha256 3d11e7af9c03f250...): `git show 661f8a3:models/belief.pt >
# models/belief_run/belief_r0.pt` replays them exactly.
# Round 1 (DAgger): the same kinds of games with the round-0 network's players in place of the
# raw network and the full player.
b0="beliefs=$data/../belief_r0.pt"
gen out="$data/r1_full" games=3072 seed=22 shard_games=128 "$b0" \
    mix="belief:greed=4,belief:belief_raw=1,belief:if=0.5"
mix="greed:greed=1,belief_raw:greed=3,if:greed=0.5,random:greed=0.25"
mix="$mix,belief_raw:belief_raw=1,if:belief_raw=0.5,belief_raw:random=0.5"
gen out="$data/r1_cheap" games=8192 seed=21 shard_games=512 "$b0" mix="$mix"
# Round 2: 500,000 cheap games of every kind but the full player (too slow for so many), the
# raw network with uniform and with belief deals, 29% of them without any Mr. Greed.
mix="greed:greed=1.5,belief_raw:greed=2.5,raw:greed=1,if:greed=0.75,random:greed=0.25"
mix="$mix,belief_raw:belief_raw=1,raw:raw=0.25,if:belief_raw=0.5,belief_raw:random=0.25"
mix="$mix,if:raw=0.25,if:if=0.25"
gen out="$data/r2_cheap" games="${R2_GAMES:-500000}" seed=31 shard_games=1024 "$b0" mix="$mix"
all="$r0,$data/r1_cheap,$data/r1_full,$data/r2_cheap"
# The behaviour network (models/behaviour.md): every decision of the games, 256 wide.
fit learner=behaviour "inference.data=[$all]" run=behaviour inference.hidden=256 \
    inference.dropout=0.1 ${BEHAVIOUR_GAMES:+inference.max_games=$BEHAVIOUR_GAMES} \
    inference.out=models/behaviour.pt
python -m scrofazero.train.belief_report "data=[$all]" beliefs=models/belief.pt games=400 \
    iec_games=60 json=docs/figures/belief_report.json
