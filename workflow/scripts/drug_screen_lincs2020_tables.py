"""Snakemake entry: the CMap LINCS 2020 metadata as the screen's GEO-layout
tables (biokernels.io.lincs2020.prepare_lincs2020); every signature left out
and every compound row set aside is counted in counts.tsv."""

import json

from biokernels.io.gctx import read_gctx_meta
from biokernels.io.lincs2020 import (SignatureFilter, prepare_lincs2020, read_cellinfo, read_compoundinfo,
                                     read_geneinfo, read_siginfo)
from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg = dict(smk.params.cfg)
level = int(cfg.get("level", 5))
columns = []
for path in smk.input.matrices:
    ids = read_gctx_meta(path, axis="col").index
    log.info("%s: %d columns", path, len(ids))
    columns += list(ids)
siginfo = read_siginfo(smk.input.siginfo, level)
log.info("%s: %d rows", smk.input.siginfo, len(siginfo))
compounds = [(f"compoundinfo[{i}]", read_compoundinfo(p)) for i, p in enumerate(smk.input.compoundinfo)]
for (name, table), path in zip(compounds, smk.input.compoundinfo):
    log.info("%s = %s", name, path)
cellinfo = read_cellinfo(smk.input.cellinfo[0]) if smk.input.cellinfo else None
res = prepare_lincs2020(columns, siginfo, read_geneinfo(smk.input.geneinfo), compounds, cellinfo, level=level,
                        filters=SignatureFilter.from_config(cfg), drug_key=cfg.get("drug_key", "pert_id"),
                        siginfo_name=f"{smk.input.siginfo} (siginfo)", log=log)
res.sample_info.to_csv(smk.output.sample_info, sep="\t")
res.pert_info.to_csv(smk.output.pert_info, sep="\t", index=False)
res.gene_info.to_csv(smk.output.gene_info, sep="\t", index=False)
res.compounds.to_csv(smk.output.compounds, sep="\t")
res.counts.to_csv(smk.output.counts, sep="\t", index=False)
with open(smk.output.summary, "w") as out:
    json.dump({"level": level, "columns_in_matrices": len(columns), "columns_excluded": res.n_excluded,
               "columns_kept": len(res.sample_info), "drugs_with_structure": len(res.pert_info)}, out, indent=1)
log.info("%d of %d columns kept, %d drugs with a structure", len(res.sample_info), len(columns), len(res.pert_info))
