#!/usr/bin/env python
"""Build the offline docs site (`_docs/`) and `README.md` without Quarto.

Usage:
  python tools/build_docs.py [--exec-dir DIR] [--out _docs] [--workers N] [--root PROJECT]
  python tools/build_docs.py --readme [--exec-dir DIR] [--readme-out README.md]
  python tools/build_docs.py --fetch-mathjax

Typical: `python tools/run_nbs.py --save _proc_exec && python tools/build_docs.py --exec-dir _proc_exec`.
`--out` is wiped and rebuilt, but only if an earlier build_docs run made it (marker file).

Site: every notebook listed in `nbs/sidebar.yml` (in that order; entries whose notebook does not
exist yet are skipped with a note) goes through nbdev's own docs processors, the ones
`nbdev_proc_nbs` applies before Quarto renders (`FilterDefaults`: frontmatter from `# Title` /
`> summary`, `add_show_docs` + `exec_show_docs` so exported functions and classes get their
`show_doc` signature (with its docments comments) and docstring as rendered output, `hide_`,
`rm_export`, `clean_show_doc`, ...). One deliberate change to `exec_show_docs`: of a cell that is
neither exported nor a `show_doc` call only the imports are run, and cells flagged `slow`, `cuda` or
`notest` are not run; they keep the outputs of the full run rather than being re-run out of context.
Quarto's cell options (`#| echo: false`, `#| output: false`, `#| include: false`) are then applied
as Quarto would and stripped from the code shown, and nbconvert (`HTMLExporter`, template
`nbs/_templates/swaro`) writes `<out>/<name>.html` with a sidebar in `sidebar.yml` order, the page
title and summary, `styles.css`, a favicon, and math left in TeX for MathJax, which the site ships:
MathJax 3.2.2 comes from the npm registry once (`npm pack mathjax@3.2.2`, its sha512 pinned below,
kept in `~/.cache/swaro_nb/npm/` or `$SWARO_CACHE/npm/`; `--fetch-mathjax` only fetches it), and the
files the pages need are copied into `<out>/mathjax/`, so the site renders its equations offline.
Every table is put in a box of its own that scrolls sideways (`wrap_tables`; the CSS is `SITE_CSS_EXTRA`, which also
lets code and text outputs scroll rather than wrap), so a wide table is never cut off and never widens the page.
Outputs never show the build machine's paths: the checkout root becomes a path relative to it, the home folder `~`,
temporary folders `{tmp}` (`machine_path_rules`, `scrub_outputs`; each rewritten output is named on a `note:` line, so
the notebook can print a relative path instead). Numbered notebooks missing from `sidebar.yml` are named too.
Images are embedded. Outputs come from the executed copy in
`--exec-dir` (what `tools/run_nbs.py --save DIR` writes, same relative paths) when there is one,
else from the source notebook. Links nbdev makes to the hosted docs
(`<doc_host><doc_baseurl>/data.html#load_cifar`) and links to `*.ipynb` are made relative, so the
site works from `file://` or any static server. Also writes `sidebar.json`, `nb.css`, `site.css`.

Needs: what tools/setup.sh installs (`pip install -e '.[dev,cpu]'`) and, the first time only, `npm`
(or the MathJax tarball already in the cache).

README: markdown cells of `nbs/index.ipynb` as they are, code cells as ```python blocks with their
text outputs below (machine paths rewritten as on the site), hidden/exported cells dropped, title and summary on top
(as nbdev_readme would).

Exit status 1 when any page failed to build (the others are still written).
"""
from __future__ import annotations
import argparse, ast, base64, hashlib, json, os, re, shutil, subprocess, sys, tarfile, tempfile, time, warnings
from pathlib import Path

TOOL_ROOT = Path(__file__).resolve().parents[1]
ROOT = TOOL_ROOT                      # the project being built (--root); set_project() changes it
NBS = ROOT / 'nbs'
TEMPLATES = TOOL_ROOT / 'nbs' / '_templates'
TEMPLATE = 'swaro'
MARKER = '.built_by_build_docs'
# MathJax, shipped with the site: the npm tarball, pinned by the registry's own digests (`npm view mathjax@3.2.2 dist`)
MATHJAX_PKG = 'mathjax@3.2.2'
MATHJAX_TGZ = 'mathjax-3.2.2.tgz'
MATHJAX_SHA1 = 'c754d7b46a679d7f3fa03543d6b8bf124ddf9f6b'
MATHJAX_SHA512 = 'Bt+SSVU8eBG27zChVewOicYs7Xsdt40qm4+UpHyX7k0/O9NliPc+x77k1/FEsPsjKPZGJvtRZM1vO+geW0OhGw=='
MATHJAX_ENTRY = 'tex-mml-chtml.js'   # TeX and MathML in, CommonHTML out (what the pages load)
# what that entry point loads on demand, relative to package/es5/: TeX extensions (autoload), the CHTML fonts,
# the menu and its accessibility tools (speech rules included)
MATHJAX_KEEP = (MATHJAX_ENTRY, 'input/tex/', 'output/chtml/fonts/woff-v2/', 'ui/', 'a11y/', 'sre/', 'adaptors/')

# ---------------------------------------------------------------------------- notebooks & sidebar

def _cfg():
    from nbdev.config import get_config
    cfg = get_config(path=ROOT)
    assert Path(cfg.config_path).resolve() == ROOT, f'nbdev found {cfg.config_file}, not {ROOT}/settings.ini'
    return cfg

def set_project(root: Path) -> None:
    "Build the project at `root` (its settings.ini, notebooks and package); default: this checkout."
    global ROOT, NBS
    ROOT = Path(root).resolve()
    if not (ROOT / 'settings.ini').exists(): sys.exit(f'error: {ROOT} has no settings.ini')
    os.chdir(ROOT)   # nbdev's get_config finds settings.ini from the working directory, whatever `path` says
    NBS = ROOT / _cfg().get('nbs_path', 'nbs')
    if str(ROOT) not in sys.path: sys.path.insert(0, str(ROOT))
    os.environ['PYTHONPATH'] = os.pathsep.join([str(ROOT)] + [p for p in os.environ.get('PYTHONPATH', '').split(os.pathsep)
                                                              if p and p != str(ROOT)])

def _src(cell) -> str:
    s = cell.get('source', '')
    return ''.join(s) if isinstance(s, list) else (s or '')

def page_meta(nb_path: Path) -> dict:
    "Title and description of a notebook, found the way nbdev's `FrontmatterProc` finds them."
    from nbdev.frontmatter import _fm2dict, _md2dict
    fm = {}
    for cell in json.loads(nb_path.read_text(encoding='utf-8'))['cells']:
        s = _src(cell)
        if not s: continue
        if cell['cell_type'] == 'raw': fm.update(_fm2dict(s) or {})
        elif cell['cell_type'] == 'markdown' and 'title' not in fm: fm.update(_md2dict(s) or {})
    return fm

def html_name(rel: str) -> str:
    "`00_data.ipynb` -> `00_data.html`; `experiments/train.ipynb` -> `experiments/train.html`."
    return str(Path(rel).with_suffix('.html').as_posix())

def read_sidebar(nbs: Path | None = None) -> list:
    "Nav tree from `sidebar.yml`: a list of `{'page': rel}` and `{'section': name, 'contents': [...]}`."
    import yaml
    nbs = nbs or NBS
    y = yaml.safe_load((nbs / 'sidebar.yml').read_text(encoding='utf-8'))
    sb = y['website']['sidebar']
    if isinstance(sb, list): sb = sb[0]
    def walk(items):
        out = []
        for e in items or []:
            if isinstance(e, str): out.append({'page': e})
            elif isinstance(e, dict) and 'section' in e: out.append({'section': str(e['section']), 'contents': walk(e.get('contents'))})
            elif isinstance(e, dict) and 'href' in e: out.append({'page': e['href'], 'text': e.get('text')})
            elif isinstance(e, dict) and 'contents' in e: out.extend(walk(e['contents']))
            else: print(f'note: sidebar.yml entry {e!r} not understood; skipped')
        return out
    return walk(sb.get('contents', []))

def resolve_nav(tree: list, nbs: Path | None = None) -> tuple[list, list]:
    "Drop entries whose notebook does not exist (with a note); add titles. Returns (nav, pages)."
    pages, nbs = [], nbs or NBS
    def walk(items):
        out = []
        for e in items:
            if 'section' in e:
                sub = walk(e['contents'])
                if sub: out.append({'section': e['section'], 'contents': sub})
                continue
            rel = e['page']
            p = nbs / rel
            if not p.exists():
                print(f'note: {rel} is listed in sidebar.yml but does not exist yet; skipped'); continue
            if p.suffix != '.ipynb':
                print(f'note: {rel} is not a notebook; skipped'); continue
            fm = page_meta(p)
            item = {'title': e.get('text') or fm.get('title') or p.stem, 'href': html_name(rel), 'source': rel,
                    'description': fm.get('description', '')}
            out.append(item); pages.append(item)
        return out
    return walk(tree), pages

def sidebar_html(nav: list, current: str, root: str) -> str:
    "The sidebar's `<ul>`s, with `current` (an href) marked active; links relative to `root`."
    from html import escape
    def items(lst):
        res = []
        for e in lst:
            if 'section' in e:
                res.append(f'<li class="sidebar-section"><div class="sidebar-section-title">{escape(e["section"])}</div>'
                           f'<ul>{"".join(items(e["contents"]))}</ul></li>')
            else:
                act = ' class="active"' if e['href'] == current else ''
                cur = ' aria-current="page"' if act else ''
                res.append(f'<li{act}><a href="{escape(root + e["href"])}"{cur}>{escape(e["title"])}</a></li>')
        return res
    return '<ul class="sidebar-menu">' + ''.join(items(nav)) + '</ul>'

# ---------------------------------------------------------------------------- executed outputs

_re_dir_line = re.compile(r'^\s*#\s*\|')

def _norm(src: str) -> str:
    "Cell source without its leading `#|` directive lines (the executed copies lose nbdev's directives)."
    lines = src.splitlines()
    i = 0
    while i < len(lines) and (not lines[i].strip() or _re_dir_line.match(lines[i])): i += 1
    return '\n'.join(lines[i:]).strip()

def merge_outputs(nb, ex) -> tuple[int, int]:
    """Copy outputs of executed notebook `ex` into source notebook `nb`, matching code cells by id
    (else by source, in order); a cell whose source changed since it was executed keeps its own."""
    src_code = [c for c in nb.cells if c.cell_type == 'code']
    ex_code = [c for c in ex.cells if c.cell_type == 'code']
    by_id = {}
    for c in ex_code:
        if c.get('id'): by_id.setdefault(c['id'], []).append(c)
    matched = stale = j = 0
    for c in src_code:
        cands = by_id.get(c.get('id')) if c.get('id') else None
        e = cands[0] if cands and len(cands) == 1 else None
        key = _norm(_src(c))
        if e is None:
            for k in range(j, len(ex_code)):
                if _norm(_src(ex_code[k])) == key: e = ex_code[k]; j = k + 1; break
        if e is None: continue
        if _norm(_src(e)) != key: stale += 1; continue
        c['outputs'] = e.get('outputs', [])
        c['execution_count'] = e.get('execution_count')
        matched += 1
    return matched, stale

def load_nb(src: Path, exec_dir: Path | None, rel: str, notes: list):
    "Source notebook (directives intact) with the outputs of its executed copy, if any."
    from execnb.nbio import read_nb
    nb = read_nb(src)
    if exec_dir is not None:
        ef = exec_dir / rel
        if ef.exists():
            m, s = merge_outputs(nb, read_nb(ef))
            if s: notes.append(f'{rel}: {s} cell(s) changed since {ef} was executed; their outputs are not shown')
        else: notes.append(f'{rel}: no executed copy in {exec_dir}; using the source notebook\'s outputs')
    return nb

# ---------------------------------------------------------------------------- nbdev processing

_SHOW_DIRS = {'export', 'exports', 'exporti', 'exec_doc'}

def _first_line(cell) -> str:
    code = _norm(_src(cell))
    return repr(code.splitlines()[0][:80]) if code else "''"

def _procs():
    "nbdev's docs processors (`FilterDefaults`), with `exec_show_docs` made to tolerate failing non-doc cells."
    from nbdev.processors import FilterDefaults, exec_show_docs, _do_eval, _show_docs, add_fold
    from fastcore.basics import str2bool

    class exec_show_docs_(exec_show_docs):
        """nbdev's `exec_show_docs`, which runs what `show_doc` needs (exported cells, `show_doc` calls, imports),
        with one change: a cell that is neither exported nor a `show_doc` call has only its import statements run,
        and none of a cell flagged with a `tst_flags` directive (`slow`, `cuda`, ...). nbdev re-runs such cells
        whole, out of context (the cells before them are not run), which fails, or runs GPU or slow code on the docs
        machine, or silently replaces their outputs; here they keep the outputs of the full run (`--exec-dir`)."""
        notes = []
        def begin(self):
            super().begin()
            self.skip_flags = set(_cfg().get('tst_flags', '').split())
        def __call__(self, cell):
            if not self.nb.has_docs_ or not hasattr(self, 'k'): return
            fm = getattr(self.nb, 'frontmatter_', {})
            if str2bool(fm.get('skip_showdoc', False)): return
            with warnings.catch_warnings():
                warnings.simplefilter('ignore')
                if not _do_eval(cell): return
            trees = cell.parsed_() or []
            if (cell.directives_.keys() & _SHOW_DIRS) or _show_docs(trees):
                self.k.cell(cell)
                if self.k.exc:
                    raise RuntimeError(f'a cell failed while rendering docs ({type(self.k.exc).__name__}: {self.k.exc}):'
                                       f'\n{cell.source}') from self.k.exc
                return
            if cell.directives_.keys() & self.skip_flags: return
            imports = [t for t in trees if isinstance(t, (ast.Import, ast.ImportFrom))]
            if not imports: return
            self.k.run('\n'.join(ast.unparse(t) for t in imports))
            if self.k.exc:
                self.notes.append(f'an import failed while rendering docs ({type(self.k.exc).__name__}: {self.k.exc}): '
                                  f'{_first_line(cell)}')
                self.k.exc = None

    procs = [exec_show_docs_ if p is exec_show_docs else p for p in FilterDefaults().procs() if p is not add_fold]
    return procs, exec_show_docs_

_re_attr_link = re.compile(r'\[([^\]]*)\]\(([^)\s]+)\)\{([^}]*)\}')

def _attr_links(md: str) -> str:
    """Pandoc/Quarto `[text](url){target="_blank" style=...}` links (show_doc's `source` link) for nbconvert:
    alone on a line -> an HTML block keeping the attributes; inside text -> a plain markdown link.
    (An inline `<a ...>` would be split by nbconvert's inline-HTML handling.)"""
    def f(m):
        text, url, attrs = m.groups()
        kv = dict(re.findall(r'([\w-]+)="([^"]*)"', attrs))
        style = f' style="{kv["style"]}"' if 'style' in kv else ''
        target = f' target="{kv["target"]}"' if 'target' in kv else ''
        return f'<div class="attr-link"{style}><a href="{url}"{target}>{text}</a></div>'
    lines = md.split('\n')
    for i, l in enumerate(lines):
        if _re_attr_link.fullmatch(l.strip()): lines[i] = _re_attr_link.sub(f, l.strip())
        else: lines[i] = _re_attr_link.sub(lambda m: f'[{m.group(1)}]({m.group(2)})', l)
    return '\n'.join(lines)

_re_qopt = re.compile(r'^\s*#\s*\|\s*([\w-]+)\s*:\s*(.*?)\s*$')

def quarto_opts(src: str) -> tuple[dict, str]:
    "Split leading `#| key: value` cell options (what nbdev leaves for Quarto) from the code."
    lines, opts, i = src.splitlines(), {}, 0
    while i < len(lines):
        m = _re_qopt.match(lines[i])
        if m: opts[m.group(1).lower()] = m.group(2).strip().strip('"\'').lower(); i += 1
        elif _re_dir_line.match(lines[i]): i += 1   # any other directive: not for display
        else: break
    return opts, '\n'.join(lines[i:])

def apply_quarto(nb) -> None:
    "Apply Quarto's cell options as Quarto would render them, and drop nbdev's frontmatter raw cell."
    cells = []
    for cell in nb.cells:
        src = _src(cell)
        if cell.cell_type == 'raw' and src.lstrip().startswith('---'): continue
        if cell.cell_type == 'markdown':
            cell['source'] = _attr_links(src)
        if cell.cell_type == 'code':
            opts, code = quarto_opts(src)
            if opts.get('include') == 'false': continue
            outs = list(cell.get('outputs') or [])
            if opts.get('output') == 'false': outs = []
            if opts.get('warning') == 'false': outs = [o for o in outs if o.get('name') != 'stderr']
            for o in outs:
                d = o.get('data') or {}
                if 'text/markdown' in d:
                    t = d['text/markdown']; t = ''.join(t) if isinstance(t, list) else t
                    d['text/markdown'] = _attr_links(t)
            cell['outputs'] = outs
            cell['source'] = code.strip('\n')
            if opts.get('echo') == 'false' or not cell['source'].strip():
                cell.setdefault('metadata', {})['transient'] = {'remove_source': True}
                if not outs: continue
        cells.append(cell)
    nb.cells = cells

def to_nbnode(nb):
    "execnb AttrDict -> nbformat NotebookNode (private `*_` keys dropped, multi-line strings joined)."
    import nbformat
    from execnb.nbio import nb2dict
    d = nb2dict(nb)
    for c in d['cells']:
        c.pop('has_sd', None)
        c.setdefault('metadata', {})
        if c['cell_type'] == 'code': c.setdefault('outputs', []); c.setdefault('execution_count', None)
    d.setdefault('metadata', {})
    d.setdefault('nbformat', 4); d.setdefault('nbformat_minor', 5)
    return nbformat.reads(json.dumps(d), as_version=4)

# ---------------------------------------------------------------------------- machine paths

SYSTEM_TMP = ('/tmp', '/var/tmp', '/dev/shm')
# a folder made by mkdtemp/mktemp/pytest/tools/run_nbs.py (`tmpab12cd_3`, `nb-00_data-k2j4h5g6`, `pytest-of-root`,
# `swaro_test.Xy12Zq` (tools/test.sh), torch's `torchinductor_root`): the parts of a temporary path that name no content
_TMP_COMP = (r'(?:tmp[\w.-]*|swaro_test[\w.-]*|nb-[\w.-]+|pytest-[\w.-]+|torchinductor_[\w.-]+'
             r'|[\w-]+[._-](?=[A-Za-z_]*\d)[A-Za-z0-9_]{6,8})')

def _pfx(p: str) -> str:
    "A literal path prefix as a regex that matches it only as a whole path (not `/rootx`, not `/a/root`)."
    return r'(?<![\w.-])' + re.escape(p.rstrip('/'))

def machine_path_rules(root: Path | None = None) -> list[tuple[re.Pattern, str]]:
    """(pattern, replacement) for the absolute paths of the machine that builds the site, longest first: the
    checkout root -> relative to it (`nbs/x`, `.` for the root itself), the virtual environment (when it lives
    elsewhere, like a symlinked `.venv`) -> `.venv`, temporary folders -> `{tmp}`, the home folder -> `~`.
    A temporary folder is $TMPDIR (whatever it is called, when it is not a system folder such as /tmp) with the
    temporary folders inside it, or a folder in /tmp named as mkdtemp & co name theirs (`/tmp/tmpab12cd_3`, not
    `/tmp/somewhere`, which a test may well use as an example)."""
    import tempfile
    root = Path(root or ROOT)
    lits: dict[str, str] = {}
    def add(p, rep):
        p = str(p).rstrip('/')
        if p and p != '/' and p not in lits: lits[p] = rep
    for r in (root, root.resolve()): add(r, '')
    if sys.prefix != sys.base_prefix:                      # running in a virtual environment
        venv = root / '.venv'
        here = venv.exists() and venv.resolve() == Path(sys.prefix).resolve()
        for v in (sys.prefix, Path(sys.prefix).resolve()): add(v, '.venv' if here else '{venv}')
    tmp = tempfile.gettempdir()
    tmps = {tmp, str(Path(tmp).resolve())}
    home = str(Path.home())
    rules = []
    for t in sorted(tmps, key=len, reverse=True):
        if t.rstrip('/') in SYSTEM_TMP or t in ('/', home): continue
        rules.append((len(t), re.compile(_pfx(t) + rf'(?:/{_TMP_COMP})*(?![\w.-])'), '{tmp}'))
    for t in SYSTEM_TMP:
        rules.append((len(t), re.compile(_pfx(t) + rf'(?:/{_TMP_COMP})+(?![\w.-])'), '{tmp}'))
    for p, rep in lits.items():
        if rep == '':   # the checkout root: `root/x` -> `x`, `root` alone -> `.`
            rules.append((len(p), re.compile(_pfx(p) + r'(?:/(?=[\w.-])|(?![\w.-]))'),
                          lambda m: '' if m.group(0).endswith('/') else '.'))
        else: rules.append((len(p), re.compile(_pfx(p) + r'(?![\w.-])'), rep))
    if home not in ('', '/'): rules.append((len(home), re.compile(_pfx(home) + r'(?![\w.-])'), '~'))
    # longest first, so the checkout (/home/u/swaro_nb) goes before the home folder (/home/u) that holds it
    return [(pat, rep) for _, pat, rep in sorted(rules, key=lambda r: -r[0])]

def scrub_paths(text: str, rules) -> tuple[str, int]:
    "`text` with the machine's paths rewritten (`machine_path_rules`); returns it and how many were rewritten."
    n = 0
    for pat, rep in rules:
        text, k = pat.subn(rep, text); n += k
    return text, n

def scrub_outputs(nb, rules) -> list[str]:
    """Rewrite the machine's paths in every output of `nb` (text, HTML, markdown, tracebacks; show_doc's signatures
    too, which are outputs), in place. Returns one line per cell that had any: its first line, the count, an example."""
    found = []
    def fix(v, ex):
        if isinstance(v, list): v = ''.join(v)
        new, k = scrub_paths(v, rules)
        if k and not ex:
            m = next((m for pat, _ in rules for m in [pat.search(v)] if m), None)
            if m: ex.append(v[max(0, m.start() - 30):m.end() + 30].replace('\n', ' '))
        return new, k
    for cell in nb.cells:
        if cell.get('cell_type') != 'code': continue
        n, ex = 0, []
        for o in cell.get('outputs') or []:
            if 'text' in o: o['text'], k = fix(o['text'], ex); n += k
            if 'traceback' in o:
                tb = []
                for line in o['traceback']:
                    line, k = fix(line, ex); n += k; tb.append(line)
                o['traceback'] = tb
            for mime, v in (o.get('data') or {}).items():
                if mime.startswith('text/') or mime in ('application/javascript', 'image/svg+xml'):
                    o['data'][mime], k = fix(v, ex); n += k
        if n: found.append(f'the cell {_first_line(cell)}: {n} path(s), e.g. …{ex[0] if ex else ""}…')
    return found

# ---------------------------------------------------------------------------- HTML

_EXPORTER = None

def exporter():
    global _EXPORTER
    if _EXPORTER is None:
        from nbconvert import HTMLExporter
        from traitlets.config import Config
        c = Config()
        c.HTMLExporter.extra_template_basedirs = [str(TEMPLATES)]
        c.HTMLExporter.template_name = TEMPLATE
        c.HTMLExporter.exclude_input_prompt = True
        c.HTMLExporter.exclude_output_prompt = True
        c.HTMLExporter.embed_images = True
        c.HTMLExporter.theme = 'light'
        _EXPORTER = HTMLExporter(config=c)
    return _EXPORTER

_re_href = re.compile(r'(href|src)="([^"]*)"')

def fix_links(html: str, root: str, doc_prefix: str, aliases: dict) -> str:
    "Hosted-docs links -> relative links to our pages; `x.ipynb` links -> `x.html`."
    def f(m):
        attr, url = m.groups()
        if doc_prefix and url.startswith(doc_prefix):
            page, _, frag = url[len(doc_prefix):].partition('#')
            page = aliases.get(page, page)
            return f'{attr}="{root}{page}{"#" + frag if frag else ""}"'
        if attr == 'href' and not re.match(r'^[a-z][a-z0-9+.-]*:', url) and not url.startswith('#'):
            path, sep, frag = url.partition('#')
            if path.endswith('.ipynb'): return f'{attr}="{path[:-6]}.html{sep}{frag}"'
        return m.group(0)
    return _re_href.sub(f, html)

_re_hid = re.compile(r'(<h[1-6][^>]*\bid=")([^"]+)(")')

def pandoc_ids(html: str) -> str:
    """Heading ids in lower case, as pandoc (Quarto) makes them and nbdev's doc links expect
    (`data.html#devicedataset`); same-page `#Fragment` links that only differ in case follow."""
    html = _re_hid.sub(lambda m: m.group(1) + m.group(2).lower() + m.group(3), html)
    ids = set(re.findall(r'\bid="([^"]+)"', html))
    return re.sub(r'href="#([^"]+)"', lambda m: m.group(0) if m.group(1) in ids or m.group(1).lower() not in ids
                  else f'href="#{m.group(1).lower()}"', html)

_re_table_tag = re.compile(r'<(/?)table\b[^>]*>', re.I)
_re_cell = re.compile(r'(<t[dh]\b)([^>]*)(>)(.*?)(?=</t[dh]>)', re.I | re.S)
WRAP_CELL = 40   # a table cell with more characters than this is prose, and wraps; shorter ones (numbers, names) do not

def _mark_long_cells(table: str) -> str:
    "`class=\"cell-wrap\"` on each cell of `table` that holds more than `WRAP_CELL` characters of text."
    if len(_re_table_tag.findall(table)) > 2: return table   # a nested table: left as it is
    def f(m):
        tag, attrs, gt, body = m.groups()
        if len(' '.join(re.sub(r'<[^>]+>', ' ', body).split())) <= WRAP_CELL: return m.group(0)
        if re.search(r'\bclass="', attrs): attrs = re.sub(r'\bclass="', 'class="cell-wrap ', attrs, count=1)
        else: attrs += ' class="cell-wrap"'
        return tag + attrs + gt + body
    return _re_cell.sub(f, table)

def wrap_tables(html: str) -> str:
    """Every outermost `<table>` (markdown tables in prose, pandas/HTML/markdown tables in outputs) inside a
    `<div class="table-scroll">`, which `site.css` lets scroll sideways: a table wider than the column scrolls in a box
    of its own instead of being cut off or widening the page. Its cells keep their natural width on one line
    (`NVIDIA H100 80GB HBM3`, `swaro-c10-200-s0`), so a wide table scrolls rather than squeezing them into columns of
    single words; a cell of prose (over `WRAP_CELL` characters) gets `cell-wrap` and wraps, with a minimum width."""
    out, depth, last = [], 0, 0
    for m in _re_table_tag.finditer(html):
        if not m.group(1):
            if depth == 0: out.append(html[last:m.start()]); last = m.start()
            depth += 1
        elif depth:
            depth -= 1
            if depth == 0:
                out += ['<div class="table-scroll">', _mark_long_cells(html[last:m.end()]), '</div>']; last = m.end()
    out.append(html[last:])
    return ''.join(out)

_re_heading = re.compile(r'<h([1-6])([^>]*)\bid="([^"]+)"')

def unique_ids(html: str) -> str:
    """One element per id. When a section heading and a `show_doc` heading share one (a `## SwARo` section that
    documents `class SwARo`), the `show_doc` heading (inside an output area) keeps it, since nbdev's links point at
    it; the other heading becomes `<id>-section` (`-section-2`, ... if needed), its own anchor link following."""
    heads = [(m, html.rfind('jp-OutputArea-output', 0, m.start()) > html.rfind('jp-MarkdownOutput', 0, m.start()))
             for m in _re_heading.finditer(html)]
    taken = set(re.findall(r'\bid="([^"]+)"', html))
    by_id = {}
    for m, in_output in heads: by_id.setdefault(m.group(3), []).append((m, in_output))
    edits = []
    for i, hs in by_id.items():
        if len(hs) < 2: continue
        keep = next((m for m, out in hs if out), hs[0][0])
        for m, _ in hs:
            if m is keep: continue
            new, k = f'{i}-section', 2
            while new in taken: new, k = f'{i}-section-{k}', k + 1
            taken.add(new); edits.append((m, i, new))
    for m, old, new in sorted(edits, key=lambda e: -e[0].start()):   # from the end, so earlier offsets stay valid
        end = html.find('</h', m.end())
        head = html[m.start():end].replace(f'id="{old}"', f'id="{new}"', 1).replace(f'href="#{old}"', f'href="#{new}"', 1)
        html = html[:m.start()] + head + html[end:]
    return html

def build_page(job: dict) -> dict:
    "Process one notebook with nbdev's docs processors and write its HTML page (runs in a worker process)."
    t0 = time.time()
    os.environ['IN_TEST'] = '1'
    os.environ.setdefault('MPLBACKEND', 'Agg')
    set_project(job['project'])
    rel, notes = job['source'], []
    src = NBS / rel
    try:
        from nbdev.process import NBProcessor
        from fastcore.xtras import working_directory
        nb = load_nb(src, Path(job['exec_dir']) if job['exec_dir'] else None, rel, notes)
        procs, esd = _procs()
        esd.notes = []
        with working_directory(src.parent), warnings.catch_warnings():
            warnings.simplefilter('ignore')
            NBProcessor(nb=nb, procs=procs).process()
        notes += [f'{rel}: {n}' for n in esd.notes]
        fm = getattr(nb, 'frontmatter_', {}) or {}
        apply_quarto(nb)
        notes += [f'{rel}: machine path in an output, shown rewritten: {n}'
                  for n in scrub_outputs(nb, machine_path_rules())]
        node = to_nbnode(nb)
        node.metadata['title'] = job['title']
        res = {'metadata': {'name': job['title'], 'path': str(src.parent)},
               'root': job['root'], 'page_title': fm.get('title', job['title']),
               'description': fm.get('description', ''), 'site_title': job['site_title'],
               'sidebar_html': job['sidebar_html'], 'source_path': f'nbs/{rel}',
               'mathjax_src': job['root'] + 'mathjax/' + MATHJAX_ENTRY}
        body, _ = exporter().from_notebook_node(node, resources=res)
        body = wrap_tables(unique_ids(pandoc_ids(fix_links(body, job['root'], job['doc_prefix'], job['aliases']))))
        out = Path(job['out'])
        out.parent.mkdir(parents=True, exist_ok=True)
        out.write_text(body, encoding='utf-8')
        return {'source': rel, 'ok': True, 'notes': notes, 'secs': time.time() - t0}
    except Exception as e:
        import traceback
        return {'source': rel, 'ok': False, 'notes': notes, 'secs': time.time() - t0,
                'error': f'{type(e).__name__}: {e}\n' + ''.join(traceback.format_exception(e))[-3000:]}

# fenced code in markdown cells: the lab CSS gives `pre` no margin, so the next paragraph would touch the block.
# Wide content: the lab CSS lays a cell's input and outputs out as CSS tables (`display: table`, `overflow: hidden`),
# which grow with their content or cut it off; here every level between the page column and a table or a block of code
# may shrink to the column (`min-width: 0`, `max-width: 100%`), and the boxes that hold wide things scroll sideways:
# `.table-scroll` (the wrapper `wrap_tables` puts around each table), an output, a code block.
SITE_CSS_EXTRA = '''
/* added by tools/build_docs.py: fenced code in prose keeps a paragraph's distance from what follows */
.jp-MarkdownOutput .highlight, .jp-MarkdownOutput > pre { margin: 0 0 1em 0; }
/* added by tools/build_docs.py: wide tables and code scroll in their own box, never cut off, never widening the page */
main.content { min-width: 0; overflow-wrap: break-word; }
.jp-Cell, .jp-Cell-inputWrapper, .jp-Cell-outputWrapper, .jp-Cell-outputArea, .jp-OutputArea, .jp-InputArea,
.jp-MarkdownOutput, .jp-OutputArea-output, .jp-InputArea-editor { min-width: 0; max-width: 100%; }
.jp-OutputArea-child, .jp-InputArea { display: block; width: 100%; overflow: visible; }
.jp-OutputArea-output, .jp-InputArea-editor, .jp-MarkdownOutput { display: block; width: 100%; box-sizing: border-box; }
.table-scroll { display: block; max-width: 100%; overflow-x: auto; overflow-y: hidden; margin: 0 0 1em 0; }
.jp-RenderedHTMLCommon .table-scroll > table { table-layout: auto; margin: 0 0 0.2em 0; }
.table-scroll th, .table-scroll td { white-space: nowrap; }
.table-scroll th.cell-wrap, .table-scroll td.cell-wrap { white-space: normal; min-width: 16em; }
/* code and text outputs scroll rather than wrap (Quarto's default, code-overflow: scroll): a printed table keeps
   its columns */
.jp-InputArea-editor .highlight pre, .jp-MarkdownOutput pre,
.jp-OutputArea-output pre { overflow-x: auto; max-width: 100%; }
.jp-OutputArea-output pre { white-space: pre; word-break: normal; overflow-wrap: normal; }
'''

def source_pages(out: Path, cfg) -> dict:
    """Write `<out>/src/<module>.py.html` for every module of the package: its code with an anchor per line (`#L12`),
    so a page's `source` links open the code this site was built from, offline. Returns {module file name: page}."""
    import html as _html
    lib = ROOT / cfg.get('lib_path', cfg.get('lib_name', ''))
    pages = {}
    for py in sorted(lib.glob('*.py')):
        if py.name.startswith('_'): continue
        lines = py.read_text(encoding='utf-8').splitlines()
        body = '\n'.join(f'<span class="line" id="L{n}"><a href="#L{n}">{n:4d}</a>  {_html.escape(l)}</span>' for n, l in enumerate(lines, 1))
        name = f'{cfg.get("lib_name", lib.name)}/{py.name}'
        page = out / 'src' / f'{py.name}.html'
        page.parent.mkdir(parents=True, exist_ok=True)
        page.write_text(f'<!doctype html>\n<html lang="en"><head><meta charset="utf-8"><title>{name}</title>'
                        f'<link rel="icon" href="../favicon.svg"><style>body{{margin:0;font:13px/1.45 monospace}}'
                        f'h1{{font:600 15px sans-serif;margin:12px 16px}}pre{{margin:0 16px 2em}}.line{{display:block;white-space:pre}}'
                        f'.line:target{{background:#fff3b0}}.line a{{color:#999;text-decoration:none}}</style></head>'
                        f'<body><h1>{name} <small>(generated from the notebooks; the code this site was built from)</small></h1>'
                        f'<pre>{body}</pre></body></html>\n', encoding='utf-8')
        pages[py.name] = page
    return pages

_re_rel = re.compile(r'href="((?![a-z][a-z0-9+.-]*:)[^"#]*)#([^"]+)"')

def finish_links(out: Path, pages: list, cfg) -> dict:
    """Site-wide link fixes, once every page exists: show_doc's `source` links (to `<git_url>/blob/<branch>/...`, a
    repository that may not be where the code is) point at the site's own copy of the code (`source_pages`), and a link
    to `page.html#a.b` whose page has no such anchor (`Method.check`, a method documented with its class) points at
    `#a`, else at the page itself. Returns counts of what was changed."""
    src = source_pages(out, cfg)
    git = (cfg.get('git_url', '') or '').rstrip('/')
    lib = Path(cfg.get('lib_path', cfg.get('lib_name', ''))).name   # nbdev's config holds lib_path as an absolute path
    blob = f"{git}/blob/{cfg.get('branch', 'main')}/{lib}/" if git else None
    files = [out / p['href'] for p in pages if (out / p['href']).is_file()]
    ids = {f.resolve(): set(re.findall(r'\bid="([^"]+)"', f.read_text(encoding='utf-8'))) for f in files}
    n = {'source': 0, 'anchor': 0}
    for f in files:
        html, root = f.read_text(encoding='utf-8'), '../' * (len(f.relative_to(out).parts) - 1)
        if blob:
            def to_src(m):
                name, _, frag = m.group(1)[len(blob):].partition('#')
                if name not in src: return m.group(0)
                n['source'] += 1
                return f'href="{root}src/{name}.html{"#" + frag if frag else ""}"'
            html = re.sub(r'href="(' + re.escape(blob) + r'[^"]*)"', to_src, html)
        def anchor(m):
            path, frag = m.groups()
            have = ids.get((f.parent / path).resolve() if path else f.resolve())
            if have is None or frag in have or frag == 'top': return m.group(0)   # not a page of the site, a good anchor, or HTML's #top
            n['anchor'] += 1
            while '.' in frag:
                frag = frag.rsplit('.', 1)[0]
                if frag in have: return f'href="{path}#{frag}"'
            return f'href="{path or "#"}"'
        html = _re_rel.sub(anchor, html)
        f.write_text(html, encoding='utf-8')
    return n

def _lab_css() -> str:
    "JupyterLab's notebook CSS from nbconvert's `lab` template (written once as `nb.css`)."
    for d in exporter().template_paths:
        p = Path(d) / 'static' / 'index.css'
        if p.exists() and (p.parent / 'theme-light.css').exists():
            return p.read_text(encoding='utf-8') + '\n' + (p.parent / 'theme-light.css').read_text(encoding='utf-8')
    raise FileNotFoundError("nbconvert's lab template (static/index.css) not found")

# ---------------------------------------------------------------------------- MathJax and favicon

def cache_dir() -> Path:
    "Where downloads for the docs are kept: `$SWARO_CACHE/npm`, else `~/.cache/swaro_nb/npm` (outside the repo)."
    env = os.environ.get('SWARO_CACHE')
    return (Path(env).expanduser() if env else Path.home() / '.cache' / 'swaro_nb') / 'npm'

def _digests(path: Path) -> tuple[str, str]:
    h1, h512 = hashlib.sha1(), hashlib.sha512()
    with open(path, 'rb') as f:
        for b in iter(lambda: f.read(1 << 20), b''): h1.update(b); h512.update(b)
    return h1.hexdigest(), base64.b64encode(h512.digest()).decode()

def _check_mathjax(tgz: Path) -> bool:
    return _digests(tgz) == (MATHJAX_SHA1, MATHJAX_SHA512)

def fetch_mathjax(quiet: bool = False) -> Path:
    "The verified MathJax tarball in the cache; fetched with `npm pack` (6 MB) the first time."
    dest = cache_dir() / MATHJAX_TGZ
    if dest.exists():
        if _check_mathjax(dest): return dest
        print(f'note: {dest} does not match its pinned sha1/sha512; fetching it again')
        dest.unlink()
    if shutil.which('npm') is None:
        raise SystemExit(f'error: the docs need {MATHJAX_PKG} to render math offline, and npm is not installed. Install npm '
                         f'(Debian: apt-get install npm) and build again, or put {MATHJAX_TGZ} (sha1 {MATHJAX_SHA1}) at {dest}')
    if not quiet: print(f'== fetching {MATHJAX_PKG} for the docs\' math (npm pack, 6 MB, once; kept in {dest.parent})', flush=True)
    dest.parent.mkdir(parents=True, exist_ok=True)
    with tempfile.TemporaryDirectory(dir=dest.parent) as tmp:
        r = subprocess.run(['npm', 'pack', '--silent', MATHJAX_PKG], cwd=tmp, capture_output=True, text=True)
        got = Path(tmp) / (r.stdout.strip().splitlines() or [''])[-1]
        if r.returncode or not got.is_file():
            raise SystemExit(f'error: npm pack {MATHJAX_PKG} failed (exit {r.returncode}): {r.stderr.strip()[-800:]}')
        sha1, sha512 = _digests(got)
        if (sha1, sha512) != (MATHJAX_SHA1, MATHJAX_SHA512):
            raise SystemExit(f'error: {MATHJAX_PKG} from npm has sha1 {sha1}, expected {MATHJAX_SHA1}: not used')
        os.replace(got, dest)
    return dest

def install_mathjax(out: Path) -> int:
    "Unpack the files the pages load from the verified tarball into `out/mathjax/`; returns how many."
    tgz = fetch_mathjax()
    dest, n = out / 'mathjax', 0
    with tarfile.open(tgz) as tf:
        for m in tf.getmembers():
            name = m.name.removeprefix('package/')
            rel = name.removeprefix('es5/') if name.startswith('es5/') else None
            if not m.isfile(): continue
            if name == 'LICENSE': rel = 'LICENSE'
            elif rel is None or not any(rel == k or (k.endswith('/') and rel.startswith(k)) for k in MATHJAX_KEEP): continue
            if '..' in Path(rel).parts: continue
            t = dest / rel
            t.parent.mkdir(parents=True, exist_ok=True)
            with tf.extractfile(m) as f, open(t, 'wb') as o: shutil.copyfileobj(f, o)
            n += 1
    if not (dest / MATHJAX_ENTRY).is_file(): raise SystemExit(f'error: {tgz} has no package/es5/{MATHJAX_ENTRY}')
    return n

def write_favicon(out: Path) -> None:
    "`favicon.svg` (what the pages link) and `favicon.ico` (what browsers ask for without a link), so neither is a 404."
    shutil.copy2(TEMPLATES / TEMPLATE / 'favicon.svg', out / 'favicon.svg')
    from PIL import Image, ImageDraw
    im = Image.new('RGBA', (32, 32), (0, 0, 0, 0))
    d = ImageDraw.Draw(im)
    d.rounded_rectangle((0, 0, 31, 31), radius=6, fill=(44, 62, 80, 255))
    for i, c in enumerate([(231, 76, 60), (46, 204, 113), (52, 152, 219)]):   # three cluster dots
        x, y = (9, 9) if i == 0 else (23, 9) if i == 1 else (16, 22)
        d.ellipse((x - 5, y - 5, x + 5, y + 5), fill=c + (255,))
    im.save(out / 'favicon.ico', sizes=[(16, 16), (32, 32)])

def _prepare_out(out: Path):
    if out.exists() and any(out.iterdir()):
        if not (out / MARKER).exists():
            sys.exit(f'error: {out} exists and was not made by tools/build_docs.py; remove it or pass another --out')
        shutil.rmtree(out)
    out.mkdir(parents=True, exist_ok=True)
    (out / MARKER).write_text('made by tools/build_docs.py; deleted and rebuilt on every build\n')

def build_site(out: Path, exec_dir: Path | None = None, workers: int | None = None) -> int:
    "Build the whole site into `out`; returns the number of pages that failed."
    t0 = time.time()
    from nbdev.doclinks import _nbpath2html
    cfg = _cfg()
    nav, pages = resolve_nav(read_sidebar())
    if not pages: sys.exit('error: no notebook listed in nbs/sidebar.yml exists')
    listed = {p['source'] for p in pages}
    for nb in sorted(NBS.glob('*.ipynb')) + sorted(NBS.glob('experiments/*.ipynb')):
        if nb.relative_to(NBS).as_posix() not in listed:
            print(f'note: {nb.relative_to(NBS).as_posix()} is not listed in nbs/sidebar.yml; it gets no page')
    _prepare_out(out)
    print(f'mathjax: {install_mathjax(out)} files of {MATHJAX_PKG} in {out / "mathjax"}', flush=True)
    site_title = cfg.get('title', cfg.get('lib_name', 'docs'))
    doc_prefix = (cfg.get('doc_host', '') + cfg.get('doc_baseurl', '')).rstrip('/') + '/' if cfg.get('doc_host') else ''
    aliases = {_nbpath2html(Path(p['source'])).as_posix(): p['href'] for p in pages}
    jobs = []
    for p in pages:
        root = '../' * (len(Path(p['href']).parts) - 1)
        jobs.append(dict(project=str(ROOT), source=p['source'], out=str(out / p['href']), exec_dir=str(exec_dir) if exec_dir else None,
                         title=p['title'], root=root, site_title=site_title, sidebar_html=sidebar_html(nav, p['href'], root),
                         doc_prefix=doc_prefix, aliases=aliases))
    workers = max(1, min(workers or os.cpu_count() or 1, len(jobs)))
    if workers == 1: results = map(build_page, jobs)
    else:
        import multiprocessing as mp
        from concurrent.futures import ProcessPoolExecutor
        # IPython (inside exec_show_docs) replaces a worker's `__main__`, so workers must find `build_page`
        # in an importable module, not in `__main__`.
        sys.path.insert(0, str(Path(__file__).resolve().parent))
        import build_docs
        ex = ProcessPoolExecutor(workers, mp_context=mp.get_context('spawn'))
        results = ex.map(build_docs.build_page, jobs)
    failed = 0
    for r in results:
        for n in r['notes']: print('note:', n)
        if r['ok']: print(f"ok   {r['source']} -> {html_name(r['source'])} ({r['secs']:.1f}s)", flush=True)
        else:
            failed += 1
            print(f"FAIL {r['source']} ({r['secs']:.1f}s)\n{r['error']}", flush=True)
    if workers > 1: ex.shutdown()
    (out / 'sidebar.json').write_text(json.dumps({'title': site_title, 'contents': nav}, indent=1) + '\n')
    shutil.copy2(NBS / 'styles.css', out / 'styles.css')
    (out / 'site.css').write_text((TEMPLATES / TEMPLATE / 'site.css').read_text(encoding='utf-8') + SITE_CSS_EXTRA, encoding='utf-8')
    fixed = finish_links(out, pages, cfg)
    print(f"links: {fixed['source']} source links to the site's copy of the code (src/), {fixed['anchor']} links to missing anchors redirected")
    (out / 'nb.css').write_text(_lab_css(), encoding='utf-8')
    write_favicon(out)
    print(f'docs: {len(pages) - failed} pages written to {out}, {failed} failed ({time.time() - t0:.1f}s)')
    return failed

# ---------------------------------------------------------------------------- README

def _text(x) -> str: return ''.join(x) if isinstance(x, list) else (x or '')

def build_readme(exec_dir: Path | None = None, dest: Path | None = None) -> Path:
    "Write README.md from the readme notebook (index.ipynb): markdown as-is, code + text outputs."
    from nbdev.process import NBProcessor
    from nbdev.frontmatter import FrontmatterProc
    from nbdev.processors import (populate_language, strip_ansi, hide_line, filter_stream_, rm_header_dash,
                                  rm_export, clean_magics, hide_, insert_warning)
    cfg = _cfg()
    dest = Path(dest) if dest else ROOT / 'README.md'
    rel = cfg.get('readme_nb', 'index.ipynb')
    notes = []
    nb = load_nb(NBS / rel, exec_dir, rel, notes)
    for n in notes: print('note:', n)
    with warnings.catch_warnings():
        warnings.simplefilter('ignore')
        NBProcessor(nb=nb, procs=[FrontmatterProc, populate_language, insert_warning, strip_ansi, hide_line, filter_stream_,
                                  rm_header_dash, rm_export, clean_magics, hide_]).process()
    for n in scrub_outputs(nb, machine_path_rules()):
        print(f'note: README: machine path in an output of nbs/{rel}, rewritten: {n}')
    fm = getattr(nb, 'frontmatter_', {}) or {}
    parts = []
    if fm.get('title'): parts.append(f"# {fm['title']}")
    for cell in nb.cells:
        src = _src(cell)
        if cell.cell_type == 'raw':
            if src.lstrip().startswith('---'):   # nbdev's frontmatter cell: the description goes after the warning
                continue
            parts.append(src.strip()); continue
        if cell.cell_type == 'markdown':
            parts.append(src.strip())
            if 'WARNING: THIS FILE WAS AUTOGENERATED' in src and fm.get('description'): parts.append(f"> {fm['description']}")
            continue
        opts, code = quarto_opts(src)
        if opts.get('include') == 'false': continue
        if opts.get('echo') != 'false' and code.strip(): parts.append(f'```python\n{code.strip()}\n```')
        if opts.get('output') == 'false': continue
        for o in cell.get('outputs') or []:
            t = None
            if o.get('output_type') == 'stream':
                if o.get('name') == 'stderr' and opts.get('warning') == 'false': continue
                t = _text(o.get('text'))
            elif o.get('output_type') in ('execute_result', 'display_data'):
                d = o.get('data') or {}
                if 'text/markdown' in d: parts.append(_text(d['text/markdown']).strip()); continue
                if 'text/plain' in d: t = _text(d['text/plain'])
                if any(k.startswith('image/') for k in d):
                    print(f'note: README: an image output of cell {cell.idx_} is not included (text outputs only)')
                    if 'text/plain' in d and re.match(r'^<Figure size', t or ''): t = None
            if t and t.strip(): parts.append(f'```\n{t.rstrip()}\n```')
    text = '\n\n'.join(p for p in parts if p) + '\n'
    # links between notebooks are relative to nbs/ on the site; from the README at the root they point into nbs/
    text = re.sub(r'\]\((?![a-z]+:|#|/)([^)\s]+?)\.(?:ipynb|html)(#[^)]*)?\)', lambda m: f"](nbs/{m.group(1)}.ipynb{m.group(2) or ''})", text)
    # so are images (`images/x.png`, which the site embeds from nbs/)
    text = re.sub(r'\]\((?![a-z]+:|#|/|\.\./)([^)\s]+?\.(?:png|svg|jpe?g|gif))\)', r'](nbs/\1)', text)
    dest.write_text(text, encoding='utf-8')
    print(f'README: wrote {dest} from nbs/{rel} ({len(text)} chars)')
    return dest

# ---------------------------------------------------------------------------- main

def main():
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0])
    ap.add_argument('--exec-dir', default=None, help='executed notebooks (tools/run_nbs.py --save DIR), same relative paths')
    ap.add_argument('--out', default=None, help='output folder (default: _docs in the project root)')
    ap.add_argument('--workers', type=int, default=None, help='worker processes (default: number of CPUs)')
    ap.add_argument('--readme', action='store_true', help='write README.md from nbs/index.ipynb instead of the site')
    ap.add_argument('--readme-out', default=None, help='where --readme writes (default: README.md in the project root)')
    ap.add_argument('--root', default=str(TOOL_ROOT), help='project root (default: this checkout)')
    ap.add_argument('--fetch-mathjax', action='store_true', help=f'only fetch {MATHJAX_PKG} into the cache (npm pack, sha-checked)')
    a = ap.parse_args()
    if a.fetch_mathjax:
        tgz = fetch_mathjax(); print(f'mathjax: {tgz} (sha1 {MATHJAX_SHA1} verified)'); return
    out = Path(a.out).resolve() if a.out else None
    readme_out = Path(a.readme_out).resolve() if a.readme_out else None
    exec_dir = Path(a.exec_dir).resolve() if a.exec_dir else None
    set_project(Path(a.root))
    if exec_dir is not None and not exec_dir.is_dir(): sys.exit(f'error: --exec-dir {exec_dir} is not a folder')
    if a.readme:
        build_readme(exec_dir, readme_out); return
    sys.exit(1 if build_site(out or ROOT / '_docs', exec_dir, a.workers) else 0)

if __name__ == '__main__': main()
