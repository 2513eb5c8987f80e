"""A scratch clone of this checkout for the staging scripts' tests (test_snapshot_stage, test_extras_stage, test_aff_stage,
test_k_stage): the clone with this checkout's versions of the files under test, the environment in which a stub stands
in for ../shared/gpu/stage.sh, and a tiny CPU training whose checkpoint stands in for a run a lease cut."""
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

def tiny_train(out: Path, name: str, stop: int | None = None, epochs: int = 3):
    "Train (or resume) a tiny SwARo run out/name on the CPU for `epochs`, stopping after `stop` epochs of this call; the trainer."
    from swaro_nb.config import make_config
    from swaro_nb.train import train
    tiny = dict(subset_per_class=10, batch_size=50, width=8, proj_hidden=64, epochs=epochs, attack_warmup_epochs=1,
                n_clusters=10, attack_steps=2, monitor_every=2, monitor_bank=100, monitor_test=50, ckpt_every=1, progress=False)
    return train(make_config('smoke', name=name, out_dir=str(out), max_epochs_this_call=stop, **tiny), device='cpu')
