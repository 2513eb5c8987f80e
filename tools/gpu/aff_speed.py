"""AFF's step on a GPU: the whole step replayed from CUDA graphs (`GraphedAFFStep`) against the eager step, and times.

Usage (on a GPU machine, from the repository root, SWARO_RECORD_DIR set to where the record goes):
    python tools/gpu/aff_speed.py [--steps 40]

Two checks and one table, all at ACL's batch 128 under bf16 autocast, as `adversarial_fine_tune` runs it:
- the same function: two copies of one network take `--steps` AFF steps on the same batches from the same starts, one
  eager (`aff_step` with `trades_pgd`), one through `GraphedAFFStep` (three eager warm-up steps, then replays); the
  losses step by step and the parameters at the end are compared (in float32 without autocast too, where the replay
  runs the eager kernels on the same numbers and should match them bit for bit);
- the times of one step: eager, the attack from graphs (`GraphedKL`, the default before), the whole step from graphs,
  each in the default memory format and in channels_last (model and batches), medians of CUDA-event timings.
Writes `aff-step-graph.json` (rows stamped with card, commit and date) under $SWARO_RECORD_DIR.
"""
import argparse, copy, sys
from pathlib import Path
import torch
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from swaro_nb.core import median_ms, save_record, device_name
from swaro_nb.encoder import ContrastiveNet
from swaro_nb.aff import FineTuned, aff_stepper

KW = (6.0, 8 / 255, 2 / 255, 10)   # beta, eps, alpha, steps: ACL's


def batches(n, g, cl):
    xs = [torch.rand(128, 3, 32, 32, device='cuda', generator=g) for _ in range(n)]
    if cl: xs = [x.contiguous(memory_format=torch.channels_last) for x in xs]
    return xs, [torch.randint(0, 10, (128,), device='cuda', generator=g) for _ in range(n)]


def network(cl):
    torch.manual_seed(0)
    m = FineTuned(ContrastiveNet().encoder, 512, 10).cuda()
    with torch.no_grad(): m.head.weight.normal_(0, 0.01)   # not the zero head: the attack has a gradient to follow
    return m.to(memory_format=torch.channels_last) if cl else m


def pair(n, a, b, det):
    "Two copies of one network, n steps on the same batches and starts, ways a and b ('how' or 'how-cl'): diffs."
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = det, False
    torch.use_deterministic_algorithms(det, warn_only=True)
    base, res = network(False), []
    xs, ys = batches(n, torch.Generator('cuda').manual_seed(1), False)
    for way in (a, b):
        how, cl = way.split('-')[0], way.endswith('-cl')
        m = copy.deepcopy(base).to(memory_format=torch.channels_last if cl else torch.contiguous_format)
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=2e-4)
        step, g = aff_stepper(how), torch.Generator('cuda').manual_seed(2)
        f = (lambda x: x.contiguous(memory_format=torch.channels_last)) if cl else (lambda x: x)
        with torch.autocast('cuda', dtype=torch.bfloat16):
            ls = [step(m, opt, f(x), y, *KW, g).item() for x, y in zip(xs, ys)]
        res.append((ls, [p.detach().clone() for p in m.parameters()]))
    (la, pa), (lb, pb) = res
    d = [abs(u - v) for u, v in zip(la, lb)]
    dp = max((u - v).abs().max().item() for u, v in zip(pa, pb))
    print(f"{a} vs {b}, deterministic={det}, {n} steps: |loss diff| per step {[f'{v:.2g}' for v in d]}; "
          f"max |param diff| {dp:.3g}")
    return dict(what='two ways, same batches', a=a, b=b, deterministic=det, steps=n,
                loss_diff=[float(f'{v:.3g}') for v in d], max_param_diff=float(f'{dp:.3g}'))


def same(n, amp):
    "Eager against the whole step from graphs, n steps on the same batches and starts: per-step losses, parameters."
    base, out = network(False), {}
    xs, ys = batches(n, torch.Generator('cuda').manual_seed(1), False)
    for how in ('none', 'step'):
        m = copy.deepcopy(base)
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=2e-4)
        step, g = aff_stepper(how), torch.Generator('cuda').manual_seed(2)
        with torch.autocast('cuda', dtype=torch.bfloat16, enabled=amp):
            ls = [step(m, opt, x, y, *KW, g).item() for x, y in zip(xs, ys)]
        out[how] = (ls, [p.detach().clone() for p in m.parameters()], getattr(step, 'failed', None))
    (le, pe, _), (lg, pg, failed) = out['none'], out['step']
    dl = max(abs(a - b) for a, b in zip(le, lg))
    dp = max((a - b).abs().max().item() for a, b in zip(pe, pg))
    eq = sum(torch.equal(a, b) for a, b in zip(pe, pg)) / len(pe)
    print(f"{'bf16' if amp else 'fp32'}: {n} steps, capture failed: {failed}; max |loss diff| {dl:.3g} "
          f"(losses {le[0]:.4f} -> {le[-1]:.4f} eager, {lg[0]:.4f} -> {lg[-1]:.4f} graphs); "
          f"max |param diff| {dp:.3g}; parameters identical: {eq:.3f}")
    return dict(what='same function', precision='bf16' if amp else 'fp32', steps=n, capture_failed=failed,
                max_loss_diff=dl, max_param_diff=dp, identical_params=round(eq, 4),
                loss_first=[round(le[0], 5), round(lg[0], 5)], loss_last=[round(le[-1], 5), round(lg[-1], 5)])


def times():
    rows = []
    for cl in (False, True):
        m = network(cl)
        opt = torch.optim.SGD(m.parameters(), lr=1e-4, momentum=0.9)   # a small rate: the network barely moves
        xs, ys = batches(1, torch.Generator('cuda').manual_seed(1), cl)
        g = torch.Generator('cuda').manual_seed(2)
        for how in ('none', 'attack', 'step'):
            step = aff_stepper(how)
            with torch.autocast('cuda', dtype=torch.bfloat16):
                ms = median_ms(lambda: step(m, opt, xs[0], ys[0], *KW, g), 5, 20, device='cuda')
            fmt = 'channels_last' if cl else 'contiguous'
            print(f"{device_name()}: AFF step, graphs={how}, {fmt}: {ms:.2f} ms (x391 batches: {ms * 391 / 1000:.1f} s)")
            rows.append(dict(what='AFF step', graphs=how, memory_format=fmt, batch=128, steps=10, ms=round(ms, 2),
                             s_per_epoch=round(ms * 391 / 1000, 2)))
    return rows


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--steps', type=int, default=40, help='AFF steps in the check of the same function')
    ap.add_argument('--pairs', action='store_true', help='compare ways step by step (deterministic cuDNN or not)')
    a = ap.parse_args()
    if not torch.cuda.is_available(): sys.exit('aff_speed.py: needs a CUDA GPU')
    if a.pairs:
        rows = [pair(a.steps, *w.split(':'), det) for det in (True, False)
                for w in ('none:none', 'none:step', 'none:none-cl', 'attack:attack-cl')]
        print(save_record('aff-step-pairs', rows)); sys.exit(0)
    rows = [same(a.steps, False), same(a.steps, True)] + times()
    print(save_record('aff-step-graph', rows))
