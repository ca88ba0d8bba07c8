"""Snakemake entry: config/coverage.yaml and results/reproduction.tsv ->
results/coverage.tsv (every figure and table of the papers with its status)
and its HTML view (report item). Its entry ids and targets were checked when the workflow was
parsed (rules/coverage.smk)."""

import os
from pathlib import Path

import pandas as pd
import yaml

from biokernels.coverage import coverage_html, coverage_table, load_coverage, status_counts
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
items = load_coverage(smk.input.coverage, smk.input.schema)
paper_values = yaml.safe_load(Path(smk.input.paper_values).read_text())
reproduction = pd.read_csv(smk.input.reproduction, sep="\t")
# a target counts as built when every file it stands for exists now, after the run
built = {t: files is not None and all(os.path.exists(f) for f in files)
         for t, files in smk.params.target_files.items()}
table = coverage_table(items, reproduction, built)
table.to_csv(smk.output.tsv, sep="\t", index=False)
titles = {k: p["title"] for k, p in paper_values["papers"].items()}
Path(smk.output.html).write_text(coverage_html(table, titles))
log.info("%d items; per status: %s", len(table), status_counts(table))
for key in titles:
    log.info("%s: %s", key, status_counts(table[table["paper"] == key]))
