"""The contract every MKL method of biokernels.solvers.mkl.MKL_METHODS keeps.

Parametrized over the registry, so a new method is checked as soon as its
line is in MKL_METHODS; in the spirit of MKLpy's base-class checks: fit
returns self with non-negative weights of length P and unit norm (the
method's ``weight_norm``), combine is the weighted sum, parameters
round-trip (scikit-learn), an unfitted model raises NotFittedError, and bad
inputs raise a ValueError (InputError) saying what is wrong. The same checks
run on ``UniformMKL``, a method defined only here and registered by one
line, which shows what adding a method takes.
"""

from __future__ import annotations

import inspect

import numpy as np
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from biokernels.errors import InputError
from biokernels.solvers.mkl import MKLClassifier, MKLMethod, make_mkl
from biokernels.solvers.mkl import registry
from biokernels.solvers.mkl.base import LEARNERS, WEIGHT_NORMS

N, N_TEST, P = 24, 9, 3


class UniformMKL(MKLMethod):
    """Equal weights 1/P: the smallest MKL method, one hook and nothing else."""

    def _learn_weights(self, Ks, y):
        return np.full(len(Ks), 1.0 / len(Ks))


@pytest.fixture(params=[*registry.MKL_METHODS, "Uniform"])
def method(request, monkeypatch):
    """A registered method's name; "Uniform" is UniformMKL, added to a copy of the registry."""
    if request.param == "Uniform":
        monkeypatch.setattr(registry, "MKL_METHODS", {**registry.MKL_METHODS, "Uniform": UniformMKL})
    return request.param


def _sqdist(A, B):
    return ((A[:, None, :] - B[None, :, :]) ** 2).sum(-1)


def _data(seed=0):
    """P PSD training kernels (N, N), their test kernels (N_TEST, N), labels 0/1 led by feature 0."""
    rng = np.random.default_rng(seed)
    X, Xt = rng.normal(size=(N, 4)), rng.normal(size=(N_TEST, 4))
    y = np.where(X[:, 0] + 0.3 * rng.normal(size=N) > 0, 1, 0)
    Ks = [X @ X.T, np.exp(-_sqdist(X, X) / 4), X[:, 1:] @ X[:, 1:].T]
    Kt = [Xt @ X.T, np.exp(-_sqdist(Xt, X) / 4), Xt[:, 1:] @ X[:, 1:].T]
    return Ks, Kt, y


def _norm(w, kind):
    return {"l1": np.sum, "l2": np.linalg.norm}[kind](w)


def test_registered_class_states_its_contract(method):
    cls = registry.MKL_METHODS[method]
    assert issubclass(cls, MKLMethod)
    assert cls.weight_norm in WEIGHT_NORMS and cls.default_learner in LEARNERS
    model = make_mkl(method)
    assert type(model) is cls and not hasattr(model, "weights_")
    # scikit-learn's rule: every __init__ argument is a parameter, stored as given; psd_tol is one
    # (the study passes psd_tol=None through make_mkl)
    names = [p for p in inspect.signature(cls).parameters]
    assert sorted(model.get_params()) == sorted(names) and "psd_tol" in names
    assert make_mkl(method, psd_tol=None).psd_tol is None


def test_fit_returns_self_with_non_negative_normalised_weights(method):
    Ks, _, y = _data()
    model = make_mkl(method)
    assert model.fit(Ks, y) is model
    w = model.weights_
    assert w.dtype == np.float64 and w.shape == (P,)
    assert np.isfinite(w).all() and (w >= 0).all()
    assert _norm(w, model.weight_norm) == pytest.approx(1.0, abs=1e-12)
    assert model.n_kernels_ == P and model.n_train_ == N
    np.testing.assert_array_equal(model.classes_, [0, 1])
    # deterministic; the same weights for a (P, n, n) array and for labels spelled otherwise
    np.testing.assert_array_equal(make_mkl(method).fit(Ks, y).weights_, w)
    np.testing.assert_allclose(make_mkl(method).fit(np.stack(Ks), y).weights_, w, rtol=1e-12, atol=1e-15)
    lab = np.where(y == 1, "pos", "neg")
    other = make_mkl(method).fit(Ks, lab)
    np.testing.assert_array_equal(other.classes_, ["neg", "pos"])
    np.testing.assert_allclose(other.weights_, w, rtol=1e-12, atol=1e-15)


def test_combine_is_the_weighted_sum(method):
    Ks, Kt, y = _data(1)
    model = make_mkl(method).fit(Ks, y)
    w = model.weights_
    for kernels, shape in ((Ks, (N, N)), (Kt, (N_TEST, N))):
        ref = sum(w_r * K for w_r, K in zip(w, kernels))
        out = model.combine(kernels)
        assert out.shape == shape and out.dtype == np.float64
        # P products and sums per entry, in the same order: a few eps of the largest term
        np.testing.assert_allclose(out, ref, rtol=0, atol=4 * P * np.finfo(float).eps * np.abs(ref).max())
    with pytest.raises(InputError, match=f"expected {P} test kernels"):
        model.combine(Kt[:2])
    with pytest.raises(InputError, match="kernel 2.*columns"):
        model.combine([Kt[0], Kt[1], Kt[2][:, :5]])


def test_params_round_trip(method):
    model = make_mkl(method)
    params = model.get_params()
    assert clone(model).get_params() == params
    fresh = registry.MKL_METHODS[method]()
    assert fresh.set_params(**params) is fresh and fresh.get_params() == params
    assert fresh.set_params(psd_tol=None).get_params()["psd_tol"] is None
    Ks, _, y = _data()
    assert not hasattr(clone(model.fit(Ks, y)), "weights_")      # clone: parameters, not the fit
    with pytest.raises(ValueError, match="Invalid parameter"):
        model.set_params(not_a_setting=1)


def test_unfitted_model_raises(method):
    _, Kt, _ = _data()
    with pytest.raises(NotFittedError):
        make_mkl(method).combine(Kt)


_K = _data()[0][1]
_Y = _data()[2]
BAD = {
    "kernels of different shapes": ([_K, _K[:10, :10]], _Y, "kernel 1.*shape"),
    "a non-square kernel": ([_K[:, :5]], _Y, "kernel 0.*square"),
    "an asymmetric kernel": ([_K, _K + np.triu(np.ones((N, N)), 1)], _Y, "kernel 1.*symmetric"),
    "a kernel that is not PSD": ([_K, _K - 2 * np.eye(N)], _Y, "kernel 1.*positive semi-definite"),
    "a NaN in a kernel": ([np.where(np.eye(N) > 0, np.nan, _K)], _Y, "kernel 0.*finite"),
    "no kernels": ([], _Y, "at least 1 kernel"),
    "labels of the wrong length": ([_K], _Y[:-2], f"expected {N} labels"),
    "a single class": ([_K], np.zeros(N), "2 classes"),
    "three classes": ([_K], np.arange(N) % 3, "2 classes"),
}


@pytest.mark.parametrize("case", list(BAD))
def test_bad_inputs_raise_saying_what_is_wrong(method, case):
    Ks, y, message = BAD[case]
    with pytest.raises(ValueError, match=message) as err:     # InputError is a ValueError
        make_mkl(method).fit(Ks, y)
    assert isinstance(err.value, InputError)


def test_pairs_with_its_default_learner(method):
    """The study's use: MKLClassifier with the method's default_learner learns the same weights."""
    Ks, Kt, y = _data(2)
    lab = np.where(y == 1, "pos", "neg")
    mkl = make_mkl(method)
    clf = MKLClassifier(mkl=mkl, learner=type(mkl).default_learner).fit(Ks, lab)
    np.testing.assert_array_equal(clf.weights_, make_mkl(method).fit(Ks, lab).weights_)
    pred = clf.predict(Kt)
    assert pred.shape == (N_TEST,) and set(pred) <= {"pos", "neg"}
    assert clf.decision_function(Kt).shape == (N_TEST,)


def test_a_method_is_one_class_and_one_registry_line(monkeypatch):
    """UniformMKL (above) is a whole method: the hook, then one entry in MKL_METHODS; make_mkl
    finds it and takes its settings by the name's prefix, like any registered method."""
    with pytest.raises(InputError, match="unknown MKL method 'Uniform'"):
        make_mkl("Uniform")
    monkeypatch.setattr(registry, "MKL_METHODS", {**registry.MKL_METHODS, "Uniform": UniformMKL})
    model = make_mkl("Uniform", {"uniform_psd_tol": None, "easymkl_lam": 0.3})
    assert isinstance(model, UniformMKL) and model.psd_tol is None
    Ks, Kt, y = _data()
    np.testing.assert_array_equal(model.fit(Ks, y).weights_, np.full(P, 1 / P))
    np.testing.assert_allclose(model.combine(Kt), sum(Kt) / P, rtol=1e-14)
    with pytest.raises(InputError, match=r"\['uniform_gamma'\].*uniform_psd_tol"):
        make_mkl("Uniform", {"uniform_gamma": 1.0})


@pytest.mark.parametrize("weights, message", [
    (np.full(P - 1, 1 / (P - 1)), "shape"),
    (np.array([1.5, -0.5, 0.0]), "finite and >= 0"),
    (np.ones(P), "l1 norm 3"),
])
def test_a_broken_hook_is_reported(weights, message):
    """A method whose _learn_weights breaks the contract fails at fit, naming itself."""

    class Broken(MKLMethod):
        def _learn_weights(self, Ks, y):
            return weights

    Ks, _, y = _data()
    with pytest.raises(RuntimeError, match=f"Broken._learn_weights.*{message}"):
        Broken().fit(Ks, y)
    with pytest.raises(NotImplementedError, match="_learn_weights"):
        MKLMethod().fit(Ks, y)
