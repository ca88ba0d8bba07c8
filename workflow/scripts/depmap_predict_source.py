"""Snakemake entry (GPU-tagged): the CMAP source model refitted at
depmap_source's ridge imputes the expression of every unmeasured DepMap pair
(biokernels.studies.depmap.predict)."""

import json

import pandas as pd

from biokernels.device import log_device
from biokernels.io.gctx import GCT, read_gctx, write_gctx
from biokernels.logs import rule_logger
from biokernels.studies.depmap.predict import unmeasured_pairs
from biokernels.studies.depmap.protocol import impute_expression, load_source_inputs
from biokernels.studies.drug_screen.predict import source_check

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
inputs = load_source_inputs(smk.input.expression, smk.input.pairs, smk.input.controls, smk.input.features,
                            smk.input.targets, smk.input.counts)
targets = inputs["targets"]
new = unmeasured_pairs(targets)
lam = json.load(open(smk.input.summary))["lam"]
log.info("DepMap: %d measured pairs; %d unmeasured (compound, cell line) pairs to impute; source ridge %g",
         len(targets), len(new), lam)
both = pd.concat([targets[["drug_key", "cell_id", "stratum"]], new[["drug_key", "cell_id", "stratum"]]])
imputed, info, _ = impute_expression(
    **{**inputs, "targets": both}, lam=lam, max_source_pairs=cfg["source"]["max_pairs"],
    kernel_params=cfg["kernel"], device=device, solver=cfg["solver"], seed=smk.params.seed, log=log)
protocol = read_gctx(smk.input.imputed).data.T
check = source_check(imputed, protocol)
log.info("against depmap_source on %d measured pairs: max |diff| %.3g (%.3g of the SD)", check["n_pairs"],
         check["max_abs_diff"], check["relative"])
if not check["same"]:
    raise RuntimeError(f"the refitted source model differs from depmap_source's: {check}; rerun both rules")
# the measured pairs keep depmap_source's imputation, the protocol's own inputs
imputed.loc[protocol.index] = protocol.loc[protocol.index].to_numpy()
write_gctx(smk.output.imputed, GCT(data=imputed.T, row_meta=pd.DataFrame(index=imputed.columns),
                                   col_meta=both.loc[imputed.index]))
with open(smk.output.check, "w") as f:
    json.dump({**check, "lam": lam, "n_unmeasured": int(len(new))}, f, indent=2)
