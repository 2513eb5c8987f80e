#!/usr/bin/env bash
# One lease on a 2-GPU machine, as one detached job: the checks behind compiling by default and behind the evaluation's
# numbers, and the speed of the reproduction's two runs. Launch it from a copy of the checkout (the job outlives the call):
#   cp -r . /root/swaro/code && cd /root/swaro/code && SWARO_COMMIT=<sha> setsid nohup bash tools/gpu/checks_session.sh \
#     > /root/swaro/checks.log 2>&1 < /dev/null &
# and poll with `S=/root/swaro/checks LOG=/root/swaro/checks.log bash tools/gpu/poll.sh` until it prints DONE.
#  A. compile check (compile_check.sh): SwARo, c10-200 at EPOCHS (30) epochs, eager and compiled, seeds 0 and 1, one run a
#     GPU, each evaluated: LE 150 epochs, the l_inf 8/255 worst case, the PGD-20 and RoCL protocols, AutoAttack l_inf on
#     2,000 test images (CC_EVAL);
#  B. evaluation records of the compiled seed-0 model: on GPU 1 the full record with the attacks in bf16 (LE 150, rLE RLE
#     (10) epochs, every worst-case column with the protocols, RoCL's protocol, AutoAttack l_inf and l_2 on 2,000 test
#     images, Table 3); on GPU 0 the same for the LE head with the attacks in float32; the records' seconds say where the
#     time goes and the pair says what bf16 changes;
#  C. (SPEED=1, if time is left) speed.py: RoCL as its code trains (c10-200-rocl, attack_groups 2 on one GPU) on GPU 0 and
#     SwARo (c10-200) on GPU 1, variants base and all-ro, batch 512.
# Every stage is bounded by `timeout` from one DEADLINE (s after launch, default 1230); $S/pack.tar and $S/DONE exist by then.
# CPU dry run: SMOKE=1 S=/tmp/chk bash tools/gpu/checks_session.sh
set -uo pipefail
S=${S:-/root/swaro/checks}; R=$S/runs; mkdir -p $S/eval $S/speed $R
if [ -z "${SMOKE:-}" ]; then OUT=$S source tools/gpu/common.sh; PY=python3
else export PYTHONUNBUFFERED=1 MPLBACKEND=Agg; PY=${PYTHON:-.venv/bin/python}; fi
T0=$(date +%s); DL=${DEADLINE:-1230}
left() { echo $(( DL - ($(date +%s) - T0) )); }
log() { echo "$(date -u +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $S/events.log; }
pack() { tar -cf $S/pack.tar -C $S events.log eval speed checks $(cd $S && ls *.log 2>/dev/null) 2>/dev/null; touch $S/DONE; log "packed"; }
trap pack EXIT
EP=${EPOCHS:-30}; CC_EVAL=${CC_EVAL:---le-epochs 150 --no-rle --n-test 2000 --attacks clean,linf_8,pgd_linf_8,rocl_linf_8,aa_linf_8}
FULL=(--le-epochs 150 --rle-epochs ${RLE:-10} --n-test 2000 --table3 --rocl-protocol --autoattack)
SP=(--batches 512 --variants base,all-ro)
if [ -n "${SMOKE:-}" ]; then
  EP=1; CC_EVAL="--smoke --n-test 16 --le-epochs 1 --no-rle --attacks clean,linf_8,pgd_linf_8,aa_linf_8"
  FULL=(--smoke --n-test 16 --train-per-class 10 --rle-epochs 1 --table3 --rocl-protocol --autoattack)
fi

log "A: compile check, $EP epochs, seeds 0,1, eager and compiled"
a_dl=$(( $(left) - ${B_RESERVE:-420} ))
if [ -n "${SMOKE:-}" ]; then
  OUT=$S RUNS=$R EPOCHS=$EP SEEDS=0,1 DEADLINE=$a_dl EVAL_ARGS="$CC_EVAL" SMOKE=1 \
    TRAIN_ARGS="--subset-per-class 10 --batch-size 50 --width 8 --monitor-bank 100 --monitor-test 50 --n-clusters 10 --attack-groups 1" \
    timeout $(( a_dl + 60 )) bash tools/gpu/compile_check.sh > $S/compile_check.log 2>&1
else OUT=$S RUNS=$R EPOCHS=$EP SEEDS=0,1 DEADLINE=$a_dl EVAL_ARGS="$CC_EVAL" GPUS=0,1 timeout $(( a_dl + 60 )) bash tools/gpu/compile_check.sh > $S/compile_check.log 2>&1; fi
log "A done: exit $?"

run=$(ls -d $R/*compiled*s0* 2>/dev/null | grep -v eval | head -1)
full() {  # GPU, tag, then eval flags
  local g=$1 tag=$2; shift 2
  local t=$(( $(left) - 40 )); [ $t -gt 60 ] || { log "B $tag: no time left"; return; }
  log "B $tag: full evaluation of $(basename $run) on GPU $g"
  CUDA_VISIBLE_DEVICES=$g timeout $t $PY -m swaro_nb.cli eval $run --out $S/eval/$tag --no-progress "${FULL[@]}" "$@" > $S/eval_$tag.log 2>&1
  log "B $tag: exit $? ($(tail -1 $S/eval_$tag.log))"
}
g1=1; [ -n "${SMOKE:-}" ] && g1=0
if [ -n "$run" ]; then full 0 fp32-le --no-rle & full $g1 bf16 --attack-bf16 & wait
else log "B: no compiled seed-0 run to evaluate"; fi

speed() {  # GPU, preset
  local g=$1 p=$2; local t=$(( $(left) - 30 )); [ $t -gt 60 ] || { log "C $p: no time left"; return; }
  log "C: speed of $p on GPU $g"
  CUDA_VISIBLE_DEVICES=$g timeout $t $PY tools/gpu/speed.py --out $S/speed/speed-$p.json --preset $p "${SP[@]}" > $S/speed_$p.log 2>&1
  log "C $p: exit $?"
}
if [ -z "${SMOKE:-}" ] && [ -n "${SPEED:-}" ]; then speed 0 c10-200-rocl & speed 1 c10-200 & wait; fi
log "all done"
