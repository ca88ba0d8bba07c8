"""Local network baselines for protein function prediction.

The two comparison methods of Sun, Ji & Ye (BMC Bioinformatics 2008, 9:162,
Tables 2 and 5): **Neighbor Counting** (Schwikowski, Uetz & Fields, Nat.
Biotechnol. 18:1257, 2000; majority rule over annotated level-1 neighbours)
and **FS-Weighted Averaging** (Chua, Sung & Wong, Bioinformatics 22:1623,
2006; FS-weighted average over level-1 and level-2 neighbours, with a prior).

Contract of every function: ``A`` is an (n, n) square, finite, non-negative,
symmetric adjacency (sparse or dense; weights and self-loops ignored);
``train_idx`` and ``test_idx`` are disjoint indices; ``y_train`` of shape
(n_train,) or (n_train, t), values in {-1, +1} or {0, 1}, is aligned with
``train_idx``; scores come back for ``test_idx`` in order, shaped like
``y_train``, higher meaning more likely positive.

Notes: docs/diffusion_notes.md, section "Network baselines (solvers/network_baselines)".
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp

__all__ = ["neighbor_counting", "fs_weights", "fs_weighted_averaging"]


# --------------------------------------------------------------------------- #
# Validation helpers
# --------------------------------------------------------------------------- #
def _binary_adjacency(A) -> sp.csr_array:
    """Validate ``A`` and return its unweighted, loop-free pattern (CSR, float64)."""
    if sp.issparse(A):
        M = sp.csr_array(A, dtype=np.float64)
    else:
        arr = np.asarray(A, dtype=np.float64)
        if arr.ndim != 2:
            raise ValueError(f"A: expected a 2-D adjacency matrix, got shape {arr.shape}")
        M = sp.csr_array(arr)
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"A: expected a square (n, n) adjacency matrix, got shape {M.shape}")
    M.sum_duplicates()
    M.eliminate_zeros()
    if M.nnz and not np.all(np.isfinite(M.data)):
        raise ValueError("A: holds NaN or infinite entries")
    if M.nnz and M.data.min() < 0:
        raise ValueError(f"A: entries must be non-negative, found {M.data.min():g}")
    asym = sp.coo_array(abs(M - M.T))
    asym.eliminate_zeros()
    if asym.nnz:
        scale = M.max() if M.nnz else 1.0
        k = int(np.argmax(asym.data))
        if asym.data[k] > 1e-12 * scale:
            i, j = int(asym.row[k]), int(asym.col[k])
            raise ValueError(f"A: must be symmetric (an undirected network); A[{i}, {j}] = "
                             f"{M[i, j]:g} but A[{j}, {i}] = {M[j, i]:g}")
    B = sp.csr_array((M != 0).astype(np.float64))
    B.setdiag(0.0)
    B.eliminate_zeros()
    return B


def _index(idx, n: int, name: str) -> np.ndarray:
    arr = np.asarray(idx)
    if arr.ndim != 1:
        raise ValueError(f"{name}: expected a 1-D array of protein indices, got shape {arr.shape}")
    if arr.size and not np.issubdtype(arr.dtype, np.integer):
        raise ValueError(f"{name}: expected integer protein indices, got dtype {arr.dtype}")
    arr = arr.astype(np.int64)
    if arr.size and (arr.min() < 0 or arr.max() >= n):
        raise ValueError(f"{name}: indices must lie in [0, {n - 1}] (n = {n} proteins), "
                         f"got range [{arr.min()}, {arr.max()}]")
    if np.unique(arr).size != arr.size:
        raise ValueError(f"{name}: holds repeated protein indices")
    return arr


def _split(A, y_train, train_idx, test_idx):
    """Validate the common inputs; return (B, Ypos (n_train, t) float, 1-D flag, train, test)."""
    B = _binary_adjacency(A)
    n = B.shape[0]
    train = _index(train_idx, n, "train_idx")
    test = _index(test_idx, n, "test_idx")
    if train.size == 0:
        raise ValueError("train_idx: no annotated (training) proteins")
    both = np.intersect1d(train, test)
    if both.size:
        raise ValueError(f"train_idx and test_idx overlap: {both.size} protein(s), e.g. {both[0]}")
    Y = np.asarray(y_train, dtype=np.float64)
    one_d = Y.ndim == 1
    if one_d:
        Y = Y[:, None]
    if Y.ndim != 2:
        raise ValueError(f"y_train: expected shape (n_train,) or (n_train, t), got {Y.shape}")
    if Y.shape[0] != train.size:
        raise ValueError(f"y_train: labels misaligned with train_idx: {Y.shape[0]} label row(s) "
                         f"for {train.size} training protein(s)")
    if not np.all(np.isfinite(Y)):
        raise ValueError("y_train: holds NaN or infinite labels")
    values = set(np.unique(Y).tolist())
    if not values <= {-1.0, 1.0} and not values <= {0.0, 1.0}:
        raise ValueError(f"y_train: labels must be in {{-1, +1}} (or {{0, 1}}), "
                         f"found {sorted(values)}")
    return B, (Y > 0).astype(np.float64), one_d, train, test


# --------------------------------------------------------------------------- #
# Neighbor Counting
# --------------------------------------------------------------------------- #
def neighbor_counting(A, y_train, train_idx, test_idx, fraction: bool = False) -> np.ndarray:
    """Neighbor Counting scores (Schwikowski, Uetz & Fields 2000).

    Schwikowski et al. assign to an unannotated protein the (three) functions
    that occur most often among its annotated interaction partners: the
    majority rule ranks functions by the *number* of annotated level-1
    neighbours that carry them. For a ranking metric over proteins (one ROC
    curve per function, as in Sun et al. 2008) we return that vote itself:

        score(u, x) = #{v in N(u) ∩ train : v has function x}

    where ``N(u)`` are the level-1 neighbours of ``u`` (no self).

    Why the count and not the fraction (default ``fraction=False``): the count
    is the statistic the majority rule is defined on, so a protein's
    top-ranked functions are exactly Schwikowski's; the fraction
    ``count / #annotated neighbours`` is a different, frequency-based
    estimator (closer to Hishigaki et al. 2001) that would rank a protein with
    one positive out of one annotated neighbour above one with nine out of
    ten. Ties between proteins (frequent for integer counts) are left as ties;
    ROC AUC gives them half credit.

    Parameters
    ----------
    A : sparse or dense array, shape (n, n)
        Symmetric, non-negative adjacency; only its pattern (``A > 0``, off
        the diagonal) is used.
    y_train : array, shape (n_train,) or (n_train, t)
        Labels of the proteins ``train_idx`` (same order), in {-1, +1} or
        {0, 1}; positive = annotated with the function.
    train_idx, test_idx : array of int, shape (n_train,), (n_test,)
        Disjoint protein indices in ``0..n-1``.
    fraction : bool
        Return ``count / #annotated neighbours`` instead (0 for proteins
        without annotated neighbours).

    Returns
    -------
    scores : ndarray of float64, shape (n_test,) or (n_test, t)
        Number (or fraction) of positive annotated neighbours of each test
        protein, per task; unitless.

    Raises
    ------
    ValueError
        If ``A`` is not square, symmetric, finite and non-negative; an index
        array is not 1-D integer, out of range or repeated; ``train_idx`` and
        ``test_idx`` overlap; ``y_train`` does not have ``len(train_idx)`` rows
        (labels misaligned) or holds values other than {-1, +1} / {0, 1}.
    """
    B, Ypos, one_d, train, test = _split(A, y_train, train_idx, test_idx)
    Btt = B[test][:, train]
    counts = np.asarray(Btt @ Ypos)
    if fraction:
        annotated = np.asarray(Btt.sum(axis=1)).ravel()
        with np.errstate(invalid="ignore", divide="ignore"):
            counts = np.where(annotated[:, None] > 0, counts / annotated[:, None], 0.0)
    return counts[:, 0] if one_d else counts


# --------------------------------------------------------------------------- #
# FS-weight
# --------------------------------------------------------------------------- #
def fs_weights(A, n_avg: float | None = None) -> sp.csr_array:
    """Functional-similarity weights (FS-weight) of Chua, Sung & Wong 2006.

    With ``N_u`` the set holding ``u`` *and* its level-1 neighbours,

        S(u, v) = 2|N_u ∩ N_v| / (|N_u - N_v| + 2|N_u ∩ N_v| + λ_uv)
                × 2|N_u ∩ N_v| / (|N_v - N_u| + 2|N_u ∩ N_v| + λ_vu),

        λ_uv = max(0, n_avg - (|N_u - N_v| + |N_u ∩ N_v|)) = max(0, n_avg - |N_u|),

    (Chua et al. 2006, Section 2, the FS-weight equation with its λ penalty),
    where ``n_avg`` is the average number of level-1 neighbours in the
    network. λ penalises proteins with few interactions, whose neighbourhood
    overlaps are weak evidence. ``S(u, v) > 0`` exactly when ``u`` and ``v``
    share a member of their neighbourhoods, i.e. when ``v`` is a level-1 or a
    level-2 neighbour of ``u``, so the returned sparse matrix covers both
    levels and nothing else. Because ``|N_u ∩ N_v| <= |N_u|``, every weight
    lies in [0, 1].

    Computed for all pairs at once: with ``N = B + I`` (``B`` the binary
    adjacency), ``|N_u ∩ N_v| = (N N)_uv`` and the first factor becomes
    ``2c / (|N_u| + c + λ_u)``.

    Parameters
    ----------
    A : sparse or dense array, shape (n, n)
        Symmetric, non-negative adjacency; only its pattern (``A > 0``, off
        the diagonal) is used, as in Chua et al.'s unweighted FS-weight.
    n_avg : float, optional
        The penalty threshold, a number of proteins (>= 0). Default: the mean
        number of level-1 neighbours (mean degree of the unweighted graph,
        the protein itself not counted) over all ``n`` proteins.

    Returns
    -------
    S : scipy.sparse.csr_array of float64, shape (n, n)
        Symmetric FS-weights in [0, 1] for all level-1 and level-2 pairs; the
        diagonal (a protein with itself) is zero.

    Raises
    ------
    ValueError
        If ``A`` is not square, symmetric, finite and non-negative, or
        ``n_avg`` is negative or not finite.
    """
    B = _binary_adjacency(A)
    n = B.shape[0]
    deg = np.asarray(B.sum(axis=1)).ravel()
    if n_avg is None:
        n_avg = float(deg.mean()) if n else 0.0
    n_avg = float(n_avg)
    if not np.isfinite(n_avg) or n_avg < 0:
        raise ValueError(f"n_avg: expected a finite number >= 0, got {n_avg}")
    size = deg + 1.0                                   # |N_u|, u included
    lam = np.maximum(0.0, n_avg - size)                # λ_uv depends on u only
    N = sp.csr_array(B + sp.eye_array(n, format="csr"))
    common = sp.coo_array(N @ N)                       # |N_u ∩ N_v| on level <= 2 pairs
    r, c, k = common.row, common.col, common.data
    off = r != c
    r, c, k = r[off], c[off], k[off]
    s = (2.0 * k / (size[r] + k + lam[r])) * (2.0 * k / (size[c] + k + lam[c]))
    return sp.csr_array((s, (r, c)), shape=(n, n))


# --------------------------------------------------------------------------- #
# FS-Weighted Averaging
# --------------------------------------------------------------------------- #
def fs_weighted_averaging(A, y_train, train_idx, test_idx, lambda_r: float = 1.0,
                          n_avg: float | None = None, level2: str = "path",
                          weights=None) -> np.ndarray:
    """FS-Weighted Averaging scores (Chua, Sung & Wong 2006).

    The function score of protein ``u`` for function ``x`` (Chua et al. 2006,
    the FS-weighted averaging equation):

        f_x(u) = 1/Z [ λ_r π_x + Σ_{v ∈ N(u)} S(u,v) δ(v,x)
                        + Σ_{v ∈ N(u)} Σ_{w ∈ N(v)} S(u,v) S(v,w) δ(w,x) ]

    with ``N(u)`` the level-1 neighbours of ``u`` (no self), ``S`` the
    FS-weight (:func:`fs_weights`), ``δ(w,x) = 1`` if ``w`` is annotated with
    ``x``, ``π_x`` the frequency of ``x`` among the annotated proteins, and
    ``λ_r`` the weight of that background frequency. The second sum brings in
    the level-2 neighbours through every 2-step path ``u - v - w``.

    Choices made here (Chua et al. leave them implicit; Sun et al. 2008 do
    not state theirs):

    * Only annotated (training) proteins carry evidence: ``δ`` and the
      normalizer run over ``v`` (level 1) and ``w`` (level 2) in
      ``train_idx``; the intermediate protein ``v`` of a 2-step path may be
      any protein (the path is topology, not annotation). Unannotated
      neighbours are thus neither positive nor negative evidence. The scored
      protein itself is never counted (``w = u`` is a test protein).
    * ``Z = λ_r + Σ S(u,v) + Σ Σ S(u,v) S(v,w)`` over those same terms (the
      "sum of all weights"), so ``f_x(u)`` is a weighted average of the
      annotations with ``λ_r`` pseudo-observations at the prior: it lies in
      [0, 1] and equals ``π_x`` for a protein without annotated level-1/2
      neighbours. (With ``λ_r = 0`` such a protein also gets ``π_x``.)
    * ``λ_r = 1`` by default: the prior then weighs as much as one annotated
      neighbour of maximal similarity (``S <= 1``), a Laplace-style smoothing
      that keeps poorly connected proteins near the base rate instead of at 0
      or 1, within the range λ_r ∈ [0, 1] of Chua et al.
    * ``n_avg`` defaults to the mean degree (see :func:`fs_weights`).
    * ``π_x`` is computed from the training labels of each task.

    Parameters
    ----------
    A : sparse or dense array, shape (n, n)
        Symmetric, non-negative adjacency; only its pattern is used.
    y_train : array, shape (n_train,) or (n_train, t)
        Labels of ``train_idx`` (same order), {-1, +1} or {0, 1}.
    train_idx, test_idx : array of int, shape (n_train,), (n_test,)
        Disjoint protein indices in ``0..n-1``.
    lambda_r : float
        Weight of the prior term, >= 0 (unitless; a number of pseudo
        neighbours of FS-weight 1).
    n_avg : float, optional
        Passed to :func:`fs_weights` (ignored when ``weights`` is given).
    level2 : {"path", "direct", "none"}
        How level-2 neighbours enter. ``"path"`` (default): Chua et al.'s
        double sum over 2-step paths with weight ``S(u,v) S(v,w)``.
        ``"direct"``: a single sum over all level-1 and level-2 neighbours
        ``w`` with their own FS-weight ``S(u,w)``. ``"none"``: level-1 only.
    weights : sparse array, shape (n, n), optional
        Precomputed :func:`fs_weights` of ``A`` (they do not depend on the
        labels or the split, so they can be reused across splits and tasks).

    Returns
    -------
    scores : ndarray of float64, shape (n_test,) or (n_test, t)
        ``f_x(u)`` in [0, 1] for each test protein and task.

    Raises
    ------
    ValueError
        For the input errors listed in :func:`neighbor_counting`; if
        ``lambda_r`` is negative or not finite, ``level2`` is unknown, or
        ``weights`` does not have shape (n, n).
    """
    B, Ypos, one_d, train, test = _split(A, y_train, train_idx, test_idx)
    n = B.shape[0]
    lambda_r = float(lambda_r)
    if not np.isfinite(lambda_r) or lambda_r < 0:
        raise ValueError(f"lambda_r: expected a finite number >= 0, got {lambda_r}")
    if level2 not in ("path", "direct", "none"):
        raise ValueError(f"level2: expected 'path', 'direct' or 'none', got {level2!r}")
    if weights is None:
        S = fs_weights(B, n_avg=n_avg)
    else:
        S = sp.csr_array(weights, dtype=np.float64)
        if S.shape != (n, n):
            raise ValueError(f"weights: expected shape ({n}, {n}), got {S.shape}")
    t = Ypos.shape[1]
    # Evidence columns: positives per task, then the annotation indicator (for Z).
    E = np.zeros((n, t + 1))
    E[train, :t] = Ypos
    E[train, t] = 1.0
    if level2 == "direct":
        agg = np.asarray(S[test] @ E)
    else:
        S1 = sp.csr_array(S.multiply(B))             # FS-weights on level-1 pairs only
        agg = np.asarray(S1[test] @ E)
        if level2 == "path":
            agg = agg + np.asarray(S1[test] @ (S1 @ E))
    prior = Ypos.mean(axis=0)                          # π_x
    num = lambda_r * prior[None, :] + agg[:, :t]
    Z = lambda_r + agg[:, t:]
    with np.errstate(invalid="ignore", divide="ignore"):
        scores = np.where(Z > 0, num / np.where(Z > 0, Z, 1.0), prior[None, :])
    return scores[:, 0] if one_d else scores
