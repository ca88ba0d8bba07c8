"""The viability readers by the config's ``reader.format``
(:data:`VIABILITY_READERS`): each takes the files of
:data:`VIABILITY_FILES` and returns the long table and its counts."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import pandas as pd

from biokernels.errors import InputError
from biokernels.io.depmap.counts import _log_drops
from biokernels.io.depmap.long import read_viability
from biokernels.io.depmap.models import select_cell_lines
from biokernels.io.depmap.prism_primary import read_prism_primary
from biokernels.io.depmap.prism_secondary import read_prism_secondary


#: File keys each format reads (``files`` of a local or download source).
VIABILITY_FILES = {
    "long": ("table",),
    "prism_primary": ("logfold_change", "treatment_info", "models"),
    "prism_secondary": ("dose_response", "models"),
}


def _check_files(files: Mapping[str, object], fmt: str) -> None:
    expected = set(VIABILITY_FILES[fmt])
    if set(files) != expected:
        raise InputError(f"format {fmt!r}: expected files {sorted(expected)}, got {sorted(files)}")


def load_long(files: Mapping[str, object], *, columns: Mapping[str, str | None],
              cell_pattern: str = r"^(.+)$", cell_lines: Sequence[str] = ()) -> tuple[pd.DataFrame, dict]:
    """``long`` layout: :func:`read_viability` of ``files["table"]``; counts
    ``format``, ``rows``, ``values_missing``. Missing values are passed on
    (dropped and listed as ``missing_value`` by :func:`prepare_targets`).

    ``cell_lines`` (``depmap.cell_lines``; empty = all) keeps the rows of
    these cell ids (the ids after ``cell_pattern``, case-insensitive,
    :func:`select_cell_lines`); the others are dropped and counted
    (``cell_lines_requested``, ``models_not_selected``: cell ids left out,
    ``rows_cell_line_not_selected``)."""
    _check_files(files, "long")
    v = read_viability(files["table"], dict(columns), cell_pattern)
    counts: dict = {"format": "long"}
    if cell_lines:
        cells = pd.unique(v["cell_id"])
        chosen = select_cell_lines(cell_lines, cells, {}, f"{files['table']} (its cell ids)")
        keep = v["cell_id"].isin(set(cells[chosen])).to_numpy()
        counts.update(cell_lines_requested=len(cell_lines), models_not_selected=int((~chosen).sum()),
                      rows_cell_line_not_selected=int((~keep).sum()))
        _log_drops(files["table"], counts, ["models_not_selected", "rows_cell_line_not_selected"])
        v = v[keep].reset_index(drop=True)
    counts.update(rows=int(len(v)), values_missing=int(v["viability"].isna().sum()))
    return v, counts


def load_prism_primary(files: Mapping[str, object], *, dose_um: float = 2.5, max_dose_ratio: float = 2.0,
                       screens: str = "mean", screen_priority: Sequence[str] = (),
                       cell_field: str = "stripped_name", cell_pattern: str = r"^(.+)$",
                       require_str_profiling: bool = True, cell_lines: Sequence[str] = ()
                       ) -> tuple[pd.DataFrame, dict]:
    """``prism_primary`` layout: :func:`read_prism_primary` of the files
    ``logfold_change``, ``treatment_info``, ``models``."""
    _check_files(files, "prism_primary")
    return read_prism_primary(files["logfold_change"], files["treatment_info"], files["models"], dose_um=dose_um,
                              max_dose_ratio=max_dose_ratio, screens=screens, screen_priority=screen_priority,
                              cell_field=cell_field, cell_pattern=cell_pattern,
                              require_str_profiling=require_str_profiling, cell_lines=cell_lines)


def load_prism_secondary(files: Mapping[str, object], *, response: str = "auc", screens: str = "mean",
                         screen_priority: Sequence[str] = (), cell_field: str = "stripped_name",
                         cell_pattern: str = r"^(.+)$", require_str_profiling: bool = True,
                         cell_lines: Sequence[str] = ()) -> tuple[pd.DataFrame, dict]:
    """``prism_secondary`` layout: :func:`read_prism_secondary` of the files
    ``dose_response``, ``models``."""
    _check_files(files, "prism_secondary")
    return read_prism_secondary(files["dose_response"], files["models"], response=response, screens=screens,
                                screen_priority=screen_priority, cell_field=cell_field, cell_pattern=cell_pattern,
                                require_str_profiling=require_str_profiling, cell_lines=cell_lines)


#: Viability layouts by the config's ``reader.format`` (the schema's
#: ``depmap_reader`` enum lists exactly these keys). Each reader takes the
#: files of :data:`VIABILITY_FILES` (key -> path) and the reader entry's other
#: keys as keyword arguments, and returns the long table (``row``,
#: ``drug_id``, ``smiles``, ``cell_id``, ``viability``) and a dict of counts
#: (:data:`READ_COUNTS`).
VIABILITY_READERS = {
    "long": load_long,                        # one row per (drug, cell line): read_viability
    "prism_primary": load_prism_primary,      # PRISM primary log-fold-change matrix + treatment info
    "prism_secondary": load_prism_secondary,  # PRISM secondary dose-response parameters
}
