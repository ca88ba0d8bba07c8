# The transfer paper's image experiments (Radhakrishnan et al. 2023, Fig. 2a-c,
# Fig. 3a-b, SI Figs. S2-S6) on 8x8 digits (default) or Fashion-MNIST: one job
# per kernel and experiment (GPU-tagged: the kernels run with torch on
# `device`), then one table and figure per panel. Settings, paths and targets
# (IM_*, im_*): rules/images_helpers.smk.


rule images_projection:
    """Fig. 2a-b for one kernel: the source model, then per target the
    baseline and the projected predictor, at the full size and along n_t."""
    output:
        fig2a=f"{IM_DIR}/runs/fig2a_{{kernel}}.tsv",
        fig2b=f"{IM_DIR}/runs/fig2b_{{kernel}}.tsv",
        source=f"{IM_DIR}/runs/projection_source_{{kernel}}.json",
    log:
        f"{IM_DIR}/logs/projection_{{kernel}}.log",
    benchmark:
        f"{IM_DIR}/benchmarks/projection_{{kernel}}.tsv"
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
    params:
        experiment="projection",
        cfg=IM_PROJECTION_PARAMS,
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/images_run.py"


rule images_classes:
    """Fig. 2c for one kernel: a fixed number of source images over k classes."""
    output:
        fig2c=f"{IM_DIR}/runs/fig2c_{{kernel}}.tsv",
    log:
        f"{IM_DIR}/logs/classes_{{kernel}}.log",
    benchmark:
        f"{IM_DIR}/benchmarks/classes_{{kernel}}.tsv"
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
    params:
        experiment="classes",
        cfg=IM_CLASSES_PARAMS,
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/images_run.py"


rule images_translation:
    """Fig. 3a-b for one kernel: the source on clean images, then per
    corruption the baseline, source, projected and translated predictors."""
    output:
        fig3a=f"{IM_DIR}/runs/fig3a_{{kernel}}.tsv",
        fig3b=f"{IM_DIR}/runs/fig3b_{{kernel}}.tsv",
        source=f"{IM_DIR}/runs/translation_source_{{kernel}}.json",
    log:
        f"{IM_DIR}/logs/translation_{{kernel}}.log",
    benchmark:
        f"{IM_DIR}/benchmarks/translation_{{kernel}}.tsv"
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
    params:
        experiment="translation",
        cfg=IM_TRANSLATION_PARAMS,
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/images_run.py"


rule images_figure:
    """One panel's table (kernels together) and figure."""
    input:
        lambda wc: im_runs(wc.fig),
    output:
        table=report(
            f"{IM_DIR}/tables/{{fig}}.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_TRANSFER,
            subcategory=f"Images ({IM_NAME}): Fig. 2-3",
        ),
        pdf=f"{IM_DIR}/figures/{{fig}}.pdf",
        png=report(
            f"{IM_DIR}/figures/{{fig}}.png",
            caption="../report/images.rst",
            category=PAPER_TRANSFER,
            subcategory=f"Images ({IM_NAME}): Fig. 2-3",
        ),
    log:
        f"{IM_DIR}/logs/figure_{{fig}}.log",
    benchmark:
        f"{IM_DIR}/benchmarks/figure_{{fig}}.tsv"
    wildcard_constraints:
        fig="|".join(IM_FIGS),
    conda:
        ENV_CORE
    params:
        dataset=IM_NAME,
        data_reason=IM["dataset"].get("data_reason", ""),
    script:
        "../scripts/images_figure.py"


# Named targets: one per panel.
for _fig in IM_FIGS:

    rule:
        f"""Target: {IM_FIG_DOCS[_fig]}, table and figure."""
        name:
            f"images_{_fig}"
        input:
            f"{IM_DIR}/tables/{_fig}.tsv",
            figure(IM_STUDY, _fig),
