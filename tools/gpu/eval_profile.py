#!/usr/bin/env python
"""Where the evaluation's attacks spend their time on a GPU: seconds per step of one forward+backward, APGD-T, FAB-T and
Square (torchattacks, as `swaro_nb.eval_attacks` calls them), in float32 and under bf16 autocast, for several numbers of
images, plus torch.profiler tables of a few APGD-T steps and Square queries in l_2; each measured with torchattacks as
shipped (`reference`), with its constant tensors made on the GPU (`device`, `swaro_nb.eval_attacks.device_constants`,
the library's default), and `compiled`: `device` on the attack copy under torch.compile (dynamic shapes; its first calls,
which compile, are timed apart as `first_call_s`), same machine, same call (`--paths`). The classifier is a ResNet-18 encoder with a linear head on the
attack copy `evaluate_robustness` uses (BN folded, channels-last), built so that no attack can change its prediction (a
large bias on one class): every image stays in every step, which is what the robust images of a trained model cost.

  python tools/gpu/eval_profile.py --out /tmp/out/eval-profile.json        # GPU machine (about 2 minutes)
  python tools/gpu/eval_profile.py --smoke --out /tmp/ep.json              # CPU dry run
"""
from __future__ import annotations
import argparse, json, time
from pathlib import Path
import torch
import torch.nn as nn


def timed(fn, reps: int, sync) -> float:
    "Seconds per call of fn (after one warm-up call)."
    fn(); sync(); t0 = time.perf_counter()
    for _ in range(reps): fn()
    sync(); return (time.perf_counter() - t0) / reps


def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--out', required=True, help='the JSON record')
    ap.add_argument('--sizes', default='256,1024,2048', help='numbers of images (default %(default)s)')
    ap.add_argument('--steps', type=int, default=10, help='attack steps timed per call (Square: 10x as many queries)')
    ap.add_argument('--smoke', action='store_true', help='CPU: width 8, 16 and 32 images, 2 steps')
    ap.add_argument('--paths', default='reference,device', help="torchattacks as shipped ('reference'), with its constants made on the GPU ('device', the library's default), and that on a torch.compile'd attack copy ('compiled'); default %(default)s")
    a = ap.parse_args(argv)
    from swaro_nb.core import run_stamp, to_float
    from swaro_nb.encoder import ContrastiveNet
    import swaro_nb.eval_attacks as ea
    from swaro_nb.eval_attacks import apgd, autoattack, logits
    from swaro_nb.encoder import attack_copy
    dev = torch.device('cuda' if torch.cuda.is_available() and not a.smoke else 'cpu')
    sync = torch.cuda.synchronize if dev.type == 'cuda' else (lambda: None)
    sizes = [16, 32] if a.smoke else [int(s) for s in a.sizes.split(',')]
    steps = 2 if a.smoke else a.steps
    width = 8 if a.smoke else 64
    torch.manual_seed(0)
    enc = ContrastiveNet(width=width).encoder
    head = nn.Linear(8 * width, 10)
    with torch.no_grad(): head.weight.mul_(0.01); head.bias.zero_(); head.bias[0] = 10.0   # predicts class 0 whatever the input
    clf = nn.Sequential(enc, head).to(dev)
    g = torch.Generator().manual_seed(0)
    x_all = torch.rand(max(sizes), 3, 32, 32, generator=g)
    with torch.no_grad():   # BN statistics from the images (cumulative average), then eval mode
        for m in clf.modules():
            if isinstance(m, nn.modules.batchnorm._BatchNorm): m.momentum = None
        clf.train(); [clf(x_all[i:i + 256].to(dev)) for i in range(0, len(x_all), 256)]; clf.eval()
    m0 = attack_copy(clf, dev); m = m0   # m: the network the attacks below run on (m0 eager, mc compiled)
    rows, paths = [], a.paths.split(',')
    bad = set(paths) - {'reference', 'device', 'compiled'}
    if bad: raise SystemExit(f"unknown --paths {sorted(bad)}: choose from reference, device, compiled")
    mc = torch.compile(m0, dynamic=True) if 'compiled' in paths else None
    net = lambda path: mc if path == 'compiled' else m0
    # the two paths alternate which goes first at each setting, so that warming up favours neither
    for i, (amp, n) in enumerate((amp, n) for amp in (False, True) for n in sizes):
        for path in (paths if i % 2 == 0 else paths[::-1]):
            ea.DEVICE_CONSTANTS = path != 'reference'   # 'reference': torchattacks as shipped; else its constants made on the GPU (the library's default)
            x, y = x_all[:n].to(dev), torch.zeros(n, dtype=torch.int64, device=dev)
            m = net(path)
            def fb():
                xa = x.clone().requires_grad_(True)
                torch.autograd.grad(nn.functional.cross_entropy(logits(m, xa, amp), y), xa)
            r = dict(path=path, amp='bf16' if amp else 'fp32', n=n)
            if path == 'compiled':   # the first calls compile (a graph with gradients, one without); timed apart
                sync(); t0 = time.perf_counter(); fb()
                with torch.no_grad(): logits(m, x, amp)
                sync(); r['first_call_s'] = time.perf_counter() - t0
            r['fwd_bwd_s'] = timed(fb, 5, sync)
            for norm, eps in (('linf', 8 / 255), ('l2', 0.5)):
                r[f'apgd_t_{norm}_step_s'] = timed(lambda: apgd(m, x, y, norm, eps, steps, targeted=True, n_targets=1, amp=amp), 1, sync) / steps
                r[f'fab_t_{norm}_step_s'] = timed(lambda: autoattack(m, x, y, norm, eps, steps=steps, n_targets=1, amp=amp,
                                                                     components=('fab-t',)), 1, sync) / steps
                r[f'square_{norm}_query_s'] = timed(lambda: autoattack(m, x, y, norm, eps, n_queries=10 * steps, amp=amp,
                                                                       components=('square',)), 1, sync) / (10 * steps)
            with torch.no_grad(): r['still_correct'] = (logits(m, x, amp).argmax(1) == y).float().mean().item()
            m = net('device')
            print({k: (round(v, 5) if isinstance(v, float) else v) for k, v in r.items()}, flush=True)
            rows.append(r)
    n = sizes[len(sizes) // 2]
    x, y = x_all[:n].to(dev), torch.zeros(n, dtype=torch.int64, device=dev)
    acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if dev.type == 'cuda' else [])
    tables = {}
    for path, (name, fn) in ((p, f) for p in a.paths.split(',') for f in (
            ('apgd_t_l2', lambda: apgd(m, x, y, 'l2', 0.5, max(2, steps // 2), targeted=True, n_targets=1, amp=False)),
            ('square_l2', lambda: autoattack(m, x, y, 'l2', 0.5, n_queries=5 * steps, amp=False, components=('square',))))):
        ea.DEVICE_CONSTANTS = path != 'reference'
        if path == 'compiled': m = mc
        with torch.profiler.profile(activities=acts) as prof:
            fn(); sync()
        m = net('device')
        key = 'self_cuda_time_total' if dev.type == 'cuda' else 'self_cpu_time_total'
        tables[f'{name}_fp32_n{n}_{path}'] = prof.key_averages().table(sort_by=key, row_limit=20, max_name_column_width=60)
        print(path, name, tables[f'{name}_fp32_n{n}_{path}'], flush=True)
    # the same adversarial images both ways on this device: a classifier the attacks do fool (no large bias), the same seed
    same = {}
    torch.backends.cudnn.deterministic, torch.backends.cudnn.benchmark = True, False   # bitwise comparison: the same kernels both ways
    weak = attack_copy(nn.Sequential(enc, nn.Linear(8 * width, 10)).to(dev).eval(), dev)
    xw = x_all[:min(256, len(x_all))].to(dev)
    with torch.no_grad(): yw = logits(weak, xw, False).argmax(1)
    for name, fn in (('apgd_t_l2', lambda: apgd(weak, xw, yw, 'l2', 0.5, steps, targeted=True, n_targets=3, amp=False)),
                     ('apgd_ce_l2', lambda: apgd(weak, xw, yw, 'l2', 0.5, steps, amp=False)),
                     ('square_l2', lambda: autoattack(weak, xw, yw, 'l2', 0.5, n_queries=20 * steps, amp=False, components=('square',))),
                     ('square_linf', lambda: autoattack(weak, xw, yw, 'linf', 8 / 255, n_queries=20 * steps, amp=False, components=('square',)))):
        outs = []
        for path in ('reference', 'device'):   # (the compiled path rounds differently: not compared bit for bit)
            ea.DEVICE_CONSTANTS = path == 'device'
            outs.append(fn())
        same[name] = dict(identical=bool(torch.equal(*outs)), images_changed=int((outs[0] != xw).flatten(1).any(1).sum()), images=len(xw))
        print(name, same[name], flush=True)
    ea.DEVICE_CONSTANTS = True
    rec = dict(kind='eval-profile', **run_stamp(dev), steps=steps, width=width, rows=rows, profiles=tables, same_images=same,
               note='seconds per step (Square: per query) on a classifier that no attack can fool, so every image stays in every step')
    Path(a.out).parent.mkdir(parents=True, exist_ok=True)
    Path(a.out).write_text(json.dumps(rec, indent=1))
    print(f'-> {a.out}')


if __name__ == '__main__': main()
