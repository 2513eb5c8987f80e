"""The check behind snapshot-e200-resume-fingerprint.json: the eval pin's `swaro_nb.cli eval` of e200 on this machine, the
card name set to the one lease ad ran on, printing the fingerprint of each piece it looks for (then stop it: the rest
would evaluate on the CPU). Run it in a folder holding run/c10-paper-snap-s0-e200/ (config.json, run.json, metrics.jsonl
from results/runs/, weights.pt = the float16 encoder snapshot-stage.sh 3 stages in .gpu/snap-w) and eval/fp32/ with a copy
of results/eval/parts/c10-paper-snap-s0-e200-eval.parts:
    git worktree add /tmp/pin 6f909b8
    PYTHONPATH=/tmp/pin EVAL_TXT=<checkout>/tools/gpu/plans/five-seed-eval.txt python snapshot-e200-resume-fingerprint.py"""
import os, sys
import swaro_nb.execution as ex
import swaro_nb.evaluate as ev

CARD = 'NVIDIA H100 80GB HBM3'   # the card lease ad made e200's LE piece on
ex.device_name = lambda device=None: CARD
orig = ex.piece_fingerprint

def fp(weights, settings, device):
    r = orig(weights, settings, device); print('FINGERPRINT', settings.get('piece'), r, flush=True); return r

ex.piece_fingerprint = ev.piece_fingerprint = fp
from swaro_nb.cli import main
sys.argv = ['swaro_eval', 'eval', 'run/c10-paper-snap-s0-e200', '--out', 'eval/fp32', '--no-progress',
            *open(os.environ['EVAL_TXT']).read().split()]
main()
