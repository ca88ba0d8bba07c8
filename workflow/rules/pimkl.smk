# PIMKL: pathway-induced multiple kernel learning (Manica et al. 2019, npj
# Syst. Biol. Appl.): network + gene sets + labelled cohorts ->
# Algorithm S1 per (gene-set collection, cohort) -> significance, signature
# correlation; Algorithm S2 on the large cohort (mRNA, CNA, both; trained vs
# transferred signature) -> Figures 3a, 3b, 4, 5, 6, S1, S2, S4 and the
# sensitivity table. Settings, paths, input functions and targets (PK_*,
# pk_*, also read by LS-MMDT): rules/pimkl_helpers.smk.


# Downloads run where Snakemake runs (cluster nodes often have no network).
localrules:
    pimkl_download,


rule pimkl_generate:
    """Embedded default: network, gene sets, six cohorts and a two-omics cohort
    with planted pathways (biokernels.synth.pimkl)."""
    output:
        network=f"{PK_RAW}/network.tsv",
        gene_sets=f"{PK_RAW}/gene_sets.gmt",
        params=f"{PK_RAW}/truth/params.json",
        cohorts=(
            [p for c in PK_COHORT_SPECS for p in pk_cohort_files(c)]
            if PK_SYNTH
            else []
        ),
    log:
        f"{PK_DIR}/logs/generate.log",
    benchmark:
        f"{PK_DIR}/benchmarks/generate.tsv"
    conda:
        ENV_CORE
    params:
        generator=canonical(PK_SRC.get("generator", {})),
        seed=SEED,
        outdir=lambda wc, output: os.path.dirname(output.network),
    script:
        "../scripts/pimkl_generate.py"


rule pimkl_download:
    """A public input file (GEO series matrix or GPL table, MSigDB GMT, STRING
    links) for users with network: checksummed (sha256) download named by its
    config field."""
    output:
        f"resources/pimkl/download/{PK_NAME}/{{field}}",
    log:
        f"{PK_DIR}/logs/download_{{field}}.log",
    benchmark:
        f"{PK_DIR}/benchmarks/download_{{field}}.tsv"
    wildcard_constraints:
        field="[A-Za-z0-9_.]+",
    conda:
        ENV_CORE
    params:
        spec=lambda wc: canonical(PK_DOWNLOADS[wc.field]),
    script:
        "../scripts/download.py"


rule pimkl_cohorts:
    """Target: every cohort of the source read as Algorithm S1 reads it; one
    table of its counts (samples, labels, each probe and sample dropped)."""
    input:
        [p for c in PK_COHORT_SPECS for p in pk_cohort_files(c)],
    output:
        report(
            PK_COHORT_COUNTS,
            caption="../report/pimkl_cohorts.rst",
            category=PAPER_PIMKL,
            subcategory=PK_NAME,
        ),
    log:
        f"{PK_DIR}/logs/cohorts.log",
    benchmark:
        f"{PK_DIR}/benchmarks/cohorts.tsv"
    conda:
        ENV_CORE
    params:
        specs=canonical(PK_COHORT_SPECS),
        collapse=PK["collapse"],
    script:
        "../scripts/pimkl_cohorts.py"


rule pimkl_network:
    """Interaction network -> cleaned undirected gene edge table (counts logged)."""
    input:
        PK_NETWORK["path"],
    output:
        edges=f"{PK_DIR}/network/edges.tsv",
        counts=f"{PK_DIR}/network/counts.json",
    log:
        f"{PK_DIR}/logs/network.log",
    benchmark:
        f"{PK_DIR}/benchmarks/network.tsv"
    conda:
        ENV_CORE
    params:
        network=canonical({k: v for k, v in PK_NETWORK.items() if k != "path"}),
    script:
        "../scripts/pimkl_network.py"


rule pimkl_gene_sets:
    """A gene-set collection, checked and rewritten; random_<c> = as many sets
    of random size drawn from the union of <c>'s sets (Fig. S2 control)."""
    input:
        pk_gmt,
    output:
        f"{PK_DIR}/gene_sets/{{collection}}.gmt",
    log:
        f"{PK_DIR}/logs/gene_sets_{{collection}}.log",
    benchmark:
        f"{PK_DIR}/benchmarks/gene_sets_{{collection}}.tsv"
    conda:
        ENV_CORE
    params:
        random=lambda wc: wc.collection.startswith("random_"),
        size_range=PK["controls"]["random_size"],
        seed=SEED,
    script:
        "../scripts/pimkl_gene_sets.py"


rule pimkl_s1:
    """Algorithm S1 on one cohort with one gene-set collection: repeated
    stratified CV, inner lambda grid, EasyMKL weights, held-out AUCs; the
    baselines (SVMs, equal weights) with the study's collection only."""
    input:
        edges=f"{PK_DIR}/network/edges.tsv",
        gene_sets=f"{PK_DIR}/gene_sets/{{collection}}.gmt",
        cohort=lambda wc: pk_cohort_files(wc.cohort),
    output:
        aucs=f"{PK_DIR}/s1/{{collection}}/{{cohort}}/aucs.tsv",
        weights=f"{PK_DIR}/s1/{{collection}}/{{cohort}}/weights.tsv",
        pathways=f"{PK_DIR}/s1/{{collection}}/{{cohort}}/pathways.tsv",
    log:
        f"{PK_DIR}/logs/s1_{{collection}}_{{cohort}}.log",
    benchmark:
        f"{PK_DIR}/benchmarks/s1_{{collection}}_{{cohort}}.tsv"
    conda:
        ENV_CORE
    params:
        cfg=PK_S1_PARAMS,
        spec=lambda wc: canonical(PK_COHORT_SPECS[wc.cohort]),
        baselines=lambda wc: wc.collection == PK_PRIMARY,
        seed=SEED,
    script:
        "../scripts/pimkl_s1.py"


rule pimkl_s2:
    """Algorithm S2 on the large cohort: random splits with a few training
    samples per class, fixed lambda; mRNA, CNA, both; and the signature
    transferred from the other cohorts (median of their median weights)."""
    input:
        edges=f"{PK_DIR}/network/edges.tsv",
        gene_sets=f"{PK_DIR}/gene_sets/{PK_PRIMARY}.gmt",
        cohort=pk_cohort_files(PK_LARGE) if PK_LARGE else [],
        transfer=pk_s1(PK_PRIMARY, PK_TRANSFER_COHORTS, "weights"),
    output:
        aucs=f"{PK_DIR}/s2/aucs.tsv",
        weights=f"{PK_DIR}/s2/weights.tsv",
        transferred=f"{PK_DIR}/s2/transferred.tsv",
    log:
        f"{PK_DIR}/logs/s2.log",
    benchmark:
        f"{PK_DIR}/benchmarks/s2.tsv"
    conda:
        ENV_CORE
    resources:
        mem_mb=mem_per_attempt(8000),
    params:
        cfg=PK_S2_PARAMS,
        spec=canonical(PK_COHORT_SPECS[PK_LARGE]) if PK_LARGE else {},
        cohort=PK_LARGE or "",
        seed=SEED,
    script:
        "../scripts/pimkl_s2.py"


rule pimkl_sensitivity_run:
    """Algorithm S1 on one cohort with each alternative modelling choice
    (classifier, kernel aggregation, inner-CV criterion, probe collapse)."""
    input:
        edges=f"{PK_DIR}/network/edges.tsv",
        gene_sets=f"{PK_DIR}/gene_sets/{PK_PRIMARY}.gmt",
        cohort=lambda wc: pk_cohort_files(wc.cohort),
    output:
        f"{PK_DIR}/sensitivity/{{cohort}}.tsv",
    log:
        f"{PK_DIR}/logs/sensitivity_{{cohort}}.log",
    benchmark:
        f"{PK_DIR}/benchmarks/sensitivity_{{cohort}}.tsv"
    conda:
        ENV_CORE
    params:
        cfg=PK_SENS_PARAMS,
        spec=lambda wc: canonical(PK_COHORT_SPECS[wc.cohort]),
        seed=SEED,
    script:
        "../scripts/pimkl_sensitivity.py"


rule pimkl_figure:
    """PIMKL figure {fig}: its table (TSV) and figure (PDF, PNG)."""
    input:
        pk_figure_inputs,
    output:
        table=report(
            f"{PK_DIR}/tables/{{fig}}.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_PIMKL,
            subcategory=PK_NAME,
        ),
        pdf=f"results/{PK_STUDY}/figures/{{fig}}.pdf",
        png=report(
            f"results/{PK_STUDY}/figures/{{fig}}.png",
            caption="../report/pimkl.rst",
            category=PAPER_PIMKL,
            subcategory=PK_NAME,
        ),
    log:
        f"{PK_DIR}/logs/figure_{{fig}}.log",
    benchmark:
        f"{PK_DIR}/benchmarks/figure_{{fig}}.tsv"
    wildcard_constraints:
        fig="fig3a|fig3b|fig4|fig5|fig6|figS1|figS2|figS4|sensitivity",
    conda:
        ENV_CORE
    params:
        significance=canonical(PK["significance"]),
        collections=PK_COLLECTIONS,
        dataset=PK_NAME,
        large=PK_LARGE or "",
    script:
        "../scripts/pimkl_figure.py"


# Named targets: the paper's figures.
rule pimkl_fig3a:
    """Target: AUC box plots per method over all cohorts (per-repeat mean AUCs)."""
    input:
        pk_target("fig3a"),


rule pimkl_fig3b:
    """Target: heat map of the pathways significant per cohort (Wilcoxon vs 1/P, BH)."""
    input:
        pk_target("fig3b"),


rule pimkl_fig4:
    """Target: correlation of the median-weight signatures between cohorts."""
    input:
        pk_target("fig4"),


rule pimkl_fig5:
    """Target: S1 cohorts' AUCs and the large cohort's with trained vs transferred weights."""
    input:
        pk_target("fig5"),


rule pimkl_fig6:
    """Target: the large cohort's AUCs on CNA, mRNA and both."""
    input:
        pk_target("fig6"),


rule pimkl_figS1:
    """Target: AUC box plots per method, one panel per cohort."""
    input:
        pk_target("figS1"),


rule pimkl_figS2:
    """Target: PIMKL AUCs per cohort for each gene-set collection and its randomized control."""
    input:
        pk_target("figS2"),


rule pimkl_figS4:
    """Target: trained (large cohort) vs transferred signature, with the regression line."""
    input:
        pk_target("figS4"),


rule pimkl_sensitivity:
    """Target: mean/median AUC of Algorithm S1 under each alternative modelling choice."""
    input:
        pk_target("sensitivity"),


rule pimkl_signature:
    """Target: PIMKL fitted on every sample of `pimkl.predict.train_cohort`
    (the S1 settings; lambda by the inner grid), exported as a model directory
    (.npz arrays + manifest.json) with its pathway weights as a table."""
    input:
        edges=f"{PK_DIR}/network/edges.tsv",
        gene_sets=f"{PK_DIR}/gene_sets/{PK_PRIMARY}.gmt",
        cohort=pk_cohort_files(PK_TRAIN_COHORT),
    output:
        model=directory(PK_MODEL_DIR),
        weights=f"{PK_DIR}/predict/{PK_TRAIN_COHORT}_signature_weights.tsv",
    log:
        f"{PK_DIR}/logs/signature_{PK_TRAIN_COHORT}.log",
    benchmark:
        f"{PK_DIR}/benchmarks/signature_{PK_TRAIN_COHORT}.tsv"
    conda:
        ENV_CORE
    params:
        cfg=PK_S1_PARAMS,
        cohort=PK_TRAIN_COHORT,
        spec=canonical(PK_COHORT_SPECS[PK_TRAIN_COHORT]),
        source=PK_NAME,
        seed=SEED,
    script:
        "../scripts/pimkl_signature.py"


rule pimkl_predict_cohort:
    """The exported signature applied to one cohort: a score and class per
    sample and the share of the signature's genes the cohort measures."""
    input:
        model=PK_MODEL_DIR,
        cohort=lambda wc: pk_cohort_files(wc.cohort),
    output:
        scores=f"{PK_DIR}/predict/{PK_TRAIN_COHORT}/{{cohort}}.tsv",
        coverage=f"{PK_DIR}/predict/{PK_TRAIN_COHORT}/{{cohort}}_coverage.json",
    log:
        f"{PK_DIR}/logs/predict_{PK_TRAIN_COHORT}_{{cohort}}.log",
    benchmark:
        f"{PK_DIR}/benchmarks/predict_{PK_TRAIN_COHORT}_{{cohort}}.tsv"
    conda:
        ENV_CORE
    params:
        cfg=PK_PREDICT_PARAMS,
        spec=lambda wc: canonical(PK_COHORT_SPECS[wc.cohort]),
    script:
        "../scripts/pimkl_predict.py"


rule pimkl_predict_summary:
    """One row per scored cohort: samples, gene coverage, and the AUC of the
    signature's scores against the cohort's own labels."""
    input:
        scores=[
            f"{PK_DIR}/predict/{PK_TRAIN_COHORT}/{c}.tsv" for c in PK_PREDICT_COHORTS
        ],
        coverage=[
            f"{PK_DIR}/predict/{PK_TRAIN_COHORT}/{c}_coverage.json"
            for c in PK_PREDICT_COHORTS
        ],
    output:
        f"{PK_DIR}/predict/{PK_TRAIN_COHORT}_summary.tsv",
    log:
        f"{PK_DIR}/logs/predict_{PK_TRAIN_COHORT}_summary.log",
    benchmark:
        f"{PK_DIR}/benchmarks/predict_{PK_TRAIN_COHORT}_summary.tsv"
    conda:
        ENV_CORE
    params:
        cohorts=PK_PREDICT_COHORTS,
    script:
        "../scripts/pimkl_predict_summary.py"


rule pimkl_predict:
    """Target: the signature of `pimkl.predict.train_cohort` applied to every
    cohort of `pimkl.predict.cohorts`, per-sample scores and the summary."""
    input:
        PK_PREDICT_TARGETS,
