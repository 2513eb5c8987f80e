"""tools/submission_size.py counts a session's diffs as the landing does: checked on a scratch repository against an
independent model of git's binary patch (deflate, then base85 in lines of 52 bytes) and against plain text diffs."""
import math, os, subprocess, sys, zlib
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / 'tools'))
import submission_size as ss

def git(repo, *a): return subprocess.run(['git', *a], cwd=repo, capture_output=True, check=True, text=True).stdout

def b85_patch_bytes(data: bytes) -> int:
    "Bytes of the base85 lines git writes for `data` (its deflated form): a length character, 5 per 4 bytes, a newline."
    z = zlib.compress(data, 9)
    return sum(1 + math.ceil(len(z[i:i + 52]) / 4) * 5 + 1 for i in range(0, len(z), 52))

@pytest.fixture
def repo(tmp_path):
    r = tmp_path / 'r'; r.mkdir()
    git(r, 'init', '-q', '-b', 'main'); git(r, 'config', 'user.email', 't@t'); git(r, 'config', 'user.name', 't')
    (r / 'a.txt').write_text('one\n'); git(r, 'add', '.'); git(r, 'commit', '-qm', 'base'); git(r, 'tag', 'session-base')
    return r

def commit(repo, msg):
    git(repo, 'add', '-A'); git(repo, 'commit', '-qm', msg); return git(repo, 'rev-parse', 'HEAD').strip()

def test_binary_add_move_remove(repo):
    data = os.urandom(300_000)   # incompressible, as float weights nearly are
    (repo / 'w.bin').write_bytes(data); c1 = commit(repo, 'add')
    (repo / 'd').mkdir(); os.replace(repo / 'w.bin', repo / 'd' / 'w.bin'); c2 = commit(repo, 'move')
    (repo / 'd' / 'w.bin').unlink(); c3 = commit(repo, 'remove')
    one = b85_patch_bytes(data)
    sizes = dict(ss.measure('session-base', repo)['commits'])
    assert one * 1.0 <= sizes[c1] <= one + 2000     # the patch's lines, plus a few header lines and the reverse 'literal 0'
    assert 2 * one <= sizes[c2] <= 2 * one + 4000   # a move is a removal and an addition: it counts twice
    assert one <= sizes[c3] <= one + 2000           # a removal holds the file too (the patch is reversible)
    assert 1.25 < sizes[c1] / len(data) < 1.33      # what B85_RATIO predicts for raw bytes
    m = ss.measure('session-base', repo)
    assert m['diff'] == sum(sizes.values()) and m['diff'] > 4 * len(data)
    assert m['pack_total'] < 1.2 * len(data)        # packed, the one blob travels once

def test_text_diff_and_pending(repo):
    (repo / 'a.txt').write_text('one\ntwo\n'); c = commit(repo, 'text')
    assert ss.diff_bytes(c, repo) == len(git(repo, 'diff', '--no-renames', '--full-index', f'{c}^', c).encode())
    (repo / 'new.bin').write_bytes(os.urandom(50_000))   # untracked: counted as pending only, nothing staged
    m = ss.measure('session-base', repo, pending=True)
    assert b85_patch_bytes((repo / 'new.bin').read_bytes()) <= m['extra'] <= b85_patch_bytes((repo / 'new.bin').read_bytes()) + 2000
    assert git(repo, 'status', '--porcelain') == '?? new.bin\n'   # the scratch index left the real one alone

def test_exit_status_and_bad_base(repo, capsys):
    (repo / 'w.bin').write_bytes(os.urandom(100_000)); commit(repo, 'add')
    assert ss.main(['-C', str(repo)]) == 0
    assert ss.main(['-C', str(repo), '--add', str(0.9 * ss.DIFF_LIMIT)]) == 1   # a checkpoint that would not fit
    assert 'too big to land' in capsys.readouterr().out
    with pytest.raises(SystemExit, match='no commit'): ss.main(['-C', str(repo), '--base', 'nope'])
