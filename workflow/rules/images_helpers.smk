# The images study's settings, paths and targets (its rules: rules/images.smk).
# (`snakemake --lint` wants functions and rules in separate files.)
IM = config["images"]
IM_NAME = IM["dataset"]["name"]
IM_STUDY = f"images/{IM_NAME}"
IM_DIR = f"results/{IM_STUDY}"
IM_KERNELS = list(IM["compared_kernels"])
IM_FIGS = ("fig2a", "fig2b", "fig2c", "fig3a", "fig3b")
# Fig. 2c refits a source per class count: its own kernel list where set.
IM_FIG_KERNELS = {
    fig: list(
        IM["classes_vs_examples"].get("compared_kernels") or IM_KERNELS
        if fig == "fig2c"
        else IM_KERNELS
    )
    for fig in IM_FIGS
}
# Settings each job type reads (a job reruns when its own settings change).
IM_PROJECTION_PARAMS = canonical(
    {k: IM[k] for k in ("dataset", "kernels", "solver", "projection")}
)
IM_CLASSES_PARAMS = canonical(
    {
        k: IM[k]
        for k in ("dataset", "kernels", "solver", "projection", "classes_vs_examples")
    }
)
IM_TRANSLATION_PARAMS = canonical(
    {k: IM[k] for k in ("dataset", "kernels", "solver", "projection", "translation")}
)
IM_FIG_DOCS = {
    "fig2a": "Fig. 2a, baseline vs projected accuracy per kernel and target",
    "fig2b": "Fig. 2b and SI Figs. S2-S4, projected accuracy against n_t and its log2 law",
    "fig2c": "Fig. 2c, a fixed number of source images over more or fewer classes",
    "fig3a": "Fig. 3a and SI Fig. S6, baseline, source and translated accuracy per corruption",
    "fig3b": "Fig. 3b and SI Fig. S5, translated accuracy against n_t",
}


def im_runs(fig):
    """Per-kernel row tables of one figure."""
    return [f"{IM_DIR}/runs/{fig}_{k}.tsv" for k in IM_FIG_KERNELS[fig]]


IM_TARGETS = [
    out
    for fig in IM_FIGS
    for out in (f"{IM_DIR}/tables/{fig}.tsv", *figure(IM_STUDY, fig))
]
