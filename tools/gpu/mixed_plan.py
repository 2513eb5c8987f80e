#!/usr/bin/env python
"""Write the plan of a mixed five-seed lease on nvidia-h200-x2 (tools/gpu/plans/five-seed.md, "With one or two GPUs"):
GPU 0 trains one run of the set with the train pin (EVAL=none, WEIGHTS=1); a side job on GPU 1 with the eval pin finishes
the evaluations an earlier lease cut (their pieces in results/eval/parts/), evaluates runs trained earlier, then runs the
seed-0 reference extras in what is left of the lease. The plan is checked with tools/gpu/plan.py.

  python tools/gpu/mixed_plan.py --train c10-200-rand-s1 --evaluate c10-200-rocl-s1 --extras c10-200-rocl-s0 \\
      --out tools/gpu/plans/five-seed-m2-x2.json

Run names are the set's: c10-200-{swaro,rocl,rand}-s<seed>. Exit 1 when the planner refuses the plan, 2 on bad arguments.
"""
from __future__ import annotations
import argparse, json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTS = ROOT / 'results' / 'eval' / 'parts'
DEADLINE, SIDE_END = 1500, 1420   # the training's deadline; the side job's end (repro_session.sh kills its shell at DEADLINE - 60)
# each method of the set as its leases train it (five-seed-lease1.json); s_per_epoch: the speeds those plans priced
KINDS = {'swaro': dict(preset='c10-200', method='swaro', loss_form='paper', train_flags='', s_per_epoch={'H200': 4.86, 'H100': 5.44}),
         'rocl': dict(preset='c10-200-rocl', method='rocl', loss_form='rocl-code', train_flags='--rocl-term-forward shared',
                      s_per_epoch={'H200': 5.06, 'H100': 6.06}),
         'rand': dict(preset='c10-200', method='swaro', loss_form='paper', train_flags='--swaro-targets random',
                      s_per_epoch={'H200': 4.62, 'H100': 5.44})}


def parse_run(name: str) -> dict:
    "A run of the set from its name: its kind's preset, method, flags and speeds, and its seed."
    m = re.fullmatch(r'c10-200-(swaro|rocl|rand)-s(\d+)', name)
    if not m: raise ValueError(f"{name!r} is not a run of the five-seed set (c10-200-{{swaro,rocl,rand}}-s<seed>)")
    return dict(name=name, seed=int(m[2]), **KINDS[m[1]])


def mixed_plan(train: str, evaluate: list, extras: list, parts=PARTS) -> dict:
    "The plan: the training run, the runs evaluated (those with pieces first: they resume), the extras, launch and note."
    t = parse_run(train)
    runs = [parse_run(n) for n in evaluate]
    for n in extras: parse_run(n)
    if train in evaluate: raise ValueError(f"{train} is trained in this lease: it cannot be evaluated in it too")
    resume = [r['name'] for r in runs if (Path(parts) / f"{r['name']}-eval.parts").is_dir()]
    fresh = [r['name'] for r in runs if r['name'] not in resume]
    ev = json.loads((ROOT / 'tools/gpu/plans/five-seed-eval-lease1-rest.json').read_text())['defaults']['eval']
    flags = t['train_flags'].replace(' ', ',')
    side = ("cd /root/swaro/evalcode || exit 1; export SWARO_COMMIT=$(cat PINNED_COMMIT) PYTHONPATH=/tmp/site:/root/swaro/evalcode "
            "SIDE_GPU=1; t0=$(date +%s); "
            + (f'RESUME="{" ".join(resume)}" ' if resume else '') + (f'EVALUATE="{" ".join(fresh)}" ' if fresh else '')
            + f"SIDE_END={SIDE_END} bash tools/gpu/plans/five-seed-side.sh"
            + (f'; EXTRAS="{" ".join(extras)}" SIDE_END=$(( {SIDE_END} - $(date +%s) + t0 )) bash tools/gpu/plans/five-seed-side.sh'
               if extras else ''))
    launch = ("for r in .gpu/*/receive.sh; do sh $r; done; cd /root/swaro/code && SWARO_COMMIT=$(cat PINNED_COMMIT) S=/root/swaro/repro "
              f"RUNS='{train}:{t['preset']}:{t['seed']}{':' + flags if flags else ''}' "
              f"SIDE='{side}' GPUS=0 EPOCHS=200 DEADLINE={DEADLINE} EVAL_RESERVE=60 EVAL=none EVAL_FROM=f16 WEIGHTS=1 TSNE=0 "
              "setsid nohup bash tools/gpu/repro_session.sh > /root/swaro/repro.log 2>&1 < /dev/null &")
    staged = [*evaluate, *extras]
    note = (f"five-seed set, a mixed lease on nvidia-h200-x2 (five-seed.md, 'With one or two GPUs'; written by tools/gpu/mixed_plan.py): "
            f"GPU 0 trains {train} with the train pin (five-seed-pins.json 'train'; EVAL=none, WEIGHTS=1: its float16 weights come back "
            f"in pieces as soon as it is exported and go to weights/ in the same session). GPU 1, a side job with the eval pin "
            f"(five-seed-pins.json 'eval', in /root/swaro/evalcode): "
            + (f"{', '.join(resume)} resume{'s' * (len(resume) == 1)} {'its' if len(resume) == 1 else 'their'} pieces of "
               "results/eval/parts/; " if resume else '')
            + (f"{', '.join(fresh)} evaluated whole; " if fresh else '')
            + (f"then, in what is left to {SIDE_END} s, the seed-0 reference extras of {', '.join(extras)} (ref_extras.py; not priced, "
               "cut harmlessly); " if extras else '')
            + "the planner's GPU 1 is the side job; the job packs once both end. Here first: bash ../shared/gpu/stage.sh cifar10 "
            "wheels; bash tools/gpu/pinned.sh <train commit>; PIN_TO=/root/swaro/evalcode bash tools/gpu/pinned.sh <eval commit> "
            f".gpu/pinned-eval; python tools/gpu/land_five_seed.py stage --from-hub {' '.join(staged)} --to .gpu/mixed-w "
            "(two encoders a folder: several --to folders when more; the extras' runs with their heads); git sparse-checkout set "
            "--no-cone '/*' '!/weights/'. Calls back to back: .gpu/cifar10-1 .. -4, the staged folders, then .gpu/wheels, "
            ".gpu/pinned and .gpu/pinned-eval with the launch; polls from the checkout (bash tools/gpu/poll.sh with S, RUNS, LOG: "
            "partial.tar and the announced weights pieces on every call; copy each call's files out of files_at at once). Land: "
            "land_five_seed.py land <pack.tar or partial.tar> --weights <the pieces' folder> --plan <this file> --commit <eval commit>. "
            "Launch: " + launch)
    plan_runs = [dict(name=train, preset=t['preset'], method=t['method'], loss_form=t['loss_form'], seed=t['seed'],
                      train_flags=t['train_flags'], s_per_epoch=t['s_per_epoch'], eval=None)]
    plan_runs += [dict(name=r['name'], method=r['method'], loss_form=r['loss_form'], seed=r['seed'], trained=True, eval=ev)
                  for r in sorted(runs, key=lambda r: r['name'] not in resume)]
    return dict(note=note, launch=launch, poll="S=/root/swaro/repro RUNS=/root/swaro/repro/runs LOG=/root/swaro/repro.log bash tools/gpu/poll.sh",
                defaults=dict(epochs=200, gpus=1, batch=512, variant='compiled', eval=None), runs=plan_runs)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--train', required=True, help='the run trained on GPU 0')
    ap.add_argument('--evaluate', nargs='+', required=True, help='runs trained earlier, evaluated on GPU 1 (those with pieces resume)')
    ap.add_argument('--extras', nargs='*', default=[], help='seed-0 runs whose reference extras run after the evaluations')
    ap.add_argument('--out', required=True, help='the plan file to write')
    ap.add_argument('--card', default='H200', help='the card the planner prices it for (default %(default)s)')
    a = ap.parse_args(argv)
    try: spec = mixed_plan(a.train, a.evaluate, a.extras)
    except ValueError as e: print(f"mixed_plan: error: {e}", file=sys.stderr); return 2
    if len(spec['launch']) >= 2000: print(f"mixed_plan: error: the launch line has {len(spec['launch'])} characters (a call takes 2,000)", file=sys.stderr); return 2
    Path(a.out).write_text(json.dumps(spec, indent=1) + '\n')
    sys.path.insert(0, str(ROOT / 'tools' / 'gpu'))
    import plan
    return plan.main([a.out, '--gpus', '2', '--card', a.card])


if __name__ == '__main__': sys.exit(main())
