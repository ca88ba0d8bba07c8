"""Snakemake entry (GPU-tagged): metrics against the number of target
training samples on one target cell line."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

import numpy as np  # noqa: E402
import pandas as pd  # noqa: E402

from biokernels.device import log_device  # noqa: E402
from biokernels.drug_screen_tables import chosen_ridges  # noqa: E402
from biokernels.drug_screen import load_screen, scaling_cell, source_mean, target_cells  # noqa: E402
from biokernels.io.gctx import read_gctx  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402
from biokernels.scaling import log_spaced_sizes  # noqa: E402

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
sc = cfg["scaling"]
data, _ = load_screen(smk.input.expression, smk.input.controls, smk.input.fingerprints, smk.input.folds)
targets = target_cells(smk.input.availability)
cell = targets[int(smk.wildcards.rank) - 1]
lams = chosen_ridges(smk.input.ridge)
f_s = read_gctx(smk.input.predictions).data.T
# One size grid per stratum, shared by every target cell line (so curves average
# over the same n): up to the smallest training-fold size among the targets.
folds = data.folds[data.folds["role"] == "target"]
k = folds["fold"].max() + 1
tables = []
for stratum in ("seen", "unseen"):
    sub = folds[folds["stratum"] == stratum]
    sizes_per_cell = sub.groupby("cell_id").size().reindex(targets).fillna(0)
    n_max = int(np.floor(sizes_per_cell.min() * (k - 1) / k))
    if n_max - sc["n_min"] + 1 < sc["n_points"]:
        log.warning("%s: the smallest target has %d training pairs, too few for %d sizes from %d; skipped",
                    stratum, n_max, sc["n_points"], sc["n_min"])
        continue
    sizes = log_spaced_sizes(n_max, sc["n_points"], n_min=sc["n_min"])
    log.info("%s %s: sizes %s", cell, stratum, sizes)
    seeds = [smk.params.seed + i for i in range(sc["seeds"])]
    tables.append(scaling_cell(data, f_s, source_mean(data), cell, lams, sizes, seeds, cfg["kernel"], device,
                               strata=(stratum,)))
out = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(
    columns=["cell_id", "stratum", "n_train", "seed", "fold", "model", "r2", "cosine", "pearson_r"])
out.to_csv(smk.output[0], sep="\t", index=False)
