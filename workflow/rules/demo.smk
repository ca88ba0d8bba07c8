# First small DAG of the workflow: a planted regression task (generated),
# Laplace-kernel ridge models along two hyperparameter sweeps (GPU-tagged
# computation), one table and one figure per sweep.

DEMO_IDS = {"lam": "demo_lam_sweep", "bandwidth": "demo_bandwidth_sweep"}
DEMO_TARGETS = [
    path
    for fig_id in DEMO_IDS.values()
    for path in [f"results/demo/tables/{fig_id}.tsv", *figure("demo", fig_id)]
]


rule demo_generate:
    output:
        "resources/demo/planted_regression.npz",
    log:
        "results/demo/logs/demo_generate.log",
    benchmark:
        "results/demo/benchmarks/demo_generate.tsv"
    conda:
        ENV_CORE
    params:
        cfg=config["demo"],
        seed=SEED,
    script:
        "../scripts/demo_generate.py"


rule demo_sweep:
    """GPU-tagged: fits kernel ridge models with torch on `device`."""
    input:
        rules.demo_generate.output,
    output:
        report(
            "results/demo/tables/demo_{sweep}_sweep.tsv",
            caption=TABLE_CAPTION,
            category="Demo: kernel ridge",
        ),
    log:
        "results/demo/logs/demo_sweep_{sweep}.log",
    benchmark:
        "results/demo/benchmarks/demo_sweep_{sweep}.tsv"
    conda:
        ENV_TORCH
    resources:
        gpu=1,
        slurm_partition=GPU_PARTITION,
    params:
        cfg=config["demo"],
        device=DEVICE,
    script:
        "../scripts/demo_sweep.py"


rule demo_figure:
    input:
        "results/demo/tables/demo_{sweep}_sweep.tsv",
    output:
        pdf="results/demo/figures/demo_{sweep}_sweep.pdf",
        png=report(
            "results/demo/figures/demo_{sweep}_sweep.png",
            caption="../report/demo_sweep.rst",
            category="Demo: kernel ridge",
        ),
    log:
        "results/demo/logs/demo_figure_{sweep}.log",
    benchmark:
        "results/demo/benchmarks/demo_figure_{sweep}.tsv"
    conda:
        ENV_CORE
    script:
        "../scripts/demo_figure.py"


rule demo_lam_sweep:
    """Target: test/train R^2 of Laplace kernel ridge against the ridge lam."""
    input:
        "results/demo/tables/demo_lam_sweep.tsv",
        figure("demo", "demo_lam_sweep"),


rule demo_bandwidth_sweep:
    """Target: test/train R^2 of Laplace kernel ridge against the bandwidth L."""
    input:
        "results/demo/tables/demo_bandwidth_sweep.tsv",
        figure("demo", "demo_bandwidth_sweep"),
