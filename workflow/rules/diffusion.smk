# Diffusion-kernel MKL on protein networks (Sun, Ji & Ye, BMC Bioinformatics
# 2008): network + functions -> Laplacian eigendecomposition -> per split:
# single kernels, eBaseline, DKL/mDKL (six formulations), SM1, neighbourhood
# baselines -> Tables 2-7, Figures 1-8, and a sensitivity figure.

rule diffusion_inputs:
    input:
        dkl_input_files,
    output:
        edges="resources/diffusion/{ds}/edges.tsv",
        labels="resources/diffusion/{ds}/labels.tsv",
        given_split="resources/diffusion/{ds}/splits/00.tsv",
        summary="resources/diffusion/{ds}/inputs.json",
    params:
        source=lambda wc: dkl_source(wc.ds),
        test_fraction=DKL["test_fraction"],
        seed=SEED,
        seed_name=dkl_seed_name,
    log:
        "results/diffusion/{ds}/logs/inputs.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/inputs.tsv"
    conda:
        ENV_CORE
    threads: 1
    resources:
        mem_mb=2000,
        runtime=10,
    script:
        "../scripts/diffusion_inputs.py"


rule diffusion_random_split:
    input:
        labels="resources/diffusion/{ds}/labels.tsv",
    output:
        "resources/diffusion/{ds}/splits/{split}.tsv",
    wildcard_constraints:
        split="(?!00)[0-9]{2}",
    params:
        test_fraction=DKL["test_fraction"],
        seed=SEED,
        seed_name=dkl_seed_name,
    log:
        "results/diffusion/{ds}/logs/random_split_{split}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/random_split_{split}.tsv"
    conda:
        ENV_CORE
    threads: 1
    resources:
        mem_mb=500,
        runtime=5,
    script:
        "../scripts/diffusion_random_split.py"


rule diffusion_eigen:
    input:
        edges="resources/diffusion/{ds}/edges.tsv",
        labels="resources/diffusion/{ds}/labels.tsv",
    output:
        "resources/diffusion/{ds}/eigen_{laplacian}.npz",
    wildcard_constraints:
        laplacian="unnormalized|normalized",
    log:
        "results/diffusion/{ds}/logs/eigen_{laplacian}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/eigen_{laplacian}.tsv"
    conda:
        ENV_CORE
    threads: 2
    resources:
        mem_mb=4000,
        runtime=30,
    script:
        "../scripts/diffusion_eigen.py"


rule diffusion_split:
    """GPU-tagged: kernel blocks are built with torch on `device`."""
    input:
        eigen=dkl_eigen_files,
        edges="resources/diffusion/{ds}/edges.tsv",
        labels="resources/diffusion/{ds}/labels.tsv",
        splits="resources/diffusion/{ds}/splits/{split}.tsv",
    output:
        roc="results/diffusion/{ds}/splits/{split}/roc.tsv",
        scale="results/diffusion/{ds}/splits/{split}/kernel_scale.tsv",
        kernel_roc="results/diffusion/{ds}/splits/{split}/kernel_roc.tsv",
        weights="results/diffusion/{ds}/splits/{split}/weights.tsv",
        times="results/diffusion/{ds}/splits/{split}/times.tsv",
        cv="results/diffusion/{ds}/splits/{split}/inner_cv.tsv",
    params:
        cfg=dkl_params(DKL_SPLIT_KEYS),
        seed=SEED,
        device=DEVICE,
    log:
        "results/diffusion/{ds}/logs/split_{split}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/split_{split}.tsv"
    conda:
        ENV_TORCH
    threads: 2
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
        mem_mb=8000,
        runtime=120,
    script:
        "../scripts/diffusion_split.py"


rule diffusion_sm1:
    """SM1 on the given split (the paper's Tables 2-3 only), where it fits."""
    input:
        eigen=dkl_eigen_files,
        labels="resources/diffusion/{ds}/labels.tsv",
        splits="resources/diffusion/{ds}/splits/00.tsv",
        cv="results/diffusion/{ds}/splits/00/inner_cv.tsv",
        scale="results/diffusion/{ds}/splits/00/kernel_scale.tsv",
    output:
        roc="results/diffusion/{ds}/splits/00/roc_sm1.tsv",
        weights="results/diffusion/{ds}/splits/00/weights_sm1.tsv",
        times="results/diffusion/{ds}/splits/00/times_sm1.tsv",
    params:
        cfg=dkl_params(DKL_SM1_KEYS),
        device=DEVICE,
    log:
        "results/diffusion/{ds}/logs/sm1.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/sm1.tsv"
    conda:
        ENV_TORCH
    threads: 1
    resources:
        mem_mb=int(DKL["sm1"]["max_memory_gb"] * 1024) + 2000,
        runtime=int(DKL["sm1"]["max_seconds"] / 60) + 30,
    script:
        "../scripts/diffusion_sm1.py"


rule diffusion_table:
    input:
        roc=dkl_table_rocs,
        times=["results/diffusion/{ds}/splits/00/times.tsv", "results/diffusion/{ds}/splits/00/times_sm1.tsv"],
    output:
        "results/diffusion/{ds}/tables/{kind}.tsv",
    wildcard_constraints:
        kind="mean_roc|wilcoxon|stability",
    log:
        "results/diffusion/{ds}/logs/table_{kind}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/table_{kind}.tsv"
    conda:
        ENV_CORE
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/diffusion_table.py"


rule diffusion_figure_table:
    input:
        roc=["results/diffusion/{ds}/splits/00/roc.tsv", "results/diffusion/{ds}/splits/00/roc_sm1.tsv"],
        kernel_roc="results/diffusion/{ds}/splits/00/kernel_roc.tsv",
    output:
        "results/diffusion/{ds}/tables/{kind}.tsv",
    wildcard_constraints:
        kind="roc_threshold|roc_per_kernel|best_roc_per_task|scatter_vs_ubaseline",
    log:
        "results/diffusion/{ds}/logs/table_{kind}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/table_{kind}.tsv"
    conda:
        ENV_CORE
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/diffusion_figure_table.py"


rule diffusion_sensitivity:
    """GPU-tagged: mean ROC on the given split against C, lam, the end of
    the beta grid and its step."""
    input:
        eigen=dkl_eigen_files,
        labels="resources/diffusion/{ds}/labels.tsv",
        splits="resources/diffusion/{ds}/splits/00.tsv",
        scale="results/diffusion/{ds}/splits/00/kernel_scale.tsv",
    output:
        "results/diffusion/{ds}/tables/sensitivity.tsv",
    params:
        cfg=dkl_params(DKL_SENSITIVITY_KEYS),
        seed=SEED,
        device=DEVICE,
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
        mem_mb=8000,
        runtime=120,
    script:
        "../scripts/diffusion_sensitivity.py"


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
    wildcard_constraints:
        kind="roc_threshold|roc_per_kernel|best_roc_per_task|scatter_vs_ubaseline|sensitivity",
    params:
        paper_dataset=lambda wc: dkl_source(wc.ds)["paper_dataset"],
    log:
        "results/diffusion/{ds}/logs/plot_{kind}.log",
    benchmark:
        "results/diffusion/{ds}/benchmarks/plot_{kind}.tsv"
    conda:
        ENV_CORE
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/diffusion_plot.py"


rule diffusion_protocols:
    """The paper's protocol and the labelled deviations of the same network
    side by side (Tables 2-7's numbers per data set)."""
    input:
        roc=lambda wc: [f"results/diffusion/{ds}/splits/{s}/roc.tsv" for ds in dkl_protocol_datasets(wc.paper) for s in DKL_SPLITS],
        scale=lambda wc: [f"results/diffusion/{ds}/splits/{s}/kernel_scale.tsv" for ds in dkl_protocol_datasets(wc.paper) for s in DKL_SPLITS],
    output:
        "results/diffusion/protocols_{paper}.tsv",
    wildcard_constraints:
        paper="ligand|vonmering",
    params:
        datasets=lambda wc: dkl_protocol_datasets(wc.paper),
        deviations=lambda wc: {ds: dkl_source(ds).get("deviation", "") for ds in dkl_protocol_datasets(wc.paper)},
    log:
        "results/diffusion/logs/protocols_{paper}.log",
    benchmark:
        "results/diffusion/benchmarks/protocols_{paper}.tsv"
    conda:
        ENV_CORE
    threads: 1
    resources:
        mem_mb=1000,
        runtime=10,
    script:
        "../scripts/diffusion_protocols.py"


# Named targets: the paper's tables and figures.
rule dkl_table2:
    """Table 2: mean ROC and kernel-learning time, Ligand-type data set."""
    input:
        dkl_target("table", 2),


rule dkl_table3:
    """Table 3: Wilcoxon p-values of DKL and mDKL vs every method, Ligand."""
    input:
        dkl_target("table", 3),


rule dkl_table4:
    """Table 4: stability over splits (mean and SD of the mean ROC), Ligand."""
    input:
        dkl_target("table", 4),


rule dkl_table5:
    """Table 5: mean ROC and time, von Mering-type data set."""
    input:
        dkl_target("table", 5),


rule dkl_table6:
    """Table 6: Wilcoxon p-values, von Mering."""
    input:
        dkl_target("table", 6),


rule dkl_table7:
    """Table 7: stability over splits, von Mering."""
    input:
        dkl_target("table", 7),


rule dkl_fig1:
    """Figure 1: number of tasks above each ROC threshold, Ligand."""
    input:
        dkl_target("figure", 1),


rule dkl_fig2:
    """Figure 2: mean ROC of each single kernel vs -beta, Ligand."""
    input:
        dkl_target("figure", 2),


rule dkl_fig3:
    """Figure 3: best ROC per task (uBaseline), Ligand."""
    input:
        dkl_target("figure", 3),


rule dkl_fig4:
    """Figure 4: each formulation vs uBaseline per task, Ligand."""
    input:
        dkl_target("figure", 4),


rule dkl_fig5:
    """Figure 5: number of tasks above each ROC threshold, von Mering."""
    input:
        dkl_target("figure", 5),


rule dkl_fig6:
    """Figure 6: mean ROC of each single kernel vs -beta, von Mering."""
    input:
        dkl_target("figure", 6),


rule dkl_fig7:
    """Figure 7: best ROC per task (uBaseline), von Mering."""
    input:
        dkl_target("figure", 7),


rule dkl_fig8:
    """Figure 8: each formulation vs uBaseline per task, von Mering."""
    input:
        dkl_target("figure", 8),


rule dkl_sensitivity:
    """Mean ROC against the SVM's C, lam, the end of the beta grid and its step."""
    input:
        [f for ds in DKL_DATASETS for f in [f"results/diffusion/{ds}/tables/sensitivity.tsv",
                                             *figure(f"diffusion/{ds}", "sensitivity")]],


rule dkl_protocols:
    """The paper's protocol beside its labelled deviations (Laplacian, beta
    step, train-only kernel-scale choice) on each configured network."""
    input:
        dkl_protocol_targets,
