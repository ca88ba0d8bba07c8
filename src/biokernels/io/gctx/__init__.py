"""GCTX (HDF5) and GCT (text) matrices of the Connectivity Map / LINCS L1000,
written with h5py and pandas instead of cmapPy.

One concept per module: the layout's names, the :class:`GCT` container and
shared helpers (:mod:`.common`), what a file holds (:mod:`.format`), GCT
text (:mod:`.text`), the GCTX block reads (:mod:`.blocks`), reading either
format (:mod:`.read`) and writing GCTX (:mod:`.write`). Either format is
accepted wherever a matrix is read: the file's content decides, not its
name. The GCTX and GCT layouts, and why not cmapPy, are described in
``docs/io_readers_notes.md``.
"""

from biokernels.io.gctx.blocks import BLOCK_BYTES
from biokernels.io.gctx.common import COL_META, GCT, GCTX_VERSION, MATRIX, META_NULL, ROW_META
from biokernels.io.gctx.format import matrix_format, matrix_format_or_none
from biokernels.io.gctx.read import MatrixFile, iter_gctx_columns, open_matrix, read_gctx, read_gctx_meta
from biokernels.io.gctx.text import read_gct, write_gct
from biokernels.io.gctx.write import write_gctx

# private helpers, importable from the package as before the split
from biokernels.io.gctx.blocks import (_check_finite, _layout, _open_h5, _plan_windows, _positions,  # noqa: F401
                                       _read_block, _read_meta)
from biokernels.io.gctx.common import (_AXES, _TEXT_NULLS, _check_gct, _decode, _decode_value,  # noqa: F401
                                       _duplicates, _few, _field_name, _ids_as_str, _is_missing, _null_666)
from biokernels.io.gctx.format import _BOM, _MATRIX_ADVICE, _as_matrix  # noqa: F401
from biokernels.io.gctx.text import _is_float, _read_text, _text_field, _text_meta  # noqa: F401
from biokernels.io.gctx.write import _default_chunks, _h5_meta_values  # noqa: F401

__all__ = [
    "BLOCK_BYTES", "COL_META", "GCT", "GCTX_VERSION", "MATRIX", "META_NULL", "ROW_META", "MatrixFile",
    "iter_gctx_columns", "matrix_format", "matrix_format_or_none", "open_matrix", "read_gct", "read_gctx",
    "read_gctx_meta", "write_gct", "write_gctx",
]
