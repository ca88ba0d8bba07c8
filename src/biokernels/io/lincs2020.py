"""The CMap LINCS 2020 release as input of the drug screen.

Source: clue.io, "CMap LINCS 2020 Release Notes" (2020); files on
``s3.amazonaws.com/macchiato.clue.io/builds/LINCS2020/``: GCTX matrices
(levels 3-5, rows = Entrez gene ids, read by :mod:`biokernels.io.gctx`) and
the tab-separated ``siginfo``/``instinfo``, ``geneinfo``, ``compoundinfo``
and ``cellinfo`` tables, where ``-666`` is a missing value.

:func:`prepare_lincs2020` turns the tables into the GEO-layout tables that
the preprocessing of :mod:`biokernels.io.cmap` reads (``inst_info``/``sig_info``,
``pert_info``, ``gene_info``), so the matrices are read once, by the
preprocessing. Every signature left out and every compound row merged or set
aside is counted with its reason in :attr:`Lincs2020Tables.counts`.

Notes: docs/io_readers_notes.md, section "LINCS 2020 release (io/lincs2020)".
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.cmap import CONTROL, TREATMENT, parse_dose_um, parse_time_h, read_l1000_table, round_dose

LEVELS = (3, 4, 5)
ID_COLUMN = {5: "sig_id", 4: "sample_id", 3: "sample_id"}
"""The id column of the signature / instance table per level (= the GCTX column ids)."""
SAMPLE_COLUMNS = ("pert_id", "pert_type", "cell_iname", "pert_dose", "pert_dose_unit", "pert_time")
GENE_COLUMNS = ("gene_id", "gene_symbol", "feature_space")
COMPOUND_COLUMNS = ("pert_id", "canonical_smiles", "inchi_key")
FEATURE_SPACES = ("landmark", "best inferred", "inferred")
MISSING = frozenset({"", "-666", "-666.0", "nan", "NaN", "NA", "N/A", "None", "null", "restricted"})
"""Values read as missing in the text tables (CMap's -666 null, empty, and the
``restricted`` placeholder of unpublished structures)."""
_TRUE = frozenset({"1", "1.0", "True", "true", "TRUE"})
_FALSE = frozenset({"0", "0.0", "False", "false", "FALSE"})
PERT_TYPES = (TREATMENT, CONTROL)


@dataclass
class SignatureFilter:
    """Which matrix columns (signatures or instances) go on to the
    preprocessing; the others are counted with their reason.

    Attributes
    ----------
    pert_types : tuple of str
        Kept ``pert_type`` values (``trt_cp`` compounds, ``ctl_vehicle``
        vehicle controls, the cell embedding).
    qc_pass : bool
        Keep only ``qc_pass == 1`` (0 and missing are left out, counted
        apart).
    is_hiq : bool
        Keep only ``is_hiq == 1`` (high-quality signatures; level 5).
    dose_um : (float or None, float or None)
        Closed range of treatment doses in µM (``pert_dose`` +
        ``pert_dose_unit``); treatments of unknown dose (``-666``) are left
        out when a bound is set. Controls are not dose-filtered.
    times_h : tuple of float
        Kept treatment and control times in hours (``pert_time`` +
        ``pert_time_unit``); empty = every time.
    cell_lines : tuple of str
        Kept ``cell_iname`` values; empty = every cell line.
    """

    pert_types: tuple[str, ...] = PERT_TYPES
    qc_pass: bool = True
    is_hiq: bool = False
    dose_um: tuple[float | None, float | None] = (None, None)
    times_h: tuple[float, ...] = ()
    cell_lines: tuple[str, ...] = ()

    @classmethod
    def from_config(cls, source: dict) -> "SignatureFilter":
        """From a ``drug_screen.sources.<source>`` of layout lincs2020
        (keys ``pert_types``, ``qc_pass``, ``is_hiq``, ``dose_um: {min,
        max}``, ``times_h``, ``cell_lines``; absent keys keep the defaults)."""
        dose = source.get("dose_um") or {}
        return cls(pert_types=tuple(source.get("pert_types", PERT_TYPES)),
                   qc_pass=bool(source.get("qc_pass", True)), is_hiq=bool(source.get("is_hiq", False)),
                   dose_um=(dose.get("min"), dose.get("max")),
                   times_h=tuple(float(t) for t in source.get("times_h", ())),
                   cell_lines=tuple(str(c) for c in source.get("cell_lines", ())))


@dataclass
class Lincs2020Tables:
    """Result of :func:`prepare_lincs2020`.

    Attributes
    ----------
    sample_info : DataFrame, shape (n_kept, 9)
        GEO ``inst_info`` layout of the kept matrix columns, index ``sig_id``
        (level 5) or ``inst_id`` (levels 3-4): ``pert_id`` (the drug: the
        ``pert_id``, or the representative of its InChIKey with ``drug_key``
        inchi_key), ``cell_id`` (= ``cell_iname``), ``pert_type``,
        ``pert_dose``, ``pert_dose_unit``, ``pert_time``, ``pert_time_unit``,
        ``lincs_pert_id`` (the release's own), ``cmap_name``.
    pert_info : DataFrame
        GEO ``pert_info`` layout, one row per drug with a structure:
        ``pert_id``, ``pert_iname``, ``pert_type`` (``trt_cp``),
        ``canonical_smiles``, ``inchi_key``, ``structure_table`` (which
        compound table gave it).
    gene_info : DataFrame
        GEO ``gene_info`` layout: ``pr_gene_id``, ``pr_gene_symbol``,
        ``pr_is_lm`` (landmark), ``pr_is_bing`` (landmark or best inferred),
        ``feature_space``.
    compounds : DataFrame
        Every ``pert_id`` of the kept treatments: ``drug`` (the id used),
        ``inchi_key``, ``canonical_smiles``, ``structure_table`` (empty
        where no table has a structure).
    counts : DataFrame
        ``step``, ``reason``, ``n``: every column left out (by reason, in
        the order the filters run), every compound row set aside or merged.
    n_excluded : int
        Matrix columns left out (their total; the preprocessing checks that
        exactly these lack a ``sample_info`` row).
    """

    sample_info: pd.DataFrame
    pert_info: pd.DataFrame
    gene_info: pd.DataFrame
    compounds: pd.DataFrame
    counts: pd.DataFrame = field(default_factory=pd.DataFrame)
    n_excluded: int = 0


# --------------------------------------------------------------------------- tables

def _missing(values: pd.Series) -> pd.Series:
    return values.astype(str).str.strip().isin(MISSING)


def read_siginfo(path: str | Path, level: int = 5) -> pd.DataFrame:
    """Read ``siginfo_beta.txt`` (level 5) or ``instinfo_beta.txt`` (levels
    3-4) as strings, indexed by ``sig_id`` / ``sample_id``.

    Raises
    ------
    InputError
        If ``level`` is not 3, 4 or 5, a column of :data:`SAMPLE_COLUMNS` or
        the id column is missing (the file and the columns found are named),
        or an id repeats.
    """
    if level not in LEVELS:
        raise InputError(f"{path}: level must be 3, 4 or 5, got {level!r}")
    idc = ID_COLUMN[level]
    try:
        return read_l1000_table(path, [idc, *SAMPLE_COLUMNS], index=idc)
    except InputError as err:
        raise InputError(f"{err} (CMap LINCS 2020 level {level} expects "
                         f"{'siginfo_beta.txt' if level == 5 else 'instinfo_beta.txt'} with {idc!r})") from None


def read_geneinfo(path: str | Path) -> pd.DataFrame:
    """Read ``geneinfo_beta.txt``, indexed by ``gene_id`` (text).

    Returns
    -------
    DataFrame of str with ``gene_symbol`` and ``feature_space`` normalised to
    one of :data:`FEATURE_SPACES` (lower case, ``_`` read as a blank).

    Raises
    ------
    InputError
        Missing columns, a repeated ``gene_id``, or a ``feature_space`` other
        than landmark / best inferred / inferred (the line and value named).
    """
    genes = read_l1000_table(path, list(GENE_COLUMNS), index="gene_id")
    space = genes["feature_space"].str.strip().str.lower().str.replace("_", " ")
    bad = ~space.isin(FEATURE_SPACES)
    if bad.any():
        line = int(np.flatnonzero(bad.to_numpy())[0]) + 2
        raise InputError(f"{path}: line {line}, field feature_space: expected one of {list(FEATURE_SPACES)}, got "
                         f"{genes['feature_space'].iloc[line - 2]!r} ({int(bad.sum())} such row(s))")
    genes["feature_space"] = space
    return genes


def read_compoundinfo(path: str | Path) -> pd.DataFrame:
    """Read ``compoundinfo_beta.txt`` (or a table with the same columns:
    ``pert_id``, ``canonical_smiles``, ``inchi_key``; ``cmap_name`` or
    ``pert_iname`` optional) as strings, every row kept (a compound repeats,
    once per target).

    Raises
    ------
    InputError
        Missing columns (the file and the columns found are named).
    """
    table = read_l1000_table(path, list(COMPOUND_COLUMNS))
    if "cmap_name" not in table.columns:
        table["cmap_name"] = table["pert_iname"] if "pert_iname" in table.columns else ""
    return table


def read_cellinfo(path: str | Path) -> pd.DataFrame:
    """Read ``cellinfo_beta.txt``, indexed by ``cell_iname``.

    Raises
    ------
    InputError
        Missing ``cell_iname`` or a repeated one.
    """
    return read_l1000_table(path, ["cell_iname"], index="cell_iname")


# --------------------------------------------------------------------------- the conversion

def _flag(values: pd.Series, field_name: str, where: str) -> tuple[pd.Series, pd.Series]:
    """(is 1, is missing) of a 0/1 field; :class:`InputError` on other values."""
    text = values.astype(str).str.strip()
    missing = text.isin(MISSING)
    true = text.isin(_TRUE)
    other = ~(missing | true | text.isin(_FALSE))
    if other.any():
        i = int(np.flatnonzero(other.to_numpy())[0])
        raise InputError(f"{where}: field {field_name}, id {values.index[i]!r}: expected 1 or 0 (or -666), got "
                         f"{text.iloc[i]!r} ({int(other.sum())} such value(s))")
    return true, missing


def _structures(tables: list[tuple[str, pd.DataFrame]], note, say) -> pd.DataFrame:
    """One structure per pert_id from the compound tables in priority order:
    index pert_id; columns key (InChIKey, or ``smiles:<SMILES>`` without
    one), inchi_key, canonical_smiles, cmap_name, structure_table, priority."""
    chosen: list[pd.DataFrame] = []
    taken: pd.Series = pd.Series(dtype=object)  # pert_id -> key
    for priority, (name, table) in enumerate(tables):
        t = table.copy()
        t["pert_id"] = t["pert_id"].astype(str).str.strip()
        note("compounds", f"{name}: rows", len(t))
        no_smiles = _missing(t["canonical_smiles"])
        note("compounds", f"{name}: rows without a SMILES (-666, empty or restricted; not used)", int(no_smiles.sum()))
        t = t[~no_smiles]
        no_key = _missing(t["inchi_key"])
        note("compounds", f"{name}: rows with a SMILES but no InChIKey (told apart by the SMILES text)",
             int(no_key.sum()))
        t = t.assign(inchi_key=t["inchi_key"].where(~no_key, ""),
                     key=np.where(no_key, "smiles:" + t["canonical_smiles"].astype(str), t["inchi_key"].astype(str)))
        unique = t.drop_duplicates(["pert_id", "key"])
        note("compounds", f"{name}: repeated rows of a pert_id with the same InChIKey (one kept; e.g. one row per "
             "target)", len(t) - len(unique))
        n_keys = unique.groupby("pert_id")["key"].transform("size")
        conflict = unique[n_keys > 1]
        n_conflict = conflict["pert_id"].nunique()
        note("compounds", f"{name}: pert_ids with several InChIKeys (ambiguous; no structure taken from this table)",
             n_conflict)
        if n_conflict:
            say("%s: pert_ids with several InChIKeys, e.g. %s", name, sorted(conflict["pert_id"].unique())[:5])
        ok = unique[n_keys == 1].set_index("pert_id")
        earlier = ok.index.isin(taken.index)
        note("compounds", f"{name}: pert_ids already given a structure by an earlier table (this table's ignored)",
             int(earlier.sum()))
        if earlier.any():
            differ = ok.loc[earlier, "key"] != taken.reindex(ok.index[earlier])
            note("compounds", f"{name}: ... of which with another InChIKey than the earlier table's", int(differ.sum()))
        new = ok[~earlier].assign(structure_table=name, priority=priority)
        note("compounds", f"{name}: pert_ids given a structure", len(new))
        chosen.append(new[["key", "inchi_key", "canonical_smiles", "cmap_name", "structure_table", "priority"]])
        taken = pd.concat([taken, new["key"]])
    out = pd.concat(chosen) if chosen else pd.DataFrame(
        columns=["key", "inchi_key", "canonical_smiles", "cmap_name", "structure_table", "priority"])
    out.index.name = "pert_id"
    return out


def prepare_lincs2020(matrix_columns, siginfo: pd.DataFrame, geneinfo: pd.DataFrame,
                      compoundinfo: list[tuple[str, pd.DataFrame]], cellinfo: pd.DataFrame | None = None, *,
                      level: int = 5, filters: SignatureFilter | None = None, drug_key: str = "pert_id",
                      siginfo_name: str = "siginfo", log=None) -> Lincs2020Tables:
    """Turn the CMap LINCS 2020 metadata into the drug screen's GEO-layout
    tables, counting every signature left out.

    Parameters
    ----------
    matrix_columns : sequence of str
        Column ids of the matrices (``sig_id`` or ``sample_id``; all files
        together), e.g. from :func:`biokernels.io.gctx.read_gctx_meta`.
    siginfo : DataFrame
        :func:`read_siginfo` (index = ids).
    geneinfo : DataFrame
        :func:`read_geneinfo`.
    compoundinfo : list of (name, DataFrame)
        :func:`read_compoundinfo` tables in priority order: a pert_id takes
        its structure from the first table that has exactly one InChIKey for
        it (rows of a pert_id repeating the same InChIKey count as one;
        several InChIKeys in one table make it ambiguous there).
    cellinfo : DataFrame, optional
        :func:`read_cellinfo`: kept cell lines missing from it are counted.
    level : {3, 4, 5}
        The release level of the matrices (id column, see :data:`ID_COLUMN`).
    filters : SignatureFilter, optional
        Default: ``trt_cp`` and ``ctl_vehicle``, ``qc_pass == 1``.
    drug_key : {"pert_id", "inchi_key"}
        What a drug is: each ``pert_id`` (the paper counts perturbations;
        pert_ids of one structure are counted), or each structure: the
        pert_ids sharing an InChIKey become one drug, named by the first of
        them (earliest table, then smallest pert_id), so their signatures
        are averaged together.
    siginfo_name : str
        Name of the signature table in messages and counts.
    log : logging.Logger, optional
        One line per count.

    Returns
    -------
    Lincs2020Tables

    Raises
    ------
    InputError
        Matrix columns without a row in ``siginfo`` (count and examples
        named), a filter on a field the table lacks (``is_hiq`` on
        ``instinfo``), a 0/1 field with another value (id named), or no
        column left.
    ValueError
        ``drug_key`` or ``level`` not one of their values.
    """
    if drug_key not in ("pert_id", "inchi_key"):
        raise ValueError(f"drug_key: expected 'pert_id' or 'inchi_key', got {drug_key!r}")
    if level not in LEVELS:
        raise ValueError(f"level: expected 3, 4 or 5, got {level!r}")
    filters = filters or SignatureFilter()
    counts: list[dict] = []

    def note(step: str, reason: str, n: int) -> None:
        counts.append({"step": step, "reason": reason, "n": int(n)})
        if log is not None:
            log.info("%s: %s: %d", step, reason, n)

    def say(msg: str, *args) -> None:
        if log is not None:
            log.info(msg, *args)

    what = "signatures" if level == 5 else "instances"
    ids = pd.Index([str(x) for x in matrix_columns], dtype=object)
    note(what, "in the matrices", len(ids))
    known = ids.isin(siginfo.index)
    if not known.all():
        lacking = list(ids[~known][:5])
        raise InputError(f"{siginfo_name}: {int((~known).sum())} matrix column id(s) have no row (column "
                         f"{ID_COLUMN[level]!r}), e.g. {lacking}; are the matrix and the table of the same release "
                         f"and level ({level})?")
    note(what, f"in the {what[:-1]} table but not in the matrices (ignored)", len(siginfo) - len(ids))
    si = siginfo.loc[ids]
    keep = pd.Series(True, index=ids)

    def drop(mask: pd.Series, reason: str) -> None:
        mask = mask & keep
        note(what, f"{reason} (excluded)", int(mask.sum()))
        keep[mask] = False

    ptype = si["pert_type"].astype(str)
    other = ~ptype.isin(filters.pert_types)
    if other.any():
        say("%s of other pert_types: %s", what, ptype[other].value_counts().to_dict())
    drop(other, f"pert_type not in {list(filters.pert_types)}")
    if filters.cell_lines:
        drop(~si["cell_iname"].astype(str).isin(filters.cell_lines), f"cell_iname not in {list(filters.cell_lines)}")
    for flag, on in (("qc_pass", filters.qc_pass), ("is_hiq", filters.is_hiq)):
        if not on:
            continue
        if flag not in si.columns:
            raise InputError(f"{siginfo_name}: the {flag} filter is on but the table has no {flag!r} column "
                             f"(columns {list(si.columns)[:12]}); set {flag}: false")
        true, missing = _flag(si[flag], flag, siginfo_name)
        drop(missing, f"{flag} missing (-666 or empty)")
        drop(~true & ~missing, f"{flag} 0")
    if filters.times_h:
        unit = si["pert_time_unit"] if "pert_time_unit" in si.columns else None
        hours = pd.Series(parse_time_h(si["pert_time"], unit), index=ids)
        wanted = sorted({float(t) for t in round_dose(np.array(filters.times_h))})
        drop(hours.isna(), "time unknown (-666 or unparseable) with times_h set")
        drop(~pd.Series(round_dose(hours.to_numpy()), index=ids).isin(wanted) & hours.notna(),
             f"time not in times_h [{', '.join(f'{t:g}' for t in wanted)}] h")
    lo, hi = filters.dose_um
    if lo is not None or hi is not None:
        is_trt = ptype == TREATMENT
        unit = si["pert_dose_unit"]
        dose = pd.Series(parse_dose_um(si["pert_dose"], unit), index=ids)
        drop(is_trt & (dose.isna() | (dose < 0)), "treatment dose unknown (-666 or unparseable) with dose_um set")
        outside = is_trt & dose.notna() & (dose >= 0) & (((dose < lo) if lo is not None else False)
                                                          | ((dose > hi) if hi is not None else False))
        bounds = ", ".join(f"{k} {'none' if v is None else f'{v:g} µM'}" for k, v in (("min", lo), ("max", hi)))
        drop(outside, f"treatment dose outside dose_um ({bounds})")
    n_excluded = int((~keep).sum())
    note(what, "excluded in all", n_excluded)
    note(what, "kept", int(keep.sum()))
    if not keep.any():
        raise InputError(f"{siginfo_name}: no {what[:-1]} left after the filters (counts above)")
    si = si[keep.to_numpy()]

    # genes
    gi = geneinfo
    for space in FEATURE_SPACES:
        note("genes", f"feature_space {space}", int((gi["feature_space"] == space).sum()))
    gene_info = pd.DataFrame({"pr_gene_id": gi.index.astype(str), "pr_gene_symbol": gi["gene_symbol"].to_numpy(),
                              "pr_is_lm": (gi["feature_space"] == "landmark").astype(int).to_numpy(),
                              "pr_is_bing": gi["feature_space"].isin(["landmark", "best inferred"]).astype(int)
                              .to_numpy(),
                              "feature_space": gi["feature_space"].to_numpy()})

    # structures
    structures = _structures(compoundinfo, note, say)
    real_key = structures["inchi_key"] != ""
    shared = structures[real_key].groupby("key")["key"].transform("size") > 1
    rep_of = pd.Series(structures.index, index=structures.index, dtype=object)
    if drug_key == "inchi_key":
        order = structures.assign(pid=structures.index).sort_values(["priority", "pid"])
        first = order.groupby("key")["pid"].first()
        rep_of = structures["key"].map(first)
    trt = si["pert_type"] == TREATMENT
    trt_perts = pd.Index(si.loc[trt, "pert_id"].astype(str).unique())
    has = trt_perts.isin(structures.index)
    note("drugs", f"compounds (pert_id) of the kept {TREATMENT} {what}", len(trt_perts))
    note("drugs", "... with a structure", int(has.sum()))
    note("drugs", "... without a structure in any compound table (their signatures are dropped in the "
         "preprocessing as 'treatment without a parseable SMILES')", int((~has).sum()))
    kept_shared = shared[shared].index.intersection(trt_perts)
    if drug_key == "pert_id":
        note("drugs", "... sharing their InChIKey with another pert_id (identical fingerprints; kept apart; "
             "drug_key inchi_key merges them)", len(kept_shared))
    else:
        merged = trt_perts[has][rep_of.reindex(trt_perts[has]).to_numpy() != trt_perts[has].to_numpy()]
        note("drugs", "... merged into another pert_id of the same InChIKey (drug_key inchi_key)", len(merged))
    lincs_pert = si["pert_id"].astype(str)
    drug = lincs_pert.map(rep_of).where(lincs_pert.isin(rep_of.index), lincs_pert)
    id_name = "sig_id" if level == 5 else "inst_id"
    sample_info = pd.DataFrame({
        "pert_id": drug.to_numpy(), "cell_id": si["cell_iname"].astype(str).to_numpy(),
        "pert_type": si["pert_type"].astype(str).to_numpy(), "pert_dose": si["pert_dose"].to_numpy(),
        "pert_dose_unit": si["pert_dose_unit"].to_numpy(), "pert_time": si["pert_time"].to_numpy(),
        "pert_time_unit": (si["pert_time_unit"] if "pert_time_unit" in si.columns else pd.Series("h", index=si.index))
        .to_numpy(),
        "lincs_pert_id": lincs_pert.to_numpy(),
        "cmap_name": (si["cmap_name"] if "cmap_name" in si.columns else pd.Series("", index=si.index)).to_numpy()},
        index=pd.Index(si.index, name=id_name))
    if cellinfo is not None:
        cells = pd.Index(sample_info["cell_id"].unique())
        note("cells", "cell lines of the kept columns", len(cells))
        note("cells", "... not in cellinfo (kept)", int((~cells.isin(cellinfo.index)).sum()))
    reps = structures[rep_of == structures.index] if drug_key == "inchi_key" else structures
    pert_info = pd.DataFrame({"pert_id": reps.index, "pert_iname": reps["cmap_name"].to_numpy(),
                              "pert_type": TREATMENT, "canonical_smiles": reps["canonical_smiles"].to_numpy(),
                              "inchi_key": reps["inchi_key"].to_numpy(),
                              "structure_table": reps["structure_table"].to_numpy()})
    s = structures.reindex(trt_perts)
    compounds = pd.DataFrame({"drug": rep_of.reindex(trt_perts).fillna(pd.Series(trt_perts, index=trt_perts))
                              .to_numpy(),
                              "inchi_key": s["inchi_key"].fillna("").to_numpy(),
                              "canonical_smiles": s["canonical_smiles"].fillna("").to_numpy(),
                              "structure_table": s["structure_table"].fillna("").to_numpy()},
                             index=pd.Index(trt_perts, name="pert_id"))
    return Lincs2020Tables(sample_info=sample_info, pert_info=pert_info, gene_info=gene_info, compounds=compounds,
                           counts=pd.DataFrame(counts, columns=["step", "reason", "n"]), n_excluded=n_excluded)
