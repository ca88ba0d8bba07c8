"""PIMKL study library (biokernels.studies.pimkl.protocol): Algorithm S1 recovers the planted
pathways, the signature statistics agree with scipy / statsmodels, Algorithm
S2 shapes, fold errors, determinism."""

from __future__ import annotations

import numpy as np
import pandas as pd
import pytest
from scipy.stats import wilcoxon
from statsmodels.stats.multitest import multipletests

from biokernels.studies.pimkl import protocol as pimkl
from biokernels.io.cohorts import read_cohort, read_expression_tsv
from biokernels.errors import InputError
from biokernels.io.networks import read_edge_list
from biokernels.io.pathways import read_gmt
from biokernels.synth.pimkl import generate_default


@pytest.fixture(scope="module")
def data(tmp_path_factory):
    out = tmp_path_factory.mktemp("pimkl")
    truth = generate_default(out, seed=3, n_genes=500, n_sets=12, set_size_range=(15, 80),
                             cohorts={"a": 160, "b": 140}, large_size=240, n_planted=3, amplitude=0.6)
    edges, _ = read_edge_list(out / "network.tsv", weight_col="weight")
    gene_sets = read_gmt(out / "gene_sets.gmt")
    cohorts = {c: read_cohort(out / f"cohorts/{c}/expression.tsv", out / f"cohorts/{c}/labels.tsv")[:2]
               for c in ("a", "b", "multiomics")}
    cna, _ = read_expression_tsv(out / "cohorts/multiomics/cna.tsv")
    return {"dir": out, "truth": truth, "edges": edges, "gene_sets": gene_sets, "cohorts": cohorts, "cna": cna}


@pytest.fixture(scope="module")
def s1(data):
    X, y = data["cohorts"]["a"]
    return pimkl.run_s1(X, y, data["edges"], data["gene_sets"], cohort="a", repeats=3, folds=5, seed=11,
                        easymkl_lams=(0.1, 0.5, 0.9), baseline_C_grid=(1.0,))


def test_s1_tables_and_planted_pathways_significant(data, s1):
    aucs, w = s1.aucs, s1.weights
    assert set(aucs["method"]) == set(pimkl.METHODS)
    assert len(aucs) == 3 * 5 * 4 and aucs["auc"].between(0, 1).all()
    P = int(s1.pathways["kernel"].sum())
    assert len(w) == 15 * P
    # EasyMKL's weights are d / sum d: a sum of P terms, rounding ~P eps (1e-9: loose)
    np.testing.assert_allclose(w.groupby(["repeat", "fold"])["weight"].sum(), 1.0, atol=1e-9)
    mean = aucs.groupby("method")["auc"].mean()
    assert mean["pimkl"] > 0.75 and mean["pimkl"] > mean["svm_linear"]
    # 15 folds: exact one-sided Wilcoxon p >= 2^-15; BH over P sets at 0.01
    tests = pimkl.signature_tests(w, alpha=0.01)
    sig = set(tests.loc[tests["significant"], "pathway"])
    planted = set(data["truth"]["planted_pathways"])
    assert planted <= sig
    assert len(sig - planted) <= 1


def test_signature_tests_match_scipy_and_statsmodels():
    rng = np.random.default_rng(0)
    P, F = 6, 12
    rows = []
    for c, shift in (("x", 0.4), ("y", 0.0)):
        W = rng.dirichlet(np.ones(P), size=F)
        W[:, 0] += shift
        W /= W.sum(axis=1, keepdims=True)
        for f in range(F):
            rows += [{"cohort": c, "fold": f, "pathway": f"p{k}", "weight": W[f, k]} for k in range(P)]
    w = pd.DataFrame(rows)
    t = pimkl.signature_tests(w, alpha=0.05)
    for c, sub in t.groupby("cohort"):
        W = w[w["cohort"] == c].pivot(index="fold", columns="pathway", values="weight")
        p = [wilcoxon(W[k] - 1 / P, alternative="greater").pvalue for k in sub["pathway"]]
        # the same scipy / statsmodels computations on the same numbers: numpy's default
        # rtol 1e-7 only absorbs rounding
        np.testing.assert_allclose(sub["p_value"], p)
        reject, padj, _, _ = multipletests(p, alpha=0.05, method="fdr_bh")
        np.testing.assert_allclose(sub["p_adjusted"], padj)
        np.testing.assert_array_equal(sub["significant"], reject & (np.median(W[sub["pathway"]], axis=0) > 1 / P))
    assert t.loc[(t["cohort"] == "x") & (t["pathway"] == "p0"), "significant"].item()
    wide = pimkl.significance_table(t, min_cohorts=1)
    assert "p0" in wide.index and wide.loc["p0", "n_significant"] >= 1
    corr = pimkl.signature_correlation(w)
    assert len(corr) == 4 and np.isclose(corr.query("cohort_a == 'x' and cohort_b == 'x'")["r"].iloc[0], 1.0)


def test_s2_shapes_and_transfer(data, s1):
    X, y = data["cohorts"]["multiomics"]
    transferred = pimkl.median_signature(s1.weights)["a"]
    res = pimkl.run_s2({"mrna": X, "cna": data["cna"].loc[X.index]}, y, data["edges"], data["gene_sets"],
                       cohort="multiomics", folds=4, per_class=15, easymkl_lam=0.2, transferred=transferred,
                       seed=2)
    a = res.aucs
    assert len(a) == 4 * 4  # mrna, cna, both trained + mrna transferred
    assert set(map(tuple, a[["omics", "weights"]].drop_duplicates().to_numpy())) == {
        ("mrna", "trained"), ("cna", "trained"), ("both", "trained"), ("mrna", "transferred")}
    assert (a["n_train"] == 30).all() and (a["n_test"] == len(y) - 30).all()
    w = res.weights
    np.testing.assert_allclose(w.groupby(["fold", "omics"])["weight"].sum(), 1.0, atol=1e-9)   # as above
    both = w[(w["omics"] == "both") & (w["fold"] == 1)]
    assert set(both["data_type"]) == {"mrna", "cna"}
    assert len(both) == len(w[(w["omics"] == "mrna") & (w["fold"] == 1)]) + len(
        w[(w["omics"] == "cna") & (w["fold"] == 1)])
    m = a.groupby(["omics", "weights"])["auc"].mean()
    assert m[("mrna", "trained")] > m[("cna", "trained")]


def test_one_class_fold_is_an_input_error(data):
    X, y = data["cohorts"]["b"]
    y = y.copy()
    y[:] = 0
    y.iloc[:3] = 1  # 3 positives cannot fill 5 folds
    with pytest.raises(InputError, match=r"cohort 'bad'.*fold"):
        pimkl.run_s1(X, y, data["edges"], data["gene_sets"], cohort="bad", repeats=1, folds=5)
    with pytest.raises(InputError, match="cohort 'bad'"):
        pimkl.s2_splits(y.to_numpy(), 2, 5, 0, "bad")
    with pytest.raises(InputError, match="only class"):
        pimkl.cv_splits(np.zeros(20, int), 1, 2, 0, "bad")


def test_nan_samples_rejected_by_the_readers(data, tmp_path):
    text = (data["dir"] / "cohorts/b/expression.tsv").read_text().splitlines()
    fields = text[2].split("\t")
    fields[3] = "NA"
    text[2] = "\t".join(fields)
    (tmp_path / "e.tsv").write_text("\n".join(text) + "\n")
    with pytest.raises(InputError, match="missing value"):
        pimkl.load_cohort({"format": "tsv", "expression_path": tmp_path / "e.tsv",
                           "labels_path": data["dir"] / "cohorts/b/labels.tsv"})


def test_same_seed_same_tables(data):
    X, y = data["cohorts"]["b"]
    kw = dict(cohort="b", repeats=1, folds=3, easymkl_lams=(0.1, 0.5), seed=5, baselines=False)
    r1 = pimkl.run_s1(X, y, data["edges"], data["gene_sets"], **kw)
    r2 = pimkl.run_s1(X, y, data["edges"], data["gene_sets"], **kw)
    pd.testing.assert_frame_equal(r1.aucs, r2.aucs)
    pd.testing.assert_frame_equal(r1.weights, r2.weights)
    r3 = pimkl.run_s1(X, y, data["edges"], data["gene_sets"], **{**kw, "seed": 6})
    assert not r1.aucs["auc"].equals(r3.aucs["auc"])


def test_random_gene_sets_and_sensitivity(data):
    gs = data["gene_sets"]
    r1 = pimkl.random_gene_sets(gs, seed=1, size_range=(50, 60))
    assert r1 == pimkl.random_gene_sets(gs, seed=1, size_range=(50, 60))
    union = set().union(*map(set, gs.values()))
    assert len(r1) == len(gs) and all(50 <= len(v) <= 60 and set(v) <= union for v in r1.values())
    X, y = data["cohorts"]["b"]
    table = pimkl.run_sensitivity(lambda c, collapse: (X, y, False), ["b"], data["edges"], gs,
                                  {"repeats": 1, "folds": 3, "easymkl_lams": (0.1, 0.5), "seed": 0})
    assert list(table["variant"]) == [v[0] for v in pimkl.SENSITIVITY_VARIANTS]
    assert table.set_index("variant").loc["collapse_mean", "applicable"] == False  # noqa: E712
    assert table.loc[table["applicable"], "mean_auc"].between(0.5, 1).all()


def _planted_weights(nan_pathway: str | None = None, P: int = 6, F: int = 12, seed: int = 0) -> pd.DataFrame:
    """Two cohorts of P pathways over F folds; p0 is pushed far above 1/P in
    both, so it is significant; in cohort "x" one fold of ``nan_pathway`` is NaN."""
    rng = np.random.default_rng(seed)
    rows = []
    for c in ("x", "y"):
        W = rng.dirichlet(np.ones(P), size=F)
        W[:, 0] += 0.6
        W /= W.sum(axis=1, keepdims=True)
        for f in range(F):
            rows += [{"cohort": c, "fold": f, "pathway": f"p{k}", "weight": W[f, k]} for k in range(P)]
    w = pd.DataFrame(rows)
    if nan_pathway is not None:
        w.loc[(w["cohort"] == "x") & (w["pathway"] == nan_pathway) & (w["fold"] == 3), "weight"] = np.nan
    return w


def test_signature_tests_bh_over_the_finite_p_values_when_one_is_nan(caplog):
    """Issue #16: one NaN p-value made statsmodels' BH return NaN for the
    whole cohort while p0 stayed significant. BH must run over the m = 5
    pathways with a p-value (statsmodels on that subset), the NaN row stays
    NaN and not significant, and the count is in the table and the log."""
    w = _planted_weights(nan_pathway="p3")
    with caplog.at_level("WARNING", logger="biokernels.studies.pimkl.protocol"):
        t = pimkl.signature_tests(w, alpha=0.05)
    x = t[t["cohort"] == "x"].set_index("pathway")
    assert np.isnan(x.loc["p3", "p_value"]) and np.isnan(x.loc["p3", "p_adjusted"])
    assert not x.loc["p3", "significant"]
    ok = x.drop(index="p3")
    reject, padj, _, _ = multipletests(ok["p_value"].to_numpy(), alpha=0.05, method="fdr_bh")
    np.testing.assert_allclose(ok["p_adjusted"], padj)           # finite, and BH with m = 5, not 6
    assert np.isfinite(ok["p_adjusted"]).all()
    np.testing.assert_array_equal(ok["significant"], reject & (ok["median"] > 1 / 6).to_numpy())
    assert ok.loc["p0", "significant"]
    assert (x["n_tested"] == 5).all() and (x["n_no_p_value"] == 1).all()
    # the other cohort is untouched: BH over its 6 p-values
    y = t[t["cohort"] == "y"]
    np.testing.assert_allclose(y["p_adjusted"], multipletests(y["p_value"], alpha=0.05, method="fdr_bh")[1])
    assert (y["n_tested"] == 6).all() and (y["n_no_p_value"] == 0).all()
    msg = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(msg) == 1 and "cohort x" in msg[0] and "['p3']" in msg[0] and "1 of 6" in msg[0]
    # the Figure 3b table (written to tables/fig3b.tsv) carries the counts
    from biokernels.studies.pimkl.figures import table_fig3b
    fig = table_fig3b(w, 0.05, 1)
    assert {"n_tested", "n_no_p_value"} <= set(fig.columns)
    assert fig.loc[fig["cohort"] == "x", "n_no_p_value"].eq(1).all()


def test_signature_tests_cohort_without_any_p_value():
    w = _planted_weights()
    w.loc[w["cohort"] == "x", "weight"] = np.nan
    t = pimkl.signature_tests(w, alpha=0.05)
    x = t[t["cohort"] == "x"]
    assert x["p_adjusted"].isna().all() and not x["significant"].any()
    assert (x["n_tested"] == 0).all() and (x["n_no_p_value"] == 6).all()
    assert t.loc[(t["cohort"] == "y") & (t["pathway"] == "p0"), "significant"].item()


def test_figs4_correlation_is_the_centred_pearson_r():
    # The paper's "Pearson correlation rho = 0.72" of the two signatures is the usual (centred)
    # Pearson r: column pearson_r_centred, as in biokernels.metrics; no bare pearson_r column.
    from scipy.stats import pearsonr

    from biokernels.studies.pimkl.figures import table_figS4

    trained = {"p0": [0.1, 0.2], "p1": [0.5, 0.5], "p2": [0.3, 0.1], "p3": [0.9, 0.7]}
    s2 = pd.DataFrame([{"omics": "mrna", "pathway": p, "fold": k, "weight": w}
                       for p, ws in trained.items() for k, w in enumerate(ws)])
    transferred = pd.Series({"p0": 0.2, "p1": 0.4, "p2": 0.3, "p3": 0.6})
    t = table_figS4(s2, transferred)
    medians = [0.15, 0.5, 0.2, 0.8]
    assert t["pearson_r_centred"].iloc[0] == pytest.approx(pearsonr(transferred.to_numpy(), medians)[0])
    assert "pearson_r" not in t.columns


# --------------------------------------------------------------------------- fast S1 path (issue #20)


@pytest.mark.parametrize("criterion,classifier", [("accuracy", "komd"), ("auc", "svm")])
def test_s1_fast_path_gives_the_reference_tables(data, criterion, classifier):
    """The default path (lambda-independent work once per inner fold, compiled
    KOMD loop and kernel sums, precomputed-Gram SVM baselines) against
    ``reference=True`` (the original implementation): the same tables, exactly.
    PIMKL and pathway_mean make the same floating-point operations in the same
    order; the SVM rows come from LIBSVM on Gram matrices equal to its own
    kernel values up to rounding, which takes the same steps here
    (test_svm_baselines_are_gridsearch_on_the_features)."""
    X, y = data["cohorts"]["b"]
    kw = dict(cohort="b", repeats=1, folds=3, inner_folds=3, easymkl_lams=(0.0, 0.5, 1.0), seed=4,
              baseline_C_grid=(0.1, 1.0), criterion=criterion, classifier=classifier)
    ref = pimkl.run_s1(X, y, data["edges"], data["gene_sets"], reference=True, **kw)
    fast = pimkl.run_s1(X, y, data["edges"], data["gene_sets"], **kw)
    for name in ("aucs", "weights", "pathways"):
        pd.testing.assert_frame_equal(getattr(fast, name), getattr(ref, name), check_exact=True)
    assert set(fast.aucs["method"]) == set(pimkl.METHODS)


def _inner_problem(data, cohort="a", P=None):
    from biokernels.kernels.pathway import induce_pathways, normalize_trace, pathway_kernels

    X, y = data["cohorts"][cohort]
    pws, _ = induce_pathways(data["edges"], data["gene_sets"], list(X.columns))
    pws = pws[:P] if P else pws
    yv = np.asarray(y).astype(int)
    inner = pimkl._inner_splits(yv, 3, 1, cohort, "test")
    K = pathway_kernels((X - X.mean()) / X.std(), pws)
    (a, b), = inner[:1]
    Ka, f = normalize_trace(pimkl._sub(K, a, a))
    Kb, _ = normalize_trace(pimkl._sub(K, b, a), f)
    return X, yv, inner, K, Ka, Kb, a, b


def test_fit_predict_path_equals_fit_predict_per_lambda(data):
    X, yv, inner, K, Ka, Kb, a, b = _inner_problem(data)
    lams = [0.0, 0.3, 1.0]
    P = Ka.shape[0]
    for kw in (dict(), dict(weights=np.full(P, 1.0 / P)), dict(classifier="svm", svm_C=0.5),
               dict(classifier="svm", weights=np.arange(1.0, P + 1)), dict(kernel_aggregation="mean")):
        path = pimkl.fit_predict_path(Ka, Kb, yv[a], lams, **kw)
        for lam, got in zip(lams, path):
            s, w = pimkl.fit_predict(Ka, Kb, yv[a], lam, backend="python", **kw)
            # the same operations in the same order (hoisted, compiled, batched): the same bits
            assert np.array_equal(got[0], s) and np.array_equal(got[1], w), (kw, lam)
    # a failure is the entry of its lambda: the InputError fit_predict raises
    zero = np.zeros_like(Ka)
    path = pimkl.fit_predict_path(zero, np.zeros_like(Kb), yv[a], lams)
    with pytest.raises(InputError) as err:
        pimkl.fit_predict(zero, np.zeros_like(Kb), yv[a], 0.3)
    assert all(isinstance(e, InputError) and str(e) == str(err.value) for e in path)
    bad = pimkl.fit_predict_path(Ka, Ka[:, :, :], yv[a], lams)   # a square symmetric "test" kernel: Ka itself
    assert all(not isinstance(e, InputError) for e in bad)      # the training kernel passes, as in fit_predict
    tt = pimkl.fit_predict_path(Ka, Ka[::-1].copy(), yv[a], lams)
    with pytest.raises(InputError) as err:
        pimkl.fit_predict(Ka, Ka[::-1].copy(), yv[a], 0.3)
    assert all(isinstance(e, InputError) and str(e) == str(err.value) for e in tt)
    with pytest.raises(InputError, match="easymkl_lams"):
        pimkl.fit_predict_path(Ka, Kb, yv[a], [0.5, -0.1])


def test_choose_easymkl_lam_path_equals_reference(data):
    X, yv, inner, K, *_ = _inner_problem(data, cohort="b")
    args = (K, yv, inner, (0.0, 0.1, 0.5, 0.9, 1.0), "accuracy", "komd", 1.0, "sum")
    lam_r, mean_r = pimkl._choose_easymkl_lam(*args, reference=True)
    lam_f, mean_f = pimkl._choose_easymkl_lam(*args, inner_kernels=pimkl._inner_kernels(K, inner))
    assert lam_f == lam_r and np.array_equal(mean_f, mean_r)


def test_svm_baselines_are_gridsearch_on_the_features(data):
    from sklearn.model_selection import GridSearchCV
    from sklearn.svm import SVC
    from tolerances import FLOAT64_EXACT

    X, y = data["cohorts"]["a"]
    yv = np.asarray(y).astype(int)
    r, f, tr, te = pimkl.cv_splits(yv, 1, 4, 2, "a")[0]
    Xv = X.to_numpy(float)
    mu, sd = Xv[tr].mean(0), Xv[tr].std(0)
    Xtr, Xte = (Xv[tr] - mu) / sd, (Xv[te] - mu) / sd
    inner = pimkl._inner_splits(yv[tr], 3, 9, "a", "test")
    grid = [0.01, 0.1, 1.0, 10.0]
    for criterion in ("accuracy", "auc"):
        fast = pimkl.svm_baselines(Xtr, yv[tr], Xte, inner, grid, criterion)
        for kind in ("linear", "rbf"):
            gs = GridSearchCV(SVC(kernel=kind, gamma="scale"), {"C": grid}, cv=inner,
                              scoring="roc_auc" if criterion == "auc" else "accuracy").fit(Xtr, yv[tr])
            s_ref = gs.best_estimator_.decision_function(Xte)
            s, C = fast[kind]
            assert C == gs.best_params_["C"], (criterion, kind)
            # the Gram matrices equal LIBSVM's own kernel values up to float64 rounding
            # (kind 1); LIBSVM then takes the same steps (same working sets) and the
            # decision values differ by that rounding (<= 2e-14 relative on the default
            # data): FLOAT64_EXACT. A different step would move them by up to LIBSVM's
            # tol = 1e-3 and fail here (the tables would then no longer be identical).
            assert np.abs(s - s_ref).max() <= FLOAT64_EXACT * np.abs(s_ref).max(), (criterion, kind)
    with pytest.raises(InputError, match="kinds"):
        pimkl.svm_baselines(Xtr, yv[tr], Xte, inner, grid, "accuracy", kinds=("poly",))
