"DDP from the shell: `torchrun --nproc_per_node 2 -m swaro_nb.cli train` on the CPU (gloo) trains, gathers negatives, broadcasts pseudo-labels."
import json, os, subprocess, sys
from pathlib import Path
import torch
from conftest import script

def test_torchrun_two_processes_on_cpu(tmp_path):
    env = {**os.environ, 'OMP_NUM_THREADS': '1'}
    cmd = [script('torchrun'), '--nproc_per_node', '2', '--master_port', '29517', '-m', 'swaro_nb.cli', 'train', '--preset', 'smoke',
           '--name', 'ddp', '--out-dir', str(tmp_path), '--epochs', '2', '--subset-per-class', '10', '--batch-size', '50',
           '--attack-warmup-epochs', '1', '--n-clusters', '10', '--attack-steps', '2', '--monitor-every', '2',
           '--monitor-bank', '100', '--monitor-test', '50', '--progress', 'false']
    r = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    rec = json.loads((tmp_path / 'ddp' / 'run.json').read_text())
    assert rec['processes'] == 2 and rec['gpus'] == (2 if torch.cuda.is_available() else 0) and rec['epochs_done'] == 2
    hist = [json.loads(l) for l in (tmp_path / 'ddp' / 'metrics.jsonl').read_text().splitlines()]
    assert len(hist) == 2 and hist[1]['swaro_batches'] >= 0 and all(torch.isfinite(torch.tensor(h['loss'])) for h in hist)
    ck = torch.load(tmp_path / 'ddp' / 'checkpoint.pt', weights_only=False)
    assert ck['world'] == 2 and ck['method']['pseudo'] is not None and len(ck['method']['pseudo']) == 100
