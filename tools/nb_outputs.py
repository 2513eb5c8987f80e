#!/usr/bin/env python
"""Print the source and text outputs of the `#| cuda` / `#| slow` cells of executed notebooks (a GPU run's measurements, readable in a log).
Usage: python tools/nb_outputs.py DIR_OR_NOTEBOOK..."""
import json, sys
from pathlib import Path

def cells(fn):
    nb = json.loads(Path(fn).read_text())
    for c in nb['cells']:
        if c['cell_type'] != 'code': continue
        src = ''.join(c['source']) if isinstance(c['source'], list) else c['source']
        if '#| cuda' not in src and '#| slow' not in src: continue
        out = []
        for o in c.get('outputs', []):
            if 'text' in o: out.append(''.join(o['text']) if isinstance(o['text'], list) else o['text'])
            elif 'data' in o and 'text/plain' in o['data']:
                t = o['data']['text/plain']; out.append(''.join(t) if isinstance(t, list) else t)
        yield src, ''.join(out)

for arg in sys.argv[1:]:
    for fn in sorted(Path(arg).rglob('*.ipynb')) if Path(arg).is_dir() else [Path(arg)]:
        for src, out in cells(fn):
            print(f"===== {fn.name}\n--- cell\n{src[:400]}\n--- output\n{out}\n")
