# The DepMap study's settings, paths, input functions and targets (its rules:
# rules/depmap.smk). Reads the drug screen's DS_* constants
# (rules/drug_screen_helpers.smk); rules/mkl_transfer*.smk read the DM_* ones.
# (`snakemake --lint` wants functions and rules in separate files.)
DM = config["depmap"]
DM_NAME = DM["dataset"]
DM_SRC = DM["sources"][DM_NAME]
# The CMAP side is the drug screen's data set, so both names are in the path.
DM_DIR = f"results/depmap/{DS_NAME}/{DM_NAME}"
DM_STUDY = f"depmap/{DS_NAME}/{DM_NAME}"
DM_RESOURCE = f"resources/depmap/{DS_NAME}/{DM_NAME}"
DM_PROJECTION_PARAMS = canonical(
    {k: DM[k] for k in ("seeds", "ridge", "scaling", "genes", "projection_input")}
    | {"kernel": DS["kernel"]}
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
    (an error, raised only when the generator is needed, on real GEO data)."""
    if DS_SRC["type"] == "geo":
        raise WorkflowError(
            f"depmap source {DM_NAME!r} is synthetic: it derives viability from the drug screen's "
            f"hidden model, but drug_screen.dataset {DS_NAME!r} is real GEO data with none"
        )
    return {
        "truth": f"resources/drug_screen/{DS_NAME}/raw/truth/params.json",
        "pert_info": f"resources/drug_screen/{DS_NAME}/raw/pert_info.txt",
    }


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
