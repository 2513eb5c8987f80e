"""The README's shell commands run as printed (the main job only with SWARO_TEST_MAIN=1: it takes minutes); every other
command the README and the docs name is checked against the scripts it calls (options, presets, notebook parameters,
output folders) without doing its work."""
import json, os, re, shlex, subprocess, sys, types
from pathlib import Path
import pytest
from conftest import ROOT, cifar100_missing

README = (ROOT / 'README.md').read_text()
FENCE = re.compile(r'```(?:bash|sh|shell|console)\n(.*?)```', re.S)
SELF = 'bash tools/test.sh'   # the test command itself (.ci/run runs it): the one README command no test can run inside it

def shell_lines(block: str) -> list:
    "The commands of a shell block, one per line (backslash continuations joined), comments kept."
    out, cur = [], []
    for line in block.splitlines():
        if line.rstrip().endswith('\\'): cur.append(line.rstrip()[:-1].strip()); continue
        cmd = ' '.join(x for x in cur + [line.strip()] if x); cur = []
        if cmd and not cmd.startswith('#'): out.append(cmd)
    return out

def markdown_sources() -> list:
    "(where, markdown) for the README and every markdown cell of the docs' notebooks."
    out = [('README.md', README)]
    for nb in sorted((ROOT / 'nbs').rglob('*.ipynb')):
        if '.ipynb_checkpoints' in nb.parts: continue
        for c in json.loads(nb.read_text())['cells']:
            if c['cell_type'] == 'markdown': out.append((str(nb.relative_to(ROOT)), ''.join(c['source'])))
    return out

# ---------------------------------------------------------------- the README's blocks, as printed

@pytest.fixture(scope='module')
def clone_view(tmp_path_factory):
    "A folder that looks like the clone (a link to each of its entries) but has its own runs/: the commands write there."
    v = tmp_path_factory.mktemp('clone')
    for p in ROOT.iterdir():
        if p.name not in ('runs', '_docs', '_proc', '_proc_exec'): (v / p.name).symlink_to(p)
    return v

def _arrow_paths(block: str) -> list:
    "Paths a block's comments promise (`... -> runs/x/`)."
    return re.findall(r'->\s*(runs/[\w./-]*)', block)

NO_PER_IMAGE = 'unresolved (no per-image record)'

def _verdict(a: list, b: list, val, col: str, head: str = 'le') -> tuple:
    "A column's difference and verdict recomputed from the records: without its bits in every record, the difference of the seed means and no verdict; with them, the paired bootstrap on the bits (decoded here)."
    if not all(col in ((r.get('per_image') or {}).get('correct') or {}).get(head, {}) for r in a + b):
        xa, xb = [val(r) for r in a], [val(r) for r in b]
        return sum(xa) / len(xa) - sum(xb) / len(xb), NO_PER_IMAGE
    from five_seed import expected
    e = expected(a, b, col, head)
    return e['diff'], e['verdict']

def test_readme_is_a_front_door():
    "The README stays a front door (at most 10 KB): what SwARo is with its equation, the two commands, the results, pretrained models, the layout; the headline numbers are the records' means."
    assert len(README.encode()) <= 10_000, len(README.encode())
    for part in ('\\beta_i', '## Two commands', '## Results', '## Pretrained models', '## Layout', 'verdicts-forest.png'):
        assert part in README, part
    from swaro_nb.tables import verdict_set, by_variant
    recs, _ = verdict_set(ROOT / 'results')
    for v, rs in by_variant(recs).items():
        if v not in ('SwARo', 'RoCL', 'SwARo (random targets)'): continue
        m = lambda k: sum(r['metrics'][k] for r in rs) / len(rs)
        assert (f"- **{v}** ({len(rs)} seed{'s' * (len(rs) > 1)}, 200 epochs, LE): clean {m('clean'):.2f}%, ℓ∞ 8/255 {m('linf_8'):.2f}%, "
                f"ℓ2 0.5 {m('l2_05'):.2f}% (worst cases)") in README, v

def _table(lines: list, head: str) -> dict:
    "The Markdown table whose heading line starts with `head`: first cell -> {heading: cell}."
    at = next(i for i, l in enumerate(lines) if l.startswith(head))
    cells = lambda l: [c.strip() for c in l.strip().strip('|').split(' | ')]
    keys, out = cells(lines[at]), {}
    for l in lines[at + 2:]:
        if not l.startswith('|'): break
        row = dict(zip(keys, cells(l))); out[row[keys[0]]] = row
    return out

PAIRS = {'SwARo − RoCL': ('swaro', 'rocl'), 'random targets − SwARo': ('rand', 'swaro')}

def _check_verdicts(md: str, recs: list, five: bool, png: Path):
    "The verdict section of an executed index (or the README): each comparison's cells recomputed from `recs`, the figure's link and data."
    lines = md.splitlines()
    assert ("**The comparison awaits the five-seed records**" in md) == (not five)
    table = _table(lines, '| column | SwARo | RoCL |')
    def group(v):   # the five-seed runs by name; the older records by method and config, as their names say
        if five: return [r for r in recs if r['run'].startswith(f'c10-200-{v}-')]
        want = {'swaro': ('swaro', 'clusters'), 'rocl': ('rocl', None), 'rand': ('swaro', 'random')}[v]
        return [r for r in recs if r['method'] == want[0] and (want[1] is None or r['config'].get('swaro_targets', 'clusters') == want[1])
                and r['config'].get('p', 0.75) == 0.75]
    n = 0
    for name, (va, vb) in PAIRS.items():
        a, b = group(va), group(vb)
        if not (a and b): continue
        for col, row in table.items():
            head, k = ('rle', col[4:]) if col.startswith('rle:') else ('le', col)
            d, v = _verdict(a, b, lambda r: (r['metrics']['rle'] if head == 'rle' else r['metrics'])[k], k, head)
            if v == NO_PER_IMAGE: assert row[name] == f"{d:+.2f}", (name, col, row)
            else:
                from five_seed import expected
                e = expected(a, b, k, head)
                assert row[name] == f"{d:+.2f} [{e['ci_low']:+.2f}, {e['ci_high']:+.2f}]", (name, col, row)
            assert row[f'{name}: verdict'] == v, (name, col, row)
            n += v != NO_PER_IMAGE and not v.startswith('unresolved')
    tested = re.search(r'(\d+) columns tested at 95% each, no multiplicity correction', md)   # over every verdict column, shown or not
    assert (tested and int(tested.group(1)) >= n) if n else ("No column tested: every verdict is unresolved" in md)
    link = re.search(r'!\[SwARo − RoCL and random targets − SwARo per column, with 95% intervals\]\(([^)]+)\)', md).group(1)
    assert png.is_file() and link in ('nbs/images/verdicts-forest.png', png.as_posix()), link   # the README's figure, or $SWARO_RESULTS's own
    data, i, text = png.read_bytes(), 8, {}
    assert data[:8] == b'\x89PNG\r\n\x1a\n'
    while i < len(data):   # the PNG's chunks: length, type, data, CRC
        size, kind = int.from_bytes(data[i:i + 4], 'big'), data[i + 4:i + 8]
        if kind == b'tEXt': k, _, v = data[i + 8:i + 8 + size].partition(b'\0'); text[k.decode()] = v.decode('latin-1')
        i += 12 + size
    desc = json.loads(text['Description'])
    for name, rows in desc.items():   # the figure shows the numbers of the table (the README's table: the columns of Tables 1 and 2)
        for r in (r for r in rows if r['column'] in table):
            shown = float(table[r['column']][name].split()[0])   # the figure keeps 4 decimals: a diff of x.xx5 may round either way
            assert abs(shown - r['diff']) <= 0.005 + 1e-9 and table[r['column']][f'{name}: verdict'] == r['verdict'], (name, r, shown)
        assert any(r['column'] in table for r in rows)

def test_readme_verdicts_are_the_records():
    "The README's verdict section: the five-seed set once results/eval/five-seed holds records, else the older 200-epoch records with no verdict; every cell recomputed from them, and the forest plot in the README with the same numbers."
    ev = ROOT / 'results' / 'eval'
    five = [json.loads(f.read_text()) for f in sorted((ev / 'five-seed').glob('*-eval.json'))] if (ev / 'five-seed').is_dir() else []
    # the set stands in once it holds both sides of a comparison: SwARo, and RoCL or random targets (by the runs' names)
    seeds = {v: sum(r['run'].startswith(f'c10-200-{v}-s') for r in five) for v in ('swaro', 'rocl', 'rand')}
    used = bool(seeds['swaro'] and (seeds['rocl'] or seeds['rand']))
    recs = five if used else [r for r in (json.loads(f.read_text()) for f in sorted(ev.glob('*-eval.json')))
                              if r.get('kind') == 'eval' and r.get('dataset') == 'cifar10' and r.get('epochs') == 200
                              and '-c10-200-s' in r['run']]
    _check_verdicts(README, recs, used, ROOT / 'nbs' / 'images' / 'verdicts-forest.png')
    said = re.findall(r'By the reference, SwARo − RoCL: ([+-]\d+\.\d\d) \[([+-]\d+\.\d\d), ([+-]\d+\.\d\d)\], ([a-z]+(?: [a-z]+)*)', README)
    if used:   # the caution's verdict by the reference AutoAttack: its extras' bits put beside each run's (merged here)
        extras = [json.loads(f.read_text()) for f in sorted((ev / 'five-seed').glob('*-ref-extras-*.json'))]
        def extra_bits(r):   # column -> LE bits of the reference columns the run's extras add (the same test images)
            return {k: x['per_image']['correct']['le'][k] for x in extras if x['run'] == r['run']
                    and x['per_image']['test_index'] == r['per_image']['test_index'] for k in x['metrics'] if k.startswith('ref_aa_')}
        group = lambda v: [r for r in recs if r['run'].startswith(f'c10-200-{v}-')]
        # a caution for each column whose worst case leaves more than 0.5 points over the reference on some model and head
        # (an extras record checks the LE head), and none for the others: the README's reference verdicts sit in them
        checks = lambda x: {'le': x['ref_check']} if x.get('kind') == 'ref-extras' else x.get('ref_check') or {}
        gaps = [(c, v['gap']) for x in [*recs, *extras] for cs in checks(x).values() for c, v in cs.items()]
        flagged = {c for c, g in gaps if g > 0.5}
        caution = {c: re.search(rf'\*\*Caution \({c}\)\.\*\*[^\n]*', README) for c in {c for c, _ in gaps}}
        assert {c for c, m in caution.items() if m} == flagged, (flagged, [c for c, m in caution.items() if m])
        for col in sorted({k for x in extras for k in x['metrics'] if k.startswith('ref_aa_')}):
            base = col.removeprefix('ref_aa_')   # the column the reference checks
            if base not in flagged: continue   # no caution: its verdict is a row of the forest plot only
            # a seed without this column is left out: the verdict rests on the seeds that have it
            merged = lambda v: [{**r, 'per_image': {**r['per_image'], 'correct': {'le': {col: extra_bits(r)[col]}}}}
                                for r in group(v) if col in extra_bits(r)]
            a, b = merged('swaro'), merged('rocl')
            if len(a) < 3 or len(b) < 3: continue   # shown only as a verdict
            from five_seed import expected
            e = expected(a, b, col)
            assert (f"{e['diff']:+.2f}", f"{e['ci_low']:+.2f}", f"{e['ci_high']:+.2f}", e['verdict']) in said, (col, e, said)
            assert f"By the reference, SwARo − RoCL: {e['diff']:+.2f}" in caution[base].group(0), col
        # the count of columns tested, over every verdict column shown or not: a (comparison, head, column) is tested when
        # each side has at least 3 seeds with the column, all with their per-image bits (the extras' merged in)
        from swaro_nb.tables import METRIC_KEYS, TABLE3_KEYS
        def cols(r, head):   # column -> whether its bits are there, for one record (the extras' columns on the LE head)
            m = r['metrics'] if head == 'le' else r['metrics'].get('rle') or {}
            bits = ((r.get('per_image') or {}).get('correct') or {}).get(head, {})
            out = {k: k in bits for k, v in m.items() if isinstance(v, (int, float))}
            if head == 'le': out.update({k: True for k in extra_bits(r) if k not in m})
            return {k: v for k, v in out.items()
                    if not k.endswith('_hit') and (k in (*METRIC_KEYS, *TABLE3_KEYS) or k.startswith(('aa', 'ref_aa')))}
        tested = 0
        for va, vb in PAIRS.values():
            for head in ('le', 'rle'):
                ca, cb = ([cols(r, head) for r in group(v)] for v in (va, vb))
                for k in {k for c in ca for k in c} & {k for c in cb for k in c}:
                    ha, hb = [c[k] for c in ca if k in c], [c[k] for c in cb if k in c]
                    tested += len(ha) >= 3 and len(hb) >= 3 and all(ha + hb)
        assert f"{tested} columns tested at 95% each" in README, tested
    else: assert not said
    if five and not used:   # how far the set is, said beside the older records
        name = {'swaro': 'SwARo', 'rocl': 'RoCL', 'rand': 'SwARo (random targets)'}
        said = README.split('; so far ', 1)[1].split(')', 1)[0] + ')'
        for v, k in seeds.items():
            if k: assert f"{name[v]} {k} seed{'s' * (k > 1)}" in said, (v, said)
    if not five: assert "they keep no per-image correctness, so every verdict is **unresolved (no per-image record)**" in README

def test_readme_table7_is_the_records():
    "The README's Table 7 rows, recomputed from the raw records: each snapshot's columns with the paper's Table 7 row at its epoch, then the five-seed SwARo runs' mean and range."
    snaps = sorted((json.loads(p.read_text()) for p in (ROOT / 'results' / 'eval' / 'snapshot').glob('*-eval.json')),
                   key=lambda r: r['epochs'])
    if not snaps:
        assert 'No snapshot of the paper\'s schedule has an evaluation record yet.' in README; return
    from swaro_nb.tables import PAPER   # the paper's numbers (checked against the paper's text in 10a_tables)
    sec = README.split("### Table 7: the snapshot test", 1)[1].split('\n## ', 1)[0]
    rows = {l.split(' | ')[0].lstrip('| '): [c.strip() for c in l.strip(' |').split(' | ')[1:]]
            for l in sec.splitlines() if l.startswith('| ') and not l.startswith('| row')}
    cols = ['clean', 'linf_8', 'pgd_linf_8', 'rocl_linf_8']
    for r in snaps:
        paper = PAPER['epochs_ablation'][r['epochs']]
        label = f"SwARo (epoch {r['epochs']} of {r['config']['epochs']}), seed {r['config']['seed']}"
        want = [f"{r['metrics'][c]:.2f} ({paper['clean' if c == 'clean' else 'linf_8']:.2f})" for c in cols]
        assert rows.get(label) == want, (label, rows.get(label), want)
    five = [json.loads(p.read_text()) for p in (ROOT / 'results' / 'eval' / 'five-seed').glob('c10-200-swaro-s*-eval.json')]
    cell = lambda v: f"{sum(v) / len(v):.2f} ({min(v):.2f}–{max(v):.2f})"
    want = [cell([r['metrics'][c] for r in five]) for c in cols]
    assert rows.get(f'SwARo, complete 200-epoch runs ({len(five)} seeds)') == want, (rows, want)
    near = [abs(r['metrics'][c] - PAPER['epochs_ablation'][200]['linf_8'])   # the answer: nearer the paper or the runs
            < abs(r['metrics'][c] - sum(f['metrics'][c] for f in five) / len(five)) for r in snaps if r['epochs'] == 200
            for c in cols[1:]]
    assert f"nearer the paper (27.73) in {sum(near)} of {len(near)} columns, nearer the complete 200-epoch runs in " \
           f"{len(near) - sum(near)}: " in sec, sec
    link = re.search(r'!\[[^\]]*\]\((nbs/images/learning-progress\.png)\)', sec)
    assert link and (ROOT / link.group(1)).read_bytes()[:8] == b'\x89PNG\r\n\x1a\n'

def test_readme_five_seed(tmp_path):
    "The README's notebook with synthetic five-seed records in results/eval/five-seed ($SWARO_RESULTS): the verdict section switches to them, with intervals."
    from five_seed import five_seed_records, results_view
    template = json.loads((ROOT / 'results' / 'eval' / 'swaro-c10-200-s0-eval.json').read_text())
    recs = five_seed_records(template)
    view = results_view(tmp_path / 'results', ROOT / 'results', recs)
    env = dict(os.environ, SWARO_RESULTS=str(view))
    committed = ROOT / 'nbs' / 'images' / 'verdicts-forest.png'
    before = committed.read_bytes() if committed.exists() else None
    r = subprocess.run([sys.executable, str(ROOT / 'tools' / 'run_nbs.py'), str(ROOT / 'nbs' / 'index.ipynb'), '--save', str(tmp_path / 'exec')],
                       cwd=ROOT, env=env, capture_output=True, text=True, timeout=600)
    assert r.returncode == 0, r.stdout[-3000:] + r.stderr[-3000:]
    nb = json.loads((tmp_path / 'exec' / 'index.ipynb').read_text())
    md = '\n'.join(''.join(o.get('data', {}).get('text/markdown', '')) for c in nb['cells'] for o in c.get('outputs', []))
    assert "From the five-seed set in `results/eval/five-seed/` (5 seeds a variant, one commit, the same test images)" in md   # equal counts said once
    _check_verdicts(md, recs, True, view / 'figures' / 'verdicts-forest.png')
    assert (committed.read_bytes() if committed.exists() else None) == before   # the figure went to $SWARO_RESULTS, not the README's

def test_readme_blocks_are_these():
    "The README has the two blocks this module runs: the two commands, and the experiments at smoke size."
    blocks = FENCE.findall(README)
    assert len(blocks) == 2, blocks
    assert [l.split('#')[0].strip() for l in shell_lines(blocks[0])] == ['bash tools/main.sh', SELF]
    assert (ROOT / '.ci' / 'run').read_text().strip().endswith('exec ' + SELF)

def _run_block(block: str, view: Path):
    "Run a README block in one shell, line by line as printed (but the test command), in the view of the clone."
    stamp = ROOT / '.venv' / '.swaro_installed'
    stale = [f for f in ('setup.py', 'settings.ini') if not stamp.exists() or (ROOT / f).stat().st_mtime > stamp.stat().st_mtime]
    if stale:   # tools/main.sh's set-up would then reinstall the package from this test's temporary view of the clone
        pytest.fail(f"{', '.join(stale)} changed since the last set-up: run bash tools/setup.sh first")
    script = '\n'.join(['set -e'] + [l for l in shell_lines(block) if not l.startswith(SELF)])
    r = subprocess.run(['bash', '-c', script], cwd=view, capture_output=True, text=True, timeout=1800)
    assert r.returncode == 0, f"{script}\n--- stdout\n{r.stdout[-3000:]}\n--- stderr\n{r.stderr[-3000:]}"
    for p in _arrow_paths(block): assert (view / p).exists(), p

@pytest.mark.skipif(os.environ.get('SWARO_TEST_MAIN') != '1', reason='the main job as printed takes about 3 minutes on 2 cores, '
                    'more than the test command can spend on it: SWARO_TEST_MAIN=1 runs it (bash tools/test.sh passes it on)')
def test_readme_main_job_as_printed(clone_view):
    "The first block (`bash tools/main.sh`), as printed, and every file the README says the main job writes."
    _run_block(FENCE.findall(README)[0], clone_view)
    rows = re.findall(r'^\| `(runs/[^`]*)` \| (.*) \|$', README, re.M)
    assert rows
    for folder, files in rows:
        for f in re.findall(r'`([^`]+\.\w+)`', files):
            if f.startswith('cifar100') and cifar100_missing(): continue
            assert (clone_view / folder / f).is_file(), folder + f

def test_readme_experiments_as_printed(clone_view):
    "The experiments block, as printed: a run, its evaluation and the same run as a papermill notebook, each where it says."
    _run_block(FENCE.findall(README)[1], clone_view)
    assert (clone_view / 'runs' / 'rocl-smoke-eval' / 'rocl-smoke-eval.json').is_file()
    assert (clone_view / 'runs' / 'nb' / 'train.ipynb').is_file() and (clone_view / 'runs' / 'nb' / 'run.json').is_file()

# ---------------------------------------------------------------- every other command named, checked without its work

PREFIXES = ('swaro_train', 'swaro_eval', 'swaro_bench', 'swaro_data', 'python -m swaro_nb.cli', 'torchrun', 'papermill',
            '.venv/bin/papermill', 'bash tools/', 'make ', '.venv/bin/nbdev_clean', 'source ', 'mkdir ')

def named_commands() -> list:
    "(where, command) for every command line of a shell block and every inline code span that starts like a command."
    seen, out = set(), []
    for where, md in markdown_sources():
        cmds = [l for b in FENCE.findall(md) for l in shell_lines(b)]
        prose = FENCE.sub('', md)
        cmds += [s for s in re.findall(r'`([^`\n]+)`', prose) if s.startswith(PREFIXES) and ' ' in s]
        for c in cmds:
            if (where, c) not in seen: seen.add((where, c)); out.append((where, c))
    return out

NAMED = named_commands()

def _parameters(nb: Path) -> set:
    "Names a papermill notebook's `parameters` cell assigns."
    cell = next(c for c in json.loads(nb.read_text())['cells'] if 'parameters' in c.get('metadata', {}).get('tags', []))
    return set(re.findall(r'^(\w+)\s*=', ''.join(cell['source']), re.M))

def _check_papermill(where, argv, made: set):
    nb, out, rest = Path(argv[1]), Path(argv[2]), argv[3:]
    assert (ROOT / nb).is_file(), nb
    names, i = set(), 0
    while i < len(rest):
        if rest[i] in ('-p', '-r'): names.add(rest[i + 1]); i += 3
        elif rest[i] == '-y': names |= set(re.findall(r'(\w+):', rest[i + 1])); i += 2
        elif rest[i] in ('--cwd', '-k', '--kernel'): assert rest[i] != '--cwd' or (ROOT / rest[i + 1]).is_dir(); i += 2
        else: raise AssertionError(f'papermill option not checked here: {rest[i]}')
    assert names <= _parameters(ROOT / nb), names - _parameters(ROOT / nb)
    if out.parent in made: return   # the same line creates it first (mkdir -p)
    parent = out.parent if out.is_absolute() else ROOT / out.parent
    assert parent.is_dir() and out.parent.parts[:1] != ('runs',), f"{out.parent}/ does not exist in a fresh clone: papermill cannot write {out}"

def _dry_run(argv, monkeypatch, tmp_path):
    "Call the console script's entry point with `argv` in an empty folder; its work (train, evaluate, benchmark, fetch) stubbed."
    import swaro_nb.cli as cli, swaro_nb.train, swaro_nb.bench, swaro_nb.data, swaro_nb.fetch
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(swaro_nb.train, 'train', lambda cfg, resume=True, device=None: types.SimpleNamespace(rank=0, dir=Path(cfg.out_dir) / cfg.name, epoch=0))
    monkeypatch.setattr(swaro_nb.bench, 'benchmark', lambda *a, **k: [])
    monkeypatch.setattr(swaro_nb.fetch, 'fetch', lambda *a, **k: tmp_path); monkeypatch.setattr(swaro_nb.data, 'summary', lambda *a, **k: {})
    import swaro_nb.eval_runs
    monkeypatch.setattr(swaro_nb.eval_runs, 'evaluate_runs', lambda *a, **k: None)   # swaro_eval imports it from there when it runs
    import swaro_nb.hub, swaro_nb.evaluate
    done = dict(run='stub', path='stub', seconds=dict(total=0.0), flags=[])   # --pretrained / --classifier: their work stubbed too
    monkeypatch.setattr(swaro_nb.hub, 'evaluate_pretrained', lambda *a, **k: done)
    monkeypatch.setattr(swaro_nb.evaluate, 'evaluate_classifiers', lambda *a, **k: done)
    monkeypatch.setattr(cli, 'load_classifier', lambda spec: None)
    entry = {'swaro_train': cli.train_cli, 'swaro_eval': cli.eval_cli, 'swaro_bench': cli.bench_cli, 'swaro_data': cli.data_cli,
             'train': cli.train_cli, 'eval': cli.eval_cli, 'bench': cli.bench_cli, 'data': cli.data_cli}
    if argv[0] in ('python', 'torchrun'):   # python -m swaro_nb.cli CMD ... / torchrun [options] -m swaro_nb.cli CMD ...
        i = argv.index('-m'); assert argv[i + 1] == 'swaro_nb.cli'; argv = argv[i + 2:]
    argv = [a for a in argv if a != '...']   # prose's 'and further options'
    if len(argv) == 1: assert argv[0] in entry, argv; return   # `... -m swaro_nb.cli eval ...`: the subcommand exists
    try: entry[argv[0]](argv[1:]); code = 0
    except SystemExit as e: code = e.code
    assert code in (0, None), f"{' '.join(argv)}: exit status {code}"

def _check(where, argv, made, monkeypatch, tmp_path):
    if argv[0] == 'source': assert (ROOT / argv[1]).is_file(), argv; return
    if argv[0] == 'mkdir': made.update(Path(a) for a in argv[1:] if not a.startswith('-')); return
    if argv[0] == 'make': assert re.search(rf'^{argv[1]}:', (ROOT / 'Makefile').read_text(), re.M), argv; return
    if argv[:2] == ['bash', 'tools/test.sh']: assert len(argv) == 2; return
    if argv[:2] == ['bash', 'tools/main.sh']:
        from swaro_nb.config import PRESETS
        assert len(argv) == 2 or (len(argv) == 3 and argv[2] in PRESETS), argv; return
    if argv[0] in ('papermill', '.venv/bin/papermill'): return _check_papermill(where, argv, made)
    if argv[0] == '.venv/bin/nbdev_clean': assert (ROOT / argv[argv.index('--fname') + 1]).is_file(), argv; return
    assert argv[0].startswith('swaro_') or argv[0] in ('python', 'torchrun'), f'a command kind this test does not check: {argv}'
    _dry_run(argv, monkeypatch, tmp_path)

@pytest.mark.parametrize('where,cmd', NAMED, ids=[f'{w}:{c[:60]}' for w, c in NAMED])
def test_named_command(where, cmd, monkeypatch, tmp_path, capsys):
    "Options, presets, notebook parameters and output folders of a command as printed; its work stubbed out."
    made = set()
    for part in cmd.split(' && '): _check(where, shlex.split(part, comments=True), made, monkeypatch, tmp_path)
