"""Snakemake entry (GPU-tagged): every method of the diffusion study on one split."""

import shutil

import numpy as np
import pandas as pd

from biokernels.device import log_device
from biokernels.io.networks import adjacency_matrix
from biokernels.logs import rule_logger
from biokernels.studies.diffusion.data import load_eigens
from biokernels.studies.diffusion.protocol import run_split, same_split_inputs, split_kernel_scale

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
device = log_device(smk.params.device, log)
eigens, labels, train_mask = load_eigens(list(smk.input.eigen), smk.input.labels, smk.input.splits,
                                         smk.wildcards.split)
chosen, scale = split_kernel_scale(cfg, eigens, labels, train_mask, smk.params.seed, device, log)
sibling = next((s for s in smk.params.siblings if s["laplacian"] == chosen.laplacian
                and np.isclose(s["beta_step"], chosen.beta_step)), None)
why = "no configured data set has this scale" if sibling is None else same_split_inputs(
    {"edges": smk.input.edges, "labels": smk.input.labels, "splits": smk.input.splits}, sibling,
    eigens[chosen.laplacian])
if why is None:
    log.info("chosen scale %s: the tables of data set %s (same network, labels, split, eigendecomposition "
             "and settings), not recomputed", chosen.name, sibling["dataset"])
    for key, path in sibling["tables"].items():
        shutil.copyfile(path, smk.output[key])
else:
    if sibling is not None:
        log.info("chosen scale %s: recomputed, not taken from data set %s (%s)", chosen.name,
                 sibling["dataset"], why)
    edges = pd.read_csv(smk.input.edges, sep="\t", dtype={"protein_a": str, "protein_b": str})
    _, A = adjacency_matrix(edges, list(labels.index))
    # the rule's threads run the classifier fits of the tasks in parallel (results do not depend on it)
    res, _ = run_split(cfg, eigens, labels, train_mask, smk.params.seed, adjacency=A, device=device,
                       log=log, n_jobs=smk.threads, scale=(chosen, scale))
    for key, frame in (("roc", res.roc), ("kernel_roc", res.kernel_roc), ("weights", res.weights),
                       ("times", res.times), ("cv", res.cv)):
        frame.to_csv(smk.output[key], sep="\t", index=False)
scale.to_csv(smk.output.scale, sep="\t", index=False)
