"""Snakemake entry: the embedded default PIMKL data (biokernels.synth.pimkl)."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

from biokernels.logs import rule_logger  # noqa: E402
from biokernels.synth.pimkl import generate_default  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
gen = dict(smk.params.generator)
for key in ("set_size_range", "missing_range"):
    if key in gen:
        gen[key] = tuple(gen[key])
info = generate_default(smk.params.outdir, seed=smk.params.seed, **gen)
log.info("generated %d genes, %d edges, %d gene sets, cohorts %s; planted pathways %s", info["n_genes"],
         info["n_edges"], info["n_sets"], {k: v["samples"] for k, v in info["cohorts"].items()},
         info["planted_pathways"])
