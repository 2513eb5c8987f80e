#!/usr/bin/env python
"""Lease planner: the predicted finish of a list of training runs (and their evaluations) on a GPU machine, from the
speed and evaluation records; refuses a plan whose predicted end passes the lease's limit.

  python tools/gpu/plan.py tools/gpu/plans/repro-lease1.json --gpus 2 --card H100          # exit 0: fits, 1: refused
  python tools/gpu/plan.py PLAN --gpus 1 --set variant=base --set eval.rle_epochs=150       # what-if: every run changed

A plan is a JSON list of runs, or an object {"runs": [...], "defaults": {...}, "note": "..."}; a run is
  {"name": "swaro-c10-200-s0", "method": "swaro", "loss_form": "paper", "seed": 0, "epochs": 200, "gpus": 1,
   "variant": "compiled", "batch": 512,
   "eval": {"le_epochs": 150, "rle_epochs": 10, "n_test": 2000, "autoattack": true, "table3": true, "rocl_protocol": true,
            "reference": ["linf_8"]}}
variant: an engine variant of tools/gpu/speed.py (eager, base, attack, train, all, all-max, all-ro) or 'compiled'
(= all-ro: compile='all', compile_mode='reduce-overhead', what tools/gpu/compile_check.py checks); "eval": null for none;
"s_per_epoch" in a run overrides the records (said in the output): a number, or {card substring: number} where the
lease's card picks one (e.g. {"H200": 4.86, "H100": 5.44}; a card it does not name falls back to the records).
eval "reference": the reference AutoAttack columns (swaro_eval --attacks ...,ref_aa_linf_8), as column names or their
norm and radius ("linf_8", "l2_05", "l1_12"); eval "attacks": the white-box columns instead of the default Table 1 set
(names of swaro_nb.eval_attacks, worst cases bringing their members), e.g. for a job that attacks a given head with a few
columns; eval "eval_gpus" may be fractional (1.333: a helper GPU shared by three evaluations, HELP=3,3,3).

What a run costs, in order on its GPU(s):
  start-up     --run-startup-s, plus --compile-s for a compiled variant (the lease's --startup-s comes once, first)
  training     epochs x seconds per real epoch (k-means, monitor, checkpoints included) of the newest speed record of
               the card (--card, a substring of the record's card) with the run's method, loss_form, GPUs, variant and
               batch; without one, the nearest record scaled by a ratio measured on another record pair, said in the output
  evaluation   --eval-startup-s + LE + rLE + the attacks of each head (LE, and rLE when it is trained), from a model
               fitted on the evaluation records of the card (seconds per LE and rLE epoch, seconds per image and attack
               step); AutoAttack from its records when one has its time, else the assumption AA_UNITS below; the
               reference AutoAttack (fra31's code, run alone) likewise, else the assumption REF_AA_UNITS below
A data-parallel run holds its GPUs for the training; its evaluation runs on the first of them.
Runs go to GPUs longest first, each to the GPU(s) free earliest.
"""
from __future__ import annotations
import argparse, json, math, statistics, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]

# Start-up constants, with the records they come from.
STARTUP_S = 120      # lease: machine start, staging of data and packages, before any run (a guess: set --startup-s)
RUN_STARTUP_S = 30   # per training run: results/runs/swaro-c10-e120 trained 858 s between its 'training' and 'train exit'
                     # lines of results/logs/2026-11-26-a-h100x4/events.log against train_seconds 840.6 (18 s of process
                     # start and data load), and its first epoch took 14.3 s against the 6.5 s median (8 s of warm-up)
COMPILE_S = 25       # per compiled run: results/speed/h100x4-3c4266d-g0.json, 'all-ro' (the only variant compiled cold in
                     # that job) took wall_s 61.5 against 42.5 for 'all' at about the same epoch time
EVAL_STARTUP_S = 25  # per evaluation: swaro-c10-e120 evaluated 237 s between its events.log lines, its record's
                     # seconds.total is 213.1
# Evaluation attacks, in units of one attack step (forward + input gradient) on one image, fitted from the records
# (about 30 us on an H100 in float32). An attack costs (steps + 1) units per image it runs on (the + 1: its prediction),
# times its restarts; APGD-T runs once per target class (9 on CIFAR-10). A worst-case column runs its members one after
# the other, each on the images the earlier ones left correctly classified: ROBUST_FRAC of them is assumed.
ROBUST_FRAC = 0.5
# APGD-CE and APGD-T members (torchattacks', one restart; APGD-T once per target class) take a time per step that barely
# depends on the images they run on: c10-200-swaro-s0's APGD-T at linf_16 ran on 12 images in 22.6 s and at l2_025 on
# 1,237 in 31.6 s (results/eval/five-seed/, H200, 6f909b8). Where records time them one by one, they are priced as a line
# fitted on the newest such record's timings, seconds per step = a + b x images (apgd_timings); else as the other
# attacks. (ce-c10-100-s0, H200, edad02c, times its three at 66-100 ms per step: another code's, left out by the newest.)
# That record ran with --shards 4: each member is four torchattacks calls, one a block of 500 images, so the fixed part is
# assumed per block, not yet measured at another shard count (eval "shards" scales it; the five-seed protocol keeps 4, for resumable pieces and the same random starts).
APGD_KINDS = ('apgd', 'apgd-t')
# AFF (swaro_eval --aff: ACL's 100 epochs of TRADES at batch 128). Without a record, ASSUMED per epoch of 50,000 images:
# the TRADES baseline's H200 training epoch (9.0 s: results/runs/trades-c10-100-s0, compiled, the same batch and attack)
# x 2.5 for code at batch 128 (launch-bound). The newest record's seconds['aff'] replaces it (its code: the eager KL
# attack's records are older than the CUDA-graph replay's, GraphedKL, the default since 4961272).
AFF_S_PER_EPOCH = 22.5
# A model that no attack leaves much of (no adversarial training: CE, SCL, SimCLR, SwAV) runs its worst-case members and
# AutoAttack on few images: ASSUMED NONROBUST_FRAC of them (the SimCLR 200-epoch record: 0-12% robust per column, its
# AutoAttack 64 s against 350-460 s of the robust runs'). A run's eval.robust_frac overrides either.
NONROBUST_FRAC, NONROBUST = 0.05, ('ce', 'scl', 'simclr', 'swav')
N_CLASSES = 10
# AutoAttack (standard: APGD-CE, APGD-T and FAB-T over 9 targets, Square with 5000 queries, each on the points still
# robust) runs on the first AA_N test images and has no timing in any record yet. Assumed: APGD-CE 100 steps on the ~80%
# clean-correct points, APGD-T 9 x 100 and FAB-T 9 x 100 (x1.5) on the ~40% robust ones, Square 5000 forward-only
# queries on those, latency-bound at small batches: 80 + 360 + 540 + ~1000 = about 2000 units per image and norm.
# Uncertain by a factor of 2 either way; a record that times it replaces this.
AA_UNITS = 2000
AA_N = 2000
# The reference AutoAttack (swaro_nb.eval_attacks.REF_AUTOATTACK_ATTACKS: fra31's code, standard version, run alone from
# clean inputs on the first AA_N images): one timing so far, in an evaluation piece rather than a record (the planner reads
# records only): results/eval/parts/c10-200-swaro-s0-eval.parts/le.json (H100, d023c38, 2026-11-28), ref_aa_linf_8 on the
# LE head of a 200-epoch SwARo, 2,000 images, 203.6 process-seconds, one process a GPU (4 workers on 4 GPUs): 203.6 /
# (2000 x 31.6 us, the H100 unit) = 3,200 units per image and norm. Taken for every norm until a record times a ref_aa_*
# column (the median over every such timing then replaces it): l_2 runs the same four attacks; l_1 has APGD-CE with 5
# restarts and APGD-T with 5 targets, about l_inf's 9 targets' cost. (The guess before that timing was 5,000.)
REF_AA_UNITS = 3200
# The attack sets of an evaluation, as swaro_nb.eval_attacks defines them (used when the library cannot be imported;
# tests/test_plan.py checks this copy against the library): name -> (kind, steps, restarts, members[, options])
_RADII = {'linf_8': 'linf', 'linf_16': 'linf', 'l2_025': 'l2', 'l2_05': 'l2', 'l1_784': 'l1', 'l1_12': 'l1'}
BUILTIN_ATTACKS = {
    'table1': {'clean': ('clean', 0, 1, ()),
               **{k: ('worst', 0, 1, (f'pgd_{k}', f'apgd_ce_{k}', f'apgd_t_{k}') if n != 'l1'
                      else (f'pgd_{k}', f'slide_r_{k}', f'apgd_ce_{k}', f'apgd_t_{k}')) for k, n in _RADII.items()},
               **{f'pgd_{k}': ('pgd', 20, 1, ()) for k in _RADII}},
    'members': {**{f'apgd_ce_{k}': ('apgd', 100, 5 if n == 'l1' else 1, ()) for k, n in _RADII.items()},
                **{f'apgd_t_{k}': ('apgd-t', 100, 1, (), {'n_targets': 5} if n == 'l1' else {}) for k, n in _RADII.items()},
                **{f'slide_r_{k}': ('pgd', 50, 3, ()) for k, n in _RADII.items() if n == 'l1'}},
    'table3': {'bim': ('bim', 10, 1, ()), 'bim_t': ('bim', 10, 1, ()), 'fgsm': ('fgsm', 1, 1, ()), 'fgsm_t': ('fgsm', 1, 1, ()),
               'jitter': ('jitter', 10, 1, ()), 'jitter_t': ('jitter', 10, 1, ())},
    'rocl': {'rocl_linf_8': ('pgd', 20, 1, ()), 'rocl_linf_16': ('pgd', 20, 1, ())},
    'autoattack': {'aa_linf_8': ('autoattack', 100, 1, ()), 'aa_l2_05': ('autoattack', 100, 1, ())},
    'reference': {'ref_aa_linf_8': ('ref-autoattack', 100, 1, ()), 'ref_aa_l2_05': ('ref-autoattack', 100, 1, ()),
                  'ref_aa_l1_12': ('ref-autoattack', 100, 1, ())},
}
ALIASES = {'compiled': 'all-ro'}
COMPILED = {'attack', 'train', 'all', 'all-max', 'all-ro', 'all-ro-shared'}
VARIANTS = {'eager', 'base', *COMPILED}
N_TRAIN, N_TEST = 50000, 10000
# Evaluation records timed while another evaluation's attack processes used the same GPU (twice the processes a GPU that
# their `workers` list shows): their process-seconds are not those of the layouts plans describe, so the evaluation model
# leaves them out, as it leaves out speed records tagged 'shared'. AT and TRADES were evaluated side by side on one H200,
# 2 attack processes each (results/logs/2026-11-27-f-h200x4/side-ev/events.log): AutoAttack took 329-539 process-seconds.
SHARED_GPU_EVALS = {'at-c10-100-s0-eval.json', 'trades-c10-100-s0-eval.json'}
SUPERVISED = ('ce', 'at', 'trades')   # methods with their own classifier, which the evaluation attacks beside the heads
RUN_DEFAULTS = dict(loss_form='paper', seed=0, gpus=1, variant='base', batch=512, eval=None)
EVAL_DEFAULTS = dict(le_epochs=150, rle_epochs=0, n_test=None, autoattack=False, table3=False, rocl_protocol=False,
                     train_images=N_TRAIN, procs=1, eval_gpus=1, robust_frac=None, le=True, classifier=False, reference=(),
                     attacks=None, shards=None, aff=False, aff_epochs=100)
# aff: also fine-tune the whole network with TRADES (swaro_eval --aff, AFF_S_PER_EPOCH below), a third head attacked
# shards: swaro_eval --shards (each attack unit runs once per block of images); None: as the record the APGD fit comes from
# le: False for an rLE-only evaluation (swaro_eval --no-le); a run with "trained": true is evaluated only (trained in an
# earlier lease, its weights preloaded: repro_session.sh PRELOAD with RUNS naming it), no start-up or training priced
# procs: attack processes of the evaluation (swaro_eval --workers; repro_session.sh HELP and PROCS); eval_gpus: the GPUs
# they run on (1: the run's own; 2: HELP names another). The records time each attack in its own process, so their seconds
# are process-seconds. Processes that share a GPU share its time: on one H100 at d47bcda, swaro-c10-200-s2's LE head took
# 201 s of attacks in one process and 483 process-seconds in two (the whole record: 492 s in one process, 593 s in two)
# (results/checks/one-model-h100-d47bcda/). So a record's process-seconds times its GPUs over its processes are its
# GPU-seconds (4 processes over two H200s at 72234fe: 825 process-seconds, 221 s of wall-clock; 825 x 2/4 / 2 = 206), and
# an evaluation's attacks take their GPU-seconds over `eval_gpus`, whatever `procs` is (`procs` stays in plans as what the
# launch line uses; plans written before d47bcda divided by it, and those with HELP on a second GPU need eval_gpus 2).


def spec_units(spec: dict) -> float:
    "Units (attack steps + 1) per image an attack runs on; a worst-case column's own cost is its members'."
    kind, steps, restarts = spec.get('kind'), int(spec.get('steps') or 0), int(spec.get('restarts') or 1)
    if kind == 'clean': return 1.0
    if kind == 'worst': return 0.0
    if kind == 'autoattack': return float(AA_UNITS)
    if kind == 'ref-autoattack': return float(REF_AA_UNITS)
    if kind == 'apgd-t': return float(((spec.get('options') or {}).get('n_targets') or N_CLASSES - 1) * (steps + 1))
    return float(max(1, restarts) * (steps + 1))


def _builtin_sets() -> dict:
    "The built-in attack sets as {set: {name: spec dict}} (worst-case members under 'members')."
    return {k: {n: dict(kind=t[0], steps=t[1], restarts=t[2], members=list(t[3]), **({'options': t[4]} if len(t) > 4 else {}))
                for n, t in v.items()} for k, v in BUILTIN_ATTACKS.items()}


def library_sets():
    "The attack sets from the library (swaro_nb.eval_attacks), or None when it cannot be imported."
    import dataclasses, importlib
    if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
    for mod in ('swaro_nb.eval_attacks',):
        try: m = importlib.import_module(mod)
        except Exception: continue
        if not all(hasattr(m, n) for n in ('DEFAULT_ATTACKS', 'TABLE3_ATTACKS', 'ROCL_ATTACKS', 'AUTOATTACK_ATTACKS', 'ALL_ATTACKS')): continue
        d = lambda specs: {k: dataclasses.asdict(v) for k, v in specs.items()}
        sets = dict(table1=d(m.DEFAULT_ATTACKS), table3=d(m.TABLE3_ATTACKS), rocl=d(m.ROCL_ATTACKS), autoattack=d(m.AUTOATTACK_ATTACKS))
        named = set().union(*[set(v) for v in sets.values()])
        mem = {x for v in sets.values() for s in v.values() for x in s.get('members') or ()}
        sets['members'] = {x: dataclasses.asdict(m.ALL_ATTACKS[x]) for x in sorted(mem - named) if x in m.ALL_ATTACKS}
        sets['reference'] = d(getattr(m, 'REF_AUTOATTACK_ATTACKS', {}))   # (a library older than the reference: none)
        return sets, mod
    return None


def record_sets(sets: dict, rec: dict) -> dict:
    """`sets` with each attack the record ran replaced by the record's own spec (its budgets' `attacks`): what a column
    meant at the record's commit. A pinned lease runs that code, whose worst cases may have other members than the
    library's here (6f909b8's l1 columns are PGD and SLIDE only; the library since adds APGD-CE and APGD-T to them)."""
    ran = {k: v for k, v in ((rec.get('budgets') or {}).get('attacks') or {}).items() if isinstance(v, dict)}
    out = {g: {k: dict(ran.get(k, v)) for k, v in d.items()} for g, d in sets.items()}
    named = {k for g, d in out.items() if g != 'members' for k in d}
    out['members'] = {k: v for k, v in out.get('members', {}).items() if k not in named}
    for k, v in ran.items():   # members the record ran that the library no longer names
        if k not in named and k not in out['members']: out['members'][k] = dict(v)
    return out

def set_units(sets: dict, name: str) -> dict:
    "{'all': units per test image for attacks on every image, 'robust': for members on the still-robust ones, 'aa': AutoAttack's count, 'ref': the reference's}."
    return names_units(sets, list(sets[name]))

def _every(sets: dict) -> dict:
    "Every attack of the sets by name."
    return {k: v for d in sets.values() for k, v in d.items()}

def names_units(sets: dict, names) -> dict:
    "`set_units` for a list of attack names (a worst case's members priced on the still-robust images unless listed themselves)."
    every, names = _every(sets), list(names)
    unknown = [k for k in names if k not in every]
    if unknown: raise PlanError(f"unknown attack(s) {unknown}; known: {sorted(every)}")
    out = dict(all=0.0, robust=0.0, apgd=0.0, aa=0, ref=0)
    for k in names:
        spec = every[k]
        if spec.get('kind') == 'autoattack': out['aa'] += 1; continue
        if spec.get('kind') == 'ref-autoattack': out['ref'] += 1; continue
        out['all'] += spec_units(spec)
        for mem in spec.get('members') or ():
            if mem in names: continue          # a column asked for itself, run on every image already
            m = every.get(mem) or {}
            out['apgd' if m.get('kind') in APGD_KINDS else 'robust'] += spec_units(m)
    return out

def reference_names(cols, sets=None) -> list:
    "The reference AutoAttack columns of an eval's 'reference': full names (ref_aa_linf_8) or norm and radius (linf_8); PlanError on others."
    known = list((sets or _builtin_sets())['reference'])
    if isinstance(cols, str) or not isinstance(cols, (list, tuple)):
        raise PlanError(f"eval reference must be a list of columns, e.g. [\"linf_8\"], got {cols!r}")
    out = []
    for c in cols:
        name = c if str(c).startswith('ref_aa_') else f'ref_aa_{c}'
        if name not in known: raise PlanError(f"eval reference: unknown column {c!r}; known: {known} (or {[k[7:] for k in known]})")
        if name not in out: out.append(name)
    return out


class PlanError(ValueError):
    "A plan or record set the planner cannot use; the message says what and how to fix it."


# ---------------------------------------------------------------------------------------------------------- records
LAYOUT_FILE = 'layout.json'
# A folder of evaluation records may hold layout.json, {"runs": {run: {"eval_gpus": x}}}: the GPUs (fractional where a helper
# GPU was shared) that run's attack processes had, as its lease's plan gave them (tools/gpu/land_five_seed.py writes it).
# Its GPU-seconds are then its process-seconds times eval_gpus / len(workers), whatever else used those GPUs.

def load_records(dirs) -> tuple[list, list]:
    "Speed records (kind 'speed', from JSON lists) and evaluation records (kind 'eval') of every *.json in `dirs` (with its layout.json)."
    speed, evals = [], []
    for d in dirs:
        d = Path(d)
        if not d.is_dir(): raise PlanError(f"--records {d}: not a folder")
        layout = {}
        if (d / LAYOUT_FILE).is_file():
            try:
                layout = json.loads((d / LAYOUT_FILE).read_text())['runs']
                if not isinstance(layout, dict) or not all(isinstance(v, dict) and float(v.get('eval_gpus', 1)) >= 1 for v in layout.values()):
                    raise TypeError('each run needs an object with eval_gpus >= 1')
            except (json.JSONDecodeError, KeyError, TypeError, ValueError) as e:
                raise PlanError(f"{d / LAYOUT_FILE}: not a layout file ({e}); expected {{\"runs\": {{run: {{\"eval_gpus\": x}}}}}}") from None
        for f in sorted(d.glob('*.json')):
            if f.name == LAYOUT_FILE: continue
            try: obj = json.loads(f.read_text())
            except json.JSONDecodeError: continue
            rel = _rel(f)
            if isinstance(obj, list):
                speed += [dict(r, _file=rel) for r in obj if isinstance(r, dict) and r.get('kind') == 'speed']
            elif isinstance(obj, dict) and obj.get('kind') == 'eval' and f.name not in SHARED_GPU_EVALS:
                eg = (layout.get(obj.get('run')) or {}).get('eval_gpus')
                evals.append(dict(obj, _file=rel, **({'_eval_gpus': float(eg)} if eg else {})))
    return speed, evals

def _rel(f: Path) -> str:
    try: return str(f.resolve().relative_to(ROOT))
    except ValueError: return str(f)

def _card_ok(r, card): return card.lower() in str(r.get('card', '')).lower()

def _key(r) -> dict:
    return dict(method=r.get('method'), loss_form=r.get('loss_form', 'paper'), gpus=int(r.get('gpus', 1)),
                variant=ALIASES.get(r.get('variant'), r.get('variant')))

def _src(r) -> str:
    k = _key(r)
    return (f"{r['_file']} ({r.get('card')}, {r.get('commit')}, {str(r.get('date', ''))[:16]}; "
            f"{k['method']}/{k['loss_form']} {k['gpus']} GPU {k['variant']} batch {r.get('batch')}: {r['s_per_real_epoch']} s)")


class Speeds:
    "Seconds per real epoch from the speed records of one card (records of runs sharing a card are left out)."
    DIMS = ('method', 'loss_form', 'gpus', 'variant')

    def __init__(self, records: list, card: str):
        self.card = card
        # a 'one-rank' feature pass is speed.py's stand-in for the refresh before sharding (the before of a comparison):
        # what the library runs is 'sharded' (or no refresh at all), so only those price a lease
        self.recs = [r for r in records if _card_ok(r, card) and 'shared' not in str(r.get('tag', ''))
                     and isinstance(r.get('s_per_real_epoch'), (int, float)) and r.get('feature_pass') != 'one-rank']

    @staticmethod
    def _newest(rs): return max(rs, key=lambda r: str(r.get('date', '')))

    def _ratio(self, dim, to, frm, batch, prefer: dict, commit=None):
        "t(dim=to) / t(dim=frm) from a pair of records of one commit equal in every other dimension (best-matching `prefer`)."
        best = None
        for a in self.recs:
            ka = _key(a)
            if ka[dim] != to or a.get('batch') != batch: continue
            for b in self.recs:
                kb = _key(b)
                if kb[dim] != frm or b.get('batch') != batch or b.get('commit') != a.get('commit'): continue
                if any(ka[d] != kb[d] for d in self.DIMS if d != dim): continue
                miss = sum(ka[d] != v for d, v in prefer.items()) + (a.get('commit') != commit)
                score = (miss, -_ts(a))
                if best is None or score < best[0]: best = (score, a, b)
        if best is None: return None
        _, a, b = best
        return a['s_per_real_epoch'] / b['s_per_real_epoch'], a, b

    def lookup(self, method, loss_form, gpus, variant, batch=512) -> dict:
        "{'s', 'record', 'assumption' (None when exact), 'source'} for one run's setting; PlanError when no record can give it."
        want = dict(method=method, loss_form=loss_form, gpus=gpus, variant=ALIASES.get(variant, variant))
        same = [r for r in self.recs if r.get('batch') == batch and all(_key(r)[d] == want[d] for d in ('method', 'loss_form'))]
        exact = [r for r in same if _key(r) == want]
        if exact:
            r = self._newest(exact)
            return dict(s=r['s_per_real_epoch'], record=r, assumption=None, source=_src(r))
        options = []
        for base in same:
            kb, f, notes, used = _key(base), 1.0, [], []
            dims = [d for d in ('variant', 'gpus') if kb[d] != want[d]]
            cur = dict(kb)
            ok = True
            for d in dims:   # variant first (at the base's GPU count), then GPUs (at the wanted variant)
                pref = {k: v for k, v in cur.items() if k != d}
                got = self._ratio(d, want[d], cur[d], batch, pref, base.get('commit'))
                if got is None and d == 'gpus':   # no pair at the wanted variant: any variant's GPU scaling
                    got = self._ratio_any_variant(want[d], cur[d], batch, pref, base.get('commit'))
                if got is None: ok = False; break
                ratio, a, b = got
                f *= ratio; cur[d] = want[d]; used.append(a)
                ka, frm = _key(a), _key(b)[d]
                on = (f"{ka['method']}/{ka['loss_form']} {ka['gpus']} GPU" if d == 'variant' else
                      f"{ka['method']}/{ka['loss_form']} {ka['variant']}")
                files = a['_file'] if a['_file'] == b['_file'] else f"{a['_file']} and {b['_file']}"
                unit = '' if d == 'variant' else ' GPUs'
                notes.append(f"x {ratio:.3f} ({d} {want[d]}/{frm}{unit} measured on {on}: "
                             f"{a['s_per_real_epoch']} / {b['s_per_real_epoch']} s, {files}, {a.get('commit')})")
            if ok: options.append((len(dims), -_ts(base), base, f, notes))
        if not options:
            have = sorted({(k['method'], k['loss_form'], k['gpus'], k['variant']) for k in map(_key, self.recs)})
            raise PlanError(f"no speed record on a '{self.card}' card can give {method}/{loss_form} on {gpus} GPU(s), variant "
                            f"{variant}, batch {batch} (records: {have or 'none'}); measure it with tools/gpu/speed.py "
                            f"or give the run an s_per_epoch")
        n, _, base, f, notes = min(options, key=lambda o: o[:2])
        kb = _key(base)
        what = [f"variant {want['variant']}" if kb['variant'] != want['variant'] else '',
                f"{gpus} GPU(s)" if kb['gpus'] != gpus else '']
        assumption = (f"no {method}/{loss_form} record for {' and '.join(w for w in what if w)}: its "
                      f"{kb['gpus']}-GPU {kb['variant']} record {base['s_per_real_epoch']} s ({base['_file']}, {base.get('commit')}) "
                      + ' '.join(notes))
        return dict(s=base['s_per_real_epoch'] * f, record=base, assumption=assumption, source=_src(base))

    def _ratio_any_variant(self, to, frm, batch, prefer, commit):
        "GPU scaling measured at any variant (the wanted variant has no pair)."
        best = None
        for v in sorted({_key(r)['variant'] for r in self.recs}):
            got = self._ratio('gpus', to, frm, batch, dict(prefer, variant=v), commit)
            if got is None or _key(got[1])['variant'] != v: continue
            score = (prefer.get('variant') != v, _key(got[1])['method'] != prefer.get('method'), -_ts(got[1]))
            if best is None or score < best[0]: best = (score, got)
        return best[1] if best else None


def _ts(r) -> float:
    "A record's date as a sortable number (0 when missing)."
    import datetime
    try: return datetime.datetime.fromisoformat(str(r.get('date'))).timestamp()
    except (TypeError, ValueError): return 0.0


class EvalModel:
    "Seconds of an evaluation, fitted on the evaluation records of one card; the attack sets from the library when it imports."

    def __init__(self, records: list, card: str, sets=None, as_ran: bool = False):
        "as_ran: each attack priced as the newest record ran it (record_sets), for records of one pinned commit."
        recs = [r for r in records if _card_ok(r, card) and isinstance(r.get('seconds'), dict) and isinstance(r.get('budgets'), dict)]
        if not recs: raise PlanError(f"no evaluation record on a '{card}' card (results/eval/*-eval.json): nothing to size evaluations with")
        got = library_sets() if sets is None else sets
        self.sets, self.sets_source = got if got else (_builtin_sets(), 'the built-in copy (the library did not import)')
        if as_ran:
            newest = max(recs, key=_ts)
            self.sets, self.sets_source = record_sets(self.sets, newest), f"{self.sets_source}, each attack as {newest.get('_file')} ran it"
        self.n = len(recs); self.files = [r['_file'] for r in recs]
        le = [(r['budgets']['le_epochs'] * _train(r) / N_TRAIN, r['seconds']['le']) for r in recs
              if r['budgets'].get('le_epochs') and isinstance(r['seconds'].get('le'), (int, float))]
        self.le_a, self.le_b = _line(le)
        rle = [r['seconds']['rle'] / (r['budgets']['rle_epochs'] * _train(r) / N_TRAIN) for r in recs
               if r['budgets'].get('rle_epochs') and isinstance(r['seconds'].get('rle'), (int, float))]
        self.rle_s = statistics.median(rle) if rle else None
        t = u = 0.0; aa = []; ref = []
        for r in recs:   # the unit: attacks that ran alone on every test image (not worst-case members, not AutoAttack)
            specs, n = r['budgets'].get('attacks') or {}, _test(r)
            members = {m for sp in specs.values() if isinstance(sp, dict) for m in sp.get('members') or ()}
            g = gpu_factor(r)
            n_aa = min(n, r['budgets'].get('autoattack_images') or r['budgets'].get('autoattack_n') or AA_N)
            for key, d in r['seconds'].items():
                if not key.startswith('attacks_') or not isinstance(d, dict): continue
                for name, sec in d.items():
                    spec = specs.get(name) or ({'kind': 'clean'} if name == 'clean' else {})
                    if not isinstance(sec, (int, float)) or name in members: continue
                    if spec.get('kind') == 'autoattack':
                        aa.append((sec * g, min(n, r['budgets'].get('autoattack_n') or AA_N))); continue
                    if spec.get('kind') == 'ref-autoattack': ref.append((sec * g, n_aa)); continue
                    if spec.get('kind') in ('clean', 'pgd', 'bim', 'fgsm', 'jitter'):
                        t += sec * g; u += n * spec_units(spec)
        if not u: raise PlanError(f"the evaluation records on a '{card}' card time no attack")
        self.unit_s = t / u
        self.aa_units = statistics.median(s / (n * self.unit_s) for s, n in aa) if aa else AA_UNITS
        self.aa_measured = len(aa)
        self.ref_units = statistics.median(s / (n * self.unit_s) for s, n in ref) if ref else REF_AA_UNITS
        self.ref_measured = len(ref)
        aff = [r for r in recs if r['budgets'].get('aff_epochs') and isinstance(r['seconds'].get('aff'), (int, float))]
        a = max(aff, key=_ts) if aff else None   # the newest record: its code
        self.aff_s = a['seconds']['aff'] / (a['budgets']['aff_epochs'] * _train(a) / N_TRAIN) if a else AFF_S_PER_EPOCH
        self.aff_measured = len(aff)
        timed = [r for r in recs if apgd_timings(r, self.sets)]   # the newest record that times them (its code, its card)
        pts = apgd_timings(max(timed, key=_ts), self.sets) if timed else []
        self.apgd_fit, self.apgd_measured = (_line(pts) if len({x for x, _ in pts}) >= 2 else None), len(pts)
        self.apgd_shards = int(max(timed, key=_ts)['budgets'].get('shards') or 1) if timed else 1

    def describe(self) -> str:
        aa = (f"AutoAttack {self.aa_units:.0f} units per image and norm from {self.aa_measured} timings" if self.aa_measured else
              f"AutoAttack ASSUMED {self.aa_units:.0f} units per image and norm on at most {AA_N} images (no record times it; AA_UNITS in this file)")
        ref = (f"reference AutoAttack {self.ref_units:.0f} units per image and norm from {self.ref_measured} timings" if self.ref_measured else
               f"reference AutoAttack ASSUMED {self.ref_units:.0f} units per image and norm on at most {AA_N} images (no record times it; REF_AA_UNITS in this file, from one evaluation piece's timing)")
        rle = f"rLE {self.rle_s:.2f} s per epoch of {N_TRAIN} images" if self.rle_s else "rLE: no record"
        rle += (f"; AFF {self.aff_s:.1f} s per epoch" + (f" from the newest of {self.aff_measured} records" if self.aff_measured
                                                           else " ASSUMED (no record times it; AFF_S_PER_EPOCH in this file)"))
        apgd = (f"APGD members {self.apgd_fit[0] * 1e3:.2f} ms per step whatever the images (at {self.apgd_shards} shard(s), each "
                f"a call of its own) + {self.apgd_fit[1] * 1e6:.1f} us per image and step, from {self.apgd_measured} member "
                "timings" if self.apgd_fit else
                "APGD members priced as the other attacks (no record times them one by one)")
        return (f"evaluation model from {self.n} records ({', '.join(sorted(set(Path(f).name for f in self.files)))}): "
                f"LE {self.le_a:.1f} s + {self.le_b:.3f} s per epoch; {rle}; attacks {self.unit_s * 1e6:.1f} us per image "
                f"and step (a unit), each head; worst-case members ASSUMED to run on {ROBUST_FRAC:.0%} of the images; {apgd}; {aa}; "
                f"{ref}; attack sets from {self.sets_source}")

    def predict(self, ev: dict, eval_startup_s: float) -> dict:
        "Seconds of one evaluation by component."
        ev = {**EVAL_DEFAULTS, **ev}
        scale = ev['train_images'] / N_TRAIN
        n = ev['n_test'] or N_TEST
        rle = bool(ev['rle_epochs'])
        if rle and self.rle_s is None: raise PlanError("the plan asks for rLE but no evaluation record times it")
        kinds = [k for k, on in (('le', ev['le']), ('rle', rle), ('classifier', ev.get('classifier')), ('aff', ev['aff'])) if on]
        heads = len(kinds)   # the heads attacked: a run's own classifier too
        if not heads: raise PlanError("an evaluation with neither LE nor rLE (le false, rle_epochs 0) evaluates nothing")
        out = dict(startup=eval_startup_s, le=self.le_a + self.le_b * ev['le_epochs'] * scale if ev['le'] else 0.0,
                   rle=self.rle_s * ev['rle_epochs'] * scale if rle else 0.0,
                   aff=self.aff_s * ev['aff_epochs'] * scale if ev['aff'] else 0.0)
        gpus = max(1.0, float(ev['eval_gpus'] or 1))   # fractional: a helper GPU shared with other evaluations
        rf = ROBUST_FRAC if ev['robust_frac'] is None else float(ev['robust_frac'])   # the records' AutoAttack: ~ROBUST_FRAC left
        for key, on in (('table1', True), ('table3', ev['table3']), ('rocl', ev['rocl_protocol']), ('autoattack', ev['autoattack']),
                        ('reference', bool(ev['reference']))):
            if not on: u = dict(all=0.0, robust=0.0, apgd=0.0, aa=0, ref=0)
            elif key == 'table1' and ev['attacks'] is not None: u = names_units(self.sets, ev['attacks'])   # the columns asked for
            elif key == 'reference': u = names_units(self.sets, reference_names(ev['reference'], self.sets))
            else: u = set_units(self.sets, key)
            units = (n * (u['all'] + rf * u['robust'])
                     + min(n, AA_N) * (u['aa'] * self.aa_units + u['ref'] * self.ref_units) * rf / ROBUST_FRAC)
            per_step = self.apgd_fit and self.apgd_fit[0] * (ev['shards'] or self.apgd_shards) / self.apgd_shards   # once per block
            apgd = u['apgd'] * (per_step + self.apgd_fit[1] * n * rf) if self.apgd_fit else n * rf * u['apgd'] * self.unit_s
            out[f'attacks_{key}'] = heads * (units * self.unit_s + apgd) / gpus   # GPU-seconds over the GPUs
        out['total'] = sum(out.values())
        out['eval_gpus'] = gpus; out['heads'] = heads; out['kinds'] = kinds
        return out


def resume_credit(ev: dict, folder, card: str = '') -> tuple[dict, list]:
    """An evaluation that resumes the pieces an earlier lease left (`results/eval/parts/<run>-eval.parts`, repro_session.sh copies
    them in): a head fitted there (`<key>-head.pt`) is not fitted again, a head attacked there (`<key>.json`) not attacked again.
    Only heads of this evaluation count, and only pieces whose records name this card (the card is part of a piece's
    fingerprint; a folder without a record names none: no credit). An AFF evaluation takes no such pieces (its state comes
    from AFF_DIR). The planner cannot check the rest of the fingerprint (weights, settings): it says what it credits."""
    folder = Path(folder) if folder else None
    if folder is None or not folder.is_dir() or ev.get('aff'): return ev, []
    cards = set()
    for f in folder.glob('*.json'):
        try: cards.add(str(json.loads(f.read_text()).get('card', '')))
        except (json.JSONDecodeError, OSError, AttributeError): cards.add('')
    if not cards or not all(card.lower() in c.lower() for c in cards):
        return ev, [f"nothing credited: pieces of {', '.join(sorted(cards)) or 'no named card'}, not '{card}'"]
    e, done, kinds = dict(ev), [], ev.get('kinds', [])
    for key in ('le', 'rle'):
        if key in kinds and (folder / f'{key}-head.pt').is_file(): e[key] = 0.0; done.append(f'{key} head fitted')
    attacked = [k for k in kinds if (folder / f'{k}.json').is_file()]
    done += [f'{k} attacked' for k in attacked]
    frac = max(0, e['heads'] - len(attacked)) / e['heads']
    for k in [k for k in e if k.startswith('attacks_')]: e[k] *= frac
    e['total'] = sum(v for k, v in e.items() if k in ('startup', 'le', 'rle', 'aff') or k.startswith('attacks_'))
    return e, done


def _train(r): return r['budgets'].get('train_images') or N_TRAIN

def gpu_factor(r: dict) -> float:
    "A record's process-seconds -> GPU-seconds (see EVAL_DEFAULTS): its GPUs over its processes."
    w = r['budgets'].get('workers')
    if not (isinstance(w, list) and w): return 1.0
    return r['_eval_gpus'] / len(w) if r.get('_eval_gpus') else len(set(w)) / len(w)   # _eval_gpus: its folder's layout.json

def apgd_timings(r: dict, sets: dict) -> list:
    ("(images it ran on, GPU-seconds per unit) of each APGD-CE / APGD-T worst-case member that an evaluation record "
     "times: the images it ran on are those its column's earlier members left (the first: the clean-correct ones), from "
     "the record's `worst` counts ([[member, % left]] per head and column) and its clean accuracy.")
    every, n, out, g, m = _every(sets), _test(r), [], gpu_factor(r), r.get('metrics') or {}
    for head, cols in (r.get('worst') or {}).items():
        clean = m.get('clean') if head == 'le' else (m.get(head) or {}).get('clean')   # the LE head's columns: top level
        sec = (r.get('seconds') or {}).get(f'attacks_{head}') or {}
        if not isinstance(cols, dict) or not isinstance(clean, (int, float)): continue
        for chain in cols.values():
            before = clean * n / 100
            for mem, left in chain:
                spec = every.get(mem) or {}
                if spec.get('kind') in APGD_KINDS and isinstance(sec.get(mem), (int, float)):
                    out.append((before, sec[mem] * g / spec_units(spec)))
                before = left * n / 100
    return out
def _test(r): return r['budgets'].get('test_images') or r['budgets'].get('n_test') or N_TEST

def _line(pts):
    "Least-squares a + b x (a >= 0); b alone (through 0) with fewer than two distinct x."
    if not pts: raise PlanError("no evaluation record times LE")
    xs, ys = zip(*pts)
    if len(set(xs)) < 2: return 0.0, sum(ys) / sum(xs)
    mx, my = statistics.fmean(xs), statistics.fmean(ys)
    b = sum((x - mx) * (y - my) for x, y in pts) / sum((x - mx) ** 2 for x in xs)
    a = my - b * mx
    if a < 0: a, b = 0.0, sum(x * y for x, y in pts) / sum(x * x for x in xs)
    return a, b


# ------------------------------------------------------------------------------------------------------------ plan
def _set(run: dict, key: str, value):
    "Set a field of a run; 'eval.rle_epochs' reaches into the run's eval object (created when it is null)."
    *path, last = key.split('.')
    d = run
    for p in path:
        if not isinstance(d.get(p), dict): d[p] = {}
        d = d[p]
    d[last] = value

def parse_set(s: str):
    if '=' not in s: raise PlanError(f"--set {s!r}: expected KEY=VALUE, e.g. variant=base or eval.rle_epochs=150")
    k, v = s.split('=', 1)
    try: v = json.loads(v)
    except json.JSONDecodeError: pass
    return k.strip(), v

def load_plan(path, sets=()) -> tuple[list, str]:
    "The runs of a plan file (defaults applied, checked) and its note."
    try: obj = json.loads(Path(path).read_text())
    except FileNotFoundError: raise PlanError(f"plan {path}: no such file")
    except json.JSONDecodeError as e: raise PlanError(f"plan {path}: not JSON ({e})")
    runs, defaults, note = (obj, {}, '') if isinstance(obj, list) else (obj.get('runs'), obj.get('defaults') or {}, obj.get('note', ''))
    if not isinstance(runs, list) or not runs: raise PlanError(f"plan {path}: no runs (a JSON list, or an object with 'runs')")
    out = []
    for i, r in enumerate(runs):
        if not isinstance(r, dict): raise PlanError(f"plan {path}: run {i} is not an object")
        r = json.loads(json.dumps({**RUN_DEFAULTS, **defaults, **r}))
        for k, v in sets: _set(r, k, v)
        for f in ('name', 'method', 'epochs'):
            if f not in r: raise PlanError(f"plan {path}: run {i} has no '{f}'")
        v = ALIASES.get(r['variant'], r['variant'])
        if v not in VARIANTS: raise PlanError(f"run {r['name']}: variant {r['variant']!r} is not one of {sorted(VARIANTS | set(ALIASES))}")
        if not isinstance(r['gpus'], int) or r['gpus'] < 1: raise PlanError(f"run {r['name']}: gpus must be a positive integer")
        if not isinstance(r['epochs'], int) or r['epochs'] < 1: raise PlanError(f"run {r['name']}: epochs must be a positive integer")
        if not isinstance(r.get('trained', False), bool): raise PlanError(f"run {r['name']}: trained must be true or false, got {r['trained']!r}")
        if r['eval'] is not None:
            if not isinstance(r['eval'], dict): raise PlanError(f"run {r['name']}: eval must be an object or null")
            bad = set(r['eval']) - set(EVAL_DEFAULTS)
            if bad: raise PlanError(f"run {r['name']}: unknown eval field(s) {sorted(bad)}; known: {sorted(EVAL_DEFAULTS)}")
            e = r['eval']
            try:
                if e.get('reference'): e['reference'] = reference_names(e['reference'])
                if e.get('attacks') is not None:
                    if isinstance(e['attacks'], str) or not isinstance(e['attacks'], list) or not e['attacks']:
                        raise PlanError(f"eval attacks must be a non-empty list of names, got {e['attacks']!r}")
                    names_units(_builtin_sets(), e['attacks'])
            except PlanError as err: raise PlanError(f"run {r['name']}: {err}") from None
            g = e.get('eval_gpus', 1)
            if isinstance(g, bool) or not isinstance(g, (int, float)) or g < 1:
                raise PlanError(f"run {r['name']}: eval_gpus must be a number >= 1 (1.333: a helper GPU shared by three), got {g!r}")
        out.append(r)
    names = [r['name'] for r in out]
    if len(set(names)) != len(names): raise PlanError(f"plan {path}: run names repeat")
    return out, note


def _plan_speed(v, card: str):
    "A plan's s_per_epoch for this card: a number, or {card substring: number} (None when no key is in the card)."
    if not isinstance(v, dict): return float(v)
    hits = [float(s) for k, s in v.items() if k.lower() in card.lower()]
    return hits[0] if hits else None


def price(runs, speeds: Speeds, evm: EvalModel | None, a) -> list:
    "Each run with its predicted seconds: start-up, training (and where its speed came from), evaluation."
    jobs = []
    for r in runs:
        if r.get('trained') is True:
            sp = dict(s=0.0, record=None, assumption=None, source='trained earlier (evaluation only)')
        elif 's_per_epoch' in r and _plan_speed(r['s_per_epoch'], a.card) is not None:
            sp = dict(s=_plan_speed(r['s_per_epoch'], a.card), record=None, assumption="s_per_epoch given in the plan", source='the plan')
        else:
            sp = speeds.lookup(r['method'], r['loss_form'], r['gpus'], r['variant'], r['batch'])
        v = ALIASES.get(r['variant'], r['variant'])
        startup = 0.0 if r.get('trained') is True else a.run_startup_s + (a.compile_s if v in COMPILED else 0)
        ev = None
        if r['eval'] is not None:
            if evm is None: raise PlanError("the plan evaluates runs but no evaluation record was found")
            e_in = dict(r['eval'])
            if e_in.get('robust_frac') is None and r['method'] in NONROBUST: e_in['robust_frac'] = NONROBUST_FRAC
            e_in['classifier'] = r['method'] in SUPERVISED
            ev = evm.predict(e_in, a.eval_startup_s)
            parts = getattr(a, 'parts', None)
            ev, ev['resumes'] = resume_credit(ev, Path(parts) / f"{r['name']}-eval.parts" if parts else None, a.card)
        jobs.append(dict(run=r, speed=sp, startup_s=startup, train_s=r['epochs'] * sp['s'], eval=ev,
                         eval_s=ev['total'] if ev else 0.0))
    return jobs


def assign(jobs, n_gpus: int, t0: float, evals: str = 'inline') -> list:
    """Trainings longest first, each on the GPU(s) free earliest (a data-parallel one holds its GPUs until its training
    ends). evals='inline': each evaluation right after its training, on the first of its GPUs (what compare.sh does);
    'last': every evaluation after the trainings, each on the GPU free earliest once its training has ended."""
    for j in jobs:
        if j['run']['gpus'] > n_gpus:
            raise PlanError(f"run {j['run']['name']} needs {j['run']['gpus']} GPUs; the machine has {n_gpus}")
    if evals not in ('inline', 'last'): raise PlanError(f"evals must be 'inline' or 'last', got {evals!r}")
    free = [t0] * n_gpus
    key = (lambda j: -(j['startup_s'] + j['train_s'] + j['eval_s'])) if evals == 'inline' else (lambda j: -(j['startup_s'] + j['train_s']))
    for j in sorted(jobs, key=key):
        g = j['run']['gpus']
        idx = sorted(range(n_gpus), key=lambda i: (free[i], i))[:g]
        start = max(free[i] for i in idx)
        j.update(gpu_ids=sorted(idx), start=start, train_end=start + j['startup_s'] + j['train_s'])
        j['eval_gpu'], j['eval_start'] = min(idx), j['train_end']
        for i in idx: free[i] = j['train_end']
        if evals == 'inline': free[min(idx)] += j['eval_s']
    if evals == 'last':
        for j in sorted(jobs, key=lambda j: j['train_end']):
            if not j['eval_s']: continue
            i = min(range(n_gpus), key=lambda i: (max(free[i], j['train_end']), i))
            j['eval_gpu'], j['eval_start'] = i, max(free[i], j['train_end'])
            free[i] = j['eval_start'] + j['eval_s']
    for j in jobs: j['end'] = j['eval_start'] + j['eval_s']
    return jobs


def report(jobs, n_gpus, a, note='', evm=None) -> tuple[str, float]:
    "The per-GPU table, the speed sources and the evaluation model; returns (text, predicted end in seconds)."
    m = lambda s: f"{s / 60:6.1f}"
    L = [f"plan {a.plan}: {len(jobs)} runs on {n_gpus}x '{a.card}'; limit {a.limit_min:g} min; evaluations {a.evals}"
         + (f"; changed: {', '.join(a.sets)}" if a.sets else '') + (f"\n  {note}" if note else ''),
         f"start-up: lease {a.startup_s:g} s, each training run {a.run_startup_s:g} s (+{a.compile_s:g} s compiled), "
         f"each evaluation {a.eval_startup_s:g} s", '']
    end = max([j['end'] for j in jobs] + [a.startup_s])
    for g in range(n_gpus):
        segs = [(j['start'], j['train_end'], 'train', j) for j in jobs if g in j['gpu_ids']]
        segs += [(j['eval_start'], j['end'], 'eval', j) for j in jobs if j['eval_s'] and j['eval_gpu'] == g]
        L.append(f"GPU {g}  (minutes; 'train' includes the run's start-up)")
        L.append(f"  {'':5} {'run':<22} {'gpus':>4} {'variant':>8} {'s/ep':>6} {'epochs':>6} {'start':>6} {'takes':>6} {'end':>6}")
        for t0, t1, kind, j in sorted(segs, key=lambda s: (s[0], s[2] == 'train')):
            r = j['run']
            what = (f"{r['gpus']:>4} {r['variant']:>8} {j['speed']['s']:6.2f} {r['epochs']:>6}" if kind == 'train' else f"{'':>4} {'':>8} {'':>6} {'':>6}")
            rank = '  (data-parallel, not its first GPU)' if kind == 'train' and g != min(j['gpu_ids']) else ''
            L.append(f"  {kind:5} {r['name'][:22]:<22} {what} {m(t0)} {m(t1 - t0)} {m(t1)}{rank}")
        busy = max([s[1] for s in segs], default=a.startup_s)
        L.append(f"  {'idle after':<28} {'':>4} {'':>8} {'':>6} {'':>6} {'':>6} {'':>6} {m(busy)}")
    L += ['', 'speed (seconds per real epoch) of each run:']
    for j in jobs:
        sp = j['speed']
        L.append(f"  {j['run']['name']}: {sp['s']:.3f} s from {sp['source']}")
        if sp['assumption']: L.append(f"    ASSUMED: {sp['assumption']}")
    evs = [j for j in jobs if j['eval']]
    if evs:
        L += ['', evm.describe() if evm else '']
        for j in evs:
            e = j['eval']
            L.append(f"  {j['run']['name']}: {e['total']:.0f} s = start-up {e['startup']:.0f} + LE {e['le']:.0f} + rLE {e['rle']:.0f}"
                     + (f" + AFF {e['aff']:.0f}" if e['aff'] else '')
                     + f" + attacks: Table 1 {e['attacks_table1']:.0f}, Table 3 {e['attacks_table3']:.0f}, RoCL's {e['attacks_rocl']:.0f},"
                     f" AutoAttack {e['attacks_autoattack']:.0f}, reference AutoAttack {e['attacks_reference']:.0f}"
                     + (f" (on {e['eval_gpus']:.3g} GPUs)" if e['eval_gpus'] != 1 else '')
                     + (f"; resumes {a.parts}/{j['run']['name']}-eval.parts: {', '.join(e['resumes'])}" if e.get('resumes') else ''))
    tr = sum(j['startup_s'] + j['train_s'] for j in jobs) / 60
    L += ['', f"training {tr:.1f} GPU-min, evaluation {sum(j['eval_s'] for j in jobs) / 60:.1f} GPU-min; predicted end {end / 60:.1f} min"]
    return '\n'.join(L), end


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('plan', help='plan file (JSON)')
    ap.add_argument('--gpus', type=int, default=1, help='GPUs of the machine (default %(default)s)')
    ap.add_argument('--card', default='H100', help="records whose card contains this (case-insensitive; default %(default)s)")
    ap.add_argument('--limit-min', type=float, default=26.0, help='refuse a plan whose predicted end passes this (default %(default)s)')
    ap.add_argument('--startup-s', type=float, default=STARTUP_S, help='once, before any run: machine start, staging (default %(default)s)')
    ap.add_argument('--run-startup-s', type=float, default=RUN_STARTUP_S, help='per training run (default %(default)s)')
    ap.add_argument('--compile-s', type=float, default=COMPILE_S, help='per compiled training run, on top (default %(default)s)')
    ap.add_argument('--eval-startup-s', type=float, default=EVAL_STARTUP_S, help='per evaluation (default %(default)s)')
    ap.add_argument('--records', action='append', default=None, metavar='DIR',
                    help='folder of speed (JSON lists) and evaluation (*-eval.json) records; repeatable (default results/speed, results/eval, results/eval/rle, results/eval/five-seed and results/eval/aff)')
    ap.add_argument('--set', action='append', default=[], metavar='KEY=VALUE', dest='sets',
                    help='change every run: variant=base, gpus=2, eval.rle_epochs=150, eval.autoattack=false (VALUE as JSON when it parses)')
    ap.add_argument('--evals', choices=('inline', 'last'), default='inline',
                    help="inline: each evaluation right after its training on its first GPU (default); last: after every training, on any free GPU")
    ap.add_argument('--eval-commit', default=None, metavar='SHA',
                    help="size evaluations from the records of this commit (a prefix) alone, each attack priced as its newest "
                         "record ran it: the code and protocol a pinned lease runs (default: every record of the card, older "
                         "and slower code included, with the library's attack sets)")
    ap.add_argument('--json', default=None, metavar='OUT', help='also write the prediction as JSON')
    ap.add_argument('--parts', default=str(ROOT / 'results' / 'eval' / 'parts'), metavar='DIR',
                    help="an earlier lease's evaluation pieces, <run>-eval.parts/ (default %(default)s): heads fitted or attacked there "
                         "are not priced again; '' prices every evaluation whole")
    a = ap.parse_args(argv)
    try:
        if a.gpus < 1: raise PlanError("--gpus must be >= 1")
        dirs = a.records or [ROOT / 'results' / 'speed', ROOT / 'results' / 'eval',   # with the rLE-only and five-seed evaluations where they are
                             *[ROOT / 'results' / 'eval' / d for d in ('rle', 'five-seed', 'aff') if (ROOT / 'results' / 'eval' / d).is_dir()]]
        runs, note = load_plan(a.plan, [parse_set(s) for s in a.sets])
        speed, evals = load_records(dirs)
        speeds = Speeds(speed, a.card)
        if a.eval_commit:
            evals = [r for r in evals if str(r.get('commit', '')).startswith(a.eval_commit)]
            if not evals: raise PlanError(f"--eval-commit {a.eval_commit}: no evaluation record of that commit")
        # --eval-commit: that commit's protocol too, as its newest record ran it
        evm = EvalModel(evals, a.card, as_ran=bool(a.eval_commit)) if any(r['eval'] is not None for r in runs) else None
        jobs = assign(price(runs, speeds, evm, a), a.gpus, a.startup_s, a.evals)
    except PlanError as e:
        print(f"plan: error: {e}", file=sys.stderr); return 2
    text, end = report(jobs, a.gpus, a, note, evm)
    print(text)
    limit = a.limit_min * 60
    if a.json:
        Path(a.json).write_text(json.dumps(dict(plan=str(a.plan), gpus=a.gpus, card=a.card, limit_min=a.limit_min, end_min=end / 60,
            fits=end <= limit, sets=a.sets, runs=[dict(name=j['run']['name'], gpu_ids=j['gpu_ids'], start_min=j['start'] / 60,
            train_end_min=j['train_end'] / 60, eval_gpu=j['eval_gpu'], eval_start_min=j['eval_start'] / 60, end_min=j['end'] / 60, s_per_epoch=j['speed']['s'], speed_source=j['speed']['source'],
            assumption=j['speed']['assumption'], eval_s=j['eval']) for j in jobs]), indent=1))
    if end > limit:
        worst = max(jobs, key=lambda j: j['end'])
        print(f"refused: predicted end {end / 60:.1f} min passes the {a.limit_min:g} min limit by {(end - limit) / 60:.1f} min "
              f"(last to end: {worst['run']['name']} on GPU {worst['eval_gpu']})")
        return 1
    print(f"ok: predicted end {end / 60:.1f} min, {(limit - end) / 60:.1f} min within the {a.limit_min:g} min limit")
    return 0


if __name__ == '__main__': sys.exit(main())
