"""Expression cohorts with a 5-year relapse label (PIMKL, Manica et al. 2019,
Section 3.1 and Supplementary Table S1).

Two real layouts (``../shared/data/breast_cancer_small_cohorts``) and one
generic layout (the embedded default written by
:mod:`biokernels.synth.pimkl`):

* genefu ``vdxs`` (GSE2034 + GSE5327): samples x probes TSV, a probe
  annotation table and a clinical table (:func:`read_vdxs_cohort`);
* scikit-survival's GSE7390 ARFF: clinical columns + 76 probes
  (:func:`read_arff_cohort`);
* a samples x genes TSV plus a ``sample_id, label`` TSV (:func:`read_cohort`);
* a GEO series matrix with its platform annotation, survival from the
  samples' characteristics or a clinical table (:func:`read_geo_cohort`;
  the file layouts are read by :mod:`biokernels.io.geo`): the paper's own
  Table S1 cohorts (GSE2034, GSE1456, GSE2990, GSE4922, GSE7390, GSE11121).

All return ``X`` (DataFrame, samples x genes, float64), ``y`` (Series of 0/1
int64 indexed like ``X``) and a dict of counts; nothing is dropped silently.

**Registry** (:data:`COHORT_READERS`): the config's cohort ``format`` ->
the reader of that layout, called with the cohort entry's other keys as
keyword arguments (:func:`load_tsv_cohort`, :func:`load_vdxs_cohort`,
:func:`load_arff_cohort`, :func:`load_geo_series_matrix_cohort`). Adding a layout is a ``load_<format>_cohort``
function with the same keyword-only ``collapse`` and ``name`` plus one
registry line (and its keys in the config schema's ``pimkl_cohort``).

**5-year label** (:func:`five_year_labels`), as in the paper's benchmark
(Cun & Froehlich 2013; Table S1 "rfs <= 5 years" vs "> 5 years"): with the
horizon ``H = 1826`` days (5 x 365.25, floored),

* relapse (event) at time <= H -> 1 (poor outcome);
* follow-up time > H (with or without a later event) -> 0;
* censored (no event) at time <= H -> excluded: whether the patient relapsed
  within 5 years is unknown. Excluded samples are counted
  (``censored_before_horizon``) and logged;
* missing time or event -> excluded, counted (``no_endpoint``).

**Missing expression values** are an error by default (the file and the
first sample and gene are named); ``nan_policy="drop"`` drops the samples
holding any, counted in ``samples_with_nan``.

**Probe collapse** (:func:`collapse_probes`): several probes measure one gene
on Affymetrix arrays. The default ``"max_mean"`` keeps, per gene, the probe
with the highest mean expression over the samples at hand (the usual choice,
e.g. WGCNA's ``collapseRows`` "MaxMean" and genefu's ``geneid.map``; a bright
probe is the least noisy on a log scale, and the value stays one real
measurement). ``"mean"`` averages the gene's probes. Probes without a
symbol are dropped and counted.
"""

from __future__ import annotations

import io
import logging
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.networks import read_table
from biokernels.io.opener import open_binary, open_text

log = logging.getLogger(__name__)

#: 5 years in days (5 x 365.25, floored): the PIMKL / Cun & Froehlich horizon.
FIVE_YEARS_DAYS = 1826.0

COLLAPSE_METHODS = ("max_mean", "mean")


def five_year_labels(time: pd.Series, event: pd.Series, horizon: float = FIVE_YEARS_DAYS,
                     origin: str = "<clinical>") -> tuple[pd.Series, dict[str, int]]:
    """Binary "relapse within ``horizon``" labels from survival data.

    Parameters
    ----------
    time : Series, float (days), indexed by sample
    event : Series, 0/1 (1 = relapse / metastasis observed), same index
    horizon : float
        Days; 1826 by default.
    origin : str
        File name for error messages.

    Returns
    -------
    labels : Series of int64 (0/1), indexed by the kept samples, in input order
        1 = event at time <= horizon; 0 = time > horizon.
    counts : dict
        ``samples``, ``positive``, ``negative``,
        ``censored_before_horizon`` (no event, time <= horizon: excluded),
        ``no_endpoint`` (time or event missing: excluded).

    Raises
    ------
    InputError
        If an event is not 0/1 or a time is negative (the sample is named).
    """
    t = pd.to_numeric(time, errors="coerce")
    e = pd.to_numeric(event, errors="coerce")
    missing = t.isna() | e.isna()
    bad_e = ~missing & ~e.isin([0, 1])
    if bad_e.any():
        raise InputError(f"{origin}: sample {bad_e.idxmax()!r}: event must be 0 or 1, got {event[bad_e.idxmax()]!r}")
    bad_t = ~missing & (t < 0)
    if bad_t.any():
        raise InputError(f"{origin}: sample {bad_t.idxmax()!r}: negative survival time {t[bad_t.idxmax()]}")
    pos = ~missing & (e == 1) & (t <= horizon)
    neg = ~missing & (t > horizon)
    censored = ~missing & (e == 0) & (t <= horizon)
    labels = pd.Series(np.where(pos, 1, 0), index=time.index, dtype="int64")[pos | neg]
    counts = {"samples": int(len(t)), "positive": int(pos.sum()), "negative": int(neg.sum()),
              "censored_before_horizon": int(censored.sum()), "no_endpoint": int(missing.sum())}
    if counts["censored_before_horizon"] or counts["no_endpoint"]:
        log.info("%s: excluded %d sample(s) censored before %g days and %d without endpoint",
                 origin, counts["censored_before_horizon"], horizon, counts["no_endpoint"])
    return labels, counts


def collapse_probes(expr: pd.DataFrame, probe_to_gene: pd.Series | dict[str, str],
                    method: str = "max_mean") -> tuple[pd.DataFrame, dict[str, int]]:
    """Collapse a samples x probes matrix to samples x genes.

    Parameters
    ----------
    expr : DataFrame, shape (n_samples, n_probes), float
    probe_to_gene : Series or dict, probe -> gene symbol
        Probes absent from it or mapped to ``""``/NaN are dropped.
    method : {"max_mean", "mean"}
        ``"max_mean"``: per gene, the probe with the highest mean over the
        samples (ties: first probe in column order); ``"mean"``: average of
        the gene's probes.

    Returns
    -------
    X : DataFrame, shape (n_samples, n_genes), float64, genes sorted
    counts : dict
        ``probes``, ``probes_without_gene``, ``genes``,
        ``genes_with_several_probes``, ``probes_collapsed`` (probes not
        kept as their gene's value, or averaged into it).

    Raises
    ------
    ValueError
        If ``method`` is unknown or no probe maps to a gene.
    """
    if method not in COLLAPSE_METHODS:
        raise ValueError(f"collapse method {method!r}: expected one of {COLLAPSE_METHODS}")
    genes = pd.Series(probe_to_gene).reindex(expr.columns)
    genes = genes.where(genes.notna() & (genes.astype(str).str.strip() != ""))
    mapped = genes.notna().to_numpy()
    if not mapped.any():
        raise ValueError("no probe maps to a gene symbol")
    sub = expr.loc[:, mapped].astype(float)
    g = genes[mapped].astype(str).str.strip()
    if method == "mean":
        X = sub.T.groupby(g.to_numpy()).mean().T
    else:
        means = sub.mean(axis=0)
        order = pd.DataFrame({"gene": g.to_numpy(), "mean": means.to_numpy(), "pos": np.arange(len(g))})
        best = order.sort_values(["gene", "mean", "pos"], ascending=[True, False, True]).drop_duplicates("gene")
        X = sub.iloc[:, best["pos"].to_numpy()]
        X.columns = best["gene"].to_numpy()
    X = X.sort_index(axis=1)
    X.columns.name = None
    per_gene = g.value_counts()
    counts = {"probes": int(expr.shape[1]), "probes_without_gene": int((~mapped).sum()),
              "genes": int(X.shape[1]), "genes_with_several_probes": int((per_gene > 1).sum()),
              "probes_collapsed": int(mapped.sum() - X.shape[1])}
    return X, counts


def _check_nan(X: pd.DataFrame, origin: str, nan_policy: str) -> tuple[pd.DataFrame, int]:
    if nan_policy not in ("error", "drop"):
        raise ValueError(f"nan_policy {nan_policy!r}: expected 'error' or 'drop'")
    inf = np.isinf(X.to_numpy(dtype=float, na_value=np.nan))
    if inf.any():
        r, c = (int(v[0]) for v in np.nonzero(inf))
        raise InputError(f"{origin}: sample {X.index[r]!r}, column {X.columns[c]!r}: infinite value "
                         "(expected a finite number)")
    bad = X.isna().any(axis=1)
    if bad.any() and nan_policy == "error":
        s = bad.idxmax()
        gene = X.loc[s].isna().idxmax()
        raise InputError(f"{origin}: sample {s!r}, column {gene!r}: missing value "
                         f"({int(bad.sum())} sample(s) have missing values; expected a number)")
    if bad.any():
        log.warning("%s: dropped %d sample(s) with missing expression values", origin, int(bad.sum()))
    return X[~bad], int(bad.sum())


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


# ---------------------------------------------------------------------------
# generic layout (embedded default)

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


# ---------------------------------------------------------------------------
# the registry: a cohort entry of the config -> (X, y, counts)

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
        The annotation lacks a column, or what :func:`read_arff_cohort` raises.
    """
    mapping = None
    if annotation_path:
        ann = pd.read_csv(annotation_path, sep="\t", dtype=str)
        missing = [c for c in ("probe", "HUGO.gene.symbol") if c not in ann.columns]
        if missing:
            raise InputError(f"{annotation_path}: missing column(s) {missing}; found {list(ann.columns)}")
        mapping = ann.set_index("probe")["HUGO.gene.symbol"].dropna()
    X, y, counts = read_arff_cohort(arff_path, probe_to_gene=mapping, collapse=collapse)
    counts["has_probes"] = mapping is not None
    return X, y, counts


# ---------------------------------------------------------------------------
# GEO series matrix + platform annotation (the paper's Table S1 cohorts)

#: The 5-year horizon in each time unit of a GEO cohort (days: as
#: :data:`FIVE_YEARS_DAYS`). Comparing in the data's own unit keeps the
#: boundary exact: 60 months is "within 5 years", 60.1 is not.
FIVE_YEARS = {"days": FIVE_YEARS_DAYS, "months": 60.0, "years": 5.0}
#: What to do with missing expression values of the labelled samples.
GEO_NAN_POLICIES = ("drop_probes", "drop_samples", "error")
#: Follow-up medians that suggest a wrong ``time_unit`` (warning only): a
#: median below 120 days, above 600 months or above 50 years.
_UNIT_SANITY = {"days": (120.0, None), "months": (None, 600.0), "years": (None, 50.0)}


def geo_settings_problems(spec: dict, name: str = "<cohort>") -> list[str]:
    """What is wrong with a ``geo_series_matrix`` cohort's survival settings
    (the checks a schema cannot make; the workflow runs them at parse time).

    Returns one message per problem, naming ``cohort <name>`` and the
    field: exactly one of ``time_key``/``time_regex`` (and of
    ``event_key``/``event_regex``); regexes that compile with one group;
    no regex with ``clinical_path`` (a table's columns are named by key).
    """
    import re

    problems = []
    for what in ("time", "event"):
        k, r = spec.get(f"{what}_key"), spec.get(f"{what}_regex")
        if (k is None) == (r is None):
            problems.append(f"cohort {name!r}: give one of {what}_key / {what}_regex "
                            f"({'both' if k is not None else 'neither'} given)")
        if r is not None:
            if spec.get("clinical_path"):
                problems.append(f"cohort {name!r}: {what}_regex applies to the sample characteristics; with "
                                f"clinical_path name the table's column with {what}_key")
            try:
                if re.compile(r).groups != 1:
                    problems.append(f"cohort {name!r}: {what}_regex {r!r} needs exactly one capturing group "
                                    "(the value)")
            except re.error as err:
                problems.append(f"cohort {name!r}: {what}_regex {r!r} is not a regular expression ({err})")
    return problems


def _verify_sha256(paths: dict[str, str | Path | None], sha256: dict[str, str] | None, name: str) -> None:
    """``sha256``: file key (``series_matrix``, ``platform``, ``clinical``;
    not ``*_path``, which the workflow checks as paths) -> 64 hex digits."""
    from biokernels.io.download import sha256_file

    for key, want in (sha256 or {}).items():
        fld = f"{key}_path"
        if fld not in paths:
            raise InputError(f"cohort {name!r}: sha256 names {key!r}; expected some of "
                             f"{sorted(k[: -len('_path')] for k in paths)}")
        if not paths[fld]:
            raise InputError(f"cohort {name!r}: sha256.{key} is given but {fld} is not set")
        got = sha256_file(paths[fld])
        if got != str(want).lower():
            raise InputError(f"{paths[fld]}: sha256 {got}, expected {want} (cohort {name!r}, sha256.{key}): "
                             "the file is not the one pinned")


def read_geo_cohort(series_matrix_path: str | Path, platform_path: str | Path,
                    time_key: str | None = None, event_key: str | None = None,
                    time_regex: str | None = None, event_regex: str | None = None,
                    time_unit: str = "days", clinical_path: str | Path | None = None,
                    sample_col: str | None = None, event_map: dict[str, int] | None = None,
                    symbol_col: str | None = None, id_col: str = "ID", multi_gene: str = "drop",
                    log2: str | bool = "auto", nan_policy: str = "drop_probes",
                    na_values: list[str] | None = None, collapse: str = "max_mean", name: str = "<cohort>"
                    ) -> tuple[pd.DataFrame, pd.Series, dict[str, int]]:
    """A labelled cohort from a GEO series matrix and its platform annotation.

    Steps, each drop counted and logged:

    1. :func:`biokernels.io.geo.read_series_matrix` (probes x samples;
       ``null``/empty/``na_values`` cells -> NaN, ``values_missing``);
    2. log2 (``log2``: ``"auto"`` = GEO2R's rule,
       :func:`biokernels.io.geo.log2_needed`; values <= 0 -> NaN,
       ``values_nonpositive``);
    3. :func:`biokernels.io.geo.read_platform_annotation` (probe -> symbol,
       ``multi_gene`` rule); a ``GPLnnn`` named by both files must agree;
    4. survival per sample from ``!Sample_characteristics_ch1`` (``*_key``
       or ``*_regex``) or from ``clinical_path`` (columns ``time_key``,
       ``event_key``; matrix samples without a row -> no endpoint,
       ``samples_without_clinical_row``; rows of other samples counted in
       ``clinical_rows_not_in_matrix``);
    5. the 5-year label (:func:`five_year_labels`, horizon
       :data:`FIVE_YEARS` in ``time_unit``): event within 5 years -> 1,
       follow-up beyond 5 years -> 0, censored within 5 years -> excluded
       (``censored_before_horizon``), time or event missing -> excluded
       (``no_endpoint``). The paper (Manica et al. 2019, Section 3.1): "The
       classification task consisted in stratifying breast cancer samples
       according to occurrence of relapse within 5 years."; its Table S1
       splits each cohort into dmfs/rfs at most 5 years and above 5 years,
       and counts fewer labelled patients than patients (GSE2034: 286
       patients, 93 + 183 labelled), which is what excluding the patients
       censored within 5 years gives (this reading is ours: the paper does
       not state it);
    6. missing values of the labelled samples (``nan_policy``):
       ``"drop_probes"`` drops the probes with any (``probes_with_missing``),
       ``"drop_samples"`` the samples with any (``samples_with_nan``),
       ``"error"`` names the first (file line, probe, sample);
    7. :func:`collapse_probes` with ``collapse`` (probes without a kept
       symbol: ``probes_without_gene``; of these, ``probes_not_in_platform``
       are absent from the annotation table).

    Parameters
    ----------
    series_matrix_path, platform_path : path
        Plain or gzip (recognised by content).
    time_key, event_key : str, optional
        Characteristic tags (``"t.rfs"``, ``"e.rfs"``) or, with
        ``clinical_path``, column names.
    time_regex, event_regex : str, optional
        Instead of the keys: a regular expression with one group, searched
        in each characteristics cell.
    time_unit : {"days", "months", "years"}
        Unit of the times.
    clinical_path : path, optional
        Clinical table (:func:`biokernels.io.geo.read_clinical_table`) to
        take the survival from instead of the characteristics.
    sample_col : str, optional
        Its GSM column (default: detected).
    event_map : dict str -> {0, 1}, optional
        Event words to codes (``{"yes": 1, "no": 0}``); numbers 0/1 need none.
    symbol_col, id_col, multi_gene
        See :func:`biokernels.io.geo.read_platform_annotation`.
    log2 : {"auto", True, False}
    nan_policy : {"drop_probes", "drop_samples", "error"}
    na_values : list of str, optional
        Extra expression cells read as missing (e.g. ``"-666"``).
    collapse : {"max_mean", "mean"}
    name : str
        Cohort name, for messages.

    Returns
    -------
    X : DataFrame (n_labelled, n_genes), float64 (log2 scale), genes sorted
    y : Series (n_labelled,), int64 0/1, same index (GSM ids)
    counts : dict of int
        ``samples_in_matrix``, ``probes_in_matrix``, ``values_missing``,
        ``log2_applied`` (0/1), ``values_nonpositive``, the platform counts
        (``platform_probes``, ``probes_without_symbol``,
        ``probes_multi_gene``, ``platform_probes_kept``),
        ``samples_without_clinical_row`` and ``clinical_rows_not_in_matrix``
        (with ``clinical_path``), the :func:`five_year_labels` counts
        (``samples``, ``positive``, ``negative``,
        ``censored_before_horizon``, ``no_endpoint``),
        ``probes_with_missing``, ``samples_with_nan``,
        ``probes_not_in_platform``, the :func:`collapse_probes` counts and
        ``samples_kept``.

    Raises
    ------
    InputError
        What the :mod:`biokernels.io.geo` readers raise; survival settings
        that :func:`geo_settings_problems` refuses; a survival value that is
        not a number / 0-1 event (file, line, sample, field); platforms that
        differ; no labelled sample of one class; a missing value with
        ``nan_policy="error"``.
    ValueError
        Unknown ``time_unit``, ``log2``, ``nan_policy``, ``multi_gene`` or
        ``collapse``.
    """
    from biokernels.io import geo

    if time_unit not in FIVE_YEARS:
        raise ValueError(f"time_unit {time_unit!r}: expected one of {sorted(FIVE_YEARS)}")
    if log2 not in ("auto", True, False):
        raise ValueError(f"log2 {log2!r}: expected 'auto', true or false")
    if nan_policy not in GEO_NAN_POLICIES:
        raise ValueError(f"nan_policy {nan_policy!r}: expected one of {GEO_NAN_POLICIES}")
    spec = {"time_key": time_key, "event_key": event_key, "time_regex": time_regex,
            "event_regex": event_regex, "clinical_path": clinical_path}
    problems = geo_settings_problems(spec, name)
    if problems:
        raise InputError("; ".join(problems))

    sm = geo.read_series_matrix(series_matrix_path, na_values=na_values or ())
    counts: dict[str, int] = {"samples_in_matrix": len(sm.sample_ids), "probes_in_matrix": int(sm.expression.shape[0]),
                              "values_missing": int(sm.missing_values)}
    expr = sm.expression
    apply_log = geo.log2_needed(expr.to_numpy()) if log2 == "auto" else bool(log2)
    counts["log2_applied"] = int(apply_log)
    counts["values_nonpositive"] = 0
    if apply_log:
        nonpos = expr.to_numpy() <= 0
        counts["values_nonpositive"] = int(nonpos.sum())
        expr = np.log2(expr.where(~nonpos))
        log.info("%s: log2-transformed (%s); %d value(s) <= 0 set missing", series_matrix_path,
                 "GEO2R rule" if log2 == "auto" else "log2: true", counts["values_nonpositive"])

    ann = geo.read_platform_annotation(platform_path, id_col=id_col, symbol_col=symbol_col, multi_gene=multi_gene)
    if ann.accession and sm.platform_id and ann.accession != sm.platform_id:
        raise InputError(f"cohort {name!r}: {series_matrix_path} is on platform {sm.platform_id} "
                         f"(!Series_platform_id) but {platform_path} annotates {ann.accession}")
    counts.update(ann.counts)

    origin = str(clinical_path or series_matrix_path)
    if clinical_path:
        table, lines = geo.read_clinical_table(clinical_path, sample_col=sample_col)
        cols = {c.strip().lower(): c for c in table.columns}
        for fld, key in (("time_key", time_key), ("event_key", event_key)):
            if key.strip().lower() not in cols:
                raise InputError(f"{clinical_path}: no column {key!r} ({fld}); columns {list(table.columns)}")
        ids = pd.Index(sm.sample_ids)
        counts["samples_without_clinical_row"] = int((~ids.isin(table.index)).sum())
        counts["clinical_rows_not_in_matrix"] = int((~table.index.isin(ids)).sum())
        if counts["clinical_rows_not_in_matrix"] or counts["samples_without_clinical_row"]:
            log.warning("cohort %s: %d matrix sample(s) without a row in %s (no endpoint); %d row(s) of samples "
                        "not in %s", name, counts["samples_without_clinical_row"], clinical_path,
                        counts["clinical_rows_not_in_matrix"], series_matrix_path)
        t_raw = table[cols[time_key.strip().lower()]].reindex(ids)
        e_raw = table[cols[event_key.strip().lower()]].reindex(ids)
        t_lines = e_lines = lines.reindex(ids).fillna(0).astype("int64")
    else:
        t_raw, t_lines = geo.characteristic_values(sm, time_key, time_regex, "time_key" if time_key else "time_regex")
        e_raw, e_lines = geo.characteristic_values(sm, event_key, event_regex,
                                                   "event_key" if event_key else "event_regex")
    t_field = f"{'time_key ' + repr(time_key) if time_key else 'time_regex ' + repr(time_regex)}"
    e_field = f"{'event_key ' + repr(event_key) if event_key else 'event_regex ' + repr(event_regex)}"
    time = geo.parse_time(t_raw, t_lines, origin, t_field)
    event = geo.parse_event(e_raw, e_lines, origin, e_field, event_map)
    med = float(time.median()) if time.notna().any() else float("nan")
    lo, hi = _UNIT_SANITY[time_unit]
    if (lo is not None and med < lo) or (hi is not None and med > hi):
        log.warning("cohort %s: median follow-up %.4g %s looks implausible: check time_unit (%s)", name, med,
                    time_unit, t_field)
    y, c = five_year_labels(time, event, FIVE_YEARS[time_unit], origin)
    counts.update(c)
    if y.nunique() < 2:
        raise InputError(f"cohort {name!r}: {origin}: the 5-year labels hold {y.nunique()} class(es) "
                         f"({counts['positive']} positive, {counts['negative']} negative, "
                         f"{counts['censored_before_horizon']} censored before 5 years, {counts['no_endpoint']} "
                         f"without endpoint); check {t_field}, {e_field} and time_unit {time_unit!r}")

    X = expr.loc[:, y.index].T  # samples x probes
    counts["probes_with_missing"] = 0
    counts["samples_with_nan"] = 0
    bad = X.isna()
    if bad.to_numpy().any():
        if nan_policy == "error":
            r, cidx = (int(v[0]) for v in np.nonzero(bad.to_numpy()))
            probe = X.columns[cidx]
            line = int(sm.probe_lines[sm.expression.index.get_loc(probe)])
            raise InputError(f"{series_matrix_path}, line {line}, column {X.index[r]!r} (probe {probe!r}): missing "
                             f"value ({int(bad.any(axis=0).sum())} probe(s) of the labelled samples have some; "
                             "nan_policy drop_probes or drop_samples drops them)")
        if nan_policy == "drop_probes":
            drop = bad.any(axis=0)
            counts["probes_with_missing"] = int(drop.sum())
            X = X.loc[:, ~drop]
        else:
            drop = bad.any(axis=1)
            counts["samples_with_nan"] = int(drop.sum())
            X = X.loc[~drop]
            y = y.loc[X.index]
        log.warning("cohort %s: dropped %d probe(s) and %d sample(s) with missing values (%s)", name,
                    counts["probes_with_missing"], counts["samples_with_nan"], nan_policy)
    counts["probes_not_in_platform"] = int((~X.columns.isin(ann.probes)).sum())
    X.index.name = None
    X.columns.name = None
    Xg, c = collapse_probes(X, ann.symbols, collapse)
    counts.update(c)
    counts["samples_kept"] = int(len(y))
    log.info("cohort %s: %s", name, counts)
    return Xg, y.loc[Xg.index], counts


def load_geo_series_matrix_cohort(series_matrix_path: str | Path, platform_path: str | Path,
                                  time_key: str | None = None, event_key: str | None = None,
                                  time_regex: str | None = None, event_regex: str | None = None,
                                  time_unit: str = "days", clinical_path: str | Path | None = None,
                                  sample_col: str | None = None, event_map: dict[str, int] | None = None,
                                  symbol_col: str | None = None, id_col: str = "ID", multi_gene: str = "drop",
                                  log2: str | bool = "auto", nan_policy: str = "drop_probes",
                                  na_values: list[str] | None = None, sha256: dict[str, str] | None = None,
                                  *, collapse: str = "max_mean", name: str = "<cohort>"
                                  ) -> tuple[pd.DataFrame, pd.Series, dict]:
    """Cohort format ``geo_series_matrix``: :func:`read_geo_cohort`, after
    checking the files named in ``sha256`` (``{"series_matrix": <64 hex>,
    "platform": ..., "clinical": ...}``: optional pins of local files; a mismatch is an
    :class:`~biokernels.errors.InputError` naming the file, both digests and
    the field). ``counts["has_probes"] = True``. Raises what
    :func:`read_geo_cohort` raises."""
    _verify_sha256({"series_matrix_path": series_matrix_path, "platform_path": platform_path,
                    "clinical_path": clinical_path}, sha256, name)
    X, y, counts = read_geo_cohort(series_matrix_path, platform_path, time_key=time_key, event_key=event_key,
                                   time_regex=time_regex, event_regex=event_regex, time_unit=time_unit,
                                   clinical_path=clinical_path, sample_col=sample_col, event_map=event_map,
                                   symbol_col=symbol_col, id_col=id_col, multi_gene=multi_gene, log2=log2,
                                   nan_policy=nan_policy, na_values=na_values, collapse=collapse, name=name)
    counts["has_probes"] = True
    return X, y, counts


#: Cohort layouts by the config's ``format`` (the schema's ``pimkl_cohort``
#: enum lists exactly these keys, tests/unit/test_registries.py). Each reader
#: takes the cohort entry's other keys as keyword arguments, plus keyword-only
#: ``collapse`` (the probe collapse of microarray layouts) and ``name`` (for
#: messages), and returns ``X`` (DataFrame samples x genes, float64), ``y``
#: (Series int64 0/1 aligned with ``X``) and ``counts`` (a dict with
#: ``has_probes``: bool, and ``cna`` when the layout has copy numbers).
COHORT_READERS = {
    "tsv": load_tsv_cohort,      # samples x genes TSV + labels TSV (the generated default)
    "vdxs": load_vdxs_cohort,    # genefu vdxs (GSE2034 / GSE5327)
    "arff": load_arff_cohort,    # scikit-survival GSE7390 ARFF
    "geo_series_matrix": load_geo_series_matrix_cohort,  # GEO series matrix + GPL annotation (Table S1)
}
