"""The projection step of the DepMap study (Radhakrishnan et al. 2023,
Methods "DepMap analysis", SI Fig. S9), as the ``depmap_projection`` rule
runs it: from the imputed expression of the target pairs to viability,
projection against the baseline, one table per ``curve``:

* ``ridge``: the ridge of each model (:func:`projection_ridges`);
* ``scaling``: R² against the number of target samples (S9a,
  :func:`scaling_rows`);
* ``genes``: R² of projection against the number of genes the source
  predicts (S9b, :func:`genes_rows`).

``cfg`` is the rule's ``params.cfg``: the config's ``depmap`` keys
``seeds``, ``ridge``, ``scaling``, ``genes``, ``projection_input`` and the
drug screen's ``kernel``.
"""

from __future__ import annotations

import json
from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from biokernels.device import resolve_device
from biokernels.kernels.ntk import ntk_relu_from_gram
from biokernels.scaling import log_spaced_sizes
from biokernels.studies.depmap.protocol import (gene_orders, log_spaced_counts, model_inputs, ntk_gram,
                                                projection_parts, projection_scale, scaling_curve, select_ridges)

CURVES = ("ridge", "scaling", "genes")
#: Columns of an empty curve table (no stratum had enough pairs).
EMPTY_COLUMNS = ["stratum", "n_train", "seed", "fold", "model", "r2"]


@dataclass
class ProjectionData:
    """What the projection step reads.

    Attributes
    ----------
    targets : DataFrame (pairs), ``drug_key``, ``cell_id``, ``stratum``,
        ``fold``, ``viability`` (:func:`biokernels.io.depmap.prepare_targets`)
    imputed : DataFrame (pairs x genes), imputed log2 expression, rows in
        the order of ``targets``
    controls : DataFrame (cells x genes), control expression, columns those
        of ``imputed``
    features : DataFrame (drugs x p), drug embedding, index str
    source : dict, the source summary
        (:func:`biokernels.studies.depmap.protocol.impute_expression`)
    """

    targets: pd.DataFrame
    imputed: pd.DataFrame
    controls: pd.DataFrame
    features: pd.DataFrame
    source: dict

    def inputs(self, t: pd.DataFrame, response: bool, genes: np.ndarray | None = None) -> dict[str, np.ndarray]:
        """The two models' inputs for the pairs ``t`` (a subset of
        ``targets``): :func:`biokernels.studies.depmap.protocol.model_inputs`."""
        return model_inputs(t, self.imputed.loc[t.index], self.features, self.controls, self.source,
                            response=response, genes=genes)

    def parts(self, t: pd.DataFrame, response: bool) -> dict[str, np.ndarray]:
        """The blocks of those inputs for every gene:
        :func:`biokernels.studies.depmap.protocol.projection_parts`."""
        return projection_parts(t, self.imputed.loc[t.index], self.features, self.controls, self.source,
                                response=response)


def load_projection_data(targets_tsv, imputed_gctx, controls_tsv, feature_tsvs, summary_json,
                         extra_pairs=None) -> ProjectionData:
    """Read the inputs of the projection step (paths of the workflow's files;
    ``feature_tsvs``: one or more drug-feature tables, concatenated;
    ``extra_pairs``: pair ids beyond the targets whose imputed rows are kept
    too, after the targets').

    Raises
    ------
    KeyError
        A target pair has no imputed expression, or the controls lack a gene
        of the imputed expression.
    """
    from biokernels.io.gctx import read_gctx

    targets = pd.read_csv(targets_tsv, sep="\t", index_col=0, dtype={"drug_key": str, "cell_id": str})
    rows = targets.index if extra_pairs is None else targets.index.append(pd.Index(extra_pairs))
    imputed = read_gctx(imputed_gctx).data.T.loc[rows]
    controls = pd.read_csv(controls_tsv, sep="\t", index_col=0, dtype={"cell_id": str})
    controls.columns = controls.columns.astype(str)
    controls = controls[list(imputed.columns.astype(str))]
    features = pd.concat([pd.read_csv(p, sep="\t", index_col=0) for p in feature_tsvs])
    features.index = features.index.astype(str)
    with open(summary_json) as f:
        source = json.load(f)
    return ProjectionData(targets, imputed, controls, features, source)


def chosen_ridges(ridge_tsv) -> dict[str, float]:
    """Model -> chosen ridge from the ``ridge`` curve's table (the rows whose
    ``chosen`` is true)."""
    ridge = pd.read_csv(ridge_tsv, sep="\t")
    return dict(zip(ridge.loc[ridge["chosen"], "model"], ridge.loc[ridge["chosen"], "lam"]))


def _response(cfg: dict) -> bool:
    return cfg["projection_input"] == "response"


def projection_ridges(data: ProjectionData, cfg: dict, seed: int, device="cpu", log=None) -> pd.DataFrame:
    """The ridge of each model (curve ``ridge``), chosen on the seen pairs as
    the drug screen chooses it on one target line (all pairs when fewer
    than 10 are seen): :func:`biokernels.studies.depmap.protocol.select_ridges`
    on the NTK Grams of both models' inputs, ``cfg["ridge"]`` grid and
    subset, ``seed``.

    Returns
    -------
    DataFrame ``model``, ``lam``, ``r2``, ``chosen`` (baseline rows, then
    projection; grid order).

    Raises
    ------
    InputError
        Empty or negative grid, fewer than 2 pairs (names ``depmap.ridge``).
    """
    t = data.targets[data.targets["stratum"] == "seen"]
    if len(t) < 10:
        t = data.targets
    X = data.inputs(t, _response(cfg))
    lams, table = select_ridges({m: ntk_gram(X[m], cfg["kernel"], device) for m in X},
                                t["viability"].to_numpy(np.float64), cfg["ridge"]["grid"], cfg["ridge"]["subset"],
                                seed)
    if log is not None:
        log.info("ridges chosen on %d %s pairs: %s", min(len(t), cfg["ridge"]["subset"]), t["stratum"].iloc[0], lams)
    return table


def min_training_split(fold: np.ndarray) -> int:
    """Pairs in the smallest training split of a k-fold CV: the least, over
    the folds present, of the pairs outside that fold (0 with fewer than 2
    folds)."""
    if len(np.unique(fold)) < 2:
        return 0
    return int(np.min([np.sum(fold != k) for k in np.unique(fold)]))


def scaling_rows(data: ProjectionData, t: pd.DataFrame, n_train: int, cfg: dict, seeds: list[int],
                 lams: dict[str, float], device="cpu", log=None) -> pd.DataFrame:
    """S9a rows of one stratum's pairs ``t``: both models at
    ``cfg["scaling"]["n_points"]`` sizes from ``n_min`` to ``n_train``,
    evenly spaced in log2 (:func:`biokernels.scaling.log_spaced_sizes`), by
    :func:`biokernels.studies.depmap.protocol.scaling_curve` (every fold of
    ``t["fold"]`` x ``seeds``).

    Returns
    -------
    DataFrame ``n_train``, ``seed``, ``fold``, ``model``, ``r2``.

    Raises
    ------
    ValueError
        Fewer than ``n_points`` sizes fit in ``[n_min, n_train]``.
    """
    fold = t["fold"].to_numpy()
    X = data.inputs(t, _response(cfg))
    grams = {m: ntk_gram(X[m], cfg["kernel"], device) for m in ("baseline", "projection")}
    sizes = log_spaced_sizes(n_train, cfg["scaling"]["n_points"], cfg["scaling"]["n_min"])
    if log is not None:
        log.info("%s drugs: %d pairs, sizes %s, %d folds x %d seeds", t["stratum"].iloc[0], len(t), sizes,
                 len(np.unique(fold)), len(seeds))
    return scaling_curve(grams, t["viability"].to_numpy(np.float64), fold, sizes, seeds, lams)


def genes_rows(data: ProjectionData, t: pd.DataFrame, n_train: int, cfg: dict, seeds: list[int],
               lams: dict[str, float], device="cpu", log=None) -> pd.DataFrame:
    """S9b rows of one stratum's pairs ``t``: projection on the first g genes
    of each seed's random gene order
    (:func:`biokernels.studies.depmap.protocol.gene_orders`), for
    ``cfg["genes"]["n_points"]`` counts g evenly spaced in log2 from 1 to all
    (:func:`~biokernels.studies.depmap.protocol.log_spaced_counts`), trained
    on ``n_train`` pairs of the other folds per fold (that seed's subset).

    Returns
    -------
    DataFrame ``n_train``, ``seed``, ``fold``, ``r2``, ``n_genes`` (seed,
    then g, then fold).
    """
    n_genes = data.imputed.shape[1]
    fold, y = t["fold"].to_numpy(), t["viability"].to_numpy(np.float64)
    counts = log_spaced_counts(n_genes, cfg["genes"]["n_points"])
    if log is not None:
        log.info("%s drugs: %d pairs, gene counts %s", t["stratum"].iloc[0], len(t), counts)
    parts = data.parts(t, _response(cfg))
    dev = device if isinstance(device, torch.device) else resolve_device(device)
    F = torch.as_tensor(parts["centred"], dtype=torch.float64, device=dev)
    B = torch.as_tensor(parts["base"], dtype=torch.float64, device=dev)
    base_gram = B @ B.T
    rows = []
    for seed, order in gene_orders(n_genes, seeds).items():
        # the Gram of [F_g / scale_g | base] is F_g F_g' / scale_g^2 + base base': the genes' part
        # accumulated over the nested subsets, the same NTK as ntk_gram on the assembled inputs
        genes_gram, done = torch.zeros_like(base_gram), 0
        for g in counts:
            Fi = F[:, torch.as_tensor(order[done:g], device=dev)]
            genes_gram.addmm_(Fi, Fi.T)
            done = g
            G = genes_gram / projection_scale(parts["var"], order[:g]) ** 2 + base_gram
            sq = G.diagonal().clone()
            K = ntk_relu_from_gram(G, sq, sq, out=G, symmetric=True, **(cfg["kernel"] or {}))
            r = scaling_curve({"projection": K}, y, fold, [n_train], [seed], lams)
            rows.append(r.assign(n_genes=g))
    return pd.concat(rows, ignore_index=True).drop(columns=["model"])


def projection_curve(data: ProjectionData, curve: str, cfg: dict, lams: dict[str, float], seed: int, device="cpu",
                     log=None) -> pd.DataFrame:
    """The S9a (``curve="scaling"``) or S9b (``curve="genes"``) table: per
    stratum (seen, then unseen) with at least ``n_min + n_points`` pairs in
    its smallest training split (:func:`min_training_split`; a stratum with
    fewer is skipped with a warning), the rows of :func:`scaling_rows` or
    :func:`genes_rows` with seeds ``seed .. seed + cfg["seeds"] - 1`` and a
    ``stratum`` column.

    Parameters
    ----------
    lams : dict model -> absolute ridge (:func:`chosen_ridges`)

    Returns
    -------
    DataFrame (columns :data:`EMPTY_COLUMNS` when no stratum qualifies).

    Raises
    ------
    ValueError
        ``curve`` is neither ``scaling`` nor ``genes``.
    """
    if curve not in ("scaling", "genes"):
        raise ValueError(f"curve: expected 'scaling' or 'genes', got {curve!r}")
    seeds = list(range(seed, seed + cfg["seeds"]))
    if log is not None:
        log.info("ridges: %s; imputed block: %s", lams, cfg["projection_input"])
    rows = scaling_rows if curve == "scaling" else genes_rows
    out = []
    for stratum in ("seen", "unseen"):
        t = data.targets[data.targets["stratum"] == stratum]
        n_train = min_training_split(t["fold"].to_numpy())
        if n_train < cfg["scaling"]["n_min"] + cfg["scaling"]["n_points"]:
            if log is not None:
                log.warning("%s drugs: %d target pairs (%d per training split), too few for the curve: stratum "
                            "skipped", stratum, len(t), n_train)
            continue
        out.append(rows(data, t, n_train, cfg, seeds, lams, device, log).assign(stratum=stratum))
    table = pd.concat(out, ignore_index=True) if out else pd.DataFrame(columns=EMPTY_COLUMNS)
    if log is not None:
        log.info("wrote %d rows", len(table))
    return table


def projection_table(data: ProjectionData, curve: str, cfg: dict, seed: int, device="cpu", ridge_tsv=None,
                     log=None) -> pd.DataFrame:
    """The table of one ``curve`` of :data:`CURVES`: :func:`projection_ridges`
    for ``ridge``, else :func:`projection_curve` with the ridges of
    ``ridge_tsv`` (the ``ridge`` curve's table).

    Raises
    ------
    ValueError
        Unknown ``curve``, or no ``ridge_tsv`` for ``scaling`` / ``genes``.
    """
    if curve == "ridge":
        return projection_ridges(data, cfg, seed, device, log)
    if curve not in CURVES:
        raise ValueError(f"curve: expected one of {CURVES}, got {curve!r}")
    if ridge_tsv is None:
        raise ValueError(f"curve {curve!r} needs the ridge table (ridge_tsv)")
    return projection_curve(data, curve, cfg, chosen_ridges(ridge_tsv), seed, device, log)
