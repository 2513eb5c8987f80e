#!/usr/bin/env python
"""Run the notebooks' tests the way `nbdev_test` does (same skip flags, same shell), count them, and
optionally keep the executed notebooks (outputs included) for the docs site.

Usage: python tools/run_nbs.py [NB ...] [--flags "slow cuda"] [--save DIR] [--workers 2]
With no notebook given, runs every `nbs/*.ipynb` (experiment notebooks are run by pytest through
papermill instead). Prints one line per notebook and ends with `notebooks: N passed, N failed`.
Exit status 1 when any notebook fails.

Each notebook runs with a temporary folder of its own as TMPDIR (inside the one this script is given), removed when
the notebook ends: files a notebook leaves there are reported on a `note:` line and removed with it.

`--save DIR` writes each passing notebook to DIR (same path relative to nbs/) as the source notebook
with the outputs of this run attached: cell sources keep their `#| ...` directives (nbdev's processor
strips them from the copy it executes), so `tools/nb_outputs.py` can find the `#| cuda` / `#| slow` cells.
"""
import argparse, getpass, os, subprocess, sys, tempfile, time, json
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]
# the slowest notebooks (CPU, 2 workers) start first, so that the two workers end together instead of one running the
# longest alone at the end; the others follow in name order, and the lines are printed in name order whatever the start
# (longest first, from a fresh clone's test run at a659d36: 07_eval_attacks 157 s, 07c 130 s, 10b 69 s, 06c 67 s, ...)
SLOW_FIRST = ('07_eval_attacks', '07c_execution', '10b_evaluate', '06c_train', '11_cli', 'index', '10_runs', '10e_hub',
              '00_data', '06d_bench', '10d_eval_runs', '09_baselines')

def run_one(fn: Path, flags: str, save: str | None) -> int:
    "Execute one notebook in this process (nbdev.test.test_nb semantics); save it executed if asked."
    import faulthandler; faulthandler.enable()  # a native crash still prints where it happened
    from fastcore.basics import str2bool
    from nbdev.config import get_config
    from nbdev.process import NBProcessor, nb_lang
    from nbdev.frontmatter import FrontmatterProc
    from execnb.shell import CaptureShell
    from execnb.nbio import read_nb, write_nb
    from fastcore.xtras import working_directory
    os.environ['IN_TEST'] = '1'
    skip = set(get_config().tst_flags.split()) - set(flags.split())
    raw = read_nb(fn)  # the notebook as written (directives in the sources, title cell): what --save keeps
    nb = NBProcessor(fn, procs=FrontmatterProc, process=True).nb
    fm = getattr(nb, 'frontmatter_', {})
    if str2bool(fm.get('skip_exec', False)) or nb_lang(nb) != 'python': return 0
    def _no_eval(cell):
        if cell.cell_type != 'code': return True
        if 'nbdev_export' + '(' in cell.source: return True
        direc = getattr(cell, 'directives_', {}) or {}
        if direc.get('eval:', [''])[0].lower() == 'false': return True
        return bool(skip & direc.keys())
    k = CaptureShell(fn)
    ok = True
    try:
        with working_directory(fn.parent): k.run_all(nb, exc_stop=True, preproc=_no_eval)
    except Exception:
        sys.stderr.write(k.prettytb(fname=fn) + '\n'); ok = False
    if save:  # failing notebooks too: the outputs of the cells before the failure are kept (a GPU run must not lose them)
        rel = fn.relative_to(ROOT / 'nbs') if fn.is_relative_to(ROOT / 'nbs') else Path(fn.name)  # a notebook elsewhere: by its name
        dest = Path(save) / rel; dest.parent.mkdir(parents=True, exist_ok=True)
        write_nb(attach_outputs(raw, nb), dest)
    return 0 if ok else 1

def attach_outputs(raw, ran):
    "Copy outputs (and execution counts) of the executed code cells of `ran` onto the matching code cells of `raw`, in place."
    done = [c for c in ran.cells if c.cell_type == 'code']
    code = [c for c in raw.cells if c.cell_type == 'code']
    if len(done) != len(code):  # nbdev's processors only drop or add markdown / raw cells
        raise RuntimeError(f'{len(code)} code cells in the notebook but {len(done)} in its executed copy')
    by_id = {c.get('id'): c for c in done if c.get('id')}
    for i, c in enumerate(code):
        e = by_id.get(c.get('id')) if c.get('id') else None
        e = e if e is not None else done[i]
        c['outputs'] = e.get('outputs', [])
        if e.get('execution_count') is not None: c['execution_count'] = e['execution_count']
    return raw

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('nbs', nargs='*')
    ap.add_argument('--flags', default='')
    ap.add_argument('--save', default=None)
    ap.add_argument('--workers', type=int, default=2)
    ap.add_argument('--one', action='store_true', help=argparse.SUPPRESS)
    a = ap.parse_args()
    if a.one: sys.exit(run_one(Path(a.nbs[0]).resolve(), a.flags, a.save))
    fns = [Path(p).resolve() for p in a.nbs] or sorted((ROOT / 'nbs').glob('[0-9]*.ipynb')) + [ROOT / 'nbs' / 'index.ipynb']
    # torch's compile cache is shared by the notebooks (it is a cache, not litter); everything else a notebook writes to
    # TMPDIR lands in a folder of its own, removed when the notebook ends
    inductor = os.environ.get('TORCHINDUCTOR_CACHE_DIR') or os.path.join(tempfile.gettempdir(), f'torchinductor_{getpass.getuser()}')
    def job(fn):
        t = time.time()
        cmd = [sys.executable, __file__, str(fn), '--one', '--flags', a.flags] + (['--save', a.save] if a.save else [])
        with tempfile.TemporaryDirectory(prefix=f'nb-{fn.stem}-') as tmp:
            env = {**os.environ, 'TMPDIR': tmp, 'TORCHINDUCTOR_CACHE_DIR': inductor,
                   **({'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1'} if a.workers > 1 else {})}  # no oversubscription
            r = subprocess.run(cmd, cwd=ROOT, capture_output=True, text=True, env=env)
            left = sum(1 for _ in Path(tmp).rglob('*'))
        return fn, r, time.time() - t, left
    passed = failed = 0
    start = sorted(fns, key=lambda f: SLOW_FIRST.index(f.stem) if f.stem in SLOW_FIRST else len(SLOW_FIRST))
    with ThreadPoolExecutor(a.workers) as ex:
        futs = {fn: ex.submit(job, fn) for fn in start}
        for fn, r, dt, left in (futs[fn].result() for fn in fns):
            ok = r.returncode == 0
            passed += ok; failed += not ok
            name = fn.relative_to(ROOT) if fn.is_relative_to(ROOT) else fn
            print(f"{'PASS' if ok else 'FAIL'} {name} ({dt:.1f}s)", flush=True)
            if left: print(f"note: {name} left {left} temporary file(s) and folder(s) in its TMPDIR; removed with it", flush=True)
            if not ok:  # the traceback's head names the failing cell and check; the tail has the exception (assertion dumps can be long)
                err = r.stderr if len(r.stderr) < 8000 else r.stderr[:4000] + '\n[...]\n' + r.stderr[-4000:]
                print(r.stdout[-2000:], err, sep='\n')
    print(f'notebooks: {passed} passed, {failed} failed')
    sys.exit(1 if failed else 0)

if __name__ == '__main__': main()
