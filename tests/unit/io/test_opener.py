"""One opener for every reader (biokernels.io.opener): a compressed file that
ends early or is corrupt is an InputError naming the file, what was read
before the damage, and what to do -- never a raw EOFError or zlib.error.

Each reader's file is written here in its public layout (GEO annot and
series matrix, GAF 2.2, OBO, BioGRID TAB3, a tab-separated edge list,
DepMap Model.csv and the PRISM matrix, CMap LINCS 2020 geneinfo_beta.txt
and GEO inst_info, MSigDB GMT, a samples x genes TSV), gzip-compressed as
published, then cut: the first 60 % of the compressed bytes are kept. The
content is large (> 64 KiB decompressed, rows of pseudo-random ids) so that
the cut lies past the first bytes that the readers sniff: the damage is met
while reading.
"""

from __future__ import annotations

import bz2
import gzip
import lzma
import re
import zipfile
import zlib

import numpy as np
import pytest

from biokernels.errors import InputError
from biokernels.io import biogrid, cmap, cohorts, depmap, geo, go, lincs2020, networks, pathways
from biokernels.io.opener import compression_of, open_binary, open_text

RNG = np.random.default_rng(27)
N = 4000
IDS = [f"{x:09d}" for x in RNG.integers(0, 10**9, N)]
TAB3 = ["#BioGRID Interaction ID", "Entrez Gene Interactor A", "Entrez Gene Interactor B",
        "BioGRID ID Interactor A", "BioGRID ID Interactor B", "Systematic Name Interactor A",
        "Systematic Name Interactor B", "Official Symbol Interactor A", "Official Symbol Interactor B",
        "Synonyms Interactor A", "Synonyms Interactor B", "Experimental System", "Experimental System Type",
        "Author", "Publication Source", "Organism ID Interactor A", "Organism ID Interactor B", "Throughput",
        "Score", "Modification", "Qualifications", "Tags", "Source Database", "SWISS-PROT Accessions Interactor A",
        "TREMBL Accessions Interactor A", "REFSEQ Accessions Interactor A", "SWISS-PROT Accessions Interactor B",
        "TREMBL Accessions Interactor B", "REFSEQ Accessions Interactor B", "Ontology Term IDs",
        "Ontology Term Names", "Ontology Term Categories", "Ontology Term Qualifier IDs",
        "Ontology Term Qualifier Names", "Ontology Term Types", "Organism Name Interactor A",
        "Organism Name Interactor B"]


def _annot():
    head = ["^Annotation", "!Annotation_platform = GPL96", "!platform_table_begin", "ID\tGene title\tGene symbol"]
    return "\n".join(head + [f"{i}_at\ttitle {i}\tG{i}" for i in IDS] + ["!platform_table_end"]) + "\n"


def _series_matrix():
    gsm = [f"GSM{i}" for i in range(1, 6)]
    q = "\t".join(f'"{g}"' for g in gsm)
    rows = [f'"{i}_at"\t' + "\t".join(f"{v:.3f}" for v in RNG.uniform(1, 9, 5)) for i in IDS]
    return "\n".join(['!Series_geo_accession\t"GSE99999"', f"!Sample_geo_accession\t{q}",
                      "!series_matrix_table_begin", f'"ID_REF"\t{q}', *rows, "!series_matrix_table_end"]) + "\n"


def _gaf():
    rows = [f"SGD\tS{i}\tSYM{i}\tinvolved_in\tGO:0008150\tPMID:1\tIDA\t\tP\tprotein {i}\tY{i}\tprotein\t"
            f"taxon:559292\t20240617\tSGD\t\t" for i in IDS]
    return "\n".join(["!gaf-version: 2.2", *rows]) + "\n"


def _obo():
    terms = [f"[Term]\nid: GO:{i[:7]}\nname: term {i}\nnamespace: biological_process\n" for i in IDS]
    return "format-version: 1.2\nontology: go\n\n" + "\n".join(terms)


def _tab3():
    rows = []
    for n, i in enumerate(IDS):
        v = {c: "-" for c in TAB3}
        v.update({"#BioGRID Interaction ID": str(n), "Entrez Gene Interactor A": i, "Entrez Gene Interactor B": i[::-1],
                  "Experimental System Type": "physical", "Organism ID Interactor A": "559292",
                  "Organism ID Interactor B": "559292"})
        rows.append("\t".join(v[c] for c in TAB3))
    return "\n".join(["\t".join(TAB3), *rows]) + "\n"


def _edges():
    return "protein_a\tprotein_b\tweight\n" + "".join(f"P{i}\tQ{i[::-1]}\t0.5\n" for i in IDS)


def _model_csv():
    return "ModelID,CellLineName,StrippedCellLineName,CCLEName\n" + "".join(
        f"ACH-{i},L{i},L{i},L{i}_LUNG\n" for i in IDS)


def _prism_matrix():
    cols = [f"BRD-K{j:08d}-001-01-1::2.5::HTS" for j in range(8)]
    return '"",' + ",".join(f'"{c}"' for c in cols) + "\n" + "".join(
        f'"ACH-{i}",' + ",".join(f"{v:.4f}" for v in RNG.normal(size=8)) + "\n" for i in IDS)


def _geneinfo():
    return "gene_id\tgene_symbol\tensembl_id\tgene_title\tgene_type\tsrc\tfeature_space\n" + "".join(
        f"{i}\tG{i}\tENSG{i}\tgene {i}\tprotein-coding\tNCBI\tlandmark\n" for i in IDS)


def _inst_info():
    return "inst_id\trna_plate\trna_well\tpert_id\tpert_iname\tpert_type\tpert_dose\tpert_dose_unit\tcell_id\n" + \
        "".join(f"P{i}:A01\tP{i}\tA01\tBRD-K{i[:8]}\tdrug\ttrt_cp\t10\tum\tMCF7\n" for i in IDS)


def _expression():
    return "sample\t" + "\t".join(f"G{j}" for j in range(20)) + "\n" + "".join(
        f"S{i}\t" + "\t".join(f"{v:.4f}" for v in RNG.normal(size=20)) + "\n" for i in IDS)


def _gmt():
    return "".join(f"SET_{i}\thttp://www.gsea-msigdb.org/{i}\tG{i}\tG{i[::-1]}\tG{i[1:]}\n" for i in IDS)


# name written, layout, reader
CASES = {
    "geo_platform": ("GPL96.annot.gz", _annot, geo.read_platform_annotation),
    "geo_series_matrix": ("GSE99999_series_matrix.txt.gz", _series_matrix, geo.read_series_matrix),
    "gaf": ("sgd.gaf.gz", _gaf, go.read_gaf),
    "obo": ("go-basic.obo.gz", _obo, go.read_obo),
    "biogrid": ("BIOGRID-ALL-4.4.235.tab3.txt.gz", _tab3, biogrid.read_biogrid_tab3),
    "edge_list": ("edges.tsv.gz", _edges, networks.read_edge_list),
    "depmap_models": ("Model.csv.gz", _model_csv, depmap.read_models),
    "prism_matrix": ("primary-screen-replicate-collapsed-logfold-change.csv.gz", _prism_matrix,
                     depmap._read_matrix),       # the matrix reader behind load_prism_primary
    "lincs2020_geneinfo": ("geneinfo_beta.txt.gz", _geneinfo, lincs2020.read_geneinfo),
    "geo_inst_info": ("GSE92742_Broad_LINCS_inst_info.txt.gz", _inst_info, cmap.read_sample_info),
    "gmt": ("h.all.v2023.2.Hs.symbols.gmt.gz", _gmt, pathways.read_gmt),
    "expression_tsv": ("expression.tsv.gz", _expression, cohorts.read_expression_tsv),
}


def _cut(path, text: str, keep: float = 0.6) -> int:
    """Write ``text`` gzip-compressed, keeping the first ``keep`` of the
    compressed bytes; return the number of complete lines those bytes hold."""
    raw = gzip.compress(text.encode())
    assert len(text) > 1 << 16          # larger than what the readers sniff
    cut = raw[: int(len(raw) * keep)]
    path.write_bytes(cut)
    return zlib.decompressobj(16 + zlib.MAX_WBITS).decompress(cut).count(b"\n")


@pytest.mark.parametrize("case", sorted(CASES))
def test_truncated_gzip_of_each_reader_is_an_input_error_naming_file_and_progress(tmp_path, case):
    name, layout, reader = CASES[case]
    path = tmp_path / name
    reader(_write_gz(tmp_path / ("whole_" + name), layout()))   # the whole file reads
    complete = _cut(path, layout())
    with pytest.raises(InputError) as err:
        reader(path)
    msg = str(err.value)
    # the file, what happened and what to do (the message standard of the project)
    assert msg.startswith(str(path)) and "truncated or corrupt" in msg and "fetch or copy it again" in msg
    # how far it got: a count of complete lines that the cut stream does hold (it cannot be more), and
    # more than none (the cut lies past the head the readers sniff)
    lines = int(re.search(r"after ([\d,]+) complete line", msg).group(1).replace(",", ""))
    assert 0 < lines <= complete


def _write_gz(path, text):
    path.write_bytes(gzip.compress(text.encode()))
    return path


def test_corrupt_streams_of_every_compression_are_input_errors(tmp_path):
    text = _edges().encode()
    # gzip: a wrong CRC in the trailer (gzip.BadGzipFile, an OSError)
    raw = bytearray(gzip.compress(text))
    raw[-8] ^= 0xFF
    bad_crc = tmp_path / "crc.tsv.gz"
    bad_crc.write_bytes(bytes(raw))
    # gzip: a damaged deflate block (zlib.error)
    raw = bytearray(gzip.compress(text))
    raw[len(raw) // 2: len(raw) // 2 + 64] = bytes(64)
    bad_block = tmp_path / "block.tsv.gz"
    bad_block.write_bytes(bytes(raw))
    # bzip2 and xz cut short (EOFError)
    short_bz2 = tmp_path / "short.tsv.bz2"
    short_bz2.write_bytes(bz2.compress(text)[:-100])
    short_xz = tmp_path / "short.tsv.xz"
    short_xz.write_bytes(lzma.compress(text)[:-100])
    # a zip member whose stored bytes were altered (zipfile.BadZipFile: bad CRC-32)
    member = tmp_path / "member.zip"
    with zipfile.ZipFile(member, "w", compression=zipfile.ZIP_STORED) as zf:
        zf.writestr("edges.tsv", text)
    raw = bytearray(member.read_bytes())
    at = raw.index(b"protein_a") + 2000
    raw[at] = ord("#") if raw[at] != ord("#") else ord("@")
    member.write_bytes(bytes(raw))
    for path, layer in [(bad_crc, "gzip"), (bad_block, "gzip"), (short_bz2, "bzip2"), (short_xz, "xz"),
                        (member, "zip")]:
        assert compression_of(path) == layer
        with pytest.raises(InputError, match=rf"^{re.escape(str(path))}.*the {layer}-compressed data cannot be "
                                             r"decompressed to its end .*truncated or corrupt"), \
                open_text(path) as fh:
            fh.read()
        with pytest.raises(InputError, match=re.escape(str(path))):    # and through a reader using the opener
            networks.read_edge_list(path)


def test_plain_and_compressed_files_read_the_same(tmp_path):
    text = _edges()
    plain = tmp_path / "e.tsv"
    plain.write_text(text)
    gz = _write_gz(tmp_path / "e.tsv.gz", text)
    xz = tmp_path / "e.tsv.xz"
    xz.write_bytes(lzma.compress(text.encode()))
    one = tmp_path / "e.zip"
    with zipfile.ZipFile(one, "w") as zf:
        zf.writestr("e.tsv", text)
    for p in (plain, gz, xz, one):
        with open_text(p) as fh:
            assert fh.read() == text
    assert compression_of(plain) is None
    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as zf:
        zf.writestr("a.tsv", text)
        zf.writestr("b.tsv", text)
    with pytest.raises(InputError, match=r"two\.zip: a zip archive of 2 files; name the one to read"):
        open_binary(two)
    with open_binary(two, member="b.tsv") as fh:
        assert fh.read().decode() == text
    with pytest.raises(InputError, match=r"nothing"):
        open_binary(tmp_path / "absent.tsv.gz")
