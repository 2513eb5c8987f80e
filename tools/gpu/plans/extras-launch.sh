#!/usr/bin/env bash
# On the GPU machine: the reference AutoAttack at one column (tools/gpu/ref_extras.py) on the LE heads of committed
# five-seed models, one run after the other on GPU 0, at the pinned eval commit, as one detached job bounded by TL seconds.
# A short lease's work (plans/extras.md): staged by extras-stage.sh, run from the call's checkout (the repo root):
#   for r in .gpu/*/receive.sh; do sh $r; done; TL=600 COLUMN=l1_12 RUNS="c10-200-rand-s4" bash tools/gpu/plans/extras-launch.sh
#   W=280 bash tools/gpu/plans/extras-launch.sh --poll     # waits up to W s for DONE, prints the events, packs $OUT/pack.tar
# The pack is `land_five_seed.py land PACK --pins tools/gpu/plans/five-seed-pins.json`'s layout (side/extras-<column>/,
# events.log, logs/). XROOT (default /root/swaro) holds code/ (the pinned copy), weights/ and data/; PY the interpreter.
set -u
SELF=$(realpath "$0"); X=${XROOT:-/root/swaro}; S=$X/x; PY=${PY:-python3}
log() { echo "$(date -u +%T) $*" >> $S/events.log; }
if [ "${1:-}" = --poll ]; then
  for _ in $(seq 1 $(( ${W:-280} / 5 ))); do [ -f $S/DONE ] && break; sleep 5; done
  cat $S/events.log 2>/dev/null; tail -n 2 $S/logs/*.log 2>/dev/null
  (cd $S && tar -cf ${OUT:?set OUT}/pack.tar side events.log logs)   # what is finished so far, in the pack's layout
  [ -f $S/DONE ] && echo DONE; exit 0
fi
if [ "${1:-}" = --job ]; then   # the detached job: each run under what is left of TL, its exit status in the events
  T0=$(date +%s)
  for n in $RUNS; do
    left=$(( TL - ($(date +%s) - T0) ))
    if [ $left -le ${MIN_LEFT:-60} ]; then log "$n: not started ($left s left)"; continue; fi
    log "$n: reference extras $COLUMN (ref_extras.py --columns $COLUMN --shards 4, eval pin $SWARO_COMMIT, time limit $left s)"
    CUDA_VISIBLE_DEVICES=0 timeout $left $PY tools/gpu/ref_extras.py $n --runs $S/runs --heads $X/weights \
      --records results/eval/five-seed --out $S/side/extras-$COLUMN --columns $COLUMN --shards 4 ${SMOKE:+--smoke} \
      > $S/logs/side-extras-$n-$COLUMN.log 2>&1
    rc=$?   # before any other command: `$(...)` in the log line would reset it
    case $rc in 0) why=done;; 124) why="stopped by its time limit";; *) why=failed;; esac
    log "$n: exit $rc, $why ($(tail -n 1 $S/logs/side-extras-$n-$COLUMN.log | cut -c1-200))"
  done
  touch $S/DONE; exit 0
fi
: "${TL:?set TL (seconds the job may take: the budget at the launch less about 120)}" "${COLUMN:?set COLUMN (l1_12 or l2_05)}" \
  "${RUNS:?set RUNS (the staged runs, one after the other)}"
cd $X/code || { echo "extras-launch.sh: no $X/code (carry .gpu/pinned and run the receive.sh scripts first)" >&2; exit 2; }
export SWARO_COMMIT=$(cat PINNED_COMMIT) SWARO_DATA=${SWARO_DATA:-$X/data} PYTHONPATH=/tmp/site:$X/code
rm -rf $S; mkdir -p $S/runs $S/logs $S/side
ok=
for n in $RUNS; do   # each run's records from the pin's results/, its float16 encoder checked against the weights record
  mkdir -p $S/runs/$n && cp results/runs/$n/config.json results/runs/$n/run.json results/runs/$n/metrics.jsonl $S/runs/$n/ \
    && cp $X/weights/$n.pt $S/runs/$n/weights.pt && $PY tools/gpu/check_weights.py $n $S/runs/$n/weights.pt > /dev/null \
    && ok="$ok $n" || log "$n: left out (records, weights or their check missing)"
done
log "job: $COLUMN on${ok:- nothing}, time limit $TL s"
RUNS="$ok" TL=$TL COLUMN=$COLUMN setsid nohup bash "$SELF" --job > $S/job.log 2>&1 < /dev/null &
sleep ${SETTLE:-15}; cat $S/events.log
