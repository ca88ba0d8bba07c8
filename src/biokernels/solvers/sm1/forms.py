"""The cone programs of SM1 (Lanckriet et al., JMLR 2004, Sec. 4):

    max_{α, τ}  2 α'e - τ   s.t.  τ >= (c / r_i) ||F_i' U'(y∘α)||²,  α'y = 0,  0 <= α <= C,

each kernel ``K_i[tr, tr] = (U F_i)(U F_i)'`` rescaled to ``(c / r_i) K_i``
(``r_i`` its full trace), so the p cone multipliers ``ν_i`` sum to 1 and
the weights are ``μ_i = ν_i c / r_i``. ``per_kernel``: one second-order cone
per kernel; ``elementwise`` (diagonal factors with a shared basis): m rotated
3-dimensional cones and p linear rows, the same feasible set without the
dense KKT block of p large cones. :class:`QCQPForms` holds them as methods
of :class:`biokernels.solvers.sm1.SM1`. Derivation: docs/diffusion_notes.md.
"""

from __future__ import annotations

import math

import numpy as np

__all__ = ["QCQPForms"]


class QCQPForms:
    """The cvxpy forms of SM1's QCQP and the value a solution attains; a base
    of :class:`biokernels.solvers.sm1.SM1` (reads ``self.rank_rtol``)."""

    @staticmethod
    def _attained(factors, y, U, r, c, C, alpha) -> float:
        """The QCQP's objective at ``α`` (clipped to ``[0, C]``):
        ``2 Σ α - c max_i ||F_i' U'(y∘α)||² / r_i``, the SVM criterion the
        returned solution attains, independent of the solver's ``τ``."""
        a = np.clip(np.asarray(alpha, dtype=np.float64), 0.0, C)
        base = y * a if U is None else U.T @ (y * a)
        q = [float(np.sum((F * base) ** 2)) if F.ndim == 1 else float(np.sum((F.T @ base) ** 2))
             for F in factors]
        return float(2 * a.sum() - c * max(qi / ri for qi, ri in zip(q, r)))

    def _problem(self, form, factors, y, U, r, c, C):
        """The cvxpy problem of :meth:`fit_factors` in ``form``, each kernel
        rescaled to ``(c / r_i) K_i`` so the multipliers sum to 1. Returns
        ``(problem, alpha, the equality α'y = 0, the p kernel constraints)``."""
        import cvxpy as cp

        n, m = y.size, (y.size if U is None else U.shape[1])
        alpha = cp.Variable(n, name="alpha")
        tau = cp.Variable(name="tau")
        z = cp.multiply(y, alpha)
        cons = []
        if U is not None:
            w = cp.Variable(m, name="w")
            cons.append(w == U.T @ z)
        base = z if U is None else w
        if form.startswith("elementwise"):
            kernel_cons, cones = self._diagonal_constraints(factors, r, c, base, tau,
                                                            column_scale=form == "elementwise")
            cons += cones
        else:
            kernel_cons = []
            for i, F in enumerate(factors):
                scale = math.sqrt(c / r[i])
                if F.ndim == 1:                   # a diagonal factor, as one cone
                    keep = np.flatnonzero(F ** 2 > self.rank_rtol * np.max(F ** 2, initial=0.0))
                    expr = cp.multiply(scale * F[keep], base[keep]) if keep.size else None
                else:
                    expr = (scale * F).T @ base if F.shape[1] else None
                kernel_cons.append(tau >= 0 if expr is None else cp.sum_squares(expr) <= tau)
        eq = y @ alpha == 0
        prob = cp.Problem(cp.Maximize(2 * cp.sum(alpha) - tau),
                          cons + kernel_cons + [eq, alpha >= 0, alpha <= C])
        return prob, alpha, eq, kernel_cons

    def _diagonal_constraints(self, factors, r, c, base, tau, column_scale=True):
        """The p kernel constraints ``τ >= Σ_j S_ij base_j²``,
        ``S_ij = (c / r_i) F_ij² >= 0``, for diagonal factors, in the
        elementwise form: with column scales ``t_j = max_i S_ij`` (1 when not
        ``column_scale``) and ``x_j = sqrt(t_j) base_j``,

            x_j² <= τ f_j   (m rotated cones of dimension 3, homogeneous),
            Σ_j (S_ij / t_j) f_j <= 1   (p linear rows).

        The same feasible ``(α, τ)`` as ``τ >= Σ_j S_ij base_j²``: given those
        rows and cones, ``Σ_j S_ij base_j² <= τ Σ_j (S_ij / t_j) f_j <= τ``;
        conversely ``f_j = x_j² / τ`` is feasible (``S >= 0``). Row i is
        constraint i divided by ``τ``, so its multiplier is ``τ ν_i``:
        normalised to sum 1 they are the ``ν``. The interior-point KKT system
        then has no dense block of the p cones of dimension m + 2. No constants
        enter the cones: the form ``f_j >= x_j²`` (cvxpy's square, a cone
        with the constant 1) stalled short of 1e-8 on 2 of 4 tasks where
        this one solved all 4. Components with ``F_ij² <= rank_rtol max_j
        F_ij²`` are dropped, as in the cone form.

        Returns ``(rows, cones)``: a list holding the one vector constraint of
        the p rows (its dual value is proportional to ``ν``), and the list of
        the cones."""
        import cvxpy as cp

        S = np.vstack([(c / r[i]) * F ** 2 for i, F in enumerate(factors)])     # (p, m)
        top = S.max(axis=1, keepdims=True)
        S = np.where(S > self.rank_rtol * top, S, 0.0)
        used = np.flatnonzero(S.max(axis=0) > 0)
        if used.size == 0:
            return [tau >= np.zeros(len(factors))], []
        top = S[:, used].max(axis=0) if column_scale else np.ones(used.size)   # S / top in [0, 1]
        x = cp.multiply(np.sqrt(top), base[used])
        f = cp.Variable(used.size, name="f")
        cone = cp.SOC(tau + f, cp.vstack([2 * x, tau - f]), axis=0)     # x_j² <= τ f_j
        return [(S[:, used] / top) @ f <= 1], [cone]
