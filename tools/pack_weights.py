#!/usr/bin/env python
"""Pack a run's float16 encoder and its LE/rLE heads into weights/ (swaro_nb.hub.pack_pretrained), then check it loads.

  python tools/pack_weights.py RUN_DIR [--name NAME] [--record results/eval/RUN-eval.json ...] [--heads FILE] [--dest weights]
  python tools/pack_weights.py --retire NAME [--dest weights]     # then commit the removal
  python tools/pack_weights.py --state runs/RUN/checkpoint.pt      # keep a training checkpoint as RUN.state (then commit)
  python tools/pack_weights.py --unpack-state RUN.state runs/RUN/checkpoint.pt   # join it back for the run to resume
  python tools/pack_weights.py --retire-state RUN.state            # once the run has gone on; then commit the removal

RUN_DIR is a run folder (checkpoint.pt, or config.json + weights.pt). Each --record is an evaluation record of that run;
the heads it evaluated are taken from the `<run>-eval-heads.pt` beside it (or from --heads). Refuses, writing nothing,
when weights/ would pass its 150 MB budget: --retire NAME first takes a committed model's pieces out of weights/ (it stays
listed and loads from the commit that holds them, swaro_nb.hub.retire_pretrained). After packing, every head with a record is checked against it on the first
200 of the record's test images (--check 0 skips it; it needs CIFAR under the data root).
A training state (swaro_nb.hub.pack_state) is a run's checkpoint kept byte for byte, about 100 MB, within the same budget:
it is what a run that spans sessions resumes from. It counts about 129 MB of a session's 256 MiB of diffs when committed
and as much again when retired (tools/submission_size.py --add BYTES says whether it fits before committing)."""
import argparse, sys
from pathlib import Path
sys.path.insert(0, str(Path(__file__).resolve().parents[1]))
from swaro_nb.hub import (WeightsError, check_pretrained, pack_pretrained, pack_state, retire_pretrained, retire_state,
                          unpack_state)

def main(argv=None):
    ap = argparse.ArgumentParser(description=__doc__.split('\n')[0])
    ap.add_argument('run_dir', nargs='?', help='the run folder')
    ap.add_argument('--retire', metavar='NAME', default=None,
                    help='retire committed model NAME instead (its pieces leave weights/; it loads from git history)')
    ap.add_argument('--state', metavar='FILE', default=None,
                    help='keep FILE, a training checkpoint or another resume point (AFF state: with --name), as a state instead')
    ap.add_argument('--unpack-state', nargs=2, metavar=('NAME', 'OUT'), default=None, help='join state NAME into file OUT')
    ap.add_argument('--retire-state', metavar='NAME', default=None, help='retire committed state NAME')
    ap.add_argument('--name', default=None, help="the model's name in weights/ (default: the run folder's name)")
    ap.add_argument('--record', action='append', default=[], help='an evaluation record of the run (repeatable)')
    ap.add_argument('--heads', default=None, help="a heads file {'le': state_dict, 'rle': state_dict} (default: beside each record)")
    ap.add_argument('--dest', default=None, help="the weights folder (default: this checkout's weights/)")
    ap.add_argument('--check', type=int, default=200, help='test images of the check against each record (0: no check)')
    a = ap.parse_args(argv)
    try:
        if a.state:
            e = pack_state(a.state, a.name, dest=a.dest)
            of = f" of {e['epochs']}" if e.get('epochs') else ''
            print(f"{a.name or e['run'] + '.state'}: {e['kind']}, epoch {e['epoch']}{of}, "
                  f"{e['files']['state']['bytes'] / 1e6:.1f} MB in {len(e['files']['state']['pieces'])} pieces (commit them now)")
            return 0
        if a.unpack_state:
            print(f"{unpack_state(a.unpack_state[0], a.unpack_state[1], a.dest)}: joined, every piece checked"); return 0
        if a.retire_state:
            e = retire_state(a.retire_state, a.dest)
            print(f"{a.retire_state}: retired; its pieces are in commit {e['retired']['revision'][:12]} (commit the removal now)")
            return 0
    except WeightsError as err: sys.exit(f'error: {err}')
    if a.retire:
        if a.run_dir: ap.error('--retire takes a model name and no run folder')
        try: e = retire_pretrained(a.retire, a.dest)
        except WeightsError as err: sys.exit(f'error: {err}')
        print(f"{a.retire}: retired; its pieces are in commit {e['retired']['revision'][:12]} (commit the removal now)")
        return 0
    if not a.run_dir: ap.error('a run folder, or --retire NAME')
    try: e = pack_pretrained(a.run_dir, a.name, heads=a.heads, records=a.record, dest=a.dest)
    except (WeightsError, ValueError) as err: sys.exit(f'error: {err}')
    name = a.name or Path(a.run_dir).resolve().name
    mb = sum(f['bytes'] for f in e['files'].values()) / 1e6
    print(f"{name}: {mb:.1f} MB in {sum(len(f['pieces']) for f in e['files'].values())} pieces, heads: {', '.join(e['heads']) or 'none'}")
    bad = 0
    for h, v in e['heads'].items():
        if a.check and v.get('metrics'):
            r = check_pretrained(name, h, n=a.check, root=a.dest)
            print(f"  {h}: {r['acc']:.2f}% on {r['n']} test images, record {r['record']:.2f}% on {r['record_images']} "
                  f"(allowed difference {r['tol']:.2f}): {'ok' if r['ok'] else 'MISMATCH'}")
            bad += not r['ok']
    return 1 if bad else 0

if __name__ == '__main__': sys.exit(main())
