"""Every `quote` of config/paper_values.yaml is a verbatim passage of the paper
its entry belongs to.

The papers' texts are ``../shared/papers/<papers.<key>.file>`` relative to the
repository root (issue #16). A quote may join verbatim parts with an ellipsis
("..." or "…"); each part must occur in the paper, in the quote's order. The
comparison is on a normalised text (both sides): Unicode NFKC (which also
splits ligatures such as "ﬁ" into "fi"), typographic quotes to ASCII quotes,
dashes and the minus sign to "-", and every run of whitespace to one space.
The project's own reading of a passage belongs in the entry's `reading`
field, never in `quote`.
"""

from __future__ import annotations

import re
import unicodedata
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[3]
PAPER_VALUES = REPO / "config/paper_values.yaml"
PAPERS_DIR = REPO.parent / "shared" / "papers"

_CHARS = str.maketrans({"\u2018": "'", "\u2019": "'", "\u201a": "'", "\u201b": "'", "\u2032": "'",
                        "\u201c": '"', "\u201d": '"', "\u201e": '"', "\u201f": '"', "\u2033": '"',
                        "\u2013": "-", "\u2014": "-", "\u2212": "-", "\u2010": "-", "\u2011": "-",
                        "\u2012": "-", "\u2015": "-", "\u00ad": None})
_ELLIPSIS = re.compile(r"\s*(?:\.\.\.|\u2026)\s*")


def normalise(text: str) -> str:
    """``text`` with the typographic variants a copy of a paper differs by made
    equal (see the module docstring); used on the paper and on the quote."""
    text = unicodedata.normalize("NFKC", text).translate(_CHARS)
    return re.sub(r"\s+", " ", text).strip()


def quote_parts(quote: str) -> list[str]:
    """The verbatim parts of ``quote``, split at each ellipsis, normalised,
    empty parts (a leading or trailing ellipsis) dropped."""
    return [p for p in (normalise(x) for x in _ELLIPSIS.split(quote)) if p]


def missing_part(quote: str, paper_text: str) -> str | None:
    """The first part of ``quote`` not found in ``paper_text`` (normalised)
    after the previous part's match, or None when all parts occur in order."""
    pos = 0
    for part in quote_parts(quote):
        at = paper_text.find(part, pos)
        if at < 0:
            return part
        pos = at + len(part)
    return None


def test_normalise_and_ordered_parts():
    # Typographic forms and a ligature compare equal to their ASCII forms.
    assert normalise("\u201cwe\u201d \ufb01nd  a\u2013b\n\u2212 c") == '"we" find a-b - c'
    text = normalise("Alpha beta gamma. Delta epsilon.")
    assert missing_part("Alpha beta ... Delta", text) is None
    assert missing_part("... beta gamma. Delta\u2026", text) is None
    # Each part must follow the previous one: reversed order fails.
    assert missing_part("Delta ... Alpha", text) == "Alpha"
    # A word inserted into a verbatim sentence fails.
    assert missing_part("Alpha beta (p < 0.05) gamma.", text) == "Alpha beta (p < 0.05) gamma."


def _entries_with_quotes():
    doc = yaml.safe_load(PAPER_VALUES.read_text(encoding="utf-8"))
    return doc["papers"], [e for e in doc["entries"] if "quote" in e]


def test_every_quote_is_verbatim_in_its_paper():
    if not PAPERS_DIR.is_dir():
        pytest.skip(f"the papers' texts are not here: {PAPERS_DIR} is absent")
    papers, entries = _entries_with_quotes()
    assert entries, f"{PAPER_VALUES}: no entry has a quote"
    texts = {}
    bad = []
    for e in entries:
        key = e["paper"]
        assert key in papers, f"{PAPER_VALUES}: entry {e['id']}: paper {key!r} not in papers"
        path = PAPERS_DIR / papers[key]["file"]
        assert path.is_file(), f"{PAPER_VALUES}: entry {e['id']}: {path} not found"
        if key not in texts:
            texts[key] = normalise(path.read_text(encoding="utf-8"))
        assert quote_parts(e["quote"]), f"{PAPER_VALUES}: entry {e['id']}: empty quote"
        part = missing_part(e["quote"], texts[key])
        if part is not None:
            bad.append(f"{e['id']} ({papers[key]['file']}): not found (in order): {part!r}")
    assert not bad, f"{PAPER_VALUES}: {len(bad)} quote(s) not verbatim:\n" + "\n".join(bad)
