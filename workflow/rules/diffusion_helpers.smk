# The diffusion study's settings, paths, input functions and targets (its
# rules: rules/diffusion.smk). The sources' settings are checked by
# biokernels.config.check_config (common.smk).
# (`snakemake --lint` wants functions and rules in separate files.)
import urllib.parse  # noqa: E402

from biokernels.config import DIFFUSION_SOURCE_DEFAULTS  # noqa: E402
from biokernels.studies.diffusion.data import source_file_problems  # noqa: E402
from biokernels.studies.diffusion.protocol.kernel_scale import (
    scale_siblings,
)  # noqa: E402

DIFFUSION = config["diffusion"]
DIFFUSION_DATASETS = DIFFUSION["datasets"]
# Every real source's files: each a local path or a checksummed download,
# every download's sha256 pinned (a shipped config may write `unpinned`
# where only its user can pin it: these machines have no network), no
# setting of another label format. Stops before any job, naming the keys.
_DIFFUSION_FILE_PROBLEMS = [
    p for ds, src in DIFFUSION["sources"].items() for p in source_file_problems(ds, src)
]
if _DIFFUSION_FILE_PROBLEMS:
    raise WorkflowError(
        "Config validation failed:\n" + "\n".join(_DIFFUSION_FILE_PROBLEMS)
    )
# The diffusion settings that each job type reads, and only those (Snakemake
# reruns a job when its params change, so adding splits or data sets must
# leave the params of finished jobs alone).
DIFFUSION_SPLIT_KEYS = (
    "n_kernels",
    "beta_step",
    "lam",
    "formulations",
    "solver",
    "svm_C_grid",
    "inner_folds",
    "classifier",
    "classifier_settings",
)
DIFFUSION_SM1_KEYS = (
    "n_kernels",
    "beta_step",
    "sm1",
    "classifier",
    "classifier_settings",
)
DIFFUSION_SENSITIVITY_KEYS = (*DIFFUSION_SPLIT_KEYS, "sensitivity")
# the tables of a split job that a train-only scale choice may copy: output name -> file stem
DIFFUSION_SPLIT_TABLES = {
    "roc": "roc",
    "kernel_roc": "kernel_roc",
    "weights": "weights",
    "times": "times",
    "cv": "inner_cv",
}
# 00 = the given split
DIFFUSION_SPLITS = [f"{i:02d}" for i in range(DIFFUSION["n_random_splits"] + 1)]

# Paper numbering: (table/figure kind) -> number, per paper data set.
DIFFUSION_TABLES = {
    "ligand": {"mean_roc": 2, "wilcoxon": 3, "stability": 4},
    "vonmering": {"mean_roc": 5, "wilcoxon": 6, "stability": 7},
}
DIFFUSION_FIGURES = {
    "ligand": {
        "roc_threshold": 1,
        "roc_per_kernel": 2,
        "best_roc_per_task": 3,
        "scatter_vs_ubaseline": 4,
    },
    "vonmering": {
        "roc_threshold": 5,
        "roc_per_kernel": 6,
        "best_roc_per_task": 7,
        "scatter_vs_ubaseline": 8,
    },
}
# What each table and figure shows, and the paper's data sets by name (the
# docstrings of the named targets dkl_table<n> and dkl_fig<n>).
DIFFUSION_TARGET_DOCS = {
    "mean_roc": "mean ROC and kernel-learning time",
    "wilcoxon": "Wilcoxon p-values of DKL and mDKL vs every method",
    "stability": "stability over splits (mean and SD of the mean ROC)",
    "roc_threshold": "number of tasks above each ROC threshold",
    "roc_per_kernel": "mean ROC of each single kernel vs -beta",
    "best_roc_per_task": "best ROC per task (uBaseline)",
    "scatter_vs_ubaseline": "each formulation vs uBaseline per task",
}
DIFFUSION_PAPER_NAMES = {"ligand": "Ligand", "vonmering": "von Mering"}


def diffusion_source(ds):
    """diffusion.sources.<ds>; an error naming the data set when a target's
    path names one that is not configured."""
    if ds not in DIFFUSION["sources"]:
        raise WorkflowError(
            f"diffusion: data set {ds!r} is not in diffusion.sources "
            f"({sorted(DIFFUSION['sources'])})"
        )
    return DIFFUSION["sources"][ds]


def diffusion_seed_name(wildcards):
    """The name that seeds a data set's inputs and splits: its own, or the
    one its source gives in `splits_of` (the same splits as that data set,
    checked by biokernels.config.diffusion_source_problems)."""
    return diffusion_source(wildcards.ds).get("splits_of", wildcards.ds)


def diffusion_params(keys):
    """Params function of a diffusion job: the settings `keys` of the
    diffusion section, with the data set's own `beta_step` where its source
    sets one (a finer grid beside the paper's on the same network)."""

    def params(wildcards):
        src = diffusion_source(wildcards.ds)
        out = {k: DIFFUSION[k] for k in keys}
        step = src.get("beta_step")
        if step is not None and "beta_step" in out:
            out["beta_step"] = step
        out.update({k: src.get(k, v) for k, v in DIFFUSION_SOURCE_DEFAULTS.items()})
        if src.get("deviation") and "sm1" in keys:
            out["deviation"] = src[
                "deviation"
            ]  # SM1 skips deviation data sets by default
        if out["kernel_scale"] == "inner_cv":
            out["kernel_scale_cv"] = DIFFUSION["kernel_scale_cv"]
        return out

    return params


def diffusion_laplacians(ds):
    """The Laplacian kinds a data set's splits need: its own, or every
    candidate's for the train-only choice of the kernel scale."""
    src = diffusion_source(ds)
    if src.get("kernel_scale", "fixed") == "inner_cv":
        return sorted(
            {c["laplacian"] for c in DIFFUSION["kernel_scale_cv"]["candidates"]}
        )
    return [src.get("laplacian", "unnormalized")]


def diffusion_eigen_path(ds, laplacian):
    return f"resources/diffusion/{ds}/eigen_{laplacian}.npz"


def diffusion_eigen_files(wildcards):
    return [
        diffusion_eigen_path(wildcards.ds, lap)
        for lap in diffusion_laplacians(wildcards.ds)
    ]


def diffusion_siblings(wildcards):
    """The fixed-scale data sets whose split a train-only kernel-scale choice
    may take (biokernels...kernel_scale.scale_siblings), each with the files
    its split ran on and wrote: a list of dicts (laplacian, beta_step,
    dataset, and the paths)."""
    ds = wildcards.ds
    sources = {d: diffusion_source(d) for d in [*DIFFUSION_DATASETS, ds]}
    sib = scale_siblings(
        ds,
        sources,
        DIFFUSION["beta_step"],
        DIFFUSION["kernel_scale_cv"]["candidates"],
    )
    out = []
    for (lap, step), other in sib.items():
        res = f"results/diffusion/{other}/splits/{wildcards.split}"
        out.append(
            {
                "laplacian": lap,
                "beta_step": step,
                "dataset": other,
                "edges": f"resources/diffusion/{other}/edges.tsv",
                "labels": f"resources/diffusion/{other}/labels.tsv",
                "splits": f"resources/diffusion/{other}/splits/{wildcards.split}.tsv",
                "eigen": diffusion_eigen_path(other, lap),
                "tables": {
                    key: f"{res}/{stem}.tsv"
                    for key, stem in DIFFUSION_SPLIT_TABLES.items()
                },
            }
        )
    return out


def diffusion_sibling_files(wildcards):
    """Every file of diffusion_siblings, as the split job's input."""
    return [
        path
        for s in diffusion_siblings(wildcards)
        for path in (
            s["edges"],
            s["labels"],
            s["splits"],
            s["eigen"],
            *s["tables"].values(),
        )
    ]


def diffusion_paper_outputs(kind, number, required=False):
    """Files of Table/Figure `number` of kind 'table' or 'figure' for every
    configured data set that stands for the paper's data set with it. With
    `required`, no such data set is an error (a named target that would do
    nothing)."""
    out = []
    for ds in DIFFUSION_DATASETS:
        paper = diffusion_source(ds)["paper_dataset"]
        table = DIFFUSION_TABLES if kind == "table" else DIFFUSION_FIGURES
        for name, num in table[paper].items():
            if num == number:
                out.append(f"results/diffusion/{ds}/tables/{name}.tsv")
                if kind == "figure":
                    out += figure(f"diffusion/{ds}", name)
    if required and not out:
        # Tables 2-4 and Figures 1-4: Ligand
        paper = "ligand" if number <= 4 else "vonmering"
        raise WorkflowError(
            f"{kind} {number} needs a data set with paper_dataset: {paper} in "
            f"diffusion.datasets (configured: {DIFFUSION_DATASETS})"
        )
    return out


def diffusion_target(kind, number):
    """Input function of the named target of Table/Figure `number`."""
    return lambda wildcards: diffusion_paper_outputs(kind, number, required=True)


def diffusion_download_path(spec):
    """The path of a download (made by diffusion_download), under its sha256
    (shared by every source listing the same file) and named as the URL's
    last part (less .gz when gunzipped), so the readers see the file's name."""
    name = urllib.parse.unquote(
        os.path.basename(urllib.parse.urlparse(spec["url"]).path)
    )
    if spec.get("gunzip") and name.endswith(".gz"):
        name = name[: -len(".gz")]
    return f"resources/diffusion/download/{spec['sha256']}/{name}"


# download path -> its spec (url, sha256, gunzip), over every source
DIFFUSION_DOWNLOADS = {
    diffusion_download_path(spec): spec
    for src in DIFFUSION["sources"].values()
    for spec in (src.get("downloads") or {}).values()
}


def diffusion_download_spec(wildcards):
    path = f"resources/diffusion/download/{wildcards.sha256}/{wildcards.name}"
    if path not in DIFFUSION_DOWNLOADS:
        raise WorkflowError(
            f"{path}: no diffusion source lists a download with this sha256 and file name"
        )
    return canonical(DIFFUSION_DOWNLOADS[path])


def diffusion_inputs_source(ds):
    """diffusion.sources.<ds> as diffusion_inputs reads it, each file key in
    `downloads` set to the downloaded copy (diffusion_download_path). A
    source without downloads is passed as it is (the same params as before,
    so finished inputs are not rerun)."""
    src = diffusion_source(ds)
    if not src.get("downloads"):
        return src
    out = {k: v for k, v in src.items() if k != "downloads"}
    out.update({k: diffusion_download_path(s) for k, s in src["downloads"].items()})
    return out


def diffusion_input_files(wildcards):
    src = diffusion_inputs_source(wildcards.ds)
    return [v for k, v in src.items() if k.endswith("_path") and v]


def diffusion_table_rocs(wc):
    if wc.kind == "stability":  # the paper's Tables 4 and 7 have no SM1
        return [
            f"results/diffusion/{wc.ds}/splits/{s}/roc.tsv" for s in DIFFUSION_SPLITS
        ]
    return [
        f"results/diffusion/{wc.ds}/splits/00/roc.tsv",
        f"results/diffusion/{wc.ds}/splits/00/roc_sm1.tsv",
    ]


def diffusion_protocol_datasets(paper):
    """Configured data sets standing for the paper's data set `paper`."""
    return [
        ds
        for ds in DIFFUSION_DATASETS
        if diffusion_source(ds)["paper_dataset"] == paper
    ]


def diffusion_protocol_targets(wildcards):
    """The side-by-side table of every paper data set that has a configured
    data set (with only the protocol's rows where no deviation is configured).
    An error, only when diffusion_protocols is asked for, where the data sets of one
    paper data set do not share their splits."""
    papers = [p for p in ("ligand", "vonmering") if diffusion_protocol_datasets(p)]
    for p in papers:
        seeds = {
            ds: diffusion_source(ds).get("splits_of", ds)
            for ds in diffusion_protocol_datasets(p)
        }
        if len(set(seeds.values())) > 1:
            raise WorkflowError(
                "diffusion_protocols compares data sets on one network and one set of splits, but "
                f"the data sets standing for {p} take their splits from {seeds}: give the "
                "deviations `splits_of: <the protocol's data set>`"
            )
    if not papers:
        raise WorkflowError(
            "diffusion_protocols needs a data set in diffusion.datasets"
        )
    return [f"results/diffusion/protocols_{p}.tsv" for p in papers]


DIFFUSION_TARGETS = (
    [f for n in range(2, 8) for f in diffusion_paper_outputs("table", n)]
    + [f for n in range(1, 9) for f in diffusion_paper_outputs("figure", n)]
    + [f for ds in DIFFUSION_DATASETS for f in figure(f"diffusion/{ds}", "sensitivity")]
)
