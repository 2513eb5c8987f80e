#!/usr/bin/env bash
# GPU machine, one command: every baseline trained EPOCHS epochs on CIFAR-10 with its own preset (swaro_nb.baselines.BASELINE_PRESETS via
# --method), then a bounded evaluation of each (LE LE epochs, rLE RLE epochs, NTEST test images); records, eval JSON and
# logs packed into $OUT/records.tar. Run it before a long job: some failures show only on a GPU under bf16 autocast.
# Usage: EPOCHS=3 bash tools/gpu/baselines.sh      (CPU dry run: SMOKE=1 RUNS=/tmp/bl OUT=/tmp/blout bash tools/gpu/baselines.sh)
set -uo pipefail
if [ -z "${SMOKE:-}" ]; then source tools/gpu/common.sh; fi
export OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
E=${EPOCHS:-3}; R=${RUNS:-/root/swaro/runs}; P=${PACK:-/root/swaro/pack-baselines}; mkdir -p $P
size=(--batch-size ${BATCH:-512}); evalsize=(--le-epochs ${LE:-30} --rle-epochs ${RLE:-1} --n-test ${NTEST:-1000})
if [ -n "${SMOKE:-}" ]; then size=(--preset smoke --subset-per-class 10 --batch-size 50 --width 8 --monitor-bank 100 --monitor-test 50); evalsize=(--smoke --n-test 16 --train-per-class 10); fi
for m in ${METHODS:-acl swav scl ce at trades}; do
  timeout ${TRAIN_S:-120} python3 -m swaro_nb.cli train --name $m-c10-e$E --method $m --epochs $E "${size[@]}" --monitor-every $E \
    --ckpt-every $E --out-dir $R --progress false > $P/train_$m.log 2>&1; echo "$m train exit $?"
  mkdir -p $P/$m-c10-e$E; cp $R/$m-c10-e$E/{run.json,metrics.jsonl,curves.png,config.json} $P/$m-c10-e$E/ 2>/dev/null
done
runs=$(for m in ${METHODS:-acl swav scl ce at trades}; do [ -f $R/$m-c10-e$E/checkpoint.pt ] && echo $R/$m-c10-e$E; done)
timeout ${EVAL_S:-240} python3 -m swaro_nb.cli eval $runs "${evalsize[@]}" --out $P/eval --no-progress > $P/eval.log 2>&1; echo "eval exit $?"
tar -cf $OUT/records.tar -C $(dirname $P) $(basename $P); ls -la $OUT; tail -3 $P/eval.log
