#!/usr/bin/env python
"""Write a notebook from a percent-format script (`# %%` code cells, `# %% [markdown]` prose cells).

Usage: python tools/py2nb.py SRC.py DEST.ipynb

Authoring aid: edit notebooks as plain text, then convert. A cell header may carry tags:
`# %% tags=["parameters"]` (papermill's parameters cell). Markdown lines lose their leading `# `.
"""
import json, re, sys
from pathlib import Path

def py2nb(src: str) -> dict:
    cells, cur, kind, tags = [], [], None, []
    def flush():
        if kind is None: return
        lines = cur[:]
        while lines and not lines[-1].strip(): lines.pop()
        while lines and not lines[0].strip(): lines.pop(0)
        if kind == 'markdown': lines = [re.sub(r'^# ?', '', l) for l in lines]
        text = '\n'.join(lines)
        meta = {'tags': tags} if tags else {}
        c = {'cell_type': kind, 'metadata': meta, 'source': text}
        if kind == 'code': c.update(execution_count=None, outputs=[])
        cells.append(c)
    for line in src.splitlines():
        m = re.match(r'^# %%(.*)$', line)
        if m:
            flush()
            rest = m.group(1)
            kind = 'markdown' if '[markdown]' in rest else 'code'
            t = re.search(r'tags=(\[.*?\])', rest)
            tags = json.loads(t.group(1)) if t else []
            cur = []
        elif kind is not None: cur.append(line)
    flush()
    return {'cells': cells, 'metadata': {'kernelspec': {'display_name': 'python3', 'language': 'python', 'name': 'python3'}},
            'nbformat': 4, 'nbformat_minor': 5}

if __name__ == '__main__':
    src, dest = sys.argv[1:3]
    nb = py2nb(Path(src).read_text())
    if Path(dest).exists():  # keep cell ids of an existing notebook (same source first, else same position) for small diffs
        old = json.loads(Path(dest).read_text())['cells']
        by_src = {(''.join(c['source']) if isinstance(c['source'], list) else c['source']): c.get('id') for c in old}
        used = set()
        for i, c in enumerate(nb['cells']):
            cid = by_src.get(c['source']) or (old[i].get('id') if i < len(old) else None)
            if cid and cid not in used: c['id'] = cid; used.add(cid)
        nb['nbformat_minor'] = 5
    Path(dest).write_text(json.dumps(nb, indent=1, ensure_ascii=False) + '\n')
    print(f'{dest}: {len(nb["cells"])} cells')
