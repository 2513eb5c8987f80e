"""tools/gpu/plans/aff-stage.sh (issue #37's one-GPU AFF leases) in a scratch clone: the AFF state kept in weights/ comes out
as folders a device call carries, whose receive.sh scripts join the very bytes, beside the encoders of the models still
without an AFF record, the AFF pin's code, and a launch that names those models (a stub stands in for ../shared/gpu/stage.sh)."""
import hashlib, json, os, shutil, sys
import pytest
from scratch_clone import ROOT, commit_all, sh, scratch_clone, stub_stage_env

SWARO, ROCL = 'c10-200-swaro-s0', 'c10-200-rocl-s0'   # aff-lease.json's models, in its order
STATE = f'{SWARO}-aff-partial.state'
TOOLS = ('tools/gpu/plans/aff-stage.sh', 'tools/gpu/plans/aff-pins.json', 'tools/gpu/plans/aff-lease.json',
         'tools/gpu/land_five_seed.py', 'tools/pack_weights.py')

def _sha(b: bytes) -> str: return hashlib.sha256(b).hexdigest()

@pytest.fixture(scope='module')
def staged(tmp_path_factory):
    if not (ROOT / 'weights' / STATE).is_dir(): pytest.skip(f'weights/ keeps no {STATE}')
    pin = json.loads((ROOT / 'tools/gpu/plans/aff-pins.json').read_text())['eval']
    if sh('git', 'cat-file', '-e', f'{pin}^{{commit}}', cwd=ROOT).returncode: pytest.skip('a shallow clone: no AFF pin commit')
    tmp = tmp_path_factory.mktemp('aff')
    co = scratch_clone(tmp, TOOLS)
    shutil.rmtree(co / 'swaro_nb'); shutil.copytree(ROOT / 'swaro_nb', co / 'swaro_nb')   # the library the tools import
    shutil.rmtree(co / 'results/eval/aff', ignore_errors=True)   # no AFF record yet: both models to stage
    (co / 'results/eval/aff').mkdir(parents=True)
    for f in (ROOT / 'results/eval/aff').glob('timing-*.json'): shutil.copy(f, co / 'results/eval/aff')
    assert commit_all(co, 'before the AFF leases') or sh('git', 'status', '--porcelain', cwd=co).stdout == ''
    env = stub_stage_env(tmp)
    return dict(co=co, env=env, tmp=tmp, pin=pin, r=sh('bash', 'tools/gpu/plans/aff-stage.sh', '1100', cwd=co, env=env))

def test_stage_carries_the_kept_state_the_encoders_and_the_pin(staged):
    co, r, tmp = staged['co'], staged['r'], staged['tmp']
    assert r.returncode == 0, r.stderr
    assert (co / '.gpu/stub-called').read_text().strip() == 'stage.sh cifar10 wheels'
    for d in ('weights', 'nbs', 'tests', 'results/runs'): assert not (co / d).exists(), d   # out of the calls (travel_light)
    assert 'travel_light: room left in a call' in r.stdout   # .gpu/aff/ (the joined state, never carried) is no staged folder
    assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0   # all back, as after the lease
    assert (co / '.gpu/pinned/PINNED_COMMIT').read_text().strip() == staged['pin']
    five = json.loads((co / 'results/weights-five-seed.json').read_text())['runs']
    for n in (SWARO, ROCL):   # each encoder, as PRELOAD checks it
        assert _sha((co / f'.gpu/aff-e-{n}/{n}.pt').read_bytes()) == five[n]['encoder_sha256']
    folders = sorted((co / '.gpu').glob(f'aff-s-{SWARO}-[0-9]*'))
    assert len(folders) >= 2   # at most 48 MiB of pieces a folder, and its receive.sh
    assert all(sum(p.stat().st_size for p in d.iterdir()) <= 48 * 2 ** 20 + 8192 for d in folders)
    assert not list((co / '.gpu').glob(f'aff-s-{ROCL}*'))   # RoCL's AFF has no state: it starts from epoch 1
    aff = tmp / 'affdir'
    for d in folders:   # the calls' receive.sh, in their order, into AFF_DIR
        assert sh('sh', str(d / 'receive.sh'), cwd=co, env=dict(os.environ, AFF_DIR=str(aff))).returncode == 0
    got = (aff / f'{SWARO}-aff-partial.pt').read_bytes()
    entry = json.loads((co / 'weights/MANIFEST.json').read_text())['states'][STATE]['files']['state']
    kept = b''.join((co / 'weights' / p['path']).read_bytes() for p in entry['pieces'])   # the committed pieces, in order
    assert _sha(got) == _sha(kept) == entry['sha256'] and len(got) == entry['bytes']
    assert f"RUNS='{SWARO}:none:0 {ROCL}:none:0' PRELOAD='{SWARO} {ROCL}' GPUS=0" in r.stdout and 'DEADLINE=1100' in r.stdout
    assert f'resuming: {SWARO}' in r.stdout

def test_stage_takes_a_retired_state_from_history(staged):
    "A state retired from weights/ (to make room; its pieces stay in git history) still resumes: not from epoch 1."
    co, env = staged['co'], staged['env']; assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0
    r = sh(sys.executable, 'tools/pack_weights.py', '--retire-state', STATE, cwd=co)
    assert r.returncode == 0 and commit_all(co, 'state retired'), r.stderr
    shutil.rmtree(co / '.gpu/aff')   # a later session: nothing joined yet
    assert not (co / 'weights' / STATE).exists()
    r = sh('bash', 'tools/gpu/plans/aff-stage.sh', '1100', cwd=co, env=env)
    assert r.returncode == 0 and f'resuming: {SWARO}' in r.stdout, r.stderr
    assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0
    entry = json.loads((co / 'weights/MANIFEST.json').read_text())['states'][STATE]
    assert 'retired' in entry and _sha((co / f'.gpu/aff/{SWARO}-aff-partial.pt').read_bytes()) == entry['files']['state']['sha256']

def test_stage_skips_a_model_with_its_record_and_refuses_bad_input(staged):
    co, env = staged['co'], staged['env']; assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0
    (co / f'results/eval/aff/{SWARO}-eval.json').write_text('{}\n')   # SwARo's AFF evaluated: RoCL's alone, from epoch 1
    r = sh('bash', 'tools/gpu/plans/aff-stage.sh', '900', cwd=co, env=env)
    assert r.returncode == 0, r.stderr
    assert f"RUNS='{ROCL}:none:0' PRELOAD='{ROCL}' GPUS=0" in r.stdout and 'resuming: none' in r.stdout
    assert not list((co / '.gpu').glob('aff-s-*')) and not (co / f'.gpu/aff-e-{SWARO}').exists()
    assert sh('git', 'sparse-checkout', 'disable', cwd=co).returncode == 0
    (co / f'results/eval/aff/{ROCL}-eval.json').write_text('{}\n')
    r = sh('bash', 'tools/gpu/plans/aff-stage.sh', cwd=co, env=env)
    assert r.returncode == 2 and 'nothing to stage' in r.stderr, r.stderr
    for bad in ('20', '99999', '12x'):
        r = sh('bash', 'tools/gpu/plans/aff-stage.sh', bad, cwd=co, env=env)
        assert r.returncode == 2 and 'DEADLINE' in r.stderr, r.stderr
