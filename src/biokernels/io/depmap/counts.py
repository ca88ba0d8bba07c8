"""The counts of the DepMap readers: what each means (:data:`READ_COUNTS`,
the ``read_counts.tsv`` of the prepare rule), their table and their log
lines."""

from __future__ import annotations

import logging
from collections.abc import Mapping, Sequence

import pandas as pd

log = logging.getLogger(__name__)


#: What each count of the readers means (the ``read_counts.tsv`` of the
#: prepare rule). Drops say what was dropped; the rest describe the input.
READ_COUNTS = {
    "format": "reader format (VIABILITY_READERS key)",
    "response": "secondary response column (auc as is; ic50/ec50 as log10 of µM)",
    "model_table_layout": "layout of the model table (Model.csv, sample_info.csv, cell-line-info.csv)",
    "model_table_rows_without_id": "model-table rows whose model id is empty or NA (skipped)",
    "model_table_models_without_name": "model-table models whose every name is empty or NA, e.g. PRISM control "
                                       "barcodes (their values dropped, counted in models_without_name)",
    "rows": "rows of the long table passed on (one per compound and model)",
    "input_rows": "data rows of the secondary table",
    "matrix_models": "rows (models) of the primary matrix",
    "matrix_columns": "treatment columns of the primary matrix",
    "treatment_rows": "rows of the treatment info",
    "treatments_not_in_matrix": "treatment-info rows whose column_name is not a matrix column (ignored)",
    "columns_without_treatment_info": "matrix columns without a treatment-info row (dropped)",
    "columns_without_broad_id": "matrix columns whose treatment has an empty broad_id (dropped)",
    "compounds_dose_out_of_range": "compounds with no column within max_dose_ratio of dose_um (dropped)",
    "columns_dose_out_of_range": "columns of those compounds (dropped)",
    "columns_other_dose": "columns of a compound at a dose other than its closest to dose_um (dropped)",
    "columns_used": "matrix columns used",
    "compounds_several_columns": "compounds with several columns at their chosen dose (combined by screens)",
    "compounds": "compounds (broad_id) passed on",
    "compounds_without_smiles": "compounds without a SMILES (passed on; dropped as no_structure when matched)",
    "compounds_several_smiles": "compounds whose smiles field lists several structures (the first used)",
    "compounds_differing_smiles": "compounds whose rows give different SMILES (the first row's used)",
    "compounds_without_name": "compounds without a name (kept: drugs are matched by structure)",
    "rows_without_broad_id": "rows with an empty or NA broad_id (dropped)",
    "rows_without_model_id": "rows with an empty or NA depmap_id (dropped)",
    "rows_failed_str": "rows with passed_str_profiling FALSE (dropped)",
    "rows_str_unknown": "rows with passed_str_profiling NA (kept: not known to have failed)",
    "values_missing": "missing (NA) values (dropped)",
    "values_not_positive": "ic50/ec50 values <= 0, without a logarithm (dropped)",
    "models_not_in_mapping": "model ids absent from the model table (their values dropped)",
    "models_failed_str": "models the model table marks as failing STR profiling (their values dropped)",
    "models_without_name": "models without a name in cell_field (their values dropped)",
    "values_model_not_in_mapping": "values of models absent from the model table (dropped)",
    "values_model_failed_str": "values of models failing STR profiling (dropped)",
    "values_model_without_name": "values of models without a name (dropped)",
    "rows_model_not_in_mapping": "rows of models absent from the model table (dropped)",
    "rows_model_failed_str": "rows of models failing STR profiling (dropped)",
    "rows_model_without_name": "rows of models without a name (dropped)",
    "cell_lines_requested": "names in depmap.cell_lines (the target cell lines asked for; absent: all)",
    "models_not_selected": "models (or cell ids of a long table) not in depmap.cell_lines (their values dropped)",
    "values_model_not_selected": "values of models not in depmap.cell_lines (dropped)",
    "rows_model_not_selected": "rows of models not in depmap.cell_lines (dropped)",
    "rows_cell_line_not_selected": "rows of a long table whose cell id is not in depmap.cell_lines (dropped)",
    "values_combined": "kept values combined from several columns (screens rule)",
    "pairs_several_rows": "(compound, model) pairs with several rows",
    "rows_other_screen": "rows of a less preferred screen of their pair (dropped, screens: priority)",
    "rows_merged": "rows averaged into another row of their pair (screens rule)",
    "cell_lines": "distinct cell ids passed on",
    "cell_lines_of_several_models": "cell ids shared by several models (their rows merge by depmap.duplicates)",
}


def read_counts_table(counts: Mapping[str, object]) -> pd.DataFrame:
    """The counts of a reader as a table ``count``, ``value``, ``meaning``
    (:data:`READ_COUNTS`; '' for an unknown key), in the reader's order."""
    return pd.DataFrame({"count": list(counts), "value": [counts[k] for k in counts],
                         "meaning": [READ_COUNTS.get(k, "") for k in counts]})


def _log_drops(path, counts: dict, keys: Sequence[str]) -> None:
    """Log each non-zero count of ``keys``: a warning for a drop, else info."""
    for k in keys:
        if counts.get(k):
            meaning = READ_COUNTS.get(k, "")
            (log.warning if "dropped" in meaning else log.info)("%s: %d %s", path, counts[k], meaning)
