"""One benchmark (one label set on a set of networks): every configured
method on the same seeded trials, hyperparameters chosen by inner CV on
each trial's training genes, the five metrics of
:mod:`~biokernels.studies.function_benchmark.metrics` on its test genes.

Methods (``diffusion[<net>]``, ``eBaseline[<net>]``, ``DKL[<net>]``,
``mDKL[<net>]``, ``eBaseline[all]``, ``mDKL[all]``, ``CKA[mDKL]``, ``harmonic[<net>]``,
``lgc[<net>]``, ``Mashup``; the network ``sum`` is the sum of the input
networks' adjacencies) and what each chooses by inner CV:
docs/function_benchmark_notes.md, section "Methods".
"""

from __future__ import annotations

import time
from collections.abc import Mapping

import numpy as np
import pandas as pd
import scipy.sparse as sp

from biokernels.errors import InputError
from biokernels.kernels.diffusion import diffusion_betas
from biokernels.solvers.dkl import DiffusionKernelLearning
from biokernels.solvers.kernel_lists import combine_kernels
from biokernels.studies.diffusion.protocol import target_matrix
from biokernels.studies.function_benchmark.kernels import alignment_weights, network_spectrum
from biokernels.studies.function_benchmark.mashup import mashup_embedding
from biokernels.studies.function_benchmark.metrics import function_metrics
from biokernels.studies.function_benchmark.propagation import PROPAGATION
from biokernels.studies.function_benchmark.selection import Choice, better, propagation_candidate, svm_candidate
from biokernels.studies.function_benchmark.splits import inner_folds, trial_splits

__all__ = ["run_benchmark", "BenchmarkResult"]


class BenchmarkResult:
    """Tables of one benchmark run.

    Attributes
    ----------
    metrics : DataFrame trial, method, metric, value (long)
    choices : DataFrame trial, method, setting (JSON-like str), inner_micro_aupr
    times : DataFrame method, seconds (all trials, set-up included)
    """

    def __init__(self, metrics, choices, times):
        self.metrics, self.choices, self.times = metrics, choices, times


def _networks(networks: Mapping[str, sp.csr_array], names, log=None) -> dict[str, sp.csr_array]:
    """The listed networks that the source has, ``sum`` (the sum of its
    adjacencies) when listed and the source has several; every network of
    the source when none of the listed names is one of its networks (e.g.
    the one network of an edge-list source)."""
    say = log.info if log else (lambda *a, **k: None)
    out = {n: sp.csr_array(networks[n]) for n in names if n in networks}
    if not out:
        say("none of %s is a network of this source: running on its own %s", list(names), sorted(networks))
        out = {n: sp.csr_array(A) for n, A in networks.items()}
    if "sum" in names and len(networks) > 1:
        out["sum"] = sum(sp.csr_array(A) for A in networks.values())
    return out


def run_benchmark(networks: Mapping[str, sp.csr_array], Y: pd.DataFrame, cfg: Mapping, log=None
                  ) -> BenchmarkResult:
    """Run the configured methods on one label set.

    Parameters
    ----------
    networks : dict name -> (n, n) adjacency over the rows of ``Y``
    Y : DataFrame of 0/1 (n, t); genes with an all-zero row stay in the
        networks but are neither trained on nor scored
    cfg : mapping with ``seed``, ``n_trials``, ``test_fraction``,
        ``inner_folds``, ``svm`` (``C_grid``, ``n_jobs``), ``diffusion``
        (``networks``, ``n_kernels``, ``beta_step``, ``single_every``,
        ``lam``, ``formulations``, ``combine``, ``laplacian``), ``propagation``
        (``networks``, ``methods``, ``lgc_alpha_grid``), ``mashup``
        (``enabled``, ``dim``, ``restart``); see config/README.md
        (``function_benchmark``)
    log : logging.Logger, optional

    Returns
    -------
    BenchmarkResult
    """
    say = log.info if log else (lambda *a, **k: None)
    Yv = Y.to_numpy().astype(np.int8)
    genes = np.flatnonzero(Yv.any(axis=1))
    YE = Yv[genes]
    seed = int(cfg["seed"])
    trials = trial_splits(np.ones(len(genes), bool), cfg["n_trials"], cfg["test_fraction"], seed)
    folds = [inner_folds(len(tr), cfg["inner_folds"], seed, t) for t, (tr, _) in enumerate(trials)]
    C_grid = cfg["svm"]["C_grid"]
    n_jobs = int(cfg["svm"].get("n_jobs", 1))
    say("%d genes, %d annotated (trained on and scored), %d terms, %d trials of %d train / %d test genes",
        len(Yv), len(genes), Yv.shape[1], len(trials), len(trials[0][0]), len(trials[0][1]))
    choices: dict[str, list[Choice]] = {}
    seconds: dict[str, float] = {}

    def consider(method, t, inner, setting, scores):
        choices.setdefault(method, [Choice() for _ in trials])
        choices[method][t] = better(choices[method][t], inner, setting, scores)

    def svm_all_trials(method, K, extra=None):
        for t, (tr, te) in enumerate(trials):
            for C, inner, sc in svm_candidate(K, YE, tr, te, folds[t], C_grid, n_jobs):
                consider(method, t, inner, {**(extra or {}), "C": C}, sc)

    def svm_one_trial(method, t, K, extra=None):
        tr, te = trials[t]
        for C, inner, sc in svm_candidate(K, YE, tr, te, folds[t], C_grid, n_jobs):
            consider(method, t, inner, {**(extra or {}), "C": C}, sc)

    dcfg = cfg["diffusion"]
    betas = diffusion_betas(dcfg["n_kernels"], dcfg["beta_step"])
    single = np.arange(len(betas))[::int(dcfg.get("single_every", 1))]
    combine_e, combine_m = None, None
    diffused = _networks(networks, dcfg["networks"], log)
    several = sum(net != "sum" for net in diffused) > 1  # a combination across networks needs two of them
    across = "all" in dcfg.get("combine", []) and several
    # CKA[mDKL]: each network's spectrum and its mDKL spectrum per trial, combined at the end
    learned = {} if "learned" in dcfg.get("combine", []) and several else None
    for net, A in diffused.items():
        t0 = time.perf_counter()
        spec = network_spectrum(A, dcfg.get("laplacian", "unnormalized"))
        S = spec.spectra(betas)
        say("diffusion[%s]: %d non-isolated nodes, eigendecomposition %.1f s", net, spec.nodes.size,
            time.perf_counter() - t0)
        for i in single:
            svm_all_trials(f"diffusion[{net}]", spec.kernel(S[i], genes), {"beta": float(betas[i])})
        seconds[f"diffusion[{net}]"] = time.perf_counter() - t0
        t0 = time.perf_counter()
        K = spec.kernel(S.mean(axis=0), genes)
        svm_all_trials(f"eBaseline[{net}]", K)
        if across and net != "sum":
            combine_e = K if combine_e is None else combine_e + K
        del K
        seconds[f"eBaseline[{net}]"] = time.perf_counter() - t0
        for form in dcfg.get("formulations", []):
            t0 = time.perf_counter()
            method = f"{form}[{net}]"
            for t, (tr, te) in enumerate(trials):
                train_mask = np.zeros(spec.n, bool)
                train_mask[genes[tr]] = True
                Yfull = np.zeros((spec.n, Yv.shape[1]))
                Yfull[genes[tr]] = YE[tr]
                B = spec.project(target_matrix(Yfull, train_mask))
                W = np.asarray(DiffusionKernelLearning(form, lam=dcfg["lam"]).fit(S, B).weights_)
                if W.ndim == 1:
                    s = W @ S
                    K = spec.kernel(s, genes)
                    svm_one_trial(method, t, K, {"weights": "shared"})
                    if form == "mDKL" and learned is not None and net != "sum":
                        learned.setdefault(net, (spec, {}))[1][t] = s
                    if form == "mDKL" and across and net != "sum":
                        if combine_m is None:
                            combine_m = [None] * len(trials)
                        combine_m[t] = K if combine_m[t] is None else combine_m[t] + K
                    del K
                else:
                    _per_term_svm(method, t, spec, W, S, genes, YE, tr, te, folds[t], C_grid, n_jobs, consider)
            seconds[method] = time.perf_counter() - t0
            say("%s: %.1f s", method, seconds[method])
    if combine_e is not None:
        t0 = time.perf_counter()
        svm_all_trials("eBaseline[all]", combine_e)
        seconds["eBaseline[all]"] = time.perf_counter() - t0
        del combine_e
    if combine_m is not None:
        t0 = time.perf_counter()
        for t in range(len(trials)):
            svm_one_trial("mDKL[all]", t, combine_m[t])
        seconds["mDKL[all]"] = time.perf_counter() - t0
        del combine_m
    if learned:
        t0 = time.perf_counter()
        names = list(learned)
        for t, (tr, _) in enumerate(trials):
            Ks = [learned[net][0].kernel(learned[net][1][t], genes) for net in names]
            try:
                mu = alignment_weights(Ks, YE, tr)
            except InputError as err:  # no kernel positively aligned with the training labels
                say("CKA[mDKL], trial %d: %s; equal weights instead", t, err)
                mu = np.full(len(Ks), 1.0 / np.sqrt(len(Ks)))
            K = combine_kernels(Ks, mu)
            del Ks
            svm_one_trial("CKA[mDKL]", t, K, {f"w_{net}": float(w) for net, w in zip(names, mu)})
        seconds["CKA[mDKL]"] = time.perf_counter() - t0
        del learned

    pcfg = cfg["propagation"]
    for net, A in _networks(networks, pcfg["networks"], log).items():
        for name in pcfg["methods"]:
            t0 = time.perf_counter()
            grid = [{"alpha": float(a)} for a in pcfg["lgc_alpha_grid"]] if name == "lgc" else [{}]
            for params in grid:
                for t, (tr, te) in enumerate(trials):
                    inner, sc = propagation_candidate(lambda lab, y: PROPAGATION[name](A, lab, y, **params),
                                                      genes, YE, tr, te, folds[t])
                    consider(f"{name}[{net}]", t, inner, params, sc)
            seconds[f"{name}[{net}]"] = time.perf_counter() - t0

    mcfg = cfg["mashup"]
    if mcfg.get("enabled", True):
        t0 = time.perf_counter()
        X = mashup_embedding(list(networks.values()), min(int(mcfg["dim"]), len(Yv)), mcfg["restart"])[genes]
        say("Mashup embedding %s in %.1f s", X.shape, time.perf_counter() - t0)
        svm_all_trials("Mashup", X @ X.T)
        seconds["Mashup"] = time.perf_counter() - t0

    rows, crow = [], []
    for method, per_trial in choices.items():
        for t, ch in enumerate(per_trial):
            te = trials[t][1]
            for metric, value in function_metrics(YE[te], ch.test_scores).items():
                rows.append({"trial": t, "method": method, "metric": metric, "value": value})
            crow.append({"trial": t, "method": method,
                         "setting": ";".join(f"{k}={v:g}" if isinstance(v, float) else f"{k}={v}"
                                            for k, v in ch.setting.items()),
                         "inner_micro_aupr": ch.inner})
    times = pd.DataFrame([{"method": m, "seconds": s} for m, s in seconds.items()])
    return BenchmarkResult(pd.DataFrame(rows), pd.DataFrame(crow), times)


def _per_term_svm(method, t, spec, W, S, genes, YE, tr, te, folds, C_grid, n_jobs, consider):
    """DKL's single-task weights ``W`` (t, p): each term's SVM on its own
    kernel ``W[k] @ S`` (terms with equal weights share one kernel), for
    every C; one C for all terms, the one whose validation scores of all
    terms give the best mean inner-fold micro-AUPR."""
    from biokernels.studies.function_benchmark.metrics import micro_aupr

    Cs = sorted(float(c) for c in C_grid)
    val_scores = {C: [np.zeros((len(v), YE.shape[1])) for _, v in folds] for C in Cs}
    test_scores = {C: np.zeros((len(te), YE.shape[1])) for C in Cs}
    groups: dict[bytes, list[int]] = {}
    for k in range(W.shape[0]):      # terms with the same weights share one kernel
        groups.setdefault(np.round(W[k], 12).tobytes(), []).append(k)
    for ks in groups.values():
        K = spec.kernel(W[ks[0]] @ S, genes)
        for C, inner, sc in svm_candidate(K, YE[:, ks], tr, te, [], C_grid, n_jobs):
            test_scores[C][:, ks] = sc
        for f, (fit, val) in enumerate(folds):
            sub_tr = tr[fit]
            for C, _, sc in svm_candidate(K, YE[:, ks], sub_tr, tr[val], [], C_grid, n_jobs):
                val_scores[C][f][:, ks] = sc
        del K
    for C in Cs:
        inner = float(np.mean([micro_aupr(YE[tr[val]], val_scores[C][f]) for f, (_, val) in enumerate(folds)]))
        consider(method, t, inner, {"weights": "per term", "C": C}, test_scores[C])
