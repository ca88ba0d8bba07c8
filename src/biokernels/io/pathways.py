"""Gene sets (GMT, MSigDB layout) for pathway-induced kernels (PIMKL, Manica
et al. 2019, Section 2.1-2.2 and Supplementary S.1).

The gene-level networks PIMKL reads beside them have their own modules,
re-exported here: STRING (:mod:`biokernels.io.string`) and Pathway Commons
SIF (:mod:`biokernels.io.sif`). Malformed input raises
:class:`~biokernels.errors.InputError` naming the file, the 1-based line,
the field and what was expected.
"""

from __future__ import annotations

import logging
from pathlib import Path

from biokernels.errors import InputError
from biokernels.io.opener import open_text
from biokernels.io.sif import read_sif
from biokernels.io.string import (STRING_CHANNELS, STRING_PRIOR, UNMAPPED_WARN_FRACTION, combine_string_scores,
                                  read_string_network)

__all__ = ["STRING_CHANNELS", "STRING_PRIOR", "UNMAPPED_WARN_FRACTION", "combine_string_scores", "read_gmt",
           "read_sif", "read_string_network", "write_gmt"]

log = logging.getLogger(__name__)


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
    with open_text(path, "gzip" if Path(path).suffix == ".gz" else None, newline="") as fh:
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
