#!/usr/bin/env bash
# The checks that need a GPU, as one prepared script that fits in 9.5 minutes on one H100 with 16
# cores (each step's budget in brackets; gpu_timing.json records what each took). Every figure
# goes to JSON under OUT_DIR with the device's name (docs/gpu.md says what each one measures):
#   1. learner.json: self-play games/s beside learner samples/s for the default (0.9 M) and the
#      paper network (benchmarks/learner.py) [45 s];
#   2. gpu_selfplay.json: self-play games/s at lockstep widths 64..4096 of the same two
#      networks, this process's lockstep beside train.actors=auto (one actor per core and one
#      inference server), with the GPU's utilisation during each batch
#      (benchmarks/actors.py) [150 s];
#   3. gpu_learner.json: learner samples/s for train.learner_precision=float32|tf32|bf16 at
#      minibatch 64 and 1024 [30 s];
#   4. gpu_profile.json: where the single process's self-play time goes (network, host-device
#      copies, encoding, tree and engine) at widths 256 and 4096 [30 s];
#   5. gpu_training.json (with learning.json, learning.png): the default preset trained from
#      scratch with train.actors=auto for TRAIN_MINUTES (2.5) minutes of training time, then
#      the raw WPG of its first and last network on 256 standard deals x 2
#      (benchmarks/learning.py --measure-only), the GPU's utilisation during training [240 s];
#   6. gpu_inference.json: the inference issue's work on this machine: recorded hidden-hand
#      games/s of round 2's mix (models/belief_run/make.sh) with one worker per core, and the
#      behaviour network's fit (256 wide, models/behaviour.md) in samples/s on the GPU for
#      FIT_MINUTES (0.5) minutes [75 s].
#
#   bash benchmarks/gpu.sh [OUT_DIR]       # on a GPU machine: figures in OUT_DIR (results/gpu)
#   TINY=1 bash benchmarks/gpu.sh OUT_DIR  # a tiny setting that runs anywhere (the test suite)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/gpu}
mkdir -p "$OUT"
PY=${PYTHON:-python}
TRAIN_MINUTES=${TRAIN_MINUTES:-2.5}
RUN=gpu_default
if [ "${TINY:-0}" = "1" ]; then
    SIZES=tiny; GAMES=2; STEPS=3; PRESET=smoke; PER_BATCH=4; DEALS=1; WORKERS=1
    ACTORS=2; LIMIT=train.max_batches=2; TINY_FLAG=--tiny; NETWORKS=tiny
    WIDTHS=4,8; PROFILE=4; LEARNER_STEPS=3
    GEN_GAMES=4; GEN_SHARD=2; GEN_WORKERS=2; FIT_GAMES=inference.max_games=40; FIT_MINUTES=0.02
else
    SIZES=small,paper; GAMES=64; STEPS=100; PRESET=cpu; PER_BATCH=64; DEALS=256; WORKERS=0
    ACTORS=auto; LIMIT=train.max_minutes=$TRAIN_MINUTES; TINY_FLAG=; NETWORKS=small,paper
    WIDTHS=64,256,1024,4096; PROFILE=256,4096; LEARNER_STEPS=100
    GEN_GAMES=${GEN_GAMES:-1024}; GEN_SHARD=64; GEN_WORKERS=$(nproc); FIT_GAMES=
    FIT_MINUTES=${FIT_MINUTES:-0.5}
fi
TIMES=()
timed() {  # timed NAME COMMAND...: run it, keep its wall seconds for gpu_timing.json
    local name=$1 start=$SECONDS
    shift
    "$@"
    TIMES+=("\"$name\": $((SECONDS - start))")
}
train_for_a_while() {
    rm -rf "${OUT:?}/checkpoints/$RUN" "${OUT:?}/runs/$RUN"  # from scratch, every time
    local samples="$OUT/utilisation_training.csv" sampler=
    : >"$samples"
    if command -v nvidia-smi >/dev/null 2>&1; then  # the GPU's utilisation every 500 ms
        nvidia-smi --query-gpu=utilization.gpu --format=csv,noheader,nounits -lms 500 \
            >"$samples" &
        sampler=$!
    fi
    "$PY" train.py experiment="$PRESET" run="$RUN" checkpoint_dir="$OUT/checkpoints" \
        log_dir="$OUT/runs" train.actors="$ACTORS" train.eval_every=0 "$LIMIT" progress=false
    if [ -n "$sampler" ]; then
        kill "$sampler" 2>/dev/null || true
        wait "$sampler" 2>/dev/null || true
    fi
    # The last network as learning.py's copy at its game count (games_<N>.pt), then its WPG.
    REACHED=$("$PY" - "$OUT/checkpoints/$RUN" <<'PYEOF'
import sys
from pathlib import Path
from scrofazero.atomic import copy_atomic
from scrofazero.nn.checkpoint import load_checkpoint
run = Path(sys.argv[1])
games = int(load_checkpoint(run / "latest.pt")["extra"]["games"])
copy_atomic(run / "latest.pt", run / f"games_{games}.pt")
print(games)
PYEOF
)
    "$PY" benchmarks/learning.py --measure-only --run "$RUN" --preset "$PRESET" \
        --games "$REACHED" --games-per-batch "$PER_BATCH" --deals "$DEALS" \
        --workers "$WORKERS" --checkpoint-dir "$OUT/checkpoints" --log-dir "$OUT/runs" \
        --json "$OUT/learning.json" --png "$OUT/learning.png"
}

inference_work() {
    rm -rf "${OUT:?}/games" "${OUT:?}/checkpoints/gpu_behaviour"
    local mix="greed:greed=1.5,belief_raw:greed=2.5,raw:greed=1,if:greed=0.75,random:greed=0.25"
    mix="$mix,belief_raw:belief_raw=1,raw:raw=0.25,if:belief_raw=0.5,belief_raw:random=0.25"
    mix="$mix,if:raw=0.25,if:if=0.25"
    local start=$SECONDS
    "$PY" -m scrofazero.train.hidden_games out="$OUT/games" games="$GEN_GAMES" seed=99 \
        shard_games="$GEN_SHARD" workers="$GEN_WORKERS" mix="$mix"
    local gen_seconds=$((SECONDS - start)) fit_device=cpu
    if "$PY" -c "import sys, torch; sys.exit(not torch.cuda.is_available())"; then
        fit_device=cuda
    fi
    "$PY" train.py learner=behaviour "inference.data=[models/belief_run/data/r0_cheap]" \
        inference.hidden=256 inference.dropout=0.1 inference.device="$fit_device" \
        inference.max_minutes="$FIT_MINUTES" $FIT_GAMES run=gpu_behaviour \
        checkpoint_dir="$OUT/checkpoints" log_dir="$OUT/runs" progress=false
    "$PY" - "$OUT" "$GEN_GAMES" "$gen_seconds" "$GEN_WORKERS" "$fit_device" <<'PYEOF'
import sys
from pathlib import Path
import torch
from scrofazero.atomic import write_json_atomic
out, games, seconds, workers, device = Path(sys.argv[1]), *map(int, sys.argv[2:5]), sys.argv[5]
meta = torch.load(out / "checkpoints/gpu_behaviour/behaviour.pt", weights_only=False)["meta"]
rate = games / max(seconds, 1)
result = {"generation": {"games": games, "seconds": seconds, "workers": workers,
                         "games_per_s": rate, "hours_for_500000": 500000 / rate / 3600},
          "behaviour_fit": {"device": device, "steps": meta["steps"], "batch": meta["batch"],
                            "minutes": meta["minutes"],
                            "samples_per_s": meta["steps"] * meta["batch"]
                            / max(meta["minutes"] * 60, 1e-9)}}
print(f"wrote {write_json_atomic(out / 'gpu_inference.json', result)}")
PYEOF
}

DEVICE=$("$PY" -c "import torch; print(torch.cuda.get_device_name(0)
if torch.cuda.is_available() else 'cpu (no GPU)')")
echo "device: $DEVICE"
timed learner "$PY" benchmarks/learner.py --sizes "$SIZES" --games "$GAMES" --steps "$STEPS" \
    --json "$OUT/learner.json"
timed selfplay "$PY" benchmarks/actors.py $TINY_FLAG --networks "$NETWORKS" --widths "$WIDTHS" \
    --actors "$ACTORS" --json "$OUT/gpu_selfplay.json"
timed learner_precision "$PY" benchmarks/actors.py $TINY_FLAG --networks "$NETWORKS" \
    --widths "" --learner float32,tf32,bf16 --learner-steps "$LEARNER_STEPS" \
    --json "$OUT/gpu_learner.json"
timed profile "$PY" benchmarks/actors.py $TINY_FLAG --networks "$NETWORKS" --widths "" \
    --profile "$PROFILE" --json "$OUT/gpu_profile.json"
timed training train_for_a_while
timed inference inference_work
"$PY" - "$OUT" "$DEVICE" "$PRESET" "$ACTORS" "$LIMIT" <<'PYEOF'
import json, sys
from pathlib import Path
from scrofazero.atomic import write_json_atomic
out, device, preset, actors, limit = Path(sys.argv[1]), *sys.argv[2:]
learning = json.loads((out / "learning.json").read_text())
samples = [float(x) for x in (out / "utilisation_training.csv").read_text().split() if x]
result = {"device": device, "preset": preset, "train.actors": actors, "limit": limit,
          "games": learning["games"], "minutes": learning["minutes"], "wpg": learning["wpg"],
          "stderr": learning["stderr"], "deals": learning["deals"],
          "games_per_minute": learning["games"][-1] / max(learning["minutes"][-1], 1e-9),
          "gpu_utilisation_mean": sum(samples) / len(samples) if samples else None}
print(f"wrote {write_json_atomic(out / 'gpu_training.json', result)}")
PYEOF
(IFS=,; printf '{"device": "%s", "seconds": {%s}}\n' "$DEVICE" "${TIMES[*]}") \
    >"$OUT/gpu_timing.json"
echo "figures in $OUT ($(cat "$OUT/gpu_timing.json"))"
