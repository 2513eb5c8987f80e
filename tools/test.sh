#!/usr/bin/env bash
# The README's test command (CI runs exactly this through .ci/run). Sets up, then:
#  1. notebooks clean and library in sync (nbdev_export / nbdev_clean change no tracked file),
#  2. every library notebook's tests (nbdev_test semantics, tools/run_nbs.py; executed copies kept for the docs),
#  3. the docs site built offline into _docs/ (MathJax fetched once from npm, sha-checked),
#  4. pytest tests/ (CLI end to end, resume, bad input, the site in headless Chromium, the README's commands as printed;
#     its main job too with SWARO_TEST_MAIN=1, which adds about 3 minutes), 2 worker processes (pytest-xdist, a test
#     file per worker at a time: module fixtures are built once) with one torch thread each (OMP_NUM_THREADS=1, as the
#     notebooks run): two threads per worker would oversubscribe the cores, and the tests' tiny models gain nothing from
#     a second thread (07a_robustness's cells: 95 s on one thread, 244 s on two, on 2 cores).
# Ends with one line `N passed, N failed, N skipped` summed over the sync check, notebooks and pytest tests (followed by
# `, N expected failures` when pytest reports any xfail: they are counted on their own, not as skipped).
# Every temporary file goes under one folder made for this run (TMPDIR; its logs, pytest's folders, the notebooks'
# scratch files, IPython's, Jupyter's, matplotlib's and torch's compile cache), removed when the command exits: two checkouts can test at
# once, and nothing is left outside the clone.
# Chromium (Debian's `chromium`, for the browser checks of the docs) is installed with apt-get only under CI
# (CI set) or when SWARO_INSTALL_BROWSER=1, in the background while the notebooks and the docs run (pytest waits for it);
# otherwise, when it is missing, those checks are skipped and say so.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
tmp=$(mktemp -d "${TMPDIR:-/tmp}/swaro_test.XXXXXX") || { echo "cannot make a temporary folder"; echo "0 passed, 1 failed"; exit 1; }
trap 'rm -rf "$tmp"' EXIT
export TMPDIR=$tmp IPYTHONDIR=$tmp/ipython JUPYTER_RUNTIME_DIR=$tmp/jupyter MPLCONFIGDIR=$tmp/matplotlib
step() { echo "== $*"; }
since() { echo "($(( $(date +%s) - $1 ))s)"; }
bash tools/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
# after the set-up (which keeps pip's cache): the caches tools write under the home folder go to the temporary folder too
export XDG_CACHE_HOME=$tmp/cache XDG_CONFIG_HOME=$tmp/config npm_config_cache=$tmp/npm TORCHINDUCTOR_CACHE_DIR=$tmp/torchinductor
browser=""   # the pid of a background chromium install, if one runs
if ! command -v chromium >/dev/null 2>&1 && [ ! -x /usr/bin/chromium ]; then
  if [ -n "${CI:-}" ] || [ "${SWARO_INSTALL_BROWSER:-}" = 1 ]; then
    why=$([ -n "${CI:-}" ] && echo "CI is set" || echo "SWARO_INSTALL_BROWSER=1")
    # in the background, beside the sync check, the notebooks and the docs (network and disk, little CPU): pytest waits for it
    step "installing Debian's chromium with apt-get for the browser checks of the docs ($why; about 1-2 min, in the background until pytest)"
    sudo=""; [ "$(id -u)" = 0 ] || sudo="sudo"
    ( ($sudo apt-get update -qq && DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq chromium >/dev/null) \
      || echo "could not install chromium; the browser checks of the docs will fail" ) > "$tmp/browser.log" 2>&1 < /dev/null &
    browser=$!
  else
    echo "== browser checks of the docs skipped: chromium is not installed (SWARO_INSTALL_BROWSER=1 bash tools/test.sh installs it with apt-get)"
  fi
fi
PY=.venv/bin/python
passed=0; failed=0; skipped=0; xfailed=0
count() { passed=$((passed + $1)); failed=$((failed + $2)); skipped=$((skipped + ${3:-0})); }

t=$(date +%s); step "1. notebooks clean and library in sync"
before=$(git status --porcelain)
.venv/bin/nbdev_export && .venv/bin/nbdev_clean
after=$(git status --porcelain)
if [ "$before" == "$after" ]; then echo "in sync $(since $t)"; count 1 0
else echo "nbdev_export/nbdev_clean changed files (commit their result):"; diff <(echo "$before") <(echo "$after"); git diff --stat; count 0 1; fi

t=$(date +%s); step "2. notebook tests (every library notebook on the CPU, 2 at a time; a few minutes)"
rm -rf _proc_exec
$PY tools/run_nbs.py --save _proc_exec | tee "$tmp/nbs.log"
line=$(grep -E '^notebooks: [0-9]+ passed, [0-9]+ failed' "$tmp/nbs.log" | tail -1)
if [ -n "$line" ]; then count $(echo "$line" | sed -E 's/notebooks: ([0-9]+) passed, ([0-9]+) failed/\1 \2/'); else count 0 1; fi
# pytest's test_data_notebook_leaves_nothing reads this run's lines instead of running nbs/00_data.ipynb again
[ -n "$line" ] && export SWARO_NBS_LOG="$tmp/nbs.log"
echo "notebook tests $(since $t)"

step "2b. README.md generated from nbs/index.ipynb"
if $PY tools/build_docs.py --readme --exec-dir _proc_exec --readme-out "$tmp/README.md" >/dev/null && diff -q README.md "$tmp/README.md" >/dev/null; then
  echo "README in sync"; count 1 0
else echo "README.md differs from what nbs/index.ipynb generates (python tools/build_docs.py --readme --exec-dir _proc_exec):"; diff README.md "$tmp/README.md" | head -20; count 0 1; fi

t=$(date +%s); step "3. docs site into _docs/ (about 1 min)"
if $PY tools/build_docs.py --exec-dir _proc_exec --out _docs; then export SWARO_DOCS_BUILT=1; else echo "docs build failed"; count 0 1; fi
echo "docs $(since $t)"

if [ -n "$browser" ]; then   # the chromium install started in the background above
  t=$(date +%s); wait "$browser"; cat "$tmp/browser.log"; echo "chromium install waited for $(since $t)"
fi
t=$(date +%s); step "4. pytest (2 worker processes; a few minutes)"
OMP_NUM_THREADS=1 MKL_NUM_THREADS=1 $PY -m pytest tests -n 2 --dist loadfile -q -rs --durations=15 -p no:cacheprovider --basetemp="$tmp/pytest" --junitxml="$tmp/pytest.xml"
read p f s x < <(XML="$tmp/pytest.xml" $PY - <<'PYEOF'
import os, xml.etree.ElementTree as ET
try:
    r = ET.parse(os.environ['XML']).getroot(); s = r if r.tag == 'testsuite' else r.find('testsuite')
    t, fl, er, sk = (int(s.get(k, 0)) for k in ('tests', 'failures', 'errors', 'skipped'))
    xf = sum(1 for e in s.iter('skipped') if e.get('type') == 'pytest.xfail')   # junit counts an expected failure as skipped
    print(t - fl - er - sk, fl + er, sk - xf, xf)
except Exception as e: print(0, 1, 0, 0)
PYEOF
)
count "$p" "$f" "$s"; xfailed=$((xfailed + x))
echo "pytest $(since $t)"
step "done in $(( $(date +%s) - start ))s"
# expected failures (pytest's xfail) on their own, never among the skipped, and only when there are any
echo "$passed passed, $failed failed, $skipped skipped$([ "$xfailed" -gt 0 ] && echo ", $xfailed expected failures")"
[ "$failed" -eq 0 ]
