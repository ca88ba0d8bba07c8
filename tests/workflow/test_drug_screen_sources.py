"""Real-data sources of the drug screen as a user configures them (issue #18):
a CMap LINCS 2020 release given as local files (`type: local`, `layout:
lincs2020`) and a GEO-layout level-3 screen whose matrix is GCT text. Each
test writes its tiny input in the public layout into the work dir, dry-runs
`drug_screen_fig4a`, then runs the preprocessing for real and checks counts.tsv
against the planted rows."""

from __future__ import annotations

import gzip
import hashlib

import numpy as np
import pandas as pd
import pytest
import yaml

from biokernels.io.gctx import GCT, read_gctx, write_gct, write_gctx
from conftest import REPO, SHARED_DATA, run_snakemake

TINY_DS = REPO / ".test/config/drug_screen_tiny.yaml"
GENES = ["5720", "466", "6009", "10000"]          # 3 landmarks, 1 inferred
SMILES = {"BRD-K00000001": "CC(=O)OC1=CC=CC=C1C(O)=O", "BRD-K00000002": "CN1C=NC2=C1C(=O)N(C(=O)N2C)C",
          "BRD-K00000003": "CC(C)CC1=CC=C(C=C1)C(C)C(O)=O"}
INCHI = {"BRD-K00000001": "BSYNRYMUTXBXSQ-UHFFFAOYSA-N", "BRD-K00000002": "RYYVLZVUVIJVGH-UHFFFAOYSA-N",
         "BRD-K00000003": "HEFNNWSXXWATRW-UHFFFAOYSA-N"}
# (id, pert_id, pert_type, cell, dose uM, time h, qc_pass)
TRT = [("T1", "BRD-K00000001", "trt_cp", "A375", "10", "24", "1"),
       ("T2", "BRD-K00000001", "trt_cp", "A375", "1", "24", "1"),      # pooled with T1: 2 doses
       ("T3", "BRD-K00000002", "trt_cp", "A375", "10", "24", "0"),     # qc_pass 0: excluded
       ("T4", "BRD-K00000002", "trt_cp", "A549", "10", "24", "1"),
       ("T5", "BRD-K00000003", "trt_cp", "A549", "-666", "24", "1"),   # dose -666: dropped
       ("T6", "BRD-K00000004", "trt_cp", "A549", "10", "24", "1"),     # no structure: dropped
       ("T7", "BRD-K00000001", "trt_cp", "A549", "10", "24", "1"),
       ("T8", "BRD-K00000002", "trt_cp", "A375", "10", "6", "1")]
CTL = [("C1", "DMSO", "ctl_vehicle", "A375", "-666", "24", "1"),
       ("C2", "DMSO", "ctl_vehicle", "A549", "-666", "24", "1"),
       ("C3", "DMSO", "ctl_vehicle", "A549", "-666", "24", "1"),
       ("C4", "UnTrt", "ctl_untrt", "A549", "-666", "24", "1")]        # pert_type not kept: excluded


def _values(ids, seed):
    """Log2-like values, 2 to 12 in steps of 1/4 (exact in float32)."""
    rng = np.random.default_rng(seed)
    return pd.DataFrame(rng.integers(8, 48, size=(len(GENES), len(ids))) / 4, index=GENES, columns=ids)


def _sha(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _write_release(folder):
    """A tiny CMap LINCS 2020 level-5 release in its public layout."""
    folder.mkdir()
    for name, rows, seed in (("level5_beta_trt_cp_n8x4.gctx", TRT, 1), ("level5_beta_ctl_n4x4.gctx", CTL, 2)):
        ids = [r[0] for r in rows]
        write_gctx(folder / name, GCT(data=_values(ids, seed).astype(np.float32), row_meta=pd.DataFrame(index=GENES),
                                      col_meta=pd.DataFrame(index=ids)), compression=None, chunk=(2, len(GENES)))
    sig = pd.DataFrame([{"sig_id": i, "pert_id": p, "cmap_name": p, "pert_type": t, "cell_iname": c,
                         "pert_dose": d, "pert_dose_unit": "uM" if d != "-666" else "-666",
                         "pert_idose": f"{d} uM" if d != "-666" else "-666", "pert_time": h, "pert_time_unit": "h",
                         "pert_itime": f"{h} h", "qc_pass": q, "is_hiq": q, "nsample": "3"}
                        for i, p, t, c, d, h, q in TRT + CTL])
    sig.to_csv(folder / "siginfo_beta.txt", sep="\t", index=False)
    pd.DataFrame({"gene_id": GENES, "gene_symbol": ["PSME1", "ATF1", "RHEB", "AKT3"],
                  "ensembl_id": "-666", "gene_title": "-666", "gene_type": "protein-coding", "src": "NCBI",
                  "feature_space": ["landmark", "landmark", "landmark", "inferred"]}) \
        .to_csv(folder / "geneinfo_beta.txt", sep="\t", index=False)
    rows = [(p, p, "-666", "-666", SMILES[p], INCHI[p], "-666") for p in SMILES]
    rows += [("BRD-K00000001", "BRD-K00000001", "PTGS2", "-666", SMILES["BRD-K00000001"], INCHI["BRD-K00000001"],
              "-666"), ("BRD-K00000004", "BRD-K00000004", "-666", "-666", "restricted", "restricted", "-666")]
    pd.DataFrame(rows, columns=["pert_id", "cmap_name", "target", "moa", "canonical_smiles", "inchi_key",
                                "compound_aliases"]).to_csv(folder / "compoundinfo_beta.txt", sep="\t", index=False)
    pd.DataFrame({"cell_iname": ["A375", "A549"], "cell_type": "tumor"}).to_csv(folder / "cellinfo_beta.txt",
                                                                                 sep="\t", index=False)


def _overlay(workdir, name, source, **drug_screen):
    cfg = yaml.safe_load(TINY_DS.read_text())
    cfg["drug_screen"]["sources"][name] = {"data": "paper", **source}   # test files in the paper's layouts
    cfg["drug_screen"].update(dataset=name, **drug_screen)
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg))
    return path


def _counts(path):
    return {(r.step, r.reason): r.n for r in pd.read_csv(path, sep="\t").itertuples()}


def test_local_lincs2020_release_dry_run_and_preprocessing(workdir):
    release = workdir / "lincs2020"
    _write_release(release)
    files = {"matrix": [{"path": "lincs2020/level5_beta_trt_cp_n8x4.gctx",
                         "sha256": _sha(release / "level5_beta_trt_cp_n8x4.gctx")},
                        {"path": "lincs2020/level5_beta_ctl_n4x4.gctx"}],
             "siginfo": {"path": "lincs2020/siginfo_beta.txt", "sha256": _sha(release / "siginfo_beta.txt")},
             "geneinfo": {"path": "lincs2020/geneinfo_beta.txt"},
             "compoundinfo": [{"path": "lincs2020/compoundinfo_beta.txt"}],
             "cellinfo": {"path": "lincs2020/cellinfo_beta.txt"}}
    source = {"type": "local", "layout": "lincs2020", "level": 5, "files": files}
    cfg = _overlay(workdir, "lincs_local", source, log2_transform=False)
    dry = run_snakemake(["-n", "drug_screen_fig4a", "--configfile", str(cfg)], workdir).stdout
    for rule in ("drug_screen_local", "drug_screen_lincs2020_tables", "drug_screen_fingerprints",
                 "drug_screen_preprocess", "drug_screen_source", "drug_screen_transfer"):
        assert rule in dry, rule
    assert "drug_screen_generate" not in dry and "drug_screen_download" not in dry
    assert "resources/drug_screen/lincs_local/local/matrix_2" in dry

    target = "results/drug_screen/lincs_local/preprocessed/counts.tsv"
    run_snakemake(["--cores", "1", target, "--configfile", str(cfg)], workdir)
    c = _counts(workdir / target)
    # the conversion's counts come first: 12 columns, C4 (ctl_untrt) and T3 (qc_pass 0) left out
    assert c["signatures", "in the matrices"] == 12
    assert c["signatures", "pert_type not in ['trt_cp', 'ctl_vehicle'] (excluded)"] == 1
    assert c["signatures", "qc_pass 0 (excluded)"] == 1
    assert c["signatures", "excluded in all"] == 2 and c["signatures", "kept"] == 10
    assert c["compounds", "compoundinfo[0]: repeated rows of a pert_id with the same InChIKey (one kept; e.g. one "
             "row per target)"] == 1
    assert c["compounds", "compoundinfo[0]: rows without a SMILES (-666, empty or restricted; not used)"] == 1
    # then the preprocessing's: T5 (dose -666) and T6 (no structure) dropped, 4 pairs left
    assert c["samples", "in matrix"] == 12
    assert c["samples", "excluded before preprocessing (counted above; not read)"] == 2
    assert c["samples", "treatment dose < 0, e.g. -666 missing code (dropped)"] == 1
    assert c["samples", "treatment without a parseable SMILES (dropped)"] == 1
    assert c["genes", "not landmark (dropped)"] == 1
    assert c["pairs", "drug x cell line pairs (replicates averaged; doses and times pooled)"] == 4
    assert c["pairs", "pooling several doses (averaged as replicates)"] == 1          # K1 in A375: 10 and 1 uM
    # K2 in A375: T3 (24 h) was left out by qc_pass, so T8 (6 h) alone: no pair pools several times
    assert c["pairs", "pooling several times (averaged as replicates)"] == 0
    pairs = pd.read_csv(workdir / "results/drug_screen/lincs_local/preprocessed/pairs.tsv", sep="\t", index_col=0)
    assert sorted(pairs.index) == ["BRD-K00000001:A375", "BRD-K00000001:A549", "BRD-K00000002:A375",
                                   "BRD-K00000002:A549"]
    # local files are linked, not copied; the checked ones' logs say so
    link = workdir / "resources/drug_screen/lincs_local/local/matrix_1"
    assert link.is_symlink() and link.resolve() == (release / "level5_beta_trt_cp_n8x4.gctx").resolve()
    assert "sha256" in (workdir / "results/drug_screen/lincs_local/logs/local_matrix_1.log").read_text()
    # only the 8 columns used are read (5 kept treatments, 3 vehicle controls), with a progress summary
    assert "reading 8 of 12 matrix columns x 3 genes: done, 8 columns (96 B)" in (
        workdir / "results/drug_screen/lincs_local/logs/preprocess.log").read_text()

    # a wrong sha256 fails that job, names both digests and leaves no link
    files["geneinfo"]["sha256"] = "0" * 64
    bad = _overlay(workdir, "lincs_bad", source)
    proc = run_snakemake(["--cores", "1", "resources/drug_screen/lincs_bad/local/geneinfo", "--configfile",
                          str(bad)], workdir, check=False)
    assert proc.returncode != 0
    log = (workdir / "results/drug_screen/lincs_bad/logs/local_geneinfo.log").read_text()
    assert f"sha256 mismatch: expected {'0' * 64}, got {_sha(release / 'geneinfo_beta.txt')}" in log
    assert not (workdir / "resources/drug_screen/lincs_bad/local/geneinfo").exists()
    # a missing local file stops the run before any job, naming the config key
    files["geneinfo"] = {"path": "lincs2020/nope.txt"}
    proc = run_snakemake(["-n", "drug_screen_fig4a", "--configfile", str(_overlay(workdir, "lincs_missing", source))],
                         workdir, check=False)
    assert proc.returncode != 0
    assert "drug_screen.sources.lincs_missing.files.geneinfo.path: 'lincs2020/nope.txt' is not a file" in \
        proc.stdout + proc.stderr


def test_local_geo_layout_with_a_gct_text_level3_matrix(workdir):
    """GEO GSE92742 level 3 layout, the matrix as GCT 1.3 text and pert_info
    gzip-compressed (GEO serves .txt.gz): both are read by content."""
    geo = workdir / "geo"
    geo.mkdir()
    insts = TRT + CTL
    ids = [r[0] for r in insts]
    values = _values(ids, 3)
    write_gct(geo / "GSE92742_level3_tiny.gct", GCT(data=values, row_meta=pd.DataFrame(
        {"pr_gene_symbol": ["PSME1", "ATF1", "RHEB", "AKT3"]}, index=GENES), col_meta=pd.DataFrame(index=ids)))
    pd.DataFrame([{"inst_id": i, "rna_plate": "PLATE1", "rna_well": f"A{k:02d}", "pert_id": p, "pert_iname": p,
                   "pert_type": t, "pert_dose": d, "pert_dose_unit": "µM" if d != "-666" else "-666",
                   "pert_time": h, "pert_time_unit": "h", "cell_id": c}
                  for k, (i, p, t, c, d, h, _) in enumerate(insts)]).to_csv(geo / "inst_info.txt", sep="\t",
                                                                           index=False)
    pert = pd.DataFrame([{"pert_id": p, "pert_iname": p, "pert_type": "trt_cp", "is_touchstone": "0",
                          "inchi_key_prefix": INCHI[p][:14], "inchi_key": INCHI[p], "canonical_smiles": SMILES[p],
                          "pubchem_cid": "-666"} for p in SMILES]
                        + [{"pert_id": "BRD-K00000004", "pert_iname": "x", "pert_type": "trt_cp",
                            "is_touchstone": "0", "inchi_key_prefix": "-666", "inchi_key": "-666",
                            "canonical_smiles": "-666", "pubchem_cid": "-666"}])
    (geo / "pert_info.txt.gz").write_bytes(gzip.compress(pert.to_csv(sep="\t", index=False).encode()))
    pd.DataFrame({"pr_gene_id": GENES, "pr_gene_symbol": ["PSME1", "ATF1", "RHEB", "AKT3"],
                  "pr_gene_title": "-666", "pr_is_lm": [1, 1, 1, 0], "pr_is_bing": [1, 1, 1, 0]}) \
        .to_csv(geo / "gene_info.txt", sep="\t", index=False)
    files = {"gctx": {"path": "geo/GSE92742_level3_tiny.gct"}, "sample_info": {"path": "geo/inst_info.txt"},
             "pert_info": {"path": "geo/pert_info.txt.gz", "sha256": _sha(geo / "pert_info.txt.gz")},
             "gene_info": {"path": "geo/gene_info.txt"}}
    # a CMap LINCS 2020 setting on a geo layout is refused before any job, naming the key
    odd = _overlay(workdir, "geo_odd", {"type": "local", "files": files, "gene_space": "all"})
    proc = run_snakemake(["-n", "drug_screen_fig4a", "--configfile", str(odd)], workdir, check=False)
    assert proc.returncode != 0
    assert "drug_screen.sources.geo_odd.gene_space: applies to layout lincs2020 only" in proc.stdout + proc.stderr
    cfg = _overlay(workdir, "geo_gct", {"type": "local", "files": files}, log2_transform=False)
    dry = run_snakemake(["-n", "drug_screen_fig4a", "--configfile", str(cfg)], workdir).stdout
    assert "drug_screen_local" in dry and "drug_screen_lincs2020_tables" not in dry
    target = "results/drug_screen/geo_gct/preprocessed/counts.tsv"
    run_snakemake(["--cores", "1", target, "--configfile", str(cfg)], workdir)
    c = _counts(workdir / target)
    # no earlier step here: every one of the 12 instances is read; C4 (ctl_untrt) by pert_type, T5 by its dose,
    # T6 (SMILES -666: no fingerprint) by its SMILES; T3 stays (the GEO layout has no qc filter)
    assert c["samples", "in matrix"] == 12
    assert c["samples", "pert_type not trt_cp or ctl_vehicle (dropped)"] == 1
    assert c["samples", "treatment dose < 0, e.g. -666 missing code (dropped)"] == 1
    assert c["samples", "treatment without a parseable SMILES (dropped)"] == 1
    assert c["genes", "not landmark (dropped)"] == 1
    assert c["pairs", "drug x cell line pairs (replicates averaged; doses and times pooled)"] == 4
    assert c["pairs", "pooling several times (averaged as replicates)"] == 1          # K2 in A375: T3 24 h, T8 6 h
    pre = workdir / "results/drug_screen/geo_gct/preprocessed"
    expr = read_gctx(pre / "expression.gctx").data                  # genes x pairs
    np.testing.assert_allclose(expr["BRD-K00000002:A375"], values.loc[GENES[:3], ["T3", "T8"]].mean(axis=1))
    controls = pd.read_csv(pre / "controls.tsv", sep="\t", index_col=0)
    np.testing.assert_allclose(controls.loc["A549"].to_numpy(), values.loc[GENES[:3], ["C2", "C3"]].mean(axis=1))


def test_lincs2020_download_source_plans_checksummed_downloads(workdir):
    """`type: lincs2020`: the same release, each file a checksummed download
    (file:// URLs here): the plan downloads every file, then the same
    conversion and preprocessing as for local files."""
    release = workdir / "mirror"
    _write_release(release)

    def dl(name):
        return {"url": (release / name).as_uri(), "sha256": _sha(release / name)}

    files = {"matrix": [dl("level5_beta_trt_cp_n8x4.gctx"), dl("level5_beta_ctl_n4x4.gctx")],
             "siginfo": dl("siginfo_beta.txt"), "geneinfo": dl("geneinfo_beta.txt"),
             "compoundinfo": [dl("compoundinfo_beta.txt")]}
    cfg = _overlay(workdir, "lincs_dl", {"type": "lincs2020", "files": files}, log2_transform=False)
    dry = run_snakemake(["-n", "drug_screen_fig4a", "--configfile", str(cfg)], workdir).stdout
    for key in ("matrix_1", "matrix_2", "siginfo", "geneinfo", "compoundinfo_1"):
        assert f"resources/drug_screen/lincs_dl/download/{key}" in dry, key
    assert "drug_screen_local" not in dry and "drug_screen_lincs2020_tables" in dry
    # geo-layout files in a lincs2020 layout are refused at parse time, naming the key
    files["gctx"] = dl("siginfo_beta.txt")
    proc = run_snakemake(["-n", "drug_screen_fig4a", "--configfile",
                          str(_overlay(workdir, "lincs_dl", {"type": "lincs2020", "files": files}))],
                         workdir, check=False)
    assert proc.returncode != 0 and "lincs_dl.files" in proc.stdout + proc.stderr


def _embedded_gct(path):
    """The instances of TRT + CTL as one GCT 1.3 plate whose metadata blocks
    carry what GEO's inst_info, pert_info and gene_info would (CMap field
    names; the GCT row name pr_is_lmark for the landmark flag)."""
    insts = TRT + CTL
    ids = [r[0] for r in insts]
    values = _values(ids, 3)
    col = pd.DataFrame([{"pert_id": p, "pert_iname": p.lower(), "pert_type": t, "cell_id": c, "pert_dose": d,
                         "pert_dose_unit": "µM" if d != "-666" else "-666", "pert_time": h, "pert_time_unit": "h",
                         "canonical_smiles": SMILES.get(p, "-666")} for i, p, t, c, d, h, _ in insts], index=ids)
    row = pd.DataFrame({"pr_gene_symbol": ["PSME1", "ATF1", "RHEB", "AKT3"], "pr_is_lmark": [1, 1, 1, 0]},
                       index=GENES)
    write_gct(path, GCT(data=values, row_meta=row, col_meta=col))
    return values


def test_local_geo_layout_with_only_the_matrix(workdir):
    """A GCT 1.3 plate that carries its own metadata goes through the workflow
    with a config naming the matrix alone: its metadata stand in for
    inst_info, pert_info and gene_info, with the same counts as the separate
    tables give (test above)."""
    (workdir / "geo").mkdir()
    values = _embedded_gct(workdir / "geo/plate.gct")
    cfg = _overlay(workdir, "geo_plate", {"type": "local", "files": {"gctx": {"path": "geo/plate.gct"}}},
                   log2_transform=False)
    dry = run_snakemake(["-n", "drug_screen_fig4a", "--configfile", str(cfg)], workdir).stdout
    for table in ("sample_info", "pert_info", "gene_info"):
        assert f"resources/drug_screen/geo_plate/matrix/{table}.txt" in dry, table
    target = "results/drug_screen/geo_plate/preprocessed/counts.tsv"
    run_snakemake(["--cores", "1", target, "--configfile", str(cfg)], workdir)
    c = _counts(workdir / target)
    assert c["samples", "in matrix"] == 12
    assert c["samples", "pert_type not trt_cp or ctl_vehicle (dropped)"] == 1            # C4
    assert c["samples", "treatment dose < 0, e.g. -666 missing code (dropped)"] == 1     # T5
    assert c["samples", "treatment without a parseable SMILES (dropped)"] == 1           # T6: SMILES -666
    assert c["genes", "not landmark (dropped)"] == 1                                    # pr_is_lmark 0
    assert c["pairs", "drug x cell line pairs (replicates averaged; doses and times pooled)"] == 4
    expr = read_gctx(workdir / "results/drug_screen/geo_plate/preprocessed/expression.gctx").data
    np.testing.assert_allclose(expr["BRD-K00000002:A375"], values.loc[GENES[:3], ["T3", "T8"]].mean(axis=1))


def test_a_bad_local_file_is_one_line_naming_the_users_file_and_key(workdir):
    """A local pert_info without canonical_smiles: the failed job says so in
    one line that names the user's file and its config key, not the link
    under resources/, and prints no traceback."""
    (workdir / "geo").mkdir()
    _embedded_gct(workdir / "geo/plate.gct")
    pd.DataFrame({"pert_id": list(SMILES), "pert_type": "trt_cp"}).to_csv(workdir / "geo/pert_info.txt", sep="\t",
                                                                          index=False)
    files = {"gctx": {"path": "geo/plate.gct"}, "pert_info": {"path": "geo/pert_info.txt"}}
    for table in ("sample_info", "gene_info"):  # not read by the failing job
        (workdir / f"geo/{table}.txt").write_text("id\n")
        files[table] = {"path": f"geo/{table}.txt"}
    cfg = _overlay(workdir, "geo_bad", {"type": "local", "files": files})
    run_snakemake(["--cores", "1", "resources/drug_screen/geo_bad/local/pert_info", "--configfile", str(cfg)],
                  workdir)
    proc = run_snakemake(["--cores", "1", "results/drug_screen/geo_bad/fingerprints/morgan.tsv.gz", "--configfile",
                          str(cfg)], workdir, check=False)
    out = proc.stdout + proc.stderr
    said = "geo/pert_info.txt (drug_screen.sources.geo_bad.files.pert_info.path): missing column(s) " \
           "['canonical_smiles']"
    assert proc.returncode != 0 and out.count(said) == 1, out
    assert "Traceback" not in out and "local/pert_info:" not in out
    log = (workdir / "results/drug_screen/geo_bad/logs/fingerprints.log").read_text()
    assert log.count(said) == 1 and "Traceback" not in log
    assert "results/drug_screen/geo_bad/logs/fingerprints.log" in out                 # Snakemake names the log


CMAPR = SHARED_DATA / "l1000_cmapR_modzs_n272x978" / "modzs_n272x978.gctx"


@pytest.mark.skipif(not CMAPR.is_file(), reason="cmapR's modzs_n272x978.gctx not in ../shared/data")
def test_cmapr_level5_gctx_with_the_matrix_path_alone(workdir):
    """cmapR's real level-5 GCTX named alone in the config: the plan builds the
    sample and gene tables from its metadata (272 signatures, 978 landmarks
    by is_lm); it has no SMILES, so the perturbagen table stops with one line
    naming the config key to set and the field."""
    cfg = _overlay(workdir, "cmapr", {"type": "local", "files": {"gctx": {"path": str(CMAPR)}}},
                   log2_transform=False)
    dry = run_snakemake(["-n", "drug_screen_fig4a", "--configfile", str(cfg)], workdir).stdout
    assert "drug_screen_matrix_tables" in dry
    folder = "resources/drug_screen/cmapr/matrix"
    run_snakemake(["--cores", "1", f"{folder}/sample_info.txt", f"{folder}/gene_info.txt", "--configfile",
                   str(cfg)], workdir)
    sample = pd.read_csv(workdir / folder / "sample_info.txt", sep="\t", dtype=str)
    genes = pd.read_csv(workdir / folder / "gene_info.txt", sep="\t", dtype=str)
    assert len(sample) == 272 and set(sample["cell_id"]) >= {"MCF7", "A375", "PC3"}
    assert (sample["pert_idose"] == "10 µM").sum() == 218                  # PROVENANCE.md: 218 at 10 µM
    assert len(genes) == 978 and (genes["pr_is_lm"].astype(float) == 1).all()
    proc = run_snakemake(["--cores", "1", f"{folder}/pert_info.txt", "--configfile", str(cfg)], workdir, check=False)
    out = proc.stdout + proc.stderr
    said = (f"{CMAPR} (drug_screen.sources.cmapr.files.gctx.path): the matrix's column metadata lacks "
            "['canonical_smiles']")
    assert proc.returncode != 0 and out.count(said) == 1, out
    assert "set drug_screen.sources.cmapr.files.pert_info to a GEO pert_info table" in out
    assert "Traceback" not in out
