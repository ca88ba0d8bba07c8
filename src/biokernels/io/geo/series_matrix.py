"""GEO series matrices (``GSEnnn_series_matrix.txt.gz``): ``!Series_`` and
``!Sample_`` metadata lines, then the expression table between
``!series_matrix_table_begin`` and ``!series_matrix_table_end``
(:func:`read_series_matrix`); and GEO2R's test of whether the values need
log2 (:func:`log2_needed`). The layout is described in
``docs/io_readers_notes.md``."""

from __future__ import annotations

import io
import re
from collections.abc import Iterable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.geo.files import _looks, _open_binary, _split


#: Cells read as missing in a series matrix's expression table (GEO writes
#: ``null`` or leaves the cell empty).
EXPRESSION_NA = ("", "null", "NULL", "Null", "NA", "NaN", "nan")


#: A series-matrix metadata line whose key is followed by a comma or semicolon
#: (``"!Sample_geo_accession","GSM1"`` of R's write.csv, ``!Series_title,...``
#: of a spreadsheet saved as CSV), not GEO's tab.
_CSV_META = re.compile(r'^"?!(?:Series|Sample)_\w+"?([,;])')


@dataclass
class SeriesMatrix:
    """A parsed series matrix.

    Attributes
    ----------
    path : str
    series : dict str -> list of str
        ``!Series_<field>`` -> its values (repeated lines appended in order),
        e.g. ``series["geo_accession"] == ["GSE2034"]``.
    samples : DataFrame, shape (n_samples, n_fields), str
        ``!Sample_<field>`` per sample (index: GSM ids in file order); a
        field on several lines (other than the characteristics) has its
        values joined with ``"; "``.
    characteristics : list of (int, list of str)
        The ``!Sample_characteristics_ch1`` lines: (line number, one cell
        per sample), cells unparsed (``"t.rfs: 1826"``).
    expression : DataFrame, shape (n_probes, n_samples), float64
        The table: index = probe ids (``ID_REF``), columns = GSM ids;
        missing cells NaN.
    table_line : int
        Line number of the table header (``"ID_REF" ...``); probe row ``i``
        (0-based) is on line ``table_line + 1 + i`` unless blank lines
        intervene (:attr:`probe_lines` has the exact numbers).
    probe_lines : ndarray of int, shape (n_probes,)
        Line number of each probe row.
    missing_values : int
        Cells read as missing (``null``, empty, ``na_values``).
    """

    path: str
    series: dict[str, list[str]]
    samples: pd.DataFrame
    characteristics: list[tuple[int, list[str]]]
    expression: pd.DataFrame
    table_line: int
    probe_lines: np.ndarray = field(repr=False)
    missing_values: int = 0

    @property
    def sample_ids(self) -> list[str]:
        """GSM ids, in file order."""
        return list(self.samples.index)

    @property
    def platform_id(self) -> str | None:
        """``!Series_platform_id`` (``GPL96``), None when absent; the first
        when a series lists several."""
        vals = self.series.get("platform_id") or []
        return vals[0].strip() if vals else None


def read_series_matrix(path: str | Path, na_values: Iterable[str] = ()) -> SeriesMatrix:
    """Read a GEO series matrix (plain or gzip; gzip recognised by content).

    Parameters
    ----------
    path : path
    na_values : iterable of str
        Cells read as missing beyond GEO's ``null`` and empty cells
        (:data:`EXPRESSION_NA`), e.g. a submitter's sentinel ``"-666"``.

    Returns
    -------
    SeriesMatrix
        ``expression`` is probes x samples float64 (22,283 x n for U133A).

    Raises
    ------
    InputError
        The file is missing, not a series matrix (SOFT, HTML, MINiML, ...:
        said what it looks like), comma- or semicolon-separated (a re-export),
        a ``.gz`` that is not gzip, truncated (no ``!series_matrix_table_end``,
        or a gzip stream that ends early or is corrupt: the lines read
        before are said); a ``!Sample_`` line with a number of
        values different from ``!Sample_geo_accession``'s; a table header
        that does not start with ``ID_REF`` or whose GSM ids differ from
        ``!Sample_geo_accession``; a row with a wrong number of fields, a
        duplicated or empty probe id, or a value that is not a number —
        the line, probe and sample are named.
    """
    path = Path(path)
    fh, head = _open_binary(path, "a GEO series matrix (GSEnnn_series_matrix.txt[.gz])")
    series: dict[str, list[str]] = {}
    sample_lines: list[tuple[int, str, list[str]]] = []
    begin = None
    with fh:
        for n, raw_line in enumerate(fh, start=1):
            line = raw_line.decode("utf-8", errors="replace").rstrip("\r\n")
            if not line.strip():
                continue
            if line.strip().lower() == "!series_matrix_table_begin":
                begin = n
                break
            csv_meta = _CSV_META.match(line)
            if csv_meta:
                sep = "comma" if csv_meta.group(1) == "," else "semicolon"
                raise InputError(f"{path}, line {n}: a {sep}-separated series matrix (found {line[:60]!r}); GEO "
                                 "series matrices are tab-separated: download the original "
                                 "GSEnnn_series_matrix.txt.gz from GEO, or re-export the file as tab-separated "
                                 "text")
            if line.startswith("!Series_"):
                key, _, rest = line.partition("\t")
                series.setdefault(key[len("!Series_"):], []).extend(_split(rest) if rest else [])
            elif line.startswith("!Sample_"):
                key, _, rest = line.partition("\t")
                sample_lines.append((n, key[len("!Sample_"):], _split(rest) if rest else []))
            elif line.startswith("!"):
                series.setdefault(line.partition("\t")[0][1:], []).extend(_split(line.partition("\t")[2]))
            else:
                raise InputError(f"{path}, line {n}: expected a '!Series_' or '!Sample_' metadata line "
                                 f"before the table, found {line[:60]!r}; the file looks like "
                                 f"{_looks(path)}, not a series matrix")
        if begin is None:
            raise InputError(f"{path}: no '!series_matrix_table_begin' line; the file looks like "
                             f"{_looks(path)}, not a GEO series matrix (GSEnnn_series_matrix.txt.gz)")
        buf = fh.read()  # the table, as bytes (pandas parses bytes; no decoded copy of the whole file)
    end = buf.rfind(b"\n!series_matrix_table_end")
    end = end + 1 if end >= 0 else (0 if buf.startswith(b"!series_matrix_table_end") else -1)
    if end < 0:
        m = re.search(rb"^!series_matrix_table_end[ \t]*\r?$", buf, flags=re.MULTILINE | re.IGNORECASE)
        if m is None:
            raise InputError(f"{path}: no '!series_matrix_table_end' after the table (begun on line {begin}): "
                             "the file is truncated")
        end = m.start()

    ids_line = [(n, v) for n, k, v in sample_lines if k == "geo_accession"]
    if not ids_line:
        raise InputError(f"{path}: no '!Sample_geo_accession' line (expected one GSM id per sample)")
    ids_at, ids = ids_line[0]
    ids = [s.strip() for s in ids]
    if len(set(ids)) < len(ids):
        dup = sorted({s for s in ids if ids.count(s) > 1})
        raise InputError(f"{path}, line {ids_at}: !Sample_geo_accession: sample id(s) {dup[:3]} appear twice")
    fields: dict[str, list[list[str]]] = {}
    characteristics = []
    for n, key, vals in sample_lines:
        if len(vals) != len(ids):
            raise InputError(f"{path}, line {n}: !Sample_{key} has {len(vals)} value(s), expected {len(ids)} "
                             f"(one per sample of !Sample_geo_accession, line {ids_at})")
        if key == "characteristics_ch1":
            characteristics.append((n, [v.strip() for v in vals]))
        else:
            fields.setdefault(key, []).append(vals)
    samples = pd.DataFrame({k: ["; ".join(x for x in col if x) for col in zip(*lines)]
                            for k, lines in fields.items()}, index=pd.Index(ids, name=None))

    expression, probe_lines, n_missing = _parse_table(buf, end, begin, path, ids, na_values)
    return SeriesMatrix(path=str(path), series=series, samples=samples, characteristics=characteristics,
                        expression=expression, table_line=begin + 1, probe_lines=probe_lines,
                        missing_values=n_missing)


def _parse_table(buf: bytes, end: int, begin: int, path: Path, ids: list[str], na_values: Iterable[str]
                 ) -> tuple[pd.DataFrame, np.ndarray, int]:
    """The expression table: ``buf[:end]`` is the text between the begin
    marker (line ``begin``) and the end marker."""
    lines = buf[:end].split(b"\n")  # a transient copy, for the checks below
    if lines and lines[-1] == b"":
        lines.pop()
    nonblank = [i for i, b in enumerate(lines) if b.strip()]
    if not nonblank:
        raise InputError(f"{path}, line {begin + 1}: the expression table is empty (no header); "
                         "GEO publishes no values in the series matrix of some series (e.g. sequencing)")
    hdr_i = nonblank[0]
    header = [h.strip() for h in _split(lines[hdr_i].decode("utf-8", errors="replace").rstrip("\r"))]
    hdr_line = begin + 1 + hdr_i
    if header[0] != "ID_REF":
        raise InputError(f"{path}, line {hdr_line}: table header starts with {header[0]!r}, expected \"ID_REF\"")
    if header[1:] != ids:
        only_t = [s for s in header[1:] if s not in ids]
        only_m = [s for s in ids if s not in header[1:]]
        raise InputError(f"{path}, line {hdr_line}: the table's sample columns differ from !Sample_geo_accession: "
                         f"{len(header) - 1} column(s) vs {len(ids)} sample(s); only in the table {only_t[:3]}, "
                         f"only in !Sample_geo_accession {only_m[:3]}"
                         + (" (same ids, other order)" if not only_t and not only_m else ""))
    rows = nonblank[1:]
    if not rows:
        raise InputError(f"{path}, line {hdr_line}: the expression table has a header but no probe rows; "
                         "GEO publishes no values in the series matrix of some series (e.g. sequencing)")
    want = len(header) - 1
    for i in rows:  # pandas would pad a short row with NaN: count the fields ourselves
        if lines[i].count(b"\t") != want:
            cells = _split(lines[i].decode("utf-8", errors="replace").rstrip("\r"))
            if len(cells) != len(header):
                raise InputError(f"{path}, line {begin + 1 + i}: {len(cells)} field(s), expected {len(header)} "
                                 f"(\"ID_REF\" and {want} sample(s)), probe {cells[0]!r}")
    probe_lines = np.asarray([begin + 1 + i for i in rows])
    blank = len(nonblank) < len(lines)
    data = b"\n".join(lines[i] for i in nonblank) if blank else buf
    del lines
    na = sorted(set(EXPRESSION_NA) | {str(v) for v in na_values})
    table = pd.read_csv(io.BytesIO(data), sep="\t", quotechar='"', index_col=0, na_values=na,
                        keep_default_na=False, dtype={"ID_REF": str}, low_memory=False, encoding="utf-8",
                        encoding_errors="replace", nrows=len(rows))
    del data
    probes = pd.Index([str(p).strip() for p in table.index])
    if (probes == "").any() or table.index.isna().any():
        r = int(np.flatnonzero((probes == "") | table.index.isna())[0])
        raise InputError(f"{path}, line {probe_lines[r]}: empty probe id (column \"ID_REF\")")
    if probes.has_duplicates:
        dup = probes[probes.duplicated()][0]
        at = probe_lines[np.flatnonzero(probes == dup)]
        raise InputError(f"{path}, lines {at[0]} and {at[1]}: probe {dup!r} appears twice (column \"ID_REF\")")
    table.index = probes
    table.columns = ids
    bad_cols = [c for c in table.columns if not pd.api.types.is_numeric_dtype(table[c])]
    if bad_cols:
        first = None
        for c in bad_cols:
            num = pd.to_numeric(table[c], errors="coerce")
            bad = num.isna() & table[c].notna()
            if bad.any():
                r = int(np.flatnonzero(bad.to_numpy())[0])
                if first is None or r < first[0]:
                    first = (r, c, table[c].iloc[r])
            table[c] = num
        if first is not None:
            r, c, v = first
            raise InputError(f"{path}, line {probe_lines[r]}, column {c!r} (probe {probes[r]!r}): expected a "
                             f"number or null, got {v!r}")
    table = table.astype("float64")
    return table, probe_lines, int(table.isna().to_numpy().sum())


def log2_needed(values: np.ndarray) -> bool:
    """GEO2R's test of whether expression values are on a linear scale.

    With ``q`` the 0, 25, 50, 75, 99 and 100 % quantiles of the finite
    values: ``q99 > 100`` or ``(q100 - q0 > 50 and q25 > 0)`` (NCBI GEO2R's
    generated R script, ``LogC``). Returns False when there are no finite values.
    """
    v = np.asarray(values, dtype=float).ravel()
    v = v[np.isfinite(v)]
    if v.size == 0:
        return False
    q = np.quantile(v, [0.0, 0.25, 0.5, 0.75, 0.99, 1.0])
    return bool(q[4] > 100 or (q[5] - q[0] > 50 and q[1] > 0))
