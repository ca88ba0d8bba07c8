"""Checks of the workflow configuration that a JSON schema cannot express,
and the settings derived from it that the rules and the checks share."""

from __future__ import annotations

import inspect
import math
from collections.abc import Mapping
from dataclasses import dataclass
from pathlib import Path


def find_missing_paths(config: Mapping, base: str | Path = ".", prefix: str = "") -> list[str]:
    """List the config keys ending in ``_path`` whose value names a file or
    folder that does not exist.

    By convention every input path of a real-data config is such a key
    (e.g. ``diffusion.network_path``); relative paths are taken from ``base``
    (the workflow's working directory). Empty or ``null`` values are skipped
    (the input is optional).

    Parameters
    ----------
    config : mapping
        The validated config (nested dicts and lists).
    base : path
    prefix : str
        Dotted key of ``config`` inside the whole config (for recursion).

    Returns
    -------
    list of str
        One message per missing path, naming the dotted key, e.g.
        ``"config key 'diffusion.network_path': '../x.tsv' does not exist"``.
    """
    problems: list[str] = []
    for key, value in config.items():
        dotted = f"{prefix}{key}"
        if isinstance(value, Mapping):
            problems += find_missing_paths(value, base, dotted + ".")
        elif isinstance(value, str) and value and str(key).endswith("_path"):
            if not (Path(base) / value).exists():
                problems.append(f"config key '{dotted}': {value!r} does not exist "
                                f"(relative to {Path(base).resolve()})")
    return problems


#: Config keys that took a new name (old dotted key -> new): the schema
#: refuses the old one, and :func:`schema_errors` names the new one.
RENAMED_KEYS = {
    "pimkl.cv.lambdas": "pimkl.cv.easymkl_lams",
    "pimkl.s2.lam": "pimkl.s2.easymkl_lam",
}


def _has_key(config: Mapping, dotted: str) -> bool:
    node = config
    for part in dotted.split("."):
        if not isinstance(node, Mapping) or part not in node:
            return False
        node = node[part]
    return True


def schema_errors(config: Mapping, schema_path: str | Path) -> list[str]:
    """Check ``config`` against a JSON schema (YAML file) and return one short
    line per violation, naming the dotted key, e.g.
    ``"config key 'demo': Additional properties are not allowed ('n_trian'
    was unexpected)"``; empty when valid.

    NaN and infinite numbers, which a schema's bounds let through, are
    reported too, and a key of :data:`RENAMED_KEYS` under its old name gets
    a line naming the new one first. Snakemake's own ``validate`` (run
    afterwards, it also fills defaults) prints the whole schema and config
    with the first error; this gives the reader every error, one line each.
    Source: jsonschema (library).
    """
    import jsonschema
    import yaml

    schema = yaml.safe_load(Path(schema_path).read_text())
    validator = jsonschema.validators.validator_for(schema)(schema)
    lines = [f"config key '{old}' is now called '{new}': rename it"
             for old, new in RENAMED_KEYS.items() if _has_key(config, old)]
    for err in sorted(validator.iter_errors(dict(config)), key=lambda e: list(map(str, e.absolute_path))):
        leaves = [err]
        if err.context:  # if/then and oneOf: report the innermost reasons
            leaves = [e for e in err.context if not e.context] or leaves
        for e in leaves:
            key = ".".join(map(str, e.absolute_path)) or "<top level>"
            lines.append(f"config key '{key}': {e.message}")
    lines += [f"config key '{key}': expected a finite number, got {value!r}" for key, value in _non_finite(config)]
    return list(dict.fromkeys(lines))


def _non_finite(obj, prefix: str = ""):
    """(dotted key, value) of every NaN or infinite number in a config tree:
    JSON Schema's bounds cannot reject them (every comparison with NaN is
    false), and no setting of this workflow takes one."""
    if isinstance(obj, Mapping):
        for k, v in obj.items():
            yield from _non_finite(v, f"{prefix}.{k}" if prefix else str(k))
    elif isinstance(obj, list):
        for i, v in enumerate(obj):
            yield from _non_finite(v, f"{prefix}.{i}")
    elif isinstance(obj, float) and not math.isfinite(obj):
        yield prefix, obj


# --- Cross-field checks -----------------------------------------------------
# What the JSON schema (workflow/schemas/config.schema.yaml) cannot express:
# a name in one key that must be an entry of another, settings that exclude
# each other, defaults that come from the generators. workflow/rules/common.smk
# calls check_config once, after schema validation (which fills the schema's
# defaults), and stops before any job with every message.

#: Per-data-set settings of the diffusion protocol (``diffusion.sources.<ds>``)
#: with the paper's values (Sun, Ji & Ye 2008): the unnormalized Laplacian
#: ``L = diag(Ae) - A``, its fixed grid ``beta_i = -0.1 i``, unannotated
#: proteins as negatives. Any other value is a labelled deviation.
DIFFUSION_SOURCE_DEFAULTS = {"laplacian": "unnormalized", "kernel_scale": "fixed", "unannotated": "negative"}
#: The paper's step of the diffusion grid ``beta_i = -beta_step * i``.
DIFFUSION_PAPER_BETA_STEP = 0.1
#: Keys in which a data set may differ from the one whose splits it takes
#: (``splits_of``): the network, tasks and splits are then the same.
DIFFUSION_GRID_ONLY_KEYS = frozenset({"description", "beta_step", "splits_of", "deviation",
                                      *DIFFUSION_SOURCE_DEFAULTS})
#: Config keys that can ask for the Mol2Vec drug embedding, which needs
#: ``drug_screen.fingerprint.mol2vec_model_path``: dotted key -> whether the
#: config asks for Mol2Vec there.
_MOL2VEC_USERS = {
    "drug_screen.featurization": lambda c: c["drug_screen"]["featurization"] == "mol2vec",
    "depmap.featurizations": lambda c: "mol2vec" in c["depmap"]["featurizations"],
    "mkl_transfer.bio.featurization": lambda c: c["mkl_transfer"]["bio"]["featurization"] == "mol2vec",
}


def check_config(config: Mapping) -> list[str]:
    """Check what the schema cannot check of the whole workflow config.

    Pure (no Snakemake, no file access): the workflow calls it after schema
    validation and stops, before any job, with every message.

    Parameters
    ----------
    config : mapping
        The workflow config (``config/config.yaml`` and the ``--configfile``
        layers), validated against ``workflow/schemas/config.schema.yaml``.
        Sections it does not have are not checked.

    Returns
    -------
    list of str
        One message per problem, each starting with the dotted config key at
        fault (e.g. ``"drug_screen.scaling.first (12) must be smaller than
        ..."``); empty when the config is consistent. Checked:

        * ``drug_screen.dataset``, ``depmap.dataset``, ``pimkl.dataset`` name
          an entry of their ``sources``; every ``diffusion.datasets`` entry
          is in ``diffusion.sources``;
        * Mol2Vec, wherever asked for (``drug_screen.featurization``,
          ``depmap.featurizations``, ``mkl_transfer.bio.featurization``),
          has ``drug_screen.fingerprint.mol2vec_model_path``;
        * ``drug_screen.scaling.first`` and ``depmap.scaling.first`` are
          smaller than their ``n_points``;
        * a distributed source fit (``drug_screen.solver_settings``
          ``processes * nodes > 1``) has a matrix-free solver;
        * every ``diffusion.sources.<ds>`` (:func:`diffusion_source_problems`);
        * the PIMKL source's cohorts, input files, network settings and
          sensitivity cohorts (:func:`pimkl_problems`);
        * every source with ``data: substitute`` says what it is in
          ``data_reason`` (the report's verdicts on it quote the reason);
        * ``mkl_transfer.images.dataset: images`` has an ``images.dataset``
          other than the digits (those are ``dataset: digits``).

        Not here: LS-MMDT's cohorts (:func:`mmdt_problems`), checked only
        when its cohort task is in the DAG (``rules/mmdt_helpers.smk``), so
        that a PIMKL source LS-MMDT cannot use (one cohort) does not stop
        the other targets.
    """
    problems: list[str] = []
    for study in ("diffusion", "drug_screen", "depmap", "pimkl"):
        for name, src in ((config.get(study) or {}).get("sources") or {}).items():
            if src.get("data") == "substitute" and not str(src.get("data_reason") or "").strip():
                problems.append(f"{study}.sources.{name}.data_reason is missing: a substitute says in one line "
                                "what it is and what of the paper's data it stands in for")
    for name, src in ((config.get("diffusion") or {}).get("sources") or {}).items():
        if src.get("data") == "paper":
            pinned = src.get("sha256") or {}
            unpinned = [k[:-len("_path")] for k, v in src.items()
                        if k.endswith("_path") and v and k[:-len("_path")] not in pinned]
            problems += [f"diffusion.sources.{name}.sha256.{k} is missing: a source of the paper's own data "
                         f"(data: paper) pins each local file's sha256, so that another file under the same name "
                         f"is refused rather than judged as the paper's (sha256sum {src[k + '_path']})"
                         for k in unpinned]
    for study in ("drug_screen", "depmap", "pimkl"):
        if study in config and config[study]["dataset"] not in config[study]["sources"]:
            problems.append(f"{study}.dataset is {config[study]['dataset']!r}, which is not in {study}.sources "
                            f"({sorted(config[study]['sources'])})")
    if "diffusion" in config:
        sources = config["diffusion"]["sources"]
        problems += [f"diffusion.datasets names {ds!r}, which is not in diffusion.sources ({sorted(sources)})"
                     for ds in config["diffusion"]["datasets"] if ds not in sources]
        for ds in sources:  # every source: a file target may name one outside `datasets`
            problems += diffusion_source_problems(config["diffusion"], ds)
    if "drug_screen" in config:
        model = config["drug_screen"]["fingerprint"].get("mol2vec_model_path")
        problems += [f"{key} asks for mol2vec but drug_screen.fingerprint.mol2vec_model_path is not set; give a "
                     "gensim Word2Vec file (e.g. model_300dim.pkl of samoturk/mol2vec)"
                     for key, uses in _MOL2VEC_USERS.items()
                     if key.split(".")[0] in config and uses(config) and not model]
    if "drug_screen" in config and "solver_settings" in config["drug_screen"]:
        st, solver = config["drug_screen"]["solver_settings"], config["drug_screen"]["solver"]
        if st["processes"] * st["nodes"] > 1 and solver in ("cholesky", "cg"):
            problems.append(f"drug_screen.solver_settings asks for {st['processes']} process(es) on {st['nodes']} "
                            f"node(s), but drug_screen.solver is {solver!r}, which runs on one process; use "
                            "cg_matrix_free, nystrom or auto")
    for study in ("drug_screen", "depmap"):
        if study in config:
            first, n_points = config[study]["scaling"]["first"], config[study]["scaling"]["n_points"]
            if first >= n_points:
                problems.append(f"{study}.scaling.first ({first}) must be smaller than {study}.scaling.n_points "
                                f"({n_points}): the law fitted on the first points predicts the last one")
    if "pimkl" in config and config["pimkl"]["dataset"] in config["pimkl"]["sources"]:
        problems += pimkl_problems(config["pimkl"])
    mt_images = ((config.get("mkl_transfer") or {}).get("images") or {})
    if mt_images.get("dataset") == "images":
        name = ((config.get("images") or {}).get("dataset") or {}).get("name")
        if name in (None, "digits"):
            problems.append(f"mkl_transfer.images.dataset is 'images', but images.dataset.name is {name!r}: "
                            "the digits task is mkl_transfer.images.dataset: digits; 'images' reads another "
                            "image set (e.g. fashion_mnist)")
    return problems


def diffusion_source_problems(diffusion: Mapping, ds: str) -> list[str]:
    """What the schema cannot check of ``diffusion.sources.<ds>``.

    * ``generator.planted_betas`` and ``generator.planted_mix`` have one
      length (either may be the default of
      :func:`biokernels.synth.networks.planted_function_network`);
    * a source departing from the paper's protocol
      (:data:`DIFFUSION_SOURCE_DEFAULTS`, a ``beta_step`` other than 0.1)
      says how in ``deviation`` (its reproduction rows are labelled with it);
    * ``kernel_scale: inner_cv`` needs ``diffusion.kernel_scale_cv`` and
      excludes ``laplacian`` (the candidates carry the Laplacians);
    * ``splits_of`` names another source, which takes no other's splits
      itself and differs only in :data:`DIFFUSION_GRID_ONLY_KEYS` (so the
      inputs and splits really are the same).

    NaN and infinite values are :func:`schema_errors`' part.

    Parameters
    ----------
    diffusion : mapping
        The config's ``diffusion`` section.
    ds : str
        A key of ``diffusion["sources"]``.

    Returns
    -------
    list of str
        One message per problem, naming ``diffusion.sources.<ds>...``.
    """
    from biokernels.synth.networks import planted_function_network

    sources = diffusion["sources"]
    src = sources[ds]
    key = f"diffusion.sources.{ds}"
    problems = []
    gen = src.get("generator") or {}
    defaults = inspect.signature(planted_function_network).parameters
    nb, nm = (len(gen.get(k, defaults[k].default)) for k in ("planted_betas", "planted_mix"))
    if nb != nm:
        problems.append(f"{key}.generator: planted_betas ({nb} values) and planted_mix ({nm} values) must have the "
                        "same length (either may be the generator's default)")
    departs = [k for k, v in DIFFUSION_SOURCE_DEFAULTS.items() if src.get(k, v) != v]
    if src.get("beta_step", DIFFUSION_PAPER_BETA_STEP) != DIFFUSION_PAPER_BETA_STEP:
        departs.append("beta_step")  # a data set's own grid
    if departs and not str(src.get("deviation") or "").strip():
        problems.append(f"{key}: {departs} depart from the paper's protocol; say how in {key}.deviation (its "
                        "reproduction rows are labelled with it)")
    if src.get("kernel_scale") == "inner_cv":
        if "kernel_scale_cv" not in diffusion:
            problems.append(f"{key}.kernel_scale is inner_cv but diffusion.kernel_scale_cv is not set")
        if "laplacian" in src:
            problems.append(f"{key}: laplacian is set with kernel_scale: inner_cv, where the Laplacians are those "
                            "of diffusion.kernel_scale_cv.candidates; remove one of the two")
    other = src.get("splits_of")
    if other is not None and other != ds:
        if other not in sources:
            problems.append(f"{key}.splits_of names {other!r}, which is not in diffusion.sources")
        elif sources[other].get("splits_of", other) != other:
            problems.append(f"{key}.splits_of = {other!r}, which itself takes the splits of "
                            f"{sources[other]['splits_of']!r}: name that data set directly")
        else:
            theirs = sources[other]
            differ = sorted(k for k in (set(src) | set(theirs)) - DIFFUSION_GRID_ONLY_KEYS
                            if src.get(k) != theirs.get(k))
            if differ:
                problems.append(f"{key}.splits_of = {other!r}, but the two sources differ in {differ}: only "
                                f"{', '.join(sorted(DIFFUSION_GRID_ONLY_KEYS))} may differ for the same inputs "
                                "and splits")
    return problems


@dataclass(frozen=True)
class PimklCohorts:
    """The cohorts of a PIMKL source (``pimkl.sources.<name>``).

    Attributes
    ----------
    s1 : list of str
        Cohorts of Algorithm S1, in order.
    large : str or None
        The cohort of Algorithm S2 (None: no S2, Figures 5, 6 and S4).
    known : list of str
        Every cohort the source has (files sources: its ``cohorts``;
        synthetic ones: the generated cohorts and the large one).
    """

    s1: list[str]
    large: str | None
    known: list[str]


def pimkl_cohorts(source: Mapping) -> PimklCohorts:
    """The cohorts of a PIMKL source, with the defaults filled in.

    Synthetic sources: the ``generator`` settings, else the defaults of
    :func:`biokernels.synth.pimkl.generate_default` (cohorts
    :data:`~biokernels.synth.pimkl.DEFAULT_COHORTS`, large cohort
    ``multiomics``, none with ``large_size: 0``). Files sources:
    ``s1_cohorts`` (default every cohort, in order) and ``large_cohort``
    (default none). Names are not checked here (:func:`pimkl_problems`).

    Parameters
    ----------
    source : mapping
        One entry of ``pimkl.sources`` (schema-validated).

    Returns
    -------
    PimklCohorts
    """
    if source["type"] == "synthetic":
        from biokernels.synth.pimkl import DEFAULT_COHORTS, generate_default

        gen = source.get("generator") or {}
        defaults = inspect.signature(generate_default).parameters
        s1 = list(gen.get("cohorts") or DEFAULT_COHORTS)
        large_size = gen.get("large_size", defaults["large_size"].default)
        large = gen.get("large_cohort", defaults["large_cohort"].default) if large_size else None
        return PimklCohorts(s1=s1, large=large, known=list(dict.fromkeys(s1 + ([large] if large else []))))
    return PimklCohorts(s1=list(source.get("s1_cohorts") or source["cohorts"]), large=source.get("large_cohort"),
                        known=list(source["cohorts"]))


def pimkl_input_fields(source: Mapping) -> dict[str, str | None]:
    """Input-file fields of a files PIMKL source: dotted field (as the keys
    of its ``downloads``, e.g. ``cohorts.GSE2034.expression_path``) -> the
    configured path (None or empty when a download replaces it).

    Parameters
    ----------
    source : mapping
        One entry of ``pimkl.sources`` with ``type: files``.
    """
    fields = {f"cohorts.{c}.{k}": v for c, spec in source["cohorts"].items() for k, v in spec.items()
              if k.endswith("_path")}
    fields["network.network_path"] = source["network"].get("network_path")
    fields.update({f"gene_sets.{name}": path for name, path in source["gene_sets"].items()})
    return fields


def pimkl_problems(pimkl: Mapping) -> list[str]:
    """What the schema cannot check of the PIMKL study's cohorts and inputs.

    The selected source (``pimkl.dataset``, which must be in
    ``pimkl.sources``): a files source's ``s1_cohorts`` and
    ``large_cohort`` are among its ``cohorts``, every input-file field
    (:func:`pimkl_input_fields`) is set or in its ``downloads`` and its
    network has only its format's settings (:func:`network_setting_problems`);
    ``pimkl.sensitivity.cohorts`` are cohorts of the source.

    Returns
    -------
    list of str
        One message per problem, naming the dotted key.
    """
    name = pimkl["dataset"]
    source = pimkl["sources"][name]
    key = f"pimkl.sources.{name}"
    cohorts = pimkl_cohorts(source)
    problems = []
    if source["type"] == "files":
        bad_s1 = [c for c in source.get("s1_cohorts") or [] if c not in source["cohorts"]]
        if bad_s1:
            problems.append(f"{key}.s1_cohorts names {bad_s1}, not in {key}.cohorts ({sorted(source['cohorts'])})")
        if cohorts.large and cohorts.large not in source["cohorts"]:
            problems.append(f"{key}.large_cohort is {cohorts.large!r}, not in {key}.cohorts "
                            f"({sorted(source['cohorts'])})")
        downloads = source.get("downloads") or {}
        problems += [f"{key}.{field} is neither set nor in {key}.downloads"
                     for field, path in pimkl_input_fields(source).items() if not path and field not in downloads]
        problems += network_setting_problems(source["network"], f"{key}.network")
    bad = [c for c in pimkl["sensitivity"]["cohorts"] if c not in cohorts.known]
    if bad:
        problems.append(f"pimkl.sensitivity.cohorts names {bad}, not cohorts of pimkl source {name!r} "
                        f"({sorted(cohorts.known)})")
    return problems


def network_setting_problems(network: Mapping, key: str) -> list[str]:
    """Settings of a network spec (``format``, ``network_path`` and the
    reader's settings) that its format's reader
    (:data:`biokernels.io.networks.NETWORK_READERS`) does not take, each
    named with the format(s) whose reader does. Config layers merge key by
    key, so an overlay that swaps a shipped network (STRING -> Pathway
    Commons) keeps the old format's settings (``score_threshold``), which
    the new reader would refuse only at job time.

    Parameters
    ----------
    network : mapping
        E.g. ``pimkl.sources.<name>.network``.
    key : str
        Its dotted config key, for the messages.

    Returns
    -------
    list of str
        One message per setting, e.g. ``"<key>.score_threshold applies to
        network format string only; this source's network format is sif:
        remove the key"``.
    """
    from biokernels.io.networks import NETWORK_READERS

    fmt = network["format"]
    takes = {f: set(inspect.signature(reader).parameters) - {"path"} for f, reader in NETWORK_READERS.items()}
    problems = []
    for setting in network:
        if setting in ("format", "network_path") or setting in takes.get(fmt, ()):
            continue
        owners = [f for f, names in takes.items() if setting in names]
        where = f"network format {' or '.join(owners)} only" if owners else "no network format"
        problems.append(f"{key}.{setting} applies to {where}; this source's network format is {fmt}: remove the key")
    return problems


def mmdt_cohorts(config: Mapping) -> tuple[str, list[str]]:
    """The target cohort and the pooled source cohorts of LS-MMDT's cohort
    task, with the defaults filled in: ``mmdt.cohorts.target``, else the
    PIMKL source's large cohort, else its last S1 cohort;
    ``mmdt.cohorts.source``, else every other S1 cohort (in order).

    Parameters
    ----------
    config : mapping
        The workflow config; ``pimkl.dataset`` must be in ``pimkl.sources``.

    Returns
    -------
    (str, list of str)
        Target cohort, source cohorts. Names are not checked here
        (:func:`mmdt_problems`).
    """
    pk = pimkl_cohorts(config["pimkl"]["sources"][config["pimkl"]["dataset"]])
    chosen = config["mmdt"]["cohorts"]
    target = chosen["target"] or pk.large or pk.s1[-1]
    return target, list(chosen["source"]) or [c for c in pk.s1 if c != target]


def mmdt_problems(config: Mapping) -> list[str]:
    """``mmdt.cohorts.target`` and ``mmdt.cohorts.source``, where set, are
    cohorts of the PIMKL source, and at least one source cohort is left
    (:func:`mmdt_cohorts`). Defaults drawn from the PIMKL source are that
    source's checks (:func:`pimkl_problems`).

    Returns
    -------
    list of str
        One message per problem, naming the dotted key.
    """
    name = config["pimkl"]["dataset"]
    known = pimkl_cohorts(config["pimkl"]["sources"][name]).known
    chosen = config["mmdt"]["cohorts"]
    target, sources = mmdt_cohorts(config)
    problems = []
    if chosen["target"] and chosen["target"] not in known:
        problems.append(f"mmdt.cohorts.target is {chosen['target']!r}, not a cohort of pimkl.dataset {name!r} "
                        f"({sorted(known)})")
    bad = [c for c in chosen["source"] if c not in known]
    if bad:
        problems.append(f"mmdt.cohorts.source names {bad}, not cohorts of pimkl.dataset {name!r} ({sorted(known)})")
    if not sources:
        problems.append(f"mmdt.cohorts.source: no source cohort left (the S1 cohorts of pimkl.dataset {name!r} "
                        f"are only the target {target!r})")
    return problems
