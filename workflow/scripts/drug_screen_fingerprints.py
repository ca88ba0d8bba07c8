"""Snakemake entry: RDKit Morgan fingerprints of the compounds of pert_info."""

from biokernels.features.fingerprints import morgan_fingerprints
from biokernels.io.cmap import read_l1000_table
from biokernels.errors import InputError
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
info = read_l1000_table(smk.input.pert_info, ["pert_id", "pert_type", "canonical_smiles"], index="pert_id")
cp = info[info["pert_type"] == "trt_cp"]
log.info("%s: %d compounds (trt_cp) of %d perturbagens", smk.input.pert_info, len(cp), len(info))
fp = smk.params.fingerprint
try:
    bits, invalid = morgan_fingerprints(cp["canonical_smiles"], radius=fp["radius"], n_bits=fp["n_bits"])
except InputError as err:
    raise InputError(f"{smk.input.pert_info}, column canonical_smiles of the trt_cp rows: {err}") from err
log.info("Morgan radius %d, %d bits: %d valid, %d invalid SMILES (listed in %s)", fp["radius"], fp["n_bits"],
         len(bits), len(invalid), smk.output.invalid)
for _, row in invalid.head(20).iterrows():
    log.info("invalid SMILES: %s %r (%s)", row["id"], row["smiles"], row["reason"])
log.info("Mol2Vec embeddings come from rule drug_screen_mol2vec, which runs only with drug_screen.featurization: "
         "mol2vec and a model file in drug_screen.fingerprint.mol2vec_model_path; otherwise the models use these bits")
invalid.to_csv(smk.output.invalid, sep="\t", index=False)
bits.index.name = "pert_id"
bits.to_csv(smk.output.bits, sep="\t")
