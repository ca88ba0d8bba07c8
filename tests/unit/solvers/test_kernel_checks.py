"""The kernel-list checks and their compiled loops against the NumPy expressions they replace."""

from __future__ import annotations

import numpy as np
import pytest

from biokernels.errors import InputError
from biokernels.solvers.kernel_lists import CheckedKernels, check_kernel_list, kernel_sketch
from biokernels.solvers.kernel_numba import gather, max_asymmetry


@pytest.mark.parametrize("n", [1, 2, 63, 64, 65, 200])
def test_max_asymmetry_is_numpy_max_abs_difference(n):
    rng = np.random.default_rng(n)
    A = rng.normal(size=(n, n))
    S = (A + A.T) / 2
    S[n // 2, n - 1] += 0.25                      # one planted asymmetry
    for M in (A, S, np.asfortranarray(S), rng.normal(size=(n + 3, n + 5))[1:n + 1, 2:n + 2]):
        # a maximum of exact differences: equal, not close
        assert max_asymmetry(M, 64) == np.abs(M - M.T).max()


def test_gather_is_ix_indexing():
    rng = np.random.default_rng(0)
    K = rng.normal(size=(50, 50))
    rows, cols = rng.choice(50, 17, replace=False), np.sort(rng.choice(50, 31, replace=False))
    got = gather(K, rows.astype(np.int64), cols.astype(np.int64))
    assert np.array_equal(got, K[np.ix_(rows, cols)]) and got.flags.c_contiguous


def test_checked_kernels_pass_once_and_stricter_checks_run_again():
    rng = np.random.default_rng(1)
    X = rng.normal(size=(30, 4))
    K = X @ X.T
    Ks = check_kernel_list([K, K + np.eye(30)], psd_tol=None)
    assert isinstance(Ks, CheckedKernels) and Ks[0] is K          # float64 input: no copy
    assert check_kernel_list(Ks, psd_tol=None) is Ks               # as strict: returned as it is
    again = check_kernel_list(Ks, psd_tol=1e-8)                    # stricter (PSD): checked again
    assert again is not Ks and again.psd_tol == 1e-8
    assert check_kernel_list(again, psd_tol=1e-6) is again         # 1e-8 is stricter than 1e-6
    for a, b in zip(Ks.sketches(), [kernel_sketch(A) for A in Ks]):
        assert np.array_equal(a.diag, b.diag) and np.array_equal(a.product, b.product)
        assert (a.scale, a.eps) == (b.scale, b.eps)


def test_checks_name_the_kernel_and_entry():
    K = np.eye(4)
    bad = K.copy()
    bad[2, 1] = np.inf
    with pytest.raises(InputError, match=r"kernel 1: expected finite entries, found inf at row 2, column 1"):
        check_kernel_list([K, bad])
    asym = K.copy()
    asym[0, 3] = 0.5
    with pytest.raises(InputError, match=r"kernel 0: expected a symmetric matrix, max \|K - K'\| = 0.5"):
        check_kernel_list([asym])
