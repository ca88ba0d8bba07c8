# The transfer-vs-MKL study's settings, paths, input functions and targets
# (its rules: rules/mkl_transfer.smk). Reads the drug screen's and DepMap's
# DS_* / DM_* constants (rules/drug_screen_helpers.smk, rules/depmap_helpers.smk).
# (`snakemake --lint` wants functions and rules in separate files.)
MT = config["mkl_transfer"]
MT_BIO = MT["bio"]
MT_IMG = MT["images"]
# dataset: images reads the images study's set (config.check_config refuses its digits).
MT_IMG_NAME = (
    "digits"
    if MT_IMG.get("dataset", "digits") == "digits"
    else config["images"]["dataset"]["name"]
)
MT_IMG_STUDY = f"mkl_transfer/{MT_IMG_NAME}"
MT_IMG_DIR = f"results/{MT_IMG_STUDY}"
# The bio task reads the DepMap study's prepared table: both data set names in the path.
MT_BIO_STUDY = f"mkl_transfer/depmap/{DS_NAME}/{DM_NAME}/{MT_BIO['featurization']}"
MT_BIO_DIR = f"results/{MT_BIO_STUDY}"
MT_CORRUPTIONS = list(MT_IMG["corruptions"])
# Settings each job type reads (Snakemake reruns a job when its params change;
# adding a corruption leaves the finished ones alone).
MT_MODEL_PARAMS = canonical(
    {k: MT[k] for k in ("methods", "kernels", "learners", "translation")}
)
MT_IMG_PARAMS = canonical(
    {
        **{k: v for k, v in MT_IMG.items() if k != "corruptions"},
        **(
            {"image_set": config["images"]["dataset"]}
            if MT_IMG.get("dataset", "digits") == "images"
            else {}
        ),
    }
)
MT_BIO_PARAMS = canonical(MT_BIO)


def mt_image_runs(kind):
    """Per-corruption tables of the images task, in the configured order."""
    return [f"{MT_IMG_DIR}/runs/{c}_{kind}.tsv" for c in MT_CORRUPTIONS]


def mt_bio_features(wc=None):
    """Drug embeddings of the bio task: CMAP's (drug screen) and the DepMap-only drugs'."""
    f = MT_BIO["featurization"]
    return [
        f"{DS_DIR}/fingerprints/{f}.tsv.gz",
        f"{DM_DIR}/prepared/new_drugs_{f}.tsv.gz",
    ]


MT_TARGETS = [
    f"{MT_IMG_DIR}/tables/figS7.tsv",
    f"{MT_IMG_DIR}/tables/figS7_weights.tsv",
    *figure(MT_IMG_STUDY, "figS7"),
    f"{MT_BIO_DIR}/tables/figS7_bio.tsv",
    f"{MT_BIO_DIR}/tables/figS7_bio_weights.tsv",
    *figure(MT_BIO_STUDY, "figS7_bio"),
]
