#!/usr/bin/env bash
# The README's main job: set up, then a real train + evaluate run.
#   bash tools/main.sh              # CPU: the `smoke` preset (real SwARo on a class-balanced CIFAR-10 subset, a few minutes)
#   bash tools/main.sh c10-200      # GPU: a named preset (see swaro_nb.train.PRESETS) with full evaluation budgets
# Outputs: runs/<preset>/ (config, metrics, checkpoint, curves, record) and runs/<preset>-results/ (evaluation JSON, tables, t-SNE).
set -euo pipefail
cd "$(dirname "$0")/.."
bash tools/setup.sh
preset=${1:-smoke}
.venv/bin/swaro_data summary --out runs/data
.venv/bin/swaro_train --preset "$preset" --name "$preset"
if [ "$preset" = smoke ]; then extra=(--smoke --le-epochs 30 --rle-epochs 1 --train-per-class 100 --n-test 200 --tsne); else extra=(--table3 --tsne); fi
.venv/bin/swaro_eval "runs/$preset" --out "runs/$preset-results" "${extra[@]}"
echo "main job done: runs/$preset/ and runs/$preset-results/"
