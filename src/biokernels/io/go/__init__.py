"""Gene Ontology annotations (GAF 2.x) and the ontology (OBO) as a
multi-label protein-function table: one task per GO term.

* :mod:`~biokernels.io.go.gaf`: GAF 2.x files (:func:`read_gaf`);
* :mod:`~biokernels.io.go.obo`: the ontology (:func:`read_obo`);
* :mod:`~biokernels.io.go.labels`: filters, NOT, propagation ("true path"),
  id mapping and the term-size window (:func:`go_annotation_labels`,
  :func:`load_gaf`, the label format ``gaf``).

The rules and their sources: docs/io_readers_notes.md ("GO labels").
"""

from __future__ import annotations

from biokernels.io.go.gaf import (ASPECTS, EVIDENCE_CODES, GAF_COLUMNS, GAF_MIN_COLUMNS, MAX_ILLEGAL_SHARE,
                                  QUALIFIER_RELATIONS, read_gaf)
from biokernels.io.go.labels import ID_COLUMNS, go_annotation_labels, load_gaf
from biokernels.io.go.obo import PROPAGATION_RELATIONS, Ontology, read_obo

__all__ = ["ASPECTS", "EVIDENCE_CODES", "GAF_COLUMNS", "GAF_MIN_COLUMNS", "ID_COLUMNS", "MAX_ILLEGAL_SHARE",
           "PROPAGATION_RELATIONS", "QUALIFIER_RELATIONS", "Ontology", "go_annotation_labels", "load_gaf", "read_gaf",
           "read_obo"]
