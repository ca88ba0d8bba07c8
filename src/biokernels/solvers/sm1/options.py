"""Solver options of SM1: the duality-gap tolerances of a fit and its
fallback, the acceptance test of a solution, Clarabel's KKT settings, and
the default cvxpy solver.
"""

from __future__ import annotations

import functools

import numpy as np

__all__ = ["default_solver"]


# Clarabel's default duality-gap tolerance (1e-8) leaves α accurate to only ~1e-4
# on ill-conditioned kernels; 1e-10 costs 1-2 more iterations and gives ~1e-6.
# Where the interior-point method stalls short of 1e-10, Clarabel stops with
# "AlmostSolved" if its "reduced" tolerances hold; these are set to Clarabel's
# own defaults (gap 1e-8, feasibility 1e-8, k/t ratio 1e-6), so that such a stop
# meets exactly what a fresh solve at the defaults would, without a second solve.
_TIGHT_GAP = 1e-10
_DEFAULT_GAP = 1e-8
_DEFAULT_OPTS = {"CLARABEL": {"tol_gap_abs": _TIGHT_GAP, "tol_gap_rel": _TIGHT_GAP,
                              "reduced_tol_gap_abs": _DEFAULT_GAP, "reduced_tol_gap_rel": _DEFAULT_GAP,
                              "reduced_tol_feas": 1e-8, "reduced_tol_ktratio": 1e-6}}
_FALLBACK_OPTS = {"CLARABEL": {"tol_gap_abs": _DEFAULT_GAP, "tol_gap_rel": _DEFAULT_GAP}}  # defaults
# A solve is accepted only if the value its α attains, 2 Σα - max_i α'G(K_i)α / r_i · c,
# equals the reported optimum to rel 1e-6 (the unit tests' bound on values, two orders
# above the gaps; floor 1e-9 = 10x the absolute gap). Interior-point residuals of 1e-8
# can be large against τ on badly scaled problems.
_VALUE_RTOL, _VALUE_ATOL = 1e-6, 1e-9


@functools.lru_cache(maxsize=1)
def _clarabel_kkt_opts() -> dict:
    """Clarabel's KKT factorization: faer's supernodal LDL (one thread) when
    this build of Clarabel has it, else its default (QDLDL). The shared basis
    makes a dense block, where faer is faster with the same weights to 1e-9
    (measured: docs/diffusion_notes.md); builds without the faer feature
    (some conda packages) reject the setting, so it is tried once on a
    1-variable problem."""
    try:
        import clarabel
        import scipy.sparse as sp

        settings = clarabel.DefaultSettings()
        settings.verbose = False
        settings.direct_solve_method = "faer"
        settings.max_threads = 1
        clarabel.DefaultSolver(sp.csc_matrix((1, 1)), np.zeros(1), sp.csc_matrix(np.ones((1, 1))),
                               np.ones(1), [clarabel.NonnegativeConeT(1)], settings).solve()
    except Exception:       # noqa: BLE001 - any failure means: keep Clarabel's default
        return {}
    return {"direct_solve_method": "faer", "max_threads": 1}


def _solver_defaults(solver: str, table: dict) -> dict:
    """The options of ``table`` for ``solver``, with the KKT settings of
    :func:`_clarabel_kkt_opts` for Clarabel."""
    opts = dict(table.get(solver.upper(), {}))
    return {**opts, **_clarabel_kkt_opts()} if opts and solver.upper() == "CLARABEL" else opts


def default_solver() -> str:
    """Name of the cvxpy solver SM1 uses when none is given.

    The first installed of Clarabel, ECOS, SCS (all handle second-order cones;
    Clarabel and ECOS are interior-point methods with accurate duals, SCS is
    first-order and less accurate).

    Returns
    -------
    str
        A cvxpy solver name, e.g. ``"CLARABEL"``.

    Raises
    ------
    RuntimeError
        If none of them is installed.
    """
    import cvxpy as cp

    installed = set(cp.installed_solvers())
    for name in ("CLARABEL", "ECOS", "SCS"):
        if name in installed:
            return name
    raise RuntimeError(f"no second-order-cone solver installed (have {sorted(installed)}); "
                       "install clarabel")
