"""Snakemake entry: Morgan bits of the user's compound library
(drug_screen.predict.library_path)."""

from biokernels.errors import InputError
from biokernels.features.fingerprints import morgan_fingerprints
from biokernels.logs import rule_logger
from biokernels.io.compounds import read_library

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
where = "drug_screen.predict.library_path"
smiles = read_library(smk.input[0], where)
fp = smk.params.fingerprint
try:
    bits, invalid = morgan_fingerprints(smiles, radius=fp["radius"], n_bits=fp["n_bits"])
except InputError as err:
    raise InputError(f"{where} ({smk.input[0]}), column smiles: {err}") from err
log.info("%s: %d compounds; Morgan radius %d, %d bits: %d valid, %d invalid SMILES (listed in %s)", smk.input[0],
         len(smiles), fp["radius"], fp["n_bits"], len(bits), len(invalid), smk.output.invalid)
for _, row in invalid.head(20).iterrows():
    log.info("invalid SMILES: %s %r (%s)", row["id"], row["smiles"], row["reason"])
invalid.to_csv(smk.output.invalid, sep="\t", index=False)
bits.index.name = "pert_id"
bits.to_csv(smk.output.bits, sep="\t")
