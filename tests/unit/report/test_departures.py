"""biokernels.departures: a row's departures from its paper's protocol,
computed from the run's config against config/paper_protocols.yaml."""

from __future__ import annotations

from pathlib import Path

import pytest
import yaml

from biokernels.departures import ProtocolsError, applies, load_protocols, resolve, row_departures

REPO = Path(__file__).resolve().parents[3]
PROTOCOLS = REPO / "config/paper_protocols.yaml"


@pytest.mark.parametrize("setting, section, values, expect", [
    ({"what": "w", "key": ["sources.{ds}.step", "step"], "paper": 0.1}, {"step": 0.1, "sources": {"a": {"step": 0.05}}},
     {"ds": "a"}, 0.05),                                          # the data set's own value wins
    ({"what": "w", "key": ["sources.{ds}.step", "step"], "paper": 0.1}, {"step": 0.1, "sources": {"a": {}}},
     {"ds": "a"}, 0.1),                                           # else the study's
    ({"what": "w", "key": ["sources.{ds}.lap"], "default": "u", "paper": "u"}, {"sources": {"a": {}}},
     {"ds": "a"}, "u"),                                           # else the workflow's default
    ({"what": "w", "placeholder": "feat", "paper": "morgan"}, {}, {"feat": "mol2vec"}, "mol2vec"),
])
def test_resolve(setting, section, values, expect):
    assert resolve(setting, section, values) == expect


@pytest.mark.parametrize("setting, value, departs", [
    ({"paper": 60}, 60, False),
    ({"paper": 60}, 60.0, False),
    ({"paper": 1e-6}, 1.0000000001e-6, False),                  # within a relative 1e-9
    ({"paper": 1e-6}, 1e-5, True),
    ({"paper": [1.0, 10.0]}, [1, 10], False),
    ({"paper": [1.0, 10.0]}, [0.1, 1, 10], True),               # an extended grid departs
    ({"one_of": ["auto", "cholesky"]}, "nystrom", True),
    ({"one_of": ["auto", "cholesky"]}, "cholesky", False),
    ({"at_least": 10}, 10, False),
    ({"at_least": 10}, 2, True),
    ({"paper": None}, None, False),
])
def test_departs_when_the_value_differs(setting, value, departs):
    s = {"what": "w", "key": "k", **setting}
    assert bool(row_departures("e", [s], {"k": value}, {})) is departs


def test_rows_and_except_patterns():
    s = {"what": "w", "key": "k", "paper": 1, "rows": ["dkl_*"], "except": ["*neighbor_counting"]}
    assert applies(s, "dkl_ligand_mean_roc_mdkl")
    assert not applies(s, "dkl_ligand_mean_roc_neighbor_counting")
    assert not applies(s, "ds_fig4a_x")


def test_text_names_the_run_and_the_paper():
    s = {"what": "beta grid step", "key": "beta_step", "paper": 0.1, "paper_text": "beta_i = -0.1 i"}
    assert row_departures("e", [s], {"beta_step": 0.01}, {}) == ["beta grid step: 0.01 (paper: beta_i = -0.1 i)"]
    fixed = {"what": "split 00", "fixed": "a seeded random split"}
    assert row_departures("e", [fixed], {}, {}) == ["split 00: a seeded random split"]


def test_a_bad_protocols_file_names_the_setting(tmp_path):
    bad = tmp_path / "p.yaml"
    bad.write_text(yaml.safe_dump({"version": 1, "studies": {"diffusion": [{"what": "x", "key": "k"}]}}))
    with pytest.raises(ProtocolsError, match=r"studies.diffusion.0"):
        load_protocols(bad)


def test_a_typo_in_a_key_or_a_rows_pattern_is_named_not_silently_skipped():
    """A key that names nothing, or a pattern that matches no entry, would
    leave a departure unstated and a row 'reproduced': each is a problem."""
    from biokernels.departures import protocol_problems

    config = {"diffusion": {"n_kernels": 30, "sources": {"a": {"laplacian": "normalized"}}}}
    ids = ["dkl_ligand_mean_roc_mdkl", "dkl_ligand_stability_mean_mdkl"]
    good = {"diffusion": [{"what": "kernels", "key": "n_kernels", "paper": 60, "rows": ["dkl_*"]},
                          {"what": "lap", "key": ["sources.{dkl_ligand}.laplacian"], "paper": "u"}]}
    assert protocol_problems(good, config, ids) == []
    typo = {"diffusion": [{"what": "kernels", "key": "n_kernel", "paper": 60}]}
    assert "key n_kernel is not a key of config diffusion" in protocol_problems(typo, config, ids)[0]
    pattern = {"diffusion": [{"what": "kernels", "key": "n_kernels", "paper": 60, "except": ["*_mdkI"]}]}
    assert "except pattern '*_mdkI' matches no entry" in protocol_problems(pattern, config, ids)[0]
    with_default = {"diffusion": [{"what": "x", "key": "unset_key", "default": 1, "paper": 1}]}
    assert protocol_problems(with_default, config, ids) == []


def test_the_shipped_protocols_have_no_silent_settings():
    from biokernels.departures import protocol_problems
    from biokernels.report import load_paper_values

    config = yaml.safe_load((REPO / "config/config.yaml").read_text())
    ids = [e["id"] for e in load_paper_values(REPO / "config/paper_values.yaml")["entries"]]
    assert protocol_problems(load_protocols(PROTOCOLS), config, ids) == []
