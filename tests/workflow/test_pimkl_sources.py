"""PIMKL on cohorts given as GEO files (cohort format geo_series_matrix):
local series matrices and a GPL table written here in GEO's public layout,
one platform table through the checksummed download rule (file:// URL), the
DAG of the figure targets, a real run of the cohort counts table and of
Fig. 3a, and the parse-time stops (unpinned sha256, survival settings).

The planted cohorts: 120 genes in 6 gene sets (20 each), the first set's
activity decides who relapses within 5 years; cohort ``a`` (90 samples) is a
gzip series matrix on a linear (MAS5-like) scale with survival in
``!Sample_characteristics_ch1`` (days), cohort ``b`` (80 samples) a plain
series matrix on log2 scale with survival in a clinical TSV (months).
"""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import SHARED_DATA, run_snakemake

GENES = [f"G{i:03d}" for i in range(1, 121)]
SETS = {f"SET{k + 1}": GENES[20 * k: 20 * (k + 1)] for k in range(6)}
TARGETS = ["pimkl_fig3a", "pimkl_fig3b", "pimkl_fig4", "pimkl_figS1", "pimkl_figS2", "pimkl_sensitivity"]


def _probes():
    """Probe -> symbol cell of the GPL table (None: probe absent from it)."""
    table = {f"{200000 + i}_at": g for i, g in enumerate(GENES)}
    table.update({f"{300000 + i}_s_at": GENES[i] for i in range(20)})         # second, dimmer probes
    table.update({f"{400000 + i}_x_at": f"{GENES[i]} /// {GENES[i + 60]}" for i in range(5)})   # multi-gene
    table.update({f"{500000 + i}_at": "---" for i in range(3)})               # no symbol
    table.update({"AFFX-BioB-5_at": None, "AFFX-BioC-5_at": None})            # controls, not in the table
    return table


def _cohort(rng, n, n_censored, n_na):
    """Expression (genes x samples, log2 scale) and survival with planted
    outcome: relapse within 5 years when the first set's activity is high.
    The activity moves the set's genes along its ring's highest-frequency
    direction (neighbours in opposite directions), which the set's
    network-induced kernel sees (as biokernels.synth.pimkl plants it)."""
    z = 0.5 * rng.normal(size=(len(GENES), n))
    activity = rng.normal(size=n)
    z[:20] += 1.5 * np.outer(np.tile([1.0, -1.0], 10), activity)
    risk = activity + rng.normal(scale=0.2, size=n)
    pos = risk > np.quantile(risk, 0.6)
    days = np.where(pos, rng.uniform(100, 1800, n), rng.uniform(1900, 5000, n)).round()
    event = np.where(pos, 1, rng.binomial(1, 0.3, n))
    neg = np.flatnonzero(~pos)
    censored = neg[:n_censored]                       # censored before 5 years: excluded
    days[censored], event[censored] = rng.uniform(200, 1700, n_censored).round(), 0
    na = neg[n_censored: n_censored + n_na]           # no follow-up recorded: excluded
    return 8.0 + z, days, event, censored, na


def _expression_rows(expr, samples, linear, rng, nulls=()):
    probes = _probes()
    rows = []
    for probe, sym in probes.items():
        if sym is not None and "///" not in sym and sym != "---":
            v = expr[GENES.index(sym)] - (2.0 if probe.endswith("_s_at") else 0.0)
        else:
            v = 6.0 + rng.normal(size=len(samples))
        v = 2.0 ** v if linear else v
        cells = [f"{x:.2f}" for x in v]
        for p, j in nulls:
            if p == probe:
                cells[j] = "null"
        rows.append(f'"{probe}"\t' + "\t".join(cells))
    return rows


def _series_matrix(path, gse, samples, characteristics, rows):
    q = lambda vals: "\t".join(f'"{v}"' for v in vals)  # noqa: E731
    lines = [f'!Series_title\t"Planted cohort {gse}"', f'!Series_geo_accession\t"{gse}"',
             '!Series_platform_id\t"GPL96"', "",
             "!Sample_title\t" + q(f"patient {i}" for i in range(len(samples))),
             "!Sample_geo_accession\t" + q(samples),
             *("!Sample_characteristics_ch1\t" + q(c) for c in characteristics),
             "!Sample_platform_id\t" + q(["GPL96"] * len(samples)),
             "!series_matrix_table_begin", '"ID_REF"\t' + q(samples), *rows, "!series_matrix_table_end"]
    text = "\n".join(lines) + "\n"
    if str(path).endswith(".gz"):
        with gzip.open(path, "wt") as fh:
            fh.write(text)
    else:
        path.write_text(text)


def write_geo_set(root):
    """The two cohorts, the GPL table, network and gene sets; returns the
    paths and the planted label counts."""
    rng = np.random.default_rng(2019)
    root.mkdir(parents=True, exist_ok=True)
    out = {}
    # cohort a: gzip, linear scale, survival in the characteristics (days); one probe with nulls
    expr, days, event, cens, na = _cohort(rng, 90, 6, 2)
    sa = [f"GSM{1000 + i}" for i in range(90)]
    t_cells = [("t.rfs: NA" if i in na else f"t.rfs: {int(d)}") for i, d in enumerate(days)]
    chars = [[f"age: {40 + i % 30}" for i in range(90)], t_cells, [f"e.rfs: {e}" for e in event]]
    _series_matrix(root / "GSEA_series_matrix.txt.gz", "GSE90001", sa, chars,
                   _expression_rows(expr, sa, True, rng, nulls=[("200100_at", int(np.setdiff1d(
                       np.arange(90), np.concatenate([cens, na]))[0]))]))
    out["a"] = {"samples": 90, "censored": len(cens), "na": len(na),
                "positive": int(((days <= 1826) & (event == 1)).sum())}
    # cohort b: plain text, log2 values, survival in a clinical table (months)
    expr, days, event, cens, na = _cohort(rng, 80, 4, 1)
    sb = [f"GSM{2000 + i}" for i in range(80)]
    _series_matrix(root / "GSEB_series_matrix.txt", "GSE90002", sb, [[f"er: {i % 2}" for i in range(80)]],
                   _expression_rows(expr, sb, False, rng))
    months = days / (365.25 / 12)
    clin = ["# clinical parameters of the planted cohort b", "PID\tGEO accession\ttime (months)\tevent"]
    clin += [f"{i}\t{g}\t{'' if i in na else f'{m:.2f}'}\t{e}" for i, (g, m, e) in enumerate(zip(sb, months, event))]
    (root / "GSEB_clinical.txt").write_text("\n".join(clin) + "\n")
    out["b"] = {"samples": 80, "censored": len(cens), "na": len(na),
                "positive": int(((months <= 60) & (event == 1)).sum())}
    # platform table: GEO's full-table download (#-comment lines, header, rows)
    gpl = ["#ID = Affymetrix Probe Set ID", "#Gene Symbol = A gene symbol", "ID\tGB_ACC\tGene Title\tGene Symbol"]
    gpl += [f"{p}\tNM_{i:06d}\tsome gene\t{s}" for i, (p, s) in enumerate(_probes().items()) if s is not None]
    (root / "GPL96-57554.txt").write_text("\n".join(gpl) + "\n")
    # network: a ring inside each gene set plus a few edges between sets; GMT of the six sets
    edges = [(s[i], s[(i + 1) % len(s)]) for s in SETS.values() for i in range(len(s))]
    edges += [(s[0], s[7]) for s in SETS.values()] + [(GENES[i], GENES[i + 20]) for i in range(0, 100, 13)]
    pd.DataFrame(edges, columns=["protein_a", "protein_b"]).assign(weight=1.0).to_csv(
        root / "network.tsv", sep="\t", index=False)
    (root / "sets.gmt").write_text("".join(f"{k}\thttp://example.org/{k}\t" + "\t".join(v) + "\n"
                                           for k, v in SETS.items()))
    return out


def _overlay(root, workdir, name="overlay.yaml", platform_sha=None, **cohort_a):
    gpl = root / "GPL96-57554.txt"
    sha_a = hashlib.sha256((root / "GSEA_series_matrix.txt.gz").read_bytes()).hexdigest()
    cfg = {"pimkl": {
        "dataset": "geo_local",
        "sources": {"geo_local": {
            "type": "files", "data": "paper", "description": "planted cohorts in GEO layout",
            "network": {"format": "edgelist", "network_path": str(root / "network.tsv")},
            "gene_sets": {"pathways_path": str(root / "sets.gmt")},
            "cohorts": {
                "a": {"format": "geo_series_matrix", "series_matrix_path": str(root / "GSEA_series_matrix.txt.gz"),
                      "platform_path": str(gpl), "time_key": "t.rfs", "event_key": "e.rfs", "time_unit": "days",
                      "sha256": {"series_matrix": sha_a}, **cohort_a},
                "b": {"format": "geo_series_matrix", "series_matrix_path": str(root / "GSEB_series_matrix.txt"),
                      "platform_path": None, "clinical_path": str(root / "GSEB_clinical.txt"),
                      "time_key": "time (months)", "event_key": "event", "time_unit": "months"}},
            "downloads": {"cohorts.b.platform_path": {
                "url": gpl.as_uri(),
                "sha256": platform_sha or hashlib.sha256(gpl.read_bytes()).hexdigest()}},
            "s1_cohorts": ["a", "b"], "large_cohort": None}},
        "cv": {"repeats": 2, "folds": 3, "inner_folds": 2, "easymkl_lams": [0.2, 0.8], "criterion": "accuracy"},
        "baseline_C_grid": [1.0],
        "significance": {"alpha": 0.05, "min_cohorts": 1, "correlation_alpha": 0.05},
        "controls": {"random_sets": False, "random_size": [10, 20]},
        "sensitivity": {"cohorts": ["a"], "repeats": 1, "folds": 3}}}
    path = workdir / name
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return path


@pytest.fixture
def geo_set(workdir):
    root = workdir.parent / "geo"
    return root, write_geo_set(root)


def test_dry_run_of_the_figure_targets(workdir, geo_set):
    root, _ = geo_set
    proc = run_snakemake(["-n", *TARGETS, "--configfile", str(_overlay(root, workdir))], workdir)
    out = proc.stdout
    assert "pimkl_download" in out and "cohorts.b.platform_path" in out      # b's GPL table: the download rule
    for job in ("pimkl_s1", "pimkl_network", "pimkl_gene_sets", "pimkl_sensitivity_run", "pimkl_figure"):
        assert job in out, job
    assert "results/pimkl/geo_local/s1/pathways/a/aucs.tsv" in out
    assert "results/pimkl/geo_local/s1/pathways/b/aucs.tsv" in out


def test_cohort_counts_are_in_all_and_in_the_report(workdir, geo_set, workflow_rules):
    """The cohorts' counts table (rule pimkl_cohorts) is built by the default
    target and shown in the report, in the PIMKL category beside the figures."""
    root, _ = geo_set
    out = run_snakemake(["-n", "--configfile", str(_overlay(root, workdir))], workdir).stdout
    assert "results/pimkl/geo_local/cohorts/counts.tsv" in out and "pimkl_cohorts" in out
    flag = workflow_rules["pimkl_cohorts"].output[0].flags["report"]
    figure = workflow_rules["pimkl_figure"].output.png.flags["report"]
    assert flag.category == figure.category and flag.subcategory == figure.subcategory
    assert flag.caption.endswith("report/pimkl_cohorts.rst")


def test_parse_time_stops(workdir, geo_set):
    root, _ = geo_set
    proc = run_snakemake(["-n", "pimkl_fig3a", "--configfile",
                          str(_overlay(root, workdir, "unpinned.yaml", platform_sha="unpinned"))], workdir, check=False)
    err = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "pimkl.sources.geo_local.downloads.cohorts.b.platform_path.sha256" in err and "sha256sum" in err
    proc = run_snakemake(["-n", "pimkl_fig3a", "--configfile",
                          str(_overlay(root, workdir, "both.yaml", time_regex=r"t\.rfs: (\d+)"))], workdir, check=False)
    assert proc.returncode != 0
    assert "cohort 'a': give one of time_key / time_regex (both given)" in proc.stdout + proc.stderr


def test_the_shipped_table_s1_config_stops_until_pinned(workdir):
    if not SHARED_DATA.is_dir():
        pytest.skip(f"{SHARED_DATA} is absent (the config's network and gene sets live there)")
    (workdir.parent / "shared").symlink_to(SHARED_DATA.parent, target_is_directory=True)
    proc = run_snakemake(["-n", "pimkl_fig3a", "--configfile", "config/pimkl_geo_table_s1.yaml"], workdir,
                         check=False)
    err = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "13 download(s) have no pinned checksum" in err
    for gse in ("GSE2034", "GSE1456", "GSE2990", "GSE4922", "GSE7390", "GSE11121"):
        assert f"pimkl.sources.geo_table_s1.downloads.cohorts.{gse}.series_matrix_path.sha256" in err
    assert "GPL96.annot.gz" in err and "sha256sum" in err


@pytest.mark.slow
def test_counts_table_and_fig3a_on_local_geo_cohorts(workdir, geo_set):
    root, planted = geo_set
    overlay = _overlay(root, workdir)
    run_snakemake(["--cores", "2", "pimkl_cohorts", "pimkl_fig3a", "--configfile", str(overlay)], workdir,
                  timeout=600)
    base = workdir / "results/pimkl/geo_local"
    counts = pd.read_csv(base / "cohorts/counts.tsv", sep="\t")
    c = {co: dict(zip(sub["count"], sub["value"])) for co, sub in counts.groupby("cohort")}
    assert set(counts["format"]) == {"geo_series_matrix"}
    n_probes = len(_probes())
    for co in ("a", "b"):
        p = planted[co]
        got = c[co]
        labelled = p["samples"] - p["censored"] - p["na"]
        assert (got["samples_in_matrix"], got["probes_in_matrix"]) == (p["samples"], n_probes)
        assert (got["censored_before_horizon"], got["no_endpoint"]) == (p["censored"], p["na"])
        assert (got["positive"], got["negative"]) == (p["positive"], labelled - p["positive"])
        assert (got["platform_probes"], got["probes_multi_gene"], got["probes_without_symbol"]) == (n_probes - 2, 5, 3)
        assert got["probes_not_in_platform"] == 2 and got["samples_kept"] == labelled == got["samples_out"]
        assert got["genes_out"] == len(GENES) - (1 if co == "a" else 0)    # a: G101 (probe 200100_at) had a null
    assert (c["a"]["log2_applied"], c["b"]["log2_applied"]) == (1, 0)
    assert (c["a"]["values_missing"], c["a"]["probes_with_missing"]) == (1, 1)
    assert (c["b"]["samples_without_clinical_row"], c["b"]["clinical_rows_not_in_matrix"]) == (0, 0)
    assert (workdir / "resources/pimkl/download/geo_local/cohorts.b.platform_path").is_file()
    aucs = pd.read_csv(base / "tables/fig3a.tsv", sep="\t")
    assert set(aucs["cohort"]) == {"a", "b"}
    assert aucs.loc[aucs["method"] == "pimkl", "auc"].mean() > 0.7       # the planted set drives the labels


def test_a_swapped_network_keeps_no_setting_of_the_old_one(workdir, geo_set):
    """A layer that swaps a STRING network for a SIF one is merged key by key,
    so the STRING-only score_threshold stays: the run stops at parse time
    naming that key, not in the network job."""
    root, _ = geo_set
    cfg = yaml.safe_load(_overlay(root, workdir).read_text())
    cfg["pimkl"]["sources"]["geo_local"]["network"] = {"format": "string", "score_threshold": 400,
                                                       "network_path": str(root / "network.tsv")}
    string = workdir / "string.yaml"
    string.write_text(yaml.safe_dump(cfg, sort_keys=False))
    sif = workdir / "sif.yaml"
    sif.write_text(yaml.safe_dump({"pimkl": {"sources": {"geo_local": {"network": {"format": "sif"}}}}}))
    run_snakemake(["-n", "pimkl_fig3a", "--configfile", str(string)], workdir)     # the STRING layer alone is fine
    proc = run_snakemake(["-n", "pimkl_fig3a", "--configfile", str(string), str(sif)], workdir, check=False)
    out = proc.stdout + proc.stderr
    assert proc.returncode != 0 and "Config validation failed" in out
    assert ("pimkl.sources.geo_local.network.score_threshold applies to network format string only; this "
            "source's network format is sif: remove the key") in out


def test_a_one_cohort_source_stops_only_ls_mmdt(workdir):
    """A one-cohort PIMKL source plans PIMKL's figures; LS-MMDT's cohort task
    (source cohorts -> a target cohort) needs two, and says so while the DAG
    is built, only when it is asked for (by name or by `all`)."""
    one = workdir / "one.yaml"
    one.write_text(yaml.safe_dump({"pimkl": {"sources": {"default_synthetic": {"generator": {
        "cohorts": {"only": 50}, "large_size": 0}}}, "sensitivity": {"cohorts": ["only"]}}}))
    run_snakemake(["-n", "pimkl_fig3a", "mmdt_fig_digits", "--configfile", str(one)], workdir)
    said = ("mmdt.cohorts.source: no source cohort left (the S1 cohorts of pimkl.dataset 'default_synthetic' are "
            "only the target 'only')")
    for targets in (["mmdt_fig_cohorts"], []):
        proc = run_snakemake(["-n", *targets, "--configfile", str(one)], workdir, check=False)
        out = proc.stdout + proc.stderr
        assert proc.returncode != 0 and said in out and "rule mmdt_cohorts:" not in out, targets
