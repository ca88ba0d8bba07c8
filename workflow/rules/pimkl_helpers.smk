# The PIMKL study's settings, paths, input functions and targets (its rules:
# rules/pimkl.smk); rules/mmdt.smk reads the PK_* cohorts too. The source's
# cohorts and input files are checked by biokernels.config.check_config
# (common.smk).
# (`snakemake --lint` wants functions and rules in separate files.)
from biokernels.config import pimkl_cohorts  # noqa: E402
from biokernels.io.cohorts import geo_settings_problems  # noqa: E402

PK = config["pimkl"]
PK_NAME = PK["dataset"]
PK_SRC = PK["sources"][PK_NAME]
PK_DIR = f"results/pimkl/{PK_NAME}"
PK_STUDY = f"pimkl/{PK_NAME}"
PK_RAW = f"resources/pimkl/{PK_NAME}/raw"
PK_SYNTH = PK_SRC["type"] == "synthetic"
PK_DOWNLOADS = {} if PK_SYNTH else PK_SRC.get("downloads", {})
# A shipped config may name a download whose sha256 only the user can pin
# (`sha256: unpinned`, e.g. config/pimkl_geo_table_s1.yaml: GEO publishes no
# checksums and these machines have no network): stop before any job.
_PK_UNPINNED = [f for f, d in PK_DOWNLOADS.items() if d["sha256"] == "unpinned"]
if _PK_UNPINNED:
    raise WorkflowError(
        f"pimkl source {PK_NAME!r}: {len(_PK_UNPINNED)} download(s) have no pinned checksum "
        "(sha256: unpinned):\n"
        + "\n".join(
            f"  pimkl.sources.{PK_NAME}.downloads.{f}.sha256   ({PK_DOWNLOADS[f]['url']})"
            for f in _PK_UNPINNED
        )
        + "\nGEO publishes no checksums and this repository could not compute them (no network "
        "where it was written). Pin each file once: download its url (e.g. `curl -O <url>`), run "
        "`sha256sum <file>`, and write the 64 hex digits as the value of that key (a config "
        "overlay of your own can set just those keys). Or point the field itself (e.g. "
        "cohorts.GSE2034.series_matrix_path) at a local copy and drop its downloads entry."
    )
_PK_COHORTS = pimkl_cohorts(PK_SRC)
PK_S1_COHORTS = _PK_COHORTS.s1
PK_LARGE = _PK_COHORTS.large


def pk_file(field, value):
    """A files source's input file: the downloaded copy when `downloads` has
    the dotted field name (e.g. cohorts.GSE2034.expression_path), else the
    path (one of the two is set: biokernels.config.pimkl_problems)."""
    if field in PK_DOWNLOADS:
        return f"resources/pimkl/download/{PK_NAME}/{field}"
    return value


def pk_synthetic_cohort(cohort):
    """The files the generator writes for a synthetic cohort (CNA for the large one)."""
    out = {
        "format": "tsv",
        "expression_path": f"{PK_RAW}/cohorts/{cohort}/expression.tsv",
        "labels_path": f"{PK_RAW}/cohorts/{cohort}/labels.tsv",
    }
    if cohort == PK_LARGE:
        out["cna_path"] = f"{PK_RAW}/cohorts/{cohort}/cna.tsv"
    return out


if PK_SYNTH:
    PK_COHORT_SPECS = {c: pk_synthetic_cohort(c) for c in _PK_COHORTS.known}
    PK_NETWORK = {"format": "edgelist", "path": f"{PK_RAW}/network.tsv"}
    PK_GMTS = {PK_SRC.get("gene_sets_name", "pathways"): f"{PK_RAW}/gene_sets.gmt"}
else:
    PK_COHORT_SPECS = {
        c: {
            k: (pk_file(f"cohorts.{c}.{k}", v) if k.endswith("_path") else v)
            for k, v in s.items()
        }
        for c, s in PK_SRC["cohorts"].items()
    }
    PK_NETWORK = {k: v for k, v in PK_SRC["network"].items() if k != "network_path"} | {
        "path": pk_file("network.network_path", PK_SRC["network"].get("network_path"))
    }
    # gene_sets: {<collection>_path: GMT}; the first is the study's collection
    PK_GMTS = {
        name[: -len("_path")]: pk_file(f"gene_sets.{name}", path)
        for name, path in PK_SRC["gene_sets"].items()
    }

# Survival settings of GEO cohorts that the schema cannot check (key or
# regex, regexes that compile): before any job, not when a job reads the file.
_PK_GEO_PROBLEMS = [
    p
    for c, s in PK_COHORT_SPECS.items()
    if s.get("format") == "geo_series_matrix"
    for p in geo_settings_problems(s, c)
]
if _PK_GEO_PROBLEMS:
    raise WorkflowError(
        f"pimkl source {PK_NAME!r}:\n" + "\n".join(f"  {p}" for p in _PK_GEO_PROBLEMS)
    )

# the first collection: the study's gene sets (hallmark in the paper)
PK_PRIMARY = next(iter(PK_GMTS))
PK_COLLECTIONS = list(PK_GMTS) + (
    [f"random_{c}" for c in PK_GMTS] if PK["controls"]["random_sets"] else []
)
# the transferred signature: median weights of the S1 cohorts other than the large one
PK_TRANSFER_COHORTS = [c for c in PK_S1_COHORTS if c != PK_LARGE]
PK_SENS_COHORTS = list(PK["sensitivity"]["cohorts"] or PK_S1_COHORTS[:2])
# Settings each job type reads (Snakemake reruns a job when its params change).
PK_S1_PARAMS = canonical(
    {
        k: PK[k]
        for k in (
            "cv",
            "classifier",
            "svm_C",
            "kernel_aggregation",
            "collapse",
            "min_genes",
            "baseline_C_grid",
        )
    }
)
PK_S2_PARAMS = canonical(
    {
        **PK["s2"],
        "kernel_aggregation": PK["kernel_aggregation"],
        "min_genes": PK["min_genes"],
        "collapse": PK["collapse"],
    }
)
PK_SENS_PARAMS = canonical({**PK_S1_PARAMS, "sensitivity": PK["sensitivity"]})

PK_FIGS = ["fig3a", "fig3b", "fig4", "figS1", "figS2", "sensitivity"]
if PK_LARGE:
    PK_FIGS += ["fig6"] + (["fig5", "figS4"] if PK_TRANSFER_COHORTS else [])
# The counts of the input cohorts as Algorithm S1 reads them (what was read
# and dropped; written by pimkl_cohorts), in `all` and in the report.
PK_COHORT_COUNTS = f"{PK_DIR}/cohorts/counts.tsv"
PK_TARGETS = [
    f for fig in PK_FIGS for f in [f"{PK_DIR}/tables/{fig}.tsv", *figure(PK_STUDY, fig)]
] + [PK_COHORT_COUNTS]
# Prediction: a signature fitted on one cohort, applied to the others.
PK_PREDICT = PK["predict"]  # the schema fills its defaults
PK_TRAIN_COHORT = PK_PREDICT["train_cohort"] or PK_S1_COHORTS[0]
PK_PREDICT_COHORTS = list(
    PK_PREDICT["cohorts"] or [c for c in PK_S1_COHORTS if c != PK_TRAIN_COHORT]
)
_PK_UNKNOWN = [
    c for c in [PK_TRAIN_COHORT, *PK_PREDICT_COHORTS] if c not in PK_COHORT_SPECS
]
if _PK_UNKNOWN:
    raise WorkflowError(
        f"pimkl.predict names cohorts {_PK_UNKNOWN} that source {PK_NAME!r} does not have "
        f"({sorted(PK_COHORT_SPECS)})"
    )
PK_MODEL_DIR = f"{PK_DIR}/predict/signature_{PK_TRAIN_COHORT}"
PK_PREDICT_TARGETS = [
    f"{PK_DIR}/predict/{PK_TRAIN_COHORT}_signature_weights.tsv",
    f"{PK_DIR}/predict/{PK_TRAIN_COHORT}_summary.tsv",
]
PK_PREDICT_PARAMS = canonical(
    {
        **PK_S1_PARAMS,
        "predict": {k: PK_PREDICT[k] for k in ("normalization", "min_coverage")},
    }
)


def pk_cohort_files(cohort):
    """Input files of one cohort (every *_path of its spec)."""
    return [v for k, v in PK_COHORT_SPECS[cohort].items() if k.endswith("_path") and v]


def pk_gmt(wc):
    """GMT of a collection: the prepared copy (random_* are made from their base)."""
    base = (
        wc.collection[len("random_") :]
        if wc.collection.startswith("random_")
        else wc.collection
    )
    if base not in PK_GMTS:
        raise WorkflowError(
            f"pimkl: unknown gene-set collection {wc.collection!r} (known: {PK_COLLECTIONS})"
        )
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
            raise WorkflowError(
                f"pimkl {fig} needs pimkl source {PK_NAME!r} to have a large_cohort"
                + (
                    " and other S1 cohorts to transfer from"
                    if fig in ("fig5", "figS4")
                    else ""
                )
            )
        return [f"{PK_DIR}/tables/{fig}.tsv", *figure(PK_STUDY, fig)]

    return inputs
