"Snapshots of a long schedule: the lr of a run stopped early, snapshot weights against an independent reference, snapshot runs."
import dataclasses, json, subprocess, sys
from pathlib import Path
import pytest, torch
from swaro_nb.config import make_config, ConfigError, resume_changes
from swaro_nb.optim import lr_at
from swaro_nb.train import train, SNAPSHOTS, snapshot_name
from swaro_nb.runs import export_weights, list_snapshots, snapshot_run, load_run, RunError

TINY = dict(subset_per_class=10, batch_size=50, width=8, proj_hidden=64, attack_warmup_epochs=1, n_clusters=10,
            attack_steps=1, monitor_every=0, ckpt_every=1, progress=False)

def cfg(tmp_path, name, **over): return make_config('smoke', name=name, out_dir=str(tmp_path), **{**TINY, **over})

def test_long_schedule_stopped_early_keeps_its_learning_rate(tmp_path):
    "4 epochs of an 8-epoch schedule: every epoch's lr is lr_at of the 8-epoch schedule, and the stop is checkpointed there."
    t = train(cfg(tmp_path, 'part', epochs=8, max_epochs_this_call=4))
    spe = t.steps_per_epoch
    ck = torch.load(t.ckpt, weights_only=False)
    assert (t.epoch, ck['epoch'], ck['step']) == (4, 4, 4 * spe)
    full, short = t.cfg, dataclasses.replace(t.cfg, epochs=4)
    for e, r in enumerate(t.history, 1):   # the lr recorded is the one of the epoch's last step
        assert r['lr'] == pytest.approx(lr_at(e * spe - 1, spe, full), rel=1e-12, abs=1e-15)
    assert t.opt.param_groups[0]['lr'] == pytest.approx(lr_at(4 * spe - 1, spe, full), rel=1e-12)
    # at the stop the long schedule is still high; a 4-epoch schedule would have decayed to a tenth of its peak
    peak = full.lr * full.warmup_multiplier
    assert lr_at(4 * spe - 1, spe, full) > 0.6 * peak and lr_at(4 * spe - 1, spe, short) < 0.1 * peak
    rec = json.loads((t.dir / 'run.json').read_text())
    assert (rec['epochs_done'], rec['epochs']) == (4, 8)
    # the next call goes on with the same schedule
    t2 = train(cfg(tmp_path, 'part', epochs=8, max_epochs_this_call=1))
    assert t2.epoch == 5 and t2.history[-1]['lr'] == pytest.approx(lr_at(5 * spe - 1, spe, full), rel=1e-12)

def test_snapshot_is_the_model_at_its_epoch(tmp_path):
    "A snapshot of epoch 2 of a 4-epoch run equals the float16 export of another run of the same config stopped at epoch 2."
    a = train(cfg(tmp_path, 'a', epochs=4, snapshot_every=2))
    b = train(cfg(tmp_path, 'b', epochs=4, max_epochs_this_call=2))   # the reference: its checkpoint is the model after 2
    snaps = list_snapshots(a.dir)
    assert list(snaps) == [2, 4] and snaps[2].name == snapshot_name(2) == 'epoch-0002.pt'
    ref = torch.load(export_weights(b.dir, tmp_path / 'b16.pt', half=True))
    got = torch.load(snaps[2], weights_only=True)
    assert got.keys() == ref.keys() == b.net.state_dict().keys()   # the model alone: no optimiser, no RNG state
    for k in ref:
        assert got[k].dtype == ref[k].dtype and torch.equal(got[k], ref[k]), k
    assert any(v.dtype == torch.float16 for v in got.values())
    last = torch.load(export_weights(a.dir, tmp_path / 'a16.pt', half=True))   # the final snapshot: the final checkpoint
    assert all(torch.equal(torch.load(snaps[4])[k], last[k]) for k in last)
    assert not all(torch.equal(got[k], last[k]) for k in last)   # epoch 2 is not epoch 4

def test_snapshot_every_does_not_block_a_resume(tmp_path):
    "snapshot_every only keeps files: a resumed call may set it (listed in the record); 0 is refused."
    train(cfg(tmp_path, 'r', epochs=4, max_epochs_this_call=2))
    refused, allowed = resume_changes(dataclasses.asdict(cfg(tmp_path, 'r', epochs=4)), cfg(tmp_path, 'r', epochs=4, snapshot_every=1))
    assert refused == {} and allowed == {'snapshot_every': (None, 1)}
    t = train(cfg(tmp_path, 'r', epochs=4, snapshot_every=1))
    assert t.epoch == 4 and list(list_snapshots(t.dir)) == [3, 4]
    assert json.loads((t.dir / 'run.json').read_text())['resumes'][-1]['changed']['snapshot_every'] == [None, 1]
    with pytest.raises(ConfigError, match='snapshot_every'): make_config('smoke', snapshot_every=0).validate()

def test_snapshot_run_is_evaluated_like_a_run(tmp_path):
    "snapshot_run writes a run folder (the snapshot's bytes, the run's config, epochs_done = the epoch) that swaro_eval reads."
    a = train(cfg(tmp_path, 'a', epochs=3, snapshot_every=2, monitor_every=1))
    d = snapshot_run(a.dir, 2, tmp_path / 'snaps' / 'a-e2')
    assert (d / 'weights.pt').read_bytes() == (a.dir / SNAPSHOTS / 'epoch-0002.pt').read_bytes()
    assert json.loads((d / 'config.json').read_text()) == json.loads((a.dir / 'config.json').read_text())
    rec = json.loads((d / 'run.json').read_text())
    assert (rec['epochs_done'], rec['epochs'], rec['snapshot_of']['run'], rec['snapshot_of']['run_epochs_done']) == (2, 3, 'a', 3)
    assert rec['final'] == a.history[1] and [e for e, _ in rec['knn']] == [1, 2]
    assert [json.loads(l) for l in (d / 'metrics.jsonl').read_text().splitlines()] == a.history[:2]
    net, _, c, r = load_run(d, 'cpu')
    assert (c.epochs, r['epochs_done']) == (3, 2)
    with pytest.raises(RunError, match='no snapshot of epoch 3'): snapshot_run(a.dir, 3)
    with pytest.raises(RunError, match='holds a run already'): snapshot_run(a.dir, 2, d)
    out = tmp_path / 'eval'
    r = subprocess.run([sys.executable, '-m', 'swaro_nb.cli', 'eval', str(d), '--smoke', '--n-test', '16', '--train-per-class', '10',
                        '--le-epochs', '1', '--no-rle', '--attacks', 'clean,pgd_linf_8', '--no-progress', '--out', str(out)], capture_output=True, text=True)
    assert r.returncode == 0, r.stderr[-2000:]
    ev = json.loads((out / 'a-e2-eval.json').read_text())
    assert (ev['run'], ev['epochs'], ev['train']['epochs_done'], ev['config']['epochs']) == ('a-e2', 2, 2, 3)
