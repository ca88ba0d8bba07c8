"""Snakemake entry: config/coverage.yaml and results/reproduction.tsv ->
results/coverage.tsv (every figure and table of the papers with its status)
and its HTML view (report item)."""

from pathlib import Path

import pandas as pd
import yaml

from biokernels.coverage import (CoverageError, coverage_html, coverage_table, load_coverage, reference_errors,
                                 status_counts)
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
items = load_coverage(smk.input.coverage, smk.input.schema)
paper_values = yaml.safe_load(Path(smk.input.paper_values).read_text())
problems = reference_errors(items, entry_ids=[e["id"] for e in paper_values["entries"]],
                            papers=paper_values["papers"])
if problems:
    raise CoverageError(f"{smk.input.coverage} names what paper_values.yaml lacks:\n" + "\n".join(problems))
reproduction = pd.read_csv(smk.input.reproduction, sep="\t")
table = coverage_table(items, reproduction)
table.to_csv(smk.output.tsv, sep="\t", index=False)
titles = {k: p["title"] for k, p in paper_values["papers"].items()}
Path(smk.output.html).write_text(coverage_html(table, titles))
log.info("%d items; per status: %s", len(table), status_counts(table))
for key in titles:
    log.info("%s: %s", key, status_counts(table[table["paper"] == key]))
