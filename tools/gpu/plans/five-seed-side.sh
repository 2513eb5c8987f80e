#!/usr/bin/env bash
# The side job of a five-seed lease (repro_session.sh SIDE, tools/gpu/plans/five-seed.md), on GPU SIDE_GPU (3) while the lease's
# runs train on the others, done before their evaluations take that GPU as their helper (SIDE_END seconds after it starts,
# default 900; the trainings end about 960 s after the launch):
#  1. EXTRAS (run names of an earlier lease): the reference AutoAttack at l_2 0.5 and l_1 12 on the LE heads their evaluations
#     fitted (tools/gpu/ref_extras.py), from their float16 weights and heads, which a polling call brings after the launch
#     (.gpu/five-seed-w<k>/receive.sh, from tools/gpu/land_five_seed.py stage, puts them in WEIGHTS_DIR, /root/swaro/weights):
#     each run waits for them (at most WAIT_S, 300 s), checked against results/weights-*.json, in a run folder of $S/side/runs;
#  2. RESUME (run names of an earlier lease whose evaluation its deadline stopped; their pieces in results/eval/parts/): those
#     evaluations finished from their float16 weights and pieces, the set's protocol (five-seed-eval.txt), by a nested
#     repro_session.sh with S=$S/side (PRELOAD; its records in $S/side/eval/fp32/, packed with the lease's);
#  3. EVALUATE (run names trained in an earlier lease without evaluation, EVAL=none): evaluated the same way, in what time is left.
# Everything it writes goes under $S/side. Dry run: SMOKE=1 passes --smoke to ref_extras.py and SMOKE to the nested session.
T0=$(date +%s); END=${SIDE_END:-900}; G=${SIDE_GPU:-3}; PY=${PYTHON:-python3}; W=${WEIGHTS_DIR:-/root/swaro/weights}; mkdir -p $S/side/runs
left() { echo $(( END - ($(date +%s) - T0) )); }
say() { echo "$(date -u +%T) +$(( $(date +%s) - T0 ))s $*"; }
ok() {   # run name: its float16 weights and heads are in W and the weights are those results/weights-*.json names
  [ -f $W/$1.pt ] && [ -f $W/$1-eval-heads.pt ] && $PY tools/gpu/check_weights.py $1 $W/$1.pt; }
if [ -n "${EXTRAS:-}" ]; then
  ready=()
  for n in $EXTRAS; do
    t=$(date +%s); until ok $n || [ $(( $(date +%s) - t )) -gt ${WAIT_S:-300} ]; do sleep 5; done
    if ok $n && mkdir -p $S/side/runs/$n && cp results/runs/$n/{config.json,run.json,metrics.jsonl} $S/side/runs/$n/ && cp $W/$n.pt $S/side/runs/$n/weights.pt
    then ready+=($n); say "extras: $n ready (weights checked)"; else say "extras: $n has no checked weights and heads in $W, skipped"; fi
  done
  if [ ${#ready[@]} -gt 0 ] && [ $(left) -gt 60 ]; then
    say "extras: ${ready[*]} (at most $(left) s)"
    CUDA_VISIBLE_DEVICES=$G timeout $(left) $PY tools/gpu/ref_extras.py ${ready[*]} --runs $S/side/runs --heads $W \
      --records results/eval/five-seed --out $S/side/extras --shards 4 $( [ -n "${SMOKE:-}" ] && echo --smoke --autoattack-n 8 ) \
      > $S/side/extras.log 2>&1
    say "extras: exit $? ($(tail -c 300 $S/side/extras.log | tail -1))"
  fi
fi
todo="${RESUME:-} ${EVALUATE:-}"
if [ -n "${todo// /}" ] && [ $(left) -gt 120 ]; then
  say "evaluations: $todo (at most $(left) s)"
  S=$S/side RUNS="$(for n in $todo; do printf '%s:none:0 ' $n; done)" PRELOAD="$todo" GPUS=$G HELP= PROCS=1 DEADLINE=$(left) \
    EVAL_FROM=f16 WEIGHTS= TSNE=0 EVAL="$(cat tools/gpu/plans/five-seed-eval.txt)" SIDE= AFTER= bash tools/gpu/repro_session.sh > $S/side/evaluate.log 2>&1
  say "evaluations: exit $?"
fi
say "side job done"
