# Diffusion-kernel MKL on protein networks (Sun, Ji & Ye, BMC Bioinformatics
# 2008): network + functions -> Laplacian eigendecomposition -> per split:
# single kernels, eBaseline, DKL/mDKL (six formulations), SM1, neighbourhood
# baselines -> Tables 2-7, Figures 1-8, and a sensitivity figure. Settings,
# paths, input functions and targets: rules/diffusion_helpers.smk.


# Downloads run where Snakemake runs (cluster nodes often have no network).
localrules:
    diffusion_download,


rule diffusion_download:
    """A file of a real source (GO annotations, the ontology, BioGRID) for
    users with network: checksummed (sha256) download, kept under its
    checksum and file name (one copy for every source that lists it)."""
    output:
        "resources/diffusion/download/{sha256}/{name}",
    log:
        "results/diffusion/logs/download/{sha256}/{name}.log",
    benchmark:
        "results/diffusion/benchmarks/download/{sha256}/{name}.tsv"
    wildcard_constraints:
        sha256="[0-9a-f]{64}",
        name="[^/]+",
    conda:
        ENV_CORE
    params:
        spec=diffusion_download_spec,
        progress_s=30,  # seconds between two progress lines in the log
    script:
        "../scripts/download.py"


rule diffusion_inputs:
    input:
        diffusion_input_files,
    output:
        edges="resources/diffusion/{ds}/edges.tsv",
        labels="resources/diffusion/{ds}/labels.tsv",
        given_split="resources/diffusion/{ds}/splits/00.tsv",
        summary="resources/diffusion/{ds}/inputs.json",
    log:
        "results/diffusion/{ds}/logs/inputs.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/inputs.tsv"
    conda:
        ENV_CORE
    params:
        source=lambda wc: diffusion_inputs_source(wc.ds),
        test_fraction=DIFFUSION["test_fraction"],
        seed=SEED,
        seed_name=diffusion_seed_name,
    script:
        "../scripts/diffusion_inputs.py"


rule diffusion_random_split:
    input:
        labels="resources/diffusion/{ds}/labels.tsv",
    output:
        "resources/diffusion/{ds}/splits/{split}.tsv",
    log:
        "results/diffusion/{ds}/logs/random_split_{split}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/random_split_{split}.tsv"
    wildcard_constraints:
        split="(?!00)[0-9]{2}",
    conda:
        ENV_CORE
    params:
        test_fraction=DIFFUSION["test_fraction"],
        seed=SEED,
        seed_name=diffusion_seed_name,
    script:
        "../scripts/diffusion_random_split.py"


rule diffusion_eigen:
    input:
        edges="resources/diffusion/{ds}/edges.tsv",
        labels="resources/diffusion/{ds}/labels.tsv",
    output:
        "resources/diffusion/{ds}/eigen_{laplacian}.npz",
    log:
        "results/diffusion/{ds}/logs/eigen_{laplacian}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/eigen_{laplacian}.tsv"
    wildcard_constraints:
        laplacian="unnormalized|normalized",
    conda:
        ENV_CORE
    threads: 2
    script:
        "../scripts/diffusion_eigen.py"


rule diffusion_split:
    """GPU-tagged: kernel blocks are built with torch on `device`. A
    train-only kernel-scale choice takes the tables of a configured
    fixed-scale data set with the chosen scale and the same inputs
    (`siblings`) instead of recomputing them. One thread: two single-thread
    splits side by side get through more splits than one on two threads."""
    input:
        eigen=diffusion_eigen_files,
        edges="resources/diffusion/{ds}/edges.tsv",
        labels="resources/diffusion/{ds}/labels.tsv",
        splits="resources/diffusion/{ds}/splits/{split}.tsv",
        siblings=diffusion_sibling_files,
    output:
        roc="results/diffusion/{ds}/splits/{split}/roc.tsv",
        scale="results/diffusion/{ds}/splits/{split}/kernel_scale.tsv",
        kernel_roc="results/diffusion/{ds}/splits/{split}/kernel_roc.tsv",
        weights="results/diffusion/{ds}/splits/{split}/weights.tsv",
        times="results/diffusion/{ds}/splits/{split}/times.tsv",
        cv="results/diffusion/{ds}/splits/{split}/inner_cv.tsv",
    log:
        "results/diffusion/{ds}/logs/split_{split}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/split_{split}.tsv"
    conda:
        ENV_TORCH
    threads: 1
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(8000),
    params:
        cfg=diffusion_params(DIFFUSION_SPLIT_KEYS),
        seed=SEED,
        device=DEVICE,
        siblings=diffusion_siblings,
    script:
        "../scripts/diffusion_split.py"


rule diffusion_sm1:
    """SM1 on the given split (the paper's Tables 2-3 only), where it fits."""
    input:
        eigen=diffusion_eigen_files,
        labels="resources/diffusion/{ds}/labels.tsv",
        splits="resources/diffusion/{ds}/splits/00.tsv",
        cv="results/diffusion/{ds}/splits/00/inner_cv.tsv",
        scale="results/diffusion/{ds}/splits/00/kernel_scale.tsv",
    output:
        roc="results/diffusion/{ds}/splits/00/roc_sm1.tsv",
        weights="results/diffusion/{ds}/splits/00/weights_sm1.tsv",
        times="results/diffusion/{ds}/splits/00/times_sm1.tsv",
    log:
        "results/diffusion/{ds}/logs/sm1.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/sm1.tsv"
    conda:
        ENV_TORCH
    resources:
        mem_mb=mem_per_attempt(int(DIFFUSION["sm1"]["max_memory_gb"] * 1024) + 2000),
        runtime=int(DIFFUSION["sm1"]["max_seconds"] / 60) + 30,
    params:
        cfg=diffusion_params(DIFFUSION_SM1_KEYS),
        device=DEVICE,
    script:
        "../scripts/diffusion_sm1.py"


rule diffusion_table:
    input:
        roc=diffusion_table_rocs,
        times=[
            "results/diffusion/{ds}/splits/00/times.tsv",
            "results/diffusion/{ds}/splits/00/times_sm1.tsv",
        ],
    output:
        "results/diffusion/{ds}/tables/{kind}.tsv",
    log:
        "results/diffusion/{ds}/logs/table_{kind}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/table_{kind}.tsv"
    wildcard_constraints:
        kind="mean_roc|wilcoxon|stability",
    conda:
        ENV_CORE
    script:
        "../scripts/diffusion_table.py"


rule diffusion_figure_table:
    input:
        roc=[
            "results/diffusion/{ds}/splits/00/roc.tsv",
            "results/diffusion/{ds}/splits/00/roc_sm1.tsv",
        ],
        kernel_roc="results/diffusion/{ds}/splits/00/kernel_roc.tsv",
    output:
        report(
            "results/diffusion/{ds}/tables/{kind}.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_DIFFUSION,
            subcategory="{ds}",
        ),
    log:
        "results/diffusion/{ds}/logs/table_{kind}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/table_{kind}.tsv"
    wildcard_constraints:
        kind="roc_threshold|roc_per_kernel|best_roc_per_task|scatter_vs_ubaseline",
    conda:
        ENV_CORE
    script:
        "../scripts/diffusion_figure_table.py"


rule diffusion_sensitivity_run:
    """GPU-tagged: mean ROC on the given split against C, lam, the end of
    the beta grid and its step."""
    input:
        eigen=diffusion_eigen_files,
        labels="resources/diffusion/{ds}/labels.tsv",
        splits="resources/diffusion/{ds}/splits/00.tsv",
        scale="results/diffusion/{ds}/splits/00/kernel_scale.tsv",
    output:
        report(
            "results/diffusion/{ds}/tables/sensitivity.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_DIFFUSION,
            subcategory="{ds}",
        ),
    log:
        "results/diffusion/{ds}/logs/sensitivity.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/sensitivity.tsv"
    conda:
        ENV_TORCH
    threads: 2
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(8000),
    params:
        cfg=diffusion_params(DIFFUSION_SENSITIVITY_KEYS),
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/diffusion_sensitivity.py"


rule diffusion_predict_dataset:
    """GPU-tagged: new function predictions of the data set,
    `diffusion.predict.formulation` trained on every annotated protein with
    the protocol's code; per-function CV AUC and expected precision."""
    input:
        eigen=diffusion_eigen_files,
        labels="resources/diffusion/{ds}/labels.tsv",
        splits="resources/diffusion/{ds}/splits/00.tsv",  # read for the protein order only
    output:
        scores="results/diffusion/{ds}/predictions/scores.tsv",
        probabilities="results/diffusion/{ds}/predictions/probabilities.tsv",
        top_k="results/diffusion/{ds}/predictions/top_k.tsv",
        functions="results/diffusion/{ds}/predictions/functions.tsv",
    log:
        "results/diffusion/{ds}/logs/predict.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/predict.tsv"
    conda:
        ENV_TORCH
    threads: 2
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=mem_per_attempt(8000),
    params:
        cfg=diffusion_params(DIFFUSION_SPLIT_KEYS),
        formulation=DIFFUSION.get("predict", {}).get("formulation", "mDKL"),
        top_k=DIFFUSION.get("predict", {}).get("top_k", 5),
        seed=SEED,
        device=DEVICE,
    script:
        "../scripts/diffusion_predict.py"


rule diffusion_plot:
    input:
        "results/diffusion/{ds}/tables/{kind}.tsv",
    output:
        pdf="results/diffusion/{ds}/figures/{kind}.pdf",
        png=report(
            "results/diffusion/{ds}/figures/{kind}.png",
            caption="../report/diffusion.rst",
            category=PAPER_DIFFUSION,
            subcategory="{ds}",
        ),
    log:
        "results/diffusion/{ds}/logs/plot_{kind}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/plot_{kind}.tsv"
    wildcard_constraints:
        kind="roc_threshold|roc_per_kernel|best_roc_per_task|scatter_vs_ubaseline|sensitivity",
    conda:
        ENV_CORE
    params:
        paper_dataset=lambda wc: diffusion_source(wc.ds)["paper_dataset"],
    script:
        "../scripts/diffusion_plot.py"


rule diffusion_protocols_run:
    """The paper's protocol and the labelled deviations of the same network
    side by side (Tables 2-7's numbers per data set)."""
    input:
        roc=lambda wc: [
            f"results/diffusion/{ds}/splits/{s}/roc.tsv"
            for ds in diffusion_protocol_datasets(wc.paper)
            for s in DIFFUSION_SPLITS
        ],
        scale=lambda wc: [
            f"results/diffusion/{ds}/splits/{s}/kernel_scale.tsv"
            for ds in diffusion_protocol_datasets(wc.paper)
            for s in DIFFUSION_SPLITS
        ],
    output:
        "results/diffusion/protocols_{paper}.tsv",
    log:
        "results/diffusion/logs/protocols_{paper}.log",
    benchmark:
        "results/diffusion/benchmarks/protocols_{paper}.tsv"
    wildcard_constraints:
        paper="ligand|vonmering",
    conda:
        ENV_CORE
    params:
        datasets=lambda wc: diffusion_protocol_datasets(wc.paper),
        deviations=lambda wc: {
            ds: diffusion_source(ds).get("deviation", "")
            for ds in diffusion_protocol_datasets(wc.paper)
        },
    script:
        "../scripts/diffusion_protocols.py"


# Named targets: the paper's tables and figures, one rule each (diffusion_table2 to
# diffusion_table7, diffusion_fig1 to diffusion_fig8), from DIFFUSION_TABLES and
# DIFFUSION_FIGURES.
for _kind, _numbers in (("table", DIFFUSION_TABLES), ("figure", DIFFUSION_FIGURES)):
    for _paper, _items in _numbers.items():
        for _item, _number in _items.items():

            rule:
                f"""{_kind.capitalize()} {_number}: {DIFFUSION_TARGET_DOCS[_item]}, {DIFFUSION_PAPER_NAMES[_paper]}."""
                name:
                    f"diffusion_{'fig' if _kind == 'figure' else 'table'}{_number}"
                input:
                    diffusion_target(_kind, _number),


rule diffusion_sensitivity:
    """Mean ROC against the SVM's C, lam, the end of the beta grid and its step."""
    input:
        [
            f
            for ds in DIFFUSION_DATASETS
            for f in [
                f"results/diffusion/{ds}/tables/sensitivity.tsv",
                *figure(f"diffusion/{ds}", "sensitivity"),
            ]
        ],


rule diffusion_protocols:
    """The paper's protocol beside its labelled deviations (Laplacian, beta
    step, train-only kernel-scale choice) on each configured network."""
    input:
        diffusion_protocol_targets,


rule diffusion_predict:
    """New function predictions of every configured data set: scores,
    probabilities, top-k new functions per protein, per-function CV AUC and
    expected precision."""
    input:
        [
            f"results/diffusion/{ds}/predictions/{kind}.tsv"
            for ds in DIFFUSION_DATASETS
            for kind in ("scores", "probabilities", "top_k", "functions")
        ],
