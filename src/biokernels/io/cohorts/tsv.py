"""The generic cohort layout (cohort format ``tsv``, the embedded default
written by :mod:`biokernels.synth.pimkl`): a samples x genes TSV, a
``sample_id, label`` TSV and an optional copy-number TSV.
"""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.cohorts.common import _check_nan
from biokernels.io.opener import open_binary
from biokernels.io.text import read_table

__all__ = ["load_tsv_cohort", "read_cohort", "read_expression_tsv", "read_labels_tsv"]


def _read_numeric_matrix(path: str | Path) -> pd.DataFrame:
    try:  # the header as written (pandas would rename a repeated name G1 -> G1.1)
        with open_binary(path) as fh:   # gzip by content; damaged: InputError, said by read_table below
            first = pd.read_csv(fh, sep="\t", header=None, nrows=1, dtype=str, keep_default_na=False,
                                compression=None).iloc[0]
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError, OSError):
        first = None  # the reader below names the problem
    if first is not None and first.iloc[1:].duplicated().any():
        dup = sorted(set(first.iloc[1:][first.iloc[1:].duplicated()]))
        raise InputError(f"{path}: header: duplicated gene column(s) {dup[:3]} (expected each gene once)")
    try:  # fast path: a clean numeric table
        with open_binary(path) as fh:
            fast = pd.read_csv(fh, sep="\t", index_col=0, na_values=["", "NA", "NaN", "nan", "na", "?"],
                               keep_default_na=False, compression=None)
        if (fast.shape[1] >= 1 and all(pd.api.types.is_numeric_dtype(t) for t in fast.dtypes)
                and fast.index.is_unique and not fast.columns.duplicated().any()
                and not any(str(c).startswith("Unnamed:") for c in fast.columns)
                and not fast.index.isna().any()):
            fast.index = pd.Index([str(i).strip() for i in fast.index], name=None)
            if (fast.index != "").all() and fast.index.is_unique:
                fast.columns = [str(c) for c in fast.columns]
                return fast.astype(float)
    except (ValueError, pd.errors.ParserError, pd.errors.EmptyDataError, OSError):
        pass
    table = read_table(path)
    if table.shape[1] < 2:
        raise InputError(f"{path}: expected a sample-id column and at least one gene column, "
                         f"found {table.shape[1]} column(s)")
    ids = table.iloc[:, 0].str.strip()
    if (ids == "").any():
        raise InputError(f"{path}: data row {int(np.flatnonzero(ids == '')[0]) + 1}: empty sample id")
    dup = ids.duplicated()
    if dup.any():
        raise InputError(f"{path}: sample id {ids[dup].iloc[0]!r} appears twice")
    cols = list(table.columns[1:])
    if len(set(cols)) < len(cols):
        raise InputError(f"{path}: duplicated column name(s) {sorted({c for c in cols if cols.count(c) > 1})[:3]}")
    body = table.iloc[:, 1:].apply(lambda s: s.str.strip())
    nums = body.apply(pd.to_numeric, errors="coerce")
    # a non-empty, non-NA text that is not a number is an error; empty / NA -> NaN
    nan_text = body.isin(["", "NA", "NaN", "nan", "na", "?"])
    bad = nums.isna() & ~nan_text
    if bad.any().any():
        r = int(np.flatnonzero(bad.any(axis=1).to_numpy())[0])
        c = bad.columns[bad.iloc[r].to_numpy()][0]
        raise InputError(f"{path}: sample {ids.iloc[r]!r}, column {c!r}: expected a number, "
                         f"got {body.iloc[r][c]!r}")
    nums.index = pd.Index(ids.to_numpy(), name=None)
    return nums.astype(float)


def read_expression_tsv(path: str | Path, nan_policy: str = "error") -> tuple[pd.DataFrame, int]:
    """Read a samples x genes TSV (first column: sample id; header: genes).

    Returns
    -------
    X : DataFrame (n_samples, n_genes), float64
    samples_with_nan : int (dropped with ``nan_policy="drop"``)

    Raises
    ------
    InputError
        Missing/empty file, empty or duplicated sample id, duplicated gene,
        a non-numeric value, or (``nan_policy="error"``) a missing value —
        the file, sample and gene are named.
    """
    return _check_nan(_read_numeric_matrix(path), str(path), nan_policy)


def read_labels_tsv(path: str | Path, label_col: str = "label") -> pd.Series:
    """Read binary labels: a TSV with the sample id first and a ``label`` column.

    Returns
    -------
    Series of int64 (0/1), indexed by sample id

    Raises
    ------
    InputError
        Missing column, empty or duplicated sample id, a label that is not 0
        or 1 (the sample is named), or only one class present.
    """
    table = read_table(path)
    if label_col not in table.columns or table.columns[0] == label_col:
        raise InputError(f"{path}: expected columns 'sample_id' and {label_col!r}; found {list(table.columns)}")
    ids = table.iloc[:, 0].str.strip()
    if (ids == "").any() or ids.duplicated().any():
        s = "" if (ids == "").any() else ids[ids.duplicated()].iloc[0]
        raise InputError(f"{path}: sample id {s!r} is empty or appears twice")
    raw = table[label_col].str.strip()
    ok = raw.isin(["0", "1"])
    if not ok.all():
        r = int(np.flatnonzero(~ok.to_numpy())[0])
        raise InputError(f"{path}: sample {ids.iloc[r]!r}, column {label_col!r}: expected 0 or 1, "
                         f"got {raw.iloc[r]!r}")
    y = pd.Series(raw.astype("int64").to_numpy(), index=pd.Index(ids.to_numpy()), name=label_col)
    if y.nunique() < 2:
        raise InputError(f"{path}: labels are all {y.iloc[0]} (expected both classes 0 and 1)")
    return y


def read_cohort(expression_path: str | Path, labels_path: str | Path, nan_policy: str = "error"
                ) -> tuple[pd.DataFrame, pd.Series, dict[str, int]]:
    """Read a generic cohort: samples x genes TSV + labels TSV (the layout of
    :func:`biokernels.synth.pimkl.generate_default`).

    Returns
    -------
    X : DataFrame (n_samples, n_genes), float64, rows in the expression file's order
    y : Series int64 0/1, aligned with ``X``
    counts : dict ``samples``, ``genes``, ``positive``, ``negative``, ``samples_with_nan``

    Raises
    ------
    InputError
        Everything :func:`read_expression_tsv` and :func:`read_labels_tsv`
        raise, and sample ids that differ between the two files (a few of
        each side are named).
    """
    X = _read_numeric_matrix(expression_path)
    y = read_labels_tsv(labels_path)
    only_x = X.index.difference(y.index)
    only_y = y.index.difference(X.index)
    if len(only_x) or len(only_y):
        raise InputError(f"{expression_path} vs {labels_path}: sample ids differ: "
                         f"{len(only_x)} only in the expression file (e.g. {list(only_x[:3])}), "
                         f"{len(only_y)} only in the labels file (e.g. {list(only_y[:3])})")
    X, n_nan = _check_nan(X, str(expression_path), nan_policy)
    y = y.loc[X.index]
    if y.nunique() < 2:
        raise InputError(f"{expression_path}: after dropping {n_nan} sample(s) with missing values, "
                         f"{len(y)} sample(s) of {y.nunique()} class(es) remain; expected both classes")
    counts = {"samples": int(len(y)), "genes": int(X.shape[1]), "positive": int(y.sum()),
              "negative": int((y == 0).sum()), "samples_with_nan": n_nan}
    return X, y, counts


def load_tsv_cohort(expression_path: str | Path, labels_path: str | Path, cna_path: str | Path | None = None,
                    *, collapse: str = "max_mean", name: str = "<cohort>"
                    ) -> tuple[pd.DataFrame, pd.Series, dict]:
    """Cohort format ``tsv``: :func:`read_cohort` plus an optional CNA table.

    Parameters
    ----------
    expression_path, labels_path : path
        Samples x genes TSV and ``sample_id, label`` TSV.
    cna_path : path, optional
        Samples x genes copy-number TSV (:func:`read_expression_tsv`), every
        sample of the expression file present.
    collapse : str
        Ignored (the genes are given; the registry's common argument).
    name : str
        Cohort name, for messages.

    Returns
    -------
    X, y, counts
        As :func:`read_cohort`; ``counts["has_probes"] = False`` and, with
        ``cna_path``, ``counts["cna"]``: DataFrame (n_samples, n_cna_genes)
        with ``X``'s rows.

    Raises
    ------
    InputError
        What :func:`read_cohort` raises, and expression samples without a CNA
        row (cohort, file and a few samples named).
    """
    X, y, counts = read_cohort(expression_path, labels_path)
    counts["has_probes"] = False
    if cna_path:
        cna, _ = read_expression_tsv(cna_path)
        missing = X.index.difference(cna.index)
        if len(missing):
            raise InputError(f"{cna_path}: cohort {name!r}: {len(missing)} sample(s) of the "
                             f"expression file have no CNA row (e.g. {list(missing[:3])})")
        counts["cna"] = cna.loc[X.index]
    return X, y, counts
