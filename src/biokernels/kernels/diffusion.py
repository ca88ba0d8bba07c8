"""Diffusion kernels on graphs, built from one eigendecomposition.

Source: Sun, Ji & Ye, "Adaptive diffusion kernel learning from biological
networks for protein function prediction", BMC Bioinformatics 9:162 (2008),
Methods: the graph Laplacian (Eq. 3), the diffusion kernels
``K_i = exp(beta_i L)`` (Eq. 6), their trace normalisation
``K~_i = K_i / trace(K_i)`` (Eq. 7), the eigendecomposition
``L = P D P^T`` (Eq. 14-16) and the grid ``beta_i = -0.1 i, i = 1..60``
(Results). Diffusion kernels themselves: Kondor & Lafferty (2002).

Contract: the normalised kernels share the eigenvectors ``P`` and are held as
their *spectra* ``S`` (shape ``(p, n)``, rows summing to 1), so a combination
``sum_i alpha_i K~_i`` is ``P diag(alpha @ S) P^T``, with no matrix
exponential; :func:`naive_diffusion_kernels` is the dense ``expm`` reference
(tests and benchmarks only). Float64 arrays; kernels are unitless.

Notes: docs/diffusion_notes.md, section "Diffusion kernels (kernels/diffusion)".
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse
import scipy.sparse.csgraph

__all__ = [
    "LAPLACIANS",
    "laplacian",
    "laplacian_eigh",
    "diffusion_betas",
    "diffusion_spectra",
    "kernel_from_spectrum",
    "combined_spectrum",
    "kernel_block",
    "kernel_blocks",
    "naive_diffusion_kernels",
]


LAPLACIANS = ("unnormalized", "normalized")


def laplacian(A, kind: str = "unnormalized") -> np.ndarray:
    """Graph Laplacian, dense: the paper's ``L = diag(A e) - A`` (Eq. 3), or
    the symmetric normalized ``L = I - D^{-1/2} A D^{-1/2}``.

    The normalized Laplacian is not the paper's: it is the labelled
    deviation ``laplacian: normalized`` of the diffusion study (its spectrum
    lies in [0, 2] whatever the degrees, so the paper's beta grid spans the
    same diffusion range on every network). It is
    ``scipy.sparse.csgraph.laplacian(A, normed=True)``: self-loops are
    ignored and an isolated vertex gets a zero row and column (as networkx's
    ``normalized_laplacian_matrix``).

    Parameters
    ----------
    A : scipy.sparse matrix/array or array-like, shape (n, n)
        Symmetric adjacency (similarity) matrix with non-negative, finite
        weights. The diagonal (self-loops) is allowed; it cancels in the
        unnormalized ``L`` and is ignored by the normalized one.
    kind : {"unnormalized", "normalized"}

    Returns
    -------
    L : numpy.ndarray, shape (n, n), float64
        Symmetric positive semi-definite; for ``unnormalized`` rows sum to
        zero, for ``normalized`` eigenvalues lie in [0, 2].

    Raises
    ------
    ValueError
        If ``kind`` is unknown, ``A`` is not a square 2-D matrix, holds
        NaN/inf or negative weights, or is not symmetric (up to a relative
        tolerance of 1e-12 of the largest weight).
    """
    if kind not in LAPLACIANS:
        raise ValueError(f"laplacian kind must be one of {LAPLACIANS}, got {kind!r}")
    if scipy.sparse.issparse(A):
        M = np.asarray(A.toarray(), dtype=np.float64)
    else:
        M = np.array(A, dtype=np.float64)  # copy: we modify the diagonal below
    if M.ndim != 2 or M.shape[0] != M.shape[1]:
        raise ValueError(f"adjacency must be a square (n, n) matrix, got shape {M.shape}")
    if M.shape[0] == 0:
        raise ValueError("adjacency is empty (n = 0)")
    if not np.all(np.isfinite(M)):
        raise ValueError("adjacency holds NaN or infinite weights")
    if np.any(M < 0):
        raise ValueError(f"adjacency has negative weights (min {M.min():g}); "
                         "the diffusion kernel needs non-negative similarities")
    scale = float(np.abs(M).max()) or 1.0
    asym = float(np.abs(M - M.T).max())
    if asym > 1e-12 * scale:
        raise ValueError(f"adjacency is not symmetric (max |A - A^T| = {asym:g}); "
                         "use an undirected graph or symmetrise it, e.g. (A + A.T) / 2")
    M = 0.5 * (M + M.T)  # exact symmetry for eigh
    if kind == "normalized":
        np.fill_diagonal(M, 0.0)
        L = scipy.sparse.csgraph.laplacian(M, normed=True)
        return 0.5 * (L + L.T)
    L = -M
    L[np.diag_indices_from(L)] += M.sum(axis=1)
    return L


def laplacian_eigh(L: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    """Eigendecomposition ``L = P diag(d) P^T`` (Eq. 14-15).

    Uses ``scipy.linalg.eigh(L, driver="evd")`` (LAPACK divide and conquer),
    faster than the default ``"evr"`` driver at the study's sizes (see
    ``benchmarks/bench_dkl.py``).

    Parameters
    ----------
    L : array-like, shape (n, n)
        Symmetric matrix (a graph Laplacian); only its lower triangle is read.

    Returns
    -------
    d : numpy.ndarray, shape (n,)
        Eigenvalues in ascending order. For a Laplacian they are >= 0 up to
        rounding (values like -1e-14 are left as they are).
    P : numpy.ndarray, shape (n, n)
        Orthonormal eigenvectors in the columns, ``P[:, j]`` for ``d[j]``.

    Raises
    ------
    ValueError
        If ``L`` is not a square 2-D matrix or holds NaN/inf.
    """
    L = np.asarray(L, dtype=np.float64)
    if L.ndim != 2 or L.shape[0] != L.shape[1]:
        raise ValueError(f"L must be a square (n, n) matrix, got shape {L.shape}")
    if not np.all(np.isfinite(L)):
        raise ValueError("L holds NaN or infinite values")
    d, P = scipy.linalg.eigh(L, driver="evd", check_finite=False)
    return d, P


def diffusion_betas(p: int = 60, step: float = 0.1) -> np.ndarray:
    """The paper's grid of diffusion parameters ``beta_i = -step * i``.

    Source: Results, "the values of beta used are beta_i = -0.1 x i, for
    i = 1, ..., 60". Negative beta with ``L = diag(Ae) - A`` (Eq. 3) is the
    usual diffusion ``exp(-|beta| L)``.

    The one builder of the grid: the diffusion study
    (:mod:`biokernels.studies.diffusion.protocol`) calls it for every grid it
    uses (the split's, the sensitivity sweeps', SM1's), and the workflow's
    scripts pass ``n_kernels`` and the step to the study instead of building
    a grid.

    Parameters
    ----------
    p : int
        Number of kernels (>= 1).
    step : float
        Grid spacing (> 0).

    Returns
    -------
    betas : numpy.ndarray, shape (p,)
        ``[-step, -2 step, ..., -p step]``.

    Raises
    ------
    ValueError
        If ``p < 1`` or ``step <= 0``.
    """
    if int(p) != p or p < 1:
        raise ValueError(f"p must be a positive integer, got {p}")
    if not step > 0:
        raise ValueError(f"step must be > 0, got {step}")
    return -float(step) * np.arange(1, int(p) + 1, dtype=np.float64)


def diffusion_spectra(d, betas) -> np.ndarray:
    """Eigenvalues of the trace-normalised diffusion kernels (Eq. 7, 16).

    ``S[i, j] = exp(beta_i d_j) / sum_l exp(beta_i d_l)``, the eigenvalues of
    ``K~_i = exp(beta_i L) / trace(exp(beta_i L))`` for the eigenvectors
    ``P`` of ``L`` (``trace(exp(beta L)) = sum_j exp(beta d_j)``, proof of
    Theorem 1). Computed stably as a softmax: each row's exponents are
    shifted by their maximum, so no overflow for any beta and no
    ``n x n`` matrix exponential.

    Parameters
    ----------
    d : array-like, shape (n,)
        Laplacian eigenvalues (from :func:`laplacian_eigh`).
    betas : array-like, shape (p,)
        Diffusion parameters (any sign; the paper uses negative ones).

    Returns
    -------
    S : numpy.ndarray, shape (p, n), float64
        Non-negative; every row sums to 1 (unit trace).

    Raises
    ------
    ValueError
        If ``d`` or ``betas`` is not 1-D, is empty or holds NaN/inf.
    """
    d = np.asarray(d, dtype=np.float64)
    betas = np.asarray(betas, dtype=np.float64)
    for name, v in (("d", d), ("betas", betas)):
        if v.ndim != 1 or v.size == 0:
            raise ValueError(f"{name} must be a non-empty 1-D array, got shape {v.shape}")
        if not np.all(np.isfinite(v)):
            raise ValueError(f"{name} holds NaN or infinite values")
    X = betas[:, None] * d[None, :]
    X -= X.max(axis=1, keepdims=True)
    np.exp(X, out=X)
    X /= X.sum(axis=1, keepdims=True)
    return X


def kernel_from_spectrum(P: np.ndarray, s) -> np.ndarray:
    """Dense kernel ``K = P diag(s) P^T``.

    Parameters
    ----------
    P : numpy.ndarray, shape (n, n)
        Orthonormal eigenvectors (columns), from :func:`laplacian_eigh`.
    s : array-like, shape (n,)
        Eigenvalues, e.g. a row of :func:`diffusion_spectra` or
        :func:`combined_spectrum` (add ``lam`` for ``K + lam I``).

    Returns
    -------
    K : numpy.ndarray, shape (n, n), float64, symmetric.

    Raises
    ------
    ValueError
        If the shapes do not match.
    """
    return kernel_block(P, s, slice(None), slice(None))


def combined_spectrum(S: np.ndarray, alpha) -> np.ndarray:
    """Spectrum of ``sum_i alpha_i K~_i`` (Eq. 8): ``alpha @ S``.

    Parameters
    ----------
    S : numpy.ndarray, shape (p, n)
        Spectra of the normalised kernels (:func:`diffusion_spectra`).
    alpha : array-like, shape (p,) or (t, p)
        Kernel weights (one row per task for single-task solutions).

    Returns
    -------
    numpy.ndarray, shape (n,) or (t, n)

    Raises
    ------
    ValueError
        If ``alpha``'s last dimension is not ``p``.
    """
    S = np.asarray(S, dtype=np.float64)
    alpha = np.asarray(alpha, dtype=np.float64)
    if S.ndim != 2 or alpha.ndim not in (1, 2) or alpha.shape[-1] != S.shape[0]:
        raise ValueError(f"alpha of shape {alpha.shape} does not match S of shape {S.shape} "
                         "(need alpha[..., p] with S (p, n))")
    return alpha @ S


def kernel_block(P: np.ndarray, s, rows, cols=None) -> np.ndarray:
    """A block ``K[rows][:, cols]`` of ``K = P diag(s) P^T``, without forming K.

    Costs O(|rows| |cols| n) instead of O(n^3): ``(P[rows] * s) @ P[cols].T``.

    Parameters
    ----------
    P : numpy.ndarray, shape (n, n)
        Orthonormal eigenvectors (columns).
    s : array-like, shape (n,)
        Kernel eigenvalues.
    rows, cols : index arrays, boolean masks or slices
        Node indices; ``cols`` defaults to ``rows``.

    Returns
    -------
    numpy.ndarray, shape (len(rows), len(cols))

    Raises
    ------
    ValueError
        If ``P`` is not square or ``s`` does not have ``n`` entries.
    """
    P = np.asarray(P)
    s = np.asarray(s, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ValueError(f"P must be a square (n, n) matrix, got shape {P.shape}")
    if s.shape != (P.shape[1],):
        raise ValueError(f"spectrum s must have shape ({P.shape[1]},), got {s.shape}")
    Pr = P[rows]
    Pc = Pr if cols is None else P[cols]
    return (Pr * s) @ Pc.T


def kernel_blocks(P: np.ndarray, s, train_idx, test_idx) -> tuple[np.ndarray, np.ndarray]:
    """Train/train and test/train blocks of ``K = P diag(s) P^T``.

    Parameters
    ----------
    P : numpy.ndarray, shape (n, n)
    s : array-like, shape (n,)
    train_idx, test_idx : index arrays or boolean masks over the n nodes

    Returns
    -------
    K_train : numpy.ndarray, shape (n_train, n_train)
    K_test_train : numpy.ndarray, shape (n_test, n_train)
        What an SVM with a precomputed kernel needs for ``fit`` and
        ``decision_function``.

    Raises
    ------
    ValueError
        As :func:`kernel_block`.
    """
    P = np.asarray(P)
    s = np.asarray(s, dtype=np.float64)
    if P.ndim != 2 or P.shape[0] != P.shape[1]:
        raise ValueError(f"P must be a square (n, n) matrix, got shape {P.shape}")
    if s.shape != (P.shape[1],):
        raise ValueError(f"spectrum s must have shape ({P.shape[1]},), got {s.shape}")
    Ptr = P[train_idx]
    W = (Ptr * s).T  # (n, n_train)
    return Ptr @ W, P[test_idx] @ W


def naive_diffusion_kernels(L: np.ndarray, betas) -> np.ndarray:
    """Dense reference: ``expm(beta_i L) / trace(expm(beta_i L))`` (Eq. 6-7).

    One ``scipy.linalg.expm`` (Pade, scaling and squaring; O(n^3) with a
    large constant) per kernel. For tests and benchmarks only: use
    :func:`diffusion_spectra` instead.

    Parameters
    ----------
    L : array-like, shape (n, n)
        Graph Laplacian.
    betas : array-like, shape (p,)

    Returns
    -------
    K : numpy.ndarray, shape (p, n, n), float64
        ``K[i]`` has unit trace. Memory ``8 p n^2`` bytes.

    Raises
    ------
    ValueError
        If ``L`` is not square or ``betas`` not 1-D.
    """
    L = np.asarray(L, dtype=np.float64)
    betas = np.asarray(betas, dtype=np.float64)
    if L.ndim != 2 or L.shape[0] != L.shape[1]:
        raise ValueError(f"L must be a square (n, n) matrix, got shape {L.shape}")
    if betas.ndim != 1:
        raise ValueError(f"betas must be 1-D, got shape {betas.shape}")
    out = np.empty((betas.size, *L.shape))
    for i, b in enumerate(betas):
        E = scipy.linalg.expm(b * L)
        out[i] = E / np.trace(E)
    return out
