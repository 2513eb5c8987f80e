#!/usr/bin/env bash
# GPU machine: does one GPU give more images a second to two processes side by side than to one? (five-seed.md: a
# one-H200 lease that trains one run and evaluates another at the same time instead of one after the other.)
# Trains the first N epochs of PRESET's 200-epoch schedule (--max-epochs-this-call N: the real run's epochs, the same
# function) alone, then twice at once on the same GPU; each run's metrics.jsonl ('seconds' an epoch) comes back under
# $OUT/coschedule/. Usage: N=10 PRESET=c10-200-rocl bash tools/gpu/coschedule.sh  (after the data and wheels are received)
N=${N:-10}; P=${PRESET:-c10-200-rocl}; T=${T:-/root/swaro/co}; B=${BOUND:-110}
OUT=${OUT:-/tmp/out}; source tools/gpu/common.sh; mkdir -p $T $OUT/coschedule
tr() { timeout $B python3 -m swaro_nb.cli train --preset $P --name $1 --seed 0 --epochs 200 --max-epochs-this-call $N \
  --out-dir $T --progress false > $T/$1.log 2>&1; echo "$1 exit $? at $(date +%T)"; }
echo "alone from $(date +%T)"; tr alone
echo "side by side from $(date +%T)"; tr pair-a & tr pair-b & wait
for r in alone pair-a pair-b; do cp $T/$r/metrics.jsonl $OUT/coschedule/$r.metrics.jsonl 2>/dev/null
  python3 - $T/$r/metrics.jsonl $r <<'PY'
import json, sys
try: m = [json.loads(l) for l in open(sys.argv[1])]
except OSError: print(sys.argv[2], 'no metrics'); sys.exit()
s = [e['seconds'] for e in m[2:]]   # from the third epoch: compile and graph capture done
print(f"{sys.argv[2]}: {len(m)} epochs; s an epoch from the 3rd: {sum(s) / max(len(s), 1):.3f} (n {len(s)})")
PY
done | tee $OUT/coschedule/summary.txt
