"""A PIMKL signature fitted on a whole cohort, exported and applied to new
samples.

:func:`fit_signature` runs one outer fold of Algorithm S1 with every sample
in the training part (standardization, trace-normalized pathway kernels,
EasyMKL's λ by the inner grid, EasyMKL weights, the classifier), so that a
signature's scores are what the cross-validation measured.
:class:`PimklSignature` keeps what scoring needs: the gene order and the
standardization, each pathway's genes and Laplacian, the trace factors and
weights, the standardized training rows and the classifier's dual
coefficients and offset (score ``= sum_p w_p K_p(x, X_train) / f_p @ coef +
offset``; class 1 where the score is >= 0). :meth:`PimklSignature.save` and
:func:`load_signature` use :mod:`biokernels.modelfiles` (no pickle).
"""

from __future__ import annotations

from dataclasses import dataclass, field

import numpy as np
import pandas as pd
import scipy.sparse as sp
from sklearn.preprocessing import StandardScaler
from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.kernels.pathway import InducedPathway, induce_pathways, normalize_trace, pathway_kernels
from biokernels.modelfiles import load_model, save_model
from biokernels.studies.pimkl.protocol.model import EASYMKL_LAMS, _choose_easymkl_lam, _inner_kernels
from biokernels.studies.pimkl.protocol.s1 import _check_cohort, _check_options, _inner_splits

__all__ = ["PimklSignature", "fit_signature", "load_signature", "KIND", "NORMALIZATIONS"]

KIND = "pimkl_signature"
#: ``training``: the new samples standardized with the training cohort's mean
#: and SD (as the cross-validation standardizes a test fold); ``cohort``: each
#: gene standardized over the new cohort itself (another platform or batch).
NORMALIZATIONS = ("training", "cohort")


@dataclass
class PimklSignature:
    """A fitted PIMKL model; see the module docstring for the score."""

    genes: list[str]
    mean: np.ndarray
    scale: np.ndarray
    pathways: list[InducedPathway]
    trace_factors: np.ndarray
    weights: np.ndarray
    easymkl_lam: float
    classifier: str
    X_train: np.ndarray
    coef: np.ndarray
    offset: float
    equal_weight_fallback: bool = False
    meta: dict = field(default_factory=dict)

    @property
    def signature_genes(self) -> list[str]:
        """The genes of the kept pathways, in the order of :attr:`genes`."""
        used = {g for p in self.pathways for g in p.genes}
        return [g for g in self.genes if g in used]

    def coverage(self, columns) -> dict:
        """How many of :attr:`signature_genes` a cohort with ``columns`` measures."""
        sig = self.signature_genes
        have = set(map(str, columns))
        missing = [g for g in sig if g not in have]
        return {"signature_genes": len(sig), "measured": len(sig) - len(missing),
                "fraction": (len(sig) - len(missing)) / len(sig), "missing": missing}

    def standardize(self, X: pd.DataFrame, normalization: str = "training", min_coverage: float = 0.8,
                    name: str = "<cohort>") -> tuple[np.ndarray, dict]:
        """``X`` (samples x genes) as the training genes, standardized; a
        signature gene the cohort lacks is 0 (the training mean).
        Raises InputError below ``min_coverage`` or for an unknown normalization."""
        if normalization not in NORMALIZATIONS:
            raise InputError(f"normalization {normalization!r}: expected one of {NORMALIZATIONS}")
        cov = self.coverage(X.columns)
        if cov["fraction"] < min_coverage:
            raise InputError(f"cohort {name!r}: measures {cov['measured']} of the signature's "
                             f"{cov['signature_genes']} genes ({cov['fraction']:.1%}), below the floor "
                             f"min_coverage {min_coverage:.0%}; missing e.g. {cov['missing'][:8]}")
        if X.isna().to_numpy().any():
            raise InputError(f"cohort {name!r}: expression has missing values")
        Z = np.zeros((len(X), len(self.genes)))
        idx = {g: i for i, g in enumerate(self.genes)}
        cols = [c for c in map(str, X.columns) if c in idx]
        V = X[cols].to_numpy(float) if cols else np.zeros((len(X), 0))
        j = [idx[c] for c in cols]
        if normalization == "training":
            Z[:, j] = (V - self.mean[j]) / self.scale[j]
        else:
            Z[:, j] = StandardScaler().fit_transform(V)
        return Z, cov

    def decision_function(self, X: pd.DataFrame, normalization: str = "training", min_coverage: float = 0.8,
                          name: str = "<cohort>") -> tuple[np.ndarray, dict]:
        """Scores (n,) of the samples of ``X`` (larger: class 1) and the coverage record."""
        Z, cov = self.standardize(X, normalization, min_coverage, name)
        K = pathway_kernels(Z, self.pathways, X_other=self.X_train, genes=self.genes)
        K, _ = normalize_trace(K, self.trace_factors)
        return np.tensordot(self.weights, K, axes=1) @ self.coef + self.offset, cov

    def save(self, directory, meta: dict | None = None):
        """Write the signature as a model directory (:func:`biokernels.modelfiles.save_model`)."""
        arrays = {"standardization": {"genes": np.array(self.genes, dtype=str), "mean": self.mean,
                                      "scale": self.scale},
                  "classifier": {"X_train": self.X_train, "coef": self.coef, "offset": np.array(self.offset),
                                 "weights": self.weights, "trace_factors": self.trace_factors}}
        lap = {}
        for p, pw in enumerate(self.pathways):
            L = sp.csr_matrix(pw.laplacian)
            lap.update({f"p{p}_genes": np.array(pw.genes, dtype=str), f"p{p}_data": L.data,
                        f"p{p}_indices": L.indices, f"p{p}_indptr": L.indptr})
        arrays["pathways"] = lap
        m = {**self.meta, **(meta or {}), "pathways": [p.name for p in self.pathways],
             "easymkl_lam": self.easymkl_lam, "classifier": self.classifier,
             "equal_weight_fallback": self.equal_weight_fallback, "n_genes": len(self.genes),
             "n_train": int(self.X_train.shape[0])}
        return save_model(directory, KIND, arrays, m)


def load_signature(directory) -> PimklSignature:
    """A signature written by :meth:`PimklSignature.save`; InputError on any mismatch
    (:func:`biokernels.modelfiles.load_model`) or an inconsistent shape."""
    arrays, manifest = load_model(directory, KIND)
    meta = manifest["meta"]
    try:
        st, cl, lp = arrays["standardization"], arrays["classifier"], arrays["pathways"]
        genes = [str(g) for g in st["genes"]]
        pws = []
        for p, name in enumerate(meta["pathways"]):
            pg = [str(g) for g in lp[f"p{p}_genes"]]
            L = sp.csr_matrix((lp[f"p{p}_data"], lp[f"p{p}_indices"], lp[f"p{p}_indptr"]), shape=(len(pg),) * 2)
            pws.append(InducedPathway(name, pg, L))
        sig = PimklSignature(genes, st["mean"], st["scale"], pws, cl["trace_factors"], cl["weights"],
                             float(meta["easymkl_lam"]), meta["classifier"], cl["X_train"], cl["coef"],
                             float(cl["offset"]), bool(meta["equal_weight_fallback"]),
                             {k: v for k, v in meta.items() if k not in ("pathways",)})
    except (KeyError, ValueError, TypeError) as err:
        raise InputError(f"{directory}: the model's arrays are inconsistent with its manifest ({err})") from None
    n = sig.X_train.shape[0]
    if (sig.X_train.shape[1] != len(genes) or sig.coef.shape != (n,) or len(sig.weights) != len(pws)
            or len(sig.trace_factors) != len(pws) or len(sig.mean) != len(genes)):
        raise InputError(f"{directory}: array shapes disagree (X_train {sig.X_train.shape}, coef {sig.coef.shape}, "
                         f"{len(genes)} genes, {len(pws)} pathways)")
    return sig


def fit_signature(X: pd.DataFrame, y, edges: pd.DataFrame, gene_sets: dict[str, list[str]], *,
                  cohort: str = "<cohort>", inner_folds: int = 3, easymkl_lams=EASYMKL_LAMS,
                  criterion: str = "accuracy", classifier: str = "komd", svm_C: float = 1.0,
                  kernel_aggregation: str = "sum", seed: int = 0, min_genes: int = 2) -> PimklSignature:
    """PIMKL on every sample of a cohort (the settings as :func:`~biokernels.studies.pimkl.protocol.run_s1`).

    Parameters
    ----------
    X : DataFrame (n, genes), no NaN
    y : (n,) 0/1
    edges, gene_sets : as run_s1
    seed : the inner folds' ``random_state``

    Returns
    -------
    PimklSignature

    Raises
    ------
    InputError
        Bad options (a lambda outside [0, 1] among them), NaN, a length mismatch, one class, too few samples of
        a class for the inner folds, no gene set giving a kernel.
    """
    from biokernels.solvers.easymkl import KOMD, EasyMKL

    _check_options(criterion, classifier, kernel_aggregation, easymkl_lams)
    yv = _check_cohort(X, y, cohort)
    if np.unique(yv).size < 2:
        raise InputError(f"cohort {cohort!r}: only class {np.unique(yv).tolist()} present (expected 0 and 1)")
    genes = [str(g) for g in X.columns]
    pws, _ = induce_pathways(edges, gene_sets, genes, min_genes=min_genes)
    if not pws:
        raise InputError(f"cohort {cohort!r}: no gene set gives a kernel (no network edge among the measured "
                         "genes of any set)")
    scaler = StandardScaler().fit(X.to_numpy(float))
    Z = scaler.transform(X.to_numpy(float))
    inner = _inner_splits(yv, inner_folds, seed, cohort, "signature (all samples)")
    K_raw = pathway_kernels(Z, pws, genes=genes)
    K, fac = normalize_trace(K_raw)
    lam, _ = _choose_easymkl_lam(K_raw, yv, inner, list(easymkl_lams), criterion, classifier, svm_C,
                                 kernel_aggregation, inner_kernels=_inner_kernels(K_raw, inner))
    fallback = False
    try:
        mkl = EasyMKL(lam=lam, kernel_aggregation=kernel_aggregation, psd_tol=None).fit(K, yv)
        w = mkl.weights_
    except InputError:
        w, fallback = np.full(len(pws), 1.0 / len(pws)), True
    if classifier == "komd":
        # EasyMKL's own KOMD was fitted on the combined kernel; the fallback fits one on equal weights
        clf = KOMD(lam=lam, psd_tol=None).fit(np.tensordot(w, K, axes=1), yv) if fallback else mkl.komd_
        coef, offset = np.asarray(clf.dual_coef_, float), -float(clf.bias_)
    else:
        svc = SVC(kernel="precomputed", C=svm_C).fit(np.tensordot(w, K, axes=1), yv)
        coef = np.zeros(len(yv))
        coef[svc.support_] = svc.dual_coef_[0]
        offset = float(svc.intercept_[0])
    scale = np.where(scaler.scale_ > 0, scaler.scale_, 1.0)
    return PimklSignature(genes, scaler.mean_.copy(), scale, pws, fac, np.asarray(w, float), float(lam), classifier,
                          Z, coef, offset, fallback, {"cohort": cohort, "n_positive": int(yv.sum())})
