#!/usr/bin/env python
"""Run the notebooks' tests the way `nbdev_test` does (same skip flags, same shell), count them, and
optionally keep the executed notebooks (outputs included) for the docs site.

Usage: python tools/run_nbs.py [NB ...] [--flags "slow cuda"] [--save DIR] [--workers 2]
With no notebook given, runs every `nbs/*.ipynb` (experiment notebooks are run by pytest through
papermill instead). Prints one line per notebook and ends with `notebooks: N passed, N failed`.
Exit status 1 when any notebook fails.

Each notebook runs in a process of its own, with a temporary folder of its own as TMPDIR (inside the one this script is
given), removed when the notebook ends: files a notebook leaves there are reported on a `note:` line and removed with it.
That process is a fork of this one made after torch, torch._dynamo and the runner's own modules (nbdev's processor,
execnb's shell, nbdev.showdoc, fastcore.test) are imported: no thread runs and no tensor exists at the fork, so each
notebook starts as a fresh interpreter would, minus the ~4.5 s of CPU those imports take (on 30 notebooks, about a
minute of the stage) and the ~2.7 s of torch._dynamo, which torch.optim imports on a process's first optimizer.

`--save DIR` writes each passing notebook to DIR (same path relative to nbs/) as the source notebook
with the outputs of this run attached: cell sources keep their `#| ...` directives (nbdev's processor
strips them from the copy it executes), so `tools/nb_outputs.py` can find the `#| cuda` / `#| slow` cells.
"""
import argparse, atexit, getpass, os, shutil, sys, tempfile, time, traceback, json
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
    os.environ.update({'TORCHINDUCTOR_CACHE_DIR': inductor,   # set before torch is imported: the notebooks' processes inherit it
                       **({'OMP_NUM_THREADS': '1', 'MKL_NUM_THREADS': '1'} if a.workers > 1 else {})})  # no oversubscription
    preload(dynamo=len(fns) > 1)
    scratch = tempfile.mkdtemp(prefix='run_nbs-')   # each notebook's stdout and stderr (not in its TMPDIR: they are not litter)
    start = sorted(fns, key=lambda f: SLOW_FIRST.index(f.stem) if f.stem in SLOW_FIRST else len(SLOW_FIRST))
    running, done, printed, passed, failed = {}, {}, 0, 0, 0
    try:
        while start or running:
            while start and len(running) < a.workers:
                fn = start.pop(0); k = fns.index(fn)
                tmp = tempfile.mkdtemp(prefix=f'nb-{fn.stem}-')
                out, err = os.path.join(scratch, f'{k}.out'), os.path.join(scratch, f'{k}.err')
                t = time.time(); pid = os.fork()
                if pid == 0: child(fn, a.flags, a.save, tmp, out, err)
                running[pid] = (fn, tmp, out, err, t)
            pid, status = os.wait()
            fn, tmp, out, err, t = running.pop(pid)
            left = sum(1 for _ in Path(tmp).rglob('*')); shutil.rmtree(tmp, ignore_errors=True)
            done[fn] = (os.waitstatus_to_exitcode(status), Path(out).read_text(errors='replace'), Path(err).read_text(errors='replace'),
                        time.time() - t, left)
            while printed < len(fns) and fns[printed] in done:   # the lines in name order, whatever the start
                fn = fns[printed]; printed += 1
                code, stdout, stderr, dt, left = done[fn]
                ok = code == 0
                passed += ok; failed += not ok
                name = fn.relative_to(ROOT) if fn.is_relative_to(ROOT) else fn
                print(f"{'PASS' if ok else 'FAIL'} {name} ({dt:.1f}s)", flush=True)
                if left: print(f"note: {name} left {left} temporary file(s) and folder(s) in its TMPDIR; removed with it", flush=True)
                if not ok:  # the traceback's head names the failing cell and check; the tail has the exception
                    e = stderr if len(stderr) < 8000 else stderr[:4000] + '\n[...]\n' + stderr[-4000:]
                    print(stdout[-2000:], e, sep='\n', flush=True)
    finally:
        shutil.rmtree(scratch, ignore_errors=True)
    print(f'notebooks: {passed} passed, {failed} failed')
    sys.exit(1 if failed else 0)

def preload(dynamo: bool = True):
    "Import torch and what `run_one` and every notebook's first cells import, once, before the notebooks' processes are forked."
    import torch  # noqa: F401
    # torch.optim imports torch._dynamo on a notebook's first optimizer (its param groups are added under
    # torch._disable_dynamo): 2.7 s of CPU, once here instead of once per notebook that trains anything; no thread, no tensor.
    # Only for more than one notebook: one that never makes an optimizer (index) would pay for it alone.
    if dynamo: import torch._dynamo  # noqa: F401
    from nbdev.config import get_config  # noqa: F401
    from nbdev.process import NBProcessor  # noqa: F401
    from nbdev.frontmatter import FrontmatterProc  # noqa: F401
    from execnb.shell import CaptureShell  # noqa: F401
    from execnb.nbio import read_nb  # noqa: F401
    import nbdev.showdoc, fastcore.test  # noqa: F401

def child(fn: Path, flags: str, save: str | None, tmp: str, out: str, err: str):
    "In the forked process: stdout and stderr to files, TMPDIR its own folder, the notebook run; exits with its status."
    code = 1
    try:
        for fd, path in ((1, out), (2, err)):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644); os.dup2(f, fd); os.close(f)
        os.environ['TMPDIR'] = tmp; tempfile.tempdir = None   # read again by tempfile
        code = run_one(fn, flags, save)
    except BaseException:
        traceback.print_exc()
    finally:
        try: atexit._run_exitfuncs()   # what an interpreter's exit runs (the notebook's own handlers among them)
        finally:
            sys.stdout.flush(); sys.stderr.flush()
            os._exit(code)

if __name__ == '__main__': main()
