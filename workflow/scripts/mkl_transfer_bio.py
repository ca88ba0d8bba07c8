"""Snakemake entry: SI Fig. S7's comparison on DepMap viability, cell line -> cell lines."""
import json


import pandas as pd

from biokernels.logs import rule_logger
from biokernels.studies.mkl_transfer.protocol import run_transfer, transfer_options, viability_tasks

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
model, bio = smk.params.model, smk.params.bio
viability = pd.read_csv(smk.input.targets, sep="\t", dtype={"drug_key": str, "cell_id": str})
features = pd.concat([pd.read_csv(p, sep="\t", index_col=0) for p in smk.input.features])
features = features[~features.index.duplicated(keep="first")]
log.info("%d pairs, %d cell lines, %d drugs with features", len(viability), viability["cell_id"].nunique(),
         len(features))
accs, weights, infos = [], [], {}
for seed in bio["seeds"]:
    source, targets, info = viability_tasks(viability, features, seed, source_cell=bio["source_cell"],
                                            target_cells=bio["targets"], label=bio["label"],
                                            source_fraction=bio["source_fraction"],
                                            n_target_train=bio["n_target_train"])
    log.info("seed %d: %s", seed, info)
    infos[str(seed)] = info
    acc, w = run_transfer(source, targets, seed=seed, **transfer_options(model))
    accs.append(acc)
    weights.append(w)
acc = pd.concat(accs, ignore_index=True)
acc.to_csv(smk.output.accuracy, sep="\t", index=False)
pd.concat(weights, ignore_index=True).to_csv(smk.output.weights, sep="\t", index=False)
with open(smk.output.info, "w") as fh:
    json.dump(infos, fh, indent=2)
log.info("mean accuracy:\n%s", acc.pivot_table(index=["target", "method"], columns="model",
                                               values="accuracy").round(3))
