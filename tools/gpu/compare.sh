#!/usr/bin/env bash
# GPU machine with 4 GPUs, one detached job: the equal-budget CIFAR-10 comparison (SimCLR, RoCL, SwARo p=0.75 and the
# p=0.25 ablation, EPOCHS each, one run per GPU), the library notebooks' GPU cells (components.sh), the baselines' short
# runs (baselines.sh), the full evaluations (Tables 1 and 3, t-SNE), the black-box matrix (Table 4) over every model
# trained here, and a 2-GPU DDP timing. Each GPU runs its own queue; every stage is bounded by `timeout` so that
# $S/pack.tar (and $S/DONE) exist within DEADLINE seconds of the launch, whatever happens.
# Launch it detached from a copy of the checkout (the job outlives the command that starts it):
#   cp -r . /root/swaro/code && cd /root/swaro/code
#   EPOCHS=120 setsid nohup bash tools/gpu/compare.sh > /root/swaro/compare.log 2>&1 < /dev/null &
# then poll with `bash tools/gpu/poll.sh` (waits, prints progress, copies the pack to $OUT once DONE).
# GPUS_PER_RUN=2: SwARo on GPUs 0,1 and RoCL then SimCLR on GPUs 2,3, each data-parallel (longer runs, e.g. EPOCHS=200),
# no p-ablation and no components; TRADES is retrained on GPU 1 after SwARo's training.
# Settings: EPOCHS (100), DEADLINE (1200 s for everything), TRAIN_LIMIT (800 s a training run; it stops checkpointed with
# its run.json), BATCH (512), RLE (10 rLE epochs), COMP_S (420 s for components.sh), BL_TRAIN_S (170 s a baseline).
# CPU dry run of the whole script with tiny settings: SMOKE=1 S=/tmp/cmp RUNS=/tmp/cmp/runs EPOCHS=2 bash tools/gpu/compare.sh
set -uo pipefail
S=${S:-/root/swaro/compare}; R=${RUNS:-/root/swaro/runs}; mkdir -p $S/eval $R
export OUT=$S
if [ -z "${SMOKE:-}" ]; then source tools/gpu/common.sh; fi
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1 PYTHONUNBUFFERED=1 MPLBACKEND=Agg   # also in a dry run
T0=$(date +%s); DL=${DEADLINE:-1200}; TL=${TRAIN_LIMIT:-800}
E=${EPOCHS:-100}; W=$(( E / 20 > 0 ? E / 20 : 1 ))   # attack warm-up: the paper's 5% of the epochs
N=c10-e$E
left() { echo $(( DL - ($(date +%s) - T0) )); }
log() { echo "$(date -u +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $S/events.log; }
size=(--preset c10-200 --batch-size ${BATCH:-512} --monitor-every 5 --ckpt-every 5)
fullev=(--le-epochs 150 --rle-epochs ${RLE:-10} --table3 --tsne); liteev=(--le-epochs 150 --no-rle); bb=(--le-epochs 150 --n-test 2000)
if [ -n "${SMOKE:-}" ]; then
  size=(--preset smoke --subset-per-class 10 --batch-size 50 --width 8 --proj-hidden 64 --monitor-bank 100 --monitor-test 50 --n-clusters 10 --attack-steps 2)
  fullev=(--smoke --n-test 16 --train-per-class 10 --table3 --tsne); liteev=(--smoke --n-test 16 --train-per-class 10 --no-rle)
  bb=(--le-epochs 2 --n-test 16 --train-per-class 10)
fi

train() {  # GPU(s) ("0" or "0,1": DDP over those), run name, then train flags
  local g=$1 name=$2; shift 2
  local t=$(( $(left) - 240 )); [ $t -gt 60 ] || { log "$name: no time left to train"; return; }
  local n=$(echo $g | tr ',' '\n' | wc -l) launch=(python3)
  [ $n -gt 1 ] && launch=(python3 -m torch.distributed.run --standalone --nproc_per_node $n)
  log "$name: training on GPU $g (time limit $TL s)"
  CUDA_VISIBLE_DEVICES=$g timeout $t "${launch[@]}" -m swaro_nb.cli train --name $name "${size[@]}" --epochs $E --attack-warmup-epochs $W \
    --time-limit-s $TL --out-dir $R --progress false "$@" > $S/train_$name.log 2>&1
  log "$name: train exit $? ($(tail -1 $S/train_$name.log))"
}
evaluate() {  # GPU, run name, then eval flags
  local g=$1 name=$2; shift 2
  [ -f $R/$name/run.json ] || { log "$name: no run.json, not evaluated"; return; }
  local t=$(( $(left) - 100 )); [ $t -gt 30 ] || { log "$name: no time left to evaluate"; return; }
  log "$name: evaluating on GPU $g"
  CUDA_VISIBLE_DEVICES=$g timeout $t python3 -m swaro_nb.cli eval $R/$name --out $S/eval --no-progress "$@" > $S/eval_$name.log 2>&1
  log "$name: eval exit $?"
}
baselines() {  # GPU, methods
  local g=$1 ms=$2 tag=$3
  local t=$(( $(left) - 120 )); [ $t -gt 60 ] || { log "baselines $ms: no time left"; return; }
  log "baselines $ms on GPU $g"
  CUDA_VISIBLE_DEVICES=$g METHODS="$ms" EPOCHS=3 RUNS=$R PACK=$S/baselines-$tag OUT=$S/bl-$tag TRAIN_S=${BL_TRAIN_S:-170} EVAL_S=$(( t - 100 < 200 ? t - 100 : 200 )) \
    timeout $t bash tools/gpu/baselines.sh > $S/baselines-$tag.log 2>&1
  log "baselines $ms: exit $?"
}

q0() {
  if [ -z "${SMOKE:-}" ]; then
    log "components (notebooks' cuda/slow cells) on GPU 0"
    CUDA_VISIBLE_DEVICES=0 OUT=$S/comp timeout ${COMP_S:-420} bash tools/gpu/components.sh > $S/components.log 2>&1
    log "components: exit $? ($(grep -E '^notebooks:' $S/comp/nbs_cuda.log | tail -1))"
  fi
  train 0 simclr-$N --method simclr
  evaluate 0 simclr-$N "${fullev[@]}" & local ev=$!
  baselines 0 "acl swav scl" a
  wait $ev
}
q1() { train 1 swaro-$N --method swaro --p 0.75; evaluate 1 swaro-$N "${fullev[@]}"; }
q2() { train 2 rocl-$N --method rocl; evaluate 2 rocl-$N "${fullev[@]}"; }
q3() {
  train 3 swaro-p025-$N --method swaro --p 0.25
  evaluate 3 swaro-p025-$N "${liteev[@]}" & local ev=$!
  baselines 3 "ce at trades" b
  wait $ev
}
ddp_bench() {  # the 2-GPU DDP epoch time on this machine (global batch 512 = 256 a GPU, RoCL's split)
  local t=$(( $(left) - 150 )); [ $t -gt 60 ] || { log "ddp bench: no time left"; return; }
  t=$(( t < 200 ? t : 200 )); log "ddp bench on GPUs 0,3 (limit $t s)"
  local extra=(); [ -n "${SMOKE:-}" ] && extra=(--subset-per-class 100 --width 8 --batches 100 --epochs 2)
  CUDA_VISIBLE_DEVICES=0,3 timeout $t python3 -m torch.distributed.run --standalone --nproc_per_node 2 -m swaro_nb.cli bench \
    --methods swaro --batches 512 --epochs 3 --out $S/bench_ddp2.json "${extra[@]}" > $S/ddp_bench.log 2>&1
  log "ddp bench: exit $? ($(grep -h s_per_epoch $S/ddp_bench.log | tail -1))"
}
black_box() {  # Table 4 over every model trained here (the supervised baselines as sources too)
  local runs=$(for n in swaro-$N swaro-p025-$N rocl-$N simclr-$N acl-c10-e3 at-c10-e3 trades-c10-e3; do [ -f $R/$n/run.json ] && echo $R/$n; done)
  local t=$(( $(left) - 40 )); [ $t -gt 30 ] && [ -n "$runs" ] || { log "black-box: skipped"; return; }
  log "black-box over $(echo $runs | wc -w) runs on GPU 1"
  CUDA_VISIBLE_DEVICES=1 timeout $t python3 -m swaro_nb.cli eval $runs --black-box-only "${bb[@]}" --out $S/eval --no-progress > $S/black_box.log 2>&1
  log "black-box: exit $?"
}
pack() {
  mkdir -p $S/pack/runs
  for d in $R/*; do [ -f $d/run.json ] && mkdir -p $S/pack/runs/$(basename $d) && cp $d/run.json $d/metrics.jsonl $d/curves.png $d/config.json $S/pack/runs/$(basename $d)/ 2>/dev/null; done
  cp -r $S/eval $S/pack/ 2>/dev/null
  for b in $S/baselines-a $S/baselines-b; do [ -d $b/eval ] && cp $b/eval/* $S/pack/eval/ 2>/dev/null; done
  cp $S/*.log $S/*.json $S/card.txt $S/comp/cuda_outputs.txt $S/comp/nbs_cuda.log $S/pack/ 2>/dev/null
  [ -d $S/comp/components ] && cp -r $S/comp/components $S/pack/
  cp $S/baselines-*/*.log $S/pack/ 2>/dev/null
  tar -cf $S/pack.tar -C $S pack && touch $S/DONE
  log "packed $(du -h $S/pack.tar | cut -f1)"
}

if [ "${GPUS_PER_RUN:-1}" = 2 ]; then   # longer runs: SwARo and RoCL each data-parallel over two GPUs, SimCLR after RoCL, TRADES re-checked
  # (no `--p 0.75`, the default: torchrun's own parser takes `--p` for an abbreviation of its `--print-completion` and stops)
  q1() { train 0,1 swaro-$N --method swaro; evaluate 0 swaro-$N "${fullev[@]}" & local ev=$!; baselines 1 "trades" c; wait $ev; }
  q2() { train 2,3 rocl-$N --method rocl; train 2,3 simclr-$N --method simclr
         evaluate 2 rocl-$N "${fullev[@]}" & local ev=$!; evaluate 3 simclr-$N "${fullev[@]}"; wait $ev; }
  q0() { :; }; q3() { :; }; ddp_bench() { :; }
fi
log "start: EPOCHS=$E GPUS_PER_RUN=${GPUS_PER_RUN:-1} deadline ${DL}s train limit ${TL}s commit ${SWARO_COMMIT:-?}"
q1 & P1=$!; q2 & P2=$!; q3 & P3=$!; q0 & P0=$!
( wait_for() { while kill -0 $1 2>/dev/null; do sleep 5; done; }
  wait_for $P0; wait_for $P3; ddp_bench ) & PD=$!
( while { kill -0 $P0 || kill -0 $P1 || kill -0 $P2 || kill -0 $P3; } 2>/dev/null; do sleep 5; done; black_box ) & PB=$!   # after every queue
while { kill -0 $P0 || kill -0 $P1 || kill -0 $P2 || kill -0 $P3 || kill -0 $PD || kill -0 $PB; } 2>/dev/null && [ $(left) -gt 25 ]; do sleep 5; done
killtree() { local c; for c in $(pgrep -P $1); do killtree $c; done; kill $1 2>/dev/null; }   # a queue and everything it started
if [ $(left) -le 25 ]; then log "deadline: stopping what still runs"; for p in $P0 $P1 $P2 $P3 $PD $PB; do killtree $p; done; sleep 3; fi
pack
