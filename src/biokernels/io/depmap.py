"""Reading DepMap viability data and matching it to CMAP
(Radhakrishnan et al. 2023, Methods "DepMap analysis"): pandas and RDKit
only, so the data steps need no torch.

**Layouts** (:data:`VIABILITY_READERS`, the config's ``reader.format``; each
reader takes the files of :data:`VIABILITY_FILES` and returns the project's
long table plus a dict of counts, :data:`READ_COUNTS` says what each means):

* ``long``: one row per (drug, cell line) with a SMILES column
  (:func:`read_viability`; the embedded default and TranSiGen's table).
* ``prism_primary``: the PRISM Repurposing primary screen (19Q4 release,
  Corsello et al. 2020, Nat Cancer 1:235; figshare 10.6084/m9.figshare.9393293,
  its README "primary-screen" files): the replicate-collapsed log2 fold-change
  matrix (first column the matrix row ids, i.e. DepMap ``ACH-`` ids; one
  column per treatment ``column_name``, e.g. ``BRD-A00077618-236-07-6::2.5::HTS``)
  and its treatment info (``column_name``, ``broad_id``, ``name``, ``dose``
  in µM, ``screen_id``, ``smiles``, ...); :func:`read_prism_primary`.
* ``prism_secondary``: the secondary screen's dose-response curve parameters
  (one row per compound x cell line x screen: ``broad_id``, ``depmap_id``,
  ``screen_id``, ``auc``, ``ic50``, ``ec50``, ``name``, ``smiles``,
  ``passed_str_profiling``, ...); :func:`read_prism_secondary`.

Both PRISM layouts take a **model table** mapping DepMap model ids to cell
line names (:func:`read_models`): DepMap's ``Model.csv`` (22Q2 on:
``ModelID``, ``CellLineName``, ``StrippedCellLineName``, ``CCLEName``), the
older ``sample_info.csv`` (``DepMap_ID``, ``cell_line_name``,
``stripped_cell_line_name``, ``CCLE_Name``) or PRISM's own
``*-cell-line-info.csv`` (``row_name``, ``depmap_id``, ``ccle_name``,
``passed_str_profiling``). The matrix columns are identified by joining the
treatment info on ``column_name``, never by splitting the column name.

**Cell lines** are matched to CMAP by name, as for long tables: the cell id
is group 1 of ``cell_pattern`` searched in the model table's ``cell_field``
(``stripped_name`` by default: ``HT29``, ``PC3``, ``MCF7``, ``A375``, the
spelling of CMAP's ``cell_id``; ``ccle_name`` with ``^([^_]+)_`` gives the
same). Nothing else is normalised: the match with CMAP is exact.

**Drugs** are matched between DepMap and CMAP by structure, the InChIKey of
the SMILES (RDKit), since PRISM and CMAP use different identifiers and spell
the same molecule differently; a matched drug takes its CMAP id, an unmatched
one the key ``DM:<InChIKey>``. Different salt forms have different InChIKeys
and stay unmatched (counted as new drugs). PRISM drugs are identified by
``broad_id``; a ``smiles`` field listing several structures (``"s1, s2"``)
gives its first (counted). A compound without SMILES is passed on with an
empty one, and :func:`prepare_targets` drops its rows as ``no_structure``
(counted per cell line and compound by :func:`drop_summary`).

**Target cell lines** (``depmap.cell_lines``, the readers' ``cell_lines``):
empty = all; else DepMap ids or model-table names (long tables: cell ids),
case-insensitive (:func:`select_cell_lines`). Every reader applies it when
the data are read, before drugs are matched and the per-cell-line work; the
models left out are counted (``models_not_selected``, their values or rows),
and a name absent from the data is an error listing close matches.

**Stated rules** of the PRISM readers (defaults of their settings):

* primary doses: per compound (``broad_id``), the columns whose dose is
  closest to ``dose_um`` (2.5 µM, the primary screen's dose) on a log scale
  are used, if within a factor ``max_dose_ratio`` (2) of it; the compound's
  columns at other doses are dropped, and a compound with no dose within the
  factor is dropped (all counted);
* several screens: a compound measured in several columns at its chosen dose
  (primary; e.g. ``HTS`` and ``MTS004``), or several rows of one (compound,
  model) (secondary; e.g. ``HTS002`` and ``MTS010``), are combined per cell
  line by ``screens``: ``mean`` of the finite values (default) or
  ``priority``: the first screen of ``screen_priority`` that has a finite
  value (unlisted screens after the listed ones, by name); counted;
* secondary response: ``auc`` (default) as is; ``ic50`` or ``ec50`` as
  ``log10`` of the concentration in µM (so that, like AUC, larger = more
  resistant), non-positive values dropped (counted); missing (NA) values are
  dropped and counted before screens are combined;
* QC: with ``require_str_profiling`` (default) secondary rows with
  ``passed_str_profiling`` FALSE, and models whose model table says so
  (PRISM cell-line-info), are dropped (counted; NA is kept, counted);
* every drop is counted (:data:`READ_COUNTS`) and logged, missing values of
  the primary matrix included.

A file whose bytes do not match its name (gzip without ``.gz``, an HTML page,
an Excel workbook, a tab-separated ``.csv``) is refused with what it looks
like (:func:`biokernels.io.sniff.sniff`) and what to do
(:func:`check_table_file`).
"""

from __future__ import annotations

import csv
import difflib
import logging
import re
from collections.abc import Mapping, Sequence
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.opener import open_binary, open_text
from biokernels.io.sniff import sniff

log = logging.getLogger(__name__)

VIABILITY_FIELDS = ("drug", "smiles", "cell", "value")
DROP_REASONS = ("missing_value", "no_structure", "cell_not_in_cmap", "duplicate_merged")
#: Strings read as a missing value in the PRISM files (R writes ``NA``).
NA_STRINGS = ("", "NA", "NaN", "nan", "NULL", "null", "None")


# --------------------------------------------------------------------------- files


#: Content kinds (biokernels.io.sniff.KINDS) a table may have: separated
#: text, or one column without separator ("text").
_TABLE_KINDS = ("csv", "tsv", "ssv", "text")


def table_separator(path) -> str:
    """The field separator a table's name implies: tab for ``.tsv`` / ``.txt``
    (optionally ``.gz``), else comma."""
    return "\t" if re.search(r"\.(tsv|txt)(\.gz)?$", str(path)) else ","


def check_table_file(path, what: str = "a table") -> str:
    """Check that ``path`` is a text table whose bytes match its name; return
    its separator (:func:`table_separator`).

    What the file holds is told from its first 64 KiB (decompressed for
    gzip) by :func:`biokernels.io.sniff.sniff`. The readers take the
    separator from the name, so a mismatch would otherwise surface as a
    confusing parse or decoding error; they decompress by content
    (:func:`biokernels.io.opener.open_binary`), so a gzip stream damaged past
    its first 64 KiB is an :class:`InputError` when it is met.

    Raises
    ------
    InputError
        Missing, a folder or empty; gzip bytes without ``.gz`` (rename it, or
        ``gunzip: true`` for a download) or ``.gz`` without gzip bytes; damaged
        gzip; anything but separated text (a ZIP or Excel workbook, HTML or
        XML page, HDF5, Parquet, JSON, GEO or GCT file, binary data, ...); not
        UTF-8; a header separated by tabs (or semicolons) in a ``.csv`` name
        or by commas in a ``.tsv`` one. The message names the file, what it
        looks like and what to do.
    """
    p = Path(path)
    content = sniff(p)
    if content.kind == "missing":
        raise InputError(f"{p}: {what} not found")
    if content.kind == "folder":
        raise InputError(f"{p}: expected {what} file, found a folder")
    sep = table_separator(p)
    if content.kind == "empty":
        raise InputError(f"{p}: empty file, expected {what} with a header ({content.what})")
    body = content
    if content.kind == "gzip":
        if not p.name.endswith(".gz"):
            raise InputError(f"{p}: looks like gzip-compressed data but its name does not end in .gz; rename it "
                             f"{p.name}.gz (a local file) or set gunzip: true on its download")
        if content.inner is None:
            raise InputError(f"{p}: {content}")
        body = content.inner
    elif p.name.endswith(".gz"):
        raise InputError(f"{p}: named .gz but not gzip data (it looks like {content}); rename it without .gz")
    if body.kind == "empty":
        raise InputError(f"{p}: empty file once decompressed, expected {what} with a header")
    if body.kind not in _TABLE_KINDS:
        raise InputError(f"{p}: expected {what} as {'tab' if sep == chr(9) else 'comma'}-separated text, but it "
                         f"looks like {body}")
    if body.not_utf8:
        raise InputError(f"{p}: not UTF-8 text ({body.not_utf8}); save it as UTF-8")
    if sep == "," and body.delimiter in ("\t", ";"):
        if body.delimiter == ";":
            raise InputError(f"{p}: the header is semicolon-separated ({body.what}) but the name says "
                             "comma-separated; save it comma-separated (or as .tsv)")
        raise InputError(f"{p}: the header is tab-separated but the name says comma-separated; rename it "
                         f"{re.sub(r'[.]csv', '.tsv', p.name) if '.csv' in p.name else p.name + '.tsv'}")
    if sep == "\t" and body.delimiter == ",":
        raise InputError(f"{p}: the header is comma-separated but the name says tab-separated; rename it to .csv")
    return sep


def _read_text_table(path, what: str, **kw) -> tuple[pd.DataFrame, str]:
    """``pandas.read_csv`` of a checked table, all fields as stripped strings
    ('' when empty); errors as :class:`InputError` naming the file."""
    sep = check_table_file(path, what)
    try:
        with open_binary(path) as fh:    # a truncated or corrupt gzip: InputError (biokernels.io.opener)
            table = pd.read_csv(fh, sep=sep, dtype=str, keep_default_na=False, encoding="utf-8", compression=None,
                                **kw)
    except pd.errors.EmptyDataError as e:
        raise InputError(f"{path}: empty file, expected {what} with a header") from e
    except pd.errors.ParserError as e:
        raise InputError(f"{path}: cannot parse as a {'tab' if sep == chr(9) else 'comma'}-separated table "
                         f"(a row with more fields than the header?): {e}") from None
    except UnicodeDecodeError as e:
        raise InputError(f"{path}: not UTF-8 text ({e.reason} at byte {e.start}); save it as UTF-8") from None
    if not isinstance(table.index, pd.RangeIndex):
        raise InputError(f"{path}: the data rows have one more field than the header "
                         f"({len(table.columns)} column names); expected one value per column")
    for c in table.columns:
        table[c] = table[c].str.strip()
    return table, sep


def _need_columns(table: pd.DataFrame, path, columns: Sequence[str], layout: str) -> None:
    missing = [c for c in columns if c not in table.columns]
    if missing:
        raise InputError(f"{path}: column(s) {missing} missing; expected the {layout} layout with "
                         f"{list(columns)}, found {list(table.columns)[:12]}")


def _line(i: int) -> int:
    """File line of data row ``i`` (0-based) of a table with one header line."""
    return int(i) + 2


def _cell_regex(cell_pattern: str) -> re.Pattern:
    """``cell_pattern`` compiled; an InputError unless it has exactly one group."""
    try:
        rx = re.compile(cell_pattern)
    except (re.error, TypeError) as e:
        raise InputError(f"cell_pattern {cell_pattern!r}: not a regular expression ({e})") from None
    if rx.groups != 1:
        raise InputError(f"cell_pattern {cell_pattern!r}: expected exactly one group, got {rx.groups}")
    return rx


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


# --------------------------------------------------------------------------- model table

#: Model-table layouts (:func:`read_models`): layout -> the file's column of
#: each field (None = the layout has none). The first column listed under
#: ``id`` identifies the layout.
MODEL_LAYOUTS = {
    "Model.csv": {"id": "ModelID", "cell_line_name": "CellLineName", "stripped_name": "StrippedCellLineName",
                  "ccle_name": "CCLEName", "passed_str": None},
    "sample_info.csv": {"id": "DepMap_ID", "cell_line_name": "cell_line_name",
                        "stripped_name": "stripped_cell_line_name", "ccle_name": "CCLE_Name", "passed_str": None},
    "cell-line-info.csv": {"id": "row_name", "cell_line_name": None, "stripped_name": None, "ccle_name": "ccle_name",
                           "passed_str": "passed_str_profiling"},
}
#: Fields of the model table a cell id may be taken from (``cell_field``).
CELL_FIELDS = ("stripped_name", "ccle_name", "cell_line_name")


def _bools(values: pd.Series, path, field: str) -> np.ndarray:
    """TRUE/FALSE (any case; R and pandas spellings) -> True/False, NA or
    empty -> None (object array); InputError naming the line and field of
    anything else."""
    low = values.str.lower()
    na = values.isin(NA_STRINGS).to_numpy()
    ok = low.isin(["true", "false"]).to_numpy() | na
    if not ok.all():
        i = int(np.flatnonzero(~ok)[0])
        raise InputError(f"{path}: line {_line(i)}, field {field!r}: expected TRUE, FALSE or NA, got "
                         f"{values.iloc[i]!r}")
    out = (low == "true").to_numpy().astype(object)
    out[na] = None
    return out


def read_models(path) -> tuple[pd.DataFrame, dict]:
    """Read a DepMap model table: model id -> cell line names.

    Parameters
    ----------
    path : path
        ``Model.csv`` (DepMap 22Q2 on), ``sample_info.csv`` (DepMap 19Q1 to
        22Q1) or PRISM's ``primary-`` / ``secondary-screen-cell-line-info.csv``
        (:data:`MODEL_LAYOUTS`, recognised by the header).

    Returns
    -------
    models : DataFrame indexed by model id (``ACH-000001``; for the PRISM
        cell-line-info, its ``row_name``, the row id of the PRISM matrices),
        columns ``line`` (file line), ``cell_line_name``, ``stripped_name``,
        ``ccle_name`` ('' where the layout or row has none) and
        ``passed_str`` (True, False, or None where the layout has no such
        field or the row says NA). Where the layout has no stripped name, or a row's is empty,
        it is the CCLE name up to its first ``_`` (CCLE names are
        ``<STRIPPED>_<TISSUE>``), counted.
    counts : dict ``layout``, ``models``, ``rows_without_model_id`` (skipped:
        the id empty or R's ``NA``), ``models_without_any_name`` (every name
        field empty or ``NA``, as PRISM's control barcodes: kept with ''
        names, so that their values are dropped and counted as
        ``models_without_name`` by the readers), ``stripped_from_ccle_name``.
        :data:`NA_STRINGS` (``NA``, ...) in the id and name fields are read
        as missing: no model or cell line is ever called ``NA``.

    Raises
    ------
    InputError
        Not a model table (the header is named, and what it looks like when it
        is a PRISM matrix or treatment table); a model id twice (both lines
        named); a ``passed_str_profiling`` that is not TRUE / FALSE / NA; or what
        :func:`check_table_file` raises.
    """
    table, _ = _read_text_table(path, "a model table (Model.csv or sample_info.csv)")
    layout = next((name for name, cols in MODEL_LAYOUTS.items() if cols["id"] in table.columns), None)
    if layout == "cell-line-info.csv" and "ccle_name" not in table.columns:
        layout = None
    if layout is None:
        hint = ""
        if any("::" in str(c) for c in table.columns):
            hint = " (it looks like a PRISM log-fold-change matrix: check which file is files.models)"
        elif "column_name" in table.columns or "auc" in table.columns:
            hint = " (it looks like a PRISM treatment or dose-response table: check which file is files.models)"
        raise InputError(f"{path}: not a model table{hint}; expected Model.csv (ModelID, StrippedCellLineName, "
                         f"CCLEName, ...), sample_info.csv (DepMap_ID, stripped_cell_line_name, CCLE_Name, ...) "
                         f"or a PRISM cell-line-info table (row_name, depmap_id, ccle_name); found "
                         f"{list(table.columns)[:12]}")
    cols = MODEL_LAYOUTS[layout]
    names = [cols[f] for f in ("stripped_name", "ccle_name") if cols[f] and cols[f] in table.columns]
    if not names:
        raise InputError(f"{path}: no cell line name column; the {layout} layout needs "
                         f"{[c for c in (cols['stripped_name'], cols['ccle_name']) if c]} (either)")
    ids = table[cols["id"]]
    empty = ids.isin(NA_STRINGS)      # R writes a missing id or name as NA: never a model or cell line "NA"
    out = pd.DataFrame({"line": np.arange(len(table)) + 2}, index=pd.Index(ids.to_numpy(), name="model_id"))
    for f in ("cell_line_name", "stripped_name", "ccle_name"):
        c = cols[f]
        out[f] = table[c].mask(table[c].isin(NA_STRINGS), "").to_numpy() if c and c in table.columns else ""
    derive = (out["stripped_name"] == "") & (out["ccle_name"] != "")
    out.loc[derive, "stripped_name"] = out.loc[derive, "ccle_name"].str.split("_", n=1).str[0]
    if cols["passed_str"] and cols["passed_str"] in table.columns:
        out["passed_str"] = _bools(table[cols["passed_str"]], path, cols["passed_str"])
    else:
        out["passed_str"] = None
    out = out[~empty.to_numpy()]
    dup = out.index.duplicated(keep=False)
    if dup.any():
        first = out.index[dup][0]
        lines = out.loc[out.index == first, "line"].tolist()[:2]
        raise InputError(f"{path}: lines {lines}, field {cols['id']!r}: model id {first!r} appears twice; "
                         "expected one row per model")
    nameless = (out[["cell_line_name", "stripped_name", "ccle_name"]] == "").all(axis=1)
    counts = {"layout": layout, "models": int(len(out)), "rows_without_model_id": int(empty.sum()),
              "models_without_any_name": int(nameless.sum()),
              "stripped_from_ccle_name": int(derive[~empty.to_numpy()].sum())}
    if counts["rows_without_model_id"]:
        log.warning("%s: %d row(s) without a model id (empty or NA) skipped", path, counts["rows_without_model_id"])
    if counts["models_without_any_name"]:
        log.warning("%s: %d model(s) without a cell line name (empty or NA; e.g. control barcodes): their values "
                    "are dropped (models_without_name)", path, counts["models_without_any_name"])
    return out, counts


def _map_models(model_ids: Sequence[str], models: pd.DataFrame, models_path, cell_field: str, cell_pattern: str,
                require_str_profiling: bool) -> tuple[np.ndarray, np.ndarray]:
    """Cell id of each model id ('' = dropped) and the reason of each drop
    ('' = kept; ``model_not_in_mapping``, ``model_failed_str``,
    ``model_without_name``).

    Raises
    ------
    InputError
        ``cell_field`` unknown; a used model's name does not match
        ``cell_pattern`` (model table line and field named).
    """
    if cell_field not in CELL_FIELDS:
        raise InputError(f"cell_field: expected one of {list(CELL_FIELDS)}, got {cell_field!r}")
    rx = _cell_regex(cell_pattern)
    ids = pd.Index([str(m) for m in model_ids])
    pos = models.index.get_indexer(ids)
    names = np.where(pos >= 0, models[cell_field].to_numpy(object)[np.maximum(pos, 0)], "")
    passed = models["passed_str"].to_numpy(object)[np.maximum(pos, 0)]
    failed = np.array([p is not None and not bool(p) for p in passed], dtype=bool) & (pos >= 0)
    reason = np.where(pos < 0, "model_not_in_mapping",
                      np.where(failed & require_str_profiling, "model_failed_str",
                               np.where(names == "", "model_without_name", "")))
    cells = np.full(len(ids), "", dtype=object)
    for i in np.flatnonzero(reason == ""):
        m = rx.search(names[i])
        if not m or not m.group(1):
            line = int(models["line"].iloc[pos[i]])
            raise InputError(f"{models_path}: line {line}, field {cell_field!r} (model {ids[i]!r}): cell name "
                             f"{names[i]!r} does not match cell_pattern {cell_pattern!r}")
        cells[i] = m.group(1)
    return cells, reason


def select_cell_lines(wanted: Sequence[str], ids: Sequence[str], aliases: Mapping[str, Sequence[str]],
                      source, elsewhere: Mapping[str, Sequence[str]] | None = None) -> np.ndarray:
    """Which of ``ids`` the ``depmap.cell_lines`` setting selects.

    Parameters
    ----------
    wanted : list of str
        The setting: model ids (``ACH-000001``) or cell line names, matched
        case-insensitively; empty = every id.
    ids : sequence of str, length n
        The ids to select from (DepMap model ids, or the cell ids of a long
        table).
    aliases : mapping id -> list of str
        Other names of an id that ``wanted`` may use (its cell id, the model
        table's ``CellLineName``, ``StrippedCellLineName``, ``CCLEName``).
        Ids with aliases but absent from ``ids`` (e.g. rows dropped before
        this step) are known names that select nothing.
    source : path or str
        The data named in messages.
    elsewhere : mapping id -> list of str, optional
        Models of the model table absent from the data: a wanted name among
        them is still an error, said to be absent from the data.

    Returns
    -------
    ndarray of bool, shape (n,)
        True where the id, or one of its aliases, is in ``wanted``.

    Raises
    ------
    InputError
        A wanted name that is neither an id nor an alias of the data: every
        such name is listed with its close matches (``difflib``, by
        spelling), or as in the model table but not in the data.
    """
    ids = [str(i) for i in ids]
    if not wanted:
        return np.ones(len(ids), dtype=bool)
    names: dict[str, set[str]] = {}
    for i in ids:
        names.setdefault(i.casefold(), set()).add(i)
    for i, more in aliases.items():
        for a in [i, *more]:
            if a:
                names.setdefault(str(a).casefold(), set()).add(str(i))
    unknown = [w for w in wanted if str(w).casefold() not in names]
    if unknown:
        spelled = sorted({a for i in ids for a in [i, *aliases.get(i, ())] if a} | set(map(str, aliases)))
        lower = {a.casefold(): a for a in spelled}
        absent = {str(a).casefold(): str(i) for i, more in (elsewhere or {}).items() for a in [i, *more] if a}
        hints = []
        for w in unknown:
            close = [lower[c] for c in difflib.get_close_matches(str(w).casefold(), list(lower), n=4, cutoff=0.6)]
            note = f"model {absent[str(w).casefold()]} of the model table, not in the data; " \
                if str(w).casefold() in absent else ""
            hints.append(f"{w!r} ({note}{'close: ' + ', '.join(map(repr, close)) if close else 'no close match'})")
        raise InputError(f"depmap.cell_lines: {len(unknown)} name(s) not a model id or cell line name of {source}: "
                         f"{'; '.join(hints)}; expected DepMap ids (ACH-...) or names such as "
                         f"{', '.join(map(repr, spelled[:4]))}")
    chosen = set().union(*(names[str(w).casefold()] for w in wanted))
    return np.array([i in chosen for i in ids], dtype=bool)


def _model_aliases(ids: Sequence[str], models: pd.DataFrame, cells: Sequence[str] = ()) -> dict[str, list[str]]:
    """id -> its names in the model table (and its cell id, when mapped)."""
    pos = models.index.get_indexer(pd.Index([str(i) for i in ids]))
    fields = [models[f].to_numpy(object) for f in ("cell_line_name", "stripped_name", "ccle_name")]
    out = {}
    for k, (i, p) in enumerate(zip(ids, pos)):
        more = [f[p] for f in fields] if p >= 0 else []
        if len(cells):
            more.append(cells[k])
        out[str(i)] = [m for m in more if m]
    return out


# --------------------------------------------------------------------------- compounds


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


def _log_drops(path, counts: dict, keys: Sequence[str]) -> None:
    """Log each non-zero count of ``keys``: a warning for a drop, else info."""
    for k in keys:
        if counts.get(k):
            meaning = READ_COUNTS.get(k, "")
            (log.warning if "dropped" in meaning else log.info)("%s: %d %s", path, counts[k], meaning)


# --------------------------------------------------------------------------- PRISM primary


def _read_matrix(path) -> pd.DataFrame:
    """The primary screen's log-fold-change matrix as float64, row ids as
    strings; InputError for duplicated row or column ids, an empty row id,
    a value that is not a number or is infinite (line and column named)."""
    sep = check_table_file(path, "a PRISM log-fold-change matrix")
    with open_text(path, newline="") as handle:
        header = next(csv.reader(handle, delimiter=sep), [])
    cols = header[1:]
    seen: dict[str, int] = {}
    for j, c in enumerate(cols):
        if c in seen:
            raise InputError(f"{path}: line 1: column {c!r} appears twice (fields {seen[c] + 2} and {j + 2}); "
                             "expected one column per treatment")
        seen[c] = j
    if not cols:
        raise InputError(f"{path}: line 1: no treatment columns; expected the PRISM matrix layout (first column the "
                         "DepMap ids, one column per treatment column_name)")
    try:
        with open_binary(path) as fh:
            m = pd.read_csv(fh, sep=sep, index_col=0, na_values=list(NA_STRINGS), keep_default_na=False,
                            dtype={header[0] or "Unnamed: 0": str}, encoding="utf-8", compression=None)
    except pd.errors.ParserError as e:
        raise InputError(f"{path}: cannot parse as a {'tab' if sep == chr(9) else 'comma'}-separated matrix "
                         f"(a row with more fields than the header?): {e}") from None
    m.columns = cols
    ids = pd.Series(m.index, dtype=object).fillna("").astype(str).str.strip()
    if (ids == "").any():
        i = int(np.flatnonzero((ids == "").to_numpy())[0])
        raise InputError(f"{path}: line {_line(i)}, field 1: empty row id; expected a DepMap id (ACH-...)")
    dup = ids.duplicated(keep=False)
    if dup.any():
        lines = [_line(i) for i in np.flatnonzero(dup.to_numpy())[:2]]
        raise InputError(f"{path}: lines {lines}: row id {ids[dup].iloc[0]!r} appears twice; expected one row "
                         "per model")
    m.index = pd.Index(ids.to_numpy(), name="model_id")
    bad = m.select_dtypes(exclude="number").columns
    if len(bad):
        col = bad[0]
        num = pd.to_numeric(m[col], errors="coerce")
        i = int(np.flatnonzero((num.isna() & m[col].notna()).to_numpy())[0])
        raise InputError(f"{path}: line {_line(i)}, column {col!r}: expected a log2 fold change (a number or NA), "
                         f"got {m[col].iloc[i]!r}")
    if not (m.dtypes == np.float64).all():
        m = m.astype(np.float64)
    inf = np.isinf(m.to_numpy())
    if inf.any():
        i, j = (int(x[0]) for x in np.nonzero(inf))
        raise InputError(f"{path}: line {_line(i)}, column {m.columns[j]!r}: infinite value")
    return m


def read_prism_primary(logfold_change, treatment_info, models, *, dose_um: float = 2.5,
                       max_dose_ratio: float = 2.0, screens: str = "mean", screen_priority: Sequence[str] = (),
                       cell_field: str = "stripped_name", cell_pattern: str = r"^(.+)$",
                       require_str_profiling: bool = True, cell_lines: Sequence[str] = ()
                       ) -> tuple[pd.DataFrame, dict]:
    """The PRISM primary screen as the project's long viability table.

    Source: PRISM Repurposing 19Q4 (figshare 10.6084/m9.figshare.9393293),
    ``primary-screen-replicate-collapsed-logfold-change.csv`` (log2 fold
    change of the cell line's barcode abundance against DMSO, replicates
    collapsed; lower = more killing) and
    ``primary-screen-replicate-collapsed-treatment-info.csv``.

    Parameters
    ----------
    logfold_change : path
        The matrix, models x treatment columns (578 x 4,686 in 19Q4): first
        column the row ids (DepMap ids, the header field may be empty), then
        one column per treatment ``column_name``; ``NA`` / empty = missing.
    treatment_info : path
        One row per treatment column: ``column_name``, ``broad_id``,
        ``dose`` (µM), ``screen_id``, ``smiles`` (``name`` optional).
    models : path
        Model table (:func:`read_models`).
    dose_um : float > 0
        The dose to use; per compound the columns at the dose closest to it
        (log scale) are used.
    max_dose_ratio : float >= 1
        A compound whose closest dose is further than this factor from
        ``dose_um`` is dropped (counted).
    screens : {"mean", "priority"}, screen_priority : list of screen ids
        Several columns of a compound at its chosen dose (several screens),
        per cell line: the mean of the finite values, or the value of the
        first screen in ``screen_priority`` that has one (then the unlisted
        screens by name).
    cell_field, cell_pattern : the cell id is group 1 of ``cell_pattern``
        searched in the model table's ``cell_field`` (:data:`CELL_FIELDS`).
    require_str_profiling : bool
        Drop models whose model table says they failed STR profiling (only
        PRISM's cell-line-info has the field).
    cell_lines : list of str
        Keep only these models (``depmap.cell_lines``): DepMap ids or names
        of the model table, case-insensitive (:func:`select_cell_lines`);
        empty = all. The others' values are dropped and counted
        (``models_not_selected``, ``values_model_not_selected``).

    Returns
    -------
    viability : DataFrame, one row per kept (model, compound) value:
        ``row`` (the model's data row in the matrix, 1-based), ``drug_id``
        (``broad_id``), ``smiles`` ('' when none), ``cell_id``,
        ``viability`` (log2 fold change, float64); rows ordered by matrix row
        then compound.
    counts : dict, the keys of :data:`READ_COUNTS` for this layout
        (``format`` and the model table's ``model_table_layout`` too).

    Raises
    ------
    InputError
        A file is unreadable or does not match its name; a required column is
        missing; a treatment column twice or with an empty ``column_name``; a
        dose that is not a positive number (line and field named); a matrix
        value that is not a number; settings out of range; what
        :func:`read_models` raises. A model id absent from the model table
        is not an error: its values are dropped and counted.
    """
    if not (isinstance(dose_um, (int, float)) and dose_um > 0):
        raise InputError(f"dose_um: expected a dose in µM > 0, got {dose_um!r}")
    if not (isinstance(max_dose_ratio, (int, float)) and max_dose_ratio >= 1):
        raise InputError(f"max_dose_ratio: expected a factor >= 1, got {max_dose_ratio!r}")
    counts: dict = {"format": "prism_primary"}
    treat, _ = _read_text_table(treatment_info, "a PRISM treatment-info table")
    _need_columns(treat, treatment_info, ["column_name", "broad_id", "dose", "screen_id", "smiles"],
                  "PRISM primary-screen-replicate-collapsed-treatment-info")
    if treat.empty:
        raise InputError(f"{treatment_info}: no data rows")
    empty = treat["column_name"] == ""
    if empty.any():
        raise InputError(f"{treatment_info}: line {_line(np.flatnonzero(empty.to_numpy())[0])}, field "
                         "'column_name': empty; expected the matrix column of the treatment")
    dup = treat["column_name"].duplicated(keep=False)
    if dup.any():
        lines = [_line(i) for i in np.flatnonzero(dup.to_numpy())[:2]]
        raise InputError(f"{treatment_info}: lines {lines}, field 'column_name': "
                         f"{treat.loc[dup, 'column_name'].iloc[0]!r} appears twice; expected one row per column")
    dose = pd.to_numeric(treat["dose"].where(~treat["dose"].isin(NA_STRINGS)), errors="coerce")
    bad = ~(dose > 0)
    if bad.any():
        i = int(np.flatnonzero(bad.to_numpy())[0])
        raise InputError(f"{treatment_info}: line {_line(i)}, field 'dose': expected a dose in µM > 0, got "
                         f"{treat['dose'].iloc[i]!r}")
    treat["dose_value"] = dose.to_numpy(np.float64)
    treat["line"] = np.arange(len(treat)) + 2

    M = _read_matrix(logfold_change)
    counts.update(matrix_models=int(M.shape[0]), matrix_columns=int(M.shape[1]), treatment_rows=int(len(treat)))
    in_matrix = treat["column_name"].isin(M.columns)
    counts["treatments_not_in_matrix"] = int((~in_matrix).sum())
    treat = treat[in_matrix.to_numpy()]
    counts["columns_without_treatment_info"] = int((~M.columns.isin(treat["column_name"])).sum())
    no_id = treat["broad_id"] == ""
    counts["columns_without_broad_id"] = int(no_id.sum())
    treat = treat[~no_id.to_numpy()].copy()

    # dose: per compound the columns at the dose closest to dose_um (log scale)
    treat["log_ratio"] = np.abs(np.log(treat["dose_value"].to_numpy() / float(dose_um)))
    best = treat.groupby("broad_id", sort=False)["log_ratio"].transform("min")
    at_best = np.isclose(treat["log_ratio"], best, rtol=0, atol=1e-9)
    in_range = best <= np.log(float(max_dose_ratio)) + 1e-12
    counts["compounds_dose_out_of_range"] = int(treat.loc[~in_range, "broad_id"].nunique())
    counts["columns_dose_out_of_range"] = int((~in_range).sum())
    counts["columns_other_dose"] = int((in_range & ~at_best).sum())
    used = treat[(in_range & at_best).to_numpy()]
    if used.empty:
        raise InputError(f"{treatment_info}: no compound has a column within a factor {max_dose_ratio} of "
                         f"dose_um={dose_um} µM (doses found: {sorted(treat['dose_value'].unique())[:10]})")
    counts["columns_used"] = int(len(used))
    info = _compound_info(used["broad_id"], used["smiles"], used["name"] if "name" in used else None,
                          treatment_info, counts)
    compounds = info.index
    counts["compounds_several_columns"] = int((used["broad_id"].value_counts() > 1).sum())

    # combine the columns of a compound (screens), per model
    rank = _screen_rank(screens, screen_priority, used["screen_id"].unique())
    g = compounds.get_indexer(used["broad_id"])
    r = used["screen_id"].map(rank).to_numpy() if screens == "priority" else np.zeros(len(used), int)
    order = np.lexsort((np.arange(len(used)), r, g))
    cols = M.columns.get_indexer(used["column_name"].to_numpy()[order])
    g = g[order]
    X = M.to_numpy()[:, cols]
    finite = np.isfinite(X)
    starts = np.flatnonzero(np.r_[True, g[1:] != g[:-1]])
    n_finite = np.add.reduceat(finite.astype(np.int32), starts, axis=1)
    if screens == "mean":
        V = np.add.reduceat(np.where(finite, X, 0.0), starts, axis=1)
        with np.errstate(invalid="ignore", divide="ignore"):
            V = np.where(n_finite > 0, V / np.maximum(n_finite, 1), np.nan)
    else:  # the first finite value in priority order
        V = np.full((X.shape[0], len(starts)), np.nan)
        ends = np.r_[starts[1:], X.shape[1]]
        for k, (a, b) in enumerate(zip(starts, ends)):
            block = X[:, a:b]
            if b - a == 1:
                V[:, k] = block[:, 0]
                continue
            has = np.isfinite(block)
            first = np.argmax(has, axis=1)
            V[:, k] = np.where(has.any(axis=1), block[np.arange(block.shape[0]), first], np.nan)

    # models -> cell lines
    mdl, mcounts = read_models(models)
    counts["model_table_layout"] = mcounts["layout"]
    counts["model_table_rows_without_id"] = mcounts["rows_without_model_id"]
    counts["model_table_models_without_name"] = mcounts["models_without_any_name"]
    cells, reason = _map_models(M.index, mdl, models, cell_field, cell_pattern, require_str_profiling)
    whys = ["model_not_in_mapping", "model_failed_str", "model_without_name"]
    if cell_lines:
        others = mdl.index[~mdl.index.isin(M.index)]
        chosen = select_cell_lines(cell_lines, M.index, _model_aliases(M.index, mdl, cells),
                                   f"{logfold_change} (models of {models})", _model_aliases(others, mdl))
        reason = np.where((reason == "") & ~chosen, "model_not_selected", reason)
        counts["cell_lines_requested"] = len(cell_lines)
        whys.append("model_not_selected")
    finite_v = np.isfinite(V)
    for why in whys:
        sel = reason == why
        counts[f"models_{why[6:]}"] = int(sel.sum())
        counts[f"values_{why}"] = int(finite_v[sel].sum())
    keep = reason == ""
    counts["values_missing"] = int((~finite_v[keep]).sum())
    counts["values_combined"] = int(((n_finite > 1) & finite_v)[keep].sum())
    rows, comp = np.nonzero(finite_v & keep[:, None])
    out = pd.DataFrame({"row": rows + 1, "drug_id": _take_str(compounds, comp),
                        "smiles": _take_str(info["smiles"], comp), "cell_id": _take_str(cells, rows),
                        "viability": V[rows, comp]})
    counts["rows"] = int(len(out))
    counts["cell_lines"] = int(out["cell_id"].nunique())
    per_cell = pd.Series(cells[keep]).value_counts()
    counts["cell_lines_of_several_models"] = int((per_cell > 1).sum())
    _log_drops(logfold_change, counts, ["columns_without_treatment_info", "columns_without_broad_id",
                                        "compounds_dose_out_of_range", "columns_dose_out_of_range",
                                        "columns_other_dose", "models_not_in_mapping", "models_failed_str",
                                        "models_without_name", "models_not_selected", "values_missing", "values_combined",
                                        "compounds_without_smiles", "compounds_several_smiles",
                                        "cell_lines_of_several_models"])
    if out.empty:
        raise InputError(f"{logfold_change}: no value left (none of its {M.shape[0]} row ids maps to a cell line "
                         f"of {models}, or every value is missing); counts: {counts}")
    return out, counts


# --------------------------------------------------------------------------- PRISM secondary

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


# --------------------------------------------------------------------------- registry

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


def read_counts_table(counts: Mapping[str, object]) -> pd.DataFrame:
    """The counts of a reader as a table ``count``, ``value``, ``meaning``
    (:data:`READ_COUNTS`; '' for an unknown key), in the reader's order."""
    return pd.DataFrame({"count": list(counts), "value": [counts[k] for k in counts],
                         "meaning": [READ_COUNTS.get(k, "") for k in counts]})
