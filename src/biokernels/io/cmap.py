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
4. drops every gene that equals 1 after scaling in any kept sample (the
   paper: "removed all genes that were 1 upon log2(x+1) scaling", 135 genes
   on CMAP, batch effects per cell line);
5. averages the replicates of each (drug, cell line) pair, and the controls
   of each cell line: that mean is the cell line's embedding.

Each exclusion is counted with its reason; a matrix column without metadata,
NaN/inf in the matrix and a cell line without controls are errors. The GCTX
is read in column chunks, so a level-3 file with a million instances needs
memory for the averaged pairs only.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
from scipy import sparse

from biokernels.io.gctx import iter_gctx_columns, read_gctx_meta
from biokernels.io.networks import InputError

TREATMENT = "trt_cp"
CONTROL = "ctl_vehicle"
MISSING_CODE = -666.0
_UNIT_TO_UM = {"um": 1.0, "µm": 1.0, "μm": 1.0, "nm": 1e-3, "mm": 1e3, "pm": 1e-6, "m": 1e6}


def read_l1000_table(path: str | Path, required: list[str], index: str | None = None) -> pd.DataFrame:
    """Read a tab-separated L1000 metadata table (GEO ``*_info.txt``, gzip
    allowed) as strings.

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
        File missing, a required column missing, or duplicated index values
        (the message names the file, the column and up to 5 values).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: file not found")
    df = pd.read_csv(path, sep="\t", dtype=str, keep_default_na=False, encoding="utf-8",
                     encoding_errors="replace")
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
    header = pd.read_csv(path, sep="\t", nrows=0).columns
    index = next((c for c in ("inst_id", "sig_id") if c in header), header[0])
    return read_l1000_table(path, ["pert_id", "cell_id", "pert_type"], index=index)


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
    def text(values) -> np.ndarray:  # NaN/None -> "" (pandas 3 keeps NaN through astype(str))
        return np.array(["" if v is None or (isinstance(v, float) and np.isnan(v)) else str(v) for v in values])

    dose = text(pd.Series(dose))
    units = text(pd.Series(unit)) if unit is not None else np.array([""] * len(dose))
    out = np.full(len(dose), np.nan)
    pat = re.compile(r"^\s*([-+]?(?:\d+\.?\d*|\.\d+)(?:[eE][-+]?\d+)?)\s*([^\s\d]*)\s*$")
    for i, (d, u) in enumerate(zip(dose, units)):
        m = pat.match(d)
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


@dataclass
class Preprocessed:
    """Result of :func:`preprocess_cmap`.

    Attributes
    ----------
    expression : DataFrame, shape (n_pairs, n_genes)
        Replicate-averaged log2 expression; index = ``pert_id:cell_id``
        pair ids, columns = gene ids (str).
    pairs : DataFrame, shape (n_pairs, 3)
        ``pert_id``, ``cell_id``, ``n_replicates``, same index.
    controls : DataFrame, shape (n_cells, n_genes)
        Mean control expression per cell line (the cell embedding).
    genes : DataFrame
        Kept genes: ``gene_id``, ``symbol``.
    counts : DataFrame
        ``step``, ``reason``, ``n``: every exclusion and its count.
    """

    expression: pd.DataFrame
    pairs: pd.DataFrame
    controls: pd.DataFrame
    genes: pd.DataFrame
    counts: pd.DataFrame = field(default_factory=pd.DataFrame)


def _sample_frame(meta: pd.DataFrame, source: str) -> pd.DataFrame:
    for col in ("pert_id", "cell_id", "pert_type"):
        if col not in meta.columns:
            raise InputError(f"{source}: sample metadata lacks column {col!r}; expected GEO inst_info/sig_info "
                             "columns pert_id, cell_id, pert_type and pert_dose (+pert_dose_unit) or pert_idose")
    if "pert_dose" in meta.columns:
        dose = parse_dose_um(meta["pert_dose"], meta["pert_dose_unit"] if "pert_dose_unit" in meta else None)
    elif "pert_idose" in meta.columns:
        dose = parse_dose_um(meta["pert_idose"])
    else:
        raise InputError(f"{source}: sample metadata has neither 'pert_dose' nor 'pert_idose'")
    return pd.DataFrame({"pert_id": meta["pert_id"].astype(str).to_numpy(),
                         "cell_id": meta["cell_id"].astype(str).to_numpy(),
                         "pert_type": meta["pert_type"].astype(str).to_numpy(),
                         "dose_um": dose}, index=meta.index.astype(str))


def _gene_id(value) -> str:
    """Entrez gene id as text: ``5720.0`` (float metadata) -> ``"5720"``."""
    try:
        f = float(value)
        return str(int(f)) if f.is_integer() else str(value)
    except (TypeError, ValueError):
        return str(value)


def _group_add(out: np.ndarray, codes: np.ndarray, x: np.ndarray) -> None:
    """``out[g] += x[i]`` for every row i with code ``g = codes[i] >= 0``, by
    a sparse indicator product (scipy.sparse), not a Python loop."""
    m = codes >= 0
    if not m.any():
        return
    ind = sparse.csr_matrix((np.ones(int(m.sum())), (codes[m], np.arange(int(m.sum())))),
                            shape=(out.shape[0], int(m.sum())))
    out += ind @ x[m]


def preprocess_cmap(gctx_path: str | Path, valid_drugs, *, sample_meta: pd.DataFrame | None = None,
                    sample_meta_source: str | None = None, gene_info: pd.DataFrame | None = None,
                    log2_transform: bool = True, controls: pd.DataFrame | None = None,
                    missing_controls: str = "error", chunk_size: int = 20000, log=None) -> Preprocessed:
    """Preprocess L1000 expression into per-(drug, cell line) means and the
    cell-line control embedding.

    Parameters
    ----------
    gctx_path : path
        GCTX, rows = genes (``pr_gene_id``), columns = samples.
    valid_drugs : iterable of str
        ``pert_id`` of the compounds with a parseable SMILES (the index of the
        fingerprint table).
    sample_meta : DataFrame, optional
        Index = sample ids; columns ``pert_id``, ``cell_id``, ``pert_type`` and
        ``pert_dose`` (+ ``pert_dose_unit``) or ``pert_idose``. Default: the
        GCTX column metadata.
    sample_meta_source : str, optional
        Name used in error messages (the file the metadata came from).
    gene_info : DataFrame, optional
        GEO ``gene_info`` with ``pr_gene_id``, ``pr_gene_symbol`` and
        ``pr_is_lm``: only landmark genes are kept. Default: every row.
    log2_transform : bool
        Apply ``log2(x + 1)`` (input on linear scale).
    controls : DataFrame, optional
        External control expression (cells x gene ids, final scale) used as
        the cell embedding instead of the ``ctl_vehicle`` samples (e.g. a
        level-5 input, which has no controls).
    missing_controls : {"error", "drop"}
        A cell line with treatments but no controls is an error, or its
        pairs are dropped and counted.
    chunk_size : int
        Columns read per chunk.
    log : logging.Logger, optional
        Receives one line per exclusion count.

    Returns
    -------
    Preprocessed

    Raises
    ------
    InputError
        Matrix columns without metadata, NaN/inf in the matrix, no sample
        left after a filter, or a kept cell line without controls (named).
    """
    gctx_path = Path(gctx_path)
    if missing_controls not in ("error", "drop"):
        raise ValueError(f"missing_controls: expected 'error' or 'drop', got {missing_controls!r}")
    counts: list[dict] = []

    def note(step: str, reason: str, n: int) -> None:
        counts.append({"step": step, "reason": reason, "n": int(n)})
        if log is not None:
            log.info("%s: %s: %d", step, reason, n)

    col_meta = read_gctx_meta(gctx_path, axis="col")
    row_meta = read_gctx_meta(gctx_path, axis="row")
    src = sample_meta_source or f"{gctx_path} (column metadata)"
    meta = _sample_frame(col_meta if sample_meta is None else sample_meta, src)
    cols = col_meta.index.astype(str)
    no_meta = cols[~cols.isin(meta.index)]
    if len(no_meta):
        raise InputError(f"{gctx_path}: {len(no_meta)} column id(s) have no row in {src}, "
                         f"e.g. {list(no_meta[:5])}")
    note("samples", "in matrix", len(cols))
    if len(meta) > len(cols):
        note("samples", "in metadata but not in the matrix (ignored)", len(meta) - int(meta.index.isin(cols).sum()))
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
        lm = set(gi.loc[gi["pr_is_lm"].astype(str).isin(["1", "1.0", "True", "true"]), "pr_gene_id"])
        keep_rows = rows[gene_of_row.isin(lm).to_numpy()]
        note("genes", "not landmark (dropped)", len(rows) - len(keep_rows))
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
    bad_dose = is_trt & meta["dose_um"].isna()
    note("samples", "treatment dose unparseable (dropped)", int(bad_dose.sum()))
    neg_dose = is_trt & (meta["dose_um"] < 0)
    note("samples", "treatment dose < 0, e.g. -666 missing code (dropped)", int(neg_dose.sum()))
    valid = set(map(str, valid_drugs))
    no_smiles = is_trt & ~bad_dose & ~neg_dose & ~meta["pert_id"].isin(valid)
    note("samples", "treatment without a parseable SMILES (dropped)", int(no_smiles.sum()))
    note("drugs", "without a parseable SMILES (dropped)", meta.loc[no_smiles, "pert_id"].nunique())
    trt = is_trt & ~bad_dose & ~neg_dose & ~no_smiles
    if not trt.any():
        raise InputError(f"{gctx_path}: no {TREATMENT} sample left after the dose and SMILES filters")
    use_ctl = controls is None
    if use_ctl:
        ctl = is_ctl
    else:
        ctl = pd.Series(False, index=meta.index)
        note("samples", "ctl_vehicle samples not used (external controls given)", int(is_ctl.sum()))

    trt_meta = meta[trt]
    pair_ids = trt_meta["pert_id"] + ":" + trt_meta["cell_id"]
    pair_codes, pair_index = pd.factorize(pair_ids, sort=False)
    ctl_meta = meta[ctl]
    cell_codes, cell_index = pd.factorize(ctl_meta["cell_id"], sort=True)

    n_genes = len(keep_rows)
    sums = np.zeros((len(pair_index), n_genes))
    ctl_sums = np.zeros((len(cell_index), n_genes))
    has_one = np.zeros(n_genes, dtype=bool)
    group = pd.Series(-1, index=meta.index, dtype=np.int64)
    group[trt_meta.index] = pair_codes
    cgroup = pd.Series(-1, index=meta.index, dtype=np.int64)
    cgroup[ctl_meta.index] = cell_codes
    wanted = meta.index[trt | ctl]
    for chunk in iter_gctx_columns(gctx_path, cid=list(wanted), rid=list(keep_rows), chunk_size=chunk_size):
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
        _group_add(ctl_sums, cgroup.loc[ids].to_numpy(), x)

    n_rep = np.bincount(pair_codes, minlength=len(pair_index))
    expr = sums / n_rep[:, None]
    keep_gene = ~has_one
    note("genes", "equal to 1 after log2(x+1) scaling in some sample (dropped)", int(has_one.sum()))
    genes = pd.DataFrame({"gene_id": gene_ids[keep_gene], "symbol": symbols.to_numpy()[keep_gene]})
    if not keep_gene.any():
        raise InputError(f"{gctx_path}: every gene equals 1 in some sample; nothing left")
    gene_cols = pd.Index(gene_ids[keep_gene], name="gene_id")

    first = ~pd.Index(pair_ids).duplicated()
    pairs = pd.DataFrame({"pert_id": trt_meta["pert_id"].to_numpy()[first],
                          "cell_id": trt_meta["cell_id"].to_numpy()[first]}, index=pd.Index(pair_index, name="pair_id"))
    pairs["n_replicates"] = n_rep
    expression = pd.DataFrame(expr[:, keep_gene], index=pairs.index, columns=gene_cols)

    if use_ctl:
        n_ctl = np.bincount(cell_codes, minlength=len(cell_index))
        ctl_df = pd.DataFrame(ctl_sums[:, keep_gene] / n_ctl[:, None], index=pd.Index(cell_index, name="cell_id"),
                              columns=gene_cols)
        note("cells", "with controls", len(cell_index))
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
        cells = pd.Index(pairs["cell_id"].unique())
        if not len(cells):
            raise InputError(f"{gctx_path}: no cell line with treatments has controls")
    ctl_df = ctl_df.loc[sorted(cells)]
    note("pairs", "drug x cell line pairs (replicates averaged)", len(pairs))
    note("drugs", "kept", pairs["pert_id"].nunique())
    note("cells", "kept", len(cells))
    return Preprocessed(expression=expression, pairs=pairs, controls=ctl_df, genes=genes,
                        counts=pd.DataFrame(counts, columns=["step", "reason", "n"]))
