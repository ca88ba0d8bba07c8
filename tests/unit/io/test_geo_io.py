"""GEO series matrices, platform annotation tables and survival fields
(biokernels.io.geo) and the geo_series_matrix cohort (biokernels.io.cohorts).

Every fixture is written here in GEO's public layout: a series matrix has
quoted ``!Series_*``/``!Sample_*`` values, repeated
``!Sample_characteristics_ch1`` lines whose k-th cell need not hold the same
key for every sample, a quoted ``"ID_REF"`` header with quoted GSM ids and
probe ids, ``null`` or empty cells for missing values; platform tables have
``#`` comment lines (GEO's full-table download) or the ``^``/``!`` preamble
and ``!platform_table_begin``/``end`` of GPLnnn.annot.gz, multi-gene probes
``A /// B`` (SOFT) or ``A///B`` (annot) and Affymetrix's ``---``. Each value
asserted is planted in those files.
"""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pandas as pd
import pytest

from biokernels.errors import InputError
from biokernels.io import geo
from biokernels.io.cohorts import COHORT_READERS, geo_settings_problems, read_geo_cohort
from fakes.geo import write_annot, write_full_table, write_series_matrix


# --- a planted cohort ------------------------------------------------------------------------
# Survival (t.rfs days, e.rfs), chosen around the 5-year horizon (1826 days):
SURV = {"GSM1": ("1000", "1"),    # relapse at 2.7 y -> 1
        "GSM2": ("1826", "1"),    # relapse exactly at the horizon -> 1 ("<= 5 years")
        "GSM3": ("1827", "1"),    # relapse one day later -> 0 (followed > 5 years without relapse)
        "GSM4": ("1826", "0"),    # censored at the horizon -> excluded (unknown)
        "GSM5": ("1827", "0"),    # censored one day after -> 0
        "GSM6": ("3000", "0"),    # -> 0
        "GSM7": ("NA", "0"),      # no time -> excluded, no endpoint
        "GSM8": ("500", "1")}     # -> 1
SAMPLES = list(SURV)
RNG = np.random.default_rng(7)
VALUES = {p: RNG.uniform(100, 5000, len(SAMPLES)).round(1) for p in
          ["p1_at", "p2_at", "p3_at", "p4_at", "p5_at", "p6_at", "p7_at", "p8_at", "p9_at"]}
VALUES["p1_at"] += 6000          # p1 brighter than p2: max_mean keeps p1 for G1
# annotation: p7 absent from the platform table
PLATFORM = [("p1_at", "G1"), ("p2_at", "G1"), ("p3_at", "G2"), ("p4_at", "A /// B"), ("p5_at", "---"),
            ("p6_at", ""), ("p8_at", "G3"), ("p9_at", "G4")]


def _cells(probe):
    cells = [f"{v:.1f}" for v in VALUES[probe]]
    if probe == "p8_at":
        cells[1] = "null"    # GSM2 (labelled): the probe goes under drop_probes
    if probe == "p9_at":
        cells[6] = ""        # GSM7 (excluded, no endpoint): no effect on the labelled samples
    return cells


def _characteristics():
    # the t.rfs / e.rfs cells are on different lines for GSM3 (GEO lines are per position, not per key)
    line1, line2, line3 = [], [], []
    for g in SAMPLES:
        t, e = SURV[g]
        if g == "GSM3":
            line1.append(f"e.rfs: {e}"), line2.append(f"t.rfs: {t}"), line3.append("")
        else:
            line1.append(f"t.rfs: {t}"), line2.append(f"e.rfs: {e}"), line3.append("er: 1")
    return [line1, line2, line3]


@pytest.fixture
def cohort_files(tmp_path):
    sm = write_series_matrix(tmp_path / "GSE99999_series_matrix.txt.gz", SAMPLES, _characteristics(),
                             [(p, _cells(p)) for p in VALUES])
    gpl = write_full_table(tmp_path / "GPL96-tbl.txt", PLATFORM)
    return sm, gpl


# --- series matrix ---------------------------------------------------------------------------

def test_series_matrix_values_metadata_and_missing_cells(cohort_files):
    sm = geo.read_series_matrix(cohort_files[0])
    assert sm.sample_ids == SAMPLES
    assert sm.series["geo_accession"] == ["GSE99999"] and sm.platform_id == "GPL96"
    # a repeated !Series_ field keeps every line; a quoted tab stays inside its value
    assert sm.series["summary"] == ["First paragraph, with a \ttab inside quotes.", "Second paragraph."]
    assert sm.samples.loc["GSM2", "title"] == "tumor 2"
    assert sm.expression.shape == (9, 8) and list(sm.expression.columns) == SAMPLES
    assert sm.expression.loc["p3_at", "GSM5"] == VALUES["p3_at"][4]
    assert np.isnan(sm.expression.loc["p8_at", "GSM2"]) and np.isnan(sm.expression.loc["p9_at", "GSM7"])
    assert sm.missing_values == 2                                  # the planted null and empty cell
    assert sm.probe_lines[0] == sm.table_line + 1
    assert len(sm.characteristics) == 3 and sm.characteristics[0][1][0] == "t.rfs: 1000"
    table = geo.characteristics_table(sm)
    assert table.loc["GSM3", "t.rfs"] == "1827" and table.loc["GSM1", "t.rfs"] == "1000"
    assert pd.isna(table.loc["GSM3", "er"]) and table.loc["GSM1", "er"] == "1"


def test_plain_gzip_and_extensionless_download_read_the_same(tmp_path, cohort_files):
    text = gzip.decompress(cohort_files[0].read_bytes())
    plain = tmp_path / "GSE99999_series_matrix.txt"
    plain.write_bytes(text)
    download = tmp_path / "cohorts.a.series_matrix_path"       # the workflow's download name: gzip, no suffix
    download.write_bytes(cohort_files[0].read_bytes())
    a, b, c = (geo.read_series_matrix(p).expression for p in (cohort_files[0], plain, download))
    pd.testing.assert_frame_equal(a, b)
    pd.testing.assert_frame_equal(a, c)


def test_extra_na_values(tmp_path):
    p = write_series_matrix(tmp_path / "s.txt", ["GSM1", "GSM2"], [], [("a", ["1.5", "-666"]), ("b", ["2", "3"])])
    assert geo.read_series_matrix(p).expression.loc["a", "GSM2"] == -666.0
    sm = geo.read_series_matrix(p, na_values=["-666"])
    assert np.isnan(sm.expression.loc["a", "GSM2"]) and sm.missing_values == 1


def test_log2_rule_of_geo2r():
    assert geo.log2_needed(np.array([120.0, 800.0, 4000.0, 20000.0]))     # MAS5 signals: q99 > 100
    assert not geo.log2_needed(np.linspace(2.0, 14.0, 50))              # RMA log2 values
    assert geo.log2_needed(np.linspace(1.0, 80.0, 100))                  # q99 < 100 but range > 50, q25 > 0
    assert not geo.log2_needed(np.linspace(-40.0, 60.0, 100))            # range > 50 but q25 <= 0
    assert not geo.log2_needed(np.array([np.nan]))


# --- errors: file, line, field, what the file looks like -------------------------------------------

def test_soft_html_and_fake_gzip_are_described(tmp_path):
    soft = tmp_path / "GSE99999_family.soft"
    soft.write_text("^DATABASE = GeoMiame\n!Database_name = Gene Expression Omnibus (GEO)\n^SERIES = GSE99999\n")
    with pytest.raises(InputError, match=r"GSE99999_family.soft, line 1: .*looks like a GEO SOFT file"):
        geo.read_series_matrix(soft)
    html = tmp_path / "GSE1_series_matrix.txt"
    html.write_text("<!DOCTYPE html>\n<html><head><title>404 Not Found</title></head></html>\n")
    with pytest.raises(InputError, match=r"looks like an HTML page"):
        geo.read_series_matrix(html)
    fake = tmp_path / "GSE1_series_matrix.txt.gz"
    fake.write_text("<html><body>Service unavailable</body></html>\n")
    with pytest.raises(InputError, match=r"GSE1_series_matrix.txt.gz: named .gz but not gzip-compressed; it looks "
                                         r"like an HTML page"):
        geo.read_series_matrix(fake)
    with pytest.raises(InputError, match=r"nothing"):
        geo.read_series_matrix(tmp_path / "absent.txt.gz")


def test_truncated_files(tmp_path, cohort_files):
    text = gzip.decompress(cohort_files[0].read_bytes()).decode()
    cut = tmp_path / "cut.txt"
    cut.write_text(text[: text.index("!series_matrix_table_end")])
    with pytest.raises(InputError, match=r"cut.txt: no '!series_matrix_table_end'.*truncated"):
        geo.read_series_matrix(cut)
    raw = cohort_files[0].read_bytes()
    short = tmp_path / "short.txt.gz"
    short.write_bytes(raw[: len(raw) - 40])
    with pytest.raises(InputError, match=r"short.txt.gz: .*cannot be decompressed.*truncated"):
        geo.read_series_matrix(short)


def test_table_errors_name_line_probe_and_sample(tmp_path):
    ids = ["GSM1", "GSM2", "GSM3"]
    p = write_series_matrix(tmp_path / "a.txt", ids, [], [("x_at", ["1", "2", "3"]), ("y_at", ["1", "2"])])
    # line numbers: 7 series lines + blank + 7 sample lines + begin (16) + header (17): x_at 18, y_at 19
    with pytest.raises(InputError, match=r"a.txt, line 19: 3 field\(s\), expected 4 .*probe 'y_at'"):
        geo.read_series_matrix(p)
    p = write_series_matrix(tmp_path / "b.txt", ids, [], [("x_at", ["1", "2", "3"]), ("y_at", ["1", "n/d", "3"])])
    with pytest.raises(InputError, match=r"b.txt, line 19, column 'GSM2' \(probe 'y_at'\): expected a number or "
                                         r"null, got 'n/d'"):
        geo.read_series_matrix(p)
    p = write_series_matrix(tmp_path / "c.txt", ids, [], [("x_at", ["1", "2", "3"]), ("x_at", ["1", "2", "3"])])
    with pytest.raises(InputError, match=r"c.txt, lines 18 and 19: probe 'x_at' appears twice"):
        geo.read_series_matrix(p)
    p = write_series_matrix(tmp_path / "d.txt", ids, [], [("x_at", ["1", "2", "3"])],
                            header_ids=["GSM1", "GSM3", "GSM2"])
    with pytest.raises(InputError, match=r"d.txt, line 17: the table's sample columns differ.*other order"):
        geo.read_series_matrix(p)
    p = write_series_matrix(tmp_path / "e.txt", ids, [["t: 1", "t: 2"]], [("x_at", ["1", "2", "3"])])
    with pytest.raises(InputError, match=r"e.txt, line 14: !Sample_characteristics_ch1 has 2 value\(s\), "
                                         r"expected 3"):
        geo.read_series_matrix(p)
    p = write_series_matrix(tmp_path / "f.txt", ids, [], [])
    with pytest.raises(InputError, match=r"f.txt, line 17: .*header but no probe rows"):
        geo.read_series_matrix(p)


def test_characteristic_by_key_regex_and_conflicts(cohort_files, tmp_path):
    sm = geo.read_series_matrix(cohort_files[0])
    t, lines = geo.characteristic_values(sm, key="T.RFS ")                 # case and spaces ignored
    assert t.to_dict() == {g: SURV[g][0] for g in SAMPLES}
    assert lines["GSM3"] == sm.characteristics[1][0] and lines["GSM1"] == sm.characteristics[0][0]
    e, _ = geo.characteristic_values(sm, regex=r"^e\.rfs:\s*(\d)$")
    assert e.to_dict() == {g: SURV[g][1] for g in SAMPLES}
    with pytest.raises(InputError, match=r"time_key: no sample has .*'t\.dmfs'; the keys found are "
                                         r"\['e\.rfs', 'er', 't\.rfs'\]"):
        geo.characteristic_values(sm, key="t.dmfs", field_name="time_key")
    with pytest.raises(InputError, match=r"2 capturing group"):
        geo.characteristic_values(sm, regex=r"(t)\.(rfs)")
    p = write_series_matrix(tmp_path / "dup.txt", ["GSM1", "GSM2"], [["t: 1", "t: 2"], ["t: 1", "t: 3"]],
                            [("x", ["1", "2"])])
    with pytest.raises(InputError, match=r"dup.txt, lines 14 and 15: sample GSM2: key 't' matches two values "
                                         r"'2' and '3'"):
        geo.characteristic_values(geo.read_series_matrix(p), key="t")


# --- platform tables ------------------------------------------------------------------------------

def test_full_table_with_comments_multi_gene_and_empty_symbols(cohort_files):
    ann = geo.read_platform_annotation(cohort_files[1])
    assert ann.symbol_col == "Gene Symbol" and ann.accession is None
    assert ann.symbols.to_dict() == {"p1_at": "G1", "p2_at": "G1", "p3_at": "G2", "p8_at": "G3", "p9_at": "G4"}
    assert ann.counts == {"platform_probes": 8, "probes_without_symbol": 2, "probes_multi_gene": 1,
                          "platform_probes_kept": 5}
    first = geo.read_platform_annotation(cohort_files[1], multi_gene="first")
    assert first.symbols["p4_at"] == "A" and first.counts["probes_multi_gene"] == 1


def test_annot_file_layout(tmp_path):
    p = write_annot(tmp_path / "GPL96.annot.gz", [("1007_s_at", "MIR4640///DDR1"), ("1053_at", "RFC2"),
                                                   ("117_at", "HSPA6"), ("121_at", "")])
    ann = geo.read_platform_annotation(p)
    assert ann.accession == "GPL96" and ann.symbol_col == "Gene symbol"
    assert ann.symbols.to_dict() == {"1053_at": "RFC2", "117_at": "HSPA6"}
    assert ann.counts["probes_multi_gene"] == 1 and ann.counts["probes_without_symbol"] == 1


def test_platform_errors(tmp_path, cohort_files):
    with pytest.raises(InputError, match=r"expected a GEO platform annotation table; the file looks like a GEO "
                                         r"series matrix"):
        geo.read_platform_annotation(cohort_files[0])
    tbl = tmp_path / "GPL96-tbl-1.txt"       # MINiML: no header line
    tbl.write_text("1007_s_at\tU48705\tDDR1\n1053_at\tM87338\tRFC2\n")
    with pytest.raises(InputError, match=r"GPL96-tbl-1.txt, line 1: no column 'ID'.*MINiML.*no header"):
        geo.read_platform_annotation(tbl)
    nosym = write_full_table(tmp_path / "g.txt", [("a", "X")], symbol_col="Gene_Name")
    with pytest.raises(InputError, match=r"g.txt, line 4: no gene symbol column .*set symbol_col"):
        geo.read_platform_annotation(nosym)
    assert geo.read_platform_annotation(nosym, symbol_col="Gene_Name").symbols.to_dict() == {"a": "X"}
    dup = write_full_table(tmp_path / "d.txt", [("a", "X"), ("b", "Y"), ("a", "Z")])
    with pytest.raises(InputError, match=r"d.txt, lines 5 and 7: probe 'a' appears twice"):
        geo.read_platform_annotation(dup)
    cut = tmp_path / "cut.annot"
    cut.write_text("^Annotation\n!Annotation_platform = GPL96\n!platform_table_begin\nID\tGene symbol\na\tX\n")
    with pytest.raises(InputError, match=r"no '!platform_table_end'.*truncated"):
        geo.read_platform_annotation(cut)


# --- the 5-year label ---------------------------------------------------------------------------------

def test_cohort_labels_counts_and_collapse(cohort_files):
    X, y, counts = read_geo_cohort(*cohort_files, time_key="t.rfs", event_key="e.rfs", time_unit="days")
    # PIMKL's Table S1 split: event at most 5 years -> 1, beyond 5 years -> 0; censored within 5 years: excluded
    assert y.to_dict() == {"GSM1": 1, "GSM2": 1, "GSM3": 0, "GSM5": 0, "GSM6": 0, "GSM8": 1}
    assert counts == {"samples_in_matrix": 8, "probes_in_matrix": 9, "values_missing": 2, "log2_applied": 1,
                      "values_nonpositive": 0, "platform_probes": 8, "probes_without_symbol": 2,
                      "probes_multi_gene": 1, "platform_probes_kept": 5, "samples": 8, "positive": 3,
                      "negative": 3, "censored_before_horizon": 1, "no_endpoint": 1, "probes_with_missing": 1,
                      "samples_with_nan": 0, "probes_not_in_platform": 1, "probes": 8, "probes_without_gene": 4,
                      "genes": 3, "genes_with_several_probes": 1, "probes_collapsed": 1, "samples_kept": 6}
    assert list(X.columns) == ["G1", "G2", "G4"]       # G3's only probe has a null in a labelled sample
    kept = [SAMPLES.index(g) for g in y.index]
    np.testing.assert_allclose(X["G1"], np.log2(VALUES["p1_at"][kept]))   # the brighter probe (max_mean)
    np.testing.assert_allclose(X["G4"], np.log2(VALUES["p9_at"][kept]))   # its empty cell was GSM7's


@pytest.mark.parametrize("unit, cases", [
    ("months", {"60": ("1", 1), "60.5": ("1", 0), "59.9": ("0", None), "60.1": ("0", 0), "12": ("1", 1)}),
    ("years", {"5": ("1", 1), "5.01": ("1", 0), "4.99": ("0", None), "7": ("0", 0), "1.5": ("1", 1)}),
])
def test_five_year_boundary_in_each_unit(tmp_path, unit, cases):
    ids = [f"GSM{i}" for i in range(1, len(cases) + 1)]
    chars = [[f"time: {t}" for t in cases], [f"event: {e}" for e, _ in cases.values()]]
    table = [(f"{g}_at", [f"{100 + 37 * i + 11 * j:.1f}" for j in range(len(ids))]) for i, g in enumerate("ab")]
    sm = write_series_matrix(tmp_path / "s.txt", ids, chars, table)
    gpl = write_full_table(tmp_path / "g.txt", [("a_at", "A"), ("b_at", "B")])
    _, y, counts = read_geo_cohort(sm, gpl, time_key="time", event_key="event", time_unit=unit)
    want = {g: lab for g, (_, lab) in zip(ids, cases.values()) if lab is not None}
    assert y.to_dict() == want and counts["censored_before_horizon"] == 1


def test_regex_event_map_and_clinical_tables(tmp_path):
    ids = ["GSM11", "GSM12", "GSM13", "GSM14"]
    table = [("a_at", ["7.0", "8.5", "9.1", "6.2"]), ("b_at", ["5.5", "5.0", "4.1", "5.2"])]
    chars = [["DFS TIME (yrs): 2.0", "DFS TIME (yrs): 9.5", "DFS TIME (yrs): 3.0", "DFS TIME (yrs): 6.0"],
             ["DFS EVENT (0=censored; 1=event): yes", "DFS EVENT (0=censored; 1=event): no",
              "DFS EVENT (0=censored; 1=event): YES", "DFS EVENT (0=censored; 1=event): no"]]
    sm = write_series_matrix(tmp_path / "s.txt", ids, chars, table)
    gpl = write_full_table(tmp_path / "g.txt", [("a_at", "A"), ("b_at", "B")])
    X, y, counts = read_geo_cohort(sm, gpl, time_key="DFS TIME (yrs)", event_regex=r"^DFS EVENT[^:]*:\s*(\S+)$",
                                   event_map={"yes": 1, "no": 0}, time_unit="years")
    assert y.to_dict() == {"GSM11": 1, "GSM12": 0, "GSM13": 1, "GSM14": 0}
    assert counts["log2_applied"] == 0                                     # log2 values: left as they are
    assert X.loc["GSM12", "A"] == 8.5
    with pytest.raises(InputError, match=r"s.txt, line 15: sample GSM11: event_regex .*expected 0 or 1, got 'yes'"):
        read_geo_cohort(sm, gpl, time_key="DFS TIME (yrs)", event_regex=r"^DFS EVENT[^:]*:\s*(\S+)$",
                        time_unit="years")
    # a clinical TSV (# comments, the GSM column found by itself; one matrix sample lacks a row, one row
    # is of a sample not in the matrix)
    tsv = tmp_path / "clinical.txt"
    tsv.write_text("# PID = patient\n# relapse (1=True)\nPID\tGEO asscession number\ttime to relapse or last "
                   "follow-up (months)\trelapse (1=True)\n1\tGSM11\t20\t1\n2\tGSM12\t100\t0\n3\tGSM13\t30\t0\n"
                   "4\tGSM99\t10\t1\n")
    _, y, counts = read_geo_cohort(sm, gpl, clinical_path=tsv, time_key="time to relapse or last follow-up (months)",
                                   event_key="relapse (1=True)", time_unit="months")
    assert y.to_dict() == {"GSM11": 1, "GSM12": 0}
    assert (counts["samples_without_clinical_row"], counts["clinical_rows_not_in_matrix"],
            counts["censored_before_horizon"], counts["no_endpoint"]) == (1, 1, 1, 1)
    # the same table inside a family SOFT's series record (GSE2034's layout)
    soft = tmp_path / "GSE99999_family.soft.gz"
    body = tsv.read_text().split("\n", 2)[2]
    with gzip.open(soft, "wt") as fh:
        fh.write("^DATABASE = GeoMiame\n^SERIES = GSE99999\n!Series_title = planted\n"
                 "!series_table_begin = Patient clinical parameters\n" + body + "!series_table_end\n"
                 "^PLATFORM = GPL96\n!platform_table_begin\nID\tGene Symbol\n")
    _, y2, _ = read_geo_cohort(sm, gpl, clinical_path=soft, time_key="time to relapse or last follow-up (months)",
                               event_key="relapse (1=True)", time_unit="months")
    pd.testing.assert_series_equal(y, y2)
    bad = tmp_path / "bad_clinical.txt"
    bad.write_text("sample\ttime\tevent\nGSM11\t20\t1\nGSM12\tlong\t0\nGSM13\t30\t0\n")
    with pytest.raises(InputError, match=r"bad_clinical.txt, line 3: sample GSM12: time_key 'time': expected a "
                                         r"non-negative number .*got 'long'"):
        read_geo_cohort(sm, gpl, clinical_path=bad, time_key="time", event_key="event", time_unit="months")


def test_cohort_errors_and_policies(cohort_files, tmp_path):
    sm, gpl = cohort_files
    with pytest.raises(InputError, match=r"GSE99999_series_matrix.txt.gz, line \d+, column 'GSM2' \(probe "
                                         r"'p8_at'\): missing value"):
        read_geo_cohort(sm, gpl, time_key="t.rfs", event_key="e.rfs", nan_policy="error")
    _, y, counts = read_geo_cohort(sm, gpl, time_key="t.rfs", event_key="e.rfs", nan_policy="drop_samples")
    assert "GSM2" not in y.index and counts["samples_with_nan"] == 1 and counts["samples_kept"] == 5
    annot96 = write_annot(tmp_path / "GPL570.annot.gz", PLATFORM, platform="GPL570")
    with pytest.raises(InputError, match=r"on platform GPL96 \(!Series_platform_id\) but .*GPL570.annot.gz "
                                         r"annotates GPL570"):
        read_geo_cohort(sm, annot96, time_key="t.rfs", event_key="e.rfs")
    with pytest.raises(InputError, match=r"give one of time_key / time_regex \(both given\)"):
        read_geo_cohort(sm, gpl, time_key="t.rfs", time_regex="(x)", event_key="e.rfs")
    with pytest.raises(InputError, match=r"the 5-year labels hold 1 class.*time_unit 'years'"):
        read_geo_cohort(sm, gpl, time_key="t.rfs", event_key="e.rfs", time_unit="years")  # days read as years
    assert geo_settings_problems({"time_key": "t", "event_regex": "([)"}, "c")[0].startswith(
        "cohort 'c': event_regex '([)' is not a regular expression")


def test_registry_entry_and_sha256_pins(cohort_files):
    sm, gpl = cohort_files
    digest = hashlib.sha256(sm.read_bytes()).hexdigest()
    X, y, counts = COHORT_READERS["geo_series_matrix"](sm, gpl, time_key="t.rfs", event_key="e.rfs",
                                                       sha256={"series_matrix": digest},
                                                       collapse="mean", name="planted")
    assert counts["has_probes"] is True and len(y) == 6
    kept = [SAMPLES.index(g) for g in y.index]
    np.testing.assert_allclose(X["G1"], (np.log2(VALUES["p1_at"][kept]) + np.log2(VALUES["p2_at"][kept])) / 2)
    with pytest.raises(InputError, match=r"GPL96-tbl.txt: sha256 [0-9a-f]{64}, expected 0{64} \(cohort 'planted', "
                                         r"sha256.platform\)"):
        COHORT_READERS["geo_series_matrix"](sm, gpl, time_key="t.rfs", event_key="e.rfs",
                                            sha256={"platform": "0" * 64}, collapse="max_mean", name="planted")


# --- real files of other GEO layouts ------------------------------------------------------------

def test_sequencing_platform_soft_without_a_table_says_what_is_missing(tmp_path):
    """GEO's SOFT of a sequencing platform (GPL16791, Illumina HiSeq 2500)
    has the platform's header lines and no '!platform_table_begin' block: no
    probe ids, so no probe-to-gene table to read."""
    soft = tmp_path / "GPL16791_family.soft"
    soft.write_text("\n".join([
        "^DATABASE = GeoMiame", "!Database_name = Gene Expression Omnibus (GEO)",
        "^PLATFORM = GPL16791", "!Platform_title = Illumina HiSeq 2500 (Homo sapiens)",
        "!Platform_geo_accession = GPL16791", "!Platform_status = Public on Mar 14 2013",
        "!Platform_technology = high-throughput sequencing", "!Platform_distribution = virtual",
        "!Platform_organism = Homo sapiens", "!Platform_taxid = 9606", "!Platform_data_row_count = 0",
        "^SAMPLE = GSM1153814", "!Sample_title = sample 1", "!Sample_platform_id = GPL16791"]) + "\n")
    with pytest.raises(InputError, match=r"GPL16791_family\.soft: platform GPL16791 has no probe table .*"
                                         r"high-throughput sequencing.*a sequencing platform\?.*needs a "
                                         r"probe-to-gene table"):
        geo.read_platform_annotation(soft)


def test_geo_dataset_soft_given_as_a_platform_is_named(tmp_path):
    """A GEO DataSet (GDS507.soft: ^DATABASE, ^DATASET, !dataset_* lines,
    a table ID_REF / IDENTIFIER / GSM...) is not a platform annotation."""
    gds = tmp_path / "GDS507.soft.gz"
    lines = ["^DATABASE = Geo", "!Database_name = Gene Expression Omnibus (GEO)", "^DATASET = GDS507",
             "!dataset_title = Renal clear cell carcinoma (HG-U133B)", "!dataset_platform = GPL97",
             "!dataset_sample_count = 2", "!dataset_value_type = count", "^SUBSET = GDS507_1",
             "!subset_dataset_id = GDS507", "!subset_description = normal", "!subset_sample_id = GSM11815",
             "!subset_type = disease state", "^DATASET = GDS507", "#ID_REF = Platform reference identifier",
             "#IDENTIFIER = identifier", "!dataset_table_begin", "ID_REF\tIDENTIFIER\tGSM11815\tGSM11832",
             "200000_s_at\tPRPF8\t4254.0\t5298.2", "200001_at\tCAPNS1\t17996.2\t12010.7", "!dataset_table_end"]
    with gzip.open(gds, "wt") as fh:
        fh.write("\n".join(lines) + "\n")
    with pytest.raises(InputError, match=r"GDS507\.soft\.gz, line 3: looks like a GEO DataSet \(GDS\) SOFT file "
                                         r"\(GDS507\) of platform GPL97.*expected a platform \(GPL\) annotation or "
                                         r"SOFT file, e\.g\. GPL97\.annot\.gz"):
        geo.read_platform_annotation(gds)


@pytest.mark.parametrize("quoting", ["all", "minimal"])
def test_comma_separated_series_matrix_is_named(tmp_path, cohort_files, quoting):
    """A series matrix re-exported comma-separated: R's write.csv quotes every
    field ("!Sample_geo_accession","GSM1",...), a spreadsheet only where
    needed (!Sample_geo_accession,GSM1,...)."""
    import csv
    import io

    text = gzip.decompress(cohort_files[0].read_bytes()).decode()
    out = io.StringIO()
    writer = csv.writer(out, quoting=csv.QUOTE_ALL if quoting == "all" else csv.QUOTE_MINIMAL, lineterminator="\n")
    for line in text.splitlines():
        writer.writerow(geo._split(line) if line else [])
    path = tmp_path / "GSE99999_series_matrix.csv"
    path.write_text(out.getvalue())
    with pytest.raises(InputError, match=r"GSE99999_series_matrix\.csv, line 1: a comma-separated series matrix "
                                         r".*GEO series matrices are tab-separated"):
        geo.read_series_matrix(path)
