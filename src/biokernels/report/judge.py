"""Verdicts: tolerances from their stated sources, the comparison of a
reproduced number with the paper's, and the verdict text from the row's
data and protocol departures."""

from __future__ import annotations

import math
from collections.abc import Mapping

from biokernels.report.kinds import _LABELLED_KINDS, DEVIATION_LABEL, SUBSTITUTE_KINDS, VERDICT_KINDS


TOLERANCE_RULES = ("split_sd", "sd_sampling", "decision")


def resolve_tolerance(entry: Mapping, by_id: Mapping[str, Mapping]) -> tuple[float, str]:
    """``(tolerance, its source)`` of an entry.

    A number comes with the entry's ``tolerance_source`` text. A mapping
    derives it (``z`` default 1.96, a two-sided 95 % band):

    ``rule: split_sd``
        ``z * sqrt(sum sd_i^2) * sqrt(1/n_paper + 1/n_run)``, the sd_i the
        values of the paper's SD entries ``sd_entries`` (its split-to-split
        SD): the spread of the difference of the paper's mean over
        ``n_paper`` splits and this run's over ``n_run``; with two SDs, the
        spread of an effect A - B (independent A and B: an upper bound when
        they correlate positively over splits).
    ``rule: sd_sampling``
        ``z * sd * sqrt(1/(2 (n_paper - 1)) + 1/(2 (n_run - 1)))``: the
        sampling spread of an SD over n splits (normal approximation,
        SE(s) = s / sqrt(2 (n - 1))), for rows that compare SDs.
    ``rule: decision``
        ``alpha``: a p-value row is judged on the paper's decision at this
        level (both on the same side of it), not on its digits: a p-value
        is a random quantity whose spread the paper does not give.
    """
    tol = entry["tolerance"]
    if not isinstance(tol, Mapping):
        return float(tol), str(entry.get("tolerance_source", ""))
    rule, z, extra = tol["rule"], float(tol.get("z", 1.96)), tol.get("note")
    if rule == "decision":
        text = f"the paper's decision at alpha = {tol['alpha']:g} (both p-values on the same side of it)"
        return float(tol["alpha"]), text + (f"; {extra}" if extra else "")
    sds = [float(by_id[i]["value"]) for i in tol["sd_entries"]]
    sd = math.sqrt(sum(x * x for x in sds))
    n_p, n_r = int(tol.get("n_paper", 1)), int(tol.get("n_run", 1))
    names = ", ".join(f"{by_id[i]['where']} {by_id[i]['condition'].get('method', '')} {by_id[i]['value']:g}".strip()
                      for i in tol["sd_entries"])
    if rule == "split_sd":
        value = z * sd * math.sqrt(1 / n_p + 1 / n_r)
        text = (f"{z:g} x {'sqrt(sum SD^2)' if len(sds) > 1 else 'SD'} x sqrt(1/{n_p} + 1/{n_r}); SD: the paper's "
                f"split-to-split SD ({names}); the paper's over {n_p} split(s) against this run's over {n_r}")
    else:
        value = z * sd * math.sqrt(1 / (2 * (n_p - 1)) + 1 / (2 * (n_r - 1)))
        text = (f"{z:g} x SD x sqrt(1/(2({n_p}-1)) + 1/(2({n_r}-1))): the sampling spread of an SD over "
                f"{n_p} and {n_r} splits; SD: {names}")
    return value, text + (f"; {extra}" if extra else "")


def judge(reproduced: float, entry: Mapping, tolerance: float | None = None) -> tuple[float, bool]:
    """``(difference, agrees)`` of a reproduced number against the entry
    (``tolerance`` default: the entry's number).

    value ``v`` with tolerance ``t``: difference ``r - v``, agrees when
    ``|r - v| <= t``. Bound ``> b``: difference ``r - b``, agrees when
    ``r > b - t``; ``< b``: agrees when ``r < b + t``; ``within b`` (of
    ``center``, default 0): difference ``|r - center| - b``, agrees when that
    is ``<= t``. With ``scale: log10`` (p-values) both sides are compared as
    log10. A ``decision`` tolerance (:func:`resolve_tolerance`) agrees when
    ``r`` and ``v`` fall on the same side of alpha. A NaN reproduced value
    never agrees."""
    tol = float(entry["tolerance"]) if tolerance is None else float(tolerance)
    log = entry.get("scale") == "log10"

    def tr(x):
        return math.log10(max(x, 1e-300)) if log else x

    r = float(reproduced)
    if math.isnan(r):
        return math.nan, False
    if isinstance(entry.get("tolerance"), Mapping) and entry["tolerance"]["rule"] == "decision":
        v = float(entry["value"])
        return tr(r) - tr(v), (r < tol) == (v < tol)
    if "value" in entry:
        diff = tr(r) - tr(float(entry["value"]))
        return diff, abs(diff) <= tol + 1e-12
    b = entry["bound"]
    op, bv = b["op"], tr(float(b["value"]))
    if op == "within":
        diff = abs(r - float(b.get("center", 0.0))) - float(b["value"])
        return diff, diff <= tol + 1e-12
    diff = tr(r) - bv
    return diff, (diff > -tol if op == ">" else diff < tol)


def compose_verdict(agrees: bool, data: str, departures: list[str]) -> str:
    """The row's verdict from whether its numbers agree, its data (as
    :func:`_combine_data`) and its protocol departures; see the module
    docstring."""
    if data == "synthetic":
        return "not comparable on this data"
    if data.startswith("substitute"):
        return f"{SUBSTITUTE_KINDS[0 if agrees else 1]}: {data.split(':', 1)[1].strip()}"
    return label_verdict("reproduced" if agrees else "differs", "; ".join(departures))


def label_verdict(verdict: str, deviation: str | None) -> str:
    """``verdict`` itself, or for a numeric verdict (``reproduced`` /
    ``differs``) with departures from the protocol, ``"<verdict> with a
    stated deviation: <deviation>"``. ``not comparable on this data`` and
    ``not run`` are never labelled."""
    if deviation and verdict in ("reproduced", "differs"):
        return f"{verdict} {DEVIATION_LABEL}: {deviation}"
    return verdict


def verdict_kind(verdict: str) -> str:
    """The kind (one of :data:`VERDICT_KINDS`) of a verdict of the table,
    e.g. ``"reproduced with a stated deviation"`` for ``"reproduced with a
    stated deviation: beta grid ends at 0"``. ValueError for anything else."""
    head = str(verdict).split(":", 1)[0]
    if head not in VERDICT_KINDS or (head != verdict and head not in _LABELLED_KINDS):
        raise ValueError(f"verdict {verdict!r}: expected one of {VERDICT_KINDS} (with ': <text>' after "
                         f"{_LABELLED_KINDS})")
    return head


def _paper_value_text(entry: Mapping) -> str:
    if "value" in entry:
        return f"{entry['value']:g}"
    b = entry["bound"]
    if b["op"] == "within":
        c = b.get("center", 0.0)
        return f"within {b['value']:g}" + (f" of {c:g}" if c else "")
    return f"{b['op']} {b['value']:g}"


