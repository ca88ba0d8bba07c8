"""Snakemake entry: the embedded default PIMKL data (biokernels.synth.pimkl)."""

from biokernels.logs import rule_logger
from biokernels.synth.pimkl import generate_default

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
