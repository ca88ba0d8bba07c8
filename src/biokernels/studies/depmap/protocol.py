"""DepMap drug viability by projection from the CMAP source model
(Radhakrishnan, Ruiz Luyten, Prasad & Uhler, Nat Commun 2023, Methods
"DepMap analysis", SI Fig. S9).

The source model (NTK kernel ridge from ``[drug | cell]`` to expression,
:class:`biokernels.studies.drug_screen.protocol.SourceModel`, trained on the
CMAP cell lines not in DepMap) imputes the expression ``f_s(x)`` of every
(drug, cell line) pair of the DepMap target cell lines. Projection
(Definition 1) is a second NTK kernel ridge model from
``[f_s(x) | drug | cell]`` to viability; the baseline is the same model on
``[drug | cell]``. Pairs are stratified by drug (``seen`` / ``unseen`` in the
source) and evaluated by 5-fold cross-validation with 5 seeds (S9a: R²
against target samples; S9b: R² against the genes the source predicts).

Notes: docs/depmap_notes.md, section "The study protocol (studies/depmap/protocol)".
"""

from __future__ import annotations

import numpy as np
import pandas as pd
import torch

from biokernels.errors import InputError
from biokernels.kernels.ntk import ntk_relu
from biokernels.metrics import r2_score
from biokernels.solvers.ridge import predict_ridge, select_ridge_holdout, solve_ridge

MODELS = ("baseline", "projection")


# --------------------------------------------------------------------------- source


def impute_expression(expression: pd.DataFrame, cmap_pairs: pd.DataFrame, controls: pd.DataFrame,
                      features: pd.DataFrame, targets: pd.DataFrame, source_cells: list[str],
                      lam: float | None = None,
                      ridge_grid=(1000.0,), ridge_subset: int = 2000, max_source_pairs: int | None = None,
                      kernel_params: dict | None = None, device="cpu", solver: str = "auto", seed: int = 0,
                      log=None) -> tuple[pd.DataFrame, dict, pd.DataFrame]:
    """Train the CMAP source model on the cell lines that are not targets and
    impute the expression of every target pair.

    Parameters
    ----------
    expression : DataFrame (CMAP pairs x genes), log2 expression, index = pair id
    cmap_pairs : DataFrame ``pert_id``, ``cell_id``, same index as ``expression``
    controls : DataFrame (cells x genes), control expression
    features : DataFrame (drugs x p), drug embedding, indexed by CMAP pert_id
        and by DepMap ``drug_key`` (every drug of the source pairs and targets)
    targets : from :func:`biokernels.io.depmap.prepare_targets`
    source_cells : the source cell lines (its ``counts["source_cells"]``)
    lam : float, optional
        Absolute ridge; when None it is chosen on ``ridge_grid`` by the
        validation mean R² on a random ``ridge_subset`` of the source (80/20,
        :func:`biokernels.solvers.ridge.select_ridge_holdout`: the smallest
        on ties).
    max_source_pairs : int, optional
        Train on a random subset of the source pairs (memory: one n x n
        float32 matrix); None = all (the paper: 55,462 pairs).
    kernel_params, device, solver : see :class:`biokernels.studies.drug_screen.protocol.SourceModel`
    seed : int

    Returns
    -------
    imputed : DataFrame (target pairs x genes), same index as ``targets``
    info : dict ``lam``, ``n_source``, ``n_source_cells``, ``source_cells``,
        ``source_mean`` and ``source_var`` (lists, per gene; the same of the
        response, expression minus the cell line's control:
        ``source_response_mean``, ``source_response_var``), ``check_r2`` (mean R² of the imputed expression on
        target pairs that CMAP also measured; None if there are none),
        ``n_check``, ``solver``.
    ridge : DataFrame ``lam``, ``r2``, ``chosen``.

    Raises
    ------
    InputError
        A drug lacks features or a cell line lacks control expression.
    """
    from biokernels.studies.drug_screen.protocol import ScreenData, SourceModel, cell_embedding, unit_rows
    from biokernels.metrics import mean_r2

    target_cells = sorted(targets["cell_id"].unique())
    if set(source_cells) & set(target_cells):
        raise ValueError(f"cell lines both source and target: {sorted(set(source_cells) & set(target_cells))}")
    src_mask = cmap_pairs["cell_id"].isin(source_cells).to_numpy()
    src_pairs = cmap_pairs[src_mask]
    rng = np.random.default_rng([int(seed), 41])
    if max_source_pairs is not None and len(src_pairs) > max_source_pairs:
        src_pairs = src_pairs.iloc[np.sort(rng.choice(len(src_pairs), max_source_pairs, replace=False))]
    source_cells = sorted(src_pairs["cell_id"].unique())
    drugs = pd.Index(sorted(set(src_pairs["pert_id"]) | set(targets["drug_key"])))
    miss = drugs[~drugs.isin(features.index)]
    if len(miss):
        raise InputError(f"drug features: {len(miss)} drug(s) have none, e.g. {list(miss[:5])}")
    cells = pd.Index(source_cells + target_cells)
    miss = cells[~cells.isin(controls.index)]
    if len(miss):
        raise InputError(f"controls: no control expression for cell line(s) {list(miss[:10])}")
    Y_src = expression.loc[src_pairs.index].to_numpy(np.float64)
    n_s, n_t = len(src_pairs), len(targets)
    data = ScreenData(
        Y=np.vstack([Y_src, np.zeros((n_t, Y_src.shape[1]))]),
        drug_idx=drugs.get_indexer(pd.concat([src_pairs["pert_id"], targets["drug_key"]])),
        cell_idx=cells.get_indexer(pd.concat([src_pairs["cell_id"], targets["cell_id"]])),
        D=unit_rows(features.loc[drugs].to_numpy(np.float64), "drug features"),
        C=cell_embedding(controls.loc[cells], source_cells).to_numpy(),
        folds=pd.DataFrame(index=pd.RangeIndex(n_s + n_t)), drugs=drugs, cells=cells, genes=expression.columns)
    src, tgt = np.arange(n_s), np.arange(n_s, n_s + n_t)

    def model(value):
        return SourceModel(value, kernel_params=kernel_params, device=device, solver=solver)

    if lam is None:
        def score(value, tr, va):
            r = mean_r2(model(value).fit(data, src[tr]).predict(data, src[va]), Y_src[va])
            if log is not None:
                log.info("source ridge lam=%g: validation mean R2 %.4f (%d/%d pairs)", value, r, len(tr), len(va))
            return r

        lam, ridge = select_ridge_holdout(score, n_s, list(ridge_grid), subset=ridge_subset, seed=int(seed),
                                          name="drug_screen.source_ridge")
    else:
        ridge = pd.DataFrame({"lam": [float(lam)], "r2": [np.nan]})
        ridge["chosen"] = ridge["lam"] == lam
    m = model(lam).fit(data, src)
    pred = m.predict(data, tgt)
    imputed = pd.DataFrame(pred, index=targets.index, columns=expression.columns)
    mu = Y_src.mean(axis=0)
    measured = pd.Index(targets["drug_key"] + ":" + targets["cell_id"])
    cmap_ids = pd.Index(cmap_pairs["pert_id"] + ":" + cmap_pairs["cell_id"])
    both = measured.isin(cmap_ids)
    check = None
    if both.any():
        pos = cmap_ids.get_indexer(measured[both])
        check = float(mean_r2(pred[both], expression.to_numpy(np.float64)[pos]))
    R_src = Y_src - controls.loc[src_pairs["cell_id"]].to_numpy(np.float64)
    mu_r = R_src.mean(axis=0)
    info = {"lam": float(lam), "n_source": int(n_s), "n_source_cells": len(source_cells),
            "n_source_all": int(src_mask.sum()), "n_targets": int(n_t), "target_cells": target_cells,
            "source_cells": source_cells, "source_mean": mu.tolist(),
            "source_var": ((Y_src - mu) ** 2).mean(axis=0).tolist(),
            "source_response_mean": mu_r.tolist(), "source_response_var": ((R_src - mu_r) ** 2).mean(axis=0).tolist(),
            "check_r2": check,
            "n_check": int(both.sum()),
            "solver": {k: v for k, v in m.info_.items() if isinstance(v, (int, float, str))}}
    return imputed, info, ridge


# --------------------------------------------------------------------------- projection


def model_inputs(targets: pd.DataFrame, imputed: pd.DataFrame, features: pd.DataFrame, controls: pd.DataFrame,
                 source: dict, response: bool = True, genes: np.ndarray | None = None) -> dict[str, np.ndarray]:
    """Inputs of the two target models for the pairs of ``targets``.

    Parameters
    ----------
    targets : DataFrame with ``drug_key``, ``cell_id`` (n rows)
    imputed : DataFrame (pairs x d), imputed expression, same index
    features : DataFrame (drugs x p), drug embedding
    controls : DataFrame (cells x d), control expression
    source : dict
        The source summary of :func:`impute_expression`: ``source_cells``
        (centring of the cell embedding) and the per-gene mean and variance
        of the source expression (``source_mean``, ``source_var``) and
        response (``source_response_mean``, ``source_response_var``).
    response : bool
        True: the imputed block is the imputed response, expression minus the
        cell line's control (log2 fold change); False: the imputed expression.
    genes : int array, optional
        Positions of the genes the projection uses (all by default).

    Returns
    -------
    dict ``baseline``: ``[drug | cell]`` (n, p + d), drug rows of unit norm
    and the cell embedding of :func:`biokernels.studies.drug_screen.protocol.cell_embedding`;
    ``projection``: ``[(f - mean) / scale | drug | cell]`` (n, g + p + d),
    where ``f`` is the imputed block and ``scale = sqrt(sum of the source
    variance over the genes)`` the root mean squared norm of the centred
    source values on those genes. The baseline is thus the projection model
    without the imputed expression.

    Raises
    ------
    InputError
        A drug has no features or a cell line no control expression.
    """
    parts = projection_parts(targets, imputed, features, controls, source, response)
    g = np.arange(imputed.shape[1]) if genes is None else np.asarray(genes)
    proj = parts["centred"][:, g] / projection_scale(parts["var"], g)
    return {"baseline": parts["base"], "projection": np.hstack([proj, parts["base"]])}


def projection_scale(var: np.ndarray, genes: np.ndarray) -> float:
    """``sqrt(sum of the source variance over genes)``, the projection block's
    scale (:func:`model_inputs`). Raises ValueError when it is not positive."""
    scale = float(np.sqrt(np.asarray(var)[genes].sum()))
    if not np.isfinite(scale) or scale <= 0:
        raise ValueError(f"the source has no variance on the {len(genes)} gene(s) chosen")
    return scale


def projection_parts(targets: pd.DataFrame, imputed: pd.DataFrame, features: pd.DataFrame,
                     controls: pd.DataFrame, source: dict, response: bool = True) -> dict[str, np.ndarray]:
    """The blocks :func:`model_inputs` assembles, for every gene.

    Returns
    -------
    dict ``base``: ``[drug | cell]`` (n, p + d), the baseline's input;
    ``centred``: the imputed block minus the source mean, ``f - mean``
    (n, genes), unscaled; ``var``: the source variance per gene (genes,).
    Parameters and errors as :func:`model_inputs`.
    """
    from biokernels.studies.drug_screen.protocol import cell_embedding, unit_rows

    miss = pd.Index(targets["drug_key"].unique()).difference(features.index)
    if len(miss):
        raise InputError(f"drug features: {len(miss)} target drug(s) have none, e.g. {list(miss[:5])}")
    cells = sorted(set(source["source_cells"]) | set(targets["cell_id"]))
    miss = pd.Index(cells).difference(controls.index)
    if len(miss):
        raise InputError(f"controls: no control expression for cell line(s) {list(miss[:10])}")
    D = pd.DataFrame(unit_rows(features.loc[targets["drug_key"].unique()].to_numpy(np.float64), "drug features"),
                     index=targets["drug_key"].unique())
    C = cell_embedding(controls.loc[cells], list(source["source_cells"]))
    drug = D.loc[targets["drug_key"]].to_numpy()
    cell = C.loc[targets["cell_id"]].to_numpy()
    f = imputed.loc[targets.index].to_numpy(np.float64)
    if response:
        f = f - controls.loc[targets["cell_id"], imputed.columns].to_numpy(np.float64)
    key = "source_response" if response else "source"
    return {"base": np.hstack([drug, cell]), "centred": f - np.asarray(source[f"{key}_mean"]),
            "var": np.asarray(source[f"{key}_var"], dtype=np.float64)}


def ntk_gram(X: np.ndarray, kernel_params: dict | None = None, device="cpu") -> torch.Tensor:
    """NTK Gram (n, n) float64 of dense features (:func:`ntk_relu`)."""
    return ntk_relu(X, device=device, dtype=torch.float64, **(kernel_params or {}))


def krr_on_gram(K: torch.Tensor, y: np.ndarray, train: np.ndarray, test: np.ndarray, lam: float) -> np.ndarray:
    """Kernel ridge with an intercept on a precomputed Gram: fits
    ``(K[tr, tr] + lam I) alpha = y[tr] - mean`` and returns
    ``K[te, tr] alpha + mean`` (len(test),), float64
    (:func:`biokernels.solvers.ridge.solve_ridge` with ``fit_intercept``,
    exact blocked Cholesky; :func:`biokernels.solvers.ridge.predict_ridge`).

    Parameters
    ----------
    K : torch.Tensor (n_all, n_all); y : array (n_all,)
    train, test : int position arrays; lam : float >= 0, absolute ridge
    """
    if K.device.type == "cpu" and K.dtype == torch.float64 and K.is_contiguous():
        from biokernels.solvers.kernel_numba import gather      # the same copies, without torch's two passes

        Kn, tr, te = K.numpy(), np.asarray(train, dtype=np.int64), np.asarray(test, dtype=np.int64)
        K_tr, K_te = torch.from_numpy(gather(Kn, tr, tr)), torch.from_numpy(gather(Kn, te, tr))
    else:
        tr = torch.as_tensor(train, device=K.device)
        te = torch.as_tensor(test, device=K.device)
        K_tr, K_te = K[tr][:, tr].clone(), K[te][:, tr]
    alpha, info = solve_ridge(K_tr, y[train], lam, method="cholesky", fit_intercept=True, overwrite=True)
    return predict_ridge(K_te, alpha, info["intercept"]).ravel()


def scaling_curve(grams: dict[str, torch.Tensor], y: np.ndarray, fold: np.ndarray, sizes: list[int],
                  seeds: list[int], lam) -> pd.DataFrame:
    """R² against the number of target training samples (SI Fig. S9a).

    For fold k, seed s and size n, ``n`` pairs are drawn from the other folds
    (``numpy.random.default_rng(s + 1000 k)``, nested over n), every model is
    fitted on them and scored on fold k. Sizes larger than the training
    folds are skipped.

    Parameters
    ----------
    grams : dict model -> NTK Gram over all pairs of the stratum (n_all, n_all)
    y : array (n_all,), viability
    fold : int array (n_all,)
    sizes : target training sizes
    seeds : seeds of the training subsets
    lam : float, or dict model -> ridge

    Returns
    -------
    DataFrame ``n_train``, ``seed``, ``fold``, ``model``, ``r2``.
    """
    rows = []
    for k in np.unique(fold):
        tr_all, te = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
        for seed in seeds:
            order = np.random.default_rng(int(seed) + 1000 * int(k)).permutation(tr_all)
            for n in sizes:
                if n > len(tr_all):
                    continue
                for m, K in grams.items():
                    rows.append({"n_train": int(n), "seed": int(seed), "fold": int(k), "model": m,
                                 "r2": r2_score(y[te], krr_on_gram(K, y, order[:n], te,
                                                                   lam[m] if isinstance(lam, dict) else lam))})
    return pd.DataFrame(rows)


def gene_orders(n_genes: int, seeds: list[int]) -> dict[int, np.ndarray]:
    """A random order of the genes per seed
    (``numpy.random.default_rng([seed, 31])``); the first g genes of an
    order are the nested subset of size g (SI Fig. S9b)."""
    return {int(s): np.random.default_rng([int(s), 31]).permutation(n_genes) for s in seeds}


def log_spaced_counts(n_max: int, k: int) -> list[int]:
    """About ``k`` distinct integers from 1 to ``n_max`` evenly spaced in log2
    (fewer when they collide), always including 1 and ``n_max``."""
    return sorted({int(round(x)) for x in np.logspace(0, np.log2(n_max), k, base=2)} | {1, n_max})


def select_ridges(grams: dict[str, torch.Tensor], y: np.ndarray, grid, subset: int, seed: int
                  ) -> tuple[dict[str, float], pd.DataFrame]:
    """Ridge of each model by a holdout: a random ``subset`` of the pairs,
    80% to fit and 20% to score R² (the smallest ridge on ties), by
    :func:`biokernels.solvers.ridge.select_ridge_holdout` (the same split for
    every model).

    Parameters
    ----------
    grams : dict model -> NTK Gram over the pairs (n, n)
    y : array (n,)
    grid : absolute ridges to try
    subset : int, pairs used (all when fewer)
    seed : int

    Returns
    -------
    (dict model -> ridge, DataFrame ``model``, ``lam``, ``r2``, ``chosen``)

    Raises
    ------
    InputError
        Empty or negative grid, fewer than 2 pairs (names ``depmap.ridge``).
    """
    chosen, tables = {}, []
    for m, K in grams.items():
        lam, t = select_ridge_holdout(lambda value, tr, va, K=K: r2_score(y[va], krr_on_gram(K, y, tr, va, value)),
                                      len(y), list(grid), subset=subset, seed=seed, name="depmap.ridge")
        chosen[m] = lam
        tables.append(t.assign(model=m))
    return chosen, pd.concat(tables, ignore_index=True)[["model", "lam", "r2", "chosen"]]


def load_source_inputs(expression_gctx, pairs_tsv, controls_tsv, feature_tsvs, targets_tsv, counts_json) -> dict:
    """What the source steps (``depmap_source``, ``depmap_predict_source``)
    read, as the keyword arguments of :func:`impute_expression`:
    ``expression`` (CMAP pairs x genes), ``cmap_pairs``, ``controls``
    (columns the expression's genes), ``features`` (every drug-feature
    table, concatenated), ``targets`` and ``source_cells``."""
    import json

    from biokernels.io.gctx import read_gctx

    expr = read_gctx(expression_gctx).data.T
    pairs = pd.read_csv(pairs_tsv, sep="\t", index_col=0, dtype=str).loc[expr.index]
    controls = pd.read_csv(controls_tsv, sep="\t", index_col=0, dtype={"cell_id": str})
    controls.columns = controls.columns.astype(str)
    features = pd.concat([pd.read_csv(p, sep="\t", index_col=0) for p in feature_tsvs])
    features.index = features.index.astype(str)
    targets = pd.read_csv(targets_tsv, sep="\t", index_col=0, dtype={"drug_key": str, "cell_id": str})
    with open(counts_json) as f:
        source_cells = json.load(f)["source_cells"]
    return {"expression": expr, "cmap_pairs": pairs, "controls": controls[list(expr.columns.astype(str))],
            "features": features, "targets": targets, "source_cells": source_cells}
