"""Pathway induction (normalized-Laplacian sub-networks) and pathway-induced kernels (PIMKL S.1)."""

from __future__ import annotations

import networkx as nx
import numpy as np
import pandas as pd
import pytest

from conftest import SHARED_DATA
from biokernels.kernels.pathway import (induce_pathways, normalize_trace, normalized_laplacian,
                                        pathway_kernels, stack_omics)

STRING = SHARED_DATA / "human_string_v12" / "string_v12_human_entrez_symbol_700_400k3.tsv.gz"
HALLMARK = SHARED_DATA / "msigdb_genesets" / "h.all.v6.2.symbols.gmt"
BC = SHARED_DATA / "breast_cancer_small_cohorts"


def _edges(pairs):
    return pd.DataFrame(pairs, columns=["protein_a", "protein_b", "weight"])


# a small weighted network: a 4-cycle with a chord, a pendant, an isolated pair
EDGES = _edges([("A", "B", 0.9), ("B", "C", 0.5), ("C", "D", 0.7), ("A", "D", 0.4), ("A", "C", 0.8),
                ("D", "E", 1.0), ("X", "Y", 0.6), ("A", "Z", 0.3)])


def test_laplacian_matches_networkx():
    G = nx.Graph()
    G.add_weighted_edges_from(EDGES.itertuples(index=False))
    G.add_node("W")  # isolated node: zero row, like networkx
    nodes = sorted(G)
    ref = nx.normalized_laplacian_matrix(G, nodelist=nodes, weight="weight").toarray()
    A = nx.to_scipy_sparse_array(G, nodelist=nodes, weight="weight")
    L = normalized_laplacian(A).toarray()
    # the same formula (w_ij / sqrt(d_i d_j), degrees of a few weights): a few roundings
    np.testing.assert_allclose(L, ref, atol=1e-12)
    ev = np.linalg.eigvalsh(L)
    assert ev.min() > -1e-12 and ev.max() < 2 + 1e-12
    with pytest.raises(ValueError, match="not symmetric"):
        normalized_laplacian(np.array([[0, 1.0], [0.5, 0]]))
    with pytest.raises(ValueError, match="self-loops"):
        normalized_laplacian(np.eye(2))


def test_induce_counts_missing_isolated_and_empty(caplog):
    caplog.set_level("INFO", logger="biokernels")
    genes = ["A", "B", "C", "D", "E", "X", "Q"]   # Y, Z not measured
    sets = {"core": ["A", "B", "C", "D", "Q", "Y", "A"],   # Y missing; Q isolated; A duplicated
            "pair": ["X", "Y"],                              # Y missing -> X isolated -> no kernel
            "none": ["M1", "M2"],                            # nothing measured
            "chain": ["E", "D", "Z"]}                        # Z missing, D-E edge
    pws, tab = induce_pathways(EDGES, sets, genes)
    assert [p.name for p in pws] == ["core", "chain"]
    assert tab.loc["core"].to_dict() == {"set_size": 6, "measured": 5, "missing": 1, "isolated": 1,
                                         "genes": 4, "edges": 5, "kernel": True}
    assert tab.loc["pair"].to_dict() == {"set_size": 2, "measured": 1, "missing": 1, "isolated": 1,
                                         "genes": 0, "edges": 0, "kernel": False}
    assert tab.loc["none", "measured"] == 0 and not tab.loc["none", "kernel"]
    assert tab.loc["chain", "edges"] == 1
    assert pws[0].genes == ["A", "B", "C", "D"]      # data order, isolated Q dropped
    assert "2 of 4 gene sets give no kernel" in caplog.text
    # the induced Laplacian is networkx's on the induced (measured, non-isolated) subgraph
    G = nx.Graph()
    G.add_weighted_edges_from(EDGES.itertuples(index=False))
    ref = nx.normalized_laplacian_matrix(G.subgraph(["A", "B", "C", "D"]), nodelist=pws[0].genes).toarray()
    np.testing.assert_allclose(pws[0].laplacian.toarray(), ref, atol=1e-12)


def test_kernel_equals_explicit_and_is_psd():
    rng = np.random.default_rng(0)
    genes = ["A", "B", "C", "D", "E", "X", "Y", "Z"]
    X = pd.DataFrame(rng.standard_normal((30, len(genes))), columns=genes)
    Z = pd.DataFrame(rng.standard_normal((7, len(genes))), columns=genes)
    pws, _ = induce_pathways(EDGES, {"s1": ["A", "B", "C", "D", "E"], "s2": ["X", "Y", "A", "Z"]}, genes)
    K = pathway_kernels(X, pws)
    Kxz = pathway_kernels(X, pws, Z)
    assert K.shape == (2, 30, 30) and Kxz.shape == (2, 30, 7)
    # K = X L X^T two ways in float64: <= 5 genes, |x| ~ 1, ||L|| <= 2: rounding ~1e-14;
    # the PSD K's smallest eigenvalue is computed to ~n eps ||K|| ~ 1e-12
    for p, pw in enumerate(pws):
        L = pw.laplacian.toarray()
        np.testing.assert_allclose(K[p], X[pw.genes].to_numpy() @ L @ X[pw.genes].to_numpy().T, atol=1e-12)
        np.testing.assert_allclose(Kxz[p], X[pw.genes].to_numpy() @ L @ Z[pw.genes].to_numpy().T, atol=1e-12)
        assert np.linalg.eigvalsh(K[p]).min() > -1e-10
        np.testing.assert_array_equal(K[p], K[p].T)
    # the S.1 edge map Pi: K = Pi(X) Pi(X)^T with Pi_e(x) = sqrt(w)(x_i/sqrt(d_i) - x_j/sqrt(d_j))
    pw = pws[0]
    sub = EDGES[EDGES.protein_a.isin(pw.genes) & EDGES.protein_b.isin(pw.genes)]
    d = {g: sub.loc[(sub.protein_a == g) | (sub.protein_b == g), "weight"].sum() for g in pw.genes}
    Pi = np.column_stack([np.sqrt(w) * (X[a] / np.sqrt(d[a]) - X[b] / np.sqrt(d[b]))
                          for a, b, w in sub.itertuples(index=False)])
    np.testing.assert_allclose(K[0], Pi @ Pi.T, atol=1e-12)
    # plain arrays with gene names; column order of the data does not matter
    perm = genes[::-1]
    np.testing.assert_allclose(pathway_kernels(X[perm].to_numpy(), pws, genes=perm), K, atol=1e-12)
    with pytest.raises(ValueError, match="gene 'E' is not a column"):
        pathway_kernels(X.drop(columns="E"), pws)
    with pytest.raises(ValueError, match="NaN"):
        pathway_kernels(X.mask(X > 2), pws)


def test_trace_normalization_train_and_test():
    rng = np.random.default_rng(1)
    K = np.stack([(lambda M: M @ M.T)(rng.standard_normal((10, 3)) * s) for s in (1.0, 5.0, 0.1)])
    Kn, f = normalize_trace(K)
    # divisions by the trace: exact up to a few roundings (numpy's default rtol 1e-7)
    np.testing.assert_allclose(np.trace(Kn, axis1=1, axis2=2), 10.0)
    np.testing.assert_allclose(f, np.trace(K, axis1=1, axis2=2) / 10)
    Kt = K[:, :, :4]
    Ktn, f2 = normalize_trace(Kt, f)
    np.testing.assert_allclose(Ktn, Kn[:, :, :4])
    K2, f0 = normalize_trace(K[0])
    assert K2.shape == (10, 10) and np.isclose(np.trace(K2), 10)
    with pytest.raises(ValueError, match="kernel 1: trace factor 0.0"):
        normalize_trace(np.stack([K[0], np.zeros((10, 10))]))
    with pytest.raises(ValueError, match="square"):
        normalize_trace(Kt)


def test_two_omics_stack():
    rng = np.random.default_rng(2)
    genes = ["A", "B", "C", "D", "E"]
    mrna = pd.DataFrame(rng.standard_normal((6, 5)), columns=genes)
    cna = pd.DataFrame(rng.standard_normal((6, 4)), columns=genes[:4])
    pw_m, _ = induce_pathways(EDGES, {"S": genes, "T": ["D", "E"]}, mrna.columns)
    pw_c, _ = induce_pathways(EDGES, {"S": genes, "T": ["D", "E"]}, cna.columns)
    names, K = stack_omics({"mrna": (pw_m, pathway_kernels(mrna, pw_m)), "cna": (pw_c, pathway_kernels(cna, pw_c))})
    assert names == ["S|mrna", "T|mrna", "S|cna"] and K.shape == (3, 6, 6)


@pytest.mark.skipif(not (STRING.is_file() and HALLMARK.is_file() and BC.is_dir()), reason="../shared/data is absent")
def test_real_hallmark_on_gse2034_subset():
    from biokernels.io.cohorts import read_vdxs_cohort
    from biokernels.io.pathways import read_gmt, read_string_network

    edges, _ = read_string_network(STRING)
    sets = read_gmt(HALLMARK)
    X, y, _ = read_vdxs_cohort(BC / "vdxs_expression_150x966.tsv.gz", BC / "vdxs_probe_annotation.tsv",
                               BC / "vdxs_clinical.tsv")
    pws, tab = induce_pathways(edges, sets, X.columns)

    # independent route: pandas + networkx, from the raw files
    raw = pd.read_csv(STRING, sep="\t", usecols=["symbol_a", "symbol_b", "combined_score"])
    ann = pd.read_csv(BC / "vdxs_probe_annotation.tsv", sep="\t")
    measured = set(ann["HUGO.gene.symbol"].dropna())
    G = nx.from_pandas_edgelist(raw[raw.symbol_a.isin(measured) & raw.symbol_b.isin(measured)],
                                "symbol_a", "symbol_b")
    ref = {}
    with open(HALLMARK) as fh:
        for line in fh:
            f = line.rstrip("\n").split("\t")
            H = G.subgraph(set(f[2:]) & set(G)).copy()
            H.remove_nodes_from(list(nx.isolates(H)))
            ref[f[0]] = (H.number_of_nodes(), H.number_of_edges())
    nonempty = [k for k, (n, e) in ref.items() if e > 0]
    assert len(nonempty) == int(tab["kernel"].sum()) == len(pws) == 29
    assert tab[["genes", "edges"]].apply(tuple, axis=1).to_dict() == ref
    assert tab.loc[tab.kernel, "genes"].median() == 5 and tab.loc[tab.kernel, "edges"].median() == 4
    for name in ("HALLMARK_HEME_METABOLISM", "HALLMARK_KRAS_SIGNALING_UP", "HALLMARK_KRAS_SIGNALING_DN",
                 "HALLMARK_PEROXISOME"):
        assert not tab.loc[name, "kernel"]
    Xs = (X - X.mean()) / X.std()
    K, f = normalize_trace(pathway_kernels(Xs, pws))
    assert K.shape == (29, 114, 114)
    np.testing.assert_allclose(np.trace(K, axis1=1, axis2=2), 114)
