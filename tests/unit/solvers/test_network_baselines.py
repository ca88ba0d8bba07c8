"""Neighbor Counting, FS-weights and FS-Weighted Averaging (network baselines).

Hand-computed values on a tiny graph, brute-force references written with
Python sets, planted-module recovery, and input validation.
"""

from fractions import Fraction as Fr

import numpy as np
import pytest
import scipy.sparse as sp
from sklearn.metrics import roc_auc_score

from biokernels.solvers.network_baselines import (fs_weighted_averaging, fs_weights,
                                                  neighbor_counting)

# The tiny graph: a triangle 0-1-2, a tail 2-3-5, and an isolated protein 4.
#
#     0 --- 1
#      \   /
#        2 --- 3 --- 5        4
#
# Closed neighbourhoods N_u (u included): N0 = N1 = {0,1,2}, N2 = {0,1,2,3},
# N3 = {2,3,5}, N4 = {4}, N5 = {3,5}; sizes 3, 3, 4, 3, 1, 2.
# Degrees 2, 2, 3, 2, 0, 1 -> n_avg = 10/6 = 5/3, so the default penalty
# λ_u = max(0, n_avg - |N_u|) is 0 for every protein with a neighbour.
EDGES = [(0, 1), (0, 2), (1, 2), (2, 3), (3, 5)]


def tiny_graph(weighted=False):
    A = np.zeros((6, 6))
    for k, (i, j) in enumerate(EDGES):
        A[i, j] = A[j, i] = (k + 2.0) if weighted else 1.0
    return sp.csr_matrix(A)


def fs(c, size_u, size_v, lam_u=0, lam_v=0):
    """FS-weight from the formula with |N_u - N_v| + 2c = |N_u| + c."""
    return Fr(2 * c) / (size_u + c + lam_u) * Fr(2 * c) / (size_v + c + lam_v)


# --------------------------------------------------------------------------- FS-weights
def test_fs_weights_hand_computed_default_navg():
    S = fs_weights(tiny_graph()).toarray()
    expected = {
        (0, 1): Fr(1),          # N0 = N1, c = 3: (6/(3+3))^2 = 1
        (0, 2): Fr(6, 7),       # c = |{0,1,2}| = 3: (6/6)(6/(4+3))
        (1, 2): Fr(6, 7),       # same by symmetry of 0 and 1
        (2, 3): Fr(8, 15),      # c = |{2,3}| = 2: (4/(4+2))(4/(3+2)) = 2/3 * 4/5
        (0, 3): Fr(1, 4),       # level-2 pair, c = |{2}| = 1: (2/(3+1))^2
        (1, 3): Fr(1, 4),
        (3, 5): Fr(4, 5),       # c = |{3,5}| = 2: (4/(3+2))(4/(2+2))
        (2, 5): Fr(4, 15),      # level-2 pair, c = |{3}| = 1: (2/(4+1))(2/(2+1))
    }
    # Formula cross-check of the literal fractions above.
    assert expected[(2, 3)] == fs(2, 4, 3) and expected[(2, 5)] == fs(1, 4, 2)
    want = np.zeros((6, 6))
    for (i, j), v in expected.items():
        want[i, j] = want[j, i] = float(v)
    # Every other pair (0-5, 1-5: distance 3; anything with the isolated 4;
    # the diagonal) shares no neighbourhood member, so its weight is 0.
    # float64: integer counts, then two divisions and a product (<= 3 roundings of a
    # value <= 1) against float(Fraction) (1 rounding): <= 4 eps/2 ~ 4.4e-16 < 1e-15
    np.testing.assert_allclose(S, want, rtol=0, atol=1e-15)


def test_fs_weights_lambda_penalty_with_given_navg():
    # n_avg = 3.5: λ = max(0, 3.5 - |N_u|) = 0.5, 0.5, 0, 0.5, 2.5, 1.5.
    S = fs_weights(tiny_graph(), n_avg=3.5).toarray()
    h = Fr(1, 2)
    # a few float64 operations against exact fractions: pytest.approx's default rel 1e-6
    # (and 1e-15 below) only absorb their rounding
    assert S[0, 1] == pytest.approx(float(fs(3, 3, 3, h, h)))            # (6/6.5)^2 = (12/13)^2
    assert S[0, 1] == pytest.approx((12 / 13) ** 2)
    assert S[3, 5] == pytest.approx(float(fs(2, 3, 2, h, Fr(3, 2))))     # (4/5.5)(4/5.5) = 64/121
    assert S[3, 5] == pytest.approx(64 / 121)
    assert S[0, 2] == pytest.approx(float(fs(3, 3, 4, h, 0)))            # (6/6.5)(6/7)
    # A larger n_avg only ever lowers the weights (λ grows in both denominators).
    assert np.all(S <= fs_weights(tiny_graph()).toarray() + 1e-15)


def test_fs_weights_ignore_edge_weights_and_self_loops():
    A = tiny_graph(weighted=True).tolil()
    A[4, 4] = 7.0
    np.testing.assert_allclose(fs_weights(A.tocsr()).toarray(), fs_weights(tiny_graph()).toarray())


def _random_graph(n, p, rng):
    U = np.triu(rng.random((n, n)) < p, 1)
    return sp.csr_matrix((U | U.T).astype(float))


def test_fs_weights_match_set_based_reference():
    """Brute force with Python sets, straight from the formula, on a random graph."""
    rng = np.random.default_rng(3)
    A = _random_graph(40, 0.08, rng)
    D = A.toarray() > 0
    n = D.shape[0]
    N = [set(np.flatnonzero(D[u])) | {u} for u in range(n)]
    n_avg = D.sum() / n
    want = np.zeros((n, n))
    for u in range(n):
        for v in range(n):
            if u == v:
                continue
            both = len(N[u] & N[v])
            lam_uv = max(0.0, n_avg - (len(N[u] - N[v]) + both))
            lam_vu = max(0.0, n_avg - (len(N[v] - N[u]) + both))
            want[u, v] = (2 * both / (len(N[u] - N[v]) + 2 * both + lam_uv)
                          * 2 * both / (len(N[v] - N[u]) + 2 * both + lam_vu))
    S = fs_weights(A)
    # the same formula, vectorised vs Python loops: a few roundings of values <= 1
    np.testing.assert_allclose(S.toarray(), want, atol=1e-14)
    # Non-zero exactly on level-1 and level-2 pairs.
    reach2 = (D.astype(int) + D.astype(int) @ D.astype(int)) > 0
    np.fill_diagonal(reach2, False)
    np.testing.assert_array_equal(S.toarray() > 0, reach2)


# --------------------------------------------------------------------------- Neighbor Counting
TRAIN = np.array([0, 1, 3, 4])
TEST = np.array([2, 5])
Y1 = np.array([1, -1, 1, 1])          # task 1 for proteins 0, 1, 3, 4
Y2 = np.array([-1, 1, -1, 1])         # task 2


def test_neighbor_counting_hand_computed():
    A = tiny_graph()
    # Protein 2: annotated neighbours {0, 1, 3}; positives for task 1: {0, 3} -> 2.
    # Protein 5: annotated neighbour {3}, positive -> 1. (4 is positive but not adjacent.)
    np.testing.assert_array_equal(neighbor_counting(A, Y1, TRAIN, TEST), [2.0, 1.0])
    # Task 2: protein 2 has positive neighbour 1 only; protein 5 has none.
    Y = np.column_stack([Y1, Y2])
    np.testing.assert_array_equal(neighbor_counting(A, Y, TRAIN, TEST), [[2, 1], [1, 0]])
    # Fractions of annotated neighbours: 2/3 and 1/1 (task 1); 1/3 and 0 (task 2).
    np.testing.assert_allclose(neighbor_counting(A, Y, TRAIN, TEST, fraction=True),
                               [[2 / 3, 1 / 3], [1, 0]])
    # {0, 1} labels mean the same as {-1, +1}; edge weights are ignored.
    np.testing.assert_array_equal(neighbor_counting(tiny_graph(True), (Y1 > 0).astype(int), TRAIN,
                                                    TEST), [2.0, 1.0])


# --------------------------------------------------------------------------- FS-Weighted Averaging
def test_fs_weighted_averaging_hand_computed():
    A = tiny_graph()
    # π = 3/4 (three of the four training proteins are positive), λ_r = 1.
    # Protein 2, level 1 (annotated neighbours 0, 1, 3):
    #   S(2,0) = 6/7 (+), S(2,1) = 6/7 (-), S(2,3) = 8/15 (+)
    #   positive weight 6/7 + 8/15 = 146/105, total 12/7 + 8/15 = 236/105.
    # Level 2, paths 2-v-w ending at an annotated w != 2:
    #   2-0-1: S(2,0) S(0,1) = 6/7 (-);  2-1-0: 6/7 (+);  2-3-5: 5 is a test protein.
    #   positive 6/7 = 90/105, total 12/7 = 180/105.
    # f = (3/4 + 146/105 + 90/105) / (1 + 236/105 + 180/105) = 1259/2084.
    f2 = (Fr(3, 4) + Fr(146, 105) + Fr(90, 105)) / (1 + Fr(236, 105) + Fr(180, 105))
    assert f2 == Fr(1259, 2084)
    # Protein 5: level 1 only protein 3 (+), S = 4/5; its 2-step paths end at 2 (test) or 5 itself.
    f5 = (Fr(3, 4) + Fr(4, 5)) / (1 + Fr(4, 5))
    assert f5 == Fr(31, 36)
    # sums of a handful of products of weights <= 1 (~10 roundings) against exact fractions
    np.testing.assert_allclose(fs_weighted_averaging(A, Y1, TRAIN, TEST), [float(f2), float(f5)],
                               rtol=1e-13)
    # Level-1 only ("none") and direct level-2 weights ("direct") coincide here: the only
    # level-2 neighbour of 2 is 5, and of 5 is 2, both unannotated.
    f2_level1 = (Fr(3, 4) + Fr(146, 105)) / (1 + Fr(236, 105))
    for mode in ("none", "direct"):
        np.testing.assert_allclose(fs_weighted_averaging(A, Y1, TRAIN, TEST, level2=mode),
                                   [float(f2_level1), float(f5)], rtol=1e-13)


def test_fs_weighted_averaging_prior_for_unreachable_protein_and_lambda_zero():
    A = tiny_graph()
    train, test = np.array([0, 1, 3]), np.array([4, 2])
    y = np.array([1, -1, -1])
    # Isolated protein 4 has no evidence: its score is the prior π = 1/3, for any λ_r.
    for lam in (0.0, 0.3, 1.0):
        s = fs_weighted_averaging(A, y, train, test, lambda_r=lam)
        assert s[0] == pytest.approx(1 / 3)
    # With λ_r = 0 the score is the pure weighted average of annotations:
    # protein 2 level 1: (6/7)/(12/7 + 8/15); level 2: 2-1-0 (+) 6/7, 2-0-1 (-) 6/7.
    s = fs_weighted_averaging(A, y, train, test, lambda_r=0.0)
    want = (Fr(6, 7) + Fr(6, 7)) / (Fr(12, 7) + Fr(8, 15) + Fr(12, 7))
    assert s[1] == pytest.approx(float(want))


def _fs_avg_reference(A, y, train, test, lambda_r):
    """Loop implementation of the FS-Weighted Averaging formula ("path" level 2)."""
    S = fs_weights(A).toarray()
    D = A.toarray() > 0
    lab = {int(p): float(v > 0) for p, v in zip(train, y)}
    pi = np.mean(list(lab.values()))
    out = []
    for u in test:
        num, Z = lambda_r * pi, lambda_r
        for v in np.flatnonzero(D[u]):
            if v in lab:
                num += S[u, v] * lab[v]
                Z += S[u, v]
            for w in np.flatnonzero(D[v]):
                if w in lab:
                    num += S[u, v] * S[v, w] * lab[w]
                    Z += S[u, v] * S[v, w]
        out.append(num / Z)
    return np.array(out)


def test_fs_weighted_averaging_matches_loop_reference_and_multitask():
    rng = np.random.default_rng(7)
    A = _random_graph(60, 0.06, rng)
    perm = rng.permutation(60)
    train, test = perm[:35], perm[35:]
    Y = np.where(rng.random((35, 3)) < 0.4, 1, -1)
    got = fs_weighted_averaging(A, Y, train, test, lambda_r=0.7)
    assert got.shape == (25, 3)
    for k in range(3):
        # sparse products vs loops over paths: the same positive terms summed in another
        # order (<= ~100 terms: ~100 eps relative)
        np.testing.assert_allclose(got[:, k], _fs_avg_reference(A, Y[:, k], train, test, 0.7),
                                   rtol=1e-12)
        # Multi-task columns equal single-task calls, also with precomputed weights.
        np.testing.assert_allclose(got[:, k], fs_weighted_averaging(A, Y[:, k], train, test,
                                                                    lambda_r=0.7,
                                                                    weights=fs_weights(A)))
    assert np.all((got >= 0) & (got <= 1))


# --------------------------------------------------------------------------- planted modules
def planted_modules(seed, n=300, sizes=(40, 30), p_in=0.25, p_out=0.01, train_frac=0.6):
    """Stochastic block graph: dense modules in a sparse background; task k = module k."""
    rng = np.random.default_rng(seed)
    member = np.full(n, -1)
    start = 0
    for k, s in enumerate(sizes):
        member[start:start + s] = k
        start += s
    same = (member[:, None] == member[None, :]) & (member[:, None] >= 0)
    P = np.where(same, p_in, p_out)
    U = np.triu(rng.random((n, n)) < P, 1)
    A = sp.csr_matrix((U | U.T).astype(float))
    Y = np.where(member[:, None] == np.arange(len(sizes))[None, :], 1, -1)
    perm = rng.permutation(n)
    ntr = int(train_frac * n)
    return A, Y, perm[:ntr], perm[ntr:]


@pytest.mark.parametrize("seed", [0, 1, 2])
def test_planted_modules_rank_members_first(seed):
    A, Y, train, test = planted_modules(seed)
    nc = neighbor_counting(A, Y[train], train, test)
    fsa = fs_weighted_averaging(A, Y[train], train, test)
    for k in range(Y.shape[1]):
        # Why 0.85: a test member of a module of size s has ~Bin(0.6 (s-1), 0.25) positive
        # annotated neighbours (mean 4.4-5.9, P(0) <= 0.75^17 ~ 0.008), a non-member
        # ~Bin(0.6 s, 0.01) (mean <= 0.24, P(0) >= 0.78). The AUC is
        # P(member > non-member) + P(tie)/2 >= P(member >= 2) * P(non-member <= 1) ~ 0.95;
        # 0.85 leaves room for the sampling noise of ~30 test members.
        assert roc_auc_score(Y[test, k], nc[:, k]) > 0.85
        # FS-weights add the module's shared neighbourhoods (level-2 paths stay inside a
        # dense module), so the same bound holds.
        assert roc_auc_score(Y[test, k], fsa[:, k]) > 0.85


# --------------------------------------------------------------------------- bad input
@pytest.mark.parametrize("func", [neighbor_counting, fs_weighted_averaging])
def test_bad_inputs_raise_clear_errors(func):
    A = tiny_graph()
    asym = A.tolil()
    asym[0, 5] = 1.0
    with pytest.raises(ValueError, match="symmetric"):
        func(asym.tocsr(), Y1, TRAIN, TEST)
    neg = A.toarray()
    neg[0, 1] = neg[1, 0] = -1.0
    with pytest.raises(ValueError, match="non-negative"):
        func(neg, Y1, TRAIN, TEST)
    with pytest.raises(ValueError, match="square"):
        func(np.ones((6, 5)), Y1, TRAIN, TEST)
    with pytest.raises(ValueError, match="misaligned"):
        func(A, Y1[:3], TRAIN, TEST)
    with pytest.raises(ValueError, match="misaligned"):
        func(A, np.ones((5, 2)), TRAIN, TEST)
    with pytest.raises(ValueError, match="overlap"):
        func(A, Y1, TRAIN, np.array([2, 3]))
    with pytest.raises(ValueError, match=r"\[0, 5\]"):
        func(A, Y1, TRAIN, np.array([2, 6]))
    with pytest.raises(ValueError, match="integer"):
        func(A, Y1, TRAIN.astype(float), TEST)
    with pytest.raises(ValueError, match="repeated"):
        func(A, Y1, np.array([0, 0, 3, 4]), TEST)
    with pytest.raises(ValueError, match="labels must be"):
        func(A, np.array([1, 2, 1, 1]), TRAIN, TEST)
    with pytest.raises(ValueError, match="labels must be"):
        func(A, np.array([1, 0, -1, 1]), TRAIN, TEST)


def test_fs_parameter_errors():
    A = tiny_graph()
    with pytest.raises(ValueError, match="n_avg"):
        fs_weights(A, n_avg=-1)
    with pytest.raises(ValueError, match="lambda_r"):
        fs_weighted_averaging(A, Y1, TRAIN, TEST, lambda_r=-0.5)
    with pytest.raises(ValueError, match="level2"):
        fs_weighted_averaging(A, Y1, TRAIN, TEST, level2="three")
    with pytest.raises(ValueError, match="weights"):
        fs_weighted_averaging(A, Y1, TRAIN, TEST, weights=sp.eye(5))
