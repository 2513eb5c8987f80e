#!/usr/bin/env bash
# GPU host: wait (at most WAIT seconds) for tools/gpu/session4.sh to finish, print its progress, and copy its pack to $OUT once
# DONE (pack.tar, plus the components' printed measurements and the event log as plain files for a quick look).
S=${S:-/root/swaro/session}; R=${RUNS:-/root/swaro/runs}; W=${WAIT:-540}; OUT=${OUT:-/tmp/out}; t0=$(date +%s)
while [ ! -f $S/DONE ] && [ $(( $(date +%s) - t0 )) -lt $W ]; do sleep 5; done
echo "== events"; cat $S/events.log 2>/dev/null
echo "== runs"
for f in $R/*/metrics.jsonl; do [ -f "$f" ] && echo "$(basename $(dirname $f)): $(wc -l < $f) epochs; last: $(tail -1 $f | cut -c1-160)"; done
nvidia-smi --query-gpu=index,utilization.gpu,memory.used --format=csv,noheader 2>/dev/null
if [ -f $S/DONE ]; then cp $S/pack.tar $S/events.log $OUT/ 2>/dev/null; cp $S/comp/cuda_outputs.txt $OUT/ 2>/dev/null; ls -la $OUT; echo "DONE"
else echo "not done yet ($(( $(date +%s) - t0 )) s waited)"; tail -3 $S/session.log 2>/dev/null; fi
