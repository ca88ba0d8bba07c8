"""History lives in git and docs, not in code: no issue number or measured
timing in src/ or workflow/, and no module docstring over 20 lines (issue
#28 §4). A tracker number or a timing goes stale when the code changes
beside it; the commit message and docs/*_notes.md keep them."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]
CODE = sorted([*(REPO / "src").rglob("*.py"), *(REPO / "workflow").rglob("*.py"),
               *(REPO / "workflow").rglob("*.smk"), REPO / "workflow" / "Snakefile",
               *(REPO / "workflow" / "schemas").glob("*.yaml"), *(REPO / "workflow" / "report").glob("*.rst")])
ISSUE = re.compile(r"(?i)\bissues?\s*#?\d+|\(#\d+\)|\bPR\s*#\d+")
TIMING = re.compile(r"(?i)\b\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?\s*[x×]\s+(?:faster|slower)\b"
                    r"|\b\d+(?:\.\d+)?\s*(?:ms|s|sec|min)\s+(?:per|for|on)\s"
                    r"|\bin ~?\d+(?:\.\d+)?(?:\s*[-–]\s*\d+(?:\.\d+)?)?\s*(?:ms|s|min)\b")


def _hits(pattern: re.Pattern) -> list[str]:
    out = []
    for path in CODE:
        for i, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1):
            if pattern.search(line):
                out.append(f"{path.relative_to(REPO)}:{i}: {line.strip()[:100]}")
    return out


@pytest.mark.parametrize("what, pattern", [("issue number", ISSUE), ("timing figure", TIMING)])
def test_no_history_in_code(what, pattern):
    hits = _hits(pattern)
    assert not hits, f"{len(hits)} {what}(s) in src/ or workflow/ (move them to the commit message or docs/):\n" \
        + "\n".join(hits)


def test_guard_patterns_catch_what_they_are_for():
    for text in ("see issue #20", "(#27)", "Issues 6 and 8", "1.3-1.6x faster", "10-30× faster per step",
                 "takes 1.6 s per fit", "in ~0.1-2 s for n = 250"):
        assert ISSUE.search(text) or TIMING.search(text), text
    for text in ("#1.2 or #1.3", "color:#555", "a 5-fold split", "log2(x + 1)", "n = 100 samples",
                 "a file already on this machine", "measured on every cell line"):
        assert not (ISSUE.search(text) or TIMING.search(text)), text


def test_module_docstrings_are_short():
    long = []
    for path in sorted((REPO / "src").rglob("*.py")):
        doc = ast.get_docstring(ast.parse(path.read_text(encoding="utf-8")), clean=False) or ""
        if len(doc.splitlines()) > 20:
            long.append(f"{path.relative_to(REPO)}: {len(doc.splitlines())} lines")
    assert not long, "module docstrings over 20 lines (derivations go to docs/):\n" + "\n".join(long)
