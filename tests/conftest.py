import os, sys
from pathlib import Path
import pytest

ROOT = Path(__file__).resolve().parents[1]
BIN = Path(sys.executable).parent

@pytest.fixture
def root(): return ROOT

def script(name: str) -> str:
    "Path of a console script installed beside this interpreter."
    return str(BIN / name)
