"""Snakemake entry: GEO-layout L1000 files from the hidden drug-response
model (embedded default, or real LINCS 2020 structure with simulated response)."""

import pandas as pd

from biokernels.errors import InputError
from biokernels.logs import rule_logger
from biokernels.synth.drug_screen import generate_default, generate_from_structure

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
src = dict(smk.params.source)
kind = src.pop("type")
for key in ("description", "data", "data_reason"):   # what the source is, not how to generate it
    src.pop(key, None)
if kind not in ("synthetic", "lincs2020_structure"):
    raise InputError(f"drug_screen source type {kind!r} holds real data: there is no hidden model to generate "
                     "files (or a truth/ folder) from; only synthetic and lincs2020_structure sources have one")
if kind == "synthetic":
    design = {k: tuple(src.pop(k)) for k in ("target_drugs", "source_drugs") if k in src}
    info = generate_default(smk.params.outdir, seed=smk.params.seed, design=design, **src)
else:  # lincs2020_structure
    pairs = pd.read_csv(src["pairs_path"]).rename(columns={"canonical_smiles": "smiles"})
    controls = pd.read_csv(src["controls_path"], index_col=0)
    landmarks = pd.read_csv(src["gene_info_path"], dtype={"gene_id": str})
    gene_info = pd.DataFrame({"pr_gene_id": landmarks["gene_id"], "pr_gene_symbol": landmarks["gene_symbol"],
                              "pr_gene_title": landmarks.get("gene_title", ""), "pr_is_lm": 1, "pr_is_bing": 1})
    log.info("real structure: %d pairs, %d cell lines with controls, %d genes", len(pairs), len(controls),
             len(gene_info))
    info = generate_from_structure(smk.params.outdir, seed=smk.params.seed, pairs=pairs[["cell_id", "smiles"]],
                                   controls=controls, gene_info=gene_info, replicates=src["replicates"])
log.info("generated: %s", info)
