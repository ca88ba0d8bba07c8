"""Snakemake entry: source / target cell lines, seen / unseen strata, folds."""

import pandas as pd

from biokernels.studies.drug_screen.tables import assign_folds, split_cell_lines
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
pairs = pd.read_csv(smk.input.pairs, sep="\t", index_col=0, dtype={"pert_id": str, "cell_id": str})
source, target, avail = split_cell_lines(pairs, n_target=cfg["n_target"], targets=cfg["targets"] or None,
                                         n_cells=cfg["n_cells"])
folds = assign_folds(pairs, source, target, k=cfg["folds"], seed=smk.params.seed)
rank = {c: i + 1 for i, c in enumerate(target)}
avail["rank"] = avail["cell_id"].map(rank).astype("Int64")
avail.to_csv(smk.output.availability, sep="\t", index=False)
folds.to_csv(smk.output.folds, sep="\t")
n_src = int((folds["role"] == "source").sum())
log.info("source: %d cell lines, %d pairs; targets: %s", len(source), n_src, target)
for cell in target:
    sub = folds[folds["cell_id"] == cell]
    log.info("target %s: %d seen, %d unseen drugs", cell, (sub["stratum"] == "seen").sum(),
             (sub["stratum"] == "unseen").sum())
log.info("dropped (beyond n_cells): %d pairs", int((folds["role"] == "dropped").sum()))
