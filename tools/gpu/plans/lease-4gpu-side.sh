#!/usr/bin/env bash
# The side job of a 4-GPU reproduction lease (repro_session.sh's SIDE), on GPUs 2 and 3 while SwARo trains on 0 and 1,
# done before the SwARo evaluations take GPUs 2 and 3 as helpers (SIDE_END seconds after it starts, default 1080):
#  1. RoCL as its code trains (c10-200-rocl), 30 epochs, the exact 1/256 term ('compiled') against the shared-forward flag
#     ('rocl-shared'), seeds 0 and 1, one run a GPU (compile_check.py), each evaluated lightly: LE 150, the l_inf 8/255
#     worst case, PGD-20 and AutoAttack continuing it, on 2,000 test images;
#  2. the evaluation attacks' per-step costs, float32 against bf16 (eval_profile.py), on GPU 2, in what time is left.
# Everything it writes goes under $S/side (packed with the lease's records).
T0=$(date +%s); END=${SIDE_END:-1080}; mkdir -p $S/side
OUT=$S/side GPUS=2,3 PRESET=c10-200-rocl VARIANTS=compiled,rocl-shared EPOCHS=30 SEEDS=0,1 DEADLINE=$(( END - 180 )) EVAL_RESERVE=150 \
  RUNS=/root/swaro/runs/cc_rocl EVAL_ARGS="--le-epochs 150 --no-rle --n-test 2000 --attacks clean,linf_8,pgd_linf_8,aa_linf_8" \
  bash tools/gpu/compile_check.sh > $S/side/compile_check.log 2>&1
left=$(( END - ($(date +%s) - T0) ))
[ $left -gt 60 ] && CUDA_VISIBLE_DEVICES=2 timeout $left python3 tools/gpu/eval_profile.py --sizes 512,2048 --out $S/side/eval-profile.json \
  > $S/side/eval-profile.log 2>&1
echo "side job done after $(( $(date +%s) - T0 )) s"
