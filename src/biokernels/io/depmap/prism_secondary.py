"""The PRISM Repurposing secondary screen (19Q4): dose-response curve
parameters (one row per compound x cell line x screen) read as the
project's long viability table (:func:`read_prism_secondary`). The stated
rules are in ``docs/io_readers_notes.md``."""

from __future__ import annotations

from collections.abc import Sequence

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.depmap.compounds import _compound_info, _screen_rank
from biokernels.io.depmap.counts import _log_drops
from biokernels.io.depmap.files import NA_STRINGS, _line, _need_columns, _read_text_table
from biokernels.io.depmap.models import _bools, _map_models, _model_aliases, read_models, select_cell_lines


#: Responses of the secondary screen and whether they are log10-transformed.
SECONDARY_RESPONSES = {"auc": False, "ic50": True, "ec50": True}


def read_prism_secondary(dose_response, models, *, response: str = "auc", screens: str = "mean",
                         screen_priority: Sequence[str] = (), cell_field: str = "stripped_name",
                         cell_pattern: str = r"^(.+)$", require_str_profiling: bool = True,
                         cell_lines: Sequence[str] = ()) -> tuple[pd.DataFrame, dict]:
    """The PRISM secondary screen's dose-response parameters as the
    project's long viability table.

    Source: PRISM Repurposing 19Q4 (figshare 10.6084/m9.figshare.9393293),
    ``secondary-screen-dose-response-curve-parameters.csv``: one row per
    compound x cell line x screen (``HTS002``, ``MTS005``, ``MTS006``,
    ``MTS010``), curves fitted to 8 doses; ``auc`` is the area under the
    fitted viability curve (0-1 scale, lower = more sensitive), ``ic50`` /
    ``ec50`` concentrations in µM (NA where the curve does not reach it).

    Parameters
    ----------
    dose_response : path
        The table; columns ``broad_id``, ``depmap_id``, ``screen_id``,
        ``smiles``, the ``response`` column, ``passed_str_profiling`` when
        ``require_str_profiling`` (``name``, ``ccle_name``, ``row_name`` and
        the others are not needed).
    models : path
        Model table (:func:`read_models`), keyed by ``depmap_id``.
    response : {"auc", "ic50", "ec50"}
        ``auc`` as is; ``ic50`` / ``ec50`` as ``log10(concentration / 1 µM)``
        (larger = more resistant, like AUC); a non-positive concentration has
        no logarithm and is dropped (counted).
    screens, screen_priority : several rows of one (compound, model) after the
        drops (usually from several screens): ``mean`` of their values, or
        the rows of the first screen in ``screen_priority`` (then unlisted
        screens by name; several rows of that screen averaged).
    cell_field, cell_pattern : as :func:`read_prism_primary`.
    require_str_profiling : bool
        Drop rows whose ``passed_str_profiling`` is FALSE (and models the
        model table marks so); NA is kept (not known to have failed), counted.
    cell_lines : list of str
        Keep only these models (``depmap.cell_lines``), as
        :func:`read_prism_primary`; the others' rows are dropped and counted
        (``models_not_selected``, ``rows_model_not_selected``).

    Returns
    -------
    viability : DataFrame ``row`` (data row of the kept pair's first row,
        1-based), ``drug_id`` (``broad_id``), ``smiles``, ``cell_id``,
        ``viability`` (float64), one row per (compound, model).
    counts : dict, the keys of :data:`READ_COUNTS` for this layout.

    Raises
    ------
    InputError
        A file is unreadable or does not match its name; a required column is
        missing; a response value that is not a number or is infinite, or a
        ``passed_str_profiling`` that is not TRUE / FALSE / NA (line and
        field named); settings out of range; what :func:`read_models` raises.
    """
    if response not in SECONDARY_RESPONSES:
        raise InputError(f"response: expected one of {list(SECONDARY_RESPONSES)}, got {response!r}")
    counts: dict = {"format": "prism_secondary", "response": response}
    table, _ = _read_text_table(dose_response, "a PRISM dose-response table")
    need = ["broad_id", "depmap_id", "screen_id", "smiles", response]
    if require_str_profiling:
        need.append("passed_str_profiling")
    _need_columns(table, dose_response, need, "PRISM secondary-screen-dose-response-curve-parameters")
    if table.empty:
        raise InputError(f"{dose_response}: no data rows")
    raw = table[response]
    na = raw.isin(NA_STRINGS)
    value = pd.to_numeric(raw.where(~na), errors="coerce")
    bad = value.isna() & ~na
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{dose_response}: line {_line(i)}, field {response!r}: expected a number or NA, got "
                         f"{raw.iloc[i]!r}")
    if np.isinf(value).any():
        i = int(np.flatnonzero(np.isinf(value.to_numpy()))[0])
        raise InputError(f"{dose_response}: line {_line(i)}, field {response!r}: infinite value")
    ids = {c: table[c].mask(table[c].isin(NA_STRINGS), "").to_numpy() for c in ("broad_id", "depmap_id")}  # R's NA
    df = pd.DataFrame({"row": np.arange(1, len(table) + 1), "broad_id": ids["broad_id"],
                       "model": ids["depmap_id"], "screen": table["screen_id"].to_numpy(),
                       "smiles": table["smiles"].to_numpy(), "value": value.to_numpy(np.float64)})
    df["name"] = table["name"].to_numpy() if "name" in table.columns else ""
    counts["input_rows"] = int(len(df))
    reason = np.full(len(df), "", dtype=object)

    def drop(mask, key):
        mask = np.asarray(mask) & (reason == "")
        reason[mask] = key
        counts[key] = int(mask.sum())

    drop(df["broad_id"] == "", "rows_without_broad_id")
    drop(df["model"] == "", "rows_without_model_id")
    if require_str_profiling:
        passed = _bools(table["passed_str_profiling"], dose_response, "passed_str_profiling")
        unknown = np.array([p is None for p in passed]) & (reason == "")
        drop(np.array([p is False for p in passed]), "rows_failed_str")
        counts["rows_str_unknown"] = int(unknown.sum())
    else:
        counts["rows_failed_str"] = 0
        counts["rows_str_unknown"] = 0
    drop(df["value"].isna(), "values_missing")
    if SECONDARY_RESPONSES[response]:
        drop(df["value"] <= 0, "values_not_positive")
        with np.errstate(divide="ignore", invalid="ignore"):
            df["value"] = np.log10(df["value"].where(df["value"] > 0))
    else:
        counts["values_not_positive"] = 0
    mdl, mcounts = read_models(models)
    counts["model_table_layout"] = mcounts["layout"]
    counts["model_table_rows_without_id"] = mcounts["rows_without_model_id"]
    counts["model_table_models_without_name"] = mcounts["models_without_any_name"]
    ids = pd.unique(df.loc[reason == "", "model"])
    cells, why = _map_models(ids, mdl, models, cell_field, cell_pattern, require_str_profiling)
    whys = ["model_not_in_mapping", "model_failed_str", "model_without_name"]
    if cell_lines:
        every = pd.unique(df.loc[df["model"] != "", "model"])     # names of models dropped above are known too
        aliases = _model_aliases(every, mdl) | _model_aliases(ids, mdl, cells)
        others = mdl.index[~mdl.index.isin(every)]
        chosen = select_cell_lines(cell_lines, ids, aliases, f"{dose_response} (models of {models})",
                                   _model_aliases(others, mdl))
        why = np.where((why == "") & ~chosen, "model_not_selected", why)
        counts["cell_lines_requested"] = len(cell_lines)
        whys.append("model_not_selected")
    cell_of = dict(zip(ids, cells))
    why_of = dict(zip(ids, why))
    for w in whys:
        counts[f"models_{w[6:]}"] = int((why == w).sum())
        drop(df["model"].map(why_of).fillna("").to_numpy() == w, f"rows_{w}")
    kept = df[reason == ""].copy()
    kept["cell_id"] = kept["model"].map(cell_of)
    info = _compound_info(kept["broad_id"], kept["smiles"], kept["name"], dose_response, counts)

    # several rows of one (compound, model): screens rule
    rank = _screen_rank(screens, screen_priority, kept["screen"].unique())
    size = kept.groupby(["broad_id", "model"], sort=False)["row"].transform("size")
    counts["pairs_several_rows"] = int(kept.loc[size > 1].drop_duplicates(["broad_id", "model"]).shape[0])
    if screens == "priority":
        kept["rank"] = kept["screen"].map(rank)
        top = kept.groupby(["broad_id", "model"], sort=False)["rank"].transform("min")
        counts["rows_other_screen"] = int((kept["rank"] > top).sum())
        kept = kept[(kept["rank"] == top).to_numpy()]
    else:
        counts["rows_other_screen"] = 0
    grouped = kept.groupby(["broad_id", "model"], sort=False)
    out = grouped.agg(row=("row", "min"), cell_id=("cell_id", "first"), viability=("value", "mean"),
                      n=("row", "size")).reset_index()
    counts["rows_merged"] = int((out["n"] - 1).sum())
    out["smiles"] = out["broad_id"].map(info["smiles"]).fillna("")
    out = out.sort_values("row", kind="stable").rename(columns={"broad_id": "drug_id"})
    out = out[["row", "drug_id", "smiles", "cell_id", "viability"]].reset_index(drop=True)
    counts["rows"] = int(len(out))
    counts["cell_lines"] = int(out["cell_id"].nunique())
    per_cell = pd.Series(cells[why == ""]).value_counts()
    counts["cell_lines_of_several_models"] = int((per_cell > 1).sum())
    _log_drops(dose_response, counts, ["rows_without_broad_id", "rows_without_model_id", "rows_failed_str",
                                       "values_missing", "values_not_positive", "models_not_in_mapping",
                                       "models_failed_str", "models_without_name", "models_not_selected",
                                       "rows_model_not_selected", "rows_other_screen",
                                       "rows_merged", "compounds_without_smiles", "compounds_several_smiles",
                                       "cell_lines_of_several_models"])
    if out.empty:
        raise InputError(f"{dose_response}: no value left after the drops; counts: {counts}")
    return out, counts
