#!/usr/bin/env bash
# Issue #36 section 1 ("Four GPUs that scale") on a 4-GPU machine, from the repository root after the staging of
# tools/gpu/README.md section 1 (CIFAR-10 in /root/swaro/data, the wheels in /tmp/site). plans/scaling.md says why.
#   STAGE=1 (one call, ~6 min): the one-GPU real epochs (SwARo c10-200 and RoCL as its code c10-200-rocl, each in its
#           fastest one-GPU variant and in the variant run under DDP, one job a GPU side by side), then DDP on four GPUs at
#           global batch 512: SwARo with its refresh's feature pass on one rank (the before) and sharded (the after), and
#           RoCL, each with torch.profiler tables of one more training epoch and of the refresh, monitor and checkpoint;
#           and, on GPU 2 after its one-GPU figure, one GPU's share of the DDP step alone (batch 128, one attack group).
#   STAGE=2 (a second call, ~5 min): CUDA graphs of the training step under DDP (compile='all', reduce-overhead) for both.
# Every stage is bounded by `timeout` within DEADLINE seconds of the start; records go to $OUT/speed/ (speed.sh), the
# events to $OUT/scaling-events.log, and a summary line per record is printed at the end.
# Usage: SWARO_COMMIT=<sha> STAGE=1 bash tools/gpu/plans/scaling.sh
set -uo pipefail
: "${SWARO_COMMIT:?set SWARO_COMMIT to the commit of the checkout (the copy on the machine has no .git)}"
export SWARO_COMMIT OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
T0=$(date +%s); DEADLINE=${DEADLINE:-560}
ev() { echo "$(date +%H:%M:%S) +$(( $(date +%s) - T0 ))s $*" | tee -a "$OUT/scaling-events.log"; }
cap() { local b=$(( DEADLINE - ($(date +%s) - T0) )); [ "$b" -gt "$1" ] && b=$1; [ "$b" -lt 1 ] && b=1; echo "$b"; }
speed() {   # what, then the variables of one speed.sh job; its output in $OUT/scaling-<what>.out
  local what=$1 log; shift; log="$OUT/scaling-${what//[^a-zA-Z0-9-]/_}.out"
  env "$@" SPEED_S="$(cap "${JOB_S:-200}")" bash tools/gpu/speed.sh > "$log" 2>&1; ev "$what: $(grep -a 'speed exit' "$log" | tail -1)"; }

case ${STAGE:-1} in
1)
  ev "stage 1: one-GPU figures"
  speed 'g0 swaro all-ro' CUDA_VISIBLE_DEVICES=0 PRESET=c10-200 VARIANTS=all-ro SUFFIX=g0 &
  speed 'g1 rocl all-ro-shared' CUDA_VISIBLE_DEVICES=1 PRESET=c10-200-rocl VARIANTS=all-ro-shared SUFFIX=g1 &
  # GPU 2 also runs one GPU's share of DDP on four alone (batch 128, one attack group): its per-step profile against DDP's
  # tells the cost of the small batch from that of the communication
  ( speed 'g2 swaro attack' CUDA_VISIBLE_DEVICES=2 PRESET=c10-200 VARIANTS=attack SUFFIX=g2
    speed 'g2 swaro attack b128' CUDA_VISIBLE_DEVICES=2 PRESET=c10-200 VARIANTS=attack BATCHES=128 SUFFIX=g2-b128 \
      SPEED_ARGS="--attack-groups 1 --warmup 1 --timed 2 ${SPEED_ARGS:-}" ) &
  speed 'g3 rocl attack-shared' CUDA_VISIBLE_DEVICES=3 PRESET=c10-200-rocl VARIANTS=attack-shared SUFFIX=g3 &
  wait
  ev "stage 1: DDP on 4 GPUs"
  # attack_groups: the presets' 2 (two groups of 256 on one GPU, RoCL's two GPUs) is refused on four; 4 = one group of
  # 128 a GPU, as every DDP record has run (plans/scaling.md: the function)
  DDP_ARGS="--attack-groups 4 ${SPEED_ARGS:-}"
  speed 'ddp4 swaro attack one-rank,sharded' GPUS=4 PRESET=c10-200 VARIANTS=attack FEATURE_PASS=one-rank,sharded KERNELS=1 SUFFIX=swaro SPEED_ARGS="$DDP_ARGS"
  speed 'ddp4 rocl attack-shared' GPUS=4 PRESET=c10-200-rocl VARIANTS=attack-shared KERNELS=1 SUFFIX=rocl SPEED_ARGS="$DDP_ARGS" ;;
2)
  ev "stage 2: CUDA graphs of the training step under DDP"
  export TORCH_LOGS=perf_hints   # why a CUDA graph is skipped, in the job's log
  DDP_ARGS="--attack-groups 4 ${SPEED_ARGS:-}"
  speed 'ddp4 swaro all-ro' GPUS=4 PRESET=c10-200 VARIANTS=all-ro KERNELS=1 SUFFIX=swaro-ro SPEED_ARGS="$DDP_ARGS"
  speed 'ddp4 rocl all-ro-shared' GPUS=4 PRESET=c10-200-rocl VARIANTS=all-ro-shared KERNELS=1 SUFFIX=rocl-ro SPEED_ARGS="$DDP_ARGS" ;;
*) echo "STAGE must be 1 or 2" >&2; exit 2 ;;
esac
python3 - "$OUT/speed" <<'PY'
import glob, json, sys
for f in sorted(glob.glob(f'{sys.argv[1]}/*.json')):
    for r in json.load(open(f)):
        if r.get('kind') != 'speed': continue
        print(f"{f.split('/')[-1]}: {r['method']}/{r['loss_form']} {r['gpus']} GPU {r['variant']} pass={r.get('feature_pass')} "
              f"real epoch {r['s_per_real_epoch']} s (train {r['train_s']}, cluster {r['cluster_s']}, outside {r.get('outside_epoch_s')}) "
              f"step {r['profile']['ms_per_step']} loss {r['loss']}")
PY
grep -h "Error\|error:\|skipping cudagraphs" "$OUT"/speed/*.log 2>/dev/null | sort | uniq -c | head -20
ev "stage ${STAGE:-1} done"
