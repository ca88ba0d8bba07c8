# DepMap viability for the pairs the table lacks: the CMAP source model
# imputes their expression, the projection model trained per stratum on every
# measured pair predicts their viability, with a split-conformal interval and
# the nearest measured compound. Settings and paths (DM_PREDICT_*,
# dm_morgan_bits): rules/depmap_helpers.smk.


rule depmap_predict_source:
    """GPU-tagged: the source model refitted at depmap_source's ridge imputes the
    expression of every unmeasured (compound, target cell line) pair; its
    imputation of the measured pairs checked against depmap_source's."""
    input:
        expression=f"{DS_DIR}/preprocessed/expression.gctx",
        pairs=ds_pooled_pairs,
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        features=dm_features,
        targets=f"{DM_DIR}/prepared/targets.tsv",
        counts=f"{DM_DIR}/prepared/counts.json",
        imputed=f"{DM_DIR}/{{featurization}}/source/imputed.gctx",
        summary=f"{DM_DIR}/{{featurization}}/source/summary.json",
    output:
        imputed=f"{DM_DIR}/{{featurization}}/predict/imputed.gctx",
        check=f"{DM_DIR}/{{featurization}}/predict/source_check.json",
    log:
        f"{DM_DIR}/{{featurization}}/logs/predict_source.log",
    benchmark:
        f"{DM_DIR}/{{featurization}}/benchmarks/predict_source.tsv"
    conda:
        ENV_TORCH
    threads: 2
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(24000),
        runtime=240,
    params:
        cfg=DM_SOURCE_PARAMS,
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/depmap_predict_source.py"


rule depmap_predict_viability:
    """GPU-tagged: the viability of every unmeasured pair by depmap.predict.model
    (trained per stratum on every measured pair), its interval, the interval's
    coverage on a held-out fold, and each compound's nearest measured compound."""
    input:
        targets=f"{DM_DIR}/prepared/targets.tsv",
        imputed=f"{DM_DIR}/{{featurization}}/predict/imputed.gctx",
        summary=f"{DM_DIR}/{{featurization}}/source/summary.json",
        ridge=f"{DM_DIR}/{{featurization}}/projection/ridge.tsv",
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        features=dm_features,
        bits=dm_morgan_bits,
    output:
        viability=f"{DM_DIR}/{{featurization}}/predict/viability.tsv",
        calibration=f"{DM_DIR}/{{featurization}}/predict/calibration.tsv",
    log:
        f"{DM_DIR}/{{featurization}}/logs/predict_viability.log",
    benchmark:
        f"{DM_DIR}/{{featurization}}/benchmarks/predict_viability.tsv"
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(8000),
    params:
        cfg=DM_PREDICT_PARAMS,
        device=DEVICE,
    script:
        "../scripts/depmap_predict_viability.py"


rule depmap_predict:
    """Target: predicted viability, interval and nearest measured compound of
    every (compound, target cell line) pair the viability table lacks, and the
    intervals' coverage on a held-out fold."""
    input:
        DM_PREDICT_TARGETS,
