"""Embedded default data of the virtual-drug-screening study: a synthetic
CMAP/L1000 screen written in the GEO GSE92742 file layout, so the same
preprocessing (:mod:`biokernels.io.cmap`) runs on it as on GEO's files
(Radhakrishnan et al., Nat Commun 2023). One concept per module:

* :mod:`.model` - the hidden drug-response model (:class:`DrugResponseModel`);
* :mod:`.design` - which (drug, cell line) pairs are measured;
* :mod:`.geo_writer` - simulated instances written in the GEO layout;
* :mod:`.default` - the default screen (approved drugs, synthetic cells);
* :mod:`.structure` - a screen on real pairs and controls (LINCS structure);
* :mod:`.common` - id formats, random streams, seed checks.

docs/drug_screen_generator.md states the model's equations.
"""

from biokernels.synth.drug_screen.common import CELL_ID_FORMAT, PERT_ID_FORMAT
from biokernels.synth.drug_screen.model import DESCRIPTORS, FP_COUNT_BITS, DrugResponseModel
from biokernels.synth.drug_screen.design import default_design
from biokernels.synth.drug_screen.geo_writer import (BAD_ID_START, BAD_SMILES, CELL_COLUMNS, DOSE_UNIT, GENE_COLUMNS,
                                                     INST_COLUMNS, LINCS_DOSES, MISSING_CODE, PERT_COLUMNS,
                                                     PERT_TIMES, VEHICLE, write_geo_like)
from biokernels.synth.drug_screen.default import (LINEAGES, approved_drug_smiles, generate_default,
                                                  synthetic_cell_controls, synthetic_gene_info)
from biokernels.synth.drug_screen.structure import generate_from_structure

__all__ = [
    "PERT_ID_FORMAT", "CELL_ID_FORMAT",
    "DESCRIPTORS", "FP_COUNT_BITS", "DrugResponseModel",
    "default_design",
    "BAD_ID_START", "MISSING_CODE", "DOSE_UNIT", "LINCS_DOSES", "PERT_TIMES", "VEHICLE", "BAD_SMILES",
    "INST_COLUMNS", "GENE_COLUMNS", "CELL_COLUMNS", "PERT_COLUMNS", "write_geo_like",
    "LINEAGES", "approved_drug_smiles", "synthetic_gene_info", "synthetic_cell_controls", "generate_default",
    "generate_from_structure",
]
