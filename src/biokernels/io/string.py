"""STRING protein networks (von Mering et al. 2005; STRING v12) as gene-level
weighted edge tables for pathway-induced kernels (PIMKL, Manica et al. 2019,
Section 2.1-2.2 and Supplementary S.1).

The edge table is that of :mod:`biokernels.io.edges` (``protein_a <
protein_b``, ``weight``; here the "proteins" are gene symbols). Every
cleaning step is counted and returned (and logged); malformed input raises
:class:`~biokernels.errors.InputError` naming the file, the 1-based data
row, the column and what was expected.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.edges import clean_edges, node_count
from biokernels.io.text import read_table

__all__ = ["STRING_CHANNELS", "STRING_PRIOR", "UNMAPPED_WARN_FRACTION", "combine_string_scores",
           "read_string_network"]

log = logging.getLogger(__name__)

#: STRING v12 evidence channels (columns of the protein.links.full files and of
#: the ``human_string_v12`` extract), in file order.
STRING_CHANNELS = ("neighborhood", "neighborhood_transferred", "fusion", "cooccurence", "homology",
                   "coexpression", "coexpression_transferred", "experiments", "experiments_transferred",
                   "database", "database_transferred", "textmining", "textmining_transferred")

#: STRING's prior probability of a random protein pair interacting (used to
#: prior-correct channel scores before combining them; von Mering et al. 2005).
STRING_PRIOR = 0.041

#: A STRING read warns when more than this fraction of its rows has an
#: identifier the mapping does not know (a wrong or partial mapping file).
UNMAPPED_WARN_FRACTION = 0.25


def _read_mapping(mapping: dict[str, str] | str | Path) -> tuple[dict[str, str], str]:
    """Identifier -> symbol dict and a description of where it came from
    (the file and its two columns, or "a dict of N identifiers")."""
    if isinstance(mapping, dict):
        return {str(k): str(v) for k, v in mapping.items()}, f"the mapping dict ({len(mapping)} identifiers)"
    table = read_table(mapping)
    if table.shape[1] < 2:
        raise InputError(f"{mapping}: expected 2 columns (identifier, gene symbol), found {table.shape[1]}")
    ids = table.iloc[:, 0].str.strip()
    sym = table.iloc[:, 1].str.strip()
    keep = (ids != "") & (sym != "")
    dup = ids[keep].duplicated(keep=False)
    if dup.any():
        raise InputError(f"{mapping}: identifier {ids[keep][dup].iloc[0]!r} is mapped more than once "
                         f"(expected one symbol per identifier)")
    where = (f"{mapping} (column {table.columns[0]!r} -> {table.columns[1]!r}, "
             f"{int(keep.sum())} identifiers)")
    return dict(zip(ids[keep], sym[keep])), where


def combine_string_scores(channel_scores: np.ndarray, prior: float = STRING_PRIOR) -> np.ndarray:
    """Combine STRING channel scores into one confidence, STRING's way.

    Each channel score ``s`` (0-1) is prior-corrected,
    ``s' = max(s - p, 0) / (1 - p)``, the channels are combined as
    independent evidence, ``c' = 1 - prod(1 - s')``, and the prior is added
    back, ``c = c' + p (1 - c')`` (von Mering et al. 2005; STRING's
    ``combine_subscores``). STRING's homology correction of the
    co-occurrence and text-mining channels is not applied, so on all
    channels the result is close to, not equal to, ``combined_score``.

    Parameters
    ----------
    channel_scores : ndarray, shape (n_edges, n_channels)
        Scores on the 0-1 scale (STRING's 0-999 divided by 1000).
    prior : float

    Returns
    -------
    ndarray, shape (n_edges,), in [prior, 1]
    """
    s = np.clip((np.asarray(channel_scores, float) - prior) / (1.0 - prior), 0.0, 1.0)
    c = 1.0 - np.prod(1.0 - s, axis=1)
    return c + prior * (1.0 - c)


def read_string_network(links_path: str | Path, score_threshold: float = 0.0,
                        channels: list[str] | None = None,
                        id_cols: tuple[str, str] = ("symbol_a", "symbol_b"),
                        mapping: dict[str, str] | str | Path | None = None,
                        score_col: str = "combined_score") -> tuple[pd.DataFrame, dict[str, int]]:
    """Read a STRING edge table into a gene-symbol weighted edge table.

    The default layout is the ``human_string_v12`` extract (dmfind's STRING
    v12 igraph object, ``string_v12_human_entrez_symbol_700_400k3.tsv.gz``):
    tab-separated with a header ``entrez_a, entrez_b, symbol_a, symbol_b``,
    the STRING channel columns and ``combined_score`` (0-999). A STRING
    download (``protein.links[.full].v12.0.txt.gz``: space-separated
    ``protein1 protein2 ... combined_score``) works with
    ``id_cols=("protein1", "protein2")`` and ``mapping`` (Ensembl protein id ->
    symbol, e.g. from ``protein.info``'s ``#string_protein_id,
    preferred_name``), after converting spaces to tabs.

    Weight = score / 1000 (so in [0, 1)). With ``channels``, the score is
    recomputed from those channels only (:func:`combine_string_scores`);
    otherwise ``score_col`` is used.

    Parameters
    ----------
    links_path : path
        Tab-separated edge table with a header (gzip allowed).
    score_threshold : float
        Keep edges with score >= this, on STRING's 0-1000 scale (e.g. 700
        for "high confidence"); 0 keeps all.
    channels : list of str, optional
        Channel columns to combine (see :data:`STRING_CHANNELS`).
    id_cols : (str, str)
        The two identifier columns.
    mapping : dict or path, optional
        Identifier -> gene symbol (a dict, or a 2-column TSV with header).
        Edges with an unmapped end are dropped and counted; more than
        :data:`UNMAPPED_WARN_FRACTION` of the rows dropped so is logged as a
        warning (counts, the mapping file and columns, example identifiers).
    score_col : str
        Combined-score column when ``channels`` is None.

    Returns
    -------
    edges : DataFrame ``protein_a``, ``protein_b`` (gene symbols,
        ``protein_a < protein_b``), ``weight`` (float64, score / 1000)
    counts : dict
        ``rows``, ``unmapped_dropped``, ``below_threshold``,
        ``self_loops_dropped`` (after symbol mapping, e.g. two ids of one
        gene), ``duplicates_merged`` (largest weight kept), ``edges``,
        ``genes``.

    Raises
    ------
    InputError
        If the file or a column is missing, an identifier is empty, or a
        score is missing, non-numeric, negative or above 1000 (the 1-based
        data row and column are named), no row has both identifiers mapped
        (the row count, the identifier columns and the mapping file and
        columns are named), or no edge remains.
    ValueError
        If ``score_threshold`` is in (0, 1) (the 0-1 scale) or above 1000.
    """
    if not (score_threshold == 0 or 1 <= score_threshold <= 1000):
        raise ValueError(f"{links_path}: score_threshold {score_threshold!r}: expected 0 or a value on "
                         "STRING's 0-1000 scale (e.g. 700 for high confidence); a value in (0, 1) looks "
                         "like the 0-1 scale and would keep every edge")
    table = read_table(links_path)
    cols = [*id_cols, *(channels if channels else [score_col])]
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise InputError(f"{links_path}: missing column(s) {missing}; found {list(table.columns)}")
    scores = []
    for col in cols[2:]:
        v = pd.to_numeric(table[col].str.strip(), errors="coerce").to_numpy(float)
        bad = np.flatnonzero(~np.isfinite(v) | (v < 0) | (v > 1000))
        if bad.size:
            raise InputError(f"{links_path}: data row {bad[0] + 1}, column {col!r}: expected a score "
                             f"in [0, 1000], got {table[col].iloc[bad[0]]!r}")
        scores.append(v)
    if channels:
        score = 1000.0 * combine_string_scores(np.column_stack(scores) / 1000.0)
    else:
        score = scores[0]
    a = table[id_cols[0]].str.strip()
    b = table[id_cols[1]].str.strip()
    empty = np.flatnonzero(((a == "") | (b == "")).to_numpy())
    if empty.size:
        raise InputError(f"{links_path}: data row {empty[0] + 1}: empty identifier in {list(id_cols)}")
    counts = {"rows": len(table), "unmapped_dropped": 0}
    if mapping is not None:
        m, where = _read_mapping(mapping)
        ids_a, ids_b = a, b
        a, b = a.map(m), b.map(m)
        unmapped = (a.isna() | b.isna()).to_numpy()
        n_unmapped = int(unmapped.sum())
        counts["unmapped_dropped"] = n_unmapped
        if n_unmapped:
            bad_ids = pd.unique(np.concatenate([ids_a[a.isna()].to_numpy(object),
                                                ids_b[b.isna()].to_numpy(object)]))
            example = (f"identifiers of columns {list(id_cols)} such as {list(bad_ids[:3])} "
                       f"({len(bad_ids)} distinct unmapped) against mapping keys such as {list(m)[:3]}")
            if n_unmapped == len(table):
                raise InputError(f"{links_path}: every one of the {len(table)} rows has an identifier that "
                                 f"{where} does not map to a gene symbol: {example}; check that the mapping's "
                                 f"first column holds the identifiers of {list(id_cols)}")
            if n_unmapped > UNMAPPED_WARN_FRACTION * len(table):
                log.warning("%s: %d of %d rows (%.0f%%) dropped: an identifier not mapped by %s; %s",
                            links_path, n_unmapped, len(table), 100.0 * n_unmapped / len(table), where, example)
        a, b, score = a[~unmapped], b[~unmapped], score[~unmapped]
    keep = score >= score_threshold
    counts["below_threshold"] = int((~keep).sum())
    sub = pd.DataFrame({"a": a.to_numpy()[keep], "b": b.to_numpy()[keep], "w": score[keep] / 1000.0})
    edges, c = clean_edges(sub, str(links_path), "a", "b", "w")
    counts.update(self_loops_dropped=c["self_loops_dropped"], duplicates_merged=c["duplicates_merged"],
                  edges=c["edges"], genes=node_count(edges))
    log.info("%s: STRING network %s", links_path, counts)
    return edges, counts
