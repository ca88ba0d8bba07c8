"""The body of the CMAP preprocessing on open matrices: genes kept, samples
filtered (each exclusion counted), the matrix read in column chunks of only
the columns and genes used, replicate means per pair and the control mean
per cell line (:class:`Preprocessed`)."""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
from scipy import sparse

from biokernels.errors import InputError
from biokernels.io.cmap.doses import DOSE_DIGITS, round_dose
from biokernels.io.cmap.samples import CONTROL, DOSE_TIME_KEY, TREATMENT, _sample_frame
from biokernels.io.cmap.zscores import _scale_stats, looks_like_zscores
from biokernels.io.download import PROGRESS_EVERY_S, Progress


CHUNK_BYTES = 256 << 20  # float64 bytes of one chunk of samples read by preprocess_cmap (chunk_size default)


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
