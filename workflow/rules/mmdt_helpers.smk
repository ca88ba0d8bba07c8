# LS-MMDT's settings, input functions and targets (its rules: rules/mmdt.smk);
# the cohort task takes the PIMKL source's cohorts (PK_*, rules/pimkl_helpers.smk),
# the image task the images study's set (IM_*, rules/images_helpers.smk).
# (`snakemake --lint` wants functions and rules in separate files.)
from biokernels.config import mmdt_cohorts, mmdt_problems  # noqa: E402

MM = config["mmdt"]
_MM_SOLVER_KEYS = ("C_source", "C_target", "max_alternations", "tol", "max_iter")
MM_DIGITS_PARAMS = canonical({k: MM[k] for k in (*_MM_SOLVER_KEYS, "digits")})
MM_COHORT_PARAMS = canonical({k: MM[k] for k in (*_MM_SOLVER_KEYS, "cohorts")})
# The image task reads the images study's set (IM_*, rules/images_helpers.smk).
MM_IMAGES_TASK = f"images_{IM_NAME}"
MM_IMAGES_PARAMS = canonical(
    {**{k: MM[k] for k in (*_MM_SOLVER_KEYS, "images")}, "dataset": IM["dataset"]}
)
# By default the pooled cohorts of Algorithm S1 -> the large cohort (or,
# without one, the last S1 cohort from the others); checked by mm_cohorts(),
# only when the cohort task is in the DAG.
MM_TARGET_COHORT, MM_SOURCE_COHORTS = mmdt_cohorts(config)
MM_COHORT_STUDY = f"mmdt/cohorts_{PK_NAME}"
MM_COHORT_DIR = f"results/{MM_COHORT_STUDY}"
MM_TARGETS = [
    "results/mmdt/digits/tables/learning_curve.tsv",
    *figure("mmdt/digits", "learning_curve"),
    f"{MM_COHORT_DIR}/tables/learning_curve.tsv",
    *figure(MM_COHORT_STUDY, "learning_curve"),
    f"results/mmdt/{MM_IMAGES_TASK}/tables/learning_curve.tsv",
    *figure(f"mmdt/{MM_IMAGES_TASK}", "learning_curve"),
]


def mm_cohorts():
    """The cohort task's cohorts, source cohorts then the target, after
    LS-MMDT's checks (biokernels.config.mmdt_problems). Called by the input
    and params functions of rule mmdt_cohorts, i.e. only when that task is in
    the DAG, so its messages stop the run before any job exactly then: a
    PIMKL source LS-MMDT cannot use (e.g. one cohort) does not stop the
    other studies' targets."""
    problems = mmdt_problems(config)
    if problems:
        raise WorkflowError(
            "Config validation failed (LS-MMDT's cohort task is requested):\n"
            + "\n".join(problems)
        )
    return [*MM_SOURCE_COHORTS, MM_TARGET_COHORT]


def mm_cohort_files(wc):
    """Input files of the cohort task (every *_path of its cohorts)."""
    return [f for c in mm_cohorts() for f in pk_cohort_files(c)]
