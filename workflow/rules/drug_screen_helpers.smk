# The drug screen's settings, paths, input functions and targets (its rules:
# rules/drug_screen.smk); rules/depmap*.smk and rules/mkl_transfer*.smk read
# the DS_* constants and ds_* functions too.
# (`snakemake --lint` wants functions and rules in separate files.)
DS = config["drug_screen"]
DS_NAME = DS["dataset"]
DS_SRC = DS["sources"][DS_NAME]
DS_DIR = f"results/drug_screen/{DS_NAME}"
DS_FEATURES = f"{DS_DIR}/fingerprints/{DS['featurization']}.tsv.gz"
# Models, tables and figures depend on the drug featurization: one folder each,
# so Morgan and Mol2Vec results sit side by side.
DS_FIG_STUDY = f"drug_screen/{DS_NAME}/{DS['featurization']}"
DS_MODEL_DIR = f"results/{DS_FIG_STUDY}"
DS_RAW_NAMES = {
    "gctx": "level3.gctx",
    "sample_info": "inst_info.txt",
    "pert_info": "pert_info.txt",
    "gene_info": "gene_info.txt",
}
# Real data: the files of a geo or lincs2020 layout, downloaded (type geo,
# lincs2020) or local (type local, linked after an optional sha256 check).
# DS_LAYOUT is None for the generated sources (synthetic, lincs2020_structure).
DS_KIND = DS_SRC["type"]
DS_LAYOUT = (
    DS_SRC.get("layout", "geo")
    if DS_KIND == "local"
    else {"geo": "geo", "lincs2020": "lincs2020"}.get(DS_KIND)
)
DS_SIMULATED = DS_LAYOUT is None  # generated files with a hidden model (truth/)
# Layout -> (files needed, files optional). A geo layout's tables left out
# come from the matrix's own metadata (rule drug_screen_matrix_tables).
DS_LAYOUT_FILES = {
    "geo": (["gctx"], ["sample_info", "pert_info", "gene_info"]),
    "lincs2020": (["matrix", "siginfo", "geneinfo", "compoundinfo"], ["cellinfo"]),
}
DS_LIST_FILES = ("matrix", "compoundinfo")  # lists: keys matrix_1, matrix_2, ...
DS_LINCS2020_KEYS = (
    "level",
    "gene_space",
    "pert_types",
    "qc_pass",
    "is_hiq",
    "dose_um",
    "times_h",
    "cell_lines",
    "drug_key",
)
DS_PROGRESS_S = DS.get("progress_seconds", 30)


def _ds_file_specs(src, name):
    """File key -> spec ({url, sha256, gunzip} or {path, sha256}) of a real
    source, list entries numbered from 1 (matrix_1, compoundinfo_1, ...),
    and file key -> its config key (drug_screen.sources.<name>.files.matrix[0]);
    checks what the schema cannot: the files and keys of the layout, and
    that local files exist (naming the config key)."""
    if DS_LAYOUT is None:
        return {}, {}
    where = f"drug_screen.sources.{name}"
    files = src["files"]
    needed, optional = DS_LAYOUT_FILES[DS_LAYOUT]
    problems = [
        f"{where}.files.{k}: not a file of layout {DS_LAYOUT} (it has {needed + optional})"
        for k in files
        if k not in needed + optional
    ]
    problems += [
        f"{where}.files.{k}: missing (layout {DS_LAYOUT} needs {needed})"
        for k in needed
        if k not in files
    ]
    if DS_LAYOUT == "geo":
        problems += [
            f"{where}.{k}: applies to layout lincs2020 only"
            for k in DS_LINCS2020_KEYS
            if k in src
        ]
    specs, labels = {}, {}
    for k, v in files.items():
        entries = enumerate(v, start=1) if k in DS_LIST_FILES else [(None, v)]
        for i, x in entries:
            key = k if i is None else f"{k}_{i}"
            specs[key] = x
            labels[key] = f"{where}.files.{k}" + ("" if i is None else f"[{i - 1}]")
    problems += [
        f"{labels[k]}.path: {v['path']!r} is not a file (relative to {os.getcwd()})"
        for k, v in specs.items()
        if "path" in v and not os.path.isfile(v["path"])
    ]
    if problems:
        raise WorkflowError("Config validation failed:\n" + "\n".join(problems))
    return specs, labels


DS_FILE_SPECS, DS_FILE_KEYS = _ds_file_specs(DS_SRC, DS_NAME)
# Target cell lines are addressed by rank (1 = most drugs, or the order of
# drug_screen.targets), so the DAG is known before the data are read.
DS_RANKS = [str(k) for k in range(1, (len(DS["targets"]) or DS["n_target"]) + 1)]
# Settings each job type reads (Snakemake reruns a job when its params change).
DS_SPLIT_PARAMS = canonical(
    {k: DS[k] for k in ("n_cells", "n_target", "targets", "folds")}
)
DS_MODEL_PARAMS = canonical(
    {k: DS[k] for k in ("kernel", "solver", "solver_settings", "source_ridge")}
)
DS_SOLVER = DS["solver_settings"]
DS_TARGET_PARAMS = canonical({k: DS[k] for k in ("kernel", "target_ridge")})
DS_BY_DOSE = list(DS["replicate_key"]) == ["pert", "cell", "dose", "time"]


def ds_pooled_pairs(wc):
    """pairs.tsv for the rules that need one row per (drug, cell line): the
    split (and so every model and figure) and DepMap. With
    drug_screen.replicate_key [pert, cell, dose, time] this stops the run
    while Snakemake builds the DAG, before any job: only the preprocessed
    files themselves can be asked for."""
    if DS_BY_DOSE:
        raise WorkflowError(
            "drug_screen.replicate_key is [pert, cell, dose, time]: the preprocessing then writes one row "
            "per (drug, cell line, dose, time), which the split, the screen's models and DepMap cannot take: "
            "a sample's input is [drug fingerprint | cell control] with no dose or time, so the doses of one "
            "(drug, cell line) would be identical inputs with different targets, the folds (drawn per row) "
            "would put a drug's other doses of a target cell line in its training folds, and DepMap matches "
            "CMAP by pert_id:cell_id. Set replicate_key: [pert, cell] (the paper), or ask only for "
            f"{DS_DIR}/preprocessed/ files."
        )
    return f"{DS_DIR}/preprocessed/pairs.tsv"


def ds_file(key):
    """Where one file of a real source is read: its checksummed download, or
    the link to the local file (made after its optional sha256 check)."""
    spec = DS_FILE_SPECS[key]
    folder = "download" if "url" in spec else "local"
    return f"resources/drug_screen/{DS_NAME}/{folder}/{key}"


def ds_raw(key):
    """Path of one raw input of the drug screen in GEO layout (key gctx,
    sample_info, pert_info or gene_info): generated for synthetic and
    lincs2020_structure sources; the downloaded or linked file for layout
    geo, or for a table it does not configure the one built from the
    matrix's own metadata; the table rebuilt from the CMap LINCS 2020
    metadata for layout lincs2020 (whose matrices are ds_matrices())."""
    if DS_LAYOUT == "geo":
        if key in DS_FILE_SPECS:
            return ds_file(key)
        return f"resources/drug_screen/{DS_NAME}/matrix/{key}.txt"
    if DS_LAYOUT == "lincs2020":
        if key == "gctx":
            raise WorkflowError(
                "layout lincs2020 has several matrices: use ds_matrices()"
            )
        return f"resources/drug_screen/{DS_NAME}/lincs2020/{DS_RAW_NAMES[key]}"
    return f"resources/drug_screen/{DS_NAME}/raw/{DS_RAW_NAMES[key]}"


def ds_matrices(wc=None):
    """The expression matrices the preprocessing reads (GCTX or GCT text)."""
    if DS_LAYOUT == "lincs2020":
        return [ds_file(k) for k in DS_FILE_SPECS if k.startswith("matrix_")]
    return [ds_raw("gctx")]


def ds_geo_matrix(wc):
    """The matrix of a geo layout, whose metadata stand in for the tables
    the config does not give."""
    if DS_LAYOUT != "geo":
        raise WorkflowError(f"drug_screen.sources.{DS_NAME} is not a geo layout")
    return ds_file("gctx")


def ds_lincs2020_inputs(wc):
    """The CMap LINCS 2020 metadata tables (and the matrices, whose column
    ids are read) behind the GEO-layout tables of a lincs2020 layout."""
    if DS_LAYOUT != "lincs2020":
        raise WorkflowError(
            f"drug_screen.sources.{DS_NAME} is not a CMap LINCS 2020 source"
        )
    keys = list(DS_FILE_SPECS)
    return {
        "matrices": ds_matrices(),
        "siginfo": ds_file("siginfo"),
        "geneinfo": ds_file("geneinfo"),
        "compoundinfo": [ds_file(k) for k in keys if k.startswith("compoundinfo_")],
        "cellinfo": [ds_file("cellinfo")] if "cellinfo" in keys else [],
    }


def ds_upstream(wc):
    """The counts of the CMap LINCS 2020 conversion, which the
    preprocessing puts at the top of its own (none for other layouts)."""
    if DS_LAYOUT != "lincs2020":
        return {}
    folder = f"resources/drug_screen/{DS_NAME}/lincs2020"
    return {
        "upstream_counts": f"{folder}/counts.tsv",
        "upstream": f"{folder}/summary.json",
    }


def ds_figure_inputs(wc):
    if wc.fig in ("fig4a", "fig4b"):
        return expand(f"{DS_MODEL_DIR}/transfer/target{{k}}_metrics.tsv", k=DS_RANKS)
    if wc.fig in ("fig4c", "fig4d"):
        return expand(f"{DS_MODEL_DIR}/scaling/target{{k}}.tsv", k=DS_RANKS)
    return [
        f"{DS_DIR}/preprocessed/expression.gctx",
        f"{DS_DIR}/preprocessed/controls.tsv",
        f"{DS_DIR}/split/folds.tsv",
    ] + expand(f"{DS_MODEL_DIR}/transfer/target{{k}}_samples.tsv.gz", k=DS_RANKS)


# Fig. 4f shows a second target cell line: left out of `all` when there is one.
DS_FIGS = ["fig4a", "fig4b", "fig4c", "fig4d", "fig4e"] + (
    ["fig4f"] if len(DS_RANKS) > 1 or len(DS["pca_cells"]) > 1 else []
)
DS_TARGETS = [
    f
    for fig in DS_FIGS
    for f in [f"{DS_MODEL_DIR}/tables/{fig}.tsv", *figure(DS_FIG_STUDY, fig)]
]

# drug_screen_predict (rules/drug_screen_predict.smk): the virtual screen of
# a compound library on every target cell line.
DS_PREDICT = DS["predict"]
DS_PREDICT_DIR = f"{DS_MODEL_DIR}/predict"
DS_LIBRARY = DS_PREDICT["library_path"]
DS_QUERY = DS_PREDICT["query"]
if DS_LIBRARY and DS["featurization"] != "morgan":
    raise WorkflowError(
        "drug_screen.predict.library_path: a user library is featurized with Morgan bits only; "
        f"drug_screen.featurization is {DS['featurization']!r} (set it to morgan, or library_path: null "
        "to impute the screen's own compounds)"
    )
if DS_QUERY:
    _missing = [
        f"drug_screen.predict.query.{k}: {DS_QUERY[k]!r} is not a file (a GMT path, or give a list of genes)"
        for k in ("up", "down")
        if isinstance(DS_QUERY.get(k), str) and not os.path.isfile(DS_QUERY[k])
    ]
    if _missing:
        raise WorkflowError("Config validation failed:\n" + "\n".join(_missing))
DS_PREDICT_PARAMS = canonical(
    {
        "kernel": DS["kernel"],
        **{k: DS_PREDICT[k] for k in ("model", "interval_level")},
    }
)


def ds_library_features(wc=None):
    """The library's model features: the user's compounds featurized by
    drug_screen_library, or (no library) the screen's own features."""
    return f"{DS_PREDICT_DIR}/library/morgan.tsv.gz" if DS_LIBRARY else DS_FEATURES


def ds_library_bits(wc=None):
    """Morgan bits of the library (the Tanimoto of each compound's nearest
    measured compound), and of the screen's compounds."""
    screen_bits = f"{DS_DIR}/fingerprints/morgan.tsv.gz"
    return {
        "library_bits": ds_library_features() if DS_LIBRARY else screen_bits,
        "screen_bits": screen_bits,
    }


def ds_query_files(wc=None):
    """The query's files: GMT paths given for up / down, and the profile."""
    if not DS_QUERY:
        return {}
    files = {k: DS_QUERY[k] for k in ("up", "down") if isinstance(DS_QUERY.get(k), str)}
    if DS_QUERY.get("profile_path"):
        files["profile"] = DS_QUERY["profile_path"]
    return files


DS_PREDICT_TARGETS = (
    expand(
        f"{DS_PREDICT_DIR}/target{{k}}/{{f}}",
        k=DS_RANKS,
        f=["profiles.gctx", "compounds.tsv", "calibration.tsv"],
    )
    + [f"{DS_PREDICT_DIR}/summary.tsv"]
    + ([f"{DS_PREDICT_DIR}/ranked.tsv"] if DS_QUERY else [])
)
