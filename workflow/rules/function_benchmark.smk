# Protein function prediction benchmark (beyond the papers):
# diffusion kernels and their learned combinations beside label propagation
# and Mashup, under deepNF's protocol. Settings, input functions and targets
# (FB_*, fb_*): rules/function_benchmark_helpers.smk.


rule function_benchmark_run:
    """Every configured method on the seeded trials of data set {dataset},
    label level {level}: metrics per trial, the hyperparameters chosen by
    inner CV on the training genes, times."""
    input:
        fb_input_files,
    output:
        metrics=f"{FB_DIR}/{{dataset}}/{{level}}/runs/metrics.tsv",
        choices=f"{FB_DIR}/{{dataset}}/{{level}}/runs/choices.tsv",
        times=f"{FB_DIR}/{{dataset}}/{{level}}/runs/times.tsv",
        counts=f"{FB_DIR}/{{dataset}}/{{level}}/runs/counts.json",
    log:
        f"{FB_DIR}/{{dataset}}/{{level}}/logs/run.log",
    benchmark:
        f"{FB_DIR}/{{dataset}}/{{level}}/benchmarks/run.tsv"
    conda:
        ENV_TORCH
    threads: 2
    resources:
        mem_mb=mem_per_attempt(12000),
    params:
        cfg=fb_run_params,
        source=lambda wc: canonical(FB["sources"][wc.dataset]),
    script:
        "../scripts/function_benchmark_run.py"


rule function_benchmark_tables:
    """Mean ± SD over trials of every metric per method, paired Wilcoxon
    p-values of the best diffusion method against each peer, and the figure
    (methods x metrics, trials as points) of data set {dataset}, level {level}."""
    input:
        metrics=f"{FB_DIR}/{{dataset}}/{{level}}/runs/metrics.tsv",
    output:
        summary=report(
            f"{FB_DIR}/{{dataset}}/{{level}}/tables/benchmark.tsv",
            caption=TABLE_CAPTION,
            category=BEYOND_PAPERS,
            subcategory="{dataset} {level}",
        ),
        wilcoxon=f"{FB_DIR}/{{dataset}}/{{level}}/tables/wilcoxon.tsv",
        pdf=f"{FB_DIR}/{{dataset}}/{{level}}/figures/benchmark.pdf",
        png=report(
            f"{FB_DIR}/{{dataset}}/{{level}}/figures/benchmark.png",
            caption="../report/function_benchmark.rst",
            category=BEYOND_PAPERS,
            subcategory="{dataset} {level}",
        ),
    log:
        f"{FB_DIR}/{{dataset}}/{{level}}/logs/tables.log",
    benchmark:
        f"{FB_DIR}/{{dataset}}/{{level}}/benchmarks/tables.tsv"
    conda:
        ENV_CORE
    params:
        context=lambda wc: canonical(
            ((FB.get("context") or {}).get(wc.dataset) or {}).get(wc.level, {})
        ),
        title=lambda wc: f"{FB['sources'][wc.dataset]['description']}, {wc.level}",
    script:
        "../scripts/function_benchmark_tables.py"


rule function_benchmark_level1:
    """Target: the level-1 tables and figure of every data set that has level 1."""
    input:
        fb_level_outputs("level1"),


rule function_benchmark_level2:
    """Target: the level-2 tables and figure of every data set that has level 2
    (von Mering's second table among them)."""
    input:
        fb_level_outputs("level2"),


rule function_benchmark_level3:
    """Target: the level-3 tables and figure of every data set that has level 3."""
    input:
        fb_level_outputs("level3"),


rule function_benchmark:
    """Target: every level of every configured data set."""
    input:
        FB_TARGETS,
