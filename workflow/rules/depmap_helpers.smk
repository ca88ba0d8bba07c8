# The DepMap study's settings, paths, input functions and targets (its rules:
# rules/depmap.smk). Reads the drug screen's DS_* constants
# (rules/drug_screen_helpers.smk); rules/mkl_transfer*.smk read the DM_* ones.
# (`snakemake --lint` wants functions and rules in separate files.)
import re as _dm_re
import urllib.parse as _dm_urlparse

from biokernels.io.depmap import VIABILITY_FILES as _DM_VIABILITY_FILES

DM = config["depmap"]
DM_NAME = DM["dataset"]
DM_SRC = DM["sources"][DM_NAME]
DM_FIELD = f"depmap.sources.{DM_NAME}"
# The CMAP side is the drug screen's data set, so both names are in the path.
DM_DIR = f"results/depmap/{DS_NAME}/{DM_NAME}"
DM_STUDY = f"depmap/{DS_NAME}/{DM_NAME}"
DM_RESOURCE = f"resources/depmap/{DS_NAME}/{DM_NAME}"
DM_PROJECTION_PARAMS = canonical(
    {k: DM[k] for k in ("seeds", "ridge", "scaling", "genes", "projection_input")}
    | {"kernel": DS["kernel"]}
)
# The per-row listing of the dropped rows (hundreds of MB at the full PRISM
# size) is written only when asked (depmap.list_dropped_rows);
# dropped_summary.tsv, the drops counted per cell line and compound, always is.
DM_DROPPED_ROWS = (
    {"dropped_rows": f"{DM_DIR}/prepared/dropped_rows.tsv"}
    if DM["list_dropped_rows"]
    else {}
)
DM_SOURCE_PARAMS = canonical(
    {
        "source": DM["source"],
        "source_ridge": DS["source_ridge"],
        "kernel": DS["kernel"],
        "solver": DS["solver"],
    }
)


def dm_generate_inputs(wc):
    """The drug screen's truth folder the DepMap generator rebuilds its model from
    (an error, raised only when the generator is needed, on real L1000 data:
    geo, lincs2020 or local sources, which have no hidden model)."""
    if not DS_SIMULATED:
        raise WorkflowError(
            f"depmap source {DM_NAME!r} is synthetic: it derives viability from the drug screen's "
            f"hidden model, but drug_screen.dataset {DS_NAME!r} is real L1000 data "
            f"(type {DS_SRC['type']!r}) with none"
        )
    return {
        "truth": f"resources/drug_screen/{DS_NAME}/raw/truth/params.json",
        "pert_info": f"resources/drug_screen/{DS_NAME}/raw/pert_info.txt",
    }


def _dm_reader():
    """(format, settings) of the reader of the selected source
    (biokernels.io.depmap.VIABILITY_READERS): local sources and downloads of
    `files` name theirs in `reader`; the generated table, a `table` path and
    the download of one `file` are long tables read with the source's
    `columns` and `cell_pattern`."""
    if "reader" in DM_SRC:
        settings = dict(DM_SRC["reader"])
        return settings.pop("format"), settings
    return "long", {
        "columns": DM_SRC["columns"],
        "cell_pattern": DM_SRC["cell_pattern"],
    }


def _dm_download_name(key, spec):
    """File name of a downloaded file: the key, with the extension of the URL
    (.tsv / .txt kept, else .csv; .gz kept unless gunzip), so that the reader
    checks the content against it."""
    path = _dm_urlparse.urlparse(spec["url"]).path.lower()
    base = path[:-3] if path.endswith(".gz") else path
    ext = ".tsv" if base.endswith((".tsv", ".txt")) else ".csv"
    return (
        key + ext + (".gz" if path.endswith(".gz") and not spec.get("gunzip") else "")
    )


def _dm_files():
    """(file key -> path the reader reads, download name -> download spec)
    of the selected source. Stops the run while the workflow is parsed
    (before any job) when the files do not fit the type and format, or a
    download's sha256 is not pinned."""
    if DM_SRC["type"] == "synthetic":
        return {"table": f"{DM_RESOURCE}/viability.csv"}, {}
    if DM_SRC["type"] == "table":
        return {"table": DM_SRC["path"]}, {}
    if "file" in DM_SRC:  # the download of one long CSV
        return {"table": f"resources/depmap/download/{DM_NAME}/viability"}, {
            "viability": DM_SRC["file"]
        }
    files = DM_SRC["files"]
    expected = _DM_VIABILITY_FILES[DM_FORMAT]
    if sorted(files) != sorted(expected):
        raise WorkflowError(
            f"{DM_FIELD}.files has {sorted(files)}; reader.format {DM_FORMAT!r} reads exactly "
            f"{list(expected)}"
        )
    kind = "url" if DM_SRC["type"] == "download" else "path"
    wrong = [k for k, spec in files.items() if kind not in spec]
    if wrong:
        raise WorkflowError(
            f"{DM_FIELD}.files.{wrong[0]}: a {DM_SRC['type']} source gives each file a {kind} "
            + (
                "and its sha256 (use type: local for files already on this machine)"
                if kind == "url"
                else "(use type: download for files to fetch by url)"
            )
        )
    if DM_SRC["type"] == "local":
        return {k: spec["path"] for k, spec in files.items()}, {}
    unpinned = [k for k, spec in files.items() if not spec.get("sha256")]
    if unpinned:
        keys = ", ".join(f"{DM_FIELD}.files.{k}.sha256" for k in unpinned)
        raise WorkflowError(
            f"{keys}: not pinned (null). The DepMap portal and figshare publish no SHA-256, so, as for GEO's "
            "L1000 files (README, Configuration), pin the files you first download: fetch each once "
            "(curl -L -o FILE URL), check it, run `sha256sum FILE` and write its 64 hex digits under that key "
            "in your copy of the config. Or use the files you already have: type: local with files.<key>.path "
            "(sha256 optional)."
        )
    names = {k: _dm_download_name(k, spec) for k, spec in files.items()}
    return {k: f"resources/depmap/download/{DM_NAME}/{names[k]}" for k in files}, {
        names[k]: files[k] for k in files
    }


DM_FORMAT, DM_READER = _dm_reader()
DM_FILES, DM_DOWNLOADS = _dm_files()
# The download rule's names: only those of the selected source ("(?!)" matches nothing).
DM_DOWNLOAD_NAMES = "|".join(_dm_re.escape(n) for n in DM_DOWNLOADS) or "(?!)"


def dm_download_field(wc):
    """The config key of a downloaded file (for its log)."""
    return DM_FIELD + (".file" if "file" in DM_SRC else f".files.{wc.name}")


def dm_prepare_inputs(wc):
    """The reader's files, as named inputs file_<key>."""
    return {f"file_{k}": v for k, v in DM_FILES.items()}


def dm_cmap_features(wc):
    """The CMAP drug embedding of the featurization (written by the drug screen)."""
    return f"{DS_DIR}/fingerprints/{wc.featurization}.tsv.gz"


def dm_features(wc):
    """Drug embeddings the DepMap models read: CMAP's and the DepMap-only drugs'."""
    return [
        dm_cmap_features(wc),
        f"{DM_DIR}/prepared/new_drugs_{wc.featurization}.tsv.gz",
    ]


def dm_projection_ridge(wc):
    """The scaling and genes curves read the ridges chosen by curve=ridge."""
    if wc.curve == "ridge":
        return {}
    return {"ridge": f"{DM_DIR}/{wc.featurization}/projection/ridge.tsv"}


DM_FIGS = ["figS9a", "figS9b"]
DM_TARGETS = [
    f
    for feat in DM["featurizations"]
    for fig in DM_FIGS
    for f in [f"{DM_DIR}/{feat}/tables/{fig}.tsv", *figure(f"{DM_STUDY}/{feat}", fig)]
] + [f"{DM_DIR}/tables/featurizations.tsv"]

# depmap_predict (rules/depmap_predict.smk): every unmeasured pair's viability.
DM_PREDICT_PARAMS = canonical(
    {"kernel": DS["kernel"], "projection_input": DM["projection_input"]}
    | {k: DM["predict"][k] for k in ("model", "interval_level")}
)


def dm_morgan_bits(wc):
    """Morgan bits of every DepMap compound (CMAP's and the DepMap-only
    ones), for the Tanimoto of each compound's nearest measured compound."""
    return [
        f"{DS_DIR}/fingerprints/morgan.tsv.gz",
        f"{DM_DIR}/prepared/new_drugs_morgan.tsv.gz",
    ]


DM_PREDICT_TARGETS = [
    f"{DM_DIR}/{feat}/predict/{f}"
    for feat in DM["featurizations"]
    for f in ("viability.tsv", "calibration.tsv")
]
