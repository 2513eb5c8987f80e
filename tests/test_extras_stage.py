"""tools/gpu/plans/extras-stage.sh and extras-launch.sh (plans/extras.md), a short lease's reference extras: staged in a
scratch clone (a stub stands in for ../shared/gpu/stage.sh), then the launch run on this machine against the staged folders
with a stub ref_extras.py (the lease plans' extras, mixed_plan.extras_cmd): each run under what is left of the time limit, its real exit status in the events, the pack."""
import json, os, shutil, sys, tarfile, time
import pytest
from scratch_clone import ALWAYS, ROOT, sh, scratch_clone, stub_stage_env

FAST, SLOW = 'c10-200-swaro-s1', 'c10-200-rand-s4'   # neither has its reference l2_05 in results/eval/five-seed/
TOOLS = ('tools/gpu/plans/extras-stage.sh', 'tools/gpu/plans/extras-launch.sh', 'tools/gpu/land_five_seed.py', 'tools/gpu/mixed_plan.py')

@pytest.fixture(scope='module')
def staged(tmp_path_factory):
    if sh('git', 'rev-parse', 'HEAD', cwd=ROOT).returncode: pytest.skip('not a git checkout')
    man = json.loads((ROOT / 'weights/MANIFEST.json').read_text())['models']
    for n in (FAST, SLOW):   # retired from weights/: their pieces come from the commit the manifest names
        rev = man[n].get('retired', {}).get('revision', 'HEAD')
        if sh('git', 'cat-file', '-e', rev, cwd=ROOT).returncode: pytest.skip(f'a shallow clone without {rev} ({n})')
    tmp = tmp_path_factory.mktemp('extras')
    co = scratch_clone(tmp, TOOLS); env = stub_stage_env(tmp)
    r = sh('bash', 'tools/gpu/plans/extras-stage.sh', 'l2_05', FAST, SLOW, cwd=co, env=env)
    return dict(co=co, r=r, env=env, tmp=tmp)

def test_stage_carries_the_encoders_heads_and_the_eval_pin(staged):
    co, r = staged['co'], staged['r']
    assert r.returncode == 0, r.stderr
    assert (co / '.gpu/stub-called').read_text().strip() == 'stage.sh cifar10 wheels'
    got = sorted(p.name for p in (co / '.gpu/e-x').iterdir())
    assert got == sorted([f'{n}{x}' for n in (FAST, SLOW) for x in ('.pt', '-eval-heads.pt')] + ['receive.sh'])
    assert sum(p.stat().st_size for p in (co / '.gpu/e-x').iterdir()) <= 48 * 2 ** 20
    pin = json.loads((ROOT / 'tools/gpu/plans/five-seed-pins.json').read_text())['eval']
    assert (co / '.gpu/pinned/PINNED_COMMIT').read_text().strip() == pin
    for d in ('weights', 'nbs', 'tests', 'results/eval'): assert not (co / d).exists(), d   # out of the calls (travel_light.sh)
    r2 = sh(sys.executable, 'tools/gpu/land_five_seed.py', 'land', 'pack.tar', '--logs', 'x', cwd=co)   # while sparse: refused,
    assert r2.returncode == 2 and 'git sparse-checkout disable first' in r2.stderr, r2.stderr   # not landed against nothing
    r2 = sh('bash', 'tools/gpu/pinned.sh', '--check', cwd=co)   # nor a check that would find nothing stale
    assert r2.returncode == 2 and 'git sparse-checkout disable first' in r2.stderr, r2.stderr
    assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0
    assert f'COLUMN=l2_05 RUNS="{FAST} {SLOW}" bash tools/gpu/plans/extras-launch.sh' in r.stdout
    changed = [l for l in sh('git', 'status', '--porcelain', cwd=co).stdout.splitlines() if not l.endswith((*TOOLS, *ALWAYS))]
    assert changed == []   # results/ as committed (the tools are this checkout's copies, committed or not)

def test_stage_refuses_what_cannot_run(staged):
    co, env = staged['co'], staged['env']
    for args, why in ((('l1_12', 'c10-200-rocl-s4'), 'has landed already'), (('linf_8', FAST), 'the column'),
                      (('l2_05', FAST, SLOW, 'c10-200-swaro-s2'), 'one or two runs'), (('l2_05', 'c10-200-nope-s0'), 'no evaluation record')):
        r = sh('bash', 'tools/gpu/plans/extras-stage.sh', *args, cwd=co, env=env)
        assert r.returncode == 2 and why in r.stderr, (args, r.stderr)

def test_launch_bounds_each_run_and_packs_what_finished(staged):
    co, tmp = staged['co'], staged['tmp']
    x = tmp / 'machine'; (x / 'weights').mkdir(parents=True)
    shutil.copytree(co / '.gpu/pinned', x / 'code')   # what receive.sh puts in /root/swaro/code
    for p in (co / '.gpu/e-x').glob('*.pt'): shutil.copy(p, x / 'weights')
    (x / 'code/tools/gpu/ref_extras.py').write_text(   # the stub: the slow run outlasts the time limit
        "import json, os, sys, time\nrun, out = sys.argv[1], sys.argv[sys.argv.index('--out') + 1]\n"
        f"if run == {SLOW!r}: time.sleep(60)\n"
        "os.makedirs(out, exist_ok=True); json.dump({'run': run, 'argv': sys.argv[1:]}, open(f'{out}/{run}-ref-extras.json', 'w'))\n"
        "print(f'{run}: done')\n")
    env = dict(os.environ, XROOT=str(x), PY=sys.executable, TL='6', MIN_LEFT='1', SETTLE='0', COLUMN='l2_05',
               RUNS=f'{FAST} c10-200-nope-s0 {SLOW}', OUT=str(tmp / 'out'))
    (tmp / 'out').mkdir()
    t0 = time.time()
    r = sh('bash', 'tools/gpu/plans/extras-launch.sh', cwd=co, env=env)
    assert r.returncode == 0, r.stderr
    r = sh('bash', 'tools/gpu/plans/extras-launch.sh', '--poll', cwd=co, env=dict(env, W='30'))
    assert r.returncode == 0 and r.stdout.rstrip().endswith('DONE'), r.stdout + r.stderr
    assert time.time() - t0 < 25   # the slow run was stopped at the time limit, not after its 60 s
    ev = (x / 'x/events.log').read_text()
    assert 'c10-200-nope-s0: left out' in ev
    assert f'{FAST}: exit 0, done ({FAST}: done)' in ev
    assert f'{SLOW}: exit 124, stopped by its time limit' in ev
    with tarfile.open(tmp / 'out/pack.tar') as t: names = t.getnames()
    assert f'side/extras-l2_05/{FAST}-ref-extras.json' in names and not any(SLOW in n and n.endswith('.json') for n in names)
    assert not any(n.startswith('side/runs') for n in names)   # the encoders stay on the machine (a call brings back 16 MiB a file)
    rec = json.loads((x / f'x/side/extras-l2_05/{FAST}-ref-extras.json').read_text())
    assert rec['argv'][rec['argv'].index('--runs') + 1] == str(x / 'x/side/runs')   # the run folder the launch made, weights checked
    assert (x / f'x/side/runs/{FAST}/weights.pt').read_bytes() == (x / f'weights/{FAST}.pt').read_bytes()
