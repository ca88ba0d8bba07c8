"""Pathway-induced kernels (PIMKL, Manica et al. 2019, Section 2.1-2.2 and
Supplementary S.1).

For a gene set ``p`` and an interaction network, ``L_p`` is the weighted
symmetric normalized Laplacian ``I - D^{-1/2} A_p D^{-1/2}`` of the
sub-network induced on the set's measured genes (S.1), and the kernel between
samples is ``K_p = X_p L_p Z_p^T`` (Section 2.2). :func:`induce_pathways`
drops set genes that are not measured (``missing``) or have no edge to another
measured set gene (``isolated``) and counts both per set; a set with no edge
left gives no kernel. :func:`normalize_trace` divides each training kernel by
``tr(K_p) / n`` (as mimkl's ``trace_normalize``) and the train-vs-test
kernels by the same factors.

Notes: docs/pimkl_notes.md, section "Pathway-induced kernels (kernels/pathway)".
"""

from __future__ import annotations

import logging
from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp

log = logging.getLogger(__name__)


@dataclass
class InducedPathway:
    """A gene set's sub-network, ready for :func:`pathway_kernels`.

    Attributes
    ----------
    name : str
    genes : list of str, length g
        The kept genes (measured, non-isolated), in the order of the data's
        gene list; rows/columns of ``laplacian``.
    laplacian : scipy.sparse.csr_matrix, shape (g, g), float64
        ``I - D^{-1/2} A D^{-1/2}``, symmetric PSD, eigenvalues in [0, 2].
    counts : dict
        ``set_size`` (distinct genes), ``measured``, ``missing``,
        ``isolated``, ``genes`` (= g), ``edges``.
    """

    name: str
    genes: list[str]
    laplacian: sp.csr_matrix
    counts: dict[str, int] = field(default_factory=dict)


def normalized_laplacian(A: sp.spmatrix) -> sp.csr_matrix:
    """Symmetric normalized Laplacian ``I - D^{-1/2} A D^{-1/2}`` (S.1).

    Parameters
    ----------
    A : sparse or dense array, shape (g, g)
        Symmetric, non-negative weights, zero diagonal (no self-loops).

    Returns
    -------
    scipy.sparse.csr_matrix, shape (g, g), float64
        Diagonal 1 for nodes with positive degree and 0 for isolated nodes
        (as ``networkx.normalized_laplacian_matrix`` and
        ``scipy.sparse.csgraph.laplacian(normed=True)``).

    Raises
    ------
    ValueError
        If ``A`` is not square, not symmetric, has a negative weight or a
        non-zero diagonal.
    """
    A = sp.csr_matrix(A, dtype=float)
    if A.shape[0] != A.shape[1]:
        raise ValueError(f"adjacency must be square, got shape {A.shape}")
    if A.nnz and A.data.min() < 0:
        raise ValueError("adjacency has negative weights")
    if A.diagonal().any():
        raise ValueError("adjacency has self-loops (non-zero diagonal)")
    if A.nnz and abs(A - A.T).max() > 1e-12 * max(1.0, abs(A).max()):
        raise ValueError("adjacency is not symmetric")
    deg = np.asarray(A.sum(axis=1)).ravel()
    inv_sqrt = np.zeros_like(deg)
    pos = deg > 0
    inv_sqrt[pos] = 1.0 / np.sqrt(deg[pos])
    Dm = sp.diags(inv_sqrt)
    L = sp.diags(pos.astype(float)) - Dm @ A @ Dm
    return sp.csr_matrix(L)


def induce_pathways(edges: pd.DataFrame, gene_sets: dict[str, list[str]], genes: list[str] | pd.Index,
                    min_genes: int = 2) -> tuple[list[InducedPathway], pd.DataFrame]:
    """Induce one normalized-Laplacian sub-network per gene set (S.1).

    Parameters
    ----------
    edges : DataFrame with ``protein_a``, ``protein_b``, ``weight``
        A cleaned undirected network (:func:`biokernels.io.pathways.read_string_network`,
        :func:`~biokernels.io.pathways.read_sif`,
        :func:`biokernels.io.networks.read_edge_list`): one row per unordered
        pair, no self-loops, weights >= 0. Pairs repeated in either
        orientation are merged keeping the largest weight.
    gene_sets : dict str -> list of str
        E.g. from :func:`biokernels.io.pathways.read_gmt`.
    genes : list of str
        The genes measured in the data (columns of ``X``).
    min_genes : int
        A set needs at least this many connected genes (and >= 1 edge) to
        give a kernel.

    Returns
    -------
    pathways : list of InducedPathway
        Sets with a kernel, in ``gene_sets`` order.
    table : DataFrame, one row per gene set (all of them), indexed by name
        Columns ``set_size``, ``measured``, ``missing``, ``isolated``,
        ``genes``, ``edges`` (int64) and ``kernel`` (bool).

    Raises
    ------
    ValueError
        If ``edges`` lacks a column, ``genes`` has duplicates, or a weight is
        negative or not finite.
    """
    for c in ("protein_a", "protein_b", "weight"):
        if c not in edges.columns:
            raise ValueError(f"edges: missing column {c!r}; found {list(edges.columns)}")
    genes = list(genes)
    if len(set(genes)) != len(genes):
        raise ValueError("genes: duplicated gene names")
    index = {g: i for i, g in enumerate(genes)}
    w = edges["weight"].to_numpy(float)
    if not np.isfinite(w).all() or (w < 0).any():
        raise ValueError("edges: weights must be finite and >= 0")
    ia = edges["protein_a"].map(index)
    ib = edges["protein_b"].map(index)
    ok = (ia.notna() & ib.notna()).to_numpy() & (ia.to_numpy() != ib.to_numpy()) & (w > 0)
    i = ia.to_numpy()[ok].astype(np.int64)
    j = ib.to_numpy()[ok].astype(np.int64)
    n = len(genes)
    # symmetric adjacency over the measured genes; duplicates -> max weight
    lo, hi = np.minimum(i, j), np.maximum(i, j)
    pairs = pd.DataFrame({"i": lo, "j": hi, "w": w[ok]}).groupby(["i", "j"], sort=False)["w"].max()
    ri = pairs.index.get_level_values(0).to_numpy()
    rj = pairs.index.get_level_values(1).to_numpy()
    A = sp.csr_matrix((np.r_[pairs.to_numpy(), pairs.to_numpy()], (np.r_[ri, rj], np.r_[rj, ri])), shape=(n, n))

    pathways, rows = [], []
    for name, members in gene_sets.items():
        members = list(dict.fromkeys(members))
        idx = np.array(sorted(index[g] for g in members if g in index), dtype=np.int64)
        sub = A[idx][:, idx] if idx.size else sp.csr_matrix((0, 0))
        deg = np.asarray(sub.sum(axis=1)).ravel()
        keep = deg > 0
        sub = sub[keep][:, keep]
        row = {"set_size": len(members), "measured": int(idx.size), "missing": len(members) - int(idx.size),
               "isolated": int((~keep).sum()), "genes": int(keep.sum()), "edges": int(sub.nnz // 2)}
        row["kernel"] = bool(row["edges"] > 0 and row["genes"] >= min_genes)
        rows.append(row)
        if row["kernel"]:
            pathways.append(InducedPathway(str(name), [genes[k] for k in idx[keep]], normalized_laplacian(sub),
                                           {k: v for k, v in row.items() if k != "kernel"}))
    table = pd.DataFrame(rows, index=pd.Index([str(k) for k in gene_sets], name="gene_set"))
    table = table.astype({c: "int64" for c in table.columns if c != "kernel"})
    empty = table.index[~table["kernel"]] if len(table) else []
    if len(empty):
        log.info("%d of %d gene sets give no kernel (no edge among their measured genes): %s",
                 len(empty), len(table), ", ".join(empty[:10]) + (" ..." if len(empty) > 10 else ""))
    return pathways, table


def _columns(X, genes: list[str] | None, what: str) -> tuple[np.ndarray, dict[str, int]]:
    if isinstance(X, pd.DataFrame):
        cols = [str(c) for c in X.columns]
        arr = X.to_numpy(dtype=float)
    else:
        if genes is None:
            raise ValueError(f"{what}: a plain array needs `genes` (its column names)")
        arr = np.asarray(X, dtype=float)
        cols = list(genes)
        if arr.ndim != 2 or arr.shape[1] != len(cols):
            raise ValueError(f"{what}: expected shape (n, {len(cols)}), got {arr.shape}")
    if not np.isfinite(arr).all():
        raise ValueError(f"{what}: has NaN or infinite values")
    return arr, {g: i for i, g in enumerate(cols)}


def pathway_kernels(X: pd.DataFrame | np.ndarray, pathways: list[InducedPathway],
                    X_other: pd.DataFrame | np.ndarray | None = None, genes: list[str] | None = None,
                    dtype=np.float64) -> np.ndarray:
    """Pathway-induced kernel matrices ``K_p = X_p L_p Z_p^T`` (Section 2.2).

    ``X`` (and ``X_other``) should already be normalized feature-wise (the
    paper standardizes each gene on the training fold, Algorithm S1 line 3);
    no trace scaling is applied here (see :func:`normalize_trace`).

    Cost per set: one sparse product ``L_p Z_p^T`` (nnz x m) and one dense
    ``(n x g) @ (g x m)`` GEMM; memory is the output, ``P * n * m`` values
    (1.2 GB at P = 50, n = m = 1,900 in float64: pass ``dtype=np.float32`` to
    halve it).

    Parameters
    ----------
    X : DataFrame (n, genes) or ndarray (n, len(genes))
        Rows: samples (the "left" side, e.g. training samples).
    pathways : list of InducedPathway
        From :func:`induce_pathways` with gene names matching ``X``'s columns.
    X_other : same kind, shape (m, same genes), optional
        Right-hand samples (e.g. test); ``X`` itself when None.
    genes : list of str, optional
        Column names when ``X`` / ``X_other`` are plain arrays.
    dtype : numpy dtype of the output

    Returns
    -------
    K : ndarray, shape (P, n, m)
        ``K[p] = X[:, genes_p] @ L_p @ X_other[:, genes_p].T``; symmetric
        PSD when ``X_other`` is None.

    Raises
    ------
    ValueError
        If a pathway gene is not a column of ``X`` / ``X_other``, shapes
        disagree, or the data hold NaN/inf.
    """
    A, ia = _columns(X, genes, "X")
    if X_other is None:
        B, ib = A, ia
    else:
        B, ib = _columns(X_other, genes, "X_other")
    K = np.empty((len(pathways), A.shape[0], B.shape[0]), dtype=dtype)
    for p, pw in enumerate(pathways):
        try:
            ca = [ia[g] for g in pw.genes]
            cb = ca if B is A else [ib[g] for g in pw.genes]
        except KeyError as err:
            raise ValueError(f"pathway {pw.name!r}: gene {err.args[0]!r} is not a column of the data") from None
        Xa = A[:, ca]
        LZt = pw.laplacian @ (Xa if B is A else B[:, cb]).T  # (g, m)
        K[p] = Xa @ LZt
        if B is A:
            K[p] = 0.5 * (K[p] + K[p].T)  # exact symmetry despite rounding
    return K


def normalize_trace(K: np.ndarray, factors: np.ndarray | None = None) -> tuple[np.ndarray, np.ndarray]:
    """Scale kernels to equal trace ``n`` (mean self-similarity 1; S.1).

    Parameters
    ----------
    K : ndarray, shape (P, n, m) or (n, m)
        Training kernels (square, ``factors=None``) or train-vs-test
        kernels (with the training ``factors``).
    factors : ndarray, shape (P,), optional
        ``tr(K_train[p]) / n_train``, as returned for the training kernels.

    Returns
    -------
    K_scaled : ndarray, same shape (a new array), ``K[p] / factors[p]``
    factors : ndarray, shape (P,) (or shape () for a 2-D input)

    Raises
    ------
    ValueError
        If factors must be learned but a kernel is not square, a trace is
        not positive (e.g. the pathway's genes are constant over the
        samples; its index is named), or ``factors`` has the wrong length
        or a non-positive value.
    """
    K = np.asarray(K)
    single = K.ndim == 2
    K3 = K[None] if single else K
    if K3.ndim != 3:
        raise ValueError(f"kernels must have shape (P, n, m) or (n, m), got {K.shape}")
    if factors is None:
        if K3.shape[1] != K3.shape[2]:
            raise ValueError(f"learning trace factors needs square kernels, got {K3.shape[1:]}")
        f = np.trace(K3, axis1=1, axis2=2) / K3.shape[1]
    else:
        f = np.atleast_1d(np.asarray(factors, dtype=float))
        if f.shape != (K3.shape[0],):
            raise ValueError(f"factors: expected shape ({K3.shape[0]},), got {f.shape}")
    bad = np.flatnonzero(~(f > 0) | ~np.isfinite(f))
    if bad.size:
        raise ValueError(f"kernel {bad[0]}: trace factor {f[bad[0]]} is not positive "
                         f"(constant features over the samples?)")
    out = K3 / f.astype(K3.dtype)[:, None, None]
    return (out[0], f[0]) if single else (out, f)


def omics_kernel_names(pathways: list[InducedPathway], omics: str) -> list[str]:
    """Kernel names ``"<set>|<omics>"`` (e.g. ``"HALLMARK_P53_PATHWAY|mrna"``)."""
    return [f"{pw.name}|{omics}" for pw in pathways]


def stack_omics(kernels: dict[str, tuple[list[InducedPathway], np.ndarray]]
                ) -> tuple[list[str], np.ndarray]:
    """Put the kernels of several omics in one mixture (Section 2.2, last
    paragraph; Algorithm S2 with T = {mRNA, CNA}).

    Each omics is induced and computed separately (its own gene list:
    call :func:`induce_pathways` and :func:`pathway_kernels` once per omics,
    e.g. ``{"mrna": (pw_mrna, K_mrna), "cna": (pw_cna, K_cna)}``), then the
    kernels are concatenated along the first axis.

    Returns
    -------
    names : list of str, ``"<set>|<omics>"``, in dict order then pathway order
    K : ndarray, shape (sum P_t, n, m)

    Raises
    ------
    ValueError
        If the omics' kernels differ in sample shape or a name count differs
        from its kernel count.
    """
    names, blocks = [], []
    for omics, (pws, K) in kernels.items():
        if len(pws) != len(K):
            raise ValueError(f"{omics}: {len(pws)} pathways but {len(K)} kernels")
        if blocks and K.shape[1:] != blocks[0].shape[1:]:
            raise ValueError(f"{omics}: kernels of shape {K.shape[1:]}, expected {blocks[0].shape[1:]}")
        names += omics_kernel_names(pws, omics)
        blocks.append(K)
    return names, np.concatenate(blocks, axis=0)
