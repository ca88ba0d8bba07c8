"""Snakemake entry: paper_values.yaml resolved against this run's result
tables -> results/reproduction.tsv and its HTML view (report item)."""
import os


from pathlib import Path

from biokernels.logs import rule_logger
from biokernels.report import Context, load_paper_values, reproduction_table, table_html, verdict_counts

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
doc = load_paper_values(smk.input.paper_values, smk.input.schema)
ctx = Context.from_mapping(smk.params.context)
log.info("%d entries; studies in the workflow: %s", len(doc["entries"]), sorted(ctx.studies))
# tables are named relative to results/, the folder of the output
results_dir = os.path.dirname(smk.output.tsv) or "."
table = reproduction_table(doc, results_dir, ctx)
table.to_csv(smk.output.tsv, sep="\t", index=False)
Path(smk.output.html).write_text(table_html(table, doc))
log.info("rows per verdict: %s", verdict_counts(table))
