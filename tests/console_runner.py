"""Run many console-script invocations fast: import the library once, then run each console script's own file (the one
in the virtual environment's bin/) in a forked child with its own arguments, working directory, environment and
stdout/stderr files. No tensor work happens before the forks, so each child starts as a fresh process would, minus the
seconds of importing torch.

Usage: python tests/console_runner.py JOBS.json RESULTS.json [--parallel N]
JOBS.json: a list of {"id", "script" (path), "argv", "cwd", "env" (added), "stdout", "stderr"}; RESULTS.json: id -> {"code", "seconds"}.

Or `python tests/console_runner.py --serve`: one job a line on stdin (the same fields, and "timeout" in seconds), each run as
it arrives, one at a time; its result ({"id", "code", "seconds"}) a line on stdout (tests/conftest.py's `console` fixture).
A job past its timeout is ended by SIGALRM (code -14).
"""
import json, os, runpy, signal, sys, tempfile, time, traceback

def child(job: dict):
    "In the forked child: redirect, run the console script as __main__, exit with its status."
    code = 1
    try:
        for fd, path in ((1, job['stdout']), (2, job['stderr'])):
            f = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o644); os.dup2(f, fd); os.close(f)
        f = os.open(os.devnull, os.O_RDONLY); os.dup2(f, 0); os.close(f)   # not the jobs' pipe of --serve
        os.chdir(job['cwd']); os.environ.update(job['env'])
        if job.get('timeout'): signal.alarm(int(job['timeout']))   # its default action ends the process
        tempfile.tempdir = None   # TMPDIR is read again
        sys.argv = [job['script'], *job['argv']]
        try: runpy.run_path(job['script'], run_name='__main__'); code = 0
        except SystemExit as e:
            if e.code is None or isinstance(e.code, int): code = e.code or 0
            else: print(e.code, file=sys.stderr); code = 1
    except BaseException:
        traceback.print_exc(); code = 1
    finally:
        try: sys.stdout.flush(); sys.stderr.flush()
        finally: os._exit(code)

def preload():
    "Import what the console scripts import (once, before the forks)."
    import importlib
    # torch._dynamo: torch.optim imports it on the first optimizer (training, a linear head's fit): 2.7 s a job otherwise
    for m in ('torch._dynamo', 'swaro_nb.cli', 'swaro_nb.train', 'swaro_nb.bench', 'swaro_nb.evaluate', 'swaro_nb.eval_runs', 'swaro_nb.robustness', 'swaro_nb.execution'):   # what the scripts import
        try: importlib.import_module(m)
        except Exception: pass   # the child that needs it imports it again and reports the failure itself

def serve():
    "Jobs from stdin, a line each, run one at a time as they come; a result line each on stdout."
    preload()
    for line in sys.stdin:
        if not line.strip(): continue
        job = json.loads(line); t = time.time(); pid = os.fork()
        if pid == 0: child(job)
        _, status = os.waitpid(pid, 0)
        print(json.dumps(dict(id=job['id'], code=os.waitstatus_to_exitcode(status), seconds=round(time.time() - t, 2))), flush=True)

def main():
    if sys.argv[1:] == ['--serve']: return serve()
    jobs_path, results_path = sys.argv[1:3]
    par = int(sys.argv[sys.argv.index('--parallel') + 1]) if '--parallel' in sys.argv else 2
    preload()
    jobs, running, results = json.loads(open(jobs_path).read()), {}, {}
    while jobs or running:
        while jobs and len(running) < par:
            job = jobs.pop(0); t = time.time(); pid = os.fork()
            if pid == 0: child(job)
            running[pid] = (job['id'], t)
        pid, status = os.wait()
        jid, t = running.pop(pid)
        results[jid] = dict(code=os.waitstatus_to_exitcode(status), seconds=round(time.time() - t, 2))
    open(results_path, 'w').write(json.dumps(results))

if __name__ == '__main__': main()
