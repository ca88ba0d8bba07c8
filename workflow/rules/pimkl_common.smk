# --- PIMKL: pathway-induced MKL (rules/pimkl.smk) ---------------------------
# Included from the end of common.smk. Manica et al. 2019: Algorithm S1 per
# cohort and gene-set collection, Algorithm S2 on the large cohort, controls,
# sensitivity; figures 3a, 3b, 4, 5, 6, S1, S2, S4.
from biokernels.synth.pimkl import DEFAULT_COHORTS as _PK_DEFAULT_COHORTS  # noqa: E402

PK = config["pimkl"]
PK_NAME = PK["dataset"]
if PK_NAME not in PK["sources"]:
    raise WorkflowError(f"pimkl.dataset is {PK_NAME!r}, which is not in pimkl.sources ({sorted(PK['sources'])})")
PK_SRC = PK["sources"][PK_NAME]
PK_DIR = f"results/pimkl/{PK_NAME}"
PK_STUDY = f"pimkl/{PK_NAME}"
PK_RAW = f"resources/pimkl/{PK_NAME}/raw"
PK_SYNTH = PK_SRC["type"] == "synthetic"
PK_DOWNLOADS = {} if PK_SYNTH else PK_SRC.get("downloads", {})


def pk_file(field, value):
    """A real source's input file: the downloaded copy when `downloads` has the
    dotted field name (e.g. cohorts.GSE2034.expression_path), else the path."""
    if field in PK_DOWNLOADS:
        return f"resources/pimkl/download/{PK_NAME}/{field}"
    if not value:
        raise WorkflowError(f"pimkl source {PK_NAME!r}: {field} is neither set nor in `downloads`")
    return value


if PK_SYNTH:
    _gen = PK_SRC.get("generator", {})
    _cohorts = _gen.get("cohorts") or _PK_DEFAULT_COHORTS
    PK_LARGE = _gen.get("large_cohort", "multiomics") if _gen.get("large_size", 1000) else None
    PK_S1_COHORTS = list(_cohorts)
    PK_COHORT_SPECS = {c: {"format": "tsv", "expression_path": f"{PK_RAW}/cohorts/{c}/expression.tsv",
                           "labels_path": f"{PK_RAW}/cohorts/{c}/labels.tsv"} for c in _cohorts}
    if PK_LARGE:
        PK_COHORT_SPECS[PK_LARGE] = {"format": "tsv", "expression_path": f"{PK_RAW}/cohorts/{PK_LARGE}/expression.tsv",
                                     "labels_path": f"{PK_RAW}/cohorts/{PK_LARGE}/labels.tsv",
                                     "cna_path": f"{PK_RAW}/cohorts/{PK_LARGE}/cna.tsv"}
    PK_NETWORK = {"format": "edges", "path": f"{PK_RAW}/network.tsv"}
    PK_GMTS = {PK_SRC.get("gene_sets_name", "pathways"): f"{PK_RAW}/gene_sets.gmt"}
else:
    PK_COHORT_SPECS = {c: {k: (pk_file(f"cohorts.{c}.{k}", v) if k.endswith("_path") else v) for k, v in s.items()}
                       for c, s in PK_SRC["cohorts"].items()}
    PK_S1_COHORTS = PK_SRC.get("s1_cohorts") or list(PK_SRC["cohorts"])
    PK_LARGE = PK_SRC.get("large_cohort")
    PK_NETWORK = {k: v for k, v in PK_SRC["network"].items() if k != "network_path"} | {
        "path": pk_file("network.network_path", PK_SRC["network"].get("network_path"))}
    # gene_sets: {<collection>_path: GMT}; the first is the study's collection
    PK_GMTS = {name[:-len("_path")]: pk_file(f"gene_sets.{name}", path) for name, path in PK_SRC["gene_sets"].items()}
    _bad = [c for c in PK_S1_COHORTS + ([PK_LARGE] if PK_LARGE else []) if c not in PK_SRC["cohorts"]]
    if _bad:
        raise WorkflowError(f"pimkl source {PK_NAME!r}: s1_cohorts/large_cohort name {_bad}, not in its cohorts")

PK_PRIMARY = next(iter(PK_GMTS))  # the first collection: the study's gene sets (hallmark in the paper)
PK_COLLECTIONS = list(PK_GMTS) + ([f"random_{c}" for c in PK_GMTS] if PK["controls"]["random_sets"] else [])
# the transferred signature: median weights of the S1 cohorts other than the large one
PK_TRANSFER_COHORTS = [c for c in PK_S1_COHORTS if c != PK_LARGE]
PK_SENS_COHORTS = [c for c in (PK["sensitivity"]["cohorts"] or PK_S1_COHORTS[:2])]
_bad = [c for c in PK_SENS_COHORTS if c not in PK_COHORT_SPECS]
if _bad:
    raise WorkflowError(f"pimkl.sensitivity.cohorts names {_bad}, not cohorts of source {PK_NAME!r}")
# Settings each job type reads (Snakemake reruns a job when its params change).
PK_S1_PARAMS = canonical({k: PK[k] for k in ("cv", "classifier", "svm_C", "kernel_aggregation", "collapse",
                                             "min_genes", "baseline_C_grid")})
PK_S2_PARAMS = canonical({**PK["s2"], "kernel_aggregation": PK["kernel_aggregation"], "min_genes": PK["min_genes"],
                          "collapse": PK["collapse"]})
PK_SENS_PARAMS = canonical({**PK_S1_PARAMS, "sensitivity": PK["sensitivity"]})

PK_FIGS = ["fig3a", "fig3b", "fig4", "figS1", "figS2", "sensitivity"]
if PK_LARGE:
    PK_FIGS += ["fig6"] + (["fig5", "figS4"] if PK_TRANSFER_COHORTS else [])
PK_TARGETS = [f for fig in PK_FIGS for f in [f"{PK_DIR}/tables/{fig}.tsv", *figure(PK_STUDY, fig)]]


def pk_cohort_files(cohort):
    """Input files of one cohort (every *_path of its spec)."""
    return [v for k, v in PK_COHORT_SPECS[cohort].items() if k.endswith("_path") and v]


def pk_gmt(wc):
    """GMT of a collection: the prepared copy (random_* are made from their base)."""
    base = wc.collection[len("random_"):] if wc.collection.startswith("random_") else wc.collection
    if base not in PK_GMTS:
        raise WorkflowError(f"pimkl: unknown gene-set collection {wc.collection!r} (known: {PK_COLLECTIONS})")
    return PK_GMTS[base]


def pk_s1(collection, cohorts, kind="aucs"):
    return [f"{PK_DIR}/s1/{collection}/{c}/{kind}.tsv" for c in cohorts]


def pk_figure_inputs(wc):
    """What each PIMKL figure reads."""
    f = wc.fig
    if f in ("fig3a", "figS1"):
        return pk_s1(PK_PRIMARY, PK_S1_COHORTS)
    if f in ("fig3b", "fig4"):
        return pk_s1(PK_PRIMARY, PK_S1_COHORTS, "weights")
    if f == "figS2":
        return [p for c in PK_COLLECTIONS for p in pk_s1(c, PK_S1_COHORTS)]
    if f == "fig5":
        return pk_s1(PK_PRIMARY, PK_TRANSFER_COHORTS) + [f"{PK_DIR}/s2/aucs.tsv"]
    if f == "fig6":
        return [f"{PK_DIR}/s2/aucs.tsv"]
    if f == "figS4":
        return [f"{PK_DIR}/s2/weights.tsv", f"{PK_DIR}/s2/transferred.tsv"]
    if f == "sensitivity":
        return [f"{PK_DIR}/sensitivity/{c}.tsv" for c in PK_SENS_COHORTS]
    raise WorkflowError(f"pimkl: unknown figure {f!r}")


def pk_target(fig):
    """Input function of a named PIMKL target (an error when the configured
    data cannot make the figure, e.g. Fig. 5 without a large cohort)."""
    def inputs(wc):
        if fig not in PK_FIGS:
            raise WorkflowError(f"pimkl {fig} needs pimkl source {PK_NAME!r} to have a large_cohort"
                                + (" and other S1 cohorts to transfer from" if fig in ("fig5", "figS4") else ""))
        return [f"{PK_DIR}/tables/{fig}.tsv", *figure(PK_STUDY, fig)]
    return inputs
