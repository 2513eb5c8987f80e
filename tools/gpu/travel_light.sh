#!/usr/bin/env bash
# Make the working tree light enough for the device calls, just before the first one: a call carries at most 64 MiB, the
# working tree (tracked files) and the folders it names in carry together, and a staged folder is up to 48 MB.
#   bash tools/gpu/travel_light.sh          # after staging; `git sparse-checkout disable` after the lease brings all back
# It leaves out of the working tree, by sparse-checkout, what no device call reads: weights/ (the committed models, over
# 64 MiB), results/, nbs/ and tests/ (the launches run the pinned copy in .gpu/pinned, which holds the records it needs;
# polls run tools/). Then it checks that the tracked files left and the largest folder under .gpu/ fit in one call.
set -euo pipefail
cd "$(dirname "$0")/../.."
LIMIT=$((64 * 1048576))
git sparse-checkout set --no-cone '/*' '!/weights/' '!/results/' '!/nbs/' '!/tests/'
tree=$({ git ls-files -z | xargs -0 -r stat -c %s -- 2>/dev/null || true; } | awk '{s += $1} END {print s + 0}')   # those left
big=0; name=none
for d in .gpu/*/; do
  [ -d "$d" ] || continue
  s=$(du -sb "$d" | cut -f1); [ "$s" -gt "$big" ] && { big=$s; name=$d; }
done
mib() { awk -v b="$1" 'BEGIN {printf "%.1f MiB", b / 1048576}'; }
echo "travel_light: the working tree $(mib "$tree") (weights/, results/, nbs/, tests/ left out); largest staged folder $name $(mib "$big")"
if [ $((tree + big)) -gt $LIMIT ]; then
  echo "travel_light: error: $(mib $((tree + big))) is over the 64 MiB a call carries" >&2; exit 2
fi
echo "travel_light: room left in a call with that folder: $(mib $((LIMIT - tree - big)))"
