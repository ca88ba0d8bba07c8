"""A diffusion data set from public layouts: a BioGRID TAB3 network with GO
labels (GAF 2.2 + OBO), local and downloaded (file:// URL, sha256 pinned).

The test writes the three files into a fresh copy of the workflow: 150 yeast
ORFs on a ring with chords (physical interactions), with planted defects
that the readers must count (genetic rows, a human interactor, '-' ids,
self-loops, duplicates), and a small ontology (root, 3 middle terms, 6
leaves) with 15 ORFs per leaf. With the term-size window [10, 40] the tasks
are the 6 leaves (15 proteins) and the 3 middle terms (30, by propagation);
the root (90) is above the window. Then a dry run of the paper target, a real
run of the inputs rule and of one split, and the parse-time and job-time
checks of the checksums.
"""

from __future__ import annotations

import gzip
import hashlib
import json
import re

import numpy as np
import pandas as pd
import pytest
import yaml

from conftest import REPO, run_snakemake
from fakes.biogrid import TAB3_COLUMNS

TINY_DKL = REPO / ".test/config/diffusion_tiny.yaml"
N = 150
ORFS = [f"Y{'ABCDEFGHIJKLMNOP'[i // 10]}L{i % 10:03d}W" for i in range(N)]


def _tab3_row(n, a, b, kind="physical", org_b="559292", sys_a=None):
    v = {c: "-" for c in TAB3_COLUMNS}
    v.update({"#BioGRID Interaction ID": str(n), "Entrez Gene Interactor A": str(850000 + a),
              "Entrez Gene Interactor B": str(850000 + b), "Systematic Name Interactor A": sys_a or ORFS[a],
              "Systematic Name Interactor B": ORFS[b], "Official Symbol Interactor A": f"G{a}",
              "Official Symbol Interactor B": f"G{b}", "Experimental System": "Two-hybrid",
              "Experimental System Type": kind, "Author": "Doe J (2001)", "Publication Source": "PUBMED:1",
              "Organism ID Interactor A": "559292", "Organism ID Interactor B": org_b,
              "Throughput": "Low Throughput", "Source Database": "BIOGRID",
              "Organism Name Interactor A": "Saccharomyces cerevisiae (S288c)",
              "Organism Name Interactor B": "Saccharomyces cerevisiae (S288c)"})
    return "\t".join(v[c] for c in TAB3_COLUMNS)


def write_biogrid(path):
    """Ring i - i+1 (150 edges) and chords i - i+7 (150 edges), each once;
    plus 10 genetic rows, 5 human partners, 4 '-' systematic names, 6
    self-loops and 20 reversed duplicates: 300 edges, 150 proteins."""
    rows, n = [], 0
    for i in range(N):
        for j in ((i + 1) % N, (i + 7) % N):
            n += 1
            rows.append(_tab3_row(n, i, j))
    for i in range(10):
        n += 1
        rows.append(_tab3_row(n, i, (i + 50) % N, kind="genetic"))
    for i in range(5):
        n += 1
        rows.append(_tab3_row(n, i, i + 60, org_b="9606"))
    for i in range(4):
        n += 1
        rows.append(_tab3_row(n, i, i + 70, sys_a="-"))
    for i in range(6):
        n += 1
        rows.append(_tab3_row(n, i, i))
    for i in range(20):
        n += 1
        rows.append(_tab3_row(n, (i + 1) % N, i))          # reverse of ring edge i - i+1
    path.write_text("\t".join(TAB3_COLUMNS) + "\n" + "\n".join(rows) + "\n")
    return {"rows": n, "rows_other_system_type": 10, "rows_other_organism": 5, "rows_missing_id": 4,
            "rows_several_ids": 0, "self_loops_dropped": 6, "duplicates_merged": 20, "edges": 300, "proteins": N}


ROOT = "GO:0008150"
MIDS = [f"GO:00000{k}0" for k in (1, 2, 3)]
LEAVES = [f"GO:00001{k:02d}" for k in range(1, 7)]


def write_obo(path):
    stanzas = ["format-version: 1.2\nontology: go\n",
               f"[Term]\nid: {ROOT}\nname: biological_process\nnamespace: biological_process\n"]
    for k, m in enumerate(MIDS):
        stanzas.append(f"[Term]\nid: {m}\nname: middle {k}\nnamespace: biological_process\nis_a: {ROOT}\n")
    for k, leaf in enumerate(LEAVES):
        rel = f"is_a: {MIDS[k // 2]}" if k % 2 == 0 else f"is_a: {ROOT}\nrelationship: part_of {MIDS[k // 2]}"
        stanzas.append(f"[Term]\nid: {leaf}\nname: leaf {k}\nnamespace: biological_process\n{rel}\n")
    stanzas.append("[Term]\nid: GO:0000999\nname: obsolete\nnamespace: biological_process\nis_obsolete: true\n")
    stanzas.append("[Typedef]\nid: part_of\nname: part of\n")
    path.write_text("\n".join(stanzas))


def write_gaf(path):
    """Leaf k: ORFs 15k .. 15k+14 (experimental evidence); plus 12 IEA rows,
    3 NOT rows (each contradicts one leaf annotation), 2 rows to an obsolete
    term and 4 rows of proteins absent from the network."""
    lines = ["!gaf-version: 2.2", "!generated-by: test", "!"]

    def line(i, term, qual="involved_in", ev="IDA", orf=None):
        orf = orf or ORFS[i]
        return "\t".join(["SGD", f"S{i:09d}", f"G{i}", qual, term, "PMID:1", ev, "", "P", f"gene {i}",
                          f"{orf}|G{i}-alias", "protein", "taxon:559292", "20240617", "SGD", "", ""])

    for k, leaf in enumerate(LEAVES):
        lines += [line(i, leaf, ev="EXP" if i % 2 else "IMP") for i in range(15 * k, 15 * k + 15)]
    lines += [line(100 + i, LEAVES[i % 6], ev="IEA") for i in range(12)]
    # NOT on the middle term above ORF 0's leaf: its leaf annotation is contradicted (dropped), as
    # for ORF 20 (NOT on its own leaf) and ORF 40 (NOT on its middle term via part_of)
    lines += [line(0, MIDS[0], qual="NOT|involved_in"), line(20, LEAVES[1], qual="NOT|involved_in"),
              line(40, MIDS[1], qual="NOT|involved_in")]
    lines += [line(120 + i, "GO:0000999") for i in range(2)]
    lines += [line(200 + i, LEAVES[0], orf=f"YZZ{i:03d}C") for i in range(4)]
    data = ("\n".join(lines) + "\n").encode()
    path.write_bytes(gzip.compress(data))
    return hashlib.sha256(path.read_bytes()).hexdigest()


def _setup(workdir, obo_sha=None, gaf_sha=None):
    data = workdir / "data"
    data.mkdir()
    net_counts = write_biogrid(data / "BIOGRID-ORGANISM-Test-4.4.235.tab3.txt")
    write_obo(data / "go-basic.obo")
    gaf_digest = write_gaf(data / "sgd.gaf.gz")
    obo_digest = hashlib.sha256((data / "go-basic.obo").read_bytes()).hexdigest()
    src = {"paper_dataset": "ligand", "type": "biogrid", "data": "substitute", "data_reason": "test BioGRID and GO files",
           "description": "test: BioGRID TAB3 + GO",
           "biogrid_path": "data/BIOGRID-ORGANISM-Test-4.4.235.tab3.txt", "biogrid_taxid": 559292,
           "biogrid_id_column": "systematic", "label_format": "gaf", "gaf_path": "data/sgd.gaf.gz",
           "sha256": {"gaf": gaf_sha or gaf_digest}, "go_id_column": "DB_Object_Synonym", "go_taxon": 559292,
           "min_annotated": 10, "max_annotated": 40,
           "downloads": {"obo_path": {"url": (data / "go-basic.obo").as_uri(), "sha256": obo_sha or obo_digest}}}
    overlay = workdir / "config/go_biogrid.yaml"
    overlay.write_text(yaml.safe_dump({"diffusion": {"datasets": ["go_biogrid"], "sources": {"go_biogrid": src}}}))
    return overlay, net_counts, obo_digest


def test_biogrid_go_source_dry_run_inputs_and_a_split(workdir):
    overlay, net_counts, obo_digest = _setup(workdir)
    conf = ["--configfile", str(TINY_DKL), str(overlay)]
    out = run_snakemake(["-n", "diffusion_table2", *conf], workdir).stdout
    jobs = set(re.findall(r"^(?:local)?rule (\w+):$", out, re.M))
    assert {"diffusion_download", "diffusion_inputs", "diffusion_eigen", "diffusion_split", "diffusion_sm1",
            "diffusion_table", "diffusion_table2"} <= jobs
    assert f"resources/diffusion/download/{obo_digest}/go-basic.obo" in out

    run_snakemake(["--cores", "2", "results/diffusion/go_biogrid/splits/00/roc.tsv", *conf], workdir)
    summary = json.loads((workdir / "resources/diffusion/go_biogrid/inputs.json").read_text())
    assert summary["network"] == net_counts
    ann = summary["annotations"]
    assert ann["gaf_version"] == "2.2" and ann["ontology_terms"] == 10 and ann["ontology_obsolete_terms"] == 1
    assert {k: ann[k] for k in ("rows", "rows_iea_excluded", "rows_obsolete_term", "rows_not", "objects",
                                "objects_not_in_network", "pairs_blocked_by_not")} == {
        "rows": 90 + 12 + 3 + 2 + 4, "rows_iea_excluded": 12, "rows_obsolete_term": 2, "rows_not": 3,
        "objects": 90 + 4, "objects_not_in_network": 4,
        "pairs_blocked_by_not": 3}             # ORFs 0, 20, 40 lose their leaf
    # sizes: leaves 15 - 1 for the three with a blocked ORF; middles 30 less the ORFs whose every
    # path to them is blocked (0 under middle 1, 20 under middle 1 via its leaf, 40 under middle 2);
    # root 90 - 3: above the window
    assert (ann["terms_annotated"], ann["terms_above_max"], ann["terms_kept"]) == (10, 1, 9)
    labels = pd.read_csv(workdir / "resources/diffusion/go_biogrid/labels.tsv", sep="\t", index_col=0)
    assert labels.shape == (N, 9)
    want = {LEAVES[0]: 14, LEAVES[1]: 14, LEAVES[2]: 14, LEAVES[3]: 15, LEAVES[4]: 15, LEAVES[5]: 15,
            MIDS[0]: 28, MIDS[1]: 29, MIDS[2]: 30}
    assert labels.sum().to_dict() == want
    assert summary["labels"]["tasks_kept"] == 9 and summary["labels"]["network_unannotated"] == N - 87
    assert summary["sha256"] == {"gaf_path": hashlib.sha256((workdir / "data/sgd.gaf.gz").read_bytes()).hexdigest()}
    roc = pd.read_csv(workdir / "results/diffusion/go_biogrid/splits/00/roc.tsv", sep="\t")
    assert len(roc) and np.isfinite(roc.select_dtypes("number").to_numpy(float)).any()


def test_unpinned_and_wrong_checksums_stop_the_run(workdir):
    overlay, _, _ = _setup(workdir, obo_sha="unpinned")
    proc = run_snakemake(["-n", "diffusion_table2", "--configfile", str(TINY_DKL), str(overlay)], workdir, check=False)
    text = proc.stdout + proc.stderr
    assert proc.returncode != 0
    assert "diffusion.sources.go_biogrid.downloads.obo_path.sha256 is not pinned" in text
    assert "sha256sum" in text and "diffusion.sources.go_biogrid.obo_path to a local copy" in text
    assert not (workdir / "results").exists()

    # a wrong pin on a local file: the inputs job fails naming the key and both digests
    (workdir / "config/go_biogrid.yaml").unlink()
    overlay, _, _ = _setup_again(workdir, gaf_sha="0" * 64)
    proc = run_snakemake(["--cores", "1", "resources/diffusion/go_biogrid/inputs.json", "--configfile",
                          str(TINY_DKL), str(overlay)], workdir, check=False)
    log = (workdir / "results/diffusion/go_biogrid/logs/inputs.log").read_text()
    assert proc.returncode != 0
    assert re.search(r"gaf_path: data/sgd\.gaf\.gz: sha256 mismatch: expected 0{64}, got [0-9a-f]{64}", log)
    assert not (workdir / "resources/diffusion/go_biogrid/labels.tsv").exists()


def _setup_again(workdir, **kw):
    import shutil

    shutil.rmtree(workdir / "data")
    return _setup(workdir, **kw)


@pytest.mark.parametrize("change, message", [
    ({"gaf_path": None}, "diffusion.sources.go_biogrid.gaf_path is neither set (a local file) nor in "
                         "diffusion.sources.go_biogrid.downloads"),
    ({"obo_path": "data/go-basic.obo"}, "diffusion.sources.go_biogrid.obo_path is set and is in "
                                        "diffusion.sources.go_biogrid.downloads: keep one"),
    ({"mips_genes_path": "data/go-basic.obo"}, "diffusion.sources.go_biogrid.mips_genes_path is set but "
                                               "label_format is gaf, which does not read it"),
    ({"sha256": {"network": "0" * 64}}, "diffusion.sources.go_biogrid.sha256.network: network_path is not a file "
                                        "this source reads"),
])
def test_file_settings_are_checked_at_parse_time(workdir, change, message):
    overlay, _, _ = _setup(workdir)
    cfg = yaml.safe_load(overlay.read_text())
    cfg["diffusion"]["sources"]["go_biogrid"].update(change)
    overlay.write_text(yaml.safe_dump(cfg))
    proc = run_snakemake(["-n", "diffusion_table2", "--configfile", str(TINY_DKL), str(overlay)], workdir, check=False)
    assert proc.returncode != 0 and message in proc.stdout + proc.stderr
