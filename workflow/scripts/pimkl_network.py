"""Snakemake entry: the interaction network as a cleaned gene edge table."""

import json

from biokernels.logs import rule_logger
from biokernels.studies.pimkl.protocol import load_network

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
edges, counts = load_network({**smk.params.network, "path": smk.input[0]})
edges.to_csv(smk.output.edges, sep="\t", index=False)
with open(smk.output.counts, "w") as fh:
    json.dump(counts, fh, indent=2, sort_keys=True)
log.info("%s: %s", smk.input[0], counts)
