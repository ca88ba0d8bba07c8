"""The three metrics of virtual drug screening (Radhakrishnan et al. 2023,
Methods "Metrics for evaluating virtual drug screening"; the same metrics as
Hodos et al. 2018 and the NTK matrix completion of Radhakrishnan et al. 2022).

Every function takes predicted and true expression matrices of shape
``(n, d)`` (n drug/cell-line samples, d genes, log2 expression units) and
returns a float whose maximum is 1.

Two Pearson r's, one name each: :func:`pearson_r_paper` is the paper's
metric 1 as printed, ``<ŷ_v, y*_v> / (‖ŷ_v‖_2 ‖y*_v‖_2)`` on the vectorized
matrices without centring (column ``pearson_r_paper``, the one a paper value
about "Pearson r" is compared with); :func:`pearson_r_centred` is the usual
centred Pearson correlation (column ``pearson_r_centred``). No column is
called plain ``pearson_r``.

Notes: docs/drug_screen_notes.md, section "Metrics (biokernels.metrics)".
"""

from __future__ import annotations

import numpy as np


def _pair(y_pred, y_true) -> tuple[np.ndarray, np.ndarray]:
    p = np.asarray(y_pred, dtype=np.float64)
    t = np.asarray(y_true, dtype=np.float64)
    if p.ndim == 1:
        p = p[None, :]
    if t.ndim == 1:
        t = t[None, :]
    if p.shape != t.shape:
        raise ValueError(f"y_pred has shape {p.shape} but y_true has shape {t.shape}; expected equal (n, d)")
    if p.size == 0:
        raise ValueError("y_pred and y_true are empty; expected at least one sample and one gene")
    if not (np.isfinite(p).all() and np.isfinite(t).all()):
        raise ValueError("y_pred or y_true holds NaN or inf; expected finite values")
    return p, t


def pearson_r_centred(y_pred, y_true) -> float:
    """Pearson correlation of the vectorized matrices, centred by their global
    means: ``<ŷ_v - mean(ŷ_v), y*_v - mean(y*_v)> / (‖·‖ ‖·‖)``. Not the
    paper's printed metric 1 (that is :func:`pearson_r_paper`).

    Parameters
    ----------
    y_pred, y_true : array, shape (n, d)

    Returns
    -------
    float in [-1, 1]

    Notes
    -----
    The paper prints ``<y_v, y*_v> / (||y_v|| ||y*_v||)`` and names it the
    Pearson r value. Without centring, that ratio is about 1 for any
    predictor of log2 expression (all entries are near 8), so this function
    centres both vectors first, i.e. it is the Pearson r of statistics
    (equal to ``scipy.stats.pearsonr`` of the flattened arrays).

    Raises
    ------
    ValueError
        Shapes differ, arrays are empty or hold NaN/inf, or either vector is
        constant.
    """
    p, t = _pair(y_pred, y_true)
    pv, tv = p.ravel() - p.mean(), t.ravel() - t.mean()
    den = np.linalg.norm(pv) * np.linalg.norm(tv)
    if den == 0:
        raise ValueError("pearson_r_centred: a vectorized matrix is constant; the correlation is undefined")
    return float(pv @ tv / den)


def pearson_r_paper(y_pred, y_true) -> float:
    """The paper's metric 1, "Pearson r value", as printed (Radhakrishnan et
    al. 2023, Methods): ``<y_v, y*_v> / (||y_v||_2 ||y*_v||_2)`` of the
    vectorized matrices, without centring, i.e. their cosine. Column
    ``pearson_r_paper``; the centred correlation is :func:`pearson_r_centred`.

    Parameters
    ----------
    y_pred, y_true : array, shape (n, d)

    Returns
    -------
    float in [-1, 1]; 0 when either vector is zero.
    """
    p, t = _pair(y_pred, y_true)
    den = np.linalg.norm(p) * np.linalg.norm(t)
    return float((p.ravel() @ t.ravel()) / den) if den > 0 else 0.0


def per_sample_r2(y_pred, y_true) -> np.ndarray:
    """Coefficient of determination of each sample over its genes.

    ``R²_i = 1 - sum_j (ŷ_ij - y*_ij)² / sum_j (y*_ij - ȳ*_i)²`` with
    ``ȳ*_i`` the mean of sample i over the d genes (Methods, metric 2).

    Parameters
    ----------
    y_pred, y_true : array, shape (n, d)

    Returns
    -------
    array, shape (n,); ``-inf``-free: a sample whose true vector is constant
    raises.

    Raises
    ------
    ValueError
        Shapes differ, NaN/inf, or a true sample vector is constant over
        genes (its R² is undefined).
    """
    p, t = _pair(y_pred, y_true)
    ss_tot = ((t - t.mean(axis=1, keepdims=True)) ** 2).sum(axis=1)
    if (ss_tot == 0).any():
        i = int(np.flatnonzero(ss_tot == 0)[0])
        raise ValueError(f"per_sample_r2: true sample {i} is constant over genes; R² is undefined")
    return 1.0 - ((p - t) ** 2).sum(axis=1) / ss_tot


def mean_r2(y_pred, y_true) -> float:
    """Mean over samples of :func:`per_sample_r2` (metric 2).

    Parameters
    ----------
    y_pred, y_true : array, shape (n, d)

    Returns
    -------
    float, at most 1.
    """
    return float(per_sample_r2(y_pred, y_true).mean())


def r2_score(y_true, y_pred) -> float:
    """Coefficient of determination of one output, ``1 - SS_res / SS_tot``:
    scikit-learn's ``r2_score`` and its argument order (true values first).
    The project's one R² of a single target vector (kernel ridge sweeps,
    the DepMap gene-effect models); the screen's per-sample R² over genes is
    :func:`per_sample_r2` / :func:`mean_r2`.

    Parameters
    ----------
    y_true, y_pred : array, shape (n,)

    Returns
    -------
    float, at most 1.
    """
    from sklearn.metrics import r2_score as _r2

    return float(_r2(y_true, y_pred))


def per_sample_cosine(y_pred, y_true, center=None) -> np.ndarray:
    """Cosine similarity of each predicted and true sample (metric 3).

    Parameters
    ----------
    y_pred, y_true : array, shape (n, d)
    center : array, shape (d,) or (n, d), optional
        Subtracted from both before the cosine. The paper subtracts "the
        mean over cell type" to avoid inflated similarity far from the
        origin; the caller passes each sample's cell-line mean expression
        (over the training samples of that cell line).

    Returns
    -------
    array, shape (n,); 0 for a sample whose (centered) predicted or true
    vector is zero, e.g. the mean-over-cell-line predictor itself.
    """
    p, t = _pair(y_pred, y_true)
    if center is not None:
        c = np.asarray(center, dtype=np.float64)
        if c.shape not in ((p.shape[1],), p.shape):
            raise ValueError(f"center has shape {c.shape}; expected ({p.shape[1]},) or {p.shape}")
        p, t = p - c, t - c
    num = (p * t).sum(axis=1)
    den = np.linalg.norm(p, axis=1) * np.linalg.norm(t, axis=1)
    out = np.zeros(len(p))
    ok = den > 1e-12 * max(1.0, float(np.abs(t).max()))
    out[ok] = num[ok] / den[ok]
    return out


def mean_cosine(y_pred, y_true, center=None) -> float:
    """Mean over samples of :func:`per_sample_cosine` (metric 3).

    Parameters
    ----------
    y_pred, y_true : array, shape (n, d)
    center : array, shape (d,) or (n, d), optional
        See :func:`per_sample_cosine`.

    Returns
    -------
    float in [-1, 1].
    """
    return float(per_sample_cosine(y_pred, y_true, center).mean())


def screening_metrics(y_pred, y_true, center=None) -> dict[str, float]:
    """All three metrics of the paper at once.

    Returns
    -------
    dict with keys ``r2``, ``cosine``, ``pearson_r_paper`` (the paper's three
    metrics) and ``pearson_r_centred`` (floats; see the module docstring).
    """
    return {"r2": mean_r2(y_pred, y_true), "cosine": mean_cosine(y_pred, y_true, center),
            "pearson_r_paper": pearson_r_paper(y_pred, y_true),
            "pearson_r_centred": pearson_r_centred(y_pred, y_true)}


def roc_auc_columns(y_true, scores) -> np.ndarray:
    """ROC AUC of every column at once: the Mann-Whitney statistic from the
    ranks of the scores (ties averaged), which is the area under the ROC
    curve that ``sklearn.metrics.roc_auc_score`` integrates (ties count 1/2).

    Parameters
    ----------
    y_true : array (n, t)
        Binary labels per column (0/1, bool or any two values; the larger
        value is the positive class, as in scikit-learn).
    scores : array (n, t)
        Larger = more likely positive.

    Returns
    -------
    array (t,), float64: NaN where a column's labels have a single class or
    its scores are not all finite.

    Raises
    ------
    ValueError
        Shapes differ, or a column has more than two label values.

    Notes
    -----
    ``AUC = (R+ - n+ (n+ + 1) / 2) / (n+ n-)``, with ``R+`` the sum of the
    positives' average ranks. The ranks are multiples of 1/2 and their sum
    is exact in float64 for n < 2**26, so the only rounding is the final
    division: the result is the exact rational AUC to within one unit
    roundoff ``u = 2**-53`` (relative). ``roc_auc_score`` adds up trapezoids
    of rounded rates, which puts it within about ``3 (n + 2) u`` of the exact
    value (tests/unit/studies/test_diffusion_speed_paths.py). Cost: one sort per
    column, O(n t log n), instead of a scikit-learn call (input checks,
    curve) per column.
    """
    from scipy.stats import rankdata

    y = np.asarray(y_true)
    s = np.asarray(scores, dtype=np.float64)
    if y.ndim == 1 and s.ndim == 1:
        y, s = y[:, None], s[:, None]
    if y.shape != s.shape or y.ndim != 2:
        raise ValueError(f"y_true has shape {y.shape} but scores have shape {s.shape}; expected equal (n, t)")
    out = np.full(y.shape[1], np.nan)
    if y.shape[0] == 0:
        return out
    lo, hi = y.min(axis=0), y.max(axis=0)
    if np.any((y != lo) & (y != hi)):
        bad = int(np.flatnonzero(((y != lo) & (y != hi)).any(axis=0))[0])
        raise ValueError(f"column {bad} of y_true has more than two label values")
    ok = (lo != hi) & np.isfinite(s).all(axis=0)
    if not ok.any():
        return out
    pos = y[:, ok] == hi[ok]
    ranks = rankdata(s[:, ok], method="average", axis=0)
    n_pos = pos.sum(axis=0).astype(np.float64)
    n_neg = pos.shape[0] - n_pos
    r_pos = np.where(pos, ranks, 0.0).sum(axis=0)
    out[ok] = (r_pos - n_pos * (n_pos + 1) / 2) / (n_pos * n_neg)
    return out
