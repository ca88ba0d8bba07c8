"""Label propagation per term on a network, in closed form: the harmonic
function (Zhu, Ghahramani & Lafferty, ICML 2003) and local and global
consistency (Zhou et al., NIPS 2004), the two methods of networkx's
``node_classification`` module.

networkx returns hard labels only (the argmax over classes of its iterated
scores); the benchmark needs scores to rank genes, so the fixed points of
the same iterations are solved here with a sparse LU, and the score of a
term is ``F_pos - F_neg`` of the two-class problem (term vs. the training
genes without it): its sign is networkx's label
(tests/unit/studies/test_function_benchmark.py checks networkx's labels
on a toy graph).
"""

from __future__ import annotations

import numpy as np
import scipy.sparse as sp
import scipy.sparse.csgraph as csgraph
import scipy.sparse.linalg as spla

from biokernels.errors import InputError

__all__ = ["harmonic_scores", "lgc_scores", "PROPAGATION"]


def _inputs(A, labelled, Y):
    A = sp.csr_array(A, dtype=np.float64)
    A = A - sp.diags_array(A.diagonal())
    labelled = np.asarray(labelled, dtype=np.int64)
    Y = np.asarray(Y, dtype=np.float64)
    if Y.ndim != 2 or Y.shape[0] != labelled.size:
        raise InputError(f"labels must be (n_labelled, t) = ({labelled.size}, t), got {Y.shape}")
    if labelled.size and (labelled.min() < 0 or labelled.max() >= A.shape[0]):
        raise InputError("labelled node index out of range")
    return A, labelled, 2.0 * Y - 1.0


def harmonic_scores(A, labelled: np.ndarray, Y: np.ndarray) -> np.ndarray:
    """Harmonic-function scores of every node for each term.

    Parameters
    ----------
    A : (n, n) symmetric non-negative adjacency (diagonal ignored)
    labelled : int array (m,), the training genes
    Y : 0/1 array (m, t), their terms

    Returns
    -------
    F : array (n, t) in [-1, 1]: ``f_pos - f_neg`` with ``f`` harmonic on the
        unlabelled nodes (``f_u = sum_v A_uv f_v / d_u``) and fixed to the
        label on the labelled ones; 0 on a node whose component holds no
        labelled node (no walk reaches a label).
    """
    A, labelled, T = _inputs(A, labelled, Y)
    n = A.shape[0]
    F = np.zeros((n, T.shape[1]))
    F[labelled] = T
    _, comp = csgraph.connected_components(A, directed=False)
    reach = np.isin(comp, np.unique(comp[labelled]))
    is_lab = np.zeros(n, dtype=bool)
    is_lab[labelled] = True
    U = np.flatnonzero(reach & ~is_lab)
    if U.size:
        deg = np.asarray(A.sum(axis=1)).ravel()
        L_UU = (sp.diags_array(deg[U]) - A[U][:, U]).tocsc()
        rhs = A[U][:, labelled] @ T
        F[U] = spla.splu(L_UU).solve(np.asarray(rhs))
    return F


def lgc_scores(A, labelled: np.ndarray, Y: np.ndarray, alpha: float = 0.99) -> np.ndarray:
    """Local-and-global-consistency scores of every node for each term.

    The fixed point of networkx's iteration ``F <- alpha S F + (1 - alpha) Y0``
    (``S = D^{-1/2} A D^{-1/2}``, a zero degree taken as 1):
    ``F = (1 - alpha) (I - alpha S)^{-1} Y0`` with ``Y0`` = +1 / -1 at the
    labelled nodes (the difference of the two classes' one-hot columns), 0
    elsewhere. Returns (n, t); raises InputError for alpha outside (0, 1).
    """
    if not 0 < alpha < 1:
        raise InputError(f"alpha must lie in (0, 1), got {alpha}")
    A, labelled, T = _inputs(A, labelled, Y)
    n = A.shape[0]
    deg = np.asarray(A.sum(axis=0)).ravel()
    deg[deg == 0] = 1.0
    h = 1.0 / np.sqrt(deg)
    S = sp.diags_array(h) @ A @ sp.diags_array(h)
    Y0 = np.zeros((n, T.shape[1]))
    Y0[labelled] = T
    M = (sp.eye_array(n) - alpha * S).tocsc()
    return (1.0 - alpha) * spla.splu(M).solve(Y0)


#: Propagation methods by the config's name: ``(A, labelled, Y, **params) -> (n, t)``.
PROPAGATION = {"harmonic": harmonic_scores, "lgc": lgc_scores}
