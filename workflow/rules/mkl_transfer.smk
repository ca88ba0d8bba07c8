# Transfer versus multiple kernel learning (Radhakrishnan et al. 2023, Methods
# "Comparison with multiple kernel learning approaches", SI Fig. S7):
# per MKL method (CKA, EasyMKL, FHeuristic, PWMK), the method on the target
# (baseline), the source-learned weights on the target (transfer) and the
# translated source model (Definition 2), on (a) two image classes (the 8x8
# digits, or the images study's set), clean source and corrupted targets, and
# (b) DepMap viability, one cell line to the others.
# Settings, paths, input functions and targets: rules/mkl_transfer_helpers.smk.


rule mkl_transfer_images:
    """One corruption of the images task: every seed and MKL method, the three
    models (and the source model alone), accuracies and learned weights."""
    output:
        accuracy=f"{MT_IMG_DIR}/runs/{{corruption}}_accuracy.tsv",
        weights=f"{MT_IMG_DIR}/runs/{{corruption}}_weights.tsv",
    log:
        f"{MT_IMG_DIR}/logs/images_{{corruption}}.log",
    benchmark:
        f"{MT_IMG_DIR}/benchmarks/images_{{corruption}}.tsv"
    wildcard_constraints:
        corruption="[a-z_]+",
    conda:
        ENV_CORE
    params:
        model=MT_MODEL_PARAMS,
        images=MT_IMG_PARAMS,
    script:
        "../scripts/mkl_transfer_images.py"


rule mkl_transfer_bio:
    """DepMap viability: source cell line -> every target cell line, drug
    fingerprints as features, label = viability below the cell line's median."""
    input:
        targets=f"{DM_DIR}/prepared/targets.tsv",
        features=mt_bio_features,
    output:
        accuracy=f"{MT_BIO_DIR}/runs/accuracy.tsv",
        weights=f"{MT_BIO_DIR}/runs/weights.tsv",
        info=f"{MT_BIO_DIR}/runs/info.json",
    log:
        f"{MT_BIO_DIR}/logs/bio.log",
    benchmark:
        f"{MT_BIO_DIR}/benchmarks/bio.tsv"
    conda:
        ENV_CORE
    params:
        model=MT_MODEL_PARAMS,
        bio=MT_BIO_PARAMS,
    script:
        "../scripts/mkl_transfer_bio.py"


rule mkl_transfer_figure_images:
    """SI Fig. S7 on the digits: accuracy per corruption, table and figure."""
    input:
        accuracy=mt_image_runs("accuracy"),
        weights=mt_image_runs("weights"),
    output:
        table=report(
            f"{MT_IMG_DIR}/tables/figS7.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_TRANSFER,
            subcategory=f"SI Fig. S7: transfer vs MKL (corrupted {MT_IMG_NAME})",
        ),
        weights=f"{MT_IMG_DIR}/tables/figS7_weights.tsv",
        pdf=f"{MT_IMG_DIR}/figures/figS7.pdf",
        png=report(
            f"{MT_IMG_DIR}/figures/figS7.png",
            caption="../report/mkl_transfer.rst",
            category=PAPER_TRANSFER,
            subcategory=f"SI Fig. S7: transfer vs MKL (corrupted {MT_IMG_NAME})",
        ),
    log:
        f"{MT_IMG_DIR}/logs/figure_figS7.log",
    benchmark:
        f"{MT_IMG_DIR}/benchmarks/figure_figS7.tsv"
    conda:
        ENV_CORE
    params:
        fig="figS7",
        title=f"SI Fig. S7 ({MT_IMG_NAME} {MT_IMG['classes'][0]} vs {MT_IMG['classes'][1]}, "
        f"severity {MT_IMG['severity']}): MKL vs translation",
        xlabel="corruption",
        order=MT_CORRUPTIONS,
    script:
        "../scripts/mkl_transfer_figure.py"


rule mkl_transfer_figure_bio:
    """SI Fig. S7 on DepMap viability: accuracy per target cell line."""
    input:
        accuracy=[f"{MT_BIO_DIR}/runs/accuracy.tsv"],
        weights=[f"{MT_BIO_DIR}/runs/weights.tsv"],
    output:
        table=report(
            f"{MT_BIO_DIR}/tables/figS7_bio.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_TRANSFER,
            subcategory=f"SI Fig. S7: transfer vs MKL (DepMap {DM_NAME})",
        ),
        weights=f"{MT_BIO_DIR}/tables/figS7_bio_weights.tsv",
        pdf=f"{MT_BIO_DIR}/figures/figS7_bio.pdf",
        png=report(
            f"{MT_BIO_DIR}/figures/figS7_bio.png",
            caption="../report/mkl_transfer.rst",
            category=PAPER_TRANSFER,
            subcategory=f"SI Fig. S7: transfer vs MKL (DepMap {DM_NAME})",
        ),
    log:
        f"{MT_BIO_DIR}/logs/figure_figS7_bio.log",
    benchmark:
        f"{MT_BIO_DIR}/benchmarks/figure_figS7_bio.tsv"
    conda:
        ENV_CORE
    params:
        fig="figS7_bio",
        title=f"SI Fig. S7, biological task (DepMap {DM_NAME}, {MT_BIO['featurization']} fingerprints): "
        f"MKL vs translation",
        xlabel="target cell line",
        order=None,
    script:
        "../scripts/mkl_transfer_figure.py"


# Named targets.
rule mkl_transfer_figS7:
    """Target: SI Fig. S7 on corrupted images (accuracy per corruption of
    baseline, transfer and translation for each MKL method), with its TSV."""
    input:
        f"{MT_IMG_DIR}/tables/figS7.tsv",
        f"{MT_IMG_DIR}/tables/figS7_weights.tsv",
        figure(MT_IMG_STUDY, "figS7"),


rule mkl_transfer_figS7_bio:
    """Target: SI Fig. S7's comparison on DepMap viability (cell line -> cell
    lines), with its TSV."""
    input:
        f"{MT_BIO_DIR}/tables/figS7_bio.tsv",
        f"{MT_BIO_DIR}/tables/figS7_bio_weights.tsv",
        figure(MT_BIO_STUDY, "figS7_bio"),
