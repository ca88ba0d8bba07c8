"""The reproduction table's vocabulary: verdict kinds, data kinds, columns
and reducers, and the errors of the report package."""

from __future__ import annotations

from pathlib import Path

VERDICTS = ("reproduced", "differs", "not comparable on this data", "not run")
DEVIATION_LABEL = "with a stated deviation"
SUBSTITUTE_KINDS = ("agrees on substitute data", "differs on substitute data")
# what verdict_counts and the HTML summary count; the kinds after which ": <text>" follows
VERDICT_KINDS = ("reproduced", f"reproduced {DEVIATION_LABEL}", "differs", f"differs {DEVIATION_LABEL}",
                 *SUBSTITUTE_KINDS, "not comparable on this data", "not run")
_LABELLED_KINDS = (f"reproduced {DEVIATION_LABEL}", f"differs {DEVIATION_LABEL}", *SUBSTITUTE_KINDS)
DATA_KINDS = ("paper", "substitute", "synthetic")
REDUCERS = ("single", "unique", "min", "max", "mean", "median", "max_abs", "first", "last",
            "last_minus_first", "last_minus_max", "min_step", "count", "sum", "count_positive",
           "fraction_positive")
COLUMNS = ["id", "paper", "where", "dataset", "metric", "condition", "paper_value", "reproduced", "difference",
           "tolerance", "tolerance_source", "verdict", "data", "protocol", "study", "table", "note"]
_DEFAULT_SCHEMA = Path(__file__).resolve().parents[3] / "workflow" / "schemas" / "paper_values.schema.yaml"


class PaperValuesError(ValueError):
    """paper_values.yaml does not follow its schema (one line per problem)."""


class SelectorError(KeyError):
    """A table exists but lacks the row or column an entry refers to."""

    def __str__(self):  # KeyError quotes its message; keep it readable
        return str(self.args[0]) if self.args else ""


