"""Snakemake entry (GPU-tagged): every method of the diffusion study on one split."""

import pandas as pd

from biokernels.device import log_device
from biokernels.io.networks import adjacency_matrix
from biokernels.studies.diffusion.data import load_eigens
from biokernels.logs import rule_logger
from biokernels.studies.diffusion.protocol import run_split

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
device = log_device(smk.params.device, log)
eigens, labels, train_mask = load_eigens(list(smk.input.eigen), smk.input.labels, smk.input.splits,
                                         smk.wildcards.split)
edges = pd.read_csv(smk.input.edges, sep="\t", dtype={"protein_a": str, "protein_b": str})
_, A = adjacency_matrix(edges, list(labels.index))
# the rule's threads run the classifier fits of the tasks in parallel (results do not depend on it)
res, scale = run_split(cfg, eigens, labels, train_mask, smk.params.seed, adjacency=A, device=device,
                       log=log, n_jobs=smk.threads)
res.roc.to_csv(smk.output.roc, sep="\t", index=False)
res.kernel_roc.to_csv(smk.output.kernel_roc, sep="\t", index=False)
res.weights.to_csv(smk.output.weights, sep="\t", index=False)
res.times.to_csv(smk.output.times, sep="\t", index=False)
res.cv.to_csv(smk.output.cv, sep="\t", index=False)
scale.to_csv(smk.output.scale, sep="\t", index=False)
