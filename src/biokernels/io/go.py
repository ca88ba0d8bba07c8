"""Gene Ontology annotations (GAF 2.x) and the ontology (OBO) as a multi-label
protein-function table: one task per GO term.

Sources
-------
* GO Consortium, *GO Annotation File (GAF) format 2.2* and *2.1*
  (https://geneontology.org/docs/go-annotation-file-gaf-format-2.2/): a
  first line ``!gaf-version: 2.x`` (member databases such as SGD, MGI and
  PomBase write other ``!`` lines before it), ``!`` comment lines, 17
  tab-separated columns (:data:`GAF_COLUMNS`; 15 or 16 when the optional
  columns 16-17 are left off), column 4 the qualifier (2.2: a relation such
  as ``enables``, ``involved_in``, ``located_in``, optionally ``NOT|``
  before it; 2.1: empty, ``NOT``, ``contributes_to``, ``colocalizes_with``),
  column 7 the evidence code, column 9 the aspect (``P``, ``F``, ``C``),
  column 11 ``|``-separated synonyms, column 13 ``taxon:N`` (a second
  ``|taxon:M`` names an interacting organism).
* The ontology in OBO 1.2/1.4 (e.g. ``go-basic.obo`` of a GO release), read
  with obonet (a maintained OBO parser into a networkx graph; Himmelstein
  et al.).
* GO's propagation rules ("true path"): a positive annotation to a term
  holds for every ancestor over ``is_a`` and ``part_of``; a NOT annotation
  propagates the other way, to every descendant (GO docs, "Annotations
  with the NOT qualifier"; the Alliance/GO help article "Transitivity in
  GO: most annotations go up, but NOT all do").

The rules applied here (stated once)
------------------------------------
* **Filters first.** Rows of another aspect, another organism (when a
  taxon is set: the first taxon of column 13) or an evidence code left out
  (IEA unless ``include_iea``; codes outside ``evidence_include`` when
  given; codes in ``evidence_exclude``) are dropped and counted, NOT rows
  included: a filtered-out NOT row blocks nothing.
* **Terms.** A secondary id (an ``alt_id`` of the OBO) is replaced by its
  primary term, and an obsolete term with a single live ``replaced_by`` by
  that term (GO's repair of merged and obsoleted terms, GORULE:0000020),
  both counted; rows to other obsolete terms, to ids absent from the OBO,
  or to a term of another namespace than the row's aspect are dropped and
  counted.
* **NOT.** A NOT row is never a positive. Following GO, a NOT annotation
  of a protein to term T also holds for every descendant of T (over
  ``is_a`` and ``part_of``): the protein's positive annotations to T or to
  a descendant of T, whatever their evidence, are contradicted and dropped
  (counted as ``pairs_blocked_by_not``); they propagate nowhere. Its other
  positives propagate as usual and may reach T's ancestors (a NOT says
  nothing about them), never T or its descendants.
* **Propagation.** The remaining positives propagate to every ancestor
  over ``is_a`` and ``part_of`` within the aspect's namespace (other
  relations such as ``regulates`` or ``has_part`` are not followed, as in
  ``go-basic.obo``).
* **Identifiers.** The network's protein ids are matched to one GAF column
  (``id_column``): ``DB_Object_ID`` (e.g. UniProt accessions in GOA, SGD ids
  in SGD's file), ``DB_Object_Symbol`` (gene symbols) or
  ``DB_Object_Synonym`` (any of the ``|``-separated synonyms, e.g. yeast
  ORF names in SGD's file). A network id carried by several GAF objects
  takes the union of their annotations (counted and logged); GAF objects
  that match no network protein are counted.
* **Term-size window.** After propagation, a term is a task when between
  ``min_annotated`` and ``max_annotated`` network proteins carry it;
  the others are counted.

Every drop is counted in the returned counts table (and logged); illegal
GAF lines are skipped and counted (``illegal_lines_skipped``) up to 1 % of
the annotation lines (:data:`MAX_ILLEGAL_SHARE`), as goatools' GAF reader
reads past them; above that the file is refused, naming them.
"""

from __future__ import annotations

import io
import logging
import re
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from biokernels.errors import InputError
from biokernels.io.networks import open_text
from biokernels.io.sniff import describe_content

log = logging.getLogger(__name__)

#: The 17 columns of GAF 2.x, in order (GAF 2.2 spec names).
GAF_COLUMNS = ("DB", "DB_Object_ID", "DB_Object_Symbol", "Qualifier", "GO_ID", "DB_Reference",
               "Evidence_Code", "With_From", "Aspect", "DB_Object_Name", "DB_Object_Synonym",
               "DB_Object_Type", "Taxon", "Date", "Assigned_By", "Annotation_Extension",
               "Gene_Product_Form_ID")
#: The columns kept in memory by :func:`read_gaf` (0-based indices into GAF_COLUMNS).
_KEEP = (0, 1, 2, 3, 4, 6, 8, 10, 12)
#: GO evidence codes (GO's "Guide to GO evidence codes"; IMR, replaced by
#: IKR, still occurs in older files).
EVIDENCE_CODES = frozenset({
    "EXP", "IDA", "IPI", "IMP", "IGI", "IEP",          # experimental
    "HTP", "HDA", "HMP", "HGI", "HEP",                 # high-throughput
    "IBA", "IBD", "IKR", "IRD", "IMR",                 # phylogenetic
    "ISS", "ISO", "ISA", "ISM", "IGC", "RCA",          # computational
    "TAS", "NAS", "IC", "ND",                          # author, curator, no data
    "IEA",                                             # electronic
})
#: Relations of the GAF qualifier column (2.2 gene-product-to-term relations,
#: plus 2.1's contributes_to and colocalizes_with which 2.2 keeps).
QUALIFIER_RELATIONS = frozenset({
    "enables", "contributes_to", "involved_in", "acts_upstream_of", "acts_upstream_of_positive_effect",
    "acts_upstream_of_negative_effect", "acts_upstream_of_or_within",
    "acts_upstream_of_or_within_positive_effect", "acts_upstream_of_or_within_negative_effect",
    "located_in", "part_of", "is_active_in", "colocalizes_with",
})
#: GAF aspect -> the OBO namespace of its terms.
ASPECTS = {"P": "biological_process", "F": "molecular_function", "C": "cellular_component"}
#: GAF columns that may hold the network's protein ids.
ID_COLUMNS = ("DB_Object_ID", "DB_Object_Symbol", "DB_Object_Synonym")
#: Relations annotations propagate over (child -> parent).
PROPAGATION_RELATIONS = ("is_a", "part_of")

_GO_ID = re.compile(r"GO:\d{7}")
_TAXON = re.compile(r"taxon:(\d+)(\|taxon:\d+)?")


# --------------------------------------------------------------------------- the ontology

@dataclass(frozen=True)
class Ontology:
    """The Gene Ontology as the propagation needs it.

    Attributes
    ----------
    terms : Index of str, length n
        Primary ids of the non-obsolete terms, sorted.
    namespace : ndarray of str, shape (n,)
        Each term's namespace (``biological_process``, ...; ``""`` if none).
    parents : csr_matrix, shape (n, n), int8
        ``parents[i, j] = 1`` when term j is an ``is_a`` or ``part_of``
        parent of term i in the same namespace.
    alt_ids : dict
        Secondary id -> primary id.
    obsolete : frozenset of str
        Ids of obsolete terms.
    replaced_by : dict
        Obsolete id -> its replacement, for the obsolete terms with exactly
        one ``replaced_by`` that is a live term.
    counts : dict
        ``terms``, ``obsolete_terms``, ``non_go_terms`` (stanzas whose id
        is not ``GO:...``, left out), ``obsolete_replaced_by`` (obsolete
        terms with a replacement), ``alt_ids``, ``edges`` (kept),
        ``edges_other_relation`` (e.g. regulates, has_part: not followed),
        ``edges_across_namespaces``, ``edges_to_unknown_terms`` (targets
        obsolete or absent: not followed).
    """

    terms: pd.Index
    namespace: np.ndarray
    parents: sp.csr_matrix
    alt_ids: dict = field(default_factory=dict)
    obsolete: frozenset = frozenset()
    replaced_by: dict = field(default_factory=dict)
    counts: dict = field(default_factory=dict)

    def ancestors(self) -> sp.csr_matrix:
        """Reflexive-transitive closure of :attr:`parents`: ``A[i, j] = 1``
        when term j is term i or one of its ancestors (shape (n, n), int8).
        The descendants are its transpose."""
        n = len(self.terms)
        reach = sp.identity(n, dtype=np.int32, format="csr")
        step = self.parents.astype(np.int32)
        frontier = step.copy()
        for _ in range(n + 1):
            if frontier.nnz == 0:
                break
            reach = reach + frontier
            reach.data[:] = 1
            frontier = frontier @ step
            frontier.data[:] = 1
            frontier = frontier - frontier.multiply(reach)   # only new pairs go on
            frontier.eliminate_zeros()
        return reach.astype(np.int8).tocsr()


def read_obo(path: str | Path) -> Ontology:
    """Read the Gene Ontology from an OBO file (plain or gzip) with obonet.

    Parameters
    ----------
    path : path
        An OBO 1.2/1.4 file, e.g. ``go-basic.obo`` of a GO release
        (https://release.geneontology.org/<date>/ontology/go-basic.obo).

    Returns
    -------
    Ontology
        Terms, namespaces, the ``is_a``/``part_of`` parents within each
        namespace, secondary ids, obsolete terms and counts.

    Raises
    ------
    InputError
        If the file is missing, empty, compressed other than gzip, or not
        an OBO file (what it looks like is said, e.g. a GAF or an OWL
        file), a tag line cannot be parsed, it has no GO term, or the
        ``is_a``/``part_of`` graph has a cycle (the cycle is named).
    """
    import networkx as nx
    import obonet

    with open_text(path, "an OBO ontology (e.g. go-basic.obo)") as fh:
        lines = []
        for line in fh:
            lines.append(line)
            if line.strip():
                break
        first = lines[-1].strip() if lines else ""
        if not (first.startswith("format-version:") or first == "[Term]"):
            raise InputError(f"{path}: line {len(lines)}: expected an OBO ontology starting 'format-version: 1.2' "
                             f"(OBO 1.2/1.4), found {describe_content(path)}; give the ontology as OBO, e.g. "
                             "go-basic.obo of a GO release (https://release.geneontology.org/<date>/ontology/)")
        try:
            graph = obonet.read_obo(io.StringIO("".join(lines) + fh.read()), ignore_obsolete=False)
        except ValueError as err:
            raise InputError(f"{path}: not a valid OBO file: {str(err).strip()}") from None
        except UnicodeDecodeError as err:
            raise InputError(f"{path}: not UTF-8 text ({err})") from None
    data = dict(graph.nodes(data=True))
    obsolete = frozenset(t for t, d in data.items() if d.get("is_obsolete") == "true")
    terms = pd.Index(sorted(t for t, d in data.items() if d and t not in obsolete and t.startswith("GO:")))
    if len(terms) == 0:
        raise InputError(f"{path}: no GO term (ids GO:nnnnnnn) in this OBO file")
    namespace = np.array([data[t].get("namespace", "") for t in terms], dtype=object)
    index = {t: i for i, t in enumerate(terms)}
    alt_ids = {a: t for t in terms for a in data[t].get("alt_id", [])}
    live = set(terms)
    replaced_by = {t: data[t]["replaced_by"][0] for t in obsolete
                   if len(data[t].get("replaced_by", [])) == 1 and data[t]["replaced_by"][0] in live}
    other_ids = sum(1 for t, d in data.items() if d and t not in obsolete and not t.startswith("GO:"))
    counts = {"terms": len(terms), "obsolete_terms": len(obsolete), "non_go_terms": other_ids,
              "obsolete_replaced_by": len(replaced_by), "alt_ids": len(alt_ids), "edges": 0, "edges_other_relation": 0, "edges_across_namespaces": 0, "edges_to_unknown_terms": 0}
    rows, cols = [], []
    for child, parent, rel in graph.edges(keys=True):
        if child not in index:
            continue              # edges of obsolete terms
        if rel not in PROPAGATION_RELATIONS:
            counts["edges_other_relation"] += 1
        elif parent not in index:
            counts["edges_to_unknown_terms"] += 1
        elif namespace[index[child]] != namespace[index[parent]]:
            counts["edges_across_namespaces"] += 1
        else:
            rows.append(index[child])
            cols.append(index[parent])
    counts["edges"] = len(rows)
    n = len(terms)
    parents = sp.csr_matrix((np.ones(len(rows), np.int8), (rows, cols)), shape=(n, n))
    parents.sum_duplicates()
    parents.data[:] = 1
    dag = nx.DiGraph(zip((terms[i] for i in rows), (terms[j] for j in cols)))
    if not nx.is_directed_acyclic_graph(dag):
        cycle = [a for a, _ in nx.find_cycle(dag)]
        raise InputError(f"{path}: the is_a/part_of graph has a cycle: {' -> '.join(cycle + cycle[:1])}")
    return Ontology(terms, namespace, parents, alt_ids, obsolete, replaced_by, counts)


# --------------------------------------------------------------------------- GAF

#: Largest share of illegal annotation lines :func:`read_gaf` skips (counted);
#: above it the file is refused. GO's own files have none; a few malformed
#: lines occur in member databases' files (goatools reads past them too).
MAX_ILLEGAL_SHARE = 0.01
#: Columns of a GAF 2.x line: 17, or 15-16 when the optional trailing columns
#: 16 and 17 (annotation extension, gene product form id) are left off.
GAF_MIN_COLUMNS = 15
_SHOWN_ILLEGAL = 5


def _qualifier_ok(v: str) -> bool:
    tokens = v.split("|") if v else []
    return tokens.count("NOT") <= 1 and all(t == "NOT" or t in QUALIFIER_RELATIONS for t in tokens)


#: The field checks of a data line: column -> (is legal, what is expected).
_FIELD_CHECKS = {
    "DB": (lambda v: v != "", "a database name (e.g. UniProtKB, SGD)"),
    "DB_Object_ID": (lambda v: v != "", "an identifier"),
    "GO_ID": (lambda v: _GO_ID.fullmatch(v) is not None, "a GO id GO:nnnnnnn"),
    "Evidence_Code": (lambda v: v in EVIDENCE_CODES, f"a GO evidence code ({', '.join(sorted(EVIDENCE_CODES))})"),
    "Aspect": (lambda v: v in ASPECTS, "P, F or C"),
    "Taxon": (lambda v: _TAXON.fullmatch(v) is not None, "taxon:N or taxon:N|taxon:M"),
    "Qualifier": (_qualifier_ok, f"NOT and/or a GAF relation ({', '.join(sorted(QUALIFIER_RELATIONS))})"),
}


def _field_problem(name: str, got: str) -> str:
    return (f"column {GAF_COLUMNS.index(name) + 1} ({name}): expected {_FIELD_CHECKS[name][1]}, "
            f"got {got!r}")


def read_gaf(path: str | Path, max_illegal_share: float = MAX_ILLEGAL_SHARE) -> tuple[pd.DataFrame, dict]:
    """Read a GO annotation file in GAF 2.x (plain or gzip).

    What is read follows what GO consortium member databases write (and
    what goatools' GAF reader accepts): ``!`` comment lines anywhere, the
    ``!gaf-version: 2.x`` line first or after other header comments
    (``!generated-by``, ``!date-generated``, URLs, ...), data lines of 17
    tab-separated columns or 15-16 when the optional columns 16-17 are left
    off. Illegal data lines (another number of columns, an empty DB or
    DB_Object_ID, a GO id not ``GO:nnnnnnn``, an unknown evidence code, an
    aspect not P/F/C, a qualifier outside NOT and the GAF relations, a taxon
    not ``taxon:N``) are skipped and counted, up to ``max_illegal_share`` of
    the data lines.

    Parameters
    ----------
    path : path
        GAF 2.0/2.1/2.2, e.g. ``sgd.gaf.gz`` or ``goa_human.gaf.gz`` of a
        GO release (https://release.geneontology.org/<date>/annotations/).
    max_illegal_share : float
        Largest share of illegal data lines skipped (default
        :data:`MAX_ILLEGAL_SHARE`, 1 %).

    Returns
    -------
    rows : DataFrame, one row per legal annotation line
        ``line`` (1-based line number in the file), ``DB``,
        ``DB_Object_ID``, ``DB_Object_Symbol``, ``NOT`` (bool: the
        qualifier has NOT), ``Qualifier``, ``GO_ID``, ``Evidence_Code``,
        ``Aspect``, ``DB_Object_Synonym``, ``Taxon`` (the object's taxon id,
        int64); the string columns are categoricals.
    info : dict
        ``gaf_version``, ``lines``, ``comment_lines``, ``blank_lines``,
        ``illegal_lines_skipped``, ``rows`` (legal data lines).

    Raises
    ------
    InputError
        If the file is missing, empty, compressed other than gzip, or a
        truncated or corrupt gzip; no ``!gaf-version: 2.x`` line comes before
        the first data line (what the file looks like is said, e.g. an OBO
        or a GPAD file), or the version is not 2.x; no data line; or more
        than ``max_illegal_share`` of the data lines are illegal (the count,
        and the first lines with what is wrong in each, are named).
    """
    cols: list[list[str]] = [[] for _ in _KEEP]
    lines_of: list[int] = []
    cache: dict[str, str] = {}
    intern = cache.setdefault
    info = {"gaf_version": None, "lines": 0, "comment_lines": 0, "blank_lines": 0, "illegal_lines_skipped": 0,
            "rows": 0}
    wrong_width: list[tuple[int, str]] = []     # (line, problem): the first few lines of another width
    n_wrong_width = 0
    with open_text(path, "a GAF 2.x annotation file") as fh:
        lineno = 0
        try:
            keep = _KEEP
            appenders = [c.append for c in cols]
            add_line = lines_of.append
            versioned = False
            for lineno, line in enumerate(fh, start=1):
                if line.startswith("!"):
                    info["comment_lines"] += 1
                    if info["gaf_version"] is None and line[1:13].lower() == "gaf-version:":
                        version = line[13:].strip()
                        if not re.fullmatch(r"2(\.\d+)?", version):
                            raise InputError(f"{path}: line {lineno}: GAF version {version}; expected 2.x (17 "
                                             "columns: GAF 2.0, 2.1 or 2.2); download the file of a current GO "
                                             "release")
                        info["gaf_version"] = version
                        versioned = True
                    continue
                line = line.rstrip("\r\n")
                if not line.strip():
                    info["blank_lines"] += 1
                    continue
                if not versioned:
                    raise InputError(f"{path}: line {lineno}: expected the GAF header '!gaf-version: 2.2' (GAF "
                                     f"2.x), found {describe_content(path)}; give a GO annotation file in GAF 2.x, "
                                     "e.g. sgd.gaf.gz or goa_human.gaf.gz of a GO release (https://release."
                                     "geneontology.org/<date>/annotations/)")
                f = line.split("\t")
                if not GAF_MIN_COLUMNS <= len(f) <= len(GAF_COLUMNS):
                    n_wrong_width += 1
                    if len(wrong_width) < _SHOWN_ILLEGAL:
                        width = f"expected {GAF_MIN_COLUMNS} to {len(GAF_COLUMNS)} (GAF 2.x)"
                        wrong_width.append((lineno, f"{len(f)} tab-separated columns, {width}"))
                    continue
                for app, k in zip(appenders, keep):
                    v = f[k]
                    app(intern(v, v))
                add_line(lineno)
        except UnicodeDecodeError as err:
            raise InputError(f"{path}: line {lineno + 1}: not UTF-8 text ({err.reason})") from None
    info["lines"] = lineno
    if info["gaf_version"] is None:
        raise InputError(f"{path}: no '!gaf-version: 2.x' line and no annotation line; expected a GAF 2.x file, "
                         f"found {describe_content(path)}")
    n_data = len(lines_of) + n_wrong_width
    if not n_data:
        raise InputError(f"{path}: no annotation line (only the header and '!' comments)")
    line_no = np.asarray(lines_of, dtype=np.int64)
    names = [GAF_COLUMNS[k] for k in _KEEP]
    table = {n: pd.Categorical(c) for n, c in zip(names, cols)}
    del cols

    illegal = np.zeros(len(line_no), dtype=bool)
    problems = list(wrong_width)
    for name, (ok, _) in _FIELD_CHECKS.items():
        cat = table[name]
        bad = [i for i, v in enumerate(cat.categories) if not ok(v)]
        if bad:
            rows_bad = np.isin(cat.codes, bad) & ~illegal      # each line counted once, by its first problem
            for r in np.flatnonzero(rows_bad)[:_SHOWN_ILLEGAL]:
                problems.append((int(line_no[r]), _field_problem(name, cat.categories[cat.codes[r]])))
            illegal |= rows_bad
    n_illegal = n_wrong_width + int(illegal.sum())
    problems = sorted(problems)[:_SHOWN_ILLEGAL]
    shown = "; ".join(f"line {n}, {what}" for n, what in problems)
    if n_illegal > max_illegal_share * n_data or n_illegal == n_data:
        raise InputError(f"{path}: {shown}{' ...' if n_illegal > len(problems) else ''} ({n_illegal:,} illegal "
                         f"of {n_data:,} annotation lines, {100 * n_illegal / n_data:.2g} %; at most "
                         f"{100 * max_illegal_share:g} % are skipped); check that this is a complete GAF 2.x file")
    if n_illegal:
        log.warning("%s: %d illegal annotation line(s) of %d skipped: %s", path, n_illegal, n_data, shown)
        keep_rows = ~illegal
        line_no = line_no[keep_rows]
        table = {n: c[keep_rows].remove_unused_categories() for n, c in table.items()}
    info["illegal_lines_skipped"] = n_illegal
    info["rows"] = len(line_no)
    qual = table["Qualifier"]
    is_not = np.array(["NOT" in v.split("|") for v in qual.categories], dtype=bool)
    taxa = table["Taxon"]
    taxon_of = np.array([int(_TAXON.fullmatch(v).group(1)) for v in taxa.categories], dtype=np.int64)
    out = pd.DataFrame({"line": line_no, **{n: table[n] for n in names if n != "Taxon"}})
    out["NOT"] = is_not[qual.codes] if len(is_not) else np.zeros(len(out), bool)
    out["Taxon"] = taxon_of[taxa.codes]
    return out, info


# --------------------------------------------------------------------------- labels

def _codes(values, name: str, allowed) -> list[str]:
    values = [] if values is None else [str(v) for v in values]
    bad = sorted(set(values) - set(allowed))
    if bad:
        raise InputError(f"{name}: unknown evidence code(s) {bad}; expected GO codes {sorted(allowed)}")
    return values


def go_annotation_labels(rows: pd.DataFrame, ontology: Ontology, aspect: str = "P",
                         id_column: str = "DB_Object_ID", proteins: list[str] | None = None,
                         include_iea: bool = False, evidence_include: list[str] | None = None,
                         evidence_exclude: list[str] | None = None, taxon: int | None = None,
                         min_annotated: int = 1, max_annotated: int | None = None, origin: str = "<gaf>"
                         ) -> tuple[pd.DataFrame, dict]:
    """Turn GAF rows into a 0/1 protein x GO-term table by the rules of the
    module docstring (filters, NOT, propagation, id mapping, size window).

    Parameters
    ----------
    rows : DataFrame
        :func:`read_gaf`'s rows.
    ontology : Ontology
        :func:`read_obo`'s ontology.
    aspect : {"P", "F", "C"}
        Biological process, molecular function or cellular component.
    id_column : {"DB_Object_ID", "DB_Object_Symbol", "DB_Object_Synonym"}
        The GAF column holding the network's protein ids.
    proteins : list of str, optional
        The network's protein ids; None: every id of ``id_column``.
    include_iea : bool
        Keep electronic (IEA) annotations.
    evidence_include : list of str, optional
        Keep only these evidence codes (None: all).
    evidence_exclude : list of str, optional
        Drop these evidence codes.
    taxon : int, optional
        Keep rows whose object's taxon (first of column 13) is this NCBI id.
    min_annotated, max_annotated : int
        Term-size window: a term is kept when the number of ``proteins``
        carrying it after propagation is in ``[min_annotated,
        max_annotated]`` (None: no upper bound).
    origin : str
        The GAF file, for messages.

    Returns
    -------
    labels : DataFrame of int8 0/1, shape (n_matched, n_terms)
        Index ``protein`` (the network ids matched by a GAF object, sorted),
        columns the kept GO ids (sorted).
    counts : dict
        Every step's drops (``rows_*``), the NOT blocks, the mapping and
        the window (see the module docstring); keys in processing order.

    Raises
    ------
    InputError
        Unknown aspect, id column or evidence code; IEA both required
        (``evidence_include``) and left out (``include_iea`` false); a code
        both included and excluded; a bad window; or no GAF object matching
        a network protein (examples of both named).
    """
    if aspect not in ASPECTS:
        raise InputError(f"GO aspect {aspect!r}: expected one of {sorted(ASPECTS)} (P process, F function, "
                         "C component)")
    if id_column not in ID_COLUMNS:
        raise InputError(f"GO id column {id_column!r}: expected one of {list(ID_COLUMNS)}")
    include = _codes(evidence_include, "go_evidence_include", EVIDENCE_CODES) if evidence_include is not None \
        else None
    exclude = _codes(evidence_exclude, "go_evidence_exclude", EVIDENCE_CODES)
    if include is not None and "IEA" in include and not include_iea:
        raise InputError("go_evidence_include lists IEA but go_include_iea is false: set go_include_iea: true or "
                         "remove IEA from the list")
    both = sorted(set(include or []) & set(exclude))
    if both:
        raise InputError(f"evidence code(s) {both} both in go_evidence_include and go_evidence_exclude")
    if min_annotated < 1 or (max_annotated is not None and max_annotated < min_annotated):
        raise InputError(f"term-size window [{min_annotated}, {max_annotated}]: expected 1 <= min <= max")

    counts: dict = {"rows": len(rows)}
    r = rows

    def drop(mask, key):
        nonlocal r
        counts[key] = int(mask.sum())
        r = r[~mask]

    drop((r["Aspect"] != aspect).to_numpy(), "rows_other_aspect")
    drop((r["Taxon"] != int(taxon)).to_numpy() if taxon is not None else np.zeros(len(r), bool),
         "rows_other_taxon")
    drop((r["Evidence_Code"] == "IEA").to_numpy() if not include_iea else np.zeros(len(r), bool),
         "rows_iea_excluded")
    drop(~r["Evidence_Code"].isin(include).to_numpy() if include is not None else np.zeros(len(r), bool),
         "rows_evidence_not_included")
    drop(r["Evidence_Code"].isin(exclude).to_numpy(), "rows_evidence_excluded")

    # terms: secondary ids -> primary, obsolete ones with a replacement -> it; other obsolete, unknown and
    # other-namespace terms dropped
    go_cat = r["GO_ID"].cat
    cats = pd.Index(go_cat.categories.astype(str))
    alt = np.array([c in ontology.alt_ids for c in cats], dtype=bool)
    repl = np.array([c in ontology.replaced_by for c in cats], dtype=bool)
    primary = pd.Index([ontology.alt_ids.get(c, ontology.replaced_by.get(c, c)) for c in cats])
    cat_index = ontology.terms.get_indexer(primary)
    cat_obsolete = cats.isin(list(ontology.obsolete)) & (cat_index < 0)
    codes = go_cat.codes.to_numpy()
    counts["rows_alt_id_replaced"] = int(alt[codes].sum())
    counts["rows_obsolete_replaced"] = int(repl[codes].sum())
    t_index = cat_index[codes]
    obsolete = cat_obsolete[codes]
    drop(obsolete, "rows_obsolete_term")
    t_index = t_index[~obsolete]
    unknown = t_index < 0
    drop(unknown, "rows_unknown_term")
    t_index = t_index[~unknown]
    other_ns = ontology.namespace[t_index] != ASPECTS[aspect]
    drop(other_ns, "rows_term_in_other_namespace")
    t_index = t_index[~other_ns]
    counts["rows_not"] = int(r["NOT"].sum())
    counts["rows_positive"] = int(len(r) - counts["rows_not"])
    if counts["rows_positive"] == 0:
        raise InputError(f"{origin}: no positive annotation left after the filters (aspect {aspect}, taxon {taxon}, "
                         f"IEA {'kept' if include_iea else 'dropped'}, include {include}, exclude {exclude}): {counts}")

    # objects (DB:DB_Object_ID) -> network ids through id_column
    db_cats = np.asarray(r["DB"].cat.categories, dtype=object)
    oid_cats = np.asarray(r["DB_Object_ID"].cat.categories, dtype=object)
    width = len(oid_cats) + 1
    combo = r["DB"].cat.codes.to_numpy(np.int64) * width + r["DB_Object_ID"].cat.codes.to_numpy(np.int64)
    obj_code, uniq = pd.factorize(combo)
    obj_keys = [f"{db_cats[u // width]}:{oid_cats[u % width]}" for u in uniq]
    _, first = np.unique(obj_code, return_index=True)
    values = r[id_column].to_numpy()[first] if len(r) else np.array([], dtype=object)
    if id_column == "DB_Object_Synonym":
        pairs = pd.DataFrame({"obj": np.arange(len(obj_keys)),
                              "id": pd.Series(values, dtype=object).str.split("|")}).explode("id")
    else:
        pairs = pd.DataFrame({"obj": np.arange(len(obj_keys)), "id": pd.Series(values, dtype=object)})
    pairs = pairs[pairs["id"].notna() & (pairs["id"] != "")].drop_duplicates()
    all_ids = pairs["id"]
    if proteins is not None:
        pairs = pairs[pairs["id"].isin(set(proteins))]
    counts["objects"] = len(obj_keys)
    matched_obj = np.zeros(len(obj_keys), bool)
    matched_obj[pairs["obj"].to_numpy(int)] = True
    counts["objects_not_in_network"] = int((~matched_obj).sum())
    counts["rows_not_in_network"] = int((~matched_obj[obj_code]).sum()) if len(r) else 0
    per_id = pairs.groupby("id")["obj"].nunique()
    several = per_id[per_id > 1]
    counts["network_ids_matched"] = len(per_id)
    counts["network_ids_several_objects"] = len(several)
    if len(several):
        ex = {i: [obj_keys[o] for o in pairs.loc[pairs["id"] == i, "obj"]] for i in several.index[:3]}
        log.warning("%s: %d network id(s) match several GAF objects through %s; each takes the union of their "
                    "annotations, e.g. %s", origin, len(several), id_column, ex)
    if len(per_id) == 0:
        net_ex = list(proteins[:3]) if proteins is not None else []
        gaf_ex = list(all_ids.drop_duplicates()[:3])
        raise InputError(f"{origin}: no GAF object matches a network protein through {id_column} (after the "
                         f"filters: {counts}); network ids look like {net_ex}, {id_column} values like {gaf_ex}: "
                         "choose another go_id_column or map the network's ids")
    ids = pd.Index(sorted(per_id.index), name="protein")
    pairs = pairs.assign(net=ids.get_indexer(pairs["id"]))

    # direct (network id, term) pairs, positive and NOT
    direct = pd.DataFrame({"obj": obj_code, "term": t_index, "not": r["NOT"].to_numpy()}).drop_duplicates()
    direct = direct.merge(pairs[["obj", "net"]], on="obj")[["net", "term", "not"]].drop_duplicates()
    n, m = len(ids), len(ontology.terms)

    def matrix(d: pd.DataFrame) -> sp.csr_matrix:
        mat = sp.csr_matrix((np.ones(len(d), np.int32), (d["net"].to_numpy(), d["term"].to_numpy())), shape=(n, m))
        mat.sum_duplicates()
        mat.data[:] = 1
        return mat

    pos = matrix(direct[~direct["not"]])
    neg = matrix(direct[direct["not"]])
    anc = ontology.ancestors().astype(np.int32)
    blocked = neg @ anc.T.tocsr()           # (protein, term): the term is at or below one of its NOT terms
    blocked.data[:] = 1
    hit = pos.multiply(blocked)
    counts["pairs_direct"] = int(pos.nnz)
    counts["pairs_not"] = int(neg.nnz)
    counts["pairs_blocked_by_not"] = int(hit.count_nonzero())
    pos = (pos - hit).tocsr()
    pos.eliminate_zeros()
    prop = pos @ anc
    prop.data[:] = 1
    prop.eliminate_zeros()
    assert prop.multiply(blocked).count_nonzero() == 0   # the rule above: no positive below a NOT
    counts["pairs_propagated"] = int(prop.nnz)
    sizes = np.asarray(prop.sum(axis=0)).ravel()
    upper = max_annotated if max_annotated is not None else np.inf
    keep = (sizes >= min_annotated) & (sizes <= upper)
    counts["terms_annotated"] = int((sizes > 0).sum())
    counts["terms_below_min"] = int(((sizes > 0) & (sizes < min_annotated)).sum())
    counts["terms_above_max"] = int((sizes > upper).sum())
    counts["terms_kept"] = int(keep.sum())
    cols = np.flatnonzero(keep)
    dense = prop[:, cols].toarray().astype(np.int8)
    counts["proteins_labelled"] = int((dense.sum(axis=1) > 0).sum())
    labels = pd.DataFrame(dense, index=ids, columns=pd.Index(ontology.terms[cols], name="term"))
    return labels, counts


def load_gaf(gaf_path: str | Path, obo_path: str | Path, go_aspect: str = "P",
             go_id_column: str = "DB_Object_ID", go_include_iea: bool = False,
             go_evidence_include: list[str] | None = None, go_evidence_exclude: list[str] | None = None,
             go_taxon: int | None = None, min_annotated: int = 1, max_annotated: int | None = None,
             proteins: list[str] | None = None) -> tuple[pd.DataFrame, dict]:
    """Label format ``gaf``: :func:`read_gaf` + :func:`read_obo` +
    :func:`go_annotation_labels`, with a diffusion source's config keys as
    argument names (``proteins``, the network's ids, is set by the caller).

    Returns
    -------
    labels : DataFrame of 0/1 (network proteins matched, kept GO terms)
    counts : dict
        ``gaf_version`` and the line counts of :func:`read_gaf`, the
        ontology's counts (``ontology_*``) and those of
        :func:`go_annotation_labels`.

    Raises
    ------
    InputError
        What the three functions raise (the file, line and field named).
    """
    rows, info = read_gaf(gaf_path)
    ontology = read_obo(obo_path)
    labels, counts = go_annotation_labels(
        rows, ontology, aspect=go_aspect, id_column=go_id_column, proteins=proteins, include_iea=go_include_iea,
        evidence_include=go_evidence_include, evidence_exclude=go_evidence_exclude, taxon=go_taxon,
        min_annotated=min_annotated, max_annotated=max_annotated, origin=str(gaf_path))
    out = {**{k: v for k, v in info.items() if k != "rows"},
           **{f"ontology_{k}": v for k, v in ontology.counts.items()}, **counts}
    log.info("%s + %s: GO labels %s", gaf_path, obo_path, out)
    if counts["objects"] and counts["objects_not_in_network"] > 0.5 * counts["objects"]:
        log.warning("%s: %d of %d GAF objects (%.0f%%) match no network protein through %s", gaf_path,
                    counts["objects_not_in_network"], counts["objects"],
                    100 * counts["objects_not_in_network"] / counts["objects"], go_id_column)
    return labels, out


__all__ = ["GAF_COLUMNS", "MAX_ILLEGAL_SHARE", "EVIDENCE_CODES", "QUALIFIER_RELATIONS", "ASPECTS", "ID_COLUMNS",
           "PROPAGATION_RELATIONS", "Ontology", "read_obo", "read_gaf", "go_annotation_labels", "load_gaf",
]
