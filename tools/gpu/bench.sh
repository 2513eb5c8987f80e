#!/usr/bin/env bash
# GPU host: engine benchmark (CUDA-graph attack, the default) for each method at batch 256 and 512; records to $OUT/bench.json.
# COMPILE=1 also times torch.compile'd models (untried so far: compile time comes out of the call's 10 minutes).
set -uo pipefail
source tools/gpu/common.sh
python3 -m swaro_nb.cli bench --methods ${METHODS:-swaro,rocl,simclr} --batches ${BATCHES:-512,256} --epochs 3 --out "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
if [ -n "${COMPILE:-}" ]; then
  timeout 400 python3 -m swaro_nb.cli bench --methods swaro --batches 512 --epochs 3 --compile --out "$OUT/bench_compile.json" 2>&1 | tee -a "$OUT/bench.log"
fi
