"""tools/gpu/plans/snapshot-stage.sh 2-h1 in a scratch clone: the training state kept in weights/ comes out as the folders a
device call carries, and they join back into the very checkpoint (a stub stands in for ../shared/gpu/stage.sh)."""
import hashlib, json, shutil, sys
import pytest
from scratch_clone import ROOT, commit_all, sh, scratch_clone, stub_stage_env, tiny_train

RUN = 'c10-paper-snap-s0'

@pytest.fixture(scope='module')
def staged(tmp_path_factory):
    pin = json.loads((ROOT / 'tools/gpu/plans/five-seed-pins.json').read_text())['eval']
    if sh('git', 'cat-file', '-e', f'{pin}^{{commit}}', cwd=ROOT).returncode: pytest.skip('a shallow clone: no eval pin commit')
    tmp = tmp_path_factory.mktemp('stage')
    co = scratch_clone(tmp, ('tools/gpu/plans/snapshot-stage.sh', 'tools/pack_weights.py', 'tools/gpu/pieces.py',
                             'tools/gpu/land_five_seed.py',
                             *(str(p.relative_to(ROOT)) for p in (ROOT / 'tools/gpu/plans').glob('snapshot-*.json'))))
    shutil.rmtree(co / 'swaro_nb'); shutil.copytree(ROOT / 'swaro_nb', co / 'swaro_nb')   # the library the tools import
    tiny_train(tmp / 'runs', RUN, stop=2)
    ck = tmp / 'runs' / RUN / 'checkpoint.pt'
    shutil.rmtree(co / 'results/runs' / RUN, ignore_errors=True)   # once lease 1 has landed for real, this lease 1 stands in
    (co / 'results/runs' / RUN).mkdir(parents=True); shutil.copy(ck.parent / 'run.json', co / 'results/runs' / RUN)
    shutil.rmtree(co / 'weights' / f'{RUN}-e400', ignore_errors=True)   # and as before lease 2-h1: no e400 yet
    man = json.loads((co / 'weights/MANIFEST.json').read_text()); man['models'].pop(f'{RUN}-e400', None)
    rev = (man['models'][f'{RUN}-e200'].pop('retired', None) or {}).get('revision')
    if rev:   # e200, evaluated and retired since, back in weights/ as lease 1 left it, from the commit that kept it
        assert sh('git', 'checkout', rev, '--', f'weights/{RUN}-e200', cwd=co).returncode == 0
    for st in [k for k in man.get('states', {}) if not k.startswith(RUN)]:   # other work's states (AFF's): not these leases'
        man['states'].pop(st); shutil.rmtree(co / 'weights' / st)
    (co / 'weights/MANIFEST.json').write_text(json.dumps(man, indent=1) + '\n')
    shutil.rmtree(co / 'results/eval/snapshot', ignore_errors=True)   # and before lease 3: no snapshot evaluated
    r = sh(sys.executable, 'tools/pack_weights.py', '--state', str(ck), '--dest', str(co / 'weights'), cwd=co)
    assert r.returncode == 0 and 'epoch 2 of 3' in r.stdout, r.stderr
    sha = hashlib.sha256(ck.read_bytes()).hexdigest()
    runs = {k: v for k, v in json.loads((ROOT / 'results/weights-snapshot.json').read_text())['runs'].items()
            if k == f'{RUN}-e200'}   # the e200 encoder, as lease 1 landed it
    (co / 'results/weights-snapshot.json').write_text(json.dumps({'runs': runs, 'checkpoints': {RUN: {'epoch': 2, 'sha256': sha}}},
                                                                 indent=1) + '\n')
    assert commit_all(co, 'lease 1')
    env = stub_stage_env(tmp)
    r = sh('bash', 'tools/gpu/plans/snapshot-stage.sh', '2-h1', cwd=co, env=env)
    return dict(co=co, ck=ck, sha=sha, r=r, env=env, tmp=tmp)

def test_stage_2h1_carries_the_kept_state(staged):
    co, r = staged['co'], staged['r']
    assert r.returncode == 0, r.stderr
    assert (co / '.gpu/stub-called').read_text().strip() == 'stage.sh cifar10 wheels'
    folders = sorted(p.name for p in (co / '.gpu').glob('snap-[0-9]'))
    assert folders == ['snap-1', 'snap-2', 'snap-3']   # the calls' .gpu/snap-[0-9]/* glob: the state's pieces and nothing else
    joined = staged['tmp'] / 'join'; joined.mkdir()
    for p in (co / '.gpu').glob('snap-[0-9]/*'): shutil.copy(p, joined)
    out = staged['tmp'] / 'm' / 'checkpoint.pt'
    assert sh(sys.executable, str(co / 'tools/gpu/pieces.py'), 'join', str(joined), str(out), cwd=co).returncode == 0
    assert out.read_bytes() == staged['ck'].read_bytes()
    for d in ('weights', 'nbs', 'tests'): assert not (co / d).exists(), d   # left out of the calls (tools/gpu/travel_light.sh)
    assert not (co / 'results/runs').exists() and 'travel_light: room left in a call' in r.stdout
    assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0   # all back, as after the lease
    rec = json.loads((co / 'results/runs' / RUN / 'run.json').read_text())
    assert (co / '.gpu/pinned/PINNED_COMMIT').read_text().strip() == rec['commit'].removesuffix('+dirty')   # lease 1's code
    assert (co / '.gpu/pinned/results/runs' / RUN / 'run.json').is_file()
    assert 'tools/gpu/poll.sh' in r.stdout and '$((400 - K))' in r.stdout   # snapshot-lease2-h1.json's launch and poll
    # e200, committed and not yet evaluated: its encoder, checked against the record PRELOAD reads, and the eval pin's code
    enc = co / '.gpu/snap-w' / f'{RUN}-e200.pt'
    want = json.loads((co / 'results/weights-snapshot.json').read_text())['runs'][f'{RUN}-e200']['encoder_sha256']
    assert hashlib.sha256(enc.read_bytes()).hexdigest() == want
    pins = json.loads((co / 'tools/gpu/plans/five-seed-pins.json').read_text())
    assert (co / '.gpu/pinned-eval/PINNED_COMMIT').read_text().strip() == pins['eval']
    assert (co / '.gpu/pinned-eval/results/weights-snapshot.json').read_text() == (co / 'results/weights-snapshot.json').read_text()
    assert (co / '.gpu/pinned-eval/results/runs' / f'{RUN}-e200' / 'config.json').is_file()
    assert '/root/swaro/evalcode' in (co / '.gpu/pinned-eval/receive.sh').read_text() + (co / '.gpu/pinned-eval/PINNED').read_text()
    assert '.gpu/pinned-eval' in r.stdout and '.gpu/snap-w' in r.stdout
    assert sh('git', 'status', '--porcelain', cwd=co).stdout == ''

def test_stage_refuses_a_state_that_is_not_the_records(staged):
    co = staged['co']; assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0
    w = co / 'results/weights-snapshot.json'; good = w.read_text()
    w.write_text(good.replace(staged['sha'], '0' * 64))
    r = sh('bash', 'tools/gpu/plans/snapshot-stage.sh', '2-h1', cwd=co, env=staged['env'])
    assert r.returncode == 2 and "is not results/weights-snapshot.json's" in r.stderr, r.stderr
    w.write_text(good)
    r = sh('bash', 'tools/gpu/plans/snapshot-stage.sh', '1', cwd=co, env=staged['env'])
    assert r.returncode == 2 and 'lease 1 has landed' in r.stderr
    r = sh('bash', 'tools/gpu/plans/snapshot-stage.sh', '3', cwd=co, env=staged['env'])   # lease 3 before e400 is in weights/
    assert r.returncode == 2 and f'{RUN}-e400 is not in weights/: land lease 2-h1 first' in r.stderr, r.stderr

def test_stage_3_picks_the_plan_from_what_is_evaluated(staged):
    "Lease 3 stages the snapshots without a record (both: snapshot-e-h1.json; e400 alone: snapshot-e400-h1.json) and the extras."
    co, env = staged['co'], staged['env']; assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0
    extras = (co / 'results/eval/five-seed/c10-200-rand-s4-ref-extras-l1_12.json').is_file()   # read while results/ is here
    from swaro_nb.hub import pretrained_run
    src = pretrained_run(f'{RUN}-e200', staged['tmp'] / 'e400', co / 'weights')   # e200's encoder stands in for e400's
    r = sh(sys.executable, 'tools/pack_weights.py', str(src), '--name', f'{RUN}-e400', '--check', '0', cwd=co)
    assert r.returncode == 0, r.stderr
    shutil.copytree(co / 'results/runs' / f'{RUN}-e200', co / 'results/runs' / f'{RUN}-e400', dirs_exist_ok=True)
    assert commit_all(co, 'lease 2-h1')   # landed as a session commits it (untracked files travel too)
    r = sh('bash', 'tools/gpu/plans/snapshot-stage.sh', '3', cwd=co, env=env)
    assert r.returncode == 0, r.stderr
    assert 'snapshot-e-h1.json' in r.stdout and (co / '.gpu/e-x/c10-200-rand-s4.pt').is_file() != extras   # its AFTER's too
    encoders = lambda: sorted(p.name for p in (co / '.gpu/snap-w').glob('*.pt') if not p.name.endswith('-eval-heads.pt'))
    assert encoders() == [f'{RUN}-e200.pt', f'{RUN}-e400.pt']   # (with a model's heads where weights/ has them)
    pins = json.loads((co / 'tools/gpu/plans/five-seed-pins.json').read_text())
    assert (co / '.gpu/pinned/PINNED_COMMIT').read_text().strip() == pins['eval']   # the eval pin, in /root/swaro/code
    assert (co / '.gpu/pinned/results/runs' / f'{RUN}-e400' / 'run.json').is_file()
    assert (co / '.gpu/pinned/results/eval/five-seed').is_dir()   # the set's records, which the extras read
    assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0
    known = json.loads((co / 'results/weights-snapshot.json').read_text())['runs']
    assert known[f'{RUN}-e400']['encoder_sha256'] == hashlib.sha256((co / '.gpu/snap-w' / f'{RUN}-e400.pt').read_bytes()).hexdigest()
    (co / 'results/eval/snapshot').mkdir(parents=True); (co / 'results/eval/snapshot' / f'{RUN}-e200-eval.json').write_text('{}')
    r = sh('bash', 'tools/gpu/plans/snapshot-stage.sh', '3', cwd=co, env=env)
    assert r.returncode == 0, r.stderr
    assert 'snapshot-e400-h1.json' in r.stdout and encoders() == [f'{RUN}-e400.pt']
    assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0
    assert (co / '.gpu/e-x/c10-200-rand-s4.pt').is_file() != extras   # staged while its l1_12 has not landed
    (co / 'results/eval/snapshot' / f'{RUN}-e400-eval.json').write_text('{}')
    r = sh('bash', 'tools/gpu/plans/snapshot-stage.sh', '3', cwd=co, env=env)
    assert r.returncode == 2 and 'nothing to evaluate' in r.stderr
