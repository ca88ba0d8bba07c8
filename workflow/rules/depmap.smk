# DepMap drug viability by projection from the CMAP source model
# (Radhakrishnan et al. 2023, Methods "DepMap analysis", SI Fig. S9): the
# drug screen's preprocessed CMAP data -> a source model on the cell lines not
# in DepMap (GPU-tagged) -> imputed expression of the DepMap target pairs ->
# projection vs baseline by CV (GPU-tagged) -> S9a, S9b, featurizations.
# Settings, paths, input functions and targets (DM_*, dm_*, also read by
# mkl_transfer): rules/depmap_helpers.smk.


# Downloads run where Snakemake runs (cluster nodes often have no network).
localrules:
    depmap_download,


rule depmap_generate:
    """Embedded default: PRISM-style viability from the drug screen's hidden model."""
    input:
        unpack(dm_generate_inputs),
    output:
        table=f"{DM_RESOURCE}/viability.csv",
        params=f"{DM_RESOURCE}/depmap_params.json",
    log:
        f"{DM_DIR}/logs/generate.log",
    benchmark:
        f"{DM_DIR}/benchmarks/generate.tsv"
    conda:
        ENV_CHEM
    params:
        source=canonical(DM_SRC),
        seed=SEED,
    script:
        "../scripts/depmap_generate.py"


rule depmap_download:
    """A DepMap/PRISM release file for users with network: checksummed (sha256),
    the file of a download source's `file` or one of its `files`."""
    output:
        f"resources/depmap/download/{DM_NAME}/{{name}}",
    log:
        f"{DM_DIR}/logs/download_{{name}}.log",
    benchmark:
        f"{DM_DIR}/benchmarks/download_{{name}}.tsv"
    wildcard_constraints:
        name=DM_DOWNLOAD_NAMES,
    conda:
        ENV_CORE
    params:
        spec=lambda wc: canonical(DM_DOWNLOADS[wc.name]),
        field=dm_download_field,
    script:
        "../scripts/download.py"


rule depmap_prepare:
    """Viability files -> the long table (reader of the source's format, every
    drop counted in read_counts.tsv) -> drugs matched to CMAP by InChIKey,
    unusable rows counted per reason and cell line and per reason and compound
    (listed row by row with depmap.list_dropped_rows), source cell lines
    (CMAP = the drug_screen.n_cells lines with the most pairs, minus the
    targets), seen / unseen strata and folds. Only the target cell lines of
    depmap.cell_lines are kept (the others counted in read_counts.tsv)."""
    input:
        unpack(dm_prepare_inputs),
        pert_info=ds_raw("pert_info"),
        pairs=ds_pooled_pairs,
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
    output:
        **DM_DROPPED_ROWS,
        targets=f"{DM_DIR}/prepared/targets.tsv",
        drugs=f"{DM_DIR}/prepared/drugs.tsv",
        dropped_summary=f"{DM_DIR}/prepared/dropped_summary.tsv",
        read_counts=f"{DM_DIR}/prepared/read_counts.tsv",
        counts=f"{DM_DIR}/prepared/counts.json",
    log:
        f"{DM_DIR}/logs/prepare.log",
    benchmark:
        f"{DM_DIR}/benchmarks/prepare.tsv"
    conda:
        ENV_CHEM
    params:
        source=canonical(
            {
                "name": DM_NAME,
                "format": DM_FORMAT,
                "reader": DM_READER,
                "files": list(DM_FILES),
                "sha256": {
                    k: f["sha256"]
                    for k, f in DM_SRC.get("files", {}).items()
                    if DM_SRC["type"] == "local" and f.get("sha256")
                },
                "description": DM_SRC.get("description", ""),
            }
        ),
        cell_lines=DM["cell_lines"],
        duplicates=DM["duplicates"],
        folds=DM["folds"],
        n_cmap=DS["n_cells"],
        seed=SEED,
    script:
        "../scripts/depmap_prepare.py"


rule depmap_features:
    """{featurization} embedding of the DepMap drugs that CMAP lacks."""
    input:
        drugs=f"{DM_DIR}/prepared/drugs.tsv",
        cmap=dm_cmap_features,
        model=lambda wc: (
            DS["fingerprint"]["mol2vec_model_path"]
            if wc.featurization == "mol2vec"
            else []
        ),
    output:
        f"{DM_DIR}/prepared/new_drugs_{{featurization}}.tsv.gz",
    log:
        f"{DM_DIR}/logs/features_{{featurization}}.log",
    benchmark:
        f"{DM_DIR}/benchmarks/features_{{featurization}}.tsv"
    conda:
        ENV_CHEM
    params:
        fingerprint=canonical({k: DS["fingerprint"][k] for k in ("radius", "n_bits")}),
    script:
        "../scripts/depmap_features.py"


rule depmap_source:
    """GPU-tagged: NTK source model on the CMAP cell lines not in DepMap;
    imputed expression of every DepMap target pair."""
    input:
        expression=f"{DS_DIR}/preprocessed/expression.gctx",
        pairs=ds_pooled_pairs,
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        features=dm_features,
        targets=f"{DM_DIR}/prepared/targets.tsv",
        counts=f"{DM_DIR}/prepared/counts.json",
    output:
        imputed=f"{DM_DIR}/{{featurization}}/source/imputed.gctx",
        ridge=f"{DM_DIR}/{{featurization}}/source/ridge_grid.tsv",
        summary=f"{DM_DIR}/{{featurization}}/source/summary.json",
    log:
        f"{DM_DIR}/{{featurization}}/logs/source.log",
    benchmark:
        f"{DM_DIR}/{{featurization}}/benchmarks/source.tsv"
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
        "../scripts/depmap_source.py"


rule depmap_projection:
    """GPU-tagged: the ridge of each model (curve=ridge); projection vs baseline
    by 5-fold CV x seeds against the number of target samples (curve=scaling)
    or of source genes (curve=genes)."""
    input:
        unpack(dm_projection_ridge),
        targets=f"{DM_DIR}/prepared/targets.tsv",
        imputed=f"{DM_DIR}/{{featurization}}/source/imputed.gctx",
        summary=f"{DM_DIR}/{{featurization}}/source/summary.json",
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        features=dm_features,
    output:
        f"{DM_DIR}/{{featurization}}/projection/{{curve}}.tsv",
    log:
        f"{DM_DIR}/{{featurization}}/logs/projection_{{curve}}.log",
    benchmark:
        f"{DM_DIR}/{{featurization}}/benchmarks/projection_{{curve}}.tsv"
    wildcard_constraints:
        curve="ridge|scaling|genes",
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(8000),
    params:
        cfg=DM_PROJECTION_PARAMS,
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/depmap_projection.py"


rule depmap_figure:
    """SI Fig. {fig} of the DepMap study: its table (TSV) and figure (PDF, PNG)."""
    input:
        lambda wc: f"{DM_DIR}/{wc.featurization}/projection/"
        + ("scaling" if wc.fig == "figS9a" else "genes")
        + ".tsv",
    output:
        table=report(
            f"{DM_DIR}/{{featurization}}/tables/{{fig}}.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_TRANSFER,
            subcategory=f"SI Fig. S9: DepMap viability ({DS_NAME} / {DM_NAME})",
        ),
        pdf=f"{DM_DIR}/{{featurization}}/figures/{{fig}}.pdf",
        png=report(
            f"{DM_DIR}/{{featurization}}/figures/{{fig}}.png",
            caption="../report/depmap.rst",
            category=PAPER_TRANSFER,
            subcategory=f"SI Fig. S9: DepMap viability ({DS_NAME} / {DM_NAME})",
        ),
    log:
        f"{DM_DIR}/{{featurization}}/logs/figure_{{fig}}.log",
    benchmark:
        f"{DM_DIR}/{{featurization}}/benchmarks/figure_{{fig}}.tsv"
    wildcard_constraints:
        fig="figS9[ab]",
    conda:
        ENV_CORE
    params:
        first=DM["scaling"]["first"],
        label=lambda wc: f"{DM_NAME} on {DS_NAME}, {wc.featurization}",
    script:
        "../scripts/depmap_figure.py"


rule depmap_featurizations_table:
    """The drug featurizations compared (R² at the smallest and largest target size)."""
    input:
        expand(
            f"{DM_DIR}/{{featurization}}/projection/scaling.tsv",
            featurization=DM["featurizations"],
        ),
    output:
        f"{DM_DIR}/tables/featurizations.tsv",
    log:
        f"{DM_DIR}/logs/featurizations.log",
    benchmark:
        f"{DM_DIR}/benchmarks/featurizations.tsv"
    conda:
        ENV_CORE
    params:
        featurizations=DM["featurizations"],
        first=DM["scaling"]["first"],
    script:
        "../scripts/depmap_featurizations.py"


# Named targets: SI Fig. S9 panels (every configured featurization) and the comparison.
rule depmap_figS9a:
    """Target: viability R² vs target samples, projection vs baseline, with the log2 law."""
    input:
        [
            f
            for feat in DM["featurizations"]
            for f in [
                f"{DM_DIR}/{feat}/tables/figS9a.tsv",
                *figure(f"{DM_STUDY}/{feat}", "figS9a"),
            ]
        ],


rule depmap_figS9b:
    """Target: viability R² vs number of genes predicted by the source, seen vs unseen drugs."""
    input:
        [
            f
            for feat in DM["featurizations"]
            for f in [
                f"{DM_DIR}/{feat}/tables/figS9b.tsv",
                *figure(f"{DM_STUDY}/{feat}", "figS9b"),
            ]
        ],


rule depmap_featurizations:
    """Target: Morgan vs Mol2Vec (those configured) on the DepMap task."""
    input:
        f"{DM_DIR}/tables/featurizations.tsv",
