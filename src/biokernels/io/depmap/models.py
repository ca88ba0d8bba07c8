"""DepMap model tables (model id -> cell line names) and the choice of target
cell lines.

:func:`read_models` reads DepMap's ``Model.csv``, the older
``sample_info.csv`` or PRISM's ``*-cell-line-info.csv``
(:data:`MODEL_LAYOUTS`); the cell id of a model is group 1 of
``cell_pattern`` searched in its ``cell_field``. :func:`select_cell_lines`
applies ``depmap.cell_lines`` (ids or names, case-insensitive)."""

from __future__ import annotations

import difflib
import logging
from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.depmap.files import NA_STRINGS, _cell_regex, _line, _read_text_table

log = logging.getLogger(__name__)


#: Model-table layouts (:func:`read_models`): layout -> the file's column of
#: each field (None = the layout has none). The first column listed under
#: ``id`` identifies the layout.
MODEL_LAYOUTS = {
    "Model.csv": {"id": "ModelID", "cell_line_name": "CellLineName", "stripped_name": "StrippedCellLineName",
                  "ccle_name": "CCLEName", "passed_str": None},
    "sample_info.csv": {"id": "DepMap_ID", "cell_line_name": "cell_line_name",
                        "stripped_name": "stripped_cell_line_name", "ccle_name": "CCLE_Name", "passed_str": None},
    "cell-line-info.csv": {"id": "row_name", "cell_line_name": None, "stripped_name": None, "ccle_name": "ccle_name",
                           "passed_str": "passed_str_profiling"},
}
#: Fields of the model table a cell id may be taken from (``cell_field``).
CELL_FIELDS = ("stripped_name", "ccle_name", "cell_line_name")


def _bools(values: pd.Series, path, field: str) -> np.ndarray:
    """TRUE/FALSE (any case; R and pandas spellings) -> True/False, NA or
    empty -> None (object array); InputError naming the line and field of
    anything else."""
    low = values.str.lower()
    na = values.isin(NA_STRINGS).to_numpy()
    ok = low.isin(["true", "false"]).to_numpy() | na
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise InputError(f"{path}: line {_line(i)}, field {field!r}: expected TRUE, FALSE or NA, got "
                         f"{values.iloc[i]!r}")
    out = (low == "true").to_numpy().astype(object)
    out[na] = None
    return out


def read_models(path) -> tuple[pd.DataFrame, dict]:
    """Read a DepMap model table: model id -> cell line names.

    Parameters
    ----------
    path : path
        ``Model.csv`` (DepMap 22Q2 on), ``sample_info.csv`` (DepMap 19Q1 to
        22Q1) or PRISM's ``primary-`` / ``secondary-screen-cell-line-info.csv``
        (:data:`MODEL_LAYOUTS`, recognised by the header).

    Returns
    -------
    models : DataFrame indexed by model id (``ACH-000001``; for the PRISM
        cell-line-info, its ``row_name``, the row id of the PRISM matrices),
        columns ``line`` (file line), ``cell_line_name``, ``stripped_name``,
        ``ccle_name`` ('' where the layout or row has none) and
        ``passed_str`` (True, False, or None where the layout has no such
        field or the row says NA). Where the layout has no stripped name, or a row's is empty,
        it is the CCLE name up to its first ``_`` (CCLE names are
        ``<STRIPPED>_<TISSUE>``), counted.
    counts : dict ``layout``, ``models``, ``rows_without_model_id`` (skipped:
        the id empty or R's ``NA``), ``models_without_any_name`` (every name
        field empty or ``NA``, as PRISM's control barcodes: kept with ''
        names, so that their values are dropped and counted as
        ``models_without_name`` by the readers), ``stripped_from_ccle_name``.
        :data:`NA_STRINGS` (``NA``, ...) in the id and name fields are read
        as missing: no model or cell line is ever called ``NA``.

    Raises
    ------
    InputError
        Not a model table (the header is named, and what it looks like when it
        is a PRISM matrix or treatment table); a model id twice (both lines
        named); a ``passed_str_profiling`` that is not TRUE / FALSE / NA; or what
        :func:`check_table_file` raises.
    """
    table, _ = _read_text_table(path, "a model table (Model.csv or sample_info.csv)")
    layout = next((name for name, cols in MODEL_LAYOUTS.items() if cols["id"] in table.columns), None)
    if layout == "cell-line-info.csv" and "ccle_name" not in table.columns:
        layout = None
    if layout is None:
        hint = ""
        if any("::" in str(c) for c in table.columns):
            hint = " (it looks like a PRISM log-fold-change matrix: check which file is files.models)"
        elif "column_name" in table.columns or "auc" in table.columns:
            hint = " (it looks like a PRISM treatment or dose-response table: check which file is files.models)"
        raise InputError(f"{path}: not a model table{hint}; expected Model.csv (ModelID, StrippedCellLineName, "
                         f"CCLEName, ...), sample_info.csv (DepMap_ID, stripped_cell_line_name, CCLE_Name, ...) "
                         f"or a PRISM cell-line-info table (row_name, depmap_id, ccle_name); found "
                         f"{list(table.columns)[:12]}")
    cols = MODEL_LAYOUTS[layout]
    names = [cols[f] for f in ("stripped_name", "ccle_name") if cols[f] and cols[f] in table.columns]
    if not names:
        raise InputError(f"{path}: no cell line name column; the {layout} layout needs "
                         f"{[c for c in (cols['stripped_name'], cols['ccle_name']) if c]} (either)")
    ids = table[cols["id"]]
    empty = ids.isin(NA_STRINGS)      # R writes a missing id or name as NA: never a model or cell line "NA"
    out = pd.DataFrame({"line": np.arange(len(table)) + 2}, index=pd.Index(ids.to_numpy(), name="model_id"))
    for f in ("cell_line_name", "stripped_name", "ccle_name"):
        c = cols[f]
        out[f] = table[c].mask(table[c].isin(NA_STRINGS), "").to_numpy() if c and c in table.columns else ""
    derive = (out["stripped_name"] == "") & (out["ccle_name"] != "")
    out.loc[derive, "stripped_name"] = out.loc[derive, "ccle_name"].str.split("_", n=1).str[0]
    if cols["passed_str"] and cols["passed_str"] in table.columns:
        out["passed_str"] = _bools(table[cols["passed_str"]], path, cols["passed_str"])
    else:
        out["passed_str"] = None
    out = out[~empty.to_numpy()]
    dup = out.index.duplicated(keep=False)
    if dup.any():
        first = out.index[dup][0]
        lines = out.loc[out.index == first, "line"].tolist()[:2]
        raise InputError(f"{path}: lines {lines}, field {cols['id']!r}: model id {first!r} appears twice; "
                         "expected one row per model")
    nameless = (out[["cell_line_name", "stripped_name", "ccle_name"]] == "").all(axis=1)
    counts = {"layout": layout, "models": int(len(out)), "rows_without_model_id": int(empty.sum()),
              "models_without_any_name": int(nameless.sum()),
              "stripped_from_ccle_name": int(derive[~empty.to_numpy()].sum())}
    if counts["rows_without_model_id"]:
        log.warning("%s: %d row(s) without a model id (empty or NA) skipped", path, counts["rows_without_model_id"])
    if counts["models_without_any_name"]:
        log.warning("%s: %d model(s) without a cell line name (empty or NA; e.g. control barcodes): their values "
                    "are dropped (models_without_name)", path, counts["models_without_any_name"])
    return out, counts


def _map_models(model_ids: Sequence[str], models: pd.DataFrame, models_path, cell_field: str, cell_pattern: str,
                require_str_profiling: bool) -> tuple[np.ndarray, np.ndarray]:
    """Cell id of each model id ('' = dropped) and the reason of each drop
    ('' = kept; ``model_not_in_mapping``, ``model_failed_str``,
    ``model_without_name``).

    Raises
    ------
    InputError
        ``cell_field`` unknown; a used model's name does not match
        ``cell_pattern`` (model table line and field named).
    """
    if cell_field not in CELL_FIELDS:
        raise InputError(f"cell_field: expected one of {list(CELL_FIELDS)}, got {cell_field!r}")
    rx = _cell_regex(cell_pattern)
    ids = pd.Index([str(m) for m in model_ids])
    pos = models.index.get_indexer(ids)
    names = np.where(pos >= 0, models[cell_field].to_numpy(object)[np.maximum(pos, 0)], "")
    passed = models["passed_str"].to_numpy(object)[np.maximum(pos, 0)]
    failed = np.array([p is not None and not bool(p) for p in passed], dtype=bool) & (pos >= 0)
    reason = np.where(pos < 0, "model_not_in_mapping",
                      np.where(failed & require_str_profiling, "model_failed_str",
                               np.where(names == "", "model_without_name", "")))
    cells = np.full(len(ids), "", dtype=object)
    for i in np.flatnonzero(reason == ""):
        m = rx.search(names[i])
        if not m or not m.group(1):
            line = int(models["line"].iloc[pos[i]])
            raise InputError(f"{models_path}: line {line}, field {cell_field!r} (model {ids[i]!r}): cell name "
                             f"{names[i]!r} does not match cell_pattern {cell_pattern!r}")
        cells[i] = m.group(1)
    return cells, reason


def select_cell_lines(wanted: Sequence[str], ids: Sequence[str], aliases: Mapping[str, Sequence[str]],
                      source, elsewhere: Mapping[str, Sequence[str]] | None = None) -> np.ndarray:
    """Which of ``ids`` the ``depmap.cell_lines`` setting selects.

    Parameters
    ----------
    wanted : list of str
        The setting: model ids (``ACH-000001``) or cell line names, matched
        case-insensitively; empty = every id.
    ids : sequence of str, length n
        The ids to select from (DepMap model ids, or the cell ids of a long
        table).
    aliases : mapping id -> list of str
        Other names of an id that ``wanted`` may use (its cell id, the model
        table's ``CellLineName``, ``StrippedCellLineName``, ``CCLEName``).
        Ids with aliases but absent from ``ids`` (e.g. rows dropped before
        this step) are known names that select nothing.
    source : path or str
        The data named in messages.
    elsewhere : mapping id -> list of str, optional
        Models of the model table absent from the data: a wanted name among
        them is still an error, said to be absent from the data.

    Returns
    -------
    ndarray of bool, shape (n,)
        True where the id, or one of its aliases, is in ``wanted``.

    Raises
    ------
    InputError
        A wanted name that is neither an id nor an alias of the data: every
        such name is listed with its close matches (``difflib``, by
        spelling), or as in the model table but not in the data.
    """
    ids = [str(i) for i in ids]
    if not wanted:
        return np.ones(len(ids), dtype=bool)
    names: dict[str, set[str]] = {}
    for i in ids:
        names.setdefault(i.casefold(), set()).add(i)
    for i, more in aliases.items():
        for a in [i, *more]:
            if a:
                names.setdefault(str(a).casefold(), set()).add(str(i))
    unknown = [w for w in wanted if str(w).casefold() not in names]
    if unknown:
        spelled = sorted({a for i in ids for a in [i, *aliases.get(i, ())] if a} | set(map(str, aliases)))
        lower = {a.casefold(): a for a in spelled}
        absent = {str(a).casefold(): str(i) for i, more in (elsewhere or {}).items() for a in [i, *more] if a}
        hints = []
        for w in unknown:
            close = [lower[c] for c in difflib.get_close_matches(str(w).casefold(), list(lower), n=4, cutoff=0.6)]
            note = f"model {absent[str(w).casefold()]} of the model table, not in the data; " \
                if str(w).casefold() in absent else ""
            hints.append(f"{w!r} ({note}{'close: ' + ', '.join(map(repr, close)) if close else 'no close match'})")
        raise InputError(f"depmap.cell_lines: {len(unknown)} name(s) not a model id or cell line name of {source}: "
                         f"{'; '.join(hints)}; expected DepMap ids (ACH-...) or names such as "
                         f"{', '.join(map(repr, spelled[:4]))}")
    chosen = set().union(*(names[str(w).casefold()] for w in wanted))
    return np.array([i in chosen for i in ids], dtype=bool)


def _model_aliases(ids: Sequence[str], models: pd.DataFrame, cells: Sequence[str] = ()) -> dict[str, list[str]]:
    """id -> its names in the model table (and its cell id, when mapped)."""
    pos = models.index.get_indexer(pd.Index([str(i) for i in ids]))
    fields = [models[f].to_numpy(object) for f in ("cell_line_name", "stripped_name", "ccle_name")]
    out = {}
    for k, (i, p) in enumerate(zip(ids, pos)):
        more = [f[p] for f in fields] if p >= 0 else []
        if len(cells):
            more.append(cells[k])
        out[str(i)] = [m for m in more if m]
    return out
