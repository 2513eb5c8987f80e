#!/usr/bin/env python
"""Eager against compiled training, side by side: the check behind compiling the training and attack networks by default
on CUDA. Trains each variant from the same seed (for each of --seeds) for --epochs epochs of a preset whose whole
schedule fits them, evaluates each run (LE, PGD, AutoAttack: --eval-args), and writes per-epoch loss, kNN at every
monitored epoch, timings and final metrics of every run, with their differences and the eager runs' seed-to-seed
spread for scale, to one JSON record (default results/checks/compile-<card>-<commit>.json).

  python tools/gpu/compile_check.py                                 # GPU machine: 30 epochs, seeds 0,1, every visible GPU
  python tools/gpu/compile_check.py --gpus 0,1 --deadline-s 1400    # two GPUs, stop launching work after 1400 s
  python tools/gpu/compile_check.py --smoke --out /tmp/cc.json --runs-dir /tmp/cc   # CPU dry run (tiny sizes)

Each run is `python -m swaro_nb.cli train` then `python -m swaro_nb.cli eval` as subprocesses on one GPU
(CUDA_VISIBLE_DEVICES), one run per GPU at a time. Everything is bounded by --deadline-s: a training gets --time-limit-s
so that it stops checkpointed (run.json written) leaving --eval-reserve-s for its evaluation, no work starts that cannot
end before the deadline, every subprocess has a timeout, and the record is written after every run and at the end,
whatever failed. On a CPU the 'compiled' variant runs the eager path (TrainConfig.compile applies on CUDA only); the
record says so.
"""
from __future__ import annotations
import argparse, json, math, os, queue, shlex, signal, statistics, subprocess, sys, threading, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
VARIANTS = {  # name -> TrainConfig fields (tools/gpu/speed.py names: eager = its 'base', compiled = its 'all-ro')
    'eager': dict(compile=False),
    'compiled': dict(compile='all', compile_mode='reduce-overhead'),
    'compiled-default': dict(compile='all', compile_mode='default'),
    'attack': dict(compile='attack'),
    'rocl-shared': dict(compile='all', compile_mode='reduce-overhead', rocl_term_forward='shared'),   # with --preset c10-200-rocl
}
EVAL_ARGS = '--le-epochs 150 --no-rle --n-test 2000 --autoattack'   # the evaluation's flags live here only (and --eval-args)
SMOKE_EVAL_ARGS = '--smoke --n-test 50 --le-epochs 1 --no-rle'
METRICS = ('clean', 'linf_8', 'aa_linf_8', 'l2_05', 'aa_l2_05', 'linf_16', 'l2_025', 'l1_784', 'l1_12')  # shown first


def attack_warmup(epochs: int) -> int:
    "SwARo's instance-wise warm-up: 5% of the epochs, rounded up (the paper's 100 of 2000; 10 of c10-200's 200; 2 of 30)."
    return max(1, math.ceil(0.05 * epochs - 1e-9))


def parse_args(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--epochs', type=int, default=None, help='training epochs (default 30; --smoke 2)')
    ap.add_argument('--seeds', default='0,1', help='comma-separated seeds (default %(default)s)')
    ap.add_argument('--preset', default=None, help="TrainConfig preset (default c10-200; --smoke: smoke), with its epochs "
                    "set to --epochs and attack_warmup_epochs to 5%% of them")
    ap.add_argument('--variants', default='eager,compiled', help=f"comma-separated, the first is the reference; known: {', '.join(VARIANTS)} (default %(default)s)")
    ap.add_argument('--out', default=None, help='the JSON record (default results/checks/compile-<card>-<commit>.json)')
    ap.add_argument('--runs-dir', default=None, help='run folders, evaluation records and logs (default runs/compile_check)')
    ap.add_argument('--eval-args', default=None, help=f"flags of `swaro_nb.cli eval` (default '{EVAL_ARGS}'; --smoke '{SMOKE_EVAL_ARGS}')")
    ap.add_argument('--train-args', default='', help="more flags of `swaro_nb.cli train`, for every run (e.g. '--subset-per-class 20')")
    ap.add_argument('--gpus', default=None, help='CUDA device indices to spread the runs over, one run per GPU at a time (default: all visible)')
    ap.add_argument('--cpu-slots', type=int, default=2, help='runs at a time without a GPU (default %(default)s)')
    ap.add_argument('--cpu-threads', type=int, default=None, help='torch threads of a run without a GPU (default: $OMP_NUM_THREADS, else 1: '
                    'on a small shared CPU more threads can be many times slower)')
    ap.add_argument('--deadline-s', type=float, default=1500.0, help='no work starts that cannot end within this many seconds of the start; the record is written by then (default %(default)s)')
    ap.add_argument('--eval-reserve-s', type=float, default=None, help='seconds kept for a run\'s evaluation when its training starts (default 420; --smoke 120)')
    ap.add_argument('--fresh', action='store_true', help='start every run over (default: a run folder with a checkpoint resumes)')
    ap.add_argument('--smoke', action='store_true', help='CPU-sized: smoke preset, 2 epochs, a tiny evaluation')
    a = ap.parse_args(argv)
    a.epochs = a.epochs or (2 if a.smoke else 30)
    a.preset = a.preset or ('smoke' if a.smoke else 'c10-200')
    a.eval_args = a.eval_args if a.eval_args is not None else (SMOKE_EVAL_ARGS if a.smoke else EVAL_ARGS)
    a.eval_reserve_s = a.eval_reserve_s if a.eval_reserve_s is not None else (120.0 if a.smoke else 420.0)
    try: a.seeds = [int(s) for s in a.seeds.split(',') if s.strip()]
    except ValueError: ap.error(f"--seeds must be comma-separated integers, got {a.seeds!r}")
    a.variants = [v.strip() for v in a.variants.split(',') if v.strip()]
    bad = [v for v in a.variants if v not in VARIANTS]
    if bad: ap.error(f"unknown variant(s) {bad}; known: {', '.join(VARIANTS)}")
    if len(a.variants) < 2 or len(set(a.variants)) != len(a.variants): ap.error("--variants needs at least two different variants")
    if not a.seeds: ap.error("--seeds is empty")
    if a.epochs < 1: ap.error("--epochs must be >= 1")
    if a.gpus is not None:
        try: a.gpus = [int(g) for g in a.gpus.split(',') if g.strip()]
        except ValueError: ap.error(f"--gpus must be comma-separated device indices, got {a.gpus!r}")
    a.runs_dir = Path(a.runs_dir or 'runs/compile_check')
    return a


def run_name(variant: str, seed: int, epochs: int) -> str: return f"cc-{variant}-s{seed}-e{epochs}"


def train_cmd(a, variant: str, seed: int, time_limit_s: float | None) -> list:
    "The training command of one run (every TrainConfig field is a flag of swaro_nb.cli train)."
    cmd = [sys.executable, '-m', 'swaro_nb.cli', 'train', '--preset', a.preset, '--name', run_name(variant, seed, a.epochs),
           '--seed', str(seed), '--epochs', str(a.epochs), '--attack-warmup-epochs', str(attack_warmup(a.epochs)),
           '--out-dir', str(a.runs_dir), '--progress', 'false']
    for k, v in VARIANTS[variant].items(): cmd += ['--' + k.replace('_', '-'), str(v).lower() if isinstance(v, bool) else str(v)]
    if time_limit_s is not None: cmd += ['--time-limit-s', f"{time_limit_s:.0f}"]
    if a.fresh: cmd.append('--no-resume')
    return cmd + shlex.split(a.train_args)


def eval_cmd(a, run_dir: Path) -> list:
    return [sys.executable, '-m', 'swaro_nb.cli', 'eval', str(run_dir), '--out', str(a.runs_dir / 'eval'), '--no-progress'] + shlex.split(a.eval_args)


_ACTIVE = set()   # process groups started here and still running (stopped on an interrupt)
_STOP = threading.Event()   # set on an interrupt: no new work starts

def stop_group(p: subprocess.Popen):
    "Terminate the process group this script started for `p`, then kill it if it does not end."
    for sig, wait in ((signal.SIGTERM, 15), (signal.SIGKILL, 15)):
        try: os.killpg(p.pid, sig)
        except ProcessLookupError: return
        try: p.wait(timeout=wait); return
        except subprocess.TimeoutExpired: continue

def run_bounded(cmd: list, env: dict, timeout: float, log: Path) -> dict:
    "Run `cmd` in its own process group with output to `log`; past `timeout` the group is terminated (then killed)."
    log.parent.mkdir(parents=True, exist_ok=True)
    t0 = time.time()
    with open(log, 'w') as f:
        f.write('$ ' + ' '.join(shlex.quote(c) for c in cmd) + '\n'); f.flush()
        p = subprocess.Popen(cmd, stdout=f, stderr=subprocess.STDOUT, env=env, cwd=ROOT, start_new_session=True)
        _ACTIVE.add(p)
        try: rc = p.wait(timeout=max(1.0, timeout))
        except subprocess.TimeoutExpired:
            stop_group(p); rc = 'timeout'
        finally: _ACTIVE.discard(p)
    tail = log.read_text(errors='replace').strip().splitlines()[-3:]
    return dict(rc=rc, wall_s=round(time.time() - t0, 1), log=str(log), tail=tail)


# ------------------------------------------------------------------------------------------- reading a run's records
def read_run(run_dir: Path) -> dict:
    "Per-epoch loss and kNN (metrics.jsonl; the last line of an epoch wins), and run.json's timings."
    out = dict(loss=[], knn=[], epochs_done=0)
    m = run_dir / 'metrics.jsonl'
    if m.exists():
        by_epoch = {}
        for line in m.read_text().splitlines():
            try: r = json.loads(line)
            except json.JSONDecodeError: continue
            if isinstance(r, dict) and 'epoch' in r: by_epoch[int(r['epoch'])] = r
        eps = sorted(by_epoch)
        out['loss'] = [[e, by_epoch[e].get('loss')] for e in eps]
        out['knn'] = [[e, by_epoch[e]['knn_acc']] for e in eps if by_epoch[e].get('knn_acc') is not None]
        out['epoch_seconds'] = [[e, by_epoch[e].get('seconds')] for e in eps]
        out['epochs_done'] = eps[-1] if eps else 0
    j = run_dir / 'run.json'
    if j.exists():
        rec = json.loads(j.read_text())
        out.update({k: rec.get(k) for k in ('train_seconds', 's_per_epoch', 'card', 'commit', 'date', 'torch', 'epochs_done', 'epochs')})
        cfg = rec.get('config') or {}
        out['config'] = {k: cfg.get(k) for k in ('compile', 'compile_mode', 'cuda_graphs', 'fold_bn', 'precision', 'seed', 'epochs',
                                                  'attack_warmup_epochs', 'batch_size', 'method', 'loss_form', 'subset_per_class')}
        out['finished'] = True
    else: out['finished'] = False
    return out


def read_eval(path: Path) -> dict:
    "Numeric metrics (rLE's as rle_<key>), seconds and flags of a `<run>-eval.json`; what is missing is left out."
    if not path.exists(): return {}
    rec = json.loads(path.read_text())
    num = lambda v: isinstance(v, (int, float)) and not isinstance(v, bool)
    met = {}
    for k, v in (rec.get('metrics') or {}).items():
        if num(v): met[k] = v
        elif isinstance(v, dict): met.update({f"{k}_{kk}": vv for kk, vv in v.items() if num(vv)})
    secs = rec.get('seconds') or {}
    return dict(metrics=met, seconds={k: v for k, v in secs.items() if num(v)},
                attack_seconds={k: v for k, v in secs.items() if isinstance(v, dict)}, flags=rec.get('flags') or [],
                budgets={k: (rec.get('budgets') or {}).get(k) for k in ('le_epochs', 'rle_epochs', 'n_test', 'test_images', 'train_images')},
                card=rec.get('card'), file=str(path))


# --------------------------------------------------------------------------------------------------------- summary
def _at(pairs, epoch):
    for e, v in pairs:
        if e == epoch: return v
    return None

def _num(v): return isinstance(v, (int, float)) and not isinstance(v, bool) and math.isfinite(v)

def compare(ref: dict, other: dict) -> dict:
    "Differences other - ref of two runs: loss over common epochs, kNN at common monitored epochs, final metrics, speed."
    la = {e: v for e, v in ref.get('loss', []) if _num(v)}
    lb = {e: v for e, v in other.get('loss', []) if _num(v)}
    common = sorted(set(la) & set(lb))
    d = [lb[e] - la[e] for e in common]
    ka, kb = dict(map(tuple, ref.get('knn', []))), dict(map(tuple, other.get('knn', [])))
    kcommon = sorted(set(ka) & set(kb))
    ma, mb = (ref.get('eval') or {}).get('metrics', {}), (other.get('eval') or {}).get('metrics', {})
    out = dict(common_epochs=len(common), final_epoch=common[-1] if common else None,
               loss_diff_final=d[-1] if d else None, abs_loss_diff_final=abs(d[-1]) if d else None,
               max_abs_loss_diff=max(map(abs, d)) if d else None,
               rel_loss_diff_final=(d[-1] / la[common[-1]]) if d and la[common[-1]] else None,
               knn_diff=[[e, kb[e] - ka[e]] for e in kcommon],
               knn_diff_final=(kb[kcommon[-1]] - ka[kcommon[-1]]) if kcommon else None,
               metric_diff={k: mb[k] - ma[k] for k in ma if k in mb and _num(ma[k]) and _num(mb[k])})
    if _num(ref.get('s_per_epoch')) and _num(other.get('s_per_epoch')) and ref['s_per_epoch']:
        out.update(s_per_epoch=[ref['s_per_epoch'], other['s_per_epoch']], speedup=ref['s_per_epoch'] / other['s_per_epoch'])
    return out


def spread(runs: list) -> dict:
    "Seed-to-seed spread of one variant's runs: the range (max - min) of the final common loss, kNN at each epoch, metrics."
    if len(runs) < 2: return {}
    losses = [{e: v for e, v in r.get('loss', []) if _num(v)} for r in runs]
    common = sorted(set.intersection(*[set(l) for l in losses]))
    knns = [dict(map(tuple, r.get('knn', []))) for r in runs]
    kcommon = sorted(set.intersection(*[set(k) for k in knns]))
    mets = [(r.get('eval') or {}).get('metrics', {}) for r in runs]
    keys = set.intersection(*[set(m) for m in mets]) if mets else set()
    rng = lambda xs: max(xs) - min(xs)
    out = dict(seeds=[r['seed'] for r in runs], final_epoch=common[-1] if common else None,
               loss_final=rng([l[common[-1]] for l in losses]) if common else None,
               max_loss=max(rng([l[e] for l in losses]) for e in common) if common else None,
               knn=[[e, rng([k[e] for k in knns])] for e in kcommon],
               knn_final=rng([k[kcommon[-1]] for k in knns]) if kcommon else None,
               metrics={k: rng([m[k] for m in mets]) for k in sorted(keys) if all(_num(m[k]) for m in mets)})
    return out


def summarize(runs: list, variants: list, seeds: list) -> dict:
    "Each variant against the reference (the first) per seed, the worst over seeds, and the reference's seed spread for scale."
    by = {(r['variant'], r['seed']): r for r in runs}
    ref_v = variants[0]
    out = dict(reference=ref_v, pairs={}, worst={}, seed_spread={v: spread([by[(v, s)] for s in seeds if (v, s) in by]) for v in variants})
    for v in variants[1:]:
        per = {str(s): compare(by[(ref_v, s)], by[(v, s)]) for s in seeds if (ref_v, s) in by and (v, s) in by}
        out['pairs'][v] = per
        vals = list(per.values())
        w = lambda k: max((abs(c[k]) for c in vals if _num(c.get(k))), default=None)
        mkeys = sorted(set().union(*[c['metric_diff'] for c in vals])) if vals else []
        worst = dict(abs_loss_diff_final=w('loss_diff_final'), max_abs_loss_diff=w('max_abs_loss_diff'), abs_knn_diff_final=w('knn_diff_final'),
                     abs_metric_diff={k: max(abs(c['metric_diff'][k]) for c in vals if k in c['metric_diff']) for k in mkeys},
                     speedup=[c.get('speedup') for c in vals])
        sp = out['seed_spread'].get(ref_v) or {}
        def within(x, s): return None if x is None or s is None else x <= s
        worst['within_seed_spread'] = dict(
            loss_final=within(worst['abs_loss_diff_final'], sp.get('loss_final')),
            knn_final=within(worst['abs_knn_diff_final'], sp.get('knn_final')),
            metrics={k: within(x, (sp.get('metrics') or {}).get(k)) for k, x in worst['abs_metric_diff'].items()})
        out['worst'][v] = worst
    return out


def table(rec: dict) -> str:
    "A small text table of the runs and the differences."
    runs = rec['runs']
    mk = [k for k in METRICS if any(k in ((r.get('eval') or {}).get('metrics') or {}) for r in runs)]
    f = lambda v, p=2: '-' if not _num(v) else f"{v:.{p}f}"
    head = f"{'variant':<17}{'seed':>5}{'epochs':>7}{'loss':>9}{'kNN':>7}{'s/ep':>7}{'train s':>9}" + ''.join(f"{k:>10}" for k in mk)
    L = [head]
    for r in runs:
        loss = r['loss'][-1][1] if r.get('loss') else None
        knn = r['knn'][-1][1] if r.get('knn') else None
        m = (r.get('eval') or {}).get('metrics') or {}
        L.append(f"{r['variant']:<17}{r['seed']:>5}{r.get('epochs_done', 0):>7}{f(loss, 4):>9}{f(knn, 1):>7}{f(r.get('s_per_epoch')):>7}"
                 f"{f(r.get('train_seconds'), 0):>9}" + ''.join(f"{f(m.get(k)):>10}" for k in mk)
                 + ('' if r.get('finished') else '  (no run.json)') + ('' if r.get('eval') else '  (not evaluated)'))
    s = rec.get('summary') or {}
    ref = s.get('reference')
    for v, per in (s.get('pairs') or {}).items():
        for seed, c in per.items():
            md = ', '.join(f"{k} {c['metric_diff'][k]:+.2f}" for k in mk if k in c['metric_diff'])
            L.append(f"{v} - {ref}, seed {seed}: loss {f(c.get('loss_diff_final'), 4)} at epoch {c.get('final_epoch')} "
                     f"(max |diff| {f(c.get('max_abs_loss_diff'), 4)}), kNN {f(c.get('knn_diff_final'))}"
                     + (f", {md}" if md else '') + (f"; speed-up x{c['speedup']:.2f}" if _num(c.get('speedup')) else ''))
    sp = (s.get('seed_spread') or {}).get(ref) or {}
    if sp:
        md = ', '.join(f"{k} {sp['metrics'][k]:.2f}" for k in mk if k in (sp.get('metrics') or {}))
        L.append(f"{ref} seed-to-seed spread (seeds {sp.get('seeds')}): loss {f(sp.get('loss_final'), 4)} at epoch {sp.get('final_epoch')}, "
                 f"kNN {f(sp.get('knn_final'))}" + (f", {md}" if md else ''))
    return '\n'.join(L)


# ------------------------------------------------------------------------------------------------------------ main
def _stamp():
    from swaro_nb.core import run_stamp
    return run_stamp()

def _visible_gpus() -> list:
    try:
        import torch
        return list(range(torch.cuda.device_count()))
    except Exception: return []

def default_out(stamp: dict) -> Path:
    card = next((c for c in ('h100', 'h200', 'a100', 'b200', 'l40s', 'v100') if c in str(stamp.get('card', '')).lower()), None)
    card = card or ('cpu' if str(stamp.get('card', '')).startswith('cpu') else 'gpu')
    return ROOT / 'results' / 'checks' / f"compile-{card}-{str(stamp.get('commit', 'unknown')).replace('+', '-')}.json"

def write_json(obj, path: Path):
    path.parent.mkdir(parents=True, exist_ok=True)
    tmp = path.with_name(f'.{path.name}.tmp{os.getpid()}')
    tmp.write_text(json.dumps(obj, indent=1)); os.replace(tmp, path)


def main(argv=None) -> int:
    a = parse_args(argv)
    t0 = time.time()
    deadline = t0 + a.deadline_s
    left = lambda: deadline - time.time()
    stamp = _stamp()
    gpus = a.gpus if a.gpus is not None else _visible_gpus()
    slots = [str(g) for g in gpus] or [''] * max(1, a.cpu_slots)   # '' = CPU (CUDA_VISIBLE_DEVICES empty)
    on_cpu = not gpus
    out = Path(a.out) if a.out else default_out(stamp)
    a.runs_dir.mkdir(parents=True, exist_ok=True)
    rec = dict(kind='compile_check', **stamp, settings=dict(
        epochs=a.epochs, seeds=a.seeds, preset=a.preset, attack_warmup_epochs=attack_warmup(a.epochs),
        variants={v: VARIANTS[v] for v in a.variants}, eval_args=a.eval_args, train_args=a.train_args,
        gpus=gpus, cpu_slots=len(slots) if on_cpu else None, deadline_s=a.deadline_s, eval_reserve_s=a.eval_reserve_s, smoke=a.smoke, runs_dir=str(a.runs_dir),
        train_cmd=' '.join(shlex.quote(c) for c in train_cmd(a, a.variants[-1], a.seeds[0], None)),
        eval_cmd=' '.join(shlex.quote(c) for c in eval_cmd(a, a.runs_dir / run_name(a.variants[-1], a.seeds[0], a.epochs)))),
        note=("on CPU every variant runs the eager path: TrainConfig.compile applies on CUDA only, so the 'compiled' runs here "
              "check the script, not compilation" if on_cpu else None),
        runs=[], skipped=[], finished=False)
    lock = threading.Lock()

    def save():
        with lock:
            rec['runs'].sort(key=lambda r: (a.seeds.index(r['seed']), a.variants.index(r['variant'])))
            rec['summary'] = summarize(rec['runs'], a.variants, a.seeds)
            rec['elapsed_s'] = round(time.time() - t0, 1)
            write_json(rec, out)

    jobs = queue.Queue()
    for s in a.seeds:                      # seed by seed: a cut job still has complete pairs
        for v in a.variants: jobs.put((v, s))

    def worker(slot: str):
        env = dict(os.environ, CUDA_VISIBLE_DEVICES=slot, PYTHONUNBUFFERED='1', MPLBACKEND='Agg',
                   PYTHONPATH=os.pathsep.join([str(ROOT)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep) if p]))
        if on_cpu: env['OMP_NUM_THREADS'] = str(a.cpu_threads or os.environ.get('OMP_NUM_THREADS') or 1)
        while True:
            if _STOP.is_set(): return
            try: v, s = jobs.get_nowait()
            except queue.Empty: return
            name = run_name(v, s, a.epochs)
            run_dir = a.runs_dir / name
            budget = left() - a.eval_reserve_s - 15
            if budget < 30:
                with lock: rec['skipped'].append(dict(variant=v, seed=s, why=f"deadline: {left():.0f} s left, {a.eval_reserve_s:.0f} s kept for the evaluation"))
                save(); continue
            r = dict(variant=v, seed=s, name=name, run_dir=str(run_dir), gpu=slot or 'cpu', compile_applied=not on_cpu and VARIANTS[v].get('compile') not in (False, 'off'))
            r['train_call'] = run_bounded(train_cmd(a, v, s, budget), env, min(left() - 10, budget + 90), a.runs_dir / 'logs' / f'{name}-train.log')
            r.update(read_run(run_dir))
            if r['finished'] and left() > 30 and not _STOP.is_set():
                r['eval_call'] = run_bounded(eval_cmd(a, run_dir), env, left() - 10, a.runs_dir / 'logs' / f'{name}-eval.log')
                r['eval'] = read_eval(a.runs_dir / 'eval' / f'{name}-eval.json') or None
            elif r['finished']: r['eval'] = None; r['eval_skipped'] = f"deadline: {left():.0f} s left"
            with lock: rec['runs'].append(r)
            save()

    code = 0
    threads = [threading.Thread(target=worker, args=(slot,), daemon=True) for slot in slots]
    try:
        for t in threads: t.start()
        for t in threads:
            while t.is_alive(): t.join(timeout=1.0)
        rec['finished'] = True
    except KeyboardInterrupt:
        rec['interrupted'] = True; code = 130; _STOP.set()
        for p in list(_ACTIVE): stop_group(p)
        for t in threads: t.join(timeout=20)   # each records its stopped run
    finally:
        save()
    print(table(rec))
    print(f"record: {out}  ({rec['elapsed_s']:.0f} s; {len(rec['runs'])} runs, {len(rec['skipped'])} skipped)")
    if rec['note']: print(f"note: {rec['note']}")
    ok = rec['runs'] and all(r.get('finished') and r.get('eval') for r in rec['runs']) and not rec['skipped']
    return code or (0 if ok else 1)


if __name__ == '__main__':
    signal.signal(signal.SIGTERM, lambda *_: (_ for _ in ()).throw(KeyboardInterrupt()))
    sys.exit(main())
