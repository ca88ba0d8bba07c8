"""GEO platform annotation (probe -> gene symbol): GEO's ``GPLnnn.annot.gz``,
a platform SOFT or the platform's "full table" (:func:`read_platform_annotation`).

**Multi-gene probes.** An annotation cell naming several genes
(``DDR1 /// MIR4640``) marks a probe set whose sequence matches several loci:
its signal cannot be given to one gene, so by default (``multi_gene="drop"``)
it is dropped and counted (``probes_multi_gene``); ``"first"`` keeps the
first symbol listed, as GEO2R-derived scripts often do. Empty symbols and
Affymetrix's ``---`` are counted as ``probes_without_symbol``. The layouts
are described in ``docs/io_readers_notes.md``."""

from __future__ import annotations

import logging
import re
from dataclasses import dataclass
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.geo.files import _NOT_TEXT_TABLES, _lines, _looks, _open_text

log = logging.getLogger(__name__)


#: Rules for probes annotated to several genes (see the module docstring).
MULTI_GENE_RULES = ("drop", "first")
#: Symbol columns tried, in order, when none is configured.
SYMBOL_COLUMNS = ("Gene Symbol", "Gene symbol", "GENE_SYMBOL", "Symbol", "SYMBOL", "gene_symbol")
#: Affymetrix's "no symbol" mark in annotation tables.
_NO_SYMBOL = {"", "---"}


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
