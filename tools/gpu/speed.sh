#!/usr/bin/env bash
# GPU machine: the engine's speed records (tools/gpu/speed.py): the card's bf16 matmul peak, the fast paths against the
# eager step (AGREEMENT=1, one GPU only), then for each variant and batch a real SwARo epoch and its per-phase profile.
# GPUS=N > 1 runs it under torchrun (data-parallel at the same global batch). Records go to
# $OUT/speed/<card>-<commit>[-ddpN]-speed.json (appended after each item, so a cut job keeps what it measured); copy that
# file to results/speed/ and the bench notebook shows it.
# Usage: AGREEMENT=1 bash tools/gpu/speed.sh                     (one GPU: variants base,attack,all at batch 512)
#        GPUS=4 VARIANTS=base,all bash tools/gpu/speed.sh        (four GPUs)
#        VARIANTS=base BATCHES=512,256 SPEED_S=300 bash tools/gpu/speed.sh
#        VARIANTS=all-ro KERNELS=1 bash tools/gpu/speed.sh     (and a torch.profiler kernel table of one more epoch per variant)
set -uo pipefail
source tools/gpu/common.sh
G=${GPUS:-1}
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE 'h100|h200|a100|v100|l40s|b200' | head -1 | tr 'A-Z' 'a-z')
name=${card:-gpu}-${SWARO_COMMIT:-unknown}$([ "$G" -gt 1 ] && echo "-ddp$G")-speed
mkdir -p "$OUT/speed"
launch=(python3); [ "$G" -gt 1 ] && launch=(python3 -m torch.distributed.run --standalone --nproc_per_node "$G")
timeout ${SPEED_S:-540} "${launch[@]}" tools/gpu/speed.py --out "$OUT/speed/$name.json" --variants ${VARIANTS:-base,attack,all} \
  --batches ${BATCHES:-512} ${AGREEMENT:+--agreement} ${KERNELS:+--kernels} --tag "${TAG:-$([ "$G" -gt 1 ] && echo "ddp$G")}" 2>&1 | tee "$OUT/speed/$name.log"
echo "speed exit ${PIPESTATUS[0]}"; ls -la "$OUT/speed"
