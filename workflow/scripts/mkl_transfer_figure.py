"""Snakemake entry: SI Fig. S7 table (mean/SD over seeds), weights table and figure."""

import pandas as pd

from biokernels.logs import rule_logger
from biokernels.studies.mkl_transfer.protocol import plot_accuracies, summarize
from biokernels.plotting import save_figure

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
acc = pd.concat([pd.read_csv(p, sep="\t") for p in smk.input.accuracy], ignore_index=True)
# the source task is the same in every per-corruption run of one seed: keep one copy
acc = acc.drop_duplicates(subset=["target", "method", "model", "seed"])
table = summarize(acc, smk.params.order)
table.to_csv(smk.output.table, sep="\t", index=False)
w = pd.concat([pd.read_csv(p, sep="\t") for p in smk.input.weights], ignore_index=True)
w = w.drop_duplicates(subset=["target", "method", "kernel", "seed"])
wt = (w.groupby(["target", "method", "kernel"], sort=False)["weight"].agg(["mean", "std"]).fillna(0.0)
      .rename(columns={"mean": "weight_mean", "std": "weight_sd"}).reset_index())
wt.to_csv(smk.output.weights, sep="\t", index=False)
wins = table[table["model"] == "translation"].groupby("method")["translation_best"].agg(["sum", "size"])
log.info("translation best (of baseline/transfer/translation) per method:\n%s", wins)
log.info("source-learned weights:\n%s", wt[wt["target"] == "source"])
save_figure(plot_accuracies(table, smk.params.title, smk.params.xlabel), smk.output.pdf, smk.output.png)
