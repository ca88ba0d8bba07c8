# Coverage of the papers: every figure and table of the four
# papers (config/coverage.yaml) with the status this run gives it, from the
# reproduction table's verdicts of the paper_values.yaml entries that judge
# it -> results/coverage.tsv and its HTML view on the report's front
# category. Library: biokernels.coverage. Included after report.smk (it
# reads REPORT_PAPER_VALUES and REPORT_CATEGORY).

from biokernels.coverage import load_coverage as _load_coverage  # noqa: E402
from biokernels.coverage import (
    reference_errors as _coverage_reference_errors,
)  # noqa: E402

COVERAGE_YAML = "config/coverage.yaml"
COVERAGE_SCHEMA = os.path.join(workflow.basedir, "schemas", "coverage.schema.yaml")
# Checked at parse time, before any job: the items, their entry ids and
# targets (every rule is defined by now: this file is included last).
COVERAGE_ITEMS = _load_coverage(COVERAGE_YAML, COVERAGE_SCHEMA)
_COVERAGE_PROBLEMS = _coverage_reference_errors(
    COVERAGE_ITEMS,
    entry_ids=REPORT_ENTRY_IDS,
    rules=[r.name for r in workflow.rules],
)
if _COVERAGE_PROBLEMS:
    raise WorkflowError(f"{COVERAGE_YAML}:\n" + "\n".join(_COVERAGE_PROBLEMS))
# target -> the files it stands for: an item whose status is fixed to
# analogue counts as built only where they all exist when the table is made
COVERAGE_TARGET_FILES = {
    item["target"]: coverage_target_files(getattr(rules, item["target"]).input)
    for item in COVERAGE_ITEMS
    if item.get("target")
}


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
    params:
        target_files=COVERAGE_TARGET_FILES,
    script:
        "../scripts/coverage_table.py"
