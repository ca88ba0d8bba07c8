"""Config checks beyond the JSON schema."""

from biokernels.config import find_missing_paths


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
