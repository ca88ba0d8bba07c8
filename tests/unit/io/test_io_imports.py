"""Every module and package of biokernels.io imports alone, in a fresh
interpreter: an import circle between the readers (or a module that only
works when another was imported first) fails here."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

IO = Path(__file__).resolve().parents[3] / "src" / "biokernels" / "io"


def _modules() -> list[str]:
    names = []
    for path in sorted(IO.rglob("*.py")):
        if "__pycache__" in path.parts:
            continue
        parts = path.relative_to(IO).with_suffix("").parts
        if parts[-1] == "__init__":
            parts = parts[:-1]
        names.append(".".join(("biokernels", "io", *parts)))
    return names


MODULES = _modules()


def test_the_io_modules_are_found():
    assert "biokernels.io" in MODULES and "biokernels.io.opener" in MODULES and len(MODULES) > 10


@pytest.mark.parametrize("module", MODULES)
def test_module_imports_alone(module):
    run = subprocess.run([sys.executable, "-c", f"import {module}"], capture_output=True, text=True, timeout=120)
    assert run.returncode == 0, f"import {module} failed:\n{run.stderr[-3000:]}"
