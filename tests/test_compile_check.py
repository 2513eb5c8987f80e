"tools/gpu/compile_check.py: its arguments, the commands it runs, how it reads runs, the summary on synthetic runs, the deadline, and one end-to-end run at the smallest size on the CPU."
import importlib.util, json, subprocess, sys, time
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
SCRIPT = ROOT / 'tools/gpu/compile_check.py'
_spec = importlib.util.spec_from_file_location('compile_check', SCRIPT)
cc = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(cc)


def test_arguments_and_commands(tmp_path):
    a = cc.parse_args([])
    assert (a.epochs, a.seeds, a.preset, a.variants, a.eval_args) == (30, [0, 1], 'c10-200', ['eager', 'compiled'], cc.EVAL_ARGS)
    assert '--autoattack' in a.eval_args and '--n-test 2000' in a.eval_args and a.gpus is None
    s = cc.parse_args(['--smoke'])
    assert (s.epochs, s.preset, s.eval_args) == (2, 'smoke', cc.SMOKE_EVAL_ARGS)
    assert cc.parse_args(['--smoke', '--epochs', '1', '--gpus', '0,2', '--eval-args', '--le-epochs 3']).gpus == [0, 2]
    assert [cc.attack_warmup(e) for e in (1, 2, 30, 200, 2000)] == [1, 1, 2, 10, 100]   # 5% of the epochs, rounded up
    for bad in (['--variants', 'eager,fast'], ['--variants', 'eager'], ['--seeds', 'a'], ['--gpus', 'x']):
        with pytest.raises(SystemExit) as e: cc.parse_args(bad)
        assert e.value.code == 2
    a = cc.parse_args(['--runs-dir', str(tmp_path), '--train-args', '--subset-per-class 20'])
    t = cc.train_cmd(a, 'compiled', 1, 100.4)
    i = t.index('--compile')
    assert t[i + 1] == 'all' and t[t.index('--compile-mode') + 1] == 'reduce-overhead'
    assert t[t.index('--epochs') + 1] == '30' and t[t.index('--attack-warmup-epochs') + 1] == '2' and t[t.index('--seed') + 1] == '1'
    assert t[t.index('--time-limit-s') + 1] == '100' and t[-2:] == ['--subset-per-class', '20'] and t[t.index('--preset') + 1] == 'c10-200'
    e = cc.train_cmd(a, 'eager', 0, None)
    assert e[e.index('--compile') + 1] == 'false' and '--compile-mode' not in e and '--time-limit-s' not in e
    ev = cc.eval_cmd(a, tmp_path / 'r')
    assert ev[3:5] == ['eval', str(tmp_path / 'r')] and ev[ev.index('--out') + 1] == str(tmp_path / 'eval') and '--autoattack' in ev


def test_every_train_flag_exists():
    "The flags the script gives `swaro_nb.cli train` are TrainConfig fields (every field is a flag)."
    import dataclasses
    from swaro_nb.config import TrainConfig
    fields = {f.name for f in dataclasses.fields(TrainConfig)}
    for v in cc.VARIANTS.values(): assert set(v) <= fields
    assert {'seed', 'epochs', 'attack_warmup_epochs', 'out_dir', 'progress', 'time_limit_s', 'name'} <= fields


def test_reading_runs_and_evaluations(tmp_path):
    d = tmp_path / 'run'; d.mkdir()
    lines = [dict(epoch=1, loss=6.0), dict(epoch=2, loss=5.5, knn_acc=20.0), dict(epoch=2, loss=5.4, knn_acc=21.0), dict(epoch=3, loss=5.0)]
    (d / 'metrics.jsonl').write_text('\n'.join(map(json.dumps, lines)) + '\nnot json\n')
    r = cc.read_run(d)
    assert r['loss'] == [[1, 6.0], [2, 5.4], [3, 5.0]] and r['knn'] == [[2, 21.0]] and r['epochs_done'] == 3 and not r['finished']
    (d / 'run.json').write_text(json.dumps(dict(train_seconds=12.0, s_per_epoch=4.0, card='cpu', epochs_done=3, config=dict(compile='all'))))
    r = cc.read_run(d)
    assert r['finished'] and r['s_per_epoch'] == 4.0 and r['config']['compile'] == 'all'
    assert cc.read_eval(tmp_path / 'missing.json') == {}
    (tmp_path / 'e.json').write_text(json.dumps(dict(metrics=dict(clean=80.0, linf_8=40.0, rle=dict(clean=70.0, linf_8=45.0), worst=dict(linf_8=[['a', 1]]),
                                                                   flag=True), seconds=dict(total=9.0, attacks_le=dict(clean=1.0)))))
    e = cc.read_eval(tmp_path / 'e.json')
    assert e['metrics'] == dict(clean=80.0, linf_8=40.0, rle_clean=70.0, rle_linf_8=45.0) and e['seconds'] == dict(total=9.0)
    (tmp_path / 'f.json').write_text('{}')
    assert cc.read_eval(tmp_path / 'f.json')['metrics'] == {}


def _run(variant, seed, losses, knn, metrics, s=5.0):
    return dict(variant=variant, seed=seed, loss=[[i + 1, v] for i, v in enumerate(losses)], knn=knn, s_per_epoch=s,
                epochs_done=len(losses), finished=True, train_seconds=s * len(losses), eval=dict(metrics=metrics))


def test_summary_on_synthetic_runs():
    runs = [_run('eager', 0, [6.0, 5.0, 4.00], [[2, 30.0], [3, 40.0]], dict(clean=80.0, aa_linf_8=40.0)),
            _run('compiled', 0, [6.0, 5.1, 4.02], [[2, 31.0], [3, 39.5]], dict(clean=79.0, aa_linf_8=40.5), s=4.0),
            _run('eager', 1, [6.1, 5.0, 4.05], [[2, 29.0], [3, 41.0]], dict(clean=81.5, aa_linf_8=39.0)),
            _run('compiled', 1, [6.1, 5.0, 3.99], [[2, 29.0], [3, 40.0]], dict(clean=81.0, aa_linf_8=39.1), s=4.0)]
    s = cc.summarize(runs, ['eager', 'compiled'], [0, 1])
    p0, p1 = s['pairs']['compiled']['0'], s['pairs']['compiled']['1']
    assert p0['final_epoch'] == 3 and p0['loss_diff_final'] == pytest.approx(0.02) and p0['max_abs_loss_diff'] == pytest.approx(0.1)
    assert p0['knn_diff'] == [[2, 1.0], [3, -0.5]] and p0['knn_diff_final'] == -0.5
    assert p0['metric_diff'] == pytest.approx(dict(clean=-1.0, aa_linf_8=0.5)) and p0['speedup'] == pytest.approx(1.25)
    assert p1['loss_diff_final'] == pytest.approx(-0.06)
    w = s['worst']['compiled']
    assert w['abs_loss_diff_final'] == pytest.approx(0.06) and w['abs_knn_diff_final'] == pytest.approx(1.0)
    assert w['abs_metric_diff'] == pytest.approx(dict(clean=1.0, aa_linf_8=0.5))
    sp = s['seed_spread']['eager']
    assert sp['loss_final'] == pytest.approx(0.05) and sp['max_loss'] == pytest.approx(0.1) and sp['knn'] == [[2, 1.0], [3, 1.0]]
    assert sp['metrics'] == pytest.approx(dict(clean=1.5, aa_linf_8=1.0))
    ws = w['within_seed_spread']
    assert ws['loss_final'] is False and ws['knn_final'] is True and ws['metrics'] == dict(clean=True, aa_linf_8=True)
    text = cc.table(dict(runs=runs, summary=s))
    assert 'compiled - eager, seed 0: loss 0.0200 at epoch 3' in text and 'eager seed-to-seed spread' in text and 'aa_linf_8' in text
    # an incomplete pair: a run stopped early compares on the common epochs; a missing run leaves its seed out
    short = [runs[0], dict(runs[1], loss=runs[1]['loss'][:2], knn=runs[1]['knn'][:1], eval=None)]
    s2 = cc.summarize(short, ['eager', 'compiled'], [0, 1])
    c = s2['pairs']['compiled']['0']
    assert c['final_epoch'] == 2 and c['knn_diff_final'] == 1.0 and c['metric_diff'] == {} and list(s2['pairs']['compiled']) == ['0']
    assert s2['seed_spread']['eager'] == {}
    cc.table(dict(runs=short, summary=s2))


def test_deadline_stops_launching_and_still_writes(tmp_path):
    out = tmp_path / 'cc.json'
    t = time.time()
    rc = cc.main(['--smoke', '--epochs', '1', '--seeds', '0', '--deadline-s', '5', '--out', str(out), '--runs-dir', str(tmp_path / 'r')])
    rec = json.loads(out.read_text())
    assert rc == 1 and rec['runs'] == [] and len(rec['skipped']) == 2 and 'deadline' in rec['skipped'][0]['why'] and time.time() - t < 60
    assert rec['kind'] == 'compile_check' and {'card', 'commit', 'date', 'torch'} <= set(rec) and rec['settings']['epochs'] == 1


def _cifar10_missing():
    try:
        from swaro_nb.data import find_layout
        for train in (True, False): find_layout('cifar10', train=train)
    except Exception as e: return f'CIFAR-10 is not under the data root ({type(e).__name__}): run tools/setup.sh'
    return None


@pytest.mark.skipif(_cifar10_missing() is not None, reason=_cifar10_missing() or '')
def test_end_to_end_smallest(tmp_path):
    "Both variants trained 1 epoch on 200 images and evaluated on 50: on the CPU both run the eager path, so their losses agree exactly."
    out = tmp_path / 'cc.json'
    p = subprocess.run([sys.executable, str(SCRIPT), '--smoke', '--epochs', '1', '--seeds', '0', '--train-args', '--subset-per-class 20',
                        '--eval-args', '--smoke --n-test 50 --le-epochs 1 --no-rle --attacks clean,pgd_linf_8', '--out', str(out), '--runs-dir', str(tmp_path / 'r'),
                        '--deadline-s', '600'], capture_output=True, text=True, timeout=900)
    rec = json.loads(out.read_text())
    logs = {r['name']: r.get('train_call', {}).get('tail') for r in rec['runs']}
    assert p.returncode == 0, (p.stdout[-2000:], p.stderr[-2000:], logs)
    assert [(r['variant'], r['seed']) for r in rec['runs']] == [('eager', 0), ('compiled', 0)]
    for r in rec['runs']:
        assert r['finished'] and r['epochs_done'] == 1 and len(r['loss']) == 1 and r['knn'] and 'clean' in r['eval']['metrics']
        assert not r['compile_applied']
    assert rec['runs'][1]['config']['compile'] == 'all' and rec['runs'][1]['config']['compile_mode'] == 'reduce-overhead'
    assert 'on CPU every variant runs the eager path' in rec['note'] and rec['finished']
    assert rec['summary']['pairs']['compiled']['0']['abs_loss_diff_final'] < 1e-6
    assert 'compiled - eager, seed 0' in p.stdout
