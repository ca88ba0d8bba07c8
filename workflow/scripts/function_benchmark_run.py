"""Snakemake entry: one (data set, level) run of the function benchmark."""

import json

from biokernels.logs import rule_logger
from biokernels.studies.function_benchmark.data import load_inputs
from biokernels.studies.function_benchmark.run import run_benchmark

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = smk.params.cfg
genes, networks, Y, counts = load_inputs(smk.params.source, smk.wildcards.level, cfg["seed"])
log.info("%s: %d genes, %d networks, %s", smk.wildcards.dataset, len(genes), len(networks), counts)
res = run_benchmark(networks, Y, cfg, log)
res.metrics.to_csv(smk.output.metrics, sep="\t", index=False)
res.choices.to_csv(smk.output.choices, sep="\t", index=False)
res.times.to_csv(smk.output.times, sep="\t", index=False)
with open(smk.output.counts, "w") as fh:
    json.dump({**counts, "genes": len(genes), "networks": sorted(networks)}, fh, indent=1)
log.info("total %.0f s over %d methods", res.times["seconds"].sum(), len(res.times))
