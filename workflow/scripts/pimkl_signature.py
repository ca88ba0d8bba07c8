"""Snakemake entry: PIMKL fitted on a whole cohort, exported as a model directory."""

import pandas as pd

from biokernels.io.pathways import read_gmt
from biokernels.logs import rule_logger
from biokernels.modelfiles import config_hash, file_sha256
from biokernels.studies.pimkl.predict import fit_signature
from biokernels.studies.pimkl.protocol import load_cohort

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg, cohort = smk.params.cfg, smk.params.cohort
X, y, counts = load_cohort(smk.params.spec, collapse=cfg["collapse"], name=cohort)
cv = cfg["cv"]
sig = fit_signature(X, y, pd.read_csv(smk.input.edges, sep="\t"), read_gmt(smk.input.gene_sets), cohort=cohort,
                    inner_folds=cv["inner_folds"], easymkl_lams=cv["easymkl_lams"], criterion=cv["criterion"],
                    classifier=cfg["classifier"], svm_C=cfg["svm_C"], kernel_aggregation=cfg["kernel_aggregation"],
                    seed=smk.params.seed, min_genes=cfg["min_genes"])
inputs = [smk.input.edges, smk.input.gene_sets, *smk.input.cohort]
sig.save(smk.output.model, {"config_hash": config_hash(cfg), "source": smk.params.source,
                            "training_data": {p: file_sha256(p) for p in inputs}, "seed": smk.params.seed})
pd.DataFrame({"pathway": [p.name for p in sig.pathways], "weight": sig.weights,
              "genes": [len(p.genes) for p in sig.pathways]}).to_csv(smk.output.weights, sep="\t", index=False)
log.info("signature on %s: %d samples, %d genes, %d pathways, lambda %g, fallback %s", cohort, len(y),
         len(sig.genes), len(sig.pathways), sig.easymkl_lam, sig.equal_weight_fallback)
