"""GEO files: series matrices, platform (GPL) annotation tables and the
survival fields of a series' samples.

Layouts (NCBI GEO, "GEO file formats" and the files of
``https://ftp.ncbi.nlm.nih.gov/geo/``):

* **Series matrix** (``GSEnnn_series_matrix.txt.gz``, or
  ``GSEnnn-GPLmmm_series_matrix.txt.gz`` for a series on several
  platforms), tab-separated text, plain or gzip:

  - ``!Series_<field>`` lines: one or more quoted values; a field may be
    repeated on several lines (``!Series_summary``, ``!Series_contributor``);
  - ``!Sample_<field>`` lines: one quoted value per sample, in the order of
    ``!Sample_geo_accession``; ``!Sample_characteristics_ch1`` is repeated,
    one line per characteristic, each cell ``"key: value"`` (the k-th line
    need not hold the same key for every sample; a sample without a k-th
    characteristic has an empty cell);
  - the expression table between ``!series_matrix_table_begin`` and
    ``!series_matrix_table_end``: a header ``"ID_REF"  "GSM1" ...`` (quoted),
    then one row per probe, the probe id quoted, the values unquoted;
    a missing value is ``null`` or an empty cell.

* **Platform annotation** (probe -> gene symbol), one of

  - GEO's annotation file ``GPLnnn.annot.gz`` (``platforms/.../annot/``) or
    a platform SOFT (``GPLnnn_family.soft.gz``, ``GPLnnn.soft``): ``^``/``!``
    /``#`` preamble lines, the table between ``!platform_table_begin`` and
    ``!platform_table_end``;
  - the platform's "full table" as GEO's web page saves it
    (``GPLnnn-nnnnn.txt``): ``#ID = ...`` column descriptions, then a header
    line and the rows.

  Both have an ``ID`` column and a symbol column (``Gene Symbol`` in
  Affymetrix submitter tables, ``Gene symbol`` in GEO's annot files,
  ``GENE_SYMBOL`` on Agilent arrays, ...). A MINiML ``GPLnnn-tbl-1.txt`` has
  no header line: it is refused with a message (its columns are named only
  in the MINiML XML).

* **Clinical table** of a series whose survival is not in its sample
  characteristics (GSE2034: the series record's "Patient clinical
  parameters" table): a TSV with ``#`` comment lines, or a family SOFT
  holding a ``!series_table_begin`` ... ``!series_table_end`` block.

**Multi-gene probes.** An annotation cell naming several genes
(``DDR1 /// MIR4640``) marks a probe set whose sequence matches several loci:
its signal cannot be given to one gene, so by default (``multi_gene="drop"``)
it is dropped and counted (``probes_multi_gene``); ``"first"`` keeps the
first symbol listed, as GEO2R-derived scripts often do. Empty symbols and
Affymetrix's ``---`` are counted as ``probes_without_symbol``.

**log2.** Series matrices hold what the submitters deposited: MAS5 signals
(GSE2034, linear scale) or log2 values (RMA, GSE7390). ``log2="auto"``
applies GEO2R's rule (NCBI's GEO2R R script): with the 0, 25, 50, 75, 99
and 100 % quantiles ``q`` of all values, the data are taken as linear and
log2-transformed when ``q99 > 100`` or ``(q100 - q0 > 50 and q25 > 0)``;
values <= 0 then become missing (counted ``values_nonpositive``).

Every reader raises :class:`~biokernels.errors.InputError` naming the file,
the line and the field; a file whose content does not match what is
expected (an HTML error page, a SOFT file given as a series matrix, a ``.gz``
that is not gzip) is described by what it looks like
(:func:`biokernels.io.sniff.sniff`).
"""

from __future__ import annotations

import csv
import io
import logging
import re
from collections.abc import Iterable, Iterator, Mapping
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.opener import open_binary
from biokernels.io.sniff import Content, describe_content, sniff

log = logging.getLogger(__name__)

__all__ = ["SeriesMatrix", "PlatformAnnotation", "read_series_matrix", "read_platform_annotation",
           "read_clinical_table", "characteristic_values", "characteristics_table", "log2_needed",
           "MULTI_GENE_RULES", "EXPRESSION_NA"]

_GZIP_MAGIC = b"\x1f\x8b"
#: Cells read as missing in a series matrix's expression table (GEO writes
#: ``null`` or leaves the cell empty).
EXPRESSION_NA = ("", "null", "NULL", "Null", "NA", "NaN", "nan")
#: Rules for probes annotated to several genes (see the module docstring).
MULTI_GENE_RULES = ("drop", "first")
#: Symbol columns tried, in order, when none is configured.
SYMBOL_COLUMNS = ("Gene Symbol", "Gene symbol", "GENE_SYMBOL", "Symbol", "SYMBOL", "gene_symbol")
#: Affymetrix's "no symbol" mark in annotation tables.
_NO_SYMBOL = {"", "---"}


# ---------------------------------------------------------------------------
# opening files, and saying what a wrong file looks like

#: Content kinds (biokernels.io.sniff.KINDS) that cannot be a GEO text table
#: once gzip is undone: refused with what they look like.
_NOT_TEXT_TABLES = frozenset({"empty", "html", "xml", "zip", "excel", "binary", "gzip", "bzip2", "xz", "zstd",
                              "hdf5", "parquet", "npy", "pickle", "git_lfs", "json", "utf16"})


def _looks(path: Path) -> Content:
    """What the file holds once gzip is undone (the readers here decompress
    gzip, nothing else): :func:`biokernels.io.sniff.sniff`."""
    content = sniff(path)
    return content.inner if content.kind == "gzip" and content.inner is not None else content


def _head(path: Path, n: int = 4096) -> tuple[bool, bytes]:
    """(is gzip, the first ``n`` bytes of the content, decompressed)."""
    with open(path, "rb") as fh:
        raw = fh.read(n)
    if raw[:2] != _GZIP_MAGIC:
        return False, raw
    with open_binary(path, "gzip") as fh:     # damaged gzip: InputError (biokernels.io.opener)
        return True, fh.read(n)


def _open_binary(path: str | Path, what: str) -> tuple[io.BufferedIOBase, bytes]:
    """Open a plain or gzip file as a binary handle; gzip is recognised by its
    magic bytes (downloads are stored without extension). Returns the handle
    and the head of the content (for messages). A truncated or corrupt gzip
    stream raises :class:`InputError` wherever it is met while reading
    (:func:`biokernels.io.opener.open_binary`)."""
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: expected {what}, found {'a folder' if path.is_dir() else 'nothing'}")
    is_gz, head = _head(path)
    if path.suffix == ".gz" and not is_gz:
        raise InputError(f"{path}: named .gz but not gzip-compressed; it looks like {describe_content(path)} "
                         f"(expected {what})")
    return open_binary(path, "gzip" if is_gz else None), head


def _open_text(path: str | Path, what: str) -> tuple[io.TextIOBase, bytes]:
    """As :func:`_open_binary`, decoded as UTF-8 (errors replaced, universal newlines)."""
    raw, head = _open_binary(path, what)
    return io.TextIOWrapper(raw, encoding="utf-8", errors="replace", newline=None), head


#: A series-matrix metadata line whose key is followed by a comma or semicolon
#: (``"!Sample_geo_accession","GSM1"`` of R's write.csv, ``!Series_title,...``
#: of a spreadsheet saved as CSV), not GEO's tab.
_CSV_META = re.compile(r'^"?!(?:Series|Sample)_\w+"?([,;])')


def _split(line: str) -> list[str]:
    """One tab-separated line of a GEO file, quotes removed (csv rules)."""
    return next(csv.reader([line], delimiter="\t", quotechar='"'))


def _lines(fh: Iterable[str]) -> Iterator[tuple[int, str]]:
    for n, line in enumerate(fh, start=1):
        yield n, line.rstrip("\r\n")


# ---------------------------------------------------------------------------
# series matrix

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


# ---------------------------------------------------------------------------
# sample characteristics

def _split_characteristic(cell: str) -> tuple[str | None, str]:
    """``"t.rfs: 1826"`` -> ``("t.rfs", "1826")``; a cell without a colon
    -> ``(None, cell)``. The key ends at the first ``": "`` (GEO joins the
    tag and the value so), else at the first ``":"``."""
    key, sep, value = cell.partition(": ")
    if not sep:
        key, sep, value = cell.partition(":")
    if not sep:
        return None, cell.strip()
    return key.strip(), value.strip()


def characteristics_table(sm: SeriesMatrix) -> pd.DataFrame:
    """The characteristics as a samples x keys table of strings (NaN where a
    sample lacks a key); cells without ``key:`` are under key ``""``.

    Raises
    ------
    InputError
        A sample with two different values for one key (file, lines, sample,
        key and values named).
    """
    values: dict[str, dict[str, str]] = {}
    where: dict[tuple[str, str], int] = {}
    for n, cells in sm.characteristics:
        for gsm, cell in zip(sm.sample_ids, cells):
            if not cell:
                continue
            key, value = _split_characteristic(cell)
            key = key or ""
            old = values.setdefault(key, {}).get(gsm)
            if old is not None and old != value:
                raise InputError(f"{sm.path}, lines {where[(gsm, key)]} and {n}: sample {gsm}: characteristic "
                                 f"{key!r} has two values {old!r} and {value!r}")
            values[key][gsm] = value
            where[(gsm, key)] = n
    return pd.DataFrame(values, index=pd.Index(sm.sample_ids)).reindex(columns=sorted(values))


def characteristic_values(sm: SeriesMatrix, key: str | None = None, regex: str | None = None,
                          field_name: str = "key") -> tuple[pd.Series, pd.Series]:
    """One characteristic per sample, by key or by regular expression.

    Parameters
    ----------
    sm : SeriesMatrix
    key : str, optional
        The characteristic's tag (``"t.rfs"``, ``"time rfs"``), compared
        with each cell's tag case-insensitively, surrounding spaces ignored.
    regex : str, optional
        Instead of ``key``: a regular expression with one capturing group,
        searched in every cell (``re.search``); the group is the value, e.g.
        ``'^DFS TIME \\(yrs\\):\\s*(\\S+)'``.
    field_name : str
        The config field that gave ``key``/``regex``, for messages.

    Returns
    -------
    values : Series of str (NaN for samples without the characteristic), indexed by GSM
    lines : Series of int (line number of each value; 0 where absent)

    Raises
    ------
    InputError
        Neither or both of ``key``/``regex``; a regex that does not compile
        or lacks exactly one group; a sample with two different values; no
        sample with the characteristic (the keys found are listed).
    """
    if (key is None) == (regex is None):
        raise InputError(f"{sm.path}: {field_name}: give a characteristic key or a regular expression (one of the two)")
    rx = None
    if regex is not None:
        try:
            rx = re.compile(regex)
        except re.error as err:
            raise InputError(f"{field_name}: {regex!r} is not a regular expression ({err})") from None
        if rx.groups != 1:
            raise InputError(f"{field_name}: {regex!r} has {rx.groups} capturing group(s); expected exactly one "
                             "(the value)")
    want = key.strip().lower() if key is not None else None
    values: dict[str, str] = {}
    lines: dict[str, int] = {}
    keys_seen: set[str] = set()
    for n, cells in sm.characteristics:
        for gsm, cell in zip(sm.sample_ids, cells):
            if not cell:
                continue
            k, v = _split_characteristic(cell)
            if k is not None:
                keys_seen.add(k)
            if rx is not None:
                m = rx.search(cell)
                if m is None:
                    continue
                v = (m.group(1) or "").strip()
            elif k is None or k.lower() != want:
                continue
            if gsm in values and values[gsm] != v:
                raise InputError(f"{sm.path}, lines {lines[gsm]} and {n}: sample {gsm}: {field_name} "
                                 f"{key or regex!r} matches two values {values[gsm]!r} and {v!r}")
            values[gsm] = v
            lines[gsm] = n
    if not values:
        raise InputError(f"{sm.path}: {field_name}: no sample has a !Sample_characteristics_ch1 "
                         f"{'with key ' + repr(key) if key is not None else 'matching ' + repr(regex)}; the keys "
                         f"found are {sorted(keys_seen)[:40]}")
    idx = pd.Index(sm.sample_ids)
    return (pd.Series(values, dtype=object).reindex(idx),
            pd.Series(lines, dtype="int64").reindex(idx).fillna(0).astype("int64"))


# ---------------------------------------------------------------------------
# clinical table (TSV, or a family SOFT's series table)

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


# ---------------------------------------------------------------------------
# platform annotation

@dataclass
class PlatformAnnotation:
    """Probe -> gene symbol of a GEO platform.

    Attributes
    ----------
    symbols : Series of str, indexed by probe id
        One symbol per kept probe (probes without a symbol, and multi-gene
        probes under ``multi_gene="drop"``, are absent).
    counts : dict
        ``platform_probes`` (rows of the table), ``probes_without_symbol``
        (empty or ``---``), ``probes_multi_gene`` (several genes: dropped
        with ``"drop"``, reduced to the first with ``"first"``),
        ``platform_probes_kept``.
    accession : str or None
        ``GPLnnn`` when the file names it (SOFT ``^PLATFORM``,
        ``!Platform_geo_accession``, annot ``!Annotation_platform``).
    symbol_col : str
        The column the symbols came from.
    probes : Index of str
        Every probe id of the table (kept or not).
    """

    symbols: pd.Series
    counts: dict[str, int]
    accession: str | None
    symbol_col: str
    probes: pd.Index


def _gds_message(path: Path, fh, n: int, gds: str) -> str:
    """What to say of a GEO DataSet (GDS) SOFT given as a platform (its
    ``^DATASET`` record or ``!dataset_table_begin`` met on line ``n``)."""
    platform = None
    for _, line in _lines(fh):     # the GDS's platform, within its few header lines
        key, _, val = line.partition("=")
        if key.strip().lower() == "!dataset_platform":
            platform = val.strip()
            break
        if line.strip().lower() == "!dataset_table_begin":
            break
    name = f" ({gds})" if gds.upper().startswith("GDS") else ""
    on = f" of platform {platform}" if platform else ""
    return (f"{path}, line {n}: looks like a GEO DataSet (GDS) SOFT file{name}{on}: its table holds values per "
            "sample (ID_REF, IDENTIFIER, GSM...), not a platform annotation; expected a platform (GPL) "
            f"annotation or SOFT file, e.g. {platform or 'GPLnnn'}.annot.gz or {platform or 'GPLnnn'}_family.soft.gz "
            "from GEO's platforms/ folder, or the platform's full table")


def read_platform_annotation(path: str | Path, id_col: str = "ID", symbol_col: str | None = None,
                             multi_gene: str = "drop") -> PlatformAnnotation:
    """Read a GEO platform annotation table: probe -> gene symbol.

    Parameters
    ----------
    path : path
        Plain or gzip (by content): ``GPLnnn.annot.gz``, a platform SOFT, or
        the web "full table" (see the module docstring).
    id_col : str
        Probe id column (``ID``).
    symbol_col : str, optional
        Symbol column; default the first of :data:`SYMBOL_COLUMNS` present.
    multi_gene : {"drop", "first"}
        Rule for probes naming several genes (``A /// B``): see the module
        docstring.

    Returns
    -------
    PlatformAnnotation

    Raises
    ------
    InputError
        Missing or wrong file (a series matrix, HTML page, a GEO DataSet
        (GDS) SOFT, ... : said what it looks like), a platform without a
        probe table (a sequencing platform's SOFT), no
        ``!platform_table_end`` (truncated), no ``id_col`` or symbol column in
        the header (the columns are listed; a headerless MINiML table is
        named as such), a row with more fields than the header, an empty or
        duplicated probe id (lines named); a truncated or corrupt gzip stream.
    ValueError
        ``multi_gene`` not in :data:`MULTI_GENE_RULES`.
    """
    if multi_gene not in MULTI_GENE_RULES:
        raise ValueError(f"multi_gene {multi_gene!r}: expected one of {MULTI_GENE_RULES}")
    path = Path(path)
    fh, head = _open_text(path, "a GEO platform annotation table (GPLnnn.annot.gz, a platform SOFT or full table)")
    looks = _looks(path)
    if looks.kind in _NOT_TEXT_TABLES or looks.kind == "geo_series_matrix":
        fh.close()
        raise InputError(f"{path}: expected a GEO platform annotation table; the file looks like {looks}")
    accession = technology = None
    rows: list[tuple[int, str]] = []
    with fh:
        state = "pre"  # pre -> table (SOFT) | plain
        for n, line in _lines(fh):
            if state == "pre":
                s = line.strip()
                if not s:
                    continue
                if s.lower() == "!platform_table_begin":
                    state = "table"
                    continue
                if s.startswith(("^", "!")):
                    key, _, val = s.partition("=")
                    k = key.strip().lower()
                    if k in ("^platform", "!platform_geo_accession", "!annotation_platform") and val.strip():
                        accession = accession or val.strip()
                    if k == "!platform_technology":
                        technology = val.strip()
                    if k in ("^dataset", "!dataset_table_begin"):
                        raise InputError(_gds_message(path, fh, n, val.strip()))
                    if k == "^sample" or k == "!series_matrix_table_begin":
                        break
                    continue
                if s.startswith("#"):
                    continue
                state = "plain"
                rows.append((n, line))
            elif state == "table":
                if line.strip().lower() == "!platform_table_end":
                    state = "done"
                    break
                if line.strip():
                    rows.append((n, line))
            else:
                if line.strip():
                    rows.append((n, line))
    if state == "pre":
        which = f"platform {accession}" if accession else "the platform"
        tech = f" ('!Platform_technology = {technology}')" if technology else ""
        raise InputError(f"{path}: {which} has no probe table (no '!platform_table_begin' block){tech}: a "
                         "sequencing platform? GEO ships no probe table for sequencing platforms (e.g. GPL16791, "
                         "Illumina HiSeq 2500). This reader needs a probe-to-gene table: a microarray platform's "
                         "GPLnnn.annot.gz, SOFT or full table, with an ID column and a gene symbol column")
    if state == "table":
        raise InputError(f"{path}: no '!platform_table_end' after the platform table: truncated file")
    hdr_n, hdr = rows[0]
    header = [h.strip() for h in hdr.split("\t")]
    if id_col not in header:
        hint = ""
        if re.match(r"^\S+_at$|^\d+$", header[0] or ""):
            hint = (" (the first line looks like data: a MINiML GPLnnn-tbl-1.txt has no header; use the "
                    "platform's annot/SOFT table or GEO's 'Download full table')")
        raise InputError(f"{path}, line {hdr_n}: no column {id_col!r} (id_col) in the header; columns "
                         f"{header[:12]}{hint}")
    if symbol_col is None:
        found = [c for c in SYMBOL_COLUMNS if c in header]
        if not found:
            raise InputError(f"{path}, line {hdr_n}: no gene symbol column (tried {list(SYMBOL_COLUMNS)}; set "
                             f"symbol_col); columns {header[:20]}")
        symbol_col = found[0]
    elif symbol_col not in header:
        raise InputError(f"{path}, line {hdr_n}: no column {symbol_col!r} (symbol_col); columns {header[:20]}")
    i_id, i_sym = header.index(id_col), header.index(symbol_col)
    ids, syms, at = [], [], []
    for n, line in rows[1:]:
        cells = line.split("\t")
        if len(cells) > len(header):
            raise InputError(f"{path}, line {n}: {len(cells)} fields, more than the header's {len(header)} "
                             f"(line {hdr_n})")
        ids.append(cells[i_id].strip().strip('"') if i_id < len(cells) else "")
        syms.append(cells[i_sym].strip().strip('"') if i_sym < len(cells) else "")
        at.append(n)
    probes = pd.Index(ids)
    if (probes == "").any():
        raise InputError(f"{path}, line {at[int(np.flatnonzero(probes == '')[0])]}: empty probe id "
                         f"(column {id_col!r})")
    if probes.has_duplicates:
        d = probes[probes.duplicated()][0]
        w = [at[i] for i in np.flatnonzero(probes == d)]
        raise InputError(f"{path}, lines {w[0]} and {w[1]}: probe {d!r} appears twice (column {id_col!r})")
    kept: dict[str, str] = {}
    none = multi = 0
    for p, s in zip(ids, syms):
        genes = list(dict.fromkeys(g.strip() for g in s.split("///") if g.strip() not in _NO_SYMBOL))
        if not genes:
            none += 1
        elif len(genes) > 1:
            multi += 1
            if multi_gene == "first":
                kept[p] = genes[0]
        else:
            kept[p] = genes[0]
    counts = {"platform_probes": len(ids), "probes_without_symbol": none, "probes_multi_gene": multi,
              "platform_probes_kept": len(kept)}
    log.info("%s: %d probes; %d without symbol, %d multi-gene (%s), %d kept (symbols from %r)", path, len(ids),
             none, multi, "dropped" if multi_gene == "drop" else "first symbol kept", len(kept), symbol_col)
    return PlatformAnnotation(symbols=pd.Series(kept, dtype=object), counts=counts, accession=accession,
                              symbol_col=symbol_col, probes=probes)


def parse_event(values: pd.Series, lines: pd.Series | None, origin: str, field_name: str,
                event_map: Mapping[str, int] | None = None) -> pd.Series:
    """Survival events as 0/1 floats (NaN when missing).

    ``event_map`` (case-insensitive keys, e.g. ``{"yes": 1, "no": 0}``) is
    applied first; other values must be numbers equal to 0 or 1; missing
    markers (empty, ``NA``, ``null``, ``?``, ...) give NaN.

    Raises
    ------
    InputError
        A value that is neither mapped, 0/1 nor missing (file, line, sample,
        field named).
    """
    emap = {str(k).strip().lower(): v for k, v in (event_map or {}).items()}
    out = {}
    for gsm, v in values.items():
        if not isinstance(v, str) or v.strip().lower() in _SURV_NA:
            out[gsm] = np.nan
            continue
        s = v.strip().lower()
        if s in emap:
            out[gsm] = float(emap[s])
            continue
        try:
            x = float(s)
        except ValueError:
            x = None
        if x not in (0.0, 1.0):
            where = f", line {int(lines[gsm])}" if lines is not None and lines.get(gsm, 0) else ""
            raise InputError(f"{origin}{where}: sample {gsm}: {field_name}: expected 0 or 1"
                             f"{' or one of ' + str(sorted(emap)) if emap else ''}, got {v!r}")
        out[gsm] = x
    return pd.Series(out, dtype="float64").reindex(values.index)


def parse_time(values: pd.Series, lines: pd.Series | None, origin: str, field_name: str) -> pd.Series:
    """Survival times as floats (NaN when missing: empty, ``NA``, ``null``, ...).

    Raises
    ------
    InputError
        A value that is not a number or a missing marker, or a negative time
        (file, line, sample and field named).
    """
    out = {}
    for gsm, v in values.items():
        if not isinstance(v, str) or v.strip().lower() in _SURV_NA:
            out[gsm] = np.nan
            continue
        try:
            x = float(v.strip())
        except ValueError:
            x = None
        if x is None or not np.isfinite(x) or x < 0:
            where = f", line {int(lines[gsm])}" if lines is not None and lines.get(gsm, 0) else ""
            raise InputError(f"{origin}{where}: sample {gsm}: {field_name}: expected a non-negative number "
                             f"(survival time), got {v!r}")
        out[gsm] = x
    return pd.Series(out, dtype="float64").reindex(values.index)


#: Survival cells read as missing (compared lower-case).
_SURV_NA = {"", "na", "n/a", "nan", "null", "none", "?", "--", "not available", "unknown"}
