"""swaro_nb.hub: packing a run into weights pieces and loading it back (from a folder, the checkout's weights/ and an
http(s) address), the errors for bad pieces and the budget, the RobustBench export in a fresh interpreter, and every
model committed in weights/ checked against its evaluation record on 200 test images."""
import functools, hashlib, http.server, io, json, os, shutil, subprocess, sys, threading, warnings
from pathlib import Path
import pytest
import torch
import torch.nn.functional as F

from swaro_nb import hub
from swaro_nb.config import make_config
from swaro_nb.core import extract_features
from swaro_nb.data import load_cifar
from swaro_nb.evaluate import eval_data
from swaro_nb.linear import LinearClassifier
from swaro_nb.runs import untrained_run

ROOT = Path(__file__).resolve().parents[1]
TINY = dict(subset_per_class=10, batch_size=50, width=8, proj_hidden=64, epochs=2, attack_warmup_epochs=1, n_clusters=10,
            attack_steps=2, monitor_every=2, monitor_bank=100, monitor_test=50, ckpt_every=1, progress=False)
PIECE = 100_000   # the stand-in's encoder (about 350 kB in float16) spans several pieces of this size


def _ridge_head(f, y, lam):
    "A linear head from ridge regression of one-hot labels on features (float64)."
    A = torch.cat([f.double(), torch.ones(len(f), 1, dtype=torch.float64)], 1)
    W = torch.linalg.solve(A.T @ A + lam * torch.eye(A.shape[1], dtype=torch.float64), A.T @ F.one_hot(y, 10).double())
    return dict(weight=W[:-1].T.float().contiguous(), bias=W[-1].float().contiguous())


@pytest.fixture(scope='module')
def packed(tmp_path_factory):
    """A stand-in SwARo run (width 8, batch-norm statistics calibrated on 512 images), two hand-made heads, an LE and an
    rLE-only evaluation record (heads files beside them, as evaluations write them), packed into a weights folder."""
    tmp = tmp_path_factory.mktemp('hub')
    net = untrained_run(tmp / 'runs' / 'tiny', make_config('smoke', name='tiny', **TINY), load_cifar('cifar10').images[:512].float() / 255)
    data = eval_data('cifar10', 100, 200, 0)
    feats = extract_features(net.encoder, data['train_images'], device='cpu', amp=False)
    heads = dict(le=_ridge_head(feats, data['train_labels'], 1e-2), rle=_ridge_head(feats, data['train_labels'], 30.0))
    x, y = data['test_images'].float() / 255, data['test_labels']
    def reference(h):
        m = LinearClassifier(net.encoder, 64, 10); m.head.load_state_dict(heads[h]); return m.eval()
    with torch.no_grad(): acc = {h: 100 * (reference(h)(x).argmax(1) == y).double().mean().item() for h in heads}
    assert acc['le'] > 15 and acc['le'] != acc['rle'], acc
    def record(path, metrics, h):
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(dict(kind='eval', run='tiny', method='swaro', dataset='cifar10', metrics=metrics,
                                        budgets=dict(test_images=200, n_test=200, seed=0, autoattack_images=200))))
        torch.save({h: heads[h], 'feature_dim': 64, 'n_classes': 10}, path.with_name('tiny-eval-heads.pt'))
        return path
    records = [record(tmp / 'eval' / 'tiny-eval.json', dict(clean=acc['le'], linf_8=3.5, ref_aa_linf_8=3.0), 'le'),
               record(tmp / 'eval' / 'rle' / 'tiny-eval.json', dict(rle=dict(clean=acc['rle'], linf_8=6.5)), 'rle')]
    W = tmp / 'weights'
    entry = hub.pack_pretrained(tmp / 'runs' / 'tiny', records=records, dest=W, piece_bytes=PIECE)
    return dict(tmp=tmp, net=net, heads=heads, reference=reference, acc=acc, x=x[:64], records=records, W=W, entry=entry)


def _copy(packed, tmp_path) -> Path:
    "A copy of the packed weights folder a test may damage."
    return Path(shutil.copytree(packed['W'], tmp_path / 'weights'))


def _rounded(m):
    "A float32 module whose floating weights were rounded to float16 and back (what packing keeps)."
    import copy
    m = copy.deepcopy(m)
    with torch.no_grad():
        for t in m.state_dict().values():
            if t.is_floating_point(): t.copy_(t.half().float())
    return m


def test_round_trip(packed):
    "The loaded classifiers equal the float32 network with float16-rounded weights, and stay within float16's precision of it."
    x, net = packed['x'], packed['net']
    for h in ('le', 'rle'):
        model = hub.load_pretrained('tiny', h, packed['W'], 'cpu')
        assert isinstance(model, LinearClassifier) and not model.training
        with torch.no_grad():
            got, ref = model(x), packed['reference'](h)(x)
            ref16 = F.linear(_rounded(net.encoder)(x), packed['heads'][h]['weight'], packed['heads'][h]['bias'])
        torch.testing.assert_close(got, ref16, rtol=1e-5, atol=1e-5)
        assert ((got - ref).norm() / ref.norm()).item() < 1e-2
    enc = hub.load_pretrained('tiny', None, packed['W'], 'cpu')
    with torch.no_grad(): torch.testing.assert_close(enc(x), _rounded(net.encoder)(x), rtol=1e-5, atol=1e-5)


def test_pieces_and_manifest(packed):
    "Every piece is within the limit, not git-ignored, and has the size and sha256 the manifest says; the encoder is float16 without the projection head."
    W, e = packed['W'], packed['entry']
    assert hub.PIECE_BYTES == 15 * 2**20 and hub.BUDGET_BYTES == 150_000_000
    man = json.loads((W / 'MANIFEST.json').read_text())
    assert man['models']['tiny'] == json.loads(json.dumps(e)) and man['version'] == 1
    pieces = [p for f in e['files'].values() for p in f['pieces']]
    assert len(e['files']['encoder']['pieces']) >= 3
    on_disk = sorted(p.relative_to(W).as_posix() for p in W.rglob('*') if p.is_file())
    assert on_disk == sorted([p['path'] for p in pieces] + ['MANIFEST.json'])
    for p in pieces:
        b = (W / p['path']).read_bytes()
        assert len(b) == p['bytes'] <= PIECE and hashlib.sha256(b).hexdigest() == p['sha256']
        # the same name inside the repository's weights/ is tracked by git (pieces are never *.pt)
        r = subprocess.run(['git', 'check-ignore', '-q', f"weights/{p['path']}"], cwd=ROOT)
        assert r.returncode == 1, f"weights/{p['path']} would be git-ignored"
    for f in e['files'].values():
        assert hashlib.sha256(b''.join((W / p['path']).read_bytes() for p in f['pieces'])).hexdigest() == f['sha256']
    enc = torch.load(io.BytesIO(b''.join((W / p['path']).read_bytes() for p in e['files']['encoder']['pieces'])), weights_only=True)
    assert list(enc) == list(packed['net'].encoder.state_dict())
    assert {v.dtype for v in enc.values() if v.is_floating_point()} == {torch.float16}
    assert e['heads']['le']['metrics']['clean'] == packed['acc']['le'] and e['heads']['rle']['metrics']['clean'] == packed['acc']['rle']
    assert e['records'] == [str(r.resolve()) for r in packed['records']] and e['config']['width'] == 8


@pytest.mark.parametrize('damage', ['corrupt', 'missing', 'both'])
def test_bad_piece_named(packed, tmp_path, damage):
    "A corrupt or missing piece gives one error naming it (and both when there are two) with how to get it back."
    W = _copy(packed, tmp_path)
    p1, p2 = (W / p['path'] for p in packed['entry']['files']['encoder']['pieces'][1:3])
    if damage in ('corrupt', 'both'): b = p1.read_bytes(); p1.write_bytes(b[:100] + bytes([b[100] ^ 0xFF]) + b[101:])
    if damage in ('missing', 'both'): p2.unlink()
    with pytest.raises(hub.WeightsError) as ei: hub.load_pretrained('tiny', 'le', W, 'cpu')
    msg = str(ei.value)
    assert ('tiny/encoder.part1: corrupt' in msg) == (damage != 'missing')
    assert ('tiny/encoder.part2: missing' in msg) == (damage != 'corrupt')
    assert f"{2 if damage == 'both' else 1} bad piece" in msg and f'copy tiny/encoder.part' in msg
    os.environ['SWARO_WEIGHTS'] = str(W)   # the checkout's own weights/: the fix is a git checkout
    try:
        with pytest.raises(hub.WeightsError, match=r'git checkout -- weights/tiny/encoder\.part'): hub.load_pretrained('tiny', device='cpu')
    finally: del os.environ['SWARO_WEIGHTS']


def test_budget_refused_and_nothing_written(packed, tmp_path):
    "A packing that would pass the budget is refused before it writes anything; within it, a model is added or replaced."
    W = _copy(packed, tmp_path)
    before = {p: p.read_bytes() for p in W.rglob('*') if p.is_file()}
    used = sum(map(len, before.values()))
    with pytest.raises(hub.WeightsError, match='over its budget'):
        hub.pack_pretrained(packed['tmp'] / 'runs' / 'tiny', 'tiny2', dest=W, budget_bytes=used + 10_000)
    assert {p: p.read_bytes() for p in W.rglob('*') if p.is_file()} == before
    hub.pack_pretrained(packed['tmp'] / 'runs' / 'tiny', 'tiny2', records=packed['records'][:1], dest=W)
    assert hub.list_pretrained(W) == ['tiny', 'tiny2'] and list(hub.pretrained_info('tiny2', W)['heads']) == ['le']
    assert sorted(p.name for p in W.iterdir()) == ['MANIFEST.json', 'tiny', 'tiny2']


def test_records_and_heads_checked(packed, tmp_path):
    "A record of another run, two records of one head, a head that does not fit the encoder, a bad name: clear errors."
    run, recs = packed['tmp'] / 'runs' / 'tiny', packed['records']
    other = tmp_path / 'other-eval.json'; other.write_text(json.dumps({**json.loads(recs[0].read_text()), 'run': 'other'}))
    with pytest.raises(hub.WeightsError, match="is not an evaluation record of run 'tiny'"): hub.pack_pretrained(run, records=[other], dest=tmp_path / 'w')
    with pytest.raises(hub.WeightsError, match='two records evaluate the le head'): hub.pack_pretrained(run, records=[recs[0], recs[0]], dest=tmp_path / 'w')
    bad = dict(le=dict(weight=torch.zeros(10, 32), bias=torch.zeros(10)))
    with pytest.raises(hub.WeightsError, match='not a linear layer on 64-d features'): hub.pack_pretrained(run, heads=bad, dest=tmp_path / 'w')
    with pytest.raises(hub.WeightsError, match="name 'a/b' must be"): hub.pack_pretrained(run, 'a/b', dest=tmp_path / 'w')
    lone = tmp_path / 'lone' / 'tiny-eval.json'; lone.parent.mkdir(); shutil.copy(recs[0], lone)   # a record without its heads file
    with pytest.warns(UserWarning, match='packed without it'): e = hub.pack_pretrained(run, records=[lone], dest=tmp_path / 'w')
    assert e['heads'] == {} and list(e['files']) == ['encoder']
    assert not (tmp_path / 'w' / 'tiny').exists() or hub.list_pretrained(tmp_path / 'w') == ['tiny']


def test_http_root(packed, tmp_path, monkeypatch):
    "An http(s) root: manifest and pieces downloaded into the cache with the same checks; a damaged cached piece is fetched again."
    W = _copy(packed, tmp_path)
    monkeypatch.setenv('SWARO_CACHE', str(tmp_path / 'cache'))
    class Quiet(http.server.SimpleHTTPRequestHandler):
        def log_message(self, *a): pass
    srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), functools.partial(Quiet, directory=str(W)))
    threading.Thread(target=srv.serve_forever, daemon=True).start()
    url = f'http://127.0.0.1:{srv.server_address[1]}/'
    try:
        x, local = packed['x'], hub.load_pretrained('tiny', 'rle', W, 'cpu')
        assert hub.list_pretrained(url) == ['tiny']
        with torch.no_grad(): torch.testing.assert_close(hub.load_pretrained('tiny', 'rle', url, 'cpu')(x), local(x), rtol=0, atol=0)
        cached = sorted((tmp_path / 'cache' / 'weights').rglob('*.part*'))
        assert len(cached) == len(packed['entry']['files']['encoder']['pieces']) + 1
        cached[0].write_bytes(b'damaged')
        with torch.no_grad(): torch.testing.assert_close(hub.load_pretrained('tiny', 'rle', url, 'cpu')(x), local(x), rtol=0, atol=0)
        p = W / packed['entry']['files']['heads']['pieces'][0]['path']
        p.write_bytes(p.read_bytes()[:-1])   # the server's copy is truncated: named, and not cached
        for c in cached: c.unlink()
        with pytest.raises(hub.WeightsError, match=r"1 bad piece: tiny/heads\.part0: corrupt"): hub.load_pretrained('tiny', 'rle', url, 'cpu')
    finally: srv.shutdown(); srv.server_close()
    with pytest.warns(UserWarning, match='using the copy cached'): assert hub.list_pretrained(url) == ['tiny']   # offline
    monkeypatch.setenv('SWARO_CACHE', str(tmp_path / 'empty-cache'))
    with pytest.raises(hub.WeightsError, match='cannot download'): hub.list_pretrained(url)


def test_check_pretrained(packed):
    "The stand-in's records measured its heads on the same 200 images: the check agrees to one image, and fails a record that is off."
    for h in ('le', 'rle'):
        r = hub.check_pretrained('tiny', h, root=packed['W'], device='cpu')
        assert r['ok'] and r['n'] == r['record_images'] == 200 and abs(r['acc'] - packed['acc'][h]) <= 0.5, r


def test_export_robustbench(packed, tmp_path):
    "The exported module, imported by a fresh interpreter without swaro_nb, gives load_pretrained's logits; the claim carries the record's numbers."
    W = packed['W']
    paths = hub.export_robustbench('tiny', tmp_path / 'rb', root=W, model_name='Tiny2026Swaro', authors='A. Author')
    torch.save(packed['x'], tmp_path / 'x.pt')
    code = (f"import sys, torch; sys.path.insert(0, {str(tmp_path / 'rb')!r}); import Tiny2026Swaro as M; m = M.load_model(); "
            "assert not any(k.startswith('swaro_nb') for k in sys.modules), 'the module imported swaro_nb'; "
            f"torch.save(m(torch.load({str(tmp_path / 'x.pt')!r})).detach(), {str(tmp_path / 'y.pt')!r})")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=tmp_path, env={**os.environ, 'PYTHONPATH': ''})
    assert r.returncode == 0, r.stderr
    with torch.no_grad(): want = hub.load_pretrained('tiny', 'le', W, 'cpu')(packed['x'])
    torch.testing.assert_close(torch.load(tmp_path / 'y.pt'), want, rtol=1e-5, atol=1e-5)
    info = json.loads(paths['model_info'].read_text())
    assert set(info) == {'link', 'name', 'authors', 'additional_data', 'number_forward_passes', 'dataset', 'venue', 'architecture',
                         'eps', 'clean_acc', 'reported', 'autoattack_acc', 'footnote'}
    assert (info['clean_acc'], info['autoattack_acc'], info['reported'], info['authors']) == (f"{packed['acc']['le']:.2f}", '3.00', '3.50', 'A. Author')
    assert '200 of the 10,000 test images' in info['footnote'] and 'first 200 of them' in info['footnote']
    rle = hub.robustbench_info('tiny', 'rle', root=W)
    assert rle['autoattack_acc'] is None and 'No reference AutoAttack was run' in rle['footnote'] and rle['reported'] == '6.50'


def test_pack_tool(packed, tmp_path):
    "tools/pack_weights.py packs a run with its records and checks each head against its record."
    r = subprocess.run([sys.executable, str(ROOT / 'tools' / 'pack_weights.py'), str(packed['tmp'] / 'runs' / 'tiny'), '--name', 'tool',
                        '--dest', str(tmp_path / 'w'), *sum((['--record', str(p)] for p in packed['records']), [])],
                       capture_output=True, text=True, env={**os.environ, 'OMP_NUM_THREADS': '1'})
    assert r.returncode == 0, r.stderr
    assert 'heads: le, rle' in r.stdout and r.stdout.count(': ok') == 2, r.stdout
    assert hub.list_pretrained(tmp_path / 'w') == ['tool']
    r = subprocess.run([sys.executable, str(ROOT / 'tools' / 'pack_weights.py'), str(tmp_path / 'nope'), '--dest', str(tmp_path / 'w')],
                       capture_output=True, text=True)
    assert r.returncode == 1 and 'error: run folder' in r.stderr and 'does not exist' in r.stderr, r.stderr


def test_export_with_normalisation(tmp_path):
    "An ACL encoder (ImageNet normalisation inside it, its dual batch norms resolved) exports with its mean and std, exactly."
    from swaro_nb.baselines import baseline_config
    cfg = baseline_config('acl', 'smoke', name='acl', width=8, proj_hidden=64, subset_per_class=10, batch_size=50)
    untrained_run(tmp_path / 'acl', cfg, load_cifar('cifar10').images[:256].float() / 255)
    rec = tmp_path / 'acl-eval.json'
    rec.write_text(json.dumps(dict(kind='eval', run='acl', dataset='cifar10', metrics=dict(clean=12.0), budgets=dict(test_images=10000))))
    head = dict(le=dict(weight=torch.randn(10, 64), bias=torch.randn(10)))
    hub.pack_pretrained(tmp_path / 'acl', heads=head, records=[rec], dest=tmp_path / 'w')
    paths = hub.export_robustbench('acl', tmp_path / 'rb', root=tmp_path / 'w')
    assert 'mean=[0.485, 0.456, 0.406], std=[0.229, 0.224, 0.225]' in paths['module'].read_text()
    x = torch.rand(8, 3, 32, 32); torch.save(x, tmp_path / 'x.pt')
    code = (f"import sys, torch; sys.path.insert(0, {str(tmp_path / 'rb')!r}); import acl as M; "
            f"torch.save(M.load_model()(torch.load({str(tmp_path / 'x.pt')!r})).detach(), {str(tmp_path / 'y.pt')!r})")
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, env={**os.environ, 'PYTHONPATH': ''})
    assert r.returncode == 0, r.stderr
    with torch.no_grad(): torch.testing.assert_close(torch.load(tmp_path / 'y.pt'), hub.load_pretrained('acl', 'le', tmp_path / 'w', 'cpu')(x), rtol=0, atol=0)
    info = json.loads(paths['model_info'].read_text())
    assert info['footnote'].count('all 10,000 test images') == 1 and info['reported'] is None and info['footnote'].endswith('is empty.')


def test_full_size_pieces(tmp_path):
    "A ResNet-18 of width 64 packs into two encoder pieces of at most 15 MiB (about 22 MB in float16); six such models fit the budget."
    untrained_run(tmp_path / 'big', make_config('c10-200', name='big'), load_cifar('cifar10').images[:64].float() / 255)
    e = hub.pack_pretrained(tmp_path / 'big', dest=tmp_path / 'w')
    sizes = [p['bytes'] for p in e['files']['encoder']['pieces']]
    assert len(sizes) == 2 and sizes[0] == 15 * 2**20 and 21e6 < sum(sizes) < 23e6, sizes
    assert 6 * sum(sizes) < hub.BUDGET_BYTES < 7 * sum(sizes)
    enc = hub.load_pretrained('big', None, tmp_path / 'w', 'cpu')
    assert enc.width == 64 and enc(torch.rand(2, 3, 32, 32)).shape == (2, 512)


def test_import_needs_no_weights(tmp_path):
    "A checkout without weights/ (the GPU host's sparse checkout, a pip install) imports the hub and lists no models."
    code = "import swaro_nb.hub as h; assert h.list_pretrained() == []; print('ok')"
    r = subprocess.run([sys.executable, '-c', code], capture_output=True, text=True, cwd=tmp_path,
                       env={**os.environ, 'SWARO_WEIGHTS': str(tmp_path / 'no-weights'), 'PYTHONPATH': str(ROOT)})
    assert r.returncode == 0 and r.stdout.strip() == 'ok', r.stderr


# --- the models committed in weights/ -------------------------------------------------------------------------------
def _committed() -> list:
    "(name, head) of every head with an evaluation record in the repository's weights/MANIFEST.json, or one skipped case saying why there is none."
    man = ROOT / 'weights' / 'MANIFEST.json'
    why = None
    if not man.is_file(): why = f'{man} is not in this checkout (a sparse checkout without weights/)'
    else:
        models = json.loads(man.read_text())['models']
        cases = [(n, h) for n, e in sorted(models.items()) for h, v in e['heads'].items()
                 if v.get('metrics') and not e.get('retired')]   # a retired model's pieces come from git history
        if cases: return cases
        why = ('weights/MANIFEST.json lists no models yet' if not models else
               f"weights/MANIFEST.json lists {', '.join(models)}, none with an evaluated head")
    return [pytest.param(None, None, marks=pytest.mark.skip(reason=why))]


def test_committed_weights_within_budget():
    "The committed weights/ folder stays within its budget, and its manifest lists exactly the pieces it holds."
    W = ROOT / 'weights'
    if not (W / 'MANIFEST.json').is_file(): pytest.skip('weights/ is not in this checkout')
    man = hub.read_manifest(W)
    files = {p.relative_to(W).as_posix(): p.stat().st_size for p in W.rglob('*') if p.is_file()}
    assert sum(files.values()) <= hub.BUDGET_BYTES, f'weights/ holds {sum(files.values()) / 1e6:.1f} MB'
    entries = {**man['models'], **man.get('states', {})}   # models and kept training states (hub.pack_state)
    here = {n: e for n, e in entries.items() if not e.get('retired')}
    listed = {p['path']: p['bytes'] for e in here.values() for f in e['files'].values() for p in f['pieces']}
    assert {k: v for k, v in files.items() if k not in ('MANIFEST.json', 'README.md')} == listed
    for n, e in entries.items():   # a retired entry's pieces are in the commit it names, exactly
        if not e.get('retired'): continue
        assert not (W / n).exists(), f'{n} is retired but weights/{n} is still there'
        if subprocess.run(['git', '-C', str(W), 'cat-file', '-e', e['retired']['revision']], capture_output=True).returncode:
            continue   # a shallow clone without that commit: the hub's own error covers it (10e_hub)
        for f in e['files'].values():
            for p in f['pieces']:
                b = subprocess.run(['git', '-C', str(W), 'show', f"{e['retired']['revision']}:./{p['path']}"], capture_output=True).stdout
                assert len(b) == p['bytes'] and hashlib.sha256(b).hexdigest() == p['sha256'], f"{n}: {p['path']} in history"


@pytest.fixture(scope='module')
def committed_check():
    """check(name, head): `hub.check_pretrained` of a committed model on the CPU, every head of it with a record in one call
    (made on the first of its tests): the encoder runs once on the record's images, not once per head."""
    done = {}
    def check(name, head):
        if name not in done:
            heads = [h for n, h in _committed() if n == name]
            done[name] = dict(zip(heads, hub.check_pretrained(name, heads, n=200, root=ROOT / 'weights', device='cpu')))
        return done[name][head]
    return check

@pytest.mark.parametrize('name,head', _committed())
def test_committed_model_matches_record(name, head, committed_check):
    "A committed model, loaded on the CPU, has the clean accuracy of its record on the first 200 of the record's test images."
    r = committed_check(name, head)
    assert (r['name'], r['head'], r['n']) == (name, head, 200)
    assert r['ok'], (f"{name} ({head}): {r['acc']:.2f}% on {r['n']} test images, the record says {r['record']:.2f}% on "
                     f"{r['record_images']} (allowed difference {r['tol']:.2f})")


def _bits(text: str, n: int):
    "Per-image correctness as the records store it (packbits, little bit order, base64), decoded with numpy alone."
    import base64, numpy as np
    return np.unpackbits(np.frombuffer(base64.b64decode(text), np.uint8), bitorder='little')[:n].astype(bool)


@pytest.mark.parametrize('check', sorted((ROOT / 'results' / 'checks').glob('reeval-*.json')), ids=lambda p: p.stem)
def test_committed_reevaluation_matches_record(check):
    """A committed model re-evaluated on a GPU (issue #35.5) matches the record its evaluation wrote: recomputed here from
    both records' per-image bits, on the same test images, every LE column of the record is within the check's 0.3 points,
    and the check file says what the records say."""
    c = json.loads(check.read_text())
    new, old = (json.loads((ROOT / c['files'][k]).read_text()) for k in ('reeval', 'record'))
    assert (new['run'], old['run']) == (c['run'], c['run']) and c['tol'] == 0.3
    pn, po = new['per_image'], old['per_image']
    assert pn['encoding'] == po['encoding'] == 'packbits-little-base64'
    assert pn['test_index'] == po['test_index'] and pn['n'] == po['n'] == c['n'] == old['budgets']['test_images']
    need = {'clean', 'linf_8', 'linf_16', 'l2_025', 'l2_05', 'l1_784', 'l1_12'}
    assert need <= set(c['columns']) <= set(po['correct']['le']) & set(pn['correct']['le'])
    for col, v in c['columns'].items():
        bn, bo = _bits(pn['correct']['le'][col], pn['n']), _bits(po['correct']['le'][col], po['n'])
        an, ao = 100 * bn.mean(), 100 * bo.mean()
        assert abs(an - new['metrics'][col]) < 1e-6 and abs(ao - old['metrics'][col]) < 1e-6, col   # bits = metrics
        assert (v['record'], v['reeval'], v['images_differ']) == (old['metrics'][col], new['metrics'][col], int((bn != bo).sum()))
        assert abs(an - ao) <= c['tol'], f"{col}: re-evaluation {an:.2f} against the record's {ao:.2f}"
    assert c['ok']


def test_pack_tool_states(packed, tmp_path):
    "tools/pack_weights.py --state wants a name for a file that is not a training checkpoint, and names a state it lacks."
    tool = [sys.executable, str(ROOT / 'tools' / 'pack_weights.py')]
    r = subprocess.run(tool + ['--state', str(packed['tmp'] / 'runs' / 'tiny' / 'checkpoint.pt'), '--dest', str(tmp_path / 'w')],
                       capture_output=True, text=True)   # untrained_run's file: weights and config, no optimiser
    assert r.returncode == 1 and 'is not a training checkpoint: name the state' in r.stderr, r.stderr
    assert not (tmp_path / 'w').exists()
    r = subprocess.run(tool + ['--unpack-state', 'nope.state', str(tmp_path / 'c.pt'), '--dest', str(packed['W'])],
                       capture_output=True, text=True)
    assert r.returncode == 1 and "no training state 'nope.state'" in r.stderr and not (tmp_path / 'c.pt').exists(), r.stderr
