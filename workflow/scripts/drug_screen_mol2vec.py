"""Snakemake entry: Mol2Vec embeddings of the compounds of pert_info."""

from biokernels.features.fingerprints import mol2vec_embeddings
from biokernels.io.cmap import read_l1000_table
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
info = read_l1000_table(smk.input.pert_info, ["pert_id", "pert_type", "canonical_smiles"], index="pert_id")
cp = info[info["pert_type"] == "trt_cp"]
vectors, invalid = mol2vec_embeddings(cp["canonical_smiles"], smk.input.model)
log.info("Mol2Vec (%s): %d compounds embedded in %d dimensions, %d invalid SMILES", smk.input.model,
         len(vectors), vectors.shape[1], len(invalid))
invalid.to_csv(smk.output.invalid, sep="\t", index=False)
vectors.index.name = "pert_id"
vectors.to_csv(smk.output.vectors, sep="\t")
