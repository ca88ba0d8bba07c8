"""Diffusion kernels of one network restricted to the annotated genes,
from one eigendecomposition of the Laplacian of its non-isolated nodes.

An isolated node's Laplacian row is zero, so the full Laplacian's
eigenbasis is the non-isolated block's eigenvectors plus a standard basis
vector (eigenvalue 0) per isolated node; the trace-normalised kernels
``exp(beta L) / trace`` (Sun, Ji & Ye 2008, Eq. 6-7, 16) are then that
block's kernel and a diagonal of ``1 / trace`` on the isolated nodes. As in
the diffusion study (:class:`biokernels.studies.diffusion.protocol.KernelBlocks`)
kernels are scaled by n (mean diagonal 1 over the whole network).
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import scipy.sparse as sp

from biokernels.kernels.diffusion import diffusion_spectra, laplacian, laplacian_eigh
from biokernels.solvers.mkl.alignment import centered_alignment_terms
from biokernels.solvers.mkl.cka import cka_weights

__all__ = ["NetworkSpectrum", "alignment_weights", "network_spectrum"]


@dataclass
class NetworkSpectrum:
    """Eigendecomposition of one network's Laplacian, block form.

    Attributes
    ----------
    n : int, nodes of the network (isolated ones included)
    nodes : int array (m,), the non-isolated nodes
    d : array (m,), P : array (m, m), their Laplacian's eigenpairs
    """

    n: int
    nodes: np.ndarray
    d: np.ndarray
    P: np.ndarray

    def spectra(self, betas: np.ndarray) -> np.ndarray:
        """Spectra (p, n) of the trace-normalised kernels in the full
        eigenbasis: columns ``0..m-1`` the block's eigenvectors, then one per
        isolated node in increasing node order (eigenvalue 0); rows sum to 1."""
        d_full = np.concatenate([self.d, np.zeros(self.n - self.nodes.size)])
        return diffusion_spectra(d_full, betas)

    def isolated(self) -> np.ndarray:
        """The isolated nodes, increasing (the order of :meth:`spectra`'s last columns)."""
        return np.setdiff1d(np.arange(self.n), self.nodes)

    def project(self, T: np.ndarray) -> np.ndarray:
        """``P_full^T T`` for node values ``T`` (n, t): the targets ``B`` of
        :class:`biokernels.solvers.dkl.DiffusionKernelLearning` in this basis."""
        return np.vstack([self.P.T @ T[self.nodes], T[self.isolated()]])

    def kernel(self, s: np.ndarray, genes: np.ndarray, dtype=np.float64) -> np.ndarray:
        """Kernel ``n P_full diag(s) P_full^T`` restricted to ``genes`` (int (g,)):
        (g, g), ``s`` (n,) a spectrum of :meth:`spectra` (or a non-negative
        combination of them)."""
        s = np.asarray(s, dtype=np.float64) * self.n
        m = self.nodes.size
        pos = np.full(self.n, -1)
        pos[self.nodes] = np.arange(m)
        iso_pos = np.full(self.n, -1)
        iso = self.isolated()
        iso_pos[iso] = np.arange(iso.size)
        genes = np.asarray(genes)
        K = np.zeros((genes.size, genes.size), dtype=dtype)
        inside = np.flatnonzero(pos[genes] >= 0)
        if inside.size:
            F = self.P[pos[genes[inside]]] * np.sqrt(s[:m])
            K[np.ix_(inside, inside)] = F @ F.T
        out = np.flatnonzero(pos[genes] < 0)
        K[out, out] = s[m + iso_pos[genes[out]]]
        return K


def network_spectrum(A, kind: str = "unnormalized") -> NetworkSpectrum:
    """:class:`NetworkSpectrum` of the adjacency ``A`` (n, n), Laplacian
    ``kind`` as :func:`biokernels.kernels.diffusion.laplacian` (the paper's
    ``diag(Ae) - A`` by default). Raises as that function."""
    A = sp.csr_array(A, dtype=np.float64)
    A = A - sp.diags_array(A.diagonal())
    deg = np.asarray(abs(A).sum(axis=1)).ravel()
    nodes = np.flatnonzero(deg > 0)
    d, P = laplacian_eigh(laplacian(A[nodes][:, nodes], kind))
    return NetworkSpectrum(A.shape[0], nodes, np.clip(d, 0.0, None), P)


def alignment_weights(kernels, Y: np.ndarray, train: np.ndarray) -> np.ndarray:
    """Weights of P kernels over the same genes by centred kernel-target
    alignment (CKA; Cortes, Mohri & Rostamizadeh 2012, Prop. 9), learned on
    the training genes only, with the multi-label target ``Y Y^T``.

    ``M_kl = <K_k^c, K_l^c>_F`` and ``a_k = <K_k^c, Y Y^T>_F = tr(Y_c^T K_k
    Y_c)`` over the rows ``train`` (``Y_c`` the column-centred labels), then
    :func:`biokernels.solvers.mkl.cka.cka_weights` (``mu >= 0``,
    ``||mu||_2 = 1``).

    Parameters
    ----------
    kernels : sequence of P arrays (g, g)
    Y : array (g, t) of 0/1 labels (rows outside ``train`` are not read)
    train : int array, the training rows

    Returns
    -------
    ndarray (P,), float64

    Raises
    ------
    InputError
        No non-negative combination is aligned with the labels.
    """
    tr = np.asarray(train)
    blocks = [np.asarray(K)[np.ix_(tr, tr)] for K in kernels]
    M, _ = centered_alignment_terms(blocks, np.zeros(tr.size))
    Yc = np.asarray(Y, dtype=np.float64)[tr]
    Yc = Yc - Yc.mean(axis=0)
    a = np.array([float(np.vdot(Yc, B @ Yc)) for B in blocks])
    return cka_weights(M, a)
