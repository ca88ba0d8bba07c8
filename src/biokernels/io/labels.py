"""Multi-label protein-function tables (one task per function).

**Registry** (:data:`LABEL_READERS`): a label ``format`` of the config (a
diffusion source's ``label_format``) -> its reader, called with the format's
settings as keyword arguments (named as the config keys) and returning a 0/1
DataFrame (proteins x functions), or that DataFrame and a dict of counts
(what was read and dropped). A reader with a ``proteins`` parameter is given
the network's protein ids by the caller (to map identifiers and count term
sizes on the network). Adding a format is a reader of that shape plus one
registry line (and the format and its keys in the config schema).
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.go import load_gaf
from biokernels.io.opener import open_text
from biokernels.io.text import read_table


def _read_lines(path: str | Path, what: str) -> list[str]:
    if not Path(path).is_file():
        raise InputError(f"{path}: expected a file of {what}, one per line")
    with open_text(path) as fh:   # plain or compressed, told by its bytes; damaged: InputError
        lines = [line.strip() for line in fh if line.strip()]
    if not lines:
        raise InputError(f"{path}: the file is empty (expected {what}, one per line)")
    dup = pd.Index(lines)[pd.Index(lines).duplicated()]
    if len(dup):
        raise InputError(f"{path}: {what} must be unique; {len(dup)} repeated, e.g. {list(dup[:3])}")
    return lines


def read_mips_funcat(genes_path: str | Path, terms_path: str | Path,
                     adjacency_path: str | Path) -> pd.DataFrame:
    """Read MIPS FunCat annotations in the Mashup benchmark layout.

    Parameters
    ----------
    genes_path : path
        One gene (yeast ORF) per line; line i is gene index i (1-based).
    terms_path : path
        One FunCat code per line (e.g. ``11.02``); line i is term index i.
    adjacency_path : path
        ``gene_index <tab> term_index`` per annotation, both 1-based.

    Returns
    -------
    DataFrame of 0/1, shape (n_genes, n_terms), index ``protein`` (ORF),
    columns the FunCat codes (as strings).

    Raises
    ------
    InputError
        If a file is missing or empty, a gene or term is listed twice, or
        an index is out of range or not an integer (file and row named).

    Source: Cho, Berger & Peng (Cell Systems 2016) Mashup data files.
    """
    genes = _read_lines(genes_path, "gene identifiers")
    terms = _read_lines(terms_path, "FunCat terms")
    pairs = read_table(adjacency_path, header=False)
    if pairs.shape[1] < 2:
        raise InputError(f"{adjacency_path}: expected two tab-separated columns (gene_index, term_index)")
    short = np.flatnonzero((pairs.iloc[:, 1].str.strip() == "").to_numpy())
    if short.size:
        raise InputError(f"{adjacency_path}: row {short[0] + 1}: expected two tab-separated columns "
                         "(gene_index, term_index), found one")
    idx = pairs.iloc[:, :2].apply(pd.to_numeric, errors="coerce")
    for col, n, what in ((0, len(genes), "gene"), (1, len(terms), "term")):
        v = idx[col]
        bad = np.flatnonzero((v.isna() | (v < 1) | (v > n) | (v != np.floor(v))).to_numpy())
        if bad.size:
            raise InputError(f"{adjacency_path}: row {bad[0] + 1}, column {col + 1}: expected a {what} "
                             f"index in 1..{n}, got {pairs.iloc[bad[0], col]!r}")
    Y = np.zeros((len(genes), len(terms)), dtype=int)
    Y[idx[0].to_numpy(int) - 1, idx[1].to_numpy(int) - 1] = 1
    return pd.DataFrame(Y, index=pd.Index(genes, name="protein"), columns=terms)


def load_mips_funcat(mips_genes_path: str | Path, mips_terms_path: str | Path,
                     mips_adjacency_path: str | Path) -> pd.DataFrame:
    """Label format ``mips_funcat``: :func:`read_mips_funcat` with a data
    set's config keys as argument names (genes, terms and gene-term pairs of
    the Mashup layout). Returns and raises as :func:`read_mips_funcat`."""
    return read_mips_funcat(mips_genes_path, mips_terms_path, mips_adjacency_path)


#: Label formats by the config's name (the schema's enum of a diffusion
#: source's ``label_format`` lists exactly these keys,
#: tests/unit/test_registries.py). Each reader takes the format's settings as
#: keyword arguments and returns a DataFrame of 0/1, shape (n_proteins,
#: n_functions), index the protein identifiers, columns the functions, or
#: ``(that DataFrame, counts dict)``; one with a ``proteins`` parameter gets
#: the network's protein ids from the caller.
LABEL_READERS = {
    "mips_funcat": load_mips_funcat,   # MIPS FunCat, Mashup benchmark files (Cho, Berger & Peng 2016)
    "gaf": load_gaf,                   # GO annotations, GAF 2.x + OBO ontology, propagated (biokernels.io.go)
}


def select_tasks(labels: pd.DataFrame, proteins: list[str], min_annotated: int,
                 max_annotated: int | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Restrict a label table to the network's proteins and keep the tasks
    with at least ``min_annotated`` (and at most ``max_annotated``) positive
    proteins there.

    Proteins of the network without any annotation stay, with 0 in every
    task (they are negatives, as in the paper's setting where each task is
    one function against the rest). Proteins annotated but absent from the
    network cannot be predicted from it: they are dropped and counted.

    Parameters
    ----------
    labels : DataFrame of 0/1, index proteins, columns tasks
    proteins : list of str
        The network's proteins (row order of the result).
    min_annotated : int
        Minimum number of positive network proteins for a task to be kept.
    max_annotated : int, optional
        Maximum number of positive network proteins (None: no bound), e.g.
        to leave out GO terms as general as "biological_process".

    Returns
    -------
    tasks : DataFrame of 0/1, shape (len(proteins), n_kept_tasks)
    counts : dict with ``annotated_not_in_network``, ``network_unannotated``,
        ``tasks_total``, ``tasks_kept`` and, with ``max_annotated``,
        ``tasks_below_min`` and ``tasks_above_max``.

    Raises
    ------
    InputError
        If no task keeps ``min_annotated`` positives (and at most
        ``max_annotated``), or labels are not 0/1.
    """
    values = labels.to_numpy()
    if not np.isin(values, (0, 1)).all():
        raise InputError("labels must be 0/1")
    annotated = labels.index[labels.sum(axis=1) > 0]
    in_net = set(proteins)
    Y = labels.reindex(proteins, fill_value=0)
    Y = Y.fillna(0).astype(int)
    sizes = Y.sum(axis=0)
    upper = max_annotated if max_annotated is not None else np.inf
    keep = Y.columns[(sizes >= min_annotated) & (sizes <= upper)]
    counts = {"annotated_not_in_network": int(sum(p not in in_net for p in annotated)),
              "network_unannotated": int((Y.sum(axis=1) == 0).sum()), "tasks_total": labels.shape[1]}
    if max_annotated is not None:    # the window's two ends counted apart
        counts.update(tasks_below_min=int((sizes < min_annotated).sum()), tasks_above_max=int((sizes > upper).sum()))
    counts["tasks_kept"] = len(keep)
    if len(keep) == 0:
        window = f">= {min_annotated}" + (f" and <= {max_annotated}" if max_annotated is not None else "")
        raise InputError(f"no task has {window} annotated proteins in the network ({counts})")
    out = Y[keep]
    out.index.name = "protein"
    return out, counts
