"""The scaling laws of the images study's curves (Methods "Projection
scaling laws"): per group, the ``a·log2(n) + b`` fit and the last point
predicted from the first points. pandas and numpy only (no torch), so that
the figure jobs run in the core environment."""

from __future__ import annotations

import pandas as pd

from biokernels.scaling import extrapolation_error, fit_log2_law

__all__ = ["law_rows"]


def law_rows(curve, group: list[str], metric: str, first: int = 5) -> list[dict]:
    """Per group: the ``a·log2(n) + b`` fit of the seed-mean ``metric`` against
    n_train, its R², and the last point predicted from the first ``first``
    (Methods "Projection scaling laws")."""
    df = pd.DataFrame(curve)
    out = []
    for key, g in df.groupby(group, sort=False):
        m = g.groupby("n_train")[metric].mean()
        row = dict(zip(group, key if isinstance(key, tuple) else (key,)))
        row.update({"metric": metric, "points": len(m)})
        if len(m) >= 3:
            fit = fit_log2_law(m.index.to_numpy(), m.to_numpy())
            row.update({"a": fit["a"], "b": fit["b"], "r2": fit["r2"]})
        if len(m) > first >= 3:
            ex = extrapolation_error(m.index.to_numpy(), m.to_numpy(), first)
            row.update({"last_observed": ex["observed"], "last_predicted": ex["predicted"],
                        "last_abs_error": ex["abs_error"]})
        out.append(row)
    return out
