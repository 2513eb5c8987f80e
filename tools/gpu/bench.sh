#!/usr/bin/env bash
# GPU host: engine benchmark (CUDA-graph attack, the default) for each method at batch 256 and 512; records to $OUT/bench.json.
set -uo pipefail
source tools/gpu/common.sh
python3 -m swaro_nb.cli bench --methods ${METHODS:-swaro,rocl,simclr} --batches ${BATCHES:-512,256} --epochs 3 --out "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
