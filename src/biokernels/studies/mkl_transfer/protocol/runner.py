"""The transfer-versus-MKL comparison (SI Fig. S7) on one source task and
several targets (:func:`run_transfer`): per MKL method (``METHODS``: the
names of :data:`~biokernels.solvers.mkl.MKL_METHODS`) the ``baseline`` (MKL
on the target), ``transfer`` (the source-learned weights on the target's
base kernels) and ``translation`` (Definition 2 on the source model of the
learned kernel) models, and the source model alone; each method's classifier
is its ``default_learner`` (MKLpy's). Then the summary over seeds
(:func:`summarize`) and its figure (:func:`plot_accuracies`)."""

from __future__ import annotations

from collections.abc import Mapping, Sequence

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.solvers.kernel_lists import check_binary_labels, combine_kernels
from biokernels.solvers.mkl import MKL_METHODS, MKLClassifier, make_mkl
from biokernels.studies.mkl_transfer.protocol.models import (KERNEL_NAMES, RIDGE_REL_GRID, _as_matrix, _fit,
                                                             base_kernels, resolve_kernel_spec, translate)

#: The MKL methods compared, in table and figure order: the registry's names.
METHODS = tuple(MKL_METHODS)
MODELS = ("baseline", "transfer", "translation", "source")


def _make_mkl(method: str, learners: Mapping) -> object:
    """The MKL method ``method`` of :data:`biokernels.solvers.mkl.MKL_METHODS`
    with its ``learners`` settings (``easymkl_lam``, ``pwmk_delta``,
    ``pwmk_cv``, ...: :func:`~biokernels.solvers.mkl.make_mkl`), unfitted;
    ``psd_tol=None`` as the base kernels are checked once when built.
    Raises InputError for an unknown method (the known ones listed) or setting."""
    return make_mkl(method, learners, psd_tol=None)


def _classifier(method: str, learners: Mapping, weights=None) -> MKLClassifier:
    """The method's ``default_learner`` (MKLpy's: KOMD for EasyMKL, SVC(C=1000)
    for the others) on its learned weights, or on ``weights`` when given."""
    mkl = _make_mkl(method, learners)
    return MKLClassifier(mkl=None if weights is not None else mkl, weights=weights,
                         learner=mkl.default_learner, C=float(learners.get("svc_C", 1000.0)),
                         komd_lam=float(learners.get("komd_lam", 0.1)))


def _check_task(name: str, task: Mapping, n_features: int | None, classes=None):
    keys = ("X_train", "y_train", "X_test", "y_test")
    missing = [k for k in keys if k not in task]
    if missing:
        raise InputError(f"{name}: missing {missing}")
    Xtr = _as_matrix(task["X_train"], f"{name} X_train")
    Xte = _as_matrix(task["X_test"], f"{name} X_test")
    if n_features is not None and (Xtr.shape[1] != n_features or Xte.shape[1] != n_features):
        raise InputError(f"{name}: expected {n_features} features like the source, got "
                         f"{Xtr.shape[1]} (train) and {Xte.shape[1]} (test)")
    if Xtr.shape[1] != Xte.shape[1]:
        raise InputError(f"{name}: train has {Xtr.shape[1]} features, test {Xte.shape[1]}")
    ytr, yte = np.asarray(task["y_train"]), np.asarray(task["y_test"])
    if ytr.shape != (Xtr.shape[0],) or yte.shape != (Xte.shape[0],):
        raise InputError(f"{name}: expected one label per sample, got {ytr.shape} labels for {Xtr.shape[0]} "
                         f"training and {yte.shape} for {Xte.shape[0]} test samples")
    try:
        cls, _ = check_binary_labels(ytr, ytr.shape[0])
    except InputError as exc:
        raise InputError(f"{name}: training labels: {exc}") from None
    if classes is not None:
        if not np.array_equal(cls, classes):
            raise InputError(f"{name}: training labels are {cls.tolist()}, expected the source's "
                             f"{list(classes)}")
        extra = set(np.unique(yte).tolist()) - set(np.asarray(classes).tolist())
        if extra:
            raise InputError(f"{name}: test labels {sorted(extra)} are not among the source's {list(classes)}")
    return Xtr, ytr, Xte, yte, cls


def transfer_options(model: Mapping) -> dict:
    """Keyword arguments of :func:`run_transfer` from the ``mkl_transfer``
    config section (``methods``, ``kernels``, ``learners``, ``translation``)."""
    return {"methods": model["methods"], "kernels": model["kernels"], "learners": model["learners"],
            "source_ridge_rel": model["translation"]["source_ridge_rel"],
            "target_ridge_rel": model["translation"]["target_ridge_rel"]}


def run_transfer(source: Mapping, targets: Mapping[str, Mapping], *, seed: int,
                 methods: Sequence[str] = METHODS, kernels: Mapping | None = None,
                 learners: Mapping | None = None,
                 source_ridge_rel: float | Sequence[float] = RIDGE_REL_GRID,
                 target_ridge_rel: float | Sequence[float] = RIDGE_REL_GRID) -> tuple[pd.DataFrame, pd.DataFrame]:
    """SI Fig. S7 on one source task and several targets: baseline, transfer, translation per MKL method.

    Parameters
    ----------
    source : mapping with ``X_train`` (n_s, p), ``y_train`` (n_s,), ``X_test``,
        ``y_test``: two distinct labels of any type; ``classes[1]`` of
        ``np.unique(y_train)`` is +1 in the regressions.
    targets : mapping name -> the same keys (p features, the source's labels).
    seed : int, recorded in the outputs (the inputs carry the randomness;
        the methods here are deterministic).
    methods : subset of ``METHODS``
    kernels : ``{"laplace_bandwidth", "gaussian_gamma", "linear_scale"}``
        (see :func:`resolve_kernel_spec`); default 10 / "match" / "match".
    learners : ``{"svc_C": 1000, "komd_lam": 0.1, "easymkl_lam": 0.1,
        "pwmk_delta": 0, "pwmk_cv": 3}`` (defaults as shown: MKLpy's)
    source_ridge_rel, target_ridge_rel : relative ridges (multiples of
        mean(diag K)) of the translation's regressions
        (:func:`krr_coefficients`), or grids chosen by leave-one-out on the
        source / target training samples (:func:`loo_ridge_rel`; default
        ``RIDGE_REL_GRID``). The paper solved exactly
        (ridge 0); on the small tasks here the near-interpolating linear
        part of a combination (e.g. CKA's all-linear weights, n_t = 88 vs
        64 pixels) makes an unregularised fit unstable.

    Returns
    -------
    accuracies : DataFrame, columns target, method, model, accuracy, seed,
        n_train, n_test, ridge_rel (relative ridge: the translation's target
        ``ridge_rel``, the source model's source ``ridge_rel``; NaN for the
        MKL classifiers). ``target == "source"`` rows hold the source model's
        accuracy on the source test samples (models ``baseline`` = MKL
        classifier, ``source`` = kernel regression ``f_s``).
    weights : DataFrame, columns target, method, kernel, weight, seed: the
        weights learned on the source (target "source") and on each target.

    Raises
    ------
    InputError
        Bad features (names the task), a target whose training labels are
        not the source's two classes (e.g. a single class; names the
        target), an unknown method, or an MKL method that fails on a task
        (message prefixed by the task's name).
    """
    kernels = dict(kernels or {})
    learners = dict(learners or {})
    if not targets:
        raise InputError("targets: expected at least one target task")
    for m in methods:
        if m not in METHODS:
            raise InputError(f"methods: unknown MKL method {m!r}; expected one of {list(METHODS)}")
    Xs, ys, Xsq, ysq, classes = _check_task("source", source, None)
    checked = {name: _check_task(f"target {name!r}", t, Xs.shape[1], classes)
               for name, t in targets.items()}
    spec = resolve_kernel_spec(Xs, kernels.get("laplace_bandwidth", 10.0), kernels.get("gaussian_gamma", "match"),
                               kernels.get("linear_scale", "match"))
    pm = lambda y: np.where(np.asarray(y) == classes[1], 1.0, -1.0)  # noqa: E731
    acc_rows, w_rows = [], []

    def _acc(pred, y):
        return float(np.mean(np.asarray(pred) == np.asarray(y)))

    Ks_ss = base_kernels(Xs, spec=spec)
    Ks_qs_src = base_kernels(Xsq, Xs, spec)
    tgt_kernels = {}
    for name, (Xt, yt, Xq, yq, _) in checked.items():
        tgt_kernels[name] = {"tt": base_kernels(Xt, spec=spec), "qt": base_kernels(Xq, Xt, spec),
                             "ts": base_kernels(Xt, Xs, spec), "qs": base_kernels(Xq, Xs, spec)}
    for method in methods:
        try:
            src_clf = _classifier(method, learners).fit(Ks_ss, ys)
        except InputError as exc:
            raise InputError(f"source, {method}: {exc}") from None
        w = src_clf.weights_
        w_rows += [{"target": "source", "method": method, "kernel": k, "weight": float(v), "seed": seed}
                   for k, v in zip(KERNEL_NAMES, w, strict=True)]
        acc_rows.append({"target": "source", "method": method, "model": "baseline",
                         "accuracy": _acc(src_clf.predict(Ks_qs_src), ysq), "seed": seed,
                         "n_train": len(ys), "n_test": len(ysq)})
        K_ss = combine_kernels(Ks_ss, w)
        r_s, a_s = _fit(K_ss, pm(ys), source_ridge_rel)
        f_src = combine_kernels(Ks_qs_src, w) @ a_s
        acc_rows.append({"target": "source", "method": method, "model": "source",
                         "accuracy": _acc(np.where(f_src >= 0, classes[1], classes[0]), ysq), "seed": seed,
                         "n_train": len(ys), "n_test": len(ysq), "ridge_rel": r_s})
        for name, (Xt, yt, Xq, yq, _) in checked.items():
            K = tgt_kernels[name]
            row = {"target": name, "method": method, "seed": seed, "n_train": len(yt), "n_test": len(yq)}
            try:
                base = _classifier(method, learners).fit(K["tt"], yt)
            except InputError as exc:
                raise InputError(f"target {name!r}, {method}: {exc}") from None
            w_rows += [{"target": name, "method": method, "kernel": k, "weight": float(v), "seed": seed}
                       for k, v in zip(KERNEL_NAMES, base.weights_, strict=True)]
            acc_rows.append(row | {"model": "baseline", "accuracy": _acc(base.predict(K["qt"]), yq)})
            tr = _classifier(method, learners, weights=w).fit(K["tt"], yt)
            acc_rows.append(row | {"model": "transfer", "accuracy": _acc(tr.predict(K["qt"]), yq)})
            out = translate(K_ss, pm(ys), combine_kernels(K["ts"], w), combine_kernels(K["tt"], w), pm(yt),
                            combine_kernels(K["qs"], w), combine_kernels(K["qt"], w), r_s, target_ridge_rel)
            lab = lambda f: np.where(f >= 0, classes[1], classes[0])  # noqa: E731
            acc_rows.append(row | {"model": "translation", "accuracy": _acc(lab(out["translation"]), yq),
                                   "ridge_rel": out["target_ridge_rel"]})
            acc_rows.append(row | {"model": "source", "accuracy": _acc(lab(out["source"]), yq), "ridge_rel": r_s})
    acc = pd.DataFrame(acc_rows, columns=["target", "method", "model", "accuracy", "seed", "n_train", "n_test",
                                          "ridge_rel"])
    return acc, pd.DataFrame(w_rows, columns=["target", "method", "kernel", "weight", "seed"])


def summarize(acc: pd.DataFrame, target_order: Sequence[str] | None = None) -> pd.DataFrame:
    """Mean and SD over seeds of each (target, method, model); target "source" dropped.

    Returns
    -------
    DataFrame: target, method, model, accuracy_mean, accuracy_sd, n_seeds,
    n_train, n_test, translation_best (translation's mean is the highest
    of baseline / transfer / translation for this target and method, ties
    counted as best: the project's count, not a statement of the paper),
    translation_beats_transfer (translation's mean is strictly above the
    transfer-learned kernel's, i.e. the MKL weights learned on the source
    reused on the target: the paper's SI Fig. S7 statement "it is
    outperformed by our translation methodology in all cases"; a tie does
    not count). Both booleans repeat on every row of a (target, method).
    """
    a = acc[acc["target"] != "source"]
    g = a.groupby(["target", "method", "model"], sort=False)
    out = g.agg(accuracy_mean=("accuracy", "mean"), accuracy_sd=("accuracy", "std"),
                n_seeds=("seed", "nunique"), n_train=("n_train", "mean"),
                n_test=("n_test", "mean")).reset_index()
    out["accuracy_sd"] = out["accuracy_sd"].fillna(0.0)
    piv = out[out["model"].isin(["baseline", "transfer", "translation"])].pivot_table(
        index=["target", "method"], columns="model", values="accuracy_mean")
    best = (piv["translation"] >= piv[["baseline", "transfer"]].max(axis=1) - 1e-12).rename("translation_best")
    beats = (piv["translation"] > piv["transfer"] + 1e-12).rename("translation_beats_transfer")
    out = out.merge(pd.concat([best, beats], axis=1).reset_index(), on=["target", "method"], how="left")
    order = {t: i for i, t in enumerate(target_order or dict.fromkeys(out["target"]))}
    out["_t"] = out["target"].map(order)
    out["_m"] = out["method"].map({m: i for i, m in enumerate(METHODS)})
    out["_k"] = out["model"].map({m: i for i, m in enumerate(MODELS)})
    return out.sort_values(["_m", "_t", "_k"]).drop(columns=["_t", "_m", "_k"]).reset_index(drop=True)


def plot_accuracies(table: pd.DataFrame, title: str, xlabel: str = "target"):
    """One panel per MKL method: grouped bars (baseline, transfer, translation) per target, SD over seeds
    as error bars, the source model alone as grey ticks. Returns a matplotlib Figure."""
    import matplotlib

    matplotlib.use("Agg")
    import matplotlib.pyplot as plt

    methods = [m for m in METHODS if m in set(table["method"])]
    targets = list(dict.fromkeys(table["target"]))
    colors = {"baseline": "#d62728", "transfer": "#1f77b4", "translation": "#2ca02c"}
    fig, axes = plt.subplots(len(methods), 1, figsize=(max(6.0, 0.55 * len(targets) + 2), 2.3 * len(methods)),
                             sharex=True, squeeze=False)
    x = np.arange(len(targets))
    lo = max(0.0, float(table["accuracy_mean"].min()) - 0.05)
    for ax, method in zip(axes[:, 0], methods, strict=True):
        sub = table[table["method"] == method].set_index(["target", "model"])
        for j, model in enumerate(colors):
            m = [sub.loc[(t, model), "accuracy_mean"] if (t, model) in sub.index else np.nan for t in targets]
            s = [sub.loc[(t, model), "accuracy_sd"] if (t, model) in sub.index else np.nan for t in targets]
            ax.bar(x + (j - 1) * 0.27, m, 0.27, yerr=s, color=colors[model], label=model, capsize=1.5,
                   error_kw={"lw": 0.6})
        src = [sub.loc[(t, "source"), "accuracy_mean"] if (t, "source") in sub.index else np.nan for t in targets]
        ax.scatter(x, src, marker="_", s=120, color="0.35", zorder=3, label="source model alone")
        wins = int(table[(table["method"] == method) & (table["model"] == "translation")]["translation_best"].sum())
        ax.set_title(f"{method}: translation best on {wins}/{len(targets)} targets", fontsize=9)
        ax.set_ylim(lo, 1.0)
        ax.set_ylabel("test accuracy")
        ax.grid(axis="y", lw=0.3)
    axes[-1, 0].set_xticks(x)
    axes[-1, 0].set_xticklabels(targets, rotation=45 if len(targets) > 6 else 0,
                                ha="right" if len(targets) > 6 else "center", fontsize=8)
    axes[-1, 0].set_xlabel(xlabel)
    fig.suptitle(title, fontsize=10)
    fig.tight_layout(rect=(0, 0, 1, 0.95))
    handles, labels = axes[0, 0].get_legend_handles_labels()
    fig.legend(handles, labels, fontsize=8, ncol=4, loc="upper center", bbox_to_anchor=(0.5, 0.965), frameon=False)
    return fig
