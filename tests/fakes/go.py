"""GO annotation lines in the GAF 2.2 layout, for the tests and the readers'
benchmark."""

from __future__ import annotations

from biokernels.io.go import GAF_COLUMNS


def gaf_line(obj: str, symbol: str, qualifier: str, term: str, evidence: str, aspect: str, synonyms: str,
             taxon: str = "taxon:559292", db: str = "SGD") -> str:
    """One GAF 2.2 line: the 17 columns in the spec's order."""
    cols = [db, obj, symbol, qualifier, term, "PMID:1", evidence, "", aspect, f"{symbol} protein", synonyms,
            "protein", taxon, "20240617", "SGD", "", ""]
    assert len(cols) == len(GAF_COLUMNS) == 17
    return "\t".join(cols)
