"""BioGRID interactions (TAB3) as an undirected protein network.

Source: BioGRID, *BioGRID TAB 3.0 format*
(https://wiki.thebiogrid.org/doku.php/biogrid_tab_version_3.0), the layout
of the ``BIOGRID-ALL-<release>.tab3.txt`` and
``BIOGRID-ORGANISM-<organism>-<release>.tab3.txt`` files of the 3.x/4.x
releases (in ``.tab3.zip`` archives): a header line starting ``#BioGRID
Interaction ID``, 37 tab-separated columns, ``-`` for a missing value. The
columns read and the order in which rows are dropped and counted are in
:func:`read_biogrid_tab3` and docs/io_readers_notes.md; self-loops and
duplicate pairs are cleaned by :func:`biokernels.io.edges.clean_edges` (an
interaction reported by several experiments or papers is one edge). Edges
are unweighted (weight 1), as the paper's networks.
"""

from __future__ import annotations

import csv
import difflib
import logging
import re
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.edges import clean_edges
from biokernels.io.sniff import describe_content
from biokernels.io.text import open_text

log = logging.getLogger(__name__)

#: First header field of a BioGRID TAB2/TAB3 file.
TAB3_FIRST_COLUMN = "#BioGRID Interaction ID"
#: Columns of a BioGRID TAB2 file (TAB3 has 37).
TAB2_COLUMNS = 24
#: id_column setting -> the TAB3 column pair's name (without " A"/" B").
ID_COLUMNS = {
    "entrez": "Entrez Gene Interactor",
    "systematic": "Systematic Name Interactor",
    "symbol": "Official Symbol Interactor",
    "swissprot": "SWISS-PROT Accessions Interactor",
}
#: system_type setting -> the ``Experimental System Type`` values kept.
SYSTEM_TYPES = {"physical": ("physical",), "genetic": ("genetic",), "both": ("physical", "genetic")}
_SYSTEM_TYPE = "Experimental System Type"
_ORGANISM = ("Organism ID Interactor A", "Organism ID Interactor B")
MISSING = "-"
#: Lines parsed at a time (bounds the memory of the columns not kept).
CHUNK_ROWS = 200_000


def read_biogrid_tab3(path: str | Path, system_type: str = "physical", taxid: int | None = None,
                      id_column: str = "entrez", zip_member: str | None = None
                      ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Read a BioGRID TAB3 file into a cleaned undirected edge table.

    Parameters
    ----------
    path : path
        A ``.tab3.txt`` file (plain or gzip), or a ``.tab3.zip`` archive
        (then ``zip_member`` names the file inside when it holds several,
        e.g. ``BIOGRID-ORGANISM-Saccharomyces_cerevisiae_S288c-4.4.235.tab3.txt``).
    system_type : {"physical", "genetic", "both"}
        Interactions kept by ``Experimental System Type``.
    taxid : int, optional
        NCBI taxonomy id both interactors must have (e.g. 559292 yeast
        S288C, 9606 human); None keeps every pair, across organisms too.
    id_column : {"entrez", "systematic", "symbol", "swissprot"}
        The interactor ids that name the network's proteins: Entrez Gene
        ids, systematic names (yeast ORFs such as YAL001C), official
        symbols, or SWISS-PROT accessions.
    zip_member : str, optional
        The file to read in a zip archive.

    Returns
    -------
    edges : DataFrame ``protein_a``, ``protein_b`` (``protein_a < protein_b``),
        ``weight`` (float64, all 1), one row per unordered pair.
    counts : dict
        ``rows``, ``rows_other_system_type``, ``rows_other_organism``,
        ``rows_missing_id``, ``rows_several_ids``, ``self_loops_dropped``,
        ``duplicates_merged``, ``edges``, ``proteins``.

    Raises
    ------
    InputError
        Unknown setting value; a missing, empty or wrongly named file, or
        one that is not BioGRID TAB3 (what it looks like is said: TAB2,
        PSI-MITAB, an HTML page, ...); a TAB3 header without a column read
        here (the column and the closest header present are named); a
        truncated or corrupt gzip or zip member; a line (numbered) with more fields
        than the header, an empty field where BioGRID writes ``-`` (a short
        line), a system type other than physical/genetic, an organism id
        or Entrez id that is not an integer; or no interaction left.
    """
    if system_type not in SYSTEM_TYPES:
        raise InputError(f"BioGRID system type {system_type!r}: expected one of {sorted(SYSTEM_TYPES)}")
    if id_column not in ID_COLUMNS:
        raise InputError(f"BioGRID id column {id_column!r}: expected one of {sorted(ID_COLUMNS)}")
    id_cols = (f"{ID_COLUMNS[id_column]} A", f"{ID_COLUMNS[id_column]} B")
    with open_text(path, "a BioGRID TAB3 file (BIOGRID-*.tab3.txt)", member=zip_member) as fh:
        first = fh.readline().rstrip("\r\n")
        header = first.split("\t")
        # TAB2 (24 columns) names the organism "Organism Interactor A"; a header of more columns is TAB3's, even
        # with a column renamed (then the column is named below, with the closest one present)
        tab3_like = _ORGANISM[0] in header or len(header) > TAB2_COLUMNS
        if header[0] != TAB3_FIRST_COLUMN or not tab3_like:
            raise InputError(f"{path}: line 1: expected the BioGRID TAB3 header ('{TAB3_FIRST_COLUMN}', ..., "
                             f"'{_ORGANISM[0]}', ...; 37 columns), found {describe_content(path, zip_member)}; "
                             "give the TAB3 file of a BioGRID release (BIOGRID-ORGANISM-<release>.tab3.zip or "
                             "BIOGRID-ALL-<release>.tab3.zip, https://downloads.thebiogrid.org/BioGRID/"
                             "Release-Archive/)")
        needed = [_SYSTEM_TYPE, *_ORGANISM, *id_cols]
        missing = [c for c in needed if c not in header]
        if missing:
            near = {c: difflib.get_close_matches(c, [h for h in header if h not in needed], n=1, cutoff=0.6)
                    for c in missing}
            said = "; ".join(f"{c!r}" + (f" (closest header present: {near[c][0]!r})" if near[c] else "")
                             for c in missing)
            raise InputError(f"{path}: line 1: a BioGRID TAB3 header ({len(header)} columns) without column(s) "
                             f"{said}; the reader needs {needed} by these names: give the TAB3 file of a BioGRID "
                             "release as published, or restore the renamed column(s)")
        dup = sorted({c for c in header if header.count(c) > 1})
        if dup:
            raise InputError(f"{path}: line 1: column(s) {dup} appear more than once in the header")
        last = header[-1]
        keep = list(dict.fromkeys(needed + [last]))
        try:
            # every column parsed (so a line with more fields than the header is an error), in chunks of
            # CHUNK_ROWS lines of which only the columns read are kept
            chunks = pd.read_csv(fh, sep="\t", header=None, names=header, index_col=False, dtype=object,
                                 na_filter=False, quoting=csv.QUOTE_NONE, skip_blank_lines=False, engine="c",
                                 chunksize=CHUNK_ROWS)
            table = pd.concat([c[keep] for c in chunks], ignore_index=True)
        except pd.errors.ParserError as err:
            m = re.search(r"Expected (\d+) fields in line (\d+), saw (\d+)", str(err))
            if m:
                raise InputError(f"{path}: line {int(m.group(2)) + 1}: {m.group(3)} tab-separated fields, the header "
                                 f"has {m.group(1)}") from None
            raise InputError(f"{path}: cannot parse as BioGRID TAB3: {err}") from None
        except UnicodeDecodeError as err:
            raise InputError(f"{path}: not UTF-8 text ({err.reason})") from None
    line_of = np.arange(len(table)) + 2                      # the header is line 1

    def fail(mask, column, expected):
        i = int(np.flatnonzero(mask)[0])
        raise InputError(f"{path}: line {line_of[i]}, column {header.index(column) + 1} ({column!r}): expected "
                         f"{expected}, got {table[column].iloc[i]!r}")

    for col in keep:
        empty = (table[col] == "").to_numpy()
        if empty.any():
            fail(empty, col, f"a value or '{MISSING}' (BioGRID's missing value); the line may have fewer than "
                             f"{len(header)} tab-separated fields")
    kinds = table[_SYSTEM_TYPE]
    bad = ~kinds.isin(["physical", "genetic"]).to_numpy()
    if bad.any():
        fail(bad, _SYSTEM_TYPE, "physical or genetic")
    for col in _ORGANISM:
        bad = ~table[col].str.fullmatch(r"\d+").to_numpy(bool)
        if bad.any():
            fail(bad, col, "an NCBI taxonomy id (integer)")
    counts = {"rows": len(table)}
    t = table

    def drop(mask, key):
        nonlocal t, line_of
        counts[key] = int(mask.sum())
        t, line_of = t[~mask], line_of[~mask]

    drop(~t[_SYSTEM_TYPE].isin(SYSTEM_TYPES[system_type]).to_numpy(), "rows_other_system_type")
    if taxid is not None:
        tx = str(int(taxid))
        drop(((t[_ORGANISM[0]] != tx) | (t[_ORGANISM[1]] != tx)).to_numpy(), "rows_other_organism")
    else:
        counts["rows_other_organism"] = 0
    a, b = t[id_cols[0]], t[id_cols[1]]
    drop(((a == MISSING) | (b == MISSING)).to_numpy(), "rows_missing_id")
    a, b = t[id_cols[0]], t[id_cols[1]]
    drop((a.str.contains("|", regex=False) | b.str.contains("|", regex=False)).to_numpy(bool), "rows_several_ids")
    if id_column == "entrez":
        for col in id_cols:
            bad = ~t[col].str.fullmatch(r"\d+").to_numpy(bool)
            if bad.any():
                i = int(np.flatnonzero(bad)[0])
                raise InputError(f"{path}: line {line_of[i]}, column {header.index(col) + 1} ({col!r}): expected "
                                 f"an Entrez Gene id (integer) or '{MISSING}', got {t[col].iloc[i]!r}")
    if t.empty:
        raise InputError(f"{path}: no interaction left (system type {system_type}, taxid {taxid}, ids "
                         f"{id_column}): {counts}")
    edges, clean = clean_edges(t, str(path), id_cols[0], id_cols[1])
    counts.update(self_loops_dropped=clean["self_loops_dropped"], duplicates_merged=clean["duplicates_merged"],
                  edges=clean["edges"], proteins=len(set(edges["protein_a"]) | set(edges["protein_b"])))
    log.info("%s: BioGRID network (%s, taxid %s, ids %s) %s", path, system_type, taxid, id_column, counts)
    return edges, counts

