#!/usr/bin/env bash
# One lease of the reproduction, as one detached job: each training run of RUNS on a GPU of its own, then its evaluation
# on the same GPU, all inside one DEADLINE (nothing survives a lease, so a run that is not evaluated here is lost).
#   RUNS   space-separated name:preset:seed[:more train flags, comma-separated], e.g.
#          "swaro-c10-200-s0:c10-200:0 swaro-c10-200-s1:c10-200:1"   (tools/gpu/plans/repro-lease1a-swaro.json)
#          "rocl-c10-200-s0:c10-200-rocl:0"   "rocl-c10-200-s1:c10-200-rocl:1:--rocl-term-forward,shared"
#   EPOCHS (200), DEADLINE (1500 s after launch: $S/pack.tar and $S/DONE exist by then), EVAL_RESERVE (420 s kept for the
#   evaluation when a training starts: the training gets --time-limit-s and stops checkpointed, run.json written),
#   EVAL (the evaluation's flags; default: LE 150 epochs, no rLE, 2,000 test images, every worst-case column with the
#   protocols, RoCL's protocol, AutoAttack l_inf and l_2, Table 3), TSNE (1: the run's t-SNE map, drawn beside the first
#   evaluation pass in a process of its own, into eval/<name>-tsne.png), GPUS (0,1),
#   HELP (optional, aligned with GPUS: a second GPU for each run's evaluation, e.g. 2,3: the evaluation then runs its
#   attacks in PROCS processes a GPU over both, --workers; a run's own GPU as its helper: PROCS processes on that GPU), PROCS (1:
#   processes sharing a GPU share its time; on one H100 a model's whole record took 593 s with two, 492 s with one, results/checks/one-model-h100-d47bcda/; without HELP the attacks run in the evaluating process),
#   TRANSFER (optional dataset, e.g. cifar100: the evaluation also fits LE on it, Table 5, when its data is in $SWARO_DATA
#   by the time the evaluation starts, so it may be staged while the runs train),
#   WEIGHTS (1: each trained run's weights in float16, no optimiser state, cut into pieces of 15 MiB under $S/weights,
#   <name>.weights.pt.<k>, as soon as it has trained (before its evaluation, so that they come back even when the evaluation
#   does not end); the events log gives their sha256; `cat` them back together, in order, into a run folder's weights.pt),
#   EVAL_FROM (checkpoint: each run is evaluated from its float32 checkpoint; f16: from its float16 weights, the file WEIGHTS
#   exports, through a run folder $S/f16/<name> holding them with the run's records: the record then belongs to the weights
#   that are kept, so re-evaluating them reproduces it, and an evaluation the deadline stops resumes in a later lease from its
#   pieces, results/eval/parts; a preloaded run is evaluated from its float16 weights either way),
#   EVAL=none: train (and export the weights) only, no evaluation (a lease whose card cannot also evaluate; EVAL_FROM=f16
#   leases evaluate them later, preloaded, with the same result as in the lease that trained them),
#   PRECISIONS (fp32: each run is evaluated once per entry, in order, into eval/<precision>/; "bf16 fp32": bf16 first,
#   then float32 only when at least LATER_MIN (330) seconds are left),
#   PRELOAD (optional run names trained in an earlier lease: each gets a folder in $R from results/runs/<name>/ and the
#   weights $WEIGHTS_DIR/<name>.pt (/root/swaro/weights, where .gpu/weights-* receive.sh put them), checked against
#   results/weights-*.json by check_weights.py (the lease's float16 export, or the encoder alone that
#   `land_five_seed.py stage --from-hub` makes from weights/: an evaluation reads nothing else); never trained again: there for AFTER, and a preloaded name that is also in RUNS is evaluated
#   like the others, without training - an evaluation-only lease),
#   AFTER (optional: a command run once every run is evaluated, with PY, R, S and
#   LEFT (seconds to the deadline) set, bounded by the deadline, its output in logs/after.log, e.g. the black-box matrix:
#   'python3 -m swaro_nb.cli eval $R/a $R/b --black-box-only --out $S/eval/fp32 --n-test 2000 --le-epochs 150 --no-progress';
#   AFTER_WHEN=trained starts it as soon as every run has trained, beside their evaluations: what needs only the trained
#   runs, like that matrix, then does not wait for the evaluations and the deadline),
#   An evaluation stopped by its deadline leaves its finished pieces in eval/fp32/<name>-eval.parts/ (packed); committed to
#   results/eval/parts/, they are copied back before that run's float32 evaluation and taken where its weights, settings and
#   number of attack processes are the same: a preloaded run's pieces (float16 weights both times), not those of a run
#   trained in that lease (evaluated from its float32 checkpoint; a later lease has only its float16 weights).
#   AFF_DIR (/root/swaro/aff): <run>-aff-partial.pt or <run>-aff-head.pt there (an AFF an earlier lease's deadline stopped, staged
#   by land_five_seed.py stage --aff) goes into the run's pieces folder, where swaro_eval --aff continues from it when its
#   fingerprint matches (same weights and settings); the pack cuts AFF's network and such state into pieces (see pack()).
#   SIDE (optional: a command run in the background from the start, its output in logs/side.log, its shell killed a minute
#   before DEADLINE, so give what it starts deadlines of its own; what it leaves under $S/side is packed).
# Launch it from a copy of the checkout (the job outlives the call that starts it):
#   cp -r . /root/swaro/code && cd /root/swaro/code && SWARO_COMMIT=<sha> RUNS="..." \
#     setsid nohup bash tools/gpu/repro_session.sh > /root/swaro/repro.log 2>&1 < /dev/null &
# poll with `S=/root/swaro/repro LOG=/root/swaro/repro.log bash tools/gpu/poll.sh` until it prints DONE; the pack holds
# each run's config.json, metrics.jsonl, run.json, curves.png, its evaluation record and t-SNE map, and every log.
# CPU dry run: SMOKE=1 S=/tmp/rep RUNS="a:smoke:0 b:smoke:1" bash tools/gpu/repro_session.sh
set -uo pipefail
S=${S:-/root/swaro/repro}; R=$S/runs; mkdir -p $S/eval $S/logs $R
if [ -z "${SMOKE:-}" ]; then OUT=$S source tools/gpu/common.sh; PY=python3
else export PYTHONUNBUFFERED=1 MPLBACKEND=Agg OMP_NUM_THREADS=1; PY=${PYTHON:-.venv/bin/python}; fi   # dry run: runs side by side on a small CPU, one thread each
T0=$(date +%s); DL=${DEADLINE:-1500}; RES=${EVAL_RESERVE:-420}; E=${EPOCHS:-200}
left() { echo $(( DL - ($(date +%s) - T0) )); }
log() { echo "$(date -u +%T) +$(( $(date +%s) - T0 ))s $*" | tee -a $S/events.log; }
source tools/gpu/pack_files.sh   # copy_records, pack_tar: what the pack holds (poll.sh's partial.tar too)
pack() {
  copy_records $R $S/records
  # no checkpoints or weights (they come back in pieces, WEIGHTS=1); an evaluation's fitted heads (eval/*/<run>-eval-heads.pt, and
  # eval/*/<run>-eval.parts/*-head.pt of one the deadline stopped, so that a later call can resume it; a few kB each) do come back
  # AFF's fine-tuned network (eval/*/<run>-eval-aff.pt, float16, ~22 MB), and in the pieces folder of an evaluation its
  # deadline stopped the state of its fine-tuning (aff-partial.pt: float32 weights and momentum, ~90 MB) or, once that ended,
  # its float32 network (aff-head.pt, ~45 MB), are too big for the pack: cut into 15 MiB pieces under $S/weights
  # (<run>-aff.weights.pt.<k>, <run>-aff-partial..., <run>-aff-head...), which poll.sh brings like weights
  for f in $S/eval/*/*-eval.parts/aff-partial.pt $S/eval/*/*-eval.parts/aff-head.pt $S/eval/*/*-eval-aff.pt; do [ -f "$f" ] || continue
    case $f in *.parts/aff-*) n=$(basename $(dirname $f) .parts); n=${n%-eval}-$(basename $f .pt); what="AFF state (float32)";;
               *) n=$(basename $f .pt); n=${n%-eval-aff}-aff; what="AFF network (float16)";; esac
    mkdir -p $S/weights; rm -f $S/weights/$n.weights.pt.*; split -b 15M -d -a 2 $f $S/weights/$n.weights.pt. \
      && log "$n: $what in $(ls $S/weights/$n.weights.pt.* | wc -l) piece(s), sha256 $(sha256sum $f | cut -d' ' -f1), $(stat -c %s $f) bytes"
  done
  pack_tar $S/pack.tar $S 2>/dev/null; touch $S/DONE; log "packed"
}
trap pack EXIT
EV=(${EVAL:---le-epochs 150 --no-rle --n-test 2000 --table3 --rocl-protocol --autoattack})
size=(--epochs $E --attack-warmup-epochs $(( (E + 19) / 20 )))   # the paper's instance-wise warm-up: 5% of the epochs
if [ -n "${SMOKE:-}" ]; then
  E=${EPOCHS:-2}; RES=${EVAL_RESERVE:-120}
  size=(--epochs $E --attack-warmup-epochs 1 --subset-per-class 10 --batch-size 50 --width 8 --proj-hidden 64 --monitor-bank 100
        --monitor-test 50 --n-clusters 10 --attack-steps 2 --attack-groups 1)
  if [ -n "${EVAL:-}" ] && [ "$EVAL" != none ]; then   # the lease's flags at CPU size (later flags win): 8 images, the reference on all 8
    EV=(--smoke $EVAL --n-test 8 --train-per-class 10 --le-epochs 1 --autoattack-n 8 $( [[ " $EVAL " == *" --rle-epochs "* ]] && echo --rle-epochs 1 )
        $( [[ " $EVAL " == *" --aff-epochs "* ]] && echo --aff-epochs 2 ))
  else EV=(--smoke --n-test 16 --train-per-class 10 --no-rle --le-epochs 1 --rocl-protocol --autoattack --table3); fi
fi
IFS=, read -ra G <<< "${GPUS:-0,1}"

IFS=, read -ra HL <<< "${HELP:-}"; PR=(${PRECISIONS:-fp32}); LATER_MIN=${LATER_MIN:-330}

one() {  # index, GPU, name, preset, seed, more train flags (comma-separated)
  local k=$1 g=$2 name=$3 preset=$4 seed=$5 more=${6:-}; local t=$(( $(left) - RES - 30 ))
  if [ -f $S/preloaded.$name ]; then log "$name: preloaded, evaluation only"   # trained in an earlier lease (PRELOAD)
  elif [[ " ${PRELOAD:-} " == *" $name "* ]]; then log "$name: not preloaded, so not evaluated (and not trained again)"; touch $S/trained.$name; return
  else
  [ $t -gt 60 ] || { log "$name: no time left to train"; return; }
  log "$name: training on GPU $g ($preset, seed $seed, $E epochs, time limit $t s)"
  CUDA_VISIBLE_DEVICES=$g timeout $(( t + 60 )) $PY -m swaro_nb.cli train --preset $preset --name $name --seed $seed "${size[@]}" \
    ${more//,/ } --time-limit-s $t --out-dir $R --progress false > $S/logs/train_$name.log 2>&1
  log "$name: train exit $? ($(tail -c 300 $S/logs/train_$name.log | tail -1))"
  fi
  touch $S/trained.$name   # for AFTER_WHEN=trained
  [ -f $R/$name/run.json ] || { log "$name: no run.json, not evaluated"; return; }
  local ed=$R/$name   # the run folder evaluated
  if [ ! -f $S/preloaded.$name ] && { [ "${WEIGHTS:-}" = 1 ] || [ "${EVAL_FROM:-checkpoint}" = f16 ]; }; then
    mkdir -p $S/weights   # the float16 weights, exported before the evaluation (and what it evaluates with EVAL_FROM=f16)
    if $PY -c "import sys; from swaro_nb.runs import export_weights; export_weights(sys.argv[1], sys.argv[2], half=True)" $R/$name $S/weights/$name.pt; then
      local sha=$(sha256sum $S/weights/$name.pt | cut -d' ' -f1) bytes=$(stat -c %s $S/weights/$name.pt)
      if [ "${EVAL_FROM:-checkpoint}" = f16 ]; then ed=$S/f16/$name; rm -rf $ed; mkdir -p $ed
        cp $R/$name/{config.json,run.json,metrics.jsonl} $ed/ && cp $S/weights/$name.pt $ed/weights.pt; fi
      if [ "${WEIGHTS:-}" = 1 ]; then split -b 15M -d -a 1 $S/weights/$name.pt $S/weights/$name.weights.pt. \
        && log "$name: weights (float16) in $(ls $S/weights/$name.weights.pt.* | wc -l) piece(s), sha256 $sha, $bytes bytes" \
        || log "$name: weights not cut into pieces"; fi
      rm -f $S/weights/$name.pt
    else log "$name: weights not exported"; [ "${EVAL_FROM:-checkpoint}" = f16 ] && { log "$name: no float16 weights, not evaluated"; return; }; fi
  fi
  if [ "${EVAL:-}" = none ]; then log "$name: EVAL=none, not evaluated"; return; fi
  local h=${HL[$k]:-} gs=$g w=()
  local d0=cuda:0 d1=cuda:1; [ -n "${SMOKE:-}" ] && d0=cpu d1=cpu   # dry run: the worker processes on the CPU
  if [ -n "$h" ] && [ "$h" = "$g" ]; then w=(--workers $(for i in $(seq ${PROCS:-1}); do printf "$d0,"; done | sed 's/,$//'))
  elif [ -n "$h" ]; then gs=$g,$h; w=(--workers $(for i in $(seq ${PROCS:-1}); do printf "$d0,$d1,"; done | sed 's/,$//')); fi
  local tr=(); [ -n "${TRANSFER:-}" ] && { $PY -c "from swaro_nb.data import verify_dataset as v; v('$TRANSFER')" > /dev/null 2>&1 \
    && tr=(--transfer $TRANSFER) || log "$name: no $TRANSFER data yet, no transfer LE"; }
  local first=1
  for p in "${PR[@]}"; do
    local te=$(( $(left) - 40 ))
    if [ $first = 0 ] && [ $te -lt $LATER_MIN ]; then log "$name: $te s left, no $p evaluation"; continue; fi
    [ $te -gt 30 ] || { log "$name: no time left to evaluate ($p)"; continue; }
    mkdir -p $S/eval/$p
    if [ $p = fp32 ] && [ -d results/eval/parts/$name-eval.parts ] && [ ! -d $S/eval/$p/$name-eval.parts ] \
       && [[ " ${EV[*]} " != *" --aff "* ]]; then   # pieces an earlier lease brought back (not into an AFF evaluation's)
      cp -r results/eval/parts/$name-eval.parts $S/eval/$p/ && log "$name: resuming the pieces in results/eval/parts/$name-eval.parts"; fi
    for part in aff-partial aff-head; do   # an AFF an earlier lease's deadline stopped (land_five_seed.py stage --aff)
      local aff=${AFF_DIR:-/root/swaro/aff}/$name-$part.pt
      if [ $p = fp32 ] && [ -f $aff ] && [ ! -f $S/eval/$p/$name-eval.parts/$part.pt ]; then
        mkdir -p $S/eval/$p/$name-eval.parts && cp $aff $S/eval/$p/$name-eval.parts/$part.pt && log "$name: resuming AFF from $aff"; fi
    done
    log "$name: evaluating ($p) on GPU $gs ${w[*]} (at most $te s)"
    if [ $first = 1 ] && [ "${TSNE:-1}" = 1 ] && [ -z "${SMOKE:-}" ]; then   # the t-SNE map beside the evaluation (CPU-bound, its own process)
      CUDA_VISIBLE_DEVICES=$g timeout $te $PY -c "import sys, json; from swaro_nb.data import load_cifar; from swaro_nb.tsne import tsne_plot
te = load_cifar(json.load(open(sys.argv[1] + '/config.json'))['dataset'], False)
tsne_plot(sys.argv[1], te.images, te.labels, te.classes, n=2000, path=sys.argv[2], seed=0)" $ed $S/eval/$name-tsne.png > $S/logs/tsne_$name.log 2>&1 &
    fi
    CUDA_VISIBLE_DEVICES=$gs timeout $te $PY -m swaro_nb.cli eval $ed --out $S/eval/$p --no-progress "${EV[@]}" "${w[@]}" "${tr[@]}" \
      $( [ $p = bf16 ] && echo --attack-bf16 ) > $S/logs/eval_${name}_$p.log 2>&1
    log "$name: eval ($p) exit $? ($(tail -c 300 $S/logs/eval_${name}_$p.log | tail -1))"
    first=0; tr=()   # Table 5 once
  done
  wait   # the t-SNE map
}
rm -f $S/preloaded.*
for n in ${PRELOAD:-}; do   # runs of an earlier lease, for AFTER (and evaluated when in RUNS)
  mkdir -p $R/$n && cp results/runs/$n/{config.json,run.json,metrics.jsonl} $R/$n/ && cp ${WEIGHTS_DIR:-/root/swaro/weights}/$n.pt $R/$n/weights.pt \
    && $PY tools/gpu/check_weights.py $n $R/$n/weights.pt \
    && { touch $S/preloaded.$n; log "$n: preloaded (weights checked)"; } || { log "$n: not preloaded (missing or wrong weights)"; rm -rf $R/$n; }
done
if [ -n "${SIDE:-}" ]; then
  mkdir -p $S/side; log "side job: $SIDE"
  # this job's settings cleared in its environment: a side job that is itself a repro_session.sh must neither start the side
  # job again nor take this job's GPUs, helpers or budgets (it sets its own in its command)
  S=$S SIDE= RUNS= GPUS= HELP= PROCS= PRECISIONS= LATER_MIN= EVAL= EVAL_FROM= EVAL_RESERVE= DEADLINE= EPOCHS= TSNE= TRANSFER= WEIGHTS= PRELOAD= AFTER= timeout -k 10 $(( DL - 60 )) bash -c "$SIDE" > $S/logs/side.log 2>&1 &   # bound it by its own deadlines too: only the shell is killed here
fi
after() {
  log "after: $AFTER"; PY=$PY R=$R S=$S LEFT=$(left) timeout $(( $(left) - 30 )) bash -c "$AFTER" > $S/logs/after.log 2>&1
  log "after: exit $? ($(tail -c 300 $S/logs/after.log | tail -1))"
}
rm -f $S/trained.*; nruns=$(echo ${RUNS:?set RUNS} | wc -w)
if [ -n "${AFTER:-}" ] && [ "${AFTER_WHEN:-evaluated}" = trained ]; then   # AFTER as soon as every run has trained, beside the evaluations
  ( while [ $(ls $S/trained.* 2>/dev/null | wc -l) -lt $nruns ] && [ $(left) -gt 60 ]; do sleep 5; done
    [ $(left) -gt 60 ] && after ) &
fi
i=0; pids=()
for spec in ${RUNS:?set RUNS}; do
  IFS=: read -r name preset seed more <<< "$spec"
  one $(( i % ${#G[@]} )) ${G[$(( i % ${#G[@]} ))]} $name $preset $seed "${more:-}" & pids+=($!)
  i=$((i + 1)); if [ $(( i % ${#G[@]} )) -eq 0 ]; then wait "${pids[@]}"; pids=(); fi   # one run a GPU at a time
done
wait
if [ -n "${AFTER:-}" ] && [ "${AFTER_WHEN:-evaluated}" != trained ] && [ $(left) -gt 60 ]; then after; fi
log "all done"
