#!/usr/bin/env bash
# GPU machine: `swaro_bench` (seconds per training epoch, images/s, FLOPs, fraction of the matmul peak) for each method and
# batch size with the default engine (BN-folded attack replayed from a CUDA graph); records appended to $OUT/bench.json,
# in the format of results/bench.json (the bench notebook reads them). Per-phase profiles and real epochs: speed.sh.
# COMPILE=1 also times SwARo with torch.compile (compilation takes minutes: bounded by COMPILE_S seconds).
# Usage: bash tools/gpu/bench.sh          (METHODS=swaro BATCHES=512 bash tools/gpu/bench.sh)
set -uo pipefail
source tools/gpu/common.sh
timeout ${BENCH_S:-540} python3 -m swaro_nb.cli bench --methods ${METHODS:-swaro,rocl,simclr} --batches ${BATCHES:-512,256} --epochs 3 \
  --out "$OUT/bench.json" 2>&1 | tee "$OUT/bench.log"
if [ -n "${COMPILE:-}" ]; then
  timeout ${COMPILE_S:-400} python3 -m swaro_nb.cli bench --methods swaro --batches 512 --epochs 3 --compile --out "$OUT/bench_compile.json" 2>&1 | tee -a "$OUT/bench.log"
fi
