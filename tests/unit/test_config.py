"""Config checks beyond the JSON schema."""

import math
from pathlib import Path

import pytest
import yaml

from biokernels.config import (
    PimklCohorts,
    check_config,
    find_missing_paths,
    mmdt_cohorts,
    mmdt_problems,
    pimkl_cohorts,
    schema_errors,
)


def test_missing_paths_named_by_dotted_key(tmp_path):
    (tmp_path / "edges.tsv").write_text("a\tb\n")
    config = {
        "seed": 1,
        "study": {"network_path": "edges.tsv", "labels_path": "nope.tsv", "optional_path": None},
        "other": {"results_dir": "not/checked"},
    }
    problems = find_missing_paths(config, base=tmp_path)
    assert len(problems) == 1
    assert "study.labels_path" in problems[0] and "nope.tsv" in problems[0]


def test_schema_errors_report_nan_and_inf_by_key(tmp_path):
    # A bound like "exclusiveMinimum: 0" is true for NaN in no direction, so
    # jsonschema lets NaN and inf through; schema_errors names each one.
    schema = tmp_path / "s.yaml"
    schema.write_text("type: object\nproperties:\n  a:\n    type: object\n")
    cfg = {"a": {"step": math.nan, "grid": [1.0, math.inf], "ok": 0.5}, "b": -math.inf, "c": "nan"}
    assert schema_errors(cfg, schema) == [
        "config key 'a.step': expected a finite number, got nan",
        "config key 'a.grid.1': expected a finite number, got inf",
        "config key 'b': expected a finite number, got -inf",
    ]
    assert schema_errors({"a": {"ok": 0.5}}, schema) == []


def test_drug_screen_replicate_key_schema():
    """drug_screen.replicate_key takes exactly [pert, cell] or [pert, cell,
    dose, time] (workflow/schemas/config.schema.yaml)."""
    import copy
    from pathlib import Path

    import yaml

    repo = Path(__file__).resolve().parents[2]
    schema = repo / "workflow/schemas/config.schema.yaml"
    base = yaml.safe_load((repo / "config/config.yaml").read_text())
    assert base["drug_screen"]["replicate_key"] == ["pert", "cell"]
    for value, ok in ((["pert", "cell"], True), (["pert", "cell", "dose", "time"], True),
                      (["pert", "dose"], False), (["cell", "pert"], False), ("pert", False)):
        cfg = copy.deepcopy(base)
        cfg["drug_screen"]["replicate_key"] = value
        mine = [e for e in schema_errors(cfg, schema) if "'drug_screen.replicate_key'" in e]
        assert (mine == []) == ok, (value, mine)
    del base["drug_screen"]["replicate_key"]
    assert any("'drug_screen'" in e and "replicate_key" in e for e in schema_errors(base, schema))


# --- check_config: what the schema cannot express -------------------------

REPO = Path(__file__).resolve().parents[2]
# the default config and the report's data files (papers' values, protocols, coverage): not config overlays
NOT_OVERLAYS = ("config.yaml", "paper_values.yaml", "paper_protocols.yaml", "coverage.yaml")
SHIPPED_LAYERS = sorted(p for p in (REPO / "config").glob("*.yaml") if p.name not in NOT_OVERLAYS)
# .test/config: the tiny overlays, config.yaml (all of them merged) and links to the report's data files
SHIPPED_LAYERS += sorted(p for p in (REPO / ".test/config").glob("*.yaml") if not p.is_symlink())


def _base() -> dict:
    """The embedded default config (config/config.yaml), as the workflow loads it."""
    return yaml.safe_load((REPO / "config/config.yaml").read_text())


def _layered(*layers: Path) -> dict:
    """config/config.yaml with --configfile layers merged as Snakemake merges them."""
    from snakemake.utils import update_config

    cfg = _base()
    for path in layers:
        update_config(cfg, yaml.safe_load(path.read_text()))
    return cfg


def _pimkl_files_source() -> dict:
    """The files PIMKL source of config/pimkl_string_hallmark_gse2034.yaml
    (check_config reads no file, so its paths need not exist here)."""
    cfg = _layered(REPO / "config/pimkl_string_hallmark_gse2034.yaml")
    return cfg["pimkl"]["sources"][cfg["pimkl"]["dataset"]]


@pytest.mark.parametrize("layer", [None, *SHIPPED_LAYERS], ids=lambda p: "config.yaml" if p is None else p.name)
def test_check_config_accepts_every_shipped_config(layer):
    # Every shipped config runs (README, CI): none may be refused.
    assert check_config(_layered(*([layer] if layer else []))) == []


def _set(cfg: dict, dotted: str, value) -> None:
    *path, last = dotted.split(".")
    for key in path:
        cfg = cfg[key]
    cfg[last] = value


# dotted key -> value that breaks a cross-field rule, and the start of the one
# message expected (it names the key at fault).
BROKEN = [
    ("drug_screen.dataset", "nosuch", "drug_screen.dataset is 'nosuch', which is not in drug_screen.sources"),
    ("depmap.dataset", "nosuch", "depmap.dataset is 'nosuch', which is not in depmap.sources"),
    ("pimkl.dataset", "nosuch", "pimkl.dataset is 'nosuch', which is not in pimkl.sources"),
    ("diffusion.datasets", ["ligand_synthetic", "nosuch"],
     "diffusion.datasets names 'nosuch', which is not in diffusion.sources"),
    ("drug_screen.featurization", "mol2vec", ("drug_screen.featurization asks for mol2vec but "
                                              "drug_screen.fingerprint.mol2vec_model_path is not set")),
    ("depmap.featurizations", ["morgan", "mol2vec"], "depmap.featurizations asks for mol2vec"),
    ("mkl_transfer.bio.featurization", "mol2vec", "mkl_transfer.bio.featurization asks for mol2vec"),
    # first == n_points: no point is left to predict
    ("drug_screen.scaling.first", 12, ("drug_screen.scaling.first (12) must be smaller than "
                                       "drug_screen.scaling.n_points (12)")),
    ("depmap.scaling.first", 16, "depmap.scaling.first (16) must be smaller than depmap.scaling.n_points (16)"),
    ("pimkl.sensitivity.cohorts", ["cohort1", "nosuch"], "pimkl.sensitivity.cohorts names ['nosuch']"),
    # the default images.dataset is the digits, which mkl_transfer reads as dataset: digits
    ("mkl_transfer.images.dataset", "images", "mkl_transfer.images.dataset is 'images', but images.dataset.name"),
]
# LS-MMDT's keys: checked by mmdt_problems when its cohort task is in the DAG
# (rules/mmdt_helpers.smk), not by check_config at parse time
BROKEN_MMDT = [
    ("mmdt.cohorts.target", "nosuch", "mmdt.cohorts.target is 'nosuch', not a cohort of pimkl.dataset"),
    ("mmdt.cohorts.source", ["cohort1", "nosuch"], "mmdt.cohorts.source names ['nosuch']"),
]


@pytest.mark.parametrize("key, value, message", BROKEN, ids=[b[0] for b in BROKEN])
def test_check_config_names_each_broken_key(key, value, message):
    cfg = _base()
    _set(cfg, key, value)
    problems = check_config(cfg)
    assert len(problems) == 1 and problems[0].startswith(message), problems


@pytest.mark.parametrize("key, value, message", BROKEN_MMDT, ids=[b[0] for b in BROKEN_MMDT])
def test_mmdt_problems_name_each_broken_key(key, value, message):
    cfg = _base()
    _set(cfg, key, value)
    problems = mmdt_problems(cfg)
    assert len(problems) == 1 and problems[0].startswith(message), problems
    assert check_config(cfg) == []      # not at parse time: only when LS-MMDT's cohort task is asked for


def test_check_config_boundaries_and_fixes_are_accepted():
    cfg = _base()
    _set(cfg, "drug_screen.scaling.first", 11)     # n_points 12: one point left to predict
    _set(cfg, "depmap.scaling.first", 15)          # n_points 16
    _set(cfg, "depmap.featurizations", ["morgan", "mol2vec"])
    _set(cfg, "mkl_transfer.bio.featurization", "mol2vec")
    _set(cfg, "drug_screen.fingerprint.mol2vec_model_path", "model_300dim.pkl")   # not read here
    _set(cfg, "pimkl.sensitivity.cohorts", ["multiomics"])   # the generator's large cohort is a cohort
    _set(cfg, "mmdt.cohorts.target", "cohort2")
    _set(cfg, "mmdt.cohorts.source", ["multiomics"])
    assert check_config(cfg) == []


def test_check_config_reports_every_problem_at_once():
    cfg = _base()
    _set(cfg, "drug_screen.dataset", "nosuch")
    _set(cfg, "depmap.scaling.first", 99)
    problems = check_config(cfg)
    assert [p.split(" ")[0] for p in problems] == ["drug_screen.dataset", "depmap.scaling.first"]


def test_check_config_mol2vec_model_asked_for_by_three_keys_gives_three_messages():
    cfg = _base()
    for key, value in (("drug_screen.featurization", "mol2vec"), ("depmap.featurizations", ["mol2vec"]),
                       ("mkl_transfer.bio.featurization", "mol2vec")):
        _set(cfg, key, value)
    assert [p.split(" ")[0] for p in check_config(cfg)] == [
        "drug_screen.featurization", "depmap.featurizations", "mkl_transfer.bio.featurization"]


# --- diffusion sources -----------------------------------------------------

def _diffusion(**extra) -> dict:
    """The tiny diffusion section (.test/config/diffusion_tiny.yaml) with a
    second source `fine`: `tiny` updated with ``extra``."""
    diffusion = _layered(REPO / ".test/config/diffusion_tiny.yaml")["diffusion"]
    diffusion["sources"]["fine"] = {**diffusion["sources"]["tiny"], **extra}
    return diffusion


@pytest.mark.parametrize("extra, message", [
    # the generator's default planted_betas has 2 values (biokernels.synth.networks)
    ({"generator": {"planted_mix": [0.3, 0.3, 0.4]}},
     "diffusion.sources.fine.generator: planted_betas (2 values) and planted_mix (3 values)"),
    ({"generator": {"planted_betas": [-1.0]}},
     "diffusion.sources.fine.generator: planted_betas (1 values) and planted_mix (2 values)"),
    ({"laplacian": "normalized"}, "diffusion.sources.fine: ['laplacian'] depart from the paper's protocol"),
    ({"beta_step": 0.05}, "diffusion.sources.fine: ['beta_step'] depart from the paper's protocol"),
    ({"unannotated": "exclude", "deviation": "  "}, "diffusion.sources.fine: ['unannotated'] depart"),
    ({"kernel_scale": "inner_cv", "laplacian": "normalized", "deviation": "x"},
     "diffusion.sources.fine: laplacian is set with kernel_scale: inner_cv"),
    ({"splits_of": "nosuch"}, "diffusion.sources.fine.splits_of names 'nosuch', which is not in diffusion.sources"),
    ({"splits_of": "tiny", "n_edges": 500}, ("diffusion.sources.fine.splits_of = 'tiny', but the two sources "
                                             "differ in ['n_edges']")),
])
def test_diffusion_source_checks_name_the_key(extra, message):
    problems = check_config({"diffusion": _diffusion(**extra)})
    assert len(problems) == 1 and problems[0].startswith(message), problems


def test_diffusion_source_deviations_that_say_so_are_accepted():
    # tiny's beta_step is the section's 0.5, but the source sets none: the paper's
    # protocol as far as the source goes; a finer grid on the same splits, labelled
    assert check_config({"diffusion": _diffusion(beta_step=0.1)}) == []
    assert check_config({"diffusion": _diffusion(beta_step=0.25, splits_of="tiny", deviation="step 0.25")}) == []
    assert check_config({"diffusion": _diffusion(kernel_scale="inner_cv", deviation="scale by inner CV")}) == []


def test_diffusion_inner_cv_needs_the_candidates():
    diffusion = _diffusion(kernel_scale="inner_cv", deviation="x")
    del diffusion["kernel_scale_cv"]
    assert check_config({"diffusion": diffusion}) == [
        "diffusion.sources.fine.kernel_scale is inner_cv but diffusion.kernel_scale_cv is not set"]


def test_diffusion_splits_of_a_data_set_that_takes_others_splits():
    diffusion = _diffusion(splits_of="tiny")
    diffusion["sources"]["finer"] = {**diffusion["sources"]["tiny"], "splits_of": "fine"}
    assert check_config({"diffusion": diffusion}) == [
        ("diffusion.sources.finer.splits_of = 'fine', which itself takes the splits of 'tiny': "
         "name that data set directly")]


def test_diffusion_sources_outside_datasets_are_checked():
    # a file target may name any source, listed in `datasets` or not
    diffusion = _diffusion(laplacian="normalized")
    assert diffusion["datasets"] == ["tiny"]
    assert [p.split(":")[0] for p in check_config({"diffusion": diffusion})] == ["diffusion.sources.fine"]


# --- PIMKL and LS-MMDT cohorts ---------------------------------------------

def test_pimkl_cohorts_defaults_of_the_generator_and_of_files_sources():
    from biokernels.synth.pimkl import DEFAULT_COHORTS

    synthetic = _base()["pimkl"]["sources"]["default_synthetic"]
    got = pimkl_cohorts(synthetic)
    assert got == PimklCohorts(s1=list(DEFAULT_COHORTS), large="multiomics", known=[*DEFAULT_COHORTS, "multiomics"])
    none = pimkl_cohorts({"type": "synthetic", "generator": {"cohorts": {"a": 20, "b": 20}, "large_size": 0}})
    assert none == PimklCohorts(s1=["a", "b"], large=None, known=["a", "b"])
    files = _pimkl_files_source()
    assert pimkl_cohorts(files) == PimklCohorts(s1=["GSE2034", "GSE7390"], large="GSE2034",
                                                known=["GSE2034", "GSE7390"])
    files = {**files, "large_cohort": None}
    del files["s1_cohorts"]
    assert pimkl_cohorts(files) == PimklCohorts(s1=["GSE2034", "GSE7390"], large=None,
                                                known=["GSE2034", "GSE7390"])


def test_mmdt_cohorts_defaults():
    from biokernels.synth.pimkl import DEFAULT_COHORTS

    cfg = _base()
    assert "cohorts" not in cfg["pimkl"]["sources"]["default_synthetic"]["generator"]
    # the pooled S1 cohorts (the generator's six) -> the large cohort
    assert mmdt_cohorts(cfg) == ("multiomics", list(DEFAULT_COHORTS))
    # without a large cohort: the last S1 cohort from the others
    cfg["pimkl"]["sources"]["default_synthetic"]["generator"] = {"cohorts": {"a": 20, "b": 20, "c": 20},
                                                                 "large_size": 0}
    assert mmdt_cohorts(cfg) == ("c", ["a", "b"])
    _set(cfg, "mmdt.cohorts.target", "a")
    assert mmdt_cohorts(cfg) == ("a", ["b", "c"])


def test_mmdt_needs_a_source_cohort_but_pimkl_does_not():
    """A one-cohort PIMKL source is a valid PIMKL source: check_config (parse
    time, every target) accepts it; only LS-MMDT's own check, run when its
    cohort task is in the DAG, refuses it."""
    cfg = _base()
    cfg["pimkl"]["sources"]["default_synthetic"]["generator"] = {"cohorts": {"only": 50}, "large_size": 0}
    _set(cfg, "pimkl.sensitivity.cohorts", ["only"])
    assert check_config(cfg) == []
    assert mmdt_problems(cfg) == [
        ("mmdt.cohorts.source: no source cohort left (the S1 cohorts of pimkl.dataset 'default_synthetic' are "
         "only the target 'only')")]


def test_a_network_setting_left_by_a_swapped_network_is_named(tmp_path):
    """An overlay that swaps the shipped STRING network for Pathway Commons'
    SIF is merged key by key, as Snakemake merges --configfile layers, so the
    STRING-only score_threshold stays: named at parse time, not at job time."""
    overlay = tmp_path / "pathwaycommons.yaml"
    overlay.write_text(yaml.safe_dump({"pimkl": {"sources": {"string_hallmark_gse2034": {"network": {
        "format": "sif", "network_path": "PwC_ReactomeKEGG.tsv.gz"}}}}}))
    cfg = _layered(REPO / "config/pimkl_string_hallmark_gse2034.yaml", overlay)
    network = cfg["pimkl"]["sources"]["string_hallmark_gse2034"]["network"]
    assert network["format"] == "sif" and network["score_threshold"] == 0          # the merge kept it
    key = "pimkl.sources.string_hallmark_gse2034.network"
    assert check_config(cfg) == [
        f"{key}.score_threshold applies to network format string only; this source's network format is sif: remove "
        + "the key"]
    del network["score_threshold"]
    assert check_config(cfg) == []
    network.update(format="edgelist", interaction_types=["in-complex-with"], biogrid_taxid=9606)
    assert check_config(cfg) == [
        f"{key}.{setting} applies to network format {owner} only; this source's network format is edgelist: "
        "remove the key"
        for setting, owner in (("interaction_types", "sif"), ("biogrid_taxid", "biogrid"))]


@pytest.mark.parametrize("old, new", [("edges", "edgelist"), ("biogrid_tab3", "biogrid")])
def test_a_former_network_format_name_is_refused_naming_the_allowed_ones(old, new):
    """Issue #28: one name per network format (the registry's, a PIMKL
    network's ``format``, a diffusion source's ``type``). The former
    registry names are not kept as aliases: the schema refuses them, and
    the message lists the allowed names, the new one among them."""
    schema = REPO / "workflow/schemas/config.schema.yaml"
    cfg = _layered(REPO / "config/pimkl_string_hallmark_gse2034.yaml")
    name = cfg["pimkl"]["dataset"]
    cfg["pimkl"]["sources"][name]["network"] = {"format": old, "network_path": "net.tsv"}
    key = f"config key 'pimkl.sources.{name}.network.format'"
    mine = [e for e in schema_errors(cfg, schema) if e.startswith(key)]
    assert mine == [f"{key}: {old!r} is not one of ['string', 'sif', 'edgelist', 'gem', 'biogrid']"], mine
    cfg["pimkl"]["sources"][name]["network"]["format"] = new
    assert not [e for e in schema_errors(cfg, schema) if e.startswith(key)]
    # a diffusion source's type takes the same names, and refuses the former ones as well
    diffusion = _layered(REPO / "config/diffusion_vonmering_mips.yaml")
    ds = next(d for d, s in diffusion["diffusion"]["sources"].items() if s["type"] == "edgelist")
    diffusion["diffusion"]["sources"][ds]["type"] = old
    key = f"config key 'diffusion.sources.{ds}.type'"
    assert f"{key}: {old!r} is not one of ['synthetic', 'edgelist', 'gem', 'biogrid']" in schema_errors(
        diffusion, schema)


@pytest.mark.parametrize("edit, message", [
    (lambda s: s.update(s1_cohorts=["GSE2034", "nosuch"]), "pimkl.sources.X.s1_cohorts names ['nosuch']"),
    (lambda s: s.update(large_cohort="nosuch"), "pimkl.sources.X.large_cohort is 'nosuch', not in"),
    (lambda s: s["network"].update(network_path=None),
     "pimkl.sources.X.network.network_path is neither set nor in pimkl.sources.X.downloads"),
    (lambda s: s["gene_sets"].update(kegg_path=None), "pimkl.sources.X.gene_sets.kegg_path is neither set"),
    (lambda s: s["cohorts"]["GSE7390"].update(arff_path=""), "pimkl.sources.X.cohorts.GSE7390.arff_path is neither"),
])
def test_pimkl_files_source_checks_name_the_key(edit, message):
    source = _pimkl_files_source()
    edit(source)
    cfg = _base()
    cfg["pimkl"]["sources"]["X"] = source
    cfg["pimkl"]["dataset"] = "X"
    problems = check_config(cfg)
    assert len(problems) == 1 and problems[0].startswith(message), problems


def test_pimkl_a_downloaded_input_needs_no_path():
    source = _pimkl_files_source()
    source["network"]["network_path"] = None
    source["downloads"] = {"network.network_path": {"url": "https://example.org/n.tsv.gz", "sha256": "0" * 64}}
    cfg = _base()
    cfg["pimkl"]["sources"]["X"] = source
    cfg["pimkl"]["dataset"] = "X"
    assert check_config(cfg) == []


def test_a_substitute_source_must_say_what_it_stands_in_for():
    """The report's verdict on a substitute quotes its reason: a substitute
    without one is refused at parse time, naming the key."""
    cfg = _base()
    cfg["depmap"]["sources"]["default_synthetic"]["data"] = "substitute"
    assert any(p.startswith("depmap.sources.default_synthetic.data_reason is missing") for p in check_config(cfg))
    cfg["depmap"]["sources"]["default_synthetic"]["data_reason"] = "CTRP AUCs for PRISM viability"
    assert not any("data_reason" in p for p in check_config(cfg))


def test_the_papers_own_diffusion_data_is_pinned():
    """A user who copies the von Mering config and points it at another file
    keeps `data: paper`: its sha256 pins make that a refusal, and a paper
    source without pins is named at parse time."""
    cfg = _layered(REPO / "config/diffusion_vonmering_mips.yaml")
    assert not any("sha256" in p for p in check_config(cfg))
    del cfg["diffusion"]["sources"]["vonmering_mips"]["sha256"]["network"]
    assert any(p.startswith("diffusion.sources.vonmering_mips.sha256.network is missing") for p in check_config(cfg))


@pytest.mark.parametrize("section, old, new", [("cv", "lambdas", "easymkl_lams"), ("s2", "lam", "easymkl_lam")])
def test_a_renamed_pimkl_key_is_refused_naming_the_new_one(section, old, new):
    """EasyMKL's lambda is ``easymkl_lam(s)`` outside solvers/easymkl (one
    word, one meaning: ``lam`` is an absolute ridge): the old key is refused
    at parse time, the first line naming the new one."""
    schema = REPO / "workflow/schemas/config.schema.yaml"
    cfg = _layered(REPO / "config/pimkl_string_hallmark_gse2034.yaml")
    assert schema_errors(cfg, schema) == []
    part = cfg["pimkl"][section]
    part[old] = part.pop(new)
    errors = schema_errors(cfg, schema)
    assert errors[0] == f"config key 'pimkl.{section}.{old}' is now called 'pimkl.{section}.{new}': rename it"
    assert f"config key 'pimkl.{section}': Additional properties are not allowed ('{old}' was unexpected)" in errors
