"""DepMap sources (rules/depmap*.smk): a PRISM Repurposing primary release
written here in its public layout (R-written CSVs, quoted headers, the
matrix's first header field empty, ``::``-joined column names, ``NA``
cells, DepMap's ``Model.csv``), read as ``type: local`` and as checksummed
downloads (``file://`` URLs) by the same reader; the DAG of
``depmap_figS9a``; a real run of the prepare rule whose counts follow from
the planted release; and the parse-time stops (unpinned sha256, files that
do not fit the format).

The release is built for the tiny drug screen (.test/config/drug_screen_tiny.yaml):
its three most profiled CMAP cell lines as DepMap models (Model.csv's
``StrippedCellLineName`` is the CMAP id), one model named after a cell line
CMAP does not have, one row id absent from Model.csv; 30 CMAP compounds
(their SMILES, so they match by InChIKey) and 4 compounds CMAP lacks, one
compound without SMILES, one compound in two screens at 2.5 µM, one also at
10 µM (dropped), and NA cells.
"""

from __future__ import annotations

import hashlib
import json
import math

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO, run_snakemake

TINY_DS = REPO / ".test/config/drug_screen_tiny.yaml"
DM_DIR = "results/depmap/tiny/prism_local/prepared"
# CMAP lacks these (checked against the screen below); valid, featurizable
NEW_SMILES = ["CCCCCCCCCCO", "OC(=O)CCCCCCCCC(=O)O", "Clc1ccc(Cl)c(Cl)c1Cl", "CCOC(=O)CCCCCCC(=O)OCC"]


def _r_csv(path, header, rows):
    """R's write.csv(row.names = FALSE): quoted header and strings, bare numbers, NA."""
    def field(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "NA"
        return repr(float(v)) if isinstance(v, (int, float, np.floating)) else '"' + str(v) + '"'

    lines = [",".join(f'"{h}"' for h in header)] + [",".join(field(v) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n")


def write_release(folder, cells, cmap_smiles, seed=0):
    """A PRISM primary release for ``cells`` (CMAP ids) and the compounds
    ``cmap_smiles`` (pert_id -> SMILES). Returns the file paths and the
    planted design (what the counts must be)."""
    folder.mkdir(parents=True, exist_ok=True)
    rng = np.random.default_rng(seed)
    models = [(f"ACH-{i + 1:06d}", c) for i, c in enumerate(cells)] + [("ACH-000900", "NOTINCMAP")]
    rows = [m for m, _ in models] + ["ACH-999999"]             # the last: not in Model.csv
    compounds = [(f"BRD-K{i:08d}-001-01-1", f"cmapdrug{i}", s) for i, s in enumerate(cmap_smiles, 1)]
    compounds += [(f"BRD-A{i:08d}-001-01-1", f"newdrug{i}", s) for i, s in enumerate(NEW_SMILES, 1)]
    compounds += [("BRD-A99999999-001-01-1", "", "")]            # no SMILES, no name
    treatments = [(f"{b}::2.5::HTS", b, n, 2.5, "HTS", s) for b, n, s in compounds]
    two_screens, two_doses = compounds[0][0], compounds[1][0]
    treatments += [(f"{two_screens}::2.5::MTS004", two_screens, compounds[0][1], 2.5, "MTS004", compounds[0][2]),
                   (f"{two_doses}::10::MTS005", two_doses, compounds[1][1], 10.0, "MTS005", compounds[1][2])]
    cols = [t[0] for t in treatments]
    values = rng.normal(-0.5, 1.0, size=(len(rows), len(cols))).round(4)
    nan_cells = [(0, 5), (1, 6), (2, 7)]                         # one NA in each CMAP model's row
    for i, j in nan_cells:
        values[i, j] = np.nan
    values[0, cols.index(f"{two_screens}::2.5::MTS004")] = np.nan   # the other screen alone there
    _r_csv(folder / "primary-screen-replicate-collapsed-logfold-change.csv", [""] + cols,
           [[r] + list(values[i]) for i, r in enumerate(rows)])
    _r_csv(folder / "primary-screen-replicate-collapsed-treatment-info.csv",
           ["column_name", "broad_id", "name", "dose", "screen_id", "smiles", "moa", "target", "disease.area",
            "indication", "phase"],
           [[c, b, n, d, s, smi, "NA", "NA", "NA", "NA", "Launched"] for c, b, n, d, s, smi in treatments])
    pd.DataFrame({"ModelID": [m for m, _ in models], "PatientID": [f"PT-{i}" for i in range(len(models))],
                  "CellLineName": [c for _, c in models], "StrippedCellLineName": [c for _, c in models],
                  "OncotreeLineage": "Lineage", "CCLEName": [f"{c}_TISSUE" for _, c in models]}
                 ).to_csv(folder / "Model.csv", index=False)
    n_comp = len(compounds)
    # expected: per CMAP model, every compound at 2.5 µM except its NA cell; the
    # model NOTINCMAP has all its values (dropped by prepare as cell_not_in_cmap)
    design = {"cells": cells, "n_compounds": n_comp, "n_cmap_compounds": len(cmap_smiles),
              "rows": 4 * n_comp - len(nan_cells), "values_missing": len(nan_cells),
              "values_model_not_in_mapping": n_comp, "columns": len(cols),
              "no_structure_rows": 4 - sum(1 for _, j in nan_cells if j == n_comp - 1),
              # NOTINCMAP's rows but the SMILES-less compound's (no_structure is counted first)
              "absent_rows": n_comp - 1, "pairs": 3 * n_comp - len(nan_cells) - 3}
    files = {"logfold_change": folder / "primary-screen-replicate-collapsed-logfold-change.csv",
             "treatment_info": folder / "primary-screen-replicate-collapsed-treatment-info.csv",
             "models": folder / "Model.csv"}
    return files, design


def overlay(workdir, name, source, extra=None):
    cfg = yaml.safe_load(TINY_DS.read_text())
    cfg["depmap"]["dataset"] = name
    cfg["depmap"]["sources"][name] = {"data": "paper", **source}   # test files in the paper's layouts
    for k, v in (extra or {}).items():
        cfg["depmap"][k] = v
    path = workdir / f"{name}.yaml"
    path.write_text(yaml.safe_dump(cfg, sort_keys=False))
    return str(path)


def local_source(files, workdir, sha256=None):
    return {"type": "local", "description": "PRISM primary, planted",
            "files": {k: {"path": str(p.relative_to(workdir)), **({"sha256": sha256[k]} if sha256 else {})}
                      for k, p in files.items()},
            "reader": {"format": "prism_primary", "dose_um": 2.5, "cell_field": "stripped_name"}}


def download_source(files, sha256):
    return {"type": "download", "files": {k: {"url": p.as_uri(), "sha256": sha256[k]} for k, p in files.items()},
            "reader": {"format": "prism_primary"}}


def digest(path):
    return hashlib.sha256(path.read_bytes()).hexdigest()


def jobs(stdout):
    table = stdout.split("Job stats:")[1].split("total")[0]
    return {line.split()[0]: int(line.split()[1]) for line in table.splitlines()[3:] if line.strip()}


def test_prism_sources_dag_and_parse_time_stops(workdir):
    """The DAG of depmap_figS9a for a local and a download release (no
    file is read; cell and drug names need not match here), and the
    parse-time stops naming the key."""
    files, _ = write_release(workdir / "prism", ["SYN001", "SYN002", "SYN003"], ["CCO", "CCN"])
    sha = {k: digest(p) for k, p in files.items()}
    local = overlay(workdir, "prism_local", local_source(files, workdir))
    out = run_snakemake(["-n", "depmap_figS9a", "--configfile", local], workdir).stdout
    j = jobs(out)
    assert j["depmap_prepare"] == 1 and "depmap_generate" not in j and "depmap_download" not in j
    assert "primary-screen-replicate-collapsed-logfold-change.csv" in out
    # the drops are summarised by default; the row listing only when asked for
    assert "prepared/dropped_summary.tsv" in out and "prepared/dropped_rows.tsv" not in out
    listed = overlay(workdir, "prism_local", local_source(files, workdir), {"list_dropped_rows": True})
    assert "prepared/dropped_rows.tsv" in run_snakemake(["-n", "depmap_figS9a", "--configfile", listed],
                                                         workdir).stdout
    dl = overlay(workdir, "prism_dl", download_source(files, sha))
    out = run_snakemake(["-n", "depmap_figS9a", "--configfile", dl], workdir).stdout
    assert jobs(out)["depmap_download"] == 3
    for key in files:     # figshare-style names get .csv, for the reader's content check
        assert f"resources/depmap/download/prism_dl/{key}.csv" in out

    # the shipped configs: sha256 null stops at parse time, naming every key
    for shipped, keys in (("depmap_prism_primary", ["logfold_change", "treatment_info", "models"]),
                          ("depmap_prism_secondary", ["dose_response", "models"])):
        cfg = yaml.safe_load((REPO / f"config/{shipped}.yaml").read_text())
        name = cfg["depmap"]["dataset"]
        path = overlay(workdir, name, cfg["depmap"]["sources"][name])
        proc = run_snakemake(["-n", "depmap_figS9a", "--configfile", path], workdir, check=False)
        text = proc.stdout + proc.stderr
        assert proc.returncode != 0
        for key in keys:
            assert f"depmap.sources.{name}.files.{key}.sha256" in text, (shipped, key)
        assert "not pinned (null)" in text and "sha256sum FILE" in text and "type: local" in text

    bad = local_source(files, workdir)
    del bad["files"]["treatment_info"]
    proc = run_snakemake(["-n", "depmap_figS9a", "--configfile", overlay(workdir, "prism_bad", bad)], workdir,
                         check=False)
    assert proc.returncode != 0
    assert ("depmap.sources.prism_bad.files has ['logfold_change', 'models']; reader.format 'prism_primary' "
            "reads exactly ['logfold_change', 'treatment_info', 'models']") in proc.stdout + proc.stderr
    wrong = download_source(files, sha)
    wrong["files"]["models"] = {"path": "prism/Model.csv"}
    proc = run_snakemake(["-n", "depmap_figS9a", "--configfile", overlay(workdir, "prism_mixed", wrong)], workdir,
                         check=False)
    assert "depmap.sources.prism_mixed.files.models: a download source gives each file a url" in (
        proc.stdout + proc.stderr)


@pytest.mark.slow
def test_prism_primary_prepare_local_and_download(workdir):
    """The prepare rule on the planted release: read counts and the study's
    counts follow from the design; a checksummed download of the same files
    gives the same targets; a local file whose sha256 differs stops the job."""
    run_snakemake(["--cores", "2", "resources/drug_screen/tiny/raw/pert_info.txt", "--configfile", str(TINY_DS)],
                  workdir)
    raw = workdir / "resources/drug_screen/tiny/raw"
    pert = pd.read_csv(raw / "pert_info.txt", sep="\t", dtype=str, keep_default_na=False)
    cells = list(pd.read_csv(raw / "truth/pairs.tsv", sep="\t", dtype=str)["cell_id"].value_counts().index[:3])
    from biokernels.io.depmap import inchikeys

    cp = pert[pert["pert_type"] == "trt_cp"].set_index("pert_id")["canonical_smiles"]
    keys = inchikeys(cp)
    ok = keys[keys != ""]
    ok = ok[~ok.duplicated(keep=False)]              # one CMAP id per structure: an unambiguous match
    chosen = cp[ok.index[:30]]
    assert not set(inchikeys(pd.Series(NEW_SMILES))) & set(keys)   # the new compounds are new
    files, design = write_release(workdir / "prism", cells, list(chosen))

    sha = {k: digest(p) for k, p in files.items()}
    local = overlay(workdir, "prism_local", local_source(files, workdir, sha256=sha))
    run_snakemake(["--cores", "2", f"{DM_DIR}/counts.json", "--configfile", local], workdir)
    read = pd.read_csv(workdir / DM_DIR / "read_counts.tsv", sep="\t").set_index("count")["value"]
    assert read["format"] == "prism_primary" and read["model_table_layout"] == "Model.csv"
    expected = {"matrix_models": 5, "matrix_columns": design["columns"], "columns_other_dose": 1,
                "columns_used": design["n_compounds"] + 1, "compounds": design["n_compounds"],
                "compounds_several_columns": 1, "compounds_without_smiles": 1, "compounds_without_name": 1,
                "models_not_in_mapping": 1, "values_model_not_in_mapping": design["values_model_not_in_mapping"],
                "values_missing": design["values_missing"],
                "values_combined": 3,      # both screens measured on 3 of the 4 mapped models
                "rows": design["rows"], "cell_lines": 4}
    assert {k: int(read[k]) for k in expected} == expected
    counts = json.loads((workdir / DM_DIR / "counts.json").read_text())
    assert counts["read"]["rows"] == design["rows"] and counts["format"] == "prism_primary"
    assert counts["drugs"]["matched_cmap"] == design["n_cmap_compounds"]
    assert counts["drugs"]["new"] == len(NEW_SMILES) and counts["drugs"]["no_structure"] == 1
    assert counts["no_structure"] == design["no_structure_rows"]          # the SMILES-less compound's rows
    assert counts["cell_not_in_cmap"] == design["absent_rows"]            # model NOTINCMAP
    assert counts["missing_value"] == 0 and counts["duplicate_merged"] == 0
    # every drop counted per cell line and per compound; no row listing by default
    summary = pd.read_csv(workdir / DM_DIR / "dropped_summary.tsv", sep="\t", keep_default_na=False)
    for reason in ("no_structure", "cell_not_in_cmap"):
        for per in ("cell_line", "compound"):
            assert summary.loc[(summary["reason"] == reason) & (summary["per"] == per), "rows"].sum() == \
                counts[reason]
    assert summary.loc[summary["reason"] == "cell_not_in_cmap", "id"].tolist()[0] == "NOTINCMAP"
    assert not (workdir / DM_DIR / "dropped_rows.tsv").exists()
    assert sorted(counts["target_cells"]) == sorted(cells)
    assert counts["pairs"] == design["pairs"]
    targets = pd.read_csv(workdir / DM_DIR / "targets.tsv", sep="\t", index_col=0)
    assert len(targets) == design["pairs"] and set(targets["cell_id"]) == set(cells)
    # the value of a CMAP compound on the first target is the matrix cell (one screen, 2.5 µM)
    lfc = pd.read_csv(files["logfold_change"], index_col=0)
    pid, smi = chosen.index[2], chosen.iloc[2]
    col = [c for c in lfc.columns if c.startswith("BRD-K00000003-")][0]
    assert targets.loc[f"{pid}:{cells[0]}", "viability"] == pytest.approx(lfc.loc["ACH-000001", col])
    # the compound in two screens: mean of both where both are measured
    two = [c for c in lfc.columns if c.startswith("BRD-K00000001-") and "::2.5::" in c]
    assert targets.loc[f"{chosen.index[0]}:{cells[1]}", "viability"] == pytest.approx(
        lfc.loc["ACH-000002", two].mean())
    first = targets.copy()

    # the same files as checksummed downloads (file:// URLs): the same targets
    dl = overlay(workdir, "prism_dl", download_source(files, sha))
    run_snakemake(["--cores", "2", "results/depmap/tiny/prism_dl/prepared/counts.json", "--configfile", dl],
                  workdir)
    again = pd.read_csv(workdir / "results/depmap/tiny/prism_dl/prepared/targets.tsv", sep="\t", index_col=0)
    pd.testing.assert_frame_equal(again, first)
    assert (workdir / "resources/depmap/download/prism_dl/logfold_change.csv").read_bytes() == \
        files["logfold_change"].read_bytes()

    # depmap.cell_lines: two targets, by DepMap id and by name; the rows listed on request
    sel = overlay(workdir, "prism_sel", local_source(files, workdir),
                  {"cell_lines": ["ACH-000001", cells[1].lower()], "list_dropped_rows": True})
    run_snakemake(["--cores", "2", "results/depmap/tiny/prism_sel/prepared/counts.json", "--configfile", sel],
                  workdir)
    out = workdir / "results/depmap/tiny/prism_sel/prepared"
    read = pd.read_csv(out / "read_counts.tsv", sep="\t").set_index("count")["value"]
    # left out: the third CMAP model and NOTINCMAP, each with all its compounds but one NA cell
    # (the third model's) -- ACH-999999 stays counted as not in the model table
    assert int(read["cell_lines_requested"]) == 2 and int(read["models_not_selected"]) == 2
    assert int(read["values_model_not_selected"]) == 2 * design["n_compounds"] - 1
    sel_counts = json.loads((out / "counts.json").read_text())
    assert sorted(sel_counts["target_cells"]) == sorted(cells[:2]) and sel_counts["cell_not_in_cmap"] == 0
    targets_sel = pd.read_csv(out / "targets.tsv", sep="\t", index_col=0)
    pd.testing.assert_frame_equal(
        targets_sel[["drug_key", "cell_id", "viability"]],
        first.loc[first["cell_id"].isin(cells[:2]), ["drug_key", "cell_id", "viability"]])
    rows = pd.read_csv(out / "dropped_rows.tsv", sep="\t", keep_default_na=False)
    assert len(rows) == sel_counts["no_structure"] == (rows["reason"] == "no_structure").sum()

    # a local file that is not the one pinned: the job stops, naming the key
    sha["models"] = "0" * 64
    bad = overlay(workdir, "prism_changed", local_source(files, workdir, sha256=sha))
    proc = run_snakemake(["--cores", "1", "results/depmap/tiny/prism_changed/prepared/counts.json",
                          "--configfile", bad], workdir, check=False)
    log = (workdir / "results/depmap/tiny/prism_changed/logs/prepare.log").read_text()
    assert proc.returncode != 0
    assert "sha256 mismatch (depmap.sources.prism_changed.files.models.sha256)" in log
