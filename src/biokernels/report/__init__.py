"""Paper versus reproduction: the numbers the papers report, beside this run's.

``config/paper_values.yaml`` lists every number of the four papers a run can
be compared with, and where the run's tables hold it; :func:`reproduction_table`
gives one row per entry (per configured data set) with the paper's value, the
reproduced value, the difference, the tolerance and its source, the verdict,
and what the row stands on (``data``: paper, substitute or synthetic, as each
source declares it; ``protocol``: the departures computed against
``config/paper_protocols.yaml``). The verdicts, tolerance rules and
selections are described in ``docs/report_notes.md``.

Pure library: no Snakemake; ``scripts/report_table.py`` is the rule's entry.
"""

from biokernels.report.context import Context, expand_source, required_tables, source_data
from biokernels.report.judge import (TOLERANCE_RULES, compose_verdict, judge, label_verdict, resolve_tolerance,
                                     verdict_kind)
from biokernels.report.kinds import (COLUMNS, DATA_KINDS, DEVIATION_LABEL, REDUCERS, SUBSTITUTE_KINDS,
                                     VERDICT_KINDS, VERDICTS, PaperValuesError, SelectorError)
from biokernels.report.select import select_value
from biokernels.report.table import reproduction_table, resolve_entry, slug, table_html, verdict_counts
from biokernels.report.values import load_paper_values, schema_errors

__all__ = ["COLUMNS", "DATA_KINDS", "DEVIATION_LABEL", "REDUCERS", "SUBSTITUTE_KINDS", "TOLERANCE_RULES",
           "VERDICTS", "VERDICT_KINDS", "Context", "PaperValuesError", "SelectorError", "compose_verdict",
           "expand_source", "judge", "label_verdict", "load_paper_values", "reproduction_table",
           "required_tables", "resolve_entry", "resolve_tolerance", "schema_errors", "select_value", "slug",
           "source_data", "table_html", "verdict_counts", "verdict_kind"]
