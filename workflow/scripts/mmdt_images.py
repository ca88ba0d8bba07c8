"""Snakemake entry: LS-MMDT learning curve on two image domains of the images
study's set (clean source, corrupted coarser target, held-out classes)."""

from biokernels.logs import rule_logger
from biokernels.studies.images.domains import image_domains
from biokernels.studies.mmdt.protocol import cohort_transfer_curve, report_convergence

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg, task = smk.params.cfg, smk.params.cfg["images"]
Xs, ys, Xt, yt, source_map = image_domains(cfg["dataset"], task, smk.params.seed)
log.info("source %s, target %s (%s, severity %d)", Xs.shape, Xt.shape, task["corruption"], task["severity"])
seeds = list(range(smk.params.seed, smk.params.seed + task["seeds"]))
curve = cohort_transfer_curve(Xs, ys, Xt, yt, task["ks"], seeds, heldout_classes=task["heldout_classes"],
                              source_map=source_map, C_source=cfg["C_source"], C_target=cfg["C_target"],
                              mmdt_params={k: cfg[k] for k in ("max_alternations", "tol", "max_iter")})
curve.to_csv(smk.output[0], sep="\t", index=False)
log.info("%d rows\n%s", len(curve), curve.groupby(["method", "k"])["accuracy"].mean().unstack().round(3).to_string())
report_convergence(log, curve, "images")
