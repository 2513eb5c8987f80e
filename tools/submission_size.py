#!/usr/bin/env python
"""How big this session's submission is, measured as the landing measures it, before anything is committed in vain.

  python tools/submission_size.py                      # commits since the tag session-base (git tag session-base at the start)
  python tools/submission_size.py --base 1944d9a       # ... since a commit
  python tools/submission_size.py --pending            # ... plus what `git add -A; git commit` would add now
  python tools/submission_size.py --add 122e6          # ... plus raw bytes a later commit will add (a checkpoint, weights)

A submission lands only if (env/README, "a submission's diffs" and "a submission's size"):
  * the diffs of all its commits, added up as text, are at most 256 MiB: each commit's `git diff --binary --no-renames`
    against its first parent, so a binary file counts about 1.29 times its bytes (deflate, then base85 in lines of
    52 bytes), a removed file counts as much as an added one (the patch holds it to be reversible), and a file added in
    one commit and moved or removed in a later one counts twice;
  * its commits packed as git sends them are at most 512 MiB (`git pack-objects --revs` of base..HEAD).
Over either, the whole submission is refused and none of its commits land: a lease's records and weights with them.
Exit status 1 when a measured or predicted total passes --warn (a fraction of a limit, default 0.85), else 0."""
import argparse, os, subprocess, sys
from pathlib import Path

DIFF_LIMIT, PACK_LIMIT = 256 << 20, 512 << 20
B85_RATIO = 67 / 52  # git's binary patch: base85 lines of 52 bytes (65 characters, a length character, a newline)

def git(*args, cwd='.', data=None) -> bytes:
    return subprocess.run(['git', *args], cwd=cwd, input=data, capture_output=True, check=True).stdout

def commits(base: str, cwd='.') -> list:
    "The commits of base..HEAD, oldest first."
    return git('rev-list', '--reverse', f'{base}..HEAD', cwd=cwd).decode().split()

def diff_bytes(commit: str, cwd='.') -> int:
    "Bytes of one commit's diff as text against its first parent (a root commit: against the empty tree)."
    parents = git('rev-list', '--parents', '-n', '1', commit, cwd=cwd).decode().split()[1:]
    parent = parents[0] if parents else git('hash-object', '-t', 'tree', '/dev/null', cwd=cwd).decode().strip()
    return len(git('diff', '--binary', '--no-renames', '--full-index', parent, commit, cwd=cwd))

def pending_bytes(cwd='.') -> int:
    "Bytes of the diff that committing every change and untracked, not ignored, file now would add."
    index = Path(git('rev-parse', '--git-dir', cwd=cwd).decode().strip())
    index = (index if index.is_absolute() else Path(cwd) / index) / 'submission-size.index'
    env = {**os.environ, 'GIT_INDEX_FILE': str(index)}   # a scratch index: the real one and the work tree stay as they are
    try:
        subprocess.run(['git', 'read-tree', 'HEAD'], cwd=cwd, env=env, check=True, capture_output=True)
        subprocess.run(['git', 'add', '-A'], cwd=cwd, env=env, check=True, capture_output=True)
        out = subprocess.run(['git', 'diff', '--cached', '--binary', '--no-renames', '--full-index', 'HEAD'], cwd=cwd,
                             env=env, check=True, capture_output=True).stdout
    finally: index.unlink(missing_ok=True)
    return len(out)

def pack_bytes(base: str, cwd='.') -> int:
    "Bytes of base..HEAD's objects packed as git sends them."
    return len(git('pack-objects', '--revs', '--stdout', '-q', cwd=cwd, data=f'HEAD\n^{base}\n'.encode()))

def measure(base: str, cwd='.', pending=False, add=0.0) -> dict:
    "Every commit's diff bytes, their sum, the packed bytes, and the totals with pending changes and `add` raw bytes."
    per = [(c, diff_bytes(c, cwd)) for c in commits(base, cwd)]
    extra = (pending_bytes(cwd) if pending else 0) + int(add * B85_RATIO)
    diff = sum(b for _, b in per)
    packed = pack_bytes(base, cwd)
    return dict(commits=per, diff=diff, diff_total=diff + extra, pack=packed, pack_total=packed + int(add), extra=extra)

def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('--base', default='session-base', help='the commit the session started from (default: tag session-base)')
    ap.add_argument('--pending', action='store_true', help='add what committing every change now would add')
    ap.add_argument('--add', type=float, default=0.0, help='raw bytes of binary files a later commit will add or remove')
    ap.add_argument('--warn', type=float, default=0.85, help='fraction of a limit that fails the check (default 0.85)')
    ap.add_argument('--top', type=int, default=5, help='the largest commits to list')
    ap.add_argument('-C', dest='cwd', default='.', help='the repository')
    a = ap.parse_args(argv)
    try: git('rev-parse', '--verify', f'{a.base}^{{commit}}', cwd=a.cwd)
    except subprocess.CalledProcessError:
        sys.exit(f"error: no commit {a.base!r}: tag the commit the session started from (git tag session-base <commit>) "
                 "or pass --base")
    m = measure(a.base, a.cwd, a.pending, a.add)
    mib = lambda b: f'{b / 2 ** 20:.1f} MiB'
    print(f"{len(m['commits'])} commits since {a.base}: diffs {mib(m['diff'])}, packed {mib(m['pack'])}")
    for c, b in sorted(m['commits'], key=lambda x: -x[1])[:a.top]:
        subj = git('log', '-1', '--format=%s', c, cwd=a.cwd).decode().strip()[:70]
        print(f"  {c[:9]} {mib(b):>10}  {subj}")
    if m['extra']: print(f"with pending changes and --add: diffs {mib(m['diff_total'])}, packed {mib(m['pack_total'])}")
    over = []
    for what, total, limit in (('diffs', m['diff_total'], DIFF_LIMIT), ('packed', m['pack_total'], PACK_LIMIT)):
        share = total / limit
        print(f"{what}: {mib(total)} of {mib(limit)} ({share:.0%}){'  <- over --warn' if share > a.warn else ''}")
        if share > a.warn: over.append(what)
    if over:
        print(f"too big to land safely ({', '.join(over)}): move weights or checkpoints to a later session, "
              "or drop commits that add and then remove the same large file")
        return 1
    return 0

if __name__ == '__main__': sys.exit(main())
