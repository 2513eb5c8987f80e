#!/usr/bin/env python
"""Write a percent-format script from a notebook: the inverse of tools/py2nb.py (edit as text, convert back).

Usage: python tools/nb2py.py SRC.ipynb DEST.py
"""
import json, sys
from pathlib import Path

def nb2py(nb: dict) -> str:
    out = []
    for c in nb['cells']:
        src = ''.join(c['source']) if isinstance(c['source'], list) else c['source']
        tags = c.get('metadata', {}).get('tags')
        head = '# %%' + (' [markdown]' if c['cell_type'] == 'markdown' else '') + (f' tags={json.dumps(tags)}' if tags else '')
        body = '\n'.join(('# ' + l) if l else '#' for l in src.splitlines()) if c['cell_type'] == 'markdown' else src
        out.append(head + '\n' + body + '\n')
    return '\n'.join(out)

if __name__ == '__main__':
    src, dest = sys.argv[1:3]
    Path(dest).write_text(nb2py(json.loads(Path(src).read_text())))
    print(f'{dest} written')
