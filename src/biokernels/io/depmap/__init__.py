"""Reading DepMap viability data and matching it to CMAP
(Radhakrishnan et al. 2023, Methods "DepMap analysis"): pandas and RDKit
only, so the data steps need no torch.

One concept per module: checked text tables (:mod:`.files`), the ``long``
layout (:mod:`.long`), model tables and target cell lines (:mod:`.models`),
PRISM compounds (:mod:`.compounds`), the PRISM primary and secondary screens
(:mod:`.prism_primary`, :mod:`.prism_secondary`), the readers' counts
(:mod:`.counts`), the registry by ``reader.format`` (:mod:`.readers`) and
the matching of drugs and cell lines to CMAP (:mod:`.matching`). The
layouts, the matching rules and the stated rules of the PRISM readers are
described in ``docs/io_readers_notes.md``.
"""

from biokernels.io.depmap.counts import READ_COUNTS, read_counts_table
from biokernels.io.depmap.files import NA_STRINGS, check_table_file, table_separator
from biokernels.io.depmap.long import VIABILITY_FIELDS, read_viability
from biokernels.io.depmap.matching import DROP_REASONS, drop_summary, inchikeys, match_drugs, prepare_targets
from biokernels.io.depmap.models import CELL_FIELDS, MODEL_LAYOUTS, read_models, select_cell_lines
from biokernels.io.depmap.prism_primary import read_prism_primary
from biokernels.io.depmap.prism_secondary import SECONDARY_RESPONSES, read_prism_secondary
from biokernels.io.depmap.readers import (VIABILITY_FILES, VIABILITY_READERS, load_long, load_prism_primary,
                                          load_prism_secondary)

# private helpers, importable from the package as before the split
from biokernels.io.depmap.compounds import _compound_info, _screen_rank, _take_str  # noqa: F401
from biokernels.io.depmap.counts import _log_drops  # noqa: F401
from biokernels.io.depmap.files import _cell_regex, _line, _need_columns, _read_text_table  # noqa: F401
from biokernels.io.depmap.models import _bools, _map_models, _model_aliases  # noqa: F401
from biokernels.io.depmap.prism_primary import _read_matrix  # noqa: F401
from biokernels.io.depmap.readers import _check_files  # noqa: F401

__all__ = [
    "CELL_FIELDS", "DROP_REASONS", "MODEL_LAYOUTS", "NA_STRINGS", "READ_COUNTS", "SECONDARY_RESPONSES",
    "VIABILITY_FIELDS", "VIABILITY_FILES", "VIABILITY_READERS", "check_table_file", "drop_summary", "inchikeys",
    "load_long", "load_prism_primary", "load_prism_secondary", "match_drugs", "prepare_targets",
    "read_counts_table", "read_models", "read_prism_primary", "read_prism_secondary", "read_viability",
    "select_cell_lines", "table_separator",
]
