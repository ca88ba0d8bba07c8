"""Gene sets (GMT), STRING / SIF networks and expression cohorts (PIMKL inputs)."""

from __future__ import annotations

import gzip

import numpy as np
import pandas as pd
import pytest

from conftest import SHARED_DATA
from biokernels.io.cohorts import (collapse_probes, five_year_labels, read_arff_cohort, read_cohort,
                                   read_expression_tsv, read_labels_tsv, read_vdxs_cohort)
from biokernels.errors import InputError
from biokernels.io.pathways import (combine_string_scores, read_gmt, read_sif, read_string_network,
                                    write_gmt)

STRING = SHARED_DATA / "human_string_v12" / "string_v12_human_entrez_symbol_700_400k3.tsv.gz"
PWC = SHARED_DATA / "human_pathwaycommons_reactome_kegg" / "PwC_ReactomeKEGG.tsv.gz"
HALLMARK = SHARED_DATA / "msigdb_genesets" / "h.all.v6.2.symbols.gmt"
KEGG = SHARED_DATA / "msigdb_genesets" / "c2.cp.kegg.v7.2.symbols.gmt"
BC = SHARED_DATA / "breast_cancer_small_cohorts"


# --------------------------------------------------------------------- GMT

def test_gmt_round_trip_dedup_and_blank_lines(tmp_path, caplog):
    p = tmp_path / "s.gmt"
    p.write_text("A\tdesc\tg1\tg2\tg1\t\n\n  \nB\thttp://x\tg3\r\nC\t\tg2\tg4\tg4\tg4\n")
    sets, counts = read_gmt(p, with_counts=True)
    assert sets == {"A": ["g1", "g2"], "B": ["g3"], "C": ["g2", "g4"]}
    assert list(sets) == ["A", "B", "C"]
    assert counts == {"sets": 3, "gene_entries": 5, "unique_genes": 4, "duplicate_genes_dropped": 3,
                      "sets_with_duplicates": 2}
    assert "3 duplicated gene entries" in caplog.text
    q = tmp_path / "out" / "w.gmt"
    write_gmt(sets, q, {"A": "first"})
    assert read_gmt(q) == sets
    assert q.read_text().splitlines()[0] == "A\tfirst\tg1\tg2"
    gz = tmp_path / "s.gmt.gz"
    gz.write_bytes(gzip.compress(p.read_bytes()))
    assert read_gmt(gz) == sets


@pytest.mark.parametrize("text, match", [
    ("A\tdesc\n", r"line 1: set 'A' lists no gene"),
    ("A\tdesc\tg1\nB\td\t\t\n", r"line 2: set 'B' lists no gene"),
    ("A\tdesc\tg1\nA\tdesc\tg2\n", r"line 2, field 1 \(set name\): duplicate set name 'A' \(first on line 1\)"),
    ("A\tdesc\tg1\nlonely\n", r"line 2: expected at least 2 tab-separated fields"),
    ("\tdesc\tg1\n", r"line 1, field 1 \(set name\): expected a name"),
    ("\n\n", r"no gene set found"),
    ("A\tdesc\tTP53 BRCA1 MYC\n", r"line 1, set 'A': gene field 'TP53 BRCA1 MYC' holds whitespace"),
])
def test_gmt_errors(tmp_path, text, match):
    p = tmp_path / "bad.gmt"
    p.write_text(text)
    with pytest.raises(InputError, match=match) as err:
        read_gmt(p)
    assert str(p) in str(err.value)


def test_gmt_missing_file_and_write_errors(tmp_path):
    with pytest.raises(InputError, match="found nothing"):
        read_gmt(tmp_path / "nope.gmt")
    with pytest.raises(ValueError, match="empty"):
        write_gmt({"A": []}, tmp_path / "x.gmt")
    with pytest.raises(ValueError, match="tab"):
        write_gmt({"A": ["g\t1"]}, tmp_path / "x.gmt")


# ------------------------------------------------------------------ STRING

def _string_file(tmp_path, rows, extra_cols=()):
    cols = ["entrez_a", "entrez_b", "symbol_a", "symbol_b", *extra_cols, "combined_score"]
    p = tmp_path / "string.tsv"
    p.write_text("\t".join(cols) + "\n" + "".join("\t".join(map(str, r)) + "\n" for r in rows))
    return p


def test_string_small(tmp_path):
    p = _string_file(tmp_path, [(1, 2, "A", "B", 900), (2, 1, "B", "A", 950), (3, 3, "C", "C", 999),
                                (1, 3, "A", "C", 400), (4, 5, "D", "E", 700)])
    edges, c = read_string_network(p)
    assert c == {"rows": 5, "unmapped_dropped": 0, "below_threshold": 0, "self_loops_dropped": 1,
                 "duplicates_merged": 1, "edges": 3, "genes": 5}
    got = {(a, b): w for a, b, w in edges.itertuples(index=False)}
    assert got == {("A", "B"): 0.95, ("A", "C"): 0.4, ("D", "E"): 0.7}
    edges, c = read_string_network(p, score_threshold=700)
    assert c["below_threshold"] == 1 and c["edges"] == 2
    # id mapping: entrez -> symbol, unmapped ends are dropped and counted
    edges, c = read_string_network(p, id_cols=("entrez_a", "entrez_b"), mapping={"1": "A", "2": "B", "3": "C"})
    assert c["unmapped_dropped"] == 1 and c["edges"] == 2


def _string_download(tmp_path, ids):
    """A STRING download layout (protein1, protein2, combined_score) and a
    protein.info-like mapping whose identifiers lack the "9606." taxon prefix
    of the links file (a real mix-up: the info file of another release)."""
    links = tmp_path / "links.tsv"
    links.write_text("protein1\tprotein2\tcombined_score\n"
                     + "".join(f"{a}\t{b}\t900\n" for a, b in ids))
    info = tmp_path / "info.tsv"
    info.write_text("#string_protein_id\tpreferred_name\n"
                    "ENSP01\tTP53\nENSP02\tMDM2\nENSP03\tCDKN1A\n9606.ENSP04\tATM\n9606.ENSP05\tCHEK2\n")
    return links, info


def test_string_every_row_unmapped_says_so(tmp_path):
    """Issue #16: with no identifier mapped the reader said "the network has
    no edges (after dropping 0 self-loops)"; it must say that all rows were
    unmapped, how many, and which mapping file and columns were used."""
    links, info = _string_download(tmp_path, [("9606.ENSP01", "9606.ENSP02"), ("9606.ENSP02", "9606.ENSP03"),
                                              ("9606.ENSP01", "9606.ENSP03")])
    with pytest.raises(InputError) as err:
        read_string_network(links, id_cols=("protein1", "protein2"), mapping=info)
    msg = str(err.value)
    assert "every one of the 3 rows" in msg and "self-loops" not in msg
    assert str(info) in msg and "'#string_protein_id' -> 'preferred_name'" in msg
    assert "['protein1', 'protein2']" in msg and "9606.ENSP01" in msg and "'ENSP01'" in msg
    with pytest.raises(InputError, match=r"every one of the 3 rows.*the mapping dict \(1 identifiers\)"):
        read_string_network(links, id_cols=("protein1", "protein2"), mapping={"ENSP01": "TP53"})


def test_string_mostly_unmapped_warns_with_counts(tmp_path, caplog):
    links, info = _string_download(tmp_path, [("9606.ENSP04", "9606.ENSP05"), ("9606.ENSP01", "9606.ENSP04"),
                                              ("9606.ENSP02", "9606.ENSP05"), ("9606.ENSP03", "9606.ENSP05")])
    with caplog.at_level("WARNING", logger="biokernels.io.string"):
        edges, c = read_string_network(links, id_cols=("protein1", "protein2"), mapping=info)
    assert c["unmapped_dropped"] == 3 and c["edges"] == 1
    assert edges[["protein_a", "protein_b"]].values.tolist() == [["ATM", "CHEK2"]]
    msg = [r.getMessage() for r in caplog.records if r.levelname == "WARNING"]
    assert len(msg) == 1 and "3 of 4 rows (75%)" in msg[0] and str(info) in msg[0]
    # one row in five unmapped (20%, below UNMAPPED_WARN_FRACTION = 25%): no warning
    caplog.clear()
    p = _string_file(tmp_path, [(1, 2, "A", "B", 900), (2, 3, "B", "C", 900), (1, 3, "A", "C", 900),
                                (3, 4, "C", "D", 900), (4, 5, "D", "E", 900)])
    with caplog.at_level("WARNING", logger="biokernels.io.string"):
        _, c = read_string_network(p, id_cols=("entrez_a", "entrez_b"),
                                   mapping={"1": "A", "2": "B", "3": "C", "4": "D"})
    assert c["unmapped_dropped"] == 1 and not [r for r in caplog.records if r.levelname == "WARNING"]


@pytest.mark.parametrize("score, match", [("-5", "data row 2, column 'combined_score'"),
                                          ("abc", "data row 2, column 'combined_score'"),
                                          ("1200", r"expected a score in \[0, 1000\]"),
                                          ("", "data row 2")])
def test_string_bad_scores(tmp_path, score, match):
    p = _string_file(tmp_path, [(1, 2, "A", "B", 900), (2, 3, "B", "C", score)])
    with pytest.raises(InputError, match=match):
        read_string_network(p)


@pytest.mark.parametrize("threshold", [0.7, 0.4, 1500])
def test_string_threshold_on_the_wrong_scale(tmp_path, threshold):
    # STRING scores are 0-1000: 0.7 would keep every edge of a 700-threshold run.
    p = _string_file(tmp_path, [(1, 2, "A", "B", 900)])
    with pytest.raises(ValueError, match=r"score_threshold .*0-1000 scale"):
        read_string_network(p, score_threshold=threshold)


def test_string_missing_column_and_channels(tmp_path):
    p = _string_file(tmp_path, [(1, 2, "A", "B", 900)])
    with pytest.raises(InputError, match="missing column"):
        read_string_network(p, channels=["experiments"])
    q = _string_file(tmp_path, [(1, 2, "A", "B", 0, 900, 900), (2, 3, "B", "C", 500, 0, 500)],
                     extra_cols=("experiments", "database"))
    edges, _ = read_string_network(q, channels=["experiments", "database"])
    # a single channel combines to itself (STRING's prior removal and re-addition: a few
    # roundings, pytest.approx's default rel 1e-6); two channels give more than either
    assert edges.set_index(["protein_a", "protein_b"])["weight"][("B", "C")] == pytest.approx(0.5)
    assert combine_string_scores(np.array([[0.5, 0.5]]))[0] > 0.5


# --------------------------------------------------------------------- SIF

def test_sif_layouts_and_types(tmp_path):
    plain = tmp_path / "plain.sif"
    plain.write_text("A\tin-complex-with\tB\nB\tcontrols-state-change-of\tA\n\nC\tin-complex-with\tC\n"
                     "C\tcatalysis-precedes\tD\n")
    edges, c = read_sif(plain)
    assert c["rows"] == 4 and c["self_loops_dropped"] == 1 and c["duplicates_merged"] == 1 and c["edges"] == 2
    assert set(edges["weight"]) == {1.0}
    assert c["type:in-complex-with"] == 2
    edges, c = read_sif(plain, interaction_types=["catalysis-precedes"])
    assert c["type_filtered"] == 3 and edges[["protein_a", "protein_b"]].values.tolist() == [["C", "D"]]
    with pytest.raises(InputError, match=r"type\(s\) \['nope'\] not in the file"):
        read_sif(plain, interaction_types=["nope"])
    ext = tmp_path / "ext.txt"
    ext.write_text("PARTICIPANT_A\tINTERACTION_TYPE\tPARTICIPANT_B\tDATA_SOURCE\nX\tin-complex-with\tY\treactome\n"
                   "\nPARTICIPANT\tPARTICIPANT_TYPE\nX\tProteinReference\n")
    edges, c = read_sif(ext)
    assert c["edges"] == 1 and c["rows"] == 1
    hdr = tmp_path / "pwc.tsv"
    hdr.write_text("a.gn\tb.gn\ttype\tpathway\nB\tA\tin-complex-with\tP1;P2\n")
    edges, _ = read_sif(hdr)
    assert edges[["protein_a", "protein_b"]].values.tolist() == [["A", "B"]]


@pytest.mark.parametrize("text, match", [("A\tin-complex-with\n", r"line 1: expected at least 3"),
                                         ("A\tt\tB\nA\t\tB\n", r"line 2: empty interaction type"),
                                         ("A\tt\tB\n\n \tt\tB\n", r"line 3: empty source"),
                                         ("\n", "no interaction")])
def test_sif_errors(tmp_path, text, match):
    p = tmp_path / "bad.sif"
    p.write_text(text)
    with pytest.raises(InputError, match=match):
        read_sif(p)


# ----------------------------------------------------------------- cohorts

def test_five_year_labels():
    t = pd.Series([100, 1826, 1827, 3000, 500, 1000, np.nan], index=list("abcdefg"))
    e = pd.Series([1, 1, 1, 0, 0, 1, 1], index=t.index)
    y, c = five_year_labels(t, e)
    assert y.to_dict() == {"a": 1, "b": 1, "c": 0, "d": 0, "f": 1}
    assert c == {"samples": 7, "positive": 3, "negative": 2, "censored_before_horizon": 1, "no_endpoint": 1}
    with pytest.raises(InputError, match="sample 'b': event must be 0 or 1"):
        five_year_labels(t, e.replace({1826: 0}).where(t != 1826, 2))


def test_collapse_probes():
    X = pd.DataFrame([[1.0, 5.0, 3.0, 7.0], [3.0, 5.0, 1.0, 9.0]], columns=["p1", "p2", "p3", "p4"])
    m = {"p1": "G1", "p2": "G1", "p3": "G2", "p4": ""}
    Y, c = collapse_probes(X, m, "max_mean")
    assert Y.columns.tolist() == ["G1", "G2"] and Y["G1"].tolist() == [5.0, 5.0]
    assert c == {"probes": 4, "probes_without_gene": 1, "genes": 2, "genes_with_several_probes": 1,
                 "probes_collapsed": 1}
    Y, _ = collapse_probes(X, m, "mean")
    assert Y["G1"].tolist() == [3.0, 4.0]
    with pytest.raises(ValueError, match="collapse method"):
        collapse_probes(X, m, "median")


def _write(p, text):
    p.write_text(text)
    return p


def test_generic_cohort(tmp_path):
    ex = _write(tmp_path / "x.tsv", "sample_id\tG1\tG2\ns1\t1.0\t2\ns2\t3\t4.5\ns3\t0\t0\n")
    lab = _write(tmp_path / "y.tsv", "sample_id\tlabel\ns3\t0\ns1\t1\ns2\t0\n")
    X, y, c = read_cohort(ex, lab)
    assert X.index.tolist() == ["s1", "s2", "s3"] and y.tolist() == [1, 0, 0]
    assert c == {"samples": 3, "genes": 2, "positive": 1, "negative": 2, "samples_with_nan": 0}
    nan = _write(tmp_path / "n.tsv", "sample_id\tG1\tG2\ns1\t1.0\t2\ns2\t3\t4.5\ns3\t0\tNA\n")
    with pytest.raises(InputError, match=r"n.tsv: sample 's3', column 'G2': missing value"):
        read_cohort(nan, lab)
    X, y, c = read_cohort(nan, lab, nan_policy="drop")
    assert c["samples_with_nan"] == 1 and X.index.tolist() == ["s1", "s2"]
    txt = _write(tmp_path / "t.tsv", "sample_id\tG1\ns1\tabc\n")
    with pytest.raises(InputError, match="sample 's1', column 'G1': expected a number, got 'abc'"):
        read_expression_tsv(txt)
    bad = _write(tmp_path / "b.tsv", "sample_id\tlabel\ns1\t1\ns2\t2\n")
    with pytest.raises(InputError, match="sample 's2', column 'label': expected 0 or 1, got '2'"):
        read_labels_tsv(bad)
    one = _write(tmp_path / "o.tsv", "sample_id\tlabel\ns1\t1\ns2\t1\n")
    with pytest.raises(InputError, match="expected both classes"):
        read_labels_tsv(one)
    other = _write(tmp_path / "m.tsv", "sample_id\tlabel\ns1\t1\ns2\t0\ns9\t0\n")
    with pytest.raises(InputError, match=r"sample ids differ: 1 only in the expression file \(e.g. \['s3'\]\), "
                                         r"1 only in the labels file \(e.g. \['s9'\]\)"):
        read_cohort(ex, other)


# ------------------------------------------------------------- real files

@pytest.mark.skipif(not STRING.is_file(), reason="../shared/data is absent")
def test_real_string_counts():
    edges, c = read_string_network(STRING)
    raw = pd.read_csv(STRING, sep="\t", usecols=["symbol_a", "symbol_b", "combined_score"])
    assert c["rows"] == len(raw) == 174962
    assert c["edges"] == 174962 and c["self_loops_dropped"] == 0 and c["duplicates_merged"] == 0
    assert c["genes"] == len(set(raw.symbol_a) | set(raw.symbol_b)) == 17288
    assert edges["weight"].min() == raw.combined_score.min() / 1000 == 0.4
    hi, c7 = read_string_network(STRING, score_threshold=700)
    assert c7["below_threshold"] == int((raw.combined_score < 700).sum()) == 43442
    assert len(hi) == 174962 - 43442


@pytest.mark.skipif(not PWC.is_file(), reason="../shared/data is absent")
def test_real_sif_counts():
    edges, c = read_sif(PWC)
    raw = pd.read_csv(PWC, sep="\t", usecols=["a.gn", "b.gn", "type"])
    ends = np.sort(raw[["a.gn", "b.gn"]].to_numpy(object).astype(str), axis=1)
    pairs = pd.DataFrame(ends).drop_duplicates()
    assert c["rows"] == len(raw) == 343230
    assert c["edges"] == len(pairs) == 280010
    assert c["genes"] == len(set(raw["a.gn"]) | set(raw["b.gn"])) == 10080
    assert c["type:in-complex-with"] == int((raw.type == "in-complex-with").sum()) == 140355


@pytest.mark.skipif(not HALLMARK.is_file(), reason="../shared/data is absent")
def test_real_gmt_counts():
    h, hc = read_gmt(HALLMARK, with_counts=True)
    assert hc["sets"] == 50 and hc["gene_entries"] == 7324 and hc["unique_genes"] == 4386
    k, kc = read_gmt(KEGG, with_counts=True)
    assert kc["sets"] == 186 and kc["gene_entries"] == 12797 and kc["duplicate_genes_dropped"] == 0
    assert min(map(len, k.values())) == 10 and max(map(len, k.values())) == 389


@pytest.mark.skipif(not BC.is_dir(), reason="../shared/data is absent")
def test_real_cohorts():
    X, y, c = read_vdxs_cohort(BC / "vdxs_expression_150x966.tsv.gz", BC / "vdxs_probe_annotation.tsv",
                               BC / "vdxs_clinical.tsv")
    # independent route: pandas on the clinical table
    clin = pd.read_csv(BC / "vdxs_clinical.tsv", sep="\t", index_col=0)
    vdx = clin[clin.series == "VDX"]
    pos = ((vdx["e.rfs"] == 1) & (vdx["t.rfs"] <= 1826)).sum()
    neg = (vdx["t.rfs"] > 1826).sum()
    assert (c["positive"], c["negative"], c["censored_before_horizon"]) == (pos, neg, 7) == (37, 77, 7)
    assert X.shape == (114, 638) and int(y.sum()) == 37 and c["series_dropped"] == 29
    assert not X.isna().any().any()
    Xd, yd, cd = read_vdxs_cohort(BC / "vdxs_expression_150x966.tsv.gz", BC / "vdxs_probe_annotation.tsv",
                                  BC / "vdxs_clinical.tsv", series=None, endpoint="dmfs")
    assert (cd["positive"], cd["negative"], cd["censored_before_horizon"]) == (43, 99, 8)
    G, yg, cg = read_arff_cohort(BC / "GSE7390_sksurv_76probes_metastasis.arff.gz")
    assert (cg["positive"], cg["negative"], cg["censored_before_horizon"]) == (35, 154, 9)
    assert G.shape == (189, 76)
    ann = pd.read_csv(BC / "vdxs_probe_annotation.tsv", sep="\t")
    Gs, _, cs = read_arff_cohort(BC / "GSE7390_sksurv_76probes_metastasis.arff.gz",
                                 probe_to_gene=dict(zip(ann.probe, ann["HUGO.gene.symbol"])))
    assert cs["genes"] == Gs.shape[1] <= 76


def test_expression_tsv_rejects_inf_and_repeated_genes_and_one_class_after_drop(tmp_path):
    from biokernels.io.cohorts import read_cohort, read_expression_tsv

    p = tmp_path / "x.tsv"
    p.write_text("sample_id\tG1\tG1\nS1\t1\t2\nS2\t3\t4\n")
    with pytest.raises(InputError, match=r"duplicated gene column\(s\) \['G1'\]"):
        read_expression_tsv(p)
    p.write_text("sample_id\tG1\tG2\nS1\t1\tinf\nS2\t3\t4\n")
    with pytest.raises(InputError, match="sample 'S1', column 'G2': infinite value"):
        read_expression_tsv(p)
    p.write_text("sample_id\tG1\tG2\nS1\t1\tNA\nS2\t3\t4\nS3\t5\t6\n")
    lab = tmp_path / "y.tsv"
    lab.write_text("sample_id\tlabel\nS1\t1\nS2\t0\nS3\t0\n")
    with pytest.raises(InputError, match="expected both classes"):
        read_cohort(p, lab, nan_policy="drop")
