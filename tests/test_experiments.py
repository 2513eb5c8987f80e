"The bench and report experiment notebooks through papermill: tables and plots from the committed records, numbers recomputed here from the JSON."
import itertools, json, math, re, shutil
from pathlib import Path
import pytest
from conftest import ROOT
from five_seed import five_seed_records, results_view, expected, decode, KEYS as FIVE_KEYS, groups as five_groups
from swaro_nb.tables import PAPER, METRIC_KEYS, TABLE3_KEYS, ROW_LABELS, load_results, variant
from swaro_nb.baselines import BASELINES

NB_DIR = ROOT / 'nbs' / 'experiments'
RES = ROOT / 'results'
PAPER_S = (5 * 3600 + 20 * 60) / 100  # paper appendix: 5 h 20 min per 100 epochs

def _run(name, out, cwd, **params):
    import papermill as pm
    pm.execute_notebook(str(NB_DIR / name), str(out), kernel_name='python3', cwd=str(cwd), progress_bar=False, parameters=params)
    return json.loads(Path(out).read_text())

def _outputs(nb):
    return [o for c in nb['cells'] if c['cell_type'] == 'code' for o in c.get('outputs', [])]

def _markdown(nb) -> str:
    return '\n'.join(''.join(o.get('data', {}).get('text/markdown', '')) for o in _outputs(nb))

def _stdout(nb) -> str:
    return ''.join(''.join(o['text']) for o in _outputs(nb) if o['output_type'] == 'stream' and o['name'] == 'stdout')

def _no_errors(nb):
    outs = _outputs(nb)
    assert not [o for o in outs if o['output_type'] == 'error']
    err = ''.join(''.join(o['text']) for o in outs if o['output_type'] == 'stream' and o['name'] == 'stderr')
    assert 'Traceback' not in err and 'Error' not in err, err

def _n_images(nb) -> int:
    return sum('image/png' in o.get('data', {}) for o in _outputs(nb))

def _latest(recs, method, batch):
    rs = [r for r in recs if r['method'] == method and r['batch'] == batch and r['gpus'] == 1]
    return max(rs, key=lambda r: r['date']) if rs else None

def _verdict_checks(md: str, recs):
    "The summary lines of the bench notebook against a recomputation from the records."
    for b in sorted({r['batch'] for r in recs}):
        s = _latest(recs, 'swaro', b)
        if s is None: continue
        t = s['s_per_epoch']
        assert f"**SwARo, batch {b}**" in md and f"**{t:.2f} s/epoch**" in md
        assert f"**{PAPER_S / t:.0f}x faster**" in md
        line = next(l for l in md.splitlines() if l.startswith(f"- **SwARo, batch {b}**"))
        assert f"{100 * s['frac_of_peak']:.0f}% of the measured bf16" in line and f"{s['gflops_per_image']:.1f} GFLOP" in line

def _speed_rows(files) -> list:
    return [dict(r, file=Path(f).name) for f in files for r in json.loads(Path(f).read_text()) if r.get('kind') == 'speed']

def _speed_checks(md: str, rows):
    "Every speed record's row in the real-epoch tables (numbers as in the JSON), and the fastest one-GPU batch-512 SwARo epoch."
    for r in rows:
        assert (f"| {r['variant']} | {r['method']} | {r['batch']} | {r['gpus']} | {r['s_per_real_epoch']:.3f} | {r['train_s']:.3f} | "
                f"{r['cluster_s']:.3f} | {r['images_per_s']} | {r['profile']['step_ms']:.3f} |") in md, r
        assert f"| {r['commit']} | {r['date'][:16].replace('T', ' ')} | {r['file']} |" in md
    one = [r for r in rows if r['gpus'] == 1 and r['batch'] == 512 and r['method'] == 'swaro' and not r.get('tag')]
    if one:
        best = min(one, key=lambda r: r['s_per_real_epoch'])
        line = next(l for l in md.splitlines() if l.startswith('- **Fastest real SwARo epoch on one GPU at batch 512**'))
        assert f"{best['variant']}, **{best['s_per_real_epoch']:.2f} s**" in line and f"{best['profile']['step_ms']:.1f} ms" in line, line

def _speed_record(variant, batch, gpus, s, phases, date):
    return dict(kind='speed', variant=variant, method='swaro', batch=batch, gpus=gpus, cuda_graphs=True, compile=False, s_per_real_epoch=s,
                train_s=round(0.8 * s, 3), cluster_s=0.25, images_per_s=round(50000 / s), profile=dict(ms_per_step=phases, step_ms=round(sum(phases.values()), 3)),
                frac_of_peak=0.3, card='card X', commit='abc1234', date=date)

def test_bench_notebook_committed_records(tmp_path):
    "Default parameters (run=False): every record of results/bench.json in a table under its variant, the plot, and the verdict."
    nb = _run('bench.ipynb', tmp_path / 'bench.ipynb', NB_DIR)
    _no_errors(nb)
    recs = json.loads((RES / 'bench.json').read_text())
    md = _markdown(nb)
    for v in {r.get('variant') for r in recs}: assert f"### {v}" in md
    for r in recs:  # each record's row, numbers as in the JSON
        assert f"| {r['method']} | {r['batch']} | {r['gpus']} | {r['s_per_epoch']:.3f} | {r['images_per_s']} |" in md
    assert 'SwARo' in md and 'paper' in md
    _verdict_checks(md, recs)
    speed = _speed_rows(sorted((RES / 'speed').glob('*.json')))
    _speed_checks(md, speed)
    assert _n_images(nb) == 1 + 2 * bool(speed)   # bench.json bars; real-epoch bars and the per-phase profile
    assert f"paper: {PAPER_S:.0f} s per epoch" in _stdout(nb)

def test_bench_notebook_synthetic_records(tmp_path):
    "A hand-made records file (absolute path, working directory outside the checkout): a met target is reported as met."
    recs = [dict(method=m, batch=512, gpus=1, s_per_epoch=s, images_per_s=round(50000 / s), peak_mem_gb=1.0, gflops_per_image=g,
                 frac_of_peak=f, tflops=100.0, peak_tflops=800.0, cluster_s=c, variant='synthetic', card='card X', commit='abc',
                 date=f'2030-01-0{i + 1}T00:00:00+00:00')
            for i, (m, s, g, f, c) in enumerate([('swaro', 3.5, 20.0, 0.3, 0.25), ('simclr', 1.4, 5.0, 0.2, None)])]
    p = tmp_path / 'recs.json'; p.write_text(json.dumps(recs))
    speed = tmp_path / 'speed'; speed.mkdir()   # no speed records: the bench.json part alone
    nb = _run('bench.ipynb', tmp_path / 'bench.ipynb', tmp_path, results_path=str(p), speed_dir=str(speed))
    _no_errors(nb)
    md = _markdown(nb)
    _verdict_checks(md, recs)
    assert f"attack is {100 * (1 - 1.4 / 3.5):.0f}% of SwARo's epoch time and {100 * (1 - 5 / 20):.0f}% of its FLOPs" in md
    assert '| 3.750 |' in md  # s_per_epoch_with_kmeans = 3.5 + 0.25
    assert 'no speed records' in _stdout(nb) and _n_images(nb) == 1
    assert json.loads(p.read_text()) == recs  # run=False writes nothing

def test_bench_notebook_speed_records(tmp_path):
    "Every file of speed_dir is read (a new file needs no edit of the notebook): its rows, the 1-GPU and 4-GPU plots, an unknown phase."
    p = tmp_path / 'recs.json'; shutil.copy(RES / 'bench.json', p)
    speed = tmp_path / 'speed'; speed.mkdir()
    ph = dict(augment=5.0, fold_bn=3.0, attack=30.0, forward=7.0, backward=9.0, optimizer=2.0, other=0.5)
    (speed / 'a.json').write_text(json.dumps([dict(kind='card', peak_tflops=800.0, gflops_per_image=23.4, method='swaro', card='card X', commit='abc1234',
                                                   date='2030-01-01T00:00:00+00:00', gpus=1),
                                              _speed_record('base', 512, 1, 5.5, ph, '2030-01-01T00:00:00+00:00'),
                                              _speed_record('all', 512, 1, 4.25, dict(ph, attack=22.0), '2030-01-01T00:01:00+00:00'),
                                              dict(_speed_record('all', 256, 1, 3.0, ph, '2030-01-01T00:02:00+00:00'), tag='shared-2'),
                                              dict(_speed_record('all', 512, 1, 4.0, ph, '2030-01-01T00:03:00+00:00'), tag='shared-2'),
                                              dict(_speed_record('all', 512, 1, 5.0, ph, '2030-01-01T00:04:00+00:00'), method='rocl', loss_form='rocl-code')]))
    (speed / 'b-ddp4.json').write_text(json.dumps([_speed_record('base', 512, 4, 1.75, dict(ph, allreduce=1.5), '2030-01-02T00:00:00+00:00')]))
    (speed / 'notes.txt').write_text('not a record')
    nb = _run('bench.ipynb', tmp_path / 'bench.ipynb', tmp_path, results_path=str(p), speed_dir=str(speed))
    _no_errors(nb)
    md = _markdown(nb)
    rows = _speed_rows(sorted(speed.glob('*.json')))
    assert len(rows) == 6
    _speed_checks(md, rows)   # the fastest one-GPU SwARo epoch is 'all' at 4.25 s: the faster shared-card record is a special setting
    assert '### 4 GPUs, batch 512' in md and '### 1 GPU, batch 512' in md and '**4 GPUs** (batch 512): base, **1.75 s**' in md
    assert _n_images(nb) == 3
    assert '3 speed file(s)' not in _stdout(nb) and '2 speed file(s)' in _stdout(nb)

def test_bench_notebook_run_needs_gpu(tmp_path):
    "run=True on a machine without CUDA stops with a clear error and leaves the records untouched."
    import torch, papermill as pm
    if torch.cuda.is_available(): pytest.skip('this machine has a GPU: run=True would measure')
    p = tmp_path / 'bench.json'; shutil.copy(RES / 'bench.json', p)
    with pytest.raises(pm.PapermillExecutionError, match='needs CUDA'):
        _run('bench.ipynb', tmp_path / 'bench.ipynb', NB_DIR, run=True, results_path=str(p), methods=['simclr'], batches=[64], epochs=1)
    assert p.read_bytes() == (RES / 'bench.json').read_bytes()

def test_report_notebook(tmp_path):
    "Default parameters, run from the repository root (the results path falls back to the notebook's folder): tables, images, comparison."
    nb = _run('report.ipynb', tmp_path / 'report.ipynb', ROOT)
    _no_errors(nb)
    md, out = _markdown(nb), _stdout(nb)
    evals = load_results(RES / 'eval')
    main = lambda run: max((r for r in evals if r['kind'] == 'eval' and r['run'] == run), key=lambda r: r['date'])
    sw, ro = main('swaro-c10-e120'), main('rocl-c10-e120')   # the report's main runs (its parameter main_runs)
    bb = max((r for r in evals if r['kind'] == 'black_box' and sw['run'] in r['runs'] and ro['run'] in r['runs']), key=lambda r: r['date'])
    # Table 1 / 3 / 4 layouts with ours beside the paper's
    assert 'clean (paper)' in md and 'SwARo+rLE' in md and 'RoCL+rLE' in md and 'bim_t (paper)' in md and 'from RoCL (paper)' in md
    assert f"{PAPER['table1']['swaro']['clean']:.2f}" in md and f"{PAPER['table1']['rocl+rle']['linf_8']:.2f}" in md
    # Table 1 shows each method and setting at its longest training: SwARo's LE rows are its 200-epoch seeds, the rLE rows
    # the rLE heads of the kept 200-epoch encoders (results/eval/rle/) where they exist, else the 120-epoch runs'
    sw_le = [r for r in evals if r['kind'] == 'eval' and r['method'] == 'swaro' and r['dataset'] == 'cifar10' and r['config'].get('p', 0.75) == 0.75
             and r['config'].get('swaro_targets', 'clusters') == 'clusters']
    top = max(r['epochs'] for r in sw_le)
    for r in (r for r in sw_le if r['epochs'] == top):
        assert f"| SwARo | LE | worst case | {r['run']} | {top} | {r['metrics']['clean']:.2f} | {PAPER['table1']['swaro']['clean']:.2f} |" in md, r['run']
    assert f"| SwARo | LE | PGD-20 | {sw['run']} |" not in md   # superseded by the longer runs
    rle = load_results(RES / 'eval' / 'rle', kind='eval') if (RES / 'eval' / 'rle').is_dir() else []
    for r in (r for r in rle if r['method'] in ('swaro', 'rocl') and variant(r) in ('SwARo', 'RoCL')):   # Table 1 has the paper's methods' rows
        m = variant(r)   # every column of each rLE row, beside the paper's +rLE row
        assert (f"| {m}+rLE | rLE | worst case | {r['run']} | {r['epochs']} | "
                + ' | '.join(f"{r['metrics']['rle'][k]:.2f} | {PAPER['table1'][r['method'] + '+rle'][k]:.2f}" for k in METRIC_KEYS) + ' |') in md, r['run']
    if any(variant(r) == 'SwARo' for r in rle): assert f"| SwARo+rLE | rLE | PGD-20 | {sw['run']} |" not in md   # superseded
    else: assert f"| {sw['metrics']['rle']['clean']:.2f} | {PAPER['table1']['swaro+rle']['clean']:.2f} |" in md
    if any(variant(r) == 'RoCL' for r in rle): assert f"| RoCL+rLE | rLE | PGD-20 | {ro['run']} |" not in md
    else: assert f"| {ro['metrics']['rle']['linf_8']:.2f} | {PAPER['table1']['rocl+rle']['linf_8']:.2f} |" in md
    # the rLE heads' AutoAttack check and the limits line that names them
    for r in rle:
        for col, c in r['aa_check']['rle'].items():
            kind = 'worst case (guarded)' if c['guarded'] else 'protocol (shown)'
            assert f"| {r['run']} | rLE | {col} | {kind} | {c['column']:.2f} | {c['autoattack']:.2f} | {c['gap']:.2f} |" in md, (r['run'], col)
        assert f"{r['run']} ({r['epochs']} training epochs, rLE {r['budgets']['rle_epochs']} epochs)" in md, r['run']
    if rle:   # the PGD-20 protocol's distance to AutoAttack on the rLE heads, from the records
        g = [c['gap'] for r in rle for k, c in r['aa_check']['rle'].items() if k.startswith('pgd_')]
        assert f"rLE heads: the PGD-20 protocol columns lie {min(g):.2f}-{max(g):.2f} points above AutoAttack" in out
        r200 = [r for r in evals if r['kind'] == 'eval' and '-c10-200-s' in r['run']]
        n_no = sum(r['budgets'].get('rle_epochs') is None and r['run'] not in {x['run'] for x in rle} for r in r200)
        assert f"- {n_no} of the {len(r200)} 200-epoch evaluations have no rLE head" in md
        by = {m: [r['metrics']['rle']['linf_8'] for r in rle if variant(r) == m] for m in ('SwARo', 'RoCL')}
        if min(len(v) for v in by.values()) == 1 and max(len(v) for v in by.values()) > 1:   # one seed against several: the seeds' spread for scale
            m = max(by, key=lambda k: len(by[k]))
            assert f"rle_linf_8 {max(by[m]) - min(by[m]):.2f} ({m})" in out
    # the comparison's count, recomputed from the JSON
    pairs = [(sw['metrics'][k], ro['metrics'][k]) for k in METRIC_KEYS] + [(sw['metrics']['rle'][k], ro['metrics']['rle'][k]) for k in METRIC_KEYS]
    pairs += [(sw['metrics'][k], ro['metrics'][k]) for k in TABLE3_KEYS]
    pairs += [(m[sw['run']][ro['run']], m[ro['run']][sw['run']]) for m in bb['matrix'].values()]
    ahead, behind = sum(a > b for a, b in pairs), sum(a < b for a, b in pairs)
    assert f"**SwARo is ahead in {ahead} of {len(pairs)} columns and behind in {behind}**" in md
    # what was run: the run without run.json is reported as such, with its wall-clock from metrics.jsonl
    hist = [json.loads(l) for l in (RES / 'runs' / 'swaro-c10-e6' / 'metrics.jsonl').read_text().splitlines() if l.strip()]
    row = next(l for l in md.splitlines() if l.startswith('| swaro-c10-e6 | SwARo |'))
    assert 'metrics.jsonl only' in row and f"| {sum(h['seconds'] + h.get('cluster_seconds', 0) for h in hist):.1f} |" in row
    assert f"no run.json: the run stopped after {len(hist)} of 6 epochs" in out
    # the equal-budget table: every main run's LE numbers and its training wall-clock, beside the paper's 200-epoch row
    main_runs = ['swaro-c10-e120', 'rocl-c10-e120', 'simclr-c10-e120', 'swaro-p025-c10-e120']
    for name in main_runs:
        r = next(e for e in evals if e['kind'] == 'eval' and e['run'] == name)
        assert (f"| {name} | " in md and f"| {r['epochs']} | {r['train']['train_seconds'] / 60:.1f} | "
                + " | ".join(f"{r['metrics'][k]:.2f}" for k in METRIC_KEYS) + " |" in md), name
    assert "| paper, 200 epochs (epoch ablation) | SwARo (p=0.75) | 200 | – | " + " | ".join(f"{PAPER['epochs_ablation'][200][k]:.2f}" for k in METRIC_KEYS) in md
    # the p-ablation: p = 0 is RoCL, beside the paper's p rows
    assert f"| 0.25 | swaro-p025-c10-e120 | " in md and f"| {PAPER['p_ablation'][0.25]['clean']:.2f} |" in md
    # images: the training curves, the p-ablation plot and one t-SNE map per main run that has one
    # the 200-epoch verdicts: SwARo - RoCL per column from the verdict set (the five-seed records once results/eval/five-seed
    # holds some, else the older 200-epoch records), recomputed here: a record without per-image data gives no verdict
    r200 = {r['run']: r for r in evals if r['kind'] == 'eval' and '-c10-200-s' in r['run']}
    grp = lambda rs, m: [r for r in rs if r['method'] == m and r['config'].get('p', 0.75) == 0.75
                         and r['config'].get('swaro_targets', 'clusters') == 'clusters']
    s2, r2 = grp(r200.values(), 'swaro'), grp(r200.values(), 'rocl')
    five = load_results(RES / 'eval' / 'five-seed', kind='eval') if (RES / 'eval' / 'five-seed').is_dir() else []
    rand5 = [r for r in five if r['config'].get('swaro_targets') == 'random']
    five = five if grp(five, 'swaro') and (grp(five, 'rocl') or rand5) else []   # both sides of a comparison, or the older set
    vs, vr = (grp(five, 'swaro'), grp(five, 'rocl')) if five else (s2, r2)
    assert ("**The comparison awaits the five-seed records**" in md) == (not five)
    if vs and vr:
        for k in ('clean', 'linf_8', 'l2_05'):
            if all(r.get('per_image') for r in vs + vr): e = expected(vs, vr, k); d, v = e['diff'], e['verdict']
            else: d, v = sum(r['metrics'][k] for r in vs) / len(vs) - sum(r['metrics'][k] for r in vr) / len(vr), 'unresolved (no per-image record)'
            assert f"{k} {d:+.2f} ({v})" in md, (k, d, v)
    # images: the training curves, the p-ablation plot and one t-SNE map per main run that has one; at 200 epochs the curves
    # and the t-SNE maps of the first SwARo and RoCL runs that have one
    tsne200 = sum(any((RES / 'eval' / f"{r['run']}-tsne.png").exists() for r in g) for g in (s2, r2))
    cfg = lambda d: json.loads((d / 'config.json').read_text()) if (d / 'config.json').is_file() else {}
    snapped = lambda d: 'snapshot_of' in (json.loads((d / 'run.json').read_text()) if (d / 'run.json').is_file() else {})
    longer = any(cfg(d).get('epochs', 0) > 200 and cfg(d).get('method') == 'swaro' and not snapped(d)
                 and (d / 'metrics.jsonl').is_file() for d in (RES / 'runs').iterdir())   # a run of a longer schedule
    assert _n_images(nb) == 2 + sum((RES / 'eval' / f'{n}-tsne.png').exists() for n in main_runs) + (1 if r200 else 0) + tsne200 \
        + (1 if vs and vr else 0) + 1 + longer   # the forest plot of the verdicts, Table 7's learning-progress figure (always:
    # the paper's row), and the kNN monitor of the longer runs' schedules beside the complete 200-epoch runs
    for d in (RES / 'runs').iterdir():
        if cfg(d).get('epochs', 0) > 200 and cfg(d).get('method') == 'swaro' and not snapped(d) and (d / 'metrics.jsonl').is_file():
            h = [json.loads(l) for l in (d / 'metrics.jsonl').read_text().splitlines() if l.strip()]
            knn = {x['epoch']: x['knn_acc'] for x in h if 'knn_acc' in x}
            assert f"{d.name}: {len(h)} of {cfg(d)['epochs']} epochs; kNN {knn[100]:.2f} at 100, {knn[200]:.2f} at 200" in out
    # limits, read from the records: baselines without an evaluation, with the error line of their training log where there is one
    evaluated = {r['method'] for r in evals if r['kind'] == 'eval'}
    for m in BASELINES:
        if m in evaluated: continue
        assert f"- {ROW_LABELS.get(m, m)}: no evaluation record" in md
        errs = [l for f in sorted((RES / 'logs').glob(f'*/train_{m}.log')) for l in f.read_text().splitlines() if l.lower().startswith('error')]
        if errs: assert errs[-1].split(';')[0] in md
    assert f"The equal-budget runs are {sw['epochs']} epochs" in md
    # the CIFAR-100 section shows the paper's Table 2 and Table 5 rows (also when no CIFAR-100 record exists), and each
    # CIFAR-100 record's row with its CIFAR-10 transfer where there is one
    cells = lambda start: next(l for l in md.splitlines() if l.startswith(start)).strip('|').split(' | ')
    row = cells("| paper, Table 2 and Table 5 | SwARo |")
    for v in [PAPER['table5']['swaro']['cifar100->cifar10'], *(PAPER['table2']['swaro'][k] for k in METRIC_KEYS)]: assert f"{v:.2f}" in row, v
    c100_md = md[md.index('| run | trained | clean | linf_8'):]   # from the CIFAR-10 200-epoch table on; the CIFAR-100 one has beta_plus_pct
    head = next(l for l in c100_md.splitlines() if l.startswith('| run | trained | clean |') and '| beta_plus_pct |' in l).strip('| ').split(' | ')
    c100_md = c100_md[c100_md.index('| beta_plus_pct |'):]
    for r in (r for r in evals if r['kind'] == 'eval' and r['dataset'] == 'cifar100'):
        row = dict(zip(head, next(l for l in c100_md.splitlines() if l.startswith(f"| {r['run']} |")).strip('| ').split(' | ')))
        assert all(row[k] == f"{r['metrics'][k]:.2f}" for k in METRIC_KEYS) and row['epochs'] == str(r['epochs']), (r['run'], row)
        x = RES / 'eval' / f"{r['run']}-transfer-cifar10.json"
        assert row['c100_to_c10'] == (f"{json.loads(x.read_text())['metrics']['clean']:.2f}" if x.exists() else '–'), r['run']
        assert row['K'] == (str(r['config']['n_clusters']) if r['method'] == 'swaro' else '–')

def _c100_record(src: dict, run: str, metrics: dict) -> dict:
    "A CIFAR-100 eval record made from a CIFAR-10 one: its run, dataset and metrics replaced (the rest as the report reads it)."
    return dict(src, run=run, dataset='cifar100', config=dict(src['config'], dataset='cifar100', n_clusters=5000), metrics=dict(src['metrics'], **metrics))

def test_report_verdicts_from_new_records(tmp_path):
    "Synthetic records in a copy of the records (none with per-image data): a black-box matrix over a 200-epoch SwARo and RoCL run gives Table 4 its claim line, CIFAR-100 records and transfers give Table 2 and Table 5 theirs, rLE heads of several lengths theirs; every difference shown, every verdict unresolved (no per-image record)."
    res = tmp_path / 'results'; shutil.copytree(RES, res)
    shutil.rmtree(res / 'eval' / 'five-seed', ignore_errors=True)   # the older records' path: the set would stand in for them
    for f in (res / 'eval').glob('*.json'):   # only the synthetic CIFAR-100 records below: those in results/ would join their groups
        r = json.loads(f.read_text())
        if r.get('dataset') == 'cifar100' or r.get('source') == 'cifar100': f.unlink()
    evals = load_results(RES / 'eval')
    r200 = {r['run']: r for r in evals if r['kind'] == 'eval' and '-c10-200-s' in r['run'] and r['config'].get('p', 0.75) == 0.75
            and r['config'].get('swaro_targets', 'clusters') == 'clusters'}
    sw = next((n for n, r in sorted(r200.items()) if r['method'] == 'swaro'), None)
    ro = next((n for n, r in sorted(r200.items()) if r['method'] == 'rocl'), None)
    if sw is None or ro is None: pytest.skip('no 200-epoch SwARo and RoCL evaluation records')
    runs = {sw: dict(method='swaro', epochs=200), ro: dict(method='rocl', epochs=200), 'at-x': dict(method='at', epochs=100)}
    acc = {(sw, 'at-x'): 84.0, (ro, 'at-x'): 80.0, (sw, ro): 60.0, (ro, sw): 61.0}   # [target][source]: SwARo +4.0 from AT, -1.0 from the other
    mat = {t: {s: acc.get((t, s), 15.0 if s == t else 70.0) for s in runs} for t in runs}
    bb = dict(kind='black_box', dataset='cifar10', runs=runs, matrix={'linf_8': mat}, card='synthetic', commit='synthetic',
              date='2099-01-01T00:00:00+00:00', torch='-', budgets=dict(test_images=2000, n_test=2000, train_images=50000, le_epochs=150, seed=0), seconds=dict(total=0.0), flags=[])
    (res / 'eval' / 'black_box-synthetic.json').write_text(json.dumps(bb))
    # CIFAR-100: SwARo clean 50.0 vs RoCL 44.0, l1 equal, linf apart by 1.0
    m_sw = dict(clean=50.0, linf_8=20.0, linf_16=5.0, l2_025=36.0, l2_05=30.0, l1_784=40.0, l1_12=30.0)
    m_ro = dict(m_sw, clean=44.0, linf_8=21.0, l2_05=36.0)   # and l2 0.5 apart by 6.0
    # and ACL (100 epochs): ahead of SwARo on l_inf 8 by 10, l1 10 points below SwARo's, its transfer 5 below
    m_acl = dict(m_sw, clean=40.0, linf_8=30.0, l1_784=30.0, l1_12=20.0)
    acl = dict(_c100_record(r200[ro], 'syn-acl-c100', m_acl), method='acl', epochs=100)
    acl['config'] = dict(acl['config'], method='acl')
    recs = {'syn-swaro-c100': _c100_record(r200[sw], 'syn-swaro-c100', m_sw), 'syn-rocl-c100': _c100_record(r200[ro], 'syn-rocl-c100', m_ro), 'syn-acl-c100': acl}
    for n, r in recs.items():
        (res / 'eval' / f'{n}-eval.json').write_text(json.dumps(r))
        x = dict(kind='transfer', run=n, method=r['method'], source='cifar100', target='cifar10', dataset='cifar10', epochs=200, card='synthetic',
                 commit='synthetic', date=r['date'], torch='-', config=r['config'], train=r['train'], budgets=r['budgets'], seconds=dict(total=0.0),
                 flags=[], metrics=dict(clean={'syn-swaro-c100': 70.0, 'syn-rocl-c100': 69.5, 'syn-acl-c100': 65.0}[n]))
        (res / 'eval' / f'{n}-transfer-cifar10.json').write_text(json.dumps(x))
    # rLE heads (results/eval/rle/): SwARo+rLE clean 70.0 vs RoCL+rLE 65.0 on one seed each; l1 equal
    shutil.rmtree(res / 'eval' / 'rle', ignore_errors=True); (res / 'eval' / 'rle').mkdir()   # only the synthetic heads below
    # and heads of other lengths from encoders without an LE record, set against no head of 15 epochs: at 40 rLE epochs SwARo 90.0
    # against RoCL 91.0, at 60 a SwARo head alone (no RoCL head: no columns)
    for n, c, E, run in ((sw, 70.0, 15, sw), (ro, 65.0, 15, ro), (sw, 90.0, 40, 'syn-swaro-c10-200-s9'), (ro, 91.0, 40, 'syn-rocl-c10-200-s9'),
                         (sw, 50.0, 60, 'syn-swaro-c10-200-s8')):
        rle = dict(r200[n]['metrics'], clean=c, l1_784=30.0, l1_12=20.0)
        (res / 'eval' / 'rle' / f'{run}-eval.json').write_text(json.dumps(dict(r200[n], run=run, budgets=dict(r200[n]['budgets'], rle_epochs=E),
                                                                               metrics=dict(r200[n]['metrics'], rle=rle))))
    nb = _run('report.ipynb', tmp_path / 'report.ipynb', tmp_path, results_dir='results')
    _no_errors(nb)
    md = _markdown(nb)
    U = 'unresolved (no per-image record)'   # none of these records keeps per-image data: every verdict is unresolved, every difference shown
    assert (f"- **with rLE heads (Table 1's +rLE rows): clean accuracy above RoCL+rLE's**: {U} — rle15_clean +5.00 ({U}); "
            f"rle40_clean -1.00 ({U}).") in md   # each length against its own
    assert f"- **with rLE heads: more robust than RoCL+rLE to the unseen ℓ1 attacks**: {U} — rle15_l1_784 +0.00 ({U}); rle15_l1_12 +0.00 ({U}); rle40_l1_784 +0.00" in md
    s_sw, s_ro = r200[sw]['config']['seed'], r200[ro]['config']['seed']
    assert (f"the rLE heads from `{res / 'eval' / 'rle'}`, each length its own columns (rle15_*: heads of 15 epochs, SwARo seed {s_sw} against RoCL seed {s_ro}; "
            f"rle40_*: heads of 40 epochs, SwARo seed {s_sw} against RoCL seed {s_ro})") in md
    assert 'rle60_' not in md   # no RoCL head of 60 epochs: that length has no columns
    line = next(l for l in md.splitlines() if l.startswith('- **black-box robustness (Table 4)'))
    assert f"Table 4: linf_8 from at ({sw} vs {ro}) +4.00 ({U})" in line and f"Table 4: linf_8 from other ({sw} vs {ro}) -1.00 ({U})" in line
    assert line.startswith(f"- **black-box robustness (Table 4): more accurate than RoCL under the same attacker's examples**: {U} —")
    c100 = md[md.index("The paper's claims on CIFAR-100"):]
    assert f"- **clean accuracy much higher than RoCL's**: {U} — clean +6.00 ({U})." in c100
    assert (f"- **ℓ∞ and ℓ2 robustness comparable to RoCL's**: {U} — linf_8 -1.00 ({U}); linf_16 +0.00 ({U}); l2_025 +0.00 ({U}); "
            f"l2_05 -6.00 ({U}).") in c100
    assert f"- **better transfer, CIFAR-100 → CIFAR-10 (Table 5)**: {U} — c100_to_c10 +0.50 ({U})." in c100
    assert f"- **substantially higher ℓ1 robustness than ACL's**: {U} — l1_784 +10.00 ({U}); l1_12 +10.00 ({U})." in c100
    assert f"- **better transfer than ACL, CIFAR-100 → CIFAR-10 (Table 5)**: {U} — c100_to_c10 +5.00 ({U})." in c100
    assert "SwARo (1 seed, 200 epochs) − ACL (1 seed, 100 epochs)" in md
    row = next(l for l in md.splitlines() if l.startswith('| syn-swaro-c100 | SwARo | 50.00 | 20.00 |'))   # Table 2's row
    assert '| 70.00 |' in row and '| 5000 |' in row
    assert f"| paper, Table 2 and Table 5 | SwARo | {PAPER['table2']['swaro']['clean']:.2f} |" in md
    assert "No column tested: every verdict is unresolved" in _stdout(nb)

def _md_table(md: str, head: str) -> dict:
    "The Markdown table of `md` whose heading line starts with `head`: first cell -> {heading: cell}."
    lines = md.splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith(head))
    cells = lambda l: l.strip().strip('|').split(' | ')
    keys = [c.strip() for c in cells(lines[at])]
    out = {}
    for l in lines[at + 2:]:
        if not l.startswith('|'): break
        row = dict(zip(keys, (c.strip() for c in cells(l)))); out[row[keys[0]]] = row
    return out

def test_report_five_seed(tmp_path):
    "Synthetic five-seed records with per-image bits in results/eval/five-seed: the verdict section switches to them, every interval and verdict as recomputed here from the bits, the claims and the forest plot follow."
    template = json.loads((RES / 'eval' / 'swaro-c10-200-s0-eval.json').read_text())
    recs = five_seed_records(template)
    view = results_view(tmp_path / 'results', RES, recs)
    nb = _run('report.ipynb', tmp_path / 'report.ipynb', tmp_path, results_dir=str(view))
    _no_errors(nb)
    md, out = _markdown(nb), _stdout(nb)
    assert "The five-seed set in" in md and "awaits the five-seed records" not in md
    assert "SwARo: 5 seeds (c10-200-swaro-s0, " in md
    assert (f"trained at commit f1ve5ee, evaluated at commit f1ve5ee on {template['card']} ({len(recs)} models), "
            "on 400 test images") in md   # the evaluations' code and cards are said
    g = five_groups(recs)
    table = _md_table(md, '| column | SwARo | RoCL | SwARo (random targets) |')
    n = 0
    for name, (a, b) in (('SwARo − RoCL', (g['swaro'], g['rocl'])), ('random targets − SwARo', (g['rand'], g['swaro']))):
        for col, head in [(k, 'le') for k in ('clean', 'linf_8', 'linf_16', 'l2_025', 'l2_05', 'l1_784', 'l1_12', 'bim', 'bim_t', 'fgsm',
                                              'fgsm_t', 'jitter', 'jitter_t', 'aa_l2_05', 'aa_linf_8')] + [(f'rle:{k}', 'rle') for k in ('clean', 'linf_8', 'l1_12')]:
            e = expected(a, b, col.removeprefix('rle:'), head)
            row = table[col]
            assert row[name] == f"{e['diff']:+.2f} [{e['ci_low']:+.2f}, {e['ci_high']:+.2f}]" and row[f'{name}: verdict'] == e['verdict'], (name, col, row)
            n += 1
    assert len(table) == 15 + 7 and table['clean']['SwARo'].endswith(', 5 seeds)')
    assert table['clean']['SwARo − RoCL: verdict'] == 'ahead' and table['linf_8']['SwARo − RoCL: verdict'] == 'behind'   # the effects drawn
    assert "44 columns tested at 95% each, no multiplicity correction" in out
    rand = {c: r['random targets − SwARo: verdict'] for c, r in table.items()}
    if set(rand.values()) == {'no clear difference'}: assert 'show no clear difference from SwARo on any of the 22 columns tested' in md
    else: assert all(f"{c}" in md for c, v in rand.items() if v in ('ahead', 'behind'))
    # the claims: from the same records, the rLE columns named by their rLE epochs
    assert "- **clean accuracy above RoCL's**: holds — clean " in md
    assert "- **ℓ∞ robustness comparable to RoCL's**: does not hold — linf_8 " in md
    e = expected(g['swaro'], g['rocl'], 'clean', 'rle')
    assert f"rle30_clean {e['diff']:+.2f} ({e['verdict']})" in md and "the rLE heads of the same records" in md
    # the agreement table: every row as agreement_test gives it on the bits decoded here, each method's seeds 0-4
    from swaro_nb.stats import agreement_test
    lines = md.splitlines()
    at = next(i for i, l in enumerate(lines) if l.startswith('| comparison | column | within A | within B | across |'))
    rows = [[c.strip() for c in l.strip().strip('|').split(' | ')] for l in itertools.takewhile(lambda l: l.startswith('|'), lines[at + 2:])]
    pairs = {'SwARo − RoCL': (g['swaro'], g['rocl']), 'random targets − SwARo': (g['rand'], g['swaro'])}
    assert sorted((r[0], r[1]) for r in rows) == sorted((n, k) for n in pairs for k in FIVE_KEYS), [(r[0], r[1]) for r in rows]
    for name, col, *cells in rows:
        bits = lambda grp: [decode(r['per_image']['correct']['le'][col], r['per_image']['n']) for r in grp]
        e = agreement_test(bits(pairs[name][0]), bits(pairs[name][1]), range(5), range(5))
        f = lambda v: f"{v:.2f}"
        assert cells == [f(e['within_a']), f(e['within_b']), f(e['between']), f(e['excess']), f"{e['p']:.3f}", e['verdict'],
                         f(e['same_seed'])], (name, col, cells, e)
    assert "**random targets − SwARo** (A = SwARo (random targets), B = SwARo; " in md

FORBIDDEN = re.compile(r"\bsessions?\b|\bleases?\b|GPU host|DESIGN\.md|\.\./shared|issue \d|\b(?=[0-9a-f]*\d)(?=[0-9a-f]*[a-f])[0-9a-f]{7,40}\b", re.I)

@pytest.mark.parametrize('name', ['train.ipynb', 'evaluate.ipynb', 'bench.ipynb', 'report.ipynb'])
def test_prose_is_documentation(name):
    "The experiment notebooks are documentation: no development history (sessions, leases, commit hashes, issue numbers) in their sources."
    nb = json.loads((NB_DIR / name).read_text())
    for c in nb['cells']:
        src = ''.join(c['source'])
        assert not FORBIDDEN.search(src), (name, FORBIDDEN.search(src).group(0), src[:200])

@pytest.mark.parametrize('name', ['bench.ipynb', 'report.ipynb'])
def test_committed_executed(name):
    "The committed notebooks are reports: they carry their outputs (tables and plots), without errors."
    nb = json.loads((NB_DIR / name).read_text())
    _no_errors(nb)
    assert 'SwARo' in _markdown(nb) and _n_images(nb) >= 1

def test_train_notebook_parameters_cover_config():
    "Every TrainConfig field (but `name`, a parameter of its own) is a parameter of the train notebook, so papermill can set it."
    import dataclasses
    from swaro_nb.config import TrainConfig
    nb = json.loads((NB_DIR / 'train.ipynb').read_text())
    params = next(''.join(c['source']) for c in nb['cells'] if 'parameters' in c['metadata'].get('tags', []))
    names = set(re.findall(r'^(\w+) = ', params, flags=re.M))
    assert {f.name for f in dataclasses.fields(TrainConfig)} - names == set()

@pytest.mark.parametrize('name', ['train.ipynb', 'evaluate.ipynb', 'bench.ipynb', 'report.ipynb'])
def test_parameters_visible_to_papermill(name):
    "papermill's parameter inspection (`papermill --help-notebook`) sees every parameter: a '=' in a comment would hide it."
    import papermill as pm
    nb = json.loads((NB_DIR / name).read_text())
    params = next(''.join(c['source']) for c in nb['cells'] if 'parameters' in c['metadata'].get('tags', []))
    assert set(pm.inspect_notebook(str(NB_DIR / name))) == set(re.findall(r'^(\w+)\s*=', params, flags=re.M))
