"""Summary tables and tests of per-task results: mean ROC, Wilcoxon
signed-rank p-values, stability over splits, and the tables behind the
diffusion study's figures (Sun, Ji & Ye 2008, Tables 2-7, Figures 1-8)."""

from __future__ import annotations

import numpy as np
import pandas as pd
from scipy import stats

PEEKING = ("uBaseline", "rBaseline")  # choose their kernel by test AUC (paper's definition)


def mean_roc_table(roc: pd.DataFrame, times: pd.DataFrame | None = None) -> pd.DataFrame:
    """Mean ROC AUC per method over the tasks (Tables 2 and 5), with the
    kernel-learning time where measured and a flag for the methods that pick
    their kernel with test labels. Tasks without an AUC for some method are
    left out of every method's mean (same task set for all)."""
    wide = roc.pivot_table(index="task", columns="method", values="auc", dropna=False)
    wide = wide.dropna(axis=0, how="any")
    out = pd.DataFrame({"mean_roc": wide.mean(axis=0), "n_tasks": wide.shape[0]})
    out.index.name = "method"
    if times is not None and len(times):
        out = out.join(times.groupby("method")["seconds"].sum().rename("time_s"))
    out["uses_test_labels"] = out.index.isin(PEEKING)
    return out.reset_index()


def wilcoxon_table(roc: pd.DataFrame, against=("DKL", "mDKL")) -> pd.DataFrame:
    """Wilcoxon signed-rank p-values (two-sided, scipy.stats.wilcoxon) of the
    per-task AUCs of each method in ``against`` versus every method (Tables
    3 and 6); 1.0 where the two AUC vectors are identical."""
    wide = roc.pivot_table(index="task", columns="method", values="auc", dropna=False).dropna()
    rows = []
    for m in wide.columns:
        row = {"method": m}
        for ref in against:
            if ref not in wide:
                continue
            diff = wide[ref] - wide[m]
            row[ref] = 1.0 if np.allclose(diff, 0) else float(stats.wilcoxon(wide[ref], wide[m]).pvalue)
        rows.append(row)
    return pd.DataFrame(rows)


def stability_table(per_split_roc: pd.DataFrame) -> pd.DataFrame:
    """Mean and standard deviation over splits of each method's mean ROC
    (Tables 4 and 7).

    Parameters
    ----------
    per_split_roc : DataFrame with columns split, method, task, auc

    Returns
    -------
    DataFrame: method, average_roc, std (ddof = 1), n_splits. Within a split,
    tasks lacking an AUC for some method are left out of every method's
    mean, as in :func:`mean_roc_table`.
    """
    means = {}
    for split, g in per_split_roc.groupby("split"):
        wide = g.pivot_table(index="task", columns="method", values="auc", dropna=False).dropna()
        means[split] = wide.mean(axis=0)
    means = pd.DataFrame(means).T
    return pd.DataFrame({"average_roc": means.mean(), "std": means.std(ddof=1),
                         "n_splits": means.shape[0]}).rename_axis("method").reset_index()


def roc_threshold_table(roc: pd.DataFrame, thresholds=None) -> pd.DataFrame:
    """Number of tasks with ROC AUC above each threshold, per method
    (Figures 1 and 5). Columns: method, threshold, n_tasks."""
    thresholds = np.round(np.linspace(0.5, 1.0, 51), 3) if thresholds is None else thresholds
    rows = [{"method": m, "threshold": th, "n_tasks": int((g["auc"] > th).sum())}
            for m, g in roc.groupby("method") for th in thresholds]
    return pd.DataFrame(rows)


def roc_per_kernel_table(kernel_roc: pd.DataFrame) -> pd.DataFrame:
    """Mean ROC AUC over tasks of each single kernel against -beta (Figures 2
    and 6); ``is_rbaseline`` marks the best one. Columns: kernel, minus_beta,
    mean_roc, is_rbaseline."""
    t = kernel_roc.groupby(["kernel", "beta"])["auc"].mean().reset_index()
    t = t.rename(columns={"auc": "mean_roc"})
    t["minus_beta"] = -t.pop("beta")
    t["is_rbaseline"] = t["mean_roc"] == t["mean_roc"].max()
    return t[["kernel", "minus_beta", "mean_roc", "is_rbaseline"]]


def best_roc_per_task_table(kernel_roc: pd.DataFrame) -> pd.DataFrame:
    """Best single-kernel ROC AUC per task and the -beta achieving it
    (uBaseline; Figures 3 and 7). Columns: task, best_roc, minus_beta."""
    k = kernel_roc.dropna(subset=["auc"])
    idx = k.groupby("task")["auc"].idxmax()
    t = k.loc[idx, ["task", "auc", "beta"]].rename(columns={"auc": "best_roc"})
    t["minus_beta"] = -t.pop("beta")
    return t.reset_index(drop=True)


def scatter_table(roc: pd.DataFrame, methods=("DKL", "DKLKL", "mDKL", "mDKLKL")) -> pd.DataFrame:
    """Per-task AUC of each formulation beside uBaseline's (Figures 4 and 8).
    Columns: task, method, auc, ubaseline_auc, above_diagonal."""
    wide = roc.pivot_table(index="task", columns="method", values="auc")
    rows = []
    for m in methods:
        if m in wide:
            for task, a, u in zip(wide.index, wide[m], wide["uBaseline"]):
                rows.append({"task": task, "method": m, "auc": a, "ubaseline_auc": u, "above_diagonal": a > u})
    return pd.DataFrame(rows)


def read_roc_tables(paths) -> pd.DataFrame:
    """Concatenate per-split ROC tables (TSV: method, task, auc), adding a
    ``split`` column from each file's folder name (``.../splits/<split>/``).

    Empty tables (e.g. SM1 skipped for its cost) are allowed and add no
    rows; ``auc`` is float64 whatever the files hold.

    Raises
    ------
    ValueError
        If a file lacks one of the columns method, task, auc.
    """
    frames = []
    for p in paths:
        t = pd.read_csv(p, sep="\t", dtype={"method": str, "task": str})
        missing = {"method", "task", "auc"} - set(t.columns)
        if missing:
            raise ValueError(f"{p}: missing column(s) {sorted(missing)}")
        if len(t):
            frames.append(t.assign(split=str(p).replace("\\", "/").split("/")[-2]))
    if not frames:
        return pd.DataFrame({"method": pd.Series(dtype=str), "task": pd.Series(dtype=str),
                             "auc": pd.Series(dtype=float), "split": pd.Series(dtype=str)})
    out = pd.concat(frames, ignore_index=True)
    out["auc"] = pd.to_numeric(out["auc"], errors="raise").astype(float)
    return out


def protocol_comparison_table(per_split_roc: dict[str, pd.DataFrame], deviations: dict[str, str],
                              scale_choices: dict[str, pd.DataFrame] | None = None,
                              reference: str = "mDKL", against=("eBaseline", "rBaseline")
                              ) -> pd.DataFrame:
    """The paper's protocol and its labelled deviations side by side, per
    method: mean ROC on split 00 (Tables 2/5), its Wilcoxon p-values against
    ``against`` (Tables 3/6), and the mean and SD over every split
    (Tables 4/7).

    Parameters
    ----------
    per_split_roc : dict data set -> DataFrame (split, method, task, auc)
        As :func:`read_roc_tables` returns, for data sets on the same network,
        functions and splits.
    deviations : dict data set -> text
        The change from the paper's protocol ('' or absent: the protocol).
    scale_choices : dict data set -> DataFrame (split, candidate, chosen), optional
        The per-split kernel scales of a train-only choice: summarised in
        ``kernel_scale`` as "candidate x count".
    reference, against : the method whose p-values are given, and the others.

    Returns
    -------
    DataFrame: dataset, protocol ("paper" or "deviation"), deviation, method,
    mean_roc_split00, p_<reference>_vs_<m> for m in ``against`` (on the
    reference's row), average_roc, std, n_splits, kernel_scale.

    Raises
    ------
    ValueError
        If a data set has no split ``00``.
    """
    rows = []
    for ds, roc in per_split_roc.items():
        if "00" not in set(roc["split"]):
            raise ValueError(f"data set {ds!r}: no split 00 among its ROC tables")
        first = roc[roc["split"] == "00"]
        mean00 = mean_roc_table(first).set_index("method")["mean_roc"]
        wil = wilcoxon_table(first, against=(reference,)).set_index("method")
        stab = stability_table(roc).set_index("method")
        choice = ""
        if scale_choices and ds in scale_choices:
            ch = scale_choices[ds]
            ch = ch[ch["chosen"].astype(bool)].drop_duplicates(["split", "candidate"])
            choice = "; ".join(f"{c} x{n}" for c, n in ch["candidate"].value_counts().items())
        dev = deviations.get(ds, "") or ""
        for m in mean00.index:
            row = {"dataset": ds, "protocol": "deviation" if dev else "paper", "deviation": dev,
                   "method": m, "mean_roc_split00": float(mean00[m])}
            for o in against:
                row[f"p_{reference}_vs_{o}"] = (float(wil.loc[o, reference])
                                                if m == reference and o in wil.index and reference in wil
                                                else np.nan)
            row.update({"average_roc": float(stab.loc[m, "average_roc"]) if m in stab.index else np.nan,
                        "std": float(stab.loc[m, "std"]) if m in stab.index else np.nan,
                        "n_splits": int(stab.loc[m, "n_splits"]) if m in stab.index else 0,
                        "kernel_scale": choice})
            rows.append(row)
    return pd.DataFrame(rows)
