"""Virtual drug screening by kernel transfer (Radhakrishnan, Ruiz Luyten,
Prasad & Uhler, Nat Commun 2023: Results "Transfer learning via projection
and translation in virtual drug screening", Definitions 1-3, Fig. 4; Methods
"Details for virtual drug screening").

A sample is a (drug, cell line) pair with features ``x = [drug | cell]``
(Morgan fingerprint | control expression) and as label the replicate-averaged
expression of the kept genes. The source model is NTK kernel ridge
(:mod:`biokernels.kernels.ntk`) on the source cell lines; each target cell
line gets five predictors, compared by 5-fold cross-validation: ``mean``,
``baseline`` (the NTK on the target alone), ``projection`` (Definition 1, on
``f_s(x)``), ``translation`` (Definition 2, ``f_s(x) + f_c(x)``) and
``projection_translation`` (Definition 3, on ``[f_s(x) | x]``).

Notes: docs/drug_screen_notes.md, section "The study protocol
(studies/drug_screen/protocol)".
"""

from __future__ import annotations

from dataclasses import dataclass

import numpy as np
import pandas as pd
import torch

from biokernels.studies.drug_screen.tables import MODELS, assign_folds, split_cell_lines  # noqa: F401 (re-exported)
from biokernels.errors import InputError
from biokernels.kernels.ntk import ntk_relu_indexed
from biokernels.metrics import pearson_r_centred, pearson_r_paper, per_sample_cosine, per_sample_r2
from biokernels.solvers.ridge import NTKRidge, predict_ridge, solve_ridge

KERNEL_MODELS = MODELS[1:]


# --------------------------------------------------------------------------- features


def unit_rows(X: np.ndarray, name: str) -> np.ndarray:
    """Rows scaled to unit Euclidean norm.

    Raises
    ------
    InputError
        A row is zero (e.g. a fingerprint with no bit set), naming its index.
    """
    X = np.asarray(X, dtype=np.float64)
    norms = np.linalg.norm(X, axis=1, keepdims=True)
    if (norms == 0).any():
        i = int(np.flatnonzero(norms[:, 0] == 0)[0])
        raise InputError(f"{name}: row {i} is all zero; cannot scale it to unit norm")
    return X / norms


def cell_embedding(controls: pd.DataFrame, source: list[str]) -> pd.DataFrame:
    """Cell-line features: control expression minus its mean over the source
    cell lines, scaled to unit norm (cells x genes)."""
    centred = controls - controls.loc[source].mean(axis=0)
    return pd.DataFrame(unit_rows(centred.to_numpy(), "cell embedding"), index=controls.index,
                        columns=controls.columns)


@dataclass
class ScreenData:
    """Arrays of one screen, aligned by pair.

    Attributes
    ----------
    Y : array (n_pairs, d), log2 expression
    drug_idx, cell_idx : int arrays (n_pairs,), rows of ``D`` and ``C``
    D : array (n_drugs, p_d), unit-norm drug features
    C : array (n_cells, p_c), unit-norm cell features
    folds : DataFrame from :func:`assign_folds`, same order as ``Y``
    drugs, cells : Index of ids for the rows of D and C
    genes : Index of gene ids (columns of Y)
    """

    Y: np.ndarray
    drug_idx: np.ndarray
    cell_idx: np.ndarray
    D: np.ndarray
    C: np.ndarray
    folds: pd.DataFrame
    drugs: pd.Index
    cells: pd.Index
    genes: pd.Index

    def features(self, idx: np.ndarray) -> np.ndarray:
        """Dense ``[drug | cell]`` features of the pairs ``idx`` (n, p_d + p_c)."""
        return np.hstack([self.D[self.drug_idx[idx]], self.C[self.cell_idx[idx]]])


def build_screen(expression: pd.DataFrame, folds: pd.DataFrame, fingerprints: pd.DataFrame,
                 controls: pd.DataFrame, source: list[str]) -> ScreenData:
    """Assemble :class:`ScreenData` from the preprocessed tables.

    Raises
    ------
    InputError
        A pair's drug has no fingerprint or its cell line no control row.
    """
    folds = folds.loc[folds["role"] != "dropped"]
    expression = expression.loc[folds.index]
    drugs = pd.Index(sorted(folds["pert_id"].unique()))
    miss = drugs[~drugs.isin(fingerprints.index)]
    if len(miss):
        raise InputError(f"fingerprints: {len(miss)} drug(s) of the screen have none, e.g. {list(miss[:5])}")
    cells = pd.Index(sorted(folds["cell_id"].unique()))
    miss = cells[~cells.isin(controls.index)]
    if len(miss):
        raise InputError(f"controls: {len(miss)} cell line(s) have no control expression: {list(miss[:10])}")
    D = unit_rows(fingerprints.loc[drugs].to_numpy(np.float64), "drug fingerprints")
    C = cell_embedding(controls.loc[cells], [c for c in source if c in cells]).to_numpy()
    return ScreenData(Y=expression.to_numpy(np.float64), drug_idx=drugs.get_indexer(folds["pert_id"]),
                      cell_idx=cells.get_indexer(folds["cell_id"]), D=D, C=C, folds=folds,
                      drugs=drugs, cells=cells, genes=expression.columns)


# --------------------------------------------------------------------------- kernel ridge


def krr_fit_predict(X_train: np.ndarray, Y_train: np.ndarray, X_test: np.ndarray, lam: float, *,
                    kernel_params: dict | None = None, device: str | torch.device = "cpu",
                    solver: str = "cholesky") -> np.ndarray:
    """NTK kernel ridge with an intercept on dense features.

    Fits ``(K + lam I) alpha = Y - mean(Y)`` and predicts
    ``k(x, X) alpha + mean(Y)``, in float64, with
    :class:`biokernels.solvers.ridge.NTKRidge` (``fit_intercept=True``).

    Parameters
    ----------
    X_train : array (n, p); Y_train : array (n, d) or (n,); X_test : array (m, p)
    lam : float >= 0, absolute ridge
    kernel_params : dict, optional
        ``w_std``/``b_std`` of :func:`biokernels.kernels.ntk.ntk_relu`.

    Returns
    -------
    array (m, d) or (m,), float64
    """
    model = NTKRidge(lam=lam, solver=solver, device=device, dtype=torch.float64, fit_intercept=True,
                     **(kernel_params or {}))
    return model.fit(X_train, Y_train).predict(X_test)


class SourceModel:
    """The source model: NTK kernel ridge on ``[drug | cell]`` over the source
    pairs (Radhakrishnan et al. 2023, Methods, Eq. 1-2, with an intercept).

    The exact solvers build the n x n Gram from the drug and cell Grams by
    index (:func:`biokernels.kernels.ntk.ntk_relu_indexed`) in ``dtype``; the
    full CMAP source (~54k pairs) then needs one 11.7 GB float32 buffer. The
    matrix-free solvers (:mod:`biokernels.solvers.matrix_free`) work on
    :class:`biokernels.kernels.ntk_operator.PairNTKOperator` and never form it.

    Parameters
    ----------
    lam : float
        Absolute ridge (paper: 1000, chosen on a 10k random subset).
    kernel_params : dict, optional
        ``w_std``/``b_std`` of the NTK.
    device : torch device
    solver : {"auto", "cholesky", "cg", "cg_matrix_free", "nystrom", "falkon"}
        ``cholesky``/``cg``: :func:`biokernels.solvers.ridge.solve_ridge` on
        the formed Gram. ``cg_matrix_free``: :func:`~biokernels.solvers.matrix_free.cg_ridge`
        (exact to its tolerance). ``nystrom``:
        :func:`~biokernels.solvers.matrix_free.nystrom_ridge` (an
        approximation, with its certificate logged). ``falkon``:
        :func:`~biokernels.solvers.falkon.falkon_ridge` (the same
        approximation with leverage-score centres, in two M x M buffers
        instead of seven; with ``falkon_exact`` not ``never``, then the
        exact system by CG preconditioned with it). ``auto``: the exact
        Cholesky while its Gram fits ``settings["memory_budget_gib"]``
        (:func:`~biokernels.solvers.matrix_free.choose_solver`), ``falkon``
        beyond that, with M capped by the same budget; the choice and its
        reason are in ``info_``.
    dtype : torch dtype
        float32 (default, what fits at full scale) or float64: the Gram of
        the exact solvers, the kernel blocks of the matrix-free ones.
    block : int
        Rows per block when predicting with the exact solvers.
    settings : dict, optional
        Keys of :data:`SOLVER_SETTINGS` (the config's
        ``drug_screen.solver_settings``); missing keys take its defaults.
    comm : biokernels.distributed.Comm, optional
        Processes sharing a matrix-free solve (rows split between them).
    log : logging.Logger, optional
        Progress of the matrix-free solvers (residuals, passes).
    seed : int
        Centres and preconditioner columns of the matrix-free solvers.

    Attributes
    ----------
    alpha_ : torch.Tensor (n_train, d) or (M, d), dual coefficients (set by ``fit``)
    mu_ : ndarray (d,), the intercept: mean training expression (float64)
    info_ : dict, the solver's ``info`` plus ``solver_choice``
    solver_ : str, the solver that ran
    """

    def __init__(self, lam: float, kernel_params: dict | None = None, device="cpu", solver: str = "auto",
                 dtype=torch.float32, block: int = 4096, settings: dict | None = None, comm=None, log=None,
                 seed: int = 0):
        from biokernels.solvers.matrix_free import SOLVERS

        if solver not in SOLVERS:
            raise ValueError(f"solver: expected one of {SOLVERS}, got {solver!r}")
        unknown = set(settings or {}) - set(SOLVER_SETTINGS)
        if unknown:
            raise ValueError(f"solver settings: unknown key(s) {sorted(unknown)}; known {sorted(SOLVER_SETTINGS)}")
        self.lam, self.kernel_params, self.device = lam, kernel_params or {}, device
        self.solver, self.dtype, self.block = solver, dtype, block
        self.settings = {**SOLVER_SETTINGS, **(settings or {})}
        self.comm, self.log, self.seed = comm, log, seed

    def _choose(self, n: int, c: int) -> tuple[str, str]:
        from biokernels.solvers.matrix_free import choose_solver

        if self.solver != "auto":
            return self.solver, "set in the config"
        st = self.settings
        solver, why = choose_solver(n, c, st["memory_budget_gib"], torch.finfo(self.dtype).bits // 8)
        if solver == "cholesky" and self.comm is not None and self.comm.world_size > 1:
            solver, why = "falkon", f"{self.comm.world_size} processes share only the matrix-free solvers"
        return solver, why

    def _operator(self, data: "ScreenData", idx: np.ndarray):
        from biokernels.kernels.ntk_operator import PairNTKOperator

        return PairNTKOperator(data.D, data.C, (data.drug_idx[idx], data.cell_idx[idx]), dtype=self.dtype,
                               device=self.device, block_bytes=int(self.settings["block_mib"]) * 2**20,
                               **self.kernel_params)

    def fit(self, data: ScreenData, train: np.ndarray) -> "SourceModel":
        """Fit on the pairs ``train`` (int indices into ``data``).

        Raises
        ------
        ValueError
            From the solver (lam, NaN, not positive definite, ...).
        """
        self.solver_, why = self._choose(len(train), data.Y.shape[1])
        if self.log is not None:
            self.log.info("source model solver: %s (%s)", self.solver_, why)
        if self.solver_ in ("cg_matrix_free", "nystrom", "falkon"):
            from biokernels.solvers.falkon import falkon_max_centres, falkon_ridge
            from biokernels.solvers.matrix_free import cg_ridge, max_centres, nystrom_ridge

            self._op = self._operator(data, train)
            st = self.settings
            budget = st["memory_budget_gib"] * 2**30
            if self.solver_ == "falkon":
                cap = min(int(st["nystrom_max_centres"]), falkon_max_centres(budget, data.Y.shape[1]))
                fit = falkon_ridge(self._op, data.Y[train], self.lam, centres=st["nystrom_centres"],
                                   tol=st["nystrom_tol"], max_centres=cap, sketch=st["leverage_sketch"],
                                   exact=st["falkon_exact"], cg_tol=st["cg_tol"], cg_max_iter=st["cg_max_iter"],
                                   seed=self.seed, comm=self.comm, log=self.log)
            elif self.solver_ == "nystrom":
                cap = min(int(st["nystrom_max_centres"]), max_centres(budget, data.Y.shape[1]))
                fit = nystrom_ridge(self._op, data.Y[train], self.lam, centres=st["nystrom_centres"],
                                    tol=st["nystrom_tol"], max_centres=cap, seed=self.seed, comm=self.comm,
                                    log=self.log)
            else:
                fit = cg_ridge(self._op, data.Y[train], self.lam, tol=st["cg_tol"], max_iter=st["cg_max_iter"],
                               precond_rank=st["precond_rank"], seed=self.seed, comm=self.comm, log=self.log)
            self._fit = fit
            self.alpha_, self.info_ = fit["coef"], dict(fit["info"])
        else:
            dev = self.device
            self._op = None
            self._Gd = torch.as_tensor(data.D @ data.D.T, dtype=self.dtype, device=dev)
            self._Gc = torch.as_tensor(data.C @ data.C.T, dtype=self.dtype, device=dev)
            self._rows = (torch.as_tensor(data.drug_idx[train], device=dev),
                          torch.as_tensor(data.cell_idx[train], device=dev))
            n = len(train)
            K = torch.empty((n, n), dtype=self.dtype, device=dev)
            ntk_relu_indexed(self._Gd, self._Gc, self._rows, None, out=K, dtype=self.dtype, **self.kernel_params)
            self.alpha_, self.info_ = solve_ridge(K, data.Y[train], self.lam, method=self.solver_,
                                                  fit_intercept=True, overwrite=True)
            del K
        self.mu_ = self.info_["intercept"]
        self.info_["solver_choice"] = why
        return self

    def predict(self, data: ScreenData, idx: np.ndarray) -> np.ndarray:
        """Predicted expression of the pairs ``idx`` (len(idx), d), float64."""
        if self._op is not None:
            from biokernels.solvers.matrix_free import predict_pairs

            return predict_pairs(self._op, self._fit, (data.drug_idx[idx], data.cell_idx[idx]), comm=self.comm)
        out = np.empty((len(idx), data.Y.shape[1]))
        dev = self.device
        for s in range(0, len(idx), self.block):
            blk = idx[s:s + self.block]
            rows = (torch.as_tensor(data.drug_idx[blk], device=dev), torch.as_tensor(data.cell_idx[blk], device=dev))
            Kb = ntk_relu_indexed(self._Gd, self._Gc, rows, self._rows, dtype=self.dtype, **self.kernel_params)
            out[s:s + len(blk)] = predict_ridge(Kb, self.alpha_, self.mu_)
        return out


#: Defaults of ``drug_screen.solver_settings`` (the source model's solvers;
#: see :class:`SourceModel` and :mod:`biokernels.solvers.matrix_free`).
SOLVER_SETTINGS = {
    "memory_budget_gib": 16.0,   # auto: exact Cholesky while its Gram + targets fit, then falkon (M capped)
    "cg_tol": 1e-5,              # CG (cg_matrix_free, falkon's exact step): relative residual per column
    "cg_max_iter": 200,
    "precond_rank": 1000,        # CG: columns of the Nystrom preconditioner
    "nystrom_centres": "auto",   # M, or auto (nystrom: from ceil(sqrt(n) ln n), falkon: from 2 d_eff), doubled
                                 # while the estimated distance to the exact fit > nystrom_tol
    "nystrom_tol": 0.01,
    "nystrom_max_centres": 16384,
    "leverage_sketch": 2048,     # falkon: columns of the sketch behind the leverage scores of the centres
    "falkon_exact": "unconverged",  # falkon: then the exact system by CG (cg_tol) preconditioned by its Nystrom
                                    # kernel: never | unconverged (when the estimate misses nystrom_tol) | always
    "block_mib": 256,            # scratch of one kernel block
    "processes": 1,              # distributed solve: processes (GPUs) on one node, via torchrun
    "nodes": 1,                  # ... and nodes, via srun + torchrun under SLURM
}


# --------------------------------------------------------------------------- transfer


def transfer_features(data: ScreenData, idx: np.ndarray, f_s: np.ndarray, source_mean: np.ndarray
                      ) -> dict[str, np.ndarray]:
    """Inputs of the target models for the pairs ``idx``.

    Parameters
    ----------
    f_s : array (len(idx), d)
        Source predictions for those pairs.
    source_mean : array (d,)
        Mean expression of the source training pairs.

    Returns
    -------
    dict: ``x`` (unit-norm drug | unit-norm cell), ``proj`` (unit-norm
    centred source prediction), ``proj_x`` (``[proj | x]``).
    """
    x = data.features(idx)
    proj = unit_rows(f_s - source_mean, "source predictions")
    return {"x": x, "proj": proj, "proj_x": np.hstack([proj, x])}


def fit_predict_target(model: str, feats_tr: dict, Y_tr: np.ndarray, fs_tr: np.ndarray, feats_te: dict,
                       fs_te: np.ndarray, lam: float, kernel_params: dict | None = None,
                       device="cpu") -> np.ndarray:
    """Train one target predictor on a target training set and predict a test set.

    Parameters
    ----------
    model : one of :data:`MODELS`
    feats_tr, feats_te : dicts from :func:`transfer_features`
    Y_tr : array (n, d), true training expression
    fs_tr, fs_te : arrays, source predictions for the training / test pairs
    lam : float, absolute ridge of this model

    Returns
    -------
    array (m, d), predicted test expression.
    """
    kw = {"kernel_params": kernel_params, "device": device}
    if model == "mean":
        return np.broadcast_to(Y_tr.mean(axis=0), (len(fs_te), Y_tr.shape[1])).copy()
    if model == "baseline":
        return krr_fit_predict(feats_tr["x"], Y_tr, feats_te["x"], lam, **kw)
    if model == "projection":
        return krr_fit_predict(feats_tr["proj"], Y_tr, feats_te["proj"], lam, **kw)
    if model == "translation":
        return fs_te + krr_fit_predict(feats_tr["x"], Y_tr - fs_tr, feats_te["x"], lam, **kw)
    if model == "projection_translation":
        return krr_fit_predict(feats_tr["proj_x"], Y_tr, feats_te["proj_x"], lam, **kw)
    raise ValueError(f"model: expected one of {MODELS}, got {model!r}")


def _take(feats: dict, pos: np.ndarray) -> dict:
    return {k: v[pos] for k, v in feats.items()}


def _stratum(data: ScreenData, f_s: pd.DataFrame, source_mean: np.ndarray, cell: str, stratum: str):
    """Positions, folds, pair ids, source predictions, model inputs and true
    expression of one (target cell line, stratum)."""
    sel = np.flatnonzero((data.folds["cell_id"].to_numpy() == cell) & (data.folds["stratum"].to_numpy() == stratum))
    pair_ids = data.folds.index[sel]
    fs = f_s.loc[pair_ids].to_numpy()
    return (sel, data.folds["fold"].to_numpy()[sel], pair_ids, fs, transfer_features(data, sel, fs, source_mean),
            data.Y[sel])


def cross_validate_cell(data: ScreenData, f_s: pd.DataFrame, source_mean: np.ndarray, cell: str,
                        lams: dict[str, float], kernel_params: dict | None = None, device="cpu",
                        models=MODELS, log=None) -> tuple[pd.DataFrame, pd.DataFrame]:
    """5-fold CV of every predictor on one target cell line, per stratum.

    Parameters
    ----------
    f_s : DataFrame (target pairs x genes), source predictions, index = pair id
    lams : dict model -> absolute ridge

    Returns
    -------
    metrics : DataFrame ``cell_id``, ``stratum``, ``model``, ``r2``, ``cosine``,
        ``pearson_r_paper`` (the paper's printed, uncentred Pearson r),
        ``pearson_r_centred``, ``n`` computed over all folds' predictions (the
        paper "reported the metrics computed across all folds"); cosine
        centred by each fold's training mean of the cell line. See
        :mod:`biokernels.metrics` for the two Pearson r's.
    samples : DataFrame ``pair_id``, ``stratum``, ``fold``, ``model``, ``r2``,
        ``cosine``: per-sample values (Fig. 4e-f).
    """
    rows, samples = [], []
    for stratum in ("seen", "unseen"):
        sel, fold, pair_ids, fs, feats, Y = _stratum(data, f_s, source_mean, cell, stratum)
        if len(np.unique(fold)) < 2:
            if log is not None:
                log.warning("%s: %d %s-drug pair(s), fewer than 2 folds: stratum skipped", cell, len(sel), stratum)
            continue
        if log is not None and len(np.unique(fold)) < fold.max() + 1:
            log.warning("%s: only %d %s-drug pairs for %d folds", cell, len(sel), stratum, fold.max() + 1)
        preds = {m: np.empty_like(Y) for m in models}
        centre = np.empty_like(Y)
        for k in np.unique(fold):
            tr, te = np.flatnonzero(fold != k), np.flatnonzero(fold == k)
            if len(tr) == 0:
                continue
            centre[te] = Y[tr].mean(axis=0)
            for m in models:
                preds[m][te] = fit_predict_target(m, _take(feats, tr), Y[tr], fs[tr], _take(feats, te), fs[te],
                                                  lams.get(m, 0.0), kernel_params, device)
        for m in models:
            r2 = per_sample_r2(preds[m], Y)
            cos = per_sample_cosine(preds[m], Y, centre)
            rows.append({"cell_id": cell, "stratum": stratum, "model": m, "r2": r2.mean(), "cosine": cos.mean(),
                         "pearson_r_paper": pearson_r_paper(preds[m], Y),
                         "pearson_r_centred": pearson_r_centred(preds[m], Y), "n": len(sel)})
            samples.append(pd.DataFrame({"pair_id": pair_ids, "stratum": stratum, "fold": fold, "model": m,
                                         "r2": r2, "cosine": cos}))
    return pd.DataFrame(rows), (pd.concat(samples, ignore_index=True) if samples else pd.DataFrame())


# --------------------------------------------------------------------------- files


def load_screen(expression_gctx, controls_tsv, fingerprints_tsv, folds_tsv) -> tuple[ScreenData, list[str]]:
    """Read the preprocessed screen written by the workflow.

    Parameters
    ----------
    expression_gctx : path, genes x pairs GCTX (``preprocess`` rule)
    controls_tsv : path, cells x genes control expression
    fingerprints_tsv : path, drugs x bits (``fingerprints`` rule)
    folds_tsv : path, :func:`assign_folds` table

    Returns
    -------
    (ScreenData, source cell lines)
    """
    from biokernels.io.gctx import read_gctx

    expr = read_gctx(expression_gctx).data.T
    controls = pd.read_csv(controls_tsv, sep="\t", index_col=0, dtype={"cell_id": str})
    controls.columns = controls.columns.astype(str)
    fps = pd.read_csv(fingerprints_tsv, sep="\t", index_col=0, dtype={"pert_id": str})
    fps.index = fps.index.astype(str)
    folds = pd.read_csv(folds_tsv, sep="\t", index_col=0, dtype={"pert_id": str, "cell_id": str},
                        keep_default_na=False)
    folds["fold"] = folds["fold"].astype(int)
    controls = controls[list(expr.columns.astype(str))]
    source = sorted(folds.loc[folds["role"] == "source", "cell_id"].unique())
    return build_screen(expr, folds, fps, controls, source), source


def load_target_inputs(expression_gctx, controls_tsv, fingerprints_tsv, folds_tsv, predictions_gctx,
                       availability_tsv) -> tuple[ScreenData, pd.DataFrame, list[str]]:
    """What every target-side rule reads: the screen (:func:`load_screen`),
    the source predictions (target pairs x genes) and the target cell lines
    in rank order (:func:`target_cells`)."""
    from biokernels.io.gctx import read_gctx

    data, _ = load_screen(expression_gctx, controls_tsv, fingerprints_tsv, folds_tsv)
    return data, read_gctx(predictions_gctx).data.T, target_cells(availability_tsv)


def target_cells(availability_tsv) -> list[str]:
    """Target cell lines in rank order (rank 1 first) from the split's
    availability table."""
    avail = pd.read_csv(availability_tsv, sep="\t", dtype={"cell_id": str})
    avail = avail[avail["role"] == "target"].sort_values("rank")
    return list(avail["cell_id"])


def source_mean(data: ScreenData) -> np.ndarray:
    """Mean expression of the source pairs (d,), the centring of the
    projection features."""
    return data.Y[(data.folds["role"] == "source").to_numpy()].mean(axis=0)

