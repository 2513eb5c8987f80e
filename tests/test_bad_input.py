"""Every bad input through the console scripts: exactly one `error:` line on stderr, the exit status, nothing written
and nothing lost, no temporary file left. Each case runs in a sandbox folder of its own (its working directory and
its TMPDIR); the cases run once per module, two at a time, each in a process of its own that runs the console
script's file (tests/console_runner.py forks it from one that has imported torch already), and each test checks one."""
import hashlib, json, os, re, shutil, socket, subprocess, sys
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
import pytest, torch
from conftest import script

NO_CUDA = not torch.cuda.is_available()
ROOT_USER = os.getuid() == 0

# the tiny run's own settings (see `tiny_run`), as flags: the sandbox of a train-resume case holds a copy of it in runs/run
TINY_RUN = ['--preset', 'smoke', '--name', 'run', '--epochs', '2', '--subset-per-class', '10', '--batch-size', '50', '--width', '8',
            '--proj-hidden', '64', '--n-clusters', '10', '--attack-steps', '1', '--monitor-every', '0', '--progress', 'false']
RUN_COPY = ('train-resume-', 'train-no-resume-', 'train-record-', 'train-run-being-', 'train-overwrite-')

# (id, console script, arguments ({d}: the sandbox, {run}: a copy of a tiny trained run), exit status, text the line holds)
CASES = [
    # swaro_train
    ('train-out-dir-under-a-file', 'swaro_train', ['--preset', 'smoke', '--out-dir', '{d}/a-file/runs'], 2, 'is a file, not a folder'),
    ('train-out-dir-read-only', 'swaro_train', ['--preset', 'smoke', '--out-dir', '/proc/swaro_nb'], 2, 'cannot write in /proc'),
    ('train-name-is-a-path', 'swaro_train', ['--preset', 'smoke', '--name', '../../escaped'], 2, 'name: a run name is one folder name'),
    ('train-absolute-name', 'swaro_train', ['--preset', 'smoke', '--name', '{d}/elsewhere'], 2, 'name: a run name is one folder name'),
    ('train-extra-unknown-swaro', 'swaro_train', ['--preset', 'smoke', '--extra', '{"bogus": 1}'], 2, 'extra: swaro reads no extra options'),
    ('train-extra-unknown-baseline', 'swaro_train', ['--preset', 'smoke', '--method', 'trades', '--extra', '{"bogus": 1}'], 2, 'has no option(s) bogus'),
    ('train-extra-not-json', 'swaro_train', ['--preset', 'smoke', '--extra', '{bogus}'], 2, 'invalid JSON object value'),
    ('train-probability', 'swaro_train', ['--preset', 'smoke', '--p', '2'], 2, 'p: is a probability'),
    ('train-epochs-not-int', 'swaro_train', ['--preset', 'smoke', '--epochs', 'abc'], 2, "invalid int value: 'abc'"),
    ('train-batch-of-one', 'swaro_train', ['--preset', 'smoke', '--batch-size', '1'], 2, 'batch_size'),
    ('train-unknown-method', 'swaro_train', ['--preset', 'smoke', '--method', 'moco'], 2, 'unknown method'),
    ('train-no-data', 'swaro_train', ['--preset', 'smoke', '--data-root', '{d}/nowhere'], 2, 'swaro_data fetch cifar10 --root'),
    ('train-truncated-checkpoint', 'swaro_train', ['--preset', 'smoke', '--name', 'trunc'], 2, 'failed finding central directory); it is truncated or corrupt'),
    ('train-lr-huge-diverges', 'swaro_train', ['--preset', 'smoke', '--lr', '1e30', '--epochs', '1', '--subset-per-class', '10', '--batch-size', '50',
                                               '--monitor-every', '0', '--progress', 'false'], 2, 'no checkpoint had been written yet'),
    # every number finite and in range, checked before any folder is made
    ('train-lr-inf', 'swaro_train', ['--preset', 'smoke', '--lr', 'inf'], 2, 'lr: must be a finite number, got inf'),
    ('train-eps-nan', 'swaro_train', ['--preset', 'smoke', '--eps', 'nan'], 2, 'eps: must be a finite number, got nan'),
    ('train-eps-inf', 'swaro_train', ['--preset', 'smoke', '--eps', 'inf'], 2, 'eps: must be a finite number, got inf'),
    ('train-time-limit-nan', 'swaro_train', ['--preset', 'smoke', '--time-limit-s', 'nan'], 2, 'time_limit_s: must be a finite number'),
    ('train-p-nan', 'swaro_train', ['--preset', 'smoke', '--p', 'nan'], 2, 'p: must be a finite number'),
    ('train-monitor-bank-zero', 'swaro_train', ['--preset', 'smoke', '--monitor-bank', '0'], 2, 'monitor_bank: must be >= 1, got 0'),
    ('train-monitor-test-zero', 'swaro_train', ['--preset', 'smoke', '--monitor-test', '0'], 2, 'monitor_test: must be >= 1, got 0'),
    ('train-momentum-one', 'swaro_train', ['--preset', 'smoke', '--momentum', '1'], 2, 'momentum: must be in [0, 1), got 1.0'),
    ('train-weight-decay-negative', 'swaro_train', ['--preset', 'smoke', '--weight-decay', '-1'], 2, 'weight_decay: must be >= 0'),
    ('train-seed-negative', 'swaro_train', ['--preset', 'smoke', '--seed', '-1'], 2, 'seed: must be in [0, 2^31), got -1'),
    ('train-seed-huge', 'swaro_train', ['--preset', 'smoke', '--seed', str(2 ** 70)], 2, 'seed: must be in [0, 2^31)'),
    ('train-subset-above-a-class', 'swaro_train', ['--preset', 'smoke', '--subset-per-class', '99999'], 2, 'subset_per_class: cifar10 has 5000 training images per class'),
    ('train-extra-nan', 'swaro_train', ['--preset', 'smoke', '--method', 'trades', '--extra', '{"beta": NaN}'], 2, 'extra: must be plain JSON with finite numbers'),
    ('train-name-too-long', 'swaro_train', ['--preset', 'smoke', '--name', 'x' * 300], 2, 'name: 300 characters; a run name is at most 223 here'),
    ('train-name-not-ascii', 'swaro_train', ['--preset', 'smoke', '--name', 'über'], 2, 'name: a run name is one folder name of ASCII letters'),
    ('train-no-data-names-the-flag', 'swaro_train', ['--preset', 'smoke', '--data-root', '{d}/nowhere'], 2, 'swaro_train and swaro_eval: --data-root'),
    ('train-data-root-a-file', 'swaro_train', ['--preset', 'smoke', '--data-root', '{d}/a-file'], 2, 'is a file, not a folder: pass the folder that holds'),
    # a run folder is one run: resuming the tiny run ({d}/runs/run) with other settings, or not resuming it, is refused
    ('train-resume-other-lr', 'swaro_train', [*TINY_RUN, '--lr', '0.5'], 2, 'was trained with lr=0.1; this call asks for lr=0.5, which changes what is computed'),
    ('train-resume-other-seed', 'swaro_train', [*TINY_RUN, '--seed', '7'], 2, 'was trained with seed=0; this call asks for seed=7'),
    ('train-resume-other-epochs', 'swaro_train', [*TINY_RUN, '--epochs', '1'], 2, 'was trained with epochs=2; this call asks for epochs=1'),
    ('train-resume-other-width', 'swaro_train', [*TINY_RUN, '--width', '16'], 2, 'was trained with width=8; this call asks for width=16'),
    ('train-no-resume-on-a-run', 'swaro_train', [*TINY_RUN, '--no-resume'], 2, 'that this call does not resume: leave out --no-resume to resume it'),
    ('train-record-without-checkpoint', 'swaro_train', TINY_RUN, 2, 'but no checkpoint.pt to resume from'),
    ('train-run-being-trained', 'swaro_train', TINY_RUN, 2, 'is being trained by pid 1 on'),
    ('train-overwrite-while-trained', 'swaro_train', [*TINY_RUN, '--overwrite'], 2, 'is being trained by pid 1 on'),
    # swaro_eval (a copy of a real run: every check comes before it is read)
    ('eval-device-nonsense', 'swaro_eval', ['{run}', '--device', 'nonsense'], 2, "--device: 'nonsense' is not a device"),
    ('eval-device-cuda-without-gpu', 'swaro_eval', ['{run}', '--device', 'cuda'], 2, 'no CUDA GPU is available here'),
    ('eval-device-mps', 'swaro_eval', ['{run}', '--device', 'mps'], 2, 'evaluation runs on cpu, cuda or cuda:N'),
    ('eval-out-under-a-file', 'swaro_eval', ['{run}', '--out', '{d}/a-file/res'], 2, 'is a file, not a folder'),
    ('eval-out-read-only', 'swaro_eval', ['{run}', '--out', '/proc/swaro_nb'], 2, 'cannot write in /proc'),
    ('eval-default-out-unwritable', 'swaro_eval', ['{run}', '--smoke'], 2, 'output folder runs/run-eval cannot be created'),
    ('eval-transfer-nonsense', 'swaro_eval', ['{run}', '--transfer', 'nonsense'], 2, "--transfer: unknown dataset 'nonsense'"),
    ('eval-dataset-nonsense', 'swaro_eval', ['{run}', '--dataset', 'svhn'], 2, "--dataset: unknown dataset 'svhn'"),
    ('eval-n-test-zero', 'swaro_eval', ['{run}', '--n-test', '0'], 2, '--n-test must be a positive integer'),
    ('eval-le-epochs-negative', 'swaro_eval', ['{run}', '--le-epochs', '-1'], 2, '--le-epochs must be a positive integer'),
    ('eval-rle-epochs-zero', 'swaro_eval', ['{run}', '--rle-epochs', '0'], 2, '--rle-epochs must be a positive integer'),
    ('eval-train-per-class-zero', 'swaro_eval', ['{run}', '--train-per-class', '0'], 2, '--train-per-class must be a positive integer'),
    ('eval-batch-size-zero', 'swaro_eval', ['{run}', '--batch-size', '0'], 2, '--batch-size must be a positive integer'),
    ('eval-missing-run', 'swaro_eval', ['{d}/nope', '--smoke', '--out', '{d}/res'], 2, 'does not exist'),
    ('eval-not-int', 'swaro_eval', ['{run}', '--n-test', 'many'], 2, "invalid int or none value: 'many'"),
    ('eval-no-head', 'swaro_eval', ['{run}', '--no-le', '--no-rle', '--out', '{d}/res'], 2, 'nothing to evaluate in'),
    ('eval-n-test-above-the-test-set', 'swaro_eval', ['{run}', '--n-test', '100000'], 2, '--n-test 100000: the test set has 10,000 images'),
    ('eval-autoattack-n-above-the-test-set', 'swaro_eval', ['{run}', '--autoattack-n', '20000'], 2, '--autoattack-n 20000: the test set has 10,000'),
    ('eval-train-per-class-above', 'swaro_eval', ['{run}', '--train-per-class', '6000'], 2, '--train-per-class 6000: cifar10 has 5,000 training images per class'),
    ('eval-run-is-a-file', 'swaro_eval', ['{run}/run.json', '--out', '{d}/res'], 2, 'run.json is a file, not a run folder'),
    # swaro_bench
    ('bench-methods-nonsense', 'swaro_bench', ['--methods', 'nonsense'], 2, "unknown method 'nonsense'"),
    ('bench-methods-empty', 'swaro_bench', ['--methods', ','], 2, '--methods must name at least one method'),
    ('bench-batches-zero', 'swaro_bench', ['--batches', '0'], 2, 'batch_size: must be >= 1'),
    ('bench-batches-not-int', 'swaro_bench', ['--batches', '256,big'], 2, '--batches must be comma-separated integers'),
    ('bench-epochs-negative', 'swaro_bench', ['--epochs', '-5'], 2, 'epochs: must be >= 1, got -5'),
    ('bench-epochs-zero', 'swaro_bench', ['--epochs', '0'], 2, 'epochs: must be >= 1, got 0'),
    ('bench-width-zero', 'swaro_bench', ['--width', '0'], 2, 'width: must be >= 1'),
    ('bench-subset-zero', 'swaro_bench', ['--subset-per-class', '0'], 2, 'subset_per_class'),
    ('bench-subset-above-a-class', 'swaro_bench', ['--subset-per-class', '99999'], 2, 'subset_per_class: cifar10 has 5000 training images per class'),
    ('bench-out-not-json', 'swaro_bench', ['--out', '{d}/notes.txt'], 2, 'is not a JSON list of records'),
    ('bench-out-json-not-list', 'swaro_bench', ['--out', '{d}/object.json'], 2, 'holds a JSON dict, not a list'),
    ('bench-out-a-folder', 'swaro_bench', ['--out', '{d}/empty'], 2, 'is a folder; name a JSON file'),
    ('bench-out-under-a-file', 'swaro_bench', ['--out', '{d}/a-file/bench.json'], 2, 'is a file, not a folder'),
    ('bench-out-read-only', 'swaro_bench', ['--out', '/proc/swaro_nb/bench.json'], 2, 'cannot write in /proc'),
    # swaro_data
    ('data-summary-out-under-a-file', 'swaro_data', ['summary', '--out', '{d}/a-file/grids'], 2, 'is a file, not a folder'),
    ('data-summary-out-read-only', 'swaro_data', ['summary', '--out', '/proc/swaro_nb'], 2, 'cannot write in /proc'),
    ('data-summary-empty-root', 'swaro_data', ['summary', '--root', '{d}/empty'], 1, 'no dataset under'),
    ('data-summary-unknown', 'swaro_data', ['summary', 'mnist'], 2, 'unknown dataset'),
    ('data-summary-root-a-file', 'swaro_data', ['summary', '--root', '{d}/a-file'], 1, 'is a file, not a folder: pass the folder that holds'),
    ('data-fetch-root-under-a-file', 'swaro_data', ['fetch', 'cifar10', '--root', '{d}/a-file/data'], 2, 'data root'),
    ('data-fetch-root-read-only', 'swaro_data', ['fetch', 'cifar10', '--root', '/proc/swaro_nb'], 2, 'cannot write in /proc'),
    ('data-fetch-garbage-tarball', 'swaro_data', ['fetch', 'cifar10', '--root', '{d}/data', '--source', '{d}/garbage.tgz'], 1, 'expected 2f5c147e'),
    ('data-fetch-missing-tarball', 'swaro_data', ['fetch', 'cifar10', '--root', '{d}/data', '--source', '{d}/nope.tgz'], 1, 'missing file'),
    ('data-fetch-unknown', 'swaro_data', ['fetch', 'mnist', '--root', '{d}/data'], 2, 'unknown dataset'),
    ('data-fetch-cifar100-no-folder', 'swaro_data', ['fetch', 'cifar100', '--root', '{d}/data', '--source', '{d}/nope'], 1, 'binary layout'),
    ('data-unknown-command', 'swaro_data', ['frobnicate'], 2, 'invalid choice'),
]
if not ROOT_USER:   # permissions bind every user but root
    CASES.append(('eval-out-no-permission', 'swaro_eval', ['{run}', '--out', '{d}/locked/res'], 2, 'Permission denied'))

def snapshot(d: Path) -> dict:
    "Relative path -> what it is (a folder, a link and its target, or a file's sha1) for everything under `d`."
    out = {}
    for p in sorted(d.rglob('*')):
        k = str(p.relative_to(d))
        if p.is_symlink(): out[k] = ('link', os.readlink(p))
        elif p.is_dir(): out[k] = ('dir',)
        else: out[k] = ('file', hashlib.sha1(p.read_bytes()).hexdigest())
    return out

@pytest.fixture(scope='module')
def tiny_run(tmp_path_factory):
    "A real run folder, 1 epoch of 2 done (eval cases get a copy, train-resume cases one to resume; its first 4 KB make the truncated checkpoint)."
    from swaro_nb.config import make_config
    from swaro_nb.train import train
    d = tmp_path_factory.mktemp('tiny')
    train(make_config('smoke', name='run', out_dir=str(d), epochs=2, max_epochs_this_call=1, subset_per_class=10, batch_size=50, width=8,
                      proj_hidden=64, n_clusters=10, attack_steps=1, monitor_every=0, progress=False), device='cpu')
    return d / 'run'

def sandbox(base: Path, case_id: str, run: Path) -> Path:
    d = base / case_id; (d / 'tmp').mkdir(parents=True)
    (d / 'a-file').write_text('a file, not a folder\n')
    (d / 'notes.txt').write_text('not JSON\n'); (d / 'object.json').write_text('{"records": []}\n')
    (d / 'garbage.tgz').write_bytes(b'not a tarball'); (d / 'empty').mkdir()
    if case_id.startswith('eval-'): shutil.copytree(run, d / 'run')
    if case_id.startswith(RUN_COPY): shutil.copytree(run, d / 'runs' / 'run')
    if case_id == 'train-record-without-checkpoint': (d / 'runs' / 'run' / 'checkpoint.pt').unlink()
    if case_id in ('train-run-being-trained', 'train-overwrite-while-trained'):   # pid 1 runs for as long as the machine (or container) does
        (d / 'runs' / 'run' / '.lock').write_text(json.dumps(dict(pid=1, host=socket.gethostname(), since='2030-01-01T00:00:00+00:00')))
    if case_id == 'eval-default-out-unwritable': (d / 'runs').write_text('runs is a file here\n')
    if case_id == 'train-truncated-checkpoint':
        (d / 'runs' / 'trunc').mkdir(parents=True); (d / 'runs' / 'trunc' / 'checkpoint.pt').write_bytes((run / 'checkpoint.pt').read_bytes()[:4096])
    if case_id == 'eval-out-no-permission': (d / 'locked').mkdir(); (d / 'locked').chmod(0o555)
    return d

@pytest.fixture(scope='module')
def outcomes(tmp_path_factory, tiny_run):
    "Every case run once through its console script (tests/console_runner.py: the script's own file in a forked child, two at a "
    "time): id -> (exit status, stdout, stderr, sandbox before, sandbox after, seconds)."
    base, io = tmp_path_factory.mktemp('bad'), tmp_path_factory.mktemp('bad-io')
    cache = tmp_path_factory.mktemp('torch-cache')   # torch's own compile cache, kept apart so each TMPDIR must end empty
    jobs, before = [], {}
    for cid, prog, args, _, _ in CASES:
        d = sandbox(base, cid, tiny_run)
        jobs.append(dict(id=cid, script=script(prog), argv=[a.replace('{d}', str(d)).replace('{run}', str(d / 'run')) for a in args],
                         cwd=str(d), env={'TMPDIR': str(d / 'tmp'), 'TORCHINDUCTOR_CACHE_DIR': str(cache)},
                         stdout=str(io / f'{cid}.out'), stderr=str(io / f'{cid}.err')))
        before[cid] = snapshot(d)
    (io / 'jobs.json').write_text(json.dumps(jobs))
    r = subprocess.run([sys.executable, str(Path(__file__).parent / 'console_runner.py'), str(io / 'jobs.json'), str(io / 'results.json')],
                       capture_output=True, text=True, timeout=900, env={**os.environ, 'OMP_NUM_THREADS': '1'})
    assert r.returncode == 0, r.stderr[-3000:]
    res = json.loads((io / 'results.json').read_text())
    return {j['id']: (res[j['id']]['code'], Path(j['stdout']).read_text(), Path(j['stderr']).read_text(), before[j['id']],
                      snapshot(Path(j['cwd'])), res[j['id']]['seconds']) for j in jobs}

@pytest.mark.parametrize('case', CASES, ids=[c[0] for c in CASES])
def test_bad_input(outcomes, case):
    cid, prog, _, code, text = case
    if cid == 'eval-device-cuda-without-gpu' and not NO_CUDA: pytest.skip('this machine has a GPU')
    status, out, err, before, after, secs = outcomes[cid]
    lines = err.strip().splitlines()
    assert status == code, (status, err[-3000:])
    assert len(lines) == 1 and lines[0].startswith(f'{prog}: error: '), err[-3000:]
    assert text in lines[0], lines[0]
    assert 'Traceback' not in err and ' If yo)' not in lines[0]   # a whole message, not a cut one
    assert after == before, f"the sandbox changed: {set(after.items()) ^ set(before.items())}"   # nothing written, nothing lost
    assert not [p for p in after if p.startswith('tmp/')], 'temporary files left behind'
    if cid.startswith('data-fetch-root'): assert 'npm' not in err and secs < 60   # refused before any download

# the papermill notebooks: parameters are checked as the console scripts check their options, before anything is written
NB_CASES = [   # (id, notebook of nbs/experiments, papermill's parameter options, text the error holds)
    ('nb-evaluate-runs-a-string', 'evaluate.ipynb', ['-p', 'runs', 'run'], """parameter runs: expected list[str], got 'run' (str); a list is passed with -y"""),
    ('nb-evaluate-unknown-parameter', 'evaluate.ipynb', ['-p', 'n_tests', '20'], 'unknown parameter(s) n_tests: this notebook takes runs, le_epochs'),
    ('nb-evaluate-n-test-above', 'evaluate.ipynb', ['-p', 'n_test', '100000'], 'parameter n_test 100000: the test set has 10,000 images'),
    ('nb-train-unknown-parameter', 'train.ipynb', ['-p', 'epoch', '3'], 'unknown parameter(s) epoch: this notebook takes preset, name'),
    ('nb-bench-batches-not-a-list', 'bench.ipynb', ['-p', 'batches', '512'], 'parameter batches: expected list[int], got 512 (int)'),
]

@pytest.fixture(scope='module')
def nb_outcomes(tmp_path_factory):
    "Each notebook case run with papermill's console script in a sandbox of its own (two at a time): id -> (exit status, output, before, after)."
    base, io = tmp_path_factory.mktemp('nb-bad'), tmp_path_factory.mktemp('nb-bad-io')
    nb_dir = Path(__file__).parents[1] / 'nbs' / 'experiments'
    def run(case):
        cid, nb, params, _ = case
        d = base / cid; (d / 'tmp').mkdir(parents=True); before = snapshot(d)
        r = subprocess.run([script('papermill'), str(nb_dir / nb), str(io / f'{cid}.ipynb'), '-k', 'python3', '--no-progress-bar', *params],
                           cwd=d, capture_output=True, text=True, timeout=600, env={**os.environ, 'TMPDIR': str(d / 'tmp'), 'OMP_NUM_THREADS': '1'})
        return cid, (r.returncode, re.sub(r'\x1b\[[0-9;]*m', '', r.stdout + r.stderr), before, snapshot(d))
    with ThreadPoolExecutor(2) as ex: return dict(ex.map(run, NB_CASES))

@pytest.mark.parametrize('case', NB_CASES, ids=[c[0] for c in NB_CASES])
def test_bad_notebook_parameter(nb_outcomes, case):
    "A bad papermill parameter (undeclared, of the wrong type, out of range): the notebook fails with the one message, nothing written."
    status, out, before, after = nb_outcomes[case[0]]
    assert status != 0 and case[3] in out, out[-3000:]
    assert after == before, f"the sandbox changed: {set(after.items()) ^ set(before.items())}"

def test_fetch_names_its_fix_once(outcomes):
    "A bad --source tarball: the line names the one fix (fetch again without --source, or a good copy), once."
    line = outcomes['data-fetch-garbage-tarball'][2]
    assert line.lower().count('fix it with') == 1 and '--source' in line, line

def test_bench_keeps_records_it_cannot_append(tmp_path, monkeypatch, capsys):
    "The output folder becomes a file while the benchmark runs: exit 1, one line naming the new file that holds the records."
    import swaro_nb.bench
    from swaro_nb.cli import bench_cli
    out = tmp_path / 'res' / 'bench.json'; out.parent.mkdir(); out.write_text('[{"old": 1}]')
    def timed(methods, batches, epochs, **kw):   # stands in for the timed epochs; the folder is replaced meanwhile
        shutil.rmtree(out.parent); out.parent.write_text('')
        return [dict(method=m, batch=b, s_per_epoch=1.5) for m in methods for b in batches]
    monkeypatch.setattr(swaro_nb.bench, 'benchmark', timed); monkeypatch.chdir(tmp_path)
    with pytest.raises(SystemExit) as e: bench_cli(['--methods', 'swaro,rocl', '--batches', '256', '--out', str(out)])
    err = capsys.readouterr().err.strip().splitlines()
    assert e.value.code == 1 and len(err) == 1 and err[0].startswith('swaro_bench: error: could not append to'), err
    kept = Path(err[0].split('records are in ')[1])
    assert kept.parent == tmp_path and [(r['method'], r['batch']) for r in json.loads(kept.read_text())] == [('swaro', 256), ('rocl', 256)]

def test_bench_appends_and_leaves_no_folder(tmp_path):
    "A real (tiny) benchmark through the console script: records appended to the JSON list, no scratch run folder left."
    work = tmp_path / 'work'; work.mkdir()   # the working directory and TMPDIR of the run
    out = work / 'bench.json'; out.write_text('[{"old": 1}]')
    r = subprocess.run([script('swaro_bench'), '--methods', 'simclr', '--batches', '50', '--epochs', '1', '--subset-per-class', '10',
                        '--width', '8', '--out', str(out)], cwd=work, capture_output=True, text=True, timeout=600,
                       env={**os.environ, 'TMPDIR': str(work), 'TORCHINDUCTOR_CACHE_DIR': str(tmp_path / 'torch-cache')})
    assert r.returncode == 0, r.stderr[-3000:]
    recs = json.loads(out.read_text())
    assert recs[0] == {'old': 1} and [(x['method'], x['batch']) for x in recs[1:]] == [('simclr', 50)]
    assert sorted(p.name for p in work.iterdir()) == ['bench.json'], list(work.iterdir())   # no runs/bench/..., no temp files

def test_setup_stops_before_torch_when_the_disk_is_full(tmp_path):
    """tools/setup.sh on a disk with too little room for torch: one message naming the step, the space it needs and the
    space free; exit 1 before pip is asked for anything (a half-installed torch would be the loss). The checkout is a
    copy of tools/setup.sh beside a stand-in .venv whose python imports nothing and logs how it is called; df is a
    stand-in reporting 100 MB free."""
    (tmp_path / 'tools').mkdir(); shutil.copy(Path(__file__).parents[1] / 'tools' / 'setup.sh', tmp_path / 'tools')
    log = tmp_path / 'calls.log'
    bin_ = tmp_path / '.venv' / 'bin'; bin_.mkdir(parents=True)
    (bin_ / 'python').write_text(f'#!/bin/sh\necho "$*" >> {log}\nexit 1\n'); (bin_ / 'python').chmod(0o755)
    fake = tmp_path / 'fake'; fake.mkdir()
    (fake / 'df').write_text('#!/bin/sh\necho "Filesystem 1024-blocks Used Available Capacity Mounted on"\n'
                             'echo "/dev/x 1000000 900000 102400 90% /"\n'); (fake / 'df').chmod(0o755)
    r = subprocess.run(['bash', 'tools/setup.sh'], cwd=tmp_path, capture_output=True, text=True, timeout=60,
                       env={**os.environ, 'PATH': f"{fake}:{os.environ['PATH']}"})
    assert r.returncode == 1, r.stdout + r.stderr
    assert 'setup stopped: installing torch and torchvision' in r.stderr and '100 MB are free' in r.stderr, r.stderr
    assert 'needs about 7000 MB free' in r.stderr, r.stderr   # in MB: the CIFAR-10 step's 600 MB would read '0 GB' in GB
    assert 'pip' not in log.read_text(), log.read_text()
