#!/usr/bin/env bash
# Stage a short lease of reference extras (plans/extras.md): the reference AutoAttack at COLUMN on the LE heads of committed
# five-seed models (tools/gpu/ref_extras.py, the five-seed set's eval pin), for a lease too short to train anything.
#   bash tools/gpu/plans/extras-stage.sh l1_12 c10-200-rand-s4 [RUN]   # at most two runs: one carried folder of 48 MB
# It stages CIFAR-10 and the wheels (../shared/gpu/stage.sh), the runs' float16 encoders and heads from the hub (from git
# history once retired: land_five_seed.py stage --from-hub) into .gpu/e-x, and .gpu/pinned at the eval pin
# (tools/gpu/plans/five-seed-pins.json), leaves weights/, results/, nbs/ and tests/ out of the calls
# (tools/gpu/travel_light.sh; `git sparse-checkout disable` after the lease) and prints the calls.
set -euo pipefail
cd "$(dirname "$0")/../../.."
err() { echo "extras-stage.sh: error: $*" >&2; exit 2; }
PY=${PYTHON:-.venv/bin/python}; [ -x "$PY" ] || PY=python3
col=${1:-}; shift || true
case $col in l1_12|l2_05) ;; *) err "the column: l1_12 or l2_05 (the reference AutoAttack's extra columns), not '${col}'";; esac
[ $# -ge 1 ] && [ $# -le 2 ] || err "one or two runs (two encoders and heads fill one 48-MB carried folder)"
git sparse-checkout disable 2>/dev/null || true   # weights/ and results/ back (a staging before left them out)
for n in "$@"; do
  [ -f results/eval/five-seed/$n-eval.json ] || err "$n has no evaluation record in results/eval/five-seed/ (whose LE head it attacks)"
  [ ! -e results/eval/five-seed/$n-ref-extras-$col.json ] || err "$n's reference $col has landed already (results/eval/five-seed/$n-ref-extras-$col.json)"
done
shared=${SHARED:-../shared}; [ -f "$shared/gpu/stage.sh" ] || err "no $shared/gpu/stage.sh (SHARED=path to the shared folder)"
pin=$("$PY" -c "import json; print(json.load(open('tools/gpu/plans/five-seed-pins.json'))['eval'])")
"$PY" tools/gpu/land_five_seed.py stage --from-hub "$@" --to .gpu/e-x
bash "$shared/gpu/stage.sh" cifar10 wheels
bash tools/gpu/pinned.sh "$pin"   # after the staging, which records the encoders' sha256 in results/weights-five-seed.json
bash tools/gpu/travel_light.sh   # weights/, results/, nbs/, tests/ out of the calls (64 MiB a call)
echo
echo "staged the reference $col of $* at the eval pin $pin; weights/, results/, nbs/ and tests/ are out of the working tree (git sparse-checkout disable after the lease)."
echo "The calls, back to back (a machine idle for 30 s is given back); a run takes about 310-375 s on an H100 (leases z, ab):"
echo "  1-4. carry .gpu/cifar10-1 ... -4, each: sh .gpu/cifar10-N/receive.sh"
echo "  5. carry .gpu/e-x: sh .gpu/e-x/receive.sh"
echo "  launch, carrying .gpu/wheels and .gpu/pinned (TL: status's budget_left_s less about 120 s):"
echo "    for r in .gpu/*/receive.sh; do sh \$r; done > /dev/null; TL=<seconds> COLUMN=$col RUNS=\"$*\" bash tools/gpu/plans/extras-launch.sh"
echo "  poll until DONE (calls of under 10 minutes; copy each call's pack.tar out of files_at at once):"
echo "    W=280 bash tools/gpu/plans/extras-launch.sh --poll"
echo "  then give_back, and land: python tools/gpu/land_five_seed.py land PACK --logs <date>-<letter>-<machine>-extras --pins tools/gpu/plans/five-seed-pins.json"
