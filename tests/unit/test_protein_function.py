"""The diffusion study's generator, evaluation protocol and summary tables."""

import numpy as np
import pandas as pd
import pytest
from scipy import stats as sstats

from biokernels.io.networks import adjacency_matrix
from biokernels.io.protein_data import prepare_inputs
from biokernels.kernels.diffusion import diffusion_betas, laplacian, laplacian_eigh
from biokernels.protein_function import evaluate_sm1, evaluate_split, target_matrix
from biokernels.stats import (best_roc_per_task_table, mean_roc_table, read_roc_tables,
                              roc_per_kernel_table, roc_threshold_table, stability_table,
                              wilcoxon_table)
from biokernels.synth.networks import planted_function_network


def test_generator_sizes_and_planted_locality():
    edges, labels, split = planted_function_network(300, 1500, 6, np.random.default_rng(0))
    assert len(edges) == 1500
    assert (edges["protein_a"] < edges["protein_b"]).all()          # no self-loops, one orientation
    assert not edges.duplicated(["protein_a", "protein_b"]).any()
    assert labels.shape == (300, 6) and list(labels.columns[:4]) == [f"fine_{k:02d}" for k in range(4)]
    assert (split == "test").sum() == 100
    # Functions are planted discs and 80 % of the edges join nearest
    # neighbours, so two members of a function are linked far more often than
    # two random proteins (density 1500 / C(300, 2) = 3.3 %): at least twice
    # as often even for the large coarse discs, whose boundary cuts many of
    # their members' near-neighbour edges (small fine discs: ~10x).
    proteins, A = adjacency_matrix(edges, list(labels.index))
    A = (A > 0).toarray()
    overall = A.sum() / (300 * 299)
    for col in labels:
        m = labels[col].to_numpy().astype(bool)
        within = A[np.ix_(m, m)].sum() / (m.sum() * (m.sum() - 1))
        assert within > 2 * overall, col


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


def test_evaluate_split_runs_every_method(tiny_split):
    A, d, P, labels, train, _ = tiny_split
    betas = diffusion_betas(6, 0.5)
    res = evaluate_split(P, d, labels, train, betas, 1e-6, [1.0, 10.0], 3, 0, adjacency=A, device="cpu")
    methods = set(res.roc["method"])
    assert methods == {"rBaseline", "uBaseline", "eBaseline", "DKL", "DKLKL", "DKLKLu", "mDKL", "mDKLKL",
                       "mDKLKLu", "Neighbor Counting", "FS-Weighted Averaging"}
    assert res.roc["auc"].between(0, 1).all()
    wide = res.roc.pivot(index="task", columns="method", values="auc")
    # uBaseline takes each task's best single kernel, rBaseline one shared
    # kernel: per task, uBaseline >= rBaseline by construction.
    assert (wide["uBaseline"] >= wide["rBaseline"] - 1e-12).all()
    # The planted functions are learnable from the network.
    assert wide["eBaseline"].mean() > 0.7
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
    # The trace constraint on trace-normalized kernels: weights sum to 1 per task.
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
    # t0 has no eBaseline AUC, so it leaves every method's mean.
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
