"Training engine from outside: exact resume, checkpoint safety, bad configs, the console script."
import json, subprocess, sys
from pathlib import Path
import pytest, torch
from conftest import script
from swaro_nb.config import make_config, ConfigError
from swaro_nb.train import train, Trainer, CheckpointError

TINY = dict(subset_per_class=10, batch_size=50, width=8, proj_hidden=64, epochs=4, attack_warmup_epochs=1,
            n_clusters=10, attack_steps=2, monitor_every=2, monitor_bank=100, monitor_test=50, ckpt_every=1, progress=False)

@pytest.mark.parametrize('method', ['swaro', 'rocl'])
def test_interrupted_and_resumed_equals_uninterrupted(tmp_path, method):
    "2 epochs, a new process-like Trainer resuming from the checkpoint for 2 more == 4 epochs straight, bit for bit."
    full = train(make_config('smoke', name='full', out_dir=str(tmp_path), method=method, **TINY))
    part = train(make_config('smoke', name='part', out_dir=str(tmp_path), method=method, max_epochs_this_call=2, **TINY))
    assert part.epoch == 2
    resumed = train(make_config('smoke', name='part', out_dir=str(tmp_path), method=method, **TINY))
    assert resumed.epoch == 4
    a, b = full.net.state_dict(), resumed.net.state_dict()
    assert a.keys() == b.keys()
    for k in a: assert torch.equal(a[k], b[k]), k
    la = [r['loss'] for r in full.history]; lb = [r['loss'] for r in resumed.history]
    assert la == lb
    if method == 'swaro': assert torch.equal(full.method.pseudo, resumed.method.pseudo)

def test_time_limit_stops_checkpointed_and_resumes_exactly(tmp_path):
    "A time limit shorter than an epoch: one epoch per call, checkpoint and run.json at that epoch; chained calls == one run."
    full = train(make_config('smoke', name='full', out_dir=str(tmp_path), **{**TINY, 'epochs': 3}))
    cfg = lambda: make_config('smoke', name='tl', out_dir=str(tmp_path), time_limit_s=1e-6, **{**TINY, 'epochs': 3})
    t = train(cfg())
    assert t.epoch == 1
    assert torch.load(t.dir / 'checkpoint.pt', weights_only=False)['epoch'] == 1
    rec = json.loads((t.dir / 'run.json').read_text())
    assert (rec['epochs_done'], rec['epochs']) == (1, 3)
    for done in (2, 3): assert train(cfg()).epoch == done
    last = train(cfg())            # nothing left to do: no epoch runs, nothing changes
    assert last.epoch == 3
    a, b = full.net.state_dict(), last.net.state_dict()
    for k in a: assert torch.equal(a[k], b[k]), k
    with pytest.raises(ConfigError, match='time_limit_s'): make_config('smoke', time_limit_s=0).validate()

def test_checkpoint_is_atomic_and_complete(tmp_path):
    t = train(make_config('smoke', name='ck', out_dir=str(tmp_path), **{**TINY, 'epochs': 2}))
    files = sorted(p.name for p in t.dir.iterdir())
    assert 'checkpoint.pt' in files and not any('.tmp' in f for f in files)
    s = torch.load(t.dir / 'checkpoint.pt', weights_only=False)
    for k in ('model', 'opt', 'epoch', 'order_gen', 'gen', 'rng', 'torch_rng', 'method', 'config'): assert k in s
    assert s['epoch'] == 2 and s['method']['pseudo'] is not None and len(s['method']['pseudo']) == 100
    rec = json.loads((t.dir / 'run.json').read_text())
    for k in ('card', 'commit', 'date', 'method', 'epochs', 'train_seconds'): assert k in rec
    lines = (t.dir / 'metrics.jsonl').read_text().splitlines()
    assert [json.loads(l)['epoch'] for l in lines] == [1, 2]

def test_resume_refuses_a_different_run(tmp_path):
    train(make_config('smoke', name='x', out_dir=str(tmp_path), **{**TINY, 'epochs': 1}))
    with pytest.raises(CheckpointError, match='is a swaro width-8 run'):
        Trainer(make_config('smoke', name='x', out_dir=str(tmp_path), **{**TINY, 'epochs': 1, 'width': 16}))

@pytest.mark.parametrize('over,msg', [
    (dict(p=-0.1), 'p: is a probability'), (dict(batch_size=2000), 'exceeds the 1000 training images'),
    (dict(method='moco'), 'unknown method'), (dict(dataset='mnist'), 'unknown dataset'),
    (dict(epochs=0), 'epochs: must be >= 1'), (dict(eps=-1.0), 'eps: must be >= 0'), (dict(loss_form='x'), 'loss_form')])
def test_bad_configs(over, msg):
    from swaro_nb.methods import check_config
    with pytest.raises(ConfigError, match=msg): check_config(make_config('smoke', **over))

def test_console_script_trains_and_reports_errors(tmp_path):
    r = subprocess.run([script('swaro_train'), '--preset', 'smoke', '--name', 'cli', '--out-dir', str(tmp_path), '--epochs', '1',
                        '--subset-per-class', '10', '--batch-size', '50', '--monitor-every', '1', '--monitor-bank', '100',
                        '--monitor-test', '50', '--progress', 'false'], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr
    assert (tmp_path / 'cli' / 'checkpoint.pt').exists() and 'epochs done: 1/1' in r.stdout
    r = subprocess.run([script('swaro_train'), '--preset', 'smoke', '--batch-size', '1', '--out-dir', str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and r.stderr.startswith('swaro_train: error:') and 'Traceback' not in r.stderr

def test_truncated_checkpoint_is_reported_and_kept(tmp_path):
    "A 100-byte checkpoint: one clear error line from the console script, exit 2, the file left as it was."
    d = tmp_path / 'smoke'; d.mkdir(); (d / 'checkpoint.pt').write_bytes(b'x' * 100)
    r = subprocess.run([script('swaro_train'), '--preset', 'smoke', '--name', 'smoke', '--out-dir', str(tmp_path)], capture_output=True, text=True)
    assert r.returncode == 2 and 'truncated or corrupt' in r.stderr and '--name' in r.stderr and 'Traceback' not in r.stderr, r.stderr
    assert (d / 'checkpoint.pt').read_bytes() == b'x' * 100

def test_missing_data_root_leaves_no_run_folder(tmp_path):
    r = subprocess.run([script('swaro_train'), '--preset', 'smoke', '--name', 'x', '--out-dir', str(tmp_path / 'runs'),
                        '--data-root', str(tmp_path / 'nonexistent')], capture_output=True, text=True)
    assert r.returncode == 2 and 'swaro_data fetch cifar10' in r.stderr and 'Traceback' not in r.stderr, r.stderr
    assert not (tmp_path / 'runs').exists()

def test_help_shows_the_presets_defaults():
    r = subprocess.run([script('swaro_train'), '--preset', 'smoke', '--help'], capture_output=True, text=True)
    assert r.returncode == 0 and 'default 6 (preset smoke)' in r.stdout and '_MISSING_TYPE' not in r.stdout

def test_rocl_code_objective_trains(tmp_path):
    "RoCL as its official code trains (c10-200-rocl's objective and attack settings) runs and its loss falls on a tiny budget."
    from swaro_nb.config import ROCL_CODE
    over = {k: v for k, v in ROCL_CODE.items() if k not in ('batch_size', 'proj_hidden', 'sync_bn')}
    t = train(make_config('smoke', name='rc', out_dir=str(tmp_path), **{**TINY, 'epochs': 3, **over}))
    assert t.cfg.loss_form == 'rocl-code' and t.cfg.attack_detach_keys and len(t.history) == 3
    assert all(torch.isfinite(torch.tensor(r['loss'])) for r in t.history)

def test_random_target_swaro_trains_without_clusters(tmp_path):
    "SwARo with swaro_targets='random' (the clusters' ablation): no k-means at any epoch, the SwARo attack on every batch after warm-up, beta = -1 on nearly every pair."
    t = train(make_config('smoke', name='rt', out_dir=str(tmp_path), swaro_targets='random', p=1.0, **{**TINY, 'epochs': 3}))
    assert t.method.pseudo is None and not any('cluster_seconds' in r for r in t.history)
    after = [r for r in t.history if r['epoch'] > t.cfg.attack_warmup_epochs]
    assert after and all(r['swaro_batches'] == 1.0 for r in after)
    assert all(0.9 < r['frac_neg'] <= 1.0 for r in after)   # 1 - (fixed points of a permutation of 50) / 50
    assert all(torch.isfinite(torch.tensor(r['loss'])) for r in t.history)
