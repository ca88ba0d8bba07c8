"""Diffusion kernels from one eigendecomposition against dense references.

Sun, Ji & Ye (2008), Eq. 3 (Laplacian), 6-7 (normalised diffusion kernels),
14-16 (spectral form); references: networkx's Laplacian and
``scipy.linalg.expm`` per kernel.
"""

import networkx as nx
import numpy as np
import pytest
import scipy.linalg
import scipy.sparse

from biokernels.kernels.diffusion import (
    combined_spectrum,
    diffusion_betas,
    diffusion_spectra,
    kernel_block,
    kernel_blocks,
    kernel_from_spectrum,
    laplacian,
    laplacian_eigh,
    naive_diffusion_kernels,
)


def random_weighted_graph(n: int, density: float, seed: int) -> np.ndarray:
    """Symmetric non-negative weighted adjacency, possibly disconnected."""
    rng = np.random.default_rng(seed)
    U = np.triu((rng.random((n, n)) < density) * rng.uniform(0.2, 3.0, (n, n)), 1)
    return U + U.T


@pytest.fixture(scope="module")
def graph():
    A = random_weighted_graph(40, 0.1, seed=0)
    L = laplacian(A)
    d, P = laplacian_eigh(L)
    return {"A": A, "L": L, "d": d, "P": P}


def test_laplacian_matches_networkx_for_dense_and_sparse_input(graph):
    A = graph["A"]
    ref = nx.laplacian_matrix(nx.from_numpy_array(A), weight="weight").toarray()
    # float64: degrees are sums of <= 40 weights <= 3: rounding <= 40 eps * 3 ~ 3e-14
    np.testing.assert_allclose(graph["L"], ref, atol=1e-13)
    np.testing.assert_allclose(laplacian(scipy.sparse.csr_array(A)), ref, atol=1e-13)
    np.testing.assert_allclose(graph["L"].sum(axis=1), 0.0, atol=1e-12)


def test_laplacian_ignores_self_loops():
    A = random_weighted_graph(10, 0.4, seed=1)
    A2 = A + np.diag(np.arange(10.0))
    np.testing.assert_allclose(laplacian(A2), laplacian(A), atol=1e-14)


@pytest.mark.parametrize("bad, match", [
    (np.ones((3, 4)), "square"),
    (np.ones((2, 2, 2)), "square"),
    (np.zeros((0, 0)), "empty"),
    (np.array([[0.0, 1.0], [2.0, 0.0]]), "symmetric"),
    (np.array([[0.0, -1.0], [-1.0, 0.0]]), "negative"),
    (np.array([[0.0, np.nan], [np.nan, 0.0]]), "NaN"),
])
def test_laplacian_rejects_bad_adjacency(bad, match):
    with pytest.raises(ValueError, match=match):
        laplacian(bad)


def test_laplacian_rejects_asymmetric_sparse():
    A = scipy.sparse.csr_array(np.array([[0.0, 1.0, 0.0], [0.0, 0.0, 1.0], [1.0, 0.0, 0.0]]))
    with pytest.raises(ValueError, match="symmetric"):
        laplacian(A)


def test_eigh_reconstructs_laplacian_and_counts_components(graph):
    d, P, L = graph["d"], graph["P"], graph["L"]
    # eigh is backward stable: reconstruction and orthogonality to ~n eps ||L|| (n = 40,
    # ||L|| <= 2 max degree ~ 20: ~2e-13) and ~n eps; eigenvalues of the PSD L to the same
    np.testing.assert_allclose((P * d) @ P.T, L, atol=1e-11)
    np.testing.assert_allclose(P.T @ P, np.eye(L.shape[0]), atol=1e-12)
    assert np.all(np.diff(d) >= 0) and d.min() > -1e-10
    n_comp = nx.number_connected_components(nx.from_numpy_array(graph["A"]))
    # zero eigenvalues come out as ~1e-13; a connected component's smallest nonzero one
    # is >= 4 w_min / (k diam) >= 4 * 0.2 / 40^2 = 5e-4 (Mohar 1991): 1e-9 separates them
    assert np.sum(d < 1e-9) == n_comp
    with pytest.raises(ValueError, match="square"):
        laplacian_eigh(np.ones((2, 3)))


def test_betas_are_the_paper_grid():
    b = diffusion_betas()
    assert b.shape == (60,)
    np.testing.assert_allclose(b[[0, 1, 59]], [-0.1, -0.2, -6.0])
    np.testing.assert_allclose(diffusion_betas(3, 0.5), [-0.5, -1.0, -1.5])
    for p, step in [(0, 0.1), (2.5, 0.1), (3, 0.0), (3, -1.0)]:
        with pytest.raises(ValueError):
            diffusion_betas(p, step)


def test_spectral_kernels_equal_naive_expm_over_trace(graph):
    """Eq. 16: exp(beta L)/trace = P diag(S[i]) P^T, for the paper's range of beta."""
    betas = np.array([-0.1, -0.7, -2.0, -6.0])
    S = diffusion_spectra(graph["d"], betas)
    K_naive = naive_diffusion_kernels(graph["L"], betas)
    for i in range(betas.size):
        K = kernel_from_spectrum(graph["P"], S[i])
        # eigh vs scipy's Padé expm, each accurate to ~n eps ||beta L|| relative to
        # ||exp(beta L)||; after the trace normalisation entries are <= 1: ~1e-13
        np.testing.assert_allclose(K, K_naive[i], atol=1e-12, rtol=0)
        np.testing.assert_allclose(K, K.T, atol=0)


def test_each_normalised_kernel_has_unit_trace(graph):
    betas = diffusion_betas(60)
    S = diffusion_spectra(graph["d"], betas)
    assert S.shape == (60, graph["d"].size)
    assert np.all(S >= 0)
    # normalised sums of n = 40 positive terms: rounding ~n eps ~ 1e-14
    np.testing.assert_allclose(S.sum(axis=1), 1.0, rtol=1e-13)
    for i in (0, 29, 59):
        assert np.trace(kernel_from_spectrum(graph["P"], S[i])) == pytest.approx(1.0, rel=1e-12)
    K_naive = naive_diffusion_kernels(graph["L"], betas[[0, 59]])
    np.testing.assert_allclose(np.trace(K_naive, axis1=1, axis2=2), 1.0, rtol=1e-12)


def test_spectra_are_stable_for_extreme_betas():
    d = np.array([0.0, 0.0, 1.0, 50.0, 400.0])
    S = diffusion_spectra(d, np.array([-1e4, -1e-8, 3.0, 1e4]))
    assert np.all(np.isfinite(S))
    np.testing.assert_allclose(S[0], [0.5, 0.5, 0.0, 0.0, 0.0], atol=1e-300)  # null space only
    # beta -> 0: I / n, with the first-order deviation S_i n - 1 = beta (d_i - mean d)
    # (3e-6 here); x2 for the second-order terms (beta d)^2 ~ 2e-11
    beta = 1e-8
    np.testing.assert_allclose(S[1], 0.2, rtol=2 * beta * np.abs(d - d.mean()).max())
    np.testing.assert_allclose(S[3], [0, 0, 0, 0, 1.0])  # positive beta: largest eigenvalue
    np.testing.assert_allclose(S.sum(axis=1), 1.0, rtol=1e-14)


@pytest.mark.parametrize("d, betas", [
    (np.ones((2, 2)), np.ones(3)),
    (np.ones(3), np.ones((1, 2))),
    (np.array([]), np.ones(2)),
    (np.array([0.0, np.inf]), np.ones(2)),
])
def test_spectra_reject_bad_input(d, betas):
    with pytest.raises(ValueError):
        diffusion_spectra(d, betas)


def test_combined_spectrum_is_the_kernel_combination(graph):
    betas = np.array([-0.3, -1.0, -2.5])
    S = diffusion_spectra(graph["d"], betas)
    alpha = np.array([0.2, 0.5, 0.3])
    K_naive = naive_diffusion_kernels(graph["L"], betas)
    K = kernel_from_spectrum(graph["P"], combined_spectrum(S, alpha))
    # linear in the spectrum: the same eigh-vs-expm accuracy as above (~1e-13)
    np.testing.assert_allclose(K, np.tensordot(alpha, K_naive, axes=1), atol=1e-12)
    W = np.stack([alpha, alpha[::-1]])
    np.testing.assert_allclose(combined_spectrum(S, W)[1], alpha[::-1] @ S)
    with pytest.raises(ValueError, match="does not match"):
        combined_spectrum(S, np.ones(4))


def test_kernel_blocks_are_slices_of_the_full_kernel(graph):
    P = graph["P"]
    s = diffusion_spectra(graph["d"], np.array([-0.5]))[0] + 1e-6
    K = kernel_from_spectrum(P, s)
    rng = np.random.default_rng(3)
    train = rng.random(P.shape[0]) < 0.6
    tr, te = np.flatnonzero(train), np.flatnonzero(~train)
    K_tr, K_te_tr = kernel_blocks(P, s, train, ~train)
    # blocks of the same product P diag(s) P^T computed on row subsets: the same sums,
    # possibly in another blocking order (entries <= 1, n = 40 terms: ~1e-15)
    np.testing.assert_allclose(K_tr, K[np.ix_(tr, tr)], atol=1e-14)
    np.testing.assert_allclose(K_te_tr, K[np.ix_(te, tr)], atol=1e-14)
    np.testing.assert_allclose(kernel_block(P, s, te, tr), K_te_tr, atol=1e-14)
    np.testing.assert_allclose(kernel_block(P, s, tr), K_tr, atol=1e-14)
    with pytest.raises(ValueError, match="spectrum"):
        kernel_block(P, s[:-1], tr)
    with pytest.raises(ValueError, match="square"):
        kernel_blocks(P[:, :-1], s, tr, te)


def test_naive_kernels_match_scipy_expm_directly(graph):
    L = graph["L"]
    E = scipy.linalg.expm(-0.4 * L)
    np.testing.assert_allclose(naive_diffusion_kernels(L, [-0.4])[0], E / np.trace(E), atol=1e-15)
    with pytest.raises(ValueError):
        naive_diffusion_kernels(np.ones((2, 3)), [-0.1])


def test_only_diffusion_betas_builds_the_grid():
    """The beta grid has one builder: no workflow script calls it or builds a
    grid itself (they pass n_kernels and the scale table to the study's
    run_* functions), and the study module calls diffusion_betas."""
    from pathlib import Path

    root = Path(__file__).resolve().parents[3]
    for script in (root / "workflow" / "scripts").glob("diffusion_*.py"):
        text = script.read_text()
        assert "diffusion_betas" not in text and "arange" not in text, script.name
    package = root / "src" / "biokernels" / "studies" / "diffusion" / "protocol"
    protocol = "".join(p.read_text() for p in sorted(package.glob("*.py")))
    assert "arange" not in protocol and "diffusion_betas(" in protocol
