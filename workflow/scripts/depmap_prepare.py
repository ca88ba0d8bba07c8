"""Snakemake entry: read the viability files with the reader of their format
(biokernels.io.depmap.VIABILITY_READERS), keeping the target cell lines of
depmap.cell_lines (every drop counted in read_counts.tsv), match the drugs to
CMAP by structure, drop unusable rows (counted per reason and cell line and
per reason and compound in dropped_summary.tsv; listed row by row in
dropped_rows.tsv only with depmap.list_dropped_rows), strata and folds."""

import json

import pandas as pd

from biokernels.errors import InputError
from biokernels.io.cmap import read_l1000_table
from biokernels.io.depmap import VIABILITY_READERS, drop_summary, match_drugs, prepare_targets, read_counts_table
from biokernels.io.download import sha256_file
from biokernels.logs import rule_logger
from biokernels.registry import call, lookup

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
src = smk.params.source
field = f"depmap.sources.{src['name']}"
files = {k: str(smk.input[f"file_{k}"]) for k in src["files"]}
for key, digest in src["sha256"].items():  # local files with a pinned sha256
    actual = sha256_file(files[key])
    if actual != digest:
        raise InputError(f"{files[key]}: sha256 mismatch ({field}.files.{key}.sha256): expected {digest}, got "
                         f"{actual}; the file is not the one pinned (pin the new digest if it is the right file)")
    log.info("%s: sha256 verified", files[key])
label = files.get("table") or files.get("logfold_change") or files.get("dose_response")
reader = lookup(VIABILITY_READERS, src["format"], f"{field}.reader.format")
cell_lines = list(smk.params.cell_lines)
viab, read_counts = call(reader, src["reader"], f"{field}.reader", files, cell_lines=cell_lines)
read_counts_table(read_counts).to_csv(smk.output.read_counts, sep="\t", index=False)
if cell_lines:
    log.info("depmap.cell_lines: %d name(s) asked for; %d model(s) or cell id(s) left out (read counts)",
             len(cell_lines), read_counts.get("models_not_selected", 0))
log.info("%s (%s): %d rows, %d drugs, %d cell lines; read counts in %s", label, src["format"], len(viab),
         viab["drug_id"].nunique(), viab["cell_id"].nunique(), smk.output.read_counts)
info = read_l1000_table(smk.input.pert_info, ["pert_id", "pert_type", "canonical_smiles"], index="pert_id")
cp = info[info["pert_type"] == "trt_cp"]["canonical_smiles"]
try:
    drugs, dcounts = match_drugs(viab, cp)
except InputError as err:
    raise InputError(f"{label}: {err}") from None
log.info("drugs matched by InChIKey: %s", dcounts)
pairs = pd.read_csv(smk.input.pairs, sep="\t", index_col=0, dtype=str)
controls = pd.read_csv(smk.input.controls, sep="\t", index_col=0, usecols=[0], dtype=str)
try:
    targets, dropped, counts = prepare_targets(viab, drugs, pairs, controls.index,
                                               duplicates=smk.params.duplicates, k=smk.params.folds,
                                               seed=smk.params.seed, n_cmap=smk.params.n_cmap)
except InputError as err:
    raise InputError(f"{label}: {err}") from None
listed = getattr(smk.output, "dropped_rows", None)   # only with depmap.list_dropped_rows
where = smk.output.dropped_summary + (f", listed in {listed}" if listed else "")
for reason in ("missing_value", "no_structure", "cell_not_in_cmap", "duplicate_merged"):
    if counts[reason]:
        log.warning("%d row(s) %s (counted per cell line and compound in %s)", counts[reason],
                    reason.replace("_", " "), where)
absent = sorted(dropped.loc[dropped["reason"] == "cell_not_in_cmap", "cell_id"].unique())
if absent:
    log.warning("%d cell lines absent from CMAP: %s", len(absent), absent[:50])
log.info("targets: %d pairs (%d seen, %d unseen) on %s; source: %d CMAP cell lines", counts["pairs"],
         counts["seen"], counts["unseen"], counts["target_cells"], counts["n_source_cells"])
summary = {"table": label, "files": files, "format": src["format"], "description": src.get("description", ""),
           "cell_lines": cell_lines, "read": read_counts, "drugs": dcounts, **counts}
drugs.index.name = "drug_id"
drugs.to_csv(smk.output.drugs, sep="\t")
drop_summary(dropped).to_csv(smk.output.dropped_summary, sep="\t", index=False)
if listed:
    dropped.to_csv(listed, sep="\t", index=False)
targets.to_csv(smk.output.targets, sep="\t")
with open(smk.output.counts, "w") as f:
    json.dump(summary, f, indent=2)
