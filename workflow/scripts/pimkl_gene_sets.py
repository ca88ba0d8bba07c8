"""Snakemake entry: one gene-set collection (checked copy, or its randomized control)."""

from biokernels.io.pathways import read_gmt, write_gmt
from biokernels.logs import rule_logger
from biokernels.studies.pimkl.protocol import random_gene_sets

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
sets, counts = read_gmt(smk.input[0], with_counts=True)
log.info("%s: %s", smk.input[0], counts)
if smk.params.random:
    sets = random_gene_sets(sets, seed=smk.params.seed, size_range=tuple(smk.params.size_range))
    log.info("randomized: %d sets of sizes %d-%d from the union of %d genes", len(sets),
             min(map(len, sets.values())), max(map(len, sets.values())), counts["unique_genes"])
write_gmt(sets, smk.output[0])
