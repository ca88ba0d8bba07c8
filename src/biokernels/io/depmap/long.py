"""The ``long`` layout: one row per (drug, cell line) with a SMILES column
(:func:`read_viability`; the embedded default and TranSiGen's table)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.depmap.files import _cell_regex, check_table_file
from biokernels.io.opener import open_binary


VIABILITY_FIELDS = ("drug", "smiles", "cell", "value")


def read_viability(path, columns: dict, cell_pattern: str = r"^(.+)$") -> pd.DataFrame:
    """Read a long drug x cell-line viability table (PRISM, CTRP, ...).

    Parameters
    ----------
    path : path
        CSV or TSV (by extension; gzip allowed) with a header.
    columns : dict
        ``drug`` (identifier column, or None to identify drugs by their
        SMILES), ``smiles``, ``cell`` and ``value`` column names.
    cell_pattern : str
        Regular expression with one group, searched in the cell column, that
        gives the CMAP cell id (e.g. ``^([^_]+)_`` turns the CCLE name
        ``PC3_PROSTATE`` into ``PC3``).

    Returns
    -------
    DataFrame with ``row`` (1-based data row of the file), ``drug_id``,
    ``smiles`` ('' when missing), ``cell_id``, ``viability`` (float, NaN
    where missing).

    Raises
    ------
    InputError
        ``cell_pattern`` is not a regular expression with one group; the file
        is missing, a folder, empty, not UTF-8, does not match its name
        (:func:`check_table_file`) or is not parseable (a row with
        more fields than the header); a configured column is absent, a value
        is not numeric (the first such row is named), a drug id is empty, or
        a cell name does not match ``cell_pattern`` (row named).
    """
    path = str(path)
    rx = _cell_regex(cell_pattern)
    sep = check_table_file(path, "a viability table")
    try:
        with open_binary(path) as fh:    # a truncated or corrupt gzip: InputError (biokernels.io.opener)
            table = pd.read_csv(fh, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8", compression=None)
    except FileNotFoundError as e:
        raise InputError(f"{path}: viability table not found") from e
    except IsADirectoryError as e:
        raise InputError(f"{path}: expected a viability table file, found a folder") from e
    except pd.errors.EmptyDataError as e:
        raise InputError(f"{path}: empty file, expected a viability table with a header") from e
    except pd.errors.ParserError as e:
        raise InputError(f"{path}: cannot parse as a {'tab' if sep == chr(9) else 'comma'}-separated table "
                         f"(a row with more fields than the header?): {e}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8") from None
    if not isinstance(table.index, pd.RangeIndex):  # pandas took the first field as an index
        raise InputError(f"{path}: the data rows have one more field than the header "
                         f"({len(table.columns)} column names); expected one value per column")
    need = {k: columns.get(k) for k in VIABILITY_FIELDS}
    if not need["smiles"] or not need["cell"] or not need["value"]:
        raise InputError(f"{path}: columns.smiles, columns.cell and columns.value must be configured")
    missing = [c for c in need.values() if c and c not in table.columns]
    if missing:
        raise InputError(f"{path}: column(s) {missing} not in the header {list(table.columns)[:12]}")
    if table.empty:
        raise InputError(f"{path}: no data rows")
    out = pd.DataFrame({"row": np.arange(1, len(table) + 1)})
    out["smiles"] = table[need["smiles"]].str.strip().to_numpy()
    out["drug_id"] = (table[need["drug"]].str.strip() if need["drug"] else out["smiles"]).to_numpy()
    empty_id = (out["drug_id"] == "") & (out["smiles"] == "") if not need["drug"] else out["drug_id"] == ""
    if need["drug"] and empty_id.any():
        raise InputError(f"{path}: row {int(out['row'][empty_id].iloc[0])}, field {need['drug']!r}: empty drug id")
    raw = table[need["value"]].str.strip()
    na = raw.str.upper().isin(["", "NA", "NAN", "NULL", "NONE"])
    values = pd.to_numeric(raw.where(~na), errors="coerce")
    bad = values.isna() & ~na
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{path}: row {i + 1}, field {need['value']!r}: expected a number, got {raw.iloc[i]!r}")
    if np.isinf(values).any():
        i = int(np.flatnonzero(np.isinf(values.to_numpy()))[0])
        raise InputError(f"{path}: row {i + 1}, field {need['value']!r}: infinite value")
    out["viability"] = values.to_numpy(np.float64)
    cells = []
    for i, name in enumerate(table[need["cell"]].str.strip()):
        m = rx.search(name)
        if not m or not m.group(1):
            raise InputError(f"{path}: row {i + 1}, field {need['cell']!r}: cell name {name!r} does not match "
                             f"cell_pattern {cell_pattern!r}")
        cells.append(m.group(1))
    out["cell_id"] = cells
    return out[["row", "drug_id", "smiles", "cell_id", "viability"]]
