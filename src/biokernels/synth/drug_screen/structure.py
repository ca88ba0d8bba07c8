"""A synthetic CMAP screen on real structure (:func:`generate_from_structure`):
real (drug, cell line) pairs, SMILES and control profiles (e.g. LINCS 2020's)
with the response simulated by the hidden model and written by the GEO
writer."""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from biokernels.errors import InputError
from biokernels.seeds import check_seed
from biokernels.synth.drug_screen.common import PERT_ID_FORMAT
from biokernels.synth.drug_screen.geo_writer import write_geo_like
from biokernels.synth.drug_screen.model import DrugResponseModel, _check_controls


def generate_from_structure(outdir: str | Path, seed: int, pairs: pd.DataFrame, controls: pd.DataFrame,
                            gene_info: pd.DataFrame | None = None, cell_info: pd.DataFrame | None = None,
                            replicates=1, n_targets: int = 5, noise_sd: float = 0.25, model: dict | None = None,
                            **write_kw) -> dict:
    """A screen with real structure (pairs, control profiles, SMILES) and the
    simulated response.

    Drugs are identified by SMILES; ids ``BRD-SYN00001``... in order of first
    appearance in ``pairs`` (or the ``pert_id`` column when given). Targets
    are the ``n_targets`` cell lines with the most pairs (ties: smaller
    ``cell_id``).

    Parameters
    ----------
    outdir : path
    seed : int
    pairs : DataFrame
        ``cell_id``, ``smiles`` (optional ``pert_id``), one row per measured
        pair (e.g. LINCS: 78,569 pairs of 8,316 SMILES).
    controls : DataFrame, shape (n_cells, n_genes)
        Control expression (log2 scale), index = cell ids, columns = gene ids
        (e.g. 165 real control profiles of the 978 landmarks).
    gene_info : DataFrame, optional
        GEO ``gene_info`` with a row per control gene; default: every control
        gene a landmark, symbol = id.
    cell_info : DataFrame, optional
        Default: ``cell_type`` / ``primary_site`` ``-666``, ``sample_type``
        ``tumor``.
    replicates : int or (int, int)
    n_targets : int
        Must be smaller than the number of cell lines in ``pairs``.
    noise_sd : float
    model : dict, optional
        Extra keyword arguments of :class:`DrugResponseModel`.
    **write_kw
        Extra keyword arguments of :func:`write_geo_like`.

    Returns
    -------
    dict: the content of ``truth/params.json``.

    Raises
    ------
    InputError
        ``pairs`` empty, lacking columns, with empty ids, duplicated
        (cell_id, smiles), unparseable SMILES, a pert_id with two SMILES, or
        cell ids without a control profile (named); ``controls`` empty,
        non-numeric or with NaN/inf; ``gene_info`` without a row for a gene.
    ValueError
        ``n_targets`` out of range.
    """
    seed = check_seed(seed)
    if not isinstance(pairs, pd.DataFrame) or not {"cell_id", "smiles"} <= set(pairs.columns):
        raise InputError("pairs: expected a DataFrame with columns 'cell_id' and 'smiles'")
    if len(pairs) == 0:
        raise InputError("pairs: no (cell_id, smiles) rows; expected at least one pair")
    ctl = _check_controls(controls)
    p = pd.DataFrame({"cell_id": pairs["cell_id"], "smiles": pairs["smiles"]})
    if p.isna().any().any() or (p.astype(str).apply(lambda s: s.str.strip()) == "").any().any():
        raise InputError("pairs: empty or missing cell_id / smiles values")
    p = p.astype(str)
    missing = sorted(set(p["cell_id"]) - set(ctl.index))
    if missing:
        raise InputError(f"pairs.cell_id: {len(missing)} cell line(s) without a control profile in controls: "
                         f"{missing[:10]}")
    dup = p.duplicated(["cell_id", "smiles"])
    if dup.any():
        raise InputError(f"pairs: {int(dup.sum())} duplicated (cell_id, smiles) rows, e.g. "
                         f"{p.loc[dup].head(3).values.tolist()}")
    if "pert_id" in pairs.columns:
        p["pert_id"] = pairs["pert_id"].astype(str).to_numpy()
        per = p.groupby("pert_id")["smiles"].nunique()
        per_s = p.groupby("smiles")["pert_id"].nunique()
        if (per > 1).any() or (per_s > 1).any():
            raise InputError("pairs.pert_id: each pert_id must have exactly one SMILES and vice versa")
    else:
        uniq = list(dict.fromkeys(p["smiles"]))
        ids = {s: PERT_ID_FORMAT.format(i + 1) for i, s in enumerate(uniq)}
        p["pert_id"] = p["smiles"].map(ids)
    counts = p.groupby("cell_id").size()
    if not 1 <= n_targets < len(counts):
        raise ValueError(f"n_targets must be in 1..{len(counts) - 1} (cell lines in pairs), got {n_targets}")
    ranked = sorted(counts.items(), key=lambda kv: (-kv[1], kv[0]))
    targets = {c for c, _ in ranked[:n_targets]}
    p["is_target"] = p["cell_id"].isin(targets)
    p = p.sort_values(["cell_id", "pert_id"], kind="stable").reset_index(drop=True)
    gi = gene_info if gene_info is not None else pd.DataFrame(
        {"pr_gene_id": list(ctl.columns), "pr_gene_symbol": list(ctl.columns), "pr_gene_title": "-666",
         "pr_is_lm": 1, "pr_is_bing": 1})
    ci = cell_info if cell_info is not None else pd.DataFrame(
        {"cell_id": list(ctl.index), "cell_type": "-666", "primary_site": "-666", "sample_type": "tumor"})
    m = DrugResponseModel(ctl, seed, noise_sd=noise_sd, **(model or {}))
    return write_geo_like(outdir, m, p[["pert_id", "cell_id", "smiles", "is_target"]], gi, ci, seed,
                          replicates=replicates, extra_params={"mode": "from_structure"}, **write_kw)
