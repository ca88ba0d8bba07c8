"""Two-domain tasks and learning curves for MMDT / LS-MMDT.

Source: Rodner et al. 2013, "Towards adapting ImageNet to reality" (LS-MMDT),
Sect. 5: accuracy vs the number of labelled target examples per category
(Figs. 3-4), transfer to categories without target examples (Fig. 6) and
features of different dimension. :mod:`biokernels.solvers.mmdt` holds the
method. The default task (:func:`digits_domains`) is scikit-learn's digits:
source = the 8x8 pixels, target = a 4x4 pooled, contrast-shifted, noisy
sensor; ``k`` labelled target examples per class, none for the held-out
classes. Rows: ``MMDT``, ``MMDT-W0`` (regulariser ``||W - W0||_F^2``, beyond
the paper), ``SVM-Source`` (through a fixed naive map) and ``SVM-Target``;
accuracies over all target test images, the held-out and the seen classes.

Notes: docs/mmdt_notes.md, section "The study protocol (studies/mmdt/protocol)".
"""

from __future__ import annotations

import warnings
from collections.abc import Sequence

import numpy as np
import pandas as pd
from sklearn.exceptions import ConvergenceWarning
from sklearn.svm import LinearSVC

from biokernels.errors import InputError
from biokernels.solvers.mmdt import MMDT, TransformConvergenceWarning, augment

__all__ = [
    "digits_domains",
    "upsample_4x4_to_8x8",
    "upsampling_matrix",
    "split_target",
    "cohort_transfer_curve",
    "digits_learning_curve",
    "CURVE_COLUMNS",
    "METHODS",
    "report_convergence",
]

CURVE_COLUMNS = ["method", "k", "seed", "accuracy", "accuracy_heldout", "accuracy_seen",
                 "accuracy_heldout_within", "n_train_target", "n_test",
                 "n_transform_solves", "n_transform_not_converged"]
METHODS = ("MMDT", "MMDT-W0", "SVM-Source", "SVM-Target")


def digits_domains(seed: int = 0, noise: float = 0.05, source_fraction: float = 0.5,
                   contrast: float = 0.5, brightness: float = 0.3):
    """Source (8x8) and target (4x4, low contrast, brighter, noisy) domains from ``load_digits``.

    Parameters
    ----------
    seed : int
        Seeds the source/target split and the pixel noise.
    noise : float
        Standard deviation of the Gaussian noise added to target pixels
        (intensity units, images in [0, 1]), >= 0.
    source_fraction : float
        Fraction of each class's images put in the source domain, in (0, 1).
    contrast, brightness : float
        Target intensity ``contrast * pooled + brightness`` (before noise).

    Returns
    -------
    Xs : ndarray, shape (n_source, 64)
        Source pixels in [0, 1].
    ys : ndarray of int, shape (n_source,)
    Xt : ndarray, shape (n_target, 16)
        Target features ``contrast * avgpool2x2(image) + brightness + noise``.
    yt : ndarray of int, shape (n_target,)

    Raises
    ------
    InputError
        If ``noise < 0`` or ``source_fraction`` is outside (0, 1).
    """
    from sklearn.datasets import load_digits

    if not np.isfinite(noise) or noise < 0:
        raise InputError(f"noise: expected a finite number >= 0, got {noise!r}")
    if not 0 < source_fraction < 1:
        raise InputError(f"source_fraction: expected a value in (0, 1), got {source_fraction!r}")
    rng = np.random.default_rng(seed)
    data = load_digits()
    X = data.data / 16.0
    y = data.target.astype(int)
    src = np.zeros(y.size, dtype=bool)
    for c in np.unique(y):
        idx = rng.permutation(np.flatnonzero(y == c))
        src[idx[: int(round(source_fraction * idx.size))]] = True
    imgs = X[~src].reshape(-1, 8, 8)
    pooled = imgs.reshape(-1, 4, 2, 4, 2).mean(axis=(2, 4)).reshape(-1, 16)
    Xt = contrast * pooled + brightness + noise * rng.standard_normal(pooled.shape)
    return X[src], y[src], Xt, y[~src]


def upsample_4x4_to_8x8(Xt) -> np.ndarray:
    """Nearest-neighbour upsampling of 4x4 images (rows of 16) to 8x8 (rows of 64).

    The naive target-to-source map of SVM-Source on the digits task.

    Parameters
    ----------
    Xt : array, shape (n, 16)

    Returns
    -------
    ndarray, shape (n, 64)

    Raises
    ------
    InputError
        If ``Xt`` does not have 16 columns.
    """
    Xt = np.asarray(Xt, dtype=np.float64)
    if Xt.ndim != 2 or Xt.shape[1] != 16:
        raise InputError(f"Xt: expected shape (n, 16) (4x4 images), got {Xt.shape}")
    img = Xt.reshape(-1, 4, 4)
    return np.repeat(np.repeat(img, 2, axis=1), 2, axis=2).reshape(-1, 64)


def upsampling_matrix() -> np.ndarray:
    """The (64, 16) matrix of :func:`upsample_4x4_to_8x8` (``x8 = U x4``).

    Returns
    -------
    ndarray, shape (64, 16)
        0/1 entries, one 1 per row.
    """
    return upsample_4x4_to_8x8(np.eye(16)).T


def split_target(yt, k: int, heldout_classes=(), seed: int = 0):
    """Seeded split of target examples: k labelled per non-held-out class, rest test.

    Parameters
    ----------
    yt : array, shape (n_target,)
        Target labels.
    k : int
        Labelled training examples per class (>= 1); classes with fewer than
        ``k + 1`` examples raise (each class keeps a test example).
    heldout_classes : sequence
        Classes with no training examples (all their examples are test).
    seed : int
        Seeds the draw (``numpy.random.default_rng(seed)``).

    Returns
    -------
    train : ndarray of int
        Indices into ``yt`` of the labelled target examples.
    test : ndarray of int
        Indices of the remaining examples.

    Raises
    ------
    InputError
        If ``k < 1``, a held-out class is not in ``yt``, fewer than two classes
        are left for training, or a class has too few examples.
    """
    yt = np.asarray(yt)
    if isinstance(k, bool) or not isinstance(k, (int, np.integer)) or k < 1:
        raise InputError(f"k: expected an integer >= 1 (labelled target examples per class), "
                         f"got {k!r}")
    classes = np.unique(yt)
    held = np.asarray(list(heldout_classes), dtype=yt.dtype) if len(heldout_classes) else \
        np.asarray([], dtype=yt.dtype)
    absent = np.setdiff1d(held, classes)
    if absent.size:
        raise InputError(f"heldout_classes: {absent.tolist()} not among the target labels "
                         f"{classes.tolist()}")
    seen = np.setdiff1d(classes, held)
    if seen.size < 2:
        raise InputError(f"heldout_classes: leaves {seen.size} class(es) with target training "
                         "examples; expected at least 2")
    rng = np.random.default_rng(seed)
    train = []
    for c in seen:
        idx = np.flatnonzero(yt == c)
        if idx.size < k + 1:
            raise InputError(f"yt: class {c!r} has {idx.size} target examples; k={k} needs at "
                             f"least {k + 1} (k for training, one for testing)")
        train.append(rng.choice(idx, size=k, replace=False))
    train = np.sort(np.concatenate(train))
    test = np.setdiff1d(np.arange(yt.size), train)
    return train, test


def _accuracies(pred, y, held, scores=None, classes=None) -> dict:
    """accuracy, accuracy_heldout, accuracy_seen, accuracy_heldout_within."""
    hmask = np.isin(y, held)
    out = {"accuracy": float(np.mean(pred == y)),
           "accuracy_heldout": float(np.mean(pred[hmask] == y[hmask])) if hmask.any()
           else float("nan"),
           "accuracy_seen": float(np.mean(pred[~hmask] == y[~hmask])) if (~hmask).any()
           else float("nan"),
           "accuracy_heldout_within": float("nan")}
    if scores is not None and hmask.any() and len(held) > 0:
        cols = np.flatnonzero(np.isin(classes, held))
        p = classes[cols][np.argmax(scores[np.ix_(hmask, cols)], axis=1)]
        out["accuracy_heldout_within"] = float(np.mean(p == y[hmask]))
    return out


def cohort_transfer_curve(Xs, ys, Xt, yt, ks: Sequence[int], seeds: Sequence[int], *,
                          heldout_classes=(), source_map=None,
                          C_source: float = 1.0, C_target: float = 1.0,
                          mmdt_params: dict | None = None,
                          methods: Sequence[str] = METHODS,
                          ) -> pd.DataFrame:
    """Learning curve (accuracy vs labelled target examples per class) for two domains.

    For each seed and k: :func:`split_target` draws k labelled target examples
    per non-held-out class (seeded by ``seed``), the rest of ``Xt`` is the
    test set; the methods of the module docstring are fitted and scored.
    Features are used as given (scale them beforehand, e.g. per cohort).

    Parameters
    ----------
    Xs : array, shape (n_source, D)
    ys : array, shape (n_source,)
    Xt : array, shape (n_target, Dt)
    yt : array, shape (n_target,)
        Target labels, all among the source labels.
    ks : sequence of int
        Labelled target examples per class, each >= 1.
    seeds : sequence of int
        One split (and MMDT ``random_state``) per seed.
    heldout_classes : sequence
        Target classes never labelled (new-category transfer).
    source_map : array, shape (D, Dt), optional
        Linear map ``x_source = source_map @ x_target`` used by SVM-Source and
        as ``W0`` by MMDT-W0. Default: identity if ``Dt == D``, else
        zero-padding (``Dt < D``) or truncation (``Dt > D``).
    C_source, C_target : float
        ``C_S`` and ``C_T`` of MMDT; SVM-Source uses ``C_source``, SVM-Target
        ``C_target``.
    mmdt_params : dict, optional
        Further :class:`MMDT` parameters (e.g. ``{"max_alternations": 3}``).
    methods : sequence of str
        Subset of ``METHODS`` = ``("MMDT", "MMDT-W0", "SVM-Source", "SVM-Target")``.

    Returns
    -------
    pandas.DataFrame
        Columns ``CURVE_COLUMNS``: method, k, seed, accuracy, accuracy_heldout,
        accuracy_seen, accuracy_heldout_within (fractions in [0, 1]; NaN where
        the subset is empty or the method cannot score it), n_train_target,
        n_test, n_transform_solves and n_transform_not_converged (the fit's
        W-steps and those that did not converge; 0 for SVM-Source and
        SVM-Target). One row per (method, k, seed).

    Warns
    -----
    TransformConvergenceWarning
        Once, after all fits, if any MMDT row has a non-converged transform
        solve (the per-solve warnings of the fits are collected into it).

    Raises
    ------
    InputError
        On invalid data (see :meth:`MMDT.fit`, :func:`split_target`), an
        unknown method, or a ``source_map`` output of the wrong shape.
    """
    bad = [m for m in methods if m not in METHODS]
    if bad:
        raise InputError(f"methods: unknown {bad}; expected a subset of {METHODS}")
    mmdt_params = dict(mmdt_params or {})
    Xs = np.asarray(Xs, dtype=np.float64)
    Xt = np.asarray(Xt, dtype=np.float64)
    ys = np.asarray(ys)
    yt = np.asarray(yt)
    if Xs.ndim != 2 or Xt.ndim != 2:
        raise InputError(f"Xs, Xt: expected 2-D arrays, got shapes {Xs.shape} and {Xt.shape}")
    D, Dt = Xs.shape[1], Xt.shape[1]
    held = list(heldout_classes)
    if source_map is None:
        M = np.eye(D, Dt)                         # identity / zero-padding / truncation
    else:
        M = np.asarray(source_map, dtype=np.float64)
        if M.shape != (D, Dt) or not np.all(np.isfinite(M)):
            raise InputError(f"source_map: expected a finite ({D}, {Dt}) matrix "
                             f"(source x target features), got shape {M.shape}")

    rows = []
    caught = []
    for seed in seeds:
        svm_source = None
        for k in ks:
            tr, te = split_target(yt, k, held, seed=seed)
            Xtr, ytr, Xte, yte = Xt[tr], yt[tr], Xt[te], yt[te]
            base = {"k": int(k), "seed": int(seed), "n_train_target": int(tr.size),
                    "n_test": int(te.size)}
            for name in ("MMDT", "MMDT-W0"):
                if name not in methods and not (name == "MMDT" and "SVM-Source" in methods
                                                and svm_source is None):
                    continue
                prior = M if name == "MMDT-W0" else None
                with warnings.catch_warnings(record=True) as w:
                    warnings.simplefilter("always", TransformConvergenceWarning)
                    model = MMDT(C_source=C_source, C_target=C_target, random_state=seed,
                                 **{**mmdt_params, "transform_prior": prior}).fit(Xs, ys, Xtr, ytr)
                # a fit made only for SVM-Source's hyperplanes (MMDT not in methods) uses no
                # transform, so its solves are neither counted nor warned about
                for item in w:                    # re-raise anything else
                    if not issubclass(item.category, TransformConvergenceWarning):
                        warnings.warn_explicit(item.message, item.category, item.filename,
                                               item.lineno)
                if svm_source is None:            # source-only: independent of k and W0
                    svm_source = (model.classes_, model.source_hyperplanes_)
                if name in methods:
                    acc = _accuracies(model.predict(Xte), yte, held,
                                      model.decision_function(Xte), model.classes_)
                    rows.append({"method": name, **base, **acc,
                                 "n_transform_solves": int(model.n_alternations_),
                                 "n_transform_not_converged": int(model.n_not_converged_)})
                    if not model.converged_:
                        caught.append((name, int(k), int(seed), model.n_not_converged_,
                                       float(np.max(model.pg_spread_))))
            if "SVM-Source" in methods:
                cls, Hs = svm_source
                scores = augment(Xte @ M.T) @ Hs.T
                acc = _accuracies(cls[np.argmax(scores, axis=1)], yte, held, scores, cls)
                rows.append({"method": "SVM-Source", **base, **acc, "n_transform_solves": 0,
                             "n_transform_not_converged": 0})
            if "SVM-Target" in methods:
                svc = LinearSVC(loss="squared_hinge", dual=True, C=C_target, tol=1e-4,
                                max_iter=10000, random_state=seed)
                with warnings.catch_warnings():
                    warnings.simplefilter("ignore", ConvergenceWarning)
                    svc.fit(Xtr, ytr)
                rows.append({"method": "SVM-Target", **base,
                             **_accuracies(svc.predict(Xte), yte, held), "n_transform_solves": 0,
                             "n_transform_not_converged": 0})
    out = pd.DataFrame(rows, columns=CURVE_COLUMNS)
    if caught:
        n_bad = sum(c[3] for c in caught)
        worst = max(caught, key=lambda c: c[4])
        defaults = MMDT().get_params()
        max_iter = mmdt_params.get("max_iter", defaults["max_iter"])
        tol = mmdt_params.get("tol", defaults["tol"])
        warnings.warn(f"cohort_transfer_curve: {n_bad} of {int(out['n_transform_solves'].sum())} "
                      f"MMDT transform solves (in {len(caught)} of "
                      f"{int((out['n_transform_solves'] > 0).sum())} fits) did not converge "
                      f"within max_iter={max_iter} epochs at tol={tol:g}; largest "
                      f"final projected-gradient spread {worst[4]:.3g} ({worst[0]}, k={worst[1]}, "
                      f"seed={worst[2]}); see column n_transform_not_converged",
                      TransformConvergenceWarning, stacklevel=2)
    return out


def digits_learning_curve(ks: Sequence[int] = (1, 2, 3, 5, 10), seeds: Sequence[int] = (0, 1, 2),
                          *, heldout_classes=(7, 8, 9), noise: float = 0.05,
                          C_source: float = 1.0, C_target: float = 1.0,
                          mmdt_params: dict | None = None,
                          methods: Sequence[str] = METHODS,
                          ) -> pd.DataFrame:
    """Learning curve on the two-domain digits task (module docstring).

    Each seed builds its own domains (:func:`digits_domains` with that seed)
    and splits; SVM-Source and MMDT-W0 map target images by
    :func:`upsampling_matrix`.

    Parameters
    ----------
    ks : sequence of int
        Labelled target examples per class.
    seeds : sequence of int
    heldout_classes : sequence of int
        Digits without labelled target examples.
    noise : float
        Target pixel noise std (see :func:`digits_domains`).
    C_source, C_target : float
    mmdt_params : dict, optional
        Further :class:`MMDT` parameters.
    methods : sequence of str

    Returns
    -------
    pandas.DataFrame
        As :func:`cohort_transfer_curve`.

    Raises
    ------
    InputError
        As :func:`cohort_transfer_curve` and :func:`digits_domains`.
    """
    frames = []
    for seed in seeds:
        Xs, ys, Xt, yt = digits_domains(seed=seed, noise=noise)
        frames.append(cohort_transfer_curve(
            Xs, ys, Xt, yt, ks, [seed], heldout_classes=heldout_classes,
            source_map=upsampling_matrix(), C_source=C_source, C_target=C_target,
            mmdt_params=mmdt_params, methods=methods))
    return pd.concat(frames, ignore_index=True)


def cohort_domains(source: dict[str, tuple[pd.DataFrame, pd.Series]], target: tuple[pd.DataFrame, pd.Series],
                   standardize: str = "source") -> tuple[np.ndarray, np.ndarray, np.ndarray, np.ndarray, dict]:
    """Two domains from expression cohorts: the pooled source cohorts and one
    target cohort, on the genes measured in all of them.

    Parameters
    ----------
    source : dict cohort name -> (X samples x genes DataFrame, y Series 0/1)
    target : (X, y) of the target cohort
    standardize : {"source", "per_domain"}
        ``"source"`` (default): both domains are standardized gene-wise with
        the pooled source's mean and standard deviation, so the target keeps
        its platform shift (offsets, scales) in source units: the shift is
        the domain difference the transform has to learn.
        ``"per_domain"``: each domain with its own statistics (the target's
        over all its samples: label-free), as cross-cohort studies often do;
        this removes most of a platform shift before any adaptation.

    Returns
    -------
    Xs (n_s, g), ys (n_s,), Xt (n_t, g), yt (n_t,) as float / int arrays, and
    a dict ``genes`` (g, columns in sorted gene order), ``source_cohorts``, ``n_source``, ``n_target``,
    ``constant_genes_dropped``.

    Raises
    ------
    InputError
        No source cohort, or fewer than 2 genes shared by every cohort.
    """
    if not source:
        raise InputError("cohort_domains: no source cohort given")
    genes = target[0].columns
    for X, _ in source.values():
        genes = genes.intersection(X.columns)
    genes = genes.sort_values()
    Xs = pd.concat([X[genes] for X, _ in source.values()])
    ys = pd.concat([y for _, y in source.values()])
    Xt, yt = target[0][genes], target[1]
    keep = (Xs.std(axis=0) > 0) & (Xt.std(axis=0) > 0)
    if keep.sum() < 2:
        raise InputError(f"cohort_domains: {int(keep.sum())} gene(s) measured and variable in every cohort; need >= 2")
    Xs, Xt = Xs.loc[:, keep], Xt.loc[:, keep]
    if standardize not in ("source", "per_domain"):
        raise ValueError(f"standardize: expected 'source' or 'per_domain', got {standardize!r}")
    mu, sd = Xs.mean(axis=0), Xs.std(axis=0)
    if standardize == "per_domain":
        Zt = ((Xt - Xt.mean(axis=0)) / Xt.std(axis=0)).to_numpy(np.float64)
    else:
        Zt = ((Xt - mu) / sd).to_numpy(np.float64)
    info = {"genes": int(keep.sum()), "source_cohorts": list(source), "n_source": int(len(ys)),
            "n_target": int(len(yt)), "constant_genes_dropped": int((~keep).sum()), "standardize": standardize}
    return ((Xs - mu) / sd).to_numpy(np.float64), ys.to_numpy(int), Zt, yt.to_numpy(int), info


def curve_table(curve: pd.DataFrame) -> pd.DataFrame:
    """Learning-curve table: mean and SD over seeds of every accuracy column
    per (method, k).

    Parameters
    ----------
    curve : output of :func:`cohort_transfer_curve` / :func:`digits_learning_curve`

    Returns
    -------
    DataFrame ``method``, ``k``, ``metric`` (accuracy, accuracy_heldout,
    accuracy_seen, accuracy_heldout_within), ``mean``, ``sd``, ``n_seeds``;
    metrics that are NaN for every row of a method are left out. When the
    curve has them, also ``n_transform_solves`` and
    ``n_transform_not_converged``: sums over the seeds of the (method, k)
    (the same on each metric's row).
    """
    metrics = [c for c in ("accuracy", "accuracy_heldout", "accuracy_seen", "accuracy_heldout_within")
               if c in curve.columns]
    long = curve.melt(id_vars=["method", "k", "seed"], value_vars=metrics, var_name="metric").dropna(subset=["value"])
    out = long.groupby(["method", "k", "metric"], sort=False)["value"].agg(
        mean="mean", sd=lambda v: float(np.std(v, ddof=1)) if len(v) > 1 else np.nan, n_seeds="size").reset_index()
    counts = [c for c in ("n_transform_solves", "n_transform_not_converged") if c in curve.columns]
    if counts:
        sums = curve.groupby(["method", "k"], sort=False)[counts].sum().reset_index()
        out = out.merge(sums, on=["method", "k"], how="left", validate="many_to_one")
    return out.sort_values(["metric", "method", "k"], kind="stable").reset_index(drop=True)


def report_convergence(logger, curve: pd.DataFrame, task: str) -> int:
    """Log how many MMDT transform solves of a learning curve did not converge.

    Parameters
    ----------
    logger : logging.Logger
        Gets one ``INFO`` line when every solve converged, else one
        ``WARNING`` line with the count and the (method, k, seed) rows concerned.
    curve : DataFrame
        Output of :func:`cohort_transfer_curve` / :func:`digits_learning_curve`
        or its :func:`curve_table` (summed columns), with
        ``n_transform_solves`` and ``n_transform_not_converged``.
    task : str
        Name used in the message.

    Returns
    -------
    int
        Number of non-converged transform solves.

    Raises
    ------
    KeyError
        If ``curve`` lacks the two count columns (a curve written before they
        existed).
    """
    cols = ["n_transform_solves", "n_transform_not_converged"]
    missing = [c for c in cols if c not in curve.columns]
    if missing:
        raise KeyError(f"report_convergence: curve of task {task!r} lacks columns {missing}")
    per = curve.drop_duplicates(["method", "k", *(["seed"] if "seed" in curve.columns else [])])
    n_all = int(per["n_transform_solves"].sum())
    n_bad = int(per["n_transform_not_converged"].sum())
    if n_bad:
        bad = per[per["n_transform_not_converged"] > 0]
        where = ", ".join(f"{r.method} k={r.k}" + (f" seed={r.seed}" if "seed" in per.columns else "")
                          for r in bad.itertuples())
        logger.warning("%s: %d of %d MMDT transform solves did not converge within max_iter (%s)",
                       task, n_bad, n_all, where)
    else:
        logger.info("%s: all %d MMDT transform solves converged", task, n_all)
    return n_bad
