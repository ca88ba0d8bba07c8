"""Tables and figures of the PIMKL study (Manica et al. 2019, Figures 3-6,
S1, S2, S4, and the study's sensitivity table, ``run_sensitivity``).

Each ``table_<fig>`` turns the tables of :mod:`biokernels.studies.pimkl.protocol` into the
figure's tidy table (what the figure shows, written next to it as TSV), and
each ``plot_<fig>`` draws that table. Colours follow the paper: PIMKL red,
other methods blue.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.studies.pimkl.protocol import signature_correlation, signature_tests, significance_table

RED, BLUE, GREEN, GREY = "#c0392b", "#2e6da4", "#3a9d5d", "#888888"
METHOD_LABELS = {"pimkl": "PIMKL", "pathway_mean": "pathway kernels,\nequal weights",
                 "svm_linear": "linear SVM\n(all genes)", "svm_rbf": "RBF SVM\n(all genes)"}


def _plt():
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    return plt


def repeat_means(aucs: pd.DataFrame) -> pd.DataFrame:
    """Mean AUC over the folds of each repeat (Algorithm S1 line 12): columns
    ``cohort, method, repeat, auc, n_folds``."""
    g = aucs.groupby(["cohort", "method", "repeat"], sort=False)["auc"]
    return g.mean().to_frame("auc").assign(n_folds=g.size()).reset_index()


def table_fig3a(aucs: pd.DataFrame) -> pd.DataFrame:
    """Figure 3a / S1 table: per-repeat mean AUCs of every method and cohort."""
    return repeat_means(aucs)


def _box(ax, groups: list[np.ndarray], labels: list[str], colors: list[str]) -> None:
    bp = ax.boxplot(groups, patch_artist=True, widths=0.6, showfliers=False)  # points drawn below
    for patch, c in zip(bp["boxes"], colors):
        patch.set_facecolor(c)
        patch.set_alpha(0.55)
    for med in bp["medians"]:
        med.set_color("black")
    rng = np.random.default_rng(0)
    for i, (g, c) in enumerate(zip(groups, colors), start=1):
        ax.scatter(i + rng.uniform(-0.12, 0.12, len(g)), g, s=9, color=c, zorder=3, linewidths=0)
    ax.set_xticks(range(1, len(labels) + 1))
    ax.set_xticklabels(labels, fontsize=8)
    ax.axhline(0.5, color=GREY, lw=0.8, ls=":")


def _method_order(methods) -> list[str]:
    known = [m for m in ("pimkl", "pathway_mean", "svm_rbf", "svm_linear") if m in set(methods)]
    return known + sorted(set(methods) - set(known))


def plot_fig3a(table: pd.DataFrame, title: str):
    """Box plot per method of the per-repeat mean AUCs over all cohorts."""
    plt = _plt()
    methods = _method_order(table["method"])
    fig, ax = plt.subplots(figsize=(6.0, 4.0))
    _box(ax, [table.loc[table["method"] == m, "auc"].to_numpy() for m in methods],
         [METHOD_LABELS.get(m, m) for m in methods], [RED if m == "pimkl" else BLUE for m in methods])
    ax.set_ylabel("AUC (mean over the folds of a repeat)")
    ax.set_title(title, fontsize=10)
    return fig


def plot_figS1(table: pd.DataFrame, title: str):
    """One panel per cohort: box plot per method of the per-repeat mean AUCs."""
    plt = _plt()
    cohorts = list(dict.fromkeys(table["cohort"]))
    methods = _method_order(table["method"])
    ncol = min(3, len(cohorts))
    nrow = int(np.ceil(len(cohorts) / ncol))
    fig, axes = plt.subplots(nrow, ncol, figsize=(4.2 * ncol, 3.4 * nrow), squeeze=False, sharey=True)
    for ax, c in zip(axes.ravel(), cohorts):
        sub = table[table["cohort"] == c]
        _box(ax, [sub.loc[sub["method"] == m, "auc"].to_numpy() for m in methods],
             [METHOD_LABELS.get(m, m).replace("\n", " ").replace(" (all genes)", "").replace("pathway kernels, ", "")
              for m in methods], [RED if m == "pimkl" else BLUE for m in methods])
        ax.set_title(c, fontsize=9)
        ax.tick_params(axis="x", labelrotation=30)
    for ax in axes.ravel()[len(cohorts):]:
        ax.axis("off")
    axes[0, 0].set_ylabel("AUC")
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig


def table_fig3b(weights: pd.DataFrame, alpha: float, min_cohorts: int) -> pd.DataFrame:
    """Figure 3b table: per pathway and cohort, the Wilcoxon/BH test
    (:func:`biokernels.studies.pimkl.protocol.signature_tests`), with ``n_significant`` (cohorts
    where it is significant) and ``reported`` (``n_significant >= min_cohorts``,
    the paper's "at least four of six")."""
    tests = signature_tests(weights, alpha=alpha)
    wide = significance_table(tests, min_cohorts=0)
    tests = tests.merge(wide["n_significant"].reset_index(), on="pathway", how="left")
    tests["reported"] = tests["n_significant"] >= min_cohorts
    return tests


def plot_fig3b(table: pd.DataFrame, title: str, min_cohorts: int):
    """Heat map pathways x cohorts, significant red, not blue (rows:
    pathways significant in at least one cohort; a star marks those reaching
    ``min_cohorts``)."""
    plt = _plt()
    from matplotlib.colors import ListedColormap

    cohorts = list(dict.fromkeys(table["cohort"]))
    wide = table.pivot(index="pathway", columns="cohort", values="significant").reindex(columns=cohorts)
    wide = wide.fillna(False).astype(bool)
    n = wide.sum(axis=1)
    rows = n[n > 0].sort_values(ascending=False, kind="stable").index.tolist() or n.index[:10].tolist()
    sub = wide.loc[rows].astype(int)
    fig, ax = plt.subplots(figsize=(1.0 + 0.7 * len(cohorts), 1.2 + 0.28 * len(rows)))
    ax.imshow(sub.to_numpy(), cmap=ListedColormap([BLUE, RED]), vmin=0, vmax=1, aspect="auto")
    ax.set_xticks(range(len(cohorts)))
    ax.set_xticklabels(cohorts, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(rows)))
    ax.set_yticklabels([f"{'* ' if n[r] >= min_cohorts else ''}{r}" for r in rows], fontsize=7)
    ax.set_title(title, fontsize=9)
    return fig


def table_fig4(weights: pd.DataFrame) -> pd.DataFrame:
    """Figure 4 table: Pearson correlation of the median-weight signatures
    between cohorts (:func:`biokernels.studies.pimkl.protocol.signature_correlation`)."""
    return signature_correlation(weights)


def plot_fig4(table: pd.DataFrame, title: str, alpha: float = 0.05):
    """Lower-triangular heat map of the correlations (blue-red); white where
    the correlation is not significant (p > alpha) or undefined."""
    plt = _plt()
    cohorts = list(dict.fromkeys(table["cohort_a"]))
    R = table.pivot(index="cohort_a", columns="cohort_b", values="r").reindex(index=cohorts, columns=cohorts)
    Pv = table.pivot(index="cohort_a", columns="cohort_b", values="p_value").reindex(index=cohorts, columns=cohorts)
    M = R.to_numpy().copy()
    mask = np.triu(np.ones_like(M, bool), k=1) | ~(Pv.to_numpy() <= alpha)
    np.fill_diagonal(mask, False)
    M[mask] = np.nan
    fig, ax = plt.subplots(figsize=(1.6 + 0.75 * len(cohorts), 1.2 + 0.7 * len(cohorts)))
    im = ax.imshow(np.ma.masked_invalid(M), cmap="RdBu_r", vmin=-1, vmax=1)
    for i in range(len(cohorts)):
        for j in range(i + 1):
            if not np.isnan(M[i, j]):
                ax.text(j, i, f"{M[i, j]:.2f}", ha="center", va="center", fontsize=7)
    ax.set_xticks(range(len(cohorts)))
    ax.set_xticklabels(cohorts, rotation=45, ha="right", fontsize=8)
    ax.set_yticks(range(len(cohorts)))
    ax.set_yticklabels(cohorts, fontsize=8)
    fig.colorbar(im, ax=ax, shrink=0.8, label="Pearson r of median weights")
    ax.set_title(title, fontsize=9)
    return fig


def table_fig5(s1_aucs: pd.DataFrame, s2_aucs: pd.DataFrame) -> pd.DataFrame:
    """Figure 5 table: PIMKL per-repeat mean AUCs of the S1 cohorts, then the
    large cohort's S2 mRNA fold AUCs with trained and transferred weights.
    Columns ``group`` (s1 / s2), ``cohort``, ``weights``, ``unit`` (repeat or
    fold number), ``auc``."""
    a = repeat_means(s1_aucs[s1_aucs["method"] == "pimkl"])
    left = pd.DataFrame({"group": "s1", "cohort": a["cohort"], "weights": "trained", "unit": a["repeat"],
                         "auc": a["auc"]})
    b = s2_aucs[s2_aucs["omics"] == "mrna"]
    right = pd.DataFrame({"group": "s2", "cohort": b["cohort"], "weights": b["weights"], "unit": b["fold"],
                          "auc": b["auc"]})
    return pd.concat([left, right], ignore_index=True)


def plot_fig5(table: pd.DataFrame, title: str):
    """S1 cohorts (left) | large cohort trained (blue) vs transferred (red)."""
    plt = _plt()
    left = table[table["group"] == "s1"]
    right = table[table["group"] == "s2"]
    cohorts = list(dict.fromkeys(left["cohort"]))
    groups = [left.loc[left["cohort"] == c, "auc"].to_numpy() for c in cohorts]
    labels = cohorts[:]
    colors = [RED] * len(cohorts)
    big = right["cohort"].iloc[0] if len(right) else "large"
    for w, c in (("trained", BLUE), ("transferred", RED)):
        g = right.loc[right["weights"] == w, "auc"].to_numpy()
        if len(g):
            groups.append(g)
            labels.append(f"{big}\n{w}")
            colors.append(c)
    fig, ax = plt.subplots(figsize=(1.5 + 0.8 * len(groups), 4.0))
    _box(ax, groups, labels, colors)
    ax.axvline(len(cohorts) + 0.5, color="black", ls="--", lw=1)
    ax.tick_params(axis="x", labelrotation=30)
    ax.set_ylabel("AUC")
    ax.set_title(title, fontsize=9)
    return fig


def table_fig6(s2_aucs: pd.DataFrame) -> pd.DataFrame:
    """Figure 6 table: S2 fold AUCs with trained weights per data type (cna,
    mrna, both) and per-mode summary columns ``mean_auc``, ``median_auc``."""
    t = s2_aucs[s2_aucs["weights"] == "trained"][["cohort", "omics", "fold", "auc"]].copy()
    g = t.groupby("omics")["auc"]
    return t.assign(mean_auc=g.transform("mean"), median_auc=g.transform("median"))


def plot_fig6(table: pd.DataFrame, title: str):
    """Box plots of the S2 AUCs: CNA blue, mRNA green, both red."""
    plt = _plt()
    order = [m for m in ("cna", "mrna", "both") if m in set(table["omics"])]
    order += sorted(set(table["omics"]) - set(order))
    col = {"cna": BLUE, "mrna": GREEN, "both": RED}
    fig, ax = plt.subplots(figsize=(1.8 + 1.0 * len(order), 4.0))
    _box(ax, [table.loc[table["omics"] == m, "auc"].to_numpy() for m in order],
         [{"cna": "CNA", "mrna": "mRNA", "both": "CNA + mRNA"}.get(m, m) for m in order],
         [col.get(m, GREY) for m in order])
    ax.set_ylabel("AUC")
    ax.set_title(title, fontsize=9)
    return fig


def table_figS2(aucs_by_collection: dict[str, pd.DataFrame]) -> pd.DataFrame:
    """Figure S2 table: PIMKL fold AUCs per cohort and gene-set collection
    (columns ``collection, cohort, repeat, fold, auc``)."""
    parts = []
    for name, a in aucs_by_collection.items():
        p = a[a["method"] == "pimkl"][["cohort", "repeat", "fold", "auc"]].copy()
        p.insert(0, "collection", name)
        parts.append(p)
    return pd.concat(parts, ignore_index=True)


def plot_figS2(table: pd.DataFrame, title: str):
    """Per cohort, one box per gene-set collection (all fold AUCs)."""
    plt = _plt()
    cohorts = list(dict.fromkeys(table["cohort"]))
    cols = list(dict.fromkeys(table["collection"]))
    palette = [RED, "#e59866", BLUE, "#85c1e9", GREEN, GREY]
    fig, ax = plt.subplots(figsize=(1.5 + 1.2 * len(cohorts) * max(1, len(cols)) / 2, 4.0))
    width = 0.8 / len(cols)
    for k, c in enumerate(cols):
        data = [table.loc[(table["cohort"] == h) & (table["collection"] == c), "auc"].to_numpy() for h in cohorts]
        pos = np.arange(len(cohorts)) + (k - (len(cols) - 1) / 2) * width
        bp = ax.boxplot(data, positions=pos, widths=width * 0.9, patch_artist=True, manage_ticks=False)
        for patch in bp["boxes"]:
            patch.set_facecolor(palette[k % len(palette)])
            patch.set_alpha(0.6)
        for med in bp["medians"]:
            med.set_color("black")
        ax.plot([], [], color=palette[k % len(palette)], lw=6, alpha=0.6, label=c)
    ax.set_xticks(range(len(cohorts)))
    ax.set_xticklabels(cohorts, rotation=30, fontsize=8)
    ax.axhline(0.5, color=GREY, lw=0.8, ls=":")
    ax.set_ylabel("AUC (every fold)")
    ax.legend(fontsize=7, loc="lower right")
    ax.set_title(title, fontsize=9)
    return fig


def table_figS4(s2_weights: pd.DataFrame, transferred: pd.Series) -> pd.DataFrame:
    """Figure S4 table: per pathway, the trained signature (median over the
    S2 mRNA folds) and the transferred one; ``pearson_r_centred``/``p_value``
    of the two (same on every row): the usual, centred Pearson correlation
    (``scipy.stats.pearsonr``), which is what the paper's "Pearson
    correlation ρ = 0.72" is; named as in :mod:`biokernels.metrics`."""
    from scipy.stats import pearsonr

    w = s2_weights[s2_weights["omics"] == "mrna"]
    trained = w.groupby("pathway", sort=False)["weight"].median()
    t = pd.DataFrame({"trained": trained, "transferred": transferred.reindex(trained.index)}).dropna()
    t.index.name = "pathway"
    if len(t) >= 3 and t["trained"].std() > 0 and t["transferred"].std() > 0:
        r, p = pearsonr(t["transferred"], t["trained"])
    else:
        r, p = np.nan, np.nan
    return t.reset_index().assign(pearson_r_centred=float(r), p_value=float(p))


def plot_figS4(table: pd.DataFrame, title: str):
    """Scatter of trained vs transferred median weights with the least-squares line."""
    plt = _plt()
    fig, ax = plt.subplots(figsize=(4.6, 4.2))
    x, y = table["transferred"].to_numpy(), table["trained"].to_numpy()
    ax.scatter(x, y, s=14, color=BLUE)
    if len(x) >= 2 and np.ptp(x) > 0:
        a, b = np.polyfit(x, y, 1)
        xs = np.linspace(x.min(), x.max(), 10)
        ax.plot(xs, a * xs + b, color=RED, lw=1.2)
    for _, row in table.nlargest(min(5, len(table)), "trained").iterrows():
        ax.annotate(row["pathway"], (row["transferred"], row["trained"]), fontsize=6)
    r = table["pearson_r_centred"].iloc[0] if len(table) else np.nan
    p = table["p_value"].iloc[0] if len(table) else np.nan
    ax.set_xlabel("transferred weight (median over the other cohorts)")
    ax.set_ylabel("trained weight (median over S2 folds)")
    ax.set_title(f"{title}\nPearson r (centred) = {r:.2f}, p = {p:.2g}", fontsize=9)
    return fig


def plot_sensitivity(table: pd.DataFrame, title: str):
    """Mean AUC per variant (x) and cohort (markers), the reference first."""
    plt = _plt()
    variants = list(dict.fromkeys(table["variant"]))
    cohorts = list(dict.fromkeys(table["cohort"]))
    fig, ax = plt.subplots(figsize=(1.5 + 1.1 * len(variants), 3.8))
    markers = "osD^v<>ph"
    for k, c in enumerate(cohorts):
        sub = table[table["cohort"] == c].set_index("variant").reindex(variants)
        ax.plot(range(len(variants)), sub["mean_auc"], marker=markers[k % len(markers)], ls="-", lw=0.8,
                label=c)
    ref = table.loc[table["variant"] == "reference", "mean_auc"].mean()
    ax.axhline(ref, color=RED, ls="--", lw=0.8, label="reference, mean")
    for i, v in enumerate(variants):
        if not table.loc[table["variant"] == v, "applicable"].any():
            ax.text(i, 0.03, "n/a", transform=ax.get_xaxis_transform(), ha="center", fontsize=8, color=GREY)
    ax.set_xticks(range(len(variants)))
    ax.set_xticklabels(variants, rotation=30, ha="right", fontsize=8)
    ax.set_ylabel("mean fold AUC (PIMKL)")
    ax.legend(fontsize=7)
    ax.set_title(title, fontsize=9)
    return fig
