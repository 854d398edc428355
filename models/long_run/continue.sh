#!/usr/bin/env bash
# Continue the long run (docs/results.md, "Past the paper: the long run") from its committed
# state, on one core (train.threads=1), in checkpoints/long/ (or resume it there if that folder
# exists). The run was stopped at 450,560 games once its curve had levelled off (docs/results.md,
# "The shipped network and the end of the long run"); this script takes it on from there.
# It writes models/long_run/state.pt at every checkpoint (10 batches); commit that file and the
# curve (docs/figures/learning_long.*) before you stop.
#   bash models/long_run/continue.sh [extra train.py overrides ...]
set -euo pipefail
cd "$(dirname "$0")/../.."
# The run's phases by self-play games: the wide network with the original's finishing recipe,
# playout-cap randomisation, learning-rate decay, a doubled search, then the paper-sized network.
SCHEDULE='[{from_games:0,games_per_batch:128,replay_batches:1,passes:3,lr:5e-5,'
SCHEDULE+='hidden:[1024,512],num_blocks:4},{from_games:35840,playout_full:0.25},'
SCHEDULE+='{from_games:92160,lr:2e-5},{from_games:153600,lr:1e-5},'
SCHEDULE+='{from_games:276480,search_scale:2.0},'
SCHEDULE+='{from_games:368640,lr:2e-5,hidden:[2048,2048,512],num_blocks:10},'
SCHEDULE+='{from_games:389120,inference:bfloat16}]'
MILESTONES='[0,5120,10240,20480,30720,40960,51200,61440,71680,81920,92160,102400,122880,143360,'
MILESTONES+='153600,163840,174080,184320,194560,204800,225280,245760,266240,276480,286720,'
MILESTONES+='296960,307200,317440,327680,337920,348160,358400,368640,378880,389120,399360,'
MILESTONES+='409600,419840,430080,440320,450560,460800,471040,481280,491520,512000,532480,'
MILESTONES+='552960,573440]'
SETTINGS=(
  run=long train.threads=1 train.eval_every=0 train.max_batches=null
  "train.schedule=$SCHEDULE"
  train.state_file=models/long_run/state.pt train.state_moments=bfloat16
  train.state_weights=float16
  train.checkpoint_every=10
  "train.milestone_games=$MILESTONES"
  'train.milestone_minutes=[]'
)
if [ -f checkpoints/long/latest.pt ]; then
  exec python train.py "${SETTINGS[@]}" resume=true 'resume_overrides=[train.schedule]' "$@"
else
  exec python train.py "${SETTINGS[@]}" resume_from=models/long_run/state.pt \
    'resume_overrides=[train.schedule]' "$@"
fi
