"""Tanimoto (Jaccard) similarity of binary fingerprints and each query
compound's nearest reference compound.

``T(a, b) = |a AND b| / |a OR b|`` on bit vectors (Rogers & Tanimoto 1960;
the similarity RDKit's ``DataStructs.TanimotoSimilarity`` computes, which
the tests check this against). Two all-zero vectors get 0 here, as RDKit
gives them.
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.errors import InputError


def _bits(X, name: str) -> np.ndarray:
    A = np.asarray(X)
    if A.ndim != 2:
        raise InputError(f"{name}: expected a 2-d table of fingerprint bits, got shape {A.shape}")
    if not np.isin(A, (0, 1)).all():
        raise InputError(f"{name}: fingerprint bits must be 0 or 1 (Tanimoto needs binary fingerprints)")
    return A.astype(np.float32)


def tanimoto_matrix(A, B) -> np.ndarray:
    """Tanimoto similarity of every row of ``A`` (n, p) to every row of ``B``
    (m, p), bits 0/1; returns (n, m) float64 in [0, 1].

    Raises
    ------
    InputError
        Not 2-d, a value other than 0 or 1, or different numbers of bits.
    """
    A, B = _bits(A, "query fingerprints"), _bits(B, "reference fingerprints")
    if A.shape[1] != B.shape[1]:
        raise InputError(f"fingerprints: {A.shape[1]} bits against {B.shape[1]}; expected the same featurization")
    both = (A @ B.T).astype(np.float64)   # exact: integer counts below 2**24
    either = A.sum(axis=1)[:, None] + B.sum(axis=1)[None, :] - both
    with np.errstate(invalid="ignore", divide="ignore"):
        return np.where(either > 0, both / either, 0.0)


def nearest_compounds(query: pd.DataFrame, reference: pd.DataFrame, block: int = 2048) -> pd.DataFrame:
    """Each query compound's most similar reference compound.

    Parameters
    ----------
    query : DataFrame (compounds x bits), index = compound id
    reference : DataFrame (compounds x bits), index = compound id, same bits
    block : query rows per block (memory: block x len(reference) floats)

    Returns
    -------
    DataFrame indexed like ``query``: ``nearest_id`` (the first on ties, in
    the order of ``reference``) and ``tanimoto``.

    Raises
    ------
    InputError
        An empty reference, or bad bits (:func:`tanimoto_matrix`).
    """
    if len(reference) == 0:
        raise InputError("nearest compound: the reference set is empty")
    ids, sims = [], []
    R = reference.to_numpy()
    for s in range(0, len(query), block):
        T = tanimoto_matrix(query.iloc[s:s + block].to_numpy(), R)
        j = T.argmax(axis=1)
        ids.append(reference.index.to_numpy()[j])
        sims.append(T[np.arange(len(j)), j])
    if not ids:
        return pd.DataFrame({"nearest_id": pd.Series(dtype=object), "tanimoto": pd.Series(dtype=float)},
                            index=query.index)
    return pd.DataFrame({"nearest_id": np.concatenate(ids), "tanimoto": np.concatenate(sims)}, index=query.index)
