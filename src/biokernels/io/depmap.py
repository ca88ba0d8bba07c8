"""Reading a DepMap-style viability table and matching it to CMAP
(Radhakrishnan et al. 2023, Methods "DepMap analysis"): pandas and RDKit
only, so the data steps need no torch.

Drugs are matched between DepMap and CMAP by structure, the InChIKey of the
SMILES (RDKit), since PRISM and CMAP use different identifiers and spell the
same molecule differently; a matched drug takes its CMAP id, an unmatched one
the key ``DM:<InChIKey>``. Different salt forms have different InChIKeys and
stay unmatched (counted as new drugs).
"""

from __future__ import annotations

import re

import numpy as np
import pandas as pd

from biokernels.errors import InputError

VIABILITY_FIELDS = ("drug", "smiles", "cell", "value")
DROP_REASONS = ("missing_value", "no_structure", "cell_not_in_cmap", "duplicate_merged")


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
        is missing, a folder, empty, not UTF-8 or not parseable (a row with
        more fields than the header); a configured column is absent, a value
        is not numeric (the first such row is named), a drug id is empty, or
        a cell name does not match ``cell_pattern`` (row named).
    """
    path = str(path)
    sep = "\t" if re.search(r"\.(tsv|txt)(\.gz)?$", path) else ","
    try:
        rx = re.compile(cell_pattern)
    except re.error as e:
        raise InputError(f"cell_pattern {cell_pattern!r}: not a regular expression ({e})") from None
    if rx.groups != 1:
        raise InputError(f"cell_pattern {cell_pattern!r}: expected exactly one group, got {rx.groups}")
    try:
        table = pd.read_csv(path, sep=sep, dtype=str, keep_default_na=False)
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


def inchikeys(smiles: pd.Series) -> pd.Series:
    """InChIKey of each SMILES (RDKit ``MolToInchiKey``), '' where the SMILES
    is missing or does not parse. Index and order of ``smiles`` kept."""
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    smiles = smiles.where(smiles.notna(), "").astype(str)
    keys = {}
    for s in pd.unique(smiles):
        mol = Chem.MolFromSmiles(s) if s and s.lower() not in ("nan", "none", "-666") else None
        keys[s] = Chem.MolToInchiKey(mol) if mol is not None else ""
    return smiles.map(keys)


def match_drugs(depmap: pd.DataFrame, cmap_smiles: pd.Series) -> tuple[pd.DataFrame, dict]:
    """Match DepMap drugs to CMAP compounds by structure (InChIKey).

    Parameters
    ----------
    depmap : DataFrame with ``drug_id`` and ``smiles`` (one row per table row)
    cmap_smiles : Series pert_id -> SMILES of the CMAP compounds

    Returns
    -------
    drugs : DataFrame, one row per DepMap ``drug_id``: ``smiles``, ``inchikey``
        ('' = no structure), ``pert_id`` (the CMAP id, '' if none) and
        ``drug_key`` (pert_id, or ``DM:<InChIKey>``, '' without structure).
        When several CMAP ids share a structure the smallest is taken.
    counts : dict ``drugs``, ``no_structure``, ``matched_cmap``, ``new``,
        ``cmap_ids_sharing_structure``, ``depmap_ids_sharing_structure``.

    Raises
    ------
    InputError
        A DepMap drug id comes with two different SMILES.
    """
    per = depmap.drop_duplicates(["drug_id", "smiles"])
    clash = per["drug_id"][per["drug_id"].duplicated()]
    if len(clash):
        raise InputError(f"viability table: drug {clash.iloc[0]!r} appears with different SMILES "
                         f"({list(per.loc[per['drug_id'] == clash.iloc[0], 'smiles'])[:2]})")
    drugs = per.set_index("drug_id")[["smiles"]].copy()
    drugs["inchikey"] = inchikeys(drugs["smiles"])
    ck = inchikeys(cmap_smiles)
    ck = ck[ck != ""]
    shared = int(ck.duplicated().sum())
    key_to_pert: dict[str, str] = {}
    for pert, key in sorted(zip(ck.index.astype(str), ck)):
        key_to_pert.setdefault(key, pert)
    drugs["pert_id"] = drugs["inchikey"].map(lambda k: key_to_pert.get(k, "") if k else "")
    drugs["drug_key"] = np.where(drugs["pert_id"] != "", drugs["pert_id"],
                                 np.where(drugs["inchikey"] != "", "DM:" + drugs["inchikey"], ""))
    has = drugs["inchikey"] != ""
    counts = {"drugs": int(len(drugs)), "no_structure": int((~has).sum()),
              "matched_cmap": int((drugs["pert_id"] != "").sum()),
              "new": int((has & (drugs["pert_id"] == "")).sum()), "cmap_ids_sharing_structure": shared,
              "depmap_ids_sharing_structure": int(drugs.loc[has, "inchikey"].duplicated().sum())}
    return drugs, counts


def prepare_targets(viability: pd.DataFrame, drugs: pd.DataFrame, cmap_pairs: pd.DataFrame,
                    cmap_cells, duplicates: str = "mean", k: int = 5, seed: int = 0, n_cmap: int | None = None
                    ) -> tuple[pd.DataFrame, pd.DataFrame, dict]:
    """The DepMap target set: clean rows, strata and folds.

    Parameters
    ----------
    viability : from :func:`read_viability`
    drugs : from :func:`match_drugs`
    cmap_pairs : DataFrame ``pert_id``, ``cell_id`` of the preprocessed CMAP pairs
    cmap_cells : ids of the CMAP cell lines with control expression
    duplicates : {"mean", "error"}
        Several rows for one (drug, cell line): averaged (counted), or an error.
    k : int, folds per stratum
    seed : int
    n_cmap : int, optional
        CMAP is the ``n_cmap`` cell lines with the most pairs (the paper's
        CMAP had 70); the source is CMAP minus the target cell lines (the
        paper: 64). None = every cell line of ``cmap_pairs`` with controls.

    Returns
    -------
    targets : DataFrame indexed by ``pair_id`` (``<drug_key>:<cell_id>``):
        ``drug_key``, ``cell_id``, ``viability``, ``n_rows``, ``stratum``
        (``seen``: the drug is measured in a source cell line, i.e. a CMAP
        cell line not in DepMap), ``fold``.
    dropped : DataFrame of the table rows not used, with ``reason`` in
        :data:`DROP_REASONS` (merged duplicates are listed, not lost).
    counts : dict, rows per reason, ``target_cells``, ``source_cells`` (list),
        ``n_source_cells``, ``pairs``, ``seen``, ``unseen``.

    Raises
    ------
    InputError
        ``duplicates="error"`` and a pair repeats (rows named); no DepMap cell
        line is in CMAP; no CMAP cell line is left for the source.
    """
    if duplicates not in ("mean", "error"):
        raise ValueError(f"duplicates: expected 'mean' or 'error', got {duplicates!r}")
    v = viability.copy()
    v["drug_key"] = v["drug_id"].map(drugs["drug_key"]).fillna("")
    cmap_cells = set(map(str, cmap_cells))
    reasons = np.where(v["viability"].isna(), "missing_value",
                       np.where(v["drug_key"] == "", "no_structure",
                                np.where(~v["cell_id"].isin(cmap_cells), "cell_not_in_cmap", "")))
    v["reason"] = reasons
    keep = v[v["reason"] == ""]
    target_cells = sorted(keep["cell_id"].unique())
    if not target_cells:
        raise InputError(f"viability table: none of its cell lines {sorted(v['cell_id'].unique())[:10]} has CMAP "
                         "control expression (check cell_pattern)")
    ranked = cmap_pairs.loc[cmap_pairs["cell_id"].isin(cmap_cells), "cell_id"].value_counts()
    ranked = ranked.sort_values(ascending=False, kind="stable").index.astype(str)
    cmap = set(ranked[:n_cmap] if n_cmap is not None else ranked)
    source_cells = sorted(cmap - set(target_cells))
    if not source_cells:
        raise InputError("every CMAP cell line is in DepMap: no source cell line is left")
    dup = keep.duplicated(["drug_key", "cell_id"], keep=False)
    if dup.any() and duplicates == "error":
        rows = keep.loc[dup, "row"].tolist()[:6]
        raise InputError(f"viability table: {int(dup.sum())} rows repeat a (drug, cell line) pair, e.g. rows {rows} "
                         "(set depmap.duplicates: mean to average them)")
    merged = keep[keep.duplicated(["drug_key", "cell_id"], keep="first")].assign(reason="duplicate_merged")
    agg = keep.groupby(["drug_key", "cell_id"], sort=True).agg(viability=("viability", "mean"),
                                                               n_rows=("row", "size")).reset_index()
    agg.index = pd.Index(agg["drug_key"] + ":" + agg["cell_id"], name="pair_id")
    src_drugs = set(cmap_pairs.loc[cmap_pairs["cell_id"].isin(source_cells), "pert_id"])
    agg["stratum"] = np.where(agg["drug_key"].isin(src_drugs), "seen", "unseen")
    agg["fold"] = -1
    rng = np.random.default_rng(seed)
    for stratum in ("seen", "unseen"):
        pos = np.flatnonzero(agg["stratum"].to_numpy() == stratum)
        agg.iloc[rng.permutation(pos), agg.columns.get_loc("fold")] = np.arange(len(pos)) % k
    dropped = pd.concat([v[v["reason"] != ""], merged], ignore_index=True)
    dropped = dropped[["row", "drug_id", "smiles", "cell_id", "viability", "reason"]]
    counts = {r: int((dropped["reason"] == r).sum()) for r in DROP_REASONS}
    counts.update(rows=int(len(v)), pairs=int(len(agg)), target_cells=target_cells,
                  source_cells=source_cells, n_source_cells=len(source_cells), seen=int((agg["stratum"] == "seen").sum()),
                  unseen=int((agg["stratum"] == "unseen").sum()))
    return agg, dropped, counts
