"""Fixtures shared by the unit tests of the diffusion study."""

import numpy as np
import pytest

from biokernels.io.networks import adjacency_matrix
from biokernels.kernels.diffusion import laplacian, laplacian_eigh
from biokernels.synth.networks import planted_function_network


@pytest.fixture(scope="module")
def planted_network():
    """Factory ``(n, edges, tasks, seed) -> (A, d, P, labels, train_mask)``:
    a planted function network of the generator, its adjacency, the
    eigendecomposition of its Laplacian and the generator's train split
    (cached per module)."""
    cache = {}

    def make(n: int, edges: int, tasks: int, seed: int):
        key = (n, edges, tasks, seed)
        if key not in cache:
            e, labels, split = planted_function_network(n, edges, tasks, np.random.default_rng(seed))
            _, A = adjacency_matrix(e, list(labels.index))
            d, P = laplacian_eigh(laplacian(A))
            cache[key] = (A, d, P, labels, (split == "train").to_numpy())
        return cache[key]

    return make
