"""Snakemake entry: Laplacian eigendecomposition of a data set's network."""
import time


import numpy as np
import pandas as pd

from biokernels.io.networks import adjacency_matrix
from biokernels.kernels.diffusion import laplacian, laplacian_eigh
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
edges = pd.read_csv(smk.input.edges, sep="\t", dtype={"protein_a": str, "protein_b": str})
proteins = list(pd.read_csv(smk.input.labels, sep="\t", index_col=0).index.astype(str))
_, A = adjacency_matrix(edges, proteins)
t0 = time.perf_counter()
kind = smk.wildcards.laplacian
d, P = laplacian_eigh(laplacian(A, kind))
log.info("eigendecomposition of the %s Laplacian, n=%d, in %.2f s; eigenvalues %.3g..%.3g", kind, len(d),
         time.perf_counter() - t0,
         d.min(), d.max())
np.savez(smk.output[0], laplacian=np.array(kind), d=d, P=P, proteins=np.array(proteins))
