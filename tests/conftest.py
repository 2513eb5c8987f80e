import json, os, subprocess, sys, types
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

@pytest.fixture
def root(): return ROOT

def script(name: str) -> str:
    "Path of a console script installed beside this interpreter."
    return str(BIN / name)

@pytest.fixture(scope='session')
def console(tmp_path_factory):
    """run(name, *args, cwd=None, timeout=600): the console script `name` installed beside this interpreter, run with `args`
    as `subprocess.run(..., capture_output=True, text=True)` would, but in a forked child of one interpreter per test process
    that imported the library once (tests/console_runner.py --serve): the script's own file as `__main__`, its own working
    directory, stdout and stderr, without the seconds of importing torch each call. Returns (returncode, stdout, stderr)."""
    io = tmp_path_factory.mktemp('console')
    server = subprocess.Popen([sys.executable, str(Path(__file__).parent / 'console_runner.py'), '--serve'], stdin=subprocess.PIPE,
                              stdout=subprocess.PIPE, text=True, env={**os.environ, 'OMP_NUM_THREADS': '1'})
    calls = []
    def run(name, *args, cwd=None, timeout=600):
        k = len(calls); calls.append(name)
        job = dict(id=str(k), script=script(name), argv=[*map(str, args)], cwd=str(cwd or os.getcwd()), env={}, timeout=timeout,
                   stdout=str(io / f'{k}.out'), stderr=str(io / f'{k}.err'))
        server.stdin.write(json.dumps(job) + '\n'); server.stdin.flush()
        res = json.loads(server.stdout.readline())
        assert res['id'] == job['id'], res
        return types.SimpleNamespace(returncode=res['code'], stdout=Path(job['stdout']).read_text(), stderr=Path(job['stderr']).read_text())
    yield run
    server.stdin.close(); server.wait(timeout=60)

def cifar100_missing() -> str | None:
    "Why CIFAR-100 cannot be used on this machine (None when both splits are under the data root)."
    from swaro_nb.data import DataError, data_root, find_layout
    try:
        for train in (True, False): find_layout('cifar100', train=train)
    except DataError:
        return (f'CIFAR-100 is not under {data_root()}: run SWARO_CIFAR100_SRC=DIR bash tools/setup.sh '
                f'with DIR a copy in the binary layout (or swaro_data fetch cifar100 --source DIR)')
    return None

_C100 = cifar100_missing()
needs_cifar100 = pytest.mark.skipif(_C100 is not None, reason=_C100 or '')


# The test files, longest first (from `--durations=0` on 2 workers: eval 205 s, train 168, plan_sessions ~145, experiments
# 121, readme 103, hub 79, docs 77, bad_input 62, ddp 48, baselines 44, compile_check 44, plain_install 42, snapshots 38,
# cleanup 35, data_cli 25; the rest under 10 s): pytest-xdist's `--dist loadfile` hands whole files to the workers in
# collection order, so a long file collected late (or left out of this list: it goes last) can leave one worker running it
# alone at the end. The GPU session scripts' end-to-end tests are a file of their own (test_plan_sessions.py), apart from the
# planner's fast tests (test_plan.py), so that the two workers share them instead of one running both.
LONGEST_FIRST = ('test_eval.py', 'test_train.py', 'test_plan_sessions.py', 'test_experiments.py', 'test_readme.py', 'test_hub.py',
                 'test_docs.py', 'test_bad_input.py', 'test_ddp.py', 'test_baselines.py', 'test_compile_check.py', 'test_plain_install.py',
                 'test_snapshots.py', 'test_cleanup.py', 'test_data_cli.py', 'test_data_fetch.py', 'test_plan.py')


def pytest_configure(config):
    """pytest-xdist 3.8 sorts `--dist loadfile`'s files by their number of tests before handing them out (its
    `--loadscope-reorder`, on by default), which puts test_readme.py (many short parametrised checks) first and the longest
    files late, whatever LONGEST_FIRST says: the collection order is kept instead."""
    if getattr(config.option, 'loadscopereorder', None): config.option.loadscopereorder = False


def pytest_collection_modifyitems(config, items):
    "Collect the longest files first; each file's tests keep their order."
    rank = {n: i for i, n in enumerate(LONGEST_FIRST)}
    items.sort(key=lambda it: rank.get(Path(str(it.fspath)).name, len(rank)))
