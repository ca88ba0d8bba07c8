"""A compound library given by the user: a TSV of ids and SMILES (the
drug screen's ``drug_screen.predict.library_path``)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.text import read_table

__all__ = ["read_library"]


def read_library(path, where: str = "drug_screen.predict.library_path") -> pd.Series:
    """A compound library: a TSV with columns ``id`` and ``smiles`` (others
    ignored), read as text.

    Returns
    -------
    Series of SMILES indexed by compound id (name ``pert_id``), file order

    Raises
    ------
    InputError
        Missing columns, an empty id or SMILES, a duplicated id (the 1-based
        data rows named), or no row.
    """
    try:
        t = read_table(path)
    except InputError as err:
        raise InputError(f"{where}: {err}") from None
    missing = [c for c in ("id", "smiles") if c not in t.columns]
    if missing:
        raise InputError(f"{where} ({path}): expected columns id and smiles, missing {missing} "
                         f"(found {list(t.columns)[:10]})")
    if t.empty:
        raise InputError(f"{where} ({path}): no compound rows")
    ids, smi = t["id"].str.strip(), t["smiles"].str.strip()
    for name, col in (("id", ids), ("smiles", smi)):
        empty = np.flatnonzero(col.to_numpy() == "")
        if len(empty):
            raise InputError(f"{where} ({path}): empty {name} in data row(s) {[int(i) + 1 for i in empty[:10]]}")
    dup = ids[ids.duplicated(keep=False)]
    if len(dup):
        first = dup.iloc[0]
        rows = [int(i) + 1 for i in np.flatnonzero(ids.to_numpy() == first)]
        raise InputError(f"{where} ({path}): id {first!r} appears in data rows {rows}; ids must be unique "
                         f"({dup.nunique()} duplicated)")
    return pd.Series(smi.to_numpy(), index=pd.Index(ids.to_numpy(), name="pert_id"), name="smiles")
