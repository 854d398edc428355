#!/usr/bin/env bash
# The checks that need a GPU, as one prepared script (under 8 minutes on one modern GPU):
#   1. paper-network self-play games/s and learner samples/s (benchmarks/learner.py), beside
#      the 0.9 M and 4.1 M networks;
#   2. 80 batches (5,120 games) of the `paper` preset and its raw WPG on 256 standard deals x 2
#      (benchmarks/learning.py), beside the original's -106 at 5,120 games.
#
#   bash benchmarks/gpu.sh [OUT_DIR]       # on a GPU machine: figures in OUT_DIR (results/gpu)
#   TINY=1 bash benchmarks/gpu.sh OUT_DIR  # a tiny setting that runs anywhere (the test suite)
set -euo pipefail
cd "$(dirname "$0")/.."
OUT=${1:-results/gpu}
mkdir -p "$OUT"
PY=${PYTHON:-python}
if [ "${TINY:-0}" = "1" ]; then
    SIZES=tiny; GAMES=2; STEPS=3; PRESET=smoke; LEARN_GAMES=8; PER_BATCH=4; DEALS=1; WORKERS=1
else
    SIZES=small,medium,paper; GAMES=64; STEPS=200; PRESET=paper; LEARN_GAMES=5120
    PER_BATCH=64; DEALS=256; WORKERS=0
fi
"$PY" - <<'PYEOF'
import torch
print("device:", torch.cuda.get_device_name(0) if torch.cuda.is_available() else "cpu (no GPU)")
PYEOF
"$PY" benchmarks/learner.py --sizes "$SIZES" --games "$GAMES" --steps "$STEPS" \
    --json "$OUT/learner.json"
"$PY" benchmarks/learning.py --run gpu_"$PRESET" --preset "$PRESET" --games "$LEARN_GAMES" \
    --games-per-batch "$PER_BATCH" --deals "$DEALS" --workers "$WORKERS" \
    --checkpoint-dir "$OUT/checkpoints" --log-dir "$OUT/runs" \
    --json "$OUT/learning.json" --png "$OUT/learning.png" train.eval_every=0
echo "figures in $OUT (original at 5,120 games: raw WPG -106)"
