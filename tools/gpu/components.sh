#!/usr/bin/env bash
# GPU machine: every library notebook (nbs/*.ipynb) with its `#| slow` and `#| cuda` cells, one notebook at a time.
# The cuda cells save their measurements as records in $OUT/components/<name>.json (swaro_nb.core.save_record, through
# SWARO_RECORD_DIR); copy them to results/components/ and the notebooks show them (swaro_nb.core.show_record).
# Also in $OUT: nbs_cuda.log (pass/fail per notebook, `notebooks: N passed, N failed`) and cuda_outputs.txt (the printed
# output of every cuda/slow cell). Executed notebooks go to $EXEC (default /tmp/exec).
# Usage: bash tools/gpu/components.sh            (one notebook: NBS="nbs/05_attack.ipynb" bash tools/gpu/components.sh)
set -uo pipefail
source tools/gpu/common.sh
export SWARO_RECORD_DIR=$OUT/components; mkdir -p "$SWARO_RECORD_DIR"
EXEC=${EXEC:-/tmp/exec}
python3 tools/run_nbs.py ${NBS:-nbs/*.ipynb} --flags "slow cuda" --workers 1 --save "$EXEC" 2>&1 | tee "$OUT/nbs_cuda.log"
python3 tools/nb_outputs.py "$EXEC" > "$OUT/cuda_outputs.txt" 2>&1
ls -la "$SWARO_RECORD_DIR"
