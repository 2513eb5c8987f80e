#!/usr/bin/env bash
# GPU host: every library notebook's `#| cuda` and `#| slow` cells (timings print the card); executed copies' outputs to $OUT.
set -uo pipefail
source tools/gpu/common.sh
python3 tools/run_nbs.py nbs/01_augment.ipynb nbs/02_encoder.ipynb nbs/04_cluster.ipynb nbs/05_attack.ipynb nbs/06_train.ipynb \
  nbs/08_robustness.ipynb nbs/09_baselines.ipynb nbs/07_linear_eval.ipynb nbs/10_analysis.ipynb ${EXTRA_NBS:-} --flags "slow cuda" --workers 1 --save /tmp/exec 2>&1 | tee "$OUT/nbs_cuda.log"
python3 tools/nb_outputs.py /tmp/exec > "$OUT/cuda_outputs.txt" 2>&1
