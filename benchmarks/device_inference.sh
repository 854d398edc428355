#!/usr/bin/env bash
# The 1024-deal inference rows of docs/results.md on a machine with many cores (the device
# machine: 16), every row `evaluate.py --wpg` with the same seed, so they pair with each other
# and with the repository's stored 1024-deal results of the default player.
#
#   bash benchmarks/device_inference.sh OUT_DIR [BELIEFS]
#
# Rows run in order of value and are skipped once less than NEED seconds of BUDGET are left;
# every row's JSON (in ROWS_DIR, default OUT_DIR/rows) is merged into
# OUT_DIR/inference_rows.json (a device run brings back few files). WORKERS (default: the
# cores), DEALS (1024), ROBUST_DEALS (128), BUDGET and NEED (seconds), PYTHON (python3).
set -u
out=${1:?usage: device_inference.sh OUT_DIR [BELIEFS]}
beliefs=${2:-models/belief.pt}
py=${PYTHON:-python3}
workers=${WORKERS:-$(nproc)}
deals=${DEALS:-1024}
budget=${BUDGET:-540}
need=${NEED:-60}
start=$(date +%s)
rows=${ROWS_DIR:-$out/rows}  # per-row JSON; the merged file is written to OUT_DIR
mkdir -p "$rows" "$out"
row() {
    local name=$1; shift
    local left=$(( budget - ($(date +%s) - start) ))
    if [ "$left" -lt "$need" ]; then echo "skip $name ($left s left)"; return; fi
    local t0=$(date +%s)
    timeout "$left" "$py" evaluate.py --wpg deals="${DEALS:-$deals}" workers="$workers" seed=0 \
        progress=false checkpoint=models/scrofazero.pt out="$rows/$name.json" "$@" 2>&1 | tail -1
    echo "$name: $(( $(date +%s) - t0 )) s"
}
no_iec=scrofazero.weighting.enabled=false
belief="scrofazero.sampling.method=belief scrofazero.sampling.num_deals=18"
belief="$belief scrofazero.sampling.beliefs=$beliefs"
row full_belief $belief $no_iec
row full_uniform scrofazero.sampling.method=uniform scrofazero.sampling.num_deals=18 $no_iec
row raw_belief player=raw raw.sampling.method=belief raw.sampling.beliefs="$beliefs"
# Robustness: the stratified player with IEC (the default before the belief network) and the
# belief player against other opponents than Mr. Greed, so that a gain over Greed alone does not
# pass for a general one.
for opp in if random raw; do
    DEALS=${ROBUST_DEALS:-128} row "robust_${opp}_default" opponent=$opp \
        scrofazero.sampling.method=stratified scrofazero.weighting.enabled=true raw.sampling.method=uniform
    DEALS=${ROBUST_DEALS:-128} row "robust_${opp}_belief" opponent=$opp $belief $no_iec \
        raw.sampling.method=uniform
done
row full_oracle_important scrofazero.sampling.method=oracle_important \
    scrofazero.sampling.num_deals=18 $no_iec
row full_belief_stratified scrofazero.sampling.method=belief_stratified \
    scrofazero.sampling.beliefs="$beliefs" $no_iec
row full_belief_iec $belief scrofazero.weighting.enabled=true
"$py" - "$out" "$rows" <<'PY'
import json, sys
from pathlib import Path
out = Path(sys.argv[1])
rows = {p.stem: json.loads(p.read_text()) for p in sorted(Path(sys.argv[2]).glob("*.json"))}
(out / "inference_rows.json").write_text(json.dumps(rows, indent=1))
for name, r in rows.items():
    se = r['stderr'] if r['stderr'] is not None else float('nan')
    print(f"{name:>22} WPG {r['wpg']:+7.1f} ({se:.1f}) {r['seconds_per_game']:.2f} s/game")
PY
