#!/usr/bin/env bash
# Make the working tree light enough for the device calls, just before the first one: a call carries at most 64 MiB, the
# working tree (tracked and untracked files git does not ignore) and the folders it names in carry together, and a staged
# folder is up to 48 MB.
#   bash tools/gpu/travel_light.sh          # after staging; `git sparse-checkout disable` after the lease brings all back
# It leaves out of the working tree, by sparse-checkout, what no staged lease reads there: weights/ (the committed models,
# over 64 MiB), results/, nbs/ and tests/ (the launches run the pinned copy in .gpu/pinned, which holds the records it
# needs; polls run tools/). Not for the leases that run the notebooks from the working tree (components.sh, compare.sh).
# Then it checks that what is left fits in one call beside the largest folder under .gpu/ that a call carries (one with
# a receive.sh: stores such as .gpu/aff/ never travel), and beside the launch's folders together (.gpu/wheels,
# .gpu/pinned, .gpu/pinned-eval). While the tree is sparse, pinned.sh and land_five_seed.py refuse to run: they read
# results/.
set -euo pipefail
cd "$(dirname "$0")/../.."
LIMIT=$((64 * 1048576))
git sparse-checkout set --no-cone '/*' '!/weights/' '!/results/' '!/nbs/' '!/tests/'
tree=$({ git ls-files -z --cached --others --exclude-standard | xargs -0 -r stat -c %s -- 2>/dev/null || true; } \
       | awk '{s += $1} END {print s + 0}')   # the files present: those left out are skipped
size() { local s=0 d; for d in "$@"; do [ -d "$d" ] && s=$((s + $(du -sb "$d" | cut -f1))); done; echo $s; }
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
big=0; name=none
for d in .gpu/*/; do
  [ -f "$d/receive.sh" ] || continue   # a carried folder has its receive.sh; stores such as .gpu/aff/ never travel
  s=$(size "$d"); [ "$s" -gt "$big" ] && { big=$s; name=$d; }
done
launch=$(size .gpu/wheels .gpu/pinned .gpu/pinned-eval)
echo "travel_light: the working tree $(mib "$tree") (weights/, results/, nbs/, tests/ left out); largest staged folder" \
     "$name $(mib "$big"); the launch's folders $(mib "$launch")"
for s in $big $launch; do
  [ $((tree + s)) -le $LIMIT ] || { echo "travel_light: error: $(mib $((tree + s))) is over the 64 MiB a call carries" >&2; exit 2; }
done
echo "travel_light: room left in a call with the largest folder: $(mib $((LIMIT - tree - big)))"
