#!/usr/bin/env bash
# GPU host, one call: SwARo and RoCL side by side for EPOCHS epochs (same seed and settings), then a bounded evaluation
# (LE, rLE, white-box PGD, Table 3, black-box between the two, t-SNE), everything packed into $OUT/records.tar.
# Every stage has a time limit so the pack always happens. Usage: EPOCHS=15 bash tools/gpu/short_compare.sh
set -uo pipefail
source tools/gpu/common.sh
E=${EPOCHS:-15}; B=${BATCH:-512}; W=$(( E / 20 > 0 ? E / 20 : 1 )); R=/root/swaro/runs; mkdir -p /root/swaro/eval /root/swaro/pack
common="--preset c10-200 --epochs $E --attack-warmup-epochs $W --batch-size $B --monitor-every 5 --ckpt-every 5 --out-dir $R --progress false"
timeout ${TRAIN_S:-270} python3 -m swaro_nb.cli train --name swaro-c10-e$E $common > /root/swaro/pack/train_swaro.log 2>&1 &
timeout ${TRAIN_S:-270} python3 -m swaro_nb.cli train --name rocl-c10-e$E --method rocl $common > /root/swaro/pack/train_rocl.log 2>&1 &
wait
timeout ${EVAL_S:-200} python3 -m swaro_nb.cli eval $R/swaro-c10-e$E $R/rocl-c10-e$E --le-epochs ${LE:-30} --rle-epochs ${RLE:-1} \
  --n-test ${NTEST:-1000} --table3 --black-box --tsne --out /root/swaro/eval --no-progress > /root/swaro/pack/eval.log 2>&1
echo "eval exit $?"
for r in swaro rocl; do d=$R/$r-c10-e$E; mkdir -p /root/swaro/pack/$r-c10-e$E; cp $d/{run.json,metrics.jsonl,curves.png,config.json} /root/swaro/pack/$r-c10-e$E/ 2>/dev/null; done
cp -r /root/swaro/eval /root/swaro/pack/; tar -cf $OUT/records.tar -C /root/swaro pack; ls -la $OUT; tail -4 /root/swaro/pack/eval.log
