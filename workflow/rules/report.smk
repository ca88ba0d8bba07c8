# Paper versus reproduction: config/paper_values.yaml (the
# numbers the papers report) resolved against this run's result tables ->
# results/reproduction.tsv and its HTML view on the report's front category;
# the run's configuration and software versions; the `reproduce` target
# (every study, then `snakemake --report`). Library: biokernels.report.
# Included after every study's rules (it reads their *_TARGETS lists).

from biokernels.departures import load_protocols as _load_protocols  # noqa: E402
from biokernels.departures import protocol_problems as _protocol_problems  # noqa: E402
from biokernels.report import Context as _ReportContext  # noqa: E402
from biokernels.report import load_paper_values as _load_paper_values  # noqa: E402
from biokernels.report import required_tables as _required_tables  # noqa: E402
from biokernels.report import source_data as _source_data  # noqa: E402

REPORT = config.get("report") or {}
REPORT_PAPER_VALUES = REPORT.get("paper_values", "config/paper_values.yaml")
REPORT_SCHEMA = os.path.join(workflow.basedir, "schemas", "paper_values.schema.yaml")
# The papers' protocols, against which each row's departures are computed.
REPORT_PROTOCOLS = REPORT.get("paper_protocols", "config/paper_protocols.yaml")
REPORT_PROTOCOLS_SCHEMA = os.path.join(
    workflow.basedir, "schemas", "paper_protocols.schema.yaml"
)
REPORT_CATEGORY = "0. Paper vs reproduction"
# read and validated once: the tables, the protocol check and the coverage check use it
REPORT_DOC = _load_paper_values(REPORT_PAPER_VALUES, REPORT_SCHEMA)
REPORT_ENTRY_IDS = [e["id"] for e in REPORT_DOC["entries"]]

# --- Studies in the report -------------------------------------------------
# study (the `source.study` of paper_values.yaml) -> its targets list. A study
# not listed here gives verdict "not run" for its entries.
REPORT_STUDIES = {
    "theory": THEORY_TARGETS,
    "diffusion": DIFFUSION_TARGETS,
    "drug_screen": DS_TARGETS,
    "depmap": DM_TARGETS,
    "pimkl": PK_TARGETS,
    "mmdt": MM_TARGETS,
    "mkl_transfer": MT_TARGETS,
    "images": IM_TARGETS,
}


# Placeholders of paper_values.yaml table paths: name -> {value: data}, the
# data as each source declares it (`data: paper | substitute | synthetic`,
# biokernels.report.source_data); an empty dict means this config has none
# (entries using it: "not run"). Settings that are not data (featurizations)
# are "paper" here: config/paper_protocols.yaml judges them as protocol.
# (biokernels.config.check_config has already named any source without a
# valid `data`.)
_PK_DATA = _source_data("pimkl", PK_NAME, PK_SRC)
REPORT_PLACEHOLDERS = {
    "dkl_ligand": {
        ds: _source_data("diffusion", ds, diffusion_source(ds))
        for ds in diffusion_protocol_datasets("ligand")
    },
    "dkl_vonmering": {
        ds: _source_data("diffusion", ds, diffusion_source(ds))
        for ds in diffusion_protocol_datasets("vonmering")
    },
    "ds_dataset": {DS_NAME: _source_data("drug_screen", DS_NAME, DS_SRC)},
    "ds_featurization": {DS["featurization"]: "paper"},
    "dm_dataset": {DM_NAME: _source_data("depmap", DM_NAME, DM_SRC)},
    "dm_featurization": {f: "paper" for f in DM["featurizations"]},
    "dm_mol2vec": (
        {"mol2vec": "paper"}
        if {"mol2vec", "morgan"} <= set(DM["featurizations"])
        else {}
    ),
    "pk_dataset": {PK_NAME: _PK_DATA},
    "pk_hallmark": (
        {PK_PRIMARY: "paper"}
        if not PK_SYNTH and "hallmark" in PK_PRIMARY.lower()
        else {}
    ),
    "pk_large": (
        {
            PK_LARGE: (
                "paper"
                if PK_LARGE.upper() == "METABRIC"
                else f"substitute: {PK_LARGE} stands in for METABRIC (1,890 patients, mRNA + CNA)"
            )
        }
        if PK_LARGE and PK_TRANSFER_COHORTS
        else {}
    ),
    "im_dataset": {IM_NAME: _source_data("images", IM_NAME, IM["dataset"])},
    "mkl_dataset": {
        MT_IMG_NAME: (
            "substitute: 8x8 digits with generated corruptions stand in for CIFAR-10-C"
            if MT_IMG_NAME == "digits"
            else f"substitute: two {MT_IMG_NAME} classes with generated corruptions stand in for "
            "CIFAR-10 cars vs deer and CIFAR-10-C"
        )
    },
    "mmdt_task": {
        "digits": "substitute: 8x8 digits and their pooled, noisy copies stand in for the paper's image domains",
        MM_COHORT_STUDY.split("/")[-1]: (
            "synthetic"
            if _PK_DATA == "synthetic"
            else "substitute: breast-cancer cohorts stand in for the paper's image domains"
        ),
    },
}
_REPORT_PROTOCOLS = _load_protocols(REPORT_PROTOCOLS, REPORT_PROTOCOLS_SCHEMA)
_REPORT_PROTOCOL_PROBLEMS = _protocol_problems(
    _REPORT_PROTOCOLS,
    config,
    REPORT_ENTRY_IDS,
)
if _REPORT_PROTOCOL_PROBLEMS:
    raise WorkflowError(f"{REPORT_PROTOCOLS}:\n" + "\n".join(_REPORT_PROTOCOL_PROBLEMS))
REPORT_CONTEXT = {
    "studies": sorted(REPORT_STUDIES),
    "placeholders": canonical(REPORT_PLACEHOLDERS),
    "protocols": canonical(_REPORT_PROTOCOLS),
    "config": canonical({study: config.get(study) or {} for study in REPORT_STUDIES}),
}
REPORT_TABLES = [
    f"results/{t}"
    for t in _required_tables(
        REPORT_DOC,
        _ReportContext.from_mapping(REPORT_CONTEXT),
    )
]
REPORT_TARGETS = [
    "results/reproduction.tsv",
    "results/report/reproduction.html",
    "results/report/run_info.html",
]


rule reproduction_table:
    """Every number of paper_values.yaml beside this run's: paper value,
    reproduced value, difference, tolerance, verdict (TSV and its HTML view,
    the report's front item)."""
    input:
        paper_values=REPORT_PAPER_VALUES,
        schema=REPORT_SCHEMA,
        protocols=REPORT_PROTOCOLS,
        tables=REPORT_TABLES,
    output:
        tsv="results/reproduction.tsv",
        html=report(
            "results/report/reproduction.html",
            caption="../report/reproduction.rst",
            category=REPORT_CATEGORY,
            subcategory="Reproduction table",
        ),
    log:
        "results/report/logs/reproduction_table.log",
    benchmark:
        "results/report/benchmarks/reproduction_table.tsv"
    conda:
        ENV_CORE
    params:
        context=REPORT_CONTEXT,
    script:
        "../scripts/report_table.py"


rule report_run_info:
    """The run's configuration (the merged config, YAML) and software versions
    (Python, Snakemake, the library's pinned dependencies, git commit), as a
    report item."""
    output:
        html=report(
            "results/report/run_info.html",
            caption="../report/run_info.rst",
            category=REPORT_CATEGORY,
            subcategory="Configuration and versions",
        ),
        yaml="results/report/config.yaml",
    log:
        "results/report/logs/run_info.log",
    benchmark:
        "results/report/benchmarks/run_info.tsv"
    conda:
        ENV_TORCH  # it reports torch's CUDA availability
    params:
        config=canonical(config),
        packages=[
            "numpy",
            "scipy",
            "pandas",
            "matplotlib",
            "scikit-learn",
            "networkx",
            "h5py",
            "pyyaml",
            "torch",
            "threadpoolctl",
            "cvxpy",
            "clarabel",
            "rdkit",
            "datamol",
            "gensim",
            "statsmodels",
            "snakemake",
            "jsonschema",
        ],
        workdir=lambda wc: os.getcwd(),
        basedir=workflow.basedir,
    script:
        "../scripts/report_run_info.py"


rule reproduce:
    """Target: every study's tables and figures, the reproduction table and the
    run information; then `snakemake --report results/report.html reproduce`."""
    input:
        [f for targets in REPORT_STUDIES.values() for f in targets],
        REPORT_TARGETS,
        ["results/coverage.tsv", "results/report/coverage.html"],
