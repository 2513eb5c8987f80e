"Training engine from outside: exact resume, checkpoint safety, bad configs, the console script."
import json, os, re, signal, socket, subprocess, sys, time
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
    "Each setting that changes what is computed, width and epochs among them, is refused on resume with both values; nothing is written."
    train(make_config('smoke', name='x', out_dir=str(tmp_path), **{**TINY, 'epochs': 2}))
    before = {p.name: p.stat().st_mtime_ns for p in (tmp_path / 'x').iterdir()}
    for over, msg in ((dict(width=16), 'was trained with width=8; this call asks for width=16'),
                      (dict(epochs=1), 'was trained with epochs=2; this call asks for epochs=1'),   # fewer epochs than are done
                      (dict(lr=0.5, seed=7), 'was trained with lr=0.1, seed=0; this call asks for lr=0.5, seed=7')):
        with pytest.raises(CheckpointError, match=re.escape(msg) + '.*--name.*--overwrite'):
            Trainer(make_config('smoke', name='x', out_dir=str(tmp_path), **{**TINY, 'epochs': 2, **over}))
    assert {p.name: p.stat().st_mtime_ns for p in (tmp_path / 'x').iterdir()} == before

@pytest.mark.parametrize('over,msg', [
    (dict(p=-0.1), 'p: is a probability'), (dict(batch_size=2000), 'exceeds the 1000 training images'),
    (dict(method='moco'), 'unknown method'), (dict(dataset='mnist'), 'unknown dataset'),
    (dict(epochs=0), 'epochs: must be >= 1'), (dict(eps=-1.0), 'eps: must be >= 0'), (dict(loss_form='x'), 'loss_form')])
def test_bad_configs(over, msg):
    from swaro_nb.methods import check_config
    with pytest.raises(ConfigError, match=msg): check_config(make_config('smoke', **over))

def test_console_script_trains_and_reports_errors(tmp_path, console):
    r = console('swaro_train', '--preset', 'smoke', '--name', 'cli', '--out-dir', str(tmp_path), '--epochs', '1',
                '--subset-per-class', '10', '--batch-size', '50', '--monitor-every', '1', '--monitor-bank', '100',
                '--monitor-test', '50', '--progress', 'false')
    assert r.returncode == 0, r.stderr
    assert (tmp_path / 'cli' / 'checkpoint.pt').exists() and 'epochs done: 1/1' in r.stdout
    r = console('swaro_train', '--preset', 'smoke', '--batch-size', '1', '--out-dir', str(tmp_path))
    assert r.returncode == 2 and r.stderr.startswith('swaro_train: error:') and 'Traceback' not in r.stderr

def test_truncated_checkpoint_is_reported_and_kept(tmp_path, console):
    "A 100-byte checkpoint: one clear error line from the console script, exit 2, the file left as it was."
    d = tmp_path / 'smoke'; d.mkdir(); (d / 'checkpoint.pt').write_bytes(b'x' * 100)
    r = console('swaro_train', '--preset', 'smoke', '--name', 'smoke', '--out-dir', str(tmp_path))
    assert r.returncode == 2 and 'truncated or corrupt' in r.stderr and '--name' in r.stderr and 'Traceback' not in r.stderr, r.stderr
    assert (d / 'checkpoint.pt').read_bytes() == b'x' * 100

def test_missing_data_root_leaves_no_run_folder(tmp_path, console):
    r = console('swaro_train', '--preset', 'smoke', '--name', 'x', '--out-dir', str(tmp_path / 'runs'),
                '--data-root', str(tmp_path / 'nonexistent'))
    assert r.returncode == 2 and 'swaro_data fetch cifar10' in r.stderr and 'Traceback' not in r.stderr, r.stderr
    assert not (tmp_path / 'runs').exists()

def test_help_shows_the_presets_defaults(console):
    r = console('swaro_train', '--preset', 'smoke', '--help')
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


# ------------------------------------------------------------- one history, one writer, clean stops, a full disk

def _epochs(d: Path) -> list:
    p = d / 'metrics.jsonl'
    return [json.loads(l)['epoch'] for l in p.read_text().splitlines() if l.strip()] if p.exists() else []

def _ckpt_epoch(d: Path) -> int: return torch.load(d / 'checkpoint.pt', weights_only=False)['epoch']

def _wait(proc, ready, timeout=300):
    "Poll until `ready()` (every 20 ms), failing if the process ends first."
    t = time.time()
    while not ready():
        assert proc.poll() is None, f"the run ended early: {proc.communicate()}"
        assert time.time() - t < timeout, 'timed out'
        time.sleep(0.02)

def test_killed_doubled_stopped_and_full_runs_leave_one_history(tmp_path):
    """One tiny run (40 epochs of about a second, checkpoint every 3), through the console script, calls one after the
    other as a user would make them: SIGKILL between checkpoints; the same command again, which takes the dead call's
    lock over and cuts the history back to the checkpoint, while a second identical command is refused naming the
    first; SIGTERM, then a call on a disk too small for the checkpoint (`ulimit -f`), then Ctrl-C (SIGINT). After each,
    the history is each epoch once, in order, up to the checkpoint's epoch."""
    d = tmp_path / 'k'
    cmd = [script('swaro_train'), '--preset', 'smoke', '--name', 'k', '--out-dir', str(tmp_path), '--epochs', '40', '--subset-per-class', '10',
           '--batch-size', '50', '--width', '8', '--proj-hidden', '64', '--n-clusters', '10', '--attack-steps', '1',
           '--attack-warmup-epochs', '1', '--monitor-every', '0', '--ckpt-every', '3', '--progress', 'false']
    env = {**os.environ, 'OMP_NUM_THREADS': '1'}
    start = lambda *extra: subprocess.Popen([*cmd, *extra], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True, env=env)
    def one_history():   # the metrics are epochs 1..N once each, N the checkpoint's epoch; no temporary file
        n = _ckpt_epoch(d)
        assert _epochs(d) == list(range(1, n + 1)), (_epochs(d), n)
        assert not [p.name for p in d.iterdir() if '.tmp' in p.name or p.name.startswith('.lock.')]
        return n

    # 1. SIGKILL between two checkpoints: lines of epochs after the checkpoint, and the dead call's lock, are left
    p = start()
    _wait(p, lambda: len(_epochs(d)) >= 4 and len(_epochs(d)) % 3)
    p.kill(); p.wait()
    killed_at = _ckpt_epoch(d)
    assert len(_epochs(d)) > killed_at and json.loads((d / '.lock').read_text())['pid'] == p.pid

    # 2. the same command: the stale lock taken over, the history cut back; a second writer meanwhile is refused
    p = start()
    _wait(p, lambda: len(_epochs(d)) > killed_at + 1)
    twin = subprocess.run(cmd, capture_output=True, text=True, env=env, timeout=300)
    assert twin.returncode == 2 and twin.stderr.count('\n') == 1, twin.stderr
    assert f'is being trained by pid {p.pid} on {socket.gethostname()}' in twin.stderr, twin.stderr
    p.send_signal(signal.SIGTERM); out, err = p.communicate(timeout=300)
    assert f'taking over the lock of pid' in out and f"cut back to the checkpoint's epoch {killed_at}" in out, out
    n = one_history()
    assert p.returncode == 143 and err == f'swaro_train: stopped at epoch {n}; run the same command to resume\n', (p.returncode, err)
    assert not (d / '.lock').exists()

    # 3. a checkpoint that does not fit (one file may hold half of it): one line naming the folder and the size needed
    ck = (d / 'checkpoint.pt').read_bytes()
    full = subprocess.run(['bash', '-c', f'ulimit -f {len(ck) // 2048}; exec "$@"', 'bash', *cmd, '--ckpt-every', '1'],
                          capture_output=True, text=True, env=env, timeout=300)
    need = f"{len(ck) / 2 ** 20:,.1f} MB"
    assert full.returncode == 1 and full.stderr.count('\n') == 1, full.stderr
    assert f'cannot write checkpoint.pt in {d}: it needs about {need}' in full.stderr and f'the checkpoint of epoch {n} is intact' in full.stderr
    assert (d / 'checkpoint.pt').read_bytes() == ck and one_history() == n

    # 4. Ctrl-C: the epoch under way is finished and checkpointed, one line, exit 130
    p = start()
    _wait(p, lambda: len(_epochs(d)) > n + 1)
    p.send_signal(signal.SIGINT); out, err = p.communicate(timeout=300)
    m = one_history()
    assert p.returncode == 130 and err == f'swaro_train: stopped at epoch {m}; run the same command to resume\n', (p.returncode, err)
    resumes = json.loads((d / 'run.json').read_text())['resumes']
    assert [r['at_epoch'] for r in resumes] == [killed_at, n] and resumes[0]['changed'] == {}, resumes

def test_no_preset_on_a_cpu_is_the_smoke_preset(tmp_path, console):
    "swaro_train without --preset on a machine without a GPU says in one line that it trains the smoke preset (here it stops at the data)."
    if torch.cuda.is_available(): pytest.skip('this machine has a GPU: there no preset is an error (checked in nbs/11_cli.ipynb)')
    r = console('swaro_train', '--name', 'x', '--out-dir', str(tmp_path), '--data-root', str(tmp_path / 'none'))
    lines = r.stderr.strip().splitlines()
    assert r.returncode == 2 and len(lines) == 2 and 'no preset given: training the smoke preset on this CPU' in lines[0], r.stderr
    assert list(tmp_path.iterdir()) == []
