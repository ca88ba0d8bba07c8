"""Readers of the benchmark's inputs: Mashup's network files and the label
matrix of the annotated genes.

Mashup layout (Cho, Berger & Peng 2016; ``../shared/data/
yeast_mashup_string_mips/PROVENANCE.md``): a gene list (line i = node i,
1-based) and per network ``i <tab> j <tab> weight`` lines of 1-based node
indices. MIPS FunCat annotations are read by
:func:`biokernels.io.labels.read_mips_funcat`.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from biokernels.errors import InputError
from biokernels.io.labels import read_mips_funcat
from biokernels.io.opener import open_text

__all__ = ["read_gene_list", "read_mashup_network", "label_matrix", "network_summary"]


def read_gene_list(path: str | Path) -> list[str]:
    """Genes of a Mashup gene file, one per line (line i = node i, 1-based).

    Raises
    ------
    InputError
        Missing or empty file, a blank line inside the list, or a gene
        listed twice (file and line named).
    """
    if not Path(path).is_file():
        raise InputError(f"{path}: expected a file of gene identifiers, one per line")
    genes: list[str] = []
    seen: dict[str, int] = {}
    with open_text(path) as fh:
        lines = [line.rstrip("\r\n") for line in fh]
    while lines and not lines[-1].strip():
        lines.pop()
    for no, line in enumerate(lines, 1):
        g = line.strip()
        if not g:
            raise InputError(f"{path}: line {no}: empty line inside the gene list (line i is node i)")
        if g in seen:
            raise InputError(f"{path}: line {no}: gene {g!r} already listed on line {seen[g]}")
        seen[g] = no
        genes.append(g)
    if not genes:
        raise InputError(f"{path}: the file is empty (expected gene identifiers, one per line)")
    return genes


def read_mashup_network(path: str | Path, n_genes: int) -> sp.csr_array:
    """A Mashup network file as a symmetric sparse adjacency.

    Parameters
    ----------
    path : path
        ``i <tab> j <tab> weight`` per line (plain or gzip); ``i, j`` 1-based
        node indices in ``1..n_genes``, ``weight`` finite and >= 0. A pair
        may be listed in one or both orientations; when listed twice, the
        larger weight is kept (Mashup's files list each STRING link in both
        orientations with the same weight).
    n_genes : int
        Number of nodes (lines of the gene file).

    Returns
    -------
    scipy.sparse.csr_array, shape (n_genes, n_genes), float64, symmetric,
    zero diagonal (self-loops are dropped: the diffusion Laplacian cancels
    them and Mashup's RWR removes them).

    Raises
    ------
    InputError
        Missing or empty file, a line without three fields, a non-integer
        or out-of-range index, or a weight that is not a finite number >= 0;
        the file and line are named.
    """
    if not Path(path).is_file():
        raise InputError(f"{path}: expected a network file (i <tab> j <tab> weight per line)")
    rows, cols, vals = [], [], []
    with open_text(path) as fh:
        for no, line in enumerate(fh, 1):
            if not line.strip():
                continue
            f = line.split()
            if len(f) != 3:
                raise InputError(f"{path}: line {no}: expected 3 fields (i, j, weight), found {len(f)}")
            try:
                i, j = int(f[0]), int(f[1])
            except ValueError:
                raise InputError(f"{path}: line {no}: node indices must be integers, got {f[0]!r}, {f[1]!r}") from None
            if not (1 <= i <= n_genes and 1 <= j <= n_genes):
                raise InputError(f"{path}: line {no}: node index out of range 1..{n_genes}: {i}, {j}")
            try:
                w = float(f[2])
            except ValueError:
                raise InputError(f"{path}: line {no}: weight must be a number, got {f[2]!r}") from None
            if not np.isfinite(w) or w < 0:
                raise InputError(f"{path}: line {no}: weight must be finite and >= 0, got {f[2]!r}")
            if i != j:
                rows.append(i - 1)
                cols.append(j - 1)
                vals.append(w)
    if not rows:
        raise InputError(f"{path}: no edges (expected i <tab> j <tab> weight lines)")
    r = np.concatenate([rows, cols])
    c = np.concatenate([cols, rows])
    v = np.concatenate([vals, vals])
    # the larger weight of a pair listed more than once: sort by weight, keep the last per pair
    order = np.lexsort((v, c, r))
    r, c, v = r[order], c[order], v[order]
    last = np.ones(len(r), dtype=bool)
    last[:-1] = (r[1:] != r[:-1]) | (c[1:] != c[:-1])
    A = sp.csr_array((v[last], (r[last], c[last])), shape=(n_genes, n_genes))
    A.eliminate_zeros()
    return A


def label_matrix(genes: list[str], mips_genes_path, mips_terms_path, mips_adjacency_path,
                 min_genes: int) -> tuple[pd.DataFrame, dict[str, int]]:
    """The 0/1 label matrix of the network's genes for the terms with at least
    ``min_genes`` annotated network genes.

    Parameters
    ----------
    genes : list of str
        The network's genes (row order of the result).
    mips_*_path : paths
        Mashup's MIPS FunCat files (:func:`biokernels.io.labels.read_mips_funcat`).
    min_genes : int >= 1
        Minimum number of annotated network genes of a term.

    Returns
    -------
    Y : DataFrame of 0/1, shape (len(genes), n_terms kept), index ``gene``;
        genes without a kept term have an all-zero row (they stay in the
        network but are neither trained on nor scored).
    counts : dict ``terms_total``, ``terms_kept``, ``annotated_genes``
        (genes with a kept term), ``annotated_not_in_network``.

    Raises
    ------
    InputError
        As :func:`read_mips_funcat`; no term keeps ``min_genes`` genes.
    """
    labels = read_mips_funcat(mips_genes_path, mips_terms_path, mips_adjacency_path)
    in_net = set(genes)
    not_in = int(sum(g not in in_net for g in labels.index[labels.sum(axis=1) > 0]))
    Y = labels.reindex(genes, fill_value=0).astype(np.int8)
    keep = Y.columns[Y.sum(axis=0) >= int(min_genes)]
    if len(keep) == 0:
        raise InputError(f"{mips_adjacency_path}: no term has >= {min_genes} annotated genes in the network")
    Y = Y[keep]
    Y.index.name = "gene"
    counts = {"terms_total": int(labels.shape[1]), "terms_kept": int(len(keep)),
              "annotated_genes": int((Y.sum(axis=1) > 0).sum()), "annotated_not_in_network": not_in}
    return Y, counts


def network_summary(networks: dict[str, sp.csr_array], annotated: np.ndarray) -> pd.DataFrame:
    """One row per network: edges, nodes with an edge, annotated genes with
    an edge (``annotated`` bool (n,)). For logs and the README."""
    rows = []
    for name, A in networks.items():
        deg = np.asarray((A != 0).sum(axis=1)).ravel()
        rows.append({"network": name, "edges": int((A != 0).sum() // 2), "nodes_with_edges": int((deg > 0).sum()),
                     "annotated_with_edges": int(((deg > 0) & annotated).sum())})
    return pd.DataFrame(rows)


def synthetic_inputs(n_genes: int, n_edges: int, n_terms: int, n_networks: int, unannotated_fraction: float,
                     rng: np.random.Generator) -> tuple[list[str], dict[str, sp.csr_array], pd.DataFrame]:
    """A small planted benchmark for tests and the tiny workflow run.

    One network with functions planted through diffusion kernels
    (:func:`biokernels.synth.networks.planted_function_network`), its edges
    dealt at random into ``n_networks`` channels (``net1``, ``net2``, ...),
    and the labels of a random ``unannotated_fraction`` of the genes erased
    (they stay in the networks). Returns genes, networks (n, n) and the 0/1
    label DataFrame (n, n_terms) with index ``gene``.
    """
    from biokernels.synth.networks import planted_function_network

    edges, labels, _ = planted_function_network(n_genes, n_edges, n_terms, rng)
    genes = list(labels.index.astype(str))
    pos = {g: i for i, g in enumerate(genes)}
    a = edges["protein_a"].astype(str).map(pos).to_numpy()
    b = edges["protein_b"].astype(str).map(pos).to_numpy()
    w = edges["weight"].to_numpy(float)
    channel = rng.integers(n_networks, size=len(edges))
    nets = {}
    for k in range(n_networks):
        m = channel == k
        A = sp.csr_array((w[m], (a[m], b[m])), shape=(n_genes, n_genes))
        nets[f"net{k + 1}"] = (A + A.T).tocsr()
    Y = labels.astype(np.int8).copy()
    Y.index = pd.Index(genes, name="gene")
    erase = rng.random(n_genes) < unannotated_fraction
    Y.iloc[erase, :] = 0
    return genes, nets, Y


def load_inputs(source: dict, level: str | None = None, seed: int = 0
                ) -> tuple[list[str], dict[str, sp.csr_array], pd.DataFrame, dict]:
    """The genes, networks and labels of one configured source.

    Parameters
    ----------
    source : dict
        ``type`` ``mashup`` (``genes_path``, ``networks``: name ->
        ``{adjacency_path}``, the config's layout,
        ``levels``: level -> ``{genes_path, terms_path, adjacency_path}``,
        ``min_genes``), ``edgelist`` (``network_path``, ``source_col``,
        ``target_col``, ``weight_col``, ``levels`` as for mashup,
        ``min_genes``; one network named ``network``) or ``synthetic``
        (``generator``: ``n_genes``, ``n_edges``, ``n_terms``,
        ``n_networks``, ``unannotated_fraction``; each level an
        independent planted draw, from ``default_rng([seed, i])`` for the
        i-th level).
    level : str, optional
        The key of ``levels``.
    seed : int
        Seed of the synthetic generator.

    Returns
    -------
    genes, networks (name -> (n, n)), Y (n, t) 0/1 with index ``gene``,
    counts (dict, for the log and the tables).

    Raises
    ------
    InputError
        Unknown type or level, or as the readers.
    """
    kind = source.get("type")
    levels = source.get("levels", {})
    if level not in levels:
        raise InputError(f"unknown label level {level!r} (configured: {sorted(levels)})")
    if kind == "synthetic":
        g = source["generator"]
        rng = np.random.default_rng([seed, list(levels).index(level)])
        genes, nets, Y = synthetic_inputs(g["n_genes"], g["n_edges"], g["n_terms"], g["n_networks"],
                                          g["unannotated_fraction"], rng)
        return genes, nets, Y, {"terms_kept": Y.shape[1], "annotated_genes": int((Y.sum(axis=1) > 0).sum())}
    lab = levels[level]
    if kind == "mashup":
        genes = read_gene_list(source["genes_path"])
        nets = {name: read_mashup_network(net["adjacency_path"], len(genes))
                for name, net in source["networks"].items()}
    elif kind == "edgelist":
        from biokernels.io.networks import adjacency_matrix, read_edge_list

        edges, _ = read_edge_list(source["network_path"], source.get("source_col", "protein_a"),
                                  source.get("target_col", "protein_b"), source.get("weight_col"))
        genes, A = adjacency_matrix(edges)
        nets = {"network": sp.csr_array(A)}
    else:
        raise InputError(f"function_benchmark source type must be mashup, edgelist or synthetic, got {kind!r}")
    Y, counts = label_matrix(genes, lab["genes_path"], lab["terms_path"], lab["adjacency_path"],
                             source["min_genes"])
    return genes, nets, Y, counts
