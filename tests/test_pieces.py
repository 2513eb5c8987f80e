"Checkpoint pieces for the GPU host's file limits: split and join give back the same bytes; a missing piece is refused."
import subprocess, sys, os
from pathlib import Path
ROOT = Path(__file__).resolve().parents[1]
def run(*a): return subprocess.run([sys.executable, str(ROOT / 'tools/gpu/pieces.py'), *map(str, a)], capture_output=True, text=True)

def test_split_join_roundtrip_and_corruption(tmp_path):
    src = tmp_path / 'run' / 'checkpoint.pt'; src.parent.mkdir(); src.write_bytes(os.urandom(5 * (1 << 20) + 123))
    assert run('split', src, tmp_path / 'p', '--mb', 2).returncode == 0
    parts = sorted((tmp_path / 'p').glob('run.part*')); assert len(parts) == 3
    r = run('join', tmp_path / 'p', tmp_path / 'back.pt'); assert r.returncode == 0, r.stderr
    assert (tmp_path / 'back.pt').read_bytes() == src.read_bytes()
    parts[1].unlink()
    r = run('join', tmp_path / 'p', tmp_path / 'bad.pt')
    assert r.returncode != 0 and 'sha256 mismatch' in r.stderr and not (tmp_path / 'bad.pt').exists()
