"""The network format registry (:data:`NETWORK_READERS`): a network
``format`` of the config -> its reader, called as ``reader(path,
**settings)`` with the format's settings (keyword parameters named as in the
config) and returning the cleaned edge table and its counts
(:mod:`biokernels.io.edges`). Adding a format is a reader of that shape plus
one registry line (and the format and its settings in the config schema).

The readers live in their own modules (:mod:`~biokernels.io.edges`,
:mod:`~biokernels.io.gem`, :mod:`~biokernels.io.sif`,
:mod:`~biokernels.io.string`, :mod:`~biokernels.io.biogrid`); the text layer
they share is :mod:`biokernels.io.text`. Their public names are re-exported
here, so ``from biokernels.io.networks import ...`` keeps working.
"""

from __future__ import annotations

from pathlib import Path

import pandas as pd

from biokernels.errors import InputError
from biokernels.io.biogrid import read_biogrid_tab3
from biokernels.io.edges import adjacency_matrix, clean_edges, component_summary, read_edge_list
from biokernels.io.gem import gene_rule_genes, ligand_style_network, reaction_metabolites, read_gem_network
from biokernels.io.sif import read_sif
from biokernels.io.string import read_string_network
from biokernels.io.text import open_text, read_table

__all__ = ["InputError", "NETWORK_READERS", "adjacency_matrix", "clean_edges", "component_summary",
           "gene_rule_genes", "ligand_style_network", "open_text", "reaction_metabolites", "read_biogrid_links",
           "read_edge_list", "read_gem_network", "read_sif_network", "read_string_links", "read_table"]


def read_sif_network(path: str | Path, interaction_types: list[str] | None = None
                     ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Network format ``sif``: :func:`biokernels.io.sif.read_sif` (a
    Pathway Commons SIF; ``interaction_types`` keeps those types only)."""
    return read_sif(path, interaction_types=interaction_types)


def read_string_links(path: str | Path, score_threshold: float | None = 0.0
                      ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Network format ``string``: :func:`biokernels.io.string.read_string_network`
    (the ``human_string_v12`` layout), keeping edges with a combined score
    >= ``score_threshold`` on STRING's 0-1000 scale (0 or None: all)."""
    return read_string_network(path, score_threshold=float(score_threshold or 0))


def read_biogrid_links(path: str | Path, biogrid_system_type: str = "physical", biogrid_taxid: int | None = None,
                       biogrid_id_column: str = "entrez", biogrid_zip_member: str | None = None
                       ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Network format ``biogrid``: :func:`biokernels.io.biogrid.read_biogrid_tab3`
    (BioGRID TAB3, plain, gzip or a zip member) with the config's setting
    names: ``biogrid_system_type`` (physical, genetic, both),
    ``biogrid_taxid`` (both interactors' NCBI taxon), ``biogrid_id_column``
    (entrez, systematic, symbol, swissprot), ``biogrid_zip_member``.
    Returns and raises as that function."""
    return read_biogrid_tab3(path, system_type=biogrid_system_type, taxid=biogrid_taxid,
                             id_column=biogrid_id_column, zip_member=biogrid_zip_member)


#: Network formats by the config's name, one name per format everywhere: the
#: schema's enum of a PIMKL source's ``network.format`` lists exactly these
#: keys, and a diffusion source's ``type`` (besides ``synthetic``) is one of
#: them (:data:`biokernels.studies.diffusion.data.NETWORK_SOURCES`;
#: tests/unit/test_registries.py). Every entry keeps the reader contract of
#: tests/unit/test_registry_contracts.py. Each is called as ``reader(path,
#: **settings)`` and returns ``edges`` (DataFrame ``protein_a < protein_b``,
#: ``weight`` float64, one row per unordered pair) and ``counts`` (dict).
NETWORK_READERS = {
    "edgelist": read_edge_list,   # TSV edge list; settings source_col, target_col, weight_col
    "gem": read_gem_network,      # LIGAND-style, from a metabolic model; currency_metabolites
    "sif": read_sif_network,      # Pathway Commons SIF; interaction_types
    "string": read_string_links,  # STRING edge table; score_threshold
    "biogrid": read_biogrid_links,  # BioGRID TAB3; biogrid_system_type, biogrid_taxid, biogrid_id_column, ...
}
