"""A plain install evaluates: a fresh virtual environment with only the package's own requirements runs
`swaro_eval --autoattack` on a tiny run. Nothing is downloaded: the fresh environment sees, through a .pth file, the
distributions that the package's install requirements (settings.ini `requirements`, no extras) need as they are
installed here, and nothing else, so `pip install` of the package finds them satisfied; a module that swaro_eval
imports beyond that closure (a dev or extra requirement) fails the run with ModuleNotFoundError.
"""
import configparser, importlib.metadata as md, json, os, subprocess, sys
from pathlib import Path
import pytest
from conftest import ROOT

def _closure(names) -> set:
    "The distributions `names` (requirement strings) need, recursively, extras and environment markers evaluated, as installed here."
    from packaging.requirements import Requirement
    seen, todo = set(), [(Requirement(n), ()) for n in names]
    while todo:
        req, _ = todo.pop()
        n = req.name.lower().replace('_', '-')
        try: d = md.distribution(n)
        except md.PackageNotFoundError: continue
        key = (n, frozenset(req.extras))
        if key in seen: continue
        seen.add(key)
        for r in map(Requirement, d.requires or []):
            if r.marker is None or any(r.marker.evaluate({'extra': e}) for e in (req.extras or {''})): todo.append((r, ()))
    return {n for n, _ in seen}

def _expose(dists: set, folder: Path):
    "Symlink every top-level file and folder of these installed distributions (and their dist-info) into `folder`."
    folder.mkdir(parents=True)
    for n in dists:
        d = md.distribution(n)
        base = Path(d.locate_file(''))
        tops = {Path(str(f)).parts[0] for f in (d.files or []) if not str(f).startswith('..')}
        for t in tops:
            src, dst = base / t, folder / t
            if src.exists() and not dst.exists(): dst.symlink_to(src)

def test_plain_install_evaluates(tmp_path):
    "pip install of the package alone (no dev extra), then swaro_eval --smoke --autoattack on a tiny run: exit 0, the AutoAttack columns recorded."
    venv = tmp_path / 'venv'
    subprocess.run([sys.executable, '-m', 'venv', str(venv)], check=True, timeout=120)
    py = venv / 'bin' / 'python'
    site = Path(subprocess.run([str(py), '-c', 'import sysconfig; print(sysconfig.get_paths()["purelib"])'],
                               capture_output=True, text=True, check=True).stdout.strip())
    cfg = configparser.ConfigParser(); cfg.read(ROOT / 'settings.ini')
    reqs = cfg['DEFAULT']['requirements'].split()
    deps = _closure(reqs)
    assert {'torch', 'torchvision', 'pandas', 'torchattacks'} <= deps, deps   # what swaro_eval imports is an install requirement
    assert not {'nbdev', 'papermill', 'pytest', 'faiss-cpu'} & deps, deps
    _expose(deps | _closure(['setuptools', 'wheel']), tmp_path / 'requirements')   # and the build back-end (pip builds offline)
    (site / 'requirements.pth').write_text(str(tmp_path / 'requirements') + '\n')
    env = {**os.environ, 'PIP_DISABLE_PIP_VERSION_CHECK': '1', 'PYTHONNOUSERSITE': '1'}
    env.pop('PYTHONPATH', None)
    # the venv's own (older) setuptools would shadow the exposed one that torch requires
    subprocess.run([str(py), '-m', 'pip', 'uninstall', '-y', '-q', 'setuptools'], env=env, check=True, capture_output=True, timeout=120)
    r = subprocess.run([str(py), '-m', 'pip', 'install', '-q', '--no-index', '--no-build-isolation', str(ROOT)], capture_output=True, text=True, env=env, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    # the dev tools are not there: what runs below needs only the install requirements
    missing = subprocess.run([str(py), '-c', 'import importlib.util as u; print([m for m in ("nbdev", "papermill", "pytest") if u.find_spec(m)])'],
                             capture_output=True, text=True, env=env, cwd=tmp_path)
    assert missing.stdout.strip() == '[]', missing.stdout
    # a tiny run folder, trained by this environment's library
    from swaro_nb.config import make_config
    from swaro_nb.train import train
    train(make_config('smoke', name='tiny', out_dir=str(tmp_path / 'runs'), epochs=1, subset_per_class=10, batch_size=50, width=8,
                      proj_hidden=64, n_clusters=10, attack_steps=1, attack_warmup_epochs=1, monitor_every=0, progress=False), device='cpu')
    r = subprocess.run([str(venv / 'bin' / 'swaro_eval'), str(tmp_path / 'runs' / 'tiny'), '--smoke', '--autoattack', '--no-rle', '--le-epochs', '1',
                        '--n-test', '16', '--train-per-class', '5', '--device', 'cpu', '--no-progress', '--out', str(tmp_path / 'res')],
                       capture_output=True, text=True, env=env, cwd=tmp_path, timeout=900)
    assert r.returncode == 0, r.stderr[-3000:]
    rec = json.loads((tmp_path / 'res' / 'tiny-eval.json').read_text())
    assert {'aa_linf_8', 'aa_l2_05', 'linf_8', 'pgd_linf_8'} <= set(rec['metrics']) and '| SwARo | LE |' in r.stdout
    where = subprocess.run([str(py), '-c', 'import swaro_nb; print(swaro_nb.__file__)'], capture_output=True, text=True, env=env, cwd=tmp_path)
    assert str(venv) in where.stdout, where.stdout   # the evaluation ran the installed copy, not this checkout
