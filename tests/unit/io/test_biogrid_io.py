"""BioGRID TAB3 interactions: biokernels.io.biogrid and the ``biogrid``
network format.

The fixture is written here in BioGRID's TAB3 layout (the 37 columns of the
3.x/4.x releases, a ``#BioGRID Interaction ID`` header, ``-`` for missing
values, ``|`` between several accessions), with physical and genetic rows and
two organisms; every expected count is derived by hand from the rows below.
"""

from __future__ import annotations

import gzip
import zipfile

import pytest

from biokernels.errors import InputError
from biokernels.io.biogrid import read_biogrid_tab3
from biokernels.io.networks import NETWORK_READERS
from fakes.biogrid import TAB3_COLUMNS

# gene -> (entrez, systematic, symbol, swissprot, taxid)
GENES = {
    "TFC3": ("850289", "YAL001C", "TFC3", "P34111", "559292"),
    "VPS8": ("850288", "YAL002W", "VPS8", "P39702", "559292"),
    "EFB1": ("850287", "YAL003W", "EFB1", "P32471", "559292"),
    "ERP2": ("850290", "YAL007C", "ERP2", "P39704|Q0000X", "559292"),   # two accessions
    "SPO7": ("851229", "-", "SPO7", "P18410", "559292"),                 # no systematic name
    "TP53": ("7157", "-", "TP53", "P04637", "9606"),                     # human
}


def row(n: int, a: str, b: str, kind: str = "physical", system: str = "Two-hybrid") -> str:
    ga, gb = GENES[a], GENES[b]
    values = {c: "-" for c in TAB3_COLUMNS}
    values.update({
        "#BioGRID Interaction ID": str(n), "Entrez Gene Interactor A": ga[0], "Entrez Gene Interactor B": gb[0],
        "BioGRID ID Interactor A": str(31000 + n), "BioGRID ID Interactor B": str(32000 + n),
        "Systematic Name Interactor A": ga[1], "Systematic Name Interactor B": gb[1],
        "Official Symbol Interactor A": ga[2], "Official Symbol Interactor B": gb[2],
        "Experimental System": system, "Experimental System Type": kind, "Author": "Doe J (2001)",
        "Publication Source": f"PUBMED:{1000 + n}", "Organism ID Interactor A": ga[4],
        "Organism ID Interactor B": gb[4], "Throughput": "Low Throughput", "Source Database": "BIOGRID",
        "SWISS-PROT Accessions Interactor A": ga[3], "SWISS-PROT Accessions Interactor B": gb[3],
        "Organism Name Interactor A": "Saccharomyces cerevisiae (S288c)" if ga[4] == "559292" else "Homo sapiens",
        "Organism Name Interactor B": "Saccharomyces cerevisiae (S288c)" if gb[4] == "559292" else "Homo sapiens",
    })
    return "\t".join(values[c] for c in TAB3_COLUMNS)


ROWS = [
    row(1, "TFC3", "VPS8"),                                   # physical
    row(2, "VPS8", "TFC3", system="Affinity Capture-MS"),     # the same pair, reversed: a duplicate
    row(3, "TFC3", "EFB1", kind="genetic", system="Synthetic Lethality"),
    row(4, "EFB1", "TP53"),                                   # a human interactor
    row(5, "EFB1", "EFB1"),                                   # self-loop
    row(6, "VPS8", "EFB1"),                                   # physical
    row(7, "ERP2", "TFC3"),                                   # two SWISS-PROT accessions on A
    row(8, "SPO7", "VPS8"),                                   # no systematic name on A
]


def tab3_text(rows=ROWS) -> str:
    return "\t".join(TAB3_COLUMNS) + "\n" + "\n".join(rows) + "\n"


@pytest.fixture
def tab3(tmp_path):
    path = tmp_path / "BIOGRID-ORGANISM-Saccharomyces_cerevisiae_S288c-4.4.235.tab3.txt"
    path.write_text(tab3_text())
    return path


def pairs(edges):
    return sorted(zip(edges["protein_a"], edges["protein_b"]))


def test_physical_yeast_by_systematic_name(tab3):
    edges, counts = read_biogrid_tab3(tab3, system_type="physical", taxid=559292, id_column="systematic")
    assert counts == {
        "rows": 8,
        "rows_other_system_type": 1,   # row 3 (genetic)
        "rows_other_organism": 1,      # row 4 (TP53, 9606)
        "rows_missing_id": 1,          # row 8 (SPO7 has '-')
        "rows_several_ids": 0,         # systematic names are single
        "self_loops_dropped": 1,       # row 5
        "duplicates_merged": 1,        # rows 1 and 2
        "edges": 3, "proteins": 4,     # rows 1/2, 6, 7
    }
    assert pairs(edges) == [("YAL001C", "YAL002W"), ("YAL001C", "YAL007C"), ("YAL002W", "YAL003W")]
    assert (edges["weight"] == 1.0).all()


def test_id_columns_and_system_types(tab3):
    edges, counts = read_biogrid_tab3(tab3, taxid=559292, id_column="swissprot")
    # row 7's 'P39704|Q0000X' is dropped, not split; SPO7 has an accession
    assert counts["rows_several_ids"] == 1 and counts["rows_missing_id"] == 0
    assert pairs(edges) == [("P18410", "P39702"), ("P32471", "P39702"), ("P34111", "P39702")]
    edges, counts = read_biogrid_tab3(tab3, system_type="genetic", id_column="entrez")
    assert pairs(edges) == [("850287", "850289")] and counts["rows_other_system_type"] == 7
    # both types, every organism: rows 1-8 less the self-loop and the duplicate
    edges, counts = read_biogrid_tab3(tab3, system_type="both", id_column="symbol")
    assert counts["rows_other_organism"] == 0 and counts["edges"] == 6
    assert ("EFB1", "TP53") in pairs(edges)


def test_gzip_zip_and_the_registry(tab3, tmp_path):
    want, _ = read_biogrid_tab3(tab3, taxid=559292)
    gz = tmp_path / "yeast.tab3.txt.gz"
    gz.write_bytes(gzip.compress(tab3.read_bytes()))
    archive = tmp_path / "BIOGRID-ORGANISM-4.4.235.tab3.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.write(tab3, tab3.name)
        zf.writestr("BIOGRID-ORGANISM-Homo_sapiens-4.4.235.tab3.txt", tab3_text([row(1, "TP53", "TFC3")]))
    got, _ = NETWORK_READERS["biogrid"](gz, biogrid_taxid=559292)
    assert got.equals(want)
    got, _ = NETWORK_READERS["biogrid"](archive, biogrid_taxid=559292, biogrid_zip_member=tab3.name)
    assert got.equals(want)
    with pytest.raises(InputError, match=r"a zip archive of 2 files; name the one to read"):
        read_biogrid_tab3(archive)
    with pytest.raises(InputError, match=r"has no member 'BIOGRID-ORGANISM-Mus_musculus-4.4.235.tab3.txt'"):
        read_biogrid_tab3(archive, zip_member="BIOGRID-ORGANISM-Mus_musculus-4.4.235.tab3.txt")


def test_malformed_lines_name_file_line_and_field(tmp_path):
    def bad(rows, name="bad.tab3.txt"):
        path = tmp_path / name
        path.write_text(tab3_text(rows))
        return path

    odd = ROWS[0].replace("\tphysical\t", "\tbiochemical\t")
    with pytest.raises(InputError, match=r"bad\.tab3\.txt: line 3, column 13 \('Experimental System Type'\): "
                                         r"expected physical or genetic, got 'biochemical'"):
        read_biogrid_tab3(bad([ROWS[1], odd]))
    short = "\t".join(ROWS[0].split("\t")[:30])
    with pytest.raises(InputError, match=r"line 3, column 37 \('Organism Name Interactor B'\): expected a value or "
                                         r"'-' .*fewer than 37 tab-separated fields"):
        read_biogrid_tab3(bad([ROWS[1], short]))
    with pytest.raises(InputError, match=r"bad\.tab3\.txt: line 2, column 37 .*fewer than 37 tab-separated"):
        read_biogrid_tab3(bad([short]))
    with pytest.raises(InputError, match=r"line 3: 38 tab-separated fields, the header has 37"):
        read_biogrid_tab3(bad([ROWS[0], ROWS[1] + "\textra"]))
    org = ROWS[0].replace("\t559292\t559292\t", "\tyeast\t559292\t")
    with pytest.raises(InputError, match=r"line 2, column 16 \('Organism ID Interactor A'\): expected an NCBI "
                                         r"taxonomy id"):
        read_biogrid_tab3(bad([org]))
    ent = ROWS[0].replace("1\t850289\t", "1\tYAL001C\t", 1)
    with pytest.raises(InputError, match=r"line 2, column 2 \('Entrez Gene Interactor A'\): expected an Entrez "
                                         r"Gene id"):
        read_biogrid_tab3(bad([ent]))
    with pytest.raises(InputError, match=r"no interaction left \(system type physical, taxid 10090"):
        read_biogrid_tab3(bad(ROWS), taxid=10090)


def test_wrong_layouts_say_what_they_look_like(tmp_path):
    tab2 = tmp_path / "BIOGRID-ALL-3.5.tab2.txt"
    cols2 = TAB3_COLUMNS[:15] + ["Organism Interactor A", "Organism Interactor B"] + TAB3_COLUMNS[17:24]
    tab2.write_text("\t".join(cols2) + "\n")
    with pytest.raises(InputError, match=r"line 1: expected the BioGRID TAB3 header .* found a BioGRID TAB2 file "
                                         r"\(24 columns\); give the TAB3 file"):
        read_biogrid_tab3(tab2)
    mitab = tmp_path / "BIOGRID-ALL.mitab.txt"
    mitab.write_text("#ID Interactor A\tID Interactor B\tAlt IDs Interactor A\n"
                     "entrez gene/locuslink:6416\tentrez gene/locuslink:2318\t-\n")
    with pytest.raises(InputError, match=r"found a PSI-MITAB file"):
        read_biogrid_tab3(mitab)
    gaf = tmp_path / "interactions.tab3.txt"
    gaf.write_text("!gaf-version: 2.2\n")
    with pytest.raises(InputError, match=r"found a GAF 2\.2 annotation file"):
        read_biogrid_tab3(gaf)
    with pytest.raises(InputError, match=r"BioGRID system type 'all': expected one of \['both', 'genetic', "
                                         r"'physical'\]"):
        read_biogrid_tab3(gaf, system_type="all")
    with pytest.raises(InputError, match=r"BioGRID id column 'uniprot': expected one of"):
        read_biogrid_tab3(gaf, id_column="uniprot")
    zipped_name = tmp_path / "x.zip"
    zipped_name.write_text("plain")
    with pytest.raises(InputError, match=r"x\.zip: named \.zip but not zip-compressed: it looks like text "
                                         r"starting with 'plain'; rename it without \.zip"):
        read_biogrid_tab3(zipped_name)


@pytest.mark.parametrize("column, renamed", [("Organism ID Interactor A", "Organism Id Interactor A"),
                                             ("Experimental System Type", "Experimental system type")])
def test_tab3_with_a_renamed_column_names_it_and_the_closest_header(tmp_path, column, renamed):
    """A TAB3 file (37 columns) whose header had one column renamed is not
    TAB2 (24 columns, 'Organism Interactor A'): the missing column and the
    closest header present are named."""
    path = tmp_path / "BIOGRID-ORGANISM-Saccharomyces_cerevisiae_S288c-4.4.235.tab3.txt"
    path.write_text(tab3_text().replace(column, renamed, 1))
    with pytest.raises(InputError, match=rf"line 1: a BioGRID TAB3 header \(37 columns\) without column\(s\) "
                                         rf"'{column}' \(closest header present: '{renamed}'\)") as err:
        read_biogrid_tab3(path)
    assert "TAB2" not in str(err.value)
