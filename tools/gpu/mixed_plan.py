#!/usr/bin/env python
"""Write the plan of a mixed five-seed lease on nvidia-h200-x2 (tools/gpu/plans/five-seed.md, "With one or two GPUs"):
GPU 0 trains one run of the set with the train pin (EVAL=none, WEIGHTS=1); a side job on GPU 1 with the eval pin finishes
the evaluations an earlier lease cut (their pieces in results/eval/parts/), evaluates runs trained earlier, then runs the
reference extras (the reference AutoAttack at l1 12 and l2 0.5 on a model's LE head; l2 on seed 0 only) in what is left
of the lease. With --gpus 1 (one H200) the lease trains its run, and the extras run after it on the same GPU
(repro_session.sh AFTER, with the eval pin). The extras run each column of each run by itself (l1_12, then l2_05), into
$S/side/extras-<column>/, so that a cut loses one column only. The plan is checked with tools/gpu/plan.py.

  python tools/gpu/mixed_plan.py --train c10-200-rand-s1 --evaluate c10-200-rocl-s1 --extras c10-200-rocl-s0 \\
      --out tools/gpu/plans/five-seed-m2-x2.json
  python tools/gpu/mixed_plan.py --gpus 1 --train c10-200-rocl-s1 --extras c10-200-rocl-s0 c10-200-swaro-s0 --out tools/gpu/plans/five-seed-t-rocl-s1-h200.json
  python tools/gpu/mixed_plan.py --gpus 1 --train c10-200-rocl-s3 --extras c10-200-swaro-s2 --columns l1_12 --deadline 1600 \\
      --out tools/gpu/plans/five-seed-t-rocl-s3-h200.json   (--columns: the extras' columns; --deadline: one H200's DEADLINE)

Run names are the set's: c10-200-{swaro,rocl,rand}-s<seed>. Exit 1 when the planner refuses the plan, 2 on bad arguments.
"""
from __future__ import annotations
import argparse, json, re, sys
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
PARTS = ROOT / 'results' / 'eval' / 'parts'
DEADLINE, SIDE_END = 1500, 1420   # the training's deadline; the side job's end (repro_session.sh kills its shell at DEADLINE - 60)
ONE_GPU_DEADLINE = 1480   # one H200: a lease of 1,800 s less the staging calls (about 60 s), the launch, the polls and the pack
# each method of the set as its leases train it (five-seed-lease1.json); s_per_epoch: the speeds those plans priced
KINDS = {'swaro': dict(preset='c10-200', method='swaro', loss_form='paper', train_flags='', s_per_epoch={'H200': 4.86, 'H100': 5.44}),
         'rocl': dict(preset='c10-200-rocl', method='rocl', loss_form='rocl-code', train_flags='--rocl-term-forward shared',
                      s_per_epoch={'H200': 5.06, 'H100': 6.06}),
         'rand': dict(preset='c10-200', method='swaro', loss_form='paper', train_flags='--swaro-targets random',
                      s_per_epoch={'H200': 4.62, 'H100': 5.44})}


def parse_run(name: str) -> dict:
    ("A run of the set from its name: its kind's preset, method, flags and speeds, and its seed; also Table 8's SwARo at K "
     "clusters, c10-200-k<K>-s<seed> (plans/k.md: the set's pins and protocol, priced as SwARo).")
    if k := re.fullmatch(r'c10-200-k(\d+)-s(\d+)', name):
        if int(k[1]) < 2 or int(k[1]) == 1000:
            raise ValueError(f"{name!r}: K must be >= 2 and not 1000 (K = 1000 is c10-200-swaro-s<seed>, the set's SwARo)")
        return dict(name=name, seed=int(k[2]), **dict(KINDS['swaro'], train_flags=f'--n-clusters {int(k[1])}'),
                    what=f"Table 8 (plans/k.md), SwARo at K = {int(k[1])}")
    m = re.fullmatch(r'c10-200-(swaro|rocl|rand)-s(\d+)', name)
    if not m: raise ValueError(f"{name!r} is not a run of the five-seed set (c10-200-{{swaro,rocl,rand}}-s<seed>) "
                               "nor of Table 8 (c10-200-k<K>-s<seed>)")
    return dict(name=name, seed=int(m[2]), **KINDS[m[1]])


EXTRAS_COLUMNS = ('l1_12', 'l2_05')   # the reference extras, the cheaper column first
EVAL_PIN = "cd /root/swaro/evalcode || exit 1; export SWARO_COMMIT=$(cat PINNED_COMMIT) PYTHONPATH=/tmp/site:/root/swaro/evalcode"
TRAIN_PIN = ("with the train pin (five-seed-pins.json 'train'; EVAL=none, WEIGHTS=1: its float16 weights come back in pieces as "
             "soon as it is exported and go to weights/ in the same session)")
POLL = "S=/root/swaro/repro RUNS=/root/swaro/repro/runs LOG=/root/swaro/repro.log bash tools/gpu/poll.sh"


def launch_line(t: dict, env: str, deadline: int) -> str:
    "The launch: t trains on GPU 0 with the train pin (EVAL=none, WEIGHTS=1), env (SIDE=... or AFTER=...) beside it."
    flags = t['train_flags'].replace(' ', ',')
    return ("for r in .gpu/*/receive.sh; do sh $r; done; cd /root/swaro/code && SWARO_COMMIT=$(cat PINNED_COMMIT) S=/root/swaro/repro "
            f"RUNS='{t['name']}:{t['preset']}:{t['seed']}{':' + flags if flags else ''}' " + env
            + f"GPUS=0 EPOCHS=200 DEADLINE={deadline} EVAL_RESERVE=60 EVAL=none EVAL_FROM=f16 WEIGHTS=1 TSNE=0 "
            "setsid nohup bash tools/gpu/repro_session.sh > /root/swaro/repro.log 2>&1 < /dev/null &")


def plan_spec(note: str, launch: str, t: dict, evaluated=()) -> dict:
    "The plan file: t trained (no evaluation), then the runs the lease evaluates."
    run = dict(name=t['name'], preset=t['preset'], method=t['method'], loss_form=t['loss_form'], seed=t['seed'],
               train_flags=t['train_flags'], s_per_epoch=t['s_per_epoch'], eval=None)
    return dict(note=note, launch=launch, poll=POLL, defaults=dict(epochs=200, gpus=1, batch=512, variant='compiled', eval=None),
                runs=[run, *evaluated])


def extras_cmd(extras: list, gpu: int, limit: str = '', columns=EXTRAS_COLUMNS, events: str = '') -> str:
    ("Shell (run in the eval pin's folder, S set) for the reference extras: each run's folder from its staged float16 "
     "weights (WEIGHTS_DIR), checked, then ref_extras.py once a column that the pinned results/ has no record of, each "
     "under `timeout $(( limit ))` when limit is given; PYTHON and SMOKE (a CPU dry run) as in repro_session.sh. "
     "events (a file): a line there for each run left out, each column started or not (a minute or less left: MIN_LEFT "
     "seconds), and each one's exit status (124: stopped by its time limit).")
    say = (lambda m: f'echo "$(date -u +%T) {m}" >> {events}') if events else None
    if say and limit:   # the limit computed once a column, and a column not started without the time to run
        lim = 'timeout $l '
        start = (f"l=$(( {limit} )); if [ $l -le ${{MIN_LEFT:-60}} ]; then {say('$n: not started ($l s left)')}; continue; fi; "
                 + say('$n: reference extras $c (ref_extras.py --columns $c --shards 4, time limit $l s)') + '; ')
    else:
        lim, start = (f'timeout $(( {limit} )) ' if limit else ''), (say('$n: reference extras $c') + '; ' if say else '')
    left_out = f"{{ {say('$n: left out (records, weights or their check missing)')}; continue; }}" if say else 'continue'
    end = ("; rc=$?; case $rc in 0) w=done;; 124) w='stopped by its time limit';; *) w=failed;; esac; "
           + say('$n: exit $rc, $w ($(tail -n 1 $S/side/logs/extras-$n-$c.log | cut -c1-200))')) if say else ''
    return ("P=${PYTHON:-python3}; W=${WEIGHTS_DIR:-/root/swaro/weights}; X=$([ -n \"${SMOKE:-}\" ] && echo --smoke --autoattack-n 8); "
            f"R=$S/side/runs; mkdir -p $S/side/logs; for n in {' '.join(extras)}; do mkdir -p $R/$n && cp results/runs/$n/{{config.json,"
            "run.json,metrics.jsonl} $R/$n/ && cp $W/$n.pt $R/$n/weights.pt && $P tools/gpu/check_weights.py $n "
            f"$R/$n/weights.pt || {left_out}; for c in {' '.join(columns)}; do [ -f results/eval/five-seed/$n-ref-extras-$c.json ] && continue; "
            f"{start}CUDA_VISIBLE_DEVICES={gpu} {lim}$P "
            "tools/gpu/ref_extras.py $n --runs $R --heads $W --records results/eval/five-seed --out $S/side/extras-$c "
            f"--columns $c --shards 4 $X > $S/side/logs/extras-$n-$c.log 2>&1{end}; done; done")


def mixed_plan(train: str, evaluate: list, extras: list, parts=PARTS, gpus: int = 2, deadline: int | None = None,
               columns=EXTRAS_COLUMNS) -> dict:
    ("The plan: the training run, the runs evaluated (those with pieces first: they resume), the extras (each of columns), "
     "launch and note; deadline (one H200 only) replaces ONE_GPU_DEADLINE.")
    t, columns = parse_run(train), tuple(columns)
    runs = [parse_run(n) for n in evaluate]
    for n in extras: parse_run(n)
    if bad := [c for c in columns if c not in EXTRAS_COLUMNS]: raise ValueError(f"extras columns {bad}: not of {EXTRAS_COLUMNS}")
    if deadline is not None and (gpus != 1 or not 600 <= deadline <= 1700):
        raise ValueError(f"--deadline {deadline}: for --gpus 1 only, 600-1700 s (a lease holds 1,800 s; staging and the last poll "
                         "take the rest)")
    if train in evaluate: raise ValueError(f"{train} is trained in this lease: it cannot be evaluated in it too")
    if gpus == 1: return one_gpu_plan(t, runs, extras, deadline or ONE_GPU_DEADLINE, columns)
    resume = [r['name'] for r in runs if (Path(parts) / f"{r['name']}-eval.parts").is_dir()]
    fresh = [r['name'] for r in runs if r['name'] not in resume]
    ev = json.loads((ROOT / 'tools/gpu/plans/five-seed-eval-lease1-rest.json').read_text())['defaults']['eval']
    side = (EVAL_PIN + " SIDE_GPU=1; t0=$(date +%s); "
            + (f'RESUME="{" ".join(resume)}" ' if resume else '') + (f'EVALUATE="{" ".join(fresh)}" ' if fresh else '')
            + (f"SIDE_END={SIDE_END} bash tools/gpu/plans/five-seed-side.sh; " if runs else '')
            + (extras_cmd(extras, 1, f"{SIDE_END} - $(date +%s) + t0", columns) if extras else ''))
    launch = launch_line(t, f"SIDE='{side}' ", DEADLINE)
    staged = [*evaluate, *extras]
    note = (f"{t.get('what', 'five-seed set')}, a mixed lease on nvidia-h200-x2 (five-seed.md, 'With one or two GPUs'; written by tools/gpu/mixed_plan.py): "
            f"GPU 0 trains {train} {TRAIN_PIN}. GPU 1, a side job with the eval pin "
            f"(five-seed-pins.json 'eval', in /root/swaro/evalcode): "
            + (f"{', '.join(resume)} resume{'s' * (len(resume) == 1)} {'its' if len(resume) == 1 else 'their'} pieces of "
               "results/eval/parts/; " if resume else '')
            + (f"{', '.join(fresh)} evaluated whole; " if fresh else '')
            + (f"then, in what is left to {SIDE_END} s, the reference extras of {', '.join(extras)} (ref_extras.py, each column "
               f"by itself: {', '.join(columns)}; not priced; a cut loses that column only); " if extras else '')
            + "the planner's GPU 1 is the side job; the job packs once both end. Here first: bash ../shared/gpu/stage.sh cifar10 "
            f"wheels; python tools/gpu/land_five_seed.py stage --from-hub {' '.join(staged)} --to .gpu/mixed-w (two encoders a "
            "folder: several --to folders when more; the extras' runs with their heads); then, since staging and landing change "
            "results/, bash tools/gpu/pinned.sh <train commit>; PIN_TO=/root/swaro/evalcode bash tools/gpu/pinned.sh <eval commit> "
            ".gpu/pinned-eval (the pinned code reads the run records and checksums from its own folder); bash tools/gpu/pinned.sh "
            "--check on each pinned folder just before the first call; bash tools/gpu/travel_light.sh (weights/, results/, nbs/, "
            "tests/ out of the calls). Calls back to back: .gpu/cifar10-1 .. -4, the staged folders, then .gpu/wheels, "
            ".gpu/pinned and .gpu/pinned-eval with the launch; polls from the checkout (bash tools/gpu/poll.sh with S, RUNS, LOG: "
            "partial.tar and the announced weights pieces on every call; copy each call's files out of files_at at once). Land: "
            "land_five_seed.py land <pack.tar or partial.tar> --weights <the pieces' folder> --plan <this file> "
            "--pins tools/gpu/plans/five-seed-pins.json. "
            "Launch: " + launch)
    return plan_spec(note, launch, t, [dict(name=r['name'], method=r['method'], loss_form=r['loss_form'], seed=r['seed'], trained=True,
                                            eval=ev) for r in sorted(runs, key=lambda r: r['name'] not in resume)])


def one_gpu_plan(t: dict, runs: list, extras: list, deadline: int = ONE_GPU_DEADLINE, columns=EXTRAS_COLUMNS) -> dict:
    "The one-H200 lease: train t with the train pin; then, with the eval pin on the same GPU, the extras (AFTER)."
    if runs: raise ValueError("--gpus 1: the lease trains its run and no evaluation fits after it (a training about 17 min, an evaluation 12)")
    launch = launch_line(t, f"AFTER='{EVAL_PIN}; {extras_cmd(extras, 0, columns=columns)}' " if extras else '', deadline)
    note = (f"{t.get('what', 'five-seed set')}, a training lease on one H200 (five-seed.md, 'With one or two GPUs'; written by tools/gpu/mixed_plan.py --gpus 1): "
            f"{t['name']} trains {TRAIN_PIN}"
            + (f"; then, on the same GPU with the eval pin (five-seed-pins.json 'eval', in /root/swaro/evalcode), the reference "
               f"extras of {', '.join(extras)} (ref_extras.py, each column by itself: {', '.join(columns)}; not priced; what "
               f"DEADLINE {deadline} cuts loses that column only)" if extras else '')
            + ". Here first: bash ../shared/gpu/stage.sh cifar10 wheels"
            + (f"; python tools/gpu/land_five_seed.py stage --from-hub {' '.join(extras)} --to .gpu/mixed-w (with their heads; two a "
               "folder)" if extras else '')
            + "; then (staging and landing change results/) bash tools/gpu/pinned.sh <train commit>"
            + ("; PIN_TO=/root/swaro/evalcode bash tools/gpu/pinned.sh <eval commit> .gpu/pinned-eval" if extras else '')
            + "; bash tools/gpu/pinned.sh --check on each pinned folder just before the first call; bash tools/gpu/travel_light.sh "
            "(weights/, results/, nbs/, tests/ out of the calls). Calls back to back: .gpu/cifar10-1 .. -4, "
            + ("the staged folders, then .gpu/wheels, .gpu/pinned and .gpu/pinned-eval" if extras else "then .gpu/wheels and .gpu/pinned")
            + " with the launch; polls and landing (--pins) as for a mixed lease. Launch: " + launch)
    return plan_spec(note, launch, t)


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument('--train', required=True, help='the run trained on GPU 0')
    ap.add_argument('--evaluate', nargs='*', default=[], help='runs trained earlier, evaluated on GPU 1 (those with pieces resume)')
    ap.add_argument('--gpus', type=int, choices=(1, 2), default=2, help='2: nvidia-h200-x2 (default); 1: one H200, training then extras')
    ap.add_argument('--extras', nargs='*', default=[], help='runs whose reference extras run after the evaluations')
    ap.add_argument('--out', required=True, help='the plan file to write')
    ap.add_argument('--card', default='H200', help='the card the planner prices it for (default %(default)s)')
    ap.add_argument('--deadline', type=int, help=f'--gpus 1: the job\'s DEADLINE in s (default {ONE_GPU_DEADLINE})')
    ap.add_argument('--columns', nargs='+', default=list(EXTRAS_COLUMNS), help='the extras\' columns (default: %(default)s)')
    a = ap.parse_args(argv)
    try: spec = mixed_plan(a.train, a.evaluate, a.extras, gpus=a.gpus, deadline=a.deadline, columns=a.columns)
    except ValueError as e: print(f"mixed_plan: error: {e}", file=sys.stderr); return 2
    if len(spec['launch']) >= 2000: print(f"mixed_plan: error: the launch line has {len(spec['launch'])} characters (a call takes 2,000)", file=sys.stderr); return 2
    Path(a.out).write_text(json.dumps(spec, indent=1) + '\n')
    sys.path.insert(0, str(ROOT / 'tools' / 'gpu'))
    import plan
    return plan.main([a.out, '--gpus', str(a.gpus), '--card', a.card])


if __name__ == '__main__': sys.exit(main())
