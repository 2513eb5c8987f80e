#!/usr/bin/env bash
# Stage the next one-GPU training lease of Table 8 (issue #36 section 3, plans/k.md, "With one GPU") in one command, check
# what it staged, keep weights/ out of the device calls, and print the calls in their order with the launch's DEADLINE.
#   bash tools/gpu/plans/k-stage.sh [DEADLINE] [RUN]   # DEADLINE: the launch's, s (default 1600; at the lease: status's
#                                                      # budget_left_s less about 170 s); RUN: default the first of ORDER
#                                                      # without results/runs/RUN/run.json
# The run trains with the five-seed set's train pin (five-seed-pins.json), EVAL=none, WEIGHTS=1 (its float16 weights come
# back in pieces). Its plan is tools/gpu/plans/k-t-k<K>-s<seed>-h200.json, written by mixed_plan.py --gpus 1 when missing;
# while c10-200-rand-s4's reference l1_12 has no record, the plan's AFTER runs it with the eval pin (.gpu/pinned-eval and
# the run's encoder and LE head from weights/ history in .gpu/mixed-w). A training the lease's time limit cuts (run.json
# with epochs_done under its epochs) goes on in the next lease from its checkpoint: bring it back in pieces (the printed
# calls), keep it in weights/ as <run>.state (tools/pack_weights.py --state), and this script stages it again
# (land_five_seed.py stage --state: .gpu/ck-1, -2, ... join it into the run folder, where the training resumes). It
# says whether the DEADLINE covers the rest of the training on each card.
set -euo pipefail
cd "$(dirname "$0")/../../.."
err() { echo "k-stage.sh: error: $*" >&2; exit 2; }
PY=${PYTHON:-.venv/bin/python}; [ -x "$PY" ] || PY=python3
ORDER="c10-200-k10-s0 c10-200-k100-s0 c10-200-k5000-s0 c10-200-k10-s1 c10-200-k100-s1 c10-200-k5000-s1"   # plans/k.md
DEADLINE=${1:-1600}; case $DEADLINE in ''|*[!0-9]*) err "DEADLINE must be a number of seconds, not '$DEADLINE'";; esac
[ "$DEADLINE" -ge 600 ] && [ "$DEADLINE" -le 1700 ] || err "DEADLINE $DEADLINE: between 600 and 1700 s"
shared=${SHARED:-../shared}; [ -f "$shared/gpu/stage.sh" ] || err "no $shared/gpu/stage.sh (SHARED=path to the shared folder)"
git sparse-checkout disable 2>/dev/null || true   # results/ and weights/ back while staging reads them
done_of() {   # epochs the run has trained (0 without run.json) and its epochs, from results/runs/<run>/run.json
  "$PY" -c "import json, sys; from pathlib import Path; f = Path('results/runs') / sys.argv[1] / 'run.json'
r = json.loads(f.read_text()) if f.is_file() else {}; print(r.get('epochs_done', 0), r.get('epochs', 200))" "$1"; }
run=${2:-}
if [ -z "$run" ]; then
  for n in $ORDER; do read -r d e < <(done_of $n); [ "$d" -ge "$e" ] || { run=$n; break; }; done
  [ -n "$run" ] || err "every run of Table 8 has trained (results/runs/<run>/run.json): the evaluation leases are next (plans/k.md)"
fi
[[ " $ORDER " == *" $run "* ]] || err "$run is not a run of Table 8 ($ORDER)"
read -r done_ epochs < <(done_of $run)
[ "$done_" -lt "$epochs" ] || err "results/runs/$run/run.json says $done_ of $epochs epochs: $run has trained"
k=${run#c10-200-k}; seed=${k#*-s}; k=${k%-s*}
plan=tools/gpu/plans/k-t-k$k-s$seed-h200.json
extras=(); [ -f results/eval/five-seed/c10-200-rand-s4-ref-extras-l1_12.json ] || extras=(--extras c10-200-rand-s4 --columns l1_12)
[ -f $plan ] || "$PY" tools/gpu/mixed_plan.py --gpus 1 --train $run --deadline 1600 "${extras[@]}" --out $plan
grep -q "RUNS='$run:c10-200:$seed:--n-clusters,$k'" $plan || err "$plan does not train $run with --n-clusters $k"
read -r train eval_pin < <("$PY" -c "import json; p = json.load(open('tools/gpu/plans/five-seed-pins.json')); print(p['train'], p['eval'])")
rm -rf .gpu/pinned .gpu/pinned-eval .gpu/mixed-w .gpu/ck-*
if [ "$done_" -gt 0 ]; then   # cut in an earlier lease: its checkpoint, kept in weights/, into the run folder it resumes in
  "$PY" tools/gpu/land_five_seed.py stage --state $run --to .gpu/ck \
    || err "$run stopped at epoch $done_ of $epochs and weights/ keeps no $run.state to resume it from"
fi
if grep -q 'c10-200-rand-s4' $plan && [ ${#extras[@]} -gt 0 ]; then
  "$PY" tools/gpu/land_five_seed.py stage --from-hub c10-200-rand-s4 --to .gpu/mixed-w
  PIN_TO=/root/swaro/evalcode bash tools/gpu/pinned.sh "$eval_pin" .gpu/pinned-eval
  bash tools/gpu/pinned.sh --check .gpu/pinned-eval
fi
git diff --quiet results/weights-five-seed.json \
  || echo "k-stage.sh: warning: results/weights-five-seed.json gained encoder sha256s: commit it" >&2
bash "$shared/gpu/stage.sh" cifar10 wheels
bash tools/gpu/pinned.sh "$train"
bash tools/gpu/pinned.sh --check .gpu/pinned
fits=$(for card in H100 H200; do   # the planner's predicted end of the launch on each card, against DEADLINE
  m=$("$PY" tools/gpu/plan.py $plan --gpus 1 --card $card 2>/dev/null | sed -n 's/.*predicted end \([0-9.]*\) min.*/\1/p' | tail -1)
  [ -n "$m" ] && echo "$card $m"; done)
bash tools/gpu/travel_light.sh   # weights/, results/, nbs/, tests/ out of the calls (64 MiB a call)
echo
echo "staged $run (K = $k, seed $seed$( [ "$done_" -gt 0 ] && echo ", resuming at epoch $done_")), train pin $train$( [ -d .gpu/pinned-eval ] && echo ", eval pin $eval_pin for the AFTER's extras"); plan $plan."
echo "weights/, results/, nbs/ and tests/ are out of the working tree (git sparse-checkout disable after the lease)."
while read -r card m; do
  need=$("$PY" -c "import math; print(math.ceil($m * 60 * ($epochs - $done_) / $epochs) + 60)")   # its rest, export, pack
  if [ "$DEADLINE" -ge "$need" ]; then echo "DEADLINE $DEADLINE fits on an $card (the training ends by about $need s)"
  else echo "DEADLINE $DEADLINE is too short on an $card to end the training (about $need s): it will be cut; bring its checkpoint back (below)"; fi
done <<< "$fits"
echo "The calls, back to back (kind nvidia-h100-x1 or nvidia-h200; a machine idle for 30 s is given back):"
echo "  carry .gpu/cifar10-1, then -2, -3, then -4$( [ -d .gpu/mixed-w ] && echo " with .gpu/mixed-w") (each: for r in .gpu/*/receive.sh; do sh \$r; done)"
for d in .gpu/ck-*; do [ -d "$d" ] && echo "  carry $d (the checkpoint's pieces: its receive.sh joins them in /root/swaro/repro/runs/$run/)"; done
echo "  launch, carrying .gpu/wheels and .gpu/pinned$( [ -d .gpu/pinned-eval ] && echo " and .gpu/pinned-eval"):"
"$PY" -c "import json, re, sys; print('    ' + re.sub(r'DEADLINE=\d+', 'DEADLINE=' + sys.argv[2], json.load(open(sys.argv[1]))['launch']))" $plan $DEADLINE
echo "  poll until DONE (append the first poll to the launch: ... < /dev/null & sleep 5; WAIT=500 ...):"
"$PY" -c "import json, sys; print('    cd /root/swaro/code && ' + json.load(open(sys.argv[1]))['poll'])" $plan
echo "  if the events say the training stopped before epoch $epochs (its time limit), bring its checkpoint back, two calls:"
echo "    cd /root/swaro && python3 code/tools/gpu/pieces.py split repro/runs/$run/checkpoint.pt ck && cp ck/*.part00[0-3] \$OUT/"
echo "    cp /root/swaro/ck/*.part00[4-9] /root/swaro/ck/*.sha256 \$OUT/"
echo "  and land it without --weights (its float16 export is no model), join the pieces (tools/gpu/pieces.py join DIR"
echo "  /tmp/ck/$run/checkpoint.pt) and keep them: tools/pack_weights.py --state /tmp/ck/$run/checkpoint.pt, in this session"
echo "  (over weights/' 150 MB: retire a committed state first, --retire-state NAME, and commit; stage --aff and --state read"
echo "  retired states from git history)."
echo "  Else WAIT=5 polls until the weights' two pieces are back; copy each call's files out at once; give_back; land:"
echo "  land_five_seed.py land PACK --logs <date>-<letter>-<card>-k$k-s$seed --weights <pieces> --pins tools/gpu/plans/five-seed-pins.json,"
echo "  then keep its encoder in weights/ (tools/pack_weights.py, within the 150 MB budget) in the same session$( [ "$done_" -gt 0 ] && echo ",
  and retire the state it resumed from (tools/pack_weights.py --retire-state $run.state)")."
