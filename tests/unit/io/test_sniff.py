"""biokernels.io.sniff: each kind of file written here in its real layout
(the bytes its producer writes: h5py, gzip, zipfile, openpyxl, pyarrow,
numpy, pickle, bz2 / lzma, GEO's and the Broad's text layouts, an S3 error
reply, a Git LFS pointer) and the description checked; then every reader
that refuses a file says what the sniffer says."""

from __future__ import annotations

import bz2
import gzip
import json
import lzma
import pickle
import zipfile

import h5py
import numpy as np
import pandas as pd
import pytest

from biokernels.errors import InputError
from biokernels.io import depmap, gctx, geo, networks
from biokernels.io.sniff import HEAD_BYTES, KINDS, Content, describe_content, sniff

SERIES_MATRIX = ('!Series_title\t"Breast cancer relapse"\n!Series_geo_accession\t"GSE2034"\n'
                 '!Series_platform_id\t"GPL96"\n\n!Sample_title\t"s1"\t"s2"\n!Sample_geo_accession\t"GSM1"\t"GSM2"\n'
                 '!series_matrix_table_begin\n"ID_REF"\t"GSM1"\t"GSM2"\n"1007_s_at"\t5.1\t6.2\n'
                 '!series_matrix_table_end\n')
ANNOT = ("^Annotation\n!Annotation_date = Aug 09 2016\n!Annotation_platform = GPL96\n"
         "#ID = ID from Platform data table\n!platform_table_begin\nID\tGene title\tGene symbol\n"
         "1007_s_at\tdiscoidin\tDDR1\n!platform_table_end\n")
SOFT = "^DATABASE = GeoMiame\n!Database_name = Gene Expression Omnibus (GEO)\n^SERIES = GSE2034\n"
HTML = ("<!DOCTYPE html>\n<html lang='en'><head><meta charset='utf-8'><title>404 Not Found</title></head>\n"
        "<body><h1>Not Found</h1></body></html>\n")
S3_ERROR = ('<?xml version="1.0" encoding="UTF-8"?>\n<Error><Code>NoSuchKey</Code><Message>The specified key '
            'does not exist.</Message><Key>lincs/level5.gctx</Key></Error>\n')
# PRISM's R-written CSV: quoted header, the matrix's first header field empty
PRISM_CSV = '"","BRD-A00077618-236-07-6::2.5::HTS","BRD-A00100033-001-08-9::2.5::HTS"\n"ACH-000001",-0.5,NA\n'


def write(tmp_path, name, data):
    path = tmp_path / name
    path.write_bytes(data if isinstance(data, bytes) else data.encode())
    return path


def test_every_kind_is_documented():
    assert {"hdf5", "gzip", "gct", "geo_series_matrix", "geo_soft", "html", "zip", "excel", "json", "tsv", "csv",
            "empty", "binary", "text"} <= set(KINDS)


# --- nothing there, empty ------------------------------------------------------------

def test_missing_folder_and_empty_files(tmp_path):
    assert sniff(tmp_path / "absent.csv").kind == "missing"
    assert sniff(tmp_path).kind == "folder"
    empty = write(tmp_path, "empty.csv", b"")
    c = sniff(empty)
    assert (c.kind, c.what) == ("empty", "an empty file (0 bytes)")
    # str() adds what to do
    assert describe_content(empty) == ("an empty file (0 bytes): the download or copy did not finish; fetch or "
                                       "copy it again")
    blank = write(tmp_path, "blank.tsv", "\n  \r\n\t\n")
    assert (sniff(blank).kind, sniff(blank).what) == ("empty", "an empty file (blank space only)")


# --- magic bytes ------------------------------------------------------------------------

def test_hdf5_at_byte_0_after_a_user_block_and_inside_gzip(tmp_path):
    plain = tmp_path / "level5.gctx"
    with h5py.File(plain, "w") as h5:
        h5.create_dataset("0/DATA/0/matrix", data=np.zeros((2, 3), np.float32))
    assert sniff(plain).kind == "hdf5"
    # h5py's user block: the signature moves to byte 512 (HDF5 spec, "Format Signature")
    blocked = tmp_path / "blocked.h5"
    with h5py.File(blocked, "w", userblock_size=512) as h5:
        h5["x"] = [1]
    assert blocked.read_bytes()[:8] != b"\x89HDF\r\n\x1a\n" and sniff(blocked).kind == "hdf5"
    gz = write(tmp_path, "level5.gctx", gzip.compress(plain.read_bytes()))
    c = sniff(gz)
    assert (c.kind, c.inner.kind) == ("gzip", "hdf5")
    assert c.what == "gzip-compressed data holding an HDF5 file (a GCTX matrix, or another HDF5 layout)"


def test_gzip_is_looked_into_and_damaged_gzip_is_said(tmp_path):
    gz = write(tmp_path, "GSE2034_series_matrix.txt.gz", gzip.compress(SERIES_MATRIX.encode()))
    c = sniff(gz)
    assert c.kind == "gzip" and c.body.kind == "geo_series_matrix"
    assert c.what == "gzip-compressed data holding a GEO series matrix (GSE2034)"
    twice = write(tmp_path, "twice.gz", gzip.compress(gzip.compress(b"a,b\n1,2\n")))
    assert sniff(twice).what.startswith("gzip-compressed data holding gzip-compressed data holding comma-separated")
    assert sniff(twice).what.endswith("(compressed twice?)")
    # a valid gzip header (RFC 1952: 1f 8b, CM=8) then a deflate block of the reserved type 3
    broken = write(tmp_path, "broken.gz", b"\x1f\x8b\x08\x00\x00\x00\x00\x00\x00\x03" + b"\xff" * 20)
    c = sniff(broken)
    assert c.kind == "gzip" and c.inner is None
    assert str(c).startswith("gzip-compressed data that cannot be decompressed (")
    assert str(c).endswith("the file is truncated or corrupt; fetch or copy it again")


def test_zip_members_and_excel(tmp_path):
    one = tmp_path / "BIOGRID-ORGANISM-4.4.235.tab3.zip"
    with zipfile.ZipFile(one, "w", zipfile.ZIP_DEFLATED) as zf:
        zf.writestr("Model.csv", "ModelID,CellLineName\nACH-000001,NIH:OVCAR-3\n")
    c = sniff(one)
    assert (c.kind, c.inner.kind, c.inner.columns) == ("zip", "csv", ("ModelID", "CellLineName"))
    assert str(c) == ("a ZIP archive whose Model.csv is comma-separated text (CSV) with 2 columns: 'ModelID', "
                      "'CellLineName': unzip it and give the file inside")
    two = tmp_path / "two.zip"
    with zipfile.ZipFile(two, "w") as zf:
        zf.writestr("a.txt", "x\ty\n")
        zf.writestr("b.gaf", "!gaf-version: 2.2\n")
    assert sniff(two).what == "a ZIP archive of 2 files (a.txt, b.gaf)"
    assert sniff(two, member="b.gaf").what == "a ZIP archive whose b.gaf is a GAF 2.2 annotation file"
    assert sniff(two, member="c.txt").what == "a ZIP archive of 2 files (a.txt, b.gaf), none named 'c.txt'"
    empty = tmp_path / "empty.zip"
    zipfile.ZipFile(empty, "w").close()              # only the end-of-central-directory record, PK 05 06
    assert (sniff(empty).kind, sniff(empty).what) == ("zip", "an empty ZIP archive (no file inside)")
    # a workbook as openpyxl (Excel's own layout) writes it, named as the CSV it should have been
    xlsx = tmp_path / "Model.csv"
    pd.DataFrame({"ModelID": ["ACH-000001"]}).to_excel(xlsx, engine="openpyxl", index=False)
    assert str(sniff(xlsx)) == ("an Excel workbook (.xlsx): export the sheet as CSV or tab-separated text "
                                "(File > Save As) and give that file")
    # Excel 97-2003: the OLE2 compound-file signature (MS-CFB 2.2) then its header
    xls = write(tmp_path, "old.csv", b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1" + bytes(504))
    assert sniff(xls).kind == "excel" and ".xls" in sniff(xls).what
    # a truncated archive cannot be listed: still a ZIP, with what to do
    cut = write(tmp_path, "cut.zip", one.read_bytes()[:40])
    c = sniff(cut)
    assert c.kind == "zip" and c.what == "a ZIP archive" and "cannot be listed here" in c.advice


def test_other_compressions_and_binary_layouts(tmp_path):
    text = b"gene\ts1\ng1\t1\n"
    assert sniff(write(tmp_path, "a.bz2", bz2.compress(text))).kind == "bzip2"
    assert sniff(write(tmp_path, "a.xz", lzma.compress(text))).kind == "xz"
    pq = tmp_path / "table.csv"
    pd.DataFrame({"a": [1, 2]}).to_parquet(pq, engine="pyarrow")
    assert sniff(pq).kind == "parquet"
    npy = tmp_path / "x.gctx"
    np.save(npy, np.zeros((2, 2)))   # np.save adds .npy
    assert sniff(tmp_path / "x.gctx.npy").kind == "npy"
    pk = write(tmp_path, "x.pkl", pickle.dumps(pd.DataFrame({"a": [1]}), protocol=5))
    assert sniff(pk).kind == "pickle"
    # 256 byte values: NUL and control bytes, no signature
    blob = write(tmp_path, "blob.csv", bytes(range(256)) * 4)
    c = sniff(blob)
    assert c.kind == "binary" and c.what == "binary data starting with bytes 00 01 02 03 04 05 06 07"
    # high bytes that are not UTF-8 and no NUL: binary too (not "text")
    rng = np.random.default_rng(0)
    noise = write(tmp_path, "noise.csv", bytes(rng.integers(128, 256, 4000, dtype=np.uint8)))
    assert sniff(noise).kind == "binary"


# --- text layouts ----------------------------------------------------------------------------

def test_gct_versions(tmp_path):
    gct12 = write(tmp_path, "a.gct", "#1.2\n1\t2\nName\tDescription\ts1\ts2\ng1\tna\t1.0\t2.0\n")
    gct13 = write(tmp_path, "b.gct", "\ufeff#1.3\n1\t2\t0\t0\nid\ts1\ts2\ng1\t1\t2\n")   # with a BOM
    assert (sniff(gct12).kind, sniff(gct12).what) == ("gct", "a GCT 1.2 text matrix")
    assert (sniff(gct13).kind, sniff(gct13).what) == ("gct", "a GCT 1.3 text matrix")
    odd = write(tmp_path, "c.gct", "#1.4\n1\t1\t0\t0\n")
    assert sniff(odd).kind == "text" and "unknown version '#1.4'" in sniff(odd).what
    gz = write(tmp_path, "d.gct.gz", gzip.compress(gct12.read_bytes()))
    assert sniff(gz).inner.kind == "gct"


def test_geo_layouts(tmp_path):
    assert str(sniff(write(tmp_path, "sm.txt", SERIES_MATRIX))) == "a GEO series matrix (GSE2034)"
    # a series matrix starting with sample lines (no series header) is one too
    assert sniff(write(tmp_path, "s.txt", '!Sample_geo_accession\t"GSM1"\n')).kind == "geo_series_matrix"
    assert str(sniff(write(tmp_path, "GSE2034_family.soft", SOFT))) == \
        "a GEO SOFT file (first record '^DATABASE = GeoMiame')"
    assert str(sniff(write(tmp_path, "GPL96.annot", ANNOT))) == "a GEO platform table (GPL96)"
    platform_soft = "^PLATFORM = GPL570\n!Platform_title = HG-U133_Plus_2\n!platform_table_begin\nID\tSymbol\n"
    assert str(sniff(write(tmp_path, "GPL570.soft", platform_soft))) == "a GEO platform table (GPL570)"
    miniml = ('<?xml version="1.0" encoding="UTF-8" standalone="no"?>\n<MINiML xmlns="http://www.ncbi.nlm.nih.gov/'
              'geo/info/MINiML" version="0.5.0">\n')
    assert sniff(write(tmp_path, "GSE2034_family.xml", miniml)).what == "a GEO MINiML (XML) file"


def test_html_xml_json_and_git_lfs(tmp_path):
    c = sniff(write(tmp_path, "viability.csv", HTML))
    assert c.kind == "html"
    assert str(c) == ("an HTML page (an error or sign-in page saved in place of the data?) titled '404 Not Found': "
                      "check the URL and download it again")
    c = sniff(write(tmp_path, "level5.gctx", S3_ERROR))
    assert c.kind == "xml" and c.what.startswith("an XML document holding an error reply (NoSuchKey)")
    assert sniff(write(tmp_path, "x.xml", "<?xml version='1.0'?>\n<catalog><book/></catalog>\n")).what == \
        "an XML document (root element <catalog>)"
    reply = write(tmp_path, "model.csv", json.dumps({"error": "Not authorised", "status": 403}))
    assert (sniff(reply).kind, sniff(reply).what) == ("json", "JSON text (an object with keys ['error', 'status'])")
    lfs = write(tmp_path, "level5.gctx", "version https://git-lfs.github.com/spec/v1\noid sha256:4d7a\nsize 12345\n")
    assert str(sniff(lfs)) == "a Git LFS pointer, not the file itself: fetch the real file (git lfs pull)"


def test_annotation_and_network_layouts(tmp_path):
    assert sniff(write(tmp_path, "sgd.gaf", "!gaf-version: 2.2\n!generated-by: SGD\n")).what == \
        "a GAF 2.2 annotation file"
    assert sniff(write(tmp_path, "go.obo", "format-version: 1.2\ndata-version: releases/2024-01-17\n")).kind == "obo"
    tab3 = "#BioGRID Interaction ID\tEntrez Gene Interactor A\t" + "\t".join(f"c{i}" for i in range(14)) + \
        "\tOrganism ID Interactor A\n"
    assert sniff(write(tmp_path, "b.tab3.txt", tab3)).what == "a BioGRID TAB3 file (17 columns)"
    assert sniff(write(tmp_path, "links.txt", "protein1 protein2 combined_score\n")).kind == "string_links"


def test_separated_text_reports_delimiter_and_columns(tmp_path):
    c = sniff(write(tmp_path, "lfc.csv", PRISM_CSV))
    assert (c.kind, c.delimiter, c.n_columns) == ("csv", ",", 3)
    assert c.columns == ("", "BRD-A00077618-236-07-6::2.5::HTS", "BRD-A00100033-001-08-9::2.5::HTS")
    assert c.what == ("comma-separated text (CSV) with 3 columns: '', 'BRD-A00077618-236-07-6::2.5::HTS', "
                      "'BRD-A00100033-001-08-9::2.5::HTS'")
    c = sniff(write(tmp_path, "siginfo_beta.txt", "sig_id\tpert_id\tcell_iname\tpert_idose\nS1\tBRD-1\tA375\t10 uM\n"))
    assert (c.kind, c.delimiter, c.what) == ("tsv", "\t", "tab-separated text with 4 columns: 'sig_id', 'pert_id', "
                                                          "'cell_iname', 'pert_idose'")
    # a European CSV (Excel with a decimal comma writes ';')
    c = sniff(write(tmp_path, "eu.csv", "drug;cell;value\nA;PC3;0,5\n"))
    assert (c.kind, c.delimiter, c.n_columns) == ("ssv", ";", 3)
    # more than 6 columns: the first 6 shown, then "..."
    c = sniff(write(tmp_path, "wide.csv", ",".join(f"c{i}" for i in range(10)) + "\n"))
    assert c.what.endswith("with 10 columns: 'c0', 'c1', 'c2', 'c3', 'c4', 'c5', ...") and len(c.columns) == 10
    # a header longer than what is read: a lower bound, the cut last name not shown
    names = [f"BRD-K{i:08d}-001-01-1::2.5::HTS" for i in range(3000)]   # 32 bytes and a comma each: 99 KB
    c = sniff(write(tmp_path, "huge.csv", ",".join(names) + "\n" + "0," * 2999 + "0\n"))
    assert c.kind == "csv" and c.what.startswith("comma-separated text (CSV) with at least ")
    assert c.n_columns == HEAD_BYTES // 33 and c.columns[-1] == names[c.n_columns - 1]


def test_text_that_is_not_utf8_or_is_utf16(tmp_path):
    latin = write(tmp_path, "v.csv", "drug,cell\nA,caf\xe9\n".encode("latin-1"))   # é is byte 15
    c = sniff(latin)
    assert c.kind == "csv" and c.not_utf8 == "invalid continuation byte at byte 15"
    assert c.what.endswith("(not UTF-8: invalid continuation byte at byte 15)")
    # Excel's "Unicode Text": UTF-16 LE with a byte-order mark, tab-separated
    u16 = write(tmp_path, "export.txt", "drug\tcell\nA\tPC3\n".encode("utf-16"))
    c = sniff(u16)
    assert (c.kind, c.body.kind, c.body.columns) == ("utf16", "tsv", ("drug", "cell"))
    assert "save it as UTF-8" in c.advice


def test_plain_text(tmp_path):
    assert str(sniff(write(tmp_path, "x.zip", "plain"))) == "text starting with 'plain'"
    assert isinstance(sniff(write(tmp_path, "y.txt", "hello\n")), Content)


# --- the readers say what the sniffer says --------------------------------------------------

@pytest.mark.parametrize("name, reader", [
    ("m.gctx", gctx.matrix_format),
    ("GSE1_series_matrix.txt", geo.read_series_matrix),
    ("Model.csv", lambda p: depmap.check_table_file(p, "a model table")),
    ("edges.txt", lambda p: networks.open_text(p, "an edge list").__enter__()),
])
def test_readers_refuse_an_html_page_with_the_sniffers_words(tmp_path, name, reader):
    path = write(tmp_path, name, HTML)
    with pytest.raises(InputError) as err:
        reader(path)
    text = str(err.value)
    assert text.startswith(str(path)) and sniff(path).what in text and "check the URL and download it again" in text


@pytest.mark.parametrize("name, reader", [
    ("m.gctx", gctx.matrix_format),
    ("Model.csv", lambda p: depmap.check_table_file(p, "a model table")),
    ("edges.txt", lambda p: networks.open_text(p, "an edge list").__enter__()),
])
def test_readers_refuse_an_excel_workbook_with_the_sniffers_words(tmp_path, name, reader):
    path = tmp_path / name
    pd.DataFrame({"a": [1]}).to_excel(path, engine="openpyxl", index=False)
    with pytest.raises(InputError, match=r"an Excel workbook \(\.xlsx\): export the sheet as CSV"):
        reader(path)


def test_real_variants_of_geo_go_and_biogrid_files_are_named(tmp_path):
    """Issue #27: files as their producers write them, told for what they are."""
    gds = "^DATABASE = Geo\n!Database_name = Gene Expression Omnibus (GEO)\n^DATASET = GDS507\n" \
          "!dataset_platform = GPL97\n"
    assert str(sniff(write(tmp_path, "GDS507.soft", gds))) == "a GEO DataSet (GDS) SOFT file (GDS507)"
    c = sniff(write(tmp_path, "sm.csv", '"!Series_title","A series"\n"!Sample_geo_accession","GSM1","GSM2"\n'))
    assert c.kind == "geo_series_matrix" and c.what == "a comma-separated GEO series matrix"
    # SGD, MGI, PomBase, ... write comment lines before the version line
    sgd = "!generated-by: SGD\n!date-generated: 2024-06-17\n!URL: https://www.yeastgenome.org\n" \
          "!gaf-version: 2.2\n!\nSGD\tS000000001\tTFC3\n"
    assert sniff(write(tmp_path, "sgd.gaf", sgd)).what == "a GAF 2.2 annotation file"
    # a TAB3 header (37 columns) with its organism column renamed is still TAB3-like, not TAB2 (24 columns)
    cols = ["#BioGRID Interaction ID"] + [f"c{i}" for i in range(35)] + ["Organism Id Interactor A"]
    assert sniff(write(tmp_path, "b.tab3.txt", "\t".join(cols) + "\n")).what == "a BioGRID TAB3 file (37 columns)"
