"""Reading and cleaning protein networks (edge lists, metabolic models).

Edge lists are tab-separated tables with two protein columns and an optional
weight column, read with pandas; adjacency matrices are ``scipy.sparse``.
Every cleaning step is counted and returned, never silent:

* self-loops are dropped (a diffusion kernel's Laplacian ignores them anyway);
* duplicate pairs (in either orientation) are merged, keeping the largest
  weight;
* negative, missing or non-numeric weights are errors naming the file and
  the row.

**Registry** (:data:`NETWORK_READERS`): a network ``format`` of the config
-> its reader, called as ``reader(path, **settings)`` with the format's
settings (keyword parameters named as in the config) and returning the
cleaned edge table and its counts. Adding a format is a reader of that shape
plus one registry line (and the format and its settings in the config
schema).
"""

from __future__ import annotations

import contextlib
import io
import re
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import TextIO

import numpy as np
import pandas as pd
import scipy.sparse as sp

from biokernels.errors import InputError
from biokernels.io.opener import open_binary
from biokernels.io.sniff import sniff


def read_edge_list(path: str | Path, source_col: str = "protein_a", target_col: str = "protein_b",
                   weight_col: str | None = None) -> tuple[pd.DataFrame, dict[str, int]]:
    """Read and clean an undirected edge list.

    Parameters
    ----------
    path : path
        Tab-separated file with a header (gzip allowed).
    source_col, target_col : str
        Columns with the two protein identifiers.
    weight_col : str, optional
        Column of non-negative weights; all weights are 1 when omitted.

    Returns
    -------
    edges : DataFrame with columns ``protein_a``, ``protein_b``, ``weight``
        (float64), one row per unordered pair, ``protein_a < protein_b``.
    counts : dict
        ``rows``, ``self_loops_dropped``, ``duplicates_merged``, ``edges``.

    Raises
    ------
    InputError
        If the file is missing, empty or malformed, a column is missing, an
        identifier is empty, a weight is missing, non-numeric, infinite or
        negative (the 1-based data row is named), or no edge remains.
    """
    table = read_table(path)
    return clean_edges(table, str(path), source_col, target_col, weight_col)


def read_table(path: str | Path, header: bool = True) -> pd.DataFrame:
    """Read a tab-separated file as strings (pandas), turning parser errors
    into :class:`InputError` naming the file and line.

    Raises
    ------
    InputError
        If the path is not a file, the file is empty, a line has more
        fields than the header, or the file (gzip, bzip2, xz or a one-file
        zip, told by its bytes) is truncated or corrupt
        (:func:`biokernels.io.opener.open_binary`).
    """
    if not Path(path).is_file():
        raise InputError(f"{path}: expected a tab-separated file, found {'a folder' if Path(path).is_dir() else 'nothing'}")
    try:
        with open_binary(path) as fh:    # gzip, bzip2, xz or a one-file zip by content; damage: InputError
            return pd.read_csv(fh, sep="\t", dtype=str, keep_default_na=False, header=0 if header else None,
                               encoding="utf-8", compression=None)
    except pd.errors.EmptyDataError:
        raise InputError(f"{path}: the file is empty (expected a tab-separated table)") from None
    except pd.errors.ParserError as err:
        raise InputError(f"{path}: cannot parse as a tab-separated table: {err}".strip()) from None


#: File-name endings that promise an uncompressed text file.
_TEXT_SUFFIXES = (".txt", ".tsv", ".tab", ".tab2", ".tab3", ".gaf", ".obo", ".csv", ".sif")
#: File-name endings that promise a compressed layout.
_COMPRESSED_SUFFIXES = {".gz": "gzip", ".zip": "zip", ".bz2": "bzip2", ".xz": "xz"}
#: Content kinds (biokernels.io.sniff.KINDS) that are a compressed layer.
_LAYERS = ("gzip", "zip", "bzip2", "xz", "zstd")
#: Content kinds no text reader here can read: not text at all, or an HTML
#: page or Git LFS pointer saved in place of the data (refused with what they
#: look like and what to do).
_REFUSED = ("excel", "hdf5", "parquet", "npy", "pickle", "binary", "utf16", "unreadable", "html", "git_lfs")


@contextlib.contextmanager
def open_text(path: str | Path, what: str, member: str | None = None) -> Iterator[TextIO]:
    """Open a text input for reading (UTF-8), plain or gzip-compressed (told
    by its first bytes, not its name) or, for a zip archive, one member.

    The name must not promise another layout: a ``.gz`` (``.zip``) file
    must be gzip (zip), and a compressed file must not be named as plain
    text (``.txt``, ``.tsv``, ``.gaf``, ``.obo``, ``.tab3``, ...); a name
    without such an ending (a download named by its checksum) is read by
    its content.

    Parameters
    ----------
    path : path
    what : str
        What the file should be, for messages (e.g. ``"a GAF 2.x file"``).
    member : str, optional
        The member to read in a zip archive (needed when it holds several).

    Yields
    ------
    TextIO
        The decompressed text, line by line.

    Raises
    ------
    InputError
        If the path is missing or a folder, the file is empty or not text
        (binary, Excel, HDF5, an HTML page, a Git LFS pointer, ...: what it
        looks like is said, by
        :func:`biokernels.io.sniff.sniff`), bzip2/xz/zstd-compressed, named
        as another layout than its content (what
        it looks like and what to do are said), a zip archive without
        ``member`` (its members listed), or ``member`` is not in it; while
        reading, a truncated or corrupt gzip or zip member (the lines read
        before the damage are said: :func:`biokernels.io.opener.guard`).
    """
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: expected {what}, found {'a folder' if path.is_dir() else 'nothing'}")
    if path.stat().st_size == 0:
        raise InputError(f"{path}: the file is empty (expected {what})")
    looks = sniff(path, member)
    if looks.body.kind in _REFUSED:
        raise InputError(f"{path}: expected {what}, found {looks}")
    kind = looks.kind if looks.kind in _LAYERS else "none"
    name = path.name.lower()
    promised = next((k for s, k in _COMPRESSED_SUFFIXES.items() if name.endswith(s)), None)
    if promised and promised != kind:
        fix = (f"rename it without {path.suffix}" if kind == "none" else
               f"rename it to end in {next(s for s, k in _COMPRESSED_SUFFIXES.items() if k == kind)}")
        raise InputError(f"{path}: named {path.suffix} but not {promised}-compressed: it looks like {looks}; "
                         f"{fix}, or give {what}")
    if kind != "none" and name.endswith(_TEXT_SUFFIXES):
        raise InputError(f"{path}: named as plain text ({path.suffix}) but {kind}-compressed ({looks}); rename it "
                         f"to {path.name}{'.gz' if kind == 'gzip' else '.zip' if kind == 'zip' else ''} "
                         f"or decompress it")
    if kind in ("bzip2", "xz", "zstd"):
        raise InputError(f"{path}: {kind}-compressed, which is not read here; decompress it (or gzip it) "
                         f"and give {what}")
    with contextlib.ExitStack() as stack:
        raw = stack.enter_context(open_binary(path, None if kind == "none" else kind, member))
        buffered = raw if isinstance(raw, io.BufferedReader) else io.BufferedReader(raw)
        head = buffered.peek(4096)[:4096]
        if b"\x00" in head:
            raise InputError(f"{path}: a binary file, not text (expected {what})")
        yield stack.enter_context(io.TextIOWrapper(buffered, encoding="utf-8", newline=""))


def clean_edges(table: pd.DataFrame, origin: str, source_col: str = "protein_a",
                target_col: str = "protein_b", weight_col: str | None = None
                ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Validate and clean an edge table already in memory (see
    :func:`read_edge_list`; ``origin`` names the file in error messages)."""
    needed = [source_col, target_col] + ([weight_col] if weight_col else [])
    missing = [c for c in needed if c not in table.columns]
    if missing:
        raise InputError(f"{origin}: missing column(s) {missing}; found {list(table.columns)}")
    a = table[source_col].astype(str).str.strip()
    b = table[target_col].astype(str).str.strip()
    empty = np.flatnonzero((a == "") | (b == ""))
    if empty.size:
        raise InputError(f"{origin}: data row {empty[0] + 1}: empty protein identifier")
    if weight_col:
        w = pd.to_numeric(table[weight_col], errors="coerce")
        bad = np.flatnonzero(w.isna().to_numpy() | ~np.isfinite(w.to_numpy(float, na_value=np.nan)))
        if bad.size:
            raise InputError(f"{origin}: data row {bad[0] + 1}, column {weight_col!r}: "
                             f"expected a finite number, got {table[weight_col].iloc[bad[0]]!r}")
        neg = np.flatnonzero((w < 0).to_numpy())
        if neg.size:
            raise InputError(f"{origin}: data row {neg[0] + 1}, column {weight_col!r}: "
                             f"negative weight {w.iloc[neg[0]]} (weights must be >= 0)")
        w = w.to_numpy(float)
    else:
        w = np.ones(len(table))
    lo = np.where(a < b, a, b)
    hi = np.where(a < b, b, a)
    edges = pd.DataFrame({"protein_a": lo, "protein_b": hi, "weight": w})
    loops = edges["protein_a"] == edges["protein_b"]
    edges = edges[~loops]
    merged = edges.groupby(["protein_a", "protein_b"], as_index=False, sort=True)["weight"].max()
    if merged.empty:
        raise InputError(f"{origin}: the network has no edges (after dropping {int(loops.sum())} self-loops)")
    counts = {"rows": len(table), "self_loops_dropped": int(loops.sum()),
              "duplicates_merged": int(len(edges) - len(merged)), "edges": len(merged)}
    return merged, counts


def adjacency_matrix(edges: pd.DataFrame, proteins: list[str] | None = None
                     ) -> tuple[list[str], sp.csr_matrix]:
    """Symmetric sparse adjacency of a cleaned edge table.

    Parameters
    ----------
    edges : DataFrame with ``protein_a``, ``protein_b``, ``weight``
    proteins : list of str, optional
        Node order; defaults to the sorted proteins of ``edges``. Proteins
        without edges may be listed (isolated nodes).

    Returns
    -------
    proteins : list of str, length n
    A : scipy.sparse.csr_matrix, shape (n, n), float64, symmetric

    Raises
    ------
    InputError
        If an edge names a protein absent from ``proteins``.
    """
    if proteins is None:
        proteins = sorted(set(edges["protein_a"]) | set(edges["protein_b"]))
    index = {p: i for i, p in enumerate(proteins)}
    unknown = (set(edges["protein_a"]) | set(edges["protein_b"])) - index.keys()
    if unknown:
        raise InputError(f"edges name {len(unknown)} protein(s) not in the node list, "
                         f"e.g. {sorted(unknown)[:3]}")
    i = edges["protein_a"].map(index).to_numpy()
    j = edges["protein_b"].map(index).to_numpy()
    w = edges["weight"].to_numpy(float)
    n = len(proteins)
    A = sp.coo_matrix((np.r_[w, w], (np.r_[i, j], np.r_[j, i])), shape=(n, n)).tocsr()
    return list(proteins), A


def component_summary(A: sp.spmatrix) -> dict[str, int]:
    """Connected components of an adjacency matrix (scipy.sparse.csgraph).

    Returns
    -------
    dict with ``components``, ``largest_component``, ``isolated_nodes``.
    """
    n_comp, lab = sp.csgraph.connected_components(A, directed=False)
    sizes = np.bincount(lab)
    deg = np.asarray((A != 0).sum(axis=1)).ravel()
    return {"components": int(n_comp), "largest_component": int(sizes.max()) if sizes.size else 0,
            "isolated_nodes": int((deg == 0).sum())}


# ---------------------------------------------------------------------------
# LIGAND-style enzyme network from a genome-scale metabolic model

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


def read_sif_network(path: str | Path, interaction_types: list[str] | None = None
                     ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Network format ``sif``: :func:`biokernels.io.pathways.read_sif` (a
    Pathway Commons SIF; ``interaction_types`` keeps those types only)."""
    from biokernels.io.pathways import read_sif  # pathways imports this module

    return read_sif(path, interaction_types=interaction_types)


def read_string_links(path: str | Path, score_threshold: float | None = 0.0
                      ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Network format ``string``: :func:`biokernels.io.pathways.read_string_network`
    (the ``human_string_v12`` layout), keeping edges with a combined score
    >= ``score_threshold`` on STRING's 0-1000 scale (0 or None: all)."""
    from biokernels.io.pathways import read_string_network  # pathways imports this module

    return read_string_network(path, score_threshold=float(score_threshold or 0))


def read_biogrid_links(path: str | Path, biogrid_system_type: str = "physical", biogrid_taxid: int | None = None,
                       biogrid_id_column: str = "entrez", biogrid_zip_member: str | None = None
                       ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Network format ``biogrid_tab3``: :func:`biokernels.io.biogrid.read_biogrid_tab3`
    (BioGRID TAB3, plain, gzip or a zip member) with the config's setting
    names: ``biogrid_system_type`` (physical, genetic, both),
    ``biogrid_taxid`` (both interactors' NCBI taxon), ``biogrid_id_column``
    (entrez, systematic, symbol, swissprot), ``biogrid_zip_member``.
    Returns and raises as that function."""
    from biokernels.io.biogrid import read_biogrid_tab3  # biogrid imports this module

    return read_biogrid_tab3(path, system_type=biogrid_system_type, taxid=biogrid_taxid,
                             id_column=biogrid_id_column, zip_member=biogrid_zip_member)


#: Network formats by the config's name (the schema's enum of a PIMKL
#: source's ``network.format`` lists exactly these keys; the diffusion
#: study's ``edgelist``, ``gem`` and ``biogrid`` sources use ``edges``,
#: ``gem`` and ``biogrid_tab3``;
#: tests/unit/test_registries.py). Each is called as ``reader(path,
#: **settings)`` and returns ``edges`` (DataFrame ``protein_a < protein_b``,
#: ``weight`` float64, one row per unordered pair) and ``counts`` (dict).
NETWORK_READERS = {
    "edges": read_edge_list,      # TSV edge list; settings source_col, target_col, weight_col
    "gem": read_gem_network,      # LIGAND-style, from a metabolic model; currency_metabolites
    "sif": read_sif_network,      # Pathway Commons SIF; interaction_types
    "string": read_string_links,  # STRING edge table; score_threshold
    "biogrid_tab3": read_biogrid_links,  # BioGRID TAB3; biogrid_system_type, biogrid_taxid, biogrid_id_column, ...
}
