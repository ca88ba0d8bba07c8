"""Snakemake entry: a GEO-layout table (sample_info, pert_info or gene_info)
the config does not give, from the matrix's own metadata."""

from biokernels.io.cmap import matrix_table
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
table = matrix_table(smk.input.gctx, smk.wildcards.table, smk.params.config_key)
table.to_csv(smk.output[0], sep="\t", index=False)
log.info("%s not set: %s from the metadata of %s, %d rows, fields %s", smk.params.config_key, smk.wildcards.table,
         smk.input.gctx, len(table), list(table.columns))
