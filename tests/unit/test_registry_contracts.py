"""The contract every entry of the library's other registries keeps.

In the style of tests/unit/solvers/test_mkl_contract.py (MKLpy's base-class
checks): parametrized over the registries themselves, so a new entry is
checked as soon as its line is in the registry.

Readers -- :data:`biokernels.io.networks.NETWORK_READERS`,
:data:`biokernels.io.labels.LABEL_READERS`,
:data:`biokernels.io.cohorts.COHORT_READERS`:

* a missing file and an empty file, for each file the format reads, raise
  :class:`~biokernels.errors.InputError` naming that file's path;
* a minimal valid file in the format reads to the registry's documented
  shape and columns, with the values written.

The one thing a new reader needs here is its minimal valid file(s): a
writer in :data:`MINIMAL_FILES`. A registered format without one fails
:func:`test_every_registered_format_has_a_minimal_file` saying so.

Classifiers -- :data:`biokernels.studies.diffusion.protocol.CLASSIFIERS`
(factories ``(C, **settings) -> estimator``): an unfitted estimator, whose
``C`` round-trips (the attribute, ``get_params``, ``set_params``,
``clone``); ``fit`` on a tiny precomputed kernel returns the estimator;
``decision_function`` on the (n_test, n_train) kernel gives one finite value
per test row, larger for class 1; ``decision_function`` before ``fit``
raises NotFittedError.
"""

from __future__ import annotations

import inspect
import tempfile
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import pytest
from sklearn.base import clone
from sklearn.exceptions import NotFittedError

from biokernels.errors import InputError
from biokernels.io.cohorts import COHORT_READERS
from biokernels.io.labels import LABEL_READERS
from biokernels.io.networks import NETWORK_READERS
from biokernels.studies.diffusion.protocol import CLASSIFIERS
from fakes.biogrid import TAB3_COLUMNS
from fakes.geo import write_full_table, write_series_matrix
from fakes.go import gaf_line

READERS = {"network": NETWORK_READERS, "label": LABEL_READERS, "cohort": COHORT_READERS}
WHERE = {"network": "biokernels.io.networks.NETWORK_READERS", "label": "biokernels.io.labels.LABEL_READERS",
         "cohort": "biokernels.io.cohorts.COHORT_READERS"}


@dataclass
class Minimal:
    """A minimal valid input of one format: the reader's file arguments
    (parameter name -> the written file), its other arguments, and what it
    must read to (``expected``: per registry, see the ``_check_*`` below)."""

    files: dict[str, Path]
    settings: dict = field(default_factory=dict)
    expected: dict = field(default_factory=dict)


def _write(path: Path, text: str) -> Path:
    path.write_text(text)
    return path


# --- minimal valid files, one writer per registered format --------------------
# Each writer takes a fresh folder and returns a Minimal. Networks: ``expected``
# is {"pairs": {(protein_a, protein_b): weight}}; labels: {"labels": DataFrame}
# (0/1, proteins x functions, in any row/column order); cohorts: {"X": DataFrame
# samples x genes, "y": list of 0/1, "has_probes": bool}.

def _edgelist(d: Path) -> Minimal:
    # both orientations of A-B (merged) and a self-loop (dropped); unweighted: weight 1
    return Minimal({"path": _write(d / "net.tsv", "protein_a\tprotein_b\nB\tA\nA\tB\nC\tB\nC\tC\n")},
                   expected={"pairs": {("A", "B"): 1.0, ("B", "C"): 1.0}})


def _gem(d: Path) -> Minimal:
    # G1 and G2 share metabolite B; ATP/ADP are currency, so G3 links to nobody
    text = ("Formula\tGene-reaction association\n"
            "A[c] + ATP[c] => B[c] + ADP[c]\tG1\nB[c] => C[c]\tG2\nD[c] + ATP[c] => E[c] + ADP[c]\tG3\n")
    return Minimal({"path": _write(d / "gem.tsv", text)}, {"currency_metabolites": ["ATP", "ADP"]},
                   {"pairs": {("G1", "G2"): 1.0}})


def _sif(d: Path) -> Minimal:
    return Minimal({"path": _write(d / "net.sif", "B\tin-complex-with\tA\nC\tcontrols-state-change-of\tB\n")},
                   expected={"pairs": {("A", "B"): 1.0, ("B", "C"): 1.0}})


def _string(d: Path) -> Minimal:
    # weight = combined score / 1000
    text = "symbol_a\tsymbol_b\tcombined_score\nA\tB\t800\nB\tC\t300\n"
    return Minimal({"path": _write(d / "string.tsv", text)}, expected={"pairs": {("A", "B"): 0.8, ("B", "C"): 0.3}})


def _biogrid(d: Path) -> Minimal:
    def row(n, a, b, system_type="physical"):
        v = dict.fromkeys(TAB3_COLUMNS, "-")
        v.update({"#BioGRID Interaction ID": str(n), "Entrez Gene Interactor A": a, "Entrez Gene Interactor B": b,
                  "Experimental System Type": system_type, "Organism ID Interactor A": "9606",
                  "Organism ID Interactor B": "9606"})
        return "\t".join(v[c] for c in TAB3_COLUMNS)

    # the genetic row goes under the default system type (physical)
    text = "\n".join(["\t".join(TAB3_COLUMNS), row(1, "7157", "4193"), row(2, "4193", "1017"),
                      row(3, "7157", "1017", "genetic")]) + "\n"
    return Minimal({"path": _write(d / "BIOGRID-ORGANISM-Homo_sapiens-4.4.235.tab3.txt", text)},
                   expected={"pairs": {("4193", "7157"): 1.0, ("1017", "4193"): 1.0}})


def _mips_funcat(d: Path) -> Minimal:
    files = {"mips_genes_path": _write(d / "genes.txt", "YAL001C\nYAL002W\nYAL003W\n"),
             "mips_terms_path": _write(d / "terms.txt", "01\n02.01\n"),
             "mips_adjacency_path": _write(d / "adjacency.txt", "1\t1\n2\t1\n3\t2\n")}
    labels = pd.DataFrame({"01": [1, 1, 0], "02.01": [0, 0, 1]}, index=["YAL001C", "YAL002W", "YAL003W"])
    return Minimal(files, expected={"labels": labels})


_OBO = """format-version: 1.2
ontology: go

[Term]
id: GO:0008150
name: biological_process
namespace: biological_process

[Term]
id: GO:0000001
name: term a
namespace: biological_process
is_a: GO:0008150 ! biological_process
"""


def _gaf(d: Path) -> Minimal:
    # P1 on GO:0000001 (propagated to the root), P2 on the root; P3 only IEA (dropped by default)
    gaf = "\n".join(["!gaf-version: 2.2",
                     gaf_line("P1", "ONE", "involved_in", "GO:0000001", "IDA", "P", "Y1"),
                     gaf_line("P2", "TWO", "involved_in", "GO:0008150", "IMP", "P", "Y2"),
                     gaf_line("P3", "THREE", "involved_in", "GO:0000001", "IEA", "P", "Y3")]) + "\n"
    files = {"gaf_path": _write(d / "sgd.gaf", gaf), "obo_path": _write(d / "go-basic.obo", _OBO)}
    labels = pd.DataFrame({"GO:0000001": [1, 0], "GO:0008150": [1, 1]}, index=["P1", "P2"])
    return Minimal(files, {"proteins": ["P1", "P2", "P3"]}, {"labels": labels})


def _tsv(d: Path) -> Minimal:
    files = {"expression_path": _write(d / "e.tsv", "sample_id\tG1\tG2\ns1\t1\t2\ns2\t3\t4\ns3\t5\t6\n"),
             "labels_path": _write(d / "l.tsv", "sample_id\tlabel\ns1\t1\ns2\t0\ns3\t1\n")}
    X = pd.DataFrame({"G1": [1.0, 3.0, 5.0], "G2": [2.0, 4.0, 6.0]}, index=["s1", "s2", "s3"])
    return Minimal(files, expected={"X": X, "y": [1, 0, 1], "has_probes": False})


_ANNOTATION = "probe\tHUGO.gene.symbol\n100_at\tGA\n200_at\tGA\n300_at\tGB\n"


def _vdxs(d: Path) -> Minimal:
    # five-year relapse label: relapse at 1000 days -> 1; follow-up past 1826 -> 0; censored at 500 -> dropped
    files = {"expression_path": _write(d / "vx.tsv", "id\t100_at\t200_at\t300_at\n"
                                       "p1\t1\t2\t7\np2\t3\t1\t8\np3\t2\t2\t9\np4\t4\t0.5\t6\n"),
             "annotation_path": _write(d / "annotation.tsv", _ANNOTATION),
             "clinical_path": _write(d / "clinical.tsv", "id\tseries\tt.rfs\te.rfs\n"
                                     "p1\tVDX\t3000\t0\np2\tVDX\t1000\t1\np3\tVDX\t500\t0\np4\tVDX\t2500\t1\n")}
    # GA keeps the probe of larger mean over p1, p2, p4: 100_at (8/3 against 3.5/3)
    X = pd.DataFrame({"GA": [1.0, 3.0, 4.0], "GB": [7.0, 8.0, 6.0]}, index=["p1", "p2", "p4"])
    return Minimal(files, {"collapse": "max_mean"}, {"X": X, "y": [0, 1, 0], "has_probes": True})


def _arff(d: Path) -> Minimal:
    text = ("@relation t\n@attribute t.tdm numeric\n@attribute e.tdm {0,1}\n"
            "@attribute X100_at numeric\n@attribute X300_at numeric\n@data\n"
            "3000,0,1,2\n1000,1,3,1\n500,0,2,2\n2500,1,4,0.5\n")
    files = {"arff_path": _write(d / "gse7390.arff", text), "annotation_path": _write(d / "annotation.tsv",
                                                                                      _ANNOTATION)}
    X = pd.DataFrame({"GA": [1.0, 3.0, 4.0], "GB": [2.0, 1.0, 0.5]},
                     index=["GSE7390_0001", "GSE7390_0002", "GSE7390_0004"])
    return Minimal(files, {"collapse": "max_mean"}, {"X": X, "y": [0, 1, 0], "has_probes": True})


def _geo_series_matrix(d: Path) -> Minimal:
    samples = ["GSM1", "GSM2", "GSM3", "GSM4"]
    surv = [("3000", "0"), ("1000", "1"), ("500", "0"), ("2500", "1")]     # GSM3 censored before 5 years
    characteristics = [[f"t.rfs: {t}" for t, _ in surv], [f"e.rfs: {e}" for _, e in surv]]
    table = [("p1_at", ["2", "4", "8", "16"]), ("p2_at", ["1", "1", "1", "1"]), ("p3_at", ["8", "4", "2", "1"])]
    files = {"series_matrix_path": write_series_matrix(d / "GSE99999_series_matrix.txt", samples, characteristics,
                                                       table),
             "platform_path": write_full_table(d / "GPL96-tbl.txt", [("p1_at", "G1"), ("p2_at", "G1"),
                                                                     ("p3_at", "G2")])}
    # values taken as they are (log2: false); G1 keeps p1_at, of the larger mean
    X = pd.DataFrame({"G1": [2.0, 4.0, 16.0], "G2": [8.0, 4.0, 1.0]}, index=["GSM1", "GSM2", "GSM4"])
    return Minimal(files, {"time_key": "t.rfs", "event_key": "e.rfs", "log2": False, "collapse": "max_mean"},
                   {"X": X, "y": [0, 1, 0], "has_probes": True})


#: kind -> format -> writer of a minimal valid input: the one place a new
#: reader's test data goes.
MINIMAL_FILES: dict[str, dict[str, Callable[[Path], Minimal]]] = {
    "network": {"edgelist": _edgelist, "gem": _gem, "sif": _sif, "string": _string, "biogrid": _biogrid},
    "label": {"mips_funcat": _mips_funcat, "gaf": _gaf},
    "cohort": {"tsv": _tsv, "vdxs": _vdxs, "arff": _arff, "geo_series_matrix": _geo_series_matrix},
}

ENTRIES = [(kind, fmt) for kind, registry in READERS.items() for fmt in registry]


def _ids(entry):
    return f"{entry[0]}-{entry[1]}"


def _minimal(kind: str, fmt: str, folder: Path) -> Minimal:
    writer = MINIMAL_FILES.get(kind, {}).get(fmt)
    if writer is None:
        pytest.fail(f"{kind} format {fmt!r} is registered in {WHERE[kind]} but has no minimal valid file: add a "
                    f"writer to MINIMAL_FILES[{kind!r}][{fmt!r}] in {Path(__file__).name} (a function of a folder "
                    "returning Minimal(files, settings, expected))", pytrace=False)
    folder.mkdir(parents=True, exist_ok=True)
    return writer(folder)


def _read(kind: str, fmt: str, case: Minimal, **files):
    """The reader called as its caller calls it: networks ``reader(path,
    **settings)``, labels and cohorts with keyword arguments (cohorts with
    keyword-only ``name``)."""
    reader = READERS[kind][fmt]
    args = {**case.files, **files, **case.settings}
    if kind == "network":
        return reader(args.pop("path"), **args)
    if kind == "cohort":
        args.setdefault("name", "contract")
    return reader(**args)


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids)
def test_every_registered_format_has_a_minimal_file(entry, tmp_path):
    kind, fmt = entry
    case = _minimal(kind, fmt, tmp_path)
    assert case.files, f"{kind} {fmt}: the writer names no file"
    params = inspect.signature(READERS[kind][fmt]).parameters
    assert set(case.files) <= set(params), f"{kind} {fmt}: {sorted(set(case.files) - set(params))} are not " \
                                           "arguments of the reader"
    required = {p for p, v in params.items() if p.endswith("_path") and v.default is inspect.Parameter.empty}
    assert required <= set(case.files), f"{kind} {fmt}: the writer gives no {sorted(required - set(case.files))}"


def test_no_writer_outlives_its_format():
    stale = [(kind, fmt) for kind, writers in MINIMAL_FILES.items() for fmt in writers if fmt not in READERS[kind]]
    assert not stale, f"MINIMAL_FILES has writers of formats no registry has: {stale}"


def _file_cases():
    """(kind, format, file argument) for each file every format's minimal input reads."""
    out = []
    for kind, fmt in ENTRIES:
        has_writer = fmt in MINIMAL_FILES.get(kind, {})
        # without a writer, one case that fails as test_every_registered_format_has_a_minimal_file does
        out += [(kind, fmt, key) for key in (_file_keys(kind, fmt) if has_writer else ["<no writer>"])]
    return out


def _file_keys(kind: str, fmt: str) -> list[str]:
    with tempfile.TemporaryDirectory() as d:
        return sorted(MINIMAL_FILES[kind][fmt](Path(d)).files)


@pytest.mark.parametrize("kind, fmt, key", _file_cases(), ids=lambda v: str(v))
@pytest.mark.parametrize("damage", ["missing", "empty"])
def test_a_missing_or_empty_file_is_an_input_error_naming_it(kind, fmt, key, damage, tmp_path):
    case = _minimal(kind, fmt, tmp_path / "ok")
    bad = tmp_path / "bad" / f"{damage}_{case.files[key].name}"
    bad.parent.mkdir()
    if damage == "empty":
        bad.write_bytes(b"")
    with pytest.raises(InputError) as err:
        _read(kind, fmt, case, **{key: bad})
    assert str(bad) in str(err.value), f"{kind} {fmt}: the message does not name {key} {bad}: {err.value}"


@pytest.mark.parametrize("entry", ENTRIES, ids=_ids)
def test_a_minimal_file_reads_to_the_documented_shape(entry, tmp_path):
    kind, fmt = entry
    case = _minimal(kind, fmt, tmp_path)
    {"network": _check_network, "label": _check_labels, "cohort": _check_cohort}[kind](
        _read(kind, fmt, case), case.expected)


def _check_network(out, expected):
    """NETWORK_READERS: ``(edges, counts)``; edges has the columns protein_a,
    protein_b, weight, one row per unordered pair with protein_a < protein_b,
    no self-loop, float64 weights."""
    edges, counts = out
    assert isinstance(edges, pd.DataFrame) and list(edges.columns) == ["protein_a", "protein_b", "weight"]
    assert edges["weight"].dtype == np.float64 and (edges["weight"] >= 0).all()
    assert (edges["protein_a"] < edges["protein_b"]).all()
    assert not edges.duplicated(["protein_a", "protein_b"]).any()
    assert isinstance(counts, dict) and counts
    got = {(a, b): w for a, b, w in edges.itertuples(index=False)}
    assert got.keys() == expected["pairs"].keys()
    assert got == pytest.approx(expected["pairs"])


def _check_labels(out, expected):
    """LABEL_READERS: a 0/1 DataFrame (proteins x functions), or that and a counts dict."""
    if isinstance(out, tuple):
        out, counts = out
        assert isinstance(counts, dict)
    assert isinstance(out, pd.DataFrame)
    assert out.index.is_unique and out.columns.is_unique
    assert set(np.unique(out.to_numpy())) <= {0, 1}
    want = expected["labels"]
    got = out.loc[sorted(out.index), sorted(out.columns)]
    assert list(got.index) == sorted(want.index) and list(got.columns) == sorted(want.columns)
    np.testing.assert_array_equal(got.to_numpy(), want.loc[got.index, got.columns].to_numpy())


def _check_cohort(out, expected):
    """COHORT_READERS: ``(X, y, counts)``: X samples x genes float64, y
    int64 0/1 on X's index, counts with has_probes."""
    X, y, counts = out
    assert isinstance(X, pd.DataFrame) and (X.dtypes == np.float64).all()
    assert isinstance(y, pd.Series) and y.dtype == np.int64 and set(y) <= {0, 1}
    assert y.index.equals(X.index) and X.index.is_unique and X.columns.is_unique
    assert isinstance(counts, dict) and counts["has_probes"] is expected["has_probes"]
    want = expected["X"]
    assert list(X.index) == list(want.index) and sorted(X.columns) == sorted(want.columns)
    np.testing.assert_allclose(X[want.columns].to_numpy(), want.to_numpy())
    assert y.tolist() == expected["y"]


# --- classifiers ---------------------------------------------------------------------

#: Settings each classifier is also checked with, besides its defaults (an
#: unlisted classifier is checked with its defaults only).
CLASSIFIER_SETTINGS = {"svm": [{"solver": "libsvm"}, {"class_weight": "balanced"}]}
CLASSIFIER_CASES = [(name, s) for name in CLASSIFIERS for s in [{}, *CLASSIFIER_SETTINGS.get(name, [])]]


def _tiny_kernel():
    """A linear kernel of 1-D points: class 1 right of 0. (n_train, n_train), (n_test, n_train), labels 0/1."""
    x = np.array([-3.0, -2.0, -1.5, -1.0, 1.0, 1.5, 2.0, 3.0])
    xt = np.array([-2.5, -0.5, 0.5, 2.5])
    y = (x > 0).astype(int)
    return np.outer(x, x) + 1.0, np.outer(xt, x) + 1.0, y, xt


@pytest.fixture(params=CLASSIFIER_CASES, ids=lambda c: f"{c[0]}-{c[1] or 'defaults'}")
def classifier(request):
    name, settings = request.param
    return name, settings


def test_classifier_is_unfitted_and_its_C_round_trips(classifier):
    name, settings = classifier
    est = CLASSIFIERS[name](2.5, **settings)
    assert est.C == 2.5 and est.get_params()["C"] == 2.5
    assert clone(est).C == 2.5
    assert est.set_params(C=0.5) is est and est.C == 0.5 and est.get_params()["C"] == 0.5
    # a setting that is an estimator parameter (svm's class_weight; not its solver, which picks the class) is kept
    for key, value in settings.items():
        assert est.get_params().get(key, value) == value
    with pytest.raises(NotFittedError):
        est.decision_function(_tiny_kernel()[1])


def test_classifier_fits_a_precomputed_kernel(classifier):
    name, settings = classifier
    K, Kt, y, xt = _tiny_kernel()
    est = CLASSIFIERS[name](10.0, **settings)
    assert est.fit(K, y) is est
    d = est.decision_function(Kt)
    assert d.shape == (len(xt),) and np.isfinite(d).all()
    np.testing.assert_array_equal(d > 0, xt > 0)                 # larger = class 1
    assert np.all(np.diff(d) > 0)                                # monotone in x, as the separating direction
    np.testing.assert_array_equal(est.decision_function(K) > 0, y == 1)
