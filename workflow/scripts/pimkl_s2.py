"""Snakemake entry: Algorithm S2 of PIMKL on the large cohort (mRNA, CNA,
both; trained vs transferred signature)."""

import pandas as pd

from biokernels.io.pathways import read_gmt
from biokernels.logs import rule_logger
from biokernels.studies.pimkl.protocol import load_cohort, median_signature, read_weights, run_s2

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
cohort = smk.params.cohort
X, y, counts = load_cohort(smk.params.spec, collapse=cfg["collapse"], name=cohort)
omics = {"mrna": X}
if "cna" in counts:
    omics["cna"] = counts["cna"]
log.info("cohort %s: %d samples (%d positive), data types %s", cohort, len(y), int(y.sum()), list(omics))
transferred = None
if smk.input.transfer:
    sig = median_signature(read_weights(smk.input.transfer))
    transferred = sig.median(axis=1, skipna=True).rename("weight")
    transferred.index.name = "pathway"
    log.info("transferred signature: median over %d cohort(s) %s of their median weights, %d pathways",
             sig.shape[1], list(sig.columns), len(transferred))
    transferred.to_frame().reset_index().to_csv(smk.output.transferred, sep="\t", index=False)
else:
    pd.DataFrame(columns=["pathway", "weight"]).to_csv(smk.output.transferred, sep="\t", index=False)
res = run_s2(omics, y, pd.read_csv(smk.input.edges, sep="\t"), read_gmt(smk.input.gene_sets), cohort=cohort,
             folds=cfg["folds"], per_class=cfg["per_class"], easymkl_lam=cfg["easymkl_lam"], transferred=transferred,
             kernel_aggregation=cfg["kernel_aggregation"], seed=smk.params.seed, min_genes=cfg["min_genes"])
res.aucs.to_csv(smk.output.aucs, sep="\t", index=False)
res.weights.to_csv(smk.output.weights, sep="\t", index=False)
log.info("mean AUC: %s", res.aucs.groupby(["omics", "weights"])["auc"].mean().round(3).to_dict())
