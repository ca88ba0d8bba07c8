"""The writer of the synthetic CMAP screen (:func:`write_geo_like`):
instances simulated from a :class:`~biokernels.synth.drug_screen.model.DrugResponseModel`
written in the GEO GSE92742 file layout (``level3.gctx``, ``inst_info.txt``,
``pert_info.txt``, ``gene_info.txt``, ``cell_info.txt``) with a ``truth/``
folder of the model's noise-free values, and the planted defects (bad
compounds, missing doses, sentinel genes) the preprocessing must handle."""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.download import atomic_destination
from biokernels.io.gctx import GCT, write_gctx
from biokernels.seeds import check_seed, make_rng
from biokernels.synth.drug_screen.common import PERT_ID_FORMAT, _S_WRITE
from biokernels.synth.drug_screen.model import DrugResponseModel

BAD_ID_START = 90001  # planted bad compounds: BRD-SYN90001... (clear of the drugs' ids)
MISSING_CODE = -666.0
DOSE_UNIT = "µM"  # non-ASCII micro sign, as in GEO's L1000 tables
LINCS_DOSES = (0.04, 0.12, 0.37, 1.11, 3.33, 10.0)
_DOSE_P = (0.05, 0.05, 0.10, 0.10, 0.15, 0.55)
PERT_TIMES = (6, 24)
_TIME_P = (0.3, 0.7)
VEHICLE = {"pert_id": "DMSO", "pert_iname": "DMSO", "pert_type": "ctl_vehicle", "smiles": "CS(C)=O",
           "dose": 0.1, "unit": "%"}
# Strings RDKit cannot parse; a planted bad compound gets one of them (or "-666").
BAD_SMILES = ("-666", "C1CC(N", "not_a_smiles", "-666", "c1cccc1X", "CC(C)(C)(C)(C)C")
INST_COLUMNS = ["inst_id", "rna_plate", "rna_well", "pert_id", "pert_iname", "pert_type", "pert_dose",
                "pert_dose_unit", "pert_time", "pert_time_unit", "cell_id"]
GENE_COLUMNS = ["pr_gene_id", "pr_gene_symbol", "pr_gene_title", "pr_is_lm", "pr_is_bing"]
CELL_COLUMNS = ["cell_id", "cell_type", "primary_site", "sample_type"]
PERT_COLUMNS = ["pert_id", "pert_iname", "pert_type", "canonical_smiles"]


def _write_atomic(final: Path, writer) -> None:
    """Call ``writer(tmp_path)`` on a temp file next to ``final``, then move it
    onto ``final`` (:func:`biokernels.io.download.atomic_destination`); the
    temp file is removed when the writer fails."""
    with atomic_destination(final) as tmp:
        writer(tmp)


def _save_npy(path: Path, array: np.ndarray) -> None:
    with open(path, "wb") as fh:
        np.save(fh, array)


def _write_tsv(final: Path, df: pd.DataFrame) -> None:
    _write_atomic(final, lambda p: df.to_csv(p, sep="\t", index=False, encoding="utf-8", lineterminator="\n"))


def _replicate_counts(replicates, n: int, rng: np.random.Generator) -> np.ndarray:
    if isinstance(replicates, (int, np.integer)) and not isinstance(replicates, bool):
        lo = hi = int(replicates)
    else:
        lo, hi = (int(v) for v in replicates)
    if not 1 <= lo <= hi:
        raise ValueError(f"replicates must be an int >= 1 or (min, max) with 1 <= min <= max, got {replicates!r}")
    return np.full(n, lo) if lo == hi else rng.integers(lo, hi + 1, n)


def _wells() -> list[str]:
    return [f"{r}{c:02d}" for r in "ABCDEFGHIJKLMNOP" for c in range(1, 25)]


def _check_gene_info(gene_info: pd.DataFrame, genes: list[str]) -> pd.DataFrame:
    if not isinstance(gene_info, pd.DataFrame) or not {"pr_gene_id", "pr_is_lm"} <= set(gene_info.columns):
        raise InputError("gene_info: expected a DataFrame with columns 'pr_gene_id' and 'pr_is_lm'")
    gi = gene_info.copy()
    gi["pr_gene_id"] = gi["pr_gene_id"].astype(str)
    if gi["pr_gene_id"].duplicated().any():
        raise InputError(f"gene_info: duplicated pr_gene_id {list(gi['pr_gene_id'][gi['pr_gene_id'].duplicated()][:5])}")
    gi = gi.set_index("pr_gene_id")
    missing = [g for g in genes if g not in gi.index]
    if missing:
        raise InputError(f"gene_info: {len(missing)} gene(s) of the control matrix lack a row "
                         f"(pr_gene_id), e.g. {missing[:5]}")
    gi = gi.loc[genes].reset_index()
    try:
        gi["pr_is_lm"] = gi["pr_is_lm"].astype(int)
    except (TypeError, ValueError):
        raise InputError("gene_info: column 'pr_is_lm' must be 0/1") from None
    for col, default in (("pr_gene_symbol", None), ("pr_gene_title", "-666"), ("pr_is_bing", None)):
        if col not in gi.columns:
            gi[col] = gi["pr_gene_id"] if col == "pr_gene_symbol" else (gi["pr_is_lm"] if default is None else default)
    return gi[GENE_COLUMNS + [c for c in gi.columns if c not in GENE_COLUMNS]]


def write_geo_like(outdir: str | Path, model: DrugResponseModel, pairs: pd.DataFrame, gene_info: pd.DataFrame,
                   cell_info: pd.DataFrame, seed: int, replicates=(2, 3), controls_per_cell=(4, 8),
                   missing_dose_fraction: float = 0.01, bad_compound_fraction: float = 0.01,
                   sentinel_fraction: float = 0.025, sentinel_cells=(1, 3), extra_params: dict | None = None
                   ) -> dict:
    """Simulate instances from ``model`` and write them in the GSE92742 layout.

    Files (tab-separated UTF-8 tables; each written to a temp file, then
    moved into place with ``os.replace``):

    ``level3.gctx``
        rows = ``pr_gene_id`` (every gene of ``gene_info``), columns =
        ``inst_id``; float32 LINEAR-scale values ``x = 2^y - 1``, so that
        ``log2(x + 1) = y``, the modelled log2 expression of the instance
        (``y`` floored at 0.05; a non-sentinel ``x`` that would be exactly
        1.0 is moved to the next float32). Sentinel (batch-effect) entries
        are exactly 1.0. Written with :func:`biokernels.io.gctx.write_gctx`.
    ``inst_info.txt``
        ``inst_id, rna_plate, rna_well, pert_id, pert_iname, pert_type
        (trt_cp | ctl_vehicle), pert_dose, pert_dose_unit (µM; % for DMSO;
        -666 where the dose is missing), pert_time, pert_time_unit (h),
        cell_id``.
    ``pert_info.txt``
        ``pert_id, pert_iname, pert_type, canonical_smiles``: the drugs, the
        planted bad compounds and DMSO.
    ``gene_info.txt``, ``cell_info.txt``
        ``gene_info`` (``pr_gene_id, pr_gene_symbol, pr_gene_title,
        pr_is_lm, pr_is_bing``) and ``cell_info`` (``cell_id, cell_type,
        primary_site, sample_type``) as given.
    ``truth/pairs.tsv``
        ``pert_id, cell_id, is_target (1/0), smiles, pert_time,
        n_replicates, n_valid_replicates`` (replicates without a -666 dose).
    ``truth/mean_expression.npy``
        float32, shape (n_pairs, n_landmark): noise-free log2 expression, rows
        in ``pairs.tsv`` order, columns in ``truth/landmark_genes.txt`` order.
    ``truth/controls.tsv``
        The control matrix the model was built from (cells x genes).
    ``truth/drug_latent.tsv``, ``truth/cell_latent.tsv``
        ``pert_id, smiles, z_*`` and ``cell_id, is_target, u_*, s_*,
        viability_offset``.
    ``truth/params.json``
        Seed, sizes, model hyperparameters and every planted count.

    Simulation: each pair gets ``replicates`` instances (an int, or a random
    count in [min, max]) at one ``pert_time`` (6 h w.p. 0.3, else 24 h) and a
    dose per instance drawn from the L1000 doses (10 µM w.p. 0.55); observed
    ``y = mean_expression + N(0, noise_sd^2)`` independently per instance and
    gene. Each cell line gets a random number of DMSO instances in
    ``controls_per_cell`` with ``y = control + N(0, noise_sd^2)``.
    Planted for the preprocessing:

    * ``round(bad_compound_fraction * n_drugs)`` (>= 1 when the fraction is
      > 0) extra compounds ``BRD-SYN90001``... with SMILES ``-666`` or an
      unparseable string,
      each measured in 1-2 source cell lines (responses of a random valid
      "donor" drug); not in ``truth/pairs.tsv``;
    * ``round(missing_dose_fraction * n)`` (>= 1 when > 0) of the n
      valid-drug treatment instances get ``pert_dose = -666``;
    * ``round(sentinel_fraction * n_landmark)`` (>= 1 when > 0) landmark
      genes are exactly 1.0 in every instance of 1-3 random cell lines.

    Parameters
    ----------
    outdir : path
        Created if needed; existing files of the same names are replaced.
    model : DrugResponseModel
    pairs : DataFrame
        ``pert_id, cell_id, smiles, is_target``: one row per measured pair.
    gene_info : DataFrame
        GEO ``gene_info`` rows for every gene of the model (others ignored).
    cell_info : DataFrame
        ``cell_id, cell_type, primary_site, sample_type`` of the cell lines.
    seed : int
        Seed of the simulation streams (noise, doses, plates, planting).
    replicates : int or (int, int)
    controls_per_cell : int or (int, int)
    missing_dose_fraction, bad_compound_fraction, sentinel_fraction : float
        In [0, 0.5].
    sentinel_cells : (int, int)
        Range of cell lines per sentinel gene.
    extra_params : dict, optional
        Merged into ``params.json``.

    Returns
    -------
    dict: the content of ``params.json``.

    Raises
    ------
    InputError
        Inconsistent pairs / gene_info / cell_info (missing columns, cells
        without controls, duplicated pairs, unparseable SMILES).
    ValueError
        Fractions or counts out of range.
    """
    seed = check_seed(seed)
    outdir = Path(outdir)
    for name, f in (("missing_dose_fraction", missing_dose_fraction), ("bad_compound_fraction", bad_compound_fraction),
                    ("sentinel_fraction", sentinel_fraction)):
        if not 0 <= f <= 0.5:
            raise ValueError(f"{name} must be in [0, 0.5], got {f}")
    need = {"pert_id", "cell_id", "smiles", "is_target"}
    if not isinstance(pairs, pd.DataFrame) or not need <= set(pairs.columns):
        raise InputError(f"pairs: expected a DataFrame with columns {sorted(need)}")
    if len(pairs) == 0:
        raise InputError("pairs: no (drug, cell line) pairs; expected at least one")
    pairs = pairs[["pert_id", "cell_id", "smiles", "is_target"]].astype(
        {"pert_id": str, "cell_id": str, "smiles": str}).reset_index(drop=True)
    pairs["is_target"] = pairs["is_target"].astype(bool)
    dup = pairs.duplicated(["pert_id", "cell_id"])
    if dup.any():
        raise InputError(f"pairs: {int(dup.sum())} duplicated (pert_id, cell_id) pairs, e.g. "
                         f"{pairs.loc[dup, ['pert_id', 'cell_id']].head(3).values.tolist()}")
    genes = model.genes
    gi = _check_gene_info(gene_info, genes)
    lm_mask = gi["pr_is_lm"].to_numpy() == 1
    lm_genes = [g for g, m in zip(genes, lm_mask) if m]
    if not isinstance(cell_info, pd.DataFrame) or "cell_id" not in cell_info.columns:
        raise InputError("cell_info: expected a DataFrame with column 'cell_id'")
    cells = sorted(pairs["cell_id"].unique())
    model._cell_rows(cells, "pairs.cell_id")
    missing_info = sorted(set(cells) - set(cell_info["cell_id"].astype(str)))
    if missing_info:
        raise InputError(f"cell_info: no row for cell line(s) {missing_info[:10]}")
    drugs = pairs.drop_duplicates("pert_id")[["pert_id", "smiles"]].reset_index(drop=True)
    Zd = model.drug_latent(drugs["smiles"].tolist())  # raises on bad SMILES
    target_cells = sorted(pairs.loc[pairs["is_target"], "cell_id"].unique())
    source_cells = [c for c in cells if c not in target_cells] or cells

    rng = make_rng(seed, _S_WRITE)
    # ---- planted bad compounds (extra perts; responses of a donor drug)
    n_bad = int(round(bad_compound_fraction * len(drugs)))
    n_bad = max(n_bad, 1) if bad_compound_fraction > 0 else 0
    nums = [int(p[len("BRD-SYN"):]) for p in drugs["pert_id"] if p.startswith("BRD-SYN") and p[7:].isdigit()]
    start = max(max(nums, default=0) + 1, BAD_ID_START)
    bad_rows, bad_list = [], []
    for i in range(n_bad):
        pid = PERT_ID_FORMAT.format(start + i)
        donor = int(rng.integers(len(drugs)))
        bcells = sorted(rng.choice(source_cells, min(len(source_cells), int(rng.integers(1, 3))), replace=False).tolist())
        smi = BAD_SMILES[i % len(BAD_SMILES)]
        bad_list.append({"pert_id": pid, "smiles": smi, "donor_pert_id": drugs["pert_id"][donor], "cells": bcells})
        for c in bcells:
            bad_rows.append({"pert_id": pid, "cell_id": c, "smiles": drugs["smiles"][donor], "is_target": False})
    n_valid = len(pairs)
    allpairs = pd.concat([pairs, pd.DataFrame(bad_rows, columns=pairs.columns)], ignore_index=True)
    allpairs["is_target"] = allpairs["is_target"].astype(bool)
    allpairs["valid"] = np.arange(len(allpairs)) < n_valid
    allpairs["n_rep"] = _replicate_counts(replicates, len(allpairs), rng)
    allpairs["pert_time"] = rng.choice(PERT_TIMES, len(allpairs), p=_TIME_P)
    n_ctl = _replicate_counts(controls_per_cell, len(cells), rng)

    # ---- instance layout: per cell line and time, chunks of drugs share the
    # plates ..._X1, _X2, ...; replicate j of a pair is on plate X{j+1}; the
    # DMSO controls of a cell line sit on the plates of its first chunk.
    wells = _wells()
    chunk_size = len(wells) - int(n_ctl.max())
    if chunk_size < 100:
        raise ValueError(f"controls_per_cell must be <= {len(wells) - 100}, got {controls_per_cell!r}")
    inst = []  # (inst_id, plate, well, pair index or -1, cell_id, time)
    batch = 0
    pcell = allpairs["cell_id"].to_numpy()
    ptime = allpairs["pert_time"].to_numpy()
    nrep = allpairs["n_rep"].to_numpy()
    for ci, cell in enumerate(cells):
        first = True
        for t in PERT_TIMES:
            idx = np.flatnonzero((pcell == cell) & (ptime == t))
            for lo in range(0, len(idx), chunk_size):
                batch += 1
                chunk = idx[lo:lo + chunk_size]
                nplates = int(nrep[chunk].max())
                used = [0] * nplates
                plates = [f"CPS{batch:03d}_{cell}_{t}H_X{j + 1}" for j in range(nplates)]
                for i in chunk:
                    for j in range(int(nrep[i])):
                        inst.append((f"{plates[j]}:{wells[used[j]]}", plates[j], wells[used[j]], int(i), cell, t))
                        used[j] += 1
                if first:
                    for j in range(int(n_ctl[ci])):
                        q = j % nplates
                        inst.append((f"{plates[q]}:{wells[used[q]]}", plates[q], wells[used[q]], -1, cell, t))
                        used[q] += 1
                    first = False
    inst_df = pd.DataFrame(inst, columns=["inst_id", "rna_plate", "rna_well", "pair", "cell_id", "pert_time"])
    pair_idx = inst_df["pair"].to_numpy()
    is_trt = pair_idx >= 0
    n_inst = len(inst_df)

    # ---- metadata
    names = {p: ("syndrug-" + p[len("BRD-SYN"):] if p.startswith("BRD-SYN") else p.lower())
             for p in allpairs["pert_id"].unique()}
    pid = np.where(is_trt, allpairs["pert_id"].to_numpy()[np.maximum(pair_idx, 0)], VEHICLE["pert_id"])
    dose = np.where(is_trt, rng.choice(LINCS_DOSES, n_inst, p=_DOSE_P), VEHICLE["dose"])
    unit = np.where(is_trt, DOSE_UNIT, VEHICLE["unit"]).astype(object)
    valid_trt = np.flatnonzero(is_trt & allpairs["valid"].to_numpy()[np.maximum(pair_idx, 0)])
    n_missing = int(round(missing_dose_fraction * len(valid_trt)))
    n_missing = max(n_missing, 1) if missing_dose_fraction > 0 else 0
    miss = np.sort(rng.choice(valid_trt, n_missing, replace=False))
    dose[miss] = MISSING_CODE
    unit[miss] = "-666"
    inst_info = pd.DataFrame({
        "inst_id": inst_df["inst_id"], "rna_plate": inst_df["rna_plate"], "rna_well": inst_df["rna_well"],
        "pert_id": pid, "pert_iname": [names.get(p, VEHICLE["pert_iname"]) for p in pid],
        "pert_type": np.where(is_trt, "trt_cp", VEHICLE["pert_type"]), "pert_dose": dose.astype(float),
        "pert_dose_unit": unit, "pert_time": inst_df["pert_time"].astype(int), "pert_time_unit": "h",
        "cell_id": inst_df["cell_id"]})

    # ---- expression (genes x instances, float32 linear scale)
    G = len(genes)
    X = np.empty((G, n_inst), dtype=np.float32)
    truth_mean = np.empty((n_valid, int(lm_mask.sum())), dtype=np.float32)
    ctrl = model.controls.loc[cells].to_numpy()
    noise_rng = make_rng(seed, _S_WRITE, 1)
    n_floored = n_nudged = 0
    inst_cell = inst_df["cell_id"].to_numpy()
    for ci, cell in enumerate(cells):
        cols = np.flatnonzero(inst_cell == cell)
        pidx = pair_idx[cols]
        upairs = np.unique(pidx[pidx >= 0])
        mean = np.empty((len(cols), G))
        if len(upairs):
            mu = model.mean_expression(allpairs.loc[upairs, ["cell_id", "smiles"]])
            pos = np.searchsorted(upairs, pidx[pidx >= 0])
            mean[pidx >= 0] = mu[pos]
            keep = upairs < n_valid
            truth_mean[upairs[keep]] = mu[keep][:, lm_mask]
        mean[pidx < 0] = ctrl[ci]
        y = mean + noise_rng.normal(0.0, model.noise_sd, mean.shape)
        low = y < 0.05
        n_floored += int(low.sum())
        y[low] = 0.05
        x = (np.exp2(y) - 1.0).astype(np.float32)
        one = x == np.float32(1.0)
        n_nudged += int(one.sum())
        x[one] = np.nextafter(np.float32(1.0), np.float32(2.0))
        X[:, cols] = x.T

    # ---- sentinel (batch-effect) genes
    n_sent = int(round(sentinel_fraction * lm_mask.sum()))
    n_sent = max(n_sent, 1) if sentinel_fraction > 0 else 0
    lm_pos = np.flatnonzero(lm_mask)
    sent_pos = np.sort(rng.choice(lm_pos, n_sent, replace=False)) if n_sent else np.array([], int)
    lo_c, hi_c = sentinel_cells
    sentinels = {}
    n_sent_entries = 0
    for g in sent_pos:
        m = int(rng.integers(lo_c, hi_c + 1))
        sc = sorted(rng.choice(cells, min(m, len(cells)), replace=False).tolist())
        sentinels[genes[g]] = sc
        cols = np.flatnonzero(np.isin(inst_cell, sc))
        X[g, cols] = 1.0
        n_sent_entries += len(cols)

    # ---- tables
    pert_info = pd.DataFrame(
        [{"pert_id": p, "pert_iname": names[p], "pert_type": "trt_cp", "canonical_smiles": s}
         for p, s in zip(drugs["pert_id"], drugs["smiles"])]
        + [{"pert_id": b["pert_id"], "pert_iname": names[b["pert_id"]], "pert_type": "trt_cp",
            "canonical_smiles": b["smiles"]} for b in bad_list]
        + [{"pert_id": VEHICLE["pert_id"], "pert_iname": VEHICLE["pert_iname"], "pert_type": VEHICLE["pert_type"],
            "canonical_smiles": VEHICLE["smiles"]}], columns=PERT_COLUMNS)
    ci_df = cell_info.copy()
    ci_df["cell_id"] = ci_df["cell_id"].astype(str)
    ci_df = ci_df.set_index("cell_id").loc[cells].reset_index()
    for col in CELL_COLUMNS[1:]:
        if col not in ci_df.columns:
            ci_df[col] = "-666"
    ci_df = ci_df[CELL_COLUMNS + [c for c in ci_df.columns if c not in CELL_COLUMNS]]
    valid_miss = np.zeros(len(allpairs), int)
    np.add.at(valid_miss, pair_idx[miss], 1)
    truth_pairs = allpairs.iloc[:n_valid][["pert_id", "cell_id", "is_target", "smiles", "pert_time", "n_rep"]].copy()
    truth_pairs["is_target"] = truth_pairs["is_target"].astype(int)
    truth_pairs = truth_pairs.rename(columns={"n_rep": "n_replicates"})
    truth_pairs["n_valid_replicates"] = truth_pairs["n_replicates"] - valid_miss[:n_valid]
    src_drugs = set(pairs.loc[~pairs["is_target"], "pert_id"])
    tmask = pairs["is_target"].to_numpy()
    seen = pairs.loc[tmask, "pert_id"].isin(src_drugs).to_numpy()
    drug_lat = pd.concat([drugs, pd.DataFrame(Zd, columns=[f"z_{j}" for j in range(Zd.shape[1])])], axis=1)
    cell_lat = model.cell_latent(cells)
    cell_lat.insert(0, "is_target", [int(c in target_cells) for c in cells])
    cell_lat = cell_lat.reset_index()

    from rdkit import __version__ as rdkit_version
    params = {
        "generator": "biokernels.synth.drug_screen",
        "seed": seed,
        "sizes": {"n_genes": G, "n_landmark": int(lm_mask.sum()), "n_drugs": len(drugs), "n_cells": len(cells),
                  "n_targets": len(target_cells), "n_pairs": n_valid, "n_source_pairs": int((~tmask).sum()),
                  "n_target_pairs": int(tmask.sum()), "n_target_pairs_seen": int(seen.sum()),
                  "n_target_pairs_unseen": int((~seen).sum()),
                  "n_instances": n_inst, "n_trt_instances": int(is_trt.sum()),
                  "n_control_instances": int((~is_trt).sum())},
        "target_cells": target_cells,
        "replicates": replicates if isinstance(replicates, (int, np.integer)) else list(replicates),
        "controls_per_cell": (controls_per_cell if isinstance(controls_per_cell, (int, np.integer))
                              else list(controls_per_cell)),
        "noise_sd": model.noise_sd,
        "model": {"seed": model.seed, **model.params,
                  "hub_genes": [genes[g] for g in model.hub_genes]},
        "planted": {"n_bad_compounds": n_bad, "bad_compounds": bad_list,
                    "n_bad_compound_instances": int(np.isin(pid, [b["pert_id"] for b in bad_list]).sum()),
                    "n_missing_dose_instances": n_missing,
                    "n_pairs_without_valid_dose": int((truth_pairs["n_valid_replicates"] == 0).sum()),
                    "n_sentinel_genes": n_sent, "sentinel_genes": sentinels,
                    "n_sentinel_entries": n_sent_entries, "n_floored_values": n_floored,
                    "n_nudged_ones": n_nudged},
        "scale": "level3.gctx holds x = 2^y - 1 (linear); log2(x + 1) = modelled log2 expression y",
        "versions": {"rdkit": rdkit_version, "numpy": np.__version__},
    }
    if extra_params:
        params.update(extra_params)

    # ---- write (everything above is computed before the first file is touched)
    truth = outdir / "truth"
    truth.mkdir(parents=True, exist_ok=True)
    row_meta = gi.set_index("pr_gene_id")
    row_meta.index.name = "id"
    col_meta = inst_info.set_index("inst_id")
    col_meta.index.name = "id"
    data = pd.DataFrame(X, index=pd.Index(genes, name="id"), columns=pd.Index(inst_info["inst_id"], name="id"),
                        copy=False)
    write_gctx(outdir / "level3.gctx", GCT(data=data, row_meta=row_meta, col_meta=col_meta))  # atomic
    _write_tsv(outdir / "inst_info.txt", inst_info)
    _write_tsv(outdir / "pert_info.txt", pert_info)
    _write_tsv(outdir / "gene_info.txt", gi)
    _write_tsv(outdir / "cell_info.txt", ci_df)
    _write_tsv(truth / "pairs.tsv", truth_pairs)
    _write_atomic(truth / "mean_expression.npy", lambda p: _save_npy(p, truth_mean))
    _write_atomic(truth / "landmark_genes.txt", lambda p: Path(p).write_text("\n".join(lm_genes) + "\n"))
    ctl_out = model.controls.reset_index()
    _write_tsv(truth / "controls.tsv", ctl_out)
    _write_tsv(truth / "drug_latent.tsv", drug_lat)
    _write_tsv(truth / "cell_latent.tsv", cell_lat)
    _write_atomic(truth / "params.json",
                  lambda p: Path(p).write_text(json.dumps(params, indent=1, sort_keys=True, ensure_ascii=False) + "\n",
                                               encoding="utf-8"))
    return params
