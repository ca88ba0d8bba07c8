"""GEO files: series matrices, platform (GPL) annotation tables and the
survival fields of a series' samples.

One concept per module: opening files and saying what a wrong file looks
like (:mod:`.files`), series matrices and the log2 test (:mod:`.series_matrix`),
sample characteristics (:mod:`.characteristics`), clinical tables, TSV or
family SOFT (:mod:`.clinical`), platform annotation (:mod:`.platform`) and
survival events and times (:mod:`.survival`). Every reader raises
:class:`~biokernels.errors.InputError` naming the file, the line and the
field. The file layouts and rules are described in ``docs/io_readers_notes.md``.
"""

from biokernels.io.geo.characteristics import characteristic_values, characteristics_table
from biokernels.io.geo.clinical import read_clinical_table
from biokernels.io.geo.platform import MULTI_GENE_RULES, SYMBOL_COLUMNS, PlatformAnnotation, read_platform_annotation
from biokernels.io.geo.series_matrix import EXPRESSION_NA, SeriesMatrix, log2_needed, read_series_matrix
from biokernels.io.geo.survival import parse_event, parse_time

# private helpers, importable from the package as before the split
from biokernels.io.geo.characteristics import _split_characteristic  # noqa: F401
from biokernels.io.geo.files import (_GZIP_MAGIC, _NOT_TEXT_TABLES, _head, _lines, _looks, _open_binary,  # noqa: F401
                                     _open_text, _split)
from biokernels.io.geo.platform import _NO_SYMBOL, _gds_message  # noqa: F401
from biokernels.io.geo.series_matrix import _CSV_META, _parse_table  # noqa: F401
from biokernels.io.geo.survival import _SURV_NA  # noqa: F401

__all__ = ["SeriesMatrix", "PlatformAnnotation", "read_series_matrix", "read_platform_annotation",
           "read_clinical_table", "characteristic_values", "characteristics_table", "log2_needed",
           "MULTI_GENE_RULES", "EXPRESSION_NA", "SYMBOL_COLUMNS", "parse_event", "parse_time"]
