#!/usr/bin/env bash
# GPU host: the equal-budget CIFAR-10 comparison (SwARo vs RoCL, then SimCLR), same seed and settings; SwARo and RoCL run side by
# side on the one GPU (the step loop is partly host-bound, so two processes use the card better). Checkpoints in /root/swaro/runs.
# Usage: EPOCHS=60 BATCH=256 bash tools/gpu/repro.sh   (resumable: rerun continues each run from its checkpoint)
set -uo pipefail
source tools/gpu/common.sh
E=${EPOCHS:-60}; B=${BATCH:-256}; W=$(( E / 20 > 0 ? E / 20 : 1 ))   # attack warm-up: the paper's 5% of the epochs
common="--preset c10-200 --epochs $E --attack-warmup-epochs $W --batch-size $B --monitor-every 5 --ckpt-every 5 --out-dir /root/swaro/runs --progress false"
python3 -m swaro_nb.cli train --name swaro-c10-e$E $common > "$OUT/train_swaro.log" 2>&1 &
python3 -m swaro_nb.cli train --name rocl-c10-e$E --method rocl $common > "$OUT/train_rocl.log" 2>&1 &
wait
python3 -m swaro_nb.cli train --name simclr-c10-e$E --method simclr $common > "$OUT/train_simclr.log" 2>&1
for r in swaro rocl simclr; do tail -2 "$OUT/train_$r.log"; done
