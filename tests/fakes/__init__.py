"""Fake input files in the public layouts of the real releases (GEO, CMap
LINCS 2020, GO, BioGRID, PRISM), written by the tests and by the readers'
benchmark (``benchmarks/bench_readers.py``), so that both use the same
writers. Importable as ``fakes`` where ``tests/`` is on the path (pytest
puts it there for ``tests/conftest.py``)."""

from fakes.biogrid import TAB3_COLUMNS
from fakes.geo import write_annot, write_full_table, write_series_matrix
from fakes.go import gaf_line
from fakes.lincs2020 import SIG_COLUMNS
from fakes.prism import SECONDARY_HEAD, TREATMENT_HEAD, r_csv

__all__ = ["SECONDARY_HEAD", "SIG_COLUMNS", "TAB3_COLUMNS", "TREATMENT_HEAD", "gaf_line", "r_csv", "write_annot",
           "write_full_table", "write_series_matrix"]
