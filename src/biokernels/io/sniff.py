"""What a file really holds, told from its bytes whatever its name.

Downloads are often saved under a name that does not say what they hold: an
HTML sign-in or error page saved as ``.csv``, gzip data without ``.gz``, a
``.gz`` that is plain text, an Excel workbook named ``.csv``, a GCTX that was
gzip-compressed, a Git LFS pointer in place of the data. Every reader of
:mod:`biokernels.io` recognises such files here, in one place
(:func:`sniff`), and its error message says what the file looks like
(:func:`describe_content`) and what to do. What is recognised, in the order
it is checked, is :data:`KINDS` (and docs/io_readers_notes.md). Only the
first :data:`HEAD_BYTES` bytes are read (decompressed, of a gzip or ZIP
member), so sniffing a large matrix costs as little as a small table.
Sniffing never raises: an unreadable file is described as such.
"""

from __future__ import annotations

import codecs
import csv
import json
import re
import zipfile
import zlib
from dataclasses import dataclass
from pathlib import Path

__all__ = ["Content", "sniff", "describe_content", "KINDS", "HDF5_SIGNATURE", "GCT_VERSIONS", "HEAD_BYTES"]

#: The 8 bytes that start an HDF5 superblock (HDF5 File Format Specification,
#: "Format Signature"), at byte 0 or after a user block of 512, 1024, 2048, ... bytes.
HDF5_SIGNATURE = b"\x89HDF\r\n\x1a\n"
#: The version lines of the GCT text formats (Broad Institute GCT 1.2 and 1.3).
GCT_VERSIONS = ("#1.2", "#1.3")
#: Bytes read from the start of a file (and decompressed from a gzip or ZIP member).
HEAD_BYTES = 1 << 16

#: What :attr:`Content.kind` can be -> what it means.
KINDS = {
    "missing": "no file at the path",
    "folder": "a folder, not a file",
    "unreadable": "a file that cannot be read (permissions, I/O error)",
    "empty": "0 bytes, or blank space only",
    "hdf5": "HDF5 (a GCTX matrix or another HDF5 layout), by its signature",
    "gzip": "gzip-compressed data; inner: the decompressed content (None when it cannot be decompressed)",
    "zip": "a ZIP archive; inner: its one member, or the member asked for",
    "excel": "an Excel workbook (.xlsx, or an OLE2 .xls)",
    "bzip2": "bzip2-compressed data",
    "xz": "xz-compressed data",
    "zstd": "zstd-compressed data",
    "parquet": "a Parquet table",
    "npy": "a NumPy .npy array",
    "pickle": "a Python pickle",
    "utf16": "UTF-16 text; inner: the text described",
    "binary": "binary data of no recognised format",
    "html": "an HTML page",
    "xml": "an XML document (error reply, MINiML, OWL/RDF, PSI-MI XML, ...)",
    "git_lfs": "a Git LFS pointer in place of the file",
    "json": "JSON text",
    "gct": "a GCT 1.2 / 1.3 text matrix",
    "geo_soft": "a GEO SOFT file",
    "geo_series_matrix": "a GEO series matrix",
    "geo_platform": "a GEO platform table",
    "gaf": "a GO annotation file (GAF)",
    "gpad": "a GO GPAD annotation file",
    "gpi": "a GO GPI gene-product file",
    "obo": "an OBO ontology",
    "biogrid": "a BioGRID TAB3, TAB2 or TAB file",
    "psi_mitab": "a PSI-MITAB interaction file",
    "string_links": "a STRING protein.links file",
    "tsv": "tab-separated text",
    "csv": "comma-separated text",
    "ssv": "semicolon-separated text",
    "text": "other text",
}

_BOM = "\ufeff"
_SHOWN_COLUMNS = 6
_REDO = "the download or copy did not finish; fetch or copy it again"
_REFETCH = "check the URL and download it again"
_EXCEL = "export the sheet as CSV or tab-separated text (File > Save As) and give that file"
_UNZIP = "unzip it and give the file inside"
_MAGIC = [  # prefix, kind, what, advice
    (b"\xd0\xcf\x11\xe0\xa1\xb1\x1a\xe1", "excel", "an OLE2 document (an Excel 97-2003 .xls workbook?)", _EXCEL),
    (b"\xfd7zXZ\x00", "xz", "xz-compressed data", "decompress it first (unxz -k)"),
    (b"\x28\xb5\x2f\xfd", "zstd", "zstd-compressed data", "decompress it first (unzstd)"),
    (b"PAR1", "parquet", "a Parquet table", "write it as text (pandas.read_parquet(path).to_csv(...))"),
    (b"\x93NUMPY", "npy", "a NumPy .npy array (values without row or column ids)",
     "write the values with their ids in the layout expected"),
    (b"\x80\x04", "pickle", "a Python pickle", "load it in Python and write it in the layout expected"),
    (b"\x80\x05", "pickle", "a Python pickle", "load it in Python and write it in the layout expected"),
]


@dataclass(frozen=True)
class Content:
    """What a file holds (:func:`sniff`).

    Attributes
    ----------
    kind : str
        A key of :data:`KINDS`.
    what : str
        What it is, in words, for messages (``"an HTML page (an error or
        sign-in page saved in place of the data?) titled 'Sign in'"``,
        ``"comma-separated text (CSV) with 3 columns: 'gene', 's1', 's2'"``).
    advice : str
        What to do about it where a reader cannot read it ('' when nothing
        general can be said).
    inner : Content or None
        The content inside a gzip layer, a ZIP member or UTF-16 text.
    delimiter : str or None
        ``"\\t"``, ``","`` or ``";"`` for separated text.
    columns : tuple of str
        The first line's fields of separated text, at most the first
        :data:`HEAD_BYTES` bytes of it.
    n_columns : int or None
        Number of fields of the first line (a lower bound when the line is
        longer than :data:`HEAD_BYTES`); None for anything but separated text.
    not_utf8 : str
        For text: where its bytes stop being UTF-8 (``"invalid continuation
        byte at byte 52"``), '' when they are.
    """

    kind: str
    what: str
    advice: str = ""
    inner: Content | None = None
    delimiter: str | None = None
    columns: tuple[str, ...] = ()
    n_columns: int | None = None
    not_utf8: str = ""

    def __str__(self) -> str:
        """``what`` followed by ``": advice"`` when there is advice."""
        return f"{self.what}: {self.advice}" if self.advice else self.what

    @property
    def body(self) -> Content:
        """The innermost content (through gzip, ZIP-member and UTF-16 layers)."""
        c = self
        while c.inner is not None:
            c = c.inner
        return c


def describe_content(path: str | Path, member: str | None = None) -> str:
    """What the file at ``path`` looks like, with what to do, for error
    messages: ``str(sniff(path, member))``.

    Parameters
    ----------
    path : path
    member : str, optional
        For a ZIP archive, the member to describe (default: its only member).

    Returns
    -------
    str
        e.g. ``"gzip-compressed data holding a GEO series matrix (GSE2034)"``,
        ``"an empty file (0 bytes): the download or copy did not finish;
        fetch or copy it again"``. Never raises.
    """
    return str(sniff(path, member))


def sniff(path: str | Path, member: str | None = None) -> Content:
    """Recognise what the file at ``path`` holds from its first bytes.

    Parameters
    ----------
    path : path
    member : str, optional
        For a ZIP archive, the member to look into (default: the only one).

    Returns
    -------
    Content
        ``kind`` (:data:`KINDS`), ``what`` and ``advice`` in words, the
        ``inner`` content of a gzip or ZIP layer, and for separated text its
        ``delimiter``, ``columns`` and ``n_columns``.

    Never raises: a path that is missing, a folder or unreadable is a
    :class:`Content` of that kind.
    """
    p = Path(path)
    try:
        if p.is_dir():
            return Content("folder", "a folder", "give the file itself")
        if not p.exists():
            return Content("missing", "nothing (no such file)", "check the path")
        size = p.stat().st_size
        if size == 0:
            return Content("empty", "an empty file (0 bytes)", _REDO)
        with open(p, "rb") as handle:
            head = handle.read(HEAD_BYTES)
        if _hdf5_at(p, size):
            return _HDF5
        if head[:4] in (b"PK\x03\x04", b"PK\x05\x06"):     # a local file header, or an empty archive
            return _zip(p, member)
        return _from_bytes(head, complete=size <= HEAD_BYTES)
    except OSError as err:
        return Content("unreadable", f"an unreadable file ({err.strerror or err})",
                       "check that it exists and can be read")


# ---------------------------------------------------------------------------- layers

_HDF5 = Content("hdf5", "an HDF5 file (a GCTX matrix, or another HDF5 layout)")


def _hdf5_at(path: Path, size: int) -> bool:
    """Whether the HDF5 signature sits at byte 0, 512, 1024, 2048, ... of the file."""
    with open(path, "rb") as handle:
        offset = 0
        while offset + len(HDF5_SIGNATURE) <= size:
            handle.seek(offset)
            if handle.read(len(HDF5_SIGNATURE)) == HDF5_SIGNATURE:
                return True
            offset = 512 if offset == 0 else offset * 2
    return False


def _zip(path: Path, member: str | None) -> Content:
    """A ZIP archive: an Excel workbook, or the member described in turn."""
    try:
        with zipfile.ZipFile(path) as zf:
            names = [n for n in zf.namelist() if not n.endswith("/")]
            if not names:
                return Content("zip", "an empty ZIP archive (no file inside)", _REDO)
            if "xl/workbook.xml" in names:
                return Content("excel", "an Excel workbook (.xlsx)", _EXCEL)
            name = member if member in names else (names[0] if member is None and len(names) == 1 else None)
            if name is None:
                shown = ", ".join(names[:3]) + (", ..." if len(names) > 3 else "")
                without = f", none named {member!r}" if member is not None else ""
                return Content("zip", f"a ZIP archive of {len(names)} files ({shown}){without}", _UNZIP)
            with zf.open(name) as handle:
                head = handle.read(HEAD_BYTES + 1)
    except (zipfile.BadZipFile, zipfile.LargeZipFile, OSError, EOFError, zlib.error, NotImplementedError,
            RuntimeError) as err:
        return Content("zip", "a ZIP archive", f"{_UNZIP}, or, for an Excel workbook, {_EXCEL} (it cannot be "
                                               f"listed here: {err}; truncated?)")
    inner = _from_bytes(head[:HEAD_BYTES], complete=len(head) <= HEAD_BYTES)
    return Content("zip", f"a ZIP archive whose {name} is {inner.what}", _UNZIP, inner=inner)


def _from_bytes(head: bytes, complete: bool, depth: int = 0) -> Content:
    """What ``head`` (a file's first bytes; ``complete`` when the whole file)
    holds: magic bytes first, then text."""
    if not head:
        return Content("empty", "an empty file (0 bytes)", _REDO)
    if head.startswith(HDF5_SIGNATURE):
        return _HDF5
    if head[:2] == b"\x1f\x8b":
        return _gzip(head, complete, depth)
    if head[:4] == b"PK\x03\x04":
        return Content("zip", "a ZIP archive", _UNZIP)
    if re.match(rb"BZh[1-9]", head[:4]):
        return Content("bzip2", "bzip2-compressed data", "decompress it first (bunzip2 -k)")
    for prefix, kind, what, advice in _MAGIC:
        if head.startswith(prefix):
            return Content(kind, what, advice)
    if head[:2] in (b"\xff\xfe", b"\xfe\xff"):
        inner = _text(head.decode("utf-16", errors="replace").encode("utf-8"), complete)
        return Content("utf16", f"UTF-16 text ({inner.what})",
                       "save it as UTF-8 (e.g. Excel: CSV UTF-8, or iconv -f UTF-16 -t UTF-8)", inner=inner)
    sample = head[:4096]
    decoded = sample.decode("utf-8", errors="replace")
    good = sum((c.isprintable() and c != "\ufffd") or c in "\t\r\n" for c in decoded)
    if b"\x00" in sample[:1024] or good < 0.9 * len(decoded):
        shown = " ".join(f"{b:02x}" for b in head[:8])
        return Content("binary", f"binary data starting with bytes {shown}",
                       "no known format: the file may be truncated, corrupt or in another format")
    return _text(head, complete)


def _gzip(head: bytes, complete: bool, depth: int) -> Content:
    """gzip data: the first decompressed bytes described in turn."""
    try:
        unzip = zlib.decompressobj(16 + zlib.MAX_WBITS)
        inner_head = unzip.decompress(head, HEAD_BYTES + 1)
    except zlib.error as err:
        return Content("gzip", f"gzip-compressed data that cannot be decompressed ({err})",
                       "the file is truncated or corrupt; fetch or copy it again")
    if depth >= 2:
        return Content("gzip", "gzip-compressed data (compressed several times)", "decompress it (gunzip)")
    inner = _from_bytes(inner_head[:HEAD_BYTES], complete=complete and unzip.eof and len(inner_head) <= HEAD_BYTES,
                        depth=depth + 1)
    what = f"gzip-compressed data holding {inner.what}"
    if inner.kind == "gzip":
        what += " (compressed twice?)"
    return Content("gzip", what, inner.advice, inner=inner)


# ---------------------------------------------------------------------------- text

def _utf8_error(head: bytes, complete: bool) -> str:
    try:
        codecs.getincrementaldecoder("utf-8")().decode(head, final=complete)
    except UnicodeDecodeError as err:
        return f"{err.reason} at byte {err.start}"
    return ""


def _text(head: bytes, complete: bool) -> Content:
    """Text, recognised by its first non-blank lines."""
    not_utf8 = _utf8_error(head, complete)
    c = _text_kind(head.decode("utf-8", errors="replace").lstrip(_BOM), complete)
    if not_utf8:
        return Content(c.kind, f"{c.what} (not UTF-8: {not_utf8})", c.advice, c.inner, c.delimiter, c.columns,
                       c.n_columns, not_utf8)
    return c


def _text_kind(text: str, complete: bool) -> Content:
    if not text.strip():
        return Content("empty", "an empty file (blank space only)", _REDO)
    lines = text.split("\n")
    first_line_whole = len(lines) > 1 or complete
    if not complete and len(lines) > 1:
        lines = lines[:-1]          # the last line may be cut by the head
    nonblank = [line.rstrip("\r") for line in lines if line.strip()][:5]
    raw = nonblank[0]
    first = raw.strip()
    low = first.lower()
    start = text[:4096].lower()
    if low.startswith(("<!doctype html", "<html", "<head", "<body")) or "<html" in start[:1024]:
        title = re.search(r"<title[^>]*>\s*([^<]{1,80}?)\s*</title>", text[:4096], flags=re.I)
        return Content("html", "an HTML page (an error or sign-in page saved in place of the data?)"
                       + (f" titled {title.group(1)!r}" if title else ""), _REFETCH)
    if low.startswith("<"):
        if "<error" in start:
            code = re.search(r"<code>\s*([^<]{1,60}?)\s*</code>", text[:4096], flags=re.I)
            return Content("xml", "an XML document holding an error reply" + (f" ({code.group(1)})" if code else "")
                           + " (a storage service's answer such as AccessDenied or NoSuchKey?)", _REFETCH)
        if "<miniml" in start:
            return Content("xml", "a GEO MINiML (XML) file")
        if "<entryset" in start:
            return Content("xml", "a PSI-MI XML file")
        if re.search(r"<owl:|<rdf:|xmlns:owl|xmlns:rdf", start):
            return Content("xml", "an OWL/RDF ontology")
        root = re.search(r"<([A-Za-z_][\w:.-]*)", re.sub(r"<[?!][^>]*>", "", text[:4096]))
        return Content("xml", "an XML document" + (f" (root element <{root.group(1)}>)" if root else ""))
    if low.startswith("version https://git-lfs"):
        return Content("git_lfs", "a Git LFS pointer, not the file itself", "fetch the real file (git lfs pull)")
    if first.startswith("#1."):
        if first in GCT_VERSIONS:
            return Content("gct", f"a GCT {first[1:]} text matrix")
        return Content("text", f"a GCT header of an unknown version {first[:20]!r} (only #1.2 and #1.3 exist)")
    lowtext = text.lower()
    if low.startswith(("^annotation", "^platform")) or (not first.startswith("^") and (
            "!platform_table_begin" in lowtext or first.startswith(("!Platform_", "!Annotation_")))):
        gpl = re.search(r"^(?:\^PLATFORM|!Annotation_platform|!Platform_geo_accession)\s*=\s*(GPL\d+)", text,
                        flags=re.M | re.I)
        return Content("geo_platform", "a GEO platform table" + (f" ({gpl.group(1)})" if gpl else ""))
    if first.startswith("^"):
        gds = re.search(r"^\^DATASET\s*=\s*(\S+)", text, flags=re.M | re.I)
        if gds:
            return Content("geo_soft", f"a GEO DataSet (GDS) SOFT file ({gds.group(1)})")
        return Content("geo_soft", f"a GEO SOFT file (first record {first[:40]!r})")
    csv_matrix = re.match(r'"?!(?:Series|Sample)_\w+"?([,;])', first)
    if csv_matrix:
        return Content("geo_series_matrix", f"a {'comma' if csv_matrix.group(1) == ',' else 'semicolon'}-separated "
                       "GEO series matrix", "GEO writes series matrices tab-separated: download the original or "
                       "re-export it as tab-separated text", delimiter=csv_matrix.group(1))
    if "!series_matrix_table_begin" in lowtext or first.startswith(("!Series_", "!Sample_")):
        acc = re.search(r'^!Series_geo_accession\t"?(GSE\d+)', text, flags=re.M)
        return Content("geo_series_matrix", "a GEO series matrix" + (f" ({acc.group(1)})" if acc else ""))
    # GO files: the version line first, or after other '!' comment lines (as some GO member databases write)
    go = re.match(r"(?:[ \t]*(?:![^\n]*)?\n)*?[ \t]*!(gaf|gpad|gpi)-version:[ \t]*([^\s]*)", text, flags=re.I)
    if go and go.group(1).lower() == "gaf":
        return Content("gaf", f"a GAF {go.group(2)} annotation file")
    if go and go.group(1).lower() == "gpad":
        return Content("gpad", "a GPAD annotation file (no gene symbols or synonyms; use the GAF of the same release)")
    if go:
        return Content("gpi", "a GPI gene-product file (no annotations)")
    if low.startswith("format-version:") or any(x.strip() == "[Term]" for x in nonblank):
        return Content("obo", "an OBO ontology")
    fields = raw.split("\t")
    if fields[0].strip() == "#BioGRID Interaction ID":
        # TAB2 has 24 columns ("Organism Interactor A"), TAB3 37 ("Organism ID Interactor A", accessions, ...)
        layout = "TAB3" if "Organism ID Interactor A" in fields or len(fields) > 24 else "TAB2"
        return Content("biogrid", f"a BioGRID {layout} file ({len(fields)} columns)")
    if low.startswith(("#id interactor a", "#id(s) interactor a")) or "taxid:" in low:
        return Content("psi_mitab", "a PSI-MITAB file")
    if low.startswith("interactor_a") or "official_symbol_a" in low:
        return Content("biogrid", "a BioGRID TAB (version 1) file")
    if first.split()[:2] == ["protein1", "protein2"]:
        return Content("string_links", "a STRING protein.links file")
    if first.startswith(("{", "[")):
        return _json(text, complete)
    if first.startswith("!"):
        return Content("text", f"a file of '!' comment lines starting with {first[:60]!r}")
    table = _separated(raw, first_line_whole)
    if table is not None:
        return table
    return Content("text", f"text starting with {first[:60]!r}")


def _json(text: str, complete: bool) -> Content:
    if complete:
        try:
            value = json.loads(text)
        except ValueError:
            return Content("json", "JSON-like text that does not parse as JSON")
        if isinstance(value, dict):
            keys = list(value)[:5]
            return Content("json", f"JSON text (an object with keys {keys}{' ...' if len(value) > 5 else ''})")
        if isinstance(value, list):
            return Content("json", f"JSON text (a list of {len(value)} items)")
    return Content("json", "JSON text")


_SEPARATORS = (("\t", "tsv", "tab-separated text"), (",", "csv", "comma-separated text (CSV)"),
               (";", "ssv", "semicolon-separated text"))


def _separated(line: str, whole: bool) -> Content | None:
    """Separated text, if its first line splits into several fields on a tab,
    comma or semicolon (the one giving most fields; tab before comma before
    semicolon on a tie)."""
    best = None
    for sep, kind, name in _SEPARATORS:
        try:
            fields = next(csv.reader([line], delimiter=sep))
        except csv.Error:
            fields = line.split(sep)
        if len(fields) > 1 and (best is None or len(fields) > len(best[0])):
            best = (fields, sep, kind, name)
    if best is None:
        return None
    fields, sep, kind, name = best
    if not whole:
        fields = fields[:-1]  # the last field may be cut by the head
    n = len(fields)
    shown = ", ".join(repr(f) for f in fields[:_SHOWN_COLUMNS]) + (", ..." if n > _SHOWN_COLUMNS else "")
    count = f"{n:,} columns" if whole else f"at least {n:,} columns"
    return Content(kind, f"{name} with {count}: {shown}", delimiter=sep, columns=tuple(fields), n_columns=n)
