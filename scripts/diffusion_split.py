"""Snakemake entry (GPU-tagged): every method of the diffusion study on one split."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import pandas as pd  # noqa: E402

from biokernels.device import log_device  # noqa: E402
from biokernels.io.networks import adjacency_matrix  # noqa: E402
from biokernels.io.protein_data import load_split_inputs  # noqa: E402
from biokernels.kernels.diffusion import diffusion_betas  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402
from biokernels.protein_function import evaluate_split  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
device = log_device(smk.params.device, log)
d, P, labels, train_mask = load_split_inputs(smk.input.eigen, smk.input.labels, smk.input.splits,
                                               smk.wildcards.split)
proteins = list(labels.index)
edges = pd.read_csv(smk.input.edges, sep="\t", dtype={"protein_a": str, "protein_b": str})
_, A = adjacency_matrix(edges, proteins)
res = evaluate_split(P, d, labels, train_mask, diffusion_betas(cfg["n_kernels"], cfg["beta_step"]),
                     cfg["lam"], cfg["svm_C_grid"], cfg["inner_folds"], smk.params.seed,
                     tuple(cfg["formulations"]), adjacency=A, device=device,
                     solver=cfg["solver"], log=log)
res.roc.to_csv(smk.output.roc, sep="\t", index=False)
res.kernel_roc.to_csv(smk.output.kernel_roc, sep="\t", index=False)
res.weights.to_csv(smk.output.weights, sep="\t", index=False)
res.times.to_csv(smk.output.times, sep="\t", index=False)
res.cv.to_csv(smk.output.cv, sep="\t", index=False)
