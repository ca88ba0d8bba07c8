"""Which (drug, cell line) pairs the default synthetic screen measures
(:func:`default_design`): a heavy-tailed availability with a few target cell
lines holding the most drugs, some of them unseen in the source lines."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.seeds import check_seed, make_rng
from biokernels.synth.drug_screen.common import _S_DESIGN


def default_design(n_drugs: int = 800, n_cells: int = 70, n_targets: int = 5, seed: int = 0,
                   target_drugs: tuple[int, int] = (500, 350), source_drugs: tuple[int, int] = (200, 10),
                   unseen_fraction: float = 0.35, popularity_exponent: float = 0.8) -> pd.DataFrame:
    """Which (drug, cell line) pairs are measured: heavy-tailed availability.

    * Cell lines: a random ``n_targets`` are targets with planned drug counts
      evenly from ``target_drugs[0]`` down to ``target_drugs[1]``; the other
      (source) lines get ``source_max * (source_min/source_max)^(i/(n-1))``
      (Zipf-like, log-linear in rank), each times ``exp(N(0, 0.1^2))``, in
      random order.
    * Drugs: a popularity weight ``(1 + rank)^-popularity_exponent`` over a
      random ranking. A pool of ``ceil(1.3 * max_t round(unseen_fraction *
      count_t))`` drugs is kept for targets only ("unseen" drugs); the rest
      is shared. Source lines draw their drugs from the shared pool without
      replacement, proportional to popularity; a shared drug no source line
      drew is added to one source line (chosen proportional to planned
      count). Each target line draws ``round(unseen_fraction * count)`` drugs
      from the target-only pool and the rest from the shared pool (so
      "seen" in the source task); a pool drug no target drew is added to one
      random target line. Every drug is thus measured at least once.

    Parameters
    ----------
    n_drugs, n_cells, n_targets : int
    seed : int
    target_drugs : (max, min) planned drugs per target line
    source_drugs : (max, min) planned drugs per source line
    unseen_fraction : float in [0, 1)
        Planned share of target pairs whose drug no source line has.
    popularity_exponent : float >= 0

    Returns
    -------
    DataFrame with columns ``drug`` (int index into the drug list), ``cell``
    (int index into the cell list), ``is_target`` (bool); sorted by cell then
    drug. ``attrs['target_cells']``: sorted target cell indices.

    Raises
    ------
    ValueError
        Sizes that cannot be met (pools too small) or a target line that
        would not have more drugs than every source line.
    """
    seed = check_seed(seed)
    if not 1 <= n_targets < n_cells:
        raise ValueError(f"need 1 <= n_targets < n_cells, got {n_targets}, {n_cells}")
    if not 0 <= unseen_fraction < 1 or popularity_exponent < 0:
        raise ValueError("unseen_fraction must be in [0, 1) and popularity_exponent >= 0")
    (t_max, t_min), (s_max, s_min) = target_drugs, source_drugs
    if not (1 <= t_min <= t_max and 1 <= s_min <= s_max):
        raise ValueError("target_drugs and source_drugs must be (max, min) with 1 <= min <= max")
    rng = make_rng(seed, _S_DESIGN)
    n_source = n_cells - n_targets
    order = rng.permutation(n_cells)
    targets, sources = np.sort(order[:n_targets]), order[n_targets:]
    t_counts = np.round(np.linspace(t_max, t_min, n_targets) * np.exp(rng.normal(0, 0.05, n_targets))).astype(int)
    frac = np.arange(n_source) / max(n_source - 1, 1)
    s_counts = np.round(s_max * (s_min / s_max) ** frac * np.exp(rng.normal(0, 0.1, n_source))).astype(int)
    s_counts = np.maximum(s_counts[rng.permutation(n_source)], 1)
    u_counts = np.round(unseen_fraction * t_counts).astype(int)
    n_pool = int(np.ceil(1.3 * u_counts.max())) if u_counts.max() > 0 else 0
    n_shared = n_drugs - n_pool
    if n_shared < max(s_counts.max(), (t_counts - u_counts).max()):
        raise ValueError(f"{n_drugs} drugs are too few: the target-only pool takes {n_pool} and a line needs up "
                         f"to {max(s_counts.max(), (t_counts - u_counts).max())} from the remaining {n_shared}")
    drug_perm = rng.permutation(n_drugs)
    pool, shared = drug_perm[:n_pool], drug_perm[n_pool:]
    pop = (1.0 + rng.permutation(n_drugs)) ** (-popularity_exponent)
    chosen: dict[int, set] = {}
    for cell, cnt in zip(sources, s_counts):
        p = pop[shared] / pop[shared].sum()
        chosen[int(cell)] = set(rng.choice(shared, int(cnt), replace=False, p=p).tolist())
    used = set().union(*chosen.values()) if chosen else set()
    for d in shared:
        if int(d) not in used:
            cell = int(rng.choice(sources, p=s_counts / s_counts.sum()))
            chosen[cell].add(int(d))
    for cell, cnt, u in zip(targets, t_counts, u_counts):
        seen = rng.choice(shared, int(cnt - u), replace=False, p=pop[shared] / pop[shared].sum()) if cnt > u else []
        unseen = rng.choice(pool, int(u), replace=False, p=pop[pool] / pop[pool].sum()) if u > 0 else []
        chosen[int(cell)] = set(np.concatenate([seen, unseen]).astype(int).tolist())
    used_t = set().union(*(chosen[int(c)] for c in targets))
    for d in pool:
        if int(d) not in used_t:
            chosen[int(rng.choice(targets))].add(int(d))
    rows = [(d, c) for c in sorted(chosen) for d in sorted(chosen[c])]
    design = pd.DataFrame(rows, columns=["drug", "cell"])
    design["is_target"] = design["cell"].isin(targets)
    per_cell = design.groupby("cell").size()
    if per_cell[targets].min() <= per_cell.drop(targets).max():
        raise ValueError("a target line would not have more drugs than every source line; "
                         "raise target_drugs or lower source_drugs")
    design.attrs["target_cells"] = targets.tolist()
    return design
