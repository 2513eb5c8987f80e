#!/usr/bin/env bash
# GPU machine: does one GPU give more images a second to two processes side by side than to one? (five-seed.md: a
# one-H200 lease that trains one run and evaluates another at the same time instead of one after the other.)
# Trains PRESET (with FLAGS, e.g. FLAGS="--rocl-term-forward shared" as the five-seed set's RoCL) on its 200-epoch
# schedule alone, then twice at once on the same GPU, each for at most N epochs (--max-epochs-this-call) and BOUND
# seconds, whichever ends first (the real run's first epochs: the same function); each run's metrics.jsonl ('seconds' an
# epoch) comes back under $OUT/coschedule/, with summary.txt: the mean from the 2nd epoch (the 1st holds compile and graph
# capture), for the pair over the epochs both finished.
# Usage (after the data and wheels are received): N=10 BOUND=110 PRESET=c10-200-rocl bash tools/gpu/coschedule.sh
N=${N:-10}; P=${PRESET:-c10-200-rocl}; T=${T:-/root/swaro/co}; B=${BOUND:-110}
OUT=${OUT:-/tmp/out}; source tools/gpu/common.sh; mkdir -p $T $OUT/coschedule
train_one() { rm -rf $T/$1   # a fresh run folder: an earlier call's checkpoint would resume and its metrics append
  timeout $B python3 -m swaro_nb.cli train --preset $P --name $1 --seed 0 --epochs 200 --max-epochs-this-call $N \
  ${FLAGS:-} --out-dir $T --progress false > $T/$1.log 2>&1; echo "$1 exit $? at $(date +%T)"; }
echo "alone from $(date +%T)"; train_one alone
echo "side by side from $(date +%T)"; train_one pair-a & train_one pair-b & wait
k=$(for r in pair-a pair-b; do wc -l < $T/$r/metrics.jsonl 2>/dev/null || echo 0; done | sort -n | head -1)
for r in alone pair-a pair-b; do cp $T/$r/metrics.jsonl $OUT/coschedule/$r.metrics.jsonl 2>/dev/null
  python3 - $T/$r/metrics.jsonl $r $([ $r = alone ] && echo 0 || echo $k) <<'PY'
import json, sys
try: m = [json.loads(l) for l in open(sys.argv[1])]
except OSError: print(sys.argv[2], 'no metrics'); sys.exit()
k = int(sys.argv[3]) or len(m)   # side by side: the epochs both runs finished (the later ones ran partly alone)
s = [e['seconds'] for e in m[1:k]]   # from the 2nd epoch: the 1st holds compile and graph capture
print(f"{sys.argv[2]}: {len(m)} epochs; s an epoch, epochs 2-{k}: {sum(s) / max(len(s), 1):.3f} (n {len(s)})")
PY
done | tee $OUT/coschedule/summary.txt
