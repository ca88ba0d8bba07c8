"""Snakemake entry: the interaction network as a cleaned gene edge table."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import json  # noqa: E402

from biokernels.logs import rule_logger  # noqa: E402
from biokernels.pimkl import load_network  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
edges, counts = load_network({**smk.params.network, "path": smk.input[0]})
edges.to_csv(smk.output.edges, sep="\t", index=False)
with open(smk.output.counts, "w") as fh:
    json.dump(counts, fh, indent=2, sort_keys=True)
log.info("%s: %s", smk.input[0], counts)
