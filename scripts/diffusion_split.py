"""Snakemake entry (GPU-tagged): every method of the diffusion study on one split."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import pandas as pd  # noqa: E402

from biokernels.device import log_device  # noqa: E402
from biokernels.io.networks import adjacency_matrix  # noqa: E402
from biokernels.io.protein_data import load_eigens  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402
from biokernels.protein_function import run_split  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
device = log_device(smk.params.device, log)
eigens, labels, train_mask = load_eigens(list(smk.input.eigen), smk.input.labels, smk.input.splits,
                                         smk.wildcards.split)
edges = pd.read_csv(smk.input.edges, sep="\t", dtype={"protein_a": str, "protein_b": str})
_, A = adjacency_matrix(edges, list(labels.index))
res, scale = run_split(cfg, eigens, labels, train_mask, smk.params.seed, adjacency=A, device=device,
                       log=log)
res.roc.to_csv(smk.output.roc, sep="\t", index=False)
res.kernel_roc.to_csv(smk.output.kernel_roc, sep="\t", index=False)
res.weights.to_csv(smk.output.weights, sep="\t", index=False)
res.times.to_csv(smk.output.times, sep="\t", index=False)
res.cv.to_csv(smk.output.cv, sep="\t", index=False)
scale.to_csv(smk.output.scale, sep="\t", index=False)
