"""What a matrix file holds: GCTX (HDF5) or GCT text, told apart by content,
not by name (:func:`matrix_format`); a file that is neither is refused with
what it looks like (:func:`biokernels.io.sniff.sniff`) and what to do."""

from __future__ import annotations

from pathlib import Path

from biokernels.errors import InputError
from biokernels.io.sniff import HDF5_SIGNATURE, Content, sniff


_BOM = "\ufeff"
#: What a matrix reader says, after what a file that is neither GCTX nor GCT
#: looks like (:func:`biokernels.io.sniff.sniff`), by the kind of its content;
#: other kinds take the sniffer's general advice.
_MATRIX_ADVICE = {
    "tsv": (", not the GCT version line '#1.2' or '#1.3': a plain table (e.g. a metadata table such as "
            "siginfo_beta.txt or inst_info.txt) is not a matrix; give the .gctx file, or add the GCT header lines "
            "(format in biokernels.io.gctx, written by write_gct)"),
    "csv": ": convert it to GCT or GCTX (biokernels.io.gctx.write_gct / write_gctx)",
    "ssv": ": convert it to GCT or GCTX (biokernels.io.gctx.write_gct / write_gctx)",
    "binary": (f", without the HDF5 signature ({HDF5_SIGNATURE.hex(' ')}): not a GCTX; the file may be "
               "truncated, corrupt or another format"),
    "parquet": ", not a matrix file: write it as GCTX (biokernels.io.gctx.write_gctx)",
    "pickle": ": load it and write it as GCTX (biokernels.io.gctx.write_gctx)",
    "npy": ": write it as GCTX with its row and column ids (biokernels.io.gctx.write_gctx)",
    "json": ", not a matrix file",
    "text": ", not the GCT version line '#1.2' or '#1.3'",
}


def _as_matrix(content: Content) -> str:
    """What a file looks like and what to do, for a file read as a matrix."""
    advice = _MATRIX_ADVICE.get(content.body.kind)
    return content.what + advice if advice else str(content)


def matrix_format(path: str | Path) -> str:
    """Whether a file is a GCTX (HDF5) or a GCT text file, by its content,
    whatever its name.

    GCTX: the HDF5 signature (:data:`biokernels.io.sniff.HDF5_SIGNATURE`) at byte 0 or after a
    user block. GCT: a first line ``#1.2`` or ``#1.3`` (a UTF-8 byte-order
    mark and surrounding blanks allowed), plain or gzip-compressed
    (``.gct.gz``).

    Returns
    -------
    {"gctx", "gct"}

    Raises
    ------
    InputError
        If the file is missing, or holds neither: the message says what it
        looks like (empty, gzip-compressed GCTX, ZIP, HTML or XML error page,
        Git LFS pointer, CSV or tab-separated table, other binary data) and
        what to do.
    """
    path = Path(path)
    content = sniff(path)
    if content.kind in ("missing", "folder"):
        raise InputError(f"{path}: expected a GCTX (HDF5) or GCT (text) matrix file, found {content.what}")
    if content.kind in ("hdf5", "gct"):
        return "gctx" if content.kind == "hdf5" else "gct"
    if content.kind == "gzip" and content.inner is not None:
        if content.inner.kind == "hdf5":
            raise InputError(f"{path}: a gzip-compressed GCTX (HDF5): HDF5 cannot be read compressed; gunzip it "
                             "first (gunzip -k), or set gunzip: true on its download")
        if content.inner.kind == "gct":
            return "gct"
    raise InputError(f"{path}: not a GCTX (HDF5) or GCT (text) matrix: the content is {_as_matrix(content)}")


def matrix_format_or_none(path: str | Path) -> str | None:
    """:func:`matrix_format`, or None where it would raise."""
    try:
        return matrix_format(path)
    except InputError:
        return None
