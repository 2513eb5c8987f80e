#!/usr/bin/env bash
# The README's main job: set up, then a real run. On a machine without a GPU this is the smoke
# preset on real CIFAR-10; with a GPU, pass a preset name (e.g. `bash tools/main.sh c10-paper`).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
.venv/bin/swaro_data summary --out runs/data
