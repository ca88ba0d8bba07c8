"""Snakemake entry: drug embedding (Morgan bits or Mol2Vec) of the DepMap
drugs that CMAP does not have, computed from their SMILES as CMAP's."""

import pandas as pd

from biokernels.features.fingerprints import mol2vec_embeddings, morgan_fingerprints
from biokernels.errors import InputError
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
drugs = pd.read_csv(smk.input.drugs, sep="\t", dtype=str, keep_default_na=False)
new = drugs[(drugs["pert_id"] == "") & (drugs["drug_key"] != "")].drop_duplicates("drug_key")
smiles = pd.Series(new["smiles"].to_numpy(), index=new["drug_key"].to_numpy())
feat = smk.wildcards.featurization
cmap_cols = pd.read_csv(smk.input.cmap, sep="\t", index_col=0, nrows=0).columns
if smiles.empty:
    out = pd.DataFrame(columns=cmap_cols)
elif feat == "morgan":
    fp = smk.params.fingerprint
    out, invalid = morgan_fingerprints(smiles, radius=fp["radius"], n_bits=fp["n_bits"])
else:
    out, invalid = mol2vec_embeddings(smiles, smk.input.model)
if not smiles.empty and len(invalid):
    raise InputError(f"{smk.input.drugs}: {len(invalid)} SMILES with an InChIKey failed {feat}: "
                     f"{invalid.head(3).to_dict('records')}")
if list(out.columns) != list(cmap_cols):
    raise InputError(f"{smk.input.cmap}: columns differ from the {feat} features computed here "
                     f"({len(cmap_cols)} vs {out.shape[1]}); rerun the drug screen's featurization")
log.info("%s features of %d DepMap drugs not in CMAP (%d dimensions)", feat, len(out), out.shape[1])
out.index.name = "drug_key"
out.to_csv(smk.output[0], sep="\t")
