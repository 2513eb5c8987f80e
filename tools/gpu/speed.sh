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
#        GPUS=4 VARIANTS=attack FEATURE_PASS=one-rank,sharded KERNELS=1 bash tools/gpu/speed.sh   (SwARo's refresh before/after
#                                                              its feature pass was sharded over the ranks)
#        PRESET=c10-200-rocl VARIANTS=all-ro-shared SUFFIX=rocl bash tools/gpu/speed.sh         (RoCL as its code; SUFFIX
#                                                              names the record file, for jobs side by side on one machine)
# SPEED_ARGS: more arguments of speed.py, after the others (a later one wins), e.g. for a dry run on a CPU with a stub
# nvidia-smi: SPEED_ARGS="--preset smoke --runs-dir /tmp/runs --warmup 1 --timed 1" BATCHES=50
set -uo pipefail
source tools/gpu/common.sh
G=${GPUS:-1}
card=$(nvidia-smi --query-gpu=name --format=csv,noheader | head -1 | grep -oiE 'h100|h200|a100|v100|l40s|b200' | head -1 | tr 'A-Z' 'a-z')
name=${card:-gpu}-${SWARO_COMMIT:-unknown}$([ "$G" -gt 1 ] && echo "-ddp$G")${SUFFIX:+-$SUFFIX}-speed
mkdir -p "$OUT/speed"
tag=$([ "$G" -gt 1 ] && echo "ddp$G"); tag=${TAG:-$tag${SUFFIX:+${tag:+-}$SUFFIX}}   # e.g. ddp4-rocl, g1
launch=(python3); [ "$G" -gt 1 ] && launch=(python3 -m torch.distributed.run --standalone --nproc_per_node "$G")
timeout ${SPEED_S:-540} "${launch[@]}" tools/gpu/speed.py --out "$OUT/speed/$name.json" --preset ${PRESET:-c10-200} --variants ${VARIANTS:-base,attack,all} \
  --feature-pass ${FEATURE_PASS:-sharded} --batches ${BATCHES:-512} ${AGREEMENT:+--agreement} ${KERNELS:+--kernels} --tag "$tag" ${SPEED_ARGS:-} 2>&1 | tee "$OUT/speed/$name.log"
echo "speed exit ${PIPESTATUS[0]}"; ls -la "$OUT/speed"
