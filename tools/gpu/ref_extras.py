#!/usr/bin/env python
"""The reference AutoAttack at more norms on the LE head an evaluation already fitted: the five-seed set's l_2 0.5 and l_1 12
check on one seed per method (issue #34 item 3), run on a GPU that is free while a later lease trains.

  python tools/gpu/ref_extras.py c10-200-swaro-s0 c10-200-rocl-s0 --runs $S/runs --heads /root/swaro/weights \
      --records results/eval/five-seed --out $S/side/extras --shards 4

For each run: its network from `--runs/<run>` (the float16 weights.pt its lease exported, which repro_session.sh
EVAL_FROM=f16 evaluated, and its config.json), its LE head from `--heads/<run>-eval-heads.pt` (the head that evaluation
fitted and wrote beside its record), the same test images (seed and --n-test of the evaluation record), then
`evaluate_robustness` with clean, the worst cases of --columns and their reference AutoAttack columns (ref_aa_<col>), in
float32 with the record's --shards. The classifier is the record's LE classifier itself, so the worst cases here repeat
the record's (the record's own values are kept beside, `main`), and `ref_check` compares each with the reference on the
same images. One JSON a run, `<out>/<run>-ref-extras.json`, written as soon as that run is done (kind 'ref-extras', the
evaluation record's per-image encoding). Exit 1 when a run could not be done (the others still are); 2: bad arguments.
`--smoke`: the worst cases' members at CPU size (swaro_nb.eval_config.SMOKE_MEMBERS), for a dry run.

`--against REC` (a ref-extras record of the same run): this code's worst cases alone, without running the reference again,
compared image by image with REC's reference columns (kind 'worst-check', `<out>/<run>-worst-check.json`): how a new worst
case (e.g. one that adds apgd_l1) stands against a reference already measured on the same images and head.
"""
from __future__ import annotations
import argparse, hashlib, json, os, sys, time, traceback
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
_NOT_ACC = ('n', 'n_autoattack', 'seconds', 'aa_seconds', 'worst', 'aa_check', 'ref_check', 'aa_chain', 'shards', 'attacks', 'flags', 'per_image')


def sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for b in iter(lambda: f.read(1 << 20), b''): h.update(b)
    return h.hexdigest()


def extras(run: str, a) -> dict:
    "The reference AutoAttack at a's columns on run's LE head; the record (also written to a.out)."
    import torch
    from swaro_nb.core import run_stamp, pack_codes, atomic_json
    from swaro_nb.runs import load_run
    from swaro_nb.evaluate import eval_data
    from swaro_nb.eval_config import SMOKE_MEMBERS
    from swaro_nb.linear import LinearClassifier
    from swaro_nb.execution import evaluate_robustness
    t0 = time.perf_counter()
    rd, hf = Path(a.runs) / run, Path(a.heads) / f'{run}-eval-heads.pt'
    for f, what in ((rd / 'weights.pt', 'its float16 weights (repro_session.sh PRELOAD puts them there)'), (rd / 'config.json', 'its config'),
                    (hf, 'the heads its evaluation wrote beside its record')):
        if not f.is_file(): raise FileNotFoundError(f"{run}: {f} is missing ({what})")
    main = None
    if a.records:
        mf = Path(a.records) / f'{run}-eval.json'
        if not mf.is_file(): raise FileNotFoundError(f"{run}: {mf} is missing (the evaluation record whose LE head this attacks)")
        main = json.loads(mf.read_text())
    n_test = a.n_test if a.n_test is not None else (main['budgets']['n_test'] if main else 2000)
    seed = a.seed if a.seed is not None else (main['budgets']['seed'] if main else 0)
    dev = torch.device(a.device or ('cuda' if torch.cuda.is_available() else 'cpu'))
    net, method, cfg, rec = load_run(rd, dev)
    heads = torch.load(hf, map_location='cpu', weights_only=True)
    if 'le' not in heads: raise ValueError(f"{run}: {hf} holds no LE head (keys {sorted(heads)})")
    data = eval_data(cfg.dataset, None, n_test, seed)
    index = pack_codes(data['test_index'], 'uint16')
    if main and main['per_image']['test_index'] != index:
        raise ValueError(f"{run}: the test images (n_test {n_test}, seed {seed}) are not those of {a.records}/{run}-eval.json")
    model = LinearClassifier(method.encoder(net), int(heads['feature_dim']), int(heads['n_classes'])).to(dev)
    model.head.load_state_dict(heads['le'])
    cols = [c for c in a.columns.split(',') if c]
    against = json.loads(Path(a.against).read_text()) if a.against else None
    if against is not None and (against.get('run') != run or against['per_image']['test_index'] != index):
        raise ValueError(f"{run}: {a.against} is not a ref-extras record of {run} on these test images")
    attacks = ['clean', *cols, *([] if against else [f'ref_aa_{c}' for c in cols])]
    r = evaluate_robustness(model, data['test_images'], data['test_labels'], attacks, batch_size=a.batch_size, device=dev, seed=seed,
                            progress=False, amp=False, autoattack_n=a.autoattack_n, fast=True, workers=a.workers.split(',') if a.workers else None,
                            shards=a.shards, members=SMOKE_MEMBERS if a.smoke else None)
    acc = {k: v for k, v in r.items() if k not in _NOT_ACC}
    mm = (main or {}).get('metrics', {})
    res = dict(kind='ref-extras', run=run, head='le', method=cfg.method, dataset=cfg.dataset, **run_stamp(dev),
               weights=dict(file=str(rd / 'weights.pt'), sha256=sha256(rd / 'weights.pt')), heads=dict(file=str(hf), sha256=sha256(hf)),
               main=dict(record=f'{run}-eval.json', commit=main.get('commit'), card=main.get('card'),
                         metrics={k: mm.get(k) for k in acc if k in mm}) if main else None,
               metrics=acc, ref_check=r['ref_check'], worst=r['worst'], flags=r['flags'],
               budgets=dict(n_test=n_test, seed=seed, test_images=len(data['test_labels']), autoattack_images=r['n_autoattack'], shards=r['shards'],
                            batch_size=a.batch_size, workers=a.workers.split(',') if a.workers else None, attack_amp=False, fast=True,
                            attacks=r['attacks'], smoke=bool(a.smoke)),
               seconds=dict(attacks=r['seconds'], total=time.perf_counter() - t0), aa_seconds=r['aa_seconds'],
               per_image=dict(encoding='packbits-little-base64', n=len(data['test_index']), test_index=index,
                              correct={'le': r['per_image']['correct']}, n_col=r['per_image']['n_col'],
                              worst_member={'le': r['per_image']['worst_member']}))
    if against is not None:
        res.update(kind='worst-check', against=dict(record=str(a.against), commit=against.get('commit'), card=against.get('card')),
                   ref_check=versus_reference(r['per_image']['correct'], against, cols))
    res['path'] = str(atomic_json(res, Path(a.out) / f"{run}-{'worst-check' if against else 'ref-extras'}.json"))
    return res


def versus_reference(correct: dict, rec: dict, cols: list) -> dict:
    ("Each worst case (per-image bits `correct`) against the reference column of ref-extras record `rec`, on its images "
     "(swaro_nb.robustness.ref_check, as an evaluation checks its own): only_reference counts the images the reference "
     "breaks and the worst case leaves correct, only_column the reverse.")
    import torch
    from swaro_nb.core import unpack_bits
    from swaro_nb.stats import per_image_correct
    from swaro_nb.robustness import ref_check, REF_PAIRS
    out = {}
    for c in cols:
        ref = per_image_correct(rec, 'le', REF_PAIRS[c])
        if ref is None: raise ValueError(f"{rec.get('run')}: the record holds no {REF_PAIRS[c]}")
        w = unpack_bits(correct[c], rec['per_image']['n'])
        chk = ref_check({c: torch.as_tensor(w), REF_PAIRS[c]: torch.as_tensor(ref)})[c]
        w = w[:len(ref)]
        out[c] = dict(chk, only_reference=int((w & ~ref).sum()), only_column=int((ref & ~w).sum()))
    return out


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('runs_', nargs='+', metavar='RUN', help='run names')
    ap.add_argument('--runs', required=True, help='folder of run folders holding weights.pt and config.json (repro_session.sh: $S/runs)')
    ap.add_argument('--heads', required=True, help='folder of <run>-eval-heads.pt')
    ap.add_argument('--records', default=None, help="folder of the runs' evaluation records (their test images and values are checked and kept beside)")
    ap.add_argument('--out', required=True, help='folder for <run>-ref-extras.json')
    ap.add_argument('--columns', default='l2_05,l1_12', help='worst-case columns checked by their reference AutoAttack (default %(default)s)')
    ap.add_argument('--n-test', type=int, default=None, help="test images (default: the record's, else 2000)")
    ap.add_argument('--seed', type=int, default=None, help="seed of the test subset and the attacks (default: the record's, else 0)")
    ap.add_argument('--autoattack-n', type=int, default=2000, help='images the reference runs on (the first; default %(default)s)')
    ap.add_argument('--shards', type=int, default=None, help="blocks of images each unit is split into (use the evaluation's --shards)")
    ap.add_argument('--workers', default=None, help='attack processes, e.g. cuda:0,cuda:0 (default: in this process)')
    ap.add_argument('--batch-size', type=int, default=512)
    ap.add_argument('--device', default=None)
    ap.add_argument('--smoke', action='store_true', help="the worst cases' members at CPU size (a dry run)")
    ap.add_argument('--against', default=None, metavar='REC',
                    help="a ref-extras record of the run: the worst cases alone, compared with its reference (one run only)")
    a = ap.parse_args(argv)
    known = ('linf_8', 'l2_05', 'l1_12')
    bad = [c for c in a.columns.split(',') if c not in known]
    if bad or not a.columns: ap.error(f"--columns: {', '.join(bad) or 'empty'} not one of {', '.join(known)} (the columns with a reference AutoAttack)")
    if a.against and len(a.runs_) != 1: ap.error('--against: one run only (the record is of one run)')
    failed = 0
    for run in a.runs_:
        try:
            res = extras(run, a)
            rc = res['ref_check']
            print(f"{run}: " + ', '.join(f"{c} {v['column']:.2f} vs reference {v['reference']:.2f} (gap {v['gap']:+.2f}, n {v['n']})" for c, v in rc.items())
                  + f"; {res['seconds']['total']:.0f} s; {len(res['flags'])} flag(s) -> {res['path']}", flush=True)
        except Exception as e:
            failed += 1
            traceback.print_exc()
            print(f"{run}: error: {type(e).__name__}: {e}", file=sys.stderr, flush=True)
    return 1 if failed else 0


if __name__ == '__main__': sys.exit(main())
