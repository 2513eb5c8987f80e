"DDP from the shell: `torchrun --nproc_per_node 2 -m swaro_nb.cli train` on the CPU (gloo) trains, gathers negatives, broadcasts pseudo-labels;\nthe ranks agree on resuming; SwARo's refresh shards its feature pass over the ranks and gives one process's pseudo-labels."
import json, os, socket, subprocess, sys
from pathlib import Path
import pytest, torch
from conftest import script

ARGS = ['--preset', 'smoke', '--name', 'ddp', '--epochs', '2', '--subset-per-class', '10', '--batch-size', '50', '--attack-warmup-epochs', '1',
        '--n-clusters', '10', '--attack-steps', '2', '--monitor-every', '2', '--monitor-bank', '100', '--monitor-test', '50', '--progress', 'false']

def _epochs(out: Path) -> list: return [json.loads(l)['epoch'] for l in (out / 'ddp' / 'metrics.jsonl').read_text().splitlines()]

@pytest.fixture(scope='module')
def ddp_run(tmp_path_factory):
    "`torchrun --nproc_per_node 2 -m swaro_nb.cli train` on the CPU (gloo): 2 epochs into a folder of its own (the runs folder)."
    out = tmp_path_factory.mktemp('ddp')
    cmd = [script('torchrun'), '--nproc_per_node', '2', '--master_port', str(_free_port()), '-m', 'swaro_nb.cli', 'train', *ARGS, '--out-dir', str(out)]
    r = subprocess.run(cmd, capture_output=True, text=True, env={**os.environ, 'OMP_NUM_THREADS': '1'}, timeout=600)
    assert r.returncode == 0, r.stderr[-3000:]
    return out

def test_torchrun_two_processes_on_cpu(ddp_run):
    rec = json.loads((ddp_run / 'ddp' / 'run.json').read_text())
    assert rec['processes'] == 2 and rec['gpus'] == (2 if torch.cuda.is_available() else 0) and rec['epochs_done'] == 2
    hist = [json.loads(l) for l in (ddp_run / 'ddp' / 'metrics.jsonl').read_text().splitlines()]
    assert len(hist) == 2 and hist[1]['swaro_batches'] >= 0 and all(torch.isfinite(torch.tensor(h['loss'])) for h in hist)
    ck = torch.load(ddp_run / 'ddp' / 'checkpoint.pt', weights_only=False)
    assert ck['world'] == 2 and ck['method']['pseudo'] is not None and len(ck['method']['pseudo']) == 100

def _free_port() -> int:
    s = socket.socket(); s.bind(('127.0.0.1', 0)); port = s.getsockname()[1]; s.close(); return port

def _jobs_of_two_ranks(io: Path, cases: dict) -> dict:
    "Each case (name -> ((folder, arguments) of rank 0, of rank 1)) run as two swaro_train processes joined as ranks 0 and 1 of one gloo"
    " job (the variables torchrun sets), each with its own --out-dir; the pairs one after the other, forked by tests/console_runner.py."
    " Returns name -> ((exit status, stdout, stderr) of rank 0, of rank 1)."
    jobs = []
    for name, ranks in cases.items():
        port = _free_port()
        for rank, (out, extra) in enumerate(ranks):
            jobs.append(dict(id=f'{name}-{rank}', script=script('swaro_train'), argv=[*ARGS, '--out-dir', str(out), *extra], cwd=str(io),
                             env={'RANK': str(rank), 'LOCAL_RANK': str(rank), 'WORLD_SIZE': '2', 'LOCAL_WORLD_SIZE': '2',
                                  'MASTER_ADDR': '127.0.0.1', 'MASTER_PORT': str(port)},
                             stdout=str(io / f'{name}-{rank}.out'), stderr=str(io / f'{name}-{rank}.err')))
    (io / 'jobs.json').write_text(json.dumps(jobs))
    r = subprocess.run([sys.executable, str(Path(__file__).parent / 'console_runner.py'), str(io / 'jobs.json'), str(io / 'results.json')],
                       capture_output=True, text=True, timeout=600, env={**os.environ, 'OMP_NUM_THREADS': '1'})
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((io / 'results.json').read_text())
    return {name: tuple((res[f'{name}-{k}']['code'], (io / f'{name}-{k}.out').read_text(), (io / f'{name}-{k}.err').read_text())
                        for k in (0, 1)) for name in cases}

def test_ranks_agree_on_resuming(ddp_run, tmp_path):
    """Rank 0 decides whether to resume and every rank follows, or the job stops: ranks that see different run folders
    (nodes without shared storage) are two processes here, each given its own --out-dir. A rank without the checkpoint,
    or with another epoch's, stops both with one line from rank 0; a rank with other settings too. The same folder: both
    resume (nothing left to train) and agree."""
    shared, alone, stale = ddp_run, tmp_path / 'alone', tmp_path / 'stale'
    ck = torch.load(shared / 'ddp' / 'checkpoint.pt', weights_only=False)
    before = {p.name: p.stat().st_mtime_ns for p in (shared / 'ddp').iterdir()}
    (stale / 'ddp').mkdir(parents=True); torch.save({**ck, 'epoch': 0, 'step': 0}, stale / 'ddp' / 'checkpoint.pt')
    host, io = socket.gethostname(), tmp_path / 'io'; io.mkdir()
    out = _jobs_of_two_ranks(io, {'alone': ((shared, []), (alone, [])), 'stale': ((shared, []), (stale, [])),
                                  'settings': ((shared, []), (shared, ['--lr', '0.5'])), 'same': ((shared, []), (shared, []))})
    for case, msg in (('alone', f"rank 1 on {host} cannot read {alone / 'ddp' / 'checkpoint.pt'} (no such file), where rank 0 resumes the run at epoch 2"),
                      ('stale', f"rank 1 on {host} reads epoch 0 from {stale / 'ddp' / 'checkpoint.pt'}, where rank 0 resumes the run at epoch 2"),
                      ('settings', f"rank 1 on {host} has other settings than rank 0 (lr=0.5 against 0.1)")):
        (c0, o0, e0), (c1, o1, e1) = out[case]
        assert (c0, c1) == (2, 2), (case, e0[-2000:], e1[-2000:])
        assert e0.count('\n') == 1 and msg in e0 and 'shared filesystem; stopping every rank' in e0, e0
        assert e1 == '', e1   # rank 1 says nothing: rank 0's line is the job's
    assert not (alone / 'ddp').exists()
    (c0, o0, e0), (c1, o1, e1) = out['same']   # one folder: both resume at epoch 2, with nothing left to train
    assert (c0, c1) == (0, 0), (e0[-2000:], e1[-2000:])
    assert f"resumed {shared / 'ddp' / 'checkpoint.pt'} at epoch 2" in o0 and 'epochs done: 2/2' in o0 and o1 == '', (o0, o1)
    assert {p.name: p.stat().st_mtime_ns for p in (shared / 'ddp').iterdir()} == before   # nothing written

REFRESH = r'''
import atexit, sys, torch
from swaro_nb.config import make_config
from swaro_nb.train import Trainer, exit_distributed
from swaro_nb.cluster import sharded_features
out, tag = sys.argv[1], sys.argv[2]
t = Trainer(make_config('smoke', name=f'refresh-{tag}', out_dir=out, subset_per_class=10, n_clusters=10, progress=False),
            resume=False)
if t.rank == 1:   # batch-norm running statistics of its own, as after a data-parallel step without sync_bn
    with torch.no_grad(): t.net.train()(torch.rand(20, 3, 32, 32, generator=torch.Generator().manual_seed(1)))
own = [b.clone() for b in t.net.buffers()]
t.method.feature_batch, t.epoch = 16, 3   # 100 images in 7 batches of 16: 3 on rank 0, 4 on rank 1
t.method.refresh_clusters(t)
assert all(torch.equal(a, b) for a, b in zip(own, t.net.buffers())), 'this rank did not get its own buffers back'
torch.save(dict(labels=t.method.pseudo, feats=sharded_features(t.net.features, t.data.images, 16)), f'{out}/{tag}-{t.rank}.pt')
rank = t.rank
atexit.register(lambda: open(f'{out}/{tag}-{rank}.atexit', 'w').close())   # exit_distributed runs the handlers
exit_distributed()
'''

def test_refresh_shards_the_feature_pass(tmp_path):
    """SwARo's refresh under `torchrun --nproc_per_node 2` (gloo), each rank extracting its shard of the training set, rank 1
    with batch-norm buffers of its own: the gathered features (on both ranks) and the pseudo-labels are bit for bit those
    of a one-process refresh of the same weights and images. Each rank ends with `exit_distributed` (its atexit handlers run, exit
    status 0)."""
    (tmp_path / 'refresh.py').write_text(REFRESH)
    env = {**os.environ, 'OMP_NUM_THREADS': '1'}
    for cmd in ([sys.executable, 'refresh.py', str(tmp_path), 'one'],
                [script('torchrun'), '--nproc_per_node', '2', '--master_port', str(_free_port()), 'refresh.py', str(tmp_path), 'two']):
        r = subprocess.run(cmd, capture_output=True, text=True, env=env, cwd=tmp_path, timeout=300)
        assert r.returncode == 0, r.stderr[-3000:]
    assert sorted(p.name for p in tmp_path.glob('*.atexit')) == ['one-0.atexit', 'two-0.atexit', 'two-1.atexit']
    one, *two = (torch.load(tmp_path / f, weights_only=True) for f in ('one-0.pt', 'two-0.pt', 'two-1.pt'))
    assert one['feats'].shape == (100, 8 * 8) and len(one['labels'].unique()) > 1
    for rank, got in enumerate(two):
        assert torch.equal(got['feats'], one['feats']), f'rank {rank}: the gathered features differ from one process\'s'
        assert torch.equal(got['labels'], one['labels']), f'rank {rank}: pseudo-labels differ from one process\'s'
