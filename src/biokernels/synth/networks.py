"""Embedded default data of the diffusion-kernel study: protein networks with
planted functional modules at two spatial scales.

The paper's networks (Sun, Ji & Ye 2008) are Ligand (753 proteins, 7,860
edges, 36 functions) and von Mering (2,617 proteins, 11,855 edges, 76
functions). :func:`planted_function_network` draws a network of a given size
from a hidden geometry: proteins are points on the unit torus, most edges
join near neighbours (a random geometric graph), the rest are random
shortcuts. A function is a disc of the torus: *fine* functions are small
discs (``fine_size`` proteins), *coarse* ones large discs (``coarse_frac`` of
all proteins). On such a graph a diffusion kernel behaves like a Gaussian
kernel in the hidden plane (Kondor & Lafferty 2002), so

* a fine function is separated best by a short diffusion (small ``-beta``)
  and a coarse one by a long diffusion;
* over all functions the best single kernel is a mid-range diffusion, and a
  combination of short and long diffusions (e.g. the equal-weight eBaseline)
  beats every single kernel.
"""

from __future__ import annotations

import numpy as np
import pandas as pd


def _torus_distances(X: np.ndarray) -> np.ndarray:
    D = np.abs(X[:, None, :] - X[None, :, :])
    D = np.minimum(D, 1.0 - D)
    return np.sqrt((D ** 2).sum(-1))


def planted_function_network(n_proteins: int, n_edges: int, n_tasks: int, rng: np.random.Generator,
                             frac_random: float = 0.2, fine_size: int = 25, coarse_frac: float = 0.2,
                             label_noise: float = 0.15, test_fraction: float = 1 / 3
                             ) -> tuple[pd.DataFrame, pd.DataFrame, pd.Series]:
    """Draw a network, its multi-label functions and a train/test split.

    Parameters
    ----------
    n_proteins, n_edges : int
        Network size: exactly ``n_edges`` distinct undirected edges, no
        self-loops. A fraction ``1 - frac_random`` of them join the closest
        pairs of points on the unit torus, the rest are uniform random pairs.
    n_tasks : int
        Number of functions; two thirds (rounded up) are fine, the rest
        coarse. Each is the disc of ``fine_size`` proteins (or
        ``round(coarse_frac * n_proteins)``) nearest to a random centre.
    rng : numpy.random.Generator
    frac_random : float
        In [0, 1): fraction of shortcut edges.
    fine_size : int
        >= 2 proteins per fine function.
    coarse_frac : float
        In (0, 0.5]: size of a coarse function as a fraction of the proteins.
    label_noise : float
        In [0, 0.5): each member loses the function with this probability,
        and as many random non-members as ``label_noise`` times the member
        count gain it (missed and spurious annotations).
    test_fraction : float
        Fraction of proteins in the test set of the returned split.

    Returns
    -------
    edges : DataFrame ``protein_a``, ``protein_b``, ``weight`` (= 1)
    labels : DataFrame of 0/1, shape (n_proteins, n_tasks), index
        ``protein`` (``P00000``...), columns ``fine_<k>`` / ``coarse_<k>``
    split : Series of ``"train"`` / ``"test"`` indexed by protein

    Raises
    ------
    ValueError
        On sizes or fractions out of range.
    """
    if n_proteins < 10 or n_tasks < 1:
        raise ValueError("n_proteins must be >= 10 and n_tasks >= 1")
    if not 0 < n_edges <= n_proteins * (n_proteins - 1) // 2:
        raise ValueError(f"{n_edges} edges do not fit in a simple graph on {n_proteins} nodes")
    if not 0 <= frac_random < 1:
        raise ValueError("frac_random must be in [0, 1)")
    if not 2 <= fine_size <= n_proteins // 2:
        raise ValueError(f"fine_size must be in [2, {n_proteins // 2}]")
    if not 0 < coarse_frac <= 0.5:
        raise ValueError("coarse_frac must be in (0, 0.5]")
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

    n_fine = -(-2 * n_tasks // 3)
    cols = {}
    for k in range(n_tasks):
        fine = k < n_fine
        size = fine_size if fine else max(2, int(round(coarse_frac * n_proteins)))
        centre = rng.integers(n_proteins)
        y = np.zeros(n_proteins, bool)
        y[np.argsort(D[centre], kind="stable")[:size]] = True
        pos, neg = np.flatnonzero(y), np.flatnonzero(~y)
        y[pos[rng.random(pos.size) < label_noise]] = False
        y[rng.choice(neg, int(round(label_noise * pos.size)), replace=False)] = True
        cols[f"{'fine' if fine else 'coarse'}_{k:02d}"] = y.astype(int)

    names = np.array([f"P{i:05d}" for i in range(n_proteins)])
    e = np.array(sorted(edges))
    edge_table = pd.DataFrame({"protein_a": names[e[:, 0]], "protein_b": names[e[:, 1]], "weight": 1.0})
    labels = pd.DataFrame(cols, index=pd.Index(names, name="protein"))
    is_test = np.zeros(n_proteins, bool)
    is_test[rng.choice(n_proteins, int(round(test_fraction * n_proteins)), replace=False)] = True
    split = pd.Series(np.where(is_test, "test", "train"), index=labels.index, name="split")
    return edge_table, labels, split
