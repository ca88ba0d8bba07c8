"""PRISM Repurposing 19Q4 files in their public layout, written for the tests
and the readers' benchmark: R's ``write.csv`` quoting (:func:`r_csv`) and
the headers of the primary treatment info and the secondary dose-response
table."""

from __future__ import annotations

import math
from pathlib import Path

#: Columns of ``primary-screen-replicate-collapsed-treatment-info.csv``.
TREATMENT_HEAD = ["column_name", "broad_id", "name", "dose", "screen_id", "smiles", "moa", "target",
                  "disease.area", "indication", "phase"]
#: Columns of ``secondary-screen-dose-response-curve-parameters.csv``.
SECONDARY_HEAD = ["broad_id", "depmap_id", "ccle_name", "screen_id", "upper_limit", "lower_limit", "slope", "r2",
                  "auc", "ec50", "ic50", "name", "moa", "target", "disease.area", "indication", "smiles", "phase",
                  "passed_str_profiling", "row_name"]


def r_csv(path: Path, header: list[str], rows: list[list]) -> Path:
    """Write a table as R's write.csv(row.names = FALSE) does: every header
    field and string quoted, numbers bare, missing values as bare NA."""
    def field(v):
        if v is None or (isinstance(v, float) and math.isnan(v)):
            return "NA"
        if isinstance(v, bool):
            return "TRUE" if v else "FALSE"
        if isinstance(v, (int, float)):
            return repr(v)
        return '"' + str(v).replace('"', '""') + '"'

    lines = [",".join('"' + h + '"' for h in header)] + [",".join(field(v) for v in r) for r in rows]
    path.write_text("\n".join(lines) + "\n")
    return path
