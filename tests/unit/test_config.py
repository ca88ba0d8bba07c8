"""Config checks beyond the JSON schema."""

import math

from biokernels.config import find_missing_paths, schema_errors


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
