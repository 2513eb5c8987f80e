#!/usr/bin/env python
"""Announce swaro_nb's methods (the `swaro_nb.methods` entry points of settings.ini) to a Python that runs the checkout
from PYTHONPATH without installing it (an offline GPU machine): writes a minimal `swaro_nb-<version>.dist-info` into DIR.

Usage: python tools/gpu/entry_points.py [--if-missing] /tmp/site
  --if-missing: do nothing when this Python already finds every method entry point (an installed swaro_nb, or an earlier call)
"""
import sys
import importlib.metadata
from configparser import ConfigParser
from pathlib import Path

root = Path(__file__).resolve().parents[2]
cfg = ConfigParser(delimiters=['=']); cfg.read(root / 'settings.ini', encoding='utf-8'); cfg = cfg['DEFAULT']
args = [a for a in sys.argv[1:] if a != '--if-missing']
eps = cfg.get('method_entry_points', '').split()
if '--if-missing' in sys.argv[1:]:
    have = {e.name for e in importlib.metadata.entry_points(group='swaro_nb.methods')}
    if {e.split('=')[0] for e in eps} <= have: print(f"method entry points already announced: {', '.join(sorted(have))}"); sys.exit(0)
d = Path(args[0]) / f"swaro_nb-{cfg['version']}.dist-info"; d.mkdir(parents=True, exist_ok=True)
(d / 'METADATA').write_text(f"Metadata-Version: 2.1\nName: swaro_nb\nVersion: {cfg['version']}\n")
(d / 'entry_points.txt').write_text('[swaro_nb.methods]\n' + ''.join(f"{e.split('=')[0]} = {e.split('=')[1]}\n" for e in eps))
print(f"{d}: {len(eps)} method entry points")
