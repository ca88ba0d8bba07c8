"""Tab-separated L1000 metadata tables (GEO ``*_info.txt``, CMap LINCS 2020
``*_beta.txt``; gzip allowed, detected from the bytes) read as strings, and
the other names of their fields (:data:`META_ALIASES`)."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from biokernels.errors import InputError
from biokernels.io.opener import open_binary


def table_compression(path: str | Path) -> str | None:
    """``"gzip"`` when the file's bytes start with the gzip magic number
    (1f 8b), else None: tables are read by content, so a ``.txt.gz`` linked
    or downloaded under another name (``resources/.../pert_info``) reads too."""
    with open(path, "rb") as handle:
        return "gzip" if handle.read(2) == b"\x1f\x8b" else None


def read_l1000_table(path: str | Path, required: list[str], index: str | None = None) -> pd.DataFrame:
    """Read a tab-separated L1000 metadata table (GEO ``*_info.txt``, CMap
    LINCS 2020 ``*_beta.txt``; gzip allowed, detected from the bytes) as strings.

    Parameters
    ----------
    path : path
    required : list of str
        Columns that must be present.
    index : str, optional
        Column to use as the index; its values must be unique.

    Returns
    -------
    DataFrame of str (``-666`` kept as text; callers decide).

    Raises
    ------
    InputError
        File missing, a truncated or corrupt gzip stream (the lines read
        before are said), a required column missing, or duplicated index
        values (the message names the file, the column and up to 5 values).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    with open_binary(path) as handle:   # gzip by its bytes; truncated or corrupt: InputError (biokernels.io.opener)
        df = pd.read_csv(handle, sep="\t", dtype=str, keep_default_na=False, encoding="utf-8",
                         encoding_errors="replace", compression=None)
    missing = [c for c in required if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {missing}; found {list(df.columns)[:12]}")
    if index is not None:
        dup = df[index][df[index].duplicated()]
        if len(dup):
            raise InputError(f"{path}: column {index!r} has {len(dup)} duplicated value(s), "
                             f"e.g. {list(dup.unique()[:5])}; expected unique ids")
        df = df.set_index(index)
    return df


def read_sample_info(path: str | Path) -> pd.DataFrame:
    """GEO ``inst_info`` (level 3) or ``sig_info`` (level 5) indexed by its id
    column (``inst_id`` or ``sig_id``, else the first column).

    Raises
    ------
    InputError
        As :func:`read_l1000_table`: missing columns, duplicated ids (named).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    with open_binary(path) as handle:
        header = pd.read_csv(handle, sep="\t", nrows=0, compression=None).columns
    index = next((c for c in ("inst_id", "sig_id") if c in header), header[0])
    return read_l1000_table(path, ["pert_id", "cell_id", "pert_type"], index=index)


#: The GEO-layout tables a matrix's own metadata can stand in for (a GCT 1.3
#: or GCTX carries per-column and per-row fields: GCTX ``0/META/COL`` and
#: ``0/META/ROW``, GCT 1.3 the cdesc and rdesc blocks): table -> (metadata
#: axis, fields it must have, with CMap's names).
MATRIX_TABLES = {
    "sample_info": ("col", ["pert_id", "cell_id", "pert_type"]),
    "pert_info": ("col", ["pert_id", "pert_type", "canonical_smiles"]),
    "gene_info": ("row", ["pr_gene_id", "pr_gene_symbol", "pr_is_lm"]),
}
#: Other names of those fields -> CMap's GEO names: CMap LINCS 2020's
#: (``cell_iname``, ``cmap_name``), GCT row metadata's ``pr_is_lmark`` and
#: cmapR's example files' ``is_lm`` / ``is_bing``.
META_ALIASES = {"cell_iname": "cell_id", "cmap_name": "pert_iname", "pr_is_lmark": "pr_is_lm", "is_lm": "pr_is_lm",
                "is_bing": "pr_is_bing"}


def with_cmap_names(df: pd.DataFrame) -> pd.DataFrame:
    """``df`` with the fields of :data:`META_ALIASES` renamed to CMap's GEO
    names, unless that name is already a field (the first alias wins)."""
    names: dict[str, str] = {}
    for alias, name in META_ALIASES.items():
        if alias in df.columns and name not in df.columns and name not in names.values():
            names[alias] = name
    return df.rename(columns=names)


def read_gene_info(path: str | Path) -> pd.DataFrame:
    """GEO ``gene_info`` (as :func:`read_l1000_table`, str) with the fields
    ``pr_gene_id``, ``pr_gene_symbol`` and ``pr_is_lm``; the landmark flag
    may be named as in GCT row metadata (``pr_is_lmark``) or cmapR's files
    (``is_lm``), see :data:`META_ALIASES`.

    Raises
    ------
    InputError
        Missing file, or one of the three fields absent under every name.
    """
    df = with_cmap_names(read_l1000_table(path, []))
    missing = [c for c in MATRIX_TABLES["gene_info"][1] if c not in df.columns]
    if missing:
        raise InputError(f"{path}: missing column(s) {missing}; found {list(df.columns)[:12]}")
    return df
