"""Connectivity of predicted compound signatures to a query (CMap).

* :func:`enrichment_score`: the weighted Kolmogorov-Smirnov running sum of
  GSEA (Subramanian et al., PNAS 2005, with weight ``p = 1``): genes ranked
  by the signature, descending; a hit adds ``|r_j| / sum over hits |r|``, a
  miss subtracts ``1 / (N - N_H)``; the score is the signed extreme of the
  running sum.
* :func:`weighted_connectivity_score`: CMap's WTCS (Subramanian et al.,
  Cell 2017, "A Next Generation Connectivity Map", STAR Methods): ``(ES_up
  - ES_down) / 2`` when the two scores have different signs, else 0; in
  [-1, 1], positive when the signature mimics the query.
* :func:`rank_compounds`: both, and the cosine to a query profile, over the
  columns of a predicted signature table.

A signature here is a predicted profile minus the cell line's control
expression (log2), so the query's "up" genes are those the wanted
perturbation raises. Notes: docs/drug_screen_notes.md, section "Predictions
for the user's compounds".
"""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.errors import InputError


def enrichment_score(signature: np.ndarray, hits: np.ndarray) -> float:
    """Weighted (p = 1) Kolmogorov-Smirnov enrichment score of a gene set.

    Parameters
    ----------
    signature : array (N,), one value per gene
    hits : bool array (N,), the gene set's members among those genes

    Returns
    -------
    float in [-1, 1]: the running sum's value of largest magnitude (the
    positive one on a tie). 0 when the set is empty or holds every gene,
    or when every hit has value 0.
    """
    r = np.asarray(signature, dtype=np.float64)
    hits = np.asarray(hits, dtype=bool)
    n_hit = int(hits.sum())
    if n_hit == 0 or n_hit == len(r):
        return 0.0
    order = np.argsort(-r, kind="stable")
    h, w = hits[order], np.abs(r[order])
    total = w[h].sum()
    if total == 0:
        return 0.0
    step = np.where(h, w / total, -1.0 / (len(r) - n_hit))
    run = np.cumsum(step)
    hi, lo = run.max(), run.min()
    return float(hi if hi >= -lo else lo)


def weighted_connectivity_score(signature: np.ndarray, up: np.ndarray, down: np.ndarray) -> float:
    """CMap's weighted connectivity score of a signature to a query.

    Parameters
    ----------
    signature : array (N,); up, down : bool arrays (N,), the query's sets

    Returns
    -------
    float in [-1, 1]: ``(ES_up - ES_down) / 2`` if ``ES_up`` and ``ES_down``
    differ in sign, else 0. With only one set given (the other all
    False), that set's score (``ES_up``, or ``-ES_down``).
    """
    es_up, es_down = enrichment_score(signature, up), enrichment_score(signature, down)
    if not np.any(down):
        return es_up
    if not np.any(up):
        return -es_down
    return (es_up - es_down) / 2.0 if np.sign(es_up) != np.sign(es_down) else 0.0


def query_masks(genes: pd.DataFrame, up, down, where: str) -> tuple[np.ndarray, np.ndarray, dict]:
    """The query's gene sets as masks over the screen's genes.

    Parameters
    ----------
    genes : DataFrame, one row per gene of the signatures (in their order),
        with the id columns to match against (e.g. ``gene_id``,
        ``gene_symbol``); values compared as strings
    up, down : lists of gene ids or symbols
    where : the config key, for messages

    Returns
    -------
    (up_mask, down_mask, counts) with counts ``n_up``, ``n_down`` (matched),
    ``unmatched_up``, ``unmatched_down`` (lists of the names not found)

    Raises
    ------
    InputError
        No gene of either set matches, or a gene is in both sets.
    """
    keys = {str(v): i for col in genes.columns for i, v in enumerate(genes[col].astype(str))}
    masks, counts = [], {}
    for name, items in (("up", up), ("down", down)):
        items = [str(g).strip() for g in (items or []) if str(g).strip()]
        m = np.zeros(len(genes), dtype=bool)
        found = [keys[g] for g in items if g in keys]
        m[found] = True
        masks.append(m)
        counts[f"n_{name}"] = int(m.sum())
        counts[f"unmatched_{name}"] = [g for g in items if g not in keys]
    if not masks[0].any() and not masks[1].any():
        raise InputError(f"{where}: none of the query's genes is among the {len(genes)} genes of the screen "
                         f"(matched against {list(genes.columns)})")
    both = np.flatnonzero(masks[0] & masks[1])
    if len(both):
        raise InputError(f"{where}: gene(s) in both the up and the down set: {list(genes.iloc[both, 0])[:10]}")
    return masks[0], masks[1], counts


def rank_compounds(signatures: pd.DataFrame, up: np.ndarray, down: np.ndarray,
                   profile: np.ndarray | None = None) -> pd.DataFrame:
    """Score every signature (a column of ``signatures``) against the query.

    Parameters
    ----------
    signatures : DataFrame (genes x profiles)
    up, down : bool masks over the genes (:func:`query_masks`)
    profile : array (genes,), optional: a query profile; adds ``cosine``

    Returns
    -------
    DataFrame indexed by profile id: ``wtcs`` (and ``cosine``), sorted by
    ``wtcs`` descending (then by id).
    """
    S = signatures.to_numpy(np.float64)
    out = pd.DataFrame({"wtcs": [weighted_connectivity_score(S[:, j], up, down) for j in range(S.shape[1])]},
                       index=signatures.columns)
    if profile is not None:
        q = np.asarray(profile, dtype=np.float64)
        norms = np.linalg.norm(S, axis=0) * np.linalg.norm(q)
        with np.errstate(invalid="ignore", divide="ignore"):
            out["cosine"] = np.where(norms > 0, q @ S / norms, 0.0)
    out.index.name = "profile_id"
    return out.sort_values(["wtcs", "profile_id"], ascending=[False, True])


def query_sets(query: dict, where: str = "drug_screen.predict.query") -> tuple[list[str], list[str]]:
    """The query's up and down genes from the config: each a list of gene
    ids or symbols, or the path of a GMT file holding exactly one set
    (:func:`biokernels.io.pathways.read_gmt`).

    Raises
    ------
    InputError
        A GMT file with another number of sets, or neither set given.
    """
    from biokernels.io.pathways import read_gmt

    out = []
    for key in ("up", "down"):
        v = query.get(key) or []
        if isinstance(v, str):
            sets = read_gmt(v)
            if len(sets) != 1:
                raise InputError(f"{where}.{key}: {v} holds {len(sets)} gene sets; expected exactly one")
            v = next(iter(sets.values()))
        out.append([str(g) for g in v])
    if not out[0] and not out[1]:
        raise InputError(f"{where}: give the genes of `up`, of `down`, or both")
    return out[0], out[1]


def query_profile(path, genes: pd.DataFrame, where: str = "drug_screen.predict.query.profile_path"
                  ) -> tuple[np.ndarray, dict]:
    """A query profile (TSV with columns ``gene`` and ``value``) over the
    screen's genes, matched by any column of ``genes`` (ids or symbols).

    Returns
    -------
    (values, counts): array (len(genes),), 0 for a gene the profile lacks;
    counts ``n_matched``, ``n_unmatched`` (the profile's genes not in the
    screen) and ``n_missing`` (screen genes without a value)

    Raises
    ------
    InputError
        Missing columns, a value that is not a finite number (row named),
        a gene listed twice, or no gene matched.
    """
    from biokernels.io.text import read_table

    try:
        t = read_table(path)
    except InputError as err:
        raise InputError(f"{where}: {err}") from None
    if not {"gene", "value"} <= set(t.columns):
        raise InputError(f"{where} ({path}): expected columns gene and value, found {list(t.columns)[:10]}")
    vals = pd.to_numeric(t["value"], errors="coerce")
    bad = np.flatnonzero(~np.isfinite(vals.to_numpy(dtype=float)))
    if len(bad):
        raise InputError(f"{where} ({path}): data row {bad[0] + 1}: value {t['value'].iloc[bad[0]]!r} is not a "
                         f"finite number ({len(bad)} such rows)")
    g = t["gene"].str.strip()
    if g.duplicated().any():
        raise InputError(f"{where} ({path}): gene {g[g.duplicated()].iloc[0]!r} is listed twice")
    keys = {str(v): i for col in genes.columns for i, v in enumerate(genes[col].astype(str))}
    out = np.zeros(len(genes))
    pos = g.map(keys)
    hit = pos.notna().to_numpy()
    if not hit.any():
        raise InputError(f"{where} ({path}): none of its {len(g)} genes is among the screen's genes "
                         f"(matched against {list(genes.columns)})")
    out[pos[hit].astype(int).to_numpy()] = vals.to_numpy()[hit]
    n = int(len(np.unique(pos[hit])))
    return out, {"n_matched": n, "n_unmatched": int((~hit).sum()), "n_missing": int(len(genes) - n)}
