"""The function benchmark (issue #31): readers, splits, metrics, Mashup's
embedding, label propagation, the diffusion kernels' block form, and that
no hyperparameter choice reads a held-out label."""

from __future__ import annotations

import gzip

import networkx as nx
import numpy as np
import pandas as pd
import pytest
import scipy.linalg
import scipy.sparse as sp

from biokernels.errors import InputError
from biokernels.kernels.diffusion import diffusion_betas, laplacian
from biokernels.studies.function_benchmark.data import (load_inputs, read_gene_list, read_mashup_network,
                                                        synthetic_inputs)
from biokernels.studies.function_benchmark.kernels import network_spectrum
from biokernels.studies.function_benchmark.mashup import log_state_gram, mashup_embedding, rwr_states
from biokernels.studies.function_benchmark.metrics import function_metrics, top_k_matrix
from biokernels.studies.function_benchmark.propagation import harmonic_scores, lgc_scores
from biokernels.studies.function_benchmark.run import run_benchmark
from biokernels.studies.function_benchmark.splits import inner_folds, trial_splits
from biokernels.studies.function_benchmark.tables import summary_table, wilcoxon_vs_best_diffusion


# --- readers -------------------------------------------------------------

def test_mashup_network_reader_symmetrises_and_names_bad_lines(tmp_path):
    genes = tmp_path / "genes.txt"
    genes.write_text("A\nB\nC\nD\n")
    assert read_gene_list(genes) == ["A", "B", "C", "D"]
    net = tmp_path / "net.txt.gz"
    with gzip.open(net, "wt") as fh:
        fh.write("1\t2\t0.5\n2\t1\t0.5\n3\t4\t0.25\n4\t4\t1.0\n")    # both orientations; a self-loop
    A = read_mashup_network(net, 4).toarray()
    expected = np.zeros((4, 4))
    expected[0, 1] = expected[1, 0] = 0.5
    expected[2, 3] = expected[3, 2] = 0.25
    assert np.array_equal(A, expected)        # exact: the weights are copied, not computed
    for body, msg in (("1\t2\n", "line 1: expected 3 fields"), ("1\t2\t0.5\n1\t9\t0.1\n", "line 2: node index out of range"),
                      ("1\tx\t0.5\n", "line 1: node indices must be integers"), ("1\t2\t-1\n", "line 1: weight must be finite")):
        bad = tmp_path / "bad.txt"
        bad.write_text(body)
        with pytest.raises(InputError, match=f"bad.txt: {msg}"):
            read_mashup_network(bad, 4)
    dup = tmp_path / "dup.txt"
    dup.write_text("A\nB\nA\n")
    with pytest.raises(InputError, match="dup.txt: line 3: gene 'A' already listed on line 1"):
        read_gene_list(dup)


def test_a_mashup_source_in_the_configs_layout_loads(tmp_path):
    (tmp_path / "genes.txt").write_text("A\nB\nC\nD\n")
    (tmp_path / "n1.txt").write_text("1\t2\t1.0\n3\t4\t0.5\n")
    (tmp_path / "n2.txt").write_text("2\t3\t2.0\n")
    (tmp_path / "lg.txt").write_text("A\nB\nC\nD\n")
    (tmp_path / "lt.txt").write_text("t1\nt2\n")
    (tmp_path / "la.txt").write_text("1\t1\n2\t1\n3\t2\n4\t2\n")
    source = {"type": "mashup", "genes_path": str(tmp_path / "genes.txt"), "min_genes": 1,
              "networks": {"one": {"adjacency_path": str(tmp_path / "n1.txt")},
                           "two": {"adjacency_path": str(tmp_path / "n2.txt")}},
              "levels": {"level1": {"genes_path": str(tmp_path / "lg.txt"), "terms_path": str(tmp_path / "lt.txt"),
                                    "adjacency_path": str(tmp_path / "la.txt")}}}
    genes, nets, Y, _ = load_inputs(source, "level1")
    assert genes == ["A", "B", "C", "D"] and sorted(nets) == ["one", "two"]
    assert nets["two"].toarray()[1, 2] == nets["two"].toarray()[2, 1] == 2.0
    assert Y.to_numpy().tolist() == [[1, 0], [1, 0], [0, 1], [0, 1]]


def test_the_real_mashup_config_loads_the_issues_counts():
    from pathlib import Path

    import yaml

    root = Path(__file__).resolve().parents[3]
    if not (root.parent / "shared" / "data" / "yeast_mashup_string_mips").is_dir():
        pytest.skip("../shared/data/yeast_mashup_string_mips is absent")
    cfg = yaml.safe_load((root / "config" / "function_yeast_mashup.yaml").read_text())
    source = cfg["function_benchmark"]["sources"]["yeast_mashup"]
    source = {**source, "genes_path": str(root / source["genes_path"]),
              "networks": {k: {"adjacency_path": str(root / v["adjacency_path"])} for k, v in source["networks"].items()},
              "levels": {k: {f: str(root / p) for f, p in v.items()} for k, v in source["levels"].items()}}
    genes, nets, Y, _ = load_inputs(source, "level1")
    # Mashup's yeast benchmark: 6,400 genes, the 4 STRING channels of the snapshot, 17 MIPS level-1 terms
    assert len(genes) == 6400 and sorted(nets) == ["cooccurence", "database", "fusion", "neighborhood"]
    assert Y.shape == (6400, 17)


# --- splits ---------------------------------------------------------------

def test_trials_partition_the_annotated_genes_and_are_seeded():
    annotated = np.arange(50) % 5 != 0                    # 40 annotated genes
    trials = trial_splits(annotated, 3, 0.2, seed=7)
    for tr, te in trials:
        assert len(te) == 8 and len(tr) == 32
        assert not set(tr) & set(te) and set(tr) | set(te) == set(np.flatnonzero(annotated))
    again = trial_splits(annotated, 5, 0.2, seed=7)        # trial t does not depend on how many run
    assert all(np.array_equal(a[1], b[1]) for a, b in zip(trials, again))
    assert not np.array_equal(trials[0][1], trial_splits(annotated, 1, 0.2, seed=8)[0][1])
    folds = inner_folds(32, 5, 7, 0)
    assert sorted(np.concatenate([v for _, v in folds]).tolist()) == list(range(32))


# --- metrics -------------------------------------------------------------

def test_metrics_on_a_hand_counted_example():
    Y = np.array([[1, 0, 0, 0], [0, 1, 1, 0], [0, 0, 0, 1]])
    S = np.array([[0.9, -0.1, -0.2, -0.5],      # top-1 right; predicted set {0} = true set
                  [0.3, 0.2, 0.8, -0.1],       # top-1 (term 2) right; predicted {0, 1, 2} != {1, 2}
                  [0.5, -0.3, -0.4, 0.4]])     # top-1 (term 0) wrong; predicted {0, 3} != {3}
    m = function_metrics(Y, S)
    assert m["top1_accuracy"] == pytest.approx(2 / 3)     # hand count; approx only for the float division
    assert m["exact_match_accuracy"] == pytest.approx(1 / 3)
    # top-3 sets: {0,1,2}, {0,1,2}, {0,3,1}: TP = 1 + 2 + 1 = 4, 9 predicted, 4 true
    assert m["micro_f1_top3"] == pytest.approx(2 * 4 / (9 + 4))
    assert top_k_matrix(S, 3).sum(axis=1).tolist() == [3, 3, 3]
    perfect = function_metrics(Y, Y * 2.0 - 1.0)
    assert perfect["micro_aupr"] == 1.0 and perfect["macro_aupr"] == 1.0   # exact: a perfect ranking


# --- Mashup ---------------------------------------------------------------

def _toy_graph(n=9, seed=0):
    rng = np.random.default_rng(seed)
    A = np.triu(rng.random((n, n)) < 0.4, 1) * rng.uniform(0.2, 1.0, (n, n))
    A[:, -1] = A[-1, :] = 0                            # an isolated node
    return A + A.T


def test_rwr_matches_the_walk_iterated_to_its_fixed_point():
    A = _toy_graph()
    n = len(A)
    Q = rwr_states(A, 0.5)
    B = A.copy()
    B[np.diag_indices(n)] += (A.sum(axis=1) == 0)     # Mashup's self-loop on an isolated node
    P = B / B.sum(axis=1, keepdims=True)
    for i in range(n):
        q = np.eye(n)[i]
        for _ in range(200):                          # contraction 0.5 per step: 0.5^200 below rounding
            q = 0.5 * np.eye(n)[i] + 0.5 * q @ P
        # rounding of a solve of an O(1)-conditioned system (||M^-1|| <= 2)
        assert np.allclose(Q[i], q, atol=1e-13, rtol=0)
    assert np.allclose(Q.sum(axis=1), 1.0, atol=1e-13)


def test_mashup_embedding_equals_the_direct_truncated_svd():
    nets = [_toy_graph(9, s) for s in (0, 1, 2)]
    n, d = 9, 4
    R = [np.log(rwr_states(A, 0.5) + 1.0 / n) for A in nets]
    for A, Rk in zip(nets, R):       # the block form of R R^T against the dense product: rounding only
        assert np.allclose(log_state_gram(A, 0.5), Rk @ Rk.T, rtol=1e-12, atol=1e-10)
    U, s, _ = np.linalg.svd(np.hstack(R))
    direct = (U[:, :d] * s[:d]) @ U[:, :d].T           # X X^T with X = U_d S_d^{1/2}
    X = mashup_embedding(nets, d, 0.5)
    assert X.shape == (n, d)
    # X X^T is unique when s_d > s_{d+1} (here a relative gap > 1e-3): rounding of two eigensolvers
    assert s[d - 1] - s[d] > 1e-3 * s[0]
    assert np.allclose(X @ X.T, direct, rtol=1e-9, atol=1e-9 * s[0])


# --- label propagation -------------------------------------------------

def _two_cliques():
    G = nx.barbell_graph(5, 2)                         # two 5-cliques joined by a path of 2 nodes
    A = nx.to_numpy_array(G, nodelist=range(G.number_of_nodes()))
    return G, A


def test_propagation_signs_are_networkx_labels_on_a_toy_graph():
    G, A = _two_cliques()
    labelled = np.array([0, 1, 9, 10])
    y = np.array([[1], [1], [0], [0]])
    for node, lab in zip(labelled, y[:, 0]):
        G.nodes[int(node)]["label"] = "pos" if lab else "neg"
    hard_h = nx.node_classification.harmonic_function(G, max_iter=2000)
    hard_l = nx.node_classification.local_and_global_consistency(G, alpha=0.9, max_iter=2000)
    Fh = harmonic_scores(A, labelled, y)[:, 0]
    Fl = lgc_scores(A, labelled, y, alpha=0.9)[:, 0]
    free = [u for u in G if u not in set(labelled) and abs(Fh[u]) > 1e-9 and abs(Fl[u]) > 1e-9]
    assert len(free) >= 6
    assert [("pos" if Fh[u] > 0 else "neg") for u in free] == [hard_h[u] for u in free]
    assert [("pos" if Fl[u] > 0 else "neg") for u in free] == [hard_l[u] for u in free]
    # the harmonic property on every unlabelled node (planted truth of the closed form): rounding only
    deg = A.sum(axis=1)
    for u in set(G) - set(labelled):
        assert Fh[u] == pytest.approx(A[u] @ Fh / deg[u], abs=1e-12)


def test_harmonic_scores_zero_where_no_label_is_reachable():
    A = sp.block_diag([np.ones((3, 3)) - np.eye(3), np.ones((2, 2)) - np.eye(2)]).tocsr()
    F = harmonic_scores(A, np.array([0]), np.array([[1]]))
    assert F[:3, 0].tolist() == [1.0, 1.0, 1.0] and F[3:, 0].tolist() == [0.0, 0.0]


# --- diffusion kernels in block form ------------------------------------

def test_block_kernel_equals_expm_on_the_whole_graph_with_isolated_nodes():
    A = _toy_graph(9, 3)
    spec = network_spectrum(A)
    assert spec.nodes.size == 8
    betas = diffusion_betas(5, 0.3)
    S = spec.spectra(betas)
    genes = np.array([8, 0, 3, 5])
    for i, b in enumerate(betas):
        K = scipy.linalg.expm(b * laplacian(A))
        K = 9 * K / np.trace(K)
        # expm's and eigh's rounding on a 9-node graph (entries O(1))
        assert np.allclose(spec.kernel(S[i], genes), K[np.ix_(genes, genes)], atol=1e-12)


# --- the whole benchmark on a planted network -------------------------

CFG = {"seed": 3, "n_trials": 2, "test_fraction": 0.2, "inner_folds": 3,
       "svm": {"C_grid": [0.1, 1.0], "n_jobs": 1},
       "diffusion": {"networks": ["net1", "net2", "sum"], "n_kernels": 6, "beta_step": 1.0, "single_every": 2,
                     "lam": 1e-6, "formulations": ["DKL", "mDKL"], "combine": ["all", "learned"],
                     "laplacian": "unnormalized"},
       "propagation": {"networks": ["net1", "sum"], "methods": ["harmonic", "lgc"], "lgc_alpha_grid": [0.5, 0.9]},
       "mashup": {"enabled": True, "dim": 20, "restart": 0.5}}


@pytest.fixture(scope="module")
def planted():
    genes, nets, Y = synthetic_inputs(120, 500, 4, 2, 0.2, np.random.default_rng(0))
    return nets, Y, run_benchmark(nets, Y, CFG)


def test_benchmark_runs_every_method_and_beats_chance(planted):
    nets, Y, res = planted
    methods = set(res.metrics["method"])
    assert {"diffusion[net1]", "diffusion[sum]", "eBaseline[all]", "mDKL[all]", "CKA[mDKL]", "DKL[sum]",
            "mDKL[sum]", "harmonic[sum]", "lgc[net1]", "Mashup"} <= methods
    weights = res.choices.query("method == 'CKA[mDKL]'")["setting"]
    assert weights.str.contains("w_net1=").all() and weights.str.contains("w_net2=").all()
    assert res.metrics.groupby("method").size().eq(2 * 5).all()        # 2 trials x 5 metrics
    # a random ranking's micro-AUPR is about the share of positive (gene, term) pairs among the
    # annotated genes; the planted functions are diffusions on the network, so the summed
    # network's diffusion kernel must rank well above it (0.2 is a loose margin, not a fit)
    mic = res.metrics.query("metric == 'micro_aupr'").groupby("method")["value"].mean()
    prevalence = Y.to_numpy()[Y.to_numpy().any(axis=1)].mean()
    assert mic["diffusion[sum]"] > prevalence + 0.2, (mic, prevalence)
    table = summary_table(res.metrics, {"deepNF (context)": {"micro_aupr": 0.717, "note": "6 channels; 4 here"}})
    assert table["run"].tolist().count(False) == 1
    w = wilcoxon_vs_best_diffusion(res.metrics)
    assert w["best"].nunique() == 1 and w["best"].iloc[0].startswith(("diffusion[", "eBaseline[", "DKL[", "mDKL["))


def test_scrambled_held_out_labels_change_no_hyperparameter_choice(planted):
    nets, Y, res = planted
    annotated = np.flatnonzero(Y.to_numpy().any(axis=1))
    trials = trial_splits(np.ones(len(annotated), bool), CFG["n_trials"], CFG["test_fraction"], CFG["seed"])
    for t, (_, te) in enumerate(trials):
        rows = annotated[te]
        Ys = Y.copy()
        # permute the held-out genes' label rows among themselves: every one stays annotated, so the
        # trials are the same, and only held-out labels change
        Ys.iloc[rows] = Y.iloc[np.random.default_rng(t).permutation(rows)].to_numpy()
        assert not Ys.equals(Y)
        res2 = run_benchmark(nets, Ys, CFG)
        a = res.choices.query("trial == @t").set_index("method")
        b = res2.choices.query("trial == @t").set_index("method").loc[a.index]
        assert a["setting"].tolist() == b["setting"].tolist()
        assert np.array_equal(a["inner_micro_aupr"].to_numpy(), b["inner_micro_aupr"].to_numpy())


def test_alignment_weights_favour_the_informative_kernel_and_read_training_labels_only():
    from biokernels.studies.function_benchmark.kernels import alignment_weights

    rng = np.random.default_rng(3)
    g, t = 200, 5
    Y = (rng.random((g, t)) < 0.2).astype(float)
    informative = Y @ Y.T + np.eye(g)                 # the labels' own similarity
    X = rng.standard_normal((g, 30))
    noise = X @ X.T / 30                              # independent of the labels
    train = np.arange(150)
    mu = alignment_weights([informative, noise], Y, train)
    # closed form of Prop. 9 with P = 2 on these blocks, from numpy directly (no shared code)
    H = np.eye(150) - 1.0 / 150
    Kc = [H @ K[:150, :150] @ H for K in (informative, noise)]
    M = np.array([[np.vdot(a, b) for b in Kc] for a in Kc])
    a = np.array([np.trace(Y[:150].T @ K @ Y[:150]) for K in Kc])
    from scipy.optimize import nnls
    R = np.linalg.cholesky(M).T
    v = nnls(R, np.linalg.solve(R.T, a))[0]
    assert np.allclose(mu, v / np.linalg.norm(v), atol=1e-10)
    # the noise kernel's centred alignment with the labels is ~0 (independent draws), the informative one's
    # is the largest possible; 0.9 and 5x are loose margins on the unit-norm weights, not fitted values
    assert mu[0] > 0.9 and mu[0] > 5 * mu[1]
    Ys = Y.copy()
    Ys[150:] = rng.permutation(Ys[150:])            # only the held-out rows change
    assert np.array_equal(alignment_weights([informative, noise], Ys, train), mu)


def test_no_combination_across_networks_with_one_network():
    genes, nets, Y = synthetic_inputs(80, 300, 3, 2, 0.2, np.random.default_rng(1))
    cfg = {**CFG, "n_trials": 1, "diffusion": {**CFG["diffusion"], "networks": ["net1", "sum"]},
           "propagation": {**CFG["propagation"], "networks": ["net1"], "methods": ["harmonic"]},
           "mashup": {**CFG["mashup"], "enabled": False}}
    methods = set(run_benchmark(nets, Y, cfg).metrics["method"])
    assert "mDKL[net1]" in methods and not {"mDKL[all]", "eBaseline[all]", "CKA[mDKL]"} & methods
