#!/usr/bin/env bash
# Stage the next one-GPU AFF lease (issue #37; plans/aff-lease.json, its one-GPU route) in one command, and print the
# calls in their order.
#   bash tools/gpu/plans/aff-stage.sh [DEADLINE]   # DEADLINE: the launch's, in seconds (default 1350; set it at the lease
#                                                  # from status's budget_left_s less about 170 s: the AFF state of a cut
#                                                  # fine-tuning comes back in two calls after DONE)
# Which models: those of aff-lease.json without an AFF record in results/eval/aff/ (<run>-eval.json), in its order (SwARo,
# then RoCL); each is fine-tuned and attacked on GPU 0, one after the other, under one DEADLINE. A model whose fine-tuning
# an earlier lease's deadline stopped resumes from its state: .gpu/aff/<run>-aff-{head,partial}.pt, else the state kept in
# weights/ (<run>-aff-partial.state; from history once retired), cut into .gpu/aff-s-<run>-1, -2, ... by
# land_five_seed.py stage --aff. The encoders come from weights/ (stage --from-hub, one folder a model: .gpu/aff-e-<run>);
# the code is the AFF pin (aff-pins.json), the same for every AFF record. Afterwards weights/, results/, nbs/ and tests/ are out of the working tree
# (tools/gpu/travel_light.sh; `git sparse-checkout disable` brings them back): a call carries at most 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/../../.."
err() { echo "aff-stage.sh: error: $*" >&2; exit 2; }
PY=${PYTHON:-.venv/bin/python}; [ -x "$PY" ] || PY=python3
DEADLINE=${1:-1350}; case $DEADLINE in ''|*[!0-9]*) err "DEADLINE must be a number of seconds, not '$DEADLINE'";; esac
[ "$DEADLINE" -ge 300 ] && [ "$DEADLINE" -le 1500 ] || err "DEADLINE $DEADLINE: between 300 and 1500 s"
shared=${SHARED:-../shared}; [ -f "$shared/gpu/stage.sh" ] || err "no $shared/gpu/stage.sh (SHARED=path to the shared folder)"
git sparse-checkout disable 2>/dev/null || true   # weights/ and results/ back while staging reads them
pin=$("$PY" -c "import json; print(json.load(open('tools/gpu/plans/aff-pins.json'))['eval'])")
runs=$("$PY" -c "import json; print(' '.join(r['name'] for r in json.load(open('tools/gpu/plans/aff-lease.json'))['runs']))")
todo=(); for n in $runs; do [ -f results/eval/aff/$n-eval.json ] || todo+=($n); done
[ ${#todo[@]} -gt 0 ] || err "every model of aff-lease.json has its AFF record in results/eval/aff/: nothing to stage"
rm -rf .gpu/aff-e-* .gpu/aff-s-* .gpu/aff-e1 .gpu/pinned .gpu/pinned-eval
resumed=()
for n in "${todo[@]}"; do
  "$PY" tools/gpu/land_five_seed.py stage --from-hub $n --to .gpu/aff-e-$n
  # a stopped fine-tuning (its head, or its state: .gpu/aff/, else weights/, kept or retired): cut into carry-sized folders
  "$PY" tools/gpu/land_five_seed.py stage --aff --optional $n --to .gpu/aff-s-$n
  if ls -d .gpu/aff-s-$n-[0-9]* > /dev/null 2>&1; then resumed+=($n); fi
done
git diff --quiet results/weights-five-seed.json \
  || echo "aff-stage.sh: warning: results/weights-five-seed.json gained encoder sha256s: commit it" >&2
bash "$shared/gpu/stage.sh" cifar10 wheels
bash tools/gpu/pinned.sh "$pin"
bash tools/gpu/pinned.sh --check .gpu/pinned
bash tools/gpu/travel_light.sh   # weights/, results/, nbs/, tests/ out of the calls
echo
echo "staged AFF for ${todo[*]} (resuming: ${resumed[*]:-none}), code $pin; weights/, results/, nbs/ and tests/ are out of"
echo "the working tree (git sparse-checkout disable after the lease). The calls, back to back (kind nvidia-h100-x1 or"
echo "nvidia-h200; a machine idle for 30 s is given back), each starting with: for r in .gpu/*/receive.sh; do sh \$r; done"
echo "  carry .gpu/cifar10-1, then -2, -3, -4"
for d in .gpu/aff-e-* .gpu/aff-s-*-[0-9]*; do echo "  carry $d   ($(du -sm $d | cut -f1) MB: pair it with cifar10-4 or another where the two stay under 62 MB)"; done
echo "  launch, carrying .gpu/wheels and .gpu/pinned:"
echo "    for r in .gpu/*/receive.sh; do sh \$r; done; cd /root/swaro/code && SWARO_COMMIT=\$(cat PINNED_COMMIT)" \
     "S=/root/swaro/repro RUNS='$(printf '%s:none:0 ' "${todo[@]}" | sed 's/ $//')' PRELOAD='${todo[*]}' GPUS=0 HELP= PROCS=1" \
     "DEADLINE=$DEADLINE EVAL_FROM=f16 TSNE=0 EVAL=\"\$(cat tools/gpu/plans/aff-eval.txt)\" setsid nohup bash" \
     "tools/gpu/repro_session.sh > /root/swaro/repro.log 2>&1 < /dev/null &"
echo "  poll until DONE (append the first poll to the launch: ... < /dev/null & sleep 5; WAIT=500 ...):"
"$PY" -c "import json; print('    ' + json.load(open('tools/gpu/plans/aff-lease.json'))['poll'])"
echo "  then polls with WAIT=5 until every piece is back (a cut state: six pieces, two calls); copy each call's files out"
echo "  at once; give_back; land: land_five_seed.py land PACK --logs <date>-<letter>-<card>-aff<k> --weights <pieces>"
echo "  --commit $pin --plan tools/gpu/plans/aff-lease.json; then, in the same session, keep in weights/ what came back"
echo "  (tools/pack_weights.py): a new cut state (--state .gpu/aff/RUN-aff-partial.pt --name RUN-aff-partial.state), or a"
echo "  finished model's AFF network (float16: --state .gpu/aff/RUN-aff.pt --name RUN-aff.state), retiring the state it"
echo "  replaces (--retire-state RUN-aff-partial.state); the records go to results/eval/aff/."
