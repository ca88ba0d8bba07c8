"""scikit-survival's GSE7390 (TRANSBIG) ARFF (cohort format ``arff``):
clinical columns + 76 probes, read with :func:`scipy.io.arff.loadarff`.
"""

from __future__ import annotations

import io
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.cohorts.common import FIVE_YEARS_DAYS, _check_nan, collapse_probes, five_year_labels
from biokernels.io.opener import open_binary, open_text

__all__ = ["load_arff_cohort", "read_arff_cohort"]


def read_arff_cohort(path: str | Path, time_col: str = "t.tdm", event_col: str = "e.tdm",
                     probe_prefix: str = "X", probe_to_gene: pd.Series | dict[str, str] | None = None,
                     collapse: str = "max_mean", horizon: float = FIVE_YEARS_DAYS,
                     sample_prefix: str = "GSE7390_", nan_policy: str = "error"
                     ) -> tuple[pd.DataFrame, pd.Series, dict[str, int]]:
    """Read scikit-survival's GSE7390 (TRANSBIG) ARFF: clinical + 76 probes.

    The endpoint is distant-metastasis-free survival (``t.tdm`` days,
    ``e.tdm``), the only one in the file (the paper used RFS for GSE7390,
    Table S1). The file has no sample ids: rows are named
    ``<sample_prefix><row:04d>`` (1-based).

    Parameters
    ----------
    path : path
        ARFF file (gzip allowed), read with :func:`scipy.io.arff.loadarff`.
    time_col, event_col : str
    probe_prefix : str
        Probe columns start with it (``X219340_s_at``); it is stripped.
    probe_to_gene : Series or dict, optional
        Probe -> symbol; when given the probes are collapsed to genes
        (:func:`collapse_probes`), otherwise ``X`` keeps the probe ids.
    collapse, horizon, nan_policy
        As in :func:`read_vdxs_cohort`.

    Returns
    -------
    X : DataFrame (n_labelled, n_probes or n_genes), float64
    y : Series, int64 0/1
    counts : dict
        :func:`five_year_labels` counts, ``probes``, ``samples_with_nan``,
        ``samples_kept`` (and the collapse counts with ``probe_to_gene``).

    Raises
    ------
    InputError
        If the file cannot be parsed, a column is missing, or a value is
        missing with ``nan_policy="error"``.
    """
    from scipy.io import arff

    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: expected an ARFF file, found nothing")
    with open_text(path, "gzip" if path.suffix == ".gz" else None) as fh:   # damaged gzip: InputError
        text = fh.read()
    try:
        data, _meta = arff.loadarff(io.StringIO(text))
    except Exception as err:  # scipy raises several types (ParseArffError, ValueError)
        raise InputError(f"{path}: cannot parse as ARFF: {err}") from None
    df = pd.DataFrame(data)
    for col in (time_col, event_col):
        if col not in df.columns:
            raise InputError(f"{path}: missing attribute {col!r}")
    df.index = [f"{sample_prefix}{i:04d}" for i in range(1, len(df) + 1)]
    event = df[event_col].map(lambda v: v.decode() if isinstance(v, bytes) else v)
    y, counts = five_year_labels(df[time_col], event.replace("?", np.nan), horizon, str(path))
    probes = [c for c in df.columns if c.startswith(probe_prefix)]
    X = df.loc[y.index, probes].astype(float)
    X.columns = [c[len(probe_prefix):] for c in probes]
    counts["probes"] = len(probes)
    if probe_to_gene is not None:
        X, c = collapse_probes(X, probe_to_gene, collapse)
        counts.update(c)
    X, counts["samples_with_nan"] = _check_nan(X, str(path), nan_policy)
    y = y.loc[X.index]
    counts["samples_kept"] = int(len(y))
    return X, y, counts


def load_arff_cohort(arff_path: str | Path, annotation_path: str | Path | None = None,
                     *, collapse: str = "max_mean", name: str = "<cohort>"
                     ) -> tuple[pd.DataFrame, pd.Series, dict]:
    """Cohort format ``arff``: scikit-survival's GSE7390 ARFF (:func:`read_arff_cohort`).

    Parameters
    ----------
    arff_path : path
    annotation_path : path, optional
        TSV with columns ``probe`` and ``HUGO.gene.symbol`` (e.g. vdxs'
        annotation); the probes are collapsed to genes with ``collapse``.
        Without it the probes stay the columns.
    collapse : {"max_mean", "mean"}
    name : str
        Unused (the files are named in messages).

    Returns
    -------
    X, y, counts
        As :func:`read_arff_cohort`; ``counts["has_probes"]`` True when the
        probes were collapsed.

    Raises
    ------
    InputError
        The annotation is missing, empty or lacks a column, or what
        :func:`read_arff_cohort` raises.
    """
    mapping = None
    if annotation_path:
        try:
            with open_binary(annotation_path) as fh:   # compressed by content; damaged: InputError
                ann = pd.read_csv(fh, sep="\t", dtype=str, compression=None)
        except pd.errors.EmptyDataError:
            raise InputError(f"{annotation_path}: the file is empty (expected a tab-separated probe annotation "
                             "with columns probe and HUGO.gene.symbol)") from None
        missing = [c for c in ("probe", "HUGO.gene.symbol") if c not in ann.columns]
        if missing:
            raise InputError(f"{annotation_path}: missing column(s) {missing}; found {list(ann.columns)}")
        mapping = ann.set_index("probe")["HUGO.gene.symbol"].dropna()
    X, y, counts = read_arff_cohort(arff_path, probe_to_gene=mapping, collapse=collapse)
    counts["has_probes"] = mapping is not None
    return X, y, counts
