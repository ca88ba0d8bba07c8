"""Snakemake entry: the imputed signatures ranked by CMap's weighted
connectivity score to the query (biokernels.studies.drug_screen.connectivity)."""

import json

import pandas as pd

from biokernels.io.gctx import read_gctx
from biokernels.logs import rule_logger
from biokernels.studies.drug_screen.connectivity import query_masks, query_profile, query_sets, rank_compounds

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
where = "drug_screen.predict.query"
query = {"name": "query", **smk.params.query}
genes = pd.read_csv(smk.input.genes, sep="\t", dtype=str)
up, down = query_sets(query, where)
up_mask, down_mask, counts = query_masks(genes, up, down, where)
profile = None
if query.get("profile_path"):
    profile, pc = query_profile(smk.input.profile, genes, f"{where}.profile_path")
    counts["profile"] = pc
controls = pd.read_csv(smk.input.controls, sep="\t", index_col=0, dtype={"cell_id": str})
controls.columns = controls.columns.astype(str)
parts = []
for path, table in zip(smk.input.profiles, smk.input.compounds):
    gct = read_gctx(path)
    if gct.data.shape[1] == 0:
        continue
    cell = str(gct.col_meta["cell_id"].iloc[0])
    data = gct.data.loc[genes["gene_id"].astype(str)]
    signatures = data.sub(controls.loc[cell, data.index].to_numpy(), axis=0)   # log2 change from control
    ranked = rank_compounds(signatures, up_mask, down_mask, profile)
    conf = pd.read_csv(table, sep="\t", dtype={"pert_id": str, "cell_id": str, "nearest_id": str})
    parts.append(ranked.join(conf.set_index("pair_id"), how="left"))
out = pd.concat(parts).reset_index().rename(columns={"pert_id": "compound"})
out = out.sort_values(["wtcs", "profile_id"], ascending=[False, True]).reset_index(drop=True)
out.insert(0, "rank", range(1, len(out) + 1))
out.insert(1, "query", query["name"])
cols = ["rank", "query", "compound", "cell_id", "wtcs"] + (["cosine"] if profile is not None else []) + [
    "profile_id", "stratum", "nearest_id", "tanimoto", "median_half_width"]
out[cols].to_csv(smk.output.ranked, sep="\t", index=False)
with open(smk.output.query, "w") as f:
    json.dump({"name": query["name"], **counts, "n_profiles": len(out)}, f, indent=2)
log.info("query %s: %d up and %d down genes matched (unmatched: %s / %s); %d imputed profiles ranked", query["name"],
         counts["n_up"], counts["n_down"], counts["unmatched_up"][:10], counts["unmatched_down"][:10], len(out))
log.info("top 10:\n%s", out[cols].head(10).to_string(index=False))
