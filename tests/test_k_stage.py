"""tools/gpu/plans/k-stage.sh (Table 8's one-GPU training leases, plans/k.md) in a scratch clone: the next untrained run of
the order, its plan (written by mixed_plan.py when missing), the five-seed set's pins, the AFTER's reference extras only
while their record is missing, the DEADLINE in the printed launch and whether it fits each card (a stub stands in for
../shared/gpu/stage.sh)."""
import hashlib, json, os, sys
import pytest
from scratch_clone import ROOT, sh, scratch_clone, stub_stage_env, tiny_train

TOOLS = ('tools/gpu/plans/k-stage.sh', 'tools/gpu/land_five_seed.py', 'tools/gpu/mixed_plan.py', 'tools/gpu/plan.py')
EXTRAS = 'results/eval/five-seed/c10-200-rand-s4-ref-extras-l1_12.json'

@pytest.fixture(scope='module')
def clone(tmp_path_factory):
    pins = json.loads((ROOT / 'tools/gpu/plans/five-seed-pins.json').read_text())
    for c in (pins['train'], pins['eval']):
        if sh('git', 'cat-file', '-e', f'{c}^{{commit}}', cwd=ROOT).returncode: pytest.skip(f'a shallow clone: no pin {c}')
    tmp = tmp_path_factory.mktemp('k')
    co = scratch_clone(tmp, TOOLS)
    for d in ('results/runs/c10-200-k10-s0', 'results/runs/c10-200-k100-s0'): assert not (co / d).exists(), d   # before Table 8
    return dict(co=co, env=stub_stage_env(tmp), pins=pins)

def _run_json(co, run, done):
    (co / 'results/runs' / run).mkdir(parents=True, exist_ok=True)
    (co / 'results/runs' / run / 'run.json').write_text(json.dumps(dict(epochs_done=done, epochs=200)))

def _stage(c, *a): return sh('bash', 'tools/gpu/plans/k-stage.sh', *a, cwd=c['co'], env=c['env'])
def _back(co): assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0   # as after the lease

def test_stage_the_first_run_with_the_pins_and_the_extras(clone):
    co = clone['co']; extras = (co / EXTRAS).is_file()
    r = _stage(clone, '1450')
    assert r.returncode == 0, r.stderr
    assert (co / '.gpu/stub-called').read_text().strip() == 'stage.sh cifar10 wheels'
    assert 'staged c10-200-k10-s0 (K = 10, seed 0)' in r.stdout
    for d in ('weights', 'nbs', 'tests', 'results/runs'): assert not (co / d).exists(), d   # out of the calls (travel_light)
    _back(co)
    assert (co / '.gpu/pinned/PINNED_COMMIT').read_text().strip() == clone['pins']['train']
    assert "RUNS='c10-200-k10-s0:c10-200:0:--n-clusters,10'" in r.stdout and 'DEADLINE=1450 ' in r.stdout
    assert 'DEADLINE=1600' not in r.stdout
    assert (co / '.gpu/mixed-w').is_dir() != extras and (co / '.gpu/pinned-eval').is_dir() != extras
    if not extras:   # rand-s4's encoder as PRELOAD's check_weights reads it, and the eval pin for the AFTER
        want = json.loads((co / 'results/weights-five-seed.json').read_text())['runs']['c10-200-rand-s4']['encoder_sha256']
        assert hashlib.sha256((co / '.gpu/mixed-w/c10-200-rand-s4.pt').read_bytes()).hexdigest() == want
        assert (co / '.gpu/pinned-eval/PINNED_COMMIT').read_text().strip() == clone['pins']['eval']
    assert 'fits on an H100' in r.stdout and 'fits on an H200' in r.stdout

def test_stage_goes_on_down_the_order_and_writes_the_plan(clone):
    co = clone['co']; _back(co)
    _run_json(co, 'c10-200-k10-s0', 200)   # trained
    (co / EXTRAS).parent.mkdir(parents=True, exist_ok=True); (co / EXTRAS).write_text('{}')   # rand-s4's l1_12 landed
    plan = co / 'tools/gpu/plans/k-t-k100-s0-h200.json'; plan.unlink(missing_ok=True)
    r = _stage(clone, '700')
    assert r.returncode == 0, r.stderr
    _back(co)
    p = json.loads(plan.read_text())   # mixed_plan.py's plan: K = 100 by its flag, no extras, the train pin
    assert [(x['name'], x['train_flags']) for x in p['runs']] == [('c10-200-k100-s0', '--n-clusters 100')]
    assert "RUNS='c10-200-k100-s0:c10-200:0:--n-clusters,100'" in p['launch'] and 'rand-s4' not in p['launch']
    assert not (co / '.gpu/mixed-w').exists() and not (co / '.gpu/pinned-eval').exists()
    assert 'DEADLINE 700 is too short on an H100' in r.stdout and 'DEADLINE=700 ' in r.stdout

def test_stage_refuses_bad_input(clone):
    co = clone['co']; _back(co)
    for a, msg in ((('20',), 'between 600 and 1700'), (('1x',), 'number of seconds'),
                   (('1400', 'c10-200-k7-s0'), 'is not a run of Table 8'), (('1400', 'c10-200-k10-s0'), 'has trained')):
        r = _stage(clone, *a)
        assert r.returncode == 2 and msg in r.stderr, (a, r.stderr)

def test_stage_resumes_a_cut_training_from_its_kept_state(clone, tmp_path):
    "A training its lease's time limit cut (run.json: 120 of 200 epochs) is staged again with its checkpoint from weights/."
    co = clone['co']; _back(co)
    run = 'c10-200-k100-s0'; _run_json(co, run, 120)
    r = _stage(clone, '1400')
    assert r.returncode == 2 and f'weights/ keeps no {run}.state' in r.stderr, r.stderr
    _back(co)
    tiny_train(tmp_path, run, stop=1, epochs=2)
    ck = tmp_path / run / 'checkpoint.pt'   # stands in for the cut run's (the script reads the epoch from run.json)
    assert sh(sys.executable, 'tools/pack_weights.py', '--state', str(ck), cwd=co).returncode == 0
    r = _stage(clone, '1400')
    assert r.returncode == 0, r.stderr
    assert f'staged {run} (K = 100, seed 0, resuming at epoch 120)' in r.stdout
    assert f'pieces.py split repro/runs/{run}/checkpoint.pt' in r.stdout and f'--retire-state {run}.state' in r.stdout
    folders = sorted((co / '.gpu').glob('ck-*')); assert folders
    dev = tmp_path / 'device'
    for d in folders:
        assert f'carry .gpu/{d.name} ' in r.stdout
        assert sh('sh', str(d / 'receive.sh'), cwd=co, env=dict(os.environ, RUNS_DIR=str(dev))).returncode == 0
    assert (dev / run / 'checkpoint.pt').read_bytes() == ck.read_bytes()   # where repro_session.sh's training resumes
