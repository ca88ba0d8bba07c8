"""Pathway Commons SIF networks as undirected, unweighted gene-level edge
tables for pathway-induced kernels (PIMKL, Manica et al. 2019, Section 2.1).

The edge table is that of :mod:`biokernels.io.edges`. Every cleaning step is
counted and returned (and logged); malformed input raises
:class:`~biokernels.errors.InputError` naming the file and the 1-based line.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.edges import clean_edges, node_count
from biokernels.io.opener import open_text

__all__ = ["read_sif"]

log = logging.getLogger(__name__)

#: Column names of the known SIF-like layouts, as (source, type, target).
_SIF_HEADERS = (("a.gn", "type", "b.gn"),                                   # SingleCellSignalR PwC extract
                ("PARTICIPANT_A", "INTERACTION_TYPE", "PARTICIPANT_B"))     # Pathway Commons extended SIF


def read_sif(path: str | Path, interaction_types: list[str] | None = None
             ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Read a Pathway Commons SIF file as an undirected, unweighted gene network.

    Three layouts are recognised from the first line:

    * a header ``a.gn, b.gn, type[, pathway...]`` (the
      ``human_pathwaycommons_reactome_kegg`` extract);
    * a header ``PARTICIPANT_A, INTERACTION_TYPE, PARTICIPANT_B[, ...]``
      (Pathway Commons extended SIF; only its first block, up to the first
      blank line, is read);
    * no header: plain SIF, ``source<TAB>type<TAB>target`` per line.

    Direction and type are dropped (PIMKL uses undirected sub-networks,
    Section 2.1); every edge gets weight 1.0. Pathway Commons also lists
    small molecules (ChEBI ids) as participants: pass a symbol-level file or
    filter them before (they simply never match a gene set).

    Parameters
    ----------
    path : path
        Tab-separated file (gzip allowed).
    interaction_types : list of str, optional
        Keep only these SIF types (e.g. ``["in-complex-with",
        "controls-state-change-of"]``); all when None.

    Returns
    -------
    edges : DataFrame ``protein_a``, ``protein_b`` (``protein_a <
        protein_b``), ``weight`` (1.0)
    counts : dict
        ``rows``, ``type_filtered`` (rows dropped by ``interaction_types``),
        ``self_loops_dropped``, ``duplicates_merged`` (same unordered pair
        with another type or direction), ``edges``, ``genes``, and
        ``type:<name>`` rows per interaction type in the file.

    Raises
    ------
    InputError
        If the file is missing or empty, a line has fewer than 3 fields, a
        participant or type is empty (1-based line named), a requested type
        is absent from the file, or no edge remains.
    """
    with open_text(path, "gzip" if Path(path).suffix == ".gz" else None, newline="") as fh:
        lines = fh.read().split("\n")
    lines = [ln.rstrip("\r") for ln in lines]
    first = lines[0].split("\t") if lines else [""]
    header = next((h for h in _SIF_HEADERS if set(h) <= set(first)), None)
    if header is None:
        col, start = (0, 1, 2), 0
    else:
        col, start = tuple(first.index(h) for h in header), 1
    nf = max(col) + 1
    rows, linenos = [], []
    for k in range(start, len(lines)):
        line = lines[k]
        if not line.strip():
            if header == _SIF_HEADERS[1]:
                break  # extended SIF: the node block follows a blank line
            continue
        f = line.split("\t", nf)
        if len(f) < nf:
            raise InputError(f"{path}: line {k + 1}: expected at least {nf} tab-separated "
                             f"fields (source, type, target), found {len(f)}")
        rows.append((f[col[0]].strip(), f[col[1]].strip(), f[col[2]].strip()))
        linenos.append(k + 1)
    if not rows:
        raise InputError(f"{path}: no interaction found (expected 'source<TAB>type<TAB>target' lines)")
    table = pd.DataFrame(rows, columns=["a", "type", "b"], dtype=object)
    for k, what in (("a", "source"), ("type", "interaction type"), ("b", "target")):
        empty = (table[k] == "").to_numpy()
        if empty.any():
            raise InputError(f"{path}: line {linenos[int(np.flatnonzero(empty)[0])]}: empty {what} field")
    type_counts = table["type"].value_counts()
    counts: dict[str, int] = {"rows": len(table), "type_filtered": 0}
    if interaction_types is not None:
        absent = sorted(set(interaction_types) - set(type_counts.index))
        if absent:
            raise InputError(f"{path}: interaction type(s) {absent} not in the file; "
                             f"found {sorted(type_counts.index)}")
        keep = table["type"].isin(interaction_types)
        counts["type_filtered"] = int((~keep).sum())
        table = table[keep]
    edges, c = clean_edges(table, str(path), "a", "b", None)
    counts.update(self_loops_dropped=c["self_loops_dropped"], duplicates_merged=c["duplicates_merged"],
                  edges=c["edges"], genes=node_count(edges))
    counts.update({f"type:{k}": int(v) for k, v in type_counts.items()})
    log.info("%s: SIF network %s", path, counts)
    return edges, counts
