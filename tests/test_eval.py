"Evaluation from outside: `swaro_eval` end to end on tiny runs, the evaluate notebook through papermill, and bad input."
import json, math, subprocess
from pathlib import Path
import pytest
from conftest import script, ROOT, needs_cifar100
from swaro_nb.config import make_config
from swaro_nb.train import train
from swaro_nb.tables import METRIC_KEYS, PROTOCOL_KEYS, TABLE3_KEYS, PAPER, paper_table, markdown_table, load_results
from swaro_nb.eval_config import EVAL_PRESETS, SMOKE_MEMBERS
SMOKE = EVAL_PRESETS['smoke']

TINY = dict(subset_per_class=10, batch_size=50, width=8, proj_hidden=64, epochs=2, attack_warmup_epochs=1, n_clusters=10,
            attack_steps=2, monitor_every=2, monitor_bank=100, monitor_test=50, ckpt_every=1, progress=False)

@pytest.fixture(scope='module')
def runs(tmp_path_factory):
    "Two tiny CIFAR-10 runs (SwARo 2 epochs, RoCL 1 epoch) in a temporary folder."
    d = tmp_path_factory.mktemp('runs')
    train(make_config('smoke', name='swaro', out_dir=str(d), **TINY), device='cpu')
    train(make_config('smoke', name='rocl', out_dir=str(d), method='rocl', **{**TINY, 'epochs': 1}), device='cpu')
    return d

@pytest.fixture(autouse=True)
def _console(console):
    "`_eval` runs through the `console` fixture (tests/conftest.py) while a test of this module runs."
    global _run_script
    _run_script = console; yield; _run_script = None

_run_script = None

def _eval(*args):
    "`swaro_eval ARGS --no-progress --device cpu`, the console script run as a process of its own would run it (`console`)."
    return _run_script('swaro_eval', *args, '--no-progress', '--device', 'cpu', timeout=600)

def _eval_errors(cases, cwd, tmp):
    """Each argument list of `cases` through the `swaro_eval` console script, as `_eval` runs it but in forked children of one
    interpreter that imported the library once (tests/console_runner.py, as test_bad_input.py runs its cases): the refusals
    cost no torch import each. Returns one CompletedProcess-like (returncode, stderr) per case, in order."""
    import sys, types
    tmp.mkdir(exist_ok=True)
    jobs = [dict(id=str(i), script=script('swaro_eval'), argv=[*map(str, a)], cwd=str(cwd), env={},
                 stdout=str(tmp / f'err{i}.out'), stderr=str(tmp / f'err{i}.err')) for i, a in enumerate(cases)]
    (tmp / 'jobs.json').write_text(json.dumps(jobs))
    r = subprocess.run([sys.executable, str(Path(__file__).parent / 'console_runner.py'), str(tmp / 'jobs.json'), str(tmp / 'results.json'),
                        '--parallel', '1'], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((tmp / 'results.json').read_text())
    return [types.SimpleNamespace(returncode=res[j['id']]['code'], stderr=Path(j['stderr']).read_text()) for j in jobs]

def _accuracies(m: dict):
    "Every accuracy of a metrics dict (nested dicts included)."
    for v in m.values():
        if isinstance(v, dict): yield from _accuracies(v)
        else: yield v

def test_cli_smoke_one_run(runs, tmp_path):
    "--smoke with rLE, Table 3 and t-SNE: the record's keys, budgets, stamps and ranges; the tables render."
    out = tmp_path / 'res'
    r = _eval(runs / 'swaro', '--smoke', '--n-test', 16, '--train-per-class', 20, '--table3', '--tsne', '--out', out)
    assert r.returncode == 0, r.stderr[-4000:]
    res = json.loads((out / 'swaro-eval.json').read_text())
    for k in ('run', 'method', 'dataset', 'epochs', 'card', 'commit', 'date', 'train', 'metrics', 'budgets', 'seconds', 'flags'): assert k in res, k
    assert (res['run'], res['method'], res['dataset'], res['epochs']) == ('swaro', 'swaro', 'cifar10', 2)
    keys = set(METRIC_KEYS) | set(PROTOCOL_KEYS) | set(TABLE3_KEYS)
    assert keys <= set(res['metrics']) and keys <= set(res['metrics']['rle'])
    accs = list(_accuracies(res['metrics']))
    assert len(accs) > 2 * 19 and all(isinstance(v, (int, float)) and 0 <= v <= 100 for v in accs)
    assert isinstance(res['flags'], list) and all(isinstance(f, str) for f in res['flags'])
    b = res['budgets']
    assert (b['le_epochs'], b['rle_epochs'], b['test_images'], b['train_images']) == (SMOKE['le_epochs'], SMOKE['rle_epochs'], 16, 200)
    # smoke keeps the protocol's PGD-20 and records the worst case's strong members at their CPU size (SMOKE_MEMBERS)
    assert b['attacks']['pgd_linf_8']['steps'] == 20
    assert b['attacks']['apgd_t_linf_8']['steps'] == SMOKE_MEMBERS['apgd_t_linf_8'].steps < 100
    assert b['attacks']['linf_8']['kind'] == 'worst' and all(res['metrics'][k] <= res['metrics'][f'pgd_{k}'] for k in METRIC_KEYS[1:])
    rec = json.loads((runs / 'swaro' / 'run.json').read_text())
    assert (res['train']['card'], res['train']['commit'], res['train']['date']) == (rec['card'], rec['commit'], rec['date'])
    assert res['date'] >= rec['date']  # this evaluation's own stamp
    assert not (out / 'swaro-transfer-cifar100.json').exists()
    assert (out / 'swaro-tsne.png').stat().st_size > 10_000
    assert '| SwARo | LE |' in r.stdout and '| SwARo+rLE | rLE |' in r.stdout  # Table 1's rows of this run
    assert 'a smoke run' in r.stdout and '(paper)' not in r.stdout and '87.38' not in r.stdout  # said to be a smoke run, not set beside the paper
    results = load_results(out)
    for tbl, n in (('table1', 2), ('table3', 1)):
        df = paper_table(tbl, results)
        assert len(df) == n, tbl
        md = markdown_table(df)
        assert len(md.splitlines()) == 2 + n and '(paper)' in md.splitlines()[0]

@needs_cifar100
def test_cli_transfer_cifar100(runs, tmp_path):
    "--transfer cifar100 (Table 5): LE of the CIFAR-10 encoder on CIFAR-100, its record and its table row beside the paper's."
    out = tmp_path / 'res'
    r = _eval(runs / 'swaro', '--smoke', '--no-rle', '--le-epochs', 1, '--n-test', 16, '--train-per-class', 20, '--transfer', 'cifar100', '--out', out,
              '--attacks', 'clean')   # the CIFAR-10 record's attacks are test_cli_smoke_one_run's: here the transfer alone
    assert r.returncode == 0, r.stderr[-4000:]
    t = json.loads((out / 'swaro-transfer-cifar100.json').read_text())
    assert (t['source'], t['target'], t['budgets']['train_images']) == ('cifar10', 'cifar100', 2000) and 0 <= t['metrics']['clean'] <= 100
    df = paper_table('table5', load_results(out))
    assert len(df) == 1 and '(paper)' in markdown_table(df).splitlines()[0]
    assert df.iloc[0]['clean (paper)'] == PAPER['table5']['swaro']['cifar10->cifar100']

def test_cli_rle_only(runs, tmp_path):
    "--no-le: an rLE-only record (what results/eval/rle/ holds); the Table 1 rows and the printout render without LE columns."
    out = tmp_path / 'res'
    r = _eval(runs / 'swaro', '--smoke', '--no-le', '--rle-epochs', 1, '--n-test', 16, '--train-per-class', 10, '--attacks', 'clean,linf_8', '--out', out)
    assert r.returncode == 0, r.stderr[-4000:]
    res = json.loads((out / 'swaro-eval.json').read_text())
    assert set(res['metrics']) == {'rle'} and {'clean', 'linf_8'} <= set(res['metrics']['rle'])
    assert (res['budgets']['le_epochs'], res['budgets']['rle_epochs']) == (None, 1) and set(res['linear']) == {'rle'} and res['resumed'] == []
    assert not (out / 'swaro-eval.parts').exists()   # the pieces go once the record is written
    df = paper_table('table1', [res])
    assert list(df['setting']) == ['rLE'], df

def test_cli_black_box_two_runs(runs, tmp_path):
    "Two runs without rLE, with the black-box matrix: one record per run, a 2x2 matrix per radius in the paper's orientation."
    out = tmp_path / 'res'
    r = _eval(runs / 'swaro', runs / 'rocl', '--smoke', '--no-rle', '--le-epochs', 1, '--n-test', 16, '--train-per-class', 10, '--black-box', '--out', out,
              '--attacks', 'clean,pgd_linf_8,pgd_linf_16')   # the white-box columns the matrix's diagonal is checked against
    assert r.returncode == 0, r.stderr[-4000:]
    for name in ('swaro', 'rocl'):
        res = json.loads((out / f'{name}-eval.json').read_text())
        assert 'rle' not in res['metrics'] and res['budgets']['rle_epochs'] is None and res['budgets']['le_epochs'] == 1
    bb = json.loads((out / 'black_box.json').read_text())
    assert set(bb['matrix']) == {'pgd_linf_8', 'pgd_linf_16'}
    for m in bb['matrix'].values():
        assert set(m) == {'swaro', 'rocl'} and all(set(row) == {'swaro', 'rocl'} for row in m.values())
        assert all(0 <= v <= 100 for row in m.values() for v in row.values())
    # the diagonal is white-box: the same attack, seed and head as the run's own pgd_linf_8 entry
    ev = json.loads((out / 'swaro-eval.json').read_text())
    assert math.isclose(bb['matrix']['pgd_linf_8']['swaro']['swaro'], ev['metrics']['pgd_linf_8'])
    df = paper_table('table4', [bb])
    assert list(df['target']) == ['SwARo', 'RoCL'] * 2 and df.iloc[0]['from RoCL (paper)'] == PAPER['table4']['linf_8']['swaro']['rocl'][0]
    # --black-box-only: the same matrix (same seed, heads and attacks), and no per-run evaluation written
    out2 = tmp_path / 'bb_only'
    r = _eval(runs / 'swaro', runs / 'rocl', '--le-epochs', 1, '--n-test', 16, '--train-per-class', 10, '--black-box-only', '--out', out2)
    assert r.returncode == 0, r.stderr[-4000:]
    assert sorted(p.name for p in out2.iterdir()) == ['black_box.json']
    assert json.loads((out2 / 'black_box.json').read_text())['matrix'] == bb['matrix']

@pytest.mark.parametrize('case', ['missing', 'corrupt'])
def test_cli_errors(runs, tmp_path, case):
    "A missing run folder or a truncated checkpoint: one `swaro_eval: error:` line, exit status 2, no traceback."
    d = tmp_path / 'run'
    if case == 'corrupt':
        d.mkdir(); (d / 'checkpoint.pt').write_bytes((runs / 'swaro' / 'checkpoint.pt').read_bytes()[:4096])
    r = _eval(d, '--smoke', '--out', tmp_path / 'res')
    assert r.returncode == 2, (r.returncode, r.stderr[-2000:])
    assert r.stderr.startswith('swaro_eval: error:') and 'Traceback' not in r.stderr and len(r.stderr.strip().splitlines()) == 1
    assert ('does not exist' if case == 'missing' else 'corrupt or truncated') in r.stderr
    assert not (tmp_path / 'res').exists()  # nothing written

def test_evaluate_notebook(tmp_path):
    "The papermill notebook with smoke parameters: trains the missing run folder, evaluates it, shows tables and plots."
    import papermill as pm
    out_nb, run = tmp_path / 'evaluate.ipynb', tmp_path / 'nbrun'
    pm.execute_notebook(str(ROOT / 'nbs' / 'experiments' / 'evaluate.ipynb'), str(out_nb), kernel_name='python3', cwd=str(tmp_path),
                        progress_bar=False, parameters=dict(runs=[str(run)], smoke=True, smoke_train={**TINY, 'epochs': 1}, rle=False,
                                                            n_test=16, train_per_class=10, out=str(tmp_path / 'res'), device='cpu'))
    assert (run / 'checkpoint.pt').exists() and (run / 'run.json').exists()
    res = json.loads((tmp_path / 'res' / 'nbrun-eval.json').read_text())
    assert res['budgets']['test_images'] == 16 and set(METRIC_KEYS) <= set(res['metrics'])
    outs = [o for c in json.loads(out_nb.read_text())['cells'] for o in c.get('outputs', [])]
    md = ''.join(''.join(o.get('data', {}).get('text/markdown', '')) for o in outs)
    assert 'Table 1' in md and 'clean (paper)' in md and '87.38' in md
    assert sum('image/png' in o.get('data', {}) for o in outs) >= 2  # t-SNE and training curves

def test_evaluate_notebook_renders_records(tmp_path):
    "records=results/eval: nothing evaluated or written; the recorded GPU evaluations' numbers appear in the paper-format tables."
    import papermill as pm
    res_dir = ROOT / 'results'
    names = ['swaro-c10-e120', 'rocl-c10-e120']
    out_nb = tmp_path / 'evaluate.ipynb'
    pm.execute_notebook(str(ROOT / 'nbs' / 'experiments' / 'evaluate.ipynb'), str(out_nb), kernel_name='python3', cwd=str(tmp_path),
                        progress_bar=False, parameters=dict(runs=[str(res_dir / 'runs' / n) for n in names], smoke=False, table3=True,
                                                            black_box=True, records=str(res_dir / 'eval'), out=str(tmp_path / 'res')))
    assert not (tmp_path / 'res').exists()   # nothing evaluated, nothing written
    outs = [o for c in json.loads(out_nb.read_text())['cells'] for o in c.get('outputs', [])]
    md = ''.join(''.join(o.get('data', {}).get('text/markdown', '')) for o in outs)
    recs = load_results(res_dir / 'eval')
    for n in names:
        r = max((x for x in recs if x['kind'] == 'eval' and x['run'] == n), key=lambda x: x['date'])
        assert f"| {r['run']} | {r['epochs']} | {r['card']} |" in md
        assert f"| {r['metrics']['clean']:.2f} | {PAPER['table1'][r['method']]['clean']:.2f} |" in md
        assert f"| {r['metrics']['bim']:.2f} |" in md
    assert 'Table 4: black-box' in md
    assert sum('image/png' in o.get('data', {}) for o in outs) == 2 * len(names)   # t-SNE maps and training curves



CLASSIFIER = """import torch.nn as nn
def make():   # a small classifier of 32x32 images in [0, 1], defined by the test
    import torch
    torch.manual_seed(0)
    return nn.Sequential(nn.Conv2d(3, 8, 4, 4), nn.ReLU(), nn.Flatten(), nn.Linear(8 * 64, 10)).eval()
"""

def test_cli_classifier(tmp_path):
    "--classifier module:callable: an outside classifier attacked with the same columns, record and per-image bits; bad specs in one line."
    (tmp_path / 'mymodels.py').write_text(CLASSIFIER)
    r = subprocess.run([script('swaro_eval'), '--classifier', 'mymodels:make', '--smoke', '--attacks', 'linf_8,pgd_linf_8', '--n-test', '24',
                        '--no-progress', '--device', 'cpu', '--out', 'res'], capture_output=True, text=True, timeout=600, cwd=tmp_path)
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((tmp_path / 'res' / 'make-eval.json').read_text())
    assert (res['run'], res['method'], res['config']) == ('make', 'classifier', None)
    m = res['metrics']['classifier']
    assert set(m) == {'clean', 'linf_8', 'pgd_linf_8'} and m['linf_8'] <= m['pgd_linf_8'] <= m['clean']
    # the clean column recomputed here, on the record's own test images
    import sys, torch
    sys.path.insert(0, str(tmp_path)); import mymodels
    from swaro_nb.core import unpack_codes, unpack_bits
    from swaro_nb.data import load_cifar
    te = load_cifar('cifar10', False); idx = torch.as_tensor(unpack_codes(res['per_image']['test_index'], 24, 'uint16'))
    with torch.no_grad(): ok = (mymodels.make()(te.images[idx].float() / 255).argmax(1) == te.labels[idx]).numpy()
    assert (unpack_bits(res['per_image']['correct']['classifier']['clean'], 24) == ok).all() and m['clean'] == ok.sum() * 100 / 24
    bad = ((['--classifier', 'mymodels'], 'give MODULE:CALLABLE'), (['--classifier', 'nomodule:make'], 'ModuleNotFoundError'),
           (['--classifier', 'mymodels:make', 'runs/x'], 'exactly one of them'),
           (['--classifier', 'mymodels:make', '--aff'], 'attacks the classifier as it is, so --aff cannot apply'))
    errs = _eval_errors([[*args, '--smoke', '--device', 'cpu', '--out', 'res2'] for args, _ in bad], tmp_path, tmp_path / 'io')
    for (args, msg), e in zip(bad, errs):
        assert e.returncode == 2 and e.stderr.count('\n') == 1 and msg in e.stderr, (args, e.stderr)
    assert not (tmp_path / 'res2').exists()

def test_cli_pretrained(runs, tmp_path):
    "--pretrained NAME with --weights-root: a packed model's committed head attacked again without its run folder, on its record's images."
    from swaro_nb.hub import pack_pretrained
    ev = tmp_path / 'ev'
    r = _eval(runs / 'swaro', '--smoke', '--no-rle', '--attacks', 'linf_8', '--n-test', 24, '--train-per-class', 10, '--out', ev)
    assert r.returncode == 0, r.stderr[-3000:]
    pack_pretrained(runs / 'swaro', records=[ev / 'swaro-eval.json'], dest=tmp_path / 'W')
    r = _eval('--pretrained', 'swaro', '--weights-root', tmp_path / 'W', '--smoke', '--attacks', 'linf_8', '--out', tmp_path / 'again')
    assert r.returncode == 0, r.stderr[-3000:]
    old, new = (json.loads(p.read_text()) for p in (ev / 'swaro-eval.json', tmp_path / 'again' / 'swaro-eval.json'))
    assert new['per_image']['test_index'] == old['per_image']['test_index']   # the record's own test images
    assert abs(new['metrics']['clean'] - old['metrics']['clean']) <= 100 / 24 + 1e-9   # float16 weights: one image at most
    # --n-test asks for a subset of its own: it wins over the record's images (a first look on a CPU at a few images)
    r = _eval('--pretrained', 'swaro', '--weights-root', tmp_path / 'W', '--smoke', '--attacks', 'linf_8', '--n-test', 8,
              '--out', tmp_path / 'few')
    assert r.returncode == 0, r.stderr[-3000:]
    few = json.loads((tmp_path / 'few' / 'swaro-eval.json').read_text())
    assert few['budgets']['test_images'] == few['per_image']['n'] == 8
    # the refusals below: the same console script with `_eval`'s options, in forked children of one interpreter (`_eval_errors`)
    tail = ['--out', tmp_path / 'x', '--no-progress', '--device', 'cpu']
    extras = (['--aff'], ['--le-epochs', '5'], ['--tsne'])
    e, *errs = _eval_errors([['--pretrained', 'nosuch', '--weights-root', tmp_path / 'W', '--smoke', *tail]]
                            + [['--pretrained', 'swaro', '--weights-root', tmp_path / 'W', '--smoke', *extra, *tail]
                               for extra in (['--no-le'], *extras)], tmp_path, tmp_path / 'io')
    assert e.returncode == 2 and "no model 'nosuch'" in e.stderr
    # the heads asked for are those attacked (this model has LE only), and what would fit a head is refused, not ignored
    e = errs.pop(0)
    assert e.returncode == 2 and "no rle head to attack (it has: le)" in e.stderr, e.stderr
    for extra, e in zip(extras, errs):
        assert e.returncode == 2 and f"so {extra[0]} cannot apply" in e.stderr and 'pretrained_run' in e.stderr, e.stderr
    assert not (tmp_path / 'x').exists()
    from swaro_nb.hub import evaluate_pretrained, WeightsError
    with pytest.raises(WeightsError, match='no head asked for'):   # the changes choose the heads too
        evaluate_pretrained('swaro', root=tmp_path / 'W', le=False, rle=False)

def test_aff_resumes_its_epochs(runs, tmp_path, monkeypatch):
    """AFF's fine-tuning stopped after its first epoch (the state saved, then a stop as a deadline would) continues from
    `aff-partial.pt` in the next call: the record equals one uninterrupted call's (AFF accuracies, per-image bits), lists
    the resumed epochs, and the pieces folder is gone once the record is written."""
    import torch, swaro_nb.evaluate as E
    from swaro_nb.eval_config import EvalConfig
    cfg = EvalConfig(le=False, rle=False, aff=True, aff_epochs=3, n_test=24, train_per_class=5, attacks=['clean', 'pgd_linf_8'],
                     device='cpu', progress=False, smoke=True)
    whole = E.evaluate_run(runs / 'swaro', cfg, out=tmp_path / 'whole')
    real = E._Evaluation.aff_resume
    def stop_after_one(self, fp):
        kw = real(self, fp)
        def save(s):
            kw_save(s)
            raise KeyboardInterrupt   # as a deadline would stop the call
        kw_save = kw['on_epoch']; return dict(kw, on_epoch=save)
    monkeypatch.setattr(E._Evaluation, 'aff_resume', stop_after_one)
    with pytest.raises(KeyboardInterrupt): E.evaluate_run(runs / 'swaro', cfg, out=tmp_path / 'cut')
    part = torch.load(tmp_path / 'cut' / 'swaro-eval.parts' / 'aff-partial.pt', weights_only=True)
    assert part['kind'] == 'eval_partial' and part['epoch'] == 1 and len(part['losses']) == 1
    monkeypatch.setattr(E._Evaluation, 'aff_resume', real)
    again = E.evaluate_run(runs / 'swaro', cfg, out=tmp_path / 'cut')
    assert again['metrics']['aff'] == whole['metrics']['aff'] and again['per_image']['correct'] == whole['per_image']['correct']
    assert again['linear']['aff']['final_train_loss'] == whole['linear']['aff']['final_train_loss']   # the same weights
    assert [r['piece'] for r in again['resumed']] == ['aff epochs 1-1'] and not whole['resumed']
    assert again['seconds']['aff'] > part['seconds']   # the fine-tuning's time over both calls
    assert not (tmp_path / 'cut' / 'swaro-eval.parts').exists() and (tmp_path / 'cut' / 'swaro-eval-aff.pt').is_file()
