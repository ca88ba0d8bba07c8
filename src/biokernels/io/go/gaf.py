"""GO annotation files (GAF 2.x) read line by line into a table of legal
annotation rows.

GO Consortium, *GO Annotation File (GAF) format 2.2* and *2.1*
(https://geneontology.org/docs/go-annotation-file-gaf-format-2.2/): a
``!gaf-version: 2.x`` line (member databases write other ``!`` lines before
it), 17 tab-separated columns (:data:`GAF_COLUMNS`; 15 or 16 when the
optional columns 16-17 are left off). Illegal lines are skipped and counted
up to :data:`MAX_ILLEGAL_SHARE` of the annotation lines, as goatools' GAF
reader reads past them; above that the file is refused, naming them.
"""

from __future__ import annotations

import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.sniff import describe_content
from biokernels.io.text import open_text

__all__ = ["ASPECTS", "EVIDENCE_CODES", "GAF_COLUMNS", "GAF_MIN_COLUMNS", "MAX_ILLEGAL_SHARE", "QUALIFIER_RELATIONS",
           "read_gaf"]

log = logging.getLogger(__name__)

#: The 17 columns of GAF 2.x, in order (GAF 2.2 spec names).
GAF_COLUMNS = ("DB", "DB_Object_ID", "DB_Object_Symbol", "Qualifier", "GO_ID", "DB_Reference",
               "Evidence_Code", "With_From", "Aspect", "DB_Object_Name", "DB_Object_Synonym",
               "DB_Object_Type", "Taxon", "Date", "Assigned_By", "Annotation_Extension",
               "Gene_Product_Form_ID")
#: The columns kept in memory by :func:`read_gaf` (0-based indices into GAF_COLUMNS).
_KEEP = (0, 1, 2, 3, 4, 6, 8, 10, 12)
#: GO evidence codes (GO's "Guide to GO evidence codes"; IMR, replaced by
#: IKR, still occurs in older files).
EVIDENCE_CODES = frozenset({
    "EXP", "IDA", "IPI", "IMP", "IGI", "IEP",          # experimental
    "HTP", "HDA", "HMP", "HGI", "HEP",                 # high-throughput
    "IBA", "IBD", "IKR", "IRD", "IMR",                 # phylogenetic
    "ISS", "ISO", "ISA", "ISM", "IGC", "RCA",          # computational
    "TAS", "NAS", "IC", "ND",                          # author, curator, no data
    "IEA",                                             # electronic
})
#: Relations of the GAF qualifier column (2.2 gene-product-to-term relations,
#: plus 2.1's contributes_to and colocalizes_with which 2.2 keeps).
QUALIFIER_RELATIONS = frozenset({
    "enables", "contributes_to", "involved_in", "acts_upstream_of", "acts_upstream_of_positive_effect",
    "acts_upstream_of_negative_effect", "acts_upstream_of_or_within",
    "acts_upstream_of_or_within_positive_effect", "acts_upstream_of_or_within_negative_effect",
    "located_in", "part_of", "is_active_in", "colocalizes_with",
})
#: GAF aspect -> the OBO namespace of its terms.
ASPECTS = {"P": "biological_process", "F": "molecular_function", "C": "cellular_component"}

_GO_ID = re.compile(r"GO:\d{7}")
_TAXON = re.compile(r"taxon:(\d+)(\|taxon:\d+)?")


#: Largest share of illegal annotation lines :func:`read_gaf` skips (counted);
#: above it the file is refused. GO's own files have none; a few malformed
#: lines occur in member databases' files (goatools reads past them too).
MAX_ILLEGAL_SHARE = 0.01
#: Columns of a GAF 2.x line: 17, or 15-16 when the optional trailing columns
#: 16 and 17 (annotation extension, gene product form id) are left off.
GAF_MIN_COLUMNS = 15
_SHOWN_ILLEGAL = 5


def _qualifier_ok(v: str) -> bool:
    tokens = v.split("|") if v else []
    return tokens.count("NOT") <= 1 and all(t == "NOT" or t in QUALIFIER_RELATIONS for t in tokens)


#: The field checks of a data line: column -> (is legal, what is expected).
_FIELD_CHECKS = {
    "DB": (lambda v: v != "", "a database name (e.g. UniProtKB, SGD)"),
    "DB_Object_ID": (lambda v: v != "", "an identifier"),
    "GO_ID": (lambda v: _GO_ID.fullmatch(v) is not None, "a GO id GO:nnnnnnn"),
    "Evidence_Code": (lambda v: v in EVIDENCE_CODES, f"a GO evidence code ({', '.join(sorted(EVIDENCE_CODES))})"),
    "Aspect": (lambda v: v in ASPECTS, "P, F or C"),
    "Taxon": (lambda v: _TAXON.fullmatch(v) is not None, "taxon:N or taxon:N|taxon:M"),
    "Qualifier": (_qualifier_ok, f"NOT and/or a GAF relation ({', '.join(sorted(QUALIFIER_RELATIONS))})"),
}


def _field_problem(name: str, got: str) -> str:
    return (f"column {GAF_COLUMNS.index(name) + 1} ({name}): expected {_FIELD_CHECKS[name][1]}, "
            f"got {got!r}")


def read_gaf(path: str | Path, max_illegal_share: float = MAX_ILLEGAL_SHARE) -> tuple[pd.DataFrame, dict]:
    """Read a GO annotation file in GAF 2.x (plain or gzip).

    What is read follows what GO consortium member databases write (and
    what goatools' GAF reader accepts): ``!`` comment lines anywhere, the
    ``!gaf-version: 2.x`` line first or after other header comments
    (``!generated-by``, ``!date-generated``, URLs, ...), data lines of 17
    tab-separated columns or 15-16 when the optional columns 16-17 are left
    off. Illegal data lines (another number of columns, an empty DB or
    DB_Object_ID, a GO id not ``GO:nnnnnnn``, an unknown evidence code, an
    aspect not P/F/C, a qualifier outside NOT and the GAF relations, a taxon
    not ``taxon:N``) are skipped and counted, up to ``max_illegal_share`` of
    the data lines.

    Parameters
    ----------
    path : path
        GAF 2.0/2.1/2.2, e.g. ``sgd.gaf.gz`` or ``goa_human.gaf.gz`` of a
        GO release (https://release.geneontology.org/<date>/annotations/).
    max_illegal_share : float
        Largest share of illegal data lines skipped (default
        :data:`MAX_ILLEGAL_SHARE`, 1 %).

    Returns
    -------
    rows : DataFrame, one row per legal annotation line
        ``line`` (1-based line number in the file), ``DB``,
        ``DB_Object_ID``, ``DB_Object_Symbol``, ``NOT`` (bool: the
        qualifier has NOT), ``Qualifier``, ``GO_ID``, ``Evidence_Code``,
        ``Aspect``, ``DB_Object_Synonym``, ``Taxon`` (the object's taxon id,
        int64); the string columns are categoricals.
    info : dict
        ``gaf_version``, ``lines``, ``comment_lines``, ``blank_lines``,
        ``illegal_lines_skipped``, ``rows`` (legal data lines).

    Raises
    ------
    InputError
        If the file is missing, empty, compressed other than gzip, or a
        truncated or corrupt gzip; no ``!gaf-version: 2.x`` line comes before
        the first data line (what the file looks like is said, e.g. an OBO
        or a GPAD file), or the version is not 2.x; no data line; or more
        than ``max_illegal_share`` of the data lines are illegal (the count,
        and the first lines with what is wrong in each, are named).
    """
    cols: list[list[str]] = [[] for _ in _KEEP]
    lines_of: list[int] = []
    cache: dict[str, str] = {}
    intern = cache.setdefault
    info = {"gaf_version": None, "lines": 0, "comment_lines": 0, "blank_lines": 0, "illegal_lines_skipped": 0,
            "rows": 0}
    wrong_width: list[tuple[int, str]] = []     # (line, problem): the first few lines of another width
    n_wrong_width = 0
    with open_text(path, "a GAF 2.x annotation file") as fh:
        lineno = 0
        try:
            keep = _KEEP
            appenders = [c.append for c in cols]
            add_line = lines_of.append
            versioned = False
            for lineno, line in enumerate(fh, start=1):
                if line.startswith("!"):
                    info["comment_lines"] += 1
                    if info["gaf_version"] is None and line[1:13].lower() == "gaf-version:":
                        version = line[13:].strip()
                        if not re.fullmatch(r"2(\.\d+)?", version):
                            raise InputError(f"{path}: line {lineno}: GAF version {version}; expected 2.x (17 "
                                             "columns: GAF 2.0, 2.1 or 2.2); download the file of a current GO "
                                             "release")
                        info["gaf_version"] = version
                        versioned = True
                    continue
                line = line.rstrip("\r\n")
                if not line.strip():
                    info["blank_lines"] += 1
                    continue
                if not versioned:
                    raise InputError(f"{path}: line {lineno}: expected the GAF header '!gaf-version: 2.2' (GAF "
                                     f"2.x), found {describe_content(path)}; give a GO annotation file in GAF 2.x, "
                                     "e.g. sgd.gaf.gz or goa_human.gaf.gz of a GO release (https://release."
                                     "geneontology.org/<date>/annotations/)")
                f = line.split("\t")
                if not GAF_MIN_COLUMNS <= len(f) <= len(GAF_COLUMNS):
                    n_wrong_width += 1
                    if len(wrong_width) < _SHOWN_ILLEGAL:
                        width = f"expected {GAF_MIN_COLUMNS} to {len(GAF_COLUMNS)} (GAF 2.x)"
                        wrong_width.append((lineno, f"{len(f)} tab-separated columns, {width}"))
                    continue
                for app, k in zip(appenders, keep):
                    v = f[k]
                    app(intern(v, v))
                add_line(lineno)
        except UnicodeDecodeError as err:
            raise InputError(f"{path}: line {lineno + 1}: not UTF-8 text ({err.reason})") from None
    info["lines"] = lineno
    if info["gaf_version"] is None:
        raise InputError(f"{path}: no '!gaf-version: 2.x' line and no annotation line; expected a GAF 2.x file, "
                         f"found {describe_content(path)}")
    n_data = len(lines_of) + n_wrong_width
    if not n_data:
        raise InputError(f"{path}: no annotation line (only the header and '!' comments)")
    line_no = np.asarray(lines_of, dtype=np.int64)
    names = [GAF_COLUMNS[k] for k in _KEEP]
    table = {n: pd.Categorical(c) for n, c in zip(names, cols)}
    del cols

    illegal = np.zeros(len(line_no), dtype=bool)
    problems = list(wrong_width)
    for name, (ok, _) in _FIELD_CHECKS.items():
        cat = table[name]
        bad = [i for i, v in enumerate(cat.categories) if not ok(v)]
        if bad:
            rows_bad = np.isin(cat.codes, bad) & ~illegal      # each line counted once, by its first problem
            for r in np.flatnonzero(rows_bad)[:_SHOWN_ILLEGAL]:
                problems.append((int(line_no[r]), _field_problem(name, cat.categories[cat.codes[r]])))
            illegal |= rows_bad
    n_illegal = n_wrong_width + int(illegal.sum())
    problems = sorted(problems)[:_SHOWN_ILLEGAL]
    shown = "; ".join(f"line {n}, {what}" for n, what in problems)
    if n_illegal > max_illegal_share * n_data or n_illegal == n_data:
        raise InputError(f"{path}: {shown}{' ...' if n_illegal > len(problems) else ''} ({n_illegal:,} illegal "
                         f"of {n_data:,} annotation lines, {100 * n_illegal / n_data:.2g} %; at most "
                         f"{100 * max_illegal_share:g} % are skipped); check that this is a complete GAF 2.x file")
    if n_illegal:
        log.warning("%s: %d illegal annotation line(s) of %d skipped: %s", path, n_illegal, n_data, shown)
        keep_rows = ~illegal
        line_no = line_no[keep_rows]
        table = {n: c[keep_rows].remove_unused_categories() for n, c in table.items()}
    info["illegal_lines_skipped"] = n_illegal
    info["rows"] = len(line_no)
    qual = table["Qualifier"]
    is_not = np.array(["NOT" in v.split("|") for v in qual.categories], dtype=bool)
    taxa = table["Taxon"]
    taxon_of = np.array([int(_TAXON.fullmatch(v).group(1)) for v in taxa.categories], dtype=np.int64)
    out = pd.DataFrame({"line": line_no, **{n: table[n] for n in names if n != "Taxon"}})
    out["NOT"] = is_not[qual.codes] if len(is_not) else np.zeros(len(out), bool)
    out["Taxon"] = taxon_of[taxa.codes]
    return out, info
