"""Snakemake entry: SM1 (Lanckriet et al.'s QCQP) on the given split, with the
C that the split's inner CV chose."""

import pandas as pd

from biokernels.device import log_device
from biokernels.studies.diffusion.data import load_eigens
from biokernels.kernels.diffusion import diffusion_betas
from biokernels.logs import rule_logger
from biokernels.studies.diffusion.protocol import annotated_mask, chosen_scale, evaluate_sm1

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
device = log_device(smk.params.device, log)
eigens, labels, train_mask = load_eigens(list(smk.input.eigen), smk.input.labels, smk.input.splits)
lap, step = chosen_scale(pd.read_csv(smk.input.scale, sep="\t"), smk.input.scale)
d, P = eigens[lap]
eval_mask = annotated_mask(labels) if cfg["unannotated"] == "exclude" else None
log.info("kernel scale of split 00: %s Laplacian, beta step %g", lap, step)
cv = pd.read_csv(smk.input.cv, sep="\t")
C = float(cv.loc[cv["chosen"], "C"].iloc[0])
if cfg.get("deviation") and not cfg["sm1"].get("on_deviations", False):
    log.info("SM1 skipped: this data set carries a deviation from the paper's protocol (%s) and "
             "diffusion.sm1.on_deviations is false", cfg["deviation"])
    roc, weights, times = (pd.DataFrame(columns=c) for c in
                           (["method", "task", "auc"], ["method", "task", "beta", "weight"], ["method", "seconds"]))
elif cfg["sm1"]["enabled"]:
    roc, weights, times = evaluate_sm1(P, d, labels, train_mask,
                                       diffusion_betas(cfg["n_kernels"], step), C,
                                       cfg["sm1"]["max_seconds"], cfg["sm1"]["max_memory_gb"],
                                       device, log, eval_mask)
else:
    log.info("SM1 disabled in the config (diffusion.sm1.enabled: false)")
    roc, weights, times = (pd.DataFrame(columns=c) for c in
                           (["method", "task", "auc"], ["method", "task", "beta", "weight"], ["method", "seconds"]))
roc.to_csv(smk.output.roc, sep="\t", index=False)
weights.to_csv(smk.output.weights, sep="\t", index=False)
times.to_csv(smk.output.times, sep="\t", index=False)
