# Virtual drug screening by kernel transfer (Radhakrishnan et al. 2023,
# Fig. 4): L1000 files in GEO layout (generated, downloaded, local, or rebuilt
# from the CMap LINCS 2020 release) -> preprocessing and Morgan fingerprints
# -> source/target split -> NTK source model (GPU-tagged) -> projection and
# translation to each target cell line (GPU-tagged) -> metrics, scaling
# laws, figures 4a-4f. Settings, paths, input functions and targets (DS_*,
# ds_*, also read by DepMap and mkl_transfer): rules/drug_screen_helpers.smk.


# Downloads run where Snakemake runs (cluster nodes often have no network);
# local files are checked (sha256, when given) and linked by an ordinary job,
# so a long checksum runs on a compute node.
localrules:
    drug_screen_download,


rule drug_screen_generate:
    """Embedded default data (or real LINCS structure with simulated
    response): GEO-layout L1000 files written by biokernels.synth.drug_screen."""
    input:
        lambda wc: [v for k, v in DS_SRC.items() if k.endswith("_path")],
    output:
        gctx=f"resources/drug_screen/{DS_NAME}/raw/level3.gctx",
        sample_info=f"resources/drug_screen/{DS_NAME}/raw/inst_info.txt",
        pert_info=f"resources/drug_screen/{DS_NAME}/raw/pert_info.txt",
        gene_info=f"resources/drug_screen/{DS_NAME}/raw/gene_info.txt",
        params=f"resources/drug_screen/{DS_NAME}/raw/truth/params.json",
    log:
        f"{DS_DIR}/logs/generate.log",
    benchmark:
        f"{DS_DIR}/benchmarks/generate.tsv"
    conda:
        ENV_CHEM
    params:
        source=canonical(DS_SRC),
        seed=SEED,
        outdir=lambda wc, output: os.path.dirname(output.gctx),
    script:
        "../scripts/drug_screen_generate.py"


rule drug_screen_download:
    """GEO or CMap LINCS 2020 files for users with network: checksummed
    (sha256) download, progress in the log."""
    output:
        f"resources/drug_screen/{DS_NAME}/download/{{key}}",
    log:
        f"{DS_DIR}/logs/download_{{key}}.log",
    benchmark:
        f"{DS_DIR}/benchmarks/download_{{key}}.tsv"
    conda:
        ENV_CORE
    resources:
        runtime=240,
    params:
        spec=lambda wc: canonical(DS_FILE_SPECS[wc.key]),
        progress_s=DS_PROGRESS_S,
    script:
        "../scripts/download.py"


rule drug_screen_local:
    """A file of a local source: its sha256 checked when given (progress in
    the log), then linked (not copied) where the download would be, with its
    origin (config key, path) beside the link: errors about the link name
    the user's file and key."""
    input:
        lambda wc: DS_FILE_SPECS[wc.key]["path"],
    output:
        link=f"resources/drug_screen/{DS_NAME}/local/{{key}}",
        origin=f"resources/drug_screen/{DS_NAME}/local/{{key}}.origin.json",
    log:
        f"{DS_DIR}/logs/local_{{key}}.log",
    benchmark:
        f"{DS_DIR}/benchmarks/local_{{key}}.tsv"
    conda:
        ENV_CORE
    params:
        sha256=lambda wc: DS_FILE_SPECS[wc.key].get("sha256"),
        config_key=lambda wc: f"{DS_FILE_KEYS[wc.key]}.path",
        progress_s=DS_PROGRESS_S,
    script:
        "../scripts/drug_screen_local.py"


rule drug_screen_matrix_tables:
    """A table of a geo layout that the config does not give (sample_info,
    pert_info or gene_info), built from the matrix's own metadata (GCTX
    0/META/COL and ROW, GCT 1.3 metadata blocks) with CMap's field names."""
    input:
        gctx=ds_geo_matrix,
    output:
        f"resources/drug_screen/{DS_NAME}/matrix/{{table}}.txt",
    log:
        f"{DS_DIR}/logs/matrix_{{table}}.log",
    benchmark:
        f"{DS_DIR}/benchmarks/matrix_{{table}}.tsv"
    wildcard_constraints:
        table="sample_info|pert_info|gene_info",
    conda:
        ENV_CORE
    params:
        config_key=lambda wc: f"drug_screen.sources.{DS_NAME}.files.{wc.table}",
    script:
        "../scripts/drug_screen_matrix_tables.py"


rule drug_screen_lincs2020_tables:
    """CMap LINCS 2020 metadata -> the GEO-layout tables of the screen:
    signatures filtered (pert_type, qc_pass, is_hiq, dose, time, cell line;
    every exclusion counted), structures from the compound tables in
    priority order (one InChIKey per pert_id), genes with their
    feature_space."""
    input:
        unpack(ds_lincs2020_inputs),
    output:
        sample_info=f"resources/drug_screen/{DS_NAME}/lincs2020/inst_info.txt",
        pert_info=f"resources/drug_screen/{DS_NAME}/lincs2020/pert_info.txt",
        gene_info=f"resources/drug_screen/{DS_NAME}/lincs2020/gene_info.txt",
        compounds=f"resources/drug_screen/{DS_NAME}/lincs2020/compounds.tsv",
        counts=f"resources/drug_screen/{DS_NAME}/lincs2020/counts.tsv",
        summary=f"resources/drug_screen/{DS_NAME}/lincs2020/summary.json",
    log:
        f"{DS_DIR}/logs/lincs2020_tables.log",
    benchmark:
        f"{DS_DIR}/benchmarks/lincs2020_tables.tsv"
    conda:
        ENV_CORE
    resources:
        mem_mb=mem_per_attempt(8000),
    params:
        cfg=canonical(
            {
                k: DS_SRC[k]
                for k in DS_LINCS2020_KEYS
                if k in DS_SRC and k != "gene_space"
            }
        ),
    script:
        "../scripts/drug_screen_lincs2020_tables.py"


rule drug_screen_fingerprints:
    """RDKit Morgan fingerprints of every compound with a SMILES; invalid ones listed."""
    input:
        pert_info=ds_raw("pert_info"),
    output:
        bits=f"{DS_DIR}/fingerprints/morgan.tsv.gz",
        invalid=f"{DS_DIR}/fingerprints/invalid_smiles.tsv",
    log:
        f"{DS_DIR}/logs/fingerprints.log",
    benchmark:
        f"{DS_DIR}/benchmarks/fingerprints.tsv"
    conda:
        ENV_CHEM
    params:
        fingerprint=canonical({k: DS["fingerprint"][k] for k in ("radius", "n_bits")}),
    script:
        "../scripts/drug_screen_fingerprints.py"


rule drug_screen_mol2vec:
    """Mol2Vec embeddings (sum of word vectors of Morgan identifiers, radius 1)
    of every compound with a SMILES, when a model file is configured."""
    input:
        pert_info=ds_raw("pert_info"),
        model=lambda wc: DS["fingerprint"]["mol2vec_model_path"] or [],
    output:
        vectors=f"{DS_DIR}/fingerprints/mol2vec.tsv.gz",
        invalid=f"{DS_DIR}/fingerprints/mol2vec_invalid_smiles.tsv",
    log:
        f"{DS_DIR}/logs/mol2vec.log",
    benchmark:
        f"{DS_DIR}/benchmarks/mol2vec.tsv"
    conda:
        ENV_CHEM
    script:
        "../scripts/drug_screen_mol2vec.py"


rule drug_screen_preprocess:
    """Matrices read by blocks (GCTX or GCT text; progress in the log);
    log2(x+1), landmark genes, dose >= 0, parseable SMILES, drop genes equal
    to 1 (after our log2(x+1) only), replicate means per (drug, cell line)
    (doses and times pooled and counted) or per (drug, cell line, dose, time)
    (drug_screen.replicate_key), control mean per cell line."""
    input:
        unpack(ds_upstream),
        gctx=ds_matrices(),
        sample_info=ds_raw("sample_info"),
        gene_info=ds_raw("gene_info"),
        fingerprints=f"{DS_DIR}/fingerprints/morgan.tsv.gz",
        controls=lambda wc: (
            [DS_SRC["controls_path"]] if DS_SRC.get("controls_path") else []
        ),
    output:
        expression=f"{DS_DIR}/preprocessed/expression.gctx",
        pairs=f"{DS_DIR}/preprocessed/pairs.tsv",
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        genes=f"{DS_DIR}/preprocessed/genes.tsv",
        counts=f"{DS_DIR}/preprocessed/counts.tsv",
    log:
        f"{DS_DIR}/logs/preprocess.log",
    benchmark:
        f"{DS_DIR}/benchmarks/preprocess.tsv"
    conda:
        ENV_CORE
    resources:
        mem_mb=mem_per_attempt(16000),
        runtime=240,
    params:
        log2_transform=DS["log2_transform"],
        missing_controls=DS["missing_controls"],
        replicate_key=list(DS["replicate_key"]),
        gene_space=DS_SRC.get("gene_space", "landmark"),
        progress_s=DS_PROGRESS_S,
    script:
        "../scripts/drug_screen_preprocess.py"


rule drug_screen_split:
    """Source = cell lines with the least drugs, targets = the most; seen /
    unseen strata and 5 folds per target cell line."""
    input:
        pairs=ds_pooled_pairs,
    output:
        folds=f"{DS_DIR}/split/folds.tsv",
        availability=f"{DS_DIR}/split/availability.tsv",
    log:
        f"{DS_DIR}/logs/split.log",
    benchmark:
        f"{DS_DIR}/benchmarks/split.tsv"
    conda:
        ENV_CORE
    params:
        cfg=DS_SPLIT_PARAMS,
        seed=SEED,
    script:
        "../scripts/drug_screen_split.py"


rule drug_screen_source:
    """GPU-tagged: ridge chosen on a random source subset, NTK kernel ridge on
    all source pairs, predictions for every target pair."""
    input:
        expression=f"{DS_DIR}/preprocessed/expression.gctx",
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        fingerprints=DS_FEATURES,
        folds=f"{DS_DIR}/split/folds.tsv",
    output:
        predictions=f"{DS_MODEL_DIR}/source/predictions.gctx",
        ridge=f"{DS_MODEL_DIR}/source/ridge_grid.tsv",
        summary=f"{DS_MODEL_DIR}/source/summary.json",
    log:
        f"{DS_MODEL_DIR}/logs/source.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/source.tsv"
    conda:
        ENV_TORCH
    threads: 2
    resources:
        gpu=DS_SOLVER["processes"],
        nodes=DS_SOLVER["nodes"],
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(24000),
        runtime=240,
    params:
        cfg=DS_MODEL_PARAMS,
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/drug_screen_source.py"


rule drug_screen_target_ridge:
    """GPU-tagged: ridge of each target model on a random subset of one target
    cell line (the paper: 1000 samples of A549)."""
    input:
        expression=f"{DS_DIR}/preprocessed/expression.gctx",
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        fingerprints=DS_FEATURES,
        folds=f"{DS_DIR}/split/folds.tsv",
        availability=f"{DS_DIR}/split/availability.tsv",
        predictions=f"{DS_MODEL_DIR}/source/predictions.gctx",
        summary=f"{DS_MODEL_DIR}/source/summary.json",
    output:
        f"{DS_MODEL_DIR}/source/target_ridge.tsv",
    log:
        f"{DS_MODEL_DIR}/logs/target_ridge.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/target_ridge.tsv"
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
    params:
        cfg=DS_TARGET_PARAMS,
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/drug_screen_target_ridge.py"


rule drug_screen_transfer:
    """GPU-tagged: 5-fold CV of mean, baseline, projection, translation and
    projection+translation on target cell line number {rank}."""
    input:
        expression=f"{DS_DIR}/preprocessed/expression.gctx",
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        fingerprints=DS_FEATURES,
        folds=f"{DS_DIR}/split/folds.tsv",
        availability=f"{DS_DIR}/split/availability.tsv",
        predictions=f"{DS_MODEL_DIR}/source/predictions.gctx",
        summary=f"{DS_MODEL_DIR}/source/summary.json",
        ridge=f"{DS_MODEL_DIR}/source/target_ridge.tsv",
    output:
        metrics=f"{DS_MODEL_DIR}/transfer/target{{rank}}_metrics.tsv",
        samples=f"{DS_MODEL_DIR}/transfer/target{{rank}}_samples.tsv.gz",
    log:
        f"{DS_MODEL_DIR}/logs/transfer_target{{rank}}.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/transfer_target{{rank}}.tsv"
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(8000),
    params:
        cfg=DS_TARGET_PARAMS,
        device=DEVICE,
    script:
        "../scripts/drug_screen_transfer.py"


rule drug_screen_scaling:
    """GPU-tagged: metrics against the number of target training samples."""
    input:
        expression=f"{DS_DIR}/preprocessed/expression.gctx",
        controls=f"{DS_DIR}/preprocessed/controls.tsv",
        fingerprints=DS_FEATURES,
        folds=f"{DS_DIR}/split/folds.tsv",
        availability=f"{DS_DIR}/split/availability.tsv",
        predictions=f"{DS_MODEL_DIR}/source/predictions.gctx",
        summary=f"{DS_MODEL_DIR}/source/summary.json",
        ridge=f"{DS_MODEL_DIR}/source/target_ridge.tsv",
    output:
        f"{DS_MODEL_DIR}/scaling/target{{rank}}.tsv",
    log:
        f"{DS_MODEL_DIR}/logs/scaling_target{{rank}}.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/scaling_target{{rank}}.tsv"
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(8000),
        runtime=240,
    params:
        cfg=canonical({**DS_TARGET_PARAMS, "scaling": DS["scaling"]}),
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/drug_screen_scaling.py"


rule drug_screen_figure:
    """Fig. 4 panel {fig}: its table (TSV) and figure (PDF, PNG)."""
    input:
        ds_figure_inputs,
    output:
        table=report(
            f"{DS_MODEL_DIR}/tables/{{fig}}.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_TRANSFER,
            subcategory=f"Fig. 4: virtual drug screen ({DS_NAME})",
        ),
        pdf=f"{DS_MODEL_DIR}/figures/{{fig}}.pdf",
        png=report(
            f"{DS_MODEL_DIR}/figures/{{fig}}.png",
            caption="../report/drug_screen.rst",
            category=PAPER_TRANSFER,
            subcategory=f"Fig. 4: virtual drug screen ({DS_NAME})",
        ),
    log:
        f"{DS_MODEL_DIR}/logs/figure_{{fig}}.log",
    benchmark:
        f"{DS_MODEL_DIR}/benchmarks/figure_{{fig}}.tsv"
    wildcard_constraints:
        fig="fig4[a-f]",
    conda:
        ENV_CORE
    params:
        scaling=canonical(DS["scaling"]),
        pca_cells=DS["pca_cells"],
        dataset=DS_NAME,
    script:
        "../scripts/drug_screen_figure.py"


# Named targets: the panels of the paper's Fig. 4.
rule drug_screen_fig4a:
    """Target: metrics of the five predictors on seen drugs (bars, SD over cell lines)."""
    input:
        f"{DS_MODEL_DIR}/tables/fig4a.tsv",
        figure(DS_FIG_STUDY, "fig4a"),


rule drug_screen_fig4b:
    """Target: metrics of the five predictors on unseen drugs."""
    input:
        f"{DS_MODEL_DIR}/tables/fig4b.tsv",
        figure(DS_FIG_STUDY, "fig4b"),


rule drug_screen_fig4c:
    """Target: scaling law on seen drugs (metric vs target samples, a log2(n) + b fits)."""
    input:
        f"{DS_MODEL_DIR}/tables/fig4c.tsv",
        figure(DS_FIG_STUDY, "fig4c"),


rule drug_screen_fig4d:
    """Target: scaling law on unseen drugs."""
    input:
        f"{DS_MODEL_DIR}/tables/fig4d.tsv",
        figure(DS_FIG_STUDY, "fig4d"),


rule drug_screen_fig4e:
    """Target: per-sample R² over the first two principal components, first cell line."""
    input:
        f"{DS_MODEL_DIR}/tables/fig4e.tsv",
        figure(DS_FIG_STUDY, "fig4e"),


rule drug_screen_fig4f:
    """Target: per-sample R² over the first two principal components, second cell line."""
    input:
        f"{DS_MODEL_DIR}/tables/fig4f.tsv",
        figure(DS_FIG_STUDY, "fig4f"),
