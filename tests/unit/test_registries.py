"""The registries at the extension points: each one's names are exactly the
config schema's enum of the key that selects them, an unknown name is an
InputError naming the known ones, and each registered entry works when
reached through its registry (biokernels.registry)."""

from __future__ import annotations

import re
from pathlib import Path

import numpy as np
import pytest
import yaml
from sklearn.svm import SVC

from biokernels.errors import InputError
from biokernels.io.cohorts import COHORT_READERS
from biokernels.io.labels import LABEL_READERS
from biokernels.io.networks import NETWORK_READERS
from biokernels.registry import settings_of
from biokernels.solvers.mkl import MKL_METHODS, make_mkl
from biokernels.studies.diffusion import protocol as diffusion
from biokernels.studies.diffusion.data import NETWORK_SOURCES, prepare_inputs
from biokernels.studies.pimkl import protocol as pimkl

SCHEMA = Path(__file__).resolve().parents[2] / "workflow" / "schemas" / "config.schema.yaml"


# --- the schema, walked generically ($ref into $defs, allOf/anyOf/oneOf, if/then/else) ---

def _deref(node, root):
    while isinstance(node, dict) and "$ref" in node:
        ref = node["$ref"]
        assert ref.startswith("#/"), f"only local $refs are expected, got {ref}"
        target = root
        for part in ref[2:].split("/"):
            target = target[part.replace("~1", "/").replace("~0", "~")]
        rest = {k: v for k, v in node.items() if k != "$ref"}
        node = {"allOf": [target, rest]} if rest else target
    return node


def _branches(node, root):
    """``node`` and every subschema that applies beside it (allOf / anyOf /
    oneOf members, if-then-else consequents), $refs resolved; not the
    ``if`` conditions themselves."""
    node = _deref(node, root)
    if not isinstance(node, dict):
        return []
    out = [node]
    for key in ("allOf", "anyOf", "oneOf"):
        for sub in node.get(key, []):
            out += _branches(sub, root)
    for key in ("then", "else"):
        if key in node:
            out += _branches(node[key], root)
    return out


def _children(node, step, root):
    out = []
    for b in _branches(node, root):
        if step == "*":       # any key of a mapping
            if isinstance(b.get("additionalProperties"), dict):
                out.append(b["additionalProperties"])
            out += list(b.get("patternProperties", {}).values())
        elif step == "[]":    # an item of an array
            if isinstance(b.get("items"), dict):
                out.append(b["items"])
        elif step in b.get("properties", {}):
            out.append(b["properties"][step])
    return out


def schema_enum(path: str) -> set:
    """The values the schema allows at a config key path such as
    ``pimkl.sources.*.cohorts.*.format`` (``*``: any key, ``[]``: an array
    item): the union of the ``enum`` and ``const`` values of every subschema
    that applies there."""
    root = yaml.safe_load(SCHEMA.read_text())
    nodes = [root]
    for step in path.split("."):
        nodes = [c for n in nodes for c in _children(n, step, root)]
        assert nodes, f"{path}: no schema at {step!r}"
    values, found = set(), False
    for n in nodes:
        for b in _branches(n, root):
            if "enum" in b:
                values |= set(b["enum"])
                found = True
            if "const" in b:
                values.add(b["const"])
    assert found, f"{path}: the schema has no enum there"
    return values


# --- each registry against its schema enum ---------------------------------

@pytest.mark.parametrize("path, registry", [
    ("mkl_transfer.methods.[]", MKL_METHODS),
    ("pimkl.sources.*.cohorts.*.format", COHORT_READERS),
    ("pimkl.sources.*.network.format", NETWORK_READERS),
    ("diffusion.sources.*.label_format", LABEL_READERS),
    ("diffusion.classifier", diffusion.CLASSIFIERS),
    ("pimkl.classifier", pimkl.CLASSIFIERS),       # names only (komd has EasyMKL's own path)
])
def test_schema_enum_is_the_registry(path, registry):
    assert schema_enum(path) == set(registry)


def test_diffusion_source_types_are_synthetic_and_network_readers():
    # a source type is the generator or a network file read by a registered reader
    assert schema_enum("diffusion.sources.*.type") == {"synthetic", *NETWORK_SOURCES}
    # one name per format (issue #28): a source type is the registry's name of the format reading it
    assert set(NETWORK_SOURCES) <= set(NETWORK_READERS)
    assert all(path_key.endswith("_path") for path_key in NETWORK_SOURCES.values())


def test_schema_settings_are_the_factories_arguments():
    """Every classifier setting the schema allows is an argument of the
    classifier's factory, and every ``<method>_<arg>`` of the MKL learners is
    an argument of that method's class (make_mkl would refuse it otherwise)."""
    root = yaml.safe_load(SCHEMA.read_text())
    settings = [c for n in _children(root, "diffusion", root) for c in _children(n, "classifier_settings", root)]
    for name, factory in diffusion.CLASSIFIERS.items():
        keys = {k for n in settings for c in _children(n, name, root) for b in _branches(c, root)
                for k in b.get("properties", {})}
        assert keys <= set(settings_of(factory)[1:]), name
    learners = [c for n in _children(root, "mkl_transfer", root) for c in _children(n, "learners", root)]
    keys = {k for n in learners for b in _branches(n, root) for k in b.get("properties", {})}
    prefixes = {m.lower() + "_": m for m in MKL_METHODS}
    method_keys = [k for k in keys if any(k.startswith(p) for p in prefixes)]
    assert method_keys  # easymkl_lam, pwmk_delta, pwmk_cv
    for k in method_keys:
        method = next(m for p, m in prefixes.items() if k.startswith(p))
        make_mkl(method, {k: 0.5 if "lam" in k or "delta" in k else 3})


# --- unknown names -------------------------------------------------------------

def _names_all(err, registry):
    return all(repr(k) in str(err.value) for k in registry)


def test_unknown_names_list_the_known_ones(tmp_path):
    with pytest.raises(InputError, match="unknown MKL method 'MKLpy'") as err:
        make_mkl("MKLpy")
    assert _names_all(err, MKL_METHODS)
    with pytest.raises(InputError, match=r"cohort 'c1': format: unknown 'csv'") as err:
        pimkl.load_cohort({"format": "csv", "path": "x.csv"}, name="c1")
    assert _names_all(err, COHORT_READERS)
    with pytest.raises(InputError, match="network format: unknown 'graphml'") as err:
        pimkl.load_network({"format": "graphml", "path": "x.graphml"})
    assert _names_all(err, NETWORK_READERS)
    with pytest.raises(InputError, match="diffusion.classifier: unknown 'rf'") as err:
        diffusion.make_classifier("rf")
    assert _names_all(err, diffusion.CLASSIFIERS)
    paths = _mips_files(tmp_path)
    src = {"paper_dataset": "ligand", "type": "edgelist", "network_path": _edge_file(tmp_path),
           "min_annotated": 2, **paths}
    with pytest.raises(InputError, match="label_format: unknown 'go'") as err:
        prepare_inputs({**src, "label_format": "go"}, 1 / 3, np.random.default_rng(0))
    assert _names_all(err, LABEL_READERS)
    with pytest.raises(InputError, match="unknown 'sif'") as err:
        prepare_inputs({**src, "type": "sif"}, 1 / 3, np.random.default_rng(0))
    assert _names_all(err, NETWORK_SOURCES)


def test_unknown_settings_name_the_field_and_the_accepted_ones(tmp_path):
    with pytest.raises(InputError, match=r"learners: \['easymkl_gamma'\].*easymkl_lam"):
        make_mkl("EasyMKL", {"easymkl_gamma": 1.0})
    with pytest.raises(InputError, match=r"classifier_settings.svm: \['kernel'\].*class_weight"):
        diffusion.make_classifier("svm", {"kernel": "rbf"})
    with pytest.raises(InputError, match=r"cohort 'c1': \['arff_path'\] are not settings"):
        pimkl.load_cohort({"format": "tsv", "arff_path": "x", "expression_path": "e", "labels_path": "l"},
                          name="c1")
    with pytest.raises(InputError, match=r"network \(gem\): missing setting\(s\) \['currency_metabolites'\]"):
        pimkl.load_network({"format": "gem", "path": tmp_path / "gem.tsv"})


# --- each entry works through its registry --------------------------------

def _kernels(n=40, seed=0):
    rng = np.random.default_rng(seed)
    X = rng.normal(size=(n, 4))
    y = np.where(X[:, 0] > 0, 1, 0)
    return [X @ X.T, np.exp(-((X[:, None] - X[None]) ** 2).sum(-1) / 4), X[:, 1:] @ X[:, 1:].T], y


@pytest.mark.parametrize("method", sorted(MKL_METHODS))
def test_mkl_methods_fit_with_their_settings(method):
    Ks, y = _kernels()
    settings = {"easymkl_lam": 0.3, "pwmk_delta": 0.5, "pwmk_cv": 2, "svc_C": 5.0, "komd_lam": 0.2}
    model = make_mkl(method, settings, psd_tol=None)
    # only the method's own prefixed settings reach it, under their argument names
    own = {k.split("_", 1)[1]: v for k, v in settings.items() if k.startswith(method.lower() + "_")}
    assert {k: getattr(model, k) for k in own} == own and model.psd_tol is None
    w = model.fit(Ks, y).weights_
    # every method's weights are non-negative, one per kernel, of unit weight_norm (CKA: L2, others sum 1)
    assert w.shape == (3,) and (w >= 0).all()
    assert np.isclose(np.linalg.norm(w) if model.weight_norm == "l2" else w.sum(), 1.0)


def test_classifier_svm_with_solver_libsvm_is_the_papers_svc():
    """``solver: libsvm`` is LIBSVM's C-SVC as before the registry: the same
    inputs to the same SVC call give the same bits. The default ``smo``
    solver of the same problem is checked against it in
    tests/unit/solvers/test_svm_smo.py."""
    Ks, y = _kernels(60)
    K = Ks[1]
    tr, te = np.arange(40), np.arange(40, 60)
    Y = np.column_stack([y, 1 - y])
    got = diffusion.task_scores(K[np.ix_(tr, tr)], K[np.ix_(te, tr)], Y[tr], 10.0,
                                diffusion.make_classifier("svm", {"class_weight": None, "solver": "libsvm"}))
    want = [SVC(kernel="precomputed", C=10.0).fit(K[np.ix_(tr, tr)], Y[tr, k]).decision_function(K[np.ix_(te, tr)])
            for k in range(2)]
    np.testing.assert_array_equal(got, np.column_stack(want))
    bal = diffusion.task_scores(K[np.ix_(tr, tr)], K[np.ix_(te, tr)], Y[tr], 10.0,
                                diffusion.classifier_of({"classifier": "svm", "classifier_settings": {
                                    "svm": {"class_weight": "balanced", "solver": "libsvm"}}}))
    want = SVC(kernel="precomputed", C=10.0, class_weight="balanced").fit(K[np.ix_(tr, tr)], Y[tr, 0])
    np.testing.assert_array_equal(bal[:, 0], want.decision_function(K[np.ix_(te, tr)]))
    # the default (no settings) is the smo solver
    assert isinstance(diffusion.make_classifier("svm")(1.0), diffusion.SMOSVC)


def _write(path: Path, text: str) -> str:
    path.write_text(text)
    return str(path)


def test_cohort_readers(tmp_path):
    # tsv: expression + labels + CNA (rows reordered to the expression's)
    tsv = COHORT_READERS["tsv"](
        expression_path=_write(tmp_path / "e.tsv", "sample_id\tG1\tG2\ns1\t1\t2\ns2\t3\t4\ns3\t5\t6\n"),
        labels_path=_write(tmp_path / "l.tsv", "sample_id\tlabel\ns1\t1\ns2\t0\ns3\t1\n"),
        cna_path=_write(tmp_path / "c.tsv", "sample_id\tG1\ns3\t-1\ns1\t1\ns2\t0\n"), collapse="mean", name="a")
    X, y, counts = tsv
    assert y.tolist() == [1, 0, 1] and not counts["has_probes"]
    assert counts["cna"]["G1"].tolist() == [1.0, 0.0, -1.0]

    # The five-year label (horizon 1826 days): relapse at 1000 -> 1; follow-up
    # beyond 1826 -> 0; censored at 500 -> unknown, excluded.
    ann = _write(tmp_path / "ann.tsv", "probe\tHUGO.gene.symbol\n100_at\tGA\n200_at\tGA\n300_at\tGB\n")
    X, y, counts = COHORT_READERS["vdxs"](
        expression_path=_write(tmp_path / "vx.tsv", "id\t100_at\t200_at\t300_at\n"
                               "p1\t1\t2\t7\np2\t3\t1\t8\np3\t2\t2\t9\np4\t4\t0.5\t6\np5\t9\t9\t9\n"),
        annotation_path=ann,
        clinical_path=_write(tmp_path / "vc.tsv", "id\tseries\tt.rfs\te.rfs\n"
                             "p1\tVDX\t3000\t0\np2\tVDX\t1000\t1\np3\tVDX\t500\t0\np4\tVDX\t2500\t1\np5\tVDXN\t100\t1\n"),
        collapse="max_mean", name="v")
    # p5 is another series (VDXN), p3 censored before 5 years; GA keeps the
    # probe of larger mean over p1, p2, p4: 100_at (8/3 against 3.5/3)
    assert list(X.index) == ["p1", "p2", "p4"] and y.tolist() == [0, 1, 0]
    assert X["GA"].tolist() == [1.0, 3.0, 4.0] and counts["has_probes"] and counts["series_dropped"] == 1

    arff = _write(tmp_path / "c.arff", "@relation t\n@attribute t.tdm numeric\n@attribute e.tdm {0,1}\n"
                  "@attribute X100_at numeric\n@attribute X200_at numeric\n@data\n"
                  "3000,0,1,2\n1000,1,3,1\n500,0,2,2\n2500,1,4,0.5\n")
    X, y, counts = COHORT_READERS["arff"](arff_path=arff, annotation_path=ann, collapse="max_mean", name="g")
    assert list(X.index) == ["GSE7390_0001", "GSE7390_0002", "GSE7390_0004"] and y.tolist() == [0, 1, 0]
    assert list(X.columns) == ["GA"] and X["GA"].tolist() == [1.0, 3.0, 4.0] and counts["has_probes"]
    X, _, counts = COHORT_READERS["arff"](arff_path=arff, collapse="max_mean", name="g")
    assert list(X.columns) == ["100_at", "200_at"] and not counts["has_probes"]


def test_network_readers(tmp_path):
    """Every format gives the same edge table: one row per unordered pair,
    protein_a < protein_b, a float weight."""
    def pairs(edges):
        return {(a, b): w for a, b, w in edges[["protein_a", "protein_b", "weight"]].itertuples(index=False)}

    edges, _ = pimkl.load_network({"format": "edgelist", "path": _write(
        tmp_path / "e.tsv", "protein_a\tprotein_b\tweight\nB\tA\t2\nA\tB\t3\nC\tC\t1\nC\tB\t0.5\n")})
    # pimkl reads the weight column (its default); duplicates keep the largest, self-loops go
    assert pairs(edges) == {("A", "B"): 3.0, ("B", "C"): 0.5}
    edges, _ = NETWORK_READERS["edgelist"](tmp_path / "e.tsv")
    assert pairs(edges) == {("A", "B"): 1.0, ("B", "C"): 1.0}     # the reader's own default: unweighted

    sif = _write(tmp_path / "n.sif", "B\tin-complex-with\tA\nC\tcontrols-state-change-of\tB\n")
    edges, _ = pimkl.load_network({"format": "sif", "path": sif, "interaction_types": ["in-complex-with"]})
    assert pairs(edges) == {("A", "B"): 1.0}

    string = _write(tmp_path / "s.tsv", "symbol_a\tsymbol_b\tcombined_score\nA\tB\t800\nB\tC\t300\n")
    edges, counts = pimkl.load_network({"format": "string", "path": string, "score_threshold": 700})
    assert pairs(edges) == {("A", "B"): 0.8} and counts["below_threshold"] == 1   # weight = score / 1000

    # G1 and G2 share metabolite B; ATP/ADP are currency, so G3 links to nobody
    gem = _write(tmp_path / "gem.tsv", "Formula\tGene-reaction association\n"
                 "A[c] + ATP[c] => B[c] + ADP[c]\tG1\nB[c] => C[c]\tG2\nD[c] + ATP[c] => E[c] + ADP[c]\tG3\n")
    edges, counts = pimkl.load_network({"format": "gem", "path": gem, "currency_metabolites": ["ATP", "ADP"]})
    assert pairs(edges) == {("G1", "G2"): 1.0} and counts["reactions"] == 3


def _edge_file(tmp_path):
    return _write(tmp_path / "net.tsv", "protein_a\tprotein_b\n" + "".join(
        f"p{i}\tp{i + 1}\n" for i in range(1, 9)))


def _mips_files(tmp_path):
    return {"mips_genes_path": _write(tmp_path / "genes.txt", "".join(f"p{i}\n" for i in range(1, 11))),
            "mips_terms_path": _write(tmp_path / "terms.txt", "01\n02\n"),
            "mips_adjacency_path": _write(tmp_path / "adj.txt", "1\t1\n2\t1\n3\t1\n4\t2\n10\t2\n")}


def test_label_reader_through_a_real_source(tmp_path):
    paths = _mips_files(tmp_path)
    Y = LABEL_READERS["mips_funcat"](**paths)
    assert Y.shape == (10, 2) and Y["01"].sum() == 3 and Y["02"].sum() == 2
    src = {"paper_dataset": "ligand", "type": "edgelist", "network_path": _edge_file(tmp_path),
           "min_annotated": 2, **paths}
    edges, labels, given, summary = prepare_inputs(src, 1 / 3, np.random.default_rng(0))
    # the network holds p1..p9: function 02 keeps only p4 (p10 is not in it), below min_annotated 2
    assert list(labels.columns) == ["01"] and labels["01"].sum() == 3 and len(labels) == 9
    assert summary["labels"]["annotated_not_in_network"] == 1 and len(edges) == 8
    assert (prepare_inputs({**src, "label_format": "mips_funcat"}, 1 / 3, np.random.default_rng(0))[1]
            .equals(labels))


def test_registry_names_are_config_words():
    # names the config can write as plain YAML scalars (no spaces or punctuation)
    for registry in (MKL_METHODS, COHORT_READERS, NETWORK_READERS, LABEL_READERS, diffusion.CLASSIFIERS,
                     NETWORK_SOURCES):
        assert all(re.fullmatch(r"[A-Za-z][A-Za-z0-9_]*", k) for k in registry)
