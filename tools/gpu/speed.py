#!/usr/bin/env python
"""The engine's speed, measured on a GPU in one job: the card's bf16 matmul peak, fast paths against the eager step
(agreement), then for each variant a real SwARo epoch (clustering, monitor, checkpoints included) and its per-phase
profile. One JSON record per item is appended to OUT (written atomically after each item, so a cut job keeps what it
measured). Under torchrun every rank trains and rank 0 writes (DDP at the given global batch).
--feature-pass one-rank,sharded measures SwARo's refresh both ways: 'sharded' is the library's (every rank extracts its
shard of the training set, swaro_nb.cluster.sharded_features); 'one-rank' stands in for it here, in this script only,
with the whole pass on each rank, which takes the time the refresh took when rank 0 alone extracted every feature (the
before of the sharding; the labels are rank 0's either way). --kernels adds torch.profiler tables (rank 0's; every rank
runs the profiled work, since under DDP it holds collectives).

  python tools/gpu/speed.py --out /root/swaro/speed.json [--variants base,attack,all] [--batches 512,256] [--agreement]
  torchrun --nproc_per_node 4 tools/gpu/speed.py --out ... --variants all --batches 512 --tag ddp4
  torchrun --nproc_per_node 2 tools/gpu/speed.py --out /tmp/s.json --preset smoke --batches 50 --runs-dir /tmp/runs \
    --variants eager --feature-pass one-rank,sharded --kernels --warmup 1 --timed 1        (a dry run on a CPU, gloo)
"""
import argparse, json, os, sys, time
from dataclasses import replace
from pathlib import Path
import torch
import swaro_nb.methods
from swaro_nb.core import run_stamp, extract_features
from swaro_nb.cluster import sharded_features
from swaro_nb.config import make_config
from swaro_nb.train import Trainer, init_distributed
from swaro_nb.bench import matmul_peak_tflops, step_flops, profile_epoch, real_epoch_seconds, agreement

VARIANTS = {  # name -> TrainConfig fields
    'eager': dict(cuda_graphs=False, compile=False),
    'base': dict(cuda_graphs=True, compile=False),
    'attack': dict(cuda_graphs=True, compile='attack'),
    'train': dict(cuda_graphs=True, compile='train'),
    'all': dict(cuda_graphs=True, compile='all'),
    'all-max': dict(cuda_graphs=True, compile='all', compile_mode='max-autotune-no-cudagraphs'),
    'all-ro': dict(cuda_graphs=True, compile='all', compile_mode='reduce-overhead'),   # training network's forward/backward as CUDA graphs too
    'all-ro-shared': dict(cuda_graphs=True, compile='all', compile_mode='reduce-overhead', rocl_term_forward='shared'),   # rocl-code only
    'attack-shared': dict(cuda_graphs=True, compile='attack', rocl_term_forward='shared'),   # rocl-code only
}

def one_rank_pass(fn, images, batch_size=1024, device=None, amp=None):
    "The refresh's feature pass unsharded: every image on this rank (the time of the pass on rank 0 alone)."
    return extract_features(fn, images, batch_size, device=device, amp=amp)

FEATURE_PASS = {'sharded': sharded_features, 'one-rank': one_rank_pass}   # what SwARo's refresh calls, by name

def append(path, rec):
    p = Path(path); old = json.loads(p.read_text()) if p.exists() else []
    tmp = p.with_suffix('.tmp'); tmp.write_text(json.dumps(old + [rec], indent=1)); os.replace(tmp, p)
    print(json.dumps({k: v for k, v in rec.items() if k not in ('loss', 'date', 'torch')}), flush=True)

# --smoke: the preset's method and objective at the smoke preset's sizes (a dry run of a job on a CPU)
SMOKE = dict(subset_per_class=100, width=8, proj_hidden=256, n_clusters=50, attack_steps=3, monitor_bank=1000, monitor_test=500,
             precision='fp32', channels_last=False)

def flops_per_image(preset, method, loss_form, **over):
    "FLOPs of one training step per image, counted on the CPU (the count does not depend on the device)."
    cfg = make_config(preset, **{**over, **dict(method=method, loss_form=loss_form, subset_per_class=10, batch_size=50, attack_groups=1,
                      attack_warmup_epochs=0, n_clusters=10, monitor_every=0, out_dir='/tmp/flops', name=f'flops-{method}', progress=False)})
    t = Trainer(cfg, device='cpu', resume=False)
    if hasattr(t.method, 'refresh_clusters'): t.method.refresh_clusters(t)
    return step_flops(t)

def main():
    ap = argparse.ArgumentParser()
    ap.add_argument('--out', required=True); ap.add_argument('--variants', default='base,attack,all')
    ap.add_argument('--batches', default='512'); ap.add_argument('--preset', default='c10-200', help='the TrainConfig preset measured (e.g. c10-200-rocl)')
    ap.add_argument('--method', default=None, help="default: the preset's"); ap.add_argument('--loss-form', default=None, help="default: the preset's")
    ap.add_argument('--warmup', type=int, default=2); ap.add_argument('--timed', type=int, default=5)
    ap.add_argument('--agreement', action='store_true'); ap.add_argument('--tag', default='')
    ap.add_argument('--subset-per-class', type=int, default=None, help='smaller training set (a quick check of the script)')
    ap.add_argument('--kernels', action='store_true', help='also profile one more epoch of each variant with torch.profiler: its top kernels by self CUDA time in the record (kernel_table)')
    ap.add_argument('--feature-pass', default='sharded', help="SwARo's refresh: 'sharded' (the library's), 'one-rank' (the whole pass on each rank), or both")
    ap.add_argument('--attack-groups', type=int, default=None, help="default: the preset's (1 with --batches 128: one GPU's share of DDP on four, as it runs there)")
    ap.add_argument('--smoke', action='store_true', help="the preset's method at the smoke preset's sizes: a dry run on a CPU")
    ap.add_argument('--runs-dir', default='/root/swaro/runs/speed', help="where the trainers' run folders go")
    a = ap.parse_args()
    from swaro_nb.config import PRESETS
    a.method = a.method or PRESETS[a.preset].get('method', 'swaro'); a.loss_form = a.loss_form or PRESETS[a.preset].get('loss_form', 'paper')
    rank, world, _ = init_distributed()
    stamp = dict(run_stamp(), gpus=world, tag=a.tag)
    peak = matmul_peak_tflops() if torch.cuda.is_available() else None
    fl = flops_per_image(a.preset, a.method, a.loss_form, **(SMOKE if a.smoke else {})) if rank == 0 and world == 1 else None  # the CPU count needs a single process
    if rank == 0: append(a.out, dict(kind='card', peak_tflops=peak and round(peak, 1), gflops_per_image=round(fl / 1e9, 3) if fl else None, method=a.method,
                                     loss_form=a.loss_form, **stamp))
    sub = dict(SMOKE) if a.smoke else {}
    if a.subset_per_class is not None: sub['subset_per_class'] = a.subset_per_class
    if a.attack_groups is not None: sub['attack_groups'] = a.attack_groups
    base = make_config(a.preset, method=a.method, loss_form=a.loss_form, attack_warmup_epochs=1, monitor_every=5,
                       out_dir=a.runs_dir, progress=False, **sub)
    if a.agreement and world == 1:
        for v in ('base', 'attack', 'all'):
            t0 = time.time()
            ag = agreement(replace(base, name='ag-eager', method='rocl', **VARIANTS['eager']), replace(base, name=f'ag-{v}', method='rocl', **VARIANTS[v]))
            append(a.out, dict(kind='agreement', variant=v, against='eager', seconds=round(time.time() - t0, 1), **ag, **stamp))
    for bs in [int(b) for b in a.batches.split(',')]:
        # 'one-rank' (the before) first: each record is dated when it is written, so the newest of a setting is the sharded one
        passes = sorted(a.feature_pass.split(','), key=lambda f: f != 'one-rank')
        for v, fp in [(v, fp) for v in a.variants.split(',') for fp in passes]:
            swaro_nb.methods.sharded_features = FEATURE_PASS[fp]
            # a folder of its own per item (a folder holding a checkpoint is refused): a tag tells apart jobs on one machine
            cfg = replace(base, name=f"{a.method}-{v}-b{bs}-g{world}-{fp}{'-' + a.tag if a.tag else ''}", batch_size=bs, **VARIANTS[v])
            t0 = time.time()
            r = real_epoch_seconds(cfg, warmup_epochs=a.warmup, timed_epochs=a.timed)
            t = r.pop('trainer')
            prof = profile_epoch(t)
            imgs = t.steps_per_epoch * bs
            rec = dict(kind='speed', variant=v, feature_pass=fp if hasattr(t.method, 'refresh_clusters') else None, preset=a.preset, method=a.method, loss_form=a.loss_form, attack_groups=cfg.attack_groups, batch=bs, **VARIANTS[v], **r,
                       images_per_s=round(imgs / r['s_per_real_epoch']), profile=prof, wall_s=round(time.time() - t0, 1),
                       **{**stamp, 'date': run_stamp()['date']})
            if fl and peak: rec.update(tflops=round(fl * imgs / r['train_s'] / 1e12, 1), frac_of_peak=round(fl * imgs / r['train_s'] / 1e12 / world / peak, 3))
            if a.kernels:   # where the GPU time goes, kernel by kernel (kernels replayed from CUDA graphs included where CUPTI sees them)
                def profiled(fn, rows):   # seconds of fn() under torch.profiler (an upper bound) and its kernel table (rank 0's)
                    sync = torch.cuda.synchronize if t.cuda else (lambda: None)
                    acts = [torch.profiler.ProfilerActivity.CPU] + ([torch.profiler.ProfilerActivity.CUDA] if t.cuda else [])
                    sync(); t1 = time.perf_counter()
                    if rank:   # the other ranks run the same work unprofiled: it holds collectives (all-reduce, gathers, broadcasts)
                        fn(); sync(); return None, None
                    with torch.profiler.profile(activities=acts) as kp: fn(); sync()
                    return round(time.perf_counter() - t1, 3), kp.key_averages().table(
                        sort_by='self_cuda_time_total' if t.cuda else 'self_cpu_time_total', row_limit=rows, max_name_column_width=70)
                _, rec['kernel_table'] = profiled(t.train_epoch, 25)   # one more training epoch
                # a real epoch's work outside train_epoch (the monitor and the checkpoint run every monitor_every / ckpt_every epochs), once each
                extra = {'cluster': (lambda: t.method.refresh_clusters(t)) if hasattr(t.method, 'refresh_clusters') else None,
                         'monitor': t.monitor if t.cfg.monitor_every else None, 'save': t.save}
                for what, fn in extra.items():
                    if fn is not None: rec.setdefault('outside_epoch_s', {})[what], rec[f'{what}_kernel_table'] = profiled(fn, 15)
            if rank == 0: append(a.out, rec)
            del t; torch.cuda.empty_cache()

if __name__ == '__main__': main()
