"""The Snakemake workflow catalog's check of the test setup in .test/: the
rule graph of `snakemake -s workflow/Snakefile -c 1 -d .test`. Its config,
.test/config/config.yaml, is config/config.yaml with the tiny overlays
.test/config/*_tiny.yaml merged in (as --configfile merges them); beside it,
links to the report's paper files in config/ (paper_values.yaml,
paper_protocols.yaml, coverage.yaml). Rewrite it after a change of either with

    .venv/bin/python tests/workflow/test_catalog.py > .test/config/config.yaml
"""

from __future__ import annotations

from pathlib import Path

import yaml

REPO = Path(__file__).resolve().parents[2]
HEADER = """\
# The test setup of the Snakemake workflow catalog (`snakemake -d .test`):
# config/config.yaml with the tiny overlays .test/config/*_tiny.yaml merged
# in. Generated, do not edit: after a change of either, run
#   .venv/bin/python tests/workflow/test_catalog.py > .test/config/config.yaml
"""


def merged_test_config() -> dict:
    """config/config.yaml with .test/config/*_tiny.yaml merged in, as
    Snakemake merges --configfile layers."""
    from snakemake.utils import update_config

    cfg = yaml.safe_load((REPO / "config/config.yaml").read_text())
    for overlay in sorted((REPO / ".test/config").glob("*_tiny.yaml")):
        update_config(cfg, yaml.safe_load(overlay.read_text()))
    return cfg


class _NoAliases(yaml.SafeDumper):
    def ignore_aliases(self, data):
        return True


def render() -> str:
    return HEADER + yaml.dump(merged_test_config(), Dumper=_NoAliases, sort_keys=False,
                              default_flow_style=None, width=100)


def test_test_setup_links_the_paper_files():
    for name in ("paper_values.yaml", "paper_protocols.yaml", "coverage.yaml"):
        link = REPO / ".test/config" / name
        assert link.is_symlink() and link.resolve() == (REPO / "config" / name).resolve(), name


def test_catalog_rulegraph_of_the_test_setup(workdir):
    from conftest import run_snakemake

    proc = run_snakemake(["-s", "workflow/Snakefile", "-c", "1", "-d", ".test", "--forceall", "--rulegraph"],
                         workdir)
    graph = proc.stdout.strip()
    assert graph.startswith("digraph") and graph.endswith("}"), proc.stdout[:2000] + proc.stderr[-2000:]
    for rule in ("all", "diffusion_split", "drug_screen_source", "pimkl_s1", "theory_table"):
        assert f'label = "{rule}"' in graph, rule


def test_test_config_is_the_tiny_configs_merged():
    written = yaml.safe_load((REPO / ".test/config/config.yaml").read_text())
    assert written == merged_test_config(), (
        ".test/config/config.yaml is out of date: .venv/bin/python tests/workflow/test_catalog.py "
        "> .test/config/config.yaml")


if __name__ == "__main__":
    print(render(), end="")
