#!/usr/bin/env bash
# Stage the snapshot test's next one-GPU lease (plans/snapshot.md) in one command, check what it staged, keep weights/ out
# of the device calls, and print the calls in their order.
#   bash tools/gpu/plans/snapshot-stage.sh 1 [COMMIT]   # lease 1: train c10-paper-snap-s0 from epoch 0 with COMMIT's code
#                                                       #   (default HEAD; write it down: lease 2-h1 reads it from the record)
#   bash tools/gpu/plans/snapshot-stage.sh 2-h1         # lease 2-h1: resume it from the state kept in weights/, to epoch 400
# Both stage CIFAR-10 and the wheels (../shared/gpu/stage.sh) and .gpu/pinned (tools/gpu/pinned.sh with the snapshot
# records); 2-h1 also joins weights/c10-paper-snap-s0.state (every piece checked), checks its sha256 against
# results/weights-snapshot.json and cuts it into .gpu/snap-1..3 (at most 48 MB a call). Afterwards weights/ is left out of
# the working tree by sparse-checkout (`git sparse-checkout disable` brings it back): a call carries at most 64 MiB.
set -euo pipefail
cd "$(dirname "$0")/../../.."
err() { echo "snapshot-stage.sh: error: $*" >&2; exit 2; }
PY=${PYTHON:-.venv/bin/python}; [ -x "$PY" ] || PY=python3
RUN=c10-paper-snap-s0
lease=${1:-}; [ "$lease" = 1 ] || [ "$lease" = 2-h1 ] || err "the lease: 1 or 2-h1 (lease 3 is snapshot.md's 'With one GPU')"
shared=${SHARED:-../shared}; [ -f "$shared/gpu/stage.sh" ] || err "no $shared/gpu/stage.sh (SHARED=path to the shared folder)"
git sparse-checkout disable 2>/dev/null || true   # weights/ back while staging reads it
if [ "$lease" = 1 ]; then
  commit=$(git rev-parse "${2:-HEAD}") || err "no commit ${2:-HEAD}"
  [ ! -e results/runs/$RUN/run.json ] || err "results/runs/$RUN/run.json exists: lease 1 has landed; stage 2-h1"
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
PIN_DATA="results/weights-*.json results/runs/c10-paper-snap-*/config.json results/runs/c10-paper-snap-*/run.json results/runs/c10-paper-snap-*/metrics.jsonl" \
  bash tools/gpu/pinned.sh "$commit"
git sparse-checkout set --no-cone '/*' '!/weights/'
echo
echo "staged lease $lease of the snapshot test, code $commit; weights/ is out of the working tree (git sparse-checkout disable after the lease)."
echo "The calls, back to back (a machine idle for 30 s is given back):"
echo "  1-4. carry .gpu/cifar10-1 ... -4, each: sh .gpu/cifar10-N/receive.sh"
if [ "$lease" = 2-h1 ]; then
  echo "  5-7. carry .gpu/snap-1, -2, -3, each: mkdir -p /root/swaro/stage/snap-ck; cp .gpu/snap-*/* /root/swaro/stage/snap-ck/; ls /root/swaro/stage/snap-ck"
  plan=tools/gpu/plans/snapshot-lease2-h1.json
else plan=tools/gpu/plans/snapshot-lease.json; fi
echo "  launch, carrying .gpu/wheels and .gpu/pinned (set DEADLINE from status's budget_left_s less about 150 s):"
"$PY" -c "import json,sys; p=json.load(open(sys.argv[1])); print('    ' + p['launch']); print('  poll until DONE:'); print('    ' + p['poll'])" $plan
echo "  then the calls that bring the pieces back (snapshot.md), give_back, and land as snapshot.md says."
