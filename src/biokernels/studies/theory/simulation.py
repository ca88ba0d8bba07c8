"""Exact Monte-Carlo simulation of the linear setting, and planted task pairs.

Source: the setting of Radhakrishnan et al. 2023, "Transfer learning with
kernel methods", Definition 4 (risk, Eq. 5), Eq. 6 (minimum-norm estimator),
Theorems 1 and 2 (the projected and translated predictors); notation in
``closed_forms``.

:func:`simulate_risk` draws Gaussian isotropic training data, fits the
paper's minimum-norm estimators and computes each draw's risk
``||omega_t - w_hat||_F^2`` exactly (no test sample); it is the reference
against which every closed form in ``closed_forms`` is checked.
:func:`simulate_paper_surrogate` reproduces Eq. 7 (the surrogate the paper's
Theorem 1 actually computes). :func:`make_task_pair` plants source/target
models with a given ``eps`` (projection) or angle (translation).

Every function takes an explicit ``numpy.random.Generator`` and draws from
nothing else. Imports only ``closed_forms`` (layers, top down:
``figures -> sweeps -> simulation -> closed_forms``).
"""

from __future__ import annotations

import math
from typing import NamedTuple

import numpy as np

from .closed_forms import (
    _check_int,
    _check_matrix,
    _check_pair,
    _check_real,
    _source_spectrum,
)

__all__ = [
    "SimResult",
    "simulate_risk",
    "simulate_paper_surrogate",
    "make_task_pair",
]

_METHODS = ("projection", "translation", "baseline")


def _check_rng(rng) -> np.random.Generator:
    if not isinstance(rng, np.random.Generator):
        raise TypeError(f"rng must be a numpy.random.Generator, got {type(rng).__name__}")
    return rng


# ----------------------------------------------------------------------------
# Monte Carlo
# ----------------------------------------------------------------------------

class SimResult(NamedTuple):
    """Monte-Carlo estimate: ``mean`` risk, its standard error ``se``, ``n_rep``.

    Attributes
    ----------
    mean : float
        Sample mean of the per-draw risks ``||omega_t - w_hat||_F^2``
        (squared label units, like ``||omega_t||_F^2``).
    se : float
        Its standard error, ``std(ddof=1) / sqrt(n_rep)`` (same units).
    n_rep : int
        Number of independent draws of the training data.

    Returned by :func:`simulate_risk` and :func:`simulate_paper_surrogate`;
    a plain tuple, so constructing one raises nothing. Source: the risk of
    the paper's Definition 4 (Eq. 5).
    """

    mean: float
    se: float
    n_rep: int


def _col_basis(X: np.ndarray) -> np.ndarray:
    """Orthonormal basis of the column space of each ``d x n`` matrix (``n <= d``,
    Gaussian hence full column rank a.s.)."""
    return np.linalg.qr(X, mode="reduced")[0]


def _risks_projection(ws, wt, Xs, Xt, k: int) -> np.ndarray:
    """Exact ||omega_t - w_p w_s||_F^2 for a batch of draws.

    ``Xs`` has shape (B, d, n_s) (or None when n_s >= d), ``Xt`` (B, d, n_t).
    Uses w_s = K Vs^T with K = omega_s Vs and the thin SVD K = L diag(sig) R^T
    (rank r); then w_s X_t = L diag(sig) W with W = V^T X_t, V = Vs R, and
    (L diag(sig) W)^+ L diag(sig) = (diag(sig) W)^+ diag(sig) because L has
    orthonormal columns, so w_p w_s = (omega_t X_t)(diag(sig) W)^+ diag(sig) V^T.
    This equals omega_t X_t (w_s X_t)^+ w_s exactly, without forming a
    numerically rank-deficient c_s x n_t matrix.
    """
    B, d, n_t = Xt.shape
    if Xs is None:
        Vs = np.broadcast_to(np.eye(d), (B, d, d))
    else:
        Vs = _col_basis(Xs)
    m = Vs.shape[2]
    r = min(k, m)
    K = np.einsum("cd,bdm->bcm", ws, Vs)
    _, sig, Rt = np.linalg.svd(K, full_matrices=False)
    sig = sig[:, :r]
    V = Vs @ np.swapaxes(Rt[:, :r, :], 1, 2)  # (B, d, r)
    W = np.swapaxes(V, 1, 2) @ Xt  # (B, r, n_t)
    Y = np.einsum("cd,bdn->bcn", wt, Xt)  # (B, c_t, n_t)
    Mp = np.linalg.pinv(sig[:, :, None] * W)  # (B, n_t, r)
    gamma = (Y @ Mp) * sig[:, None, :]  # (B, c_t, r)
    wtV = np.einsum("cd,bdr->bcr", wt, V)
    # ||w_t - G V^T||^2 = ||w_t (I - V V^T)||^2 + ||w_t V - G||^2 (V orthonormal); the
    # first term is formed explicitly (not as a difference of norms) so that an exact
    # recovery gives ~1e-30 rather than rounding noise of order 1e-16.
    outside = wt[None] - wtV @ np.swapaxes(V, 1, 2)
    return np.sum(outside * outside, axis=(1, 2)) + np.sum((wtV - gamma) ** 2, axis=(1, 2))


def _risks_translation(ws, wt, Xs, Xt, b: int, n_s_zero: bool) -> np.ndarray:
    """Exact ||(omega_t - omega_s P_s)(I - P_t)||_F^2 for a batch of ``b`` draws.

    ``Xs`` None means P_s = I (n_s >= d) unless ``n_s_zero`` (then P_s = 0);
    ``Xt`` None means P_t = I (n_t >= d, risk 0); an ``Xt`` with zero columns
    means P_t = 0.
    """
    if n_s_zero:
        D = np.broadcast_to(wt, (b,) + wt.shape)
    elif Xs is None:
        D = np.broadcast_to(wt - ws, (b,) + wt.shape)
    else:
        Vs = _col_basis(Xs)
        D = wt[None] - np.einsum("cd,bdm->bcm", ws, Vs) @ np.swapaxes(Vs, 1, 2)
    if Xt is None:
        return np.zeros(b)
    total = np.sum(D * D, axis=(1, 2))
    if Xt.shape[2] == 0:
        return total
    DV = D @ _col_basis(Xt)
    return np.maximum(total - np.sum(DV * DV, axis=(1, 2)), 0.0)


def _risks_baseline(wt, Xt) -> np.ndarray:
    """Exact ||omega_t (I - P_t)||_F^2 for a batch of draws."""
    Vt = _col_basis(Xt)
    wV = np.einsum("cd,bdn->bcn", wt, Vt)
    return np.maximum(np.sum(wt * wt) - np.sum(wV * wV, axis=(1, 2)), 0.0)


def simulate_risk(omega_s, omega_t, n_s: int, n_t: int, n_rep: int, rng: np.random.Generator,
                  method: str = "projection", chunk: int = 256) -> SimResult:
    """Monte-Carlo risk of the projected, translated or baseline predictor.

    Draws independent ``X_s ~ N(0, I_d)^{n_s}`` and ``X_t ~ N(0, I_d)^{n_t}``
    (columns), noiseless labels ``y = omega X``, fits minimum-norm least
    squares, and computes the risk exactly for isotropic test inputs as
    ``||omega_t - w_hat||_F^2`` (``E_x ||(w* - w)x||^2 = ||w* - w||_F^2``).

    Parameters
    ----------
    omega_s : array_like, shape (c_s, d), or None
        Source model (ignored, may be None, for ``method="baseline"``).
    omega_t : array_like, shape (c_t, d)
        Target model (``c_t = c_s`` for translation).
    n_s, n_t : int
        Sample sizes, ``>= 0`` (any size; ``n >= d`` means ``X X^+ = I``).
    n_rep : int
        Repetitions, ``>= 2``.
    rng : numpy.random.Generator
        Source of randomness (the only one used).
    method : {"projection", "translation", "baseline"}
        ``"projection"``: ``w_p w_s`` with ``w_s = y_s X_s^+``,
        ``w_p = y_t (w_s X_t)^+`` (Theorem 1). ``"translation"``:
        ``w_s + (y_t - w_s X_t) X_t^+`` (Theorem 2). ``"baseline"``:
        ``y_t X_t^+``.
    chunk : int
        Repetitions per vectorised batch (memory ~ chunk * d * max(n) floats;
        lowered automatically so that one batch of draws stays below ~2e7 floats).
        Draws are made per batch (``X_s`` of the batch, then ``X_t``), so the
        result is reproducible for a given ``rng`` state *and* ``chunk``.

    Returns
    -------
    SimResult
        ``(mean, se, n_rep)``: sample mean of the per-draw risks and its
        standard error ``std(ddof=1)/sqrt(n_rep)``.

    Raises
    ------
    ValueError
        For bad shapes, sizes, ``n_rep < 2`` or an unknown method.
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``.

    Notes
    -----
    Exact shortcuts (no approximation): ``X X^+ = V V^T`` with ``V`` the Q
    factor of ``X`` (full column rank a.s. for ``n <= d``); the projection
    second stage is computed in the ``r``-dimensional row space of ``w_s``
    (see ``_risks_projection``), which equals ``y_t (w_s X_t)^+ w_s`` in
    exact arithmetic. Near the poles ``n_t ~ min(c_s, n_s)`` the per-draw
    risk is heavy-tailed (infinite mean or variance), so ``se`` is not
    meaningful there.

    Source: the setting of the paper's Theorems 1 and 2 (Definition 4, Eq. 5-6).
    """
    if method not in _METHODS:
        raise ValueError(f"method must be one of {_METHODS}, got {method!r}")
    rng = _check_rng(rng)
    n_rep = _check_int("n_rep", n_rep, lo=2)
    chunk = _check_int("chunk", chunk, lo=1)
    n_t = _check_int("n_t", n_t, lo=0)
    if method == "baseline":
        wt = _check_matrix("omega_t", omega_t)
        ws = None
        n_s = 0 if n_s is None else _check_int("n_s", n_s, lo=0)
    else:
        ws, wt = _check_pair(omega_s, omega_t)
        n_s = _check_int("n_s", n_s, lo=0)
        if method == "translation" and ws.shape != wt.shape:
            raise ValueError(
                f"translation needs omega_s and omega_t of the same shape; got {ws.shape} and {wt.shape}")
    d = wt.shape[1]
    norm_t2 = float(np.sum(wt * wt))
    k = _source_spectrum(ws)[0] if method == "projection" else 0

    # cap a batch's largest draw at ~2e7 floats (160 MB) whatever ``chunk`` says
    chunk = max(1, min(chunk, int(2e7 // max(1, d * max(n_s if n_s < d else 0, n_t)))))
    risks = np.empty(n_rep)
    done = 0
    while done < n_rep:
        b = min(chunk, n_rep - done)
        # Draw order (X_s then X_t per chunk) is part of the reproducibility contract.
        Xs = rng.standard_normal((b, d, n_s)) if (method != "baseline" and 0 < n_s < d) else None
        if method == "projection":
            # the second stage regresses on w_s X_t, which needs X_t itself for any n_t
            Xt = rng.standard_normal((b, d, n_t)) if n_t > 0 else None
        else:
            Xt = rng.standard_normal((b, d, n_t)) if n_t < d else None
        if method == "baseline":
            out = np.zeros(b) if Xt is None else (
                np.full(b, norm_t2) if n_t == 0 else _risks_baseline(wt, Xt))
        elif method == "translation":
            out = _risks_translation(ws, wt, Xs, Xt, b, n_s_zero=(n_s == 0))
        elif n_s == 0 or n_t == 0 or k == 0:
            out = np.full(b, norm_t2)  # w_s = 0 or w_p = 0: the predictor is 0
        else:
            out = _risks_projection(ws, wt, Xs, Xt, k)
        risks[done:done + b] = out
        done += b
    return SimResult(float(risks.mean()), float(risks.std(ddof=1) / math.sqrt(n_rep)), n_rep)


def simulate_paper_surrogate(omega_s, omega_t, n_s: int, n_t: int, n_rep: int,
                             rng: np.random.Generator) -> SimResult:
    """Monte-Carlo mean of the surrogate whose expectation is exactly Eq. 7.

    Computes ``N - 2 tr(omega_t P_t M omega_t^T) + tr(omega_t P_t M P_t omega_t^T)``
    with ``M = P_s omega_s^+ omega_s P_s`` and random projections ``P_s, P_t``
    of ranks ``n_s, n_t``. This is ``||omega_t - omega_t P_t M||^2`` with
    ``M^2`` replaced by ``M``, i.e. the risk one obtains from the (invalid)
    reverse-order law ``(w_s X_t)^+ w_s = X_t^+ P_s omega_s^+ omega_s P_s``.
    Diagnostic only: it explains where Eq. 7 comes from.

    Parameters
    ----------
    omega_s : array_like, shape (c_s, d)
    omega_t : array_like, shape (c_t, d)
    n_s, n_t : int
        ``0 <= n <= d``.
    n_rep : int, ``>= 2``
    rng : numpy.random.Generator

    Returns
    -------
    SimResult

    Raises
    ------
    ValueError
        On bad shapes or sizes. TypeError if ``rng`` is not a Generator.

    Source: reconstruction of the paper's Theorem 1 (SI Note 2 not available).
    """
    ws, wt = _check_pair(omega_s, omega_t)
    rng = _check_rng(rng)
    d = ws.shape[1]
    n_s = _check_int("n_s", n_s, lo=0, hi=d)
    n_t = _check_int("n_t", n_t, lo=0, hi=d)
    n_rep = _check_int("n_rep", n_rep, lo=2)
    _, U, _ = _source_spectrum(ws)
    norm_t2 = float(np.sum(wt * wt))
    vals = np.empty(n_rep)
    for i in range(n_rep):
        Vs = _col_basis(rng.standard_normal((d, n_s))) if n_s else np.zeros((d, 0))
        Vt = _col_basis(rng.standard_normal((d, n_t))) if n_t else np.zeros((d, 0))
        PsU = Vs @ (Vs.T @ U)  # P_s U, so M = (P_s U)(P_s U)^T
        A = (wt @ Vt) @ (Vt.T @ PsU)  # omega_t P_t P_s U
        Bm = wt @ PsU
        vals[i] = norm_t2 - 2.0 * np.sum(A * Bm) + np.sum(A * A)
    return SimResult(float(vals.mean()), float(vals.std(ddof=1) / math.sqrt(n_rep)), n_rep)


# ----------------------------------------------------------------------------
# planted task pairs
# ----------------------------------------------------------------------------

def make_task_pair(d: int, c_s: int, c_t: int, eps_fraction: float | None = None,
                   angle: float | None = None, rng: np.random.Generator | None = None,
                   *, norm_t2: float = 1.0) -> tuple[np.ndarray, np.ndarray]:
    """Random source/target models with a planted similarity.

    Exactly one of ``eps_fraction`` (projection experiments) and ``angle``
    (translation experiments) must be given.

    Parameters
    ----------
    d : int
        Input dimension, ``>= 1``.
    c_s, c_t : int
        Label dimensions, ``>= 1``.
    eps_fraction : float in [0, 1], optional
        ``omega_s`` gets Haar-random orthonormal rows (``c_s <= d``; the
        exact risk in regimes B1/B2 assumes equal singular values) and
        ``omega_t`` is a Gaussian matrix whose parts inside/outside the row
        space of ``omega_s`` are rescaled so that ``||omega_t||_F^2 = norm_t2``
        and ``epsilon(omega_s, omega_t) = eps_fraction * norm_t2``
        (``eps_fraction > 0`` needs ``c_s < d``).
    angle : float in [0, pi], optional
        Requires ``c_s == c_t``. ``omega_t`` is Gaussian with
        ``||omega_t||_F^2 = norm_t2``; ``omega_s`` has the same norm and makes
        the given angle (radians) with ``omega_t`` as flattened vectors, so
        ``||omega_s - omega_t||_F^2 = 2 norm_t2 (1 - cos angle)``.
    rng : numpy.random.Generator
        Required.
    norm_t2 : float, keyword-only
        ``||omega_t||_F^2 > 0``.

    Returns
    -------
    (omega_s, omega_t) : ndarrays of shape (c_s, d) and (c_t, d)

    Raises
    ------
    ValueError
        If both or neither of ``eps_fraction``/``angle`` are given, on values
        out of range, ``c_s > d`` (projection), ``eps_fraction > 0`` with
        ``c_s = d``, or ``c_s != c_t`` for ``angle``.
    TypeError
        If ``rng`` is not a ``numpy.random.Generator``.

    Source: planted setting for checking the paper's Theorems 1 and 2.
    """
    rng = _check_rng(rng)
    d = _check_int("d", d, lo=1)
    c_s = _check_int("c_s", c_s, lo=1)
    c_t = _check_int("c_t", c_t, lo=1)
    norm_t2 = _check_real("norm_t2", norm_t2, lo=0.0)
    if norm_t2 <= 0.0:
        raise ValueError("norm_t2 must be > 0")
    if (eps_fraction is None) == (angle is None):
        raise ValueError("give exactly one of eps_fraction (projection) or angle (translation)")
    if eps_fraction is not None:
        f = _check_real("eps_fraction", eps_fraction, lo=0.0, hi=1.0)
        if c_s > d:
            raise ValueError(f"c_s must be <= d for orthonormal source rows, got c_s={c_s}, d={d}")
        if f > 0.0 and c_s == d:
            raise ValueError("eps_fraction > 0 needs c_s < d (eps = 0 when omega_s spans R^d)")
        q, _ = np.linalg.qr(rng.standard_normal((d, c_s)))
        omega_s = q.T.copy()
        G = rng.standard_normal((c_t, d))
        inside = (G @ q) @ q.T
        outside = G - inside
        omega_t = np.sqrt((1.0 - f) * norm_t2) * inside / np.linalg.norm(inside)
        if f > 0.0:
            omega_t = omega_t + np.sqrt(f * norm_t2) * outside / np.linalg.norm(outside)
        return omega_s, omega_t
    theta = _check_real("angle", angle, lo=0.0, hi=math.pi)
    if c_s != c_t:
        raise ValueError(f"translation pairs need c_s == c_t, got c_s={c_s}, c_t={c_t}")
    if c_t * d < 2:
        raise ValueError("an angle needs at least two entries (c_t * d >= 2)")
    g = rng.standard_normal(c_t * d)
    g /= np.linalg.norm(g)
    h = rng.standard_normal(c_t * d)
    h -= (h @ g) * g
    h /= np.linalg.norm(h)
    scale = math.sqrt(norm_t2)
    omega_t = (scale * g).reshape(c_t, d)
    omega_s = (scale * (math.cos(theta) * g + math.sin(theta) * h)).reshape(c_s, d)
    return omega_s, omega_t
