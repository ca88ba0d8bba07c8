"""The sample table of the preprocessing: perturbagen, cell line, type, dose
and time of each matrix column, from whichever dose and time fields the
metadata layout has, and the replicate keys (:func:`check_replicate_key`)."""

from __future__ import annotations

import numpy as np
import pandas as pd

from biokernels.errors import InputError
from biokernels.io.cmap.doses import parse_dose_um, parse_time_h


TREATMENT = "trt_cp"
CONTROL = "ctl_vehicle"
POOLED_KEY = ("pert", "cell")
DOSE_TIME_KEY = ("pert", "cell", "dose", "time")
REPLICATE_KEYS = (POOLED_KEY, DOSE_TIME_KEY)


def _sample_frame(meta: pd.DataFrame, source: str) -> tuple[pd.DataFrame, dict]:
    """Sample table ``pert_id``, ``cell_id``, ``pert_type``, ``dose_um``,
    ``time_h`` (index = sample ids) and the metadata fields the dose and time
    came from (``{"dose": "pert_dose" | "pert_idose" | None, "time": ...}``;
    None: the layout has no such field, values NaN)."""
    for col in ("pert_id", "cell_id", "pert_type"):
        if col not in meta.columns:
            raise InputError(f"{source}: sample metadata lacks column {col!r}; expected GEO inst_info/sig_info "
                             "columns pert_id, cell_id, pert_type and pert_dose (+pert_dose_unit) or pert_idose")
    fields: dict = {"dose": None, "time": None}
    nan = np.full(len(meta), np.nan)
    if "pert_dose" in meta.columns:
        fields["dose"] = "pert_dose"
        dose = parse_dose_um(meta["pert_dose"], meta["pert_dose_unit"] if "pert_dose_unit" in meta else None)
    elif "pert_idose" in meta.columns:
        fields["dose"] = "pert_idose"
        dose = parse_dose_um(meta["pert_idose"])
    else:
        dose = nan
    if "pert_time" in meta.columns:
        fields["time"] = "pert_time"
        time = parse_time_h(meta["pert_time"], meta["pert_time_unit"] if "pert_time_unit" in meta else None)
    elif "pert_itime" in meta.columns:
        fields["time"] = "pert_itime"
        time = parse_time_h(meta["pert_itime"])
    else:
        time = nan
    frame = pd.DataFrame({"pert_id": meta["pert_id"].astype(str).to_numpy(),
                          "cell_id": meta["cell_id"].astype(str).to_numpy(),
                          "pert_type": meta["pert_type"].astype(str).to_numpy(),
                          "dose_um": dose, "time_h": time}, index=meta.index.astype(str))
    return frame, fields


def check_replicate_key(replicate_key) -> tuple[str, ...]:
    """``replicate_key`` as a tuple, one of :data:`REPLICATE_KEYS`.

    Raises
    ------
    ValueError
        Any other value (the message names ``drug_screen.replicate_key``).
    """
    key = tuple(replicate_key) if isinstance(replicate_key, (list, tuple)) else None
    if key not in REPLICATE_KEYS:
        raise ValueError(f"drug_screen.replicate_key: expected [pert, cell] or [pert, cell, dose, time], "
                         f"got {replicate_key!r}")
    return key
