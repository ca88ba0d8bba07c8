"""Snakemake entry: draw one figure of the diffusion study from its table."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import pandas as pd  # noqa: E402

from biokernels.logs import rule_logger  # noqa: E402
from biokernels.plotting import plot_diffusion, save_figure  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
table = pd.read_csv(smk.input[0], sep="\t")
fig = plot_diffusion(smk.wildcards.kind, table, smk.wildcards.ds, smk.params.paper_dataset)
save_figure(fig, smk.output.pdf, smk.output.png)
log.info("wrote %s", smk.output.png)
