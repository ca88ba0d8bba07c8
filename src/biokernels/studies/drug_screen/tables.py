"""The source/target split of a virtual drug screen and the tables behind its
figures (Radhakrishnan et al. 2023, Fig. 4a-f), from the per-cell-line
results of :mod:`biokernels.studies.drug_screen.protocol`. No torch: the split and figure
rules run in the core env."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.errors import InputError

MODELS = ("mean", "baseline", "projection", "translation", "projection_translation")
# The paper's three metrics (R², centred cosine, its printed uncentred Pearson r) and the centred Pearson r;
# see biokernels.metrics for the two Pearson r's.
METRICS = ("r2", "cosine", "pearson_r_paper", "pearson_r_centred")


def split_cell_lines(pairs: pd.DataFrame, n_target: int = 5, targets: list[str] | None = None,
                     n_cells: int | None = None) -> tuple[list[str], list[str], pd.DataFrame]:
    """Source and target cell lines by drug availability (paper: source = the
    65 cell lines with the least drugs, targets = the 5 with the most).

    Parameters
    ----------
    pairs : DataFrame with ``pert_id``, ``cell_id``
    n_target : int
        Number of target cell lines when ``targets`` is not given.
    targets : list of str, optional
        Target cell lines by name; each must be in ``pairs``.
    n_cells : int, optional
        Keep only the ``n_cells`` cell lines with the most drugs first (the
        paper's CMAP had 70; a release with more lines is cut to 70).

    Returns
    -------
    source, target : lists of cell ids
    availability : DataFrame ``cell_id``, ``n_drugs``, ``role`` (source,
        target or dropped), sorted by ``n_drugs`` descending.

    Raises
    ------
    InputError
        A configured target is absent, or fewer than 2 cell lines remain.
    """
    if n_target < 1:
        raise InputError(f"drug_screen.n_target must be >= 1, got {n_target}")
    if targets and len(set(targets)) != len(targets):
        raise InputError(f"drug_screen.targets lists a cell line twice: {targets}")
    n = pairs.groupby("cell_id")["pert_id"].nunique().sort_values(ascending=False, kind="stable")
    avail = n.rename("n_drugs").reset_index()
    kept = list(n.index if n_cells is None else n.index[:n_cells])
    if targets:
        missing = [t for t in targets if t not in n.index]
        if missing:
            raise InputError(f"drug_screen.targets: cell line(s) {missing} are not in the data; "
                             f"the most available are {list(n.index[:8])}")
        target = list(targets)
        kept = kept + [t for t in target if t not in kept]
    else:
        target = kept[:n_target]
    source = [c for c in kept if c not in target]
    if not source or not target:
        raise InputError(f"drug_screen: need at least one source and one target cell line, got "
                         f"{len(source)} and {len(target)} (n_target={n_target}, n_cells={n_cells}, "
                         f"{len(n)} cell lines in the data)")
    avail["role"] = np.where(avail["cell_id"].isin(target), "target",
                             np.where(avail["cell_id"].isin(source), "source", "dropped"))
    return source, target, avail


def assign_folds(pairs: pd.DataFrame, source: list[str], target: list[str], k: int = 5,
                 seed: int = 0) -> pd.DataFrame:
    """Role, stratum and cross-validation fold of every pair.

    Parameters
    ----------
    pairs : DataFrame with ``pert_id``, ``cell_id`` (index = pair id)
    source, target : lists of cell ids
    k : int
        Folds per (target cell line, stratum).
    seed : int

    Returns
    -------
    DataFrame, same index: ``pert_id``, ``cell_id``, ``role`` (source /
    target / dropped), ``stratum`` (``seen``: the drug is measured in some
    source cell line, ``unseen`` otherwise; empty for source pairs) and
    ``fold`` (0..k-1 for target pairs, -1 otherwise). Folds are balanced
    random permutations within each (cell line, stratum).
    """
    if k < 2:
        raise ValueError(f"k: need at least 2 folds, got {k}")
    if set(source) & set(target):
        raise ValueError(f"cell lines both source and target: {sorted(set(source) & set(target))}")
    if pairs.index.duplicated().any():
        raise InputError(f"pairs: duplicated pair ids, e.g. {list(pairs.index[pairs.index.duplicated()][:5])}")
    out = pairs[["pert_id", "cell_id"]].copy()
    out["role"] = np.where(out["cell_id"].isin(target), "target",
                           np.where(out["cell_id"].isin(source), "source", "dropped"))
    source_drugs = set(out.loc[out["role"] == "source", "pert_id"])
    out["stratum"] = ""
    is_t = out["role"] == "target"
    out.loc[is_t, "stratum"] = np.where(out.loc[is_t, "pert_id"].isin(source_drugs), "seen", "unseen")
    out["fold"] = -1
    rng = np.random.default_rng(seed)
    for cell in target:  # fixed order -> deterministic
        for stratum in ("seen", "unseen"):
            idx = out.index[(out["cell_id"] == cell) & (out["stratum"] == stratum)]
            perm = rng.permutation(len(idx))
            out.loc[idx[perm], "fold"] = np.arange(len(idx)) % k
    return out




def fig4ab_table(metrics: pd.DataFrame, stratum: str) -> pd.DataFrame:
    """Fig. 4a/4b: each metric of each predictor, mean and standard deviation
    over the target cell lines (the paper's error bars).

    Parameters
    ----------
    metrics : concatenated :func:`cross_validate_cell` tables
    stratum : ``seen`` (Fig. 4a) or ``unseen`` (Fig. 4b)

    Returns
    -------
    DataFrame ``stratum``, ``model``, ``metric``, ``mean``, ``sd``,
    ``n_cells``, ``n_pairs``; metrics in the order of :data:`METRICS` (the
    paper's three, then the centred Pearson r), models in that of
    :data:`MODELS`.
    """
    m = metrics[metrics["stratum"] == stratum] if len(metrics) else metrics
    if not len(m):
        raise InputError(f"no target cell line has {stratum}-drug pairs to cross-validate (see "
                         "split/availability.tsv and the transfer logs); this panel would be empty")
    long = m.melt(id_vars=["cell_id", "model", "n"], value_vars=list(METRICS), var_name="metric")
    out = long.groupby(["model", "metric"], sort=False).agg(
        mean=("value", "mean"), sd=("value", lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else np.nan),
        n_cells=("cell_id", "nunique"), n_pairs=("n", "sum")).reset_index()
    out.insert(0, "stratum", stratum)
    order = {**{k: i for i, k in enumerate(MODELS)}, **{k: i for i, k in enumerate(METRICS)}}
    return out.sort_values(["metric", "model"], key=lambda s: s.map(order), kind="stable").reset_index(drop=True)


def fig4cd_table(scaling: pd.DataFrame, stratum: str, first: int = 5) -> pd.DataFrame:
    """Fig. 4c/4d: each metric against the number of target samples,
    averaged over folds and seeds within a cell line and then over cell
    lines, with the law ``a log2(n) + b`` fitted to every curve, its R², and
    the error when the fit on the first ``first`` points predicts the last.

    Returns
    -------
    DataFrame ``stratum``, ``model``, ``metric``, ``n_train``, ``mean``,
    ``sd`` (over cell lines), ``a``, ``b``, ``fit_r2``, ``pred_last``,
    ``abs_error_last`` (fit columns repeated on every row of a curve).
    """
    from biokernels.scaling import extrapolation_error, fit_log2_law

    s = scaling[scaling["stratum"] == stratum] if len(scaling) else scaling
    if not len(s):
        raise InputError(f"no scaling curve for {stratum} drugs: no target cell line has enough {stratum} pairs "
                         "for drug_screen.scaling (see the scaling logs); this panel would be empty")
    per_cell = s.groupby(["cell_id", "model", "n_train"])[list(METRICS)].mean().reset_index()
    long = per_cell.melt(id_vars=["cell_id", "model", "n_train"], value_vars=list(METRICS), var_name="metric")
    curve = long.groupby(["model", "metric", "n_train"]).agg(
        mean=("value", "mean"), sd=("value", lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else np.nan)
    ).reset_index()
    rows = []
    for (model, metric), c in curve.groupby(["model", "metric"], sort=False):
        c = c.sort_values("n_train")
        fit = fit_log2_law(c["n_train"], c["mean"])
        ext = extrapolation_error(c["n_train"], c["mean"], first) if len(c) > first else {"predicted": np.nan,
                                                                                          "abs_error": np.nan}
        c = c.assign(a=fit["a"], b=fit["b"], fit_r2=fit["r2"], pred_last=ext["predicted"],
                     abs_error_last=ext["abs_error"])
        rows.append(c)
    out = pd.concat(rows, ignore_index=True)
    out.insert(0, "stratum", stratum)
    return out


def fig4ef_table(expression: pd.DataFrame, control: pd.Series, samples: pd.DataFrame, cell: str,
                 model: str = "projection_translation") -> pd.DataFrame:
    """Fig. 4e/4f: per-sample R² of a predictor over the first two principal
    components of the cell line's true expression, and where the control
    (unperturbed) profile lies.

    Parameters
    ----------
    expression : DataFrame (pairs of this cell line x genes), true expression
    control : Series (genes,), the cell line's control expression
    samples : per-sample table of :func:`cross_validate_cell`
    cell : cell id (for the output)
    model : predictor whose per-sample R² is shown

    Returns
    -------
    DataFrame ``cell_id``, ``pair_id``, ``stratum``, ``pc1``, ``pc2``, ``r2``,
    ``distance_to_control`` (Euclidean, log2 units), ``pc1_variance``,
    ``pc2_variance`` (explained variance ratios), with one extra row
    ``pair_id = "control"`` (r2 NaN). PCA: ``sklearn.decomposition.PCA`` on
    the true expression of the cell line's pairs.
    """
    from sklearn.decomposition import PCA

    s = samples[samples["model"] == model].set_index("pair_id")
    X = expression.loc[s.index]
    pca = PCA(n_components=2, random_state=0).fit(X.to_numpy())
    pcs = pca.transform(X.to_numpy())
    ctl = pca.transform(control[X.columns].to_numpy()[None, :])[0]
    out = pd.DataFrame({"cell_id": cell, "pair_id": s.index, "stratum": s["stratum"].to_numpy(),
                        "pc1": pcs[:, 0], "pc2": pcs[:, 1], "r2": s["r2"].to_numpy(),
                        "distance_to_control": np.linalg.norm(X.to_numpy() - control[X.columns].to_numpy(), axis=1)})
    ctl_row = pd.DataFrame([{"cell_id": cell, "pair_id": "control", "stratum": "", "pc1": ctl[0], "pc2": ctl[1],
                             "r2": np.nan, "distance_to_control": 0.0}])
    out = pd.concat([out, ctl_row], ignore_index=True)
    out["pc1_variance"], out["pc2_variance"] = pca.explained_variance_ratio_[:2]
    return out


def chosen_ridges(ridge_tsv) -> dict[str, float]:
    """Model -> chosen ridge from the ``target_ridge`` rule's grid table
    (rows with ``chosen`` true)."""
    ridge = pd.read_csv(ridge_tsv, sep="\t")
    chosen = ridge[ridge["chosen"].astype(str).str.lower() == "true"]
    return dict(zip(chosen["model"], chosen["lam"].astype(float)))
