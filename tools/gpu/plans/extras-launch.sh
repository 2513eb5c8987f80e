#!/usr/bin/env bash
# On the GPU machine: the reference AutoAttack at one column (tools/gpu/ref_extras.py) on the LE heads of committed
# five-seed models, one run after the other on GPU 0, at the pinned eval commit, as one detached job bounded by TL seconds:
# the extras of the lease plans (tools/gpu/mixed_plan.py extras_cmd), with each run's events.
# A short lease's work (plans/extras.md): staged by extras-stage.sh, run from the call's checkout (the repo root):
#   for r in .gpu/*/receive.sh; do sh $r; done; TL=600 COLUMN=l1_12 RUNS="c10-200-rand-s4" bash tools/gpu/plans/extras-launch.sh
#   W=280 bash tools/gpu/plans/extras-launch.sh --poll     # waits up to W s for DONE, prints the events, packs $OUT/pack.tar
# The pack is `land_five_seed.py land PACK --pins tools/gpu/plans/five-seed-pins.json`'s layout (side/extras-<column>/,
# side/logs/, events.log). XROOT (default /root/swaro) holds code/ (the pinned copy), weights/ and data/; PY the interpreter.
set -u
TOOLS=$(cd "$(dirname "$0")/.." && pwd); X=${XROOT:-/root/swaro}; S=$X/x; PY=${PY:-python3}
if [ "${1:-}" = --poll ]; then
  for _ in $(seq 1 $(( ${W:-280} / 5 ))); do [ -f $S/DONE ] && break; sleep 5; done
  cat $S/events.log 2>/dev/null; tail -n 2 $S/side/logs/*.log 2>/dev/null
  (cd $S && tar -cf ${OUT:?set OUT}/pack.tar --exclude=side/runs side events.log job.log)   # what is finished so far (not the encoders)
  [ -f $S/DONE ] && echo DONE; exit 0
fi
: "${TL:?set TL (seconds the job may take: the budget at the launch less about 120)}" "${COLUMN:?set COLUMN (l1_12 or l2_05)}" \
  "${RUNS:?set RUNS (the staged runs, one after the other)}"
# the job: the lease plans' own extras (mixed_plan.extras_cmd), each column under what is left of TL, with its events
job=$($PY -c "import sys; sys.path.insert(0, sys.argv[1]); from mixed_plan import extras_cmd
print(extras_cmd(sys.argv[2].split(), 0, 'TL - \$(date +%s) + T0', [sys.argv[3]], events='\$S/events.log'))" "$TOOLS" "$RUNS" "$COLUMN") \
  || { echo "extras-launch.sh: no job for COLUMN=$COLUMN RUNS=$RUNS" >&2; exit 2; }
cd $X/code || { echo "extras-launch.sh: no $X/code (carry .gpu/pinned and run the receive.sh scripts first)" >&2; exit 2; }
export SWARO_COMMIT=$(cat PINNED_COMMIT) SWARO_DATA=${SWARO_DATA:-$X/data} PYTHONPATH=/tmp/site:$X/code
rm -rf $S; mkdir -p $S
echo "$(date -u +%T) job: the reference $COLUMN of $RUNS, eval pin $SWARO_COMMIT, time limit $TL s" >> $S/events.log
S=$S TL=$TL T0=$(date +%s) PYTHON=$PY WEIGHTS_DIR=$X/weights setsid nohup bash -c "$job; touch \$S/DONE" > $S/job.log 2>&1 < /dev/null &
sleep ${SETTLE:-15}; cat $S/events.log
