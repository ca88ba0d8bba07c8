"""The diffusion study's generator, evaluation protocol and summary tables."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sstats

from biokernels.io.networks import adjacency_matrix
from biokernels.studies.diffusion.data import prepare_inputs
from biokernels.kernels.diffusion import diffusion_betas, laplacian, laplacian_eigh
from biokernels.studies.diffusion.protocol import evaluate_sm1, evaluate_split, target_matrix
from biokernels.stats import (best_roc_per_task_table, mean_roc_table, read_roc_tables,
                              roc_per_kernel_table, roc_threshold_table, stability_table,
                              wilcoxon_table)
from biokernels.synth.networks import planted_function_network


def test_generator_sizes_weights_and_planted_locality():
    edges, labels, split = planted_function_network(300, 1500, 6, np.random.default_rng(0))
    assert len(edges) == 1500
    assert (edges["protein_a"] < edges["protein_b"]).all()          # no self-loops, one orientation
    assert not edges.duplicated(["protein_a", "protein_b"]).any()
    # one confidence weight for all edges, set by the mean weighted degree 2.1 (the same
    # arithmetic: np.allclose's defaults absorb its rounding)
    assert np.allclose(edges["weight"], 2.1 * 300 / (2 * 1500))
    assert labels.shape == (300, 6) and list(labels.columns) == [f"function_{k:02d}" for k in range(6)]
    assert (labels.sum() == 30).all()                               # positive_fraction 0.1, no noise
    assert (split == "test").sum() == 100
    # The latent activity has a long-diffusion component (regions of the
    # network), so two members of a function are linked more often than two
    # random proteins (density 1500 / C(300, 2) = 3.3 %).
    proteins, A = adjacency_matrix(edges, list(labels.index))
    A = (A > 0).toarray()
    # Half of the activity's variance is the short, protein-level part, so the
    # enrichment is moderate: every function above 1.2x, on average above 1.4x
    # (an unplanted labelling gives 1x).
    overall = A.sum() / (300 * 299)
    ratios = []
    for col in labels:
        m = labels[col].to_numpy().astype(bool)
        ratios.append(A[np.ix_(m, m)].sum() / (m.sum() * (m.sum() - 1)) / overall)
    assert min(ratios) > 1.2 and np.mean(ratios) > 1.4, ratios


def _planted_run(mean_weighted_degree):
    edges, labels, split = planted_function_network(400, 4000, 12, np.random.default_rng(0),
                                                    mean_weighted_degree=mean_weighted_degree)
    _, A = adjacency_matrix(edges, list(labels.index))
    d, P = laplacian_eigh(laplacian(A))
    r = evaluate_split(P, d, labels, (split == "train").to_numpy(), diffusion_betas(60, 0.1), 1e-6,
                       [0.1, 1.0, 10.0, 100.0], 3, 0, formulations=("DKL", "mDKL"), device="cpu")
    w = r.weights[r.weights["method"] == "mDKL"].set_index("beta")["weight"]
    return r.roc.groupby("method")["auc"].mean(), w


def test_planted_combination_beats_single_kernels_and_equal_weights():
    """Planted ground truth: the functions' covariance is 0.5 K~(-0.3) + 0.5
    K~(-6), a combination of two kernels of the grid, so the paper's criterion
    (the Gaussian likelihood of that model) finds weight at both ends of the
    grid and its kernel beats the best single kernel (rBaseline, chosen with
    the test labels) and the equal weights (eBaseline)."""
    m, w = _planted_run(2.1)
    for method in ("DKL", "mDKL"):
        assert m[method] > m["rBaseline"] + 0.01, m
        assert m[method] > m["eBaseline"] + 0.01, m
    assert w[w.index >= -0.5].sum() > 0.8 and 0.02 < w[w.index <= -3.0].sum() < 0.2, w


def test_unweighted_network_pulls_the_weights_to_the_shortest_diffusion():
    """docs/diffusion_notes.md: on an unweighted network of this density
    (mean degree 20) the long diffusions' spectra fall below lambda = 1e-6 for
    most eigen-directions, the criterion puts almost all weight on beta = -0.1,
    and the learned kernel classifies as that single kernel does."""
    m, w = _planted_run(20.0)
    assert w.loc[w.index.max()] > 0.95, w
    assert m["mDKL"] < m["rBaseline"] + 0.01, m


def test_generator_rejects_bad_sizes():
    with pytest.raises(ValueError, match="do not fit"):
        planted_function_network(20, 1000, 2, np.random.default_rng(0))
    with pytest.raises(ValueError, match="label_noise"):
        planted_function_network(100, 200, 2, np.random.default_rng(0), label_noise=0.7)


@pytest.fixture(scope="module")
def tiny_split():
    src = {"type": "synthetic", "paper_dataset": "ligand", "n_proteins": 150, "n_edges": 600, "n_tasks": 4}
    edges, labels, splits, summary = prepare_inputs(src, 1 / 3, np.random.default_rng(3))
    proteins = list(labels.index)
    _, A = adjacency_matrix(edges, proteins)
    d, P = laplacian_eigh(laplacian(A))
    train = (splits["00"] == "train").to_numpy()
    return A, d, P, labels, train, summary


def test_prepare_inputs_summary(tiny_split):
    A, d, P, labels, train, summary = tiny_split
    assert summary["proteins"] == 150 and summary["edges"] == 600 and summary["tasks"] == 4
    assert train.sum() == 100


def test_target_matrix_follows_eq13():
    Y = np.array([[1, 0], [0, 1], [1, 1]])
    a = target_matrix(Y, np.array([True, True, False]))
    # +1 / -1 on training proteins, 0 on the test protein.
    assert a.tolist() == [[1, -1], [-1, 1], [0, 0]]


@pytest.mark.parametrize("reference", [False, True], ids=["fast", "reference"])
def test_evaluate_split_runs_every_method(tiny_split, reference):
    A, d, P, labels, train, _ = tiny_split
    betas = diffusion_betas(6, 0.5)
    res = evaluate_split(P, d, labels, train, betas, 1e-6, [1.0, 10.0], 3, 0, adjacency=A, device="cpu",
                         reference=reference)
    methods = set(res.roc["method"])
    assert methods == {"rBaseline", "uBaseline", "eBaseline", "DKL", "DKLKL", "DKLKLu", "mDKL", "mDKLKL",
                       "mDKLKLu", "Neighbor Counting", "FS-Weighted Averaging"}
    assert res.roc["auc"].between(0, 1).all()
    wide = res.roc.pivot(index="task", columns="method", values="auc")
    # uBaseline takes each task's best single kernel, rBaseline one shared
    # kernel: per task, uBaseline >= rBaseline by construction.
    assert (wide["uBaseline"] >= wide["rBaseline"] - 1e-12).all()
    # The planted functions are learnable from the network: above chance
    # (0.5) on average, though half of the planted activity is protein-level
    # and each task has only ~5 test positives here.
    assert wide["eBaseline"].mean() > 0.55
    w = res.weights[res.weights["method"] == "mDKL"]
    assert len(w) == 6 and w["weight"].sum() == pytest.approx(1.0) and (w["weight"] >= 0).all()
    assert set(res.kernel_roc["kernel"]) == set(range(1, 7))
    assert res.cv["chosen"].sum() == 1


def test_evaluate_sm1_and_its_budget(tiny_split):
    A, d, P, labels, train, _ = tiny_split
    betas = diffusion_betas(4, 1.0)
    roc, weights, times = evaluate_sm1(P, d, labels, train, betas, 1.0, max_seconds=300, max_memory_gb=1,
                                       device="cpu")
    assert len(roc) == 4 and roc["auc"].between(0, 1).all()
    # The trace constraint on trace-normalized kernels: weights sum to 1 per task
    # (SM1 normalises its multipliers, so this holds to rounding; 1e-6 is loose).
    assert np.allclose(weights.groupby("task")["weight"].sum(), 1.0, atol=1e-6)
    skipped = evaluate_sm1(P, d, labels, train, betas, 1.0, max_seconds=1e-6, max_memory_gb=1, device="cpu")
    assert all(len(t) == 0 for t in skipped)


def _roc():
    rows = []
    rng = np.random.default_rng(0)
    for task in range(12):
        base = rng.uniform(0.6, 0.9)
        for m, shift in (("DKL", 0.03), ("mDKL", 0.03), ("eBaseline", 0.0), ("uBaseline", 0.05)):
            rows.append({"method": m, "task": f"t{task}", "auc": base + shift + rng.normal(0, 0.01)})
    return pd.DataFrame(rows)


def test_mean_roc_and_wilcoxon_tables():
    roc = _roc()
    roc.loc[(roc["method"] == "eBaseline") & (roc["task"] == "t0"), "auc"] = np.nan
    t = mean_roc_table(roc).set_index("method")
    # t0 has no eBaseline AUC, so it leaves every method's mean. (Tables against the same
    # pandas / scipy arithmetic: pytest.approx's default rel 1e-6 absorbs rounding.)
    keep = roc[roc["task"] != "t0"]
    assert t.loc["DKL", "mean_roc"] == pytest.approx(keep[keep["method"] == "DKL"]["auc"].mean())
    assert t.loc["uBaseline", "uses_test_labels"] and not t.loc["DKL", "uses_test_labels"]
    w = wilcoxon_table(_roc()).set_index("method")
    r = _roc().pivot(index="task", columns="method", values="auc")
    assert w.loc["eBaseline", "DKL"] == pytest.approx(sstats.wilcoxon(r["DKL"], r["eBaseline"]).pvalue)
    assert w.loc["DKL", "DKL"] == 1.0


def test_stability_table():
    rocs = pd.concat([_roc().assign(split=s, auc=lambda t, s=s: t["auc"] + 0.01 * s) for s in range(3)])
    t = stability_table(rocs).set_index("method")
    per_split = [(_roc()["auc"] + 0.01 * s)[_roc()["method"] == "DKL"].mean() for s in range(3)]
    assert t.loc["DKL", "average_roc"] == pytest.approx(np.mean(per_split))
    assert t.loc["DKL", "std"] == pytest.approx(np.std(per_split, ddof=1))
    assert t.loc["DKL", "n_splits"] == 3


def test_figure_tables():
    roc = _roc()
    th = roc_threshold_table(roc, thresholds=[0.0, 2.0])
    assert th[th["threshold"] == 0.0]["n_tasks"].eq(12).all() and th[th["threshold"] == 2.0]["n_tasks"].eq(0).all()
    kr = pd.DataFrame({"kernel": [1, 1, 2, 2], "beta": [-0.1, -0.1, -0.2, -0.2], "task": ["a", "b", "a", "b"],
                       "auc": [0.6, 0.9, 0.8, 0.7]})
    per = roc_per_kernel_table(kr).set_index("kernel")
    assert per.loc[1, "mean_roc"] == pytest.approx(0.75) and per.loc[2, "is_rbaseline"]
    best = best_roc_per_task_table(kr).set_index("task")
    assert best.loc["a", "best_roc"] == 0.8 and best.loc["a", "minus_beta"] == pytest.approx(0.2)


def test_read_roc_tables_with_a_skipped_method(tmp_path):
    (tmp_path / "splits/00").mkdir(parents=True)
    _roc().to_csv(tmp_path / "splits/00/roc.tsv", sep="\t", index=False)
    # SM1 skipped for its cost writes a header-only table.
    pd.DataFrame(columns=["method", "task", "auc"]).to_csv(tmp_path / "splits/00/roc_sm1.tsv", sep="\t",
                                                           index=False)
    roc = read_roc_tables([tmp_path / "splits/00/roc.tsv", tmp_path / "splits/00/roc_sm1.tsv"])
    assert len(roc) == 48 and roc["auc"].dtype == float and set(roc["split"]) == {"00"}
    # The tables downstream work on it (this failed with an object-typed auc).
    assert wilcoxon_table(roc).set_index("method").loc["eBaseline", "DKL"] < 0.05


def test_generator_settings_errors_name_the_settings():
    src = {"type": "synthetic", "paper_dataset": "ligand", "n_proteins": 100, "n_edges": 400, "n_tasks": 3,
           "generator": {"planted_betas": [-0.3, -6.0], "planted_mix": [1.0]}}
    with pytest.raises(ValueError, match=r"generator = .*planted_mix.*same length"):
        prepare_inputs(src, 1 / 3, np.random.default_rng(0))
    src["generator"] = {"planted_betas": [0.5], "planted_mix": [1.0]}
    with pytest.raises(ValueError, match="planted_betas must be < 0"):
        prepare_inputs(src, 1 / 3, np.random.default_rng(0))


def test_sensitivity_beta_step_sweep_is_the_laplacian_scale(tiny_split):
    """exp(beta (c L)) = exp((c beta) L): the step sweep on a network whose
    weights are scaled by c equals the sweep with steps times c on the
    original network (same mDKL weights, same ROC)."""
    from biokernels.studies.diffusion.protocol import sensitivity_table

    A, d, P, labels, train, _ = tiny_split
    sens = {"C_grid": [1.0], "lams": [1e-6], "n_kernels": [6], "beta_steps": [0.2, 0.5]}
    t1 = sensitivity_table(P, d, labels, train, 0.5, 6, 1e-6, [1.0], 3, sens, 0, "cpu")
    sens2 = dict(sens, beta_steps=[0.4, 1.0])
    t2 = sensitivity_table(P, 0.5 * d, labels, train, 0.5, 6, 1e-6, [1.0], 3, sens2, 0, "cpu")
    s1 = t1[t1["parameter"] == "beta_step"].reset_index(drop=True)
    s2 = t2[t2["parameter"] == "beta_step"].reset_index(drop=True)
    assert list(s1["method"]) == ["eBaseline", "mDKL", "eBaseline", "mDKL"]
    # halving d and doubling the step gives the same kernels exp(beta d) up to rounding
    # (~eps |beta d|), hence the same rankings and AUCs (1e-9: a fraction of one pair)
    np.testing.assert_allclose(s1["mean_roc"], s2["mean_roc"], atol=1e-9)
    # weighted mean -beta of mDKL scales with the step: within [step, 6 step]
    m = s1[s1["method"] == "mDKL"]
    assert ((m["mean_minus_beta"] >= 0.2 - 1e-12) & (m["mean_minus_beta"] <= 6 * 0.5 + 1e-12)).all()
    # the same weights (same kernels, same fast-solver steps) on betas half as large:
    # rounding only, far below rtol 1e-6
    np.testing.assert_allclose(m["mean_minus_beta"].to_numpy(),
                               0.5 * s2[s2["method"] == "mDKL"]["mean_minus_beta"].to_numpy(), rtol=1e-6)


@pytest.mark.parametrize("generator, match", [
    ({"planted_betas": [float("nan"), -6.0]}, "must be finite"),
    ({"planted_mix": [float("inf"), 1.0]}, "must be finite"),
    ({"mean_weighted_degree": float("inf")}, "mean_weighted_degree must be a finite number"),
    ({"foo": 1}, "unexpected keyword argument 'foo'"),
])
def test_generator_bad_values_name_the_source(generator, match):
    src = {"type": "synthetic", "paper_dataset": "ligand", "n_proteins": 60, "n_edges": 200, "n_tasks": 3,
           "generator": generator}
    with pytest.raises(ValueError, match=match) as err:
        prepare_inputs(src, 1 / 3, np.random.default_rng(0))
    assert "n_proteins=60" in str(err.value)


# --- Laplacian kind, unannotated proteins, train-only kernel-scale choice ----

from biokernels.studies.diffusion.protocol import (ScaleCandidate, annotated_mask, choose_kernel_scale,  # noqa: E402
                                         run_split, split_masks)


def test_normalized_laplacian_is_networkx_s():
    """Independent reference: networkx.normalized_laplacian_matrix (an isolated
    vertex and a self-loop included); the paper's kind is diag(Ae) - A."""
    import networkx as nx

    G = nx.gnm_random_graph(40, 90, seed=3)
    G.add_node(40)                                    # isolated
    A = nx.to_numpy_array(G, nodelist=range(41), weight=None)
    A_loop = A.copy()
    A_loop[0, 0] = 2.0                                # ignored by the normalized kind
    Ln = laplacian(A_loop, "normalized")
    # same formula two ways in float64: rounding of O(degree) operations
    np.testing.assert_allclose(Ln, nx.normalized_laplacian_matrix(G, nodelist=range(41)).toarray(),
                               atol=1e-12)
    np.testing.assert_allclose(laplacian(A), np.diag(A.sum(1)) - A, atol=1e-12)
    d = np.linalg.eigvalsh(Ln)
    assert d.min() > -1e-12 and d.max() < 2 + 1e-12  # spectrum in [0, 2] (Chung 1997, Lemma 1.7)
    with pytest.raises(ValueError, match="laplacian kind"):
        laplacian(A, "sym")


def test_split_masks_restrict_to_the_annotated():
    train = np.array([1, 1, 0, 0, 1, 0], bool)
    ann = np.array([1, 0, 1, 0, 1, 1], bool)
    tr, te = split_masks(train, ann)
    assert tr.tolist() == [1, 0, 0, 0, 1, 0] and te.tolist() == [0, 0, 1, 0, 0, 1]
    tr0, te0 = split_masks(train, None)
    assert (tr0 == train).all() and (te0 == ~train).all()
    with pytest.raises(ValueError, match="no annotated protein left in the test"):
        split_masks(train, train)
    Y = pd.DataFrame({"a": [1, 0, 0], "b": [0, 0, 1]})
    assert annotated_mask(Y).tolist() == [True, False, True]


@pytest.fixture(scope="module")
def planted_small(planted_network):
    return planted_network(200, 1200, 4, 5)


def test_excluded_unannotated_proteins_are_neither_trained_on_nor_scored(planted_small):
    """With unannotated: exclude, eBaseline's AUC is the SVM on the
    equal-weight kernel trained on the annotated training proteins and
    scored on the annotated test proteins only. The kernel blocks are built
    here with the same KernelBlocks on those index sets, so LIBSVM gets the
    same numbers and its (deterministic) solution, hence the AUC, must be the
    same: the test checks the masks, not the kernels (tested above against
    scipy's expm). The reference path (roc_auc_score of decision_function)
    gives the same bits; the fast path (one GEMM for the decision values, the
    rank AUC) the same fits, so its AUC is the same up to the rank AUC's and
    roc_auc_score's rounding, (3 (n_test + 2) + 1) u, plus whole half-steps
    1 / (2 n+ n-) where a positive's and a negative's decision values lie
    within the GEMM's rounding of each other
    (tests/unit/studies/test_diffusion_speed_paths.py)."""
    from sklearn.metrics import roc_auc_score
    from sklearn.svm import SVC

    from biokernels.kernels.diffusion import diffusion_spectra
    from biokernels.studies.diffusion.protocol import KernelBlocks

    A, d, P, labels, train = planted_small
    ann = annotated_mask(labels)
    assert 0 < (~ann).sum() < len(ann)
    betas = diffusion_betas(4, 0.5)
    res = evaluate_split(P, d, labels, train, betas, 1e-6, [1.0], 2, 0, formulations=("mDKL",),
                         device="cpu", eval_mask=ann, reference=True)
    fast = evaluate_split(P, d, labels, train, betas, 1e-6, [1.0], 2, 0, formulations=("mDKL",),
                          device="cpu", eval_mask=ann)
    tr, te = np.flatnonzero(train & ann), np.flatnonzero(~train & ann)
    Ktr, Kte = KernelBlocks(P, tr, te, "cpu")(diffusion_spectra(d, betas).mean(axis=0))
    got = res.roc[res.roc["method"] == "eBaseline"].set_index("task")["auc"]
    got_fast = fast.roc[fast.roc["method"] == "eBaseline"].set_index("task")["auc"]
    unmasked = evaluate_split(P, d, labels, train, betas, 1e-6, [1.0], 2, 0, formulations=("mDKL",),
                              device="cpu")
    tol = (3 * (len(te) + 2) + 1) * 2.0 ** -53
    for k, task in enumerate(labels.columns):
        y = labels[task].to_numpy()
        svc = SVC(kernel="precomputed", C=1.0).fit(Ktr, y[tr])
        want = roc_auc_score(y[te], svc.decision_function(Kte))
        assert got[task] == want   # same inputs, same bits
        npn = y[te].sum() * (len(te) - y[te].sum())
        steps = abs(got_fast[task] - want) * 2 * npn
        assert abs(steps - round(steps)) <= 2 * npn * tol and abs(got_fast[task] - want) <= 1e-3
    # and excluding changes the test set (all unannotated test proteins were negatives)
    assert not np.allclose(got.to_numpy(),
                           unmasked.roc[unmasked.roc["method"] == "eBaseline"]["auc"].to_numpy())


def test_scale_choice_uses_training_labels_only_and_finds_the_real_network():
    """Planted ground truth: a candidate whose eigenvectors are those of an
    unrelated random graph carries no information about the functions
    (inner AUC 0.5 in expectation), while the planted network's kernels reach
    a test AUC near 0.75 (the planted-combination test above); with 12 tasks
    x 3 folds of ~90 proteins the inner mean AUC's standard error is about
    0.02, so the real network wins by many standard errors. And the choice
    (the whole table) does not change when the test proteins' labels are
    scrambled: it uses training labels only."""
    edges, labels, split = planted_function_network(400, 4000, 12, np.random.default_rng(0))
    _, A = adjacency_matrix(edges, list(labels.index))
    d, P = laplacian_eigh(laplacian(A))
    train = (split == "train").to_numpy()
    rng = np.random.default_rng(0)
    R = np.triu(rng.random((400, 400)) < 0.05, 1)
    dr, Pr = laplacian_eigh(laplacian((R | R.T).astype(float)))
    cands = [ScaleCandidate("random graph", "unnormalized", 0.1, Pr, dr),
             ScaleCandidate("real", "unnormalized", 0.1, P, d)]
    chosen, table = choose_kernel_scale(cands, labels, train, 60, 1e-6, [1.0, 10.0], 3, 0, device="cpu")
    assert cands[chosen].name == "real"
    score = table.groupby("candidate")["score"].first()
    assert score["real"] - score["random graph"] > 0.1          # 5 standard errors
    assert len(table) == 4 and table.groupby("candidate")["chosen"].first().to_dict() == {
        "random graph": False, "real": True}
    scrambled = labels.copy()
    test = np.flatnonzero(~train)
    scrambled.iloc[test] = rng.permutation(scrambled.iloc[test].to_numpy())
    chosen2, table2 = choose_kernel_scale(cands, scrambled, train, 60, 1e-6, [1.0, 10.0], 3, 0,
                                          device="cpu")
    assert chosen2 == chosen
    pd.testing.assert_frame_equal(table, table2)


def test_run_split_fixed_scale_records_it_and_matches_evaluate_split(planted_small):
    A, d, P, labels, train = planted_small
    cfg = {"n_kernels": 4, "beta_step": 0.5, "lam": 1e-6, "formulations": ["mDKL"], "solver": "auto",
           "svm_C_grid": [1.0], "inner_folds": 2, "laplacian": "unnormalized", "kernel_scale": "fixed",
           "unannotated": "negative"}
    res, scale = run_split(cfg, {"unnormalized": (d, P)}, labels, train, 0, device="cpu")
    direct = evaluate_split(P, d, labels, train, diffusion_betas(4, 0.5), 1e-6, [1.0], 2, 0,
                            formulations=("mDKL",), device="cpu")
    pd.testing.assert_frame_equal(res.roc, direct.roc)        # the same computation, deterministic
    assert scale["chosen"].all() and scale["beta_step"].tolist() == [0.5]
    with pytest.raises(ValueError, match="needs the eigendecomposition of the normalized"):
        run_split({**cfg, "laplacian": "normalized"}, {"unnormalized": (d, P)}, labels, train, 0,
                  device="cpu")


def test_run_sensitivity_and_run_sm1_use_the_chosen_scale(planted_small):
    """The workflow's sensitivity and SM1 jobs (run_sensitivity, run_sm1)
    compute exactly what the protocol functions compute on the split's
    chosen kernel scale (step 0.5 here, not the config's 0.1) and the
    inner-CV's chosen C, with the grid from diffusion_betas; SM1 does not run
    where the config says so."""
    from biokernels.studies.diffusion.protocol import run_sensitivity, run_sm1, sensitivity_table

    A, d, P, labels, train = planted_small
    scale = pd.DataFrame([{"candidate": "x", "laplacian": "unnormalized", "beta_step": 0.5, "chosen": True}])
    cfg = {"n_kernels": 4, "beta_step": 0.1, "lam": 1e-6, "solver": "auto", "svm_C_grid": [1.0],
           "inner_folds": 2, "unannotated": "negative",
           "sensitivity": {"C_grid": [1.0], "lams": [1e-6], "n_kernels": [3], "beta_steps": [0.25]}}
    got = run_sensitivity(cfg, {"unnormalized": (d, P)}, labels, train, scale, 0, device="cpu")
    want = sensitivity_table(P, d, labels, train, 0.5, 4, 1e-6, [1.0], 2, cfg["sensitivity"], 0, "cpu")
    pd.testing.assert_frame_equal(got, want)   # the same computation, deterministic

    cv = pd.DataFrame({"C": [10.0, 1.0], "mean_auc": [0.6, 0.7], "chosen": [False, True]})
    sm1 = {"enabled": True, "max_seconds": 300, "max_memory_gb": 1}
    roc, weights, _ = run_sm1({**cfg, "sm1": sm1}, {"unnormalized": (d, P)}, labels, train, scale, cv,
                              device="cpu")
    roc2, weights2, _ = evaluate_sm1(P, d, labels, train, diffusion_betas(4, 0.5), 1.0, 300, 1, device="cpu")
    pd.testing.assert_frame_equal(roc, roc2)
    pd.testing.assert_frame_equal(weights, weights2)
    for off in ({"sm1": {**sm1, "enabled": False}}, {"sm1": sm1, "deviation": "normalized Laplacian"}):
        assert all(len(t) == 0 for t in run_sm1({**cfg, **off}, {}, labels, train, scale, cv))


# --- a train-only scale choice takes a sibling's split -----------------------

from biokernels.studies.diffusion.protocol import same_split_inputs, scale_siblings, split_kernel_scale  # noqa: E402

_CANDS = [{"laplacian": "unnormalized", "step_factor": 1.0}, {"laplacian": "normalized", "step_factor": 1.0},
          {"laplacian": "unnormalized", "step_factor": 0.5}, {"laplacian": "unnormalized", "step_factor": 0.1}]


def test_scale_siblings_are_the_fixed_data_sets_with_a_candidate_scale_and_the_same_rest():
    base = {"type": "edgelist", "network_path": "net.tsv", "min_annotated": 10, "sha256": {"network": "ab"}}
    sources = {
        "paper": base,
        "norm": {**base, "splits_of": "paper", "laplacian": "normalized", "deviation": "x", "description": "n"},
        "half": {**base, "splits_of": "paper", "beta_step": 0.05, "deviation": "y"},
        "half_again": {**base, "splits_of": "paper", "beta_step": 0.05},        # a second one: the first wins
        "tenth_other_terms": {**base, "splits_of": "paper", "beta_step": 0.01, "min_annotated": 5},
        "other_splits": {**base, "beta_step": 0.01},                             # its own splits
        "cv": {**base, "splits_of": "paper", "kernel_scale": "inner_cv", "deviation": "z"},
    }
    got = scale_siblings("cv", sources, 0.1, _CANDS)
    assert got == {("unnormalized", 0.1): "paper", ("normalized", 0.1): "norm", ("unnormalized", 0.05): "half"}
    assert scale_siblings("paper", sources, 0.1, _CANDS) == {}                 # a fixed scale chooses nothing


def test_same_split_inputs_compares_the_files_and_the_eigendecomposition(tmp_path):
    def write(name, text):
        p = tmp_path / name
        p.write_text(text)
        return str(p)

    d, P = np.array([0.0, 1.0]), np.eye(2)
    np.savez(tmp_path / "eig.npz", d=d, P=P)
    own = {"edges": write("e1", "a\tb\n"), "labels": write("l1", "x\n"), "splits": write("s1", "1\n")}
    sib = {"edges": write("e2", "a\tb\n"), "labels": write("l2", "x\n"), "splits": write("s2", "1\n"),
           "eigen": str(tmp_path / "eig.npz")}
    assert same_split_inputs(own, sib, (d, P)) is None
    assert "eig.npz" in same_split_inputs(own, sib, (d, P + 1e-15))
    write("l2", "y\n")
    assert same_split_inputs(own, sib, (d, P)) == f"{sib['labels']} differs from {own['labels']}"


def test_the_chosen_scale_s_split_is_the_fixed_data_set_s(planted_small):
    """What a reuse rests on: run_split after the train-only choice equals
    run_split of the data set fixed at the chosen scale (same seed, one
    thread: the same arithmetic)."""
    A, d, P, labels, train = planted_small
    cfg = {"n_kernels": 4, "beta_step": 0.5, "lam": 1e-6, "formulations": ["mDKL"], "solver": "auto",
           "svm_C_grid": [1.0], "inner_folds": 2, "laplacian": "unnormalized", "unannotated": "negative",
           "kernel_scale": "inner_cv",
           "kernel_scale_cv": {"formulation": "mDKL", "candidates": [_CANDS[0], _CANDS[2]]}}
    eigens = {"unnormalized": (d, P)}
    chosen, table = split_kernel_scale(cfg, eigens, labels, train, 0, "cpu")
    res, table2 = run_split(cfg, eigens, labels, train, 0, device="cpu", scale=(chosen, table))
    pd.testing.assert_frame_equal(table, table2)
    fixed = {**cfg, "kernel_scale": "fixed", "beta_step": chosen.beta_step}
    res_fixed, _ = run_split(fixed, eigens, labels, train, 0, device="cpu")
    for a, b in ((res.roc, res_fixed.roc), (res.weights, res_fixed.weights), (res.cv, res_fixed.cv)):
        pd.testing.assert_frame_equal(a, b)
