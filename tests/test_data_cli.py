"The `swaro_data` console script from a shell: summary, fetch, and its errors."
import subprocess, sys
from pathlib import Path
from conftest import script, needs_cifar100

def run(*args, env=None):
    return subprocess.run([script('swaro_data'), *args], capture_output=True, text=True, env=env)

def test_summary_writes_grid(tmp_path):
    r = run('summary', '--out', str(tmp_path))
    assert r.returncode == 0, r.stderr
    assert 'cifar10: 50,000 train / 10,000 test images, 10 classes' in r.stdout
    png = tmp_path / 'cifar10_samples.png'
    assert png.read_bytes()[:8] == b'\x89PNG\r\n\x1a\n' and png.stat().st_size > 10_000

def test_unknown_dataset_is_a_clear_error(tmp_path):
    r = run('fetch', 'mnist', '--root', str(tmp_path))
    assert r.returncode == 2 and 'unknown dataset' in r.stderr and 'cifar10' in r.stderr

def test_cifar100_without_source_names_what_to_pass(tmp_path):
    r = run('fetch', 'cifar100', '--root', str(tmp_path), '--source', str(tmp_path / 'nowhere'))
    assert r.returncode == 1 and 'binary layout' in r.stderr and 'Traceback' not in r.stderr  # 1: data, 2: a bad argument

def test_missing_data_names_fetch_command(tmp_path):
    from swaro_nb.data import load_cifar, DataError
    import pytest
    with pytest.raises(DataError, match='swaro_data fetch cifar10'): load_cifar('cifar10', root=tmp_path)

def test_corrupt_byte_is_caught(tmp_path):
    "One flipped byte in a full-size file: same size, different md5, so the reader refuses it."
    from swaro_nb.data import load_cifar, data_root, DataError
    import pytest, shutil
    d = tmp_path / 'cifar-10-batches-bin'; d.mkdir()
    for f in (data_root() / 'cifar-10-batches-bin').iterdir(): (d / f.name).symlink_to(f)
    (d / 'test_batch.bin').unlink()
    b = bytearray((data_root() / 'cifar-10-batches-bin' / 'test_batch.bin').read_bytes()); b[12345] ^= 0xFF
    (d / 'test_batch.bin').write_bytes(bytes(b))
    with pytest.raises(DataError, match=r'test_batch.bin .*expected 803d5f7f'): load_cifar('cifar10', train=False, root=tmp_path)

@needs_cifar100
def test_full_disk_during_a_fetch_is_one_line(tmp_path):
    "CIFAR-100 copied in under a file size limit below train.bin's (`ulimit -f`, as a full disk): exit 1, one line naming the"
    " folder and the room needed, no partial file left."
    from swaro_nb.data import data_root
    src, root = data_root() / 'cifar-100-binary', tmp_path / 'data'
    r = subprocess.run(['bash', '-c', 'ulimit -f 10240; exec "$@"', 'bash', script('swaro_data'), 'fetch', 'cifar100', '--root', str(root),
                        '--source', str(src)], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and r.stderr.count('\n') == 1 and 'Traceback' not in r.stderr, r.stderr
    assert f"cannot write train.bin in {root / 'cifar-100-binary'}: it needs about 146.6 MB" in r.stderr and 'free some space' in r.stderr, r.stderr
    assert not [p for p in root.rglob('*') if p.is_file() and p.name.endswith('.partial')]
