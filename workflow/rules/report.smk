# Paper versus reproduction (issue #10): config/paper_values.yaml (the
# numbers the papers report) resolved against this run's result tables ->
# results/reproduction.tsv and its HTML view on the report's front category;
# the run's configuration and software versions; the `reproduce` target
# (every study, then `snakemake --report`). Library: biokernels.report.
# Included after every study's rules (it reads their *_TARGETS lists).

from biokernels.report import Context as _ReportContext  # noqa: E402
from biokernels.report import is_paper_data as _is_paper_data  # noqa: E402
from biokernels.report import load_paper_values as _load_paper_values  # noqa: E402
from biokernels.report import required_tables as _required_tables  # noqa: E402

REPORT = config.get("report") or {}
REPORT_PAPER_VALUES = REPORT.get("paper_values", "config/paper_values.yaml")
REPORT_SCHEMA = os.path.join(workflow.basedir, "schemas", "paper_values.schema.yaml")
# Source names a user declares to be the paper's own data (study -> names),
# beyond what the source types say (biokernels.report.is_paper_data).
REPORT_PAPER_DATA = REPORT.get("paper_data") or {}
REPORT_CATEGORY = "0. Paper vs reproduction"

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
}


# Placeholders of paper_values.yaml table paths: name -> {value: paper data?};
# an empty dict means this config has none (entries using it: "not run").
REPORT_PLACEHOLDERS = {
    "dkl_ligand": {
        ds: _is_paper_data("diffusion", ds, diffusion_source(ds), REPORT_PAPER_DATA)
        for ds in diffusion_protocol_datasets("ligand")
    },
    "dkl_vonmering": {
        ds: _is_paper_data("diffusion", ds, diffusion_source(ds), REPORT_PAPER_DATA)
        for ds in diffusion_protocol_datasets("vonmering")
    },
    "ds_dataset": {
        DS_NAME: _is_paper_data("drug_screen", DS_NAME, DS_SRC, REPORT_PAPER_DATA)
    },
    "ds_featurization": {
        DS["featurization"]: DS["featurization"] == "morgan"
    },  # the paper's Fig. 4: Morgan
    "dm_dataset": {
        DM_NAME: _is_paper_data("depmap", DM_NAME, DM_SRC, REPORT_PAPER_DATA)
    },
    "dm_featurization": {
        f: f == "mol2vec" for f in DM["featurizations"]
    },  # the paper's S9: Mol2Vec
    "dm_mol2vec": (
        {"mol2vec": True} if {"mol2vec", "morgan"} <= set(DM["featurizations"]) else {}
    ),
    "pk_dataset": {
        PK_NAME: _is_paper_data("pimkl", PK_NAME, PK_SRC, REPORT_PAPER_DATA)
    },
    "pk_hallmark": (
        {PK_PRIMARY: True} if not PK_SYNTH and "hallmark" in PK_PRIMARY.lower() else {}
    ),
    "pk_large": ({PK_LARGE: not PK_SYNTH} if PK_LARGE and PK_TRANSFER_COHORTS else {}),
    "mkl_dataset": {"digits": False},  # digits are not CIFAR-10-C
    "mmdt_task": {
        "digits": False,
        MM_COHORT_STUDY.split("/")[-1]: False,
    },  # not the paper's image data
}
# Data sets that carry a labelled deviation from the paper's protocol: their
# rows say so (diffusion: the Laplacian, the beta grid, the kernel-scale choice).
REPORT_DEVIATIONS = {
    ds: diffusion_source(ds)["deviation"]
    for ds in DIFFUSION_DATASETS
    if diffusion_source(ds).get("deviation")
}
REPORT_CONTEXT = {
    "studies": sorted(REPORT_STUDIES),
    "placeholders": canonical(REPORT_PLACEHOLDERS),
    "deviations": canonical(REPORT_DEVIATIONS),
}
REPORT_TABLES = [
    f"results/{t}"
    for t in _required_tables(
        _load_paper_values(REPORT_PAPER_VALUES, REPORT_SCHEMA),
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
    threads: 1
    resources:
        mem_mb=mem_per_attempt(1000),
        runtime=10,
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
    threads: 1
    resources:
        mem_mb=mem_per_attempt(500),
        runtime=5,
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
