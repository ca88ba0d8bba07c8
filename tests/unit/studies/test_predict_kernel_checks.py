"""Issue #16 section 4: a test x test kernel passed at predict time where the
test x train kernel belongs (n_test = n_train, so the shapes agree) is
rejected by every predict path on precomputed kernels: KOMD, EasyMKL, the
diffusion study's SVM scoring and PIMKL's fit_predict, through the one shared
check :func:`biokernels.solvers.kernel_lists.check_predict_kernel`.

The planted problem: labels are the sign of feature 0, RBF kernels; with the
right kernel a margin classifier is ~95% accurate, with K(X_test, X_test) it
scores the test samples against the wrong points (about chance)."""

from __future__ import annotations

import numpy as np
import pytest

from biokernels.studies.pimkl import protocol as pimkl
from biokernels.errors import InputError
from biokernels.solvers.easymkl import KOMD, EasyMKL
from biokernels.solvers.kernel_lists import check_predict_kernel, kernel_sketch, predict_tolerance

MISTAKE = r"square, symmetric \(60, 60\) kernel.*not the training kernel.*expected the \(n_test, n_train\) = \(60, 60\)"


def _rbf(A, B, s=4.0):
    return np.exp(-((A[:, None, :] - B[None, :, :]) ** 2).sum(-1) / s)


def _planted(n=60, seed=0, d=4):
    rng = np.random.default_rng(seed)
    Xtr, Xte = rng.normal(size=(n, d)), rng.normal(size=(n, d))
    ytr, yte = (Xtr[:, 0] > 0).astype(int), (Xte[:, 0] > 0).astype(int)
    return Xtr, Xte, ytr, yte


# ------------------------------------------------------------------ the shared check

def test_check_predict_kernel_shapes_and_legit_uses():
    Xtr, Xte, _, _ = _planted()
    Ktr, Kte, Ktt = _rbf(Xtr, Xtr), _rbf(Xte, Xtr), _rbf(Xte, Xte)
    # wrong column count: the message names both shapes
    with pytest.raises(InputError, match=r"K_x: expected shape \(n_test, n_train\) = \(n_test, 60\).*got \(60, 59\)"):
        check_predict_kernel(Kte[:, :59], 60, Ktr, name="K_x")
    with pytest.raises(InputError, match=r"K_x: expected finite"):
        check_predict_kernel(np.full((3, 60), np.nan), 60, Ktr, name="K_x")
    # square only because n_test = n_train: not symmetric, accepted as is
    assert check_predict_kernel(Kte, 60, Ktr) is Kte
    assert check_predict_kernel(Kte, 60, kernel_sketch(Ktr)) is Kte
    # fewer or more test rows than training samples: never square, accepted
    assert check_predict_kernel(Kte[:7], 60, Ktr).shape == (7, 60)
    # the training kernel itself, a copy, and a recomputation (einsum instead
    # of broadcasting: differs by rounding only)
    recomputed = np.exp(-(np.einsum("ij,ij->i", Xtr, Xtr)[:, None] + np.einsum("ij,ij->i", Xtr, Xtr)[None, :]
                          - 2 * Xtr @ Xtr.T) / 4.0)
    # Gram-expanded d^2 is off by ~4 p eps ||x||^2 ~ 3e-14 (p = 4), k = exp(-d^2/4) by a
    # quarter of that: rounding, nonzero, far below 1e-12
    assert 0 < np.abs(recomputed - Ktr).max() < 1e-12
    for K in (Ktr, Ktr.copy(), recomputed):
        check_predict_kernel(K, 60, Ktr)
        check_predict_kernel(K, 60, kernel_sketch(Ktr))
    # the mistake, against the training kernel or its sketch
    for train in (Ktr, kernel_sketch(Ktr)):
        with pytest.raises(InputError, match=MISTAKE):
            check_predict_kernel(Ktt, 60, train)
    # without a reference only the shape is checked
    check_predict_kernel(Ktt, 60, None)
    # a constant kernel carries no sample information: accepted
    check_predict_kernel(np.ones((60, 60)), 60, Ktr)


def test_check_predict_kernel_tolerance_follows_the_dtype():
    """sqrt(eps) * max|K|: 1.5e-8 relative in float64, 3.5e-4 in float32. A
    float32 test x test kernel is symmetric only to float32 rounding and is
    still caught; a float32 copy of the float64 training kernel (differences
    ~1e-8 relative, above float64's tolerance) is still the training kernel."""
    torch = pytest.importorskip("torch")
    Xtr, Xte, _, _ = _planted()
    Ktr = _rbf(Xtr, Xtr)
    # sqrt(eps) * scale, computed in float64 (a couple of roundings)
    eps64 = np.finfo(np.float64).eps
    assert predict_tolerance(eps64, 2.0) == pytest.approx(2 * np.sqrt(eps64), rel=1e-12)
    Ktt32 = torch.tensor(_rbf(Xte, Xte), dtype=torch.float32)
    Ktt32 = Ktt32 + 1e-6 * torch.triu(torch.ones(60, 60), 1)   # float32-level asymmetry
    with pytest.raises(InputError, match="square, symmetric"):
        check_predict_kernel(Ktt32, 60, Ktr)
    K32 = torch.tensor(Ktr, dtype=torch.float32)
    assert np.abs(K32.numpy() - Ktr).max() > predict_tolerance(np.finfo(np.float64).eps, 1.0)
    check_predict_kernel(K32, 60, Ktr)
    check_predict_kernel(K32, 60, kernel_sketch(Ktr))


# ------------------------------------------------------------------ KOMD, EasyMKL

def test_komd_rejects_a_test_by_test_kernel():
    Xtr, Xte, ytr, yte = _planted()
    Ktr, Kte, Ktt = _rbf(Xtr, Xtr), _rbf(Xte, Xtr), _rbf(Xte, Xte)
    m = KOMD(lam=0.1).fit(Ktr, ytr)
    # planted noiseless rule sign(x0) (Bayes accuracy 1): an RBF rule fitted on 60 points
    # in 4-D errs mostly near x0 = 0 (0.95 here); 0.85 is ~3.5 binomial sd (0.028 for 60
    # test points at 0.95) below it
    assert (m.predict(Kte) == yte).mean() > 0.85          # planted linear rule, RBF kernel
    assert (m.predict(Ktr) == ytr).mean() > 0.9           # the training set, with its own kernel
    np.testing.assert_allclose(m.decision_function(Ktr.copy()), m.decision_function(Ktr))
    with pytest.raises(InputError, match=r"K_test: got a square, symmetric \(60, 60\)"):
        m.decision_function(Ktt)
    with pytest.raises(InputError, match=MISTAKE):
        m.predict(Ktt)


def test_easymkl_rejects_a_test_by_test_kernel_and_names_it():
    Xtr, Xte, ytr, yte = _planted()
    Ks = [_rbf(Xtr, Xtr), _rbf(Xtr[:, :2], Xtr[:, :2])]
    Kt = [_rbf(Xte, Xtr), _rbf(Xte[:, :2], Xtr[:, :2])]
    Ktt = [_rbf(Xte, Xte), _rbf(Xte[:, :2], Xte[:, :2])]
    m = EasyMKL(lam=0.1).fit(Ks, ytr)
    assert (m.predict(Kt) == yte).mean() > 0.85
    m.predict(Ks)                                          # the training kernels themselves
    m.predict(np.stack(Ks))                                # as a (P, n, n) array (copies)
    with pytest.raises(InputError, match="kernel 0: got a " + MISTAKE):
        m.decision_function(Ktt)
    with pytest.raises(InputError, match="kernel 1: got a square, symmetric"):
        m.predict([Kt[0], Ktt[1]])                         # only kernel 1 mistaken
    with pytest.raises(InputError, match="kernel 0: got a square, symmetric"):
        m.combine(Ktt)


# ------------------------------------------------------------------ diffusion study

def test_diffusion_svm_scoring_rejects_a_test_by_test_kernel():
    from biokernels.io.networks import adjacency_matrix
    from biokernels.kernels.diffusion import laplacian, laplacian_eigh
    from biokernels.studies.diffusion.protocol import KernelBlocks, svm_task_scores
    from biokernels.synth.networks import planted_function_network

    edges, labels, _ = planted_function_network(120, 500, 2, np.random.default_rng(1))
    _, A = adjacency_matrix(edges, list(labels.index))
    d, P = laplacian_eigh(laplacian(A))
    s = np.exp(-d) / np.exp(-d).sum()                       # a diffusion kernel's spectrum
    train, test = np.arange(60), np.arange(60, 120)
    Ktr, Kte = KernelBlocks(P, train, test, device="cpu")(s)
    Ktt, _ = KernelBlocks(P, test, test, device="cpu")(s)
    Y = labels.to_numpy()
    assert svm_task_scores(Ktr, Kte, Y[train], 1.0).shape == (60, 2)
    assert svm_task_scores(Ktr, Ktr, Y[train], 1.0).shape == (60, 2)   # scoring the training proteins
    with pytest.raises(InputError, match=r"svm_task_scores: Kte: got a square, symmetric \(60, 60\)"):
        svm_task_scores(Ktr, Ktt, Y[train], 1.0)
    with pytest.raises(InputError, match=r"svm_task_scores: Kte: expected shape .*\(n_test, 60\)"):
        svm_task_scores(Ktr, Kte[:, :50], Y[train], 1.0)


# ------------------------------------------------------------------ PIMKL

@pytest.mark.parametrize("classifier,weights", [("komd", None), ("svm", None), ("komd", "equal"),
                                                ("svm", "equal")])
def test_pimkl_fit_predict_rejects_a_test_by_test_kernel(classifier, weights):
    Xtr, Xte, ytr, yte = _planted()
    K_train = np.stack([_rbf(Xtr, Xtr), _rbf(Xtr[:, 1:], Xtr[:, 1:])])
    K_test = np.stack([_rbf(Xte, Xtr), _rbf(Xte[:, 1:], Xtr[:, 1:])])
    K_tt = np.stack([_rbf(Xte, Xte), _rbf(Xte[:, 1:], Xte[:, 1:])])
    w = None if weights is None else np.ones(2)
    s, _ = pimkl.fit_predict(K_train, K_test, ytr, 0.1, classifier=classifier, weights=w)
    assert ((s >= 0).astype(int) == yte).mean() > 0.8
    pimkl.fit_predict(K_train, K_train, ytr, 0.1, classifier=classifier, weights=w)   # training set
    with pytest.raises(InputError, match=r"fit_predict: K_test\[0\]: got a square, symmetric \(60, 60\)"):
        pimkl.fit_predict(K_train, K_tt, ytr, 0.1, classifier=classifier, weights=w)
    with pytest.raises(InputError, match=r"K_train \(P, n, n\) and K_test \(P, m, n\).*"
                                         r"\(2, 60, 60\) and \(1, 60, 60\)"):
        pimkl.fit_predict(K_train, K_test[:1], ytr, 0.1, classifier=classifier, weights=w)


def test_mkl_classifier_rejects_a_test_by_test_kernel():
    """MKLClassifier (CKA weights, an SVC on the combined kernel): the same
    mistake as for EasyMKL, caught at predict (issue #16)."""
    import numpy as np
    import pytest

    from biokernels.errors import InputError
    from biokernels.solvers.mkl import CKA, MKLClassifier

    rng = np.random.default_rng(0)
    X = rng.normal(size=(60, 3))
    y = (X[:, 0] > 0).astype(int)
    tr, te = np.arange(30), np.arange(30, 60)
    Ks = [X[:, [j]] @ X[:, [j]].T + np.eye(60) * 1e-3 for j in range(3)]
    m = MKLClassifier(mkl=CKA()).fit([K[np.ix_(tr, tr)] for K in Ks], y[tr])
    m.predict([K[np.ix_(te, tr)] for K in Ks])                       # the right kernels
    m.predict([K[np.ix_(tr, tr)] for K in Ks])                       # the training kernels themselves
    with pytest.raises(InputError, match=r"\(n_test, n_train\)|n_test"):
        m.predict([K[np.ix_(te, te)] for K in Ks])
