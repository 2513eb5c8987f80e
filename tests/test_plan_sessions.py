"""The GPU session scripts run end to end on the CPU (SMOKE=1): tools/gpu/repro_session.sh on a preloaded run, a committed
encoder and the float16 weights it exports, and tools/gpu/ref_extras.py on a given head. Apart from tests/test_plan.py (the
planner's pricing, fast) so that pytest-xdist's --dist loadfile can give these slow subprocess tests and the rest of the
planner's tests to different workers."""
import json, re, shutil
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]

TINY_TRAIN = ['--preset', 'smoke', '--name', 'tiny', '--epochs', '1', '--subset-per-class', '10', '--batch-size', '50', '--width', '8',
              '--proj-hidden', '64', '--monitor-bank', '100', '--monitor-test', '50', '--n-clusters', '10', '--attack-steps', '2',
              '--attack-groups', '1', '--attack-warmup-epochs', '1', '--progress', 'false']

@pytest.fixture(scope='module')
def tiny_run(tmp_path_factory):
    "One tiny SwARo run (1 epoch, `swaro_nb.cli train` in a subprocess), trained once for this module; tests copy it (`tiny_copy`)."
    import os, subprocess, sys
    d = tmp_path_factory.mktemp('tiny_run')
    env = dict(os.environ, OMP_NUM_THREADS='1', MPLBACKEND='Agg')
    subprocess.run([sys.executable, '-m', 'swaro_nb.cli', 'train', *TINY_TRAIN, '--out-dir', str(d / 'runs')], env=env, check=True,
                   capture_output=True, cwd=d)
    return d / 'runs' / 'tiny'

def tiny_copy(tiny_run, tmp_path) -> Path:
    "A copy of the module's tiny run at tmp_path/runs/tiny (each test changes its own copy only)."
    shutil.copytree(tiny_run, tmp_path / 'runs' / 'tiny')
    return tmp_path / 'runs' / 'tiny'


def test_repro_session_evaluates_a_preloaded_run_without_training_it(tiny_run, tmp_path):
    "An evaluation-only lease: a run trained earlier, its weights checked against results/weights-*.json, evaluated where RUNS names it."
    import hashlib, os, subprocess, sys
    from swaro_nb.runs import export_weights
    work, S, W = tmp_path / 'work', tmp_path / 's', tmp_path / 'w'
    (work / 'results' / 'runs').mkdir(parents=True); W.mkdir()
    env = dict(os.environ, OMP_NUM_THREADS='1', MPLBACKEND='Agg')
    tiny_copy(tiny_run, tmp_path)   # the module's tiny run (trained once by `swaro_nb.cli train`), a copy of its own
    wf = export_weights(tmp_path / 'runs' / 'tiny', W / 'tiny.pt', half=True)
    (work / 'results' / 'runs' / 'tiny').mkdir()
    for f in ('config.json', 'run.json', 'metrics.jsonl'): (work / 'results/runs/tiny' / f).write_bytes((tmp_path / 'runs/tiny' / f).read_bytes())
    sha = hashlib.sha256(wf.read_bytes()).hexdigest()
    (work / 'results' / 'weights-test.json').write_text(json.dumps({'runs': {'tiny': {'sha256': sha}}}))
    (work / 'tools').symlink_to(ROOT / 'tools')
    junk = work / 'results/eval/parts/tiny-eval.parts'; junk.mkdir(parents=True)   # pieces a lease brought back (here: not a match)
    (junk / 'le.json').write_text('{"kind": "eval_part", "fingerprint": "another"}')
    env.update(SMOKE='1', S=str(S), RUNS='tiny:smoke:0', PRELOAD='tiny', WEIGHTS_DIR=str(W), WEIGHTS='1', DEADLINE='400',
               PYTHON=sys.executable, GPUS='0', PROCS='1')
    r = subprocess.run(['bash', str(ROOT / 'tools/gpu/repro_session.sh')], env=env, cwd=work, capture_output=True, text=True, timeout=420)
    events = (S / 'events.log').read_text()
    assert r.returncode == 0, r.stdout[-2000:] + r.stderr[-2000:]
    assert 'tiny: preloaded (weights checked)' in events and 'tiny: preloaded, evaluation only' in events, events
    assert 'training on GPU' not in events and not (S / 'logs' / 'train_tiny.log').exists(), events
    assert 'tiny: eval (fp32) exit 0' in events and 'weights (float16)' not in events, events
    assert 'tiny: resuming the pieces in results/eval/parts/tiny-eval.parts' in events   # copied in, not taken (fingerprint)
    rec = json.loads((S / 'eval' / 'fp32' / 'tiny-eval.json').read_text())
    assert rec['run'] == 'tiny' and rec['epochs'] == 1 and 'linf_8' in rec['metrics'] and rec['resumed'] == []
    import tarfile
    packed = tarfile.open(S / 'pack.tar').getnames()
    assert 'eval/fp32/tiny-eval.json' in packed, packed
    assert [n for n in packed if n.endswith('.pt')] == ['eval/fp32/tiny-eval-heads.pt'], packed   # the fitted heads come back; no weights
    # an AFF lease: a state an earlier lease left is copied in (here not a match: fine-tuned afresh); AFF's network comes
    # back in pieces beside the pack, not in it
    A = tmp_path / 'aff'; A.mkdir(); (A / 'tiny-aff-partial.pt').write_bytes(b'another state')
    S3 = tmp_path / 's3'
    r = subprocess.run(['bash', str(ROOT / 'tools/gpu/repro_session.sh')], cwd=work, capture_output=True, text=True, timeout=420,
                       env=dict(env, S=str(S3), AFF_DIR=str(A), EVAL='--no-le --no-rle --aff --aff-epochs 100 --attacks clean,pgd_linf_8'))
    ev3 = (S3 / 'events.log').read_text()
    assert f'tiny: resuming AFF from {A}/tiny-aff-partial.pt' in ev3 and 'tiny: eval (fp32) exit 0' in ev3, ev3
    aff = json.loads((S3 / 'eval/fp32/tiny-eval.json').read_text())
    assert set(aff['metrics']) == {'aff'} and aff['eval_config']['aff_epochs'] == 2 and aff['resumed'] == []   # CPU size: 2 epochs
    line = next(l for l in ev3.splitlines() if 'tiny-aff: AFF network (float16) in 1 piece(s)' in l)
    assert hashlib.sha256((S3 / 'weights/tiny-aff.weights.pt.00').read_bytes()).hexdigest() in line   # split -a 2: up to 100 pieces
    assert not [n for n in tarfile.open(S3 / 'pack.tar').getnames() if n.endswith('-eval-aff.pt')]
    # wrong weights: not preloaded, and then neither trained (a short run under its name) nor evaluated
    (W / 'tiny.pt').write_bytes(b'not the weights')
    S2 = tmp_path / 's2'
    subprocess.run(['bash', str(ROOT / 'tools/gpu/repro_session.sh')], env=dict(env, S=str(S2)), cwd=work, capture_output=True, text=True, timeout=120)
    ev2 = (S2 / 'events.log').read_text()
    assert 'tiny: not preloaded (missing or wrong weights)' in ev2 and 'tiny: not preloaded, so not evaluated' in ev2, ev2
    assert 'training on GPU' not in ev2 and 'evaluating' not in ev2 and not (S2 / 'preloaded.tiny').exists(), ev2


def test_repro_session_evaluates_a_committed_encoder(tiny_run, tmp_path):
    "A run whose lease weights are gone: its encoder from the hub's pieces (land_five_seed.py stage --from-hub), checked by PRELOAD, evaluated."
    import os, subprocess, sys, torch
    from swaro_nb import hub
    work, S, W, hubw = tmp_path / 'work', tmp_path / 's', tmp_path / 'w', tmp_path / 'hub'
    (work / 'results' / 'runs').mkdir(parents=True)
    env = dict(os.environ, OMP_NUM_THREADS='1', MPLBACKEND='Agg', PYTHONPATH=str(ROOT))
    tiny_copy(tiny_run, tmp_path)   # the module's tiny run (trained once by `swaro_nb.cli train`), a copy of its own
    # a head, as an evaluation fits it (width 8: 64 features): fixed random weights. From the worker's global generator, the
    # head depended on the tests run before it, and so did the cost of ref_extras.py below: 2 s when it classifies none of the
    # 4 images the reference gets, 100 s when it classifies some that survive to the reference's Square (5,000 queries).
    # This one classifies none (the reference on images it must attack: test_ref_extras_attacks_the_given_head_on_the_records_images)
    g = torch.Generator().manual_seed(0)
    le = {'weight': torch.randn(10, 64, generator=g), 'bias': torch.randn(10, generator=g)}
    hub.pack_pretrained(tmp_path / 'runs' / 'tiny', dest=hubw, heads={'le': le})   # in pieces, as weights/ holds them
    for f in ('config.json', 'run.json', 'metrics.jsonl'):
        (work / 'results/runs/tiny').mkdir(exist_ok=True); (work / 'results/runs/tiny' / f).write_bytes((tmp_path / 'runs/tiny' / f).read_bytes())
    (work / 'tools').symlink_to(ROOT / 'tools')
    st = subprocess.run([sys.executable, str(ROOT / 'tools/gpu/land_five_seed.py'), 'stage', '--from-hub', 'tiny', '--to', '.gpu/e1',
                         '--root', str(work), '--weights-root', str(hubw)], env=env, capture_output=True, text=True)
    assert st.returncode == 0, st.stderr
    man = json.loads((work / 'results/weights-five-seed.json').read_text())['runs']['tiny']
    assert set(man) == {'encoder_sha256', 'encoder_bytes', 'encoder_from'}, man   # no lease weights recorded for it
    subprocess.run(['sh', str(work / '.gpu/e1/receive.sh')], env=dict(env, WEIGHTS_DIR=str(W)), check=True, capture_output=True)
    assert torch.load(W / 'tiny.pt', weights_only=True).keys() == {'encoder'}
    hs = torch.load(W / 'tiny-eval-heads.pt', weights_only=True)   # the committed head, where ref_extras.py reads it
    assert torch.equal(hs['le']['weight'], le['weight']) and (hs['feature_dim'], hs['n_classes']) == (64, 10)
    # the lease's own flags (EVAL; at CPU size: 8 images) with the columns checked here: the default flags' evaluation
    # (every protocol, AutoAttack, Table 3) runs in test_repro_session_evaluates_a_preloaded_run_without_training_it
    env.update(SMOKE='1', S=str(S), RUNS='tiny:smoke:0', PRELOAD='tiny', WEIGHTS_DIR=str(W), DEADLINE='400',
               PYTHON=sys.executable, GPUS='0', PROCS='1', EVAL_FROM='f16', EVAL='--no-rle --attacks clean,linf_8')
    r = subprocess.run(['bash', str(ROOT / 'tools/gpu/repro_session.sh')], env=env, cwd=work, capture_output=True, text=True, timeout=420)
    events = (S / 'events.log').read_text()
    assert r.returncode == 0 and 'tiny: preloaded (weights checked)' in events and 'tiny: eval (fp32) exit 0' in events, events
    rec = json.loads((S / 'eval' / 'fp32' / 'tiny-eval.json').read_text())
    assert rec['run'] == 'tiny' and 'linf_8' in rec['metrics'] and rec['train']['weights_kind'].startswith('encoder alone'), rec.get('train')
    # the extras of a later lease: the committed head attacked on the committed encoder, the record's images
    x = subprocess.run([sys.executable, str(ROOT / 'tools/gpu/ref_extras.py'), 'tiny', '--runs', str(S / 'runs'), '--heads', str(W),
                        '--records', str(S / 'eval' / 'fp32'), '--out', str(tmp_path / 'extras'), '--autoattack-n', '4',
                        '--columns', 'l2_05', '--shards', '1', '--smoke', '--device', 'cpu'], env=env, capture_output=True, text=True, timeout=300)
    assert x.returncode == 0, x.stdout[-2000:] + x.stderr[-2000:]
    ex = json.loads((tmp_path / 'extras' / 'tiny-ref-extras.json').read_text())
    assert ex['per_image']['test_index'] == rec['per_image']['test_index'] and ex['ref_check']['l2_05']['n'] == 4
    # an encoder of another run under this name: refused
    other = torch.load(W / 'tiny.pt', weights_only=True); k = next(iter(other['encoder']))
    other['encoder'][k] = other['encoder'][k] + 1; torch.save(other, W / 'tiny.pt')
    S2 = tmp_path / 's2'
    subprocess.run(['bash', str(ROOT / 'tools/gpu/repro_session.sh')], env=dict(env, S=str(S2)), cwd=work, capture_output=True, text=True, timeout=120)
    assert 'tiny: not preloaded (missing or wrong weights)' in (S2 / 'events.log').read_text()


def test_ref_extras_attacks_the_given_head_on_the_records_images(tmp_path):
    "ref_extras.py: the LE head given (not refitted) on the float16 encoder, the record's test images, the worst case against the reference on the same images."
    import dataclasses, subprocess, sys
    import torch
    pytest.importorskip('pyautoattack')
    from swaro_nb.config import make_config
    from swaro_nb.core import pack_codes
    from swaro_nb.data import load_cifar, subset_indices
    from swaro_nb.runs import untrained_run, export_weights, load_run
    from swaro_nb.evaluate import feature_dim
    te = load_cifar('cifar10', False)
    cfg = make_config('smoke', name='tiny', subset_per_class=10, batch_size=50, width=8, proj_hidden=64, n_clusters=10)
    d = tmp_path / 'runs' / 'tiny'
    untrained_run(d, cfg, load_cifar('cifar10').images[:256].float() / 255)
    export_weights(d, d / 'weights.pt', half=True); (d / 'checkpoint.pt').unlink()
    (d / 'config.json').write_text(json.dumps(dataclasses.asdict(cfg)))
    net, method, _, _ = load_run(d, 'cpu'); enc = method.encoder(net)
    idx = subset_indices(len(te.labels), 8, 0); x, y = te.images[idx].float() / 255, te.labels[idx]
    with torch.no_grad(): f = enc(x)
    fd = feature_dim(enc, 'cpu')
    head = torch.nn.Linear(fd, 10)   # nearest class mean of these very images: the head classifies several of them correctly
    with torch.no_grad():
        means = torch.stack([f[y == c].mean(0) if (y == c).any() else torch.zeros(fd) for c in range(10)])
        head.weight.copy_(means - f.mean(0)); head.bias.zero_()
        clean = (head(f).argmax(1) == y).float().mean().item() * 100
    hd = tmp_path / 'heads'; hd.mkdir()
    torch.save(dict(le=head.state_dict(), feature_dim=fd, n_classes=10), hd / 'tiny-eval-heads.pt')
    out = tmp_path / 'out'
    r = subprocess.run([sys.executable, str(ROOT / 'tools/gpu/ref_extras.py'), 'tiny', '--runs', tmp_path / 'runs', '--heads', hd, '--out', out,
                        '--n-test', '8', '--autoattack-n', '4', '--columns', 'l2_05', '--shards', '2', '--smoke', '--device', 'cpu'],
                       capture_output=True, text=True, env=dict(__import__('os').environ, OMP_NUM_THREADS='1'), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    rec = json.loads((out / 'tiny-ref-extras.json').read_text())
    assert rec['kind'] == 'ref-extras' and rec['head'] == 'le' and rec['metrics']['clean'] == pytest.approx(clean) and clean >= 25
    rc = rec['ref_check']['l2_05']
    assert rc['n'] == 4 and rc['reference_key'] == 'ref_aa_l2_05' and rc['gap'] == pytest.approx(rc['column'] - rc['reference'])
    assert set(rec['metrics']) >= {'clean', 'l2_05', 'ref_aa_l2_05'} and rec['budgets']['shards'] == 2
    assert rec['per_image']['test_index'] == pack_codes(idx, 'uint16') and set(rec['per_image']['correct']['le']) >= {'clean', 'l2_05', 'ref_aa_l2_05'}
    import hashlib
    assert rec['weights']['sha256'] == hashlib.sha256((d / 'weights.pt').read_bytes()).hexdigest()
    # --against: the worst case alone (no reference run), image by image against the record's reference bits
    r = subprocess.run([sys.executable, str(ROOT / 'tools/gpu/ref_extras.py'), 'tiny', '--runs', tmp_path / 'runs', '--heads', hd, '--out', out,
                        '--n-test', '8', '--columns', 'l2_05', '--smoke', '--device', 'cpu', '--against', out / 'tiny-ref-extras.json'],
                       capture_output=True, text=True, env=dict(__import__('os').environ, OMP_NUM_THREADS='1'), timeout=600)
    assert r.returncode == 0, r.stdout + r.stderr
    wc = json.loads((out / 'tiny-worst-check.json').read_text())
    assert wc['kind'] == 'worst-check' and 'ref_aa_l2_05' not in wc['metrics'] and 'ref_aa_l2_05' not in wc['budgets']['attacks']
    from swaro_nb.core import unpack_bits
    w = unpack_bits(wc['per_image']['correct']['le']['l2_05'], 8)[:4]; ref = unpack_bits(rec['per_image']['correct']['le']['ref_aa_l2_05'], 8)[:4]
    v = wc['ref_check']['l2_05']
    assert v['n'] == 4 and v['reference'] == pytest.approx(rc['reference']) and v['column'] == pytest.approx(100 * w.mean())
    assert (v['only_reference'], v['only_column']) == (int((w & ~ref).sum()), int((ref & ~w).sum()))
    # an evaluation record of other test images is refused; the other runs would still be done (exit 1)
    recs = tmp_path / 'recs'; recs.mkdir()
    (recs / 'tiny-eval.json').write_text(json.dumps(dict(budgets=dict(n_test=8, seed=0), per_image=dict(test_index=pack_codes(torch.arange(8), 'uint16')))))
    r = subprocess.run([sys.executable, str(ROOT / 'tools/gpu/ref_extras.py'), 'tiny', '--runs', tmp_path / 'runs', '--heads', hd, '--out', out,
                        '--records', recs, '--device', 'cpu'], capture_output=True, text=True, timeout=300)
    assert r.returncode == 1 and 'are not those of' in r.stderr


def test_repro_session_evaluates_from_the_float16_weights_it_exports(tmp_path):
    "EVAL_FROM=f16: the weights come back in pieces with their sha256 before the evaluation, which reads exactly them; EVAL=none only trains."
    import hashlib, os, subprocess, sys, tarfile
    import torch
    work = tmp_path / 'work'; work.mkdir(); (work / 'tools').symlink_to(ROOT / 'tools')
    env = dict(os.environ, OMP_NUM_THREADS='1', MPLBACKEND='Agg', SMOKE='1', PYTHON=sys.executable, GPUS='0', EPOCHS='1', DEADLINE='400',
               EVAL_RESERVE='200', RUNS='tiny:smoke:0', WEIGHTS='1', EVAL_FROM='f16', TSNE='0', EVAL='--no-rle --attacks clean')
    S = tmp_path / 's'
    r = subprocess.run(['bash', str(ROOT / 'tools/gpu/repro_session.sh')], env=dict(env, S=str(S)), cwd=work, capture_output=True, text=True, timeout=420)
    events = (S / 'events.log').read_text()
    assert r.returncode == 0 and 'tiny: eval (fp32) exit 0' in events, events + r.stderr[-2000:]
    m = re.search(r'tiny: weights \(float16\) in (\d+) piece\(s\), sha256 ([0-9a-f]{64}), (\d+) bytes', events)
    assert m and events.index('weights (float16)') < events.index('tiny: evaluating'), events   # exported before the evaluation
    blob = b''.join(f.read_bytes() for f in sorted((S / 'weights').glob('tiny.weights.pt.*')))
    assert hashlib.sha256(blob).hexdigest() == m.group(2) and len(blob) == int(m.group(3))
    assert (S / 'f16' / 'tiny' / 'weights.pt').read_bytes() == blob and not (S / 'f16' / 'tiny' / 'checkpoint.pt').exists()
    rec = json.loads((S / 'eval' / 'fp32' / 'tiny-eval.json').read_text())
    assert rec['run'] == 'tiny' and rec['run_dir'] == str(S / 'f16' / 'tiny') and list(rec['metrics']) == ['clean']
    sd = torch.load(S / 'f16' / 'tiny' / 'weights.pt', weights_only=True)
    assert all(v.dtype == torch.float16 for v in sd.values() if v.is_floating_point())
    packed = tarfile.open(S / 'pack.tar').getnames()
    assert 'eval/fp32/tiny-eval-heads.pt' in packed and not any(n.startswith('f16') or '.weights.pt' in n for n in packed), packed
    S2 = tmp_path / 's2'
    subprocess.run(['bash', str(ROOT / 'tools/gpu/repro_session.sh')], env=dict(env, S=str(S2), EVAL='none'), cwd=work, capture_output=True, text=True, timeout=420)
    ev2 = (S2 / 'events.log').read_text()
    assert 'tiny: EVAL=none, not evaluated' in ev2 and 'weights (float16) in' in ev2 and 'evaluating' not in ev2, ev2
