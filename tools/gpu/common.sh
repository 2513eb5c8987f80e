# Sourced by the GPU-host scripts: environment for a run on the device machine (data and wheels staged by ../shared/gpu/stage.sh).
export PYTHONPATH=/tmp/site:$PWD SWARO_DATA=/root/swaro/data PYTHONUNBUFFERED=1 MPLBACKEND=Agg
export OUT=${OUT:-/tmp/out}; mkdir -p "$OUT"
nvidia-smi --query-gpu=name,memory.total,driver_version --format=csv,noheader | tee -a "$OUT/card.txt"
python3 -c "import torch; print('torch', torch.__version__, 'cuda', torch.version.cuda)" | tee -a "$OUT/card.txt"
