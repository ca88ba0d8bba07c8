"""The Gene Ontology (OBO 1.2/1.4, e.g. ``go-basic.obo`` of a GO release) as
the propagation needs it: terms, namespaces and the ``is_a``/``part_of``
parents within each namespace, read with obonet (a maintained OBO parser
into a networkx graph; Himmelstein et al.).
"""

from __future__ import annotations

import io
from dataclasses import dataclass, field
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from biokernels.errors import InputError
from biokernels.io.sniff import describe_content
from biokernels.io.text import open_text

__all__ = ["PROPAGATION_RELATIONS", "Ontology", "read_obo"]

#: Relations annotations propagate over (child -> parent).
PROPAGATION_RELATIONS = ("is_a", "part_of")


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
