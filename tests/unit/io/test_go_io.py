"""GO annotations (GAF 2.x) and the ontology (OBO): biokernels.io.go.

The fixtures are written here in the public layouts: a GAF 2.2 file (the
``!gaf-version: 2.2`` header and ``!`` comment lines, 17 tab-separated
columns, ``NOT|involved_in`` / ``NOT|contributes_to`` qualifiers, IEA and
experimental evidence, ``|``-separated synonyms, a two-taxon column 13) and
an OBO 1.2 file (``is_a``, ``relationship: part_of``, a ``regulates`` edge,
an obsolete term, an ``alt_id``, a cross-namespace ``part_of``). Every
expected value below is derived by hand from them; the reasons are in the
comments.
"""

from __future__ import annotations

import gzip
from pathlib import Path

import numpy as np
import pandas as pd
import pytest

from biokernels.errors import InputError
from biokernels.io.go import (
    go_annotation_labels,
    load_gaf,
    read_gaf,
    read_obo,
)
from biokernels.io.labels import LABEL_READERS, select_tasks
from fakes.go import gaf_line

ROOT, A, B, C, D, E, OBS, G, G_ALT, MF_ROOT, H, OBS2 = (
    "GO:0008150", "GO:0000001", "GO:0000002", "GO:0000003", "GO:0000004", "GO:0000005", "GO:0000006",
    "GO:0000007", "GO:0000017", "GO:0003674", "GO:0000008", "GO:0000009")

# The ontology (biological_process unless said):
#   A is_a ROOT;  B is_a A;  C is_a A;  D is_a B, part_of C;  E is_a C, regulates B;
#   G is_a ROOT (alt_id G_ALT);  OBS obsolete, replaced_by C;  OBS2 obsolete, only a `consider`;
#   H (molecular_function) is_a MF_ROOT, part_of A.
OBO = f"""format-version: 1.2
data-version: releases/2024-06-17
ontology: go

[Term]
id: {ROOT}
name: biological_process
namespace: biological_process

[Term]
id: {A}
name: term a
namespace: biological_process
is_a: {ROOT} ! biological_process

[Term]
id: {B}
name: term b
namespace: biological_process
is_a: {A} ! term a

[Term]
id: {C}
name: term c
namespace: biological_process
is_a: {A} ! term a

[Term]
id: {D}
name: term d
namespace: biological_process
is_a: {B} ! term b
relationship: part_of {C} ! term c

[Term]
id: {E}
name: term e
namespace: biological_process
is_a: {C} ! term c
relationship: regulates {B} ! term b

[Term]
id: {OBS}
name: obsolete term f
namespace: biological_process
is_obsolete: true
replaced_by: {C}

[Term]
id: {OBS2}
name: obsolete term i
namespace: biological_process
is_obsolete: true
consider: {C}
consider: {E}

[Term]
id: {G}
name: term g
namespace: biological_process
alt_id: {G_ALT}
is_a: {ROOT} ! biological_process

[Term]
id: {MF_ROOT}
name: molecular_function
namespace: molecular_function

[Term]
id: {H}
name: term h
namespace: molecular_function
is_a: {MF_ROOT} ! molecular_function
relationship: part_of {A} ! term a

[Typedef]
id: part_of
name: part of
is_transitive: true

[Typedef]
id: regulates
name: regulates
"""

# Hand-derived reflexive ancestors over is_a + part_of within a namespace
# (regulates is not followed; H's part_of A crosses namespaces and is not).
ANCESTORS = {ROOT: {ROOT}, A: {A, ROOT}, B: {B, A, ROOT}, C: {C, A, ROOT}, D: {D, B, C, A, ROOT},
             E: {E, C, A, ROOT}, G: {G, ROOT}, MF_ROOT: {MF_ROOT}, H: {H, MF_ROOT}}


# (object, symbol, synonyms): Y<n> are the network's ORF names
P = {i: (f"S00000000{i}", f"SYM{i}", f"Y{i}|alias{i}") for i in range(1, 10)}
P[9] = ("S000000009", "SYM9", "YXXX")           # matches no network protein
P[10] = ("S000000010", "SYM10", "Y6|other10")    # shares Y6 with object 6
ROWS = [
    (1, "involved_in", D, "EXP", "P"),            # 1
    (1, "involved_in", D, "IDA", "P"),            # 2 same pair, other evidence
    (1, "enables", H, "IDA", "F"),                # 3 other aspect
    (2, "involved_in", E, "IDA", "P"),            # 4
    (2, "involved_in", ROOT, "ND", "P"),          # 5 ND, excluded below
    (2, "NOT|contributes_to", H, "IDA", "F"),     # 6 other aspect
    (3, "involved_in", B, "IEA", "P"),            # 7 electronic
    (4, "involved_in", D, "IMP", "P"),            # 8 contradicted by row 9 (D is below B)
    (4, "NOT|involved_in", B, "IDA", "P"),        # 9
    (4, "involved_in", C, "TAS", "P"),            # 10
    (5, "NOT|involved_in", A, "EXP", "P"),        # 11
    (5, "involved_in", G, "EXP", "P"),            # 12
    (6, "involved_in", G_ALT, "EXP", "P"),        # 13 secondary id of G
    (6, "involved_in", OBS, "EXP", "P"),          # 14 obsolete, replaced by C
    (6, "involved_in", "GO:0009999", "EXP", "P"),  # 15 not in the OBO
    (7, "involved_in", H, "EXP", "P"),            # 16 a molecular_function term with aspect P
    (8, "involved_in", A, "EXP", "P"),            # 17 another organism (first taxon 9606)
    (9, "involved_in", C, "EXP", "P"),            # 18 object not in the network
    (10, "involved_in", B, "EXP", "P"),           # 19 second object of Y6
    (6, "involved_in", OBS2, "EXP", "P"),         # 20 obsolete without a replacement
]
NETWORK = ["Y1", "Y2", "Y3", "Y4", "Y5", "Y6", "Y7", "Y8", "Y10"]


def gaf_text(rows=ROWS, version="2.2") -> str:
    lines = [f"!gaf-version: {version}", "!generated-by: SGD", "!date-generated: 2024-06-17", "!"]
    for obj, qual, term, ev, aspect in rows:
        o, sym, syn = P[obj]
        lines.append(gaf_line(o, sym, qual, term, ev, aspect, syn,
                              taxon="taxon:9606|taxon:559292" if obj == 8 else "taxon:559292"))
        if obj == 4 and qual.startswith("NOT"):
            lines.append("! a comment line between annotations")
    return "\n".join(lines) + "\n"


@pytest.fixture
def files(tmp_path):
    gaf = tmp_path / "sgd.gaf"
    gaf.write_text(gaf_text())
    obo = tmp_path / "go-basic.obo"
    obo.write_text(OBO)
    return gaf, obo


def settings(**kw):
    base = dict(aspect="P", id_column="DB_Object_Synonym", proteins=NETWORK, include_iea=False,
                evidence_exclude=["ND"], taxon=559292, min_annotated=1)
    return {**base, **kw}


# --------------------------------------------------------------------------- the ontology

def test_obo_terms_edges_and_ancestors(files):
    onto = read_obo(files[1])
    # 9 live terms (OBS, OBS2 are obsolete; OBS has a replacement); one alt_id; edges kept: 7 is_a (A, B, C, D, E, G, H) + D part_of C;
    # regulates not followed (1), H part_of A crosses namespaces (1)
    assert onto.counts == {"terms": 9, "obsolete_terms": 2, "non_go_terms": 0, "obsolete_replaced_by": 1,
                           "alt_ids": 1, "edges": 8, "edges_other_relation": 1,
                           "edges_across_namespaces": 1, "edges_to_unknown_terms": 0}
    assert onto.alt_ids == {G_ALT: G} and onto.obsolete == {OBS, OBS2} and onto.replaced_by == {OBS: C}
    anc = onto.ancestors()
    got = {t: {onto.terms[j] for j in anc[i].indices} for i, t in enumerate(onto.terms)}
    assert got == ANCESTORS


def test_obo_cycle_and_wrong_file_are_named(tmp_path, files):
    cyc = tmp_path / "cycle.obo"
    cyc.write_text(OBO.replace(f"id: {A}\nname: term a\nnamespace: biological_process\nis_a: {ROOT}",
                               f"id: {A}\nname: term a\nnamespace: biological_process\nis_a: {D}"))
    with pytest.raises(InputError, match=r"cycle\.obo: the is_a/part_of graph has a cycle: GO:\d+ -> "):
        read_obo(cyc)
    # a GAF given as the ontology: what it looks like and what to give instead
    with pytest.raises(InputError, match=r"sgd\.gaf: line 1: expected an OBO ontology .* found a GAF 2\.2 "
                                         r"annotation file; give the ontology as OBO, e.g. go-basic.obo"):
        read_obo(files[0])
    bad = tmp_path / "bad.obo"
    bad.write_text("format-version: 1.2\n\n[Term]\nid: GO:0000001\nno colon here\n")
    with pytest.raises(InputError, match=r"bad\.obo: not a valid OBO file: Tag-value pair parsing failed"):
        read_obo(bad)


# --------------------------------------------------------------------------- the GAF

def test_gaf_rows_and_header_counts(files):
    rows, info = read_gaf(files[0])
    # 4 header comments + 1 comment between annotations; 20 annotation lines
    assert info == {"gaf_version": "2.2", "lines": 25, "comment_lines": 5, "blank_lines": 0,
                    "illegal_lines_skipped": 0, "rows": 20}
    assert rows["NOT"].sum() == 3                              # rows 6, 9, 11
    assert rows.loc[rows["NOT"], "Qualifier"].tolist() == ["NOT|contributes_to", "NOT|involved_in",
                                                            "NOT|involved_in"]
    # the first taxon of "taxon:9606|taxon:559292" is the object's
    assert rows["Taxon"].tolist().count(9606) == 1
    # line numbers are the file's (header 4 lines; the comment after row 9 shifts the rest)
    assert rows["line"].iloc[0] == 5 and rows["line"].iloc[8] == 13 and rows["line"].iloc[9] == 15


def test_go_labels_planted_values(files):
    rows, _ = read_gaf(files[0])
    onto = read_obo(files[1])
    Y, counts = go_annotation_labels(rows, onto, **settings())
    assert counts == {
        "rows": 20, "rows_other_aspect": 2,     # rows 3, 6
        "rows_other_taxon": 1,                  # row 17
        "rows_iea_excluded": 1,                 # row 7
        "rows_evidence_not_included": 0,
        "rows_evidence_excluded": 1,            # row 5 (ND)
        "rows_alt_id_replaced": 1,              # row 13 (kept, as G)
        "rows_obsolete_replaced": 1,            # row 14 (kept, as C)
        "rows_obsolete_term": 1,                # row 20
        "rows_unknown_term": 1,                 # row 15
        "rows_term_in_other_namespace": 1,      # row 16
        "rows_not": 2, "rows_positive": 10,     # rows 9, 11; the other 10 of the 12 left
        "objects": 7,                           # objects 1, 2, 4, 5, 6, 9, 10
        "objects_not_in_network": 1, "rows_not_in_network": 1,   # object 9 (YXXX)
        "network_ids_matched": 5,               # Y1, Y2, Y4, Y5, Y6
        "network_ids_several_objects": 1,       # Y6: objects 6 and 10
        "pairs_direct": 8,                      # Y1:D  Y2:E  Y4:D,C  Y5:G  Y6:G,C,B
        "pairs_not": 2,                         # Y4:B  Y5:A
        "pairs_blocked_by_not": 1,              # Y4:D (D is below B)
        "pairs_propagated": 19,                 # 5 + 4 + 3 + 2 + 5, below
        "terms_annotated": 7, "terms_below_min": 0, "terms_above_max": 0, "terms_kept": 7,
        "proteins_labelled": 5,
    }
    want = {"Y1": ANCESTORS[D],                   # D, B, C, A, ROOT
            "Y2": ANCESTORS[E],                   # E, C, A, ROOT
            "Y4": ANCESTORS[C],                   # D dropped by NOT B; C still reaches A and ROOT
            "Y5": ANCESTORS[G],                   # NOT A blocks nothing it has; G is not below A
            "Y6": ANCESTORS[G] | ANCESTORS[C] | ANCESTORS[B]}   # objects 6 (G, C via OBS) and 10 (B)
    got = {p: set(Y.columns[Y.loc[p] == 1]) for p in Y.index}
    assert got == want
    assert list(Y.index) == ["Y1", "Y2", "Y4", "Y5", "Y6"] and Y.index.name == "protein"
    # the NOT rule: no positive at or below a protein's NOT term
    assert Y.loc["Y4", [B, D]].sum() == 0 and Y.loc["Y5", [A, B, C, D, E]].sum() == 0


def test_size_window_and_select_tasks(files):
    rows, _ = read_gaf(files[0])
    onto = read_obo(files[1])
    # sizes after propagation: ROOT 5, A 4 (Y1 Y2 Y4 Y6), C 4 (the same), B 2, G 2, D 1, E 1
    Y, counts = go_annotation_labels(rows, onto, **settings(min_annotated=2, max_annotated=4))
    assert (counts["terms_annotated"], counts["terms_below_min"], counts["terms_above_max"],
            counts["terms_kept"]) == (7, 2, 1, 4)
    assert list(Y.columns) == [A, B, C, G]
    assert Y.sum().to_dict() == {A: 4, B: 2, C: 4, G: 2}
    tasks, tc = select_tasks(Y, NETWORK, 2, 4)
    # Y3, Y7, Y8, Y10 are network proteins without a kept annotation: negatives
    assert tasks.shape == (9, 4) and tc["network_unannotated"] == 4 and tc["tasks_kept"] == 4
    assert tc["tasks_below_min"] == tc["tasks_above_max"] == 0


def test_evidence_switches(files):
    rows, _ = read_gaf(files[0])
    onto = read_obo(files[1])
    # IEA kept: Y3 gets B and its ancestors
    Y, counts = go_annotation_labels(rows, onto, **settings(include_iea=True))
    assert counts["rows_iea_excluded"] == 0 and set(Y.columns[Y.loc["Y3"] == 1]) == ANCESTORS[B]
    # experimental codes only: rows 1 (EXP), 2, 4 (IDA), 8 (IMP), 9 (IDA, NOT), 11-16, 18-20 (EXP)
    # pass; row 10 (TAS) does not, so Y4 keeps nothing (D is blocked, C was TAS)
    Y, counts = go_annotation_labels(rows, onto, **settings(evidence_include=["EXP", "IDA", "IMP"],
                                                            evidence_exclude=[]))
    assert counts["rows_evidence_not_included"] == 2          # row 5 (ND) and row 10 (TAS)
    assert "Y4" not in Y.index or Y.loc["Y4"].sum() == 0
    with pytest.raises(InputError, match=r"go_evidence_include lists IEA but go_include_iea is false"):
        go_annotation_labels(rows, onto, **settings(evidence_include=["IEA"]))
    with pytest.raises(InputError, match=r"go_evidence_exclude: unknown evidence code\(s\) \['XYZ'\]"):
        go_annotation_labels(rows, onto, **settings(evidence_exclude=["XYZ"]))
    with pytest.raises(InputError, match=r"\['EXP'\] both in go_evidence_include and go_evidence_exclude"):
        go_annotation_labels(rows, onto, **settings(evidence_include=["EXP"], evidence_exclude=["EXP"]))


def test_molecular_function_aspect_and_other_id_columns(files):
    rows, _ = read_gaf(files[0])
    onto = read_obo(files[1])
    # aspect F: row 3 (Y1 enables H) positive; row 6 a NOT only; row 16 has aspect P (other aspect)
    Y, counts = go_annotation_labels(rows, onto, **settings(aspect="F"))
    assert {p: set(Y.columns[Y.loc[p] == 1]) for p in Y.index} == {"Y1": {H, MF_ROOT}, "Y2": set()}
    assert counts["rows_not"] == 1 and counts["rows_other_aspect"] == 18
    # by symbol (SYM1 ...) and by DB_Object_ID (S000000001 ...)
    Y, _ = go_annotation_labels(rows, onto, **settings(id_column="DB_Object_Symbol", proteins=["SYM1", "SYM2"]))
    assert list(Y.index) == ["SYM1", "SYM2"]
    Y, _ = go_annotation_labels(rows, onto, **settings(id_column="DB_Object_ID", proteins=None))
    assert set(Y.index) == {P[i][0] for i in (1, 2, 4, 5, 6, 9, 10)}
    with pytest.raises(InputError, match=r"no GAF object matches a network protein through DB_Object_ID .*"
                                         r"network ids look like \['Y1', 'Y2', 'Y3'\], DB_Object_ID values like "
                                         r"\['S000000001'"):
        go_annotation_labels(rows, onto, **settings(id_column="DB_Object_ID"))


def test_gzip_and_the_registry(files, tmp_path):
    gz = tmp_path / "sgd.gaf.gz"
    gz.write_bytes(gzip.compress(files[0].read_bytes()))
    obo_gz = tmp_path / "go-basic.obo.gz"
    obo_gz.write_bytes(gzip.compress(files[1].read_bytes()))
    Y1, c1 = load_gaf(files[0], files[1], go_id_column="DB_Object_Synonym", go_evidence_exclude=["ND"],
                      go_taxon=559292, proteins=NETWORK)
    Y2, c2 = LABEL_READERS["gaf"](gaf_path=gz, obo_path=obo_gz, go_id_column="DB_Object_Synonym",
                                  go_evidence_exclude=["ND"], go_taxon=559292, proteins=NETWORK)
    pd.testing.assert_frame_equal(Y1, Y2)
    assert c1 == c2 and c1["gaf_version"] == "2.2" and c1["ontology_terms"] == 9


# --------------------------------------------------------------------------- errors

@pytest.mark.parametrize("edit, message", [
    # (line index in ROWS to break, replacement of one column) -> the error (file line 5 + index)
    ((0, 4, "GO:123"), r"line 5, column 5 \(GO_ID\): expected a GO id GO:nnnnnnn, got 'GO:123'"),
    ((1, 6, "XYZ"), r"line 6, column 7 \(Evidence_Code\): expected a GO evidence code .*got 'XYZ'"),
    ((2, 8, "Q"), r"line 7, column 9 \(Aspect\): expected P, F or C, got 'Q'"),
    ((3, 3, "NOT|interacts_with"), r"line 8, column 4 \(Qualifier\): expected NOT and/or a GAF relation "
                                   r".*got 'NOT\|interacts_with'"),
    ((0, 12, "9606"), r"line 5, column 13 \(Taxon\): expected taxon:N or taxon:N\|taxon:M, got '9606'"),
    ((0, 1, ""), r"line 5, column 2 \(DB_Object_ID\): expected an identifier, got ''"),
])
def test_malformed_fields_name_file_line_and_field(tmp_path, edit, message):
    row, col, value = edit
    lines = gaf_text().splitlines()
    fields = lines[4 + row].split("\t")
    fields[col] = value
    lines[4 + row] = "\t".join(fields)
    path = tmp_path / "bad.gaf"
    path.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"bad\.gaf: " + message):
        read_gaf(path)


def test_layout_errors(tmp_path, files):
    lines = gaf_text().splitlines()
    lines[6] = "\t".join(lines[6].split("\t")[:14])     # 15-17 columns are GAF 2.x (16, 17 optional)
    short = tmp_path / "short.gaf"
    short.write_text("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"short\.gaf: line 7, 14 tab-separated columns, expected 15 to 17 "
                                         r"\(GAF 2\.x\) \(1 illegal of 20 annotation lines"):
        read_gaf(short)
    # GAF 1.0 (15 columns) is refused by its header
    old = tmp_path / "old.gaf"
    old.write_text("!gaf-version: 1.0\n")
    with pytest.raises(InputError, match=r"old\.gaf: line 1: GAF version 1\.0; expected 2\.x"):
        read_gaf(old)
    # the ontology given as annotations
    with pytest.raises(InputError, match=r"go-basic\.obo: line 1: expected the GAF header '!gaf-version: 2\.2' "
                                         r"\(GAF 2\.x\), found an OBO ontology; give a GO annotation file"):
        read_gaf(files[1])
    # a GPAD file: said so, with what to do
    gpad = tmp_path / "sgd.gpad"
    gpad.write_text("!gpad-version: 2.0\nSGD:S000000001\t\tRO:0002331\tGO:0000001\n")
    with pytest.raises(InputError, match=r"found a GPAD annotation file \(no gene symbols or synonyms; use the "
                                         r"GAF of the same release\)"):
        read_gaf(gpad)
    # named .gz but plain text: what it looks like, what to do
    fake = tmp_path / "sgd.gaf.gz"
    fake.write_text(gaf_text())
    with pytest.raises(InputError, match=r"sgd\.gaf\.gz: named \.gz but not gzip-compressed: it looks like a GAF "
                                         r"2\.2 annotation file; rename it without \.gz"):
        read_gaf(fake)
    # gzip bytes named as plain text
    gz_named_plain = tmp_path / "plain.gaf"
    gz_named_plain.write_bytes(gzip.compress(gaf_text().encode()))
    with pytest.raises(InputError, match=r"plain\.gaf: named as plain text \(\.gaf\) but gzip-compressed "
                                         r"\(gzip-compressed data holding a GAF 2\.2 annotation file\); rename it to "
                                         r"plain\.gaf\.gz"):
        read_gaf(gz_named_plain)
    html = tmp_path / "download"
    html.write_text("<!DOCTYPE html>\n<html><body>Not found</body></html>\n")
    with pytest.raises(InputError, match=r"found an HTML page \(an error or sign-in page saved in place of the "
                                         r"data\?\): check the URL"):
        read_gaf(html)
    empty = tmp_path / "empty.gaf"
    empty.write_text("")
    with pytest.raises(InputError, match=r"empty\.gaf: the file is empty \(expected a GAF 2\.x annotation file\)"):
        read_gaf(empty)
    only_header = tmp_path / "header.gaf"
    only_header.write_text("!gaf-version: 2.2\n!nothing else\n")
    with pytest.raises(InputError, match=r"header\.gaf: no annotation line"):
        read_gaf(only_header)
    with pytest.raises(InputError, match=r"nosuch\.gaf: expected a GAF 2\.x annotation file, found nothing"):
        read_gaf(tmp_path / "nosuch.gaf")


def test_gaf_21_qualifiers_are_read(tmp_path, files):
    # GAF 2.1: the qualifier may be empty, NOT, or contributes_to / colocalizes_with alone
    rows21 = [(1, "", D, "EXP", "P"), (2, "NOT", E, "IDA", "P"), (4, "colocalizes_with", C, "IDA", "P")]
    path = tmp_path / "old.gaf"
    path.write_text(gaf_text(rows21, version="2.1"))
    rows, info = read_gaf(path)
    assert info["gaf_version"] == "2.1" and rows["NOT"].tolist() == [False, True, False]
    Y, counts = go_annotation_labels(rows, read_obo(files[1]), **settings())
    assert counts["rows_not"] == 1 and set(Y.index) == {"Y1", "Y2", "Y4"} and Y.loc["Y2"].sum() == 0
    assert np.array_equal(Y.loc["Y1", sorted(ANCESTORS[D])].to_numpy(), np.ones(5))


# --------------------------------------------------------------------------- GAFs as GO member databases write them

# SGD's sgd.gaf header: comment lines before the version line (other members write the same: MGI, PomBase, ...)
MEMBER_HEADER = ["!generated-by: SGD", "!date-generated: 2024-06-17", "!URL: https://www.yeastgenome.org",
                 "!Contact Email: sgd-helpdesk@lists.stanford.edu", "!gaf-version: 2.2", "!"]


def member_gaf(rows=ROWS) -> list[str]:
    """The planted rows under a member database's header; rows alternate 17,
    16 and 15 columns (the optional columns 16 and 17 left off)."""
    lines = list(MEMBER_HEADER)
    for k, line in enumerate(gaf_text(rows).splitlines()[4:]):
        lines.append(line if line.startswith("!") else "\t".join(line.split("\t")[:17 - k % 3]))
    return lines


def test_member_database_gaf_with_comments_first_and_15_or_16_columns_reads(tmp_path, files):
    path = tmp_path / "member.gaf"
    path.write_text("\n".join(member_gaf()) + "\n")
    assert {len(x.split("\t")) for x in member_gaf() if not x.startswith("!")} == {15, 16, 17}
    rows, info = read_gaf(path)
    ref, _ = read_gaf(files[0])
    # the same annotations as the canonical file (only the line numbers move: 6 header lines instead of 4)
    pd.testing.assert_frame_equal(rows.drop(columns="line"), ref.drop(columns="line"))
    assert (rows["line"] - ref["line"]).eq(2).all()
    assert info["gaf_version"] == "2.2" and info["illegal_lines_skipped"] == 0 and info["rows"] == 20


def test_one_illegal_line_is_skipped_and_counted(tmp_path, files):
    # 160 annotation lines (the planted rows 8 times), one with an evidence code GO does not define:
    # 1 / 160 = 0.6 % <= 1 %, so the line is skipped and counted
    body = [x for x in gaf_text().splitlines()[4:] if not x.startswith("!")] * 8
    fields = body[100].split("\t")
    fields[6] = "IPX"
    body[100] = "\t".join(fields)
    path = tmp_path / "one_bad.gaf"
    path.write_text("\n".join(MEMBER_HEADER + body) + "\n")
    rows, info = read_gaf(path)
    bad_line = len(MEMBER_HEADER) + 101
    assert info["illegal_lines_skipped"] == 1 and info["rows"] == 159 and bad_line not in set(rows["line"])
    # the count reaches the study's counts (load_gaf's dict: the diffusion study's "annotations" summary)
    _, counts = load_gaf(path, files[1], go_id_column="DB_Object_Synonym", go_evidence_exclude=["ND"],
                         go_taxon=559292, proteins=NETWORK)
    assert counts["illegal_lines_skipped"] == 1


def test_many_illegal_lines_are_refused_naming_them(tmp_path):
    body = [x for x in gaf_text().splitlines()[4:] if not x.startswith("!")] * 8      # 160 lines
    first = len(MEMBER_HEADER) + 1
    broken = {10: (6, "IPX"), 40: (4, ""), 70: (8, "Z")}                           # evidence, GO id, aspect
    for i, (col, value) in broken.items():
        fields = body[i].split("\t")
        fields[col] = value
        body[i] = "\t".join(fields)
    body[20] = "\t".join(body[20].split("\t")[:12])                                # 12 columns
    path = tmp_path / "bad.gaf"
    path.write_text("\n".join(MEMBER_HEADER + body) + "\n")
    # 4 of 160 (2.5 %) > 1 %: refused, the lines in file order with what is wrong in each
    with pytest.raises(InputError, match=(
            rf"bad\.gaf: line {first + 10}, column 7 \(Evidence_Code\): expected a GO evidence code .*got 'IPX'; "
            rf"line {first + 20}, 12 tab-separated columns, expected 15 to 17 \(GAF 2\.x\); "
            rf"line {first + 40}, column 5 \(GO_ID\): expected a GO id GO:nnnnnnn, got ''; "
            rf"line {first + 70}, column 9 \(Aspect\): expected P, F or C, got 'Z' "
            r"\(4 illegal of 160 annotation lines, 2\.5 %; at most 1 % are skipped\)")):
        read_gaf(path)
    # a larger tolerance reads it, the 4 lines counted
    rows, info = read_gaf(path, max_illegal_share=0.05)
    assert info["illegal_lines_skipped"] == 4 and len(rows) == 156
