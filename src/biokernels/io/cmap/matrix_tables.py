"""GEO-layout tables (``sample_info``, ``pert_info``, ``gene_info``) built from
a matrix's own metadata, for a source that does not configure those files
(:func:`matrix_table`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from biokernels.errors import InputError
from biokernels.io.cmap.tables import MATRIX_TABLES, with_cmap_names


_PERT_FIELDS = ["pert_id", "pert_iname", "pert_type", "canonical_smiles", "inchi_key"]


def matrix_table(path: str | Path, table: str, config_key: str) -> pd.DataFrame:
    """A GEO-layout table built from a matrix's own metadata, for a source
    that does not configure that file.

    Parameters
    ----------
    path : path
        GCTX or GCT 1.3 text (told apart by content).
    table : {"sample_info", "pert_info", "gene_info"}
        ``sample_info``: one row per matrix column, ``inst_id`` (the column
        id) then every column field; ``pert_info``: one row per ``pert_id``
        with ``pert_iname``, ``pert_type``, ``canonical_smiles``,
        ``inchi_key`` where present; ``gene_info``: one row per matrix row,
        ``pr_gene_id`` (the row id where that field is absent, as
        :func:`preprocess_cmap` does) then every row field. Fields named as
        in :data:`META_ALIASES` take CMap's names.
    config_key : str
        The config key that gives the table instead (named in errors).

    Returns
    -------
    DataFrame, ready for ``to_csv(sep="\\t", index=False)``.

    Raises
    ------
    InputError
        The metadata lacks a field of :data:`MATRIX_TABLES` (one message
        naming the matrix, every missing field and ``config_key``), or a
        ``pert_id`` has different perturbagen fields in two columns.
    """
    from biokernels.io.gctx import read_gctx_meta

    if table not in MATRIX_TABLES:
        raise ValueError(f"table: expected one of {list(MATRIX_TABLES)}, got {table!r}")
    axis, required = MATRIX_TABLES[table]
    meta = with_cmap_names(read_gctx_meta(path, axis=axis))
    ids = meta.index.astype(str)
    if table == "gene_info" and "pr_gene_id" not in meta.columns:
        meta.insert(0, "pr_gene_id", ids)
    missing = [c for c in required if c not in meta.columns]
    if missing:
        what = "column" if axis == "col" else "row"
        raise InputError(f"{path}: the matrix's {what} metadata lacks {missing} (it has {list(meta.columns)[:12]}); "
                         f"set {config_key} to a GEO {table} table with them")
    if table == "sample_info":
        out = meta.drop(columns=["inst_id", "sig_id"], errors="ignore")
        out.insert(0, "inst_id", ids)
        return out.reset_index(drop=True)
    if table == "gene_info":
        return meta.reset_index(drop=True)
    pert = meta[[c for c in _PERT_FIELDS if c in meta.columns]].drop_duplicates()
    pert["pert_id"] = pert["pert_id"].astype(str)
    dup = pert["pert_id"][pert["pert_id"].duplicated()]
    if len(dup):
        rows = pert[pert["pert_id"] == dup.iloc[0]]
        differ = [c for c in rows.columns if rows[c].nunique(dropna=False) > 1]
        raise InputError(f"{path}: pert_id {dup.iloc[0]!r} has different {differ} in different columns of the "
                         f"matrix's column metadata ({len(dup.unique())} pert_id(s) so); set {config_key} to a "
                         "GEO pert_info table with one row per pert_id")
    return pert.reset_index(drop=True)
