# The drug screen's settings, paths, input functions and targets (its rules:
# rules/drug_screen.smk); rules/depmap*.smk and rules/mkl_transfer*.smk read
# the DS_* constants and ds_* functions too.
# (`snakemake --lint` wants functions and rules in separate files.)
DS = config["drug_screen"]
DS_NAME = DS["dataset"]
DS_SRC = DS["sources"][DS_NAME]
DS_DIR = f"results/drug_screen/{DS_NAME}"
DS_FEATURES = f"{DS_DIR}/fingerprints/{DS['featurization']}.tsv.gz"
# Models, tables and figures depend on the drug featurization: one folder each,
# so Morgan and Mol2Vec results sit side by side.
DS_FIG_STUDY = f"drug_screen/{DS_NAME}/{DS['featurization']}"
DS_MODEL_DIR = f"results/{DS_FIG_STUDY}"
DS_RAW_NAMES = {
    "gctx": "level3.gctx",
    "sample_info": "inst_info.txt",
    "pert_info": "pert_info.txt",
    "gene_info": "gene_info.txt",
}
# Target cell lines are addressed by rank (1 = most drugs, or the order of
# drug_screen.targets), so the DAG is known before the data are read.
DS_RANKS = [str(k) for k in range(1, (len(DS["targets"]) or DS["n_target"]) + 1)]
# Settings each job type reads (Snakemake reruns a job when its params change).
DS_SPLIT_PARAMS = canonical(
    {k: DS[k] for k in ("n_cells", "n_target", "targets", "folds")}
)
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
            "drug_screen.replicate_key is [pert, cell, dose, time]: the preprocessing then writes one row "
            "per (drug, cell line, dose, time), which the split, the screen's models and DepMap cannot take: "
            "a sample's input is [drug fingerprint | cell control] with no dose or time, so the doses of one "
            "(drug, cell line) would be identical inputs with different targets, the folds (drawn per row) "
            "would put a drug's other doses of a target cell line in its training folds, and DepMap matches "
            "CMAP by pert_id:cell_id. Set replicate_key: [pert, cell] (the paper), or ask only for "
            f"{DS_DIR}/preprocessed/ files."
        )
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
    return [
        f"{DS_DIR}/preprocessed/expression.gctx",
        f"{DS_DIR}/preprocessed/controls.tsv",
        f"{DS_DIR}/split/folds.tsv",
    ] + expand(f"{DS_MODEL_DIR}/transfer/target{{k}}_samples.tsv.gz", k=DS_RANKS)


# Fig. 4f shows a second target cell line: left out of `all` when there is one.
DS_FIGS = ["fig4a", "fig4b", "fig4c", "fig4d", "fig4e"] + (
    ["fig4f"] if len(DS_RANKS) > 1 or len(DS["pca_cells"]) > 1 else []
)
DS_TARGETS = [
    f
    for fig in DS_FIGS
    for f in [f"{DS_MODEL_DIR}/tables/{fig}.tsv", *figure(DS_FIG_STUDY, fig)]
]
