#!/usr/bin/env python
"""Exit 0 when FILE holds the weights results/weights-*.json record for run NAME, 1 otherwise (repro_session.sh PRELOAD and
plans/five-seed-side.sh check what they are given with it).

  python tools/gpu/check_weights.py c10-200-swaro-s0 /root/swaro/weights/c10-200-swaro-s0.pt

A run's entry ({"runs": {NAME: {...}}}) may name two files: `sha256`, the float16 weights its lease exported (encoder and
projection head), and `encoder_sha256`, the float16 encoder alone as `swaro_nb.hub.pretrained_run` writes it from the
committed pieces in weights/ (`land_five_seed.py stage --from-hub`). Either is the same trained encoder; an evaluation
uses nothing else. Run from the checkout's root (it reads results/ there).
"""
import glob, hashlib, json, sys


def known(name: str, pattern: str = 'results/weights-*.json') -> set:
    "Every sha256 the weights records give for run `name`."
    out = set()
    for f in sorted(glob.glob(pattern)):
        e = json.load(open(f)).get('runs', {}).get(name) or {}
        out |= {e[k] for k in ('sha256', 'encoder_sha256') if e.get(k)}
    return out


def sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for b in iter(lambda: f.read(1 << 20), b''): h.update(b)
    return h.hexdigest()


if __name__ == '__main__':
    if len(sys.argv) != 3: sys.exit(__doc__.split('\n\n')[1])
    try: got = sha256(sys.argv[2])
    except OSError: sys.exit(1)
    sys.exit(0 if got in known(sys.argv[1]) else 1)
