#!/usr/bin/env bash
# One commit for every lease of a multi-lease experiment (the five-seed set, issue #34): the code of REF (a tag or commit),
# whatever main has become since, as an ignored folder that travels with a device call, plus the data those leases read from
# results/ as it stands in this checkout now (run records, weights checksums, evaluation records and pieces of earlier leases).
#   bash tools/gpu/pinned.sh five-seed-v1            # -> .gpu/pinned/ (run it again before every lease: the data changes)
#   PIN_TO=/root/swaro/evalcode bash tools/gpu/pinned.sh <commit> .gpu/pinned-eval   # a second commit beside it: its
#     receive.sh copies it to PIN_TO on the machine (a lease that trains with one commit and evaluates with another)
# What .gpu/pinned/ holds: `git archive REF` of swaro_nb/ tools/ setup.py settings.ini; PINNED_COMMIT (REF's full commit) and
# PINNED (REF, its commit, when this was made); the results/ files of PIN_DATA (default: results/weights-*.json,
# results/runs/c10-200-*/{config,run}.json and metrics.jsonl, results/eval/five-seed/*.json, results/eval/parts/c10-200-*,
# the parts' heads included); _site/pyautoattack (the reference AutoAttack, pyautoattack 0.2.0, without its 44 MB of
# examples; from the wheel, downloaded once into PIN_CACHE, else, PIN_NO_DOWNLOAD=1 or offline, the installed copy) and receive.sh. On the GPU machine, `for r in .gpu/*/receive.sh; do sh $r; done` (the staging's own loop) runs
# receive.sh: it installs _site into /tmp/site and copies the folder to /root/swaro/code; the launch then runs from there:
#   cd /root/swaro/code && SWARO_COMMIT=$(cat PINNED_COMMIT) ... setsid nohup bash tools/gpu/repro_session.sh ...
# so the records of every lease name REF's commit and its code ran them. Carry .gpu/pinned in the call that launches.
#   bash tools/gpu/pinned.sh --check [DEST]          # before a lease's first call: exit 1, naming the files, when results/
#     has changed since DEST was made (a run record or weights checksum the pinned code would not find: pin again)
set -euo pipefail
err() { echo "pinned.sh: error: $*" >&2; exit 2; }
copy_data() {   # the results/ files of PIN_DATA into $1, as they are in this checkout now; prints how many
  local n=0 g f
  for g in ${PIN_DATA:-results/weights-*.json results/runs/c10-200-*/config.json results/runs/c10-200-*/run.json \
            results/runs/c10-200-*/metrics.jsonl results/eval/five-seed/*.json results/eval/parts/c10-200-*}; do
    for f in $g; do [ -e "$f" ] || continue; mkdir -p "$1/$(dirname "$f")"; cp -r "$f" "$1/$(dirname "$f")/"; n=$((n + 1)); done
  done; echo $n; }
[ -d results/runs ] || err "no results/runs here: run it from the checkout's root with results/ in the working tree" \
  "(tools/gpu/travel_light.sh leaves it out during a lease: git sparse-checkout disable first)"
if [ "${1:-}" = --check ]; then
  dest=${2:-.gpu/pinned}; [ -f "$dest/PINNED" ] || err "$dest holds no pinned folder (bash tools/gpu/pinned.sh REF $dest)"
  tmp=$(mktemp -d); trap 'rm -rf "$tmp"' EXIT; copy_data "$tmp" > /dev/null; mkdir -p "$tmp/results" "$dest/results"
  if stale=$(diff -rq "$tmp/results" "$dest/results" | grep -v "^Only in $dest/"); [ -z "$stale" ]; then
    echo "pinned.sh: $dest's data is this checkout's results/ ($(sed -n 2p "$dest/PINNED"))"; exit 0; fi
  echo "$stale" | sed "s|$tmp/||g" >&2
  to=$(sed -n 's/^to //p' "$dest/PINNED"); echo "pinned.sh: $dest is stale: results/ changed since it was made; pin again:" \
    "${to:+PIN_TO=$to }bash tools/gpu/pinned.sh $(sed -n 2p "$dest/PINNED" | cut -d' ' -f2) $dest" >&2; exit 1
fi
ref=${1:?usage: bash tools/gpu/pinned.sh TAG-OR-COMMIT [DEST] (e.g. five-seed-v1), or --check [DEST]}; dest=${2:-.gpu/pinned}
git rev-parse --git-dir > /dev/null 2>&1 || err "run it from a git checkout of the project"
sha=$(git rev-parse --verify --quiet "$ref^{commit}") || err "$ref is neither a tag nor a commit here (git tag -l; git log --oneline)"
for f in swaro_nb/robustness.py tools/gpu/repro_session.sh tools/gpu/common.sh tools/gpu/ref_extras.py tools/gpu/poll.sh; do
  git cat-file -e "$sha:$f" 2> /dev/null || err "$ref ($sha) has no $f: pin a commit that holds the five-seed tools (tools/gpu/README.md)"; done
# git grep, not `git show | grep -q`: under pipefail, grep -q's early exit can kill git show with SIGPIPE and fail the check
git grep -q EVAL_FROM "$sha" -- tools/gpu/repro_session.sh || err "$ref's repro_session.sh has no EVAL_FROM: pin a later commit"
git grep -q REF_AUTOATTACK_ATTACKS "$sha" -- swaro_nb/eval_attacks.py || err "$ref's library has no reference AutoAttack: pin a later commit"
case "$dest" in .gpu/*) ;; *) [ -n "${PIN_ANY_DEST:-}" ] || err "DEST $dest is not under .gpu/ (ignored by git; PIN_ANY_DEST=1 to allow)";; esac
rm -rf "$dest"; mkdir -p "$dest"
git archive "$sha" swaro_nb tools setup.py settings.ini | tar -x -C "$dest"
# data of this checkout that the leases read from results/ (copied as they are now, ignored files such as the parts' heads too)
n=$(copy_data "$dest")
# the reference AutoAttack, its code alone (the wheel's examples/ hold a 44 MB model and are never imported)
cache=${PIN_CACHE:-$HOME/.cache/swaro-stage}; PY=${PYTHON:-python3}; mkdir -p "$cache" "$dest/_site"
whl=$(ls "$cache"/pyautoattack-0.2.0-*.whl 2> /dev/null | head -1 || true)
if [ -z "$whl" ] && [ -z "${PIN_NO_DOWNLOAD:-}" ]; then $PY -m pip download -q --no-deps --only-binary=:all: -d "$cache" pyautoattack==0.2.0 > /dev/null 2>&1 || true
  whl=$(ls "$cache"/pyautoattack-0.2.0-*.whl 2> /dev/null | head -1 || true); fi
if [ -n "$whl" ]; then
  $PY - "$whl" "$dest/_site" <<'PY'
import sys, zipfile
with zipfile.ZipFile(sys.argv[1]) as z:
    keep = [m for m in z.namelist() if m.startswith(('pyautoattack/', 'pyautoattack-')) and '/examples/' not in m]
    z.extractall(sys.argv[2], keep)
PY
  src="wheel $(basename "$whl")"
else   # no index here: the installed copy of the same version
  site=$($PY -c "import importlib.metadata as m, pathlib; d = m.distribution('pyautoattack'); assert d.version == '0.2.0', d.version; print(pathlib.Path(d.locate_file('pyautoattack')).parent)" 2> /dev/null) \
    || err "pyautoattack 0.2.0 is neither downloadable nor installed here (pip install pyautoattack==0.2.0)"
  (cd "$site" && tar -cf - --exclude='examples' --exclude='__pycache__' pyautoattack pyautoattack-0.2.0.dist-info) | tar -x -C "$dest/_site"
  src="the installed copy in $site"
fi
[ -f "$dest/_site/pyautoattack/autoattack.py" ] || err "pyautoattack was not unpacked into $dest/_site"
echo "$sha" > "$dest/PINNED_COMMIT"
printf 'ref %s\ncommit %s\nmade %s from %s\ndata %s files of results/ (this checkout at %s)\npyautoattack from %s\nto %s\n' "$ref" \
  "$sha" "$(date -u +%FT%TZ)" "$(pwd)" "$n" "$(git rev-parse --short HEAD)" "$src" "${PIN_TO:-/root/swaro/code}" > "$dest/PINNED"
cat > "$dest/receive.sh" <<'R'
#!/bin/sh
# the pinned code: pyautoattack into /tmp/site, the folder to PIN_TO of pinned.sh (default /root/swaro/code; launch from there
# with SWARO_COMMIT=$(cat PINNED_COMMIT));
# PINNED_SITE and PINNED_TO change both places (a dry run on a CPU)
set -e
here=$(cd "$(dirname "$0")" && pwd); site=${PINNED_SITE:-/tmp/site}; to=${PINNED_TO:-@TO@}
mkdir -p "$site" && cp -r "$here/_site/." "$site/"
rm -rf "$to" && mkdir -p "$(dirname "$to")" && cp -r "$here" "$to"
echo "pinned: $(head -2 "$here/PINNED" | tr '\n' ' ')-> $to"
R
sed -i "s|@TO@|${PIN_TO:-/root/swaro/code}|" "$dest/receive.sh"
echo "pinned $ref ($sha) into $dest: $(du -sh "$dest" | cut -f1), $n data files; launch with SWARO_COMMIT=$(cut -c1-7 "$dest/PINNED_COMMIT")... (cat PINNED_COMMIT)"
