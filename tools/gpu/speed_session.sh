#!/usr/bin/env bash
# The engine's speed on a 4-GPU machine, launched detached (setsid) from a copy of the checkout in /root/swaro/code:
#   phase A, one job a GPU:  GPU0 SwARo variants at batch 512 (+ agreement), GPU1 RoCL (both objectives) and SimCLR,
#                            GPU2 two SwARo runs sharing the card at batch 256, GPU3 every notebook's cuda/slow cells;
#   phase B: DDP at global batch 512 on 2 and 4 GPUs with the best single-GPU variant.
# Every stage is bounded by `timeout`; records go to /root/swaro/out (speed.json per job, components/*.json, logs).
# Usage there: BEST=attack SWARO_COMMIT=<sha> setsid nohup bash tools/gpu/speed_session.sh > /root/swaro/session.log 2>&1 &
set -uo pipefail
cd /root/swaro/code
export PYTHONPATH=/tmp/site:/root/swaro/code SWARO_DATA=/root/swaro/data PYTHONUNBUFFERED=1 MPLBACKEND=Agg
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1   # NVLink multicast off (see common.sh)
O=/root/swaro/out; mkdir -p $O/components
BEST=${BEST:-attack}
ev() { echo "$(date +%H:%M:%S) $*" >> $O/events.log; }
python3 tools/gpu/entry_points.py --if-missing /tmp/site >> $O/events.log 2>&1
ev "start (best=$BEST)"
( CUDA_VISIBLE_DEVICES=0 timeout 600 python3 tools/gpu/speed.py --out $O/speed-g0.json --agreement --variants base,attack,all,all-ro --batches 512 > $O/g0.log 2>&1; ev "g0 done $?" ) &
( CUDA_VISIBLE_DEVICES=1 timeout 600 bash -c "python3 tools/gpu/speed.py --out $O/speed-g1.json --method rocl --variants $BEST --batches 512 &&
  python3 tools/gpu/speed.py --out $O/speed-g1.json --method rocl --loss-form rocl-code --variants $BEST --batches 512 &&
  python3 tools/gpu/speed.py --out $O/speed-g1.json --method simclr --variants $BEST --batches 512" > $O/g1.log 2>&1; ev "g1 done $?" ) &
( export CUDA_VISIBLE_DEVICES=2
  timeout 600 python3 tools/gpu/speed.py --out $O/speed-g2a.json --variants $BEST --batches 256 --tag shared-2 > $O/g2a.log 2>&1 &
  timeout 600 python3 tools/gpu/speed.py --out $O/speed-g2b.json --variants $BEST --batches 256 --tag shared-2 > $O/g2b.log 2>&1 &
  wait; ev "g2 done" ) &
( CUDA_VISIBLE_DEVICES=3 SWARO_RECORD_DIR=$O/components timeout 600 python3 tools/run_nbs.py nbs/*.ipynb --flags "slow cuda" --workers 1 --save /root/swaro/exec > $O/nbs.log 2>&1
  python3 tools/nb_outputs.py /root/swaro/exec > $O/cuda_outputs.txt 2>&1; ev "g3 done" ) &
wait
ev "phase A done"
for n in 2 4; do
  timeout 600 torchrun --nproc_per_node $n --master_port $((29500 + n)) tools/gpu/speed.py --out $O/speed-ddp.json --variants base,$BEST --batches 512 --tag ddp$n > $O/ddp$n.log 2>&1
  ev "ddp$n done $?"
done
ev "all done"
