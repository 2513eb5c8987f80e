#!/usr/bin/env bash
# GPU host: the components' `#| cuda` and `#| slow` cells, then the engine benchmark (eager; BN folding on and off).
set -uo pipefail
source tools/gpu/common.sh
python3 tools/run_nbs.py nbs/01_augment.ipynb nbs/02_encoder.ipynb nbs/04_cluster.ipynb nbs/05_attack.ipynb nbs/06_train.ipynb --flags "slow cuda" --workers 1 --save /tmp/exec 2>&1 | tee "$OUT/nbs_cuda.log"
python3 tools/nb_outputs.py /tmp/exec > "$OUT/cuda_outputs.txt" 2>&1
python3 -m swaro_nb.cli bench --methods simclr,rocl,swaro --batches 256,512 --epochs 3 --out "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
python3 -m swaro_nb.cli bench --methods swaro --batches 512 --epochs 3 --out "$OUT/bench_nofold.json" --no-fold 2>&1 | tee -a "$OUT/bench.log"
