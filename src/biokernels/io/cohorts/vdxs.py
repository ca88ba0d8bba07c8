"""The genefu ``vdxs`` cohort (cohort format ``vdxs``; GSE2034 = ``VDX``,
GSE5327 = ``VDXN``): a samples x probes TSV, a probe annotation table and a
clinical table.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.cohorts.common import FIVE_YEARS_DAYS, _check_nan, collapse_probes, five_year_labels
from biokernels.io.cohorts.tsv import _read_numeric_matrix
from biokernels.io.text import read_table

__all__ = ["load_vdxs_cohort", "read_vdxs_cohort"]


def read_vdxs_cohort(expression_path: str | Path, annotation_path: str | Path, clinical_path: str | Path,
                     series: str | list[str] | None = "VDX", endpoint: str = "rfs",
                     collapse: str = "max_mean", horizon: float = FIVE_YEARS_DAYS,
                     symbol_col: str = "HUGO.gene.symbol", nan_policy: str = "error"
                     ) -> tuple[pd.DataFrame, pd.Series, dict[str, int]]:
    """Read the genefu ``vdxs`` cohort (GSE2034 = ``VDX``, GSE5327 = ``VDXN``).

    Parameters
    ----------
    expression_path : path
        ``vdxs_expression_150x966.tsv.gz``: samples x probes, first column
        the sample id, log2 MAS5 values.
    annotation_path : path
        ``vdxs_probe_annotation.tsv`` with columns ``probe`` and ``symbol_col``.
    clinical_path : path
        ``vdxs_clinical.tsv``: first column the sample id, ``series``,
        ``t.<endpoint>`` (days) and ``e.<endpoint>`` (0/1).
    series : str or list of str or None
        Keep these series (``"VDX"`` = GSE2034, the paper's cohort); all
        when None.
    endpoint : {"rfs", "dmfs"}
        Relapse-free (paper, Table S1, for GSE2034) or distant-metastasis-free
        survival. RFS is given for VDX only.
    collapse : {"max_mean", "mean"}
        See :func:`collapse_probes`.
    horizon : float
        Days, see :func:`five_year_labels`.
    symbol_col : str
        Annotation column with the gene symbol.
    nan_policy : {"error", "drop"}

    Returns
    -------
    X : DataFrame (n_labelled, n_genes), float64, genes sorted
    y : Series (n_labelled,), int64 0/1, same index
    counts : dict
        Those of :func:`five_year_labels` and :func:`collapse_probes`, plus
        ``series_dropped``, ``samples_with_nan`` and ``samples_kept``.

    Raises
    ------
    InputError
        Missing file/column, non-numeric expression, missing values with
        ``nan_policy="error"``, samples of the clinical table absent from the
        expression table (a few are named), bad survival values.
    """
    expr = _read_numeric_matrix(expression_path)
    ann = read_table(annotation_path)
    for col in ("probe", symbol_col):
        if col not in ann.columns:
            raise InputError(f"{annotation_path}: missing column {col!r}; found {list(ann.columns)}")
    clin = read_table(clinical_path)
    clin = clin.set_index(clin.columns[0])
    need = ["series", f"t.{endpoint}", f"e.{endpoint}"]
    missing = [c for c in need if c not in clin.columns]
    if missing:
        raise InputError(f"{clinical_path}: missing column(s) {missing}; found {list(clin.columns)}")
    counts: dict[str, int] = {}
    if series is not None:
        keep = clin["series"].isin([series] if isinstance(series, str) else list(series))
        counts["series_dropped"] = int((~keep).sum())
        clin = clin[keep]
    else:
        counts["series_dropped"] = 0
    absent = clin.index.difference(expr.index)
    if len(absent):
        raise InputError(f"{clinical_path}: {len(absent)} sample(s) absent from {expression_path}, "
                         f"e.g. {list(absent[:3])}")
    y, c = five_year_labels(clin[f"t.{endpoint}"].replace("", np.nan), clin[f"e.{endpoint}"].replace("", np.nan),
                            horizon, str(clinical_path))
    counts.update(c)
    X, c = collapse_probes(expr.loc[y.index], dict(zip(ann["probe"], ann[symbol_col])), collapse)
    counts.update(c)
    X, counts["samples_with_nan"] = _check_nan(X, str(expression_path), nan_policy)
    y = y.loc[X.index]
    counts["samples_kept"] = int(len(y))
    return X, y, counts


def load_vdxs_cohort(expression_path: str | Path, annotation_path: str | Path, clinical_path: str | Path,
                     series: str | list[str] | None = "VDX", endpoint: str = "rfs",
                     *, collapse: str = "max_mean", name: str = "<cohort>"
                     ) -> tuple[pd.DataFrame, pd.Series, dict]:
    """Cohort format ``vdxs``: :func:`read_vdxs_cohort` (genefu vdxs files;
    ``series`` ``"VDX"`` = GSE2034 by default, ``endpoint`` ``"rfs"``), probes
    collapsed with ``collapse``; ``counts["has_probes"] = True``. ``name`` is
    unused (the files are named in messages). Raises what the reader raises."""
    X, y, counts = read_vdxs_cohort(expression_path, annotation_path, clinical_path, series=series,
                                    endpoint=endpoint, collapse=collapse)
    counts["has_probes"] = True
    return X, y, counts
