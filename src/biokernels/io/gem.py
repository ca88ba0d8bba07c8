"""A LIGAND-style enzyme network from a genome-scale metabolic model (network
format ``gem``): two genes are linked when reactions they catalyse share a
metabolite that is not a currency metabolite (Vert & Kanehisa's LIGAND
network). The edge table is that of :mod:`biokernels.io.edges`.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pandas as pd

from biokernels.errors import InputError
from biokernels.io.text import read_table

__all__ = ["gene_rule_genes", "ligand_style_network", "reaction_metabolites", "read_gem_network"]

_COEF = re.compile(r"^(\d+(?:\.\d+)?(?:[eE]-?\d+)?)\s+(.*)$")
_COMPARTMENT = re.compile(r"\[[^\]]+\]$")
_ARROW = re.compile(r"\s*<?=>\s*")


def reaction_metabolites(formula: str) -> tuple[set[str], set[str]]:
    """Substrates and products of a reaction equation, compartments removed.

    ``"2 H2O[c] + ATP[c] => ADP[c] + phosphate[c]"`` gives
    ``({"H2O", "ATP"}, {"ADP", "phosphate"})``. Stoichiometric coefficients
    are dropped; ``<=>`` and ``=>`` are both accepted.

    Raises
    ------
    ValueError
        If the formula has no (or more than one) arrow.
    """
    sides = _ARROW.split(formula.strip())
    if len(sides) != 2:
        raise ValueError(f"reaction formula without a single '=>' or '<=>': {formula!r}")

    def names(side: str) -> set[str]:
        out = set()
        for term in side.split(" + "):
            term = term.strip()
            if term:
                m = _COEF.match(term)
                out.add(_COMPARTMENT.sub("", m.group(2) if m else term).strip())
        return out

    return names(sides[0]), names(sides[1])


def gene_rule_genes(rule: str) -> set[str]:
    """Gene identifiers in a boolean gene-reaction rule such as
    ``"(YDL174C and YEL039C) or YEL071W"``."""
    return {tok for tok in re.findall(r"[A-Za-z0-9_.\-]+", rule or "") if tok.lower() not in ("and", "or")}


def ligand_style_network(gem: pd.DataFrame, currency: list[str], origin: str = "<gem>",
                         formula_col: str = "Formula", rule_col: str = "Gene-reaction association"
                         ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Enzyme network in the style of Vert & Kanehisa's LIGAND network: two
    genes are linked when reactions they catalyse share a metabolite that is
    not a currency metabolite.

    Transport reactions (a metabolite on both sides once compartments are
    removed) and reactions without a gene rule are left out, and counted.

    Parameters
    ----------
    gem : DataFrame
        Reaction table of a metabolic model (yeast-GEM's ``model/*.txt``
        layout: ``Formula`` and ``Gene-reaction association`` columns).
    currency : list of str
        Metabolite names (without compartment) to ignore, e.g. H2O, ATP.
    origin : str
        File name for error messages.

    Returns
    -------
    edges : DataFrame ``protein_a``, ``protein_b``, ``weight`` (= 1)
    counts : dict with ``reactions``, ``reactions_without_genes``,
        ``transport_reactions``, ``metabolites_used``, ``genes``, ``edges``.

    Raises
    ------
    InputError
        If a column is missing or a formula cannot be parsed (row named).
    """
    for col in (formula_col, rule_col):
        if col not in gem.columns:
            raise InputError(f"{origin}: missing column {col!r}; found {list(gem.columns)}")
    currency_set = set(currency)
    by_metabolite: dict[str, set[str]] = {}
    counts = Counter(reactions=len(gem))
    for row, (formula, rule) in enumerate(zip(gem[formula_col], gem[rule_col]), start=1):
        genes = gene_rule_genes(rule if isinstance(rule, str) else "")
        if not genes:
            counts["reactions_without_genes"] += 1
            continue
        try:
            left, right = reaction_metabolites(str(formula))
        except ValueError as err:
            raise InputError(f"{origin}: data row {row}: {err}") from None
        if left & right:
            counts["transport_reactions"] += 1
            continue
        for met in (left | right) - currency_set:
            by_metabolite.setdefault(met, set()).update(genes)
    pairs = set()
    for genes in by_metabolite.values():
        g = sorted(genes)
        pairs.update((g[i], g[j]) for i in range(len(g)) for j in range(i + 1, len(g)))
    edges = pd.DataFrame(sorted(pairs), columns=["protein_a", "protein_b"])
    edges["weight"] = 1.0
    counts.update(metabolites_used=len(by_metabolite),
                  genes=len(set(edges["protein_a"]) | set(edges["protein_b"])), edges=len(edges))
    return edges, dict(counts)


def read_gem_network(path: str | Path, currency_metabolites: list[str], formula_col: str = "Formula",
                     rule_col: str = "Gene-reaction association") -> tuple[pd.DataFrame, dict[str, int]]:
    """Network format ``gem``: a LIGAND-style enzyme network
    (:func:`ligand_style_network`) from a metabolic model's reaction table.

    Parameters
    ----------
    path : path
        Tab-separated reaction table with a header (gzip allowed), e.g.
        yeast-GEM's ``model/yeast-GEM.txt``.
    currency_metabolites : list of str
        Metabolites (without compartment) that link no enzymes.
    formula_col, rule_col : str
        Columns of the reaction equation and of the gene-reaction rule.

    Returns
    -------
    edges, counts : as :func:`ligand_style_network` (weights 1).

    Raises
    ------
    InputError
        Missing/empty/unparsable file (:func:`read_table`), or what
        :func:`ligand_style_network` raises (the file is named).
    """
    return ligand_style_network(read_table(path), list(currency_metabolites), str(path), formula_col, rule_col)
