"""GAF rows and the ontology as a 0/1 protein x GO-term table, one task per
GO term (label format ``gaf``): filters, secondary and replaced terms, NOT
annotations, propagation over ``is_a``/``part_of``, the mapping to the
network's ids and the term-size window. The rules are stated in
:func:`go_annotation_labels` (Notes), their sources in
docs/io_readers_notes.md ("GO labels").
"""

from __future__ import annotations

import logging
from pathlib import Path

import numpy as np
import pandas as pd
import scipy.sparse as sp

from biokernels.errors import InputError
from biokernels.io.go.gaf import ASPECTS, EVIDENCE_CODES, read_gaf
from biokernels.io.go.obo import Ontology, read_obo

__all__ = ["ID_COLUMNS", "go_annotation_labels", "load_gaf"]

log = logging.getLogger(__name__)

#: GAF columns that may hold the network's protein ids.
ID_COLUMNS = ("DB_Object_ID", "DB_Object_Symbol", "DB_Object_Synonym")


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
    Notes below (filters, NOT, propagation, id mapping, size window).

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
        the window (see the Notes); keys in processing order.

    Raises
    ------
    InputError
        Unknown aspect, id column or evidence code; IEA both required
        (``evidence_include``) and left out (``include_iea`` false); a code
        both included and excluded; a bad window; or no GAF object matching
        a network protein (examples of both named).

    Notes
    -----
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
