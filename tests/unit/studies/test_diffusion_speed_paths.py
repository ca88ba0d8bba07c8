"""The fast path of one diffusion split (issue #20) against the reference path,
both with LIBSVM (``diffusion.classifier_settings.svm.solver: libsvm``); the
default ``smo`` solver is checked against LIBSVM in tests/unit/solvers/test_svm_smo.py.

Tolerances (u = 2**-53, gamma_m = m u / (1 - m u)):

* rank AUC vs ``roc_auc_score``: the rank AUC is the exact rational AUC to
  one rounding (``u``); ``roc_auc_score`` integrates trapezoids of rounded
  rates, ``3 (n + 2) u`` from it (n samples): bound ``(3 (n + 2) + 1) u``;
* decision values, one GEMM vs LIBSVM's loop, same fit: two orders of the
  same sum of m products plus the intercept,
  ``2 gamma_{m+1} (sum_i |a_i K_xi| + |b|)``;
* a learned kernel summed from single-kernel blocks vs one GEMM on the
  combined spectrum: each is within ``gamma_{n+p+3} sqrt(K_aa K_bb)`` of the
  exact kernel (non-negative weights), so they differ by at most twice that;
* tables of a split: the fits on unchanged kernels are LIBSVM's on the same
  arrays, so their AUCs differ only by the AUC rounding above, plus whole
  half-steps ``1 / (2 n+ n-)`` where a positive and a negative protein's
  decision values are within the decision rounding of each other (ties in
  exact arithmetic, e.g. proteins off the training proteins' component,
  which the two summation orders break differently: at the von Mering size
  a few such pairs move an AUC by 1.5e-5); the learned kernels differ by
  rounding, so their LIBSVM solutions agree within its tolerance and the
  AUCs within the issue's 1e-3. Speed is measured in
  benchmarks/bench_diffusion_split.py, never here.
"""

from fractions import Fraction

import numpy as np
import pandas as pd
import pytest
from sklearn.linear_model import LogisticRegression
from sklearn.metrics import roc_auc_score

from biokernels.errors import InputError
from biokernels.kernels.diffusion import diffusion_betas, diffusion_spectra
from biokernels.metrics import roc_auc_columns
from biokernels.studies.diffusion.protocol import (KernelBlocks, _kernels_to_keep, evaluate_split,
                                                   fit_task_scores, make_classifier, svm_classifier,
                                                   task_aucs, task_scores)

U = 2.0 ** -53
LIBSVM = make_classifier("svm", {"solver": "libsvm"})     # the paper's program, both paths


def gamma(m: int) -> float:
    return m * U / (1 - m * U)


@pytest.fixture(scope="module")
def planted(planted_network):
    return planted_network(180, 1000, 5, 11)


# --------------------------------------------------------------------------- rank AUC


def exact_auc(y, s) -> Fraction:
    pos, neg = s[y == y.max()], s[y != y.max()]
    wins = sum(Fraction(int((p > neg).sum())) + Fraction(int((p == neg).sum()), 2) for p in pos)
    return wins / (len(pos) * len(neg))


def test_rank_auc_is_roc_auc_score_to_rounding_with_ties_and_missing_columns():
    rng = np.random.default_rng(0)
    n, t = 301, 9
    y = (rng.random((n, t)) < 0.15).astype(int)
    s = rng.standard_normal((n, t))
    s[:, 1] = np.round(s[:, 1], 1)          # many ties
    s[:, 2] = 0.0                           # all tied: 1/2
    y[:, 3] = 0                             # one class -> NaN
    s[5, 4] = np.nan                        # missing score -> NaN
    got = roc_auc_columns(y, s)
    assert np.isnan(got[3]) and np.isnan(got[4])
    assert got[2] == 0.5
    for k in (0, 1, 2, 5, 6, 7, 8):
        assert abs(got[k] - float(exact_auc(y[:, k], s[:, k]))) <= U
        assert abs(got[k] - roc_auc_score(y[:, k], s[:, k])) <= (3 * (n + 2) + 1) * U
    # task_aucs (the reference) gives the same NaN pattern
    ref = task_aucs(s, y)
    assert np.array_equal(np.isnan(ref), np.isnan(got))


def test_rank_auc_label_coding_and_errors():
    rng = np.random.default_rng(1)
    y = rng.random(50) < 0.3
    s = rng.standard_normal(50)
    a = roc_auc_columns(y, s)[0]
    assert a == roc_auc_columns(np.where(y, 1, -1), s)[0] == roc_auc_columns(y.astype(int)[:, None], s[:, None])[0]
    assert abs(a - roc_auc_score(y, s)) <= (3 * 52 + 1) * U
    with pytest.raises(ValueError, match="more than two"):
        roc_auc_columns(np.array([[0], [1], [2]]), np.zeros((3, 1)))
    with pytest.raises(ValueError, match="shape"):
        roc_auc_columns(np.zeros((3, 2)), np.zeros((3, 1)))


# --------------------------------------------------------------------------- decision values


def _blocks(planted, s_index=2, p=6):
    A, d, P, labels, train = planted
    tr, te = np.flatnonzero(train), np.flatnonzero(~train)
    S = diffusion_spectra(d, diffusion_betas(p, 0.5))
    return KernelBlocks(P, tr, te, "cpu"), S, labels.to_numpy()[tr], labels.to_numpy()[te], tr, te, P


def test_fit_task_scores_are_the_same_fits_scored_by_one_gemm(planted):
    blocks, S, ytr, yte, *_ = _blocks(planted)
    Ktr, Kte = blocks(S[2])
    ytr = ytr.copy()
    ytr[:, 1] = 0                                    # one class in training -> NaN column
    C = 1.0
    ref = task_scores(Ktr, Kte, ytr, C, LIBSVM)
    got = fit_task_scores(Ktr, Kte, ytr, C, LIBSVM)
    assert np.array_equal(np.isnan(ref), np.isnan(got)) and np.isnan(got[:, 1]).all()
    for k in range(ytr.shape[1]):
        if ytr[:, k].min() == ytr[:, k].max():
            continue
        m = svm_classifier(C, solver="libsvm").fit(Ktr, ytr[:, k])
        a, sv = m.dual_coef_[0], m.support_
        bound = 2 * gamma(len(sv) + 1) * (np.abs(Kte[:, sv]) @ np.abs(a) + abs(m.intercept_[0]))
        assert (np.abs(got[:, k] - ref[:, k]) <= bound).all()
    # the fits in a thread pool are the same computations
    assert np.array_equal(fit_task_scores(Ktr, Kte, ytr, C, LIBSVM, n_jobs=3), got, equal_nan=True)


def test_fit_task_scores_other_classifiers_use_their_decision_function(planted):
    blocks, S, ytr, *_ = _blocks(planted)
    Ktr, Kte = blocks(S[1])

    def logistic(C):
        return LogisticRegression(C=C, max_iter=200)

    ref = task_scores(Ktr, Kte, ytr, 1.0, logistic)
    assert np.array_equal(fit_task_scores(Ktr, Kte, ytr, 1.0, logistic), ref)


def test_fit_task_scores_rejects_what_task_scores_rejects(planted):
    blocks, S, ytr, *_ = _blocks(planted)
    Ktr, Kte = blocks(S[1])
    bad = Ktr.copy()
    bad[0, 0] = np.nan
    with pytest.raises(ValueError, match="NaN"):
        fit_task_scores(bad, Kte, ytr, 1.0)
    other = blocks(S[4])[0]           # square, symmetric, not Ktr: the test x test mistake
    for scorer in (task_scores, fit_task_scores):
        with pytest.raises(InputError, match="test x test"):
            scorer(Ktr, other, ytr, 1.0)


# --------------------------------------------------------------------------- kernel blocks


def test_combined_blocks_equal_one_gemm_within_the_rounding_bound(planted):
    blocks, S, ytr, yte, tr, te, P = _blocks(planted, p=6)
    n, p = P.shape[0], S.shape[0]
    w = np.array([0.5, 0.0, 0.2, 0.0, 0.0, 0.3])
    ref_tr, ref_te = blocks(w @ S)
    # not every nonzero kernel kept: the reference GEMM, same bits
    blocks.keep(0, blocks(S[0]))
    got_tr, got_te = blocks.combine(w, S)
    assert np.array_equal(got_tr, ref_tr) and np.array_equal(got_te, ref_te)
    for i in (2, 5):
        blocks.keep(i, blocks(S[i]))
    got_tr, got_te = blocks.combine(w, S)
    diag = (P ** 2) @ (n * (w @ S))                 # the full kernel's diagonal
    g = 2 * gamma(n + p + 3)
    assert (np.abs(got_tr - ref_tr) <= g * np.sqrt(np.outer(diag[tr], diag[tr]))).all()
    assert (np.abs(got_te - ref_te) <= g * np.sqrt(np.outer(diag[te], diag[tr]))).all()
    assert np.array_equal(got_tr, got_tr.T)         # a sum of symmetric blocks stays symmetric
    # zero weights are skipped exactly: one nonzero weight is that block scaled
    one = np.zeros(p)
    one[5] = 0.7
    assert np.array_equal(blocks.combine(one, S)[0], 0.7 * blocks.cached[5][0])


def test_kept_kernels_follow_use_and_budget():
    W = [np.array([[0.5, 0, 0.5], [0.2, 0.8, 0]]), np.array([0.0, 0.0, 1.0])]
    assert _kernels_to_keep(W, 2 ** 20, 10) == {0, 1, 2}
    assert _kernels_to_keep(W, 2 ** 20, 2) == {0, 2}     # used twice each, before kernel 1 (once)
    assert _kernels_to_keep(W, 2 ** 20, 0) == set()


# --------------------------------------------------------------------------- one split


@pytest.fixture(scope="module")
def both_paths(planted):
    A, d, P, labels, train = planted
    betas = diffusion_betas(6, 0.5)
    args = (P, d, labels, train, betas, 1e-6, [0.1, 1.0, 10.0], 3, 0)
    kw = {"adjacency": A, "device": "cpu", "classifier": LIBSVM}
    ref = evaluate_split(*args, **kw, reference=True)
    fast = evaluate_split(*args, **kw)
    jobs = evaluate_split(*args, **kw, n_jobs=2, cache_mib=0.05)
    return ref, fast, jobs, int((~train).sum())


def _auc(res, table="roc", keys=("method", "task")):
    return getattr(res, table).set_index(list(keys))["auc"]


def _rounding_or_tie_steps(diff: pd.Series, planted, n_test: int) -> bool:
    """Each |AUC difference| is the AUC rounding bound away from a whole
    number of half-steps 1 / (2 n+ n-) (tie-breaking of near-ties), and at
    most the issue's 1e-3."""
    _, _, _, labels, train = planted
    yte = labels.to_numpy()[~train]
    npn = pd.Series(yte.sum(axis=0) * (len(yte) - yte.sum(axis=0)), index=labels.columns)
    steps = diff * 2 * npn.reindex(diff.index.get_level_values("task")).to_numpy()
    slack = 2 * npn.max() * (3 * (n_test + 2) + 1) * U
    return bool(((steps - steps.round()).abs() <= slack).all() and diff.max() <= 1e-3)


def test_split_tables_of_the_fast_path_equal_the_reference(both_paths, planted):
    ref, fast, _, n_test = both_paths
    # kernel learning and the inner CV's choice are untouched
    pd.testing.assert_frame_equal(fast.weights, ref.weights)
    assert fast.notes == ref.notes
    assert list(fast.times["method"]) == list(ref.times["method"])
    assert list(fast.cv["C"]) == list(ref.cv["C"]) and list(fast.cv["chosen"]) == list(ref.cv["chosen"])
    assert (fast.cv["mean_auc"] - ref.cv["mean_auc"]).abs().max() <= 1e-3
    assert list(fast.roc.columns) == list(ref.roc.columns)
    assert list(zip(fast.roc["method"], fast.roc["task"])) == list(zip(ref.roc["method"], ref.roc["task"]))
    a, b = _auc(ref), _auc(fast)
    assert a.isna().equals(b.isna())
    diff = (a - b).abs().dropna()
    # unchanged kernels and fits: AUC rounding, or tie-breaking of near-ties
    same = ["rBaseline", "uBaseline", "eBaseline", "Neighbor Counting", "FS-Weighted Averaging"]
    assert _rounding_or_tie_steps(diff.loc[same], planted, n_test)
    ka, kb = _auc(ref, "kernel_roc", ("kernel", "task")), _auc(fast, "kernel_roc", ("kernel", "task"))
    assert ka.isna().equals(kb.isna())
    assert _rounding_or_tie_steps((ka - kb).abs().dropna(), planted, n_test)
    # learned kernels summed from blocks: LIBSVM within its tolerance, AUC within the 1e-3
    assert diff.max() <= 1e-3


def test_split_tables_do_not_depend_on_threads_or_the_block_cache(both_paths, planted):
    ref, fast, jobs, n_test = both_paths
    # n_jobs=2 runs the same fits; a cache too small for any block (0.05 MiB)
    # sends every learned kernel to the reference GEMM
    pd.testing.assert_frame_equal(jobs.weights, fast.weights)
    pd.testing.assert_frame_equal(jobs.kernel_roc, fast.kernel_roc)
    a, b = _auc(fast), _auc(jobs)
    unchanged = ["rBaseline", "uBaseline", "eBaseline", "Neighbor Counting", "FS-Weighted Averaging"]
    pd.testing.assert_series_equal(a.loc[unchanged], b.loc[unchanged])
    assert (a - b).abs().max() <= 1e-3
    # without kept blocks every kernel is the reference's arithmetic
    assert _rounding_or_tie_steps((_auc(ref) - b).abs().dropna(), planted, n_test)
