"""Snakemake entry (GPU-tagged): projection from the imputed expression to
viability against the baseline: the ridge of each model (curve=ridge), then
by 5-fold CV x seeds R² against the number of target samples (S9a,
curve=scaling) or against the number of genes the source predicts (S9b,
curve=genes)."""

import json

import numpy as np
import pandas as pd

from biokernels.studies.depmap.protocol import (gene_orders, log_spaced_counts, model_inputs, ntk_gram, scaling_curve,
                               select_ridges)
from biokernels.device import log_device
from biokernels.io.gctx import read_gctx
from biokernels.logs import rule_logger
from biokernels.scaling import log_spaced_sizes

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
device = log_device(smk.params.device, log)
cfg = smk.params.cfg
curve = smk.wildcards.curve
targets = pd.read_csv(smk.input.targets, sep="\t", index_col=0, dtype={"drug_key": str, "cell_id": str})
imputed = read_gctx(smk.input.imputed).data.T.loc[targets.index]
controls = pd.read_csv(smk.input.controls, sep="\t", index_col=0, dtype={"cell_id": str})
controls.columns = controls.columns.astype(str)
controls = controls[list(imputed.columns.astype(str))]
features = pd.concat([pd.read_csv(p, sep="\t", index_col=0) for p in smk.input.features])
features.index = features.index.astype(str)
with open(smk.input.summary) as f:
    src = json.load(f)
seeds = list(range(smk.params.seed, smk.params.seed + cfg["seeds"]))
kp, response = cfg["kernel"], cfg["projection_input"] == "response"


def inputs(t, genes=None):
    return model_inputs(t, imputed.loc[t.index], features, controls, src, response=response, genes=genes)


def curves():
    """S9a (scaling) or S9b (genes) rows."""
    ridge = pd.read_csv(smk.input.ridge, sep="\t")
    lams = dict(zip(ridge.loc[ridge["chosen"], "model"], ridge.loc[ridge["chosen"], "lam"]))
    log.info("ridges: %s; imputed block: %s", lams, cfg["projection_input"])
    out = []
    for stratum in ("seen", "unseen"):
        t = targets[targets["stratum"] == stratum]
        fold = t["fold"].to_numpy()
        n_train = int(np.min([np.sum(fold != k) for k in np.unique(fold)])) if len(np.unique(fold)) > 1 else 0
        if n_train < cfg["scaling"]["n_min"] + cfg["scaling"]["n_points"]:
            log.warning("%s drugs: %d target pairs (%d per training split), too few for the curve: stratum skipped",
                        stratum, len(t), n_train)
            continue
        y = t["viability"].to_numpy(np.float64)
        if curve == "scaling":
            X = inputs(t)
            grams = {m: ntk_gram(X[m], kp, device) for m in ("baseline", "projection")}
            sizes = log_spaced_sizes(n_train, cfg["scaling"]["n_points"], cfg["scaling"]["n_min"])
            log.info("%s drugs: %d pairs, sizes %s, %d folds x %d seeds", stratum, len(t), sizes,
                     len(np.unique(fold)), len(seeds))
            res = scaling_curve(grams, y, fold, sizes, seeds, lams)
        else:
            counts = log_spaced_counts(imputed.shape[1], cfg["genes"]["n_points"])
            log.info("%s drugs: %d pairs, gene counts %s", stratum, len(t), counts)
            rows = []
            for seed, order in gene_orders(imputed.shape[1], seeds).items():
                for g in counts:
                    X = inputs(t, genes=order[:g])
                    r = scaling_curve({"projection": ntk_gram(X["projection"], kp, device)}, y, fold,
                                      [n_train], [seed], lams)
                    rows.append(r.assign(n_genes=g))
            res = pd.concat(rows, ignore_index=True).drop(columns=["model"])
        out.append(res.assign(stratum=stratum))
    table = pd.concat(out, ignore_index=True) if out else pd.DataFrame(
        columns=["stratum", "n_train", "seed", "fold", "model", "r2"])
    table.to_csv(smk.output[0], sep="\t", index=False)
    log.info("wrote %d rows", len(table))


if curve == "ridge":  # one ridge per model, on a holdout of seen pairs (the drug screen: one target line)
    t = targets[targets["stratum"] == "seen"]
    if len(t) < 10:
        t = targets
    X = inputs(t)
    lams, table = select_ridges({m: ntk_gram(X[m], kp, device) for m in X}, t["viability"].to_numpy(np.float64),
                                cfg["ridge"]["grid"], cfg["ridge"]["subset"], smk.params.seed)
    log.info("ridges chosen on %d %s pairs: %s", min(len(t), cfg["ridge"]["subset"]), t["stratum"].iloc[0], lams)
    table.to_csv(smk.output[0], sep="\t", index=False)
else:
    curves()
