import sys, swaro_nb.execution as ex, swaro_nb.core as core
card = 'NVIDIA H100 80GB HBM3'   # the card lease ad made e200's LE piece on
ex.device_name = lambda device=None: card
orig = ex.piece_fingerprint
def fp(weights, settings, device):
    r = orig(weights, settings, device); print('FINGERPRINT', settings.get('piece'), r, flush=True); return r
ex.piece_fingerprint = fp
import swaro_nb.evaluate as ev; ev.piece_fingerprint = fp
from swaro_nb.cli import main
sys.argv = ['swaro_eval', 'eval', 'run/c10-paper-snap-s0-e200', '--out', 'eval/fp32', '--no-progress', *open('/work/main/tools/gpu/plans/five-seed-eval.txt').read().split()]
main()
