#!/usr/bin/env python
"""Land a five-seed lease's pack in results/ (issue #34 item 4), and stage the float16 weights and heads a later lease needs.

  python tools/gpu/land_five_seed.py land PACK --logs 2026-11-28-a-h200x4 [--weights DIR] [--plan PLAN] [--commit SHA | --pins F]
  python tools/gpu/land_five_seed.py stage c10-200-swaro-s0 c10-200-rocl-s0 --to .gpu/five-seed-w1
  python tools/gpu/land_five_seed.py stage --from-hub c10-200-swaro-s0 c10-200-rocl-s0 --to .gpu/five-seed-e1

land: PACK is the pack.tar that poll.sh brought back, or the folder it was unpacked into (a tar is unpacked beside it, into
PACK.d/). It copies, printing each step:
  records/<run>/{config.json,metrics.jsonl,run.json,curves.png}  -> results/runs/<run>/            (training records)
  eval/fp32/<run>-eval.json, side/eval/fp32/<run>-eval.json     -> results/eval/five-seed/          (evaluation records;
                                                                   results/eval/aff/ for an AFF evaluation, swaro_eval --aff;
                                                                   results/eval/snapshot/ for the snapshot test's c10-paper-snap-*)
  side/extras*/<run>-ref-extras.json                            -> results/eval/five-seed/<run>-ref-extras-<columns>.json
                                                                   (ref_extras.py records, named by the columns they check:
                                                                   a lease may run each column in its own folder)
  eval/fp32/<run>-eval.parts/ (an evaluation its deadline cut)   -> results/eval/parts/             (resumed by a later lease)
  events.log, logs/*, side/events.log, side/logs/* (side-*)     -> results/logs/<--logs>/          (with a note.txt summary)
and checks that every evaluation record holds per_image and ref_check and that all name one commit (--commit, e.g. the
pinned PINNED_COMMIT: a record of another commit, of none or of a '+dirty' tree is an error); --pins tools/gpu/plans/five-seed-pins.json instead checks
both pins of a lease that trains with one commit and evaluates with another: every training record (records/<run>/run.json)
names the file's 'train' commit and every evaluation, extras and pieces record its 'eval' commit (7 to 40 hex digits:
a record naming none, or a '+dirty' tree, is refused and nothing is copied), and a training folder without its run.json
(stopped before its record) is left out with a line. A pack with no record of any kind exits 1. The fitted heads, eval/fp32/<run>-eval-heads.pt (git
ignores *.pt), stay in the unpacked pack; with --weights (the folder where the float16 pieces <run>.weights.pt.<k> came
back) each run's pieces are joined, checked against the sha256 its events.log line gives, recorded in
results/weights-five-seed.json ({"runs": {run: {sha256, bytes, pieces, lease}}}, what repro_session.sh PRELOAD checks)
and kept, with its heads, in .gpu/five-seed-weights/<run>/ (ignored; where `stage` takes them from and the hub's weights/
are filled from). --plan writes results/eval/five-seed/layout.json (each run's eval_gpus, what tools/gpu/plan.py turns
the records' process-seconds into GPU-seconds with).
stage: a folder of at most --max-mb (48) under .gpu/ with the runs' joined weights and heads and a receive.sh that puts them
in /root/swaro/weights/<run>.pt and <run>-eval-heads.pt ($WEIGHTS_DIR; PRELOAD and plans/five-seed-side.sh read them there).
stage --aff RUN --to .gpu/aff: the AFF fine-tuning state a lease's deadline stopped (landed with --weights into
.gpu/aff/<run>-aff-partial.pt) in folders .gpu/aff-1, -2, ... (--max-mb each), whose receive.sh scripts join it in
/root/swaro/aff, where repro_session.sh continues the run's AFF from it. AFF's network (<run>-aff.pt) lands there too.
stage --state RUN --to .gpu/ck: a training checkpoint kept in weights/ (<run>.state) in folders .gpu/ck-1, -2, ..., whose
receive.sh scripts join it into /root/swaro/repro/runs/<run>/checkpoint.pt ($RUNS_DIR), where the run's training resumes.
stage --from-hub: the same folder with each run's float16 encoder alone, from the pieces committed in weights/
(swaro_nb.hub.pretrained_run checks them), as <run>.pt ({'encoder': state_dict}, a run folder's weights.pt); its sha256
goes into results/weights-five-seed.json as the run's encoder_sha256, which PRELOAD accepts (tools/gpu/check_weights.py).
With <run>-eval-heads.pt beside it when the model was committed with its heads (what ref_extras.py and the side job
read), none for a run not yet evaluated (python tools/gpu/land_five_seed.py stage --from-hub RUN RUN --to .gpu/five-seed-e1).
"""
from __future__ import annotations
import argparse, hashlib, json, re, shutil, subprocess, sys, tarfile
from collections import Counter
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
STORE = Path('.gpu') / 'five-seed-weights'
AFF_STORE = Path('.gpu') / 'aff'   # AFF's network and the state of a fine-tuning a deadline stopped (ignored: a resume point)
MANIFEST = Path('results') / 'weights-five-seed.json'
REC_FILES = ('config.json', 'metrics.jsonl', 'run.json', 'curves.png')


class LandError(ValueError): "A pack or argument the landing cannot use; the message says what and how to fix it."


def check_full_tree(root: Path):
    "Refuse a sparse working tree: during a lease tools/gpu/travel_light.sh leaves results/ and weights/ out of it."
    r = subprocess.run(['git', '-C', str(root), 'config', '--bool', 'core.sparseCheckout'], capture_output=True, text=True)
    if r.stdout.strip() == 'true':
        raise LandError(f"{root}: the working tree is sparse (tools/gpu/travel_light.sh left results/ and weights/ out of it "
                        "for the lease's calls): git sparse-checkout disable first")


def sha256(path) -> str:
    h = hashlib.sha256()
    with open(path, 'rb') as f:
        for b in iter(lambda: f.read(1 << 20), b''): h.update(b)
    return h.hexdigest()


def unpacked(pack: Path) -> Path:
    "The pack's folder: PACK itself, or the tar unpacked into PACK.d/."
    if pack.is_dir(): return pack
    if not pack.is_file(): raise LandError(f"{pack}: no such pack (the pack.tar poll.sh brought back, or its unpacked folder)")
    if not tarfile.is_tarfile(pack): raise LandError(f"{pack}: not a tar file")
    d = pack.with_name(pack.name + '.d')
    if d.exists(): shutil.rmtree(d)
    with tarfile.open(pack) as t: t.extractall(d, filter='data')
    print(f"unpacked {pack} into {d}")
    return d


WEIGHTS_LINE, AFF_LINE = r'weights \(float16\)', r'AFF (?:state \(float32\)|network \(float16\))'   # what piece_lines reads

def piece_lines(events: str, what: str = WEIGHTS_LINE) -> dict:
    ("{name: (pieces, sha256, bytes)} from repro_session.sh's '<name>: <what> in N piece(s), sha256 H, B bytes' lines "
     "(`what`: a pattern, WEIGHTS_LINE for the runs' weights, AFF_LINE for AFF's network and stopped state).")
    pat = re.compile(rf'\+\d+s (\S+): {what} in (\d+) piece\(s\), sha256 ([0-9a-f]{{64}}), (\d+) bytes')
    return {m.group(1): (int(m.group(2)), m.group(3), int(m.group(4))) for m in pat.finditer(events)}


def join_pieces(folder: Path, name: str, n: int, sha: str, size: int, dst: Path) -> str | None:
    "`<name>.weights.pt.<k>` of `folder` joined into `dst` and checked against the events log; None, or why not joined."
    pieces = sorted(Path(folder).glob(f'{name}.weights.pt.*'), key=lambda f: int(f.name.rsplit('.', 1)[1]))
    if len(pieces) != n: return f"{len(pieces)} of {n} pieces in {folder} (poll.sh WFROM=...: bring the rest)"
    dst.parent.mkdir(parents=True, exist_ok=True); tmp = dst.with_name(dst.name + '.incoming')
    with open(tmp, 'wb') as out:
        for f in pieces: out.write(f.read_bytes())
    got = sha256(tmp)
    if got != sha or tmp.stat().st_size != size:   # what an earlier landing joined stays as it was
        tmp.unlink(); raise LandError(f"{name}: joined pieces have sha256 {got}, the events log says {sha}: copy the pieces again")
    tmp.replace(dst)
    return None


def _copy(src: Path, dst: Path, done: list, root: Path):
    dst.parent.mkdir(parents=True, exist_ok=True)
    if src.is_dir():
        if dst.exists(): shutil.rmtree(dst)
        shutil.copytree(src, dst)
    else: shutil.copy2(src, dst)
    done.append(str(dst.relative_to(root)) if dst.is_relative_to(root) else str(dst))


def gap_line(rc: dict) -> str:
    "A record's reference checks ({column: {column, reference, gap}}) as one line."
    return ', '.join(f"{c} {v['column']:.2f} - ref {v['reference']:.2f} = {v['gap']:+.2f}" for c, v in rc.items())


SHA = re.compile(r'[0-9a-f]{7,40}')   # a commit as the records and pins write it: 7 to 40 hex digits, no '+dirty'


def pins_of(a) -> tuple:
    "(train commit, eval commit) the records must name: --commit for both (training records unchecked), or --pins' two."
    if not a.pins: return None, a.commit
    if a.commit: raise LandError("--commit or --pins, not both")
    try: pins = json.loads(Path(a.pins).read_text()); got = pins['train'], pins['eval']
    except (OSError, ValueError, KeyError, TypeError) as e:
        raise LandError(f"{a.pins}: not a pins file with 'train' and 'eval' commits ({type(e).__name__}: {e})") from None
    for k, v in zip(('train', 'eval'), got):
        if not (isinstance(v, str) and SHA.fullmatch(v)): raise LandError(f"{a.pins}: its {k!r} pin {v!r} is not a commit")
    return got


def check_pinned(rec: dict, f: Path, commit: str | None, what: str):
    ("LandError when a pin is given and the record names no commit, a tree with uncommitted changes ('+dirty'), an "
     "abbreviation shorter than 7 digits, or another commit than `commit` (either may be abbreviated); never without a pin.")
    got = str(rec.get('commit') or '')
    if commit and not (SHA.fullmatch(got) and (commit.startswith(got) or got.startswith(commit))):
        raise LandError(f"{f}: commit {got or 'none'} is not the pinned {commit} ({what}; nothing was copied)")


def check_record(rec: dict, f: Path, commit: str | None) -> str:
    "One line on an evaluation record; LandError when it lacks the per-image data or the reference check, or names another commit."
    if rec.get('kind') != 'eval': raise LandError(f"{f}: not an evaluation record (kind {rec.get('kind')!r})")
    pi = rec.get('per_image') or {}
    if not pi.get('test_index') or not pi.get('correct'): raise LandError(f"{f}: no per_image data (an evaluation record of the five-seed set keeps it)")
    if not any(rec.get('ref_check', {}).values()): raise LandError(f"{f}: no ref_check (its columns have no reference AutoAttack)")
    check_pinned(rec, f, commit, "the evaluation's code: every run of the set at one commit")
    m = rec.get('metrics', {}); rc = rec['ref_check'].get('le') or next(iter(rec['ref_check'].values()))
    gaps = gap_line(rc)
    return (f"{rec['run']}: {rec.get('commit', '')[:7]} {rec.get('card')}, {pi['n']} images, heads {sorted(pi['correct'])}, "
            f"clean {m.get('clean')}, {gaps}, {len(rec.get('flags') or [])} flag(s), {rec['seconds']['total']:.0f} s")


def extras_name(rec: dict, f: Path, commit: str | None) -> str:
    "Where a ref_extras.py record lands: <run>-ref-extras-<its columns>.json; LandError when it is none or names another commit."
    if rec.get('kind') != 'ref-extras' or not rec.get('ref_check'): raise LandError(f"{f}: not a ref_extras.py record with its ref_check")
    check_pinned(rec, f, commit, "the extras run the evaluation's code")
    return f"{rec['run']}-ref-extras-{'-'.join(rec['ref_check'])}.json"


SNAPSHOT_PREFIX = 'c10-paper-snap-'   # the snapshot test's runs (plans/snapshot.md), whose evaluations land apart from the set's


def land(a) -> int:
    root = Path(a.root).resolve()
    check_full_tree(root)
    p = unpacked(Path(a.pack))
    if not (p / 'events.log').is_file(): raise LandError(f"{p}: no events.log (is this a repro_session.sh pack?)")
    events = (p / 'events.log').read_text()
    done, lines = [], []
    train_pin, eval_pin = pins_of(a)
    ev_dir = root / 'results' / 'eval' / 'five-seed'
    evals = sorted((p / 'eval' / 'fp32').glob('*-eval.json')) + sorted((p / 'side' / 'eval' / 'fp32').glob('*-eval.json'))
    for f in evals:   # every record checked before anything is copied
        lines.append(check_record(json.loads(f.read_text()), f, eval_pin))
    xrec = {f: json.loads(f.read_text()) for f in sorted(p.glob('side/extras*/*-ref-extras.json'))}
    extras = {f: extras_name(r, f, eval_pin) for f, r in xrec.items()}
    trained = sorted(f for f in (p / 'records').glob('*/run.json'))
    for f in trained: check_pinned(json.loads(f.read_text()), f, train_pin, "the training's code")
    parts = sorted((p / 'eval' / 'fp32').glob('*-eval.parts')) + sorted((p / 'side' / 'eval' / 'fp32').glob('*-eval.parts'))
    for f in (f for d in parts for f in sorted(d.glob('*.json'))):   # the pieces a later lease resumes: the eval pin's
        check_pinned(json.loads(f.read_text()), f, a.pins and eval_pin, "an evaluation's pieces")
    aff_dir = root / 'results' / 'eval' / 'aff'   # AFF's evaluations (swaro_eval --aff): beside, not over, the run's LE/rLE record
    snap_dir = root / 'results' / 'eval' / 'snapshot'   # the snapshot test's (plans/snapshot.md): not runs of the five-seed set
    dest = {f: (aff_dir if (json.loads(f.read_text()).get('eval_config') or {}).get('aff')
                else snap_dir if f.name.startswith(SNAPSHOT_PREFIX) else ev_dir) / f.name for f in evals}
    dest |= {f: ev_dir / name for f, name in extras.items()}
    twice = sorted(n for n, k in Counter(extras.values()).items() if k > 1)
    if twice: raise LandError(f"the pack holds two ref_extras.py records of {', '.join(twice)} (nothing was copied)")
    clash = [d.name for f, d in dest.items() if d.is_file() and d.read_bytes() != f.read_bytes()]
    if clash and not a.replace:
        raise LandError(f"results/eval/ already holds another {', '.join(clash)}: --replace to overwrite (nothing was copied)")
    runs = []
    for d in sorted((p / 'records').glob('*/')):   # the side job's records/ are copies of earlier runs' (preloaded): not landed
        if train_pin and not (d / 'run.json').is_file():   # a training stopped before its record: nothing checks its commit
            lines.append(f"{d.name}: no run.json (its training did not finish): its records are not landed"); continue
        for f in REC_FILES:
            if (d / f).is_file(): _copy(d / f, root / 'results' / 'runs' / d.name / f, done, root)
        runs.append(d.name)
    for f in evals: _copy(f, dest[f], done, root)
    for f, r in xrec.items():
        lines.append(f"{r['run']} (extras): {gap_line(r['ref_check'])}")
        _copy(f, dest[f], done, root)
    for d in parts:
        for f in sorted(d.iterdir()):   # merged file by file: pieces of other evaluations of the run (another fingerprint) stay
            _copy(f, root / 'results' / 'eval' / 'parts' / d.name / f.name, done, root)
        lines.append(f"{d.name[:-len('-eval.parts')]}: evaluation cut by its deadline; its pieces ({', '.join(sorted(x.name for x in d.iterdir()))}) "
                     f"are in results/eval/parts/ for a later lease (repro_session.sh PRELOAD with RUNS naming it, EVAL_FROM=f16); "
                     f"commit its heads with git add -f results/eval/parts/{d.name}/*.pt (*.pt is git-ignored)")
    logs = root / 'results' / 'logs' / a.logs
    _copy(p / 'events.log', logs / 'events.log', done, root)
    for f in sorted((p / 'logs').glob('*')):
        if f.is_file(): _copy(f, logs / f.name, done, root)
    if (p / 'side' / 'events.log').is_file(): _copy(p / 'side' / 'events.log', logs / 'side-events.log', done, root)
    for f in sorted((p / 'side' / 'logs').glob('*')):
        if f.is_file(): _copy(f, logs / f'side-{f.name}', done, root)
    heads = sorted(p.glob('eval/fp32/*-eval-heads.pt')) + sorted(p.glob('side/eval/fp32/*-eval-heads.pt'))
    wl = piece_lines(events + ((p / 'side' / 'events.log').read_text() if (p / 'side' / 'events.log').is_file() else ''))
    if a.weights:
        man = json.loads((root / MANIFEST).read_text()) if (root / MANIFEST).is_file() else {
            'note': "sha256 of the five-seed runs' float16 weights (repro_session.sh WEIGHTS=1, what EVAL_FROM=f16 evaluated), joined from "
                    "their 15 MiB pieces by tools/gpu/land_five_seed.py; kept outside git in .gpu/five-seed-weights/<run>/ (with the "
                    "fitted heads) and in the hub's weights/ where committed", 'runs': {}}
        for run, (n, sha, size) in sorted(wl.items()):
            dst = root / STORE / run
            why = join_pieces(Path(a.weights), run, n, sha, size, dst / f'{run}.pt')
            if why: lines.append(f"{run}: weights not joined: {why}"); continue
            for f in Path(a.weights).glob(f'{run}.weights.pt.*'): shutil.copy2(f, dst / f.name)
            man['runs'][run] = dict(sha256=sha, bytes=size, pieces=n, lease=a.logs, folder=str(STORE / run))
            done.append(f"{STORE / run}/ ({run}.pt, sha256 checked, and its pieces)")
        for h in heads:   # every fitted head, also those of an evaluation of an earlier lease's run (the side job's)
            run = h.name[:-len('-eval-heads.pt')]
            (root / STORE / run).mkdir(parents=True, exist_ok=True); shutil.copy2(h, root / STORE / run / h.name)
            done.append(str(STORE / run / h.name))
        (root / MANIFEST).write_text(json.dumps(man, indent=1) + '\n'); done.append(str(MANIFEST))
    al = piece_lines(events, AFF_LINE)
    for name, (n, sha, size) in sorted(al.items()):   # AFF's network, or the state a lease's deadline stopped it at
        why = join_pieces(Path(a.weights), name, n, sha, size, root / AFF_STORE / f'{name}.pt') if a.weights else 'no --weights'
        lines.append(f"{name}: {why and 'not joined: ' + why or f'joined into {AFF_STORE / name}.pt (sha256 checked)'}"
                     + (f" (keep it for a later session: python tools/pack_weights.py --state {AFF_STORE / name}.pt --name "
                        f"{name}.state, then commit; stage it with `stage --aff` for the lease that continues it)"
                        if name.endswith(('-aff-partial', '-aff-head')) else ''))
    if a.plan:
        spec = json.loads(Path(a.plan).read_text()); dflt = (spec.get('defaults') or {}).get('eval') or {}
        lay_f = ev_dir / 'layout.json'
        lay = json.loads(lay_f.read_text()) if lay_f.is_file() else {'note': "each run's eval_gpus as its lease's plan gave it (tools/gpu/plan.py)", 'runs': {}}
        for r in spec['runs']:
            if r.get('eval', dflt) is None: continue
            e = {**dflt, **(r.get('eval') or {})}
            if any(f.name == f"{r['name']}-eval.json" and dest[f].parent == ev_dir for f in evals): lay['runs'][r['name']] = dict(eval_gpus=e.get('eval_gpus', 1), plan=str(a.plan))
        ev_dir.mkdir(parents=True, exist_ok=True); lay_f.write_text(json.dumps(lay, indent=1) + '\n'); done.append(str(lay_f.relative_to(root)))
    note = [f"five-seed lease landed from {p} by tools/gpu/land_five_seed.py", *lines,
            *[f"{r}: weights (float16) {n} piece(s), sha256 {s}" for r, (n, s, _) in sorted(wl.items())],
            *[f"heads: {h}" for h in heads]]
    (logs / 'note.txt').write_text('\n'.join(note) + '\n'); done.append(str((logs / 'note.txt').relative_to(root)))
    print('\n'.join(f"copied {x}" for x in done))
    print('\n'.join(lines))
    print("heads (git-ignored, left in the pack" + (f"; copied to {STORE}/<run>/" if a.weights else '') + "):\n" + '\n'.join(f"  {h}" for h in heads))
    if not (evals or xrec or runs or parts): print("no record in the pack: nothing landed but its logs", file=sys.stderr); return 1
    if not evals: print("no evaluation record in the pack (a training lease, or extras only)")
    return 0


def hub_encoders(a, root: Path, tmp: Path) -> list:
    ("Each run's float16 encoder as a run folder's weights.pt (swaro_nb.hub.pretrained_run, every piece checked), its sha256 "
     "in MANIFEST; its heads beside it when the model has them.")
    if str(root) not in sys.path: sys.path.insert(0, str(root))
    from swaro_nb.hub import pretrained_run, WeightsError
    rec = Path(a.manifest or MANIFEST)   # the weights record PRELOAD checks the staged encoders against
    man = json.loads((root / rec).read_text()) if (root / rec).is_file() else {'runs': {}}
    files = []
    for run in a.runs:
        try: w = pretrained_run(run, tmp / run, a.weights_root) / 'weights.pt'
        except WeightsError as e: raise LandError(f"{run}: {e}") from None
        f = w.rename(tmp / f'{run}.pt'); files.append(f)
        if (w.parent / 'eval-heads.pt').is_file():   # a model committed with its heads: what ref_extras.py attacks
            files.append((w.parent / 'eval-heads.pt').rename(tmp / f'{run}-eval-heads.pt'))
        man['runs'].setdefault(run, {}).update(
            encoder_sha256=sha256(f), encoder_bytes=f.stat().st_size,
            encoder_from=f"weights/{run} (swaro_nb.hub.pretrained_run: the float16 encoder alone, {{'encoder': state_dict}})")
    (root / rec).parent.mkdir(parents=True, exist_ok=True)
    (root / rec).write_text(json.dumps(man, indent=1) + '\n')
    print(f"{rec}: encoder_sha256 of {', '.join(a.runs)} recorded (what repro_session.sh PRELOAD checks them against)")
    return files


def stage(a) -> int:
    root = Path(a.root).resolve(); to = Path(a.to)
    check_full_tree(root)
    if not str(to).startswith('.gpu/'): raise LandError(f"--to {to}: stage under .gpu/ (git-ignored), e.g. .gpu/five-seed-w1")
    if a.aff: return stage_aff(a, root, to)
    if a.state: return stage_state(a, root, to)
    if a.from_hub:
        tmp = root / '.gpu' / '.stage-tmp'; shutil.rmtree(tmp, ignore_errors=True); tmp.mkdir(parents=True)
        try: return _stage_files(a, root, to, hub_encoders(a, root, tmp), 'float16 encoders (from weights/)')
        finally: shutil.rmtree(tmp, ignore_errors=True)
    files = []
    for run in a.runs:
        d = root / STORE / run
        w, h = d / f'{run}.pt', d / f'{run}-eval-heads.pt'
        for f in (w, h):
            if not f.is_file(): raise LandError(f"{f} is missing: land the lease that trained {run} with --weights first")
        files += [w, h]
    return _stage_files(a, root, to, files, 'float16 weights and fitted heads')


def aff_from_hub(run: str, root: Path) -> Path | None:
    ("A stopped AFF's head or state kept in weights/ (`pack_weights.py --state .gpu/aff/<run>-aff-partial.pt --name "
     "<run>-aff-partial.state`: .gpu/ does not outlive the session), joined into .gpu/aff/, every piece checked; else None.")
    if str(root) not in sys.path: sys.path.insert(0, str(root))
    from swaro_nb.hub import WeightsError, read_manifest, unpack_state
    try: states = read_manifest(root / 'weights').get('states', {})
    except WeightsError: return None
    for x in ('head', 'partial'):
        if f'{run}-aff-{x}.state' in states:
            try: return unpack_state(f'{run}-aff-{x}.state', root / AFF_STORE / f'{run}-aff-{x}.pt', root / 'weights')
            except WeightsError as e: raise LandError(str(e)) from None
    return None


def _cut(f: Path, root: Path, to: Path, made: list, max_mb: float, about: str, dest: str, name: str) -> None:
    ("File f cut into folders <to>-1, <to>-2, ... (counting on from `made`, the folders made so far) of at most max_mb, one "
     "call's carry each; each folder's receive.sh puts its piece in the folder `dest` (a shell expression) and, once all "
     "have come, joins them there into `name`, sha256 checked: written whole or not at all.")
    data, sha, step = f.read_bytes(), sha256(f), int(max_mb * 2 ** 20)
    parts = [data[i:i + step] for i in range(0, len(data), step)]
    for k, blob in enumerate(parts):
        dst = root / f'{to}-{len(made) + 1}'
        if dst.exists(): shutil.rmtree(dst)
        dst.mkdir(parents=True); (dst / f'{f.name}.{k}').write_bytes(blob)
        (dst / 'receive.sh').write_text(
            f"#!/bin/sh\n# piece {k + 1} of {len(parts)} of {f.name}, {about} (tools/gpu/land_five_seed.py stage)\n"
            f"set -e\nd={dest}; mkdir -p \"$d\"\n"
            f"cp \"$(dirname \"$0\")/{f.name}.{k}\" \"$d/\"\n"
            f"if [ \"$(ls \"$d\"/{f.name}.* | wc -l)\" = {len(parts)} ]; then\n"
            f"  for i in $(seq 0 {len(parts) - 1}); do cat \"$d/{f.name}.$i\"; done > \"$d/.{name}.incoming\"\n"
            f"  if echo '{sha}  '\"$d/.{name}.incoming\" | sha256sum -c --quiet; then\n"
            f"    mv \"$d/.{name}.incoming\" \"$d/{name}\" && rm -f \"$d\"/{f.name}.* && echo \"{name} in $d\"\n"
            f"  else echo \"{name}: the pieces in $d do not add up (sha256): stage them again\" >&2; exit 1; fi\nfi\n")
        made.append(dst.relative_to(root))


def stage_aff(a, root: Path, to: Path) -> int:
    ("Each run's stopped AFF state (.gpu/aff/<run>-aff-partial.pt, ~90 MB) cut into folders <to>-1, <to>-2, ... of at most "
     "--max-mb, one call's carry each; each folder's receive.sh puts its pieces in AFF_DIR (/root/swaro/aff) and joins "
     "them there, sha256 checked, once all have come: what repro_session.sh resumes the run's AFF from.")
    made = []
    for run in a.runs:   # its fitted AFF network when the fine-tuning ended before the attacks did, else the state
        f = next((g for g in (root / AFF_STORE / f'{run}-aff-{x}.pt' for x in ('head', 'partial')) if g.is_file()), None)
        f = f or aff_from_hub(run, root)
        if f is None and a.optional: print(f"{run}: no stopped AFF (its fine-tuning starts from epoch 1)"); continue
        if f is None: raise LandError(f"{root / AFF_STORE}/{run}-aff-partial.pt is missing, and weights/ keeps no state "
                                      f"{run}-aff-partial.state: land the lease whose deadline stopped {run}'s AFF with --weights")
        _cut(f, root, to, made, a.max_mb, f"{run}'s stopped AFF", '"${AFF_DIR:-/root/swaro/aff}"', f.name)
    if made: print(f"staged the AFF state in {', '.join(map(str, made))}: carry each in a call of its own and run its receive.sh there")
    return 0


def stage_state(a, root: Path, to: Path) -> int:
    ("Each run's training checkpoint kept in weights/ (`pack_weights.py --state`: <run>.state, from git history once "
     "retired), joined and checked against its manifest entry, then cut into folders <to>-1, <to>-2, ... of at most "
     "--max-mb whose receive.sh scripts join it into $RUNS_DIR/<run>/checkpoint.pt (default /root/swaro/repro/runs, "
     "repro_session.sh's run folders), with the run's config.json and metrics.jsonl from results/runs/<run>/ (which "
     "must hold the state's epochs): the run's training resumes there from its epoch.")
    if str(root) not in sys.path: sys.path.insert(0, str(root))
    from swaro_nb.hub import WeightsError, state_info, unpack_state
    made, tmp = [], root / '.gpu' / '.state-tmp'
    try:
        for run in a.runs:
            shutil.rmtree(tmp, ignore_errors=True)
            try: f, epoch = unpack_state(f'{run}.state', tmp / 'checkpoint.pt', root / 'weights'), \
                            state_info(f'{run}.state', root / 'weights').get('epoch')
            except WeightsError as e: raise LandError(str(e)) from None
            # the run's records go with it: a resumed training appends its epochs to metrics.jsonl (at the five-seed set's
            # train pin it does not rewrite it from the checkpoint), so the file must hold exactly the checkpoint's epochs
            rdir = root / 'results' / 'runs' / run
            recs = [rdir / n for n in ('config.json', 'metrics.jsonl') if (rdir / n).is_file()]
            m = rdir / 'metrics.jsonl'
            if m.is_file() and (n := len(m.read_text().splitlines())) != epoch:
                raise LandError(f"{m} holds {n} epochs, {run}.state is at epoch {epoch}: "
                                "the records and the state are not of one stop")
            first = len(made)
            _cut(f, root, to, made, a.max_mb, f"{run}'s training checkpoint", f'"${{RUNS_DIR:-/root/swaro/repro/runs}}/{run}"',
                 'checkpoint.pt')
            if recs:   # in its first folder, put in place by its receive.sh
                d = root / made[first]; (d / 'records').mkdir()
                for r in recs: shutil.copy(r, d / 'records' / r.name)
                with open(d / 'receive.sh', 'a') as sh_: sh_.write('cp "$(dirname "$0")"/records/* "$d/"\n')
    finally: shutil.rmtree(tmp, ignore_errors=True)
    print(f"staged {', '.join(a.runs)}'s training checkpoint in {', '.join(map(str, made))}: carry each in a call of its own "
          "and run its receive.sh there")
    return 0


def _stage_files(a, root: Path, to: Path, files: list, what: str) -> int:
    mb = sum(f.stat().st_size for f in files) / 2 ** 20
    if mb > a.max_mb: raise LandError(f"{', '.join(a.runs)}: {mb:.0f} MiB is more than --max-mb {a.max_mb}: stage fewer runs a folder")
    dst = root / to
    if dst.exists(): shutil.rmtree(dst)
    dst.mkdir(parents=True)
    for f in files: shutil.copy2(f, dst / f.name)
    (dst / 'receive.sh').write_text(
        f"#!/bin/sh\n# {what} of " + ' '.join(a.runs) + " (tools/gpu/land_five_seed.py stage), into WEIGHTS_DIR\n"
        "# (/root/swaro/weights), each copied under a temporary name and renamed: a job waiting for them never reads half a file\n"
        "set -e\nd=${WEIGHTS_DIR:-/root/swaro/weights}; mkdir -p $d\n"
        "for f in \"$(dirname \"$0\")\"/*.pt; do cp \"$f\" $d/.incoming && mv $d/.incoming $d/$(basename \"$f\"); done\n"
        f"echo \"{what} of {' '.join(a.runs)} in $d\"\n")
    print(f"staged {', '.join(a.runs)} in {to} ({mb:.1f} MiB): carry it in a call and run its receive.sh there")
    return 0


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split('\n\n')[0], formatter_class=argparse.RawDescriptionHelpFormatter)
    sub = ap.add_subparsers(dest='cmd', required=True)
    l = sub.add_parser('land', help="copy a lease's pack into results/")
    l.add_argument('pack', help='pack.tar from poll.sh, or the folder it was unpacked into')
    l.add_argument('--logs', required=True, help='name of the logs folder under results/logs/, e.g. 2026-11-28-a-h200x4')
    l.add_argument('--weights', default=None, help='folder holding the float16 pieces <run>.weights.pt.<k> poll.sh brought back')
    l.add_argument('--plan', default=None, help="the lease's plan (tools/gpu/plans/five-seed-lease1.json): its eval_gpus go to layout.json")
    l.add_argument('--commit', default=None, help='the pinned commit every record must name (.gpu/pinned/PINNED_COMMIT)')
    l.add_argument('--pins', default=None, help="instead of --commit, a pins file (tools/gpu/plans/five-seed-pins.json): training "
                   "records must name its 'train' commit, evaluation and extras records its 'eval' commit")
    l.add_argument('--root', default='.', help='the checkout to land in (default: here)')
    l.add_argument('--replace', action='store_true', help='overwrite evaluation records that differ (default: refuse, copy nothing)')
    s = sub.add_parser('stage', help="a .gpu/ folder with runs' weights and heads for a later lease")
    s.add_argument('runs', nargs='+'); s.add_argument('--to', required=True); s.add_argument('--max-mb', type=float, default=48)
    s.add_argument('--root', default='.')
    s.add_argument('--from-hub', action='store_true',
                   help="the encoders committed in weights/ (swaro_nb.hub), for runs whose lease weights are gone: evaluation only")
    s.add_argument('--weights-root', default=None, help="with --from-hub: the hub's weights folder (default: the checkout's weights/)")
    s.add_argument('--manifest', default=None, help=f"with --from-hub: the weights record their sha256 go into (default: {MANIFEST}; "
                   "the snapshot test's: results/weights-snapshot.json)")
    s.add_argument('--aff', action='store_true',
                   help="a stopped AFF (.gpu/aff/<run>-aff-head.pt, else -aff-partial.pt), in folders <to>-1, <to>-2, ...")
    s.add_argument('--optional', action='store_true', help="with --aff: a run without a stopped AFF is said and skipped, not an error")
    s.add_argument('--state', action='store_true',
                   help="a training checkpoint kept in weights/ (<run>.state), in folders <to>-1, <to>-2, ... that join it "
                        "into $RUNS_DIR/<run>/checkpoint.pt (/root/swaro/repro/runs): the training resumes there")
    a = ap.parse_args(argv)
    try: return land(a) if a.cmd == 'land' else stage(a)
    except LandError as e: print(f"land_five_seed: error: {e}", file=sys.stderr); return 2


if __name__ == '__main__': sys.exit(main())
