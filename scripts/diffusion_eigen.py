"""Snakemake entry: Laplacian eigendecomposition of a data set's network."""
import os
import sys
import time

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from biokernels.io.networks import adjacency_matrix  # noqa: E402
from biokernels.kernels.diffusion import laplacian, laplacian_eigh  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402

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
