"""The six formulations of diffusion kernel learning (Sun, Ji & Ye 2008, Table 1).

Single- or multi-task, with or without the log term of the KL criterion, on
the simplex or without its constraints; what "unconstrained" means here:
``docs/diffusion_notes.md``.
"""

from __future__ import annotations

from dataclasses import dataclass

__all__ = ["FORMULATIONS", "Formulation"]


@dataclass(frozen=True)
class Formulation:
    """Properties of one of the paper's formulations (Table 1).

    Attributes
    ----------
    name : str
    multitask : bool
        One problem for all tasks (True) or one per task.
    log_term : bool
        Objective includes ``t log det K_x`` (KL criterion) or not.
    constrained : bool
        Weights on the simplex (``sum = 1, alpha >= 0``) or free.
    convex : bool
    source : str
        Equation / theorem of the paper.
    """

    name: str
    multitask: bool
    log_term: bool
    constrained: bool
    convex: bool
    source: str


FORMULATIONS: dict[str, Formulation] = {
    f.name: f
    for f in (
        Formulation("DKL", False, False, True, True, "Eq. 26"),
        Formulation("DKLKL", False, True, True, False, "Theorem 1 (Eq. 17-19)"),
        Formulation("DKLKLu", False, True, False, False, "Theorem 1 without constraints"),
        Formulation("mDKL", True, False, True, True, "Eq. 34"),
        Formulation("mDKLKL", True, True, True, False, "Theorem 2"),
        Formulation("mDKLKLu", True, True, False, False, "Theorem 2 without constraints"),
    )
}
