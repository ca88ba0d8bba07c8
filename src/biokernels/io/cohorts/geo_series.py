"""A labelled cohort from a GEO series matrix and its platform annotation
(cohort format ``geo_series_matrix``): the paper's own Table S1 cohorts
(GSE2034, GSE1456, GSE2990, GSE4922, GSE7390, GSE11121). The file layouts are
read by :mod:`biokernels.io.geo`; survival comes from the samples'
characteristics or a clinical table.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.cohorts.common import FIVE_YEARS_DAYS, collapse_probes, five_year_labels

__all__ = ["FIVE_YEARS", "GEO_NAN_POLICIES", "geo_settings_problems", "load_geo_series_matrix_cohort",
           "read_geo_cohort"]

log = logging.getLogger(__name__)

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
