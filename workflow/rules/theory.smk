# Linear-setting theory of projection and translation (Radhakrishnan et al.,
# "Transfer learning with kernel methods", Definition 4, Theorems 1-2,
# Corollary 1): closed-form risks against Monte-Carlo simulation.

THEORY_IDS = [
    "projection_vs_nt",
    "projection_vs_cs",
    "translation_vs_ns",
    "translation_vs_angle",
    "theory_vs_simulation_grid",
]
THEORY_TARGETS = [
    f
    for i in THEORY_IDS
    for f in [f"results/theory/tables/{i}.tsv", *figure("theory", i)]
]


wildcard_constraints:
    tid="|".join(THEORY_IDS),


rule theory_table:
    output:
        report(
            "results/theory/tables/{tid}.tsv",
            caption=TABLE_CAPTION,
            category=PAPER_TRANSFER,
            subcategory="Theory (linear setting)",
        ),
    log:
        "results/theory/logs/table_{tid}.log",
    benchmark:
        "results/theory/benchmarks/table_{tid}.tsv"
    conda:
        ENV_CORE
    params:
        kwargs=lambda wc: config["theory"][wc.tid],
        seed=SEED,
    script:
        "../scripts/theory_table.py"


rule theory_plot:
    input:
        "results/theory/tables/{tid}.tsv",
    output:
        pdf="results/theory/figures/{tid}.pdf",
        png=report(
            "results/theory/figures/{tid}.png",
            caption="../report/theory.rst",
            category=PAPER_TRANSFER,
            subcategory="Theory (linear setting)",
        ),
    log:
        "results/theory/logs/plot_{tid}.log",
    benchmark:
        "results/theory/benchmarks/plot_{tid}.tsv"
    conda:
        ENV_CORE
    script:
        "../scripts/theory_plot.py"


rule theory_projection_vs_nt:
    """Projected risk vs n_t: Theorem 1 (as printed), the exact risk, simulation."""
    input:
        "results/theory/tables/projection_vs_nt.tsv",
        figure("theory", "projection_vs_nt"),


rule theory_projection_vs_cs:
    """Projected risk vs the number of source classes c_s."""
    input:
        "results/theory/tables/projection_vs_cs.tsv",
        figure("theory", "projection_vs_cs"),


rule theory_translation_vs_ns:
    """Translated risk vs n_s: Theorem 2 and simulation."""
    input:
        "results/theory/tables/translation_vs_ns.tsv",
        figure("theory", "translation_vs_ns"),


rule theory_translation_vs_angle:
    """Translated risk vs the angle between flattened omega_s and omega_t."""
    input:
        "results/theory/tables/translation_vs_angle.tsv",
        figure("theory", "translation_vs_angle"),


rule theory_vs_simulation:
    """Relative error between theory and simulation on a grid of settings."""
    input:
        "results/theory/tables/theory_vs_simulation_grid.tsv",
        figure("theory", "theory_vs_simulation_grid"),
