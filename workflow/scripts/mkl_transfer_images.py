"""Snakemake entry: SI Fig. S7 on one corruption of the image task (every seed
and MKL method): the 8x8 digits, or two classes of the images study's set."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.studies.mkl_transfer.protocol import digit_tasks, image_pair_tasks, run_transfer, transfer_options

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
model, images = smk.params.model, smk.params.images
corruption = smk.wildcards.corruption
image_set = None
if images.get("dataset", "digits") == "images":
    from biokernels.studies.images.tasks import load_set

    image_set = load_set(images["image_set"], 0)
accs, weights = [], []
for seed in images["seeds"]:
    if image_set is None:
        source, targets, info = digit_tasks([corruption], seed, severity=images["severity"],
                                            classes=tuple(images["classes"]),
                                            source_fraction=images["source_fraction"])
    else:
        source, targets, info = image_pair_tasks(image_set, [corruption], seed, classes=images["classes"],
                                                 severity=images["severity"], **images["sizes"])
    log.info("seed %d, %s: %s", seed, corruption, info)
    acc, w = run_transfer(source, targets, seed=seed, **transfer_options(model))
    accs.append(acc)
    weights.append(w)
acc = pd.concat(accs, ignore_index=True)
acc.to_csv(smk.output.accuracy, sep="\t", index=False)
pd.concat(weights, ignore_index=True).to_csv(smk.output.weights, sep="\t", index=False)
log.info("mean accuracy on %s:\n%s", corruption,
         acc[acc["target"] == corruption].pivot_table(index="method", columns="model", values="accuracy").round(3))
