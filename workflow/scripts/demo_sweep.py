"""Snakemake entry (GPU-tagged): kernel ridge along one hyperparameter."""

import numpy as np

from biokernels.device import log_device
from biokernels.logs import rule_logger
from biokernels.solvers.krr import krr_sweep

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
sweep = smk.wildcards.sweep
values = cfg["lams"] if sweep == "lam" else cfg["bandwidths"]
with np.load(smk.input[0]) as f:
    data = dict(f)
table = krr_sweep(data, sweep, values, lam=cfg["lam"], bandwidth=cfg["bandwidth"],
                  device=device)
table.to_csv(smk.output[0], sep="\t", index=False)
log.info("best test R2 %.4f at %s=%s", table["test_r2"].max(), sweep,
         table.loc[table["test_r2"].idxmax(), sweep])
