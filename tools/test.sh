#!/usr/bin/env bash
# The README's test command (CI runs exactly this through .ci/run). Sets up, then:
#  1. notebooks clean and library in sync (nbdev_export / nbdev_clean change no tracked file),
#  2. every library notebook's tests (nbdev_test semantics, tools/run_nbs.py; executed copies kept for the docs),
#  3. the docs site built offline into _docs/,
#  4. pytest tests/ (CLI end to end, resume, bad input, the site in headless Chromium).
# Ends with one line `N passed, N failed` summed over the sync check, notebooks and pytest tests.
set -uo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash tools/setup.sh || { echo "setup failed"; echo "0 passed, 1 failed"; exit 1; }
if ! command -v chromium >/dev/null 2>&1; then
  echo "== installing chromium (docs test)"
  (apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq chromium >/dev/null) || echo "could not install chromium"
fi
PY=.venv/bin/python
passed=0; failed=0
count() { passed=$((passed + $1)); failed=$((failed + $2)); }

echo "== 1. notebooks clean and library in sync"
before=$(git status --porcelain)
.venv/bin/nbdev_export && .venv/bin/nbdev_clean
after=$(git status --porcelain)
if [ "$before" == "$after" ]; then echo "in sync"; count 1 0
else echo "nbdev_export/nbdev_clean changed files (commit their result):"; diff <(echo "$before") <(echo "$after"); git diff --stat; count 0 1; fi

echo "== 2. notebook tests"
rm -rf _proc_exec
$PY tools/run_nbs.py --save _proc_exec | tee /tmp/swaro_nbs.log
line=$(grep -E '^notebooks: [0-9]+ passed, [0-9]+ failed' /tmp/swaro_nbs.log | tail -1)
if [ -n "$line" ]; then count $(echo "$line" | sed -E 's/notebooks: ([0-9]+) passed, ([0-9]+) failed/\1 \2/'); else count 0 1; fi

echo "== 2b. README.md generated from nbs/index.ipynb"
if $PY tools/build_docs.py --readme --exec-dir _proc_exec --readme-out /tmp/swaro_README.md >/dev/null && diff -q README.md /tmp/swaro_README.md >/dev/null; then
  echo "README in sync"; count 1 0
else echo "README.md differs from what nbs/index.ipynb generates (python tools/build_docs.py --readme --exec-dir _proc_exec):"; diff README.md /tmp/swaro_README.md | head -20; count 0 1; fi

echo "== 3. docs site"
if $PY tools/build_docs.py --exec-dir _proc_exec --out _docs; then export SWARO_DOCS_BUILT=1; else echo "docs build failed"; count 0 1; fi

echo "== 4. pytest"
$PY -m pytest tests -q -p no:cacheprovider --junitxml=/tmp/swaro_pytest.xml
read p f < <($PY - <<'PYEOF'
import xml.etree.ElementTree as ET
try:
    r = ET.parse('/tmp/swaro_pytest.xml').getroot(); s = r if r.tag == 'testsuite' else r.find('testsuite')
    t, fl, er, sk = (int(s.get(k, 0)) for k in ('tests', 'failures', 'errors', 'skipped'))
    print(t - fl - er - sk, fl + er)
except Exception as e: print(0, 1)
PYEOF
)
count "$p" "$f"
echo "== done in $(( $(date +%s) - start ))s"
echo "$passed passed, $failed failed"
[ "$failed" -eq 0 ]
