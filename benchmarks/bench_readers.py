"""Benchmark: each input reader's throughput and peak memory on a file of real size.

For each reader, a file of the real release's size is written in the exact
public layout (synthetic content, fixed seed), then read by the project's
reader in a **fresh subprocess**, so its peak resident set is its own
(``VmHWM`` of that process, :func:`_harness.peak_rss_mib`). One run per
reader (``repeats: 1``): these are I/O and parsing figures of one file, not
a comparison, so there are no ratios and no median.

Readers (``--readers``, comma-separated names or groups ``geo``,
``lincs2020``, ``go``, ``biogrid``, ``prism``; default all) and the files
(real sizes at ``--scale 1``; ``--scale`` multiplies the row counts, the
column counts stay):

``geo_series_matrix``
    :func:`biokernels.io.geo.read_series_matrix` on a gzipped GEO series
    matrix (as GEO serves ``GSEnnn_series_matrix.txt.gz``) of 22,283 probes
    x 300 samples, MAS5-like values with one decimal, a few ``null`` cells;
    written by the tests' writer (``tests/fakes/geo.py``,
    ``write_series_matrix``).
``geo_platform_annotation``
    :func:`biokernels.io.geo.read_platform_annotation` on a GPL96-like
    ``GPL96.annot.gz`` (the file the workflow downloads): the annot preamble
    of the tests' ``write_annot`` with the 21 columns of GEO's annot files
    (``Gene symbol`` with ``A///B`` multi-gene probes and empty symbols, GO
    term lists that make most of the bytes), 22,283 probes.
``lincs2020_siginfo``
    :func:`biokernels.io.lincs2020.read_siginfo` on a ``siginfo_beta.txt``
    of 720,216 signatures (the columns of the tests' ``SIG_COLUMNS`` plus
    eleven more of the release's, ``-666`` nulls).
``lincs2020_level5_all``
    :func:`biokernels.io.gctx.iter_gctx_columns` (the block reader the
    LINCS 2020 level-5 matrix is read with) over all 720,216 signatures x
    978 landmark genes, float32 (2.8 GB), with its defaults (10,000 columns
    a block, ``validate=True``). The GCTX is written with h5py in blocks in
    the layout of :func:`biokernels.io.gctx.write_gctx` and of the tests'
    release files (``tests/unit/io/test_lincs2020_io.py``: ids only,
    uncompressed, chunks of whole signatures, ``_default_chunks``).
``lincs2020_level5_subset``
    The same reader as the workflow calls it (``biokernels.io.cmap``'s
    preprocessing): the columns kept by the default
    :class:`biokernels.io.lincs2020.SignatureFilter` (``trt_cp`` and
    ``ctl_vehicle``, ``qc_pass`` 1: about 76% of the signatures, scattered),
    all landmark rows by id, ``CHUNK_BYTES / (8 x 978)`` columns a block,
    ``validate=False``.
``go_gaf``, ``go_obo``, ``go_load_gaf``
    :func:`biokernels.io.go.read_gaf` on an SGD-sized ``sgd.gaf.gz`` of
    150,000 GAF 2.2 annotation lines (the tests' ``gaf_line``; ~6,400
    objects, IEA and ND rows, NOT qualifiers, alt ids and obsolete terms);
    :func:`biokernels.io.go.read_obo` on a ``go-basic.obo`` of 45,000 term
    stanzas (9% obsolete, is_a / part_of / regulates / has_part, alt_ids,
    defs, synonyms); :func:`biokernels.io.go.load_gaf` (both, plus the
    labels) with the yeast config's settings.
``biogrid_tab3``
    :func:`biokernels.io.biogrid.read_biogrid_tab3` on a BioGRID TAB3 zip
    (``BIOGRID-ORGANISM-4.4.235.tab3.zip`` with the yeast member, as the
    workflow reads it) of 800,000 interactions in the 37 columns of the
    tests' ``TAB3_COLUMNS``; physical, taxid 559292, systematic names.
``prism_primary``
    :func:`biokernels.io.depmap.load_prism_primary` (the config's settings)
    on the 19Q4 primary log-fold-change matrix 578 models x 4,686 treatment
    columns, its treatment info and a DepMap ``Model.csv``; R ``write.csv``
    quoting (the tests' ``r_csv``), 15 significant digits, ``NA``.
``prism_secondary``
    :func:`biokernels.io.depmap.load_prism_secondary` on a dose-response
    table of 700,000 rows (the tests' ``SECONDARY_HEAD``) and the
    ``Model.csv``.

Measured per reader: file size (MB = 10^6 bytes, on disk; and uncompressed
where compressed), rows (and values for matrices), wall seconds of the
reader call (the worker imports the modules first; the call itself is timed
with ``time.perf_counter``), throughput (MB/s of the files on disk, rows/s),
peak RSS of the worker process (MiB) and its RSS after the imports, the
largest RSS the parent saw while polling, and the reader's own counts where
it returns them. A reader is stopped (and recorded with ``error``) past
``--timeout`` seconds or ``--max-rss-gib`` of RSS.

Page cache: by default (``--cache cold``) each file is flushed and dropped
from the page cache (``fsync`` + ``posix_fadvise(DONTNEED)``, no root needed)
before its reader runs, so the read comes from the disk, and the resident
bytes before the read (``fincore``) are recorded; ``--cache warm`` reads the
files once first instead.

The files go to ``--workdir`` (default ``/tmp/bench_readers``), one folder per
data set, deleted after its last reader unless ``--keep`` (a kept folder
with the same scale and seed is reused by the next run).

Output (``--json``): ``readers`` (one record per reader), ``datasets``
(generation time, sizes, parameters); the headline holds the compact table
(``headline.readers``) and the environment (threads, load average before and
after, ...). Usage::

    .venv/bin/python benchmarks/bench_readers.py --json results/benchmarks/readers.json
    .venv/bin/python benchmarks/bench_readers.py --readers geo,prism_primary --scale 0.01 --json /tmp/r.json
"""

from __future__ import annotations

import argparse
import gzip
import json
import os
import shutil
import subprocess
import sys
import tempfile
import time
import zipfile
from pathlib import Path
from typing import Callable

import numpy as np

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import REPO, begin_report, finish_report, log, peak_rss_mib, pin_threads, write_json  # noqa: E402
from _harness import _jsonable as _harness_jsonable  # noqa: E402

# The tests' fake-file writers (tests/fakes, imported as ``fakes`` where they are used), so that the files
# have the layouts the tests check.
sys.path.insert(0, str(REPO / "tests"))
MB = 1e6

#: Real sizes (rows; columns stay fixed under --scale).
REAL = {
    "geo_probes": 22_283, "geo_samples": 300,
    "lincs_signatures": 720_216, "lincs_genes": 978,
    "gaf_lines": 150_000, "gaf_objects": 6_400, "obo_terms": 45_000,
    "biogrid_rows": 800_000, "biogrid_genes": 6_000,
    "prism_models": 578, "prism_columns": 4_686, "prism_model_table": 2_000,
    "prism_secondary_rows": 700_000, "prism_secondary_compounds": 1_448, "prism_secondary_models": 489,
}


def scaled(real: int, scale: float, minimum: int) -> int:
    """``real * scale`` rounded, at least ``minimum``."""
    return max(int(minimum), int(round(real * float(scale))))


def _rng(seed: int, *stream: int) -> np.random.Generator:
    return np.random.default_rng([int(seed), *map(int, stream)])


_WORDS = ("cell", "protein", "regulation", "transport", "membrane", "activity", "binding", "kinase", "complex",
          "signaling", "pathway", "mitochondrial", "nuclear", "response", "stimulus", "metabolic", "process",
          "positive", "negative", "receptor", "DNA", "RNA", "repair", "replication", "transcription", "factor",
          "organelle", "assembly", "vesicle", "cytoplasmic", "synthesis", "catabolic", "lipid", "ion", "channel",
          "development", "differentiation", "apoptotic", "cycle", "phase", "transferase", "hydrolase", "oxidase",
          "ribosome", "translation", "chromatin", "histone", "modification", "localization", "secretion")


def _phrase(rng: np.random.Generator, lo: int, hi: int) -> str:
    return " ".join(_WORDS[i] for i in rng.integers(0, len(_WORDS), int(rng.integers(lo, hi + 1))))


def _gzip_size(path: Path) -> int:
    """Uncompressed size of a single-member gzip file (its ISIZE trailer)."""
    with open(path, "rb") as fh:
        fh.seek(-4, os.SEEK_END)
        return int.from_bytes(fh.read(4), "little")


def file_info(path: Path, member: str | None = None) -> dict:
    path = Path(path)
    size = path.stat().st_size
    info = {"name": path.name, "mb": size / MB}
    if path.suffix == ".gz":
        info["uncompressed_mb"] = _gzip_size(path) / MB
    elif path.suffix == ".zip":
        with zipfile.ZipFile(path) as z:
            info["uncompressed_mb"] = sum(i.file_size for i in z.infolist()
                                          if member is None or i.filename == member) / MB
        info["member"] = member
    return info


class _LazyRows:
    """A sized iterable making each row when iterated (the tests' writers
    take a list; this keeps millions of cells out of memory)."""

    def __init__(self, n: int, make: Callable[[int], object]):
        self.n, self.make = int(n), make

    def __len__(self) -> int:
        return self.n

    def __iter__(self):
        return (self.make(i) for i in range(self.n))


# =========================================================================== generators
# Each writes its files into a folder and returns {"files": {key: path}, "params": {...}, ...}.


def affy_probe_ids(n: int) -> list[str]:
    """GPL96-like probe set ids (``200000_s_at``, ``200001_at``, ...), unique."""
    suffix = ("_at", "_at", "_at", "_s_at", "_x_at")
    return [f"{200000 + i}{suffix[i % 5]}" for i in range(n)]


def gene_symbols(n: int) -> list[str]:
    prefixes = ("ZNF", "SLC", "KIAA", "TMEM", "CCDC", "RPL", "FAM", "ABC", "MAP", "CDK", "KRT", "OR", "HLA-D",
                "PRR", "ANKRD", "LINC")
    return [f"{prefixes[i % len(prefixes)]}{i // len(prefixes) + 1}" for i in range(n)]


#: The columns of GEO's GPLnnn.annot files.
ANNOT_COLUMNS = ["ID", "Gene title", "Gene symbol", "Gene ID", "UniGene title", "UniGene symbol", "UniGene ID",
                 "Nucleotide Title", "GI", "GenBank Accession", "Platform_CLONEID", "Platform_ORF",
                 "Platform_SPOTID", "Chromosome location", "Chromosome annotation", "GO:Function", "GO:Process",
                 "GO:Component", "GO:Function ID", "GO:Process ID", "GO:Component ID"]


def write_gpl_annot(path: Path, probes: list[str], rng: np.random.Generator, platform: str = "GPL96") -> dict:
    """A ``GPLnnn.annot.gz`` as GEO publishes it: the preamble of the tests'
    ``write_annot`` (``^Annotation``, ``!Annotation_*``, ``#`` column notes,
    ``!platform_table_begin``/``end``) and the 21 annot columns. ~6% of
    probes have no symbol (empty), ~8% several (``A///B``)."""
    symbols = gene_symbols(13_000)
    go_names = [_phrase(rng, 2, 5) for _ in range(3000)]
    n = len(probes)
    kind = rng.random(n)
    n_multi = n_none = 0
    lines = ["^Annotation", "!Annotation_date = Aug 09 2016", f"!Annotation_platform = {platform}",
             "!Annotation_platform_title = [HG-U133A] Affymetrix Human Genome U133A Array",
             "!Annotation_platform_organism = Homo sapiens",
             f"!Annotation_series_count = 1700", f"!Annotation_sample_count = 40000",
             "#ID = ID from Platform data table",
             "#Gene title = Entrez Gene name", "#Gene symbol = Entrez Gene symbol",
             "#Gene ID = Entrez Gene identifier", "#GO:Function = Gene Ontology Function term",
             "#GO:Process = Gene Ontology Process term", "#GO:Component = Gene Ontology Component term",
             "!platform_table_begin", "\t".join(ANNOT_COLUMNS)]

    def go_list(k: int) -> tuple[str, str]:
        idx = rng.integers(0, len(go_names), k)
        return "///".join(go_names[i] for i in idx), "///".join(f"GO:{1000 + 7 * i:07d}" for i in idx)

    for i, p in enumerate(probes):
        if kind[i] < 0.06:
            genes = []
            n_none += 1
        elif kind[i] < 0.14:
            genes = list(dict.fromkeys(int(g) for g in rng.integers(0, len(symbols), int(rng.integers(2, 4)))))
            n_multi += len(genes) > 1
        else:
            genes = [int(rng.integers(0, len(symbols)))]
        sym = "///".join(symbols[g] for g in genes)
        title = "///".join(_phrase(rng, 2, 5) for _ in genes)
        gid = "///".join(str(1000 + g) for g in genes)
        if genes:
            fn, fn_id = go_list(int(rng.integers(1, 8)))
            pr, pr_id = go_list(int(rng.integers(2, 20)))
            co, co_id = go_list(int(rng.integers(1, 8)))
            chrom = f"chr{1 + genes[0] % 22}q{genes[0] % 40}.{genes[0] % 3 + 1}"
            chrann = f"Chromosome {1 + genes[0] % 22}, NC_0000{1 + genes[0] % 22:02d}.11 ({genes[0] * 997}..{genes[0] * 997 + 5000})"
        else:
            fn = fn_id = pr = pr_id = co = co_id = chrom = chrann = ""
        acc = f"NM_{100000 + i:06d}"
        lines.append("\t".join([p, title, sym, gid, "", "", "", f"Homo sapiens mRNA {acc}", str(4500000 + i), acc,
                                "", "", "", chrom, chrann, fn, pr, co, fn_id, pr_id, co_id]))
    lines.append("!platform_table_end")
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return {"probes": n, "probes_without_symbol": n_none, "probes_multi_gene": n_multi}


def make_geo(folder: Path, scale: float, seed: int) -> dict:
    """A GEO series matrix (gzip, GPL96, 22,283 probes x 300 samples) and
    the GPL96 annot file of the same probes."""
    from fakes.geo import write_series_matrix

    rng = _rng(seed, 1)
    n_probes = scaled(REAL["geo_probes"], scale, 10)
    n_samples = REAL["geo_samples"]
    probes = affy_probe_ids(n_probes)
    samples = [f"GSM{36777 + i}" for i in range(n_samples)]
    values = np.exp(rng.normal(6.0, 1.6, size=(n_probes, n_samples)))
    null = rng.random((n_probes, n_samples)) < 1e-4
    characteristics = [
        [f"tissue: breast tumor" for _ in samples],
        [f"age: {a}" for a in rng.integers(28, 90, n_samples)],
        [f"er status: {'positive' if x else 'negative'}" for x in rng.random(n_samples) < 0.7],
        [f"t.rfs: {t}" for t in rng.integers(30, 5000, n_samples)],
        [f"e.rfs: {e}" for e in rng.integers(0, 2, n_samples)],
    ]

    def row(i: int):
        cells = list(map("{:.1f}".format, values[i].tolist()))
        for j in np.flatnonzero(null[i]):
            cells[j] = "null"
        return probes[i], cells

    sm = write_series_matrix(folder / "GSE99999_series_matrix.txt.gz", samples, characteristics,
                             _LazyRows(n_probes, row), platform="GPL96", compress=True)
    annot = folder / "GPL96.annot.gz"
    planted = write_gpl_annot(annot, probes, _rng(seed, 2))
    return {"files": {"series_matrix": str(sm), "platform": str(annot)},
            "params": {"probes": n_probes, "samples": n_samples, "null_cells": int(null.sum()), **{
                f"annot_{k}": v for k, v in planted.items()}}}


# ----------------------------------------------------------------- LINCS 2020


def gctx_block(seed: int, block: int, n_cols: int, n_genes: int) -> np.ndarray:
    """The values of block ``block`` (signatures x genes, float32 z-scores),
    reproducible from the seed (the tests regenerate them)."""
    x = _rng(seed, 3, block).standard_normal((n_cols, n_genes), dtype=np.float32)
    x *= np.float32(1.5)
    return x


def write_gctx_blocks(path: Path, row_ids: list[str], col_ids: list[str], seed: int,
                      block_cols: int | None = None) -> dict:
    """A GCTX written with h5py in blocks of signatures, in the layout of
    :func:`biokernels.io.gctx.write_gctx` as the tests write CMap's release
    files (``compression=None``, chunks of whole signatures of
    ``_default_chunks``): root ``version`` = ``GCTX1.0``,
    ``0/DATA/0/matrix`` (n_cols, n_rows) float32, ``0/META/ROW/id`` and
    ``0/META/COL/id`` as fixed-length byte strings. Written to a temporary
    name and moved into place."""
    import h5py

    from biokernels.io import gctx

    n_cols, n_genes = len(col_ids), len(row_ids)
    chunk = gctx._default_chunks(n_cols, n_genes, 4)
    if block_cols is None:
        block_cols = chunk[0] * max(1, (80 << 20) // (chunk[0] * n_genes * 4))   # ~80 MB, whole chunks
    tmp = path.with_name(path.name + ".part")
    with h5py.File(tmp, "w") as h5:
        h5.attrs["version"] = np.bytes_(gctx.GCTX_VERSION)
        ds = h5.create_dataset(gctx.MATRIX, shape=(n_cols, n_genes), dtype=np.float32, chunks=chunk)
        for b, start in enumerate(range(0, n_cols, block_cols)):
            stop = min(n_cols, start + block_cols)
            ds[start:stop] = gctx_block(seed, b, stop - start, n_genes)
        for group, ids in ((gctx.ROW_META, row_ids), (gctx.COL_META, col_ids)):
            g = h5.create_group(group, track_order=True)
            g.create_dataset("id", data=np.array([s.encode() for s in ids], dtype=f"S{max(map(len, ids))}"))
    os.replace(tmp, path)
    return {"chunks": list(chunk), "block_cols": int(block_cols)}


#: Extra columns of the release's siginfo_beta.txt beyond the tests' SIG_COLUMNS.
SIG_EXTRA = ["bead_batch", "build_name", "cc_q75", "ss_ngene", "pct_self_rank_q25", "wt",
             "median_recall_rank_spearman", "median_recall_score_spearman", "project_code", "det_plates",
             "det_wells"]


def make_lincs(folder: Path, scale: float, seed: int) -> dict:
    """The level-5 landmark GCTX (n signatures x 978 genes, float32), its
    ``siginfo_beta.txt`` and the ids the workflow's filter keeps."""
    import pandas as pd

    from fakes.lincs2020 import SIG_COLUMNS

    rng = _rng(seed, 4)
    n = scaled(REAL["lincs_signatures"], scale, 20)
    g = REAL["lincs_genes"]
    genes = [str(x) for x in np.sort(rng.choice(np.arange(1, 120_000), g, replace=False))]
    # plates of 384 wells: one project, cell line and time per plate
    plate = np.arange(n) // 384
    well = np.arange(n) % 384
    n_plates = int(plate[-1]) + 1
    cells = [f"CL{k:03d}" for k in range(230)]
    projects = ["CPC", "REP", "LJP", "HOG", "ABY", "PBIOA", "MOAR", "DOS"]
    plate_cell = rng.integers(0, len(cells), n_plates)
    plate_time = rng.choice([6, 24, 24, 48], n_plates)
    plate_proj = rng.integers(0, len(projects), n_plates)
    rows_abc = "ABCDEFGHIJKLMNOP"
    sig_id = [f"{projects[plate_proj[p]]}{p:04d}_{cells[plate_cell[p]]}_{plate_time[p]}H:{rows_abc[w // 24]}{w % 24 + 1:02d}"
              for p, w in zip(plate.tolist(), well.tolist())]
    u = rng.random(n)
    ptype = np.where(u < 0.05, "ctl_vehicle", np.where(u < 0.08, "ctl_untrt", "trt_cp"))
    compound = rng.integers(0, 33_000, n)
    pert_id = np.where(ptype == "trt_cp", np.char.add("BRD-K", np.char.zfill(compound.astype(str), 8)),
                       np.where(ptype == "ctl_vehicle", "DMSO", "UnTrt"))
    doses = np.array(["0.04", "0.12", "0.37", "1.11", "3.33", "10"])
    dose = np.where(ptype == "trt_cp", doses[rng.integers(0, len(doses), n)], "-666")
    q = rng.random(n)
    qc = np.where(q < 0.78, "1", np.where(q < 0.98, "0", "-666"))
    time_h = plate_time[plate].astype(str)
    df = pd.DataFrame({
        "sig_id": sig_id, "pert_id": pert_id, "cmap_name": pert_id, "pert_type": ptype,
        "cell_iname": np.array(cells)[plate_cell[plate]], "pert_dose": dose,
        "pert_dose_unit": np.where(dose == "-666", "-666", "uM"),
        "pert_idose": np.where(dose == "-666", "-666", np.char.add(dose, " uM")),
        "pert_time": time_h, "pert_time_unit": "h", "pert_itime": np.char.add(time_h, " h"),
        "qc_pass": qc, "is_hiq": np.where(rng.random(n) < 0.4, "1", "0"),
        "nsample": rng.integers(1, 12, n).astype(str), "tas": np.round(rng.random(n), 6),
        "bead_batch": np.char.add("b", rng.integers(1, 40, n).astype(str)), "build_name": "-666",
        "cc_q75": np.round(rng.uniform(-0.2, 1, n), 6), "ss_ngene": rng.integers(0, 400, n),
        "pct_self_rank_q25": np.round(rng.uniform(0, 100, n), 6), "wt": "-666",
        "median_recall_rank_spearman": np.round(rng.uniform(0, 1, n), 6),
        "median_recall_score_spearman": np.round(rng.uniform(-1, 1, n), 6),
        "project_code": np.array(projects)[plate_proj[plate]],
        "det_plates": np.char.add(np.array(projects)[plate_proj[plate]], "_X1"), "det_wells": "A03|B05|C07",
    })
    assert list(df.columns) == list(SIG_COLUMNS) + SIG_EXTRA
    siginfo = folder / "siginfo_beta.txt"
    df.to_csv(siginfo, sep="\t", index=False)
    keep = df["pert_type"].isin(["trt_cp", "ctl_vehicle"]).to_numpy() & (df["qc_pass"] == "1").to_numpy()
    subset = folder / "signatures_kept.txt"
    subset.write_text("\n".join(df["sig_id"].to_numpy()[keep]) + "\n")
    del df
    gctx_path = folder / f"level5_beta_trt_cp_n{n}x{g}.gctx"
    layout = write_gctx_blocks(gctx_path, genes, sig_id, seed)
    return {"files": {"gctx": str(gctx_path), "siginfo": str(siginfo), "kept_ids": str(subset)},
            "params": {"signatures": n, "genes": g, "signatures_kept_by_filter": int(keep.sum()),
                       "pert_types": {k: int(v) for k, v in zip(*np.unique(ptype, return_counts=True))},
                       **layout}}


# ----------------------------------------------------------------- GO

GO_NAMESPACES = ("biological_process", "molecular_function", "cellular_component")
GO_ROOTS = ("GO:0008150", "GO:0003674", "GO:0005575")


def write_obo(path: Path, n_terms: int, rng: np.random.Generator) -> dict:
    """A ``go-basic.obo``-like OBO 1.2 file of ``n_terms`` term stanzas
    (9% obsolete): per live term a namespace (62% / 27% / 11%), 1-3 ``is_a``
    parents among earlier terms of its namespace (a DAG), ``part_of`` (12%),
    ``regulates`` (6% of processes), ``has_part`` (2%), a cross-namespace
    ``part_of`` (1%), an ``alt_id`` (5%), a ``def``, 0-3 synonyms and an
    xref; ids are shuffled over the topological order and written sorted, as
    GO does. Returns what the GAF needs (live terms per namespace, alt ids,
    obsolete ids)."""
    n_terms = max(int(n_terms), 30)
    n_obs = int(round(0.09 * n_terms))
    n_live = n_terms - n_obs
    ns = rng.choice(3, size=n_live, p=[0.62, 0.27, 0.11])
    ns[:3] = [0, 1, 2]
    pool = 1 + rng.choice(2_599_999, size=n_terms + n_live, replace=False)
    pool = pool[~np.isin(pool, [8150, 3674, 5575])]
    ids = [f"GO:{x:07d}" for x in pool[:n_terms]]
    ids[:3] = GO_ROOTS
    alt_pool = iter(f"GO:{x:07d}" for x in pool[n_terms:])
    names = [_phrase(rng, 2, 6) for _ in range(n_terms)]
    names[:3] = list(GO_NAMESPACES)
    earlier = {0: [0], 1: [1], 2: [2]}
    stanzas = {}
    alt_ids = {}
    by_ns = {0: [ids[0]], 1: [ids[1]], 2: [ids[2]]}
    for k in range(n_live):
        lines = ["[Term]", f"id: {ids[k]}", f"name: {names[k]}", f"namespace: {GO_NAMESPACES[ns[k]]}"]
        if k >= 3 and rng.random() < 0.05:
            a = next(alt_pool)
            alt_ids[a] = ids[k]
            lines.append(f"alt_id: {a}")
        lines.append(f'def: "{_phrase(rng, 10, 24)}." [GOC:curators, PMID:{int(rng.integers(1e6, 3e7))}]')
        for _ in range(int(rng.integers(0, 4))):
            lines.append(f'synonym: "{_phrase(rng, 2, 6)}" {"EXACT" if rng.random() < 0.5 else "RELATED"} []')
        if rng.random() < 0.3:
            lines.append(f"xref: Reactome:R-HSA-{int(rng.integers(1e5, 1e7))}")
        if k >= 3:
            same = earlier[ns[k]]
            n_par = 1 + (rng.random() < 0.35) + (rng.random() < 0.1)
            parents = sorted({same[int(rng.integers(0, len(same)))] for _ in range(n_par)})
            lines += [f"is_a: {ids[p]} ! {names[p]}" for p in parents]
            if rng.random() < 0.12:
                p = same[int(rng.integers(0, len(same)))]
                lines.append(f"relationship: part_of {ids[p]} ! {names[p]}")
            if ns[k] == 0 and rng.random() < 0.06:
                p = same[int(rng.integers(0, len(same)))]
                lines.append(f"relationship: regulates {ids[p]} ! {names[p]}")
            if rng.random() < 0.02:
                p = int(rng.integers(0, n_live))
                lines.append(f"relationship: has_part {ids[p]} ! {names[p]}")
            if ns[k] == 1 and rng.random() < 0.01 and len(earlier[0]) > 1:
                p = earlier[0][int(rng.integers(0, len(earlier[0])))]
                lines.append(f"relationship: part_of {ids[p]} ! {names[p]}")
            earlier[ns[k]].append(k)
            by_ns[ns[k]].append(ids[k])
        stanzas[ids[k]] = "\n".join(lines)
    obsolete = []
    for k in range(n_live, n_terms):
        space = int(rng.integers(0, 3))
        lines = ["[Term]", f"id: {ids[k]}", f"name: obsolete {names[k]}", f"namespace: {GO_NAMESPACES[space]}",
                 f'def: "OBSOLETE. {_phrase(rng, 8, 16)}." [GOC:curators]', "is_obsolete: true"]
        u = rng.random()
        live = by_ns[space]
        if u < 0.5:
            lines.append(f"replaced_by: {live[int(rng.integers(0, len(live)))]}")
        elif u < 0.8:
            lines += [f"consider: {live[int(rng.integers(0, len(live)))]}" for _ in range(int(rng.integers(1, 3)))]
        stanzas[ids[k]] = "\n".join(lines)
        obsolete.append(ids[k])
    header = ["format-version: 1.2", "data-version: releases/2024-06-17",
              'subsetdef: goslim_generic "Generic GO slim"', 'subsetdef: goslim_yeast "Yeast GO slim"',
              'synonymtypedef: systematic_synonym "Systematic synonym" EXACT', "default-namespace: gene_ontology",
              "ontology: go", "property_value: has_ontology_root_term GO:0008150",
              "property_value: has_ontology_root_term GO:0003674",
              "property_value: has_ontology_root_term GO:0005575"]
    typedefs = []
    for rel, name, trans in (("ends_during", "ends during", False), ("happens_during", "happens during", True),
                             ("has_part", "has part", True), ("negatively_regulates", "negatively regulates", False),
                             ("occurs_in", "occurs in", False), ("part_of", "part of", True),
                             ("positively_regulates", "positively regulates", False),
                             ("regulates", "regulates", True)):
        typedefs.append("\n".join(["[Typedef]", f"id: {rel}", f"name: {name}"]
                                  + (["is_transitive: true"] if trans else [])))
    with open(path, "w", encoding="utf-8") as fh:
        fh.write("\n".join(header) + "\n\n")
        fh.write("\n\n".join(stanzas[i] for i in sorted(stanzas)) + "\n\n")
        fh.write("\n\n".join(typedefs) + "\n")
    return {"by_namespace": by_ns, "alt_ids": alt_ids, "obsolete": obsolete,
            "terms": n_terms, "live_terms": n_live, "obsolete_terms": n_obs}


def yeast_orf(k: int) -> str:
    """A unique yeast systematic name (``YAL001C`` style) for each k < 31,968."""
    return f"Y{'ABCDEFGHIJKLMNOP'[k % 16]}{'LR'[(k // 16) % 2]}{k // 32 + 1:03d}{'WC'[(k // 7) % 2]}"


#: GAF evidence codes with their share of SGD-like rows.
GAF_EVIDENCE = {"IEA": 0.30, "IBA": 0.12, "IDA": 0.14, "IMP": 0.12, "IPI": 0.06, "IGI": 0.05, "HDA": 0.04,
                "HMP": 0.03, "ISS": 0.03, "TAS": 0.02, "IC": 0.02, "ND": 0.03, "ISA": 0.01, "NAS": 0.01,
                "EXP": 0.01, "ISM": 0.01}
GAF_QUALIFIERS = {"P": (("involved_in", 0.88), ("acts_upstream_of_or_within", 0.12)),
                  "F": (("enables", 0.95), ("contributes_to", 0.05)),
                  "C": (("located_in", 0.7), ("part_of", 0.2), ("is_active_in", 0.1))}


def write_gaf(path: Path, n_lines: int, n_objects: int, onto: dict, rng: np.random.Generator) -> dict:
    """An SGD-like GAF 2.2 (gzip, as GO releases serve ``sgd.gaf.gz``) of
    ``n_lines`` annotation lines over ``n_objects`` genes, made with the tests'
    ``gaf_line``: aspects P/F/C 40/25/35%, terms of the aspect's namespace
    (popular terms more often), the evidence mix of :data:`GAF_EVIDENCE`,
    ``NOT|`` 1%, synonyms ``<ORF>|<alias>``, 0.5% rows on an alt id (of a
    term of the aspect's namespace), 0.5% on
    an obsolete term, 0.1% on an unknown id, 0.5% with a second taxon."""
    from fakes.go import gaf_line

    aspects = np.array(["P", "F", "C"])
    asp = aspects[rng.choice(3, size=n_lines, p=[0.40, 0.25, 0.35])]
    ev_codes = list(GAF_EVIDENCE)
    ev_p = np.array(list(GAF_EVIDENCE.values()))
    ev = np.array(ev_codes)[rng.choice(len(ev_codes), size=n_lines, p=ev_p / ev_p.sum())]
    obj = np.minimum((rng.random(n_lines) ** 1.6 * n_objects).astype(int), n_objects - 1)
    perm = rng.permutation(n_objects)
    obj = perm[obj]
    special = rng.random(n_lines)
    terms_by = {a: rng.permutation(onto["by_namespace"][i]) for i, a in enumerate("PFC")}
    ns_of = {t: a for a, i in zip("PFC", range(3)) for t in onto["by_namespace"][i]}
    alt_by = {a: sorted(x for x, t in onto["alt_ids"].items() if ns_of[t] == a) for a in "PFC"}
    obsolete = onto["obsolete"]
    lines = ["!gaf-version: 2.2", "!generated-by: SGD", "!date-generated: 2024-06-17", "!",
             "!Saccharomyces Genome Database (SGD) Annotations", "!Gene Ontology annotations for S. cerevisiae",
             "!", "!Submission date: 06/17/2024", "!Contact Email: sgd-helpdesk@lists.stanford.edu", "!"]
    counts = {"not": 0, "alt_id": 0, "obsolete": 0, "unknown": 0}
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
        buf = []
        for i in range(n_lines):
            a = asp[i]
            pool = terms_by[a]
            term = pool[min(int(rng.random() ** 3 * len(pool)), len(pool) - 1)]
            s = special[i]
            if s < 0.005 and alt_by[a]:
                term = alt_by[a][int(rng.integers(0, len(alt_by[a])))]
                counts["alt_id"] += 1
            elif s < 0.010 and obsolete:
                term = obsolete[int(rng.integers(0, len(obsolete)))]
                counts["obsolete"] += 1
            elif s < 0.011:
                term = f"GO:{9_900_000 + i % 99_999:07d}"
                counts["unknown"] += 1
            rels = GAF_QUALIFIERS[a]
            u, q = rng.random(), rels[-1][0]
            for rel, p in rels:
                if u < p:
                    q = rel
                    break
                u -= p
            if rng.random() < 0.01:
                q = "NOT|" + q
                counts["not"] += 1
            o = int(obj[i])
            orf = yeast_orf(o)
            buf.append(gaf_line(f"S{o:09d}", f"GEN{o}", q, term, ev[i], a, f"{orf}|alias{o}",
                                taxon="taxon:559292|taxon:9606" if s > 0.995 else "taxon:559292"))
            if len(buf) >= 50_000:
                fh.write("\n".join(buf) + "\n")
                buf = []
        if buf:
            fh.write("\n".join(buf) + "\n")
    return counts


def make_go(folder: Path, scale: float, seed: int) -> dict:
    n_terms = scaled(REAL["obo_terms"], scale, 30)
    n_lines = scaled(REAL["gaf_lines"], scale, 50)
    n_objects = min(REAL["gaf_objects"], max(10, n_lines // 20))
    obo = folder / "go-basic.obo"
    onto = write_obo(obo, n_terms, _rng(seed, 5))
    gaf = folder / "sgd.gaf.gz"
    planted = write_gaf(gaf, n_lines, n_objects, onto, _rng(seed, 6))
    return {"files": {"gaf": str(gaf), "obo": str(obo)},
            "params": {"gaf_lines": n_lines, "gaf_objects": n_objects, "obo_terms": onto["terms"],
                       "obo_live_terms": onto["live_terms"], "obo_obsolete_terms": onto["obsolete_terms"],
                       "obo_alt_ids": len(onto["alt_ids"]), **{f"gaf_rows_{k}": v for k, v in planted.items()}}}


# ----------------------------------------------------------------- BioGRID

BIOGRID_MEMBER = "BIOGRID-ORGANISM-Saccharomyces_cerevisiae_S288c-4.4.235.tab3.txt"
_PHYSICAL = ("Affinity Capture-MS", "Two-hybrid", "Affinity Capture-Western", "Reconstituted Complex",
             "Co-purification", "PCA", "Biochemical Activity", "Co-crystal Structure")
_GENETIC = ("Negative Genetic", "Positive Genetic", "Synthetic Lethality", "Synthetic Growth Defect",
            "Dosage Rescue", "Phenotypic Suppression", "Phenotypic Enhancement")


def make_biogrid(folder: Path, scale: float, seed: int) -> dict:
    """A BioGRID TAB3 zip (``BIOGRID-ORGANISM-4.4.235.tab3.zip`` holding the
    yeast member) of n interactions in the tests' 37 ``TAB3_COLUMNS``: 35%
    physical, 1.5% with a human interactor, 0.5% of genes without a
    systematic name (``-``), 1% with two SWISS-PROT accessions, degrees
    skewed, self-loops and repeated pairs as in the real file."""
    from fakes.biogrid import TAB3_COLUMNS

    cols = TAB3_COLUMNS
    rng = _rng(seed, 7)
    n = scaled(REAL["biogrid_rows"], scale, 50)
    n_genes = min(REAL["biogrid_genes"], max(20, n // 10))
    systematic = [yeast_orf(k) if rng.random() > 0.005 else "-" for k in range(n_genes)]
    symbol = [f"GEN{k}" for k in range(n_genes)]
    swiss = [f"P{10000 + k}" + (f"|Q{20000 + k}" if rng.random() < 0.01 else "") for k in range(n_genes)]
    order = rng.permutation(n_genes)
    txt = folder / BIOGRID_MEMBER
    kinds = {"physical": 0, "genetic": 0}
    with open(txt, "w", encoding="utf-8") as fh:
        fh.write("\t".join(cols) + "\n")
        for start in range(0, n, 100_000):
            m = min(n, start + 100_000) - start
            a = order[np.minimum((rng.random(m) ** 2 * n_genes).astype(int), n_genes - 1)]
            b = order[np.minimum((rng.random(m) ** 2 * n_genes).astype(int), n_genes - 1)]
            phys = rng.random(m) < 0.35
            human = rng.random(m) < 0.015
            score = rng.normal(-0.1, 0.2, m)
            out = []
            for i in range(m):
                ga, gb = int(a[i]), int(b[i])
                kind = "physical" if phys[i] else "genetic"
                kinds[kind] += 1
                system = (_PHYSICAL if phys[i] else _GENETIC)[(ga + gb) % (len(_PHYSICAL) if phys[i] else len(_GENETIC))]
                org_b, name_b = ("9606", "Homo sapiens") if human[i] else ("559292", "Saccharomyces cerevisiae (S288c)")
                row = [str(100000 + start + i), str(850000 + ga), str(7157 + gb if human[i] else 850000 + gb),
                       str(31000 + ga), str(32000 + gb), systematic[ga], "-" if human[i] else systematic[gb],
                       symbol[ga], symbol[gb], f"{symbol[ga]}L|alias{ga}", "-", system, kind,
                       "Costanzo M (2016)" if not phys[i] else "Krogan NJ (2006)",
                       f"PUBMED:{27708008 if not phys[i] else 16554755}", "559292", org_b,
                       "High Throughput" if (ga + gb) % 3 else "Low Throughput",
                       "-" if phys[i] else f"{score[i]:.4f}", "-", "-", "-", "BIOGRID", swiss[ga], "-",
                       f"NP_{9400 + ga:06d}", swiss[gb], "-", f"NP_{9400 + gb:06d}", "-", "-", "-", "-", "-", "-",
                       "Saccharomyces cerevisiae (S288c)", name_b]
                out.append("\t".join(row))
            fh.write("\n".join(out) + "\n")
    path = folder / "BIOGRID-ORGANISM-4.4.235.tab3.zip"
    with zipfile.ZipFile(path, "w", compression=zipfile.ZIP_DEFLATED) as z:
        z.write(txt, arcname=BIOGRID_MEMBER)
    txt.unlink()
    return {"files": {"tab3_zip": str(path)}, "member": BIOGRID_MEMBER,
            "params": {"interactions": n, "genes": n_genes, **kinds}}


# ----------------------------------------------------------------- PRISM

#: The leading columns of DepMap's Model.csv, as the tests write it (test_prism_io.model_csv).
MODEL_HEAD = ["ModelID", "PatientID", "CellLineName", "StrippedCellLineName", "DepmapModelType", "OncotreeLineage",
              "OncotreePrimaryDisease", "OncotreeSubtype", "OncotreeCode", "CCLEName"]
_TISSUES = ("SKIN", "LUNG", "BREAST", "LARGE_INTESTINE", "PROSTATE", "OVARY", "PANCREAS", "CENTRAL_NERVOUS_SYSTEM",
            "HAEMATOPOIETIC_AND_LYMPHOID_TISSUE", "LIVER", "KIDNEY", "STOMACH")


def _r15(x: np.ndarray) -> list:
    """Floats as R's write.csv prints them (15 significant digits); NaN kept."""
    return [float(f"{v:.15g}") for v in x.tolist()]


def _smiles(rng: np.random.Generator) -> str:
    frags = ("C", "CC", "O", "N", "c1ccccc1", "C(=O)O", "Cl", "F", "C(=O)N", "OC", "S(=O)(=O)N", "c1ccncc1", "CCN")
    return "".join(frags[i] for i in rng.integers(0, len(frags), int(rng.integers(4, 12))))


def make_prism(folder: Path, scale: float, seed: int) -> dict:
    """PRISM 19Q4 primary (log-fold-change matrix, treatment info), secondary
    (dose-response parameters) and a DepMap Model.csv, in R write.csv form
    (the tests' ``r_csv``): quoted strings and headers, bare numbers, ``NA``.

    Primary: 4,686 columns = 4,400 compounds at ~2.5 µM (HTS; some at
    2.43902 or 2.5641), 150 of them also in MTS004 at 2.5 (combined), 100
    also at 10 µM (MTS005, other dose, dropped), 36 compounds only at 10 µM
    (out of range); 2% NA; 5 matrix models absent from Model.csv. Secondary:
    ~1,448 compounds x 489 models, one of HTS002/MTS005/MTS006/MTS010 per
    pair and a second screen for 10% of pairs, 3% AUC NA, 40% IC50 NA,
    ``passed_str_profiling`` 97% TRUE / 2% FALSE / 1% NA."""
    import pandas as pd

    from fakes.prism import SECONDARY_HEAD, TREATMENT_HEAD, r_csv

    rng = _rng(seed, 8)
    n_models = scaled(REAL["prism_models"], scale, 5)
    n_cols = REAL["prism_columns"]
    pool = REAL["prism_model_table"]
    model_ids = [f"ACH-{k:06d}" for k in range(1, pool + 1)]
    absent = set(rng.choice(pool, 5, replace=False).tolist())       # in the data, not in Model.csv
    letters = "ABCDEFGHJKLMNPRSTUVWXYZ"
    stripped = [f"{letters[k % 23]}{letters[(k // 23) % 23]}{k}" for k in range(pool)]
    tissue = [_TISSUES[k % len(_TISSUES)] for k in range(pool)]
    models = pd.DataFrame([[model_ids[k], f"PT-{k:05d}", f"{s[:2]}-{s[2:]}", s, "Cell line", "Lineage", "Disease",
                            "Subtype", "CODE", f"{s}_{tissue[k]}"] for k, s in enumerate(stripped) if k not in absent],
                          columns=MODEL_HEAD)
    model_csv = folder / "Model.csv"
    models.to_csv(model_csv, index=False)
    n_absent = min(len(absent), max(1, n_models // 100))            # 5 at real size
    present = np.array(sorted(set(range(pool)) - absent))
    primary_models = sorted(rng.choice(present, n_models - n_absent, replace=False).tolist()
                            + sorted(absent)[:n_absent])

    # treatment columns
    n_extra_screen, n_other_dose, n_only_high = 150, 100, 36
    n_main = n_cols - n_extra_screen - n_other_dose - n_only_high
    ids = 1 + rng.choice(99_999_998, n_main + n_only_high, replace=False)
    broad = [f"BRD-K{x:08d}-001-{1 + x % 20:02d}-{x % 10}" for x in ids]
    cname = [_phrase(rng, 1, 2).replace(" ", "-") for _ in broad]
    smiles = [_smiles(rng) for _ in broad]
    for k in rng.choice(len(broad), max(1, len(broad) // 100), replace=False):
        smiles[k] = ""
    for k in rng.choice(len(broad), max(1, len(broad) // 200), replace=False):
        smiles[k] = f"{smiles[k] or 'CCO'}, {smiles[k] or 'CCO'}.Cl"
    main_dose = rng.choice([2.5, 2.5, 2.5, 2.43902, 2.5641], n_main)
    treat = [(b, d, "HTS") for b, d in zip(broad[:n_main], main_dose)]
    pick = rng.choice(n_main, n_extra_screen + n_other_dose, replace=False)
    treat += [(broad[k], 2.5, "MTS004") for k in pick[:n_extra_screen]]
    treat += [(broad[k], 10.0, "MTS005") for k in pick[n_extra_screen:]]
    treat += [(b, 10.0, "HTS") for b in broad[n_main:]]
    info_of = {b: (c, s) for b, c, s in zip(broad, cname, smiles)}
    columns = [f"{b}::{d:g}::{s}" for b, d, s in treat]
    assert len(set(columns)) == n_cols
    tinfo = folder / "primary-screen-replicate-collapsed-treatment-info.csv"
    r_csv(tinfo, TREATMENT_HEAD,
          [[c, b, info_of[b][0], float(d), s, info_of[b][1], "kinase inhibitor", "EGFR", "oncology", "cancer",
            "Launched"] for c, (b, d, s) in zip(columns, treat)])
    # the matrix, row by row
    lfc = folder / "primary-screen-replicate-collapsed-logfold-change.csv"

    def matrix_row(i: int):
        r = _rng(seed, 9, i)
        v = r.normal(-0.2, 0.9, n_cols)
        v[r.random(n_cols) < 0.02] = np.nan
        return [model_ids[primary_models[i]]] + _r15(v)

    r_csv(lfc, [""] + columns, _LazyRows(len(primary_models), matrix_row))

    # secondary
    n_sec = scaled(REAL["prism_secondary_rows"], scale, 50)
    f = (n_sec / REAL["prism_secondary_rows"]) ** 0.5
    n_comp = max(2, int(round(REAL["prism_secondary_compounds"] * f)))
    n_mod = max(2, min(pool, int(round(REAL["prism_secondary_models"] * f))))
    sec_models = np.sort(rng.choice(pool, n_mod, replace=False))
    sec_comp = rng.choice(n_main, n_comp, replace=False)
    pairs = n_comp * n_mod
    second = rng.random(pairs) < 0.10
    pair_of_row = np.sort(np.r_[np.arange(pairs), np.flatnonzero(second)])
    if len(pair_of_row) > n_sec:
        pair_of_row = np.sort(rng.choice(pair_of_row, n_sec, replace=False))
    m = len(pair_of_row)
    screens = np.array(["HTS002", "MTS005", "MTS006", "MTS010"])
    scr = screens[rng.integers(0, 4, m)]
    dup = np.r_[False, pair_of_row[1:] == pair_of_row[:-1]]
    scr[dup] = np.where(scr[np.flatnonzero(dup) - 1] == "HTS002", "MTS010", "HTS002")
    comp = sec_comp[pair_of_row // n_mod]
    mod = sec_models[pair_of_row % n_mod]
    auc = rng.uniform(0.2, 1.3, m)
    auc[rng.random(m) < 0.03] = np.nan
    ic50 = np.exp(rng.normal(1, 2, m))
    ic50[rng.random(m) < 0.4] = np.nan
    ec50 = np.exp(rng.normal(0, 2, m))
    upper, lower, slope, r2 = rng.uniform(0.8, 1.2, m), rng.uniform(0, 1, m), -rng.gamma(2, 1, m), rng.uniform(0, 1, m)
    cols6 = [_r15(x) for x in (upper, lower, slope, r2, auc, ec50, ic50)]
    u = rng.random(m)
    passed = np.where(u < 0.97, True, np.where(u < 0.99, False, None))
    no_model = rng.random(m) < 0.0005

    def sec_row(i: int):
        b = broad[comp[i]]
        k = int(mod[i])
        return [b, "" if no_model[i] else model_ids[k], f"{stripped[k]}_{tissue[k]}", scr[i], *(c[i] for c in cols6[:6]), cols6[6][i],
                info_of[b][0], "kinase inhibitor", "EGFR", "oncology", "cancer", info_of[b][1], "Launched",
                passed[i], model_ids[k]]

    assert len(SECONDARY_HEAD) == 20
    sec = folder / "secondary-screen-dose-response-curve-parameters.csv"
    r_csv(sec, SECONDARY_HEAD, _LazyRows(m, sec_row))
    return {"files": {"logfold_change": str(lfc), "treatment_info": str(tinfo), "models": str(model_csv),
                      "dose_response": str(sec)},
            "params": {"primary_models": len(primary_models), "primary_columns": n_cols,
                       "primary_models_not_in_model_table": len(set(primary_models) & absent),
                       "model_table_rows": int(len(models)), "secondary_rows": m, "secondary_compounds": n_comp,
                       "secondary_models": n_mod}}


DATASETS: dict[str, Callable[[Path, float, int], dict]] = {
    "geo": make_geo, "lincs2020": make_lincs, "go": make_go, "biogrid": make_biogrid, "prism": make_prism}


# =========================================================================== readers (run in the worker)
# Each factory imports what it needs (untimed) and returns (call, summary, settings):
# call() is timed; summary(result) -> {"rows", "rows_unit", "values", "counts"}.

#: The yeast config's GO settings (config/diffusion_yeast_go_biogrid.yaml).
GO_SETTINGS = dict(go_aspect="P", go_id_column="DB_Object_Synonym", go_include_iea=False,
                   go_evidence_exclude=["ND"], go_taxon=559292, min_annotated=100, max_annotated=300)
#: The PRISM configs' reader settings (config/depmap_prism_primary.yaml, ..._secondary.yaml).
PRISM_PRIMARY_SETTINGS = dict(dose_um=2.5, max_dose_ratio=2.0, screens="mean", cell_field="stripped_name",
                              cell_pattern="^(.+)$", require_str_profiling=True)
PRISM_SECONDARY_SETTINGS = dict(response="auc", screens="mean", cell_field="stripped_name", cell_pattern="^(.+)$",
                                require_str_profiling=True)
BIOGRID_SETTINGS = dict(system_type="physical", taxid=559292, id_column="systematic")


def _r_series_matrix(f):
    from biokernels.io.geo import read_series_matrix

    def summary(sm):
        return {"rows": int(sm.expression.shape[0]), "rows_unit": "probes", "values": int(sm.expression.size),
                "counts": {"probes": int(sm.expression.shape[0]), "samples": int(sm.expression.shape[1]),
                           "missing_values": int(sm.missing_values),
                           "characteristics_lines": len(sm.characteristics)}}
    return (lambda: read_series_matrix(f["series_matrix"])), summary, {}


def _r_platform(f):
    from biokernels.io.geo import read_platform_annotation

    def summary(ann):
        return {"rows": int(ann.counts["platform_probes"]), "rows_unit": "probes", "values": None,
                "counts": {**ann.counts, "accession": ann.accession, "symbol_col": ann.symbol_col}}
    return (lambda: read_platform_annotation(f["platform"], multi_gene="drop")), summary, {"multi_gene": "drop"}


def _r_siginfo(f):
    from biokernels.io.lincs2020 import read_siginfo

    def summary(t):
        return {"rows": int(len(t)), "rows_unit": "signatures", "values": int(t.size),
                "counts": {"rows": int(len(t)), "columns": int(t.shape[1] + 1)}}
    return (lambda: read_siginfo(f["siginfo"], 5)), summary, {"level": 5}


def _consume(chunks):
    """Go through the blocks as a caller would: column count and a float64
    checksum of the values (one pass over each block)."""
    n = blocks = 0
    total = 0.0
    n_rows = None
    for chunk in chunks:
        a = chunk.data.to_numpy()
        n += a.shape[1]
        n_rows = a.shape[0]
        total += float(a.sum(dtype=np.float64))
        blocks += 1
    return {"columns": n, "rows": n_rows, "blocks": blocks, "checksum": total}


def _r_gctx_all(f):
    from biokernels.io.gctx import iter_gctx_columns

    def summary(res):
        return {"rows": res["columns"], "rows_unit": "signatures", "values": res["columns"] * (res["rows"] or 0),
                "counts": res}
    return (lambda: _consume(iter_gctx_columns(f["gctx"]))), summary, {"chunk_size": 10000, "validate": True,
                                                                        "cid": "all", "rid": "all"}


def _r_gctx_subset(f):
    from biokernels.io.cmap import CHUNK_BYTES
    from biokernels.io.gctx import iter_gctx_columns, read_gctx_meta

    cid = [s for s in Path(f["kept_ids"]).read_text().split("\n") if s]
    rid = list(read_gctx_meta(f["gctx"], axis="row").index)
    chunk_size = max(1, CHUNK_BYTES // (8 * len(rid)))

    def summary(res):
        return {"rows": res["columns"], "rows_unit": "signatures", "values": res["columns"] * (res["rows"] or 0),
                "counts": res}
    return ((lambda: _consume(iter_gctx_columns(f["gctx"], cid=cid, rid=rid, chunk_size=chunk_size, validate=False))),
            summary, {"chunk_size": chunk_size, "validate": False, "cid": f"{len(cid)} kept ids (file order)",
                      "rid": f"{len(rid)} row ids (file order)"})


def _r_gaf(f):
    from biokernels.io.go import read_gaf

    def summary(res):
        rows, info = res
        return {"rows": int(len(rows)), "rows_unit": "annotation lines", "values": None, "counts": info}
    return (lambda: read_gaf(f["gaf"])), summary, {}


def _r_obo(f):
    import networkx  # noqa: F401  (read_obo imports them; imported here, untimed)
    import obonet  # noqa: F401

    from biokernels.io.go import read_obo

    def summary(onto):
        c = onto.counts
        return {"rows": int(c["terms"] + c["obsolete_terms"]), "rows_unit": "term stanzas", "values": None,
                "counts": c}
    return (lambda: read_obo(f["obo"])), summary, {}


def _r_load_gaf(f):
    import networkx  # noqa: F401
    import obonet  # noqa: F401

    from biokernels.io.go import load_gaf

    def summary(res):
        labels, counts = res
        return {"rows": int(counts["rows"]), "rows_unit": "annotation lines (plus the OBO)", "values": None,
                "counts": {**counts, "labels_shape": list(labels.shape)}}
    return (lambda: load_gaf(f["gaf"], f["obo"], **GO_SETTINGS)), summary, dict(GO_SETTINGS)


def _r_biogrid(f):
    from biokernels.io.biogrid import read_biogrid_tab3

    def summary(res):
        edges, counts = res
        return {"rows": int(counts["rows"]), "rows_unit": "interactions", "values": None, "counts": counts}
    return ((lambda: read_biogrid_tab3(f["tab3_zip"], zip_member=BIOGRID_MEMBER, **BIOGRID_SETTINGS)), summary,
            {**BIOGRID_SETTINGS, "zip_member": BIOGRID_MEMBER})


def _r_prism_primary(f):
    from biokernels.io.depmap import load_prism_primary

    files = {k: f[k] for k in ("logfold_change", "treatment_info", "models")}

    def summary(res):
        v, counts = res
        return {"rows": int(counts["matrix_models"]), "rows_unit": "matrix rows (models)",
                "values": int(counts["matrix_models"] * counts["matrix_columns"]), "counts": counts}
    return (lambda: load_prism_primary(files, **PRISM_PRIMARY_SETTINGS)), summary, dict(PRISM_PRIMARY_SETTINGS)


def _r_prism_secondary(f):
    from biokernels.io.depmap import load_prism_secondary

    files = {k: f[k] for k in ("dose_response", "models")}

    def summary(res):
        v, counts = res
        return {"rows": int(counts["input_rows"]), "rows_unit": "dose-response rows", "values": None,
                "counts": counts}
    return (lambda: load_prism_secondary(files, **PRISM_SECONDARY_SETTINGS)), summary, dict(PRISM_SECONDARY_SETTINGS)


#: name -> (data set, files read, function, worker factory)
READERS = {
    "geo_series_matrix": ("geo", ["series_matrix"], "biokernels.io.geo.read_series_matrix", _r_series_matrix),
    "geo_platform_annotation": ("geo", ["platform"], "biokernels.io.geo.read_platform_annotation", _r_platform),
    "lincs2020_siginfo": ("lincs2020", ["siginfo"], "biokernels.io.lincs2020.read_siginfo", _r_siginfo),
    "lincs2020_level5_all": ("lincs2020", ["gctx"], "biokernels.io.gctx.iter_gctx_columns", _r_gctx_all),
    "lincs2020_level5_subset": ("lincs2020", ["gctx"], "biokernels.io.gctx.iter_gctx_columns (workflow subset)",
                                _r_gctx_subset),
    "go_gaf": ("go", ["gaf"], "biokernels.io.go.read_gaf", _r_gaf),
    "go_obo": ("go", ["obo"], "biokernels.io.go.read_obo", _r_obo),
    "go_load_gaf": ("go", ["gaf", "obo"], "biokernels.io.go.load_gaf", _r_load_gaf),
    "biogrid_tab3": ("biogrid", ["tab3_zip"], "biokernels.io.biogrid.read_biogrid_tab3", _r_biogrid),
    "prism_primary": ("prism", ["logfold_change", "treatment_info", "models"],
                      "biokernels.io.depmap.load_prism_primary", _r_prism_primary),
    "prism_secondary": ("prism", ["dose_response", "models"], "biokernels.io.depmap.load_prism_secondary",
                        _r_prism_secondary),
}


def parse_readers(spec: str) -> list[str]:
    """Reader names from a comma-separated list of names and data-set groups
    (``geo``, ``lincs2020``, ``go``, ``biogrid``, ``prism``, ``all``), in
    :data:`READERS` order; ValueError on an unknown name."""
    wanted = set()
    for item in (s.strip() for s in spec.split(",")):
        if not item:
            continue
        if item == "all":
            wanted |= set(READERS)
        elif item in DATASETS:
            wanted |= {r for r, v in READERS.items() if v[0] == item}
        elif item in READERS:
            wanted.add(item)
        else:
            raise ValueError(f"unknown reader {item!r}; known: {', '.join(READERS)} or groups "
                             f"{', '.join(DATASETS)}, all")
    return [r for r in READERS if r in wanted]


def _vm(key: str, pid: int | str = "self") -> float | None:
    try:
        for line in Path(f"/proc/{pid}/status").read_text().splitlines():
            if line.startswith(key + ":"):
                return int(line.split()[1]) / 1024
    except (OSError, ValueError):
        pass
    return None


def worker(spec: dict) -> dict:
    """In a fresh process: import, then time one reader call."""
    import h5py  # noqa: F401  (the common imports, untimed)
    import pandas  # noqa: F401
    import scipy.sparse  # noqa: F401

    name = spec["reader"]
    call, summary, settings = READERS[name][3](spec["files"])
    rss0, hwm0 = _vm("VmRSS"), peak_rss_mib()
    t0 = time.perf_counter()
    out = call()
    seconds = time.perf_counter() - t0
    peak = peak_rss_mib()
    rss1 = _vm("VmRSS")
    res = {"reader": name, "seconds": seconds, "peak_rss_mib": peak, "rss_after_imports_mib": rss0,
           "peak_rss_before_call_mib": hwm0, "rss_after_call_mib": rss1, "settings": settings}
    res.update(summary(out))
    return res


# =========================================================================== parent

def _resident_mb(paths) -> float | None:
    """Bytes of the files in the page cache (``fincore``), MB; None without it."""
    exe = shutil.which("fincore")
    if exe is None:
        return None
    total = 0
    for p in paths:
        proc = subprocess.run([exe, "--bytes", "--noheadings", "--raw", "--output", "RES", str(p)],
                              capture_output=True, text=True)
        if proc.returncode != 0 or not proc.stdout.strip():
            return None
        total += int(proc.stdout.split()[0])
    return total / MB


def drop_cache(paths) -> None:
    """Flush the files and ask the kernel to drop their pages (no root needed)."""
    for p in paths:
        fd = os.open(p, os.O_RDONLY)
        try:
            os.fsync(fd)
            os.posix_fadvise(fd, 0, 0, os.POSIX_FADV_DONTNEED)
        finally:
            os.close(fd)


def warm_cache(paths) -> None:
    for p in paths:
        with open(p, "rb") as fh:
            while fh.read(16 << 20):
                pass


def run_reader(spec: dict, timeout: float, max_rss_mib: float, threads: int, poll_s: float = 0.2) -> dict:
    """Run the worker of ``spec`` in a fresh process, polling its RSS: killed
    past ``timeout`` seconds or ``max_rss_mib``; its RESULT, or ``error``."""
    env = dict(os.environ, PYTHONHASHSEED="0", OMP_NUM_THREADS=str(threads), OPENBLAS_NUM_THREADS=str(threads),
               MKL_NUM_THREADS=str(threads))
    cmd = [sys.executable, str(Path(__file__).resolve()), "--worker", json.dumps(spec)]
    with tempfile.TemporaryFile("w+") as out, tempfile.TemporaryFile("w+") as err:
        t0 = time.perf_counter()
        proc = subprocess.Popen(cmd, stdout=out, stderr=err, env=env, cwd=REPO)
        seen = 0.0
        stopped = None
        while proc.poll() is None:
            rss = _vm("VmRSS", proc.pid)
            if rss is not None:
                seen = max(seen, rss)
            if rss is not None and rss > max_rss_mib:
                stopped = f"stopped: RSS {rss:.0f} MiB above the limit {max_rss_mib:.0f} MiB"
            elif time.perf_counter() - t0 > timeout:
                stopped = f"stopped: still running after {timeout:.0f} s"
            if stopped:
                proc.kill()
                proc.wait()
                break
            time.sleep(poll_s)
        wall = time.perf_counter() - t0
        out.seek(0)
        err.seek(0)
        stdout, stderr = out.read(), err.read()
    lines = [ln for ln in stdout.splitlines() if ln.startswith("RESULT ")]
    base = {"process_wall_s": wall, "monitor_max_rss_mib": seen or None}
    if stopped or proc.returncode != 0 or not lines:
        why = stopped or (f"killed by signal {-proc.returncode}" if proc.returncode < 0
                          else f"exit status {proc.returncode}")
        return {**base, "error": why, "stderr_tail": stderr[-3000:]}
    res = json.loads(lines[-1][len("RESULT "):])
    res.update(base)
    if stderr.strip():
        res["stderr_tail"] = stderr[-1500:]
    return res


def dataset_folder(workdir: Path, name: str, scale: float, seed: int) -> Path:
    return Path(workdir) / f"{name}-scale{scale:g}-seed{seed}"


def ensure_dataset(workdir: Path, name: str, scale: float, seed: int) -> dict:
    """Generate the data set (or reuse a complete folder of the same scale
    and seed: its manifest is written last)."""
    folder = dataset_folder(workdir, name, scale, seed)
    manifest = folder / "manifest.json"
    if manifest.is_file():
        made = json.loads(manifest.read_text())
        if all(Path(p).is_file() for p in made["files"].values()):
            made["reused"] = True
            return made
    shutil.rmtree(folder, ignore_errors=True)
    folder.mkdir(parents=True)
    t0 = time.perf_counter()
    made = DATASETS[name](folder, scale, seed)
    made["generate_s"] = time.perf_counter() - t0
    made["folder"] = str(folder)
    made["reused"] = False
    manifest.write_text(json.dumps(made, indent=1, default=_harness_jsonable))
    return made


def _rate(x, s):
    return x / s if x is not None and s and s > 0 else None


def main(argv=None) -> int:
    ap = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    ap.add_argument("--json", "--out", dest="json", default="results/benchmarks/readers.json", help="output JSON")
    ap.add_argument("--readers", default="all", help="comma-separated reader names or groups (default all): "
                    + ", ".join(READERS))
    ap.add_argument("--scale", type=float, default=1.0, help="multiplies the row counts (default 1: real size)")
    ap.add_argument("--workdir", default="/tmp/bench_readers", help="where the files are written")
    ap.add_argument("--keep", action="store_true", help="keep the files (and reuse them on the next run)")
    ap.add_argument("--seed", type=int, default=0)
    ap.add_argument("--threads", type=int, default=1, help="BLAS/OpenMP threads of the workers (default 1)")
    ap.add_argument("--timeout", type=float, default=600.0, help="seconds before a reader is stopped")
    ap.add_argument("--max-rss-gib", type=float, default=6.0, help="RSS at which a reader is stopped")
    ap.add_argument("--cache", choices=("cold", "warm"), default="cold",
                    help="cold: drop each file from the page cache before its read; warm: read it once first")
    ap.add_argument("--worker", help=argparse.SUPPRESS)
    args = ap.parse_args(argv)
    if args.worker:
        print("RESULT " + json.dumps(worker(json.loads(args.worker)), default=_harness_jsonable), flush=True)
        return 0
    if args.scale <= 0:
        ap.error("--scale must be > 0")
    try:
        names = parse_readers(args.readers)
    except ValueError as e:
        ap.error(str(e))
    if not names:
        ap.error("--readers selects nothing")
    workdir = Path(args.workdir)
    last_use = {READERS[n][0]: i for i, n in enumerate(names)}
    datasets: dict[str, dict] = {}
    records = []
    with pin_threads(args.threads):
        report = begin_report("readers", args, packages=("h5py", "obonet", "pyarrow"),
                              real_sizes=REAL, repeats=1)
        for i, name in enumerate(names):
            ds, keys, function, _ = READERS[name]
            if ds not in datasets:
                log(f"[{ds}] writing the files (scale {args.scale:g}) under {workdir} ...")
                datasets[ds] = ensure_dataset(workdir, ds, args.scale, args.seed)
                made = datasets[ds]
                how = "reused" if made["reused"] else "written in %.1f s" % made["generate_s"]
                log(f"[{ds}] {how}: " + ", ".join(f"{Path(p).name} {Path(p).stat().st_size / MB:.1f} MB"
                                                 for p in made["files"].values()))
            made = datasets[ds]
            paths = [made["files"][k] for k in keys]
            finfo = [file_info(Path(made["files"][k]), made.get("member")) for k in keys]
            if args.cache == "cold":
                drop_cache(paths)
            else:
                warm_cache(paths)
            resident = _resident_mb(paths)
            spec = {"reader": name, "files": made["files"]}
            log(f"[{name}] reading with {function} in a fresh process ...")
            res = run_reader(spec, args.timeout, args.max_rss_gib * 1024, args.threads)
            file_mb = sum(x["mb"] for x in finfo)
            unc_mb = sum(x.get("uncompressed_mb", x["mb"]) for x in finfo)
            rec = {"reader": name, "function": function, "dataset": ds, "files": finfo, "file_mb": file_mb,
                   "uncompressed_mb": unc_mb if unc_mb != file_mb else None, "repeats": 1,
                   "page_cache": {"mode": args.cache, "resident_mb_before_read": resident}}
            if "error" in res:
                rec.update(res)
                log(f"[{name}] FAILED: {res['error']}")
            else:
                s = res["seconds"]
                rec.update({"rows": res["rows"], "rows_unit": res["rows_unit"], "values": res.get("values"),
                            "seconds": s, "mb_per_s": _rate(file_mb, s),
                            "uncompressed_mb_per_s": _rate(unc_mb, s) if unc_mb != file_mb else None,
                            "rows_per_s": _rate(res["rows"], s), "values_per_s": _rate(res.get("values"), s),
                            "peak_rss_mib": res["peak_rss_mib"], "rss_after_imports_mib": res["rss_after_imports_mib"],
                            "peak_rss_before_call_mib": res["peak_rss_before_call_mib"],
                            "rss_after_call_mib": res["rss_after_call_mib"],
                            "monitor_max_rss_mib": res["monitor_max_rss_mib"], "process_wall_s": res["process_wall_s"],
                            "settings": res["settings"], "reader_counts": res["counts"]})
                if res.get("stderr_tail"):
                    rec["stderr_tail"] = res["stderr_tail"]
                log(f"[{name}] {file_mb:.1f} MB, {res['rows']:,} {res['rows_unit']} in {s:.2f} s: "
                    f"{rec['mb_per_s']:.1f} MB/s, {rec['rows_per_s']:,.0f} rows/s, peak RSS {res['peak_rss_mib']:.0f} MiB")
            records.append(rec)
            if last_use[ds] == i and not args.keep:
                shutil.rmtree(made["folder"], ignore_errors=True)
                made["deleted_after_use"] = True
        if not args.keep:
            for ds in datasets:
                shutil.rmtree(dataset_folder(workdir, ds, args.scale, args.seed), ignore_errors=True)
            with __import__("contextlib").suppress(OSError):
                workdir.rmdir()
        report["readers"] = records
        report["datasets"] = datasets
        notes = [
            "One run per reader (repeats: 1) in a fresh subprocess; peak_rss_mib is that process's VmHWM "
            "(imports included: see rss_after_imports_mib).",
            "MB = 10^6 bytes of the file(s) on disk; mb_per_s uses them, uncompressed_mb_per_s the decompressed "
            "bytes where the file is gzip or zip.",
            f"Page cache: {args.cache} ({'each file flushed and dropped with posix_fadvise(DONTNEED) before its read' if args.cache == 'cold' else 'each file read once before'}); "
            "resident_mb_before_read is what fincore reported just before.",
            "Synthetic content (fixed seed) in the public layouts, written by the tests' writers where they exist; "
            "see the module docstring of benchmarks/bench_readers.py.",
            "The machine was shared with other jobs during the run: see the load averages.",
        ]
        out = finish_report(report, [], args.json, notes=notes)
    # the headline: the compact per-reader table (no ratios in this benchmark)
    data = json.loads(Path(out).read_text())
    keys = ("reader", "file_mb", "uncompressed_mb", "rows", "rows_unit", "seconds", "mb_per_s", "rows_per_s",
            "peak_rss_mib", "repeats", "error")
    data["headline"]["readers"] = [{k: r.get(k) for k in keys if k in r} for r in records]
    data["headline"]["rules"] = ("one run per reader (repeats: 1), each in a fresh subprocess (peak RSS = its VmHWM); "
                                 "throughput = file size on disk / wall seconds of the reader call; no ratios")
    write_json(out, data)
    log(f"wrote {out}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
