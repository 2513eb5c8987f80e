"""A scratch clone of this checkout for the staging scripts' tests (test_snapshot_stage, test_extras_stage): the clone with
this checkout's versions of the files under test, and the environment in which a stub stands in for ../shared/gpu/stage.sh."""
import os, shutil, subprocess, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

def sh(*a, cwd, **kw): return subprocess.run(list(a), cwd=cwd, capture_output=True, text=True, **kw)

ALWAYS = ('tools/gpu/travel_light.sh', 'tools/gpu/pinned.sh')   # what every staging script runs

def scratch_clone(tmp: Path, files) -> Path:
    "Clone this checkout into tmp/co with `files` (paths from the root) as they are here, uncommitted; skip where it cannot."
    pytest.importorskip('pyautoattack')   # pinned.sh copies the installed reference AutoAttack
    if sh('git', 'rev-parse', 'HEAD', cwd=ROOT).returncode: pytest.skip('not a git checkout')
    co = tmp / 'co'
    assert sh('git', 'clone', '-q', str(ROOT), str(co), cwd=tmp).returncode == 0
    for f in (*files, *ALWAYS):
        (co / f).parent.mkdir(parents=True, exist_ok=True); shutil.copy(ROOT / f, co / f)
    return co

def commit_all(co: Path, msg: str) -> bool:
    "Commit everything in the clone co, as a session commits what it landed; whether git did."
    g = ('git', '-c', 'user.name=t', '-c', 'user.email=t@t')
    return sh(*g, 'add', '-A', cwd=co).returncode == 0 and sh(*g, 'commit', '-qm', msg, cwd=co).returncode == 0

def stub_stage_env(tmp: Path) -> dict:
    "The environment of a staging script whose ../shared/gpu/stage.sh is a stub that writes its arguments to .gpu/stub-called."
    stub = tmp / 'shared/gpu/stage.sh'; stub.parent.mkdir(parents=True); stub.write_text('echo "stage.sh $*" > .gpu/stub-called\n')
    return dict(os.environ, SHARED=str(tmp / 'shared'), PYTHON=sys.executable, PIN_NO_DOWNLOAD='1', PIN_CACHE=str(tmp / 'cache'))
