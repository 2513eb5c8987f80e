# Sourced by the scripts of this folder, from the repository root on the GPU machine: the environment of a run there.
# Data in /root/swaro/data and wheels in /tmp/site, as staging leaves them (README.md); OUT is where results are collected.
export PYTHONPATH=/tmp/site:$PWD SWARO_DATA=${SWARO_DATA:-/root/swaro/data} PYTHONUNBUFFERED=1 MPLBACKEND=Agg
# NVLink multicast off in NCCL, PyTorch and NVSHMEM: on a machine whose GPUs others share, a program that uses it can put
# them out of service. Keep these set for every multi-GPU run (torchrun inherits them).
export NCCL_NVLS_ENABLE=0 TORCH_SYMM_MEM_DISABLE_MULTICAST=1 NVSHMEM_DISABLE_NVLS=1
# ACL, SCL and SwAV (and every method outside the core) are found through the `swaro_nb.methods` entry points, which a
# checkout run from PYTHONPATH lacks ("unknown method 'acl'"): announce them in /tmp/site unless this Python has them
python3 tools/gpu/entry_points.py --if-missing /tmp/site >&2
export OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"; OUT=$(cd "$OUT" && pwd)
[ -n "${SWARO_COMMIT:-}" ] || echo "note: SWARO_COMMIT is not set; records say commit 'unknown' where the checkout has no .git" >&2
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$OUT/card.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a "$OUT/card.txt"
