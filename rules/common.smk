# Config validation, shared helpers and wildcard constraints.
import os
import sys

from snakemake.utils import validate

sys.path.insert(0, os.path.join(workflow.basedir, "src"))
from biokernels.config import find_missing_paths, schema_errors  # noqa: E402

_schema_problems = schema_errors(config, os.path.join(workflow.basedir, "config/schemas/config.schema.yaml"))
if _schema_problems:
    raise WorkflowError("Config validation failed:\n" + "\n".join(_schema_problems))
validate(config, schema="../config/schemas/config.schema.yaml")

_missing = find_missing_paths(config)
if _missing:
    raise WorkflowError("Config validation failed:\n" + "\n".join(_missing))

SEED = config["seed"]
DEVICE = config["device"]
GPU_PARTITION = config["slurm"]["gpu_partition"]

# Conda envs, one per rule family (paths relative to rules/).
ENV_CORE = "../envs/core.yaml"
ENV_TORCH = "../envs/torch.yaml"


wildcard_constraints:
    sweep="lam|bandwidth",


def figure(study, fig_id):
    """The PDF and PNG of a figure target (DESIGN.md naming)."""
    return [f"results/{study}/figures/{fig_id}.pdf", f"results/{study}/figures/{fig_id}.png"]


# --- Diffusion-kernel study (rules/diffusion_mkl.smk) ---------------------
DKL = config["diffusion"]
DKL_DATASETS = DKL["datasets"]
# The diffusion settings that each job type reads, and only those (Snakemake reruns a job
# when its params change, so adding splits or data sets must leave the params
# of finished jobs alone).
DKL_SPLIT_PARAMS = {k: DKL[k] for k in ("n_kernels", "beta_step", "lam", "formulations", "solver",
                                        "svm_C_grid", "inner_folds")}
DKL_SM1_PARAMS = {k: DKL[k] for k in ("n_kernels", "beta_step", "sm1")}
DKL_SENSITIVITY_PARAMS = {**DKL_SPLIT_PARAMS, "sensitivity": DKL["sensitivity"]}
DKL_SPLITS = [f"{i:02d}" for i in range(DKL["n_random_splits"] + 1)]  # 00 = the given split

# Paper numbering: (table/figure kind) -> number, per paper data set.
DKL_TABLES = {"ligand": {"mean_roc": 2, "wilcoxon": 3, "stability": 4},
              "vonmering": {"mean_roc": 5, "wilcoxon": 6, "stability": 7}}
DKL_FIGURES = {"ligand": {"roc_threshold": 1, "roc_per_kernel": 2, "best_roc_per_task": 3,
                          "scatter_vs_ubaseline": 4},
               "vonmering": {"roc_threshold": 5, "roc_per_kernel": 6, "best_roc_per_task": 7,
                             "scatter_vs_ubaseline": 8}}


def dkl_source(ds):
    if ds not in DKL["sources"]:
        raise WorkflowError(f"diffusion.datasets names {ds!r}, which is not in diffusion.sources")
    return DKL["sources"][ds]


def dkl_paper_outputs(kind, number, required=False):
    """Files of Table/Figure `number` of kind 'table' or 'figure' for every
    configured data set that stands for the paper's data set with it. With
    `required`, no such data set is an error (a named target that would do
    nothing)."""
    out = []
    for ds in DKL_DATASETS:
        pd_ = dkl_source(ds)["paper_dataset"]
        table = DKL_TABLES if kind == "table" else DKL_FIGURES
        for name, num in table[pd_].items():
            if num == number:
                out.append(f"results/diffusion/{ds}/tables/{name}.tsv")
                if kind == "figure":
                    out += figure(f"diffusion/{ds}", name)
    if required and not out:
        paper = "ligand" if number <= 4 else "vonmering"  # Tables 2-4 and Figures 1-4: Ligand
        raise WorkflowError(f"{kind} {number} needs a data set with paper_dataset: {paper} in "
                            f"diffusion.datasets (configured: {DKL_DATASETS})")
    return out


def dkl_target(kind, number):
    """Input function of the named target of Table/Figure `number`."""
    return lambda wildcards: dkl_paper_outputs(kind, number, required=True)


def dkl_input_files(wildcards):
    src = dkl_source(wildcards.ds)
    return [v for k, v in src.items() if k.endswith("_path") and v]


def dkl_table_rocs(wc):
    if wc.kind == "stability":  # the paper's Tables 4 and 7 have no SM1
        return [f"results/diffusion/{wc.ds}/splits/{s}/roc.tsv" for s in DKL_SPLITS]
    return [f"results/diffusion/{wc.ds}/splits/00/roc.tsv", f"results/diffusion/{wc.ds}/splits/00/roc_sm1.tsv"]


DKL_TARGETS = [f for n in range(2, 8) for f in dkl_paper_outputs("table", n)] + [
    f for n in range(1, 9) for f in dkl_paper_outputs("figure", n)
] + [f for ds in DKL_DATASETS for f in figure(f"diffusion/{ds}", "sensitivity")]
