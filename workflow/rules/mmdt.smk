# Large-scale max-margin domain transform (Rodner et al. 2013, LS-MMDT):
# learning curves on a two-domain digits task (Figs. 3-6 shape, with classes
# held out of the target training set) and across the breast-cancer cohorts
# of the PIMKL study (pooled source cohorts -> the large cohort; its PK_*
# constants, rules/pimkl_helpers.smk). Settings, input functions and targets
# (MM_*, mm_*): rules/mmdt_helpers.smk.


rule mmdt_digits:
    """Accuracy vs labelled target examples per class on the digits task:
    LS-MMDT (paper), LS-MMDT with a W0 prior, SVM-Source, SVM-Target."""
    output:
        "results/mmdt/digits/curves.tsv",
    log:
        "results/mmdt/digits/logs/curves.log",
    benchmark:
        "results/mmdt/digits/benchmarks/curves.tsv"
    conda:
        ENV_CORE
    params:
        cfg=MM_DIGITS_PARAMS,
        seed=SEED,
    script:
        "../scripts/mmdt_digits.py"


rule mmdt_images:
    """Accuracy vs labelled target examples per class on real images: the
    images study's clean train split (source) to its corrupted, coarser test
    split (target), held-out classes."""
    output:
        f"results/mmdt/{MM_IMAGES_TASK}/curves.tsv",
    log:
        f"results/mmdt/{MM_IMAGES_TASK}/logs/curves.log",
    benchmark:
        f"results/mmdt/{MM_IMAGES_TASK}/benchmarks/curves.tsv"
    conda:
        ENV_CORE
    params:
        cfg=MM_IMAGES_PARAMS,
        seed=SEED,
    script:
        "../scripts/mmdt_images.py"


rule mmdt_cohorts:
    """Accuracy vs labelled target samples per class: the pooled source
    cohorts of the PIMKL study to its large cohort."""
    input:
        mm_cohort_files,
    output:
        curve=f"{MM_COHORT_DIR}/curves.tsv",
        info=f"{MM_COHORT_DIR}/domains.json",
    log:
        f"{MM_COHORT_DIR}/logs/curves.log",
    benchmark:
        f"{MM_COHORT_DIR}/benchmarks/curves.tsv"
    conda:
        ENV_CORE
    params:
        cfg=MM_COHORT_PARAMS,
        source_cohorts=MM_SOURCE_COHORTS,
        target_cohort=MM_TARGET_COHORT,
        specs=lambda wc: canonical({c: PK_COHORT_SPECS[c] for c in mm_cohorts()}),
        collapse=PK["collapse"],
        seed=SEED,
    script:
        "../scripts/mmdt_cohorts.py"


rule mmdt_figure:
    """LS-MMDT learning curve of task {task}: table (TSV) and figure (PDF, PNG)."""
    input:
        "results/mmdt/{task}/curves.tsv",
    output:
        table=report(
            "results/mmdt/{task}/tables/learning_curve.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_MMDT,
            subcategory="{task}",
        ),
        pdf="results/mmdt/{task}/figures/learning_curve.pdf",
        png=report(
            "results/mmdt/{task}/figures/learning_curve.png",
            caption="../report/mmdt.rst",
            category=PAPER_MMDT,
            subcategory="{task}",
        ),
    log:
        "results/mmdt/{task}/logs/figure.log",
    benchmark:
        "results/mmdt/{task}/benchmarks/figure.tsv"
    wildcard_constraints:
        task="digits|images_[a-z_]+|cohorts_[A-Za-z0-9_.-]+",
    conda:
        ENV_CORE
    params:
        title=lambda wc: (
            "LS-MMDT, digits: 64-pixel source, 4x4 low-contrast target"
            if wc.task == "digits"
            else (
                f"LS-MMDT, {IM_NAME}: clean {MM['images']['source_size']} source, "
                f"{MM['images']['corruption']} {MM['images']['target_size']} target"
                if wc.task == MM_IMAGES_TASK
                else f"LS-MMDT, cohorts: {', '.join(MM_SOURCE_COHORTS)} -> {MM_TARGET_COHORT}"
            )
        ),
    script:
        "../scripts/mmdt_figure.py"


# Named targets.
rule mmdt_fig_digits:
    """Target: accuracy vs labelled target examples per class on the digits task (Figs. 3-6 shape)."""
    input:
        "results/mmdt/digits/tables/learning_curve.tsv",
        figure("mmdt/digits", "learning_curve"),


rule mmdt_fig_images:
    """Target: accuracy vs labelled target examples per class on real images
    (the images study's set; clean source, corrupted coarser target)."""
    input:
        f"results/mmdt/{MM_IMAGES_TASK}/tables/learning_curve.tsv",
        figure(f"mmdt/{MM_IMAGES_TASK}", "learning_curve"),


rule mmdt_fig_cohorts:
    """Target: accuracy vs labelled target samples per class, source cohorts -> the large cohort."""
    input:
        f"{MM_COHORT_DIR}/tables/learning_curve.tsv",
        figure(MM_COHORT_STUDY, "learning_curve"),
