"""Mashup's network embedding (Cho, Berger & Peng, Cell Systems 2016;
the authors' ``rwr.m`` and ``mashup.m`` with ``svd_approx``).

Per network: random walk with restart (restart probability ``r``, 0.5 in
the paper) on the row-normalised adjacency, an isolated node given a
self-loop; the diffusion states ``Q = r (I - (1 - r) D^{-1} A)^{-1}`` (row i
= the stationary distribution of the walk restarting at i), smoothed and
log-transformed, ``R = log(Q + 1/n)``. The networks' states are reduced
jointly: with ``H = [R_1 ... R_k]`` (n, k n) and its truncated SVD
``H = U S V^T``, the embedding is ``X = U_d S_d^{1/2}`` (n, d), i.e.
Mashup's ``x = d^{1/4} V^T`` from the eigendecomposition of
``sum_k R_k R_k^T``. The classifier then gets the linear kernel ``X X^T``.
"""

from __future__ import annotations

import numpy as np
import scipy.linalg
import scipy.sparse as sp

from biokernels.errors import InputError

__all__ = ["rwr_states", "log_state_gram", "mashup_embedding"]


def _nonisolated(A: sp.csr_array) -> np.ndarray:
    deg = np.asarray(abs(A).sum(axis=1)).ravel()
    return np.flatnonzero(deg > 0)


def rwr_states(A, restart: float = 0.5) -> np.ndarray:
    """Dense diffusion states ``Q`` (n, n) of the walk with restart on one
    network (rows sum to 1).

    Parameters
    ----------
    A : sparse or dense (n, n), symmetric, non-negative weights; the
        diagonal is ignored (Mashup removes self-loops) and an isolated
        node gets a self-loop, so its row of ``Q`` is ``e_i``.
    restart : float in (0, 1]

    Raises
    ------
    InputError
        ``restart`` outside (0, 1], ``A`` not square or with negative weights.
    """
    if not 0 < restart <= 1:
        raise InputError(f"restart must lie in (0, 1], got {restart}")
    A = sp.csr_array(A, dtype=np.float64)
    if A.shape[0] != A.shape[1]:
        raise InputError(f"adjacency must be square, got {A.shape}")
    if A.nnz and A.data.min() < 0:
        raise InputError("adjacency has negative weights")
    A = A - sp.diags_array(A.diagonal())
    n = A.shape[0]
    Q = np.eye(n)
    c = _nonisolated(A)
    if c.size:
        Ac = A[c][:, c].toarray()
        P = Ac / Ac.sum(axis=1, keepdims=True)
        M = np.eye(c.size) - (1.0 - restart) * P
        Q[np.ix_(c, c)] = restart * scipy.linalg.solve(M, np.eye(c.size))
    return Q


def log_state_gram(A, restart: float = 0.5) -> np.ndarray:
    """``R R^T`` (n, n) of ``R = log(Q + 1/n)``, ``Q`` = :func:`rwr_states`,
    computed without the dense ``Q`` of the isolated nodes.

    Off the non-isolated block ``c``, ``Q`` is the identity, so ``R = c0 1 1^T
    + D`` with ``c0 = -log n``, ``D_cc = log(1 + n Q_cc)``, ``D_zz = log(n + 1) I``
    on the isolated nodes ``z`` and 0 elsewhere, and
    ``R R^T = c0^2 n 1 1^T + c0 (D 1 1^T + 1 1^T D^T) + D D^T`` with a
    block-diagonal ``D D^T``: O(m^3) for m non-isolated nodes instead of
    O(n^3). Equal to the direct product to rounding
    (tests/unit/studies/test_function_benchmark.py).
    """
    A = sp.csr_array(A, dtype=np.float64)
    n = A.shape[0]
    A = A - sp.diags_array(A.diagonal())
    c = _nonisolated(A)
    z = np.setdiff1d(np.arange(n), c)
    c0 = -np.log(n)
    rowsum = np.zeros(n)
    G = np.zeros((n, n))
    if c.size:
        Qc = rwr_states(A[c][:, c], restart)
        Dc = np.log1p(n * Qc)
        rowsum[c] = Dc.sum(axis=1)
        G[np.ix_(c, c)] = Dc @ Dc.T
    iso = np.log(n + 1.0)
    rowsum[z] = iso
    G[z, z] += iso ** 2
    G += c0 * (rowsum[:, None] + rowsum[None, :]) + c0 ** 2 * n
    return G


def mashup_embedding(networks, dim: int, restart: float = 0.5) -> np.ndarray:
    """Mashup's joint embedding of the genes of several networks.

    Parameters
    ----------
    networks : iterable of (n, n) adjacencies over the same genes
    dim : int, 1 <= dim <= n
        Embedding dimension (500 for yeast in the paper).
    restart : float
        RWR restart probability (0.5 in the paper).

    Returns
    -------
    X : array (n, dim) float64, ``U_d S_d^{1/2}`` of ``[R_1 ... R_k]``
        (columns in decreasing singular value; each column's sign fixed so
        that its largest-magnitude entry is positive).

    Raises
    ------
    InputError
        No network, networks of different sizes, ``dim`` out of range.
    """
    G = None
    for A in networks:
        g = log_state_gram(A, restart)
        if G is None:
            G = g
        elif g.shape != G.shape:
            raise InputError(f"networks over different gene sets: {g.shape} and {G.shape}")
        else:
            G += g
    if G is None:
        raise InputError("mashup_embedding needs at least one network")
    n = G.shape[0]
    if not 1 <= int(dim) <= n:
        raise InputError(f"dim must lie in 1..{n}, got {dim}")
    lam, V = scipy.linalg.eigh(G, subset_by_index=[n - int(dim), n - 1])
    lam, V = lam[::-1], V[:, ::-1]
    V = V * np.sign(V[np.argmax(np.abs(V), axis=0), np.arange(V.shape[1])])
    return V * np.sqrt(np.sqrt(np.clip(lam, 0.0, None)))
