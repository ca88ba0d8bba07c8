# The virtual screen itself (transfer paper, Results: "impute the effect
# of drugs on cell lines for which there was no experimental data"): the
# source model on every source pair and the chosen transfer predictor on
# every measured pair of each target cell line impute every library compound
# not measured there, with intervals from the cross-validated residuals and
# the nearest measured compound; ranked against a query signature by CMap's
# weighted connectivity score. Settings and paths (DS_PREDICT*, ds_library_*,
# ds_query_files): rules/drug_screen_helpers.smk.


rule drug_screen_library:
    """Morgan bits of the compounds of drug_screen.predict.library_path (a TSV
    `id`, `smiles`), invalid SMILES listed with a reason."""
    input:
        DS_LIBRARY or [],
    output:
        bits=f"{DS_PREDICT_DIR}/library/morgan.tsv.gz",
        invalid=f"{DS_PREDICT_DIR}/library/invalid_smiles.tsv",
    log:
        f"{DS_MODEL_DIR}/logs/predict_library.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/predict_library.tsv"
    conda:
        ENV_CHEM
    params:
        fingerprint=canonical({k: DS["fingerprint"][k] for k in ("radius", "n_bits")}),
    script:
        "../scripts/drug_screen_library.py"


rule drug_screen_predict_source:
    """GPU-tagged: the source model (the ridge drug_screen_source chose) refitted
    on every source pair, in one process, predicting every measured and library
    pair of the target cell lines; its predictions of the measured pairs checked
    against drug_screen_source's."""
    input:
        expression=f"{DS_DIR}/preprocessed/expression.gctx",
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        fingerprints=DS_FEATURES,
        folds=f"{DS_DIR}/split/folds.tsv",
        availability=f"{DS_DIR}/split/availability.tsv",
        library=ds_library_features(),
        predictions=f"{DS_MODEL_DIR}/source/predictions.gctx",
        summary=f"{DS_MODEL_DIR}/source/summary.json",
    output:
        predictions=f"{DS_PREDICT_DIR}/source.gctx",
        check=f"{DS_PREDICT_DIR}/source_check.json",
    log:
        f"{DS_MODEL_DIR}/logs/predict_source.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/predict_source.tsv"
    conda:
        ENV_TORCH
    threads: 2
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(24000),
        runtime=240,
    params:
        cfg=DS_MODEL_PARAMS,
        library=DS_LIBRARY,
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/drug_screen_predict_source.py"


rule drug_screen_predict_target:
    """GPU-tagged: the chosen predictor fitted on every measured pair of target
    cell line number {rank} (per stratum, as the protocol) imputes its library
    pairs (GCTX), with per-gene split-conformal intervals from its
    cross-validated residuals, their coverage on a held-out fold, and each
    compound's nearest measured compound (Tanimoto)."""
    input:
        unpack(ds_library_bits),
        expression=f"{DS_DIR}/preprocessed/expression.gctx",
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        genes=f"{DS_DIR}/preprocessed/genes.tsv",
        fingerprints=DS_FEATURES,
        folds=f"{DS_DIR}/split/folds.tsv",
        availability=f"{DS_DIR}/split/availability.tsv",
        library=ds_library_features(),
        source=f"{DS_PREDICT_DIR}/source.gctx",
        ridge=f"{DS_MODEL_DIR}/source/target_ridge.tsv",
    output:
        profiles=f"{DS_PREDICT_DIR}/target{{rank}}/profiles.gctx",
        compounds=f"{DS_PREDICT_DIR}/target{{rank}}/compounds.tsv",
        calibration=f"{DS_PREDICT_DIR}/target{{rank}}/calibration.tsv",
    log:
        f"{DS_MODEL_DIR}/logs/predict_target{{rank}}.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/predict_target{{rank}}.tsv"
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(8000),
    params:
        cfg=DS_PREDICT_PARAMS,
        library=DS_LIBRARY,
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/drug_screen_predict_target.py"


rule drug_screen_predict_rank:
    """The imputed signatures (prediction - the cell line's control, log2)
    ranked by CMap's weighted connectivity score to drug_screen.predict.query
    (and the cosine to its profile), with each compound's confidence."""
    input:
        unpack(ds_query_files),
        profiles=expand(f"{DS_PREDICT_DIR}/target{{k}}/profiles.gctx", k=DS_RANKS),
        compounds=expand(f"{DS_PREDICT_DIR}/target{{k}}/compounds.tsv", k=DS_RANKS),
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        genes=f"{DS_DIR}/preprocessed/genes.tsv",
    output:
        ranked=f"{DS_PREDICT_DIR}/ranked.tsv",
        query=f"{DS_PREDICT_DIR}/query.json",
    log:
        f"{DS_MODEL_DIR}/logs/predict_rank.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/predict_rank.tsv"
    conda:
        ENV_CORE
    params:
        query=canonical(DS_QUERY),
    script:
        "../scripts/drug_screen_predict_rank.py"


rule drug_screen_predict_summary:
    """One row per (target cell line, stratum): pairs imputed, the
    cross-validated R2 of the predictor, and the intervals' coverage on the
    held-out fold against their nominal level."""
    input:
        calibration=expand(f"{DS_PREDICT_DIR}/target{{k}}/calibration.tsv", k=DS_RANKS),
        compounds=expand(f"{DS_PREDICT_DIR}/target{{k}}/compounds.tsv", k=DS_RANKS),
        check=f"{DS_PREDICT_DIR}/source_check.json",
    output:
        f"{DS_PREDICT_DIR}/summary.tsv",
    log:
        f"{DS_MODEL_DIR}/logs/predict_summary.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/predict_summary.tsv"
    conda:
        ENV_CORE
    script:
        "../scripts/drug_screen_predict_summary.py"


rule drug_screen_predict:
    """Target: imputed profiles of the library on every target cell line
    (GCTX), their confidence and coverage, and the query's ranking when
    drug_screen.predict.query is set."""
    input:
        DS_PREDICT_TARGETS,
