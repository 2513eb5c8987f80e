#!/usr/bin/env bash
# Stage the snapshot test's next one-GPU lease (plans/snapshot.md) in one command, check what it staged, keep weights/ out
# of the device calls, and print the calls in their order.
#   bash tools/gpu/plans/snapshot-stage.sh 1 [COMMIT]   # lease 1: train c10-paper-snap-s0 from epoch 0 with COMMIT's code
#                                                       #   (default HEAD; write it down: lease 2-h1 reads it from the record)
#   bash tools/gpu/plans/snapshot-stage.sh 2-h1         # lease 2-h1: resume it from the state kept in weights/, to epoch 400
#                                                       #   (then, with the eval pin, evaluate e200 if it has no record yet)
#   bash tools/gpu/plans/snapshot-stage.sh 3            # lease 3: evaluate the snapshots without a record in
#                                                       #   results/eval/snapshot/ (e400, or e200 and e400) at the eval pin
# Both stage CIFAR-10 and the wheels (../shared/gpu/stage.sh) and .gpu/pinned (tools/gpu/pinned.sh with the snapshot
# records); 2-h1 also joins weights/c10-paper-snap-s0.state (every piece checked), checks its sha256 against
# results/weights-snapshot.json and cuts it into .gpu/snap-1..3 (at most 48 MB a call). 2-h1 and 3 stage the encoders to
# evaluate from weights/ into .gpu/snap-w (their sha256 into results/weights-snapshot.json, where PRELOAD checks them) and
# pin the five-seed set's eval pin (tools/gpu/plans/five-seed-pins.json): in .gpu/pinned-eval beside lease 1's code for
# 2-h1, as .gpu/pinned for 3; lease 3 also stages the reference extras the set still misses (c10-200-rand-s4's l1_12: its
# encoder and LE head from git history in .gpu/e-x), which either plan's AFTER runs in what is left. Afterwards weights/,
# results/, nbs/ and tests/ are left out of the working tree (tools/gpu/travel_light.sh; `git sparse-checkout disable`
# brings them back): a call carries at most 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/../../.."
err() { echo "snapshot-stage.sh: error: $*" >&2; exit 2; }
PY=${PYTHON:-.venv/bin/python}; [ -x "$PY" ] || PY=python3
RUN=c10-paper-snap-s0
lease=${1:-}; case $lease in 1|2-h1|3) ;; *) err "the lease: 1, 2-h1 or 3 (plans/snapshot.md, 'With one GPU')";; esac
eval_pin=$("$PY" -c "import json; print(json.load(open('tools/gpu/plans/five-seed-pins.json'))['eval'])")
shared=${SHARED:-../shared}; [ -f "$shared/gpu/stage.sh" ] || err "no $shared/gpu/stage.sh (SHARED=path to the shared folder)"
git sparse-checkout disable 2>/dev/null || true   # weights/ back while staging reads it
if [ "$lease" = 1 ]; then
  commit=$(git rev-parse "${2:-HEAD}") || err "no commit ${2:-HEAD}"
  [ ! -e results/runs/$RUN/run.json ] || err "results/runs/$RUN/run.json exists: lease 1 has landed; stage 2-h1"
elif [ "$lease" = 3 ]; then
  commit=$eval_pin; todo=()
  for e in 200 400; do [ -f results/eval/snapshot/$RUN-e$e-eval.json ] || todo+=($RUN-e$e); done
  [ ${#todo[@]} -gt 0 ] || err "both snapshots have their records in results/eval/snapshot/: nothing to evaluate"
  for n in "${todo[@]}"; do [ -f weights/$n/encoder.part0 ] || err "$n is not in weights/: land lease 2-h1 first"; done
  case "${todo[*]}" in "$RUN-e200 $RUN-e400") plan=tools/gpu/plans/snapshot-e-h1.json;;
    "$RUN-e400") plan=tools/gpu/plans/snapshot-e400-h1.json;;
    *) err "e400 is evaluated and e200 is not: run snapshot-e-h1.json's launch with RUNS and PRELOAD cut to e200";; esac
  rm -rf .gpu/snap-[0-9] .gpu/e-x
  if [ ! -f results/eval/five-seed/c10-200-rand-s4-ref-extras-l1_12.json ]; then   # both plans' AFTER: its reference l1_12
    "$PY" tools/gpu/land_five_seed.py stage --from-hub c10-200-rand-s4 --to .gpu/e-x; fi
else
  [ -f results/runs/$RUN/run.json ] || err "results/runs/$RUN/run.json is missing: land lease 1 first"
  commit=$("$PY" -c "import json; print(json.load(open('results/runs/$RUN/run.json'))['commit'])")
  case $commit in *+dirty) commit=${commit%+dirty}   # a pinned lease stamps the clean commit; this one ran uncommitted changes
    echo "snapshot-stage.sh: warning: lease 1's record says ${commit}+dirty: pinning $commit, without those changes" >&2;; esac
  want=$("$PY" -c "import json; print(json.load(open('results/weights-snapshot.json'))['checkpoints']['$RUN']['sha256'])") \
    || err "results/weights-snapshot.json names no checkpoint of $RUN"
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT
  "$PY" tools/pack_weights.py --unpack-state $RUN.state "$tmp/$RUN/checkpoint.pt"
  got=$(sha256sum "$tmp/$RUN/checkpoint.pt" | cut -d' ' -f1)
  [ "$got" = "$want" ] || err "the kept state's sha256 $got is not results/weights-snapshot.json's $want"
  rm -rf .gpu/snap-ck .gpu/snap-1 .gpu/snap-2 .gpu/snap-3; mkdir -p .gpu/snap-1 .gpu/snap-2 .gpu/snap-3
  "$PY" tools/gpu/pieces.py split "$tmp/$RUN/checkpoint.pt" .gpu/snap-ck
  i=0; for p in .gpu/snap-ck/*.part*; do   # three pieces of 15 MiB a folder; the 100.5 MB checkpoint: 3, 3, 1
    n=$((i / 3 + 1)); [ $n -le 3 ] || err "more than 9 pieces: a checkpoint over 141 MB"; cp "$p" .gpu/snap-$n/; i=$((i + 1))
  done; cp .gpu/snap-ck/*.sha256 .gpu/snap-3/; rm -rf .gpu/snap-ck   # .gpu/snap-* is then the three carried folders
  for d in .gpu/snap-1 .gpu/snap-2 .gpu/snap-3; do
    [ "$(du -sm $d | cut -f1)" -le 48 ] || err "$d is over 48 MB"
  done
fi
bash "$shared/gpu/stage.sh" cifar10 wheels
snap_data="results/weights-*.json results/runs/c10-paper-snap-*/config.json results/runs/c10-paper-snap-*/run.json results/runs/c10-paper-snap-*/metrics.jsonl"
# what the eval pin reads: the five-seed set's records and pieces (pinned.sh's default) and the snapshot test's
eval_data="$snap_data results/runs/c10-200-*/config.json results/runs/c10-200-*/run.json results/runs/c10-200-*/metrics.jsonl results/eval/five-seed/*.json results/eval/parts/c10-200-* results/eval/parts/c10-paper-snap-*"
rm -rf .gpu/snap-w .gpu/pinned-eval; e200=
if [ "$lease" = 2-h1 ] && [ ! -f results/eval/snapshot/$RUN-e200-eval.json ] && [ -f weights/$RUN-e200/encoder.part0 ]; then
  todo=($RUN-e200); e200=1   # evaluated after the training (the plan's AFTER) with the eval pin in /root/swaro/evalcode
fi
if [ -n "$e200" ] || [ "$lease" = 3 ]; then   # the encoders to evaluate, from weights/, their sha256 where PRELOAD checks them
  "$PY" tools/gpu/land_five_seed.py stage --from-hub "${todo[@]}" --to .gpu/snap-w --manifest results/weights-snapshot.json
  git diff --quiet results/weights-snapshot.json \
    || echo "snapshot-stage.sh: warning: results/weights-snapshot.json gained the encoders' sha256: commit it" \
            "(after git sparse-checkout disable, which brings results/ back)" >&2
  [ "$(du -sm .gpu/snap-w | cut -f1)" -le 48 ] || err ".gpu/snap-w is over 48 MB"
fi
if [ -n "$e200" ]; then PIN_DATA="$eval_data" PIN_TO=/root/swaro/evalcode bash tools/gpu/pinned.sh "$eval_pin" .gpu/pinned-eval; fi
if [ "$lease" = 3 ]; then PIN_DATA="$eval_data" bash tools/gpu/pinned.sh "$commit"
else PIN_DATA="$snap_data" bash tools/gpu/pinned.sh "$commit"; fi
bash tools/gpu/travel_light.sh   # weights/, results/, nbs/, tests/ out of the calls (64 MiB a call)
echo
echo "staged lease $lease of the snapshot test, code $commit; weights/, results/, nbs/ and tests/ are out of the working tree (git sparse-checkout disable after the lease)."
echo "The calls, back to back (a machine idle for 30 s is given back):"
echo "  1-4. carry .gpu/cifar10-1 ... -4, each: sh .gpu/cifar10-N/receive.sh"
carry=".gpu/wheels and .gpu/pinned"
if [ "$lease" = 2-h1 ]; then
  echo "  5-7. carry .gpu/snap-1, -2, -3, each: mkdir -p /root/swaro/stage/snap-ck; cp .gpu/snap-[0-9]/* /root/swaro/stage/snap-ck/; ls /root/swaro/stage/snap-ck"
  if [ -n "$e200" ]; then
    echo "       (call 7 carries .gpu/snap-w too: the e200 encoder, which the launch's receive.sh loop puts in /root/swaro/weights)"
    carry=".gpu/wheels, .gpu/pinned and .gpu/pinned-eval (the eval pin, for the e200 evaluation after the training)"
  else echo "       (e200 is evaluated already or not in weights/: the launch's AFTER skips its evaluation)"; fi
  plan=tools/gpu/plans/snapshot-lease2-h1.json
elif [ "$lease" = 3 ]; then
  echo "  5. carry .gpu/snap-w: sh .gpu/snap-w/receive.sh   (${todo[*]}; the plan: $plan)"
  [ -d .gpu/e-x ] && echo "  6. carry .gpu/e-x: sh .gpu/e-x/receive.sh   (c10-200-rand-s4's encoder and LE head, for the plan's AFTER)"
else plan=tools/gpu/plans/snapshot-lease.json; fi
echo "  launch, carrying $carry (set DEADLINE from status's budget_left_s less about 150 s):"
"$PY" -c "import json,sys; p=json.load(open(sys.argv[1])); print('    ' + p['launch']); print('  poll until DONE:'); print('    ' + p['poll'])" $plan
echo "  then the calls that bring the pieces back (snapshot.md), give_back, and land as snapshot.md says."
