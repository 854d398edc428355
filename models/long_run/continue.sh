#!/usr/bin/env bash
# The long run of issue 23 ended at 450,560 games, its curve levelled off (docs/results.md, "The
# shipped network and the end of the long run"); this script would continue it. Continue the long
# run (docs/results.md, "Past the paper: the long run") from its
# committed state, on one core (train.threads=1), in checkpoints/long/ (or resume it there if that folder exists).
# It writes models/long_run/state.pt at every checkpoint (10 batches); commit that file and the
# curve (docs/figures/learning_long.*) before you stop.
#   bash models/long_run/continue.sh [extra train.py overrides ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
SETTINGS=(
  run=long train.threads=1 train.eval_every=0
  'train.schedule=[{from_games:0,games_per_batch:128,replay_batches:1,passes:3,lr:5e-5,hidden:[1024,512],num_blocks:4},{from_games:35840,playout_full:0.25},{from_games:92160,lr:2e-5},{from_games:153600,lr:1e-5},{from_games:276480,search_scale:2.0},{from_games:368640,lr:2e-5,hidden:[2048,2048,512],num_blocks:10},{from_games:389120,inference:bfloat16}]'
  train.state_file=models/long_run/state.pt train.state_moments=bfloat16 train.state_weights=float16
  train.checkpoint_every=10
  'train.milestone_games=[0,5120,10240,20480,30720,40960,51200,61440,71680,81920,92160,102400,122880,143360,153600,163840,174080,184320,194560,204800,225280,245760,266240,276480,286720,296960,307200,317440,327680,337920,348160,358400,368640,378880,389120,399360,409600,419840,430080,440320,450560,460800,471040,481280,491520,512000,532480,552960,573440]'
  'train.milestone_minutes=[]'
)
if [ -f checkpoints/long/latest.pt ]; then
  exec python train.py "${SETTINGS[@]}" resume=true 'resume_overrides=[train.schedule]' "$@"
else
  exec python train.py "${SETTINGS[@]}" resume_from=models/long_run/state.pt \
    'resume_overrides=[train.schedule]' "$@"
fi
