"""Summary tables and the figure of a benchmark: mean ± SD over trials of
every metric per method, paired Wilcoxon signed-rank p-values (scipy) of
the best diffusion method against every other method over the trials, and
a context row quoted from a paper, not run here.
"""

from __future__ import annotations

from collections.abc import Mapping

import numpy as np
import pandas as pd
from scipy import stats

from biokernels.studies.function_benchmark.metrics import METRICS

__all__ = ["summary_table", "wilcoxon_vs_best_diffusion", "plot_benchmark", "DIFFUSION_PREFIXES"]

#: Methods that count as "diffusion" when the best one is picked.
DIFFUSION_PREFIXES = ("diffusion[", "eBaseline[", "DKL[", "mDKL[", "CKA[mDKL]")


def summary_table(metrics: pd.DataFrame, context: Mapping | None = None) -> pd.DataFrame:
    """One row per method: ``<metric>_mean``, ``<metric>_sd`` (sample SD,
    ddof 1; NaN for one trial) and ``n_trials``; methods by decreasing
    micro-AUPR; ``context``: rows quoted from a paper (``method``, ``note``
    and any metric means), appended with ``run: false``."""
    g = metrics.groupby(["method", "metric"])["value"]
    wide = pd.concat([g.mean().unstack().add_suffix("_mean"), g.std(ddof=1).unstack().add_suffix("_sd")], axis=1)
    cols = [f"{m}_{s}" for m in METRICS for s in ("mean", "sd") if f"{m}_{s}" in wide]
    out = wide[cols].assign(n_trials=metrics.groupby("method")["trial"].nunique())
    out = out.sort_values("micro_aupr_mean", ascending=False).reset_index()
    out["run"] = True
    out["note"] = ""
    if context:
        for name, row in context.items():
            out = pd.concat([out, pd.DataFrame([{"method": name, "run": False, "note": row.get("note", ""),
                                                 **{f"{k}_mean": v for k, v in row.items() if k in METRICS}}])],
                            ignore_index=True)
    return out


def wilcoxon_vs_best_diffusion(metrics: pd.DataFrame) -> pd.DataFrame:
    """Paired two-sided Wilcoxon signed-rank tests over trials of the best
    diffusion method (largest mean micro-AUPR among :data:`DIFFUSION_PREFIXES`;
    of methods with equal means, e.g. a learned combination that put all its
    weight on the kernel the single-kernel search chose, the first by name)
    against every other method, per metric (``scipy.stats.wilcoxon``; NaN
    with fewer than 2 trials or all differences 0). Columns: best, peer,
    metric, n_trials, mean_difference (best - peer), p_value."""
    mean = metrics[metrics["metric"] == "micro_aupr"].groupby("method")["value"].mean()
    diff = mean[[m for m in mean.index if m.startswith(DIFFUSION_PREFIXES)]]
    if diff.empty:
        return pd.DataFrame(columns=["best", "peer", "metric", "n_trials", "mean_difference", "p_value"])
    best = diff.idxmax()
    rows = []
    for metric in METRICS:
        w = metrics[metrics["metric"] == metric].pivot(index="trial", columns="method", values="value")
        for peer in w.columns:
            if peer == best:
                continue
            pair = w[[best, peer]].dropna()
            d = pair[best] - pair[peer]
            p = np.nan
            if len(d) >= 2 and (d != 0).any():
                p = float(stats.wilcoxon(pair[best], pair[peer]).pvalue)
            rows.append({"best": best, "peer": peer, "metric": metric, "n_trials": len(d),
                         "mean_difference": float(d.mean()) if len(d) else np.nan, "p_value": p})
    return pd.DataFrame(rows)


def plot_benchmark(metrics: pd.DataFrame, title: str):
    """Methods x metrics: one panel per metric, one row per method (sorted
    by mean micro-AUPR), each trial a point and the mean a bar. Returns a
    matplotlib Figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    order = (metrics[metrics["metric"] == "micro_aupr"].groupby("method")["value"].mean()
             .sort_values().index.tolist())
    fig, axes = plt.subplots(1, len(METRICS), figsize=(3.2 * len(METRICS), 0.32 * len(order) + 1.5),
                             sharey=True)
    for ax, metric in zip(axes, METRICS):
        m = metrics[metrics["metric"] == metric]
        means = m.groupby("method")["value"].mean().reindex(order)
        ax.barh(range(len(order)), means.to_numpy(), color="0.85")
        for i, method in enumerate(order):
            v = m.loc[m["method"] == method, "value"].to_numpy()
            ax.plot(v, np.full(v.size, i), "o", ms=3, color="C0")
        ax.set_title(metric, fontsize=9)
        ax.set_xlim(0, 1)
    axes[0].set_yticks(range(len(order)))
    axes[0].set_yticklabels(order, fontsize=7)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout()
    return fig
