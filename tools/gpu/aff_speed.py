"""AFF's step on a GPU: its times in each memory format, and whether channels_last computes the same step.

Usage (on a GPU machine, from the repository root, SWARO_RECORD_DIR set to where the records go):
    python tools/gpu/aff_speed.py            # times -> aff-step-times.json
    python tools/gpu/aff_speed.py --pairs    # the same step? -> aff-step-pairs.json
    python tools/gpu/aff_speed.py --fit      # adversarial_fine_tune itself, both layouts -> aff-fit-layout.json

At ACL's batch 128 under bf16 autocast, as `adversarial_fine_tune` runs it:
- times: `aff_step` eager and with the KL attack replayed from CUDA graphs (`GraphedKL`, the default), each with the
  network and batches in the default memory format and in channels_last; medians of CUDA-event timings.
- pairs: two copies of one network take `--steps` steps on the same batches from the same attack starts, two ways at
  a time, and the loss difference is printed step by step, with cuDNN deterministic and not. The baseline is eager
  against eager (what nondeterministic kernels alone give); a fast way computes the same step when its differences
  stay at that baseline's size. The attack steps by gradient signs, so a rounding difference flips some of them and
  two runs part after a few steps whatever the cause: look at the first steps.
- fit: `adversarial_fine_tune` as the evaluation calls it (graphed attack, bf16), `channels_last` False then None (its
  CUDA default), from one network on the same random images, after a short warm-up call each way: each epoch's loss and
  the seconds of the whole call, so that the library's own path (not `stepper`'s) is the one checked before a lease
  spends its time on it.
"""
import argparse, copy, sys
from pathlib import Path
import torch
sys.path.insert(0, str(Path(__file__).resolve().parents[2]))
from swaro_nb.core import median_ms, save_record, device_name
from swaro_nb.encoder import ContrastiveNet
from swaro_nb.aff import FineTuned, aff_step, GraphedKL, adversarial_fine_tune
from swaro_nb.baselines import trades_pgd

KW = (6.0, 8 / 255, 2 / 255, 10)   # beta, eps, alpha, steps: ACL's
WAYS = ('eager', 'graph', 'eager-cl', 'graph-cl')   # the attack eager or from graphs; '-cl': channels_last


def network():
    "The AFF network from seed 0, in the default memory format (`stepper` gives each way its format)."
    torch.manual_seed(0)
    m = FineTuned(ContrastiveNet().encoder, 512, 10).cuda()
    with torch.no_grad(): m.head.weight.normal_(0, 0.01)   # not the zero head: the attack has a gradient to follow
    return m


def stepper(way):
    "(network -> channels_last or not, batch -> its format, the step) for a way of WAYS."
    cl, kl = way.endswith('-cl'), GraphedKL() if way.startswith('graph') else trades_pgd
    fmt = torch.channels_last if cl else torch.contiguous_format
    return (lambda m: m.to(memory_format=fmt)), (lambda x: x.contiguous(memory_format=fmt)), kl


def batches(n):
    g = torch.Generator('cuda').manual_seed(1)
    return ([torch.rand(128, 3, 32, 32, device='cuda', generator=g) for _ in range(n)],
            [torch.randint(0, 10, (128,), device='cuda', generator=g) for _ in range(n)])


def pair(n, a, b, det):
    "Ways a and b from one network on the same n batches and starts: the loss difference step by step."
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = det, False
    base, (xs, ys), res = network(), batches(n), []
    for way in (a, b):
        to_m, to_x, kl = stepper(way)
        m = to_m(copy.deepcopy(base))
        opt = torch.optim.SGD(m.parameters(), lr=0.1, momentum=0.9, weight_decay=2e-4)   # ACL's
        g = torch.Generator('cuda').manual_seed(2)
        with torch.autocast('cuda', dtype=torch.bfloat16):
            res.append([aff_step(m, opt, to_x(x), y, *KW, g, kl).item() for x, y in zip(xs, ys)])
    d = [abs(u - v) for u, v in zip(*res)]
    print(f"{a} vs {b}, cudnn deterministic={det}: |loss diff| by step {' '.join(f'{v:.2g}' for v in d)}")
    return dict(what='loss difference by step', a=a, b=b, cudnn_deterministic=det, steps=n,
                loss_diff=[float(f'{v:.3g}') for v in d], loss_a=[round(v, 5) for v in res[0]])


def times():
    rows, (xs, ys) = [], batches(1)
    for way in WAYS:
        to_m, to_x, kl = stepper(way)
        m = to_m(network())
        opt = torch.optim.SGD(m.parameters(), lr=1e-4, momentum=0.9)   # a small rate: the network barely moves
        g, x = torch.Generator('cuda').manual_seed(2), to_x(xs[0])
        with torch.autocast('cuda', dtype=torch.bfloat16):
            ms = median_ms(lambda: aff_step(m, opt, x, ys[0], *KW, g, kl), 5, 20, device='cuda')
        print(f"{device_name()}: AFF step, {way}: {ms:.2f} ms (x391 batches: {ms * 391 / 1000:.1f} s)")
        rows.append(dict(what='AFF step', way=way, batch=128, steps=10, ms=round(ms, 2),
                         s_per_epoch=round(ms * 391 / 1000, 2)))
    return rows


def fit(n=2048, epochs=3, device='cuda'):
    "adversarial_fine_tune contiguous, then channels-last (its CUDA default), on the same n random images."
    g = torch.Generator().manual_seed(3)
    xs = torch.randint(0, 256, (n, 3, 32, 32), dtype=torch.uint8, generator=g)
    ys = torch.randint(0, 10, (n,), generator=g)
    torch.manual_seed(0); enc = ContrastiveNet().encoder
    # CUDA's start-up and cuDNN's choices outside the times below (each call still captures its own graphs)
    for cl in (False, True):
        adversarial_fine_tune(enc, xs[:256], ys[:256], xs[:128], ys[:128], 512, 10, epochs=1, device=device,
                              progress=False, channels_last=cl)
    rows = []
    for cl in (False, None):
        r = adversarial_fine_tune(enc, xs, ys, xs[:512], ys[:512], 512, 10, epochs=epochs, device=device,
                                  progress=False, channels_last=cl)
        cl_out = r.model.encoder.conv1.weight.is_contiguous(memory_format=torch.channels_last)
        rows.append(dict(what='adversarial_fine_tune', channels_last=cl, images=n, epochs=epochs,
                         layout='channels_last' if cl_out else 'contiguous',
                         train_loss=[round(v, 5) for v in r.train_loss], test_acc=round(r.test_acc, 3),
                         seconds=round(r.seconds, 2)))
        print(f"{device_name()}: channels_last={cl} ({rows[-1]['layout']}): loss by epoch {rows[-1]['train_loss']}, "
              f"{r.seconds:.1f} s")
    return rows


if __name__ == '__main__':
    ap = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    ap.add_argument('--pairs', action='store_true', help='the loss difference by step of two ways (see the docstring)')
    ap.add_argument('--steps', type=int, default=8, help='steps of each way in --pairs')
    ap.add_argument('--fit', action='store_true', help='adversarial_fine_tune in both layouts (see the docstring)')
    a = ap.parse_args()
    if not torch.cuda.is_available(): sys.exit('aff_speed.py: needs a CUDA GPU')
    if a.fit:
        print(save_record('aff-fit-layout', fit()))
    elif a.pairs:
        rows = [pair(a.steps, *w, det) for det in (True, False)
                for w in (('eager', 'eager'), ('graph', 'graph'), ('graph', 'graph-cl'))]
        print(save_record('aff-step-pairs', rows))
    else:
        print(save_record('aff-step-times', times()))
