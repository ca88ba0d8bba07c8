"""Gene sets (GMT) and gene-level interaction networks (STRING, Pathway
Commons SIF) for pathway-induced kernels (PIMKL, Manica et al. 2019,
Section 2.1-2.2 and Supplementary S.1).

Networks come out as the edge table of :mod:`biokernels.io.networks`
(columns ``protein_a < protein_b``, ``weight``; one row per unordered pair;
here the "proteins" are gene symbols), so :func:`~biokernels.io.networks.adjacency_matrix`
and :func:`biokernels.kernels.pathway.induce_pathways` take them as they are.
Every cleaning step is counted and returned (and logged), never silent;
malformed input raises :class:`~biokernels.io.networks.InputError` naming the
file, the 1-based line or data row, the field and what was expected.
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.networks import clean_edges, read_table
from biokernels.io.opener import open_text

log = logging.getLogger(__name__)

#: STRING v12 evidence channels (columns of the protein.links.full files and of
#: the ``human_string_v12`` extract), in file order.
STRING_CHANNELS = ("neighborhood", "neighborhood_transferred", "fusion", "cooccurence", "homology",
                   "coexpression", "coexpression_transferred", "experiments", "experiments_transferred",
                   "database", "database_transferred", "textmining", "textmining_transferred")

#: STRING's prior probability of a random protein pair interacting (used to
#: prior-correct channel scores before combining them; von Mering et al. 2005).
STRING_PRIOR = 0.041

#: Column names of the known SIF-like layouts, as (source, type, target).
_SIF_HEADERS = (("a.gn", "type", "b.gn"),                                   # SingleCellSignalR PwC extract
                ("PARTICIPANT_A", "INTERACTION_TYPE", "PARTICIPANT_B"))     # Pathway Commons extended SIF


def _open_text(path: str | Path):
    path = Path(path)
    if not path.is_file():
        raise InputError(f"{path}: expected a file, found {'a folder' if path.is_dir() else 'nothing'}")
    # gzip when named .gz, as before; a truncated or corrupt stream: InputError (biokernels.io.opener)
    return open_text(path, "gzip" if path.suffix == ".gz" else None, newline="")


# ---------------------------------------------------------------------------
# GMT

def read_gmt(path: str | Path, with_counts: bool = False
             ) -> dict[str, list[str]] | tuple[dict[str, list[str]], dict[str, int]]:
    """Read a GMT gene-set file (MSigDB layout).

    Each non-blank line is ``name<TAB>description<TAB>gene1<TAB>gene2...``.
    Blank lines (and lines with only whitespace) are skipped; surrounding
    whitespace of every field is stripped and empty gene fields (trailing
    tabs) are ignored. A gene listed twice in a set is kept once (first
    position), and counted and logged.

    Parameters
    ----------
    path : path
        GMT file (gzip allowed, ``.gz``).
    with_counts : bool
        Also return the counts.

    Returns
    -------
    gene_sets : dict str -> list of str
        Ordered as in the file; genes in file order, de-duplicated.
    counts : dict, only if ``with_counts``
        ``sets``, ``gene_entries`` (after de-duplication),
        ``unique_genes``, ``duplicate_genes_dropped``,
        ``sets_with_duplicates``.

    Raises
    ------
    InputError
        If the file is missing or holds no set, a line has fewer than 2
        tab-separated fields or an empty name, a set lists no gene, a gene
        field holds whitespace (space-separated genes), or a set name appears
        twice (the 1-based line of both is named).
    """
    sets: dict[str, list[str]] = {}
    first_line: dict[str, int] = {}
    dup_genes = 0
    sets_with_dup = 0
    with _open_text(path) as fh:
        for lineno, raw in enumerate(fh, start=1):
            line = raw.rstrip("\r\n")
            if not line.strip():
                continue
            fields = [f.strip() for f in line.split("\t")]
            if len(fields) < 2:
                raise InputError(f"{path}: line {lineno}: expected at least 2 tab-separated fields "
                                 f"(name, description, genes...), found {len(fields)}")
            name = fields[0]
            if not name:
                raise InputError(f"{path}: line {lineno}, field 1 (set name): expected a name, found an empty field")
            if name in sets:
                raise InputError(f"{path}: line {lineno}, field 1 (set name): duplicate set name {name!r} "
                                 f"(first on line {first_line[name]})")
            genes = [g for g in fields[2:] if g]
            spaced = [g for g in genes if any(ch.isspace() for ch in g)]
            if spaced:
                raise InputError(f"{path}: line {lineno}, set {name!r}: gene field {spaced[0]!r} holds "
                                 "whitespace; GMT separates genes by tabs (space-separated genes "
                                 "would be read as one gene)")
            if not genes:
                raise InputError(f"{path}: line {lineno}: set {name!r} lists no gene "
                                 f"(expected genes from field 3 on)")
            unique = list(dict.fromkeys(genes))
            if len(unique) < len(genes):
                dup_genes += len(genes) - len(unique)
                sets_with_dup += 1
            sets[name] = unique
            first_line[name] = lineno
    if not sets:
        raise InputError(f"{path}: no gene set found (expected lines 'name<TAB>description<TAB>genes...')")
    if dup_genes:
        log.warning("%s: %d duplicated gene entries dropped in %d set(s)", path, dup_genes, sets_with_dup)
    counts = {"sets": len(sets), "gene_entries": sum(len(g) for g in sets.values()),
              "unique_genes": len(set().union(*map(set, sets.values()))),
              "duplicate_genes_dropped": dup_genes, "sets_with_duplicates": sets_with_dup}
    return (sets, counts) if with_counts else sets


def write_gmt(gene_sets: dict[str, list[str]], path: str | Path,
              descriptions: dict[str, str] | None = None) -> None:
    """Write gene sets as GMT (``name<TAB>description<TAB>genes...``).

    Parameters
    ----------
    gene_sets : dict str -> list of str
        Non-empty sets; names and genes without tabs or newlines.
    path : path
        Output file (folders are created).
    descriptions : dict str -> str, optional
        Second field per set; ``"na"`` when absent.

    Raises
    ------
    ValueError
        If a set is empty or a name/gene is empty or holds a tab or newline.
    """
    bad = lambda s: (not s) or any(c in s for c in "\t\r\n")  # noqa: E731
    lines = []
    for name, genes in gene_sets.items():
        genes = list(genes)
        if bad(name):
            raise ValueError(f"gene set name {name!r} is empty or holds a tab/newline")
        if not genes:
            raise ValueError(f"gene set {name!r} is empty")
        wrong = [g for g in genes if bad(str(g))]
        if wrong:
            raise ValueError(f"gene set {name!r}: gene {wrong[0]!r} is empty or holds a tab/newline")
        desc = (descriptions or {}).get(name, "na")
        lines.append("\t".join([name, desc, *map(str, genes)]))
    Path(path).parent.mkdir(parents=True, exist_ok=True)
    Path(path).write_text("\n".join(lines) + "\n", encoding="utf-8")


# ---------------------------------------------------------------------------
# STRING

def _n_genes(edges: pd.DataFrame) -> int:
    return int(pd.unique(np.concatenate([edges["protein_a"].to_numpy(object),
                                         edges["protein_b"].to_numpy(object)])).size)


#: A STRING read warns when more than this fraction of its rows has an
#: identifier the mapping does not know (a wrong or partial mapping file).
UNMAPPED_WARN_FRACTION = 0.25


def _read_mapping(mapping: dict[str, str] | str | Path) -> tuple[dict[str, str], str]:
    """Identifier -> symbol dict and a description of where it came from
    (the file and its two columns, or "a dict of N identifiers")."""
    if isinstance(mapping, dict):
        return {str(k): str(v) for k, v in mapping.items()}, f"the mapping dict ({len(mapping)} identifiers)"
    table = read_table(mapping)
    if table.shape[1] < 2:
        raise InputError(f"{mapping}: expected 2 columns (identifier, gene symbol), found {table.shape[1]}")
    ids = table.iloc[:, 0].str.strip()
    sym = table.iloc[:, 1].str.strip()
    keep = (ids != "") & (sym != "")
    dup = ids[keep].duplicated(keep=False)
    if dup.any():
        raise InputError(f"{mapping}: identifier {ids[keep][dup].iloc[0]!r} is mapped more than once "
                         f"(expected one symbol per identifier)")
    where = (f"{mapping} (column {table.columns[0]!r} -> {table.columns[1]!r}, "
             f"{int(keep.sum())} identifiers)")
    return dict(zip(ids[keep], sym[keep])), where


def combine_string_scores(channel_scores: np.ndarray, prior: float = STRING_PRIOR) -> np.ndarray:
    """Combine STRING channel scores into one confidence, STRING's way.

    Each channel score ``s`` (0-1) is prior-corrected,
    ``s' = max(s - p, 0) / (1 - p)``, the channels are combined as
    independent evidence, ``c' = 1 - prod(1 - s')``, and the prior is added
    back, ``c = c' + p (1 - c')`` (von Mering et al. 2005; STRING's
    ``combine_subscores``). STRING's homology correction of the
    co-occurrence and text-mining channels is not applied, so on all
    channels the result is close to, not equal to, ``combined_score``.

    Parameters
    ----------
    channel_scores : ndarray, shape (n_edges, n_channels)
        Scores on the 0-1 scale (STRING's 0-999 divided by 1000).
    prior : float

    Returns
    -------
    ndarray, shape (n_edges,), in [prior, 1]
    """
    s = np.clip((np.asarray(channel_scores, float) - prior) / (1.0 - prior), 0.0, 1.0)
    c = 1.0 - np.prod(1.0 - s, axis=1)
    return c + prior * (1.0 - c)


def read_string_network(links_path: str | Path, score_threshold: float = 0.0,
                        channels: list[str] | None = None,
                        id_cols: tuple[str, str] = ("symbol_a", "symbol_b"),
                        mapping: dict[str, str] | str | Path | None = None,
                        score_col: str = "combined_score") -> tuple[pd.DataFrame, dict[str, int]]:
    """Read a STRING edge table into a gene-symbol weighted edge table.

    The default layout is the ``human_string_v12`` extract (dmfind's STRING
    v12 igraph object, ``string_v12_human_entrez_symbol_700_400k3.tsv.gz``):
    tab-separated with a header ``entrez_a, entrez_b, symbol_a, symbol_b``,
    the STRING channel columns and ``combined_score`` (0-999). A STRING
    download (``protein.links[.full].v12.0.txt.gz``: space-separated
    ``protein1 protein2 ... combined_score``) works with
    ``id_cols=("protein1", "protein2")`` and ``mapping`` (Ensembl protein id ->
    symbol, e.g. from ``protein.info``'s ``#string_protein_id,
    preferred_name``), after converting spaces to tabs.

    Weight = score / 1000 (so in [0, 1)). With ``channels``, the score is
    recomputed from those channels only (:func:`combine_string_scores`);
    otherwise ``score_col`` is used.

    Parameters
    ----------
    links_path : path
        Tab-separated edge table with a header (gzip allowed).
    score_threshold : float
        Keep edges with score >= this, on STRING's 0-1000 scale (e.g. 700
        for "high confidence"); 0 keeps all.
    channels : list of str, optional
        Channel columns to combine (see :data:`STRING_CHANNELS`).
    id_cols : (str, str)
        The two identifier columns.
    mapping : dict or path, optional
        Identifier -> gene symbol (a dict, or a 2-column TSV with header).
        Edges with an unmapped end are dropped and counted; more than
        :data:`UNMAPPED_WARN_FRACTION` of the rows dropped so is logged as a
        warning (counts, the mapping file and columns, example identifiers).
    score_col : str
        Combined-score column when ``channels`` is None.

    Returns
    -------
    edges : DataFrame ``protein_a``, ``protein_b`` (gene symbols,
        ``protein_a < protein_b``), ``weight`` (float64, score / 1000)
    counts : dict
        ``rows``, ``unmapped_dropped``, ``below_threshold``,
        ``self_loops_dropped`` (after symbol mapping, e.g. two ids of one
        gene), ``duplicates_merged`` (largest weight kept), ``edges``,
        ``genes``.

    Raises
    ------
    InputError
        If the file or a column is missing, an identifier is empty, or a
        score is missing, non-numeric, negative or above 1000 (the 1-based
        data row and column are named), no row has both identifiers mapped
        (the row count, the identifier columns and the mapping file and
        columns are named), or no edge remains.
    ValueError
        If ``score_threshold`` is in (0, 1) (the 0-1 scale) or above 1000.
    """
    if not (score_threshold == 0 or 1 <= score_threshold <= 1000):
        raise ValueError(f"{links_path}: score_threshold {score_threshold!r}: expected 0 or a value on "
                         "STRING's 0-1000 scale (e.g. 700 for high confidence); a value in (0, 1) looks "
                         "like the 0-1 scale and would keep every edge")
    table = read_table(links_path)
    cols = [*id_cols, *(channels if channels else [score_col])]
    missing = [c for c in cols if c not in table.columns]
    if missing:
        raise InputError(f"{links_path}: missing column(s) {missing}; found {list(table.columns)}")
    scores = []
    for col in cols[2:]:
        v = pd.to_numeric(table[col].str.strip(), errors="coerce").to_numpy(float)
        bad = np.flatnonzero(~np.isfinite(v) | (v < 0) | (v > 1000))
        if bad.size:
            raise InputError(f"{links_path}: data row {bad[0] + 1}, column {col!r}: expected a score "
                             f"in [0, 1000], got {table[col].iloc[bad[0]]!r}")
        scores.append(v)
    if channels:
        score = 1000.0 * combine_string_scores(np.column_stack(scores) / 1000.0)
    else:
        score = scores[0]
    a = table[id_cols[0]].str.strip()
    b = table[id_cols[1]].str.strip()
    empty = np.flatnonzero(((a == "") | (b == "")).to_numpy())
    if empty.size:
        raise InputError(f"{links_path}: data row {empty[0] + 1}: empty identifier in {list(id_cols)}")
    counts = {"rows": len(table), "unmapped_dropped": 0}
    if mapping is not None:
        m, where = _read_mapping(mapping)
        ids_a, ids_b = a, b
        a, b = a.map(m), b.map(m)
        unmapped = (a.isna() | b.isna()).to_numpy()
        n_unmapped = int(unmapped.sum())
        counts["unmapped_dropped"] = n_unmapped
        if n_unmapped:
            bad_ids = pd.unique(np.concatenate([ids_a[a.isna()].to_numpy(object),
                                                ids_b[b.isna()].to_numpy(object)]))
            example = (f"identifiers of columns {list(id_cols)} such as {list(bad_ids[:3])} "
                       f"({len(bad_ids)} distinct unmapped) against mapping keys such as {list(m)[:3]}")
            if n_unmapped == len(table):
                raise InputError(f"{links_path}: every one of the {len(table)} rows has an identifier that "
                                 f"{where} does not map to a gene symbol: {example}; check that the mapping's "
                                 f"first column holds the identifiers of {list(id_cols)}")
            if n_unmapped > UNMAPPED_WARN_FRACTION * len(table):
                log.warning("%s: %d of %d rows (%.0f%%) dropped: an identifier not mapped by %s; %s",
                            links_path, n_unmapped, len(table), 100.0 * n_unmapped / len(table), where, example)
        a, b, score = a[~unmapped], b[~unmapped], score[~unmapped]
    keep = score >= score_threshold
    counts["below_threshold"] = int((~keep).sum())
    sub = pd.DataFrame({"a": a.to_numpy()[keep], "b": b.to_numpy()[keep], "w": score[keep] / 1000.0})
    edges, c = clean_edges(sub, str(links_path), "a", "b", "w")
    counts.update(self_loops_dropped=c["self_loops_dropped"], duplicates_merged=c["duplicates_merged"],
                  edges=c["edges"], genes=_n_genes(edges))
    log.info("%s: STRING network %s", links_path, counts)
    return edges, counts


# ---------------------------------------------------------------------------
# Pathway Commons SIF

def read_sif(path: str | Path, interaction_types: list[str] | None = None
             ) -> tuple[pd.DataFrame, dict[str, int]]:
    """Read a Pathway Commons SIF file as an undirected, unweighted gene network.

    Three layouts are recognised from the first line:

    * a header ``a.gn, b.gn, type[, pathway...]`` (the
      ``human_pathwaycommons_reactome_kegg`` extract);
    * a header ``PARTICIPANT_A, INTERACTION_TYPE, PARTICIPANT_B[, ...]``
      (Pathway Commons extended SIF; only its first block, up to the first
      blank line, is read);
    * no header: plain SIF, ``source<TAB>type<TAB>target`` per line.

    Direction and type are dropped (PIMKL uses undirected sub-networks,
    Section 2.1); every edge gets weight 1.0. Pathway Commons also lists
    small molecules (ChEBI ids) as participants: pass a symbol-level file or
    filter them before (they simply never match a gene set).

    Parameters
    ----------
    path : path
        Tab-separated file (gzip allowed).
    interaction_types : list of str, optional
        Keep only these SIF types (e.g. ``["in-complex-with",
        "controls-state-change-of"]``); all when None.

    Returns
    -------
    edges : DataFrame ``protein_a``, ``protein_b`` (``protein_a <
        protein_b``), ``weight`` (1.0)
    counts : dict
        ``rows``, ``type_filtered`` (rows dropped by ``interaction_types``),
        ``self_loops_dropped``, ``duplicates_merged`` (same unordered pair
        with another type or direction), ``edges``, ``genes``, and
        ``type:<name>`` rows per interaction type in the file.

    Raises
    ------
    InputError
        If the file is missing or empty, a line has fewer than 3 fields, a
        participant or type is empty (1-based line named), a requested type
        is absent from the file, or no edge remains.
    """
    with _open_text(path) as fh:
        lines = fh.read().split("\n")
    lines = [ln.rstrip("\r") for ln in lines]
    first = lines[0].split("\t") if lines else [""]
    header = next((h for h in _SIF_HEADERS if set(h) <= set(first)), None)
    if header is None:
        col, start = (0, 1, 2), 0
    else:
        col, start = tuple(first.index(h) for h in header), 1
    nf = max(col) + 1
    rows, linenos = [], []
    for k in range(start, len(lines)):
        line = lines[k]
        if not line.strip():
            if header == _SIF_HEADERS[1]:
                break  # extended SIF: the node block follows a blank line
            continue
        f = line.split("\t", nf)
        if len(f) < nf:
            raise InputError(f"{path}: line {k + 1}: expected at least {nf} tab-separated "
                             f"fields (source, type, target), found {len(f)}")
        rows.append((f[col[0]].strip(), f[col[1]].strip(), f[col[2]].strip()))
        linenos.append(k + 1)
    if not rows:
        raise InputError(f"{path}: no interaction found (expected 'source<TAB>type<TAB>target' lines)")
    table = pd.DataFrame(rows, columns=["a", "type", "b"], dtype=object)
    for k, what in (("a", "source"), ("type", "interaction type"), ("b", "target")):
        empty = (table[k] == "").to_numpy()
        if empty.any():
            raise InputError(f"{path}: line {linenos[int(np.flatnonzero(empty)[0])]}: empty {what} field")
    type_counts = table["type"].value_counts()
    counts: dict[str, int] = {"rows": len(table), "type_filtered": 0}
    if interaction_types is not None:
        absent = sorted(set(interaction_types) - set(type_counts.index))
        if absent:
            raise InputError(f"{path}: interaction type(s) {absent} not in the file; "
                             f"found {sorted(type_counts.index)}")
        keep = table["type"].isin(interaction_types)
        counts["type_filtered"] = int((~keep).sum())
        table = table[keep]
    edges, c = clean_edges(table, str(path), "a", "b", None)
    counts.update(self_loops_dropped=c["self_loops_dropped"], duplicates_merged=c["duplicates_merged"],
                  edges=c["edges"], genes=_n_genes(edges))
    counts.update({f"type:{k}": int(v) for k, v in type_counts.items()})
    log.info("%s: SIF network %s", path, counts)
    return edges, counts
