"""Snakemake entry: Mol2Vec embeddings of the compounds of pert_info."""
import os
import sys

sys.path.insert(0, os.path.join(snakemake.scriptdir, os.pardir, "src"))  # noqa: F821

from biokernels.fingerprints import mol2vec_embeddings  # noqa: E402
from biokernels.io.cmap import read_l1000_table  # noqa: E402
from biokernels.logs import rule_logger  # noqa: E402

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
