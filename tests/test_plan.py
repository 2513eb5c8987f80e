"The lease planner (tools/gpu/plan.py) on synthetic speed and evaluation records: record selection, fallbacks, assignment, refusal."
import importlib.util, json, re
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
_spec = importlib.util.spec_from_file_location('plan', ROOT / 'tools/gpu/plan.py')
plan = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(plan)
_spec = importlib.util.spec_from_file_location('mixed_plan', ROOT / 'tools/gpu/mixed_plan.py')
mp = importlib.util.module_from_spec(_spec); _spec.loader.exec_module(mp)

H100, H200 = 'NVIDIA H100 80GB HBM3', 'NVIDIA H200'

def spd(method, s, variant='base', gpus=1, loss_form='paper', card=H100, commit='c1', date='2026-11-26T10:00:00+00:00', batch=512, tag=''):
    return dict(kind='speed', method=method, loss_form=loss_form, variant=variant, gpus=gpus, batch=batch, s_per_real_epoch=s,
                card=card, commit=commit, date=date, tag=tag)

def evrec(le_epochs=100, le_s=10.0, rle_epochs=10, rle_s=100.0, n=1000, pgd_s=0.6, card=H100):
    "An evaluation record: LE and rLE times, a clean pass and PGD-20 on `n` images per head (unit = pgd_s / (n * 21))."
    att = {'clean': dict(kind='clean', steps=0), 'linf_8': dict(kind='pgd', steps=20)}
    secs = {'clean': pgd_s / 21, 'linf_8': pgd_s}
    return dict(kind='eval', card=card, commit='e1', date='2026-11-26T09:00:00+00:00',
                budgets=dict(le_epochs=le_epochs, rle_epochs=rle_epochs, train_images=50000, test_images=n, n_test=n, attacks=att),
                seconds=dict(le=le_s, rle=rle_s, attacks_le=secs, attacks_rle=dict(secs), total=0.0))

def records(tmp_path, speed, evals=()):
    d = tmp_path / 'rec'; d.mkdir(exist_ok=True)
    (d / 'speed.json').write_text(json.dumps([dict(kind='card', card=H100)] + speed))
    for i, e in enumerate(evals): (d / f'r{i}-eval.json').write_text(json.dumps(e))
    return d

def write_plan(tmp_path, runs, name='plan.json'):
    p = tmp_path / name; p.write_text(json.dumps({'runs': runs})); return p

def run_plan(tmp_path, capsys, runs, speed, evals=(), *args):
    rec = records(tmp_path, speed, evals)
    out = tmp_path / 'out.json'
    rc = plan.main([str(write_plan(tmp_path, runs)), '--records', str(rec), '--json', str(out), '--startup-s', '0',
                    '--run-startup-s', '0', '--compile-s', '0', '--eval-startup-s', '0', *map(str, args)])
    text = capsys.readouterr()
    return rc, text.out, text.err, (json.loads(out.read_text()) if out.exists() else None)


def test_record_selection_by_card_method_gpus_newest(tmp_path):
    recs = [spd('swaro', 6.0), spd('swaro', 5.0, date='2026-11-27T10:00:00+00:00', commit='c2'),   # newest H100 wins
            spd('swaro', 3.0, card=H200), spd('swaro', 9.0, tag='shared-2', date='2026-12-01T00:00:00+00:00'),  # other card; shared card
            spd('rocl', 7.0, loss_form='rocl-code'), spd('rocl', 4.0), spd('swaro', 3.5, gpus=2, tag='ddp2')]
    for r in recs: r['_file'] = 'speed.json'
    h100, h200 = plan.Speeds(recs, 'H100'), plan.Speeds(recs, 'h200')
    got = h100.lookup('swaro', 'paper', 1, 'base')
    assert got['s'] == 5.0 and got['record']['commit'] == 'c2' and got['assumption'] is None
    assert h200.lookup('swaro', 'paper', 1, 'base')['s'] == 3.0
    assert h100.lookup('rocl', 'rocl-code', 1, 'base')['s'] == 7.0 and h100.lookup('rocl', 'paper', 1, 'base')['s'] == 4.0
    assert h100.lookup('swaro', 'paper', 2, 'base')['s'] == 3.5
    with pytest.raises(plan.PlanError, match='no speed record'): h200.lookup('rocl', 'paper', 1, 'base')
    with pytest.raises(plan.PlanError, match='batch 256'): h100.lookup('swaro', 'paper', 1, 'base', batch=256)


def test_one_rank_feature_pass_records_do_not_price_a_lease():
    "speed.py's 'one-rank' refresh stands in for the code before sharding: a newer such record must not win over 'sharded'."
    recs = [dict(spd('swaro', 2.6, gpus=4, date='2026-12-01T10:00:00+00:00'), feature_pass='sharded'),
            dict(spd('swaro', 2.8, gpus=4, date='2026-12-01T11:00:00+00:00'), feature_pass='one-rank'),
            dict(spd('rocl', 2.9, gpus=4, date='2026-12-01T12:00:00+00:00'), feature_pass=None)]
    for r in recs: r['_file'] = 'speed.json'
    sp = plan.Speeds(recs, 'H100')
    assert sp.lookup('swaro', 'paper', 4, 'base')['s'] == 2.6 and sp.lookup('rocl', 'paper', 4, 'base')['s'] == 2.9
    with pytest.raises(plan.PlanError):
        plan.Speeds(recs[1:2], 'H100').lookup('swaro', 'paper', 4, 'base')


def test_fallback_scales_by_a_measured_ratio_and_says_so(tmp_path, capsys):
    speed = [spd('swaro', 8.0, 'base'), spd('swaro', 6.0, 'all-ro'), spd('swaro', 4.0, 'base', gpus=2, tag='ddp2'),
             spd('rocl', 10.0, 'base', loss_form='rocl-code')]
    runs = [dict(name='r-compiled', method='rocl', loss_form='rocl-code', epochs=10, variant='compiled'),
            dict(name='r-ddp', method='rocl', loss_form='rocl-code', epochs=10, gpus=2),
            dict(name='s-ddp-ro', method='swaro', epochs=10, gpus=2, variant='all-ro')]
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, (), '--gpus', 2)
    assert rc == 0, err
    s = {r['name']: r for r in js['runs']}
    assert s['r-compiled']['s_per_epoch'] == pytest.approx(10 * 6 / 8)         # variant ratio all-ro/base of swaro
    assert s['r-ddp']['s_per_epoch'] == pytest.approx(10 * 4 / 8)              # GPU ratio 2/1 of swaro
    assert s['s-ddp-ro']['s_per_epoch'] == pytest.approx(4 * 6 / 8)            # the 2-GPU record x the variant ratio
    assert 'no rocl/rocl-code record for variant all-ro' in s['r-compiled']['assumption']
    assert 'x 0.750 (variant all-ro/base measured on swaro/paper 1 GPU' in s['r-compiled']['assumption']
    assert 'for 2 GPU(s)' in s['r-ddp']['assumption'] and 'x 0.500 (gpus 2/1 GPUs' in s['r-ddp']['assumption']
    assert out.count('ASSUMED:') == 3
    assert 'speed.json (NVIDIA H100 80GB HBM3, c1' in out     # each run names its record: file, card, commit


def test_assignment_longest_first_and_data_parallel(tmp_path, capsys):
    speed = [spd('swaro', 1.0), spd('swaro', 0.6, gpus=2, tag='ddp2')]
    runs = [dict(name='a', method='swaro', epochs=600), dict(name='b', method='swaro', epochs=300),
            dict(name='c', method='swaro', epochs=240), dict(name='d', method='swaro', epochs=120)]
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, (), '--gpus', 2)
    r = {x['name']: x for x in js['runs']}
    # longest first, each to the GPU free earliest: a (10 min) on 0, b (5) on 1, c (4) on 1 at 5, d (2) on 1 at 9 (before 0 frees at 10)
    assert r['a']['gpu_ids'] == [0] and r['b']['gpu_ids'] == [1] and r['c']['gpu_ids'] == [1] and r['d']['gpu_ids'] == [1]
    assert r['c']['start_min'] == pytest.approx(5) and r['d']['start_min'] == pytest.approx(9)
    assert js['end_min'] == pytest.approx(11) and rc == 0
    # a data-parallel run waits for two GPUs and holds both for its training
    runs.append(dict(name='e', method='swaro', epochs=100, gpus=2))
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, (), '--gpus', 2)
    e = {x['name']: x for x in js['runs']}['e']
    assert e['gpu_ids'] == [0, 1] and e['end_min'] == pytest.approx(js['end_min'])
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, (), '--gpus', 1)
    assert rc == 2 and 'needs 2 GPUs; the machine has 1' in err


def test_refusal_past_the_limit(tmp_path, capsys):
    speed = [spd('swaro', 6.0)]
    runs = [dict(name='long', method='swaro', epochs=300)]   # 30 min
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, (), '--gpus', 1)
    last = out.strip().splitlines()[-1]
    assert rc == 1 and last.startswith('refused: predicted end 30.0 min passes the 26 min limit by 4.0 min') and not js['fits']
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, (), '--gpus', 1, '--limit-min', 31)
    assert rc == 0 and out.strip().splitlines()[-1].startswith('ok: predicted end 30.0 min')
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, (), '--gpus', 1, '--limit-min', 31, '--set', 'epochs=320')
    assert rc == 1


def test_evaluation_model(tmp_path, capsys):
    evs = [evrec(le_epochs=100, le_s=10.0), evrec(le_epochs=20, le_s=2.0)]   # LE: 0.1 s an epoch, no intercept
    evs[0]['_file'] = evs[1]['_file'] = 'x-eval.json'
    m = plan.EvalModel(evs, 'H100', sets=(plan._builtin_sets(), 'built-in'))
    assert m.le_a == pytest.approx(0) and m.le_b == pytest.approx(0.1) and m.rle_s == pytest.approx(10.0)
    unit = 2 * (0.6 + 0.6 / 21) / (2 * 1000 * 22)
    assert m.unit_s == pytest.approx(unit) and m.aa_units == plan.AA_UNITS and not m.aa_measured
    p = m.predict(dict(le_epochs=150, rle_epochs=5, n_test=4000, autoattack=True, table3=True), 0)
    assert p['le'] == pytest.approx(15) and p['rle'] == pytest.approx(50)
    # Table 1: clean + six PGD-20 on every image; the worst cases' APGD-CE, APGD-T (9 targets), SLIDE (3 restarts) and the
    # l1 APGD-CE (5 restarts) and APGD-T (5 targets) on half
    t1 = 1 + 6 * 21 + plan.ROBUST_FRAC * (4 * 101 + 4 * 9 * 101 + 2 * 3 * 51 + 2 * 5 * 101 + 2 * 5 * 101)
    assert p['attacks_table1'] == pytest.approx(2 * 4000 * t1 * unit) and p['attacks_table3'] == pytest.approx(2 * 4000 * 48 * unit)
    assert p['attacks_autoattack'] == pytest.approx(2 * plan.AA_N * 2 * plan.AA_UNITS * unit)   # two norms on the first AA_N images
    assert m.predict(dict(le_epochs=150, rle_epochs=0), 0)['attacks_table1'] == pytest.approx(10000 * t1 * unit)  # one head, all images
    # an AutoAttack timing in a record replaces the assumption
    e = evrec(); e['_file'] = 'y'; e['budgets']['attacks']['aa_linf_8'] = dict(kind='autoattack', steps=0); e['seconds']['attacks_le']['aa_linf_8'] = 30.0
    m2 = plan.EvalModel([e], 'H100', sets=(plan._builtin_sets(), 'built-in'))
    assert m2.aa_measured == 1 and m2.aa_units == pytest.approx(30.0 / (1000 * m2.unit_s))
    with pytest.raises(plan.PlanError, match='no evaluation record'): plan.EvalModel(evs, 'H200')
    # through the command: the evaluation follows its training on the same GPU
    speed = [spd('swaro', 1.0)]
    runs = [dict(name='a', method='swaro', epochs=60, eval=dict(le_epochs=100, rle_epochs=0, n_test=1000))]
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, evs, '--gpus', 1)
    r = js['runs'][0]
    assert rc == 0 and r['eval_start_min'] == pytest.approx(1) and r['eval_s']['le'] == pytest.approx(10)
    assert 'AutoAttack ASSUMED' in out
    # a model no attack leaves much of: worst-case members and AutoAttack on robust_frac of the images, not ROBUST_FRAC
    q = m.predict(dict(le_epochs=150, rle_epochs=0, n_test=4000, autoattack=True, robust_frac=0.05), 0)
    assert q['attacks_table1'] == pytest.approx(4000 * (1 + 6 * 21 + 0.05 * (4 * 101 + 4 * 9 * 101 + 2 * 3 * 51 + 4 * 5 * 101)) * unit)
    assert q['attacks_autoattack'] == pytest.approx(plan.AA_N * 2 * plan.AA_UNITS * unit * 0.05 / plan.ROBUST_FRAC)
    # the command gives CE, SCL, SimCLR and SwAV NONROBUST_FRAC unless the run says otherwise
    runs = [dict(name='c', method='simclr', epochs=10, eval=dict(le_epochs=10, rle_epochs=0, n_test=1000, autoattack=True)),
            dict(name='d', method='simclr', epochs=10, eval=dict(le_epochs=10, rle_epochs=0, n_test=1000, autoattack=True, robust_frac=0.5)),
            dict(name='e', method='rocl', epochs=10, eval=dict(le_epochs=10, rle_epochs=0, n_test=1000, autoattack=True))]
    rc, out, err, js = run_plan(tmp_path, capsys, runs, [spd('simclr', 1.0), spd('rocl', 1.0)], evs, '--gpus', 3)
    aa = {r['name']: r['eval_s']['attacks_autoattack'] for r in js['runs']}
    assert rc == 0 and aa['c'] == pytest.approx(aa['d'] * plan.NONROBUST_FRAC / plan.ROBUST_FRAC) and aa['d'] == pytest.approx(aa['e'])


def test_evaluation_only_runs_and_rle_only_heads(tmp_path, capsys):
    "A run trained earlier (\"trained\": true) is priced as its evaluation alone; an rLE-only evaluation (le false) attacks one head."
    evs = [evrec(le_epochs=100, le_s=10.0), evrec(le_epochs=20, le_s=2.0)]
    evs[0]['_file'] = evs[1]['_file'] = 'x-eval.json'
    m = plan.EvalModel(evs, 'H100', sets=(plan._builtin_sets(), 'built-in'))
    both, rle_only = (m.predict(dict(le=le, le_epochs=150, rle_epochs=5, n_test=1000), 0) for le in (True, False))
    assert rle_only['le'] == 0 and rle_only['rle'] == pytest.approx(both['rle'])
    assert rle_only['attacks_table1'] == pytest.approx(both['attacks_table1'] / 2)   # one head attacked instead of two
    with pytest.raises(plan.PlanError, match='evaluates nothing'): m.predict(dict(le=False, rle_epochs=0), 0)
    sup = m.predict(dict(le=True, le_epochs=150, rle_epochs=0, n_test=1000, classifier=True), 0)   # AT, TRADES, CE: their classifier too
    assert sup['attacks_table1'] == pytest.approx(2 * m.predict(dict(le_epochs=150, rle_epochs=0, n_test=1000), 0)['attacks_table1'])
    runs = [dict(name='a', method='swaro', epochs=200, trained=True, eval=dict(le=False, rle_epochs=5, n_test=1000))]
    rc, out, err, js = run_plan(tmp_path, capsys, runs, [], evs, '--gpus', 1)   # no speed record needed: nothing trains
    r = js['runs'][0]
    assert rc == 0 and r['eval_start_min'] == pytest.approx(0) and 'trained earlier (evaluation only)' in out

def test_rle_lease_plan_fits():
    "The committed rLE lease plan prices with the committed records and fits a lease."
    assert plan.main([str(ROOT / 'tools/gpu/plans/rle-lease.json'), '--gpus', '4']) == 0

def test_c100_lease_plan_fits_and_its_launch_line_agrees(capsys):
    ("The CIFAR-100 lease plan fits a lease on the card its speeds come from, and its launch line gives the training the time the plan's SwARo "
     "needs. The lease ran (issue #21) before the l1 worst cases had their APGD members; priced with them it passes 26 min by 0.9 min, so "
     "it is checked against 28.")
    assert plan.main([str(ROOT / 'tools/gpu/plans/c100-lease.json'), '--gpus', '4', '--card', 'H200', '--limit-min', '28']) == 0
    capsys.readouterr()
    spec = json.loads((ROOT / 'tools/gpu/plans/c100-lease.json').read_text())
    sw = next(r for r in spec['runs'] if r['name'] == 'swaro-c100-200-s0')
    main_line = spec['note'].split("SIDE=")[0]
    dl, res = (int(re.search(rf'\b{k}=(\d+)', main_line).group(1)) for k in ('DEADLINE', 'EVAL_RESERVE'))
    assert sw['s_per_epoch'] * 200 + 60 <= dl - res - 30   # repro_session.sh's time limit, with a minute of start-up


def test_eval_commit_sizes_evaluations_from_that_commit_alone(tmp_path, capsys):
    old, new = evrec(le_s=30.0, pgd_s=1.8), evrec(le_s=10.0, pgd_s=0.6)   # old code three times slower
    old['commit'], new['commit'] = 'aaaa111', 'bbbb222'
    for r in (old, new):   # named as the library names PGD-20 (--eval-commit prices each attack as the newest record ran it)
        for d in (r['budgets']['attacks'], r['seconds']['attacks_le'], r['seconds']['attacks_rle']): d['pgd_linf_8'] = d.pop('linf_8')
    runs = [dict(name='a', method='swaro', epochs=200, trained=True, eval=dict(le_epochs=100, rle_epochs=0, n_test=1000))]
    speed = [spd('swaro', 1.0)]
    both = run_plan(tmp_path, capsys, runs, speed, [old, new], '--gpus', 1)[3]['runs'][0]['eval_s']
    one = run_plan(tmp_path, capsys, runs, speed, [old, new], '--gpus', 1, '--eval-commit', 'bbbb')[3]['runs'][0]['eval_s']
    assert one['le'] == pytest.approx(10) and both['le'] == pytest.approx(20)   # the line through both records' LE at 100
    assert one['attacks_table1'] == pytest.approx(both['attacks_table1'] / 2)   # unit 0.6 against the pooled (0.6+1.8)/2
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, [old, new], '--gpus', 1, '--eval-commit', 'cccc')
    assert rc == 2 and 'no evaluation record of that commit' in err


def test_evaluations_that_shared_a_gpu_are_left_out_of_the_model(tmp_path):
    "Evaluation records timed with another evaluation on their GPU do not size evaluations; every other record does."
    _, evals = plan.load_records([ROOT / 'results' / 'eval'])
    names = {Path(r['_file']).name for r in evals}
    on_disk = {f.name for f in (ROOT / 'results' / 'eval').glob('*-eval.json')}
    assert plan.SHARED_GPU_EVALS <= on_disk and names == on_disk - plan.SHARED_GPU_EVALS
    # the same record under another name is taken
    src = ROOT / 'results' / 'eval' / sorted(plan.SHARED_GPU_EVALS)[0]
    (tmp_path / 'x-eval.json').write_text(src.read_text()); (tmp_path / src.name).write_text(src.read_text())
    assert [Path(r['_file']).name for r in plan.load_records([tmp_path])[1]] == ['x-eval.json']

def test_bad_input_is_one_line(tmp_path, capsys):
    speed = [spd('swaro', 1.0)]
    for runs, msg in [([dict(name='a', method='swaro')], "has no 'epochs'"),
                      ([dict(name='a', method='swaro', epochs=1, variant='fast')], "variant 'fast'"),
                      ([dict(name='a', method='swaro', epochs=1, eval=dict(leee=3))], 'unknown eval field'),
                      ([dict(name='a', method='swaro', epochs=1, trained='false')], 'trained must be true or false'),
                      ([dict(name='a', method='simclr', epochs=1)], 'no speed record')]:
        rc, out, err, js = run_plan(tmp_path, capsys, runs, speed)
        assert rc == 2 and msg in err and len(err.strip().splitlines()) == 1, err


def test_builtin_attack_sets_match_the_library():
    "The planner's copy of the evaluation's attack sets (used where the library does not import) is the library's."
    got = plan.library_sets()
    if got is None: pytest.skip('the library does not import here')
    lib, _ = got
    norm = lambda sets: {k: {n: (sp['kind'], int(sp.get('steps') or 0), int(sp.get('restarts') or 1), tuple(sp.get('members') or ()))
                             for n, sp in v.items()} for k, v in sets.items()}
    assert norm(plan._builtin_sets()) == norm(lib)
    for k in ('table1', 'table3', 'rocl', 'autoattack'): assert plan.set_units(plan._builtin_sets(), k) == plan.set_units(lib, k)


def test_repro_plan_prices_with_the_committed_records(capsys):
    rc = plan.main([str(ROOT / 'tools/gpu/plans/repro-lease1.json'), '--gpus', '2'])
    out = capsys.readouterr().out
    assert rc in (0, 1) and 'swaro-c10-200-s0' in out and 'results/speed/' in out

def test_gpu_host_announces_the_method_entry_points(tmp_path):
    "A GPU host runs the checkout from PYTHONPATH, uninstalled: common.sh announces the methods' entry points, else ACL, SCL and SwAV are unknown."
    import os, subprocess, sys
    site = tmp_path / 'site'
    env = dict(os.environ, PYTHONPATH=str(site))
    def names():   # what a Python without site-packages finds, outside the checkout (whose egg-info an editable install leaves)
        code = "import importlib.metadata as m; print(' '.join(sorted(e.name for e in m.entry_points(group='swaro_nb.methods'))))"
        return subprocess.run([sys.executable, '-S', '-c', code], env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout.split()
    ep = lambda *a: subprocess.run([sys.executable, '-S', str(ROOT / 'tools/gpu/entry_points.py'), *a], env=env, cwd=tmp_path, capture_output=True, text=True, check=True).stdout
    assert names() == []
    assert 'method entry points' in ep('--if-missing', str(site))
    assert {'acl', 'scl', 'swav'} <= set(names())
    f = next(site.glob('swaro_nb-*.dist-info')) / 'entry_points.txt'; before = f.read_text()
    assert 'already announced' in ep('--if-missing', str(site)) and f.read_text() == before
    assert 'tools/gpu/entry_points.py --if-missing /tmp/site' in (ROOT / 'tools/gpu/common.sh').read_text()

def test_processes_sharing_a_gpu_share_its_time():
    "A record's process-seconds times its GPUs over its processes are GPU-seconds; predictions divide by eval_gpus, not procs."
    one = evrec(); one['_file'] = 'a'
    two = evrec(pgd_s=1.2); two['_file'] = 'b'; two['budgets']['workers'] = ['cuda:0', 'cuda:0']   # twice the process-seconds in two processes on one GPU
    split = evrec(pgd_s=1.2); split['_file'] = 'c'; split['budgets']['workers'] = ['cuda:0', 'cuda:1']   # one process a GPU: GPU-seconds as recorded
    m1, m2, m3 = (plan.EvalModel([r], 'H100', sets=(plan._builtin_sets(), 'built-in')) for r in (one, two, split))
    assert m2.unit_s == pytest.approx(m1.unit_s) and m3.unit_s == pytest.approx(2 * m1.unit_s)
    ev = dict(le_epochs=100, n_test=1000)
    base = m1.predict(ev, 0.0)['attacks_table1']
    assert base > 0
    assert m1.predict(dict(ev, procs=3), 0.0)['attacks_table1'] == pytest.approx(base)         # more processes on one GPU: no faster
    assert m1.predict(dict(ev, eval_gpus=2), 0.0)['attacks_table1'] == pytest.approx(base / 2)  # a second GPU halves the attacks


# ------------------------------------------------------------------ the five-seed set: reference AutoAttack, layouts, plans
def test_reference_autoattack_is_priced_then_measured(tmp_path, capsys):
    "The reference AutoAttack costs REF_AA_UNITS per image and norm (ASSUMED, said) until a record times a ref_aa_* column; then its timing."
    evs = [evrec()]; evs[0]['_file'] = 'x'
    m = plan.EvalModel(evs, 'H100', sets=(plan._builtin_sets(), 'built-in'))
    assert m.ref_units == plan.REF_AA_UNITS and not m.ref_measured and f'reference AutoAttack ASSUMED {plan.REF_AA_UNITS}' in m.describe()
    ev = dict(le_epochs=150, rle_epochs=0, n_test=4000, reference=['linf_8'])
    p = m.predict(ev, 0)
    assert p['attacks_reference'] == pytest.approx(plan.AA_N * plan.REF_AA_UNITS * m.unit_s)       # one head, one norm, first AA_N images
    two = m.predict(dict(ev, rle_epochs=5, reference=['ref_aa_linf_8', 'l2_05'], eval_gpus=2), 0)   # both spellings; two heads over 2 GPUs
    assert two['attacks_reference'] == pytest.approx(2 * 2 * plan.AA_N * plan.REF_AA_UNITS * m.unit_s / 2)
    assert m.predict(dict(ev, robust_frac=0.05), 0)['attacks_reference'] == pytest.approx(p['attacks_reference'] * 0.05 / plan.ROBUST_FRAC)
    assert m.predict(dict(le_epochs=150, rle_epochs=0, n_test=4000), 0)['attacks_reference'] == 0
    # a record that times the reference (2 processes on 2 GPUs: process-seconds are GPU-seconds) replaces the assumption
    e = evrec(); e['_file'] = 'y'; e['budgets'].update(autoattack_images=500, workers=['cuda:0', 'cuda:1'])
    e['budgets']['attacks']['ref_aa_linf_8'] = dict(kind='ref-autoattack', steps=100); e['seconds']['attacks_le']['ref_aa_linf_8'] = 40.0
    m2 = plan.EvalModel([e], 'H100', sets=(plan._builtin_sets(), 'built-in'))
    assert m2.ref_measured == 1 and m2.ref_units == pytest.approx(40.0 / (500 * m2.unit_s)) and 'from 1 timings' in m2.describe()
    assert m2.aa_units == plan.AA_UNITS   # the reference is not torchattacks' AutoAttack
    # through the command: the per-run line shows it; an unknown column is one line naming the known ones
    runs = [dict(name='a', method='swaro', epochs=10, eval=dict(le_epochs=10, n_test=1000, reference=['linf_8']))]
    rc, out, err, js = run_plan(tmp_path, capsys, [dict(r) for r in runs], [spd('swaro', 1.0)], evs, '--gpus', 1)
    assert rc == 0 and js['runs'][0]['eval_s']['attacks_reference'] > 0 and 'reference AutoAttack' in out
    rc, out, err, js = run_plan(tmp_path, capsys, [dict(runs[0], eval=dict(reference=['linf_4']))], [spd('swaro', 1.0)], evs, '--gpus', 1)
    assert rc == 2 and "unknown column 'linf_4'" in err and 'l2_05' in err and len(err.strip().splitlines()) == 1


def test_apgd_members_are_priced_from_their_own_timings():
    """A record that times the worst case's APGD members one by one (its `worst` counts say how many images each ran on)
    prices them as a line in those images, fitted on the newest such record: a fixed time per step and block of images
    plus a time per image and step; eval "shards" scales the fixed part. Without such a record: the old unit rule."""
    sets = plan._builtin_sets(); ce, t = sets['members']['apgd_ce_linf_8'], sets['members']['apgd_t_linf_8']
    u_ce, u_t = plan.spec_units(ce), plan.spec_units(t)
    a, b = 0.02, 5e-6   # seconds per step at 4 shards, per image and step: the truth the fit must recover
    def rec(date, clean, left, shards=4):   # pgd leaves left[0] %, APGD-CE left[1], APGD-T left[2] (of n = 1000)
        n, e = 1000, evrec()
        e.update(date=date, _file=date, metrics=dict(clean=clean),   # the LE head's columns at the top level
                 worst=dict(le=dict(linf_8=[['pgd_linf_8', left[0]], ['apgd_ce_linf_8', left[1]], ['apgd_t_linf_8', left[2]]])))
        e['budgets'].update(shards=shards, attacks={**e['budgets']['attacks'], 'apgd_ce_linf_8': ce, 'apgd_t_linf_8': t})
        e['seconds']['attacks_le'].update(apgd_ce_linf_8=u_ce * (a + b * left[0] * n / 100), apgd_t_linf_8=u_t * (a + b * left[1] * n / 100))
        return e
    new, old = rec('2026-11-29T00:00:00+00:00', 80, (50, 40, 30)), rec('2026-11-20T00:00:00+00:00', 90, (20, 10, 5))
    old['seconds']['attacks_le']['apgd_t_linf_8'] *= 3   # another code's timing: left out, the newest record is taken
    assert plan.apgd_timings(new, sets) == [pytest.approx((500, a + b * 500)), pytest.approx((400, a + b * 400))]
    m = plan.EvalModel([old, new], 'H100', sets=(sets, 'built-in'))
    assert m.apgd_fit == pytest.approx((a, b)) and m.apgd_shards == 4 and 'from 2 member timings' in m.describe()
    ev = dict(le_epochs=150, rle_epochs=0, n_test=2000, attacks=['linf_8'], robust_frac=0.5)
    base = m.predict(ev, 0)['attacks_table1'] - 2000 * 0.5 * plan.spec_units(plan._every(sets)['pgd_linf_8']) * m.unit_s
    assert base == pytest.approx((u_ce + u_t) * (a + b * 1000))
    one = m.predict(dict(ev, shards=1), 0)['attacks_table1'] - m.predict(ev, 0)['attacks_table1']
    assert one == pytest.approx(-(u_ce + u_t) * a * 3 / 4)   # one block: a quarter of the fixed part
    plain = plan.EvalModel([dict(evrec(), _file='p')], 'H100', sets=(sets, 'built-in'))   # no member timings: the old rule
    assert plain.apgd_fit is None and 'priced as the other attacks' in plain.describe()


def test_aff_is_priced_assumed_then_measured():
    "AFF costs AFF_S_PER_EPOCH an epoch (ASSUMED, said) and adds a head to attack, until a record times it; then the newest."
    sets = (plan._builtin_sets(), 'built-in')
    m = plan.EvalModel([dict(evrec(), _file='a')], 'H100', sets=sets)
    ev = dict(le=False, rle_epochs=0, n_test=1000, aff=True, aff_epochs=40)
    p, none = m.predict(ev, 0), m.predict(dict(ev, aff=False, le=True), 0)
    assert p['aff'] == pytest.approx(40 * plan.AFF_S_PER_EPOCH) and 'AFF 22.5 s per epoch ASSUMED' in m.describe()
    assert p['attacks_table1'] == pytest.approx(none['attacks_table1'])   # one head either way (AFF's instead of LE's)
    e = evrec(); e.update(_file='b'); e['budgets']['aff_epochs'] = 10; e['seconds']['aff'] = 80.0
    old = evrec(); old.update(_file='c', date='2026-11-20T09:00:00+00:00'); old['budgets']['aff_epochs'] = 2
    old['seconds']['aff'] = 100.0   # an older code's timing (50 s an epoch): the newest record prices AFF, whatever their order
    m2 = plan.EvalModel([old, e], 'H100', sets=sets)
    assert m2.aff_s == pytest.approx(8.0) and m2.predict(ev, 0)['aff'] == pytest.approx(320.0)
    assert 'from the newest of 2 records' in m2.describe() and plan.EvalModel([e, old], 'H100', sets=sets).aff_s == pytest.approx(8.0)
    spec = json.loads((ROOT / 'tools/gpu/plans/aff-lease.json').read_text()); v = _launch_vars(spec['launch'])
    assert v['PRELOAD'].split() == [r['name'] for r in spec['runs']] == [x.split(':')[0] for x in v['RUNS'].split()]
    assert '$(cat tools/gpu/plans/aff-eval.txt)' in spec['launch'] and spec['launch'] in spec['note']
    flags = (ROOT / 'tools/gpu/plans/aff-eval.txt').read_text().split()
    assert {'--aff', '--no-le', '--no-rle'} <= set(flags) and flags[flags.index('--aff-epochs') + 1] == '100'   # ACL's length


def test_attack_list_fractional_gpus_and_card_speeds(tmp_path, capsys):
    "eval 'attacks' prices the columns named (members on the robust share); eval_gpus may be fractional; s_per_epoch may be given per card."
    evs = [evrec()]; evs[0]['_file'] = 'x'
    m = plan.EvalModel(evs, 'H100', sets=(plan._builtin_sets(), 'built-in'))
    p = m.predict(dict(le_epochs=0, n_test=1000, attacks=['clean', 'l2_05', 'l1_12']), 0)
    # worst cases run every member on the robust share (l1: PGD, SLIDE with 3 restarts, APGD-CE with 5, APGD-T with 5 targets)
    units = 1 + plan.ROBUST_FRAC * (21 + 101 + 9 * 101) + plan.ROBUST_FRAC * (21 + 3 * 51 + 5 * 101 + 5 * 101)
    assert p['attacks_table1'] == pytest.approx(1000 * units * m.unit_s)
    q = m.predict(dict(le_epochs=0, n_test=1000, attacks=['clean', 'l2_05', 'pgd_l2_05']), 0)   # a member asked for runs on every image
    assert q['attacks_table1'] == pytest.approx(1000 * (1 + 21 + plan.ROBUST_FRAC * (101 + 9 * 101)) * m.unit_s)
    full = m.predict(dict(le_epochs=150, n_test=1000), 0)
    assert m.predict(dict(le_epochs=150, n_test=1000, eval_gpus=4 / 3), 0)['attacks_table1'] == pytest.approx(full['attacks_table1'] * 3 / 4)
    speed = [spd('swaro', 2.0)]
    runs = [dict(name='a', method='swaro', epochs=60, s_per_epoch={'H200': 1.0, 'H100': 3.0}),
            dict(name='b', method='swaro', epochs=60, s_per_epoch={'A100': 1.0})]   # no key in the card: the records
    rc, out, err, js = run_plan(tmp_path, capsys, runs, speed, (), '--gpus', 2)
    r = {x['name']: x for x in js['runs']}
    assert rc == 0 and r['a']['s_per_epoch'] == 3.0 and r['b']['s_per_epoch'] == 2.0 and r['b']['assumption'] is None
    for ev, msg in [(dict(attacks=['clean', 'linf_9']), "unknown attack(s) ['linf_9']"), (dict(attacks='clean'), 'non-empty list'),
                    (dict(eval_gpus=0.5), 'eval_gpus must be a number >= 1')]:
        rc, out, err, js = run_plan(tmp_path, capsys, [dict(name='a', method='swaro', epochs=1, eval=ev)], speed, evs, '--gpus', 1)
        assert rc == 2 and msg in err and len(err.strip().splitlines()) == 1, err


def test_layout_file_turns_process_seconds_into_gpu_seconds(tmp_path):
    "A record whose two attack processes had 1.333 GPUs (a shared helper, layout.json) gives 1.333/2 of its process-seconds as GPU-seconds."
    d = tmp_path / 'ev'; d.mkdir()
    e = evrec(pgd_s=1.2); e['run'] = 'r1'; e['budgets']['workers'] = ['cuda:0', 'cuda:1']
    (d / 'r1-eval.json').write_text(json.dumps(e))
    alone = plan.EvalModel(plan.load_records([d])[1], 'H100', sets=(plan._builtin_sets(), 'built-in'))
    (d / 'layout.json').write_text(json.dumps({'runs': {'r1': {'eval_gpus': 4 / 3}}}))
    shared = plan.EvalModel(plan.load_records([d])[1], 'H100', sets=(plan._builtin_sets(), 'built-in'))
    assert shared.unit_s == pytest.approx(alone.unit_s * (4 / 3) / 2)
    (d / 'layout.json').write_text('{"runs": 3}')
    with pytest.raises(plan.PlanError, match='not a layout file'): plan.load_records([d])


def _launch_vars(line: str) -> dict:
    "NAME='...' and NAME=word assignments of a launch line."
    import shlex
    out = {}
    for w in shlex.split(line.replace(';', ' ; ').replace('&&', ' && ')):
        if '=' in w and re.fullmatch(r'[A-Z_]+=.*', w, re.S): k, v = w.split('=', 1); out.setdefault(k, v)
    return out

@pytest.mark.parametrize('name', ['five-seed-lease1.json', 'five-seed-lease2.json'])
def test_five_seed_combined_plans_launch_lines_agree(name, capsys):
    """A lease that trains and evaluates (4x H200): the planner prices it with the reference AutoAttack, and its launch line
    trains the plan's runs and evaluates them with the set's one protocol. Whether it fits is the planner's answer from the
    records of the day (five-seed.md: with the reference timed by the first five-seed record, 27.6 min, so the set runs
    the split layouts, whose fit the tests below check)."""
    from swaro_nb.cli import eval_parser, check_eval_args
    path = ROOT / 'tools/gpu/plans' / name
    assert plan.main([str(path), '--gpus', '4', '--card', 'H200', '--limit-min', '27']) in (0, 1)
    out = capsys.readouterr().out
    assert 'reference AutoAttack' in out
    spec = json.loads(path.read_text())
    v = _launch_vars(spec['launch'])
    assert spec['launch'] in spec['note'] and 'setsid nohup bash tools/gpu/repro_session.sh' in spec['launch']
    assert 'cd /root/swaro/code && SWARO_COMMIT=$(cat PINNED_COMMIT) ' in spec['launch'] and v['EVAL_FROM'] == 'f16' and v['WEIGHTS'] == '1' and len(spec['launch']) < 2000
    protocol = (ROOT / 'tools/gpu/plans/five-seed-eval.txt').read_text().strip()
    assert v['EVAL'] == protocol
    a = eval_parser().parse_args(['run', *protocol.split()]); check_eval_args(eval_parser(), vars(a))   # swaro_eval takes the flags
    trained = [r for r in spec['runs'] if not r.get('trained')]
    runs = [x.split(':') for x in v['RUNS'].split()]
    assert [(n, p, int(s)) for n, p, s, *_ in runs] == [(r['name'], r['preset'], r['seed']) for r in trained]
    for (n, p, s, *more), r in zip(runs, trained):
        assert (more[0].replace(',', ' ') if more else '') == r.get('train_flags', '')
        assert n == f"c10-200-{ {'rocl': 'rocl', 'swaro': 'rand' if 'random' in r.get('train_flags', '') else 'swaro'}[r['method']] }-s{s}"
    ev = {**spec['defaults']['eval']}
    assert f"--rle-epochs {ev['rle_epochs']}" in protocol and f"--le-epochs {ev['le_epochs']}" in protocol and f"--n-test {ev['n_test']}" in protocol
    cols = a.attacks   # a list: EvalConfig's field, comma-separated on the command line
    assert [c for c in cols if c.startswith('ref_aa_')] == plan.reference_names(ev['reference']) and not ev['autoattack']
    assert [c for c in cols if not c.startswith('ref_aa_')] == [k for k in plan.library_sets()[0]['table1'] if k != 'clean']
    assert ev['table3'] and ev['rocl_protocol'] and a.table3 and a.rocl_protocol and a.shards == 4 and not getattr(a, 'autoattack', False)
    gpus, helpers = v['GPUS'].split(','), v['HELP'].split(',')
    assert len(gpus) == len(trained) and len(helpers) == len(gpus) and len(set(helpers)) == 1 and helpers[0] not in gpus
    assert ev['eval_gpus'] == pytest.approx(1 + 1 / len(gpus), abs=1e-3)   # one helper GPU shared by the evaluations
    dl, res = int(v['DEADLINE']), int(v['EVAL_RESERVE'])
    for r in trained:   # every training finishes its 200 epochs inside repro_session.sh's time limit, with a minute of start-up
        assert r['s_per_epoch']['H200'] * r.get('epochs', 200) + 60 <= dl - res - 30
    assert dl <= 1560   # the job's end, its final polls and the staging inside a 30-minute lease


def test_five_seed_h100_fallback_trains_only_and_fits():
    "On H100s the lease only trains (four runs, weights exported); it fits 27 min with the H100 speeds."
    path = ROOT / 'tools/gpu/plans/five-seed-lease1-h100.json'
    assert plan.main([str(path), '--gpus', '4', '--card', 'H100', '--limit-min', '27']) == 0
    spec = json.loads(path.read_text()); v = _launch_vars(spec['launch'])
    assert v['EVAL'] == 'none' and v['WEIGHTS'] == '1' and v['EVAL_FROM'] == 'f16' and spec['launch'] in spec['note']
    assert [x.split(':')[0] for x in v['RUNS'].split()] == [r['name'] for r in spec['runs']] and len(v['GPUS'].split(',')) == 4
    for r in spec['runs']: assert r['s_per_epoch']['H100'] * 200 + 60 <= int(v['DEADLINE']) - int(v['EVAL_RESERVE']) - 30


def test_five_seed_evaluation_lease_evaluates_what_lease_1_trained():
    "The evaluation lease: lease 1's four runs preloaded (their encoders from weights/), one a GPU, the set's protocol; it fits on H100s."
    path = ROOT / 'tools/gpu/plans/five-seed-eval-lease1.json'
    assert plan.main([str(path), '--gpus', '4', '--card', 'H100', '--limit-min', '22']) == 0
    spec = json.loads(path.read_text()); v = _launch_vars(spec['launch'])
    names = [r['name'] for r in spec['runs']]
    assert all(r['trained'] for r in spec['runs']) and spec['launch'] in spec['note']
    assert [x.split(':')[0] for x in v['RUNS'].split()] == names and v['PRELOAD'].split() == names and len(v['GPUS'].split(',')) == 4
    assert v['EVAL_FROM'] == 'f16' and v['HELP'] == '' and 'WEIGHTS' not in v   # nothing trained, so no weights to export
    trained = {n: json.loads((ROOT / 'results/runs' / n / 'run.json').read_text()) for n in names}
    pins = json.loads((ROOT / 'tools/gpu/plans/five-seed-pins.json').read_text())
    assert all(r['commit'].startswith(pins['train'][:7]) or pins['train'].startswith(r['commit']) for r in trained.values())
    if not _git('rev-parse', '--git-dir').returncode and not _git('cat-file', '-e', pins['eval']).returncode:   # a clone that has it
        for f in ('tools/gpu/check_weights.py', 'tools/gpu/ref_extras.py'): assert not _git('cat-file', '-e', f"{pins['eval']}:{f}").returncode
    assert all(r['epochs_done'] == 200 for r in trained.values())
    enc = json.loads((ROOT / 'results/weights-five-seed.json').read_text())['runs']
    assert all(enc[n].get('encoder_sha256') for n in names)   # what PRELOAD checks the staged encoders against
    assert '$(cat tools/gpu/plans/five-seed-eval.txt)' in spec['launch']
    for r in spec['runs']: assert r['eval'] == spec['defaults']['eval'] and r['eval']['reference'] == ['linf_8']


def test_snapshot_pins_are_the_records_commits():
    "The snapshot test's pins: train is the commit lease 1's record names (2-h1 resumes with it), eval the five-seed set's."
    pins = json.loads((ROOT / 'tools/gpu/plans/snapshot-pins.json').read_text())
    rec = json.loads((ROOT / 'results/runs/c10-paper-snap-s0/run.json').read_text())
    assert pins['train'] == rec['commit'].removesuffix('+dirty')
    assert pins['eval'] == json.loads((ROOT / 'tools/gpu/plans/five-seed-pins.json').read_text())['eval']
    lease2 = json.loads((ROOT / 'tools/gpu/plans/snapshot-lease2-h1.json').read_text())['launch']
    assert 'cd /root/swaro/evalcode' in lease2 and 'PRELOAD=c10-paper-snap-s0-e200' in lease2   # e200 at the eval pin
    for f in ('snapshot-e400-h1.json', 'snapshot-e-h1.json'):   # lease 3 (e400 alone; both): its AFTER is the lease plans'
        # extras shell (mixed_plan.extras_cmd), not a copy of it
        launch = json.loads((ROOT / 'tools/gpu/plans' / f).read_text())['launch']
        assert "AFTER='" + mp.extras_cmd(['c10-200-rand-s4'], 0, columns=('l1_12',)) + "' setsid" in launch, f


def test_five_seed_x2_evaluation_lease_ends_with_one_run_over_both_gpus():
    """E1 on nvidia-h200-x2: two runs evaluated one a GPU, then (AFTER) a third over both GPUs by a nested session whose
    records land with the lease's (S=$S/side); the planner prices the third on two GPUs and the whole inside the limit."""
    path = ROOT / 'tools/gpu/plans/five-seed-e1-x2.json'
    assert plan.main([str(path), '--gpus', '2', '--card', 'H200']) == 0
    spec = json.loads(path.read_text()); v = _launch_vars(spec['launch'])
    assert spec['launch'] in spec['note'] and len(spec['launch']) < 2000 and all(r['trained'] for r in spec['runs'])
    one = [r['name'] for r in spec['runs'] if r['eval']['eval_gpus'] == 1]
    both = [r['name'] for r in spec['runs'] if r['eval']['eval_gpus'] == 2]
    assert len(one) == 2 and len(both) == 1 and len(one) + len(both) == len(spec['runs'])
    assert [x.split(':')[0] for x in v['RUNS'].split()] == one and v['PRELOAD'].split() == one and v['GPUS'] == '0,1'
    assert v['HELP'] == '' and v['EVAL_FROM'] == 'f16' and 'WEIGHTS' not in v and int(v['DEADLINE']) <= 1560
    assert '$(cat tools/gpu/plans/five-seed-eval.txt)' in spec['launch']
    after = _launch_vars(v['AFTER'])
    assert after['S'] == '$S/side' and [x.split(':')[0] for x in after['RUNS'].split()] == both and after['PRELOAD'] == both[0]
    assert after['GPUS'] == '0' and after['HELP'] == '1' and after['PROCS'] == '1' and after['AFTER'] == '' and after['SIDE'] == ''
    assert 'LEFT' in after['DEADLINE'] and after['EVAL_FROM'] == 'f16' and after['WEIGHTS'] == ''   # inside the lease's end
    for r in spec['runs']:   # the set's one protocol; only where the attacks run differs
        assert {k: x for k, x in r['eval'].items() if k not in ('procs', 'eval_gpus')} == \
            {k: x for k, x in spec['defaults']['eval'].items() if k not in ('procs', 'eval_gpus')}
        assert r['eval']['procs'] == r['eval']['eval_gpus']   # one attack process a GPU (HELP=1, PROCS=1: --workers cuda:0,cuda:1)


def test_five_seed_evaluation_leases_after_m4():
    """E2 on nvidia-h200-x2: rocl-s2 and rand-s2 one a GPU, then AFTER the reference l1_12 alone on the heads just fitted (their
    records and heads in $S/eval/fp32) and on swaro-s2's committed head, one call a run, GPU 0 and GPU 1 side by side; the
    one-H200 evaluation lease runs rocl-s2 then rand-s2 to its deadline (the planner refuses it: the second is cut on purpose)."""
    path = ROOT / 'tools/gpu/plans/five-seed-e2-x2.json'
    assert plan.main([str(path), '--gpus', '2', '--card', 'H200', '--json', '/dev/null']) == 0
    spec = json.loads(path.read_text()); v = _launch_vars(spec['launch'])
    assert spec['launch'] in spec['note'] and len(spec['launch']) < 2000 and all(r['trained'] for r in spec['runs'])
    names = [r['name'] for r in spec['runs']]
    assert names == ['c10-200-rocl-s2', 'c10-200-rand-s2'] and [x.split(':')[0] for x in v['RUNS'].split()] == names
    assert v['PRELOAD'].split() == names + ['c10-200-swaro-s2'] and v['GPUS'] == '0,1' and v['HELP'] == '' and 'WEIGHTS' not in v
    assert v['EVAL_FROM'] == 'f16' and int(v['DEADLINE']) <= 1560 and '$(cat tools/gpu/plans/five-seed-eval.txt)' in spec['launch']
    assert all(r['eval'] == spec['defaults']['eval'] for r in spec['runs'])   # the set's one protocol, one GPU each
    after = re.search(r"AFTER='([^']*)'", spec['launch']).group(1)
    assert after.startswith('cd /root/swaro/code || exit 1;') and '--columns l1_12' in after and '--out $S/side/extras-l1_12' in after
    assert '(x 0 c10-200-rocl-s2 $E $E; x 0 c10-200-swaro-s2 /root/swaro/weights results/eval/five-seed) & x 1 c10-200-rand-s2 $E $E; wait' in after
    assert 'E=$S/eval/fp32' in after and 'CUDA_VISIBLE_DEVICES=$1 $PY tools/gpu/ref_extras.py $2 --runs $R --heads $3 --records $4' in after
    one = ROOT / 'tools/gpu/plans/five-seed-e-s2-h200x1.json'
    assert plan.main([str(one), '--gpus', '1', '--card', 'H200', '--json', '/dev/null']) == 1
    spec = json.loads(one.read_text()); v = _launch_vars(spec['launch'])
    assert spec['launch'] in spec['note'] and [r['name'] for r in spec['runs']] == ['c10-200-rocl-s2', 'c10-200-rand-s2']
    assert v['RUNS'] == 'c10-200-rocl-s2:none:2 c10-200-rand-s2:none:2' and v['GPUS'] == '0' and 'AFTER' not in v
    assert v['PRELOAD'].split() == ['c10-200-rocl-s2', 'c10-200-rand-s2'] and int(v['DEADLINE']) <= 1560
    s3 = json.loads((ROOT / 'tools/gpu/plans/five-seed-e-s3-h200x1.json').read_text())   # seed 3's, as lease p ran it
    w = _launch_vars(s3['launch'])
    assert s3['launch'] in s3['note'] and s3['defaults'] == spec['defaults'] and w['DEADLINE'] == '1630'
    assert w['RUNS'] == 'c10-200-rocl-s3:none:3 c10-200-swaro-s3:none:3' and w['PRELOAD'] == 'c10-200-rocl-s3 c10-200-swaro-s3'
    assert {k: x for k, x in w.items() if k not in ('RUNS', 'PRELOAD', 'DEADLINE')} == \
        {k: x for k, x in v.items() if k not in ('RUNS', 'PRELOAD', 'DEADLINE')}
    assert [(r['name'], r['method'], r['seed']) for r in s3['runs']] == [('c10-200-rocl-s3', 'rocl', 3), ('c10-200-swaro-s3', 'swaro', 3)]
    for f, runs in (('five-seed-e-s4a-h200x1.json', [('c10-200-rand-s3', 'swaro', 3), ('c10-200-swaro-s4', 'swaro', 4)]),
                    ('five-seed-e-s4b-h200x1.json', [('c10-200-rocl-s4', 'rocl', 4), ('c10-200-rand-s4', 'swaro', 4)])):
        s4 = json.loads((ROOT / 'tools/gpu/plans' / f).read_text()); u = _launch_vars(s4['launch'])   # the two evaluations left
        assert s4['launch'] in s4['note'] and s4['defaults'] == s3['defaults'] and u['DEADLINE'] == '1630', f
        assert u['RUNS'] == ' '.join(f'{n}:none:{k}' for n, _, k in runs) and u['PRELOAD'] == ' '.join(n for n, _, _ in runs), f
        assert {k: x for k, x in u.items() if k not in ('RUNS', 'PRELOAD')} == {k: x for k, x in w.items() if k not in ('RUNS', 'PRELOAD')}
        assert [(r['name'], r['method'], r['seed']) for r in s4['runs']] == runs and f'stage --from-hub {runs[0][0]} {runs[1][0]}' in s4['note']
        assert 's3-h200x1' not in s4['note'] and 'rocl-s3' not in s4['launch'] and 'swaro-s3' not in s4['launch'], f


def test_five_seed_x2_training_lease_measures_two_gpus_after():
    """T3 on nvidia-h200-x2: two trainings (weights exported, nothing evaluated) inside the limit; AFTER then times c10-paper
    under DDP on both GPUs and on one GPU with the newest code (its own pin), records packed under $S/side."""
    path = ROOT / 'tools/gpu/plans/five-seed-t3-x2.json'
    assert plan.main([str(path), '--gpus', '2', '--card', 'H200']) == 0
    spec = json.loads(path.read_text()); v = _launch_vars(spec['launch'])
    assert spec['launch'] in spec['note'] and len(spec['launch']) < 2000 and 'pinned-head' in spec['note']
    assert [x.split(':')[0] for x in v['RUNS'].split()] == [r['name'] for r in spec['runs']] and v['GPUS'] == '0,1'
    assert v['EVAL'] == 'none' and v['WEIGHTS'] == '1'
    for r in spec['runs']: assert r['s_per_epoch']['H200'] * 200 + 60 <= int(v['DEADLINE']) - int(v['EVAL_RESERVE']) - 30
    after = re.search(r"AFTER='([^']*)'", spec['launch']).group(1)   # as written (_launch_vars pads ; and &&)
    assert after.startswith('cd /root/swaro/headcode && ') and 'OUT=$S/side' in after
    ddp, one = after.split('; ')
    assert 'GPUS=2 PRESET=c10-paper' in ddp and 'LEFT' in ddp and 'GPUS=1 CUDA_VISIBLE_DEVICES=0 PRESET=c10-paper' in one
    assert '--attack-groups' not in after   # the preset's 2 groups: one of 256 a GPU on two GPUs


def test_five_seed_h100_training_lease_with_the_extras_beside():
    "T2 on H100s: three trainings with the training commit; GPU 3 runs the seed-0 extras with the evaluation commit's code."
    path = ROOT / 'tools/gpu/plans/five-seed-lease2-h100.json'
    assert plan.main([str(path), '--gpus', '4', '--card', 'H100', '--limit-min', '27']) == 0
    spec = json.loads(path.read_text()); v = _launch_vars(spec['launch'])
    train = [r for r in spec['runs'] if not r.get('trained')]
    assert [x.split(':')[0] for x in v['RUNS'].split()] == [r['name'] for r in train] and v['GPUS'] == '0,1,2'
    assert v['EVAL'] == 'none' and v['WEIGHTS'] == '1' and spec['launch'] in spec['note']
    side = _launch_vars(v['SIDE'])
    assert v['SIDE'].split()[:3] == ['cd', '/root/swaro/evalcode', '&&'] and side['SIDE_GPU'] == '3' and side['PYTHONPATH'].endswith('/root/swaro/evalcode')
    assert side['EXTRAS'].split() == [r['name'].removeprefix('extras-') for r in spec['runs'] if r.get('trained')]
    for r in train: assert r['s_per_epoch']['H100'] * 200 + 60 <= int(v['DEADLINE']) - int(v['EVAL_RESERVE']) - 30


def _git(*a):
    import subprocess
    return subprocess.run(['git', *a], cwd=ROOT, capture_output=True)

def test_pinned_copies_one_commit_its_data_and_the_reference(tmp_path):
    "pinned.sh: the commit's code exactly (git archive), its PINNED_COMMIT, results/ data, pyautoattack without its examples; receive.sh installs it."
    import os, subprocess, sys
    if _git('rev-parse', '--git-dir').returncode: pytest.skip('not a git checkout')
    if _git('cat-file', '-e', 'HEAD:tools/gpu/ref_extras.py').returncode: pytest.skip('HEAD predates the five-seed tools')
    pytest.importorskip('pyautoattack')
    head = _git('rev-parse', 'HEAD').stdout.decode().strip()
    dest = tmp_path / 'pinned'
    env = dict(os.environ, PIN_ANY_DEST='1', PIN_NO_DOWNLOAD='1', PIN_CACHE=str(tmp_path / 'cache'), PYTHON=sys.executable)
    r = subprocess.run(['bash', 'tools/gpu/pinned.sh', 'HEAD', str(dest)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (dest / 'PINNED_COMMIT').read_text().strip() == head and f'commit {head}' in (dest / 'PINNED').read_text()
    for f in ('swaro_nb/robustness.py', 'tools/gpu/repro_session.sh', 'setup.py'):
        assert (dest / f).read_bytes() == _git('show', f'HEAD:{f}').stdout   # the commit's version, not the working tree's
    assert not (dest / 'nbs').exists() and (dest / 'results' / 'weights-c10-200.json').is_file()
    assert (dest / '_site/pyautoattack/autoattack.py').is_file() and not list(dest.glob('_site/**/examples'))
    site, code = tmp_path / 'site', tmp_path / 'code'
    subprocess.run(['sh', str(dest / 'receive.sh')], env=dict(os.environ, PINNED_SITE=str(site), PINNED_TO=str(code)), check=True, capture_output=True)
    got = subprocess.run([sys.executable, '-c', 'import swaro_nb, pyautoattack; print(swaro_nb.__file__); print(pyautoattack.__file__)'], cwd=code,
                         env=dict(os.environ, PYTHONPATH=f'{site}:{code}'), capture_output=True, text=True, check=True).stdout.split()
    assert got[0].startswith(str(code)) and got[1].startswith(str(site))
    bad = subprocess.run(['bash', 'tools/gpu/pinned.sh', 'no-such-tag-xyz', str(dest)], cwd=ROOT, env=env, capture_output=True, text=True)
    assert bad.returncode == 2 and 'neither a tag nor a commit' in bad.stderr and len(bad.stderr.strip().splitlines()) == 1
    assert (dest / 'PINNED_COMMIT').is_file()   # a refused call leaves the pinned folder as it was


def test_pinned_check_names_what_changed_since_the_pin(tmp_path):
    """pinned.sh --check: 0 while the pinned folder's results/ data is the checkout's; 1, naming each file, when a run record was
    added or a checksum file changed after pinning (the pinned code would not find them); files only in the pin (a retired
    record) do not count; no pinned folder: 2."""
    import subprocess
    co, pin = tmp_path / 'co', tmp_path / 'co/.gpu/pinned-eval'
    files = {'results/weights-five-seed.json': '{"runs": {}}', 'results/runs/c10-200-a-s0/config.json': '{}',
             'results/runs/c10-200-a-s0/run.json': '{}', 'results/eval/five-seed/c10-200-a-s0-eval.json': '{"x": 1}'}
    for f, t in files.items():
        for d in (co, pin): (d / f).parent.mkdir(parents=True, exist_ok=True); (d / f).write_text(t)
    (pin / 'PINNED').write_text('ref v1\ncommit 0123abc\nmade now\ndata 4 files\npyautoattack from x\nto /root/swaro/evalcode\n')
    check = lambda: subprocess.run(['bash', str(ROOT / 'tools/gpu/pinned.sh'), '--check', '.gpu/pinned-eval'], cwd=co,
                                   capture_output=True, text=True)
    r = check(); assert r.returncode == 0 and 'commit 0123abc' in r.stdout, r.stderr
    (pin / 'results/runs/c10-200-old-s0').mkdir(); (pin / 'results/runs/c10-200-old-s0/run.json').write_text('{}')
    assert check().returncode == 0   # only in the pin: harmless
    (co / 'results/runs/c10-200-b-s2').mkdir(); (co / 'results/runs/c10-200-b-s2/metrics.jsonl').write_text('{}\n')
    (co / 'results/weights-five-seed.json').write_text('{"runs": {"c10-200-b-s2": {}}}')
    r = check(); assert r.returncode == 1 and 'c10-200-b-s2' in r.stderr and 'weights-five-seed.json' in r.stderr
    assert 'PIN_TO=/root/swaro/evalcode bash tools/gpu/pinned.sh 0123abc .gpu/pinned-eval' in r.stderr
    assert str(tmp_path) not in r.stderr   # the scratch copy's path is not shown
    r = subprocess.run(['bash', str(ROOT / 'tools/gpu/pinned.sh'), '--check', '.gpu/nothing'], cwd=co, capture_output=True, text=True)
    assert r.returncode == 2 and 'holds no pinned folder' in r.stderr

def _fake_pack(root, commit='abc1234'):
    "A repro_session.sh pack as a five-seed lease leaves it: one run evaluated, its weights in two pieces, one run cut, extras records."
    import hashlib, os
    from swaro_nb.core import pack_bits, pack_codes
    import torch
    p, w = root / 'pack', root / 'back'; w.mkdir(parents=True)
    blob = os.urandom(3000); (w / 'runA.weights.pt.0').write_bytes(blob[:2000]); (w / 'runA.weights.pt.1').write_bytes(blob[2000:])
    sha = hashlib.sha256(blob).hexdigest()
    (p / 'records' / 'runA').mkdir(parents=True)
    for f in ('config.json', 'run.json', 'metrics.jsonl'): (p / 'records' / 'runA' / f).write_text('{}')
    (p / 'logs').mkdir(); (p / 'logs' / 'train_runA.log').write_text('trained')
    (p / 'events.log').write_text(f"01:00:00 +90s runA: weights (float16) in 2 piece(s), sha256 {sha}, 3000 bytes\n01:20:00 +1300s all done\n")
    ev = p / 'eval' / 'fp32'; ev.mkdir(parents=True)
    bits = pack_bits(torch.tensor([True, False, True, True]))
    rec = dict(kind='eval', run='runA', commit=commit, card='NVIDIA H200', metrics=dict(clean=75.0, linf_8=50.0, ref_aa_linf_8=50.0),
               ref_check={'le': {'linf_8': dict(column=50.0, reference=50.0, reference_key='ref_aa_linf_8', gap=0.0, n=4)}},
               per_image=dict(encoding='packbits-little-base64', n=4, test_index=pack_codes(torch.arange(4), 'uint16'), correct={'le': {'clean': bits}}),
               seconds=dict(total=300.0), flags=[])
    (ev / 'runA-eval.json').write_text(json.dumps(rec)); (ev / 'runA-eval-heads.pt').write_bytes(b'heads')
    (ev / 'runB-eval.parts').mkdir(); (ev / 'runB-eval.parts' / 'le.json').write_text('{}')
    for col, ref in (('l2_05', 59.5), ('l1_12', 30.0)):   # each column in its own folder, as a lease with little time left runs them
        (p / 'side' / f'extras-{col}').mkdir(parents=True)
        (p / 'side' / f'extras-{col}' / 'runA-ref-extras.json').write_text(json.dumps(dict(kind='ref-extras', run='runA', commit=commit, ref_check={
            col: dict(column=60.0, reference=ref, gap=60.0 - ref, n=4)})))
    plan_f = root / 'plan.json'
    plan_f.write_text(json.dumps({'defaults': {'eval': {'eval_gpus': 1.333}}, 'runs': [{'name': 'runA'}, {'name': 'runC', 'eval': None}]}))
    return p, w, sha, rec, plan_f

def test_land_five_seed_copies_checks_and_stages(tmp_path):
    "land: records, evaluation and extras records, the cut run's pieces, logs, weights joined and checked, layout; stage: a folder to carry."
    import subprocess, sys, tarfile
    land = lambda *a, cwd=tmp_path / 'co': subprocess.run([sys.executable, str(ROOT / 'tools/gpu/land_five_seed.py'), *map(str, a)],
                                                          cwd=cwd, capture_output=True, text=True)
    co = tmp_path / 'co'; co.mkdir()
    p, w, sha, rec, plan_f = _fake_pack(tmp_path)
    with tarfile.open(tmp_path / 'pack.tar', 'w') as t: t.add(p, arcname='.')   # as poll.sh brings it back
    r = land('land', tmp_path / 'pack.tar', '--logs', '2026-11-28-a-h200x4', '--weights', w, '--plan', plan_f, '--commit', 'abc1234ffff')
    assert r.returncode == 0, r.stdout + r.stderr
    res = co / 'results'
    assert json.loads((res / 'eval/five-seed/runA-eval.json').read_text()) == rec
    assert (res / 'runs/runA/run.json').is_file()
    for col, ref in (('l2_05', 59.5), ('l1_12', 30.0)):   # named by their columns: neither overwrites the other
        assert json.loads((res / f'eval/five-seed/runA-ref-extras-{col}.json').read_text())['ref_check'][col]['reference'] == ref
    assert (res / 'eval/parts/runB-eval.parts/le.json').is_file() and 'runB: evaluation cut by its deadline' in r.stdout
    assert (res / 'logs/2026-11-28-a-h200x4/train_runA.log').is_file() and 'runA' in (res / 'logs/2026-11-28-a-h200x4/note.txt').read_text()
    man = json.loads((res / 'weights-five-seed.json').read_text())['runs']['runA']
    assert man['sha256'] == sha and man['bytes'] == 3000 and man['pieces'] == 2
    store = co / '.gpu/five-seed-weights/runA'
    assert (store / 'runA.pt').read_bytes() == (w / 'runA.weights.pt.0').read_bytes() + (w / 'runA.weights.pt.1').read_bytes()
    assert (store / 'runA-eval-heads.pt').read_bytes() == b'heads' and 'runA-eval-heads.pt' in r.stdout   # the heads: said where they are
    assert json.loads((res / 'eval/five-seed/layout.json').read_text())['runs'] == {'runA': {'eval_gpus': 1.333, 'plan': str(plan_f)}}
    r = land('stage', 'runA', '--to', '.gpu/five-seed-w1')
    assert r.returncode == 0 and sorted(f.name for f in (co / '.gpu/five-seed-w1').iterdir()) == ['receive.sh', 'runA-eval-heads.pt', 'runA.pt']
    for args, msg in [(('stage', 'runA', '--to', '.gpu/x', '--max-mb', '0.001'), 'more than --max-mb'),
                      (('stage', 'runZ', '--to', '.gpu/x'), 'land the lease that trained runZ'),
                      (('land', p, '--logs', 'x', '--commit', 'fff0000'), 'is not the pinned fff0000')]:
        r = land(*args)
        assert r.returncode == 2 and msg in r.stderr and len(r.stderr.strip().splitlines()) == 1, r.stderr
    (p / 'back2').mkdir(); (p / 'back2' / 'runA.weights.pt.0').write_bytes(b'x'); (p / 'back2' / 'runA.weights.pt.1').write_bytes(b'y')
    r = land('land', p, '--logs', 'y', '--weights', p / 'back2')
    assert r.returncode == 2 and 'joined pieces have sha256' in r.stderr   # a corrupt piece is caught
    rec3 = dict(rec, flags=['another evaluation']); (p / 'eval/fp32/runA-eval.json').write_text(json.dumps(rec3))
    r = land('land', p, '--logs', 'w')   # the same run evaluated again: refused unless --replace, nothing copied
    assert r.returncode == 2 and 'already holds another runA-eval.json' in r.stderr and not (res / 'logs/w').exists()
    assert land('land', p, '--logs', 'w', '--replace').returncode == 0 and json.loads((res / 'eval/five-seed/runA-eval.json').read_text()) == rec3
    rec2 = dict(rec); rec2.pop('per_image'); (p / 'eval/fp32/runA-eval.json').write_text(json.dumps(rec2))
    r = land('land', p, '--logs', 'z')
    assert r.returncode == 2 and 'no per_image data' in r.stderr


def test_land_puts_the_snapshot_tests_evaluations_apart(tmp_path):
    "An evaluation of a snapshot of the 2,000-epoch run (c10-paper-snap-*) lands in results/eval/snapshot/, not in the set's folder."
    import shutil, subprocess, sys
    co = tmp_path / 'co'; co.mkdir()
    p, w, sha, rec, plan_f = _fake_pack(tmp_path)
    ev = p / 'eval' / 'fp32'; snap = dict(rec, run='c10-paper-snap-s0-e200')
    (ev / 'c10-paper-snap-s0-e200-eval.json').write_text(json.dumps(snap)); shutil.rmtree(p / 'side')
    r = subprocess.run([sys.executable, str(ROOT / 'tools/gpu/land_five_seed.py'), 'land', str(p), '--logs', 'x', '--commit', 'abc1234'],
                       cwd=co, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert json.loads((co / 'results/eval/snapshot/c10-paper-snap-s0-e200-eval.json').read_text()) == snap
    assert not (co / 'results/eval/five-seed/c10-paper-snap-s0-e200-eval.json').exists()
    assert (co / 'results/eval/five-seed/runA-eval.json').is_file()   # the set's run beside it, where it was

def test_land_refuses_extras_of_another_commit_or_twice(tmp_path):
    "A ref_extras.py record of another commit than the pinned one, or two of one run and columns: land copies nothing."
    import subprocess, sys
    co = tmp_path / 'co'; co.mkdir()
    p, *_ = _fake_pack(tmp_path)
    land = lambda: subprocess.run([sys.executable, str(ROOT / 'tools/gpu/land_five_seed.py'), 'land', str(p), '--logs', 'x',
                                   '--commit', 'abc1234'], cwd=co, capture_output=True, text=True)
    f = p / 'side/extras-l1_12/runA-ref-extras.json'; good = f.read_text()
    f.write_text(good.replace('abc1234', 'fff0000'))
    r = land()
    assert r.returncode == 2 and 'commit fff0000 is not the pinned abc1234' in r.stderr and not (co / 'results').exists(), r.stderr
    f.write_text(good); (p / 'side/extras').mkdir(); (p / 'side/extras/runA-ref-extras.json').write_text(good)
    r = land()
    assert r.returncode == 2 and 'two ref_extras.py records of runA-ref-extras-l1_12.json' in r.stderr and not (co / 'results').exists()

def test_land_checks_both_pins(tmp_path):
    """--pins: a lease that trains with one commit and evaluates with another lands when its training records name the
    'train' pin and its evaluation, extras and pieces records the 'eval' pin; a record of the other pin, of none, of a
    '+dirty' tree or of a too short abbreviation copies nothing; a training folder without run.json is left out; a pins
    file without two commits, or --pins with --commit, refused. A training lease's pack (no evaluation record) exits 0."""
    import shutil, subprocess, sys
    co = tmp_path / 'co'; co.mkdir()
    p, *_ = _fake_pack(tmp_path, commit='eee1111')
    pins = tmp_path / 'pins.json'; pins.write_text(json.dumps(dict(train='ddd0000aaaa', eval='eee1111bbbb')))
    land = lambda *a, pf=pins: subprocess.run([sys.executable, str(ROOT / 'tools/gpu/land_five_seed.py'), 'land', str(p), '--logs', 'x',
                                              '--pins', str(pf), *a], cwd=co, capture_output=True, text=True)
    part = p / 'eval/fp32/runB-eval.parts/le.json'; part.write_text(json.dumps(dict(kind='eval-part', commit='eee1111bbbb')))
    run_json = p / 'records/runA/run.json'; run_json.write_text(json.dumps(dict(commit='ddd0000')))
    ev, ex = p / 'eval/fp32/runA-eval.json', p / 'side/extras-l1_12/runA-ref-extras.json'
    good = {f: f.read_text() for f in (run_json, ev, ex, part)}
    def refused(f, commit, msg):
        f.write_text(json.dumps({**json.loads(good[f]), 'commit': commit}) if commit is not None else
                     json.dumps({k: v for k, v in json.loads(good[f]).items() if k != 'commit'}))
        r = land(); f.write_text(good[f])
        assert r.returncode == 2 and msg in r.stderr and not (co / 'results').exists(), (f.name, commit, r.stderr)
    refused(run_json, 'eee1111', "commit eee1111 is not the pinned ddd0000aaaa (the training's code")   # the eval pin's code
    refused(run_json, None, 'commit none is not the pinned ddd0000aaaa')
    refused(run_json, 'ddd0000aaaa+dirty', 'commit ddd0000aaaa+dirty is not the pinned')   # uncommitted changes
    refused(run_json, 'ddd', 'commit ddd is not the pinned')   # too short to name a commit
    refused(ev, None, "commit none is not the pinned eee1111bbbb (the evaluation's code")
    refused(ex, None, "commit none is not the pinned eee1111bbbb (the extras run the evaluation's code")
    refused(ex, 'ddd0000', 'commit ddd0000 is not the pinned eee1111bbbb')   # extras run with the training's code
    refused(part, 'ddd0000aaaa', "is not the pinned eee1111bbbb (an evaluation's pieces")
    for bad in (dict(train='ddd0000aaaa', eval=''), dict(train=None, eval='eee1111bbbb'), dict(train='ddd0000aaaa')):
        (tmp_path / 'bad.json').write_text(json.dumps(bad)); r = land(pf=tmp_path / 'bad.json')
        assert r.returncode == 2 and 'bad.json' in r.stderr and not (co / 'results').exists(), r.stderr
    r = land('--commit', 'eee1111')
    assert r.returncode == 2 and '--commit or --pins, not both' in r.stderr
    (p / 'records/runT').mkdir(); (p / 'records/runT/metrics.jsonl').write_text('{}')   # a training stopped before run.json
    r = land()
    assert r.returncode == 0, r.stderr
    assert json.loads((co / 'results/runs/runA/run.json').read_text()) == {'commit': 'ddd0000'}
    assert not (co / 'results/runs/runT').exists() and 'runT: no run.json' in r.stdout
    assert (co / 'results/eval/five-seed/runA-eval.json').is_file() and (co / 'results/eval/five-seed/runA-ref-extras-l1_12.json').is_file()
    assert (co / 'results/eval/parts/runB-eval.parts/le.json').is_file()
    for f in [ev, ex, *p.glob('side/extras*/*.json')]: f.unlink(missing_ok=True)   # a training lease's pack (and a cut evaluation)
    r = land()
    assert r.returncode == 0 and 'no evaluation record in the pack' in r.stdout, r.stdout + r.stderr
    run_json.unlink()
    r = land()   # the pieces alone still land: not 'no record'
    assert r.returncode == 0 and 'no record in the pack' not in r.stderr, r.stderr
    shutil.rmtree(p / 'eval/fp32/runB-eval.parts')
    r = land()
    assert r.returncode == 1 and 'no record in the pack' in r.stderr

def test_aff_state_lands_and_stages_back(tmp_path):
    """An AFF lease: its record lands in results/eval/aff/ (beside the run's LE/rLE record), its network and the state its
    deadline stopped the fine-tuning at (pieces, sha256 in the events log) are joined into .gpu/aff/; `stage --aff` cuts the
    state into folders of --max-mb whose receive.sh scripts join it on the device only once every piece has come."""
    import hashlib, os, subprocess, sys
    land = lambda *a: subprocess.run([sys.executable, str(ROOT / 'tools/gpu/land_five_seed.py'), *map(str, a)], cwd=tmp_path / 'co',
                                     capture_output=True, text=True)
    (tmp_path / 'co').mkdir()
    p, w, _, rec, _ = _fake_pack(tmp_path)
    for f in ('runA-eval.json', 'runA-eval-heads.pt'): (p / 'eval/fp32' / f).unlink()
    aff_rec = dict(rec, eval_config=dict(aff=True, le=False, rle=False)); (p / 'eval/fp32/runA-eval.json').write_text(json.dumps(aff_rec))
    state, net = os.urandom(3000), os.urandom(700)
    (w / 'runA-aff-partial.weights.pt.0').write_bytes(state[:2000]); (w / 'runA-aff-partial.weights.pt.1').write_bytes(state[2000:])
    (w / 'runA-aff.weights.pt.0').write_bytes(net)
    sha = lambda b: hashlib.sha256(b).hexdigest()
    with open(p / 'events.log', 'a') as f:
        f.write(f"01:21:00 +1310s runA-aff-partial: AFF state (float32) in 2 piece(s), sha256 {sha(state)}, 3000 bytes\n"
                f"01:21:01 +1311s runA-aff: AFF network (float16) in 1 piece(s), sha256 {sha(net)}, 700 bytes\n")
    r = land('land', p, '--logs', 'aff', '--weights', w)
    assert r.returncode == 0, r.stdout + r.stderr
    co, land_out = tmp_path / 'co', r.stdout
    assert json.loads((co / 'results/eval/aff/runA-eval.json').read_text()) == aff_rec and not (co / 'results/eval/five-seed/runA-eval.json').exists()
    assert (co / '.gpu/aff/runA-aff-partial.pt').read_bytes() == state and (co / '.gpu/aff/runA-aff.pt').read_bytes() == net
    assert 'stage it with `stage --aff`' in r.stdout
    r = land('stage', 'runA', '--aff', '--to', '.gpu/affin', '--max-mb', 1200 / 2 ** 20)   # 1,200 bytes a folder: three folders
    assert r.returncode == 0, r.stderr
    dev = tmp_path / 'device'
    for k in (1, 2, 3):
        assert not (dev / 'runA-aff-partial.pt').exists()   # joined only once every piece has come
        subprocess.run(['sh', str(co / f'.gpu/affin-{k}/receive.sh')], env=dict(os.environ, AFF_DIR=str(dev)), check=True, capture_output=True)
    assert (dev / 'runA-aff-partial.pt').read_bytes() == state
    # once the fine-tuning ended (its float32 network landed as runA-aff-head.pt), that is what goes back; a bad piece is said
    (co / '.gpu/aff/runA-aff-head.pt').write_bytes(net)
    assert land('stage', 'runA', '--aff', '--to', '.gpu/affh').returncode == 0
    assert [f.name for f in (co / '.gpu/affh-1').iterdir() if f.name != 'receive.sh'] == ['runA-aff-head.pt.0']
    (co / '.gpu/affh-1/runA-aff-head.pt.0').write_bytes(b'corrupt')
    r = subprocess.run(['sh', str(co / '.gpu/affh-1/receive.sh')], env=dict(os.environ, AFF_DIR=str(dev)), capture_output=True, text=True)
    assert r.returncode == 1 and 'do not add up' in r.stderr and not (dev / 'runA-aff-head.pt').exists()
    r = land('stage', 'runZ', '--aff', '--to', '.gpu/affz')
    assert r.returncode == 2 and 'land the lease whose deadline stopped runZ' in r.stderr
    assert 'pack_weights.py --state .gpu/aff/runA-aff-partial.pt --name runA-aff-partial.state' in land_out


def test_aff_state_kept_in_weights_stages_back(tmp_path):
    """A later session has no .gpu/aff/: `stage --aff` then joins the state kept in weights/ (pack_weights.py --state ...
    --name RUN-aff-partial.state), every piece checked, and its folders carry the very bytes."""
    import os, subprocess, sys, torch
    co = tmp_path / 'co'; (co / 'weights').mkdir(parents=True)
    st = tmp_path / 'runB-aff-partial.pt'
    torch.save(dict(kind='eval_partial', key='aff', epoch=3, model={'w': torch.randn(300, 100)}, losses=[1.0, 0.9, 0.8]), st)
    tool = lambda *a: subprocess.run([sys.executable, *map(str, a)], cwd=co, capture_output=True, text=True)
    r = tool(ROOT / 'tools/pack_weights.py', '--state', st, '--name', 'runB-aff-partial.state', '--dest', co / 'weights')
    assert r.returncode == 0 and 'eval_partial, epoch 3' in r.stdout, r.stderr
    r = tool(ROOT / 'tools/gpu/land_five_seed.py', 'stage', 'runB', '--aff', '--to', '.gpu/affb', '--max-mb', 0.1)
    assert r.returncode == 0, r.stderr
    dev = tmp_path / 'device'
    for d in sorted((co / '.gpu').glob('affb-*')):
        subprocess.run(['sh', str(d / 'receive.sh')], env=dict(os.environ, AFF_DIR=str(dev)), check=True, capture_output=True)
    assert len(list((co / '.gpu').glob('affb-*'))) > 1 and (dev / 'runB-aff-partial.pt').read_bytes() == st.read_bytes()


def test_training_state_kept_in_weights_stages_back_and_resumes(tmp_path):
    """A training cut by its lease's time limit continues in a later one: its checkpoint, kept in weights/
    (pack_weights.py --state), comes out of `stage --state` as carry-sized folders whose receive.sh scripts join the very
    bytes into $RUNS_DIR/<run>/checkpoint.pt only once every piece has come, and the training resumes there at its epoch."""
    import os, shutil, subprocess, sys
    from scratch_clone import tiny_train
    co = tmp_path / 'co'; (co / 'weights').mkdir(parents=True)
    tiny_train(tmp_path / 'runs', 'runK', stop=2)
    ck = tmp_path / 'runs/runK/checkpoint.pt'
    tool = lambda *a: subprocess.run([sys.executable, *map(str, a)], cwd=co, capture_output=True, text=True)
    r = tool(ROOT / 'tools/pack_weights.py', '--state', ck, '--dest', co / 'weights')
    assert r.returncode == 0 and 'epoch 2 of 3' in r.stdout, r.stderr
    recs = co / 'results/runs/runK'; recs.mkdir(parents=True)   # the cut lease's records, landed
    for n in ('config.json', 'metrics.jsonl', 'run.json'): shutil.copy(ck.parent / n, recs / n)
    mb = ck.stat().st_size / 3 / 2 ** 20   # three folders
    r = tool(ROOT / 'tools/gpu/land_five_seed.py', 'stage', 'runK', '--state', '--to', '.gpu/ck', '--max-mb', mb * 1.01)
    assert r.returncode == 0, r.stderr
    folders = sorted((co / '.gpu').glob('ck-*')); assert len(folders) == 3
    dev = tmp_path / 'device'; got = dev / 'runK/checkpoint.pt'
    for d in folders:
        assert not got.exists()   # joined only once every piece has come
        subprocess.run(['sh', str(d / 'receive.sh')], env=dict(os.environ, RUNS_DIR=str(dev)), check=True, capture_output=True)
    assert got.read_bytes() == ck.read_bytes()
    assert sorted(p.name for p in got.parent.iterdir()) == ['checkpoint.pt', 'config.json', 'metrics.jsonl']
    t = tiny_train(dev, 'runK')   # the next lease's training
    assert t.epoch == 3 and len(t.history) == 3   # epochs 1-2 from the kept state, epoch 3 here
    assert [json.loads(l)['epoch'] for l in (dev / 'runK/metrics.jsonl').read_text().splitlines()] == [1, 2, 3]
    with open(recs / 'metrics.jsonl', 'a') as f: f.write(json.dumps(t.history[-1]) + '\n')   # records past the state's epoch
    r = tool(ROOT / 'tools/gpu/land_five_seed.py', 'stage', 'runK', '--state', '--to', '.gpu/ck')
    assert r.returncode == 2 and 'holds 3 epochs, runK.state is at epoch 2' in r.stderr, r.stderr
    r = tool(ROOT / 'tools/gpu/land_five_seed.py', 'stage', 'runZ', '--state', '--to', '.gpu/ckz')
    assert r.returncode == 2 and "runZ.state" in r.stderr, r.stderr


def test_poll_brings_weights_pieces_within_its_byte_budget(tmp_path):
    """poll.sh on a finished job: the pack and event log, then the weights pieces no earlier call copied, in order, while they
    fit WMAX_MB (a call brings 64 MiB at most); WAGAIN=1 sends them all again, WFROM=k from the k-th by hand."""
    import os, subprocess
    S = tmp_path / 's'; (S / 'weights').mkdir(parents=True)
    (S / 'DONE').touch(); (S / 'events.log').write_text('all done\n'); (S / 'pack.tar').write_bytes(b'p' * 100_000)
    sizes = {'a.weights.pt.0': 15, 'a.weights.pt.1': 9, 'b.weights.pt.0': 15, 'b.weights.pt.1': 9}   # MiB, as two float16 encoders
    for n, mb in sizes.items(): (S / 'weights' / n).write_bytes(b'w' * (mb << 20))
    def poll(out, **env):
        r = subprocess.run(['bash', str(ROOT / 'tools/gpu/poll.sh')], env=dict(os.environ, S=str(S), RUNS=str(tmp_path / 'runs'), OUT=str(out),
                           WAIT='1', LOG=str(tmp_path / 'none.log'), **env), capture_output=True, text=True, timeout=60)
        return r.stdout, sorted(f.name for f in out.iterdir())
    out, got = poll(tmp_path / 'o1', WMAX_MB='30')
    assert got == ['a.weights.pt.0', 'a.weights.pt.1', 'events.log', 'pack.tar'] and '2 left: call again' in out and out.strip().endswith('DONE')
    out, got = poll(tmp_path / 'o2', WMAX_MB='30')
    assert got == ['b.weights.pt.0', 'b.weights.pt.1', 'events.log', 'pack.tar'] and 'left' not in out
    for n, mb in (('c.weights.pt.0', 15), ('c.weights.pt.1', 9)): (S / 'weights' / n).write_bytes(b'w' * (mb << 20))
    out, got = poll(tmp_path / 'o3')   # a piece that appeared since: only it, not those already sent
    assert [g for g in got if 'weights' in g] == ['c.weights.pt.0', 'c.weights.pt.1'] and 'left' not in out
    out, got = poll(tmp_path / 'o4', WAGAIN='1')   # the default 60 MiB: two runs of the three (72 MiB) again
    assert [g for g in got if 'weights' in g] == ['a.weights.pt.0', 'a.weights.pt.1', 'b.weights.pt.0', 'b.weights.pt.1'] and '2 left' in out
    out, got = poll(tmp_path / 'o5', WFROM='4')
    assert [g for g in got if 'weights' in g] == ['c.weights.pt.0', 'c.weights.pt.1']
    out, got = poll(tmp_path / 'o6', WMAX_MB='10', WAGAIN='1')
    assert 'does not fit WMAX_MB 10' in out and not any('weights' in g for g in got)

def test_poll_brings_what_is_finished_before_done(tmp_path):
    "poll.sh before DONE: partial.tar holds the finished records, heads and pieces (no weights), and land takes it like a pack."
    import os, shutil, subprocess, sys, tarfile
    p, w, sha, rec, plan_f = _fake_pack(tmp_path)
    (p / 'weights').mkdir(); (p / 'weights' / 'runZ.weights.pt.0').write_bytes(b'w' * 100)   # never in the partial tar
    (p / 'f16' / 'runA').mkdir(parents=True); (p / 'f16' / 'runA' / 'weights.pt').write_bytes(b'w')
    (p / 'side' / 'runs' / 'runB').mkdir(parents=True); (p / 'side' / 'runs' / 'runB' / 'weights.pt').write_bytes(b'w')
    shutil.rmtree(p / 'records'); runs = tmp_path / 'runs'   # before DONE the pack's records/ is not made yet: poll.sh makes it
    ev_log = (p / 'events.log').read_text(); (p / 'events.log').write_text(ev_log.replace('01:20:00 +1300s all done\n', ''))
    (runs / 'runA').mkdir(parents=True); (runs / 'runT').mkdir()   # runT still trains: no run.json yet
    for f in ('config.json', 'run.json', 'metrics.jsonl'): (runs / 'runA' / f).write_text('{"x": 1}')
    (runs / 'runA' / 'checkpoint.pt').write_bytes(b'c'); (runs / 'runT' / 'config.json').write_text('{}')
    out = tmp_path / 'out'
    env = dict(os.environ, S=str(p), RUNS=str(runs), OUT=str(out), WAIT='0', LOG=str(tmp_path / 'log'))
    r = subprocess.run(['bash', str(ROOT / 'tools/gpu/poll.sh')], env=env, capture_output=True, text=True)
    assert r.returncode == 0 and 'not done yet' in r.stdout and 'partial: 1 record(s) so far' in r.stdout, r.stdout + r.stderr
    with tarfile.open(out / 'partial.tar') as t: names, files = t.getnames(), [m.name for m in t.getmembers() if m.isfile()]
    assert 'eval/fp32/runA-eval.json' in names and 'eval/fp32/runA-eval-heads.pt' in names and 'eval/fp32/runB-eval.parts/le.json' in names
    assert not [n for n in names if n.startswith(('weights', 'f16', 'side/runs')) or n.endswith(('weights.pt', 'checkpoint.pt'))]
    assert sorted(n for n in files if n.startswith('records/')) == [
        'records/runA/config.json', 'records/runA/metrics.jsonl', 'records/runA/run.json']
    co = tmp_path / 'co'; co.mkdir()
    r = subprocess.run([sys.executable, str(ROOT / 'tools/gpu/land_five_seed.py'), 'land', str(out / 'partial.tar'), '--logs', 'part',
                        '--commit', 'abc1234'], cwd=co, capture_output=True, text=True)
    assert r.returncode == 0, r.stdout + r.stderr
    assert json.loads((co / 'results/eval/five-seed/runA-eval.json').read_text()) == rec
    assert (co / 'results/eval/parts/runB-eval.parts/le.json').is_file()
    assert (co / 'results/eval/five-seed/runA-ref-extras-l1_12.json').is_file()   # the extras finished so far come too
    assert json.loads((co / 'results/runs/runA/run.json').read_text()) == {'x': 1}
    assert not [f for f in os.listdir(out) if '.weights.pt.' in f]   # runZ's export is not announced in the events log
    (p / 'weights' / 'runB.weights.pt.0').write_bytes(b'v' * 10)   # a run still being cut: its line is not in the log yet
    shutil.copy(w / 'runA.weights.pt.0', p / 'weights'); shutil.copy(w / 'runA.weights.pt.1', p / 'weights')
    r = subprocess.run(['bash', str(ROOT / 'tools/gpu/poll.sh')], env=dict(env, OUT=str(tmp_path / 'out1')), capture_output=True, text=True)
    assert sorted(f for f in os.listdir(tmp_path / 'out1') if '.weights.pt.' in f) == ['runA.weights.pt.0', 'runA.weights.pt.1'], r.stdout
    (runs / 'runA' / 'run.json').write_text('{"x": 2}'); (p / 'events.log').write_text(ev_log)   # the job packs now: hands off
    subprocess.run(['bash', str(ROOT / 'tools/gpu/poll.sh')], env=dict(env, OUT=str(tmp_path / 'out1b')), capture_output=True, text=True)
    assert json.loads((p / 'records/runA/run.json').read_text()) == {'x': 1}
    (p / 'DONE').touch(); (p / 'pack.tar').write_bytes(b'pack')   # once DONE: the pack, and no partial tar
    r = subprocess.run(['bash', str(ROOT / 'tools/gpu/poll.sh')], env=dict(env, OUT=str(tmp_path / 'out2')), capture_output=True, text=True)
    assert 'DONE' in r.stdout and (tmp_path / 'out2' / 'pack.tar').is_file() and not (tmp_path / 'out2' / 'partial.tar').exists()

def test_resumed_pieces_are_not_priced_again(tmp_path, capsys):
    """An evaluation resuming an earlier lease's pieces: heads fitted there cost nothing, a head attacked there is not attacked
    again; only this evaluation's heads, only pieces of this card, never for AFF."""
    evs = [evrec(le_epochs=100, le_s=10.0)]; evs[0]['_file'] = 'x-eval.json'
    m = plan.EvalModel(evs, 'H100', sets=(plan._builtin_sets(), 'built-in'))
    whole = m.predict(dict(le_epochs=150, rle_epochs=5, n_test=1000), 7.0)
    att = [k for k in whole if k.startswith('attacks_')]
    assert whole['kinds'] == ['le', 'rle'] and plan.resume_credit(whole, tmp_path / 'none', 'H100') == (whole, [])
    f = tmp_path / 'a-eval.parts'; f.mkdir()
    (f / 'le-head.pt').write_bytes(b'h')
    e, done = plan.resume_credit(whole, f, 'H100')   # heads alone: no record names their card, so no credit
    assert e == whole and done == ["nothing credited: pieces of no named card, not 'H100'"]
    (f / 'le.json').write_text(json.dumps(dict(card=H100)))
    assert plan.resume_credit(whole, f, 'H200')[0] == whole   # the card is part of a piece's fingerprint
    e, done = plan.resume_credit(whole, f, 'H100')
    assert done == ['le head fitted', 'le attacked'] and e['le'] == 0
    for k in att: assert e[k] == pytest.approx(whole[k] / 2)   # one of the two heads left to attack
    (f / 'rle-head.pt').write_bytes(b'h')
    e, done = plan.resume_credit(whole, f, 'H100')
    assert done == ['le head fitted', 'rle head fitted', 'le attacked'] and e['rle'] == 0
    assert e['total'] == pytest.approx(7.0 + sum(whole[k] for k in att) / 2)
    rle_only = m.predict(dict(le=False, rle_epochs=5, n_test=1000), 7.0)   # le.json is not this evaluation's piece
    e, done = plan.resume_credit(rle_only, f, 'H100')
    assert done == ['rle head fitted'] and e['total'] == pytest.approx(rle_only['total'] - rle_only['rle'])
    aff = m.predict(dict(le=False, rle_epochs=0, aff=True, aff_epochs=10, n_test=1000), 7.0)
    (f / 'aff.json').write_text(json.dumps(dict(card=H100)))
    assert plan.resume_credit(aff, f, 'H100') == (aff, [])   # an AFF evaluation takes no pieces from results/eval/parts
    (f / 'aff.json').unlink(); (f / 'rle.json').write_text(json.dumps(dict(card=H100)))
    assert plan.resume_credit(whole, f, 'H100')[0]['total'] == pytest.approx(7.0)   # only the start-up: every piece is there
    runs = [dict(name='a', method='swaro', epochs=200, trained=True, eval=dict(le_epochs=150, rle_epochs=5, n_test=1000))]
    (f / 'rle.json').unlink()
    rc, out, _, js = run_plan(tmp_path, capsys, runs, [], evs, '--parts', tmp_path)
    assert rc == 0 and 'resumes' in out and js['runs'][0]['eval_s']['total'] == pytest.approx(sum(whole[k] for k in att) / 2)
    rc, out, _, js = run_plan(tmp_path, capsys, runs, [], evs, '--parts', '')   # '' prices it whole
    assert js['runs'][0]['eval_s']['total'] == pytest.approx(whole['total'] - 7.0) and 'resumes' not in out

def test_five_seed_mixed_x2_trains_one_and_runs_the_extras_beside(capsys):
    "The x2 lease: GPU 0 trains a T2 run with the train pin; the side job on GPU 1 (the eval pin) runs the seed-0 extras, a column a call."
    path = ROOT / 'tools/gpu/plans/five-seed-mixed-x2.json'
    assert plan.main([str(path), '--gpus', '2', '--card', 'H200', '--json', '/dev/null']) == 0
    spec = json.loads(path.read_text()); v = _launch_vars(spec['launch']); side = _launch_vars(v['SIDE'])
    assert spec['launch'] in spec['note'] and len(spec['launch']) < 2000 and v['EVAL'] == 'none' and v['WEIGHTS'] == '1' and v['GPUS'] == '0'
    train = [r for r in spec['runs'] if not r.get('trained')]
    runs = [x.split(':') for x in v['RUNS'].split()]
    assert [(n, p, int(s)) for n, p, s, *_ in runs] == [(r['name'], r['preset'], r['seed']) for r in train]
    assert v['SIDE'].split()[:5] == ['cd', '/root/swaro/evalcode', '||', 'exit', '1'] and side['SIDE_GPU'] == '1' and side['PYTHONPATH'].endswith('/root/swaro/evalcode')
    assert 'five-seed-side.sh' not in v['SIDE'] and 'RESUME' not in side   # nothing left to evaluate: the extras alone
    for n in ('c10-200-swaro-s0', 'c10-200-rocl-s0', 'c10-200-rand-s0'): assert f' {n}' in v['SIDE'].split('; do')[0]
    assert 'timeout $(( 1420 - $(date +%s) + t0 ))' in v['SIDE'] and '--out $S/side/extras-$c --columns $c' in v['SIDE']
    for r in train: assert r['s_per_epoch']['H200'] * 200 + 60 <= int(v['DEADLINE']) - int(v['EVAL_RESERVE']) - 30
    assert int(v['DEADLINE']) <= 1560


def test_mixed_plan_writes_the_committed_plans_and_the_next_leases(tmp_path, capsys):
    """tools/gpu/mixed_plan.py: the arguments of the committed x2 and one-H200 plans give those files; M2 evaluates one run and
    fits; bad names, and an evaluation on one GPU, refused."""
    seed0 = ['c10-200-rocl-s0', 'c10-200-rand-s0', 'c10-200-swaro-s0']   # lease g's order: RoCL's and random's l1_12 first
    assert mp.mixed_plan('c10-200-rocl-s1', [], seed0) == json.loads((ROOT / 'tools/gpu/plans/five-seed-mixed-x2.json').read_text())
    m2 = mp.mixed_plan('c10-200-rand-s1', ['c10-200-rocl-s1'], ['c10-200-swaro-s0', 'c10-200-swaro-s1'])
    assert m2 == json.loads((ROOT / 'tools/gpu/plans/five-seed-m2-x2.json').read_text())
    m3 = mp.mixed_plan('c10-200-rand-s2', ['c10-200-rand-s1'], ['c10-200-rocl-s1', 'c10-200-swaro-s1'])
    assert m3 == json.loads((ROOT / 'tools/gpu/plans/five-seed-m3-x2.json').read_text())
    one = mp.mixed_plan('c10-200-rocl-s1', [], ['c10-200-rocl-s0', 'c10-200-swaro-s0'], gpus=1)
    assert one == json.loads((ROOT / 'tools/gpu/plans/five-seed-t-rocl-s1-h200.json').read_text())
    v = _launch_vars(one['launch'])
    assert 'SIDE' not in v and v['GPUS'] == '0' and v['EVAL'] == 'none' and v['WEIGHTS'] == '1' and int(v['DEADLINE']) <= 1480
    assert v['AFTER'].split()[:5] == ['cd', '/root/swaro/evalcode', '||', 'exit', '1'] and 'SWARO_COMMIT=$(cat PINNED_COMMIT)' in v['AFTER']
    assert 'CUDA_VISIBLE_DEVICES=0 $P tools/gpu/ref_extras.py' in v['AFTER'] and 'timeout' not in v['AFTER']   # AFTER's own bound
    assert '[ -f results/eval/five-seed/$n-ref-extras-$c.json ] && continue' in one['launch']   # a column landed: not again
    assert plan.main([str(ROOT / 'tools/gpu/plans/five-seed-t-rocl-s1-h200.json'), '--gpus', '1', '--card', 'H200', '--json', '/dev/null']) == 0
    for train, ev, ex, g, f in (('c10-200-swaro-s2', [], ['c10-200-rand-s1'], 1, 'five-seed-t-swaro-s2-h200.json'),   # lease m
                                ('c10-200-rocl-s2', ['c10-200-swaro-s2'], [], 2, 'five-seed-m4-x2.json'),
                                ('c10-200-rocl-s2', [], [], 1, 'five-seed-t-rocl-s2-h200.json'),
                                ('c10-200-swaro-s3', [], ['c10-200-rocl-s2'], 1, 'five-seed-t-swaro-s3-h200.json')):   # lease q
        assert mp.mixed_plan(train, ev, ex, gpus=g) == json.loads((ROOT / 'tools/gpu/plans' / f).read_text()), f
    r = mp.mixed_plan('c10-200-rocl-s3', [], ['c10-200-swaro-s2'], gpus=1, deadline=1600, columns=['l1_12'])   # lease r
    assert r == json.loads((ROOT / 'tools/gpu/plans/five-seed-t-rocl-s3-h200.json').read_text())
    v = _launch_vars(r['launch'])
    assert v['DEADLINE'] == '1600' and 'for c in l1_12; do' in r['launch'] and 'l2_05' not in r['launch']
    assert v['RUNS'] == 'c10-200-rocl-s3:c10-200-rocl:3:--rocl-term-forward,shared' and 'DEADLINE 1600 cuts' in r['note']
    nxt = mp.mixed_plan('c10-200-rand-s3', [], ['c10-200-rand-s2'], gpus=1, deadline=1600, columns=['l1_12'])   # the next
    assert nxt == json.loads((ROOT / 'tools/gpu/plans/five-seed-t-rand-s3-h200.json').read_text())
    v = _launch_vars(nxt['launch'])
    assert v['RUNS'] == 'c10-200-rand-s3:c10-200:3:--swaro-targets,random' and 'for n in c10-200-rand-s2; do' in nxt['launch']
    assert v['DEADLINE'] == '1600' and 'l2_05' not in nxt['launch']
    assert plan.main([str(ROOT / 'tools/gpu/plans/five-seed-t-rand-s3-h200.json'), '--gpus', '1', '--card', 'H200',
                      '--json', '/dev/null']) == 0
    for train, ex, f in (('c10-200-swaro-s4', 'c10-200-rocl-s3', 'five-seed-t-swaro-s4-h200.json'),   # the seed-4 trainings
                         ('c10-200-rocl-s4', 'c10-200-swaro-s3', 'five-seed-t-rocl-s4-h200.json')):
        t4 = mp.mixed_plan(train, [], [ex], gpus=1, deadline=1600, columns=['l1_12'])
        assert t4 == json.loads((ROOT / 'tools/gpu/plans' / f).read_text()), f
        assert plan.main([str(ROOT / 'tools/gpu/plans' / f), '--gpus', '1', '--card', 'H200', '--json', '/dev/null']) == 0
    t9 = mp.mixed_plan('c10-200-rand-s4', [], ['c10-200-rand-s3'], gpus=1, deadline=1600, columns=['l1_12'])   # T9'
    assert t9 == json.loads((ROOT / 'tools/gpu/plans/five-seed-t-rand-s4-h200.json').read_text())
    k = mp.mixed_plan('c10-200-k10-s0', [], [], gpus=1, deadline=1600)   # Table 8 (plans/k.md) on one GPU
    v = _launch_vars(k['launch'])
    assert v['RUNS'] == 'c10-200-k10-s0:c10-200:0:--n-clusters,10' and 'AFTER' not in v and k['note'].startswith('Table 8')
    k = mp.mixed_plan('c10-200-k10-s0', [], ['c10-200-rand-s4'], gpus=1, deadline=1600, columns=['l1_12'])   # its plan:
    assert k == json.loads((ROOT / 'tools/gpu/plans/k-t-k10-s0-h200.json').read_text())   # + rand-s4's reference l1_12
    v = _launch_vars(k['launch'])
    assert v['RUNS'] == 'c10-200-k10-s0:c10-200:0:--n-clusters,10' and 'for n in c10-200-rand-s4; do' in k['launch']
    assert plan.main([str(ROOT / 'tools/gpu/plans/k-t-k10-s0-h200.json'), '--gpus', '1', '--card', 'H200',
                      '--json', '/dev/null']) == 0
    assert mp.parse_run('c10-200-k5000-s1')['train_flags'] == '--n-clusters 5000' and mp.parse_run('c10-200-k5000-s1')['seed'] == 1
    for bad in ('c10-200-k1000-s0', 'c10-200-k1-s0'):   # the set's own SwARo; no clusters to permute
        with pytest.raises(ValueError, match='K must be'): mp.parse_run(bad)
    for bad in (dict(deadline=1750), dict(deadline=500), dict(columns=['linf_8'])):   # past the lease; too short; not an extra
        with pytest.raises(ValueError): mp.mixed_plan('c10-200-rocl-s3', [], ['c10-200-swaro-s2'], gpus=1, **bad)
    with pytest.raises(ValueError, match='--gpus 1 only'): mp.mixed_plan('c10-200-rocl-s3', [], [], deadline=1600)
    x2 = mp.mixed_plan('c10-200-rand-s3', [], ['c10-200-rand-s2'], columns=['l1_12'])['launch']   # the x2 side job's extras too
    assert 'for c in l1_12; do' in x2 and 'l2_05' not in x2
    out = tmp_path / 'm2.json'
    assert mp.main(['--train', 'c10-200-rand-s1', '--evaluate', 'c10-200-rocl-s1', '--out', str(out)]) == 0
    spec = json.loads(out.read_text()); v = _launch_vars(spec['launch']); side = _launch_vars(v['SIDE'])
    assert v['RUNS'] == 'c10-200-rand-s1:c10-200:1:--swaro-targets,random' and 'RESUME' not in side and side['EVALUATE'] == 'c10-200-rocl-s1'
    assert "SWARO_COMMIT=$(cat PINNED_COMMIT)" in v['SIDE'] and 'ref_extras.py' not in v['SIDE']   # evaluated by the side job's shell
    assert [r['name'] for r in spec['runs']] == ['c10-200-rand-s1', 'c10-200-rocl-s1'] and spec['runs'][1]['trained']
    capsys.readouterr()
    assert mp.main(['--train', 'c10-200-x-s1', '--evaluate', 'c10-200-rocl-s1', '--out', str(out)]) == 2
    assert 'not a run of the five-seed set' in capsys.readouterr().err
    assert mp.main(['--train', 'c10-200-rocl-s1', '--evaluate', 'c10-200-rocl-s1', '--out', str(out)]) == 2
    assert mp.main(['--gpus', '1', '--train', 'c10-200-rand-s1', '--evaluate', 'c10-200-rocl-s1', '--out', str(out)]) == 2
    assert 'no evaluation fits after it' in capsys.readouterr().err

def test_extras_shell_runs_each_column_once_and_skips_what_landed(tmp_path):
    """The extras' shell (mixed_plan.extras_cmd) as AFTER runs it, with a stub for python: each run whose weights check
    passes gets one ref_extras.py call a column, into its own folder and log; a column the pinned results/ holds is skipped;
    a run whose weights fail the check is skipped; SMOKE passes --smoke."""
    import os, subprocess
    pin, S, W = tmp_path / 'evalcode', tmp_path / 'S', tmp_path / 'w'
    W.mkdir(); (pin / 'results/eval/five-seed').mkdir(parents=True)
    for n in ('c10-200-swaro-s0', 'c10-200-rocl-s0', 'c10-200-rand-s0'):
        (pin / 'results/runs' / n).mkdir(parents=True)
        for f in ('config.json', 'run.json', 'metrics.jsonl'): (pin / 'results/runs' / n / f).write_text('{}')
        (W / f'{n}.pt').write_bytes(n.encode())
    (pin / 'results/eval/five-seed/c10-200-rocl-s0-ref-extras-l1_12.json').write_text('{}')   # landed by an earlier lease
    stub = tmp_path / 'py'   # check_weights.py refuses rand-s0; ref_extras.py writes its record where --out says
    stub.write_text('#!/bin/sh\necho "$@" >> "$CALLS"\ncase "$1" in *check_weights.py) [ "$2" != c10-200-rand-s0 ];;\n'
                    '*ref_extras.py) while [ $# -gt 0 ]; do [ "$1" = --out ] && o=$2; shift; done; mkdir -p $o && echo x > $o/r.json;; esac\n')
    stub.chmod(0o755)
    env = dict(os.environ, S=str(S), PYTHON=str(stub), WEIGHTS_DIR=str(W), CALLS=str(tmp_path / 'calls'), SMOKE='1')
    cmd = mp.extras_cmd(['c10-200-swaro-s0', 'c10-200-rocl-s0', 'c10-200-rand-s0'], 0)
    r = subprocess.run(['bash', '-c', cmd], cwd=pin, env=env, capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    calls = [l.split() for l in (tmp_path / 'calls').read_text().splitlines() if 'ref_extras.py' in l]
    assert [(c[1], c[c.index('--columns') + 1], c[c.index('--out') + 1]) for c in calls] == [
        ('c10-200-swaro-s0', 'l1_12', f'{S}/side/extras-l1_12'),
        ('c10-200-swaro-s0', 'l2_05', f'{S}/side/extras-l2_05'), ('c10-200-rocl-s0', 'l2_05', f'{S}/side/extras-l2_05')]
    assert all('--smoke' in c and c[c.index('--heads') + 1] == str(W) for c in calls)
    assert (S / 'side/runs/c10-200-swaro-s0/weights.pt').read_bytes() == b'c10-200-swaro-s0'
    assert sorted(p.name for p in (S / 'side/logs').iterdir()) == [
        'extras-c10-200-rocl-s0-l2_05.log', 'extras-c10-200-swaro-s0-l1_12.log', 'extras-c10-200-swaro-s0-l2_05.log']


def test_record_sets_price_the_worst_cases_a_record_ran():
    "A record's own specs replace the library's: l1 worst cases of PGD and SLIDE alone drop the APGD members' units."
    lib = plan._builtin_sets()
    ran = {k: dict(v) for k, v in lib['table1'].items()}
    for k in ('l1_784', 'l1_12'): ran[k]['members'] = [f'pgd_{k}', f'slide_r_{k}']
    ran['slide_r_l1_12'] = dict(lib['members']['slide_r_l1_12'], steps=10)   # a member spec of that commit's own
    got = plan.record_sets(lib, dict(budgets=dict(attacks=ran)))
    assert got['table1']['l1_12']['members'] == ['pgd_l1_12', 'slide_r_l1_12'] and got['members']['slide_r_l1_12']['steps'] == 10
    assert got['table1']['linf_8'] == lib['table1']['linf_8'] and lib['table1']['l1_12']['members'][-1] == 'apgd_t_l1_12'
    before, after = plan.set_units(lib, 'table1'), plan.set_units(got, 'table1')
    apgd_l1 = 2 * (plan.spec_units(lib['members']['apgd_ce_l1_12']) + plan.spec_units(lib['members']['apgd_t_l1_12']))
    assert before['apgd'] - after['apgd'] == pytest.approx(apgd_l1) and apgd_l1 == 2 * (5 * 101 + 5 * 101)
    assert before['robust'] - after['robust'] == pytest.approx(3 * 51 - 3 * 11)   # slide_r_l1_12: 3 x (50 + 1) against 3 x (10 + 1)
    assert plan.record_sets(lib, {}) == lib                                # a record without specs changes nothing


def test_eval_commit_predicts_the_five_seed_evaluations():
    """The five-seed records at the eval pin, whose l1 worst cases have no APGD members: priced with the specs they ran, one
    evaluation comes within 8% of the measured median on each card; priced with today's library, about 15% above it."""
    spec = json.loads((ROOT / 'tools/gpu/plans/five-seed-e-s4b-h200x1.json').read_text())
    pin = json.loads((ROOT / 'tools/gpu/plans/five-seed-pins.json').read_text())['eval']
    evals = [r for r in plan.load_records([ROOT / 'results/eval/five-seed'])[1] if r['commit'] == pin]
    lib = plan.library_sets()[0]
    for card in ('H100', 'H200'):
        rs = [r for r in evals if plan._card_ok(r, card)]
        measured = sorted(r['seconds']['total'] for r in rs)[len(rs) // 2]
        own = plan.EvalModel(evals, card, sets=(lib, 'l'), as_ran=True).predict(spec['defaults']['eval'], 0)
        today = plan.EvalModel(evals, card, sets=(lib, 'l')).predict(spec['defaults']['eval'], 0)
        assert abs(own['total'] / measured - 1) < 0.08, (card, own['total'], measured)
        assert today['attacks_table1'] > own['attacks_table1'] * 1.3, card
    assert plan.main([str(ROOT / 'tools/gpu/plans/five-seed-e-s4b-h200x1.json'), '--card', 'H100', '--eval-commit', pin[:7],
                      '--json', '/dev/null']) == 0
