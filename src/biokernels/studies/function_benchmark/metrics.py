"""The benchmark's metrics of multi-label scores, named so they cannot be
confused.

* ``micro_aupr``: area under the precision-recall curve of all (gene, term)
  pairs pooled (scikit-learn ``average_precision_score(average="micro")``,
  the step-wise average precision; deepNF's ``real_AUPR`` integrates the
  curve by trapezoids, which is not the same number);
* ``macro_aupr``: the mean over terms with at least one positive test gene
  of the per-term average precision (deepNF averages over such terms too);
* ``micro_f1_top3``: micro-F1 after giving each gene its 3 highest-scoring
  terms (deepNF's F1, alpha = 3);
* ``top1_accuracy``: share of genes whose highest-scoring term is one of
  theirs (Mashup's "accuracy");
* ``exact_match_accuracy``: share of genes whose predicted set (score > the
  threshold, e.g. an SVM's decision value > 0) equals their term set
  exactly (deepNF's ``accuracy_score`` of the one-vs-rest predictions).
"""

from __future__ import annotations

import numpy as np
from sklearn.metrics import accuracy_score, average_precision_score, f1_score

from biokernels.errors import InputError

__all__ = ["METRICS", "function_metrics", "micro_aupr", "top_k_matrix"]

METRICS = ("micro_aupr", "macro_aupr", "micro_f1_top3", "top1_accuracy", "exact_match_accuracy")


def _check(Y: np.ndarray, S: np.ndarray) -> tuple[np.ndarray, np.ndarray]:
    Y = np.asarray(Y)
    S = np.asarray(S, dtype=np.float64)
    if Y.ndim != 2 or Y.shape != S.shape:
        raise InputError(f"labels and scores must be (genes, terms) of one shape, got {Y.shape} and {S.shape}")
    if not np.isfinite(S).all():
        raise InputError("scores hold NaN or infinity")
    if not np.isin(Y, (0, 1)).all():
        raise InputError("labels must be 0/1")
    return Y.astype(np.int8), S


def micro_aupr(Y, S) -> float:
    """Micro-averaged average precision of scores ``S`` (genes, terms) against
    0/1 labels ``Y`` of the same shape; NaN without a positive."""
    Y, S = _check(Y, S)
    return float(average_precision_score(Y.ravel(), S.ravel())) if Y.any() else float("nan")


def top_k_matrix(S: np.ndarray, k: int) -> np.ndarray:
    """0/1 matrix with a 1 at each row's ``k`` largest scores (ties broken by
    the later column, as ``np.argsort``'s last entries; deepNF's rule)."""
    S = np.asarray(S)
    k = min(int(k), S.shape[1])
    out = np.zeros(S.shape, dtype=np.int8)
    top = np.argsort(S, axis=1, kind="stable")[:, S.shape[1] - k:]
    np.put_along_axis(out, top, 1, axis=1)
    return out


def function_metrics(Y, S, threshold: float = 0.0) -> dict[str, float]:
    """Every metric of :data:`METRICS` for test labels ``Y`` (0/1, (genes,
    terms)) and scores ``S`` of the same shape (larger = more likely);
    ``threshold``: the score above which a term is predicted (exact-set
    match only).

    Raises
    ------
    InputError
        Shapes differ, labels not 0/1 or scores not finite.
    """
    Y, S = _check(Y, S)
    pos = Y.sum(axis=0) > 0
    macro = (float(np.mean([average_precision_score(Y[:, j], S[:, j]) for j in np.flatnonzero(pos)]))
             if pos.any() else float("nan"))
    top1 = np.argmax(S, axis=1)
    return {
        "micro_aupr": micro_aupr(Y, S),
        "macro_aupr": macro,
        "micro_f1_top3": float(f1_score(Y, top_k_matrix(S, 3), average="micro", zero_division=0)),
        "top1_accuracy": float(Y[np.arange(len(Y)), top1].mean()),
        "exact_match_accuracy": float(accuracy_score(Y, (S > threshold).astype(np.int8))),
    }
