"""Snakemake entry: read the viability table, match its drugs to CMAP by
structure, drop (and list) unusable rows, strata and folds."""

import json

import pandas as pd

from biokernels.io.depmap import match_drugs, prepare_targets, read_viability
from biokernels.errors import InputError
from biokernels.io.cmap import read_l1000_table
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
src = smk.params.source
viab = read_viability(smk.input.table, src["columns"], src["cell_pattern"])
log.info("%s: %d rows, %d drugs, %d cell lines", smk.input.table, len(viab), viab["drug_id"].nunique(),
         viab["cell_id"].nunique())
info = read_l1000_table(smk.input.pert_info, ["pert_id", "pert_type", "canonical_smiles"], index="pert_id")
cp = info[info["pert_type"] == "trt_cp"]["canonical_smiles"]
try:
    drugs, dcounts = match_drugs(viab, cp)
except InputError as err:
    raise InputError(f"{smk.input.table}: {err}") from None
log.info("drugs matched by InChIKey: %s", dcounts)
pairs = pd.read_csv(smk.input.pairs, sep="\t", index_col=0, dtype=str)
controls = pd.read_csv(smk.input.controls, sep="\t", index_col=0, usecols=[0], dtype=str)
try:
    targets, dropped, counts = prepare_targets(viab, drugs, pairs, controls.index,
                                               duplicates=smk.params.duplicates, k=smk.params.folds,
                                               seed=smk.params.seed, n_cmap=smk.params.n_cmap)
except InputError as err:
    raise InputError(f"{smk.input.table}: {err}") from None
for reason in ("missing_value", "no_structure", "cell_not_in_cmap", "duplicate_merged"):
    if counts[reason]:
        log.warning("%d row(s) %s (listed in %s)", counts[reason], reason.replace("_", " "), smk.output.dropped)
absent = sorted(dropped.loc[dropped["reason"] == "cell_not_in_cmap", "cell_id"].unique())
if absent:
    log.warning("cell lines absent from CMAP: %s", absent)
log.info("targets: %d pairs (%d seen, %d unseen) on %s; source: %d CMAP cell lines", counts["pairs"],
         counts["seen"], counts["unseen"], counts["target_cells"], counts["n_source_cells"])
summary = {"table": str(smk.input.table), "description": src.get("description", ""), "drugs": dcounts, **counts}
drugs.index.name = "drug_id"
drugs.to_csv(smk.output.drugs, sep="\t")
dropped.to_csv(smk.output.dropped, sep="\t", index=False)
targets.to_csv(smk.output.targets, sep="\t")
with open(smk.output.counts, "w") as f:
    json.dump(summary, f, indent=2)
