"""CMAP / LINCS L1000 metadata tables and preprocessing for virtual drug
screening (Radhakrishnan et al. 2023, Methods "Preprocessing for CMAP data").

One concept per module: L1000 metadata tables (:mod:`.tables`), tables built
from a matrix's own metadata (:mod:`.matrix_tables`), doses and times
(:mod:`.doses`), the z-score check (:mod:`.zscores`), the sample table and
replicate keys (:mod:`.samples`), the preprocessing pass
(:mod:`.averaging`) and its entry point :func:`preprocess_cmap`
(:mod:`.preprocess`). The steps and rules are described in
``docs/io_readers_notes.md``.
"""

from biokernels.io.cmap.averaging import CHUNK_BYTES, Preprocessed
from biokernels.io.cmap.doses import DOSE_DIGITS, MISSING_CODE, parse_dose_um, parse_time_h, round_dose
from biokernels.io.cmap.matrix_tables import matrix_table
from biokernels.io.cmap.preprocess import GENE_SPACES, preprocess_cmap
from biokernels.io.cmap.samples import (CONTROL, DOSE_TIME_KEY, POOLED_KEY, REPLICATE_KEYS, TREATMENT,
                                        check_replicate_key)
from biokernels.io.cmap.tables import (MATRIX_TABLES, META_ALIASES, read_gene_info, read_l1000_table,
                                       read_sample_info, table_compression, with_cmap_names)
from biokernels.io.cmap.zscores import (Z_MAX_ABS_MEAN, Z_MAX_MEAN_OVER_SD, Z_MIN_NEGATIVE, Z_SD_RANGE,
                                        looks_like_zscores)

# private helpers, importable from the package as before the split
from biokernels.io.cmap.averaging import _gene_id, _group_add, _preprocess, _values  # noqa: F401
from biokernels.io.cmap.doses import _NUMBER, _UNIT_TO_H, _UNIT_TO_UM, _text  # noqa: F401
from biokernels.io.cmap.matrix_tables import _PERT_FIELDS  # noqa: F401
from biokernels.io.cmap.samples import _sample_frame  # noqa: F401
from biokernels.io.cmap.zscores import _scale_stats  # noqa: F401

__all__ = [
    "CHUNK_BYTES", "CONTROL", "DOSE_DIGITS", "DOSE_TIME_KEY", "GENE_SPACES", "MATRIX_TABLES", "META_ALIASES",
    "MISSING_CODE", "POOLED_KEY", "REPLICATE_KEYS", "TREATMENT", "Z_MAX_ABS_MEAN", "Z_MAX_MEAN_OVER_SD",
    "Z_MIN_NEGATIVE", "Z_SD_RANGE", "Preprocessed", "check_replicate_key", "looks_like_zscores", "matrix_table",
    "parse_dose_um", "parse_time_h", "preprocess_cmap", "read_gene_info", "read_l1000_table", "read_sample_info",
    "round_dose", "table_compression", "with_cmap_names",
]
