"""Snakemake entry (GPU-tagged): sensitivity of the diffusion study to C,
lam and the beta grid (its end and its step), on the given split."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821


from biokernels.device import log_device  # noqa: E402
import pandas as pd  # noqa: E402

from biokernels.io.protein_data import load_eigens  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402
from biokernels.protein_function import annotated_mask, chosen_scale, sensitivity_table  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
device = log_device(smk.params.device, log)
eigens, labels, train_mask = load_eigens(list(smk.input.eigen), smk.input.labels, smk.input.splits)
lap, step = chosen_scale(pd.read_csv(smk.input.scale, sep="\t"), smk.input.scale)
d, P = eigens[lap]
log.info("kernel scale of split 00: %s Laplacian, beta step %g", lap, step)
eval_mask = annotated_mask(labels) if cfg["unannotated"] == "exclude" else None
table = sensitivity_table(P, d, labels, train_mask, step, cfg["n_kernels"],
                          cfg["lam"], cfg["svm_C_grid"], cfg["inner_folds"], cfg["sensitivity"],
                          smk.params.seed, device, cfg["solver"], log, eval_mask)
table.to_csv(smk.output[0], sep="\t", index=False, float_format="%.6g")
