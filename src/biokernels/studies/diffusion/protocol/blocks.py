"""Kernel blocks of a split: train/train and test/train blocks of the
diffusion kernels ``P diag(s) P^T`` (scaled by n, mean diagonal 1), computed
with torch on a device, with kept single-kernel blocks summed into learned
combinations and decision values without test blocks.
"""

from __future__ import annotations

import numpy as np
import torch

from biokernels.device import resolve_device


class KernelBlocks:
    """Train/train and test/train blocks of kernels ``P diag(s) P^T``, scaled
    by n (mean diagonal 1), computed with torch on a device.

    Parameters
    ----------
    P : array (n, n)
        Eigenvectors of the Laplacian.
    train, test : int arrays of protein indices
    device : str
        ``auto``, ``cpu`` or ``cuda`` (:func:`biokernels.device.resolve_device`).
    """

    def __init__(self, P: np.ndarray, train: np.ndarray, test: np.ndarray, device: str = "auto"):
        self.device = resolve_device(device)
        self.n = P.shape[0]
        self.Ptr = torch.as_tensor(P[train], dtype=torch.float64, device=self.device)
        self.Pte = torch.as_tensor(P[test], dtype=torch.float64, device=self.device)
        #: single-kernel blocks kept by :meth:`keep`, by kernel index
        self.cached: dict[int, tuple[np.ndarray, np.ndarray]] = {}

    def __call__(self, s: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Blocks for the spectrum ``s`` (n,): (n_train, n_train) and
        (n_test, n_train) float64 numpy arrays."""
        w = torch.as_tensor(np.asarray(s) * self.n, dtype=torch.float64, device=self.device)
        left = self.Ptr * w
        Ktr = left @ self.Ptr.T
        Kte = (self.Pte * w) @ self.Ptr.T
        Ktr = 0.5 * (Ktr + Ktr.T)
        return Ktr.cpu().numpy(), Kte.cpu().numpy()

    def train(self, s: np.ndarray) -> np.ndarray:
        """The (n_train, n_train) block alone, for the spectrum ``s`` (n,).

        For ``s >= 0`` (every diffusion spectrum, and non-negative
        combinations of them) the block is ``L L^T`` with ``L = P_train
        diag(sqrt(n s))``, a symmetric rank-k update (BLAS ``dsyrk``
        through scipy on the CPU, its upper triangle mirrored: half the
        multiplications of a GEMM, exactly symmetric; torch ``L @ L.T`` on
        other devices); otherwise (a signed combination) ``self(s)[0]``.
        Equal to the GEMM of :meth:`__call__` to rounding: every entry of
        either is within ``gamma_n sqrt(K_aa K_bb)`` of the exact kernel
        (Cauchy-Schwarz on ``sum_j |L_aj L_bj|``), as in :meth:`combine`.
        """
        s = np.asarray(s, dtype=np.float64)
        if (s < 0).any():
            return self(s)[0]
        r = torch.as_tensor(np.sqrt(s * self.n), dtype=torch.float64, device=self.device)
        L = self.Ptr * r
        if self.device.type != "cpu":
            return (L @ L.T).cpu().numpy()
        from scipy.linalg.blas import dsyrk

        U = dsyrk(1.0, L.numpy().T, trans=1)            # upper triangle of L L^T (L^T: Fortran order)
        i, j = np.tril_indices(U.shape[0], -1)
        U[i, j] = U[j, i]
        return U

    def decision(self, s: np.ndarray, coef: np.ndarray) -> np.ndarray:
        """Decision values without the test block: ``K_test @ coef`` for the
        kernel of spectrum ``s`` (n,), computed as ``P_test diag(n s)
        (P_train^T coef)`` (``coef`` (n_train, t), e.g. the SVMs' ``y_i
        a_i``): two thin products, O(n t (n_train + n_test)) instead of the
        O(n n_train n_test) of the block. Equal to ``self(s)[1] @ coef`` to
        rounding. Returns (n_test, t) float64."""
        c = torch.as_tensor(np.ascontiguousarray(coef, dtype=np.float64), device=self.device)
        w = torch.as_tensor(np.asarray(s) * self.n, dtype=torch.float64, device=self.device)
        return ((self.Pte * w) @ (self.Ptr.T @ c)).cpu().numpy()

    def combine_train(self, w: np.ndarray, S: np.ndarray) -> np.ndarray:
        """The train block of ``w @ S``: the sum of the kept train blocks
        of the kernels with a nonzero weight (:meth:`combine`'s rule and
        rounding bound), else :meth:`train` of the combined spectrum."""
        kept = self._sum_kept(w, (0,))
        return self.train(w @ S) if kept is None else kept[0]

    def keep(self, i: int, pair: tuple[np.ndarray, np.ndarray]) -> None:
        """Keep the blocks ``pair`` of single kernel ``i`` (``self(S[i])``) for
        :meth:`combine`. Memory: ``8 n_train (n_train + n_test)`` bytes."""
        self.cached[int(i)] = pair

    def combine(self, w: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
        """Blocks of the combination ``w @ S`` (weights (p,), spectra (p, n)).

        When every kernel with a nonzero weight is kept (:meth:`keep`), the
        blocks are ``sum_{i: w_i != 0} w_i * blocks_i`` (zero weights skipped
        exactly): a few element-wise passes instead of a GEMM of inner size
        n. Otherwise one GEMM on the combined spectrum, ``self(w @ S)``,
        the reference arithmetic.

        The two agree to rounding: for non-negative weights, every entry of
        either is within ``gamma_{n+p+3} sqrt(K_aa K_bb)`` of the exact
        kernel (``gamma_m = m u / (1 - m u)``, ``u = 2**-53``, ``K_aa`` the
        full kernel's diagonal at the row and column proteins; GEMM error
        ``gamma_n sum_j |P_aj P_bj| c_j`` with ``c = n w @ S``, bounded by
        Cauchy-Schwarz), so they differ by at most twice that
        (tests/unit/studies/test_diffusion_speed_paths.py).
        """
        kept = self._sum_kept(w, (0, 1))
        return self(w @ S) if kept is None else (kept[0], kept[1])

    def _sum_kept(self, w: np.ndarray, parts: tuple[int, ...]) -> list[np.ndarray] | None:
        """``sum_{i: w_i != 0} w_i * cached[i][part]`` for each part (0 train,
        1 test), zero weights skipped exactly; None when a kernel with a
        nonzero weight is not kept (or every weight is 0)."""
        w = np.asarray(w, dtype=np.float64)
        nz = np.flatnonzero(w)
        if nz.size == 0 or any(int(i) not in self.cached for i in nz):
            return None
        out = []
        for part in parts:
            acc = np.multiply(self.cached[int(nz[0])][part], w[nz[0]])
            tmp = np.empty_like(acc) if nz.size > 1 else None
            for i in nz[1:]:
                np.multiply(self.cached[int(i)][part], w[i], out=tmp)
                acc += tmp
            out.append(acc)
        return out
