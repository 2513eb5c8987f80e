#!/usr/bin/env bash
# GPU machine: tools/gpu/compile_check.py -- eager against compiled training (EPOCHS each, from the same seeds, one run per
# GPU over every visible GPU), each run evaluated; its record goes to $OUT/checks/compile-<card>-<commit>.json with the
# printed table beside it and the runs' logs in $OUT/checks/<same name>-logs/ (copy the JSON to results/checks/).
# Settings: EPOCHS (30), SEEDS (0,1), GPUS (default: all visible), DEADLINE (1500 s: no work starts that cannot end by
# then, the record is written by then), EVAL_ARGS (default: the script's), TRAIN_ARGS, RUNS (/root/swaro/runs/compile_check),
# PRESET (default c10-200), VARIANTS (default eager,compiled; e.g. PRESET=c10-200-rocl VARIANTS=compiled,rocl-shared),
# EVAL_RESERVE (seconds kept for a run's evaluation when its training starts; default the script's).
# Long: launch it detached from a copy of the checkout (tools/gpu/README.md, section 3):
#   cp -r . /root/swaro/code && cd /root/swaro/code && setsid nohup bash tools/gpu/compile_check.sh > /root/swaro/cc.log 2>&1 < /dev/null &
# CPU dry run with tiny settings: SMOKE=1 OUT=/tmp/ccout RUNS=/tmp/ccruns EPOCHS=1 SEEDS=0 TRAIN_ARGS='--subset-per-class 20' bash tools/gpu/compile_check.sh
set -uo pipefail
if [ -z "${SMOKE:-}" ]; then
  source tools/gpu/common.sh
  card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE 'h100|h200|a100|v100|l40s|b200' | head -1 | tr 'A-Z' 'a-z')
else
  export OUT=${OUT:-/tmp/out} PYTHONUNBUFFERED=1 MPLBACKEND=Agg; mkdir -p "$OUT"; card=cpu
fi
name=compile-${card:-gpu}-${SWARO_COMMIT:-$(git rev-parse --short HEAD 2>/dev/null || echo unknown)}
R=${RUNS:-/root/swaro/runs/compile_check}; DL=${DEADLINE:-1500}
mkdir -p "$OUT/checks" "$R"
args=(--epochs "${EPOCHS:-30}" --seeds "${SEEDS:-0,1}" --deadline-s "$DL" --out "$OUT/checks/$name.json" --runs-dir "$R")
[ -n "${SMOKE:-}" ] && args+=(--smoke)
[ -n "${GPUS:-}" ] && args+=(--gpus "$GPUS")
[ -n "${PRESET:-}" ] && args+=(--preset "$PRESET")
[ -n "${VARIANTS:-}" ] && args+=(--variants "$VARIANTS")
[ -n "${EVAL_RESERVE:-}" ] && args+=(--eval-reserve-s "$EVAL_RESERVE")
[ -n "${EVAL_ARGS:-}" ] && args+=(--eval-args "$EVAL_ARGS")
[ -n "${TRAIN_ARGS:-}" ] && args+=(--train-args "$TRAIN_ARGS")
PY=${PYTHON:-python3}; [ -x .venv/bin/python ] && [ -n "${SMOKE:-}" ] && PY=.venv/bin/python
timeout $(( ${DL%.*} + 90 )) $PY tools/gpu/compile_check.py "${args[@]}" 2>&1 | tee "$OUT/checks/$name.log"
rc=${PIPESTATUS[0]}
cp -r "$R/logs" "$OUT/checks/$name-logs" 2>/dev/null
echo "compile_check exit $rc"; ls -la "$OUT/checks"
