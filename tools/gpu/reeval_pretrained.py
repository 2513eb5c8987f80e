#!/usr/bin/env python
"""Re-evaluate a committed model (issue #35.5) and hold the result against the record made when it was evaluated.

  python tools/gpu/reeval_pretrained.py run ROOT OUT [--name c10-200-swaro-s0] [--cpu-smoke N]
      on a GPU: the model's LE head from ROOT (a weights/ folder), no head fitted, attacked with the columns of the
      record that measured it (its eval_config: the white-box columns, Table 3, RoCL's protocol; not the reference
      AutoAttack) on the record's test images -> OUT/<name>-eval.json.  --cpu-smoke N: a dry run on the CPU, N images,
      PGD only.
  python tools/gpu/reeval_pretrained.py compare NEW OLD --out results/checks/reeval-<name>-<card>.json [--tol 0.3]
      per LE column: the two accuracies, their difference and how many test images changed; ok when every column is
      within --tol points (the issue's bar) on the same test images. Exit 1 when not ok.
"""
import argparse, json, sys, time
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]


def run(a) -> int:
    from swaro_nb.hub import evaluate_pretrained, pretrained_info
    ec = json.loads((ROOT / pretrained_info(a.name, a.root)['heads']['le']['record']).read_text())['eval_config']
    kw = dict(attacks=[c for c in ec['attacks'] if not c.startswith('ref_aa_')], table3=ec['table3'],
              rocl_protocol=ec['rocl_protocol'], shards=ec['shards'], progress=False)
    if a.cpu_smoke: kw.update(n_test=a.cpu_smoke, smoke=True, device='cpu', table3=False, rocl_protocol=False,
                              attacks=['pgd_linf_8'])
    t = time.time()
    r = evaluate_pretrained(a.name, root=a.root, out=a.out, heads=['le'], **kw)
    print(json.dumps({k: v for k, v in r['metrics'].items() if not isinstance(v, dict)}), f'{time.time() - t:.1f} s')
    return 0


def compare(new: dict, old: dict, head: str = 'le', tol: float = 0.3) -> dict:
    "Column by column, the re-evaluation `new` against the record `old`: accuracies, difference, images that changed."
    from swaro_nb.core import unpack_bits
    pn, po = new['per_image'], old['per_image']
    if pn['test_index'] != po['test_index'] or pn['n'] != po['n']:
        raise SystemExit('compare: the two records are on different test images')
    cols = {}
    for c in sorted(set(pn['correct'][head]) & set(po['correct'][head])):
        bn, bo = (unpack_bits(p['correct'][head][c], p['n']) for p in (pn, po))
        mn, mo = new['metrics'][c], old['metrics'][c]
        cols[c] = dict(record=mo, reeval=mn, diff=round(mn - mo, 4), images_differ=int((bn != bo).sum()))
    stamp = lambda r: {k: r.get(k) for k in ('card', 'commit', 'date', 'torch')}
    return dict(kind='reeval-check', run=old['run'], head=head, n=pn['n'], tol=tol, columns=cols,
                max_abs_diff=max(abs(v['diff']) for v in cols.values()), ok=all(abs(v['diff']) <= tol for v in cols.values()),
                record=stamp(old), reeval=stamp(new))


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    r = sub.add_parser('run'); r.add_argument('root'); r.add_argument('out')
    r.add_argument('--name', default='c10-200-swaro-s0'); r.add_argument('--cpu-smoke', type=int)
    c = sub.add_parser('compare'); c.add_argument('new'); c.add_argument('old'); c.add_argument('--out', required=True)
    c.add_argument('--tol', type=float, default=0.3)
    a = ap.parse_args(argv)
    if a.cmd == 'run': return run(a)
    res = compare(json.loads(Path(a.new).read_text()), json.loads(Path(a.old).read_text()), tol=a.tol)
    res.update(files=dict(reeval=a.new, record=a.old))
    Path(a.out).write_text(json.dumps(res, indent=1) + '\n')
    print(f"{res['run']}: max |diff| {res['max_abs_diff']:.2f} over {len(res['columns'])} columns on {res['n']} images, "
          f"{sum(v['images_differ'] for v in res['columns'].values())} image(s) changed: {'ok' if res['ok'] else 'NOT ok'}")
    return 0 if res['ok'] else 1


if __name__ == '__main__':
    sys.exit(main())
