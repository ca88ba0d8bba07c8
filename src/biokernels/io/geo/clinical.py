"""The clinical table of a series whose survival is not in its sample
characteristics (GSE2034's "Patient clinical parameters"): a TSV with ``#``
comment lines, or a family SOFT holding a ``!series_table_begin`` ...
``!series_table_end`` block (:func:`read_clinical_table`)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.geo.files import _NOT_TEXT_TABLES, _lines, _looks, _open_text, _split


def read_clinical_table(path: str | Path, sample_col: str | None = None) -> tuple[pd.DataFrame, pd.Series]:
    """A per-sample clinical table.

    Parameters
    ----------
    path : path
        Plain or gzip: a tab-separated table (leading ``#`` lines and blank
        lines skipped; first other line = header), or a GEO family SOFT
        (``GSEnnn_family.soft.gz``) whose series record holds a table between
        ``!series_table_begin`` and ``!series_table_end`` (GSE2034's "Patient
        clinical parameters"); reading stops at the table's end.
    sample_col : str, optional
        The column of GSM ids; default: the first column whose every
        non-empty value is a GSM id.

    Returns
    -------
    table : DataFrame of str, indexed by GSM id, one column per header field
    lines : Series of int, the line number of each row (same index)

    Raises
    ------
    InputError
        Missing or wrong file (what it looks like is said), a SOFT file
        without a series table, a row with more fields than the header, no
        GSM column (the columns are listed) or ``sample_col`` absent,
        a duplicated or empty sample id (lines named).
    """
    path = Path(path)
    fh, head = _open_text(path, "a clinical table (TSV, or a GEO family SOFT with a series table)")
    soft = head.lstrip().startswith((b"^", b"!"))
    looks = _looks(path)
    if looks.kind in _NOT_TEXT_TABLES:
        fh.close()
        raise InputError(f"{path}: expected a clinical table; the file looks like {looks}")
    rows: list[tuple[int, str]] = []
    with fh:
        if soft:
            inside = False
            for n, line in _lines(fh):
                low = line.strip().lower()
                if low.startswith("!series_table_begin"):
                    inside = True
                    continue
                if low.startswith("!series_table_end"):
                    break
                if inside and line.strip():
                    rows.append((n, line))
            else:
                if not inside:
                    raise InputError(f"{path}: a GEO SOFT file without a '!series_table_begin' block: it holds no "
                                     "series clinical table (give a TSV with one row per sample instead)")
                raise InputError(f"{path}: no '!series_table_end' after '!series_table_begin': truncated file")
        else:
            for n, line in _lines(fh):
                if not line.strip() or (not rows and line.startswith("#")):
                    continue
                rows.append((n, line))
    if len(rows) < 2:
        raise InputError(f"{path}: expected a header line and at least one row, found {len(rows)} line(s)")
    header = [h.strip() for h in _split(rows[0][1])]
    body, at = [], []
    for n, line in rows[1:]:
        cells = [c.strip() for c in _split(line)]
        if len(cells) > len(header):
            raise InputError(f"{path}, line {n}: {len(cells)} fields, more than the header's {len(header)} "
                             f"(line {rows[0][0]})")
        body.append(cells + [""] * (len(header) - len(cells)))
        at.append(n)
    if len(set(header)) < len(header):
        raise InputError(f"{path}, line {rows[0][0]}: duplicated column name(s) "
                         f"{sorted({h for h in header if header.count(h) > 1})}")
    table = pd.DataFrame(body, columns=header)
    if sample_col is None:
        gsm = re.compile(r"^GSM\d+$")
        cands = [c for c in header
                 if table[c].ne("").any() and table[c].map(lambda v: v == "" or bool(gsm.match(v))).all()]
        if not cands:
            raise InputError(f"{path}, line {rows[0][0]}: no column holds GSM ids (columns {header}); "
                             "set sample_col")
        sample_col = cands[0]
    elif sample_col not in header:
        raise InputError(f"{path}, line {rows[0][0]}: no column {sample_col!r} (sample_col); columns {header}")
    ids = table[sample_col]
    if (ids == "").any():
        raise InputError(f"{path}, line {at[int(np.flatnonzero(ids == '')[0])]}: empty sample id "
                         f"(column {sample_col!r})")
    if ids.duplicated().any():
        d = ids[ids.duplicated()].iloc[0]
        w = [at[i] for i in np.flatnonzero(ids == d)]
        raise InputError(f"{path}, lines {w[0]} and {w[1]}: sample {d!r} appears twice (column {sample_col!r})")
    table.index = pd.Index(ids.to_numpy())
    return table, pd.Series(at, index=table.index, dtype="int64")
