"""Embedded default data of the diffusion-kernel study: protein networks whose
functions are drawn from the paper's own model, a combination of diffusion
kernels.

:func:`planted_function_network` draws a network of a given size (the
paper's, Sun, Ji & Ye 2008: Ligand, 753 proteins; von Mering, 2,617) from a
hidden geometry (a random geometric graph on the unit torus plus random
shortcuts, one edge weight fixing the mean weighted degree) and plants each
function through a latent activity ``f ~ N(0, sum_m w_m K~(beta_m))`` (the
Gaussian model behind the paper's KL criterion, Eqs. 9-11) with a short and
a long diffusion scale; the proteins of highest activity carry the function,
with annotation noise.

Notes: docs/diffusion_notes.md, section "Network generator (synth/networks)".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
from biokernels.io.networks import adjacency_matrix
from biokernels.kernels.diffusion import diffusion_spectra, laplacian, laplacian_eigh


def _torus_distances(X: np.ndarray) -> np.ndarray:
    D = np.abs(X[:, None, :] - X[None, :, :])
    D = np.minimum(D, 1.0 - D)
    return np.sqrt((D ** 2).sum(-1))


def planted_function_network(n_proteins: int, n_edges: int, n_tasks: int, rng: np.random.Generator,
                             frac_random: float = 0.2, mean_weighted_degree: float = 2.1,
                             planted_betas: tuple[float, ...] = (-0.3, -6.0),
                             planted_mix: tuple[float, ...] = (0.5, 0.5),
                             positive_fraction: float = 0.1, label_noise: float = 0.0,
                             test_fraction: float = 1 / 3
                             ) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """Draw a weighted network, its multi-label functions and a train/test split.

    Parameters
    ----------
    n_proteins, n_edges : int
        Network size: exactly ``n_edges`` distinct undirected edges, no
        self-loops. A fraction ``1 - frac_random`` of them join the closest
        pairs of points on the unit torus, the rest are uniform random pairs.
    n_tasks : int
        Number of functions.
    rng : numpy.random.Generator
    frac_random : float
        In [0, 1): fraction of shortcut edges.
    mean_weighted_degree : float
        > 0: every edge gets the weight ``mean_weighted_degree * n_proteins /
        (2 n_edges)``. The default 2.1 is the Ligand network's mean degree
        (20.9) times 0.1; unweighted networks of these sizes put the spectra
        of the grid's long diffusions below ``lambda = 1e-6`` for most
        eigen-directions (see ``docs/diffusion_notes.md``).
    planted_betas, planted_mix : tuples of float, same length
        Diffusion parameters (< 0) and non-negative weights (sum > 0) of the
        covariance ``sum_m w_m exp(beta_m L) / trace`` of the latent activity
        (the paper's Eq. 5-6 kernels on this network).
    positive_fraction : float
        In (0, 0.5]: the proteins with the highest activity, this fraction of
        all, carry the function.
    label_noise : float
        In [0, 0.5): each member loses the function with this probability,
        and as many random non-members as ``label_noise`` times the member
        count gain it (missed and spurious annotations).
    test_fraction : float
        Fraction of proteins in the test set of the returned split.

    Returns
    -------
    edges : DataFrame ``protein_a``, ``protein_b``, ``weight``
    labels : DataFrame of 0/1, shape (n_proteins, n_tasks), index
        ``protein`` (``P00000``...), columns ``function_<k>``
    split : Series of ``"train"`` / ``"test"`` indexed by protein

    Raises
    ------
    ValueError
        On sizes, fractions or planted scales out of range.

    Source: the Gaussian model of the paper's KL criterion (Sun, Ji & Ye
    2008, Eqs. 9-11) with the covariance a combination of its diffusion
    kernels (Eq. 6); the geometry follows Kondor & Lafferty (2002).
    """
    if n_proteins < 10 or n_tasks < 1:
        raise ValueError("n_proteins must be >= 10 and n_tasks >= 1")
    if not 0 < n_edges <= n_proteins * (n_proteins - 1) // 2:
        raise ValueError(f"{n_edges} edges do not fit in a simple graph on {n_proteins} nodes")
    if not 0 <= frac_random < 1:
        raise ValueError("frac_random must be in [0, 1)")
    if not 0 < mean_weighted_degree < np.inf:
        raise ValueError("mean_weighted_degree must be a finite number > 0")
    betas = np.asarray(planted_betas, dtype=float)
    mix = np.asarray(planted_mix, dtype=float)
    if betas.ndim != 1 or betas.shape != mix.shape or betas.size == 0:
        raise ValueError("planted_betas and planted_mix must be non-empty and of the same length")
    if not (np.all(np.isfinite(betas)) and np.all(np.isfinite(mix))):
        raise ValueError("planted_betas and planted_mix must be finite numbers")
    if np.any(betas >= 0) or np.any(mix < 0) or mix.sum() <= 0:
        raise ValueError("planted_betas must be < 0 and planted_mix >= 0 with a positive sum")
    if not 0 < positive_fraction <= 0.5:
        raise ValueError("positive_fraction must be in (0, 0.5]")
    if not 0 <= label_noise < 0.5:
        raise ValueError("label_noise must be in [0, 0.5)")

    X = rng.random((n_proteins, 2))
    D = _torus_distances(X)
    iu = np.triu_indices(n_proteins, 1)
    n_geo = int(round((1 - frac_random) * n_edges))
    order = np.argsort(D[iu], kind="stable")[:n_geo]
    edges = set(zip(iu[0][order].tolist(), iu[1][order].tolist()))
    while len(edges) < n_edges:
        u, v = rng.integers(n_proteins, size=2)
        if u != v:
            edges.add((int(min(u, v)), int(max(u, v))))
    e = np.array(sorted(edges))
    names = np.array([f"P{i:05d}" for i in range(n_proteins)])
    weight = mean_weighted_degree * n_proteins / (2 * n_edges)
    edge_table = pd.DataFrame({"protein_a": names[e[:, 0]], "protein_b": names[e[:, 1]], "weight": weight})

    _, A = adjacency_matrix(edge_table, list(names))
    d, P = laplacian_eigh(laplacian(A))
    spectrum = (mix / mix.sum()) @ diffusion_spectra(d, betas)
    F = P @ (np.sqrt(np.clip(spectrum, 0, None))[:, None] * rng.standard_normal((n_proteins, n_tasks)))
    n_pos = max(1, int(round(positive_fraction * n_proteins)))
    cols = {}
    for k in range(n_tasks):
        y = np.zeros(n_proteins, bool)
        y[np.argsort(-F[:, k], kind="stable")[:n_pos]] = True
        if label_noise > 0:
            pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
            y[pos[rng.random(pos.size) < label_noise]] = False
            y[rng.choice(neg, int(round(label_noise * pos.size)), replace=False)] = True
        cols[f"function_{k:02d}"] = y.astype(int)

    labels = pd.DataFrame(cols, index=pd.Index(names, name="protein"))
    is_test = np.zeros(n_proteins, bool)
    is_test[rng.choice(n_proteins, int(round(test_fraction * n_proteins)), replace=False)] = True
    split = pd.Series(np.where(is_test, "test", "train"), index=labels.index, name="split")
    return edge_table, labels, split
