"""Snakemake entry (GPU-tagged): metrics against the number of target
training samples on one target cell line."""

import numpy as np
import pandas as pd

from biokernels.device import log_device
from biokernels.studies.drug_screen.tables import chosen_ridges
from biokernels.studies.drug_screen.protocol import load_target_inputs, scaling_cell, source_mean
from biokernels.logs import rule_logger
from biokernels.scaling import log_spaced_sizes

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
sc = cfg["scaling"]
data, f_s, targets = load_target_inputs(smk.input.expression, smk.input.controls, smk.input.fingerprints,
                                        smk.input.folds, smk.input.predictions, smk.input.availability)
cell = targets[int(smk.wildcards.rank) - 1]
lams = chosen_ridges(smk.input.ridge)
# One size grid per stratum, shared by every target cell line large enough for
# it (so the curves average over the same n): up to the smallest training-fold
# size among those lines. A line too small for n_points sizes from n_min is
# left out of that stratum's curve, with a warning.
folds = data.folds[data.folds["role"] == "target"]
mu = source_mean(data)
seeds = [smk.params.seed + i for i in range(sc["seeds"])]
k = folds["fold"].max() + 1
tables = []
for stratum in ("seen", "unseen"):
    sub = folds[folds["stratum"] == stratum]
    n_train = np.floor(sub.groupby("cell_id").size().reindex(targets).fillna(0) * (k - 1) / k).astype(int)
    eligible = n_train[n_train >= sc["n_min"] + sc["n_points"] - 1]
    if cell not in eligible.index:
        log.warning("%s %s: %d training pairs per fold, too few for %d sizes from %d; this line is left out of "
                    "the %s curve", cell, stratum, n_train[cell], sc["n_points"], sc["n_min"], stratum)
        continue
    sizes = log_spaced_sizes(int(eligible.min()), sc["n_points"], n_min=sc["n_min"])
    log.info("%s %s: sizes %s (shared by %s)", cell, stratum, sizes, list(eligible.index))
    tables.append(scaling_cell(data, f_s, mu, cell, lams, sizes, seeds, cfg["kernel"], device,
                               strata=(stratum,)))
out = pd.concat(tables, ignore_index=True) if tables else pd.DataFrame(
    columns=["cell_id", "stratum", "n_train", "seed", "fold", "model", "r2", "cosine", "pearson_r_paper",
             "pearson_r_centred"])
out.to_csv(smk.output[0], sep="\t", index=False)
