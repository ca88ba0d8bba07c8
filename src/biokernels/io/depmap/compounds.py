"""Compounds of the PRISM readers: one row per ``broad_id`` with its SMILES
(the first of a field listing several), and the rank of the screens for
``screens: priority``."""

from __future__ import annotations

import logging
from collections.abc import Sequence

import numpy as np
import pandas as pd

from biokernels.errors import InputError

log = logging.getLogger(__name__)


def _compound_info(broad: pd.Series, smiles: pd.Series, names: pd.Series | None, path,
                   counts: dict) -> pd.DataFrame:
    """One row per compound (``broad_id``, order of first appearance):
    ``smiles`` (the first SMILES of the compound's first non-empty field;
    '' when none), ``line`` (its first line). Counts ``compounds``,
    ``compounds_without_smiles``, ``compounds_several_smiles`` (a field
    listing several, ``"s1, s2"``: the first is used),
    ``compounds_differing_smiles`` (rows of one compound with different
    SMILES: the first row's is used, logged) and ``compounds_without_name``."""
    df = pd.DataFrame({"broad_id": broad.to_numpy(), "smiles": smiles.to_numpy(),
                       "line": np.arange(len(broad)) + 2})
    df["name"] = names.to_numpy() if names is not None else ""
    first = df.drop_duplicates("broad_id").set_index("broad_id")
    with_smiles = df[df["smiles"] != ""]
    chosen = with_smiles.drop_duplicates("broad_id").set_index("broad_id")["smiles"]
    info = pd.DataFrame(index=first.index)
    info["line"] = first["line"]
    raw = chosen.reindex(info.index).fillna("")
    several = raw.str.contains(",", regex=False)
    info["smiles"] = raw.str.split(",", n=1).str[0].str.strip()
    n_differ = with_smiles.drop_duplicates(["broad_id", "smiles"])["broad_id"].duplicated()
    differ = with_smiles.drop_duplicates(["broad_id", "smiles"])[n_differ.to_numpy()]
    named = df[df["name"] != ""]["broad_id"].unique()
    counts.update(compounds=int(len(info)), compounds_without_smiles=int((info["smiles"] == "").sum()),
                  compounds_several_smiles=int(several.sum()),
                  compounds_differing_smiles=int(differ["broad_id"].nunique()),
                  compounds_without_name=int((~info.index.isin(named)).sum()))
    if len(differ):
        b = differ["broad_id"].iloc[0]
        lines = df.loc[(df["broad_id"] == b) & (df["smiles"] != ""), "line"].tolist()[:3]
        log.warning("%s: %d compound(s) have rows with different SMILES, e.g. %s (lines %s); the first row's is "
                    "used", path, counts["compounds_differing_smiles"], b, lines)
    return info


def _screen_rank(screens: str, screen_priority: Sequence[str], found: Sequence[str]) -> dict[str, int]:
    """Rank of each screen id (0 = preferred) for ``screens: priority``:
    ``screen_priority`` order, then the unlisted ones by name."""
    if screens not in ("mean", "priority"):
        raise InputError(f"screens: expected 'mean' or 'priority', got {screens!r}")
    if screens == "priority" and not screen_priority:
        raise InputError("screens: priority needs screen_priority, the screen ids from most to least preferred "
                         f"(found here: {sorted(set(found))})")
    order = list(dict.fromkeys(str(s) for s in screen_priority))
    order += sorted(set(map(str, found)) - set(order))
    return {s: i for i, s in enumerate(order)}


def _take_str(values, positions: np.ndarray):
    """``values[positions]`` as a pandas string array (the take of a few
    distinct strings, not millions of Python objects converted one by one)."""
    return pd.array(np.asarray(values, dtype=object), dtype="str").take(positions)
