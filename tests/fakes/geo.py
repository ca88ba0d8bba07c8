"""GEO files in GEO's public layouts, written for the tests and the readers'
benchmark: a series matrix (quoted ``!Series_*``/``!Sample_*`` values,
repeated ``!Sample_characteristics_ch1`` lines, a quoted ``"ID_REF"``
header), a platform's web "full table" and a ``GPLnnn.annot.gz``."""

from __future__ import annotations

import gzip


def _q(values):
    return "\t".join(f'"{v}"' for v in values)


def write_series_matrix(path, samples, characteristics, table, platform="GPL96", compress=None, extra_meta=(),
                        header_ids=None):
    """A series matrix in GEO's layout. ``characteristics``: list of lines,
    each a list of cells (one per sample, "" for none); ``table``: list of
    (probe, [cells as written])."""
    lines = [
        '!Series_title\t"Gene-expression profiles of a planted test series"',
        '!Series_geo_accession\t"GSE99999"',
        '!Series_status\t"Public on Jan 01 2005"',
        '!Series_summary\t"First paragraph, with a \ttab inside quotes."',
        '!Series_summary\t"Second paragraph."',
        '!Series_type\t"Expression profiling by array"',
        f'!Series_platform_id\t"{platform}"',
        "",
        "!Sample_title\t" + _q(f"tumor {i + 1}" for i in range(len(samples))),
        "!Sample_geo_accession\t" + _q(samples),
        "!Sample_status\t" + _q(["Public on Jan 01 2005"] * len(samples)),
        "!Sample_source_name_ch1\t" + _q(["breast tumor"] * len(samples)),
        "!Sample_organism_ch1\t" + _q(["Homo sapiens"] * len(samples)),
        *("!Sample_characteristics_ch1\t" + _q(cells) for cells in characteristics),
        *extra_meta,
        f"!Sample_platform_id\t" + _q([platform] * len(samples)),
        "!Sample_data_row_count\t" + _q([str(len(table))] * len(samples)),
        "!series_matrix_table_begin",
        '"ID_REF"\t' + _q(header_ids or samples),
        *(f'"{p}"\t' + "\t".join(cells) for p, cells in table),
        "!series_matrix_table_end",
    ]
    text = "\n".join(lines) + "\n"
    if compress is None:
        compress = str(path).endswith(".gz")
    if compress:
        with gzip.open(path, "wt", encoding="utf-8", newline="\n") as fh:
            fh.write(text)
    else:
        path.write_text(text)
    return path


def write_full_table(path, rows, symbol_col="Gene Symbol"):
    """GEO's web 'full table' of a platform: #-comments, header, rows; rows
    are (ID, symbol)."""
    lines = ["#ID = Affymetrix Probe Set ID", "#GB_ACC = GenBank Accession Number",
             f"#{symbol_col} = A gene symbol, when one is available (from UniGene).",
             f"ID\tGB_ACC\tSPOT_ID\tGene Title\t{symbol_col}\tENTREZ_GENE_ID"]
    lines += [f"{p}\tNM_{i:06d}\t\ttitle of {s or 'nothing'}\t{s}\t{1000 + i}" for i, (p, s) in enumerate(rows)]
    path.write_text("\n".join(lines) + "\n")
    return path


def write_annot(path, rows, platform="GPL96"):
    """GEO's GPLnnn.annot.gz layout (gzip): ^Annotation preamble,
    !platform_table_begin/end, column 'Gene symbol', multi-genes 'A///B'."""
    lines = ["^Annotation", "!Annotation_date = Aug 09 2016", f"!Annotation_platform = {platform}",
             "!Annotation_platform_title = [HG-U133A] Affymetrix Human Genome U133A Array",
             "!Annotation_platform_organism = Homo sapiens", "#ID = ID from Platform data table",
             "#Gene symbol = A gene symbol, when one is available", "!platform_table_begin",
             "ID\tGene title\tGene symbol\tGene ID\tGO:Function"]
    lines += [f"{p}\tsome title\t{s}\t{i}\t" for i, (p, s) in enumerate(rows)]
    lines += ["!platform_table_end"]
    with gzip.open(path, "wt", encoding="utf-8") as fh:
        fh.write("\n".join(lines) + "\n")
    return path
