"""Synthetic five-seed records with per-image data, for the tests of the report and the README before real ones exist.

`five_seed_records` makes the 15 evaluation records the five-seed set will hold (`c10-200-swaro-s0..4`, `c10-200-rocl-s*`,
`c10-200-rand-s*`) from a real record's layout, with per-image bits drawn so that the answer is known: SwARo well ahead of
RoCL on clean and l2, well behind on l_inf, and random targets drawn from SwARo's own generator. `results_view` is a
folder that reads as results/ with those records in eval/five-seed/; `expected` recomputes a comparison column from the
bits, decoded here without the library's decoder."""
import base64, json, shutil
from pathlib import Path
import numpy as np

KEYS = ('clean', 'linf_8', 'linf_16', 'l2_025', 'l2_05', 'l1_784', 'l1_12', 'bim', 'bim_t', 'fgsm', 'fgsm_t', 'jitter', 'jitter_t',
        'aa_linf_8', 'aa_l2_05')
EFFECT = {'clean': 1.5, 'l2_025': 1.5, 'l2_05': 1.5, 'linf_8': -1.5, 'linf_16': -1.5}   # SwARo's logit shift against RoCL's

def _pack(bits) -> str: return base64.b64encode(np.packbits(np.asarray(bits, bool), bitorder='little').tobytes()).decode()

def decode(text: str, n: int) -> np.ndarray:
    "Bits of a per-image column, decoded with numpy alone (little-endian packbits in base64)."
    return np.unpackbits(np.frombuffer(base64.b64decode(text), np.uint8), bitorder='little')[:n].astype(bool)

def five_seed_records(template: dict, n: int = 400, seed: int = 0, rle_epochs: int = 30) -> list:
    "15 eval records (SwARo, RoCL, random targets; 5 seeds each) with per-image bits on the same n test images."
    rng = np.random.default_rng(seed)
    z = {k: rng.normal(0.0, 1.5, n) for k in KEYS}   # each column's image difficulty, shared by every model
    idx = np.sort(rng.choice(10000, n, replace=False))
    out = []
    for name, method, targets, sw in (('swaro', 'swaro', 'clusters', True), ('rocl', 'rocl', None, False), ('rand', 'swaro', 'random', True)):
        for s in range(5):
            shift = rng.normal(0, 0.05)   # this seed's own accuracy
            bits = {k: rng.random(n) < 1 / (1 + np.exp(-(z[k] + shift + (EFFECT.get(k, 0.0) if sw else 0.0)))) for k in KEYS}
            rle = {k: rng.random(n) < 1 / (1 + np.exp(-(z[k] + 0.2 + shift))) for k in KEYS[:7]}
            cfg = dict(template['config'], method=method, seed=s, p=0.75 if sw else template['config'].get('p', 0.75))
            if targets: cfg['swaro_targets'] = targets
            else: cfg.pop('swaro_targets', None)
            met = {k: 100 * float(v.mean()) for k, v in bits.items()}
            met['rle'] = {k: 100 * float(v.mean()) for k, v in rle.items()}
            out.append(dict(template, run=f'c10-200-{name}-s{s}', method=method, config=cfg, metrics=met,
                            train=dict(template.get('train') or {}, commit='f1ve5ee'), commit='f1ve5ee',
                            budgets=dict(template['budgets'], test_images=n, n_test=n, rle_epochs=rle_epochs),
                            per_image=dict(encoding='packbits-little-base64', n=n,
                                           test_index=base64.b64encode(idx.astype('<u2').tobytes()).decode(),
                                           correct={'le': {k: _pack(v) for k, v in bits.items()}, 'rle': {k: _pack(v) for k, v in rle.items()}},
                                           n_col={})))
    return out

def results_view(root: Path, results: Path, records: list) -> Path:
    "A folder that reads as `results` (links to its entries) with `records` in eval/five-seed/ and its own figures/."
    root.mkdir(parents=True, exist_ok=True)
    for p in results.iterdir():
        if p.name not in ('eval', 'figures'): (root / p.name).symlink_to(p.resolve())
    (root / 'eval').mkdir()
    for p in (results / 'eval').iterdir():
        if p.name != 'five-seed': (root / 'eval' / p.name).symlink_to(p.resolve())
    (root / 'eval' / 'five-seed').mkdir()
    for r in records: (root / 'eval' / 'five-seed' / f"{r['run']}-eval.json").write_text(json.dumps(r))
    return root

def expected(a: list, b: list, col: str, head: str = 'le') -> dict:
    "One comparison column recomputed from the records' bits (decoded here), by the bootstrap with the report's settings."
    from swaro_nb.stats import paired_bootstrap
    bits = lambda g: [decode(r['per_image']['correct'][head][col], r['per_image']['n']) for r in g]
    return paired_bootstrap(bits(a), bits(b), n_boot=10_000, seed=0)

def groups(records: list) -> dict:
    "The three groups of the five-seed set, by run name."
    return {v: [r for r in records if r['run'].startswith(f'c10-200-{v}-')] for v in ('swaro', 'rocl', 'rand')}
