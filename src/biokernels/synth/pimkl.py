"""Embedded default data of the PIMKL study (Manica et al. 2019): an
interaction network, gene sets, six "microarray" cohorts with platform
shifts and one large two-omics (mRNA + CNA) cohort, with binary labels driven
by a few planted pathways.

All randomness comes from one seeded ``numpy.random.Generator``: a
Barabasi-Albert network, gene sets grown from seed genes, ``n_planted``
pathways shifted along directions ``L_p v`` that the pathway kernel sees,
labels from the top ``prevalence`` fraction of a risk score, and per-cohort
platform shifts. :func:`generate_default` writes ``network.tsv``,
``gene_sets.gmt``, ``cohorts/<cohort>/`` (``expression.tsv``, ``labels.tsv``,
``cna.tsv`` for the two-omics cohort) and ``truth/params.json``.

Notes: docs/pimkl_notes.md, section "Embedded default data (synth/pimkl)".
"""

from __future__ import annotations

import json
from pathlib import Path

import networkx as nx
import numpy as np
import pandas as pd
import scipy.sparse as sp

from biokernels.io.pathways import write_gmt
from biokernels.kernels.pathway import normalized_laplacian

#: Default cohort sizes: the labelled patients of the paper's six cohorts
#: (Table S1: GSE2034 276, GSE1456 153, GSE2990 158, GSE4922 228,
#: GSE7390 191, GSE11121 182).
DEFAULT_COHORTS = {"cohort1": 276, "cohort2": 153, "cohort3": 158, "cohort4": 228,
                   "cohort5": 191, "cohort6": 182}


def _gene_names(n: int) -> list[str]:
    width = max(4, len(str(n)))
    return [f"G{i:0{width}d}" for i in range(1, n + 1)]


def scale_free_network(n_genes: int, m: int, rng: np.random.Generator) -> tuple[list[str], pd.DataFrame]:
    """Barabasi-Albert network with STRING-like weights.

    Returns
    -------
    genes : list of str, ``G0001``...
    edges : DataFrame ``protein_a < protein_b``, ``weight`` in [0.4, 1.0) (3 decimals)
    """
    G = nx.barabasi_albert_graph(n_genes, m, seed=int(rng.integers(2**31 - 1)))
    genes = _gene_names(n_genes)
    e = np.array(sorted(tuple(sorted(uv)) for uv in G.edges()), dtype=np.int64)
    w = np.round(rng.uniform(0.4, 1.0, size=len(e)), 3)
    a = np.array(genes, dtype=object)[e[:, 0]]
    b = np.array(genes, dtype=object)[e[:, 1]]
    return genes, pd.DataFrame({"protein_a": a, "protein_b": b, "weight": w})


def network_gene_sets(A: sp.csr_matrix, genes: list[str], n_sets: int, size_range: tuple[int, int],
                      rng: np.random.Generator, local_fraction: float = 0.7) -> dict[str, list[str]]:
    """Gene sets grown on the network (see the module docstring).

    Returns
    -------
    dict ``PATHWAY_01``... -> list of gene names (sorted by gene index)
    """
    n = len(genes)
    lo, hi = size_range
    sets = {}
    width = max(2, len(str(n_sets)))
    for k in range(n_sets):
        size = int(round(np.exp(rng.uniform(np.log(lo), np.log(hi)))))
        size = min(size, n)
        n_local = int(round(local_fraction * size))
        members = {int(rng.integers(n))}
        frontier: set[int] = set(A.indices[A.indptr[next(iter(members))]:A.indptr[next(iter(members)) + 1]])
        while len(members) < n_local and frontier:
            g = sorted(frontier)[int(rng.integers(len(frontier)))]
            members.add(g)
            frontier.discard(g)
            frontier.update(int(x) for x in A.indices[A.indptr[g]:A.indptr[g + 1]] if x not in members)
        rest = np.setdiff1d(np.arange(n), np.fromiter(members, int))
        members.update(int(x) for x in rng.choice(rest, size=size - len(members), replace=False))
        sets[f"PATHWAY_{k + 1:0{width}d}"] = [genes[i] for i in sorted(members)]
    return sets


def _planted_direction(A: sp.csr_matrix, idx: np.ndarray, rng: np.random.Generator) -> np.ndarray:
    """High-frequency direction ``L_p v`` on the set's induced sub-network,
    unit RMS over the set's genes (zero on its isolated genes)."""
    L = normalized_laplacian(A[idx][:, idx])
    d = L @ rng.standard_normal(len(idx))
    return d / np.sqrt(np.mean(d ** 2))


def _cohort(n: int, rng: np.random.Generator, *, mu: np.ndarray, smoother, deltas: np.ndarray,
            amplitude: float, risk_noise: float, platform: bool) -> tuple[np.ndarray, np.ndarray, dict]:
    """One cohort's expression (n x genes, all genes), labels and parameters."""
    n_genes = len(mu)
    P = deltas.shape[0]
    s = rng.standard_normal((n, P))
    risk = s.sum(axis=1) + risk_noise * rng.standard_normal(n)
    prevalence = float(rng.uniform(0.30, 0.40))
    y = (risk > np.quantile(risk, 1.0 - prevalence)).astype(np.int64)
    background = smoother(rng.standard_normal((n_genes, n))).T          # (n, genes), network-smooth
    background /= background.std()
    params = {"prevalence": prevalence, "positives": int(y.sum())}
    X = mu + background + amplitude * s @ deltas
    if platform:
        offset = rng.normal(0.0, 0.3, n_genes)
        scale = np.exp(rng.normal(0.0, 0.15, n_genes))
        noise_sd = float(rng.uniform(0.3, 0.6))
        X = offset + scale * X + noise_sd * rng.standard_normal(X.shape)
        params.update(noise_sd=noise_sd, offset_sd=0.3, log_scale_sd=0.15)
    else:
        noise_sd = 0.4
        X = X + noise_sd * rng.standard_normal(X.shape)
        params.update(noise_sd=noise_sd)
    return X, y, params


def _write_matrix(X: np.ndarray, samples: list[str], genes: list[str], path: Path) -> None:
    # row-wise %-formatting: faster than DataFrame.to_csv for wide tables
    path.parent.mkdir(parents=True, exist_ok=True)
    fmt = "\t".join(["%.3f"] * X.shape[1])
    with open(path, "w", encoding="utf-8", newline="\n") as fh:
        fh.write("\t".join(["sample_id", *genes]) + "\n")
        for s, row in zip(samples, X):
            fh.write(s + "\t" + fmt % tuple(row) + "\n")


def generate_default(out_dir: str | Path, seed: int = 0, n_genes: int = 2500, n_sets: int = 50,
                     set_size_range: tuple[int, int] = (20, 200), ba_m: int = 3,
                     cohorts: dict[str, int] | None = None, large_cohort: str = "multiomics",
                     large_size: int = 1000, n_planted: int = 4, amplitude: float = 0.5,
                     risk_noise: float = 1.0, smooth_steps: int = 3,
                     missing_range: tuple[float, float] = (0.03, 0.10)) -> dict:
    """Write the embedded default PIMKL data set (see the module docstring).

    Parameters
    ----------
    out_dir : path
        Folder to write into (created).
    seed : int
        Seed of the ``numpy.random.Generator`` driving everything: the same
        seed and arguments give byte-identical files.
    n_genes, ba_m : int
        Network size and Barabasi-Albert attachment count (mean degree ~ 2 m).
    n_sets : int
        Number of gene sets (>= n_planted).
    set_size_range : (int, int)
        Gene-set sizes, drawn log-uniformly.
    cohorts : dict name -> n_samples, optional
        Single-omics cohorts with platform shifts; :data:`DEFAULT_COHORTS`
        when None.
    large_cohort, large_size : str, int
        The two-omics cohort (no platform shift, all genes measured); size 0
        skips it.
    n_planted : int
        Planted pathways (chosen among sets of 30-120 genes, or the sets
        closest to that range).
    amplitude : float
        Size of the planted signal relative to the unit background.
    risk_noise : float
        SD of the label noise added to the planted activities' sum.
    smooth_steps : int
        Background smoothing ``(I - L / 2)^smooth_steps`` (a low-pass filter).
    missing_range : (float, float)
        Fraction of genes not measured per single-omics cohort.

    Returns
    -------
    dict : the content of ``truth/params.json`` plus ``files`` (relative paths).

    Raises
    ------
    ValueError
        If ``n_planted`` exceeds ``n_sets`` or a size is not positive.
    """
    if n_planted > n_sets or n_planted < 1:
        raise ValueError(f"n_planted must be in [1, n_sets={n_sets}], got {n_planted}")
    cohorts = dict(DEFAULT_COHORTS if cohorts is None else cohorts)
    if any(v < 10 for v in cohorts.values()) or n_genes < 50:
        raise ValueError("cohorts need >= 10 samples and the network >= 50 genes")
    out = Path(out_dir)
    rng = np.random.default_rng(seed)
    genes, edges = scale_free_network(n_genes, ba_m, rng)
    index = {g: i for i, g in enumerate(genes)}
    ia = edges["protein_a"].map(index).to_numpy()
    ib = edges["protein_b"].map(index).to_numpy()
    w = edges["weight"].to_numpy()
    A = sp.csr_matrix((np.r_[w, w], (np.r_[ia, ib], np.r_[ib, ia])), shape=(n_genes, n_genes))
    sets = network_gene_sets(A, genes, n_sets, set_size_range, rng)

    names = list(sets)
    sizes = np.array([len(sets[k]) for k in names])
    dist = np.maximum(0, 30 - sizes) + np.maximum(0, sizes - 120)
    eligible = np.flatnonzero(dist == 0)
    if len(eligible) < n_planted:
        eligible = np.argsort(dist, kind="stable")[:n_planted]
    planted = sorted(names[i] for i in rng.choice(eligible, size=n_planted, replace=False))
    # the planted genes belong to their planted set only, so that the other
    # sets' kernels carry no label signal (pathways overlap in reality; here
    # the ground truth is kept clean)
    reserved = set().union(*(sets[k] for k in planted))
    for k in names:
        if k not in planted:
            sets[k] = [g for g in sets[k] if g not in reserved]
    deltas = np.zeros((n_planted, n_genes))
    for p, name in enumerate(planted):
        idx = np.array([index[g] for g in sets[name]])
        deltas[p, idx] = _planted_direction(A, idx, rng)

    # low-pass filter (I - L/2)^k: eigenvalues (1 - lambda/2)^k in [0, 1]
    half = sp.identity(n_genes, format="csr") - 0.5 * normalized_laplacian(A)

    def smoother(E: np.ndarray) -> np.ndarray:
        for _ in range(smooth_steps):
            E = half @ E
        return E

    mu = rng.normal(8.0, 1.5, n_genes)

    files = {"network": "network.tsv", "gene_sets": "gene_sets.gmt", "params": "truth/params.json",
             "cohorts": {}}
    out.mkdir(parents=True, exist_ok=True)
    edges.to_csv(out / files["network"], sep="\t", index=False, float_format="%.3f")
    write_gmt(sets, out / files["gene_sets"], {k: "synthetic" for k in sets})

    cohort_params = {}
    for name, n in cohorts.items():
        X, y, par = _cohort(n, rng, mu=mu, smoother=smoother, deltas=deltas, amplitude=amplitude,
                            risk_noise=risk_noise, platform=True)
        frac = float(rng.uniform(*missing_range))
        measured = np.sort(rng.choice(n_genes, size=n_genes - int(round(frac * n_genes)), replace=False))
        samples = [f"{name}_S{i:04d}" for i in range(1, n + 1)]
        base = Path("cohorts") / name
        _write_matrix(X[:, measured], samples, [genes[i] for i in measured], out / base / "expression.tsv")
        pd.DataFrame({"sample_id": samples, "label": y}).to_csv(out / base / "labels.tsv", sep="\t", index=False)
        files["cohorts"][name] = {"expression": str(base / "expression.tsv"), "labels": str(base / "labels.tsv")}
        par.update(samples=n, genes_measured=int(len(measured)), genes_missing=int(n_genes - len(measured)))
        cohort_params[name] = par
    if large_size:
        X, y, par = _cohort(large_size, rng, mu=mu, smoother=smoother, deltas=deltas, amplitude=amplitude,
                            risk_noise=risk_noise, platform=False)
        rho = 0.5
        Z = (X - X.mean(axis=0)) / X.std(axis=0)
        cna = 0.5 * (rho * Z + np.sqrt(1 - rho ** 2) * rng.standard_normal(X.shape))
        samples = [f"{large_cohort}_S{i:04d}" for i in range(1, large_size + 1)]
        base = Path("cohorts") / large_cohort
        _write_matrix(X, samples, genes, out / base / "expression.tsv")
        _write_matrix(cna, samples, genes, out / base / "cna.tsv")
        pd.DataFrame({"sample_id": samples, "label": y}).to_csv(out / base / "labels.tsv", sep="\t", index=False)
        files["cohorts"][large_cohort] = {"expression": str(base / "expression.tsv"),
                                          "cna": str(base / "cna.tsv"), "labels": str(base / "labels.tsv")}
        par.update(samples=large_size, genes_measured=n_genes, genes_missing=0, cna_rho=rho, cna_scale=0.5)
        cohort_params[large_cohort] = par

    truth = {"seed": seed, "n_genes": n_genes, "n_edges": int(len(edges)), "n_sets": n_sets,
             "set_size_range": list(set_size_range), "ba_m": ba_m, "planted_pathways": planted,
             "planted_sizes": {k: len(sets[k]) for k in planted}, "amplitude": amplitude,
             "risk_noise": risk_noise, "smooth_steps": smooth_steps, "cohorts": cohort_params,
             "large_cohort": large_cohort if large_size else None,
             "label_model": "label = 1 for the top `prevalence` fraction of sum_p s_p + N(0, risk_noise^2)"}
    (out / "truth").mkdir(parents=True, exist_ok=True)
    (out / files["params"]).write_text(json.dumps(truth, indent=2, sort_keys=True) + "\n")
    return {**truth, "files": files}


def pathway_auc(K: np.ndarray, y: np.ndarray, seed: int = 0, folds: int = 3, C: float = 1.0) -> np.ndarray:
    """Cross-validated AUC of an SVM on each precomputed kernel (a check of
    the planted signal, not part of PIMKL).

    Parameters
    ----------
    K : ndarray (P, n, n), training-sample kernels (e.g. trace-normalized)
    y : ndarray (n,), 0/1
    seed, folds : stratified K-fold split
    C : SVM cost

    Returns
    -------
    ndarray (P,): mean AUC over the folds
    """
    from sklearn.metrics import roc_auc_score
    from sklearn.model_selection import StratifiedKFold
    from sklearn.svm import SVC

    y = np.asarray(y)
    out = np.zeros(len(K))
    splits = list(StratifiedKFold(folds, shuffle=True, random_state=seed).split(np.zeros(len(y)), y))
    for p in range(len(K)):
        aucs = []
        for tr, te in splits:
            clf = SVC(kernel="precomputed", C=C).fit(K[p][np.ix_(tr, tr)], y[tr])
            aucs.append(roc_auc_score(y[te], clf.decision_function(K[p][np.ix_(te, tr)])))
        out[p] = np.mean(aucs)
    return out
