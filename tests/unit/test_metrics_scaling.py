"""Drug-screening metrics and log2 scaling laws against independent
computations (scipy, scikit-learn) and hand-made arrays."""

from __future__ import annotations

import numpy as np
import pytest
from scipy import stats
from sklearn.metrics import r2_score

from biokernels.metrics import (mean_cosine, mean_r2, pearson_r_centred, pearson_r_paper, per_sample_cosine,
                                per_sample_r2, screening_metrics)
from biokernels.scaling import extrapolation_error, fit_log2_law, log_spaced_sizes, predict_log2_law


@pytest.fixture
def arrays():
    rng = np.random.default_rng(0)
    t = rng.normal(8, 2, size=(7, 30))
    p = t + rng.normal(0, 1, size=t.shape)
    return p, t


def test_hand_made_values():
    t = np.array([[1.0, 2.0, 3.0]])
    p = np.array([[1.0, 2.0, 4.0]])
    # SS_res = 1, SS_tot = 2 -> R² = 0.5 (hand-computed values: a few float64 operations,
    # pytest.approx's default rel 1e-6 only absorbs their rounding)
    assert mean_r2(p, t) == pytest.approx(0.5)
    # cosine of (1,2,4) and (1,2,3): 17 / (sqrt(21) sqrt(14))
    assert mean_cosine(p, t) == pytest.approx(17 / np.sqrt(21 * 14))
    # centered around (1,2,3): prediction (0,0,1), truth 0 -> cosine 0 by convention
    assert per_sample_cosine(p, t, center=t[0])[0] == 0.0
    # the paper's printed "Pearson r" is the same uncentred ratio over the vectorized matrix
    assert pearson_r_paper(p, t) == pytest.approx(17 / np.sqrt(21 * 14))
    # centred: (1,2,4) - 7/3 and (1,2,3) - 2 -> <(-4,-1,5)/3, (-1,0,1)> / (sqrt(42)/3 sqrt(2)) = 9 / sqrt(84)
    assert pearson_r_centred(p, t) == pytest.approx(9 / np.sqrt(84))


def test_r2_matches_sklearn_per_sample(arrays):
    p, t = arrays
    ref = r2_score(t.T, p.T, multioutput="raw_values")  # columns of t.T are samples
    # the same sums of squares two ways (tens of terms): rounding ~1e-15 relative
    np.testing.assert_allclose(per_sample_r2(p, t), ref, rtol=1e-12)
    assert mean_r2(p, t) == pytest.approx(ref.mean())


def test_pearson_matches_scipy(arrays):
    p, t = arrays
    assert pearson_r_centred(p, t) == pytest.approx(stats.pearsonr(p.ravel(), t.ravel()).statistic)
    # the paper's uncentred printed formula is near 1 for log2-scale data (entries near 8): why the
    # centred one is reported beside it. t ~ N(8, 2^2), p = t + N(0, 1): uncentred
    # sqrt(68 / 69) = 0.993, centred 2 / sqrt(5) = 0.894 (sd ~(1 - r^2) / sqrt(210) = 0.014,
    # so 0.95 is ~4 sd above it)
    assert pearson_r_paper(p, t) > 0.95 > pearson_r_centred(p, t)


def test_cosine_centering_matches_scipy_distance(arrays):
    from scipy.spatial.distance import cosine
    p, t = arrays
    c = t.mean(axis=0)
    ref = [1 - cosine(p[i] - c, t[i] - c) for i in range(len(t))]
    np.testing.assert_allclose(per_sample_cosine(p, t, c), ref, rtol=1e-12)    # as above
    assert screening_metrics(p, t, c)["cosine"] == pytest.approx(np.mean(ref))


def test_perfect_prediction_scores_one(arrays):
    _, t = arrays
    m = screening_metrics(t, t, t.mean(axis=0))
    assert m == pytest.approx({"r2": 1.0, "cosine": 1.0, "pearson_r_paper": 1.0, "pearson_r_centred": 1.0})


def test_bad_input():
    with pytest.raises(ValueError, match="shape"):
        mean_r2(np.zeros((2, 3)), np.zeros((2, 4)))
    with pytest.raises(ValueError, match="constant"):
        per_sample_r2(np.zeros((1, 3)), np.ones((1, 3)))
    with pytest.raises(ValueError, match="NaN"):
        pearson_r_centred(np.array([[np.nan, 1.0]]), np.array([[1.0, 2.0]]))
    with pytest.raises(ValueError, match="constant"):
        pearson_r_centred(np.ones((2, 3)), np.arange(6.0).reshape(2, 3))


def test_log2_law_recovers_planted_coefficients():
    n = np.array([10, 20, 40, 80, 160, 320])
    y = 0.05 * np.log2(n) + 0.1
    fit = fit_log2_law(n, y)
    assert fit["a"] == pytest.approx(0.05) and fit["b"] == pytest.approx(0.1) and fit["r2"] == pytest.approx(1.0)
    np.testing.assert_allclose(predict_log2_law(fit, n), y)
    # a noisy law: R² equals scipy's r² of (log2 n, y)
    y2 = y + np.array([0.01, -0.01, 0.0, 0.005, -0.004, 0.002])
    assert fit_log2_law(n, y2)["r2"] == pytest.approx(stats.pearsonr(np.log2(n), y2).statistic ** 2)


def test_extrapolation_error_on_exact_law_is_zero_and_detects_saturation():
    n = np.array([10, 20, 40, 80, 160, 320, 640])
    y = 0.05 * np.log2(n) + 0.1
    # a least-squares line through exact points: exact up to rounding (~eps |y| cond ~ 1e-15)
    assert extrapolation_error(n, y, first=5)["abs_error"] == pytest.approx(0.0, abs=1e-12)
    y_sat = np.minimum(y, 0.5)  # saturates: the early fit overshoots the last point
    e = extrapolation_error(n, y_sat, first=5)
    assert e["error"] == pytest.approx(0.05 * np.log2(640) + 0.1 - 0.5)
    with pytest.raises(ValueError):
        extrapolation_error(n, y, first=7)


def test_log_spaced_sizes():
    s = log_spaced_sizes(400, 12, n_min=10)
    assert len(s) == 12 and s[0] == 10 and s[-1] == 400 and s == sorted(set(s))
    with pytest.raises(ValueError):
        log_spaced_sizes(12, 10, n_min=10)
