#!/usr/bin/env python
"""Train the first EPOCHS epochs of a recorded run again, from its own config.json (same seed), and write both
per-epoch losses side by side: a check that the code of today computes what the recorded run's code did.

Usage: python tools/gpu/same_loss.py results/runs/swaro-c10-e120 8 OUT.json
"""
import json, sys, tempfile
from dataclasses import fields
from pathlib import Path
from swaro_nb.core import run_stamp
from swaro_nb.config import TrainConfig
from swaro_nb.train import train

run, epochs, out = Path(sys.argv[1]), int(sys.argv[2]), sys.argv[3]
cfg = json.loads((run / 'config.json').read_text())
known = {f.name for f in fields(TrainConfig)}
cfg = TrainConfig(**{k: v for k, v in cfg.items() if k in known})
cfg.out_dir, cfg.name, cfg.max_epochs_this_call, cfg.progress = tempfile.mkdtemp(), 'again', epochs, False
t = train(cfg, resume=False)
old = [json.loads(l) for l in (run / 'metrics.jsonl').read_text().splitlines()][:epochs]
rec = json.loads((run / 'run.json').read_text())
rows = [dict(epoch=a['epoch'], loss_recorded=a['loss'], loss_now=b['loss'], diff=b['loss'] - a['loss'],
             frac_neg_recorded=a.get('frac_neg'), frac_neg_now=b.get('frac_neg')) for a, b in zip(old, t.history)]
Path(out).write_text(json.dumps(dict(run=str(run), recorded=dict(commit=rec['commit'], card=rec['card'], date=rec['date']),
                                     now=run_stamp(), rows=rows), indent=1))
for r in rows: print(r)
