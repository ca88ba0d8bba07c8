"""Snakemake entry: CMAP preprocessing (Methods, "Preprocessing for CMAP data")."""

import json

import pandas as pd

from biokernels.io.cmap import preprocess_cmap, read_gene_info, read_sample_info
from biokernels.io.gctx import GCT, write_gctx
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
matrices = [smk.input.gctx] if isinstance(smk.input.gctx, str) else list(smk.input.gctx)
meta = read_sample_info(smk.input.sample_info)
gene_info = read_gene_info(smk.input.gene_info)
valid = pd.read_csv(smk.input.fingerprints, sep="\t", usecols=[0], dtype=str).iloc[:, 0]
controls = (pd.read_csv(smk.input.controls[0], index_col=0, sep=None, engine="python").rename(index=str)
            if smk.input.controls else None)  # CSV or TSV, first column = cell id
upstream, excluded = None, 0
if "upstream_counts" in smk.input.keys():  # CMap LINCS 2020: the signature filters ran before
    upstream = pd.read_csv(smk.input.upstream_counts, sep="\t")
    with open(smk.input.upstream) as handle:
        excluded = int(json.load(handle)["columns_excluded"])
res = preprocess_cmap(matrices, valid, sample_meta=meta, sample_meta_source=smk.input.sample_info,
                      gene_info=gene_info, log2_transform=smk.params.log2_transform, controls=controls,
                      missing_controls=smk.params.missing_controls, replicate_key=smk.params.replicate_key,
                      gene_space=smk.params.gene_space, columns_excluded_upstream=excluded,
                      upstream_counts=upstream, progress_every=smk.params.progress_s, log=log)
res.counts.to_csv(smk.output.counts, sep="\t", index=False)
res.genes.to_csv(smk.output.genes, sep="\t", index=False)
res.controls.to_csv(smk.output.controls, sep="\t")
res.pairs.to_csv(smk.output.pairs, sep="\t")
write_gctx(smk.output.expression, GCT(data=res.expression.T, row_meta=res.genes.set_index("gene_id"),
                                      col_meta=res.pairs))
log.info("%d pairs x %d genes; %d cell lines (replicate key %s)", *res.expression.shape, len(res.controls),
         list(smk.params.replicate_key))
