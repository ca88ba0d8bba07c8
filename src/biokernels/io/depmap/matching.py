"""Matching DepMap drugs to CMAP by structure and building the target set.

Drugs are matched by the InChIKey of their SMILES (RDKit), since PRISM and
CMAP use different identifiers; a matched drug takes its CMAP id, an
unmatched one the key ``DM:<InChIKey>`` (:func:`match_drugs`). Rows without
a structure, of a cell line absent from CMAP, or repeating a pair are
dropped with a reason (:func:`prepare_targets`) and counted per cell line
and compound (:func:`drop_summary`). See ``docs/io_readers_notes.md``."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.errors import InputError


DROP_REASONS = ("missing_value", "no_structure", "cell_not_in_cmap", "duplicate_merged")


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
        :data:`DROP_REASONS` (merged duplicates are listed, not lost);
        :func:`drop_summary` counts them per cell line and compound.
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


def drop_summary(dropped: pd.DataFrame) -> pd.DataFrame:
    """The dropped rows of :func:`prepare_targets` counted per (reason, cell
    line) and per (reason, compound): every drop counted, in a table of at
    most (cell lines + compounds) rows per reason, where the row listing
    grows with cell lines x compounds (the PRISM primary matrix, 578 cell
    lines x 4,686 treatment columns: hundreds of MB listed row by row).

    Parameters
    ----------
    dropped : DataFrame
        ``dropped`` of :func:`prepare_targets` (``drug_id``, ``cell_id``,
        ``reason``, ...), one row per dropped table row.

    Returns
    -------
    DataFrame with columns ``reason`` (:data:`DROP_REASONS`), ``per``
    (``"cell_line"`` or ``"compound"``), ``id`` (the cell id, or the
    compound's ``drug_id`` as the source names it), ``rows`` (int, > 0):
    ordered by reason (as :data:`DROP_REASONS`), ``per`` (cell lines first),
    rows (largest first), id. For each reason, ``rows`` sums to the number
    of rows dropped for it both over its cell lines and over its compounds.
    """
    parts = []
    for per, col in (("cell_line", "cell_id"), ("compound", "drug_id")):
        n = dropped.groupby(["reason", col], sort=False).size().rename("rows").reset_index()
        parts.append(pd.DataFrame({"reason": n["reason"], "per": per, "id": n[col].astype(str),
                                   "rows": n["rows"].astype(np.int64)}))
    out = pd.concat(parts, ignore_index=True)
    order = {r: i for i, r in enumerate(DROP_REASONS)}
    out["_r"] = out["reason"].map(order).fillna(len(order))
    out = out.sort_values(["_r", "per", "rows", "id"], ascending=[True, True, False, True], kind="stable")
    return out.drop(columns="_r").reset_index(drop=True)
