# Coverage of the papers (issue #27): every figure and table of the four
# papers (config/coverage.yaml) with the status this run gives it, from the
# reproduction table's verdicts of the paper_values.yaml entries that judge
# it -> results/coverage.tsv and its HTML view on the report's front
# category. Library: biokernels.coverage. Included after report.smk (it
# reads REPORT_PAPER_VALUES and REPORT_CATEGORY).

COVERAGE_YAML = "config/coverage.yaml"
COVERAGE_SCHEMA = os.path.join(workflow.basedir, "schemas", "coverage.schema.yaml")


rule coverage_table:
    """Every figure and table of the four papers: what it shows, the target
    that builds it, the data, and its status in this run (reproduced, differs,
    agrees on substitute data, analogue, not run), as a TSV and its HTML view."""
    input:
        reproduction="results/reproduction.tsv",
        coverage=COVERAGE_YAML,
        schema=COVERAGE_SCHEMA,
        paper_values=REPORT_PAPER_VALUES,
    output:
        tsv="results/coverage.tsv",
        html=report(
            "results/report/coverage.html",
            caption="../report/coverage.rst",
            category=REPORT_CATEGORY,
            subcategory="Coverage of the papers",
        ),
    log:
        "results/report/logs/coverage_table.log",
    benchmark:
        "results/report/benchmarks/coverage_table.tsv"
    conda:
        ENV_CORE
    threads: 1
    resources:
        mem_mb=mem_per_attempt(500),
        runtime=5,
    script:
        "../scripts/coverage_table.py"
