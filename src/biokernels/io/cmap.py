"""CMAP / LINCS L1000 preprocessing for virtual drug screening
(Radhakrishnan et al. 2023, Methods "Preprocessing for CMAP data").

From a GCTX of L1000 expression (GEO GSE92742/GSE70138 level 3 instances or
level 5 signatures), its sample metadata (GEO ``inst_info``/``sig_info`` or
the GCTX column metadata), the compounds with a parseable SMILES and the
gene table, :func:`preprocess_cmap`:

1. keeps the landmark genes (``pr_is_lm`` of ``gene_info``) when a gene table
   is given;
2. applies ``log2(x + 1)`` when asked (linear-scale input);
3. keeps chemical perturbations (``pert_type == trt_cp``) with a dose >= 0
   (L1000 codes a missing dose as -666) and a parseable SMILES, and vehicle
   controls (``ctl_vehicle``);
4. drops every gene that equals 1 after scaling in any kept sample -- only
   when step 2 ran: the paper "removed all genes that were 1 upon
   log2(x+1) scaling the data" (135 genes on CMAP, batch effects per cell
   line); on input not transformed here (log2 level 3, z-scores) a value of
   exactly 1.0 means nothing, so the filter is skipped and says so;
5. averages the replicates of each (drug, cell line) pair -- as the paper,
   pooling every dose and time of the pair (``replicate_key = ("pert",
   "cell")``, the default; the pairs that mix doses or times are counted and
   the dose range is logged) -- or of each (drug, cell line, dose, time)
   (``replicate_key = ("pert", "cell", "dose", "time")``); and the controls
   of each cell line: that mean is the cell line's embedding (a warning when
   its values look like z-scores, see :func:`looks_like_zscores`). The paper:
   "for each of the 116,228 observed drug and cell type combinations we then
   averaged the gene expression over all the replicates", which pools doses:
   on a real plate a compound's 6 doses (0.04-10 µM) pooled correlate
   r = 0.49 with its 10 µM profile (issue #16), hence the counts.

Dose and time fields by input layout (the numeric field + unit is used when
both are present):

* GEO level 3 ``inst_info`` (GSE92742, GSE70138) and the files of
  ``biokernels.synth.drug_screen`` (synthetic and lincs2020_structure
  sources): ``pert_dose`` + ``pert_dose_unit`` (µM), ``pert_time`` +
  ``pert_time_unit`` (h);
* GEO level 5 ``sig_info`` and the column metadata of cmapR's level-5 GCTX:
  ``pert_idose`` ("10 µM") and ``pert_itime`` ("24 h"; "6 h & 4 h" for a
  signature of two times, an unknown time).

A layout without a dose (time) field is accepted: the dose is unknown, the
dose >= 0 filter cannot run (counted, warned) and dose mixing is counted as
unknown; ``replicate_key`` with dose and time is then an error.

Each exclusion is counted with its reason; a matrix column without metadata,
NaN/inf in the matrix and a cell line without controls are errors. The
matrix -- GCTX or GCT text, told apart by content, or several files with the
same genes (CMap LINCS 2020's treatment and control matrices) -- is read in
column chunks of only the columns and genes used, so a level-3 file with a
million instances needs memory for the averaged pairs only; the log shows
the read's progress. The CMap LINCS 2020 release goes through
:mod:`biokernels.io.lincs2020` first, whose signature filters are counted
there and put at the top of the counts (``upstream_counts``).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

from biokernels.errors import InputError
from biokernels.io.download import PROGRESS_EVERY_S, Progress
from biokernels.io.gctx import open_matrix
from biokernels.io.opener import open_binary

TREATMENT = "trt_cp"
CONTROL = "ctl_vehicle"
MISSING_CODE = -666.0
_UNIT_TO_UM = {"um": 1.0, "µm": 1.0, "μm": 1.0, "nm": 1e-3, "mm": 1e3, "pm": 1e-6, "m": 1e6}
_UNIT_TO_H = {"h": 1.0, "hr": 1.0, "hrs": 1.0, "hour": 1.0, "hours": 1.0, "min": 1 / 60, "mins": 1 / 60,
              "minute": 1 / 60, "minutes": 1 / 60, "d": 24.0, "day": 24.0, "days": 24.0}
_NUMBER = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\s\d]*)\s*$")
GENE_SPACES = ("landmark", "best_inferred", "all")
CHUNK_BYTES = 256 << 20  # float64 bytes of one chunk of samples read by preprocess_cmap (chunk_size default)
POOLED_KEY = ("pert", "cell")
DOSE_TIME_KEY = ("pert", "cell", "dose", "time")
REPLICATE_KEYS = (POOLED_KEY, DOSE_TIME_KEY)
DOSE_DIGITS = 3  # doses grouped and compared at 3 significant digits (9.99998 and 10 uM are one dose)
# looks_like_zscores: thresholds of the rule (see its docstring)
Z_MAX_ABS_MEAN = 0.25
Z_SD_RANGE = (0.5, 2.0)
Z_MIN_NEGATIVE = 0.2
Z_MAX_MEAN_OVER_SD = 0.5


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
_PERT_FIELDS = ["pert_id", "pert_iname", "pert_type", "canonical_smiles", "inchi_key"]


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


def _text(values) -> np.ndarray:
    """NaN/None -> "" (pandas 3 keeps NaN through astype(str))."""
    return np.array(["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in values])


def parse_dose_um(dose, unit=None) -> np.ndarray:
    """Doses in µM from L1000 metadata.

    Parameters
    ----------
    dose : array-like of str or float
        Numeric ``pert_dose`` (with ``unit``) or text ``pert_idose`` such as
        ``"10 µM"``, ``"500 nM"`` or ``"-666"``.
    unit : array-like of str, optional
        ``pert_dose_unit`` per value (µM, uM, nM, ...); ignored where the dose
        text carries its own unit; µM assumed when absent.

    Returns
    -------
    array of float, shape (n,): the dose in µM; ``-666`` stays ``-666`` (a
    negative dose, dropped by the preprocessing); ``NaN`` where the text
    cannot be parsed.
    """
    dose = _text(pd.Series(dose))
    units = _text(pd.Series(unit)) if unit is not None else np.array([""] * len(dose))
    out = np.full(len(dose), np.nan)
    for i, (d, u) in enumerate(zip(dose, units)):
        m = _NUMBER.match(d)
        if not m:
            continue
        value = float(m.group(1))
        if value == MISSING_CODE or value < 0:
            out[i] = value
            continue
        if not np.isfinite(value):
            continue  # '1e400' overflows: unparseable, not an infinite dose
        uname = (m.group(2) or u or "µM").strip().lower()
        if uname in ("", "-666", "nan"):
            uname = "µm"
        factor = _UNIT_TO_UM.get(uname)
        out[i] = value * factor if factor is not None else np.nan
    return out


def parse_time_h(time, unit=None) -> np.ndarray:
    """Treatment times in hours from L1000 metadata.

    Parameters
    ----------
    time : array-like of str or float
        Numeric ``pert_time`` (with ``unit``) or text ``pert_itime`` such as
        ``"24 h"``; ``-666`` is L1000's missing code.
    unit : array-like of str, optional
        ``pert_time_unit`` per value (h, hr, min, d, ...); ignored where the
        text carries its own unit; hours assumed when absent.

    Returns
    -------
    array of float, shape (n,), hours; ``NaN`` where the time is missing
    (``-666``, any negative value, empty) or cannot be parsed (e.g. level 5's
    ``"6 h & 4 h"`` of a signature brewed from two times, or an unknown unit).
    """
    time = _text(pd.Series(time))
    units = _text(pd.Series(unit)) if unit is not None else np.array([""] * len(time))
    out = np.full(len(time), np.nan)
    for i, (t, u) in enumerate(zip(time, units)):
        m = _NUMBER.match(t)
        if not m:
            continue
        value = float(m.group(1))
        if value < 0 or not np.isfinite(value):
            continue
        uname = (m.group(2) or u or "h").strip().lower()
        if uname in ("", "-666", "nan"):
            uname = "h"
        factor = _UNIT_TO_H.get(uname)
        out[i] = value * factor if factor is not None else np.nan
    return out


def round_dose(dose_um) -> np.ndarray:
    """Doses (µM) at ``DOSE_DIGITS`` (3) significant digits, the precision at
    which doses are grouped and compared: an instance's measured
    ``pert_dose`` (9.99998) and its nominal dose (10) are one dose. NaN
    stays NaN. Returns float array, same shape."""
    d = np.asarray(dose_um, dtype=float)
    return np.array([float(f"{v:.{DOSE_DIGITS}g}") if np.isfinite(v) else np.nan for v in d.ravel()]).reshape(d.shape)


def _scale_stats(n: int, s1: np.ndarray, s2: np.ndarray, n_neg: np.ndarray) -> dict:
    """Summary of values from per-gene sums: ``n`` samples, ``s1``/``s2`` per-gene
    sum and sum of squares, ``n_neg`` per-gene count of negative values."""
    if n == 0 or len(s1) == 0:
        return {"n_samples": int(n), "median_abs_gene_mean": np.nan, "median_gene_sd": np.nan,
                "negative_fraction": np.nan, "mean": np.nan, "sd": np.nan}
    mean_g = s1 / n
    sd_g = np.sqrt(np.maximum(s2 / n - mean_g ** 2, 0.0))
    mean = float(s1.sum() / (n * len(s1)))
    sd = float(np.sqrt(max(s2.sum() / (n * len(s1)) - mean ** 2, 0.0)))
    return {"n_samples": int(n), "median_abs_gene_mean": float(np.median(np.abs(mean_g))),
            "median_gene_sd": float(np.median(sd_g)), "negative_fraction": float(n_neg.sum() / (n * len(s1))),
            "mean": mean, "sd": sd}


def looks_like_zscores(x=None, *, stats: dict | None = None) -> tuple[bool, dict]:
    """Whether expression values look like z-scores (L1000 level 4/5, e.g.
    MODZ signatures) rather than log expression, for the control embedding.

    Level 4/5 values are standardised against a plate or population, so a
    mean of vehicle controls is about 0 in every cell line and carries no
    cell identity; log2 expression (level 3, or log2(x+1) of linear
    intensities) is >= 0, with per-gene means of about 2-15.

    Rule (population statistics over all values, each gene over the samples):
    the values look like z-scores when either

    (a) per-gene standardised: the median over genes of ``|mean_g|`` is <=
        ``Z_MAX_ABS_MEAN`` (0.25) and the median over genes of ``sd_g`` lies
        in ``Z_SD_RANGE`` ([0.5, 2]); or
    (b) centred at 0 with negatives: at least ``Z_MIN_NEGATIVE`` (20 %) of the
        values are negative and ``|mean| <= Z_MAX_MEAN_OVER_SD * sd`` (0.5)
        over all values.

    Parameters
    ----------
    x : array-like, shape (n_samples, n_genes), optional
        The values (e.g. the control samples, or a cells x genes table).
    stats : dict, optional
        Instead of ``x``: the output of the internal per-gene sums summary
        (keys ``median_abs_gene_mean``, ``median_gene_sd``,
        ``negative_fraction``, ``mean``, ``sd``), for values streamed in chunks.

    Returns
    -------
    (flag, stats) : bool and the dict of statistics, with ``rule``: which of
    (a), (b) fired ("" when none). No values (``n_samples`` 0) -> False.
    """
    if stats is None:
        a = np.asarray(x, dtype=float)
        if a.ndim != 2:
            raise ValueError(f"looks_like_zscores: expected a 2-D samples x genes array, got shape {a.shape}")
        stats = _scale_stats(a.shape[0], a.sum(axis=0), (a ** 2).sum(axis=0), (a < 0).sum(axis=0))
    stats = dict(stats)
    if not np.isfinite(stats.get("mean", np.nan)):
        stats["rule"] = ""
        return False, stats
    rule_a = (stats["median_abs_gene_mean"] <= Z_MAX_ABS_MEAN
              and Z_SD_RANGE[0] <= stats["median_gene_sd"] <= Z_SD_RANGE[1])
    rule_b = (stats["negative_fraction"] >= Z_MIN_NEGATIVE
              and abs(stats["mean"]) <= Z_MAX_MEAN_OVER_SD * stats["sd"])
    stats["rule"] = "+".join(r for r, ok in (("a: per-gene mean ~0, sd ~1", rule_a),
                                            ("b: centred at 0 with negatives", rule_b)) if ok)
    return bool(rule_a or rule_b), stats


@dataclass
class Preprocessed:
    """Result of :func:`preprocess_cmap`.

    Attributes
    ----------
    expression : DataFrame, shape (n_pairs, n_genes)
        Replicate-averaged expression (log2 when the input was log2 or
        transformed; the input's scale otherwise); index = pair ids
        ``pert_id:cell_id`` (``replicate_key`` ``("pert", "cell")``) or
        ``pert_id:cell_id:<dose>uM:<time>h`` (with dose and time, e.g.
        ``BRD-K1:A375:10uM:24h``), columns = gene ids (str).
    pairs : DataFrame, shape (n_pairs, 5), same index
        ``pert_id``, ``cell_id``, ``n_replicates`` and, pooled: ``n_doses``,
        ``n_times`` (distinct known doses / times among the pair's
        replicates; 0 = none known), or with dose and time: ``dose_um``
        (µM, 3 significant digits), ``time_h`` (hours).
    controls : DataFrame, shape (n_cells, n_genes)
        Mean control expression per cell line (the cell embedding).
    genes : DataFrame
        Kept genes: ``gene_id``, ``symbol``.
    counts : DataFrame
        ``step``, ``reason``, ``n``: every exclusion and its count, the pairs
        that pool doses or times, the filters skipped and the z-score check.
    """

    expression: pd.DataFrame
    pairs: pd.DataFrame
    controls: pd.DataFrame
    genes: pd.DataFrame
    counts: pd.DataFrame = field(default_factory=pd.DataFrame)


def _sample_frame(meta: pd.DataFrame, source: str) -> tuple[pd.DataFrame, dict]:
    """Sample table ``pert_id``, ``cell_id``, ``pert_type``, ``dose_um``,
    ``time_h`` (index = sample ids) and the metadata fields the dose and time
    came from (``{"dose": "pert_dose" | "pert_idose" | None, "time": ...}``;
    None: the layout has no such field, values NaN)."""
    for col in ("pert_id", "cell_id", "pert_type"):
        if col not in meta.columns:
            raise InputError(f"{source}: sample metadata lacks column {col!r}; expected GEO inst_info/sig_info "
                             "columns pert_id, cell_id, pert_type and pert_dose (+pert_dose_unit) or pert_idose")
    fields: dict = {"dose": None, "time": None}
    nan = np.full(len(meta), np.nan)
    if "pert_dose" in meta.columns:
        fields["dose"] = "pert_dose"
        dose = parse_dose_um(meta["pert_dose"], meta["pert_dose_unit"] if "pert_dose_unit" in meta else None)
    elif "pert_idose" in meta.columns:
        fields["dose"] = "pert_idose"
        dose = parse_dose_um(meta["pert_idose"])
    else:
        dose = nan
    if "pert_time" in meta.columns:
        fields["time"] = "pert_time"
        time = parse_time_h(meta["pert_time"], meta["pert_time_unit"] if "pert_time_unit" in meta else None)
    elif "pert_itime" in meta.columns:
        fields["time"] = "pert_itime"
        time = parse_time_h(meta["pert_itime"])
    else:
        time = nan
    frame = pd.DataFrame({"pert_id": meta["pert_id"].astype(str).to_numpy(),
                          "cell_id": meta["cell_id"].astype(str).to_numpy(),
                          "pert_type": meta["pert_type"].astype(str).to_numpy(),
                          "dose_um": dose, "time_h": time}, index=meta.index.astype(str))
    return frame, fields


def check_replicate_key(replicate_key) -> tuple[str, ...]:
    """``replicate_key`` as a tuple, one of :data:`REPLICATE_KEYS`.

    Raises
    ------
    ValueError
        Any other value (the message names ``drug_screen.replicate_key``).
    """
    key = tuple(replicate_key) if isinstance(replicate_key, (list, tuple)) else None
    if key not in REPLICATE_KEYS:
        raise ValueError(f"drug_screen.replicate_key: expected [pert, cell] or [pert, cell, dose, time], "
                         f"got {replicate_key!r}")
    return key


def _gene_id(value) -> str:
    """Entrez gene id as text: ``5720.0`` (float metadata) -> ``"5720"``."""
    try:
        f = float(value)
        return str(int(f)) if f.is_integer() else str(value)
    except (TypeError, ValueError):
        return str(value)


def _group_add(out: np.ndarray, codes: np.ndarray, x: np.ndarray) -> None:
    """``out[g] += x[i]`` for every row i with code ``g = codes[i] >= 0``, by
    a sparse indicator product (scipy.sparse), not a Python loop. Only the
    groups present in ``codes`` are touched: the temporary is (groups in this
    chunk) x genes, not the whole ``out`` (with CMap LINCS 2020's 720,216
    signatures ``out`` holds hundreds of thousands of pairs)."""
    m = codes >= 0
    if not m.any():
        return
    present, local = np.unique(codes[m], return_inverse=True)
    ind = sparse.csr_matrix((np.ones(len(local)), (local, np.arange(len(local)))), shape=(len(present), len(local)))
    out[present] += ind @ x[m]


def _values(v: np.ndarray, unit: str, limit: int = 12) -> str:
    v = np.unique(v[np.isfinite(v)])
    text = ", ".join(f"{x:g}" for x in v[:limit]) + (", ..." if len(v) > limit else "")
    return f"{len(v)} distinct, {v.min():g} to {v.max():g} {unit} ({text})" if len(v) else "none known"


def preprocess_cmap(gctx_path, valid_drugs, *, sample_meta: pd.DataFrame | None = None,
                    sample_meta_source: str | None = None, gene_info: pd.DataFrame | None = None,
                    log2_transform: bool = True, controls: pd.DataFrame | None = None,
                    missing_controls: str = "error", replicate_key=POOLED_KEY, chunk_size: int | None = None,
                    gene_space: str = "landmark", columns_excluded_upstream: int = 0,
                    upstream_counts: pd.DataFrame | None = None, progress_every: float | None = None,
                    log=None) -> Preprocessed:
    """Preprocess L1000 expression into per-(drug, cell line) means (or per
    (drug, cell line, dose, time)) and the cell-line control embedding.

    Parameters
    ----------
    gctx_path : path or list of paths
        GCTX or GCT text (told apart by content, :func:`biokernels.io.gctx.open_matrix`),
        rows = genes (``pr_gene_id``), columns = samples; several files
        (e.g. CMap LINCS 2020's ``level3_beta_trt_cp`` and ``level3_beta_ctl``
        matrices) are read one after the other: they must have the same rows
        (any order) and no column id in common.
    valid_drugs : iterable of str
        ``pert_id`` of the compounds with a parseable SMILES (the index of the
        fingerprint table).
    sample_meta : DataFrame, optional
        Index = sample ids; columns ``pert_id``, ``cell_id``, ``pert_type``
        and, when the layout has them, ``pert_dose`` (+ ``pert_dose_unit``)
        or ``pert_idose``, ``pert_time`` (+ ``pert_time_unit``) or
        ``pert_itime``. Default: the GCTX column metadata.
    sample_meta_source : str, optional
        Name used in error messages (the file the metadata came from).
    gene_info : DataFrame, optional
        GEO ``gene_info`` with ``pr_gene_id``, ``pr_gene_symbol`` and
        ``pr_is_lm`` (and ``pr_is_bing`` for ``gene_space`` best_inferred):
        only the genes of ``gene_space`` are kept (matrix rows missing from
        the table are dropped and counted). Default: every row.
    gene_space : {"landmark", "best_inferred", "all"}
        Genes kept with ``gene_info``: the 978 measured landmarks
        (``pr_is_lm``, the paper's), landmarks plus the best-inferred genes
        (``pr_is_bing``, 10,174 in L1000), or every gene of the table.
    log2_transform : bool
        Apply ``log2(x + 1)`` (input on linear scale). Only then are the
        genes equal to 1 dropped (the paper's rule is about values after its
        log2(x+1) scaling); with False the filter is skipped and the count
        row says so (the genes holding an exact 1.0 are counted, kept).
    controls : DataFrame, optional
        External control expression (cells x gene ids, final scale) used as
        the cell embedding instead of the ``ctl_vehicle`` samples (e.g. a
        level-5 input, which has no controls).
    missing_controls : {"error", "drop"}
        A cell line with treatments but no controls is an error, or its
        pairs are dropped and counted.
    replicate_key : ("pert", "cell") or ("pert", "cell", "dose", "time")
        What a replicate shares. ``("pert", "cell")`` (default, the paper):
        every dose and time of a (drug, cell line) is averaged; the pairs
        that pool several doses or times are counted (doses compared at 3
        significant digits, unknown times not counted as a mix). With dose
        and time: one row per (drug, cell line, dose, time); treatments of
        unknown time are dropped (counted).
    chunk_size : int, optional
        Columns read per chunk; default as many as fit 256 MiB of float64
        over the kept genes (34,000 at 978 genes, 2,700 at 12,328).
    columns_excluded_upstream : int
        Matrix columns left out of ``sample_meta`` on purpose by an earlier
        step that counted them (e.g. the CMap LINCS 2020 signature filters of
        :mod:`biokernels.io.lincs2020`): exactly this many columns may lack
        metadata (counted as such); any other number is an error.
    upstream_counts : DataFrame, optional
        That step's counts (``step``, ``reason``, ``n``), put first in
        ``counts``.
    progress_every : float, optional
        Seconds between two progress lines of the matrix read in ``log``
        (columns and bytes read, rate, time left; default 30).
    log : logging.Logger, optional
        Receives one line per count, the dose and time ranges, and the
        warnings (also issued as ``UserWarning``).

    Returns
    -------
    Preprocessed

    Raises
    ------
    InputError
        Matrix columns without metadata (other than the
        ``columns_excluded_upstream``), matrices with different rows or a
        column id in common, NaN/inf in the matrix, no sample
        left after a filter, a kept cell line without controls (named), or
        ``replicate_key`` with dose and time on metadata without a dose or
        time field (names the file and the fields).
    ValueError
        ``missing_controls``, ``replicate_key`` or ``gene_space`` not one of
        their values.

    Warns
    -----
    UserWarning
        No dose field (the dose >= 0 filter cannot run), or control values
        that look like z-scores (:func:`looks_like_zscores`).
    """
    import warnings
    from contextlib import ExitStack

    paths = [Path(p) for p in ([gctx_path] if isinstance(gctx_path, (str, Path)) else gctx_path)]
    if not paths:
        raise ValueError("gctx_path: expected a matrix file or a non-empty list of them")
    gctx_path = paths[0] if len(paths) == 1 else Path(", ".join(map(str, paths)))
    if gene_space not in GENE_SPACES:
        raise ValueError(f"gene_space: expected one of {list(GENE_SPACES)}, got {gene_space!r}")
    if missing_controls not in ("error", "drop"):
        raise ValueError(f"missing_controls: expected 'error' or 'drop', got {missing_controls!r}")
    key = check_replicate_key(replicate_key)
    by_dose = key == DOSE_TIME_KEY
    counts: list[dict] = []

    def note(step: str, reason: str, n: int) -> None:
        counts.append({"step": step, "reason": reason, "n": int(n)})
        if log is not None:
            log.info("%s: %s: %d", step, reason, n)

    def say(msg: str, *args) -> None:
        if log is not None:
            log.info(msg, *args)

    def warn(msg: str) -> None:
        if log is not None:
            log.warning(msg)
        warnings.warn(msg, UserWarning, stacklevel=4)

    with ExitStack() as stack:
        matrices = [stack.enter_context(open_matrix(p)) for p in paths]
        return _preprocess(matrices, gctx_path, valid_drugs, sample_meta, sample_meta_source, gene_info,
                           log2_transform, controls, missing_controls, key, chunk_size, gene_space,
                           columns_excluded_upstream, upstream_counts, progress_every, note, say, warn, counts,
                           log)


def _preprocess(matrices, gctx_path, valid_drugs, sample_meta, sample_meta_source, gene_info, log2_transform,
                controls, missing_controls, key, chunk_size, gene_space, columns_excluded_upstream,
                upstream_counts, progress_every, note, say, warn, counts, log) -> Preprocessed:
    """The body of :func:`preprocess_cmap`, on open matrices."""
    by_dose = key == DOSE_TIME_KEY
    if upstream_counts is not None:
        for row in upstream_counts.itertuples(index=False):
            counts.append({"step": str(row.step), "reason": str(row.reason), "n": int(row.n)})
            say("%s: %s: %d (earlier step)", row.step, row.reason, int(row.n))
    first = matrices[0]
    row_meta = first.row_meta
    for m in matrices[1:]:
        if set(m.row_meta.index) != set(row_meta.index):
            only = sorted(set(row_meta.index) ^ set(m.row_meta.index))
            raise InputError(f"{m.path} and {first.path}: the matrices have different rows ({len(only)} row id(s) "
                             f"in one only, e.g. {only[:5]}); several matrices must hold the same genes")
    col_meta = pd.concat([m.col_meta for m in matrices]) if len(matrices) > 1 else first.col_meta
    if len(matrices) > 1:
        dup = col_meta.index[col_meta.index.duplicated()]
        if len(dup):
            raise InputError(f"{gctx_path}: {len(dup)} column id(s) are in several matrices, e.g. "
                             f"{list(dup.unique()[:5])}")
    file_of = np.repeat(np.arange(len(matrices)), [m.shape[1] for m in matrices])
    src = sample_meta_source or f"{gctx_path} (column metadata)"
    meta, fields = _sample_frame(col_meta if sample_meta is None else sample_meta, src)
    if by_dose:
        for what, names in (("dose", "'pert_dose' (+ 'pert_dose_unit') or 'pert_idose'"),
                            ("time", "'pert_time' (+ 'pert_time_unit') or 'pert_itime'")):
            if fields[what] is None:
                raise InputError(f"{src}: drug_screen.replicate_key [pert, cell, dose, time] needs the {what} of "
                                 f"every sample, but the sample metadata has no {names} column; use replicate_key "
                                 "[pert, cell] (doses and times pooled, as the paper)")
    say("replicate key %s; dose from %s, time from %s", list(key), fields["dose"] or "no field (unknown)",
        fields["time"] or "no field (unknown)")
    cols = col_meta.index.astype(str)
    has_meta = cols.isin(meta.index)
    no_meta = cols[~has_meta]
    if len(no_meta) != columns_excluded_upstream:
        upstream = (f"; {columns_excluded_upstream} were excluded by the earlier step, so the sample table and "
                    "the matrices do not belong together" if columns_excluded_upstream else "")
        raise InputError(f"{gctx_path}: {len(no_meta)} column id(s) have no row in {src}, "
                         f"e.g. {list(no_meta[:5])}{upstream}")
    note("samples", "in matrix", len(cols))
    if columns_excluded_upstream:
        note("samples", "excluded before preprocessing (counted above; not read)", len(no_meta))
    n_meta_in = int(meta.index.isin(cols).sum())
    if len(meta) > n_meta_in:
        note("samples", "in metadata but not in the matrix (ignored)", len(meta) - n_meta_in)
    n_matrix_cols = len(cols)
    file_of = file_of[np.asarray(has_meta)]
    cols = cols[np.asarray(has_meta)]
    meta = meta.loc[cols]

    # genes: Entrez ids from the row metadata's pr_gene_id when present (older
    # GCTX files, e.g. cmapR's, use Affymetrix probe ids as row ids), else the row ids
    rows = row_meta.index.astype(str)
    note("genes", "in matrix", len(rows))
    if "pr_gene_id" in row_meta.columns:
        gene_of_row = pd.Series([_gene_id(v) for v in row_meta["pr_gene_id"]], index=rows)
    else:
        gene_of_row = pd.Series(rows, index=rows)
    dup = gene_of_row[gene_of_row.duplicated()]
    if len(dup):
        raise InputError(f"{gctx_path}: {len(dup)} gene id(s) appear on several rows, e.g. {list(dup[:5])}")
    if gene_info is not None:
        gi = gene_info.copy()
        gi["pr_gene_id"] = [_gene_id(v) for v in gi["pr_gene_id"]]
        in_table = gene_of_row.isin(set(gi["pr_gene_id"])).to_numpy()
        if not in_table.all():
            note("genes", "not in the gene table (dropped)", int((~in_table).sum()))
        if gene_space == "all":
            space = set(gi["pr_gene_id"])
        else:
            flag = "pr_is_lm" if gene_space == "landmark" else "pr_is_bing"
            if flag not in gi.columns:
                raise InputError(f"{src}: gene_space {gene_space} needs the gene table's {flag!r} column, which it "
                                 f"lacks (columns {list(gi.columns)[:10]})")
            space = set(gi.loc[gi[flag].astype(str).isin(["1", "1.0", "True", "true"]), "pr_gene_id"])
        keep_rows = rows[(gene_of_row.isin(space).to_numpy()) & in_table]
        reason = "not landmark (dropped)" if gene_space == "landmark" else f"not in gene space {gene_space} (dropped)"
        note("genes", reason, int(in_table.sum()) - len(keep_rows))
        symbols = gi.set_index("pr_gene_id")["pr_gene_symbol"].reindex(gene_of_row[keep_rows]).fillna("")
    else:
        keep_rows = rows
        symbols = (row_meta["pr_gene_symbol"].reindex(keep_rows).astype(str) if "pr_gene_symbol" in row_meta
                   else pd.Series("", index=keep_rows))
    if len(keep_rows) == 0:
        raise InputError(f"{gctx_path}: no landmark gene among the matrix rows")
    gene_ids = pd.Index(gene_of_row[keep_rows].to_numpy())

    # samples
    is_trt = meta["pert_type"] == TREATMENT
    is_ctl = meta["pert_type"] == CONTROL
    note("samples", f"pert_type not {TREATMENT} or {CONTROL} (dropped)", int((~is_trt & ~is_ctl).sum()))
    if fields["dose"] is not None:
        bad_dose = is_trt & meta["dose_um"].isna()
        note("samples", "treatment dose unparseable (dropped)", int(bad_dose.sum()))
        neg_dose = is_trt & (meta["dose_um"] < 0)
        note("samples", "treatment dose < 0, e.g. -666 missing code (dropped)", int(neg_dose.sum()))
    else:
        bad_dose = neg_dose = pd.Series(False, index=meta.index)
        note("samples", "treatment dose unknown: no pert_dose or pert_idose field, dose >= 0 filter not applied "
             "(kept)", int(is_trt.sum()))
        warn(f"{src}: no dose field (pert_dose or pert_idose): the paper's dose >= 0 filter cannot be applied and "
             "doses pooled as replicates cannot be counted")
    valid = set(map(str, valid_drugs))
    no_smiles = is_trt & ~bad_dose & ~neg_dose & ~meta["pert_id"].isin(valid)
    note("samples", "treatment without a parseable SMILES (dropped)", int(no_smiles.sum()))
    note("drugs", "without a parseable SMILES (dropped)", meta.loc[no_smiles, "pert_id"].nunique())
    trt = is_trt & ~bad_dose & ~neg_dose & ~no_smiles
    no_time = trt & meta["time_h"].isna()
    if by_dose:
        note("samples", "treatment time unknown (-666 or unparseable, e.g. '6 h & 4 h'): replicate_key "
             "[pert, cell, dose, time] needs it (dropped)", int(no_time.sum()))
        trt = trt & ~no_time
    else:
        note("samples", "treatment time unknown (-666, unparseable or no time field; kept, pooled)",
             int(no_time.sum()))
    if not trt.any():
        raise InputError(f"{gctx_path}: no {TREATMENT} sample left after the dose, SMILES and time filters")
    use_ctl = controls is None
    if use_ctl:
        ctl = is_ctl
    else:
        ctl = pd.Series(False, index=meta.index)
        note("samples", "ctl_vehicle samples not used (external controls given)", int(is_ctl.sum()))

    trt_meta = meta[trt].copy()
    trt_meta["dose_r"] = round_dose(trt_meta["dose_um"].to_numpy())
    if fields["dose"] is not None:
        say("doses of the kept treatments (field %s, %d significant digits): %s", fields["dose"], DOSE_DIGITS,
            _values(trt_meta["dose_r"].to_numpy(), "µM"))
        note("doses", f"distinct doses among the kept treatments (µM, {DOSE_DIGITS} significant digits)",
             trt_meta["dose_r"].nunique())
    if fields["time"] is not None:
        say("times of the kept treatments (field %s): %s", fields["time"], _values(trt_meta["time_h"].to_numpy(), "h"))
        note("times", "distinct times among the kept treatments (h)", trt_meta["time_h"].nunique())
    pair_ids = trt_meta["pert_id"] + ":" + trt_meta["cell_id"]
    if by_dose:
        pair_ids = (pair_ids + ":" + [f"{d:g}uM" for d in trt_meta["dose_r"]]
                    + ":" + [f"{t:g}h" for t in trt_meta["time_h"]])
    pair_codes, pair_index = pd.factorize(pair_ids, sort=False)
    ctl_meta = meta[ctl]
    cell_codes, cell_index = pd.factorize(ctl_meta["cell_id"], sort=True)

    n_genes = len(keep_rows)
    sums = np.zeros((len(pair_index), n_genes))
    ctl_sums = np.zeros((len(cell_index), n_genes))
    ctl_sq = np.zeros(n_genes)    # z-score check of the control values (per-gene sums)
    ctl_neg = np.zeros(n_genes)
    has_one = np.zeros(n_genes, dtype=bool)
    group = pd.Series(-1, index=meta.index, dtype=np.int64)
    group[trt_meta.index] = pair_codes
    cgroup = pd.Series(-1, index=meta.index, dtype=np.int64)
    cgroup[ctl_meta.index] = cell_codes
    use = (trt | ctl).to_numpy()
    n_read = int(use.sum())
    if chunk_size is None:
        chunk_size = min(max(1, n_read), max(1, CHUNK_BYTES // (8 * max(1, len(keep_rows)))))
    progress = Progress(log, f"reading {n_read:,} of {n_matrix_cols:,} matrix columns x {len(keep_rows):,} genes",
                        n_read, unit="columns", every_s=PROGRESS_EVERY_S if progress_every is None
                        else progress_every)
    say("reading %d columns of %d matrix file(s) in chunks of %d columns", n_read, len(matrices), chunk_size)
    chunks = (chunk for k, m in enumerate(matrices)
              for chunk in m.iter_columns(list(meta.index[use & (file_of == k)]), list(keep_rows), chunk_size,
                                          validate=False, progress=progress))
    for chunk in chunks:
        x = chunk.data.to_numpy(dtype=np.float64).T  # samples x genes
        if not np.isfinite(x).all():
            i, j = np.argwhere(~np.isfinite(x))[0]
            raise InputError(f"{gctx_path}: non-finite value at gene {keep_rows[j]!r}, sample "
                             f"{chunk.data.columns[i]!r} ({int((~np.isfinite(x)).sum())} in this chunk)")
        if log2_transform:
            if (x < -1).any():
                raise InputError(f"{gctx_path}: values below -1 cannot be log2(x+1)-transformed; "
                                 "is the input already on log2 scale (set log2_transform: false)?")
            x = np.log2(x + 1.0)
        has_one |= (x == 1.0).any(axis=0)
        ids = chunk.data.columns.astype(str)
        _group_add(sums, group.loc[ids].to_numpy(), x)
        cg = cgroup.loc[ids].to_numpy()
        _group_add(ctl_sums, cg, x)
        xc = x[cg >= 0]
        ctl_sq += (xc ** 2).sum(axis=0)
        ctl_neg += (xc < 0).sum(axis=0)

    progress.finish()
    n_rep = np.bincount(pair_codes, minlength=len(pair_index))
    sums /= n_rep[:, None]  # in place: the pair means (no second pairs x genes array)
    expr = sums
    if log2_transform:
        keep_gene = ~has_one
        note("genes", "equal to 1 after log2(x+1) scaling in some sample (dropped)", int(has_one.sum()))
    else:
        keep_gene = np.ones(n_genes, dtype=bool)
        note("genes", "with a value of exactly 1.0 in some sample (kept: the paper's equal-to-1 filter skipped, "
             "input not log2(x+1)-transformed here, log2_transform false)", int(has_one.sum()))
        say("genes equal to 1: filter skipped, input not log2(x+1)-transformed here (the paper's rule is about "
            "values after its log2(x+1) scaling)")
    genes = pd.DataFrame({"gene_id": gene_ids[keep_gene], "symbol": symbols.to_numpy()[keep_gene]})
    if not keep_gene.any():
        raise InputError(f"{gctx_path}: every gene equals 1 in some sample; nothing left")
    gene_cols = pd.Index(gene_ids[keep_gene], name="gene_id")

    first = ~pd.Index(pair_ids).duplicated()
    pairs = pd.DataFrame({"pert_id": trt_meta["pert_id"].to_numpy()[first],
                          "cell_id": trt_meta["cell_id"].to_numpy()[first]}, index=pd.Index(pair_index, name="pair_id"))
    if by_dose:
        pairs["dose_um"] = trt_meta["dose_r"].to_numpy()[first]
        pairs["time_h"] = trt_meta["time_h"].to_numpy()[first]
        pairs["n_replicates"] = n_rep
    else:
        pairs["n_replicates"] = n_rep
        g = trt_meta.assign(pair=pair_codes, t_unknown=trt_meta["time_h"].isna()).groupby("pair")
        pairs["n_doses"] = g["dose_r"].nunique().reindex(range(len(pair_index))).to_numpy()
        pairs["n_times"] = g["time_h"].nunique().reindex(range(len(pair_index))).to_numpy()
        time_unknown = g["t_unknown"].any().reindex(range(len(pair_index))).to_numpy()
    expression = pd.DataFrame(expr if keep_gene.all() else expr[:, keep_gene], index=pairs.index, columns=gene_cols,
                              copy=False)

    if use_ctl:
        n_ctl = np.bincount(cell_codes, minlength=len(cell_index))
        ctl_df = pd.DataFrame(ctl_sums[:, keep_gene] / n_ctl[:, None], index=pd.Index(cell_index, name="cell_id"),
                              columns=gene_cols)
        note("cells", "with controls", len(cell_index))
        z_flag, z = looks_like_zscores(stats=_scale_stats(len(ctl_meta), ctl_sums.sum(axis=0)[keep_gene],
                                                          ctl_sq[keep_gene], ctl_neg[keep_gene]))
        z_what = f"the {len(ctl_meta)} {CONTROL} samples"
    else:
        ext = controls.copy()
        ext.index = ext.index.astype(str)
        ext.columns = ext.columns.astype(str)
        lacking = gene_cols[~gene_cols.isin(ext.columns)]
        if len(lacking):
            raise InputError(f"external controls lack {len(lacking)} kept gene(s), e.g. {list(lacking[:5])}")
        ctl_df = ext[list(gene_cols)].astype(np.float64)
        ctl_df.index.name = "cell_id"
        ctl_df.columns.name = "gene_id"
        z_flag, z = looks_like_zscores(ctl_df.to_numpy())
        z_what = f"the external controls table ({len(ctl_df)} cell lines)"
    say("control values (%s): median |per-gene mean| %.3g, median per-gene sd %.3g, %.1f%% negative, "
        "mean %.3g, sd %.3g", z_what, z["median_abs_gene_mean"], z["median_gene_sd"],
        100 * z["negative_fraction"], z["mean"], z["sd"])
    note("controls", "cell embedding values look like z-scores (1 = warned; rule of "
         "biokernels.io.cmap.looks_like_zscores)", int(z_flag))
    if z_flag:
        warn(f"{src}: the control embedding is built from {z_what}, whose values look like z-scores (level 4/5 "
             f"data; rule {z['rule']}: median |per-gene mean| {z['median_abs_gene_mean']:.3g}, median per-gene sd "
             f"{z['median_gene_sd']:.3g}, {100 * z['negative_fraction']:.0f}% negative): a mean of controls is then "
             "about 0 in every cell line and carries no cell identity; use level 3 (log2) input or give "
             "log-expression controls (controls_path)")
    cells = pd.Index(pairs["cell_id"].unique())
    no_ctl = cells[~cells.isin(ctl_df.index)]
    if len(no_ctl) and missing_controls == "error":
        where = "the external controls table" if controls is not None else f"{src} ({CONTROL} samples)"
        raise InputError(f"{len(no_ctl)} cell line(s) with treatments have no controls in {where} to embed "
                         f"them: {sorted(no_ctl)[:10]} (drug_screen.missing_controls: drop excludes their pairs "
                         "instead)")
    if len(no_ctl):
        gone = pairs["cell_id"].isin(no_ctl).to_numpy()
        note("cells", "without controls (dropped with their pairs)", len(no_ctl))
        note("pairs", "of cell lines without controls (dropped)", int(gone.sum()))
        if log is not None:
            log.info("cell lines without controls: %s", sorted(no_ctl))
        pairs, expression = pairs[~gone], expression[~gone]
        if not by_dose:
            time_unknown = time_unknown[~gone]
        cells = pd.Index(pairs["cell_id"].unique())
        if not len(cells):
            raise InputError(f"{gctx_path}: no cell line with treatments has controls")
    ctl_df = ctl_df.loc[sorted(cells)]
    if by_dose:
        note("pairs", "drug x cell line x dose x time rows (replicates averaged)", len(pairs))
        per_pair = pairs.groupby(["pert_id", "cell_id"]).size()
        note("pairs", "distinct drug x cell line pairs among the rows", len(per_pair))
        note("pairs", "drug x cell line pairs with several dose/time rows", int((per_pair > 1).sum()))
    else:
        several_d, several_t = pairs["n_doses"].to_numpy() > 1, pairs["n_times"].to_numpy() > 1
        note("pairs", "drug x cell line pairs (replicates averaged; doses and times pooled)", len(pairs))
        if fields["dose"] is not None:
            note("pairs", "pooling several doses (averaged as replicates)", int(several_d.sum()))
        else:
            note("pairs", "dose mix unknown: no dose field in the sample metadata", len(pairs))
        if fields["time"] is not None:
            note("pairs", "pooling several times (averaged as replicates)", int(several_t.sum()))
            note("pairs", "with a replicate of unknown time (not counted as pooling several times)",
                 int(time_unknown.sum()))
        else:
            note("pairs", "time mix unknown: no time field in the sample metadata", len(pairs))
        note("pairs", "pooling several doses or times (averaged as replicates)", int((several_d | several_t).sum()))
    note("drugs", "kept", pairs["pert_id"].nunique())
    note("cells", "kept", len(cells))
    return Preprocessed(expression=expression, pairs=pairs, controls=ctl_df, genes=genes,
                        counts=pd.DataFrame(counts, columns=["step", "reason", "n"]))
