"""CMap LINCS 2020 release layouts for the tests and the readers' benchmark."""

from __future__ import annotations

#: Leading columns of ``siginfo_beta.txt``.
SIG_COLUMNS = ["sig_id", "pert_id", "cmap_name", "pert_type", "cell_iname", "pert_dose", "pert_dose_unit",
               "pert_idose", "pert_time", "pert_time_unit", "pert_itime", "qc_pass", "is_hiq", "nsample", "tas"]
