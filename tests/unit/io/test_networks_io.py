"""Reading and cleaning networks and labels (biokernels.io)."""

import numpy as np
import pandas as pd
import pytest

from biokernels.io.labels import read_mips_funcat, select_tasks
from biokernels.errors import InputError
from biokernels.io.networks import (adjacency_matrix, clean_edges, component_summary,
                                    gene_rule_genes, ligand_style_network, read_edge_list,
                                    reaction_metabolites)
from conftest import SHARED_DATA


def _tsv(path, text):
    path.write_text(text)
    return path


def test_edge_list_cleaning_is_counted(tmp_path):
    f = _tsv(tmp_path / "e.tsv", "a\tb\tw\nP1\tP2\t0.5\nP2\tP1\t0.9\nP3\tP3\t1\nP2\tP3\t0.2\n")
    edges, counts = read_edge_list(f, "a", "b", "w")
    # P1-P2 twice (either orientation): merged keeping the larger weight;
    # the P3 self-loop is dropped.
    assert counts == {"rows": 4, "self_loops_dropped": 1, "duplicates_merged": 1, "edges": 2}
    assert edges.to_dict("list") == {"protein_a": ["P1", "P2"], "protein_b": ["P2", "P3"], "weight": [0.9, 0.2]}
    proteins, A = adjacency_matrix(edges)
    assert proteins == ["P1", "P2", "P3"]
    assert (A != A.T).nnz == 0 and A[0, 1] == 0.9


@pytest.mark.parametrize("text, match", [
    ("a\tb\tw\nP1\tP2\t-1\n", r"data row 1, column 'w': negative weight"),
    ("a\tb\tw\nP1\tP2\t1\nP1\tP3\tx\n", r"data row 2, column 'w': expected a finite number, got 'x'"),
    ("a\tb\tw\nP1\tP2\tinf\n", r"data row 1, column 'w': expected a finite number, got 'inf'"),
    ("a\tb\tw\nP1\tP2\t1\nP1\tP3\t1\textra\n", r"cannot parse as a tab-separated table"),
    ("", r"the file is empty"),
    ("a\tb\tw\n", r"the network has no edges"),
    ("a\tc\tw\nP1\tP2\t1\n", r"missing column\(s\) \['b'\]"),
    ("a\tb\tw\nP1\t\t1\n", r"data row 1: empty protein identifier"),
])
def test_bad_edge_lists_name_file_row_and_field(tmp_path, text, match):
    f = _tsv(tmp_path / "bad.tsv", text)
    with pytest.raises(InputError, match=match) as err:
        read_edge_list(f, "a", "b", "w")
    assert str(f) in str(err.value)


def test_components_and_isolated_nodes():
    edges, _ = clean_edges(pd.DataFrame({"protein_a": ["A", "C"], "protein_b": ["B", "D"]}), "<mem>")
    _, A = adjacency_matrix(edges, ["A", "B", "C", "D", "E"])
    assert component_summary(A) == {"components": 3, "largest_component": 2, "isolated_nodes": 1}


def test_reaction_parsing():
    assert reaction_metabolites("2 H2O[c] + ATP[c] => ADP[c] + 0.5 phosphate[m] ") == (
        {"H2O", "ATP"}, {"ADP", "phosphate"})
    assert reaction_metabolites("(R)-lactate[c] <=> pyruvate[c]") == ({"(R)-lactate"}, {"pyruvate"})
    with pytest.raises(ValueError, match="single"):
        reaction_metabolites("A[c] + B[c]")
    assert gene_rule_genes("(YDL174C and YEL039C) or YEL071W") == {"YDL174C", "YEL039C", "YEL071W"}


def test_ligand_style_network_links_enzymes_through_shared_metabolites():
    gem = pd.DataFrame({
        "Formula": ["A[c] + ATP[c] => B[c] + ADP[c]",   # G1: A -> B
                    "B[c] + H2O[c] => C[c]",             # G2: B -> C (shares B with G1)
                    "ATP[c] + D[c] => ADP[c] + E[c]",    # G3: shares only currency with G1
                    "C[c] => C[m]",                      # transport: left out
                    "E[c] => F[c]"],                     # no gene rule: left out
        "Gene-reaction association": ["G1", "G2 or G2b", "G3", "T1", ""],
    })
    edges, counts = ligand_style_network(gem, ["ATP", "ADP", "H2O"])
    # B links G1 to G2 and G2b; G2 and G2b share B and C; G3 shares nothing
    # but currency metabolites, and the transporter T1 is excluded.
    assert set(zip(edges["protein_a"], edges["protein_b"])) == {("G1", "G2"), ("G1", "G2b"), ("G2", "G2b")}
    assert counts["transport_reactions"] == 1 and counts["reactions_without_genes"] == 1


def test_mips_funcat_and_task_selection(tmp_path):
    genes = _tsv(tmp_path / "g.txt", "Y1\nY2\nY3\nY4\n")
    terms = _tsv(tmp_path / "t.txt", "01.01\n02.01\n")
    adj = _tsv(tmp_path / "a.txt", "1\t1\n2\t1\n3\t1\n4\t2\n")
    Y = read_mips_funcat(genes, terms, adj)
    assert Y.loc["Y1", "01.01"] == 1 and Y.loc["Y4", "02.01"] == 1 and Y.values.sum() == 4
    # Network: Y1, Y2, Y5 (Y5 unannotated); Y3 and Y4 are annotated but
    # absent; 01.01 has 2 network proteins, 02.01 none.
    tasks, counts = select_tasks(Y, ["Y1", "Y2", "Y5"], min_annotated=2)
    assert list(tasks.columns) == ["01.01"] and tasks["01.01"].tolist() == [1, 1, 0]
    assert counts == {"annotated_not_in_network": 2, "network_unannotated": 1, "tasks_total": 2, "tasks_kept": 1}
    with pytest.raises(InputError, match="no task has >= 3"):
        select_tasks(Y, ["Y1", "Y2", "Y5"], min_annotated=3)
    bad = _tsv(tmp_path / "bad.txt", "1\t1\n9\t1\n")
    with pytest.raises(InputError, match=r"row 2, column 1: expected a gene index in 1..4, got '9'"):
        read_mips_funcat(genes, terms, bad)
    frac = _tsv(tmp_path / "frac.txt", "1\t1\n2\t1.5\n")  # would be truncated to term 1
    with pytest.raises(InputError, match=r"row 2, column 2: expected a term index in 1..2, got '1.5'"):
        read_mips_funcat(genes, terms, frac)
    dup = _tsv(tmp_path / "dup.txt", "Y1\nY2\nY1\n")
    with pytest.raises(InputError, match=r"gene identifiers must be unique; 1 repeated, e.g. \['Y1'\]"):
        read_mips_funcat(dup, terms, adj)


VONMERING = SHARED_DATA / "yeast_vonmering_ppi"
MASHUP = SHARED_DATA / "yeast_mashup_string_mips"


@pytest.mark.skipif(not VONMERING.is_dir() or not MASHUP.is_dir(), reason="../shared/data is absent")
def test_real_von_mering_network_and_mips_tasks():
    edges, counts = read_edge_list(VONMERING / "edges.tsv")
    proteins, A = adjacency_matrix(edges)
    # The paper's von Mering data set: 2,617 proteins and 11,855 edges.
    assert (len(proteins), counts["edges"]) == (2617, 11855)
    assert counts["self_loops_dropped"] == counts["duplicates_merged"] == 0
    assert component_summary(A)["components"] == 92  # PROVENANCE.md
    mips = read_mips_funcat(MASHUP / "yeast_mips_level2_genes.txt", MASHUP / "yeast_mips_level2_terms.txt",
                            MASHUP / "yeast_mips_level2_adjacency.txt")
    tasks, tc = select_tasks(mips, proteins, 10)
    # PROVENANCE.md: level 2 has 60 terms with >= 10 von Mering proteins.
    assert tc["tasks_kept"] == 60 and tasks.shape == (2617, 60)
    assert np.isin(tasks.values, (0, 1)).all()


def test_a_table_cut_mid_line_is_refused_not_read_short(tmp_path):
    """A copy cut inside its last line (no line end, fields missing) reads
    as a plausible smaller network unless the field count is checked: the
    last line is named, and the file called truncated."""
    from biokernels.errors import InputError
    from biokernels.io.text import read_table

    path = tmp_path / "edges.tsv"
    path.write_text("protein_a\tprotein_b\tconfidence\nA\tB\thigh\nC\tD\tmedium\nE\tF")
    with pytest.raises(InputError, match=r"edges.tsv: the last line \(4\) has 2 of 3 fields and no line end"):
        read_table(path)
    path.write_text("protein_a\tprotein_b\tconfidence\nA\tB\thigh\nC\tD\nE\tF\tlow\n")   # ragged inside
    with pytest.raises(InputError, match=r"line 3 has 2 of 3 fields \(1 such line"):
        read_table(path)
    path.write_text("protein_a\tprotein_b\tconfidence\nA\tB\t\n\nE\tF\tlow")           # empty field, blank line
    assert read_table(path).shape == (2, 3)
