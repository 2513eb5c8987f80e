#!/usr/bin/env bash
# The README's main job: set up, then a real train + evaluate run.
#   bash tools/main.sh              # CPU: the `smoke` preset (real SwARo on a class-balanced CIFAR-10 subset): about 5 min on 2 free
#                                   # cores the first time (set-up ~3 min with the CIFAR-10 download, then ~2 min of work), as the README says
#   bash tools/main.sh c10-200      # GPU: a named preset (see swaro_nb.config.PRESETS) with full evaluation budgets
# Outputs: runs/data/ (dataset summary, sample grids), runs/<preset>/ (config, metrics, checkpoint, curves, record)
# and runs/<preset>-results/ (evaluation JSON, tables beside the paper's, t-SNE).
set -euo pipefail
cd "$(dirname "$0")/.."
start=$(date +%s)
bash tools/setup.sh
preset=${1:-smoke}
echo "== dataset summary and sample grids -> runs/data/"
.venv/bin/swaro_data summary --out runs/data
if [ "$preset" = smoke ]; then
  echo "== training the smoke preset on the CPU -> runs/smoke/ (SwARo, 6 epochs on 1,000 CIFAR-10 images; about 35 s on 2 free cores)"
  extra=(--smoke --le-epochs 30 --rle-epochs 1 --train-per-class 100 --n-test 200 --tsne); took="; about 70 s on 2 free cores"
else
  echo "== training preset $preset -> runs/$preset/ (resumes from its checkpoint when run again)"
  extra=(--table3 --tsne); took=""
fi
.venv/bin/swaro_train --preset "$preset" --name "$preset"
echo "== evaluating runs/$preset -> runs/$preset-results/ (linear and robust linear heads, white-box attacks, t-SNE$took)"
.venv/bin/swaro_eval "runs/$preset" --out "runs/$preset-results" "${extra[@]}"
echo "== main job done in $(( $(date +%s) - start ))s: runs/$preset/ and runs/$preset-results/"
