"""The PRISM Repurposing primary screen (19Q4): the replicate-collapsed
log2 fold-change matrix and its treatment info, read as the project's long
viability table (:func:`read_prism_primary`). The stated rules (dose choice,
screens, QC, counted drops) are in ``docs/io_readers_notes.md``."""

from __future__ import annotations

import csv
from collections.abc import Sequence

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.depmap.compounds import _compound_info, _screen_rank, _take_str
from biokernels.io.depmap.counts import _log_drops
from biokernels.io.depmap.files import NA_STRINGS, _line, _need_columns, _read_text_table, check_table_file
from biokernels.io.depmap.models import _map_models, _model_aliases, read_models, select_cell_lines
from biokernels.io.opener import open_binary, open_text


def _read_matrix(path) -> pd.DataFrame:
    """The primary screen's log-fold-change matrix as float64, row ids as
    strings; InputError for duplicated row or column ids, an empty row id,
    a value that is not a number or is infinite (line and column named)."""
    sep = check_table_file(path, "a PRISM log-fold-change matrix")
    with open_text(path, newline="") as handle:
        header = next(csv.reader(handle, delimiter=sep), [])
    cols = header[1:]
    seen: dict[str, int] = {}
    for j, c in enumerate(cols):
        if c in seen:
            raise InputError(f"{path}: line 1: column {c!r} appears twice (fields {seen[c] + 2} and {j + 2}); "
                             "expected one column per treatment")
        seen[c] = j
    if not cols:
        raise InputError(f"{path}: line 1: no treatment columns; expected the PRISM matrix layout (first column the "
                         "DepMap ids, one column per treatment column_name)")
    try:
        with open_binary(path) as fh:
            m = pd.read_csv(fh, sep=sep, index_col=0, na_values=list(NA_STRINGS), keep_default_na=False,
                            dtype={header[0] or "Unnamed: 0": str}, encoding="utf-8", compression=None)
    except pd.errors.ParserError as e:
        raise InputError(f"{path}: cannot parse as a {'tab' if sep == chr(9) else 'comma'}-separated matrix "
                         f"(a row with more fields than the header?): {e}") from None
    m.columns = cols
    ids = pd.Series(m.index, dtype=object).fillna("").astype(str).str.strip()
    if (ids == "").any():
        i = int(np.flatnonzero((ids == "").to_numpy())[0])
        raise InputError(f"{path}: line {_line(i)}, field 1: empty row id; expected a DepMap id (ACH-...)")
    dup = ids.duplicated(keep=False)
    if dup.any():
        lines = [_line(i) for i in np.flatnonzero(dup.to_numpy())[:2]]
        raise InputError(f"{path}: lines {lines}: row id {ids[dup].iloc[0]!r} appears twice; expected one row "
                         "per model")
    m.index = pd.Index(ids.to_numpy(), name="model_id")
    bad = m.select_dtypes(exclude="number").columns
    if len(bad):
        col = bad[0]
        num = pd.to_numeric(m[col], errors="coerce")
        i = int(np.flatnonzero((num.isna() & m[col].notna()).to_numpy())[0])
        raise InputError(f"{path}: line {_line(i)}, column {col!r}: expected a log2 fold change (a number or NA), "
                         f"got {m[col].iloc[i]!r}")
    if not (m.dtypes == np.float64).all():
        m = m.astype(np.float64)
    inf = np.isinf(m.to_numpy())
    if inf.any():
        i, j = (int(x[0]) for x in np.nonzero(inf))
        raise InputError(f"{path}: line {_line(i)}, column {m.columns[j]!r}: infinite value")
    return m


def read_prism_primary(logfold_change, treatment_info, models, *, dose_um: float = 2.5,
                       max_dose_ratio: float = 2.0, screens: str = "mean", screen_priority: Sequence[str] = (),
                       cell_field: str = "stripped_name", cell_pattern: str = r"^(.+)$",
                       require_str_profiling: bool = True, cell_lines: Sequence[str] = ()
                       ) -> tuple[pd.DataFrame, dict]:
    """The PRISM primary screen as the project's long viability table.

    Source: PRISM Repurposing 19Q4 (figshare 10.6084/m9.figshare.9393293),
    ``primary-screen-replicate-collapsed-logfold-change.csv`` (log2 fold
    change of the cell line's barcode abundance against DMSO, replicates
    collapsed; lower = more killing) and
    ``primary-screen-replicate-collapsed-treatment-info.csv``.

    Parameters
    ----------
    logfold_change : path
        The matrix, models x treatment columns (578 x 4,686 in 19Q4): first
        column the row ids (DepMap ids, the header field may be empty), then
        one column per treatment ``column_name``; ``NA`` / empty = missing.
    treatment_info : path
        One row per treatment column: ``column_name``, ``broad_id``,
        ``dose`` (µM), ``screen_id``, ``smiles`` (``name`` optional).
    models : path
        Model table (:func:`read_models`).
    dose_um : float > 0
        The dose to use; per compound the columns at the dose closest to it
        (log scale) are used.
    max_dose_ratio : float >= 1
        A compound whose closest dose is further than this factor from
        ``dose_um`` is dropped (counted).
    screens : {"mean", "priority"}, screen_priority : list of screen ids
        Several columns of a compound at its chosen dose (several screens),
        per cell line: the mean of the finite values, or the value of the
        first screen in ``screen_priority`` that has one (then the unlisted
        screens by name).
    cell_field, cell_pattern : the cell id is group 1 of ``cell_pattern``
        searched in the model table's ``cell_field`` (:data:`CELL_FIELDS`).
    require_str_profiling : bool
        Drop models whose model table says they failed STR profiling (only
        PRISM's cell-line-info has the field).
    cell_lines : list of str
        Keep only these models (``depmap.cell_lines``): DepMap ids or names
        of the model table, case-insensitive (:func:`select_cell_lines`);
        empty = all. The others' values are dropped and counted
        (``models_not_selected``, ``values_model_not_selected``).

    Returns
    -------
    viability : DataFrame, one row per kept (model, compound) value:
        ``row`` (the model's data row in the matrix, 1-based), ``drug_id``
        (``broad_id``), ``smiles`` ('' when none), ``cell_id``,
        ``viability`` (log2 fold change, float64); rows ordered by matrix row
        then compound.
    counts : dict, the keys of :data:`READ_COUNTS` for this layout
        (``format`` and the model table's ``model_table_layout`` too).

    Raises
    ------
    InputError
        A file is unreadable or does not match its name; a required column is
        missing; a treatment column twice or with an empty ``column_name``; a
        dose that is not a positive number (line and field named); a matrix
        value that is not a number; settings out of range; what
        :func:`read_models` raises. A model id absent from the model table
        is not an error: its values are dropped and counted.
    """
    if not (isinstance(dose_um, (int, float)) and dose_um > 0):
        raise InputError(f"dose_um: expected a dose in µM > 0, got {dose_um!r}")
    if not (isinstance(max_dose_ratio, (int, float)) and max_dose_ratio >= 1):
        raise InputError(f"max_dose_ratio: expected a factor >= 1, got {max_dose_ratio!r}")
    counts: dict = {"format": "prism_primary"}
    treat, _ = _read_text_table(treatment_info, "a PRISM treatment-info table")
    _need_columns(treat, treatment_info, ["column_name", "broad_id", "dose", "screen_id", "smiles"],
                  "PRISM primary-screen-replicate-collapsed-treatment-info")
    if treat.empty:
        raise InputError(f"{treatment_info}: no data rows")
    empty = treat["column_name"] == ""
    if empty.any():
        raise InputError(f"{treatment_info}: line {_line(np.flatnonzero(empty.to_numpy())[0])}, field "
                         "'column_name': empty; expected the matrix column of the treatment")
    dup = treat["column_name"].duplicated(keep=False)
    if dup.any():
        lines = [_line(i) for i in np.flatnonzero(dup.to_numpy())[:2]]
        raise InputError(f"{treatment_info}: lines {lines}, field 'column_name': "
                         f"{treat.loc[dup, 'column_name'].iloc[0]!r} appears twice; expected one row per column")
    dose = pd.to_numeric(treat["dose"].where(~treat["dose"].isin(NA_STRINGS)), errors="coerce")
    bad = ~(dose > 0)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{treatment_info}: line {_line(i)}, field 'dose': expected a dose in µM > 0, got "
                         f"{treat['dose'].iloc[i]!r}")
    treat["dose_value"] = dose.to_numpy(np.float64)
    treat["line"] = np.arange(len(treat)) + 2

    M = _read_matrix(logfold_change)
    counts.update(matrix_models=int(M.shape[0]), matrix_columns=int(M.shape[1]), treatment_rows=int(len(treat)))
    in_matrix = treat["column_name"].isin(M.columns)
    counts["treatments_not_in_matrix"] = int((~in_matrix).sum())
    treat = treat[in_matrix.to_numpy()]
    counts["columns_without_treatment_info"] = int((~M.columns.isin(treat["column_name"])).sum())
    no_id = treat["broad_id"] == ""
    counts["columns_without_broad_id"] = int(no_id.sum())
    treat = treat[~no_id.to_numpy()].copy()

    # dose: per compound the columns at the dose closest to dose_um (log scale)
    treat["log_ratio"] = np.abs(np.log(treat["dose_value"].to_numpy() / float(dose_um)))
    best = treat.groupby("broad_id", sort=False)["log_ratio"].transform("min")
    at_best = np.isclose(treat["log_ratio"], best, rtol=0, atol=1e-9)
    in_range = best <= np.log(float(max_dose_ratio)) + 1e-12
    counts["compounds_dose_out_of_range"] = int(treat.loc[~in_range, "broad_id"].nunique())
    counts["columns_dose_out_of_range"] = int((~in_range).sum())
    counts["columns_other_dose"] = int((in_range & ~at_best).sum())
    used = treat[(in_range & at_best).to_numpy()]
    if used.empty:
        raise InputError(f"{treatment_info}: no compound has a column within a factor {max_dose_ratio} of "
                         f"dose_um={dose_um} µM (doses found: {sorted(treat['dose_value'].unique())[:10]})")
    counts["columns_used"] = int(len(used))
    info = _compound_info(used["broad_id"], used["smiles"], used["name"] if "name" in used else None,
                          treatment_info, counts)
    compounds = info.index
    counts["compounds_several_columns"] = int((used["broad_id"].value_counts() > 1).sum())

    # combine the columns of a compound (screens), per model
    rank = _screen_rank(screens, screen_priority, used["screen_id"].unique())
    g = compounds.get_indexer(used["broad_id"])
    r = used["screen_id"].map(rank).to_numpy() if screens == "priority" else np.zeros(len(used), int)
    order = np.lexsort((np.arange(len(used)), r, g))
    cols = M.columns.get_indexer(used["column_name"].to_numpy()[order])
    g = g[order]
    X = M.to_numpy()[:, cols]
    finite = np.isfinite(X)
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    n_finite = np.add.reduceat(finite.astype(np.int32), starts, axis=1)
    if screens == "mean":
        V = np.add.reduceat(np.where(finite, X, 0.0), starts, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            V = np.where(n_finite > 0, V / np.maximum(n_finite, 1), np.nan)
    else:  # the first finite value in priority order
        V = np.full((X.shape[0], len(starts)), np.nan)
        ends = np.r_[starts[1:], X.shape[1]]
        for k, (a, b) in enumerate(zip(starts, ends)):
            block = X[:, a:b]
            if b - a == 1:
                V[:, k] = block[:, 0]
                continue
            has = np.isfinite(block)
            first = np.argmax(has, axis=1)
            V[:, k] = np.where(has.any(axis=1), block[np.arange(block.shape[0]), first], np.nan)

    # models -> cell lines
    mdl, mcounts = read_models(models)
    counts["model_table_layout"] = mcounts["layout"]
    counts["model_table_rows_without_id"] = mcounts["rows_without_model_id"]
    counts["model_table_models_without_name"] = mcounts["models_without_any_name"]
    cells, reason = _map_models(M.index, mdl, models, cell_field, cell_pattern, require_str_profiling)
    whys = ["model_not_in_mapping", "model_failed_str", "model_without_name"]
    if cell_lines:
        others = mdl.index[~mdl.index.isin(M.index)]
        chosen = select_cell_lines(cell_lines, M.index, _model_aliases(M.index, mdl, cells),
                                   f"{logfold_change} (models of {models})", _model_aliases(others, mdl))
        reason = np.where((reason == "") & ~chosen, "model_not_selected", reason)
        counts["cell_lines_requested"] = len(cell_lines)
        whys.append("model_not_selected")
    finite_v = np.isfinite(V)
    for why in whys:
        sel = reason == why
        counts[f"models_{why[6:]}"] = int(sel.sum())
        counts[f"values_{why}"] = int(finite_v[sel].sum())
    keep = reason == ""
    counts["values_missing"] = int((~finite_v[keep]).sum())
    counts["values_combined"] = int(((n_finite > 1) & finite_v)[keep].sum())
    rows, comp = np.nonzero(finite_v & keep[:, None])
    out = pd.DataFrame({"row": rows + 1, "drug_id": _take_str(compounds, comp),
                        "smiles": _take_str(info["smiles"], comp), "cell_id": _take_str(cells, rows),
                        "viability": V[rows, comp]})
    counts["rows"] = int(len(out))
    counts["cell_lines"] = int(out["cell_id"].nunique())
    per_cell = pd.Series(cells[keep]).value_counts()
    counts["cell_lines_of_several_models"] = int((per_cell > 1).sum())
    _log_drops(logfold_change, counts, ["columns_without_treatment_info", "columns_without_broad_id",
                                        "compounds_dose_out_of_range", "columns_dose_out_of_range",
                                        "columns_other_dose", "models_not_in_mapping", "models_failed_str",
                                        "models_without_name", "models_not_selected", "values_missing", "values_combined",
                                        "compounds_without_smiles", "compounds_several_smiles",
                                        "cell_lines_of_several_models"])
    if out.empty:
        raise InputError(f"{logfold_change}: no value left (none of its {M.shape[0]} row ids maps to a cell line "
                         f"of {models}, or every value is missing); counts: {counts}")
    return out, counts
