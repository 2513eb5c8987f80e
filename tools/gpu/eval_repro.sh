#!/usr/bin/env bash
# GPU host: evaluate the equal-budget runs (tools/gpu/repro.sh) as they finish; pack records, eval JSON and plots into $OUT/records.tar,
# and the SwARo/RoCL encoders as fp16 halves. Every stage is bounded by DEADLINE so the pack always happens (an unbounded
# evaluation once outlived the lease and lost an 80-epoch run). Usage: EPOCHS=80 DEADLINE=480 NTEST=2000 bash tools/gpu/eval_repro.sh
set -uo pipefail
source tools/gpu/common.sh
E=${EPOCHS:-80}; R=/root/swaro/runs; T0=$(date +%s); DL=${DEADLINE:-480}
left() { echo $(( DL - ($(date +%s) - T0) )); }
while [ ! -f $R/swaro-c10-e$E/run.json ] && [ $(left) -gt 60 ]; do sleep 5; done
mkdir -p /root/swaro/eval
timeout $(( $(left) - 90 )) python3 -m swaro_nb.cli eval $R/swaro-c10-e$E $R/rocl-c10-e$E --le-epochs 150 --rle-epochs ${RLE:-10} \
  --n-test ${NTEST:-2000} --table3 --black-box --tsne --out /root/swaro/eval --no-progress > /root/swaro/eval/eval_main.log 2>&1 &
EV=$!
while [ ! -f $R/simclr-c10-e$E/run.json ] && [ $(left) -gt 60 ]; do sleep 5; done
wait $EV
if [ -f $R/simclr-c10-e$E/run.json ] && [ $(left) -gt 100 ]; then
  timeout $(( $(left) - 40 )) python3 -m swaro_nb.cli eval $R/simclr-c10-e$E --le-epochs 150 --no-rle --out /root/swaro/eval --no-progress > /root/swaro/eval/eval_simclr.log 2>&1
fi
mkdir -p /root/swaro/pack
for r in swaro rocl simclr; do d=$R/$r-c10-e$E; [ -d $d ] && mkdir -p /root/swaro/pack/$r-c10-e$E && cp $d/{run.json,metrics.jsonl,curves.png,config.json} /root/swaro/pack/$r-c10-e$E/ 2>/dev/null; done
cp -r /root/swaro/eval /root/swaro/pack/ ; cp /root/swaro/logs/*.log /root/swaro/pack/ 2>/dev/null
tar -cf $OUT/records.tar -C /root/swaro pack
python3 - <<PY
import torch
for r in ('swaro', 'rocl'):
    p = '/root/swaro/runs/%s-c10-e$E/checkpoint.pt' % r
    try: sd = torch.load(p, map_location='cpu', weights_only=False)['model']
    except Exception as e: print(r, e); continue
    enc = {k: v.half() for k, v in sd.items() if k.startswith('encoder.')}
    ks = list(enc); h = len(ks) // 2
    torch.save({k: enc[k] for k in ks[:h]}, '$OUT/%s-enc-a.pt' % r); torch.save({k: enc[k] for k in ks[h:]}, '$OUT/%s-enc-b.pt' % r)
PY
ls -la $OUT; tail -5 /root/swaro/eval/eval_main.log
