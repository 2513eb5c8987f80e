"""The offline docs site (tools/build_docs.py), checked in a real browser: headless Chromium loads the
pages over http://127.0.0.1 and the checks read the DOM it rendered, not only the files on disk.

Two parts:
- the real site: built from this checkout into a tmp dir (or `_docs/` when SWARO_DOCS_BUILT=1 says the
  test script already built it); index.html and 00_data.html must show their titles, the sidebar in
  sidebar.yml order with a working link to every page, and the data page must show the rendered
  show_doc of every public function/class of `swaro_nb/data.py` (heading, signature, docstring),
  never a `show_doc(` call, a directive or a hidden cell; plus a screenshot of the index. Pages with wide tables, at
  1280 and 800 px, measured by a script put into the page (LAYOUT_PROBE): every table and block of code fits its
  column or scrolls in a box of its own, and the page never scrolls sideways. No page shows a path of the machine
  that built it. nbs/sidebar.yml follows the numbering of the notebooks in this checkout.
- a synthetic project in a tmp dir (one notebook with a hidden cell, an exported function, an
  `echo: false` cell, math, a plot, a 30-column markdown table, a 40-column HTML table, outputs that print the
  machine's paths, and an executed copy with a stale cell) that pins down each processing step exactly, and the README
  made from its index notebook.

Chromium: /usr/bin/chromium (Debian `apt-get install -y chromium`; `SWARO_INSTALL_BROWSER=1 bash tools/test.sh`
installs it). When it is missing the browser tests are skipped with that hint, unless the env var CI is set: then
its absence is a failure. The browser resolves no host but 127.0.0.1, and the test server records every request it
could not answer: pages must render (math included: MathJax ships with the site) offline, with no missing file.
"""
from __future__ import annotations
import base64, functools, http.server, io, json, os, re, shutil, struct, subprocess, sys, threading, urllib.request
from pathlib import Path

import pytest
import yaml
from bs4 import BeautifulSoup

ROOT = Path(__file__).resolve().parents[1]
BUILD = ROOT / 'tools' / 'build_docs.py'
FLAGS = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-quic', '--no-first-run',
         '--disable-background-networking', '--disable-component-update', '--disable-sync',
         '--host-resolver-rules=MAP * ~NOTFOUND , EXCLUDE 127.0.0.1']   # offline: only the local test server answers
ENABLE = ('install it (Debian: apt-get install -y chromium) or run SWARO_INSTALL_BROWSER=1 bash tools/test.sh, '
          'which installs it')

# ---------------------------------------------------------------------------- helpers

@pytest.fixture(scope='session')
def chromium() -> str:
    exe = shutil.which('chromium') or ('/usr/bin/chromium' if Path('/usr/bin/chromium').exists() else None)
    if exe is None:
        if os.environ.get('CI'): pytest.fail('chromium is not installed; CI is set, so the docs site must be checked in a browser')
        pytest.skip(f'browser checks of the docs skipped: chromium is not installed; to run them, {ENABLE}')
    return exe

_n = iter(range(10**6))

def browse(exe: str, url: str, tmp: Path, *args: str) -> subprocess.CompletedProcess:
    "Run headless Chromium on `url` with a fresh profile (plus `args`, e.g. --dump-dom)."
    prof = tmp / f'chromium-profile-{next(_n)}'
    r = subprocess.run([exe, *FLAGS, f'--user-data-dir={prof}', *args, url], capture_output=True, text=True, timeout=180)
    assert r.returncode == 0, f'chromium failed on {url}:\n{r.stderr[-3000:]}'
    return r

def dom(exe: str, url: str, tmp: Path) -> BeautifulSoup:
    "The DOM Chromium rendered for `url` (after scripts ran)."
    out = browse(exe, url, tmp, '--dump-dom').stdout
    assert '<body' in out, f'no DOM from chromium for {url}: {out[:500]!r}'
    return BeautifulSoup(out, 'html.parser')

def layout(exe: str, url: str, tmp: Path, width: int) -> dict:
    "What LAYOUT_PROBE measured in `url` (served with probe=True) in a window `width` px wide, after MathJax ran."
    out = browse(exe, url, tmp, f'--window-size={width},900', '--hide-scrollbars', '--virtual-time-budget=8000',
                 '--dump-dom').stdout
    body = BeautifulSoup(out, 'html.parser').body
    assert body is not None and body.get('data-layout-probe'), f'the layout probe did not run in {url}: {out[:300]!r}'
    res = json.loads(body['data-layout-probe'])
    assert res['inner_width'] == width, f'{url}: the window is {res["inner_width"]} px wide, not {width}'
    return res

def layout_problems(res: dict, page: str) -> list[str]:
    """Tables and code cut off, outside the window or under the sidebar, scrolling in a box that is not their own or
    that is a CSS table cell (which grows with its content), or a page wider than the window."""
    w = res['inner_width']
    bad = []
    if res['scroll_width'] > res['client_width'] or res['body_scroll_width'] > res['client_width']:
        wide = sorted((it for it in res['items'] if it['right'] > res['client_width']), key=lambda it: -it['right'])[:3]
        bad.append(f'{page} at {w}px: the page scrolls sideways ({res["scroll_width"]} px of content in '
                   f'{res["client_width"]} px); widest: {wide}')
    if 'hidden' in res['overflow_x'] or 'clip' in res['overflow_x']:
        bad.append(f'{page} at {w}px: the page hides what sticks out (overflow-x {res["overflow_x"]}) '
                   'instead of fitting it')
    for it in res['items']:
        where = f'{page} at {w}px: {it["kind"]} {it["i"]} ({it["text"]!r}, {it["width"]} px)'
        if it['cut']: bad.append(f'{where} is cut off by {it["cut"]}')
        if it['right'] > res['client_width'] + 1: bad.append(f'{where}: its box ends at {it["right"]} px, off the page')
        if it['left'] < res['side_right'] - 1: bad.append(f'{where}: its box starts at {it["left"]} px, under the menu')
        if it['box'] is None and it['width'] > it['parent_width'] + 1:
            bad.append(f'{where}: wider than its box and nothing scrolls')
        if it['wide'] and it['box_display'] in ('table-cell', 'table', 'inline'):
            bad.append(f'{where} scrolls in a box shown as display: {it["box_display"]} ({it["box"]}), which grows '
                       'with its content wherever its CSS table is not laid out fixed: it needs a block box of its own')
        if it['wide'] and it['box_extra'] > 40:
            bad.append(f'{where} scrolls together with {it["box_extra"]} more characters of text ({it["box"]}), '
                       'not in a box of its own')
    return bad

MISSING: list[str] = []   # paths the test servers answered with an error (404 ...), e.g. a MathJax font or the favicon

class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, *a): pass
    def send_error(self, code, *a, **k):
        MISSING.append(f'{code} {self.path}')
        super().send_error(code, *a, **k)

# Measures, in the rendered page, the layout of every table and block of code (`pre`) of the page's main column, and
# writes it as JSON into <body data-layout-probe>; run on load and again once MathJax has typeset the page.
# For each element: its box (the nearest ancestor-or-self inside <main> that scrolls sideways, else the element),
# whether it is wider than that box, how that box is displayed and how much other text scrolls with it, whether an
# ancestor cuts it off (overflow-x hidden/clip with content wider than itself), and whether the box lies inside the
# window and right of a fixed sidebar.
LAYOUT_PROBE = r"""<script>(function () {
  function measure() {
    const de = document.documentElement, W = de.clientWidth, cs = e => getComputedStyle(e);
    const side = document.getElementById('quarto-sidebar');
    const sideRight = side && cs(side).position === 'fixed' ? side.getBoundingClientRect().right : 0;
    const items = [];
    for (const [kind, sel] of [['table', 'main table'], ['pre', 'main pre']]) {
      let i = 0;
      for (const x of document.querySelectorAll(sel)) {
        i++;
        if (x.parentElement.closest(kind === 'table' ? 'table' : 'pre, table')) continue;   // measured with its outer
        let box = null, cut = [], inMain = true;
        for (let e = x; e && e !== de; e = e.parentElement) {
          const ox = cs(e).overflowX;
          if (e.tagName === 'MAIN') inMain = false;   // a box that scrolls is inside the page's column
          if (!box && inMain && (ox === 'auto' || ox === 'scroll') && !(kind === 'table' && e === x)) box = e;
          if ((ox === 'hidden' || ox === 'clip') && e.scrollWidth > e.clientWidth + 1)
            cut.push((e.tagName + '.' + (e.className || '')).slice(0, 60));
        }
        const b = box || x, r = b.getBoundingClientRect();
        const width = Math.max(x.scrollWidth, x.getBoundingClientRect().width);
        const name = box ? (box.tagName + '.' + box.className).slice(0, 60) : null;
        items.push({kind, i, width: Math.round(width), box: name,
                    box_width: Math.round(box ? box.clientWidth : r.width), parent_width: x.parentElement.clientWidth,
                    wide: !!box && box.scrollWidth > box.clientWidth + 1,
                    scroll_x: box ? cs(box).overflowX : null, box_display: box ? cs(box).display : null,
                    box_extra: box ? box.innerText.trim().length - x.innerText.trim().length : 0,
                    left: Math.round(r.left), right: Math.round(r.right),
                    cut, text: x.textContent.trim().slice(0, 60)});
      }
    }
    return {inner_width: window.innerWidth, client_width: W, scroll_width: de.scrollWidth,
            body_scroll_width: document.body.scrollWidth, side_right: Math.round(sideRight),
            overflow_x: [cs(de).overflowX, cs(document.body).overflowX], items};
  }
  function run(stage) {
    const r = measure(); r.stage = stage;
    document.body.setAttribute('data-layout-probe', JSON.stringify(r));
  }
  window.addEventListener('load', function () {
    run('load');
    const mj = window.MathJax && window.MathJax.startup && window.MathJax.startup.promise;
    if (mj) mj.then(() => run('mathjax'));
  });
})();</script>"""

class _Probe(_Quiet):
    "Serves the site with `LAYOUT_PROBE` put into every HTML page, before </body>."
    def send_head(self):
        path = self.translate_path(self.path)
        if not path.endswith('.html') or not os.path.isfile(path): return super().send_head()
        body = Path(path).read_bytes().replace(b'</body>', LAYOUT_PROBE.encode() + b'</body>', 1)
        self.send_response(200)
        self.send_header('Content-Type', 'text/html; charset=utf-8')
        self.send_header('Content-Length', str(len(body)))
        self.end_headers()
        return io.BytesIO(body)

@pytest.fixture(scope='module')
def serve():
    "serve(folder, probe=False) -> base URL of a background http.server on a free port; all stopped at the end."
    servers = []
    def start(folder: Path, probe: bool = False) -> str:
        handler = functools.partial(_Probe if probe else _Quiet, directory=str(folder))
        srv = http.server.ThreadingHTTPServer(('127.0.0.1', 0), handler)
        threading.Thread(target=srv.serve_forever, daemon=True).start()
        servers.append(srv)
        return f'http://127.0.0.1:{srv.server_address[1]}/'
    yield start
    for s in servers: s.shutdown(); s.server_close()

@pytest.fixture
def no_missing():
    "Fails the test if any request of it got an error answer from a test server."
    MISSING.clear()
    yield
    assert not MISSING, f'the site lacks files the browser asked for: {MISSING}'

def visible(el) -> str:
    "Text a reader sees as prose: no code, scripts or typeset math (what is left of TeX there was never typeset)."
    el = BeautifulSoup(str(el), 'html.parser')
    for x in el.select('pre, code, script, style, textarea, mjx-container'): x.decompose()
    return ' '.join(el.get_text(' ').split())

_RAW_TEX = re.compile(r'\$\$|\$\\|\\(?:frac|sum|exp|log|mathrm|mathbf|mathcal|operatorname|sigma|delta|tau|alpha|beta|eta|Pi|tilde|big)\b')

def assert_math_rendered(d: BeautifulSoup, page: str, min_eqs: int = 1):
    "MathJax typeset the page's equations: rendered math elements, none with a TeX error, no raw TeX left in the prose."
    main = d.select_one('main')
    eqs = main.select('mjx-container')
    assert len(eqs) >= min_eqs, f'{page}: {len(eqs)} typeset equations (mjx-container), expected at least {min_eqs}'
    assert not main.select('mjx-merror'), f'{page}: MathJax reports a TeX error: {text(main.select_one("mjx-merror"))[:200]}'
    raw = [m.group(0) for m in re.finditer(r'.{0,40}(?:' + _RAW_TEX.pattern + r').{0,40}', visible(main))]
    assert not raw, f'{page}: equations left as raw TeX: {raw[:3]}'

def build(*args: str) -> subprocess.CompletedProcess:
    r = subprocess.run([sys.executable, str(BUILD), *args], capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, f'build_docs {args} failed:\n{r.stdout[-4000:]}\n{r.stderr[-4000:]}'
    return r

def text(el) -> str: return ' '.join(el.get_text(' ').split())

def nb_title(path: Path) -> tuple[str, str]:
    "The `# Title` and `> summary` lines of a notebook's first markdown cell that has a title."
    for c in json.loads(path.read_text())['cells']:
        s = ''.join(c['source']) if isinstance(c['source'], list) else c['source']
        m = re.search(r'^#\s+(\S.*?)\s*$', s, re.M)
        if c['cell_type'] == 'markdown' and m:
            d = re.search(r'^>\s+(\S.*?)\s*$', s, re.M)
            return m.group(1), d.group(1) if d else ''
    return path.stem, ''

def expected_nav(nbs: Path) -> list[tuple[str | None, str, str]]:
    "(section, href, title) for every existing notebook in sidebar.yml, in order."
    res = []
    def walk(items, section):
        for e in items or []:
            if isinstance(e, str):
                if (nbs / e).exists(): res.append((section, str(Path(e).with_suffix('.html')), nb_title(nbs / e)[0]))
            else: walk(e.get('contents'), e.get('section', section))
    walk(yaml.safe_load((nbs / 'sidebar.yml').read_text())['website']['sidebar']['contents'], None)
    return res

def norm_md(s: str) -> str:
    "Text as a reader sees it after markdown rendering: no backticks/emphasis marks, single spaces."
    s = re.sub(r'\[([^\]]*)\]\([^)]*\)', r'\1', s)
    return ' '.join(re.sub(r'[`*_\\]', '', s).split())

def png_size(data: bytes) -> tuple[int, int]:
    assert data[:8] == b'\x89PNG\r\n\x1a\n' and data[12:16] == b'IHDR', 'not a PNG'
    return struct.unpack('>II', data[16:24])

# ---------------------------------------------------------------------------- the real site

@pytest.fixture(scope='module')
def site(tmp_path_factory) -> Path:
    if os.environ.get('SWARO_DOCS_BUILT') == '1':
        out = ROOT / '_docs'
        assert (out / 'index.html').exists(), 'SWARO_DOCS_BUILT=1 but _docs/index.html does not exist'
        return out
    out = tmp_path_factory.mktemp('site') / '_docs'
    build('--out', str(out))
    return out

def test_index_page(chromium, site, serve, tmp_path, no_missing):
    base = serve(site)
    d = dom(chromium, base + 'index.html', tmp_path)
    title, desc = nb_title(ROOT / 'nbs' / 'index.ipynb')
    assert text(d.select_one('h1.title')) == title
    if desc: assert norm_md(text(d.select_one('#title-block-header .description'))) == norm_md(desc)
    assert title in text(d.title)
    # the sidebar: every existing notebook of sidebar.yml, in that order, under its section, titled like its page
    want = expected_nav(ROOT / 'nbs')
    assert [w[1] for w in want][:2] == ['index.html', '00_data.html'], want
    links = d.select('nav#quarto-sidebar ul.sidebar-menu a')
    assert [a['href'] for a in links] == [w[1] for w in want]
    assert [text(a) for a in links] == [w[2] for w in want]
    for sec, href, _ in want:
        a = d.select_one(f'nav#quarto-sidebar a[href="{href}"]')
        got = a.find_parent('li', class_='sidebar-section')
        assert (text(got.select_one('.sidebar-section-title')) if got else None) == sec, href
    assert d.select_one('nav#quarto-sidebar li.active a')['href'] == 'index.html'
    # every page the sidebar links to is there, with its own title
    for _, href, t in want:
        page = BeautifulSoup(urllib.request.urlopen(base + href, timeout=30).read(), 'html.parser')
        assert text(page.select_one('h1.title')) == t, href
    nav = json.loads((site / 'sidebar.json').read_text())
    flat = []
    def walk(items):
        for e in items:
            if 'section' in e: walk(e['contents'])
            else: flat.append(e['href'])
    walk(nav['contents'])
    assert flat == [w[1] for w in want]
    assert 'show_doc(' not in text(d.body)
    assert (site / 'styles.css').read_text() == (ROOT / 'nbs' / 'styles.css').read_text()
    # every link of the page's text to another page of the site (the layout table, ...) has its page
    broken = sorted({a['href'] for a in d.select('main a[href]') if not re.match(r'^[a-z][a-z0-9+.-]*:|#', a['href'])
                     and not (site / a['href'].partition('#')[0]).is_file()})
    assert not broken, f'index.html links to pages the site does not have (is each notebook in nbs/sidebar.yml?): {broken}'

def _public_defs(py: Path) -> list[tuple[str, list[str], str]]:
    "(name, argument names, first docstring line) of each public top-level def/class listed in __all__."
    import ast
    tree = ast.parse(py.read_text())
    alls = next((ast.literal_eval(n.value) for n in tree.body if isinstance(n, ast.Assign)
                 and any(getattr(t, 'id', '') == '__all__' for t in n.targets)), [])
    res = []
    for n in tree.body:
        if isinstance(n, (ast.FunctionDef, ast.ClassDef)) and n.name in alls and not n.name.startswith('_'):
            args = [a.arg for a in n.args.args] if isinstance(n, ast.FunctionDef) else []
            res.append((n.name, args, (ast.get_docstring(n) or '').strip().splitlines()[0] if ast.get_docstring(n) else ''))
    return res

def test_data_page(chromium, site, serve, tmp_path, no_missing):
    nb = ROOT / 'nbs' / '00_data.ipynb'
    assert nb.exists(), 'nbs/00_data.ipynb is part of the design; its page is what this test checks'
    d = dom(chromium, serve(site) + '00_data.html', tmp_path)
    title, desc = nb_title(nb)
    assert text(d.select_one('h1.title')) == title
    assert norm_md(text(d.select_one('#title-block-header .description'))) == norm_md(desc)
    assert d.select_one('nav#quarto-sidebar li.active a')['href'] == '00_data.html'
    body = text(d.select_one('main'))
    assert 'show_doc(' not in body, 'a show_doc call is shown instead of its rendered output'
    assert 'from nbdev.showdoc import' not in body and 'nbdev_export()' not in body, 'a hidden cell is shown'
    for pre in d.select('main .jp-InputArea pre'):
        assert not re.search(r'^\s*#\s*\|', pre.get_text(), re.M), f'a directive is shown: {pre.get_text()[:200]}'
    defs = _public_defs(ROOT / 'swaro_nb' / 'data.py')
    names = [n for n, *_ in defs]
    assert 'load_cifar' in names, names
    for name, args, doc in defs:
        h = d.find(['h2', 'h3', 'h4'], id=name.lower())   # pandoc-style ids, what nbdev's doc links point at
        assert h is not None and text(h).rstrip('¶ ').strip() == name, f'no rendered doc heading for {name}'
        block = h.find_parent(class_='jp-OutputArea-output')
        assert block is not None, f'{name}: its doc is not a rendered output'
        sig = block.find('pre')
        assert sig is not None and re.search(rf'\b(def|class)\s+{name}\b', sig.get_text()), f'{name}: no signature'
        for a in args: assert re.search(rf'\b{a}\b', sig.get_text()), f'{name}: argument {a} missing from the signature'
        squash = lambda t: re.sub(r'\s+', '', norm_md(t))      # element boundaries add spaces in get_text
        if doc: assert squash(doc) in squash(block.get_text()), f'{name}: docstring {doc!r} not rendered'
    # load_cifar's documentation as a reader sees it
    h = d.find(['h2', 'h3', 'h4'], id='load_cifar')
    # nbdev's links to symbols (`load_cifar` in prose) point at this page's headings, not at the hosted site
    ids = {t['id'] for t in d.find_all(id=True)}
    for a in d.select('main a[href]'):
        page, _, frag = a['href'].partition('#')
        assert not a['href'].startswith('https://swaro-nb.github.io'), a['href']
        if page == '00_data.html' and frag: assert frag in ids, f'link {a["href"]} has no target'
    assert 'def load_cifar(' in h.find_parent(class_='jp-OutputArea-output').find('pre').get_text().replace(' (', '(')

def test_site_links_ids_and_sources(site):
    "Every page: each id once; each link to a page of the site reaches an anchor it has; `source` links open the site's own copy of the code."
    from collections import Counter
    pages = {p.resolve(): p.read_text(encoding='utf-8') for p in site.rglob('*.html') if 'mathjax' not in p.relative_to(site).parts}
    ids = {p: set(re.findall(r'\bid="([^"]+)"', h)) for p, h in pages.items()}
    git_url = next(l.split('=', 1)[1].strip() for l in (ROOT / 'settings.ini').read_text().splitlines() if l.startswith('git_url'))
    problems, sources = [], 0
    for p, h in pages.items():
        dup = sorted(i for i, n in Counter(re.findall(r'\bid="([^"]+)"', h)).items() if n > 1)
        if dup: problems.append(f'{p.relative_to(site.resolve())}: ids used more than once: {dup}')
        for href in re.findall(r'href="([^"]+)"', h):
            if href.startswith(git_url): problems.append(f'{p.relative_to(site.resolve())}: links to {href}'); continue
            if re.match(r'^[a-z][a-z0-9+.-]*:', href): continue
            path, _, frag = href.partition('#')
            target = (p.parent / path).resolve() if path else p
            if path and not target.exists(): problems.append(f'{p.relative_to(site.resolve())}: {href}: no such file'); continue
            sources += '/src/' in target.as_posix()
            if frag and frag != 'top' and target in ids and frag not in ids[target]: problems.append(f'{p.relative_to(site.resolve())}: {href}: no such anchor')
    assert not problems, '\n'.join(problems[:30])
    assert sources > 20, 'the show_doc source links should open the site\'s copy of the code (src/)'
    code = (site / 'src' / 'data.py.html').read_text()
    assert 'id="L1"' in code and 'def load_cifar(' in code

def test_fenced_code_has_a_margin(site):
    "Fenced code in prose keeps a paragraph's distance from the next paragraph (the lab CSS sets pre's margin to 0)."
    css = (site / 'site.css').read_text()
    assert re.search(r'\.jp-MarkdownOutput \.highlight[^{]*\{[^}]*margin:\s*0 0 1em 0', css), css[-500:]

def test_report_page_opens_with_tables(site):
    "The report renders its tables and plots without the code that reads the records (kept in the notebook)."
    d = BeautifulSoup((site / 'experiments' / 'report.html').read_text(), 'html.parser')
    main = d.select_one('main')
    assert not main.select('.jp-CodeCell .jp-InputArea'), 'the report page shows code'
    assert len(main.select('table')) >= 3 and main.select('img')
    nb = json.loads((ROOT / 'nbs' / 'experiments' / 'report.ipynb').read_text())
    assert sum(c['cell_type'] == 'code' for c in nb['cells']) > 10, 'the notebook keeps its code'

@pytest.mark.parametrize('page', ['03_ntxent.html', '05_attack.html'])
def test_math_rendered(chromium, site, serve, tmp_path, no_missing, page):
    "The paper's equations are typeset by the site's own MathJax in a browser that cannot reach any other host."
    nb = json.loads((ROOT / 'nbs' / page.replace('.html', '.ipynb')).read_text())
    md = ''.join(''.join(c['source']) for c in nb['cells'] if c['cell_type'] == 'markdown')
    n_display = md.count('$$') // 2
    assert n_display >= 1, f'{page}: its notebook has no display equation; pick a page with one'
    html = (site / page).read_text()
    assert 'src="mathjax/tex-mml-chtml.js"' in html and not re.search(r'<script[^>]+src="https?:', html), 'MathJax must be the site\'s own copy'
    assert (site / 'mathjax' / 'tex-mml-chtml.js').is_file() and (site / 'mathjax' / 'LICENSE').is_file()
    d = dom(chromium, serve(site) + page, tmp_path)
    assert_math_rendered(d, page, min_eqs=n_display)
    assert len(d.select('main mjx-container[display="true"]')) >= n_display, f'{page}: display equations not typeset as such'
    # the favicon: linked, and there as .svg and .ico (browsers ask for /favicon.ico without a link)
    assert d.select_one('link[rel="icon"]')['href'] == 'favicon.svg'
    assert (site / 'favicon.svg').read_text().lstrip().startswith('<svg') and (site / 'favicon.ico').read_bytes()[:4] == b'\x00\x00\x01\x00'

def test_index_screenshot(chromium, site, serve, tmp_path):
    import numpy as np
    from matplotlib.image import imread
    png = tmp_path / 'index.png'
    browse(chromium, serve(site) + 'index.html', tmp_path, '--window-size=1280,900', '--hide-scrollbars', f'--screenshot={png}')
    data = png.read_bytes()
    assert png_size(data) == (1280, 900)
    img = imread(io.BytesIO(data))[..., :3]
    side, main = img[:, 20:200], img[:, 400:1200]          # sidebar (#f7f7f9 background) vs main column (white)
    assert abs(float(side.mean()) - float(main.mean())) > 0.005 or (side.std() > 0.01), 'no sidebar drawn'
    bg = np.median(main.reshape(-1, 3), axis=0)
    ink = (np.abs(main - bg).sum(-1) > 0.3).mean()         # dark text on the page
    assert ink > 0.003, f'index screenshot is (nearly) blank: {ink:.4f} of the main column differs from the background'
    title_band = img[20:110, 280:1000]                     # the h1 title sits at the top of the main column
    assert (np.abs(title_band - bg).sum(-1) > 0.3).mean() > 0.01, 'no title at the top of the page'

# pages of the real site with wide tables and code: the front page, the tables chapter (wide code, tables printed as
# text), the report and the benchmark (tables of many columns)
WIDE_PAGES = ['index.html', '10a_tables.html', 'experiments/report.html', 'experiments/bench.html']

@pytest.mark.parametrize('width', [1280, 800])
def test_wide_tables_scroll(chromium, site, serve, tmp_path, no_missing, width):
    """In a window `width` px wide, every table and block of code of these pages fits its column or scrolls sideways in
    its own box: none is cut off, none sticks out of the window or hides under the sidebar, and the page itself never
    scrolls sideways. (At 800 px the sidebar moves above the column.)"""
    base = serve(site, probe=True)
    bad, tables = [], {}
    for page in WIDE_PAGES:
        res = layout(chromium, base + page, tmp_path, width)
        assert res['stage'] == 'mathjax', f'{page}: measured before MathJax typeset the page'
        bad += layout_problems(res, page)
        tables[page] = [it for it in res['items'] if it['kind'] == 'table']
    report = tables['experiments/report.html']
    assert len(report) >= 3 and any(it['wide'] for it in report), \
        'the report should have tables wider than the column (what this test is about)'
    assert not bad, '\n'.join(bad[:20])

def _machine_paths() -> dict[str, re.Pattern]:
    "What a page of a site built on this machine must not show: its checkout, venv, home and temporary folders."
    import tempfile
    b = r'(?<![\w.-]){}(?![\w.-])'
    pats = {f'the checkout root {r}': re.compile(b.format(re.escape(str(r)))) for r in {ROOT, ROOT.resolve()}}
    if sys.prefix != sys.base_prefix:
        for v in {sys.prefix, str(Path(sys.prefix).resolve())}:
            pats[f'the virtual environment {v}'] = re.compile(b.format(re.escape(v)))
    pats[f'the home folder {Path.home()}'] = re.compile(b.format(re.escape(str(Path.home()))))
    tmp = tempfile.gettempdir()
    if tmp.rstrip('/') not in ('/tmp', '/var/tmp', '/dev/shm'):
        pats[f'the temporary folder {tmp}'] = re.compile(b.format(re.escape(tmp)))
    # folders made in /tmp by mkdtemp (tmpXXXXXXXX), pytest, tools/run_nbs.py (nb-<notebook>-XXXXXXXX) and tools/test.sh
    pats['a temporary folder in /tmp'] = re.compile(r'(?<![\w.-])/tmp/(?:tmp\w{8}|pytest-of-|nb-[\w.-]+-\w{8}'
                                                    r'|swaro_test\.)')
    return pats

def site_text(path: Path) -> str:
    "A file of the site as text, without embedded images (base64 may spell anything, `/tmp/` included)."
    t = path.read_text(encoding='utf-8', errors='replace')
    return re.sub(r'data:[\w/+.-]+;base64,[A-Za-z0-9+/=\s]+', 'data:', t)

def test_no_machine_paths(site):
    "No page (nor sidebar.json, nor the code pages) shows a path of the machine that built it."
    pats, found = _machine_paths(), []
    files = [f for f in site.rglob('*') if f.is_file() and f.suffix in ('.html', '.json', '.css', '.md')
             and 'mathjax' not in f.relative_to(site).parts]
    assert len(files) > 20, files
    for f in files:
        t = site_text(f)
        for what, pat in pats.items():
            for m in list(pat.finditer(t))[:2]:
                found.append(f'{f.relative_to(site)}: {what}: …{t[max(0, m.start() - 60):m.end() + 60]!r}…')
    assert not found, 'pages show paths of the machine that built them (print paths relative to the project, ~ or ' \
                      'a placeholder instead):\n' + '\n'.join(found[:30])

def sidebar_problems(nbs: Path) -> list[str]:
    """How `nbs/sidebar.yml` departs from the numbering: index.ipynb first; a Library section with every numbered
    notebook of `nbs/` exactly once, in file-name order (00_data, 00a_core, 00b_fetch, 01_augment, ...); an Experiments
    section with every notebook of `nbs/experiments/` exactly once; nothing else, and nothing that does not exist."""
    sb = yaml.safe_load((nbs / 'sidebar.yml').read_text())['website']['sidebar']
    top = (sb[0] if isinstance(sb, list) else sb)['contents']
    bad = []
    if top[:1] != ['index.ipynb']: bad.append(f'the first entry is {top[:1]}, not index.ipynb')
    secs = {e.get('section'): [x if isinstance(x, str) else x.get('href', x) for x in e.get('contents') or []]
            for e in top if isinstance(e, dict)}
    if [e.get('section') if isinstance(e, dict) else e for e in top] != ['index.ipynb', 'Library', 'Experiments']:
        bad.append(f'the entries are {[e.get("section") if isinstance(e, dict) else e for e in top]}, '
                   "not ['index.ipynb', 'Library', 'Experiments']")
    others = sorted(p.name for p in nbs.glob('*.ipynb') if p.name != 'index.ipynb' and not re.match(r'\d', p.name))
    if others: bad.append(f'notebooks in nbs/ that are neither index.ipynb nor numbered: {others}')
    lib = sorted(p.name for p in nbs.glob('[0-9]*.ipynb'))
    got = secs.get('Library', [])
    if got != lib:
        i = next(i for i, (a, b) in enumerate(zip(got + [None] * len(lib), lib + [None] * len(got))) if a != b)
        dup = sorted({x for x in got if got.count(x) > 1})
        bad.append(f'Library is not the numbered notebooks in file-name order: entry {i + 1} is '
                   f'{got[i] if i < len(got) else None}, expected {lib[i] if i < len(lib) else None} '
                   f'(missing: {sorted(set(lib) - set(got))}, '
                   f'not there: {sorted(set(got) - set(lib))}, twice: {dup}); the Library section should read:\n'
                   + '\n'.join(f'          - {x}' for x in lib))
    exp = sorted(f'experiments/{p.name}' for p in nbs.glob('experiments/*.ipynb'))
    got = secs.get('Experiments', [])
    if sorted(got) != exp or len(set(got)) != len(got):
        bad.append(f'Experiments lists {got}, expected each of {exp} once')
    return bad

def test_sidebar_follows_numbering():
    "nbs/sidebar.yml: index.ipynb, every library notebook of this checkout in file-name order, the experiments."
    bad = sidebar_problems(ROOT / 'nbs')
    assert not bad, 'nbs/sidebar.yml does not follow the numbering:\n' + '\n'.join(bad)

def test_sidebar_check_catches(tmp_path):
    "sidebar_problems accepts a sidebar in numbering order and names each way one can depart from it."
    for n in ['00_data', '00a_core', '00b_fetch', '01_x', '10_runs', '10a_tables', 'index',
              'experiments/train', 'experiments/report']:
        (tmp_path / f'{n}.ipynb').parent.mkdir(exist_ok=True); (tmp_path / f'{n}.ipynb').write_text('{}')
    def sb(lib, exp=('experiments/train.ipynb', 'experiments/report.ipynb'), first='index.ipynb'):
        y = {'website': {'sidebar': {'contents': [first, {'section': 'Library', 'contents': list(lib)},
                                                  {'section': 'Experiments', 'contents': list(exp)}]}}}
        (tmp_path / 'sidebar.yml').write_text(yaml.safe_dump(y))
        return sidebar_problems(tmp_path)
    good = ['00_data.ipynb', '00a_core.ipynb', '00b_fetch.ipynb', '01_x.ipynb', '10_runs.ipynb', '10a_tables.ipynb']
    assert sb(good) == []
    swapped = good[:1] + good[2:3] + good[1:2] + good[3:]
    assert len(sb(swapped)) == 1 and 'entry 2 is 00b_fetch.ipynb, expected 00a_core.ipynb' in sb(swapped)[0]
    assert 'missing' in sb(good[:-1])[0] and "'10a_tables.ipynb'" in sb(good[:-1])[0].split('missing:')[1]
    assert 'twice' in sb(good + ['01_x.ipynb'])[0]
    assert sb(good, exp=['experiments/train.ipynb'])[0].startswith('Experiments lists')
    assert sb(good, first='00_data.ipynb')[0].startswith('the first entry')
    (tmp_path / 'scratch.ipynb').write_text('{}')
    assert any('neither index.ipynb nor numbered' in x for x in sb(good))

# ---------------------------------------------------------------------------- a synthetic project

def _cell(kind, src, id, outputs=None):
    c = {'cell_type': kind, 'id': id, 'metadata': {}, 'source': src}
    if kind == 'code': c.update(execution_count=None, outputs=outputs or [])
    return c

def _nb(cells): return {'cells': cells, 'metadata': {'kernelspec': {'display_name': 'python3', 'language': 'python',
                                                                     'name': 'python3'}}, 'nbformat': 4, 'nbformat_minor': 5}

def _stream(t): return {'output_type': 'stream', 'name': 'stdout', 'text': t}

# a table far wider than any window (30 columns): in prose as markdown, and as the HTML table pandas prints
WIDE_MD = ('| ' + ' | '.join(f'wide_column_{i:02d}' for i in range(30)) + ' |\n|' + '---|' * 30 + '\n| '
           + ' | '.join(f'{i * 1.25:.2f}' for i in range(30)) + ' |\n')
WIDE_HTML = ('<div><table border="1" class="dataframe"><thead><tr style="text-align: right;"><th></th>'
             + ''.join(f'<th>frame_column_{i:02d}</th>' for i in range(40)) + '</tr></thead><tbody><tr><th>0</th>'
             + ''.join(f'<td>{i * 0.5:.3f}</td>' for i in range(40)) + '</tr></tbody></table></div>')

def machine_outputs(proj: Path) -> list[str]:
    "What a notebook of `proj` might print: paths in its checkout, its home and temporary folders, and /tmp/somewhere."
    import tempfile
    return [str(proj / 'nbs' / 'data.csv'), str(Path.home() / '.cache' / 'x.bin'),
            str(Path(tempfile.gettempdir()) / 'tmpab12cd_3' / 'ckpt.pt'), '/tmp/somewhere']

@pytest.fixture(scope='module')
def synth(tmp_path_factory):
    "A tiny nbdev project: index + 00_thing (+ its executed copy) + a sidebar entry that does not exist."
    import matplotlib; matplotlib.use('Agg')
    import matplotlib.pyplot as plt
    p = tmp_path_factory.mktemp('proj')
    (p / 'nbs').mkdir()
    shutil.copy(ROOT / 'settings.ini', p / 'settings.ini')
    shutil.copy(ROOT / 'nbs' / 'styles.css', p / 'nbs' / 'styles.css')
    (p / 'nbs' / 'sidebar.yml').write_text(
        'website:\n  sidebar:\n    contents:\n      - index.ipynb\n      - section: Parts\n        contents:\n'
        '          - 00_thing.ipynb\n          - 01_missing.ipynb\n')
    fig, ax = plt.subplots(figsize=(2, 1), dpi=50); ax.plot([0, 1], [1, 0]); buf = io.BytesIO()
    fig.savefig(buf, format='png'); plt.close(fig)
    png = base64.b64encode(buf.getvalue()).decode()
    thing = [
        _cell('markdown', '# Thing of synth\n> A summary line for synth', 'a0'),
        _cell('code', '#| default_exp thing', 'a1'),
        _cell('code', '#| hide\nHIDDEN_MARKER_7f3 = 1', 'a2'),
        _cell('markdown', 'Prose with math $\\alpha_{7}^{2}$ and a [link](index.ipynb#top).', 'a3'),
        _cell('code', '#| export\ndef scale7(x:float, # the value to scale\n           k:int=3 # the factor\n          )->float: # x times k\n'
                      '    "Multiply `x` by `k` exactly."\n    return x*k', 'a4'),
        _cell('code', 'print(scale7(2))', 'a5'),
        _cell('code', '#| echo: false\nprint("ECHO" + "LESS_CODE")', 'a6'),
        _cell('code', '#| fig-cap: a caption\nplot_it()  # a plot', 'a7'),
        _cell('code', 'print("source changed since it ran")', 'a8'),
        _cell('markdown', 'A display equation:\n\n$$\\sum_{i=1}^{3} i^2 = \\frac{28}{2}$$', 'a9'),
        _cell('markdown', f'A wide table in prose:\n\n{WIDE_MD}', 'a10'),
        _cell('code', 'wide_frame()', 'a11'),
        _cell('code', 'print_paths()', 'a12'),
        _cell('code', f'#| export\ndef where7(path:str={str(Path.home() / ".cache" / "synth7")!r}): # where it goes\n'
                      '    "Where synth keeps things."\n    return path', 'a13'),
    ]
    (p / 'nbs' / '00_thing.ipynb').write_text(json.dumps(_nb(thing)))
    # the executed copy as tools/run_nbs.py --save writes it: nbdev directives gone, title cell turned into frontmatter
    ex = json.loads(json.dumps(thing))
    for c in ex: c['source'] = re.sub(r'^#\| (hide|export|default_exp)\b.*\n?', '', c['source'], flags=re.M)
    ex[5]['outputs'] = [_stream('6\n')]
    ex[6]['outputs'] = [_stream('ECHOLESS_CODE\n')]
    ex[7]['outputs'] = [{'output_type': 'display_data', 'metadata': {},
                         'data': {'image/png': png, 'text/plain': '<Figure size 100x50 with 1 Axes>'}}]
    ex[8]['source'] = 'print("old source")'; ex[8]['outputs'] = [_stream('STALE_OUTPUT\n')]
    ex[11]['outputs'] = [{'output_type': 'execute_result', 'execution_count': 3, 'metadata': {},
                          'data': {'text/html': WIDE_HTML, 'text/plain': '<a wide frame>'}}]
    ex[12]['outputs'] = [_stream(''.join(f'{x}\n' for x in machine_outputs(p)))]
    ex[0] = {'cell_type': 'raw', 'id': 'f0', 'metadata': {},
             'source': '---\ndescription: A summary line for synth\noutput-file: thing.html\ntitle: Thing of synth\n---\n'}
    (p / 'exec').mkdir()
    (p / 'exec' / '00_thing.ipynb').write_text(json.dumps(_nb(ex)))
    index = [_cell('markdown', '# synth home\n> The synthetic index', 'b0'),
             _cell('code', '#| hide\nHIDDEN_INDEX = 2', 'b1'),
             _cell('markdown', '## Use\n\nSome *prose*.', 'b2'),
             _cell('code', 'print(1 + 1)', 'b3', [_stream('2\n')])]
    (p / 'nbs' / 'index.ipynb').write_text(json.dumps(_nb(index)))
    r = build('--root', str(p), '--exec-dir', str(p / 'exec'), '--out', str(p / '_docs'))
    build('--root', str(p), '--readme', '--readme-out', str(p / 'README.md'))
    return p, r.stdout, png

def test_synthetic_page(chromium, synth, serve, tmp_path, no_missing):
    p, log, png = synth
    assert '01_missing.ipynb' in log and 'does not exist' in log, 'a missing sidebar notebook must be reported'
    assert sorted(x.name for x in (p / '_docs').glob('*.html')) == ['00_thing.html', 'index.html']
    d = dom(chromium, serve(p / '_docs') + '00_thing.html', tmp_path)
    main = d.select_one('main')
    body = text(main)
    assert text(d.select_one('h1.title')) == 'Thing of synth'
    assert text(d.select_one('#title-block-header .description')) == 'A summary line for synth'
    assert [a['href'] for a in d.select('nav#quarto-sidebar ul.sidebar-menu a')] == ['index.html', '00_thing.html']
    assert 'HIDDEN_MARKER_7f3' not in body and 'default_exp' not in body
    # the exported function: its source is gone, its show_doc output is there
    h = d.find('h3', id='scale7')
    assert h is not None
    block = h.find_parent(class_='jp-OutputArea-output')
    sig = block.find('pre').get_text()
    assert re.search(r'def scale7\(\s*x:float, # the value to scale\s*k:int=3, # the factor\s*\)->float: # x times k', sig), sig
    assert 'Multiply x by k exactly.' in text(block)
    assert 'return x*k' not in body and 'show_doc(' not in body and '#|' not in body
    # outputs come from the executed copy; `echo: false` shows the output without the code; stale outputs are dropped
    cells = main.select('.jp-CodeCell')
    c5 = next(c for c in cells if 'print(scale7(2))' in c.get_text())
    assert text(c5.select_one('.jp-OutputArea')) == '6'
    assert 'ECHOLESS_CODE' in body and 'print("ECHO"' not in body
    assert 'source changed since it ran' in body and 'STALE_OUTPUT' not in body
    imgs = main.select('img')
    assert len(imgs) == 1 and imgs[0]['src'] == 'data:image/png;base64,' + png
    assert png_size(base64.b64decode(png)) == (100, 50)
    # math stays TeX in the HTML and the site's own MathJax typesets it offline; links to notebooks point at pages
    html = (p / '_docs' / '00_thing.html').read_text()
    assert '$\\alpha_{7}^{2}$' in html and '$$\\sum_{i=1}^{3} i^2' in html
    assert 'window.MathJax' in html and 'src="mathjax/tex-mml-chtml.js"' in html and 'cdn.' not in html
    assert_math_rendered(d, '00_thing.html', min_eqs=2)
    assert len(main.select('mjx-container[display="true"]')) == 1
    assert 'alpha_{7}' not in visible(main) and '$' not in visible(main)
    assert main.find('a', string='link')['href'] == 'index.html#top'

def test_synthetic_machine_paths(synth):
    "Paths of the machine are shown relative to the project, under ~ or as {tmp}; show_doc's signatures too."
    import tempfile
    p, log, _ = synth
    html = (p / '_docs' / '00_thing.html').read_text()
    main = BeautifulSoup(html, 'html.parser').select_one('main')
    out = next(c for c in main.select('.jp-CodeCell') if 'print_paths()' in c.get_text()).select_one('.jp-OutputArea')
    assert text(out).split() == ['nbs/data.csv', '~/.cache/x.bin', '{tmp}/ckpt.pt', '/tmp/somewhere']
    sig = main.find('h3', id='where7').find_parent(class_='jp-OutputArea-output').find('pre').get_text()
    assert "path:str='~/.cache/synth7'" in sig, sig
    for bad in {str(p), str(Path.home()) + '/', tempfile.gettempdir() + '/'} - {'/tmp/'}:
        assert bad not in site_text(p / '_docs' / '00_thing.html'), bad
    note = "00_thing.ipynb: machine path in an output, shown rewritten: the cell 'print_paths()': 3 path(s)"
    assert note in log, log[-2000:]

@pytest.mark.parametrize('width', [1280, 800])
def test_synthetic_wide_tables(chromium, synth, serve, tmp_path, no_missing, width):
    "The 30-column markdown table and the 40-column HTML table are wider than the column and scroll in their own boxes."
    p, _, _ = synth
    res = layout(chromium, serve(p / '_docs', probe=True) + '00_thing.html', tmp_path, width)
    assert not layout_problems(res, '00_thing.html'), '\n'.join(layout_problems(res, '00_thing.html'))
    wide = {re.match(r'[a-z]+_column_00|', it['text']).group(0): it
            for it in res['items'] if it['kind'] == 'table' and it['wide']}
    assert set(wide) == {'wide_column_00', 'frame_column_00'}, res['items']
    for it in wide.values():
        assert it['scroll_x'] in ('auto', 'scroll') and it['box'].startswith('DIV.table-scroll')
        assert it['width'] > 2 * it['box_width'], it
        assert it['right'] <= res['client_width'] and it['left'] >= res['side_right']
    html = (p / '_docs' / '00_thing.html').read_text()
    assert html.count('<div class="table-scroll"><table') == html.count('<table') == 2

def test_synthetic_readme(synth):
    p, _, _ = synth
    assert (p / 'README.md').read_text() == (
        '# synth home\n\n<!-- WARNING: THIS FILE WAS AUTOGENERATED! DO NOT EDIT! -->\n\n> The synthetic index\n\n'
        '## Use\n\nSome *prose*.\n\n```python\nprint(1 + 1)\n```\n\n```\n2\n```\n')
