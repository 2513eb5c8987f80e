#!/usr/bin/env python
"""Move a checkpoint across the GPU host's limits (files back: 16 MiB each, 64 MiB a call; tree in: 64 MiB a call).

  python3 tools/gpu/pieces.py split runs/x/checkpoint.pt OUTDIR [--mb 15]   # -> OUTDIR/x.part000 ... + OUTDIR/x.sha256
  python3 tools/gpu/pieces.py join INDIR runs/x/checkpoint.pt               # verifies the sha256 before writing (atomically)

A long run then continues in a later lease: bring the pieces back over two calls, carry them in over two calls, join, resume."""
import hashlib, os, sys
from pathlib import Path

def split(src, outdir, mb=15):
    src, outdir = Path(src), Path(outdir); outdir.mkdir(parents=True, exist_ok=True)
    data = src.read_bytes(); n = mb << 20; stem = src.parent.name or src.stem
    for i in range(0, len(data), n): (outdir / f'{stem}.part{i // n:03d}').write_bytes(data[i:i + n])
    (outdir / f'{stem}.sha256').write_text(hashlib.sha256(data).hexdigest() + '\n')
    print(f'{src}: {len(data):,} bytes in {-(-len(data) // n)} pieces under {outdir}')

def join(indir, dest):
    indir, dest = Path(indir), Path(dest)
    sums = list(indir.glob('*.sha256'))
    if len(sums) != 1: sys.exit(f'error: expected one .sha256 file in {indir}, found {len(sums)}')
    stem = sums[0].stem; parts = sorted(indir.glob(f'{stem}.part*'))
    data = b''.join(p.read_bytes() for p in parts)
    want = sums[0].read_text().split()[0]
    if hashlib.sha256(data).hexdigest() != want: sys.exit(f'error: the {len(parts)} pieces of {stem} do not add up (sha256 mismatch): a piece is missing or corrupt')
    dest.parent.mkdir(parents=True, exist_ok=True); tmp = dest.with_name(dest.name + '.tmp')
    tmp.write_bytes(data); os.replace(tmp, dest)
    print(f'{dest}: {len(data):,} bytes from {len(parts)} pieces, sha256 ok')

if __name__ == '__main__':
    if len(sys.argv) < 4 or sys.argv[1] not in ('split', 'join'): sys.exit(__doc__)
    if sys.argv[1] == 'split': split(sys.argv[2], sys.argv[3], int(sys.argv[5]) if len(sys.argv) > 5 and sys.argv[4] == '--mb' else 15)
    else: join(sys.argv[2], sys.argv[3])
