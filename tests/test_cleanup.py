"Tests clean up after themselves: a notebook's temporary files are removed when it ends, and nothing is left in TMPDIR."
import json, os, subprocess, sys
from pathlib import Path
from conftest import ROOT, script

def _env(tmp: Path, cache: Path) -> dict:
    "TMPDIR a fresh folder; torch's compile cache elsewhere (a cache, not litter), so the folder must end empty."
    return {**os.environ, 'TMPDIR': str(tmp), 'TORCHINDUCTOR_CACHE_DIR': str(cache)}

def test_data_notebook_leaves_nothing(tmp_path):
    """00_data, the notebook that copies the most data around: its temporary folder is empty afterwards. Under
    tools/test.sh the notebook stage has just run it with a TMPDIR of its own, and tools/run_nbs.py prints a `note:` line
    for a notebook that leaves anything there (test_run_nbs_removes_what_a_notebook_leaves, below, checks that it does):
    SWARO_NBS_LOG names that stage's log, and its lines are checked instead of running the notebook a second time.
    Otherwise nbdev_test runs it here."""
    log = os.environ.get('SWARO_NBS_LOG')
    lines = Path(log).read_text().splitlines() if log and Path(log).is_file() else []
    if any(l.startswith(('PASS nbs/00_data.ipynb ', 'FAIL nbs/00_data.ipynb ')) for l in lines):
        assert any(l.startswith('PASS nbs/00_data.ipynb ') for l in lines), 'the notebook stage failed nbs/00_data.ipynb'
        left = [l for l in lines if l.startswith('note: nbs/00_data.ipynb left ')]
        assert not left, left
        return
    tmp = tmp_path / 'tmp'; tmp.mkdir()
    r = subprocess.run([script('nbdev_test'), '--path', 'nbs/00_data.ipynb'], cwd=ROOT, capture_output=True, text=True,
                       env=_env(tmp, tmp_path / 'cache'), timeout=900)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert sorted(p.name for p in tmp.iterdir()) == [], list(tmp.rglob('*'))[:20]

def test_run_nbs_removes_what_a_notebook_leaves(tmp_path):
    "A notebook that leaves a scratch folder behind: tools/run_nbs.py reports it and removes it with the notebook's TMPDIR."
    nb = tmp_path / 'leaky.ipynb'
    nb.write_text(json.dumps({'cells': [{'cell_type': 'code', 'id': 'c0', 'metadata': {}, 'execution_count': None, 'outputs': [],
                                          'source': "import tempfile, pathlib\npathlib.Path(tempfile.mkdtemp(), 'left.txt').write_text('x')"}],
                              'metadata': {'kernelspec': {'display_name': 'python3', 'language': 'python', 'name': 'python3'}},
                              'nbformat': 4, 'nbformat_minor': 5}))
    tmp = tmp_path / 'tmp'; tmp.mkdir()
    r = subprocess.run([sys.executable, 'tools/run_nbs.py', str(nb)], cwd=ROOT, capture_output=True, text=True,
                       env=_env(tmp, tmp_path / 'cache'), timeout=300)
    assert r.returncode == 0, (r.stdout + r.stderr)[-3000:]
    assert 'PASS' in r.stdout and 'left 2 temporary file(s) and folder(s)' in r.stdout, r.stdout
    assert list(tmp.iterdir()) == []
