"""Undirected edge tables: cleaning, reading a TSV edge list, adjacency.

An edge table has columns ``protein_a < protein_b`` and ``weight``
(float64), one row per unordered pair. Every cleaning step is counted and
returned, never silent: self-loops are dropped (a diffusion kernel's
Laplacian ignores them anyway); duplicate pairs (in either orientation) are
merged, keeping the largest weight; negative, missing or non-numeric
weights are errors naming the file and the row.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from biokernels.errors import InputError
from biokernels.io.text import read_table

__all__ = ["adjacency_matrix", "clean_edges", "component_summary", "node_count", "read_edge_list"]


def read_edge_list(path: str | Path, source_col: str = "protein_a", target_col: str = "protein_b",
                   weight_col: str | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Read and clean an undirected edge list.

    Parameters
    ----------
    path : path
        Tab-separated file with a header (gzip allowed).
    source_col, target_col : str
        Columns with the two protein identifiers.
    weight_col : str, optional
        Column of non-negative weights; all weights are 1 when omitted.

    Returns
    -------
    edges : DataFrame with columns ``protein_a``, ``protein_b``, ``weight``
        (float64), one row per unordered pair, ``protein_a < protein_b``.
    counts : dict
        ``rows``, ``self_loops_dropped``, ``duplicates_merged``, ``edges``.

    Raises
    ------
    InputError
        If the file is missing, empty or malformed, a column is missing, an
        identifier is empty, a weight is missing, non-numeric, infinite or
        negative (the 1-based data row is named), or no edge remains.
    """
    table = read_table(path)
    return clean_edges(table, str(path), source_col, target_col, weight_col)


def clean_edges(table: pd.DataFrame, origin: str, source_col: str = "protein_a",
                target_col: str = "protein_b", weight_col: str | None = None
                ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Validate and clean an edge table already in memory (see
    :func:`read_edge_list`; ``origin`` names the file in error messages)."""
    needed = [source_col, target_col] + ([weight_col] if weight_col else [])
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise InputError(f"{origin}: missing column(s) {missing}; found {list(table.columns)}")
    a = table[source_col].astype(str).str.strip()
    b = table[target_col].astype(str).str.strip()
    empty = np.flatnonzero((a == "") | (b == ""))
    if empty.size:
        raise InputError(f"{origin}: data row {empty[0] + 1}: empty protein identifier")
    if weight_col:
        w = pd.to_numeric(table[weight_col], errors="coerce")
        bad = np.flatnonzero(w.isna().to_numpy() | ~np.isfinite(w.to_numpy(float, na_value=np.nan)))
        if bad.size:
            raise InputError(f"{origin}: data row {bad[0] + 1}, column {weight_col!r}: "
                             f"expected a finite number, got {table[weight_col].iloc[bad[0]]!r}")
        neg = np.flatnonzero((w < 0).to_numpy())
        if neg.size:
            raise InputError(f"{origin}: data row {neg[0] + 1}, column {weight_col!r}: "
                             f"negative weight {w.iloc[neg[0]]} (weights must be >= 0)")
        w = w.to_numpy(float)
    else:
        w = np.ones(len(table))
    lo = np.where(a < b, a, b)
    hi = np.where(a < b, b, a)
    edges = pd.DataFrame({"protein_a": lo, "protein_b": hi, "weight": w})
    loops = edges["protein_a"] == edges["protein_b"]
    edges = edges[~loops]
    merged = edges.groupby(["protein_a", "protein_b"], as_index=False, sort=True)["weight"].max()
    if merged.empty:
        raise InputError(f"{origin}: the network has no edges (after dropping {int(loops.sum())} self-loops)")
    counts = {"rows": len(table), "self_loops_dropped": int(loops.sum()),
              "duplicates_merged": int(len(edges) - len(merged)), "edges": len(merged)}
    return merged, counts


def adjacency_matrix(edges: pd.DataFrame, proteins: list[str] | None = None
                     ) -> tuple[list[str], sp.csr_matrix]:
    """Symmetric sparse adjacency of a cleaned edge table.

    Parameters
    ----------
    edges : DataFrame with ``protein_a``, ``protein_b``, ``weight``
    proteins : list of str, optional
        Node order; defaults to the sorted proteins of ``edges``. Proteins
        without edges may be listed (isolated nodes).

    Returns
    -------
    proteins : list of str, length n
    A : scipy.sparse.csr_matrix, shape (n, n), float64, symmetric

    Raises
    ------
    InputError
        If an edge names a protein absent from ``proteins``.
    """
    if proteins is None:
        proteins = sorted(set(edges["protein_a"]) | set(edges["protein_b"]))
    index = {p: i for i, p in enumerate(proteins)}
    unknown = (set(edges["protein_a"]) | set(edges["protein_b"])) - index.keys()
    if unknown:
        raise InputError(f"edges name {len(unknown)} protein(s) not in the node list, "
                         f"e.g. {sorted(unknown)[:3]}")
    i = edges["protein_a"].map(index).to_numpy()
    j = edges["protein_b"].map(index).to_numpy()
    w = edges["weight"].to_numpy(float)
    n = len(proteins)
    A = sp.coo_matrix((np.r_[w, w], (np.r_[i, j], np.r_[j, i])), shape=(n, n)).tocsr()
    return list(proteins), A


def component_summary(A: sp.spmatrix) -> dict[str, int]:
    """Connected components of an adjacency matrix (scipy.sparse.csgraph).

    Returns
    -------
    dict with ``components``, ``largest_component``, ``isolated_nodes``.
    """
    n_comp, lab = sp.csgraph.connected_components(A, directed=False)
    sizes = np.bincount(lab)
    deg = np.asarray((A != 0).sum(axis=1)).ravel()
    return {"components": int(n_comp), "largest_component": int(sizes.max()) if sizes.size else 0,
            "isolated_nodes": int((deg == 0).sum())}


def node_count(edges: pd.DataFrame) -> int:
    """Distinct proteins (genes) of an edge table, both columns together."""
    return int(pd.unique(np.concatenate([edges["protein_a"].to_numpy(object),
                                         edges["protein_b"].to_numpy(object)])).size)
