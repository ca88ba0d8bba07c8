# Config validation, shared helpers and wildcard constraints.
import inspect
import os
import sys

from snakemake.utils import validate

sys.path.insert(0, os.path.join(workflow.basedir, "..", "src"))
from biokernels.config import find_missing_paths, schema_errors  # noqa: E402

_schema_problems = schema_errors(config, os.path.join(workflow.basedir, "schemas/config.schema.yaml"))
if _schema_problems:
    raise WorkflowError("Config validation failed:\n" + "\n".join(_schema_problems))
validate(config, schema="../schemas/config.schema.yaml")

_missing = find_missing_paths(config)
if _missing:
    raise WorkflowError("Config validation failed:\n" + "\n".join(_missing))

SEED = config["seed"]
DEVICE = config["device"]
GPU_PARTITION = config["slurm"]["gpu_partition"]

# Conda envs, one per rule family (paths relative to rules/).
ENV_CORE = "../envs/core.yaml"
ENV_TORCH = "../envs/torch.yaml"
ENV_CHEM = "../envs/chem.yaml"


wildcard_constraints:
    sweep="lam|bandwidth",


# Report categories, one per paper (report/workflow.rst; rules/report.smk
# adds "0. Paper vs reproduction").
PAPER_TRANSFER = "1. Transfer learning with kernel methods (Radhakrishnan et al. 2023)"
PAPER_DIFFUSION = "2. Adaptive diffusion kernel learning (Sun, Ji & Ye 2008)"
PAPER_PIMKL = "3. PIMKL: pathway-induced MKL (Manica et al. 2019)"
PAPER_MMDT = "4. LS-MMDT: scalable domain adaptation (Rodner et al. 2013)"


def figure(study, fig_id):
    """The PDF and PNG of a figure target (DESIGN.md naming)."""
    return [f"results/{study}/figures/{fig_id}.pdf", f"results/{study}/figures/{fig_id}.png"]


# --- Diffusion-kernel study (rules/diffusion_mkl.smk) ---------------------
DKL = config["diffusion"]
DKL_DATASETS = DKL["datasets"]
# The diffusion settings that each job type reads, and only those (Snakemake reruns a job
# when its params change, so adding splits or data sets must leave the params
# of finished jobs alone).
DKL_SPLIT_KEYS = ("n_kernels", "beta_step", "lam", "formulations", "solver", "svm_C_grid", "inner_folds")
DKL_SM1_KEYS = ("n_kernels", "beta_step", "sm1")
# Per-data-set settings of the protocol (diffusion.sources.<ds>), with their defaults:
# the paper's unnormalized Laplacian, its fixed grid, unannotated proteins as negatives.
DKL_SOURCE_DEFAULTS = {"laplacian": "unnormalized", "kernel_scale": "fixed", "unannotated": "negative"}
DKL_SENSITIVITY_KEYS = (*DKL_SPLIT_KEYS, "sensitivity")
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


# Keys a data set may change and still share another's splits (`splits_of`).
DKL_GRID_ONLY_KEYS = {"description", "beta_step", "splits_of", "deviation", *DKL_SOURCE_DEFAULTS}


def dkl_check_source(ds):
    """What the schema cannot check of diffusion.sources.<ds>: planted_betas
    and planted_mix of one length (defaults from the generator), and that
    `splits_of` names a data set whose source differs only in description,
    beta_step and splits_of (so the inputs and splits really are the same).
    Raises WorkflowError naming the key. (NaN/inf values are caught by
    schema_errors for every key.)"""
    from biokernels.synth.networks import planted_function_network

    src = dkl_source(ds)
    key = f"diffusion.sources.{ds}"
    gen = src.get("generator") or {}
    defaults = inspect.signature(planted_function_network).parameters
    nb, nm = (len(gen.get(k, defaults[k].default)) for k in ("planted_betas", "planted_mix"))
    if nb != nm:
        raise WorkflowError(f"{key}.generator: planted_betas ({nb} values) and planted_mix ({nm} values) "
                            "must have the same length (either may be the generator's default)")
    departs = [k for k, v in DKL_SOURCE_DEFAULTS.items() if src.get(k, v) != v]
    if src.get("beta_step", 0.1) != 0.1:  # a data set's own grid; the paper's beta_i = -0.1 i
        departs.append("beta_step")
    if departs and not str(src.get("deviation") or "").strip():
        raise WorkflowError(f"{key}: {departs} depart from the paper's protocol; say how in "
                            f"{key}.deviation (its reproduction rows are labelled with it)")
    if src.get("kernel_scale") == "inner_cv" and "kernel_scale_cv" not in DKL:
        raise WorkflowError(f"{key}.kernel_scale is inner_cv but diffusion.kernel_scale_cv is not set")
    if src.get("kernel_scale") == "inner_cv" and "laplacian" in src:
        raise WorkflowError(f"{key}: laplacian is set with kernel_scale: inner_cv, where the Laplacians "
                            "are those of diffusion.kernel_scale_cv.candidates; remove one of the two")
    other = src.get("splits_of")
    if other is not None and other != ds:
        if other not in DKL["sources"]:
            raise WorkflowError(f"{key}.splits_of names {other!r}, which is not in diffusion.sources")
        theirs = DKL["sources"][other]
        if theirs.get("splits_of", other) != other:
            raise WorkflowError(f"{key}.splits_of = {other!r}, which itself takes the splits of "
                                f"{theirs['splits_of']!r}: name that data set directly")
        differ = sorted(k for k in (set(src) | set(theirs)) - DKL_GRID_ONLY_KEYS if src.get(k) != theirs.get(k))
        if differ:
            raise WorkflowError(f"{key}.splits_of = {other!r}, but the two sources differ in {differ}: "
                                f"only {', '.join(sorted(DKL_GRID_ONLY_KEYS))} may differ for the same "
                                "inputs and splits")


for _ds in DKL["sources"]:  # every source: a file target may name one outside `datasets`
    dkl_check_source(_ds)


def dkl_seed_name(wildcards):
    """The name that seeds a data set's inputs and splits: its own, or the
    one its source gives in `splits_of` (the same splits as that data set,
    checked by :func:`dkl_check_source`)."""
    return dkl_source(wildcards.ds).get("splits_of", wildcards.ds)


def dkl_params(keys):
    """Params function of a diffusion job: the settings `keys` of the
    diffusion section, with the data set's own `beta_step` where its source
    sets one (a finer grid beside the paper's on the same network)."""

    def params(wildcards):
        src = dkl_source(wildcards.ds)
        out = {k: DKL[k] for k in keys}
        step = src.get("beta_step")
        if step is not None and "beta_step" in out:
            out["beta_step"] = step
        out.update({k: src.get(k, v) for k, v in DKL_SOURCE_DEFAULTS.items()})
        if src.get("deviation") and "sm1" in keys:  # SM1 skips deviation data sets by default
            out["deviation"] = src["deviation"]
        if out["kernel_scale"] == "inner_cv":
            out["kernel_scale_cv"] = DKL["kernel_scale_cv"]
        return out

    return params


def dkl_laplacians(ds):
    """The Laplacian kinds a data set's splits need: its own, or every
    candidate's for the train-only choice of the kernel scale."""
    src = dkl_source(ds)
    if src.get("kernel_scale", "fixed") == "inner_cv":
        return sorted({c["laplacian"] for c in DKL["kernel_scale_cv"]["candidates"]})
    return [src.get("laplacian", "unnormalized")]


def dkl_eigen_files(wildcards):
    return [f"resources/diffusion/{wildcards.ds}/eigen_{lap}.npz" for lap in dkl_laplacians(wildcards.ds)]


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


def dkl_protocol_datasets(paper):
    """Configured data sets standing for the paper's data set `paper`."""
    return [ds for ds in DKL_DATASETS if dkl_source(ds)["paper_dataset"] == paper]


def dkl_protocol_targets(wildcards):
    """The side-by-side table of every paper data set that has a configured
    data set (with only the protocol's rows where no deviation is configured)."""
    out = [f"results/diffusion/protocols_{p}.tsv" for p in ("ligand", "vonmering") if dkl_protocol_datasets(p)]
    for p in ("ligand", "vonmering"):
        seeds = {ds: dkl_source(ds).get("splits_of", ds) for ds in dkl_protocol_datasets(p)}
        if len(set(seeds.values())) > 1:
            raise WorkflowError(f"dkl_protocols compares data sets on one network and one set of splits, but "
                                f"the data sets standing for {p} take their splits from {seeds}: give the "
                                "deviations `splits_of: <the protocol's data set>`")
    if not out:
        raise WorkflowError("dkl_protocols needs a data set in diffusion.datasets")
    return out


DKL_TARGETS = [f for n in range(2, 8) for f in dkl_paper_outputs("table", n)] + [
    f for n in range(1, 9) for f in dkl_paper_outputs("figure", n)
] + [f for ds in DKL_DATASETS for f in figure(f"diffusion/{ds}", "sensitivity")]


# --- Virtual drug screening (rules/drug_screen.smk) ------------------------
def canonical(value):
    """Dicts with keys sorted, recursively: rule params that do not depend on
    the key order of a config file (Snakemake reruns a job when the text of
    its params changes)."""
    if isinstance(value, dict):
        return {k: canonical(value[k]) for k in sorted(value)}
    if isinstance(value, list):
        return [canonical(v) for v in value]
    return value



DS = config["drug_screen"]
DS_NAME = DS["dataset"]
if DS_NAME not in DS["sources"]:
    raise WorkflowError(f"drug_screen.dataset is {DS_NAME!r}, which is not in drug_screen.sources "
                        f"({sorted(DS['sources'])})")
DS_SRC = DS["sources"][DS_NAME]
DS_DIR = f"results/drug_screen/{DS_NAME}"
if DS["featurization"] == "mol2vec" and not DS["fingerprint"]["mol2vec_model_path"]:
    raise WorkflowError("drug_screen.featurization is mol2vec but drug_screen.fingerprint.mol2vec_model_path "
                        "is null; give a gensim Word2Vec file (e.g. model_300dim.pkl of samoturk/mol2vec)")
DS_FEATURES = f"{DS_DIR}/fingerprints/{DS['featurization']}.tsv.gz"
# Models, tables and figures depend on the drug featurization: one folder each,
# so Morgan and Mol2Vec results sit side by side.
DS_FIG_STUDY = f"drug_screen/{DS_NAME}/{DS['featurization']}"
DS_MODEL_DIR = f"results/{DS_FIG_STUDY}"
if DS["scaling"]["first"] >= DS["scaling"]["n_points"]:
    raise WorkflowError(f"drug_screen.scaling.first ({DS['scaling']['first']}) must be smaller than n_points "
                        f"({DS['scaling']['n_points']}): the law fitted on the first points predicts the last one")
DS_RAW_NAMES = {"gctx": "level3.gctx", "sample_info": "inst_info.txt", "pert_info": "pert_info.txt",
                "gene_info": "gene_info.txt"}
# Target cell lines are addressed by rank (1 = most drugs, or the order of
# drug_screen.targets), so the DAG is known before the data are read.
DS_RANKS = [str(k) for k in range(1, (len(DS["targets"]) or DS["n_target"]) + 1)]
# Settings each job type reads (Snakemake reruns a job when its params change).
DS_SPLIT_PARAMS = canonical({k: DS[k] for k in ("n_cells", "n_target", "targets", "folds")})
DS_MODEL_PARAMS = canonical({k: DS[k] for k in ("kernel", "solver", "source_ridge")})
DS_TARGET_PARAMS = canonical({k: DS[k] for k in ("kernel", "target_ridge")})
DS_BY_DOSE = list(DS["replicate_key"]) == ["pert", "cell", "dose", "time"]


def ds_pooled_pairs(wc):
    """pairs.tsv for the rules that need one row per (drug, cell line): the
    split (and so every model and figure) and DepMap. With
    drug_screen.replicate_key [pert, cell, dose, time] this stops the run
    while Snakemake builds the DAG, before any job: only the preprocessed
    files themselves can be asked for."""
    if DS_BY_DOSE:
        raise WorkflowError(
            "drug_screen.replicate_key is [pert, cell, dose, time]: the preprocessing then writes one row per "
            "(drug, cell line, dose, time), which the split, the screen's models and DepMap cannot take: a sample's "
            "input is [drug fingerprint | cell control] with no dose or time, so the doses of one (drug, cell line) "
            "would be identical inputs with different targets, the folds (drawn per row) would put a drug's other "
            "doses of a target cell line in its training folds, and DepMap matches CMAP by pert_id:cell_id. Set "
            f"replicate_key: [pert, cell] (the paper), or ask only for {DS_DIR}/preprocessed/ files.")
    return f"{DS_DIR}/preprocessed/pairs.tsv"


def ds_raw(key):
    """Path of one raw input of the drug screen (GEO layout): generated for
    synthetic and lincs2020_structure sources, downloaded for geo ones."""
    if DS_SRC["type"] == "geo":
        return f"resources/drug_screen/{DS_NAME}/download/{key}"
    return f"resources/drug_screen/{DS_NAME}/raw/{DS_RAW_NAMES[key]}"


def ds_figure_inputs(wc):
    if wc.fig in ("fig4a", "fig4b"):
        return expand(f"{DS_MODEL_DIR}/transfer/target{{k}}_metrics.tsv", k=DS_RANKS)
    if wc.fig in ("fig4c", "fig4d"):
        return expand(f"{DS_MODEL_DIR}/scaling/target{{k}}.tsv", k=DS_RANKS)
    return [f"{DS_DIR}/preprocessed/expression.gctx", f"{DS_DIR}/preprocessed/controls.tsv",
            f"{DS_DIR}/split/folds.tsv"] + expand(f"{DS_MODEL_DIR}/transfer/target{{k}}_samples.tsv.gz", k=DS_RANKS)


# Fig. 4f shows a second target cell line: left out of `all` when there is one.
DS_FIGS = ["fig4a", "fig4b", "fig4c", "fig4d", "fig4e"] + (
    ["fig4f"] if len(DS_RANKS) > 1 or len(DS["pca_cells"]) > 1 else [])
DS_TARGETS = [f for fig in DS_FIGS for f in [f"{DS_MODEL_DIR}/tables/{fig}.tsv", *figure(DS_FIG_STUDY, fig)]]


# --- DepMap viability by projection (rules/depmap.smk) ---------------------
DM = config["depmap"]
DM_NAME = DM["dataset"]
if DM_NAME not in DM["sources"]:
    raise WorkflowError(f"depmap.dataset is {DM_NAME!r}, which is not in depmap.sources ({sorted(DM['sources'])})")
DM_SRC = DM["sources"][DM_NAME]
if "mol2vec" in DM["featurizations"] and not DS["fingerprint"]["mol2vec_model_path"]:
    raise WorkflowError("depmap.featurizations includes mol2vec but drug_screen.fingerprint.mol2vec_model_path "
                        "is not set")
if DM["scaling"]["first"] >= DM["scaling"]["n_points"]:
    raise WorkflowError(f"depmap.scaling.first ({DM['scaling']['first']}) must be smaller than n_points "
                        f"({DM['scaling']['n_points']})")
# The CMAP side is the drug screen's data set, so both names are in the path.
DM_DIR = f"results/depmap/{DS_NAME}/{DM_NAME}"
DM_STUDY = f"depmap/{DS_NAME}/{DM_NAME}"
DM_RESOURCE = f"resources/depmap/{DS_NAME}/{DM_NAME}"
DM_PROJECTION_PARAMS = canonical({k: DM[k] for k in ("seeds", "ridge", "scaling", "genes", "projection_input")}
                                 | {"kernel": DS["kernel"]})
DM_SOURCE_PARAMS = canonical({"source": DM["source"], "source_ridge": DS["source_ridge"], "kernel": DS["kernel"],
                              "solver": DS["solver"]})


def dm_generate_inputs(wc):
    """The drug screen's truth folder the DepMap generator rebuilds its model from
    (an error, raised only when the generator is needed, on real GEO data)."""
    if DS_SRC["type"] == "geo":
        raise WorkflowError(f"depmap source {DM_NAME!r} is synthetic: it derives viability from the drug screen's "
                            f"hidden model, but drug_screen.dataset {DS_NAME!r} is real GEO data with none")
    return {"truth": f"resources/drug_screen/{DS_NAME}/raw/truth/params.json",
            "pert_info": f"resources/drug_screen/{DS_NAME}/raw/pert_info.txt"}


def dm_table(wc=None):
    """The viability table the DepMap study reads (generated, local or downloaded)."""
    if DM_SRC["type"] == "table":
        return DM_SRC["path"]
    if DM_SRC["type"] == "download":
        return f"resources/depmap/download/{DM_NAME}/viability"
    return f"{DM_RESOURCE}/viability.csv"


def dm_cmap_features(wc):
    """The CMAP drug embedding of the featurization (written by the drug screen)."""
    return f"{DS_DIR}/fingerprints/{wc.featurization}.tsv.gz"


DM_FIGS = ["figS9a", "figS9b"]
DM_TARGETS = [f for feat in DM["featurizations"] for fig in DM_FIGS
              for f in [f"{DM_DIR}/{feat}/tables/{fig}.tsv", *figure(f"{DM_STUDY}/{feat}", fig)]] + [
    f"{DM_DIR}/tables/featurizations.tsv"]


def dm_features(wc):
    """Drug embeddings the DepMap models read: CMAP's and the DepMap-only drugs'."""
    return [dm_cmap_features(wc), f"{DM_DIR}/prepared/new_drugs_{wc.featurization}.tsv.gz"]


def dm_projection_ridge(wc):
    """The scaling and genes curves read the ridges chosen by curve=ridge."""
    if wc.curve == "ridge":
        return {}
    return {"ridge": f"{DM_DIR}/{wc.featurization}/projection/ridge.tsv"}
include: "pimkl_common.smk"


# --- LS-MMDT (rules/mmdt.smk) ----------------------------------------------
MM = config["mmdt"]
MM_DIGITS_PARAMS = canonical({k: MM[k] for k in ("C_source", "C_target", "max_alternations", "tol", "max_iter",
                                                 "digits")})
MM_COHORT_PARAMS = canonical({k: MM[k] for k in ("C_source", "C_target", "max_alternations", "tol", "max_iter",
                                                 "cohorts")})
# The cohort task uses the PIMKL study's cohorts (pimkl_common.smk): by default
# the pooled cohorts of Algorithm S1 -> the large cohort (or, without one, the
# last S1 cohort from the others).
MM_TARGET_COHORT = MM["cohorts"]["target"] or PK_LARGE or PK_S1_COHORTS[-1]
MM_SOURCE_COHORTS = list(MM["cohorts"]["source"]) or [c for c in PK_S1_COHORTS if c != MM_TARGET_COHORT]
for _c in [MM_TARGET_COHORT, *MM_SOURCE_COHORTS]:
    if _c not in PK_COHORT_SPECS:
        raise WorkflowError(f"mmdt.cohorts: {_c!r} is not a cohort of pimkl.dataset {PK_NAME!r} "
                            f"({sorted(PK_COHORT_SPECS)})")
if not MM_SOURCE_COHORTS:
    raise WorkflowError("mmdt.cohorts: no source cohort left (pimkl.dataset has a single cohort)")
MM_COHORT_STUDY = f"mmdt/cohorts_{PK_NAME}"
MM_COHORT_DIR = f"results/{MM_COHORT_STUDY}"
MM_TARGETS = ["results/mmdt/digits/tables/learning_curve.tsv", *figure("mmdt/digits", "learning_curve"),
              f"{MM_COHORT_DIR}/tables/learning_curve.tsv", *figure(MM_COHORT_STUDY, "learning_curve")]
include: "mkl_transfer_common.smk"
