"""The MMDT estimator: hyperplanes and transform by alternation.

:class:`MMDT` minimises the MMDT objective (Hoffman et al. 2013, L2 loss) by
alternating the hyperplane step (:mod:`~biokernels.solvers.mmdt.hyperplanes`)
and the LS-MMDT transform step (:mod:`~biokernels.solvers.mmdt.solver`;
Rodner et al. 2013), and scores target examples ``h_k^T W [x; 1]``. The
objective, the steps and the stopping rule: ``docs/mmdt_notes.md``.
"""

from __future__ import annotations

import numpy as np
from sklearn.base import BaseEstimator, ClassifierMixin

from biokernels.errors import InputError
from biokernels.seeds import make_rng
from biokernels.solvers.mmdt.hyperplanes import ovr_squared_hinge_svm
from biokernels.solvers.mmdt.solver import BACKENDS, SOLVERS, solve_transform
from biokernels.solvers.mmdt.validation import (_check_count, _check_labels, _check_matrix, _check_positive, _signs,
                                                augment)

__all__ = ["MMDT"]


class MMDT(ClassifierMixin, BaseEstimator):
    """Max-margin domain transform (MMDT) with the LS-MMDT transform solver.

    Learns one-vs-rest hyperplanes ``H`` in the (augmented) source space and
    an affine transform ``W`` of target features into it by alternation (see
    ``docs/mmdt_notes.md`` for the objective, equations and steps). A target
    example ``x`` is scored ``h_k^T W [x; 1]`` for every class k seen in the
    source, including classes without target training examples. Optionally
    ``W`` is regularised towards a prior map ``W0`` (``transform_prior``).

    Parameters
    ----------
    C_source : float, default 1.0
        ``C_S``, weight of the squared hinge loss of the source examples (> 0).
    C_target : float, default 1.0
        ``C_T`` = ``C~`` of the paper's Eq. 6 (``lambda = 1 / (2 C_T)``): weight
        of the target loss in both steps (> 0).
    solver : {"lowrank", "explicit"}, default "lowrank"
        Transform solver: ``B`` of Eqs. 12-15 or ``W`` of Eqs. 7-10.
    tol : float, default 1e-4
        Transform solver tolerance (projected-gradient spread).
    max_iter : int, default 20000
        Transform solver epochs per W-step (see :func:`solve_transform`).
    shrinking : bool, default True
        Shrinking heuristic of the transform solver.
    backend : {"numba", "python"}, default "numba"
        Transform solver loop: compiled (numba) or the pure-Python reference
        (:func:`solve_transform`).
    max_alternations : int, default 5
        W-steps at most (each followed by a hyperplane step).
    alternation_tol : float, default 1e-3
        Stop when the MMDT objective decreases by less than this fraction.
    warm_start : bool, default True
        Start each W-step from the previous ``alpha`` (``B`` does not depend on
        ``H``, so the warm start is exact).
    svm_tol : float, default 1e-4
        LinearSVC tolerance of the hyperplane steps.
    svm_max_iter : int, default 10000
        LinearSVC iterations of the hyperplane steps.
    transform_prior : None, "identity" or array of shape (D, Dt), default None
        Prior transform ``W0`` of the (unaugmented) features; the regulariser
        becomes ``1/2 ||W - W0||_F^2`` with ``W0`` extended to the bias
        (``W0 [x; 1] = [W0 x; 1]``). None: ``W0 = 0``, the paper's Eq. 1.
        ``"identity"`` (needs ``D == Dt``) is the authors' code's
        ``regularize_identity``; a matrix generalises it to a known naive map
        between different feature spaces. An extension, not in the paper's
        equations: with ``W0 = 0`` the transform only ever enters through
        ``H W`` (rank <= m), so the target classifier is a multi-task SVM
        coupled by ``R = H H^T`` and ignores any feature correspondence.
    random_state : int, numpy.random.Generator or None
        Seeds the coordinate orders (and LinearSVC's, via an int drawn from it).

    Attributes
    ----------
    classes_ : ndarray, shape (m,)
        Class labels (sorted; from the source labels or ``classes``).
    hyperplanes_ : ndarray, shape (m, D + 1)
        Final source hyperplanes ``H`` (bias last).
    source_hyperplanes_ : ndarray, shape (m, D + 1)
        One-vs-rest hyperplanes of the source alone (SVM-Source; step 0 when
        there is no ``transform_prior``).
    beta_ : ndarray, shape (m, Dt + 1)
        ``B`` of the final transform, ``W = W0 + transform_hyperplanes_^T B``.
    prior_ : ndarray, shape (D + 1, Dt + 1)
        The augmented ``W0`` (zeros without ``transform_prior``).
    transform_hyperplanes_ : ndarray, shape (m, D + 1)
        The hyperplanes the final W-step used.
    alpha_ : ndarray, shape (m, n_target)
        Dual variables of the final W-step.
    objective_history_ : list of float
        MMDT objective after step 0 and after each alternation.
    n_alternations_ : int
        W-steps made.
    transform_results_ : list of TransformResult
        Diagnostics of every W-step.
    n_iter_ : ndarray of int, shape (n_alternations_,)
        Epochs of each W-step's coordinate descent.
    converged_ : bool
        True if every W-step met ``tol`` within ``max_iter`` epochs (each one
        that did not also raised a :class:`TransformConvergenceWarning`).
    n_not_converged_ : int
        W-steps that stopped at ``max_iter`` without meeting ``tol``.
    pg_spread_ : ndarray, shape (n_alternations_,)
        Each W-step's final projected-gradient spread (its stopping quantity,
        gradient units; ``<= tol`` where converged).
    kkt_violation_ : ndarray, shape (n_alternations_,)
        ``max |PG|`` of the transform dual at each W-step's returned ``alpha``.
    n_features_in_ : int
        ``Dt`` (target features; ``predict`` takes target examples).
    n_source_features_ : int
        ``D``.
    """

    def __init__(self, C_source: float = 1.0, C_target: float = 1.0, solver: str = "lowrank",
                 tol: float = 1e-4, max_iter: int = 20000, shrinking: bool = True,
                 backend: str = "numba",
                 max_alternations: int = 5, alternation_tol: float = 1e-3,
                 warm_start: bool = True, svm_tol: float = 1e-4, svm_max_iter: int = 10000,
                 transform_prior=None, random_state=None):
        self.C_source = C_source
        self.C_target = C_target
        self.solver = solver
        self.tol = tol
        self.max_iter = max_iter
        self.shrinking = shrinking
        self.backend = backend
        self.max_alternations = max_alternations
        self.alternation_tol = alternation_tol
        self.warm_start = warm_start
        self.svm_tol = svm_tol
        self.svm_max_iter = svm_max_iter
        self.transform_prior = transform_prior
        self.random_state = random_state

    # ---------------------------------------------------------------- fit
    def fit(self, Xs, ys, Xt, yt, classes=None):
        """Fit hyperplanes and transform on labelled source and target data.

        Parameters
        ----------
        Xs : array, shape (n_source, D)
            Source features (scaled by the caller; no constant column).
        ys : array, shape (n_source,)
            Source labels; at least two classes.
        Xt : array, shape (n_target, Dt)
            Labelled target features, ``n_target >= 1``; ``Dt`` may differ from ``D``.
        yt : array, shape (n_target,)
            Target labels, each among the source classes; classes without
            target examples are allowed (and predicted).
        classes : array-like, optional
            The expected classes; each must have source examples, and ``ys``
            must hold no other label.

        Returns
        -------
        self

        Raises
        ------
        InputError
            On non-2-D or non-finite features, label/row count mismatch,
            fewer than two source classes, a class in ``classes`` without source
            examples, a source label not in ``classes``, target labels not among
            the source classes, no target examples, invalid hyperparameters, or
            a ``transform_prior`` of the wrong shape.
        """
        C_S = _check_positive(self.C_source, "C_source")
        C_T = _check_positive(self.C_target, "C_target")
        if self.solver not in SOLVERS:
            raise InputError(f"solver: expected one of {SOLVERS}, got {self.solver!r}")
        if self.backend not in BACKENDS:
            raise InputError(f"backend: expected one of {BACKENDS}, got {self.backend!r}")
        _check_positive(self.tol, "tol")
        _check_count(self.max_iter, "max_iter")
        max_alt = _check_count(self.max_alternations, "max_alternations")
        alt_tol = _check_positive(self.alternation_tol, "alternation_tol")
        rng = make_rng(self.random_state, name="random_state")

        Xs = _check_matrix(Xs, "Xs")
        ys = _check_labels(ys, "ys", Xs.shape[0], "Xs")
        Xt = _check_matrix(Xt, "Xt")
        yt = _check_labels(yt, "yt", Xt.shape[0], "Xt")
        if Xs.shape[0] == 0:
            raise InputError("Xs: no source examples; expected at least one per class")
        if Xt.shape[0] == 0:
            raise InputError("Xt: no target examples; MMDT needs at least one labelled "
                             "target example to learn the transform")
        src_classes = np.unique(ys)
        if classes is None:
            self.classes_ = src_classes
        else:
            cls = np.unique(np.asarray(classes))
            missing = np.setdiff1d(cls, src_classes)
            if missing.size:
                raise InputError(f"ys: classes {missing.tolist()} (listed in classes) have no "
                                 "source examples; every class needs source examples")
            extra = np.setdiff1d(src_classes, cls)
            if extra.size:
                raise InputError(f"ys: labels {extra.tolist()} are not in classes "
                                 f"{cls.tolist()}")
            self.classes_ = cls
        m = self.classes_.size
        if m < 2:
            raise InputError(f"ys: expected at least 2 source classes, got {m} "
                             f"({self.classes_.tolist()})")
        try:
            unknown = np.setdiff1d(np.unique(yt), self.classes_)
        except TypeError as exc:
            raise InputError(f"yt: labels not comparable with the source labels ({exc})") from exc
        if unknown.size:
            raise InputError(f"yt: labels {unknown.tolist()} are not among the source classes "
                             f"{self.classes_.tolist()}; every target class needs source "
                             "examples")
        ys_idx = np.searchsorted(self.classes_, ys)
        yt_idx = np.searchsorted(self.classes_, yt)

        Xs_a = augment(Xs)
        Xt_a = augment(Xt)
        ns, nt = Xs_a.shape[0], Xt_a.shape[0]
        D, Dt = Xs.shape[1], Xt.shape[1]
        self.n_source_features_ = D
        self.n_features_in_ = Dt
        W0 = np.zeros((D + 1, Dt + 1))
        prior = self.transform_prior
        if isinstance(prior, str):
            if prior != "identity":
                raise InputError(f"transform_prior: expected None, 'identity' or a (D, Dt) "
                                 f"array, got {prior!r}")
            if D != Dt:
                raise InputError(f"transform_prior: 'identity' needs equal source and target "
                                 f"dimensions, got D={D} (Xs) and Dt={Dt} (Xt)")
            W0 = np.eye(D + 1)
        elif prior is not None:
            P = _check_matrix(prior, "transform_prior", Dt, " (columns = target features)")
            if P.shape[0] != D:
                raise InputError(f"transform_prior: expected shape ({D}, {Dt}) (source x target "
                                 f"features), got {P.shape}")
            W0[:D, :Dt] = P
            W0[D, Dt] = 1.0
        has_prior = prior is not None
        self.prior_ = W0
        Z0 = Xt_a @ W0.T                          # W0 x~_j, rows (nt, D + 1)

        def svm_seed():
            return int(rng.integers(2**31 - 1))

        weights = np.concatenate([np.full(ns, C_S), np.full(nt, C_T)])
        y_all = np.concatenate([ys_idx, yt_idx])
        # source-only hyperplanes (SVM-Source)
        H = ovr_squared_hinge_svm(Xs_a, ys_idx, m, np.full(ns, C_S), tol=self.svm_tol,
                                  max_iter=self.svm_max_iter, random_state=svm_seed())
        self.source_hyperplanes_ = H.copy()
        # step 0: W = W0. With W0 = 0 the transformed target examples are zero
        # vectors with a constant loss, so step 0 is the source-only SVM above.
        if has_prior:
            H = ovr_squared_hinge_svm(np.vstack([Xs_a, Z0]), y_all, m, weights,
                                      tol=self.svm_tol, max_iter=self.svm_max_iter,
                                      random_state=svm_seed())
        B = np.zeros((m, Xt_a.shape[1]))
        H_W = np.zeros_like(H)                    # W - W0 = H_W^T B = 0
        history = [self._objective(H, H_W, B, Z0, Xs_a, ys_idx, Xt_a, yt_idx, C_S, C_T)]
        results = []
        alpha = None
        for step in range(max_alt):
            offset = (Z0 @ H.T).T if has_prior else None   # h_i^T W0 x~_j, (m, nt)
            res = solve_transform(H, Xt_a, yt_idx, C_T, solver=self.solver, tol=self.tol,
                                  max_iter=self.max_iter, shrinking=self.shrinking, rng=rng,
                                  alpha0=alpha if self.warm_start else None, offset=offset,
                                  backend=self.backend,
                                  context=f"MMDT.fit W-step {step + 1} (of at most {max_alt})")
            results.append(res)
            alpha, B, H_W = res.alpha, res.beta, H
            Z = Z0 + (Xt_a @ B.T) @ H_W           # W x~_j = (W0 + H_W^T B) x~_j, (nt, D + 1)
            H = ovr_squared_hinge_svm(np.vstack([Xs_a, Z]), y_all, m, weights,
                                      tol=self.svm_tol, max_iter=self.svm_max_iter,
                                      random_state=svm_seed())
            history.append(self._objective(H, H_W, B, Z0, Xs_a, ys_idx, Xt_a, yt_idx, C_S, C_T))
            if history[-2] - history[-1] <= alt_tol * abs(history[-2]):
                break
        self.hyperplanes_ = H
        self.transform_hyperplanes_ = H_W
        self.beta_ = B
        self.alpha_ = alpha
        self.objective_history_ = history
        self.n_alternations_ = len(results)
        self.transform_results_ = results
        self.n_iter_ = np.array([r.n_iter for r in results], dtype=int)
        self.pg_spread_ = np.array([r.pg_spread for r in results])
        self.kkt_violation_ = np.array([r.kkt_violation for r in results])
        self.n_not_converged_ = int(sum(not r.converged for r in results))
        self.converged_ = self.n_not_converged_ == 0
        self._M = H_W @ H.T                       # scores = x~ W0^T H^T + (x~ B^T) H_W H^T
        self._P0 = W0.T @ H.T                     # (Dt + 1, m)
        return self

    @staticmethod
    def _objective(H, H_W, B, Z0, Xs_a, ys_idx, Xt_a, yt_idx, C_S, C_T) -> float:
        """MMDT objective f(W, H) with W = W0 + H_W^T B (Z0 = rows W0 x~_j)."""
        m = H.shape[0]
        Ts = _signs(ys_idx, m)
        Tt = _signs(yt_idx, m)
        xs = np.maximum(0.0, 1.0 - Ts * (H @ Xs_a.T))
        st = Z0 @ H.T + (Xt_a @ B.T) @ (H_W @ H.T)   # (nt, m): h_k^T W x~_j
        xt = np.maximum(0.0, 1.0 - Tt * st.T)
        wsq = float(np.sum((H_W @ H_W.T) * (B @ B.T)))
        return (0.5 * wsq + 0.5 * float(np.sum(H ** 2)) + C_S * float(np.sum(xs ** 2))
                + C_T * float(np.sum(xt ** 2)))

    @property
    def transform_(self) -> np.ndarray:
        """The transform ``W = W0 + transform_hyperplanes_^T beta_``, shape (D + 1, Dt + 1)."""
        self._check_fitted()
        return self.prior_ + self.transform_hyperplanes_.T @ self.beta_

    def _check_fitted(self):
        if not hasattr(self, "beta_"):
            from sklearn.exceptions import NotFittedError
            raise NotFittedError("MMDT is not fitted yet; call fit(Xs, ys, Xt, yt) first")

    # ---------------------------------------------------------------- predict
    def map_to_source(self, X) -> np.ndarray:
        """Target examples in the augmented source space, ``W [x; 1]``.

        Parameters
        ----------
        X : array, shape (n, Dt)

        Returns
        -------
        ndarray, shape (n, D + 1)

        Raises
        ------
        InputError
            If ``X`` is not 2-D with ``Dt`` finite columns.
        NotFittedError
            Before ``fit``.
        """
        self._check_fitted()
        X = _check_matrix(X, "X", self.n_features_in_, " (target features seen in fit)")
        Xa = augment(X)
        return Xa @ self.prior_.T + (Xa @ self.beta_.T) @ self.transform_hyperplanes_

    def decision_function(self, X) -> np.ndarray:
        """Class scores ``h_k^T W [x; 1]`` of target examples.

        Parameters
        ----------
        X : array, shape (n, Dt)
            Target features.

        Returns
        -------
        ndarray, shape (n, m)
            Column k is class ``classes_[k]`` (also for m = 2).

        Raises
        ------
        InputError
            If ``X`` is not 2-D with ``Dt`` finite columns.
        NotFittedError
            Before ``fit``.
        """
        self._check_fitted()
        X = _check_matrix(X, "X", self.n_features_in_, " (target features seen in fit)")
        Xa = augment(X)
        return Xa @ self._P0 + (Xa @ self.beta_.T) @ self._M

    def predict(self, X) -> np.ndarray:
        """Predicted class of target examples (arg max of :meth:`decision_function`).

        Parameters
        ----------
        X : array, shape (n, Dt)

        Returns
        -------
        ndarray, shape (n,)
            Labels from ``classes_``.

        Raises
        ------
        InputError
            If ``X`` is not 2-D with ``Dt`` finite columns.
        NotFittedError
            Before ``fit``.
        """
        return self.classes_[np.argmax(self.decision_function(X), axis=1)]

    def predict_source(self, X) -> np.ndarray:
        """Predicted class of source-domain examples with the final hyperplanes.

        Parameters
        ----------
        X : array, shape (n, D)

        Returns
        -------
        ndarray, shape (n,)

        Raises
        ------
        InputError
            If ``X`` is not 2-D with ``D`` finite columns.
        """
        self._check_fitted()
        X = _check_matrix(X, "X", self.n_source_features_, " (source features seen in fit)")
        return self.classes_[np.argmax(augment(X) @ self.hyperplanes_.T, axis=1)]
