"""Embedded default data of the DepMap study: PRISM-style drug viability
derived from the SAME hidden drug-response model as the drug-screening
default data (:class:`biokernels.synth.drug_screen.DrugResponseModel`).

The model is rebuilt from the drug screen's ``truth/`` folder, so the
expression a CMAP source model imputes carries the signal the viability
depends on (Radhakrishnan et al. 2023, Methods "DepMap analysis", SI Fig. S9)::

    viability_dc = tanh(kappa w'(z_d * s_c) / sqrt(k) + c_c) + N(0, noise_sd^2)

Output (CSV, the PRISM Repurposing secondary-screen layout reduced):
``broad_id``, ``name``, ``smiles``, ``depmap_id``, ``ccle_name``,
``viability``; planted defects are counted in ``truth/depmap_params.json``.

Notes: docs/depmap_notes.md, section "Embedded default data (synth/depmap)".
"""

from __future__ import annotations

import json
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.io.download import atomic_destination
from biokernels.errors import InputError
from biokernels.synth.drug_screen import DrugResponseModel, approved_drug_smiles

_S_DEPMAP = 21
VIABILITY_COLUMNS = ["broad_id", "name", "smiles", "depmap_id", "ccle_name", "viability"]
ABSENT_CELL = "SYNX01"  # planted: a DepMap cell line that CMAP does not have
CCLE_SUFFIX = "_SYNTHETIC"


def response_model(truth_dir: str | Path) -> DrugResponseModel:
    """Rebuild the drug screen's hidden model from its ``truth/`` folder.

    Parameters
    ----------
    truth_dir : path
        ``truth/`` of :func:`biokernels.synth.drug_screen.write_geo_like`
        (``params.json`` and ``controls.tsv`` are read).

    Returns
    -------
    DrugResponseModel identical to the one that wrote the screen.

    Raises
    ------
    InputError
        A file is missing or ``params.json`` lacks ``seed`` / ``model``.
    """
    truth_dir = Path(truth_dir)
    try:
        params = json.loads((truth_dir / "params.json").read_text(encoding="utf-8"))
        controls = pd.read_csv(truth_dir / "controls.tsv", sep="\t", index_col=0, dtype={"cell_id": str})
    except FileNotFoundError as e:
        raise InputError(f"{truth_dir}: the drug screen's truth folder is incomplete ({e.filename} missing)") from e
    if "seed" not in params or "model" not in params:
        raise InputError(f"{truth_dir / 'params.json'}: expected fields 'seed' and 'model'")
    controls.index = controls.index.astype(str)
    controls.columns = controls.columns.astype(str)
    keep = ("latent_dim", "cell_dim", "descriptor_weight", "modulation", "response_scale", "hub_fraction",
            "hub_scale", "cell_specific", "offset_sd", "noise_sd", "viability_gain")
    return DrugResponseModel(controls, int(params["seed"]), **{k: params["model"][k] for k in keep})


def generate_depmap(truth_dir: str | Path, pert_info: pd.DataFrame, out_csv: str | Path, seed: int,
                    n_cells: int = 6, n_overlap_top: int = 4, n_screen_drugs: int = 500, n_new_drugs: int = 150,
                    missing_fraction: float = 0.1, noise_sd: float = 0.1, n_no_structure: int = 6,
                    n_duplicates: int = 4, n_absent_cell_rows: int = 50) -> dict:
    """Write a PRISM-style viability table from the drug screen's hidden model.

    Parameters
    ----------
    truth_dir : path
        The drug screen's ``truth/`` folder (:func:`response_model`; its
        ``pairs.tsv`` gives each cell line's number of CMAP pairs).
    pert_info : DataFrame
        The screen's ``pert_info.txt`` (``pert_id``, ``pert_iname``,
        ``canonical_smiles``); only ``trt_cp`` rows whose SMILES the hidden
        model parses are drawn.
    out_csv : path
        Written atomically; ``depmap_params.json`` beside it records the
        design and the planted defects.
    seed : int
    n_cells, n_overlap_top : int
        Cell lines in DepMap, of which the ``n_overlap_top`` most profiled in
        CMAP; the rest drawn at random from the other CMAP cell lines.
    n_screen_drugs, n_new_drugs : int
        Drugs drawn from the screen, and approved drugs not in it.
    missing_fraction : float in [0, 1)
        Share of (drug, cell line) pairs left unmeasured.
    noise_sd : float >= 0
        Measurement noise of viability.
    n_no_structure, n_duplicates, n_absent_cell_rows : int >= 0
        Planted defects (see module docstring).

    Returns
    -------
    dict written to ``depmap_params.json``.

    Raises
    ------
    InputError
        The truth folder is incomplete or too few drugs / cell lines exist.
    ValueError
        Parameters out of range.
    """
    if not 0 <= missing_fraction < 1 or noise_sd < 0 or min(n_no_structure, n_duplicates, n_absent_cell_rows) < 0:
        raise ValueError("missing_fraction must be in [0, 1), noise_sd and planted counts >= 0")
    if not 1 <= n_overlap_top <= n_cells:
        raise ValueError(f"need 1 <= n_overlap_top <= n_cells, got {n_overlap_top} and {n_cells}")
    model = response_model(truth_dir)
    rng = np.random.default_rng([int(seed), _S_DEPMAP])
    truth_pairs = pd.read_csv(Path(truth_dir) / "pairs.tsv", sep="\t", dtype={"cell_id": str, "pert_id": str})
    ranked = truth_pairs["cell_id"].value_counts()
    ranked = ranked.sort_values(ascending=False, kind="stable").index.astype(str)
    if len(ranked) < n_cells + 1:
        raise InputError(f"{truth_dir}: {len(ranked)} cell lines; need more than n_cells={n_cells} "
                         "(the source keeps the others)")
    top = list(ranked[:n_overlap_top])
    others = list(rng.choice(np.asarray(ranked[n_overlap_top:]), n_cells - n_overlap_top, replace=False))
    cells = top + sorted(others)

    cp = pert_info[pert_info["pert_type"] == "trt_cp"].set_index("pert_id")
    ok = [p for p, s in cp["canonical_smiles"].items() if _parses(s)]
    if len(ok) < n_screen_drugs:
        raise InputError(f"pert_info: {len(ok)} valid screen compounds, fewer than n_screen_drugs={n_screen_drugs}")
    screen = sorted(rng.choice(np.asarray(ok), n_screen_drugs, replace=False))
    approved = approved_drug_smiles()
    in_screen = set(cp["canonical_smiles"]) | set(cp.index)
    pool = [p for p, s in approved.items() if p not in in_screen and s not in in_screen]
    if len(pool) < n_new_drugs:
        raise InputError(f"only {len(pool)} approved drugs outside the screen, fewer than n_new_drugs={n_new_drugs}")
    new = sorted(rng.choice(np.asarray(pool), n_new_drugs, replace=False))
    drugs = pd.DataFrame({"broad_id": screen + new,
                          "name": [cp.at[p, "pert_iname"] for p in screen] + [f"approved-{p[-5:]}" for p in new],
                          "smiles": [cp.at[p, "canonical_smiles"] for p in screen] + [approved[p] for p in new],
                          "in_screen": [True] * len(screen) + [False] * len(new)})
    grid = drugs.merge(pd.DataFrame({"cell_id": cells}), how="cross")
    grid = grid[rng.random(len(grid)) >= missing_fraction].reset_index(drop=True)
    grid["viability"] = model.viability(grid, noise_sd=noise_sd, seed=int(seed))

    planted_rows = []
    nostruct = pd.DataFrame({"broad_id": [f"BRD-NOSTRUCT{i:03d}" for i in range(n_no_structure)],
                             "name": [f"unknown-{i}" for i in range(n_no_structure)], "smiles": "",
                             "in_screen": False})
    if n_no_structure:
        ns = nostruct.merge(pd.DataFrame({"cell_id": cells}), how="cross")
        ns["viability"] = rng.uniform(-1, 1, len(ns))
        planted_rows.append(ns)
    if n_duplicates:
        dup = grid.iloc[rng.choice(len(grid), n_duplicates, replace=False)].copy()
        dup["viability"] = dup["viability"] + rng.normal(0.0, noise_sd or 0.1, len(dup))
        planted_rows.append(dup)
    if n_absent_cell_rows:
        ab = drugs.iloc[rng.choice(len(drugs), min(n_absent_cell_rows, len(drugs)), replace=False)].copy()
        ab["cell_id"] = ABSENT_CELL
        ab["viability"] = rng.uniform(-1, 1, len(ab))
        planted_rows.append(ab)
    table = pd.concat([grid, *planted_rows], ignore_index=True)
    table = table.iloc[rng.permutation(len(table))].reset_index(drop=True)
    table["ccle_name"] = table["cell_id"] + CCLE_SUFFIX
    table["depmap_id"] = "ACH-" + table["cell_id"].str.replace("SYN", "").str.zfill(6)
    table = table[VIABILITY_COLUMNS]
    out_csv = Path(out_csv)
    params = {"generator": "biokernels.synth.depmap", "seed": int(seed), "cells": cells,
              "cells_top_cmap": top, "n_drugs_screen": n_screen_drugs, "n_drugs_new": n_new_drugs,
              "missing_fraction": missing_fraction, "noise_sd": noise_sd, "n_rows": int(len(table)),
              "n_measured_pairs": int(len(grid)),
              "planted": {"no_structure_drugs": n_no_structure, "no_structure_rows": n_no_structure * len(cells),
                          "duplicated_rows": n_duplicates, "absent_cell_line": ABSENT_CELL if n_absent_cell_rows
                          else None, "absent_cell_rows": min(n_absent_cell_rows, len(drugs))},
              "viability": "tanh(kappa w'(z_d * s_c)/sqrt(k) + c_c) + noise, hidden model of the drug screen"}
    with atomic_destination(out_csv) as tmp:
        table.to_csv(tmp, index=False)
    with atomic_destination(out_csv.with_name("depmap_params.json")) as tmp:
        Path(tmp).write_text(json.dumps(params, indent=1, sort_keys=True) + "\n", encoding="utf-8")
    return params


def _parses(smiles) -> bool:
    from rdkit import Chem, RDLogger

    RDLogger.DisableLog("rdApp.*")
    return isinstance(smiles, str) and bool(smiles) and Chem.MolFromSmiles(smiles) is not None
