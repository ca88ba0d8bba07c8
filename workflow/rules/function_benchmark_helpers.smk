# Settings, paths, input functions and targets of the function benchmark
# (rules in rules/function_benchmark.smk). FB_* constants, fb_*
# functions.

FB = config["function_benchmark"]
FB_DIR = "results/function_benchmark"
# Report category of its tables and figures (not one of the four papers).
BEYOND_PAPERS = "5. Beyond the papers: protein function benchmark"
# The settings every run job shares (a source's own settings are added per job).
FB_RUN_KEYS = [
    "n_trials",
    "test_fraction",
    "inner_folds",
    "svm",
    "diffusion",
    "propagation",
    "mashup",
]


def fb_levels(dataset):
    """The label levels of a configured data set, in config order."""
    return list(FB["sources"][dataset]["levels"])


def fb_input_files(wildcards):
    """The input files of one (data set, level) run: the keys ending in
    _path of its source and of the level."""
    src = FB["sources"][wildcards.dataset]
    files = [v for k, v in src.items() if k.endswith("_path") and v]
    files += [net["adjacency_path"] for net in (src.get("networks") or {}).values()]
    files += [
        v
        for k, v in (src["levels"][wildcards.level] or {}).items()
        if k.endswith("_path")
    ]
    return files


def fb_run_params(wildcards):
    """The run's settings (canonical: key order does not rerun a job)."""
    return canonical({**{k: FB[k] for k in FB_RUN_KEYS}, "seed": SEED})


def fb_level_outputs(level):
    """The tables and figure of one level for every data set that has it."""
    out = []
    for ds in FB["datasets"]:
        if level in fb_levels(ds):
            base = f"{FB_DIR}/{ds}/{level}"
            out += [
                f"{base}/tables/benchmark.tsv",
                f"{base}/tables/wilcoxon.tsv",
                f"{base}/figures/benchmark.pdf",
                f"{base}/figures/benchmark.png",
            ]
    return out


FB_TARGETS = [
    p for ds in FB["datasets"] for lv in fb_levels(ds) for p in fb_level_outputs(lv)
]
FB_TARGETS = list(dict.fromkeys(FB_TARGETS))
