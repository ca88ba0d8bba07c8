"""The entry scripts' logger: bad input ends a job with one line naming the
user's file and config key, other errors with one traceback."""

from __future__ import annotations

import subprocess
import sys
import textwrap

from biokernels.logs import name_origins, write_origin


def test_links_are_named_by_the_users_file_and_key(tmp_path, monkeypatch):
    monkeypatch.chdir(tmp_path)
    (tmp_path / "resources/x/local").mkdir(parents=True)
    write_origin("resources/x/local/gctx", "drug_screen.sources.x.files.gctx.path", "data/my plate.gct")
    msg = "resources/x/local/gctx: no row in resources/x/local/sample_info, e.g. ['a/b']."
    assert name_origins(msg) == ("data/my plate.gct (drug_screen.sources.x.files.gctx.path): no row in "
                                 "resources/x/local/sample_info, e.g. ['a/b'].")   # no record: left as it is
    absolute = f"{tmp_path}/resources/x/local/gctx: bad"
    assert name_origins(absolute) == "data/my plate.gct (drug_screen.sources.x.files.gctx.path): bad"


def _job(tmp_path, error: str) -> tuple[subprocess.CompletedProcess, str]:
    """Run a tiny entry script in tmp_path that raises ``error`` after
    rule_logger, as Snakemake runs one (its own Python process)."""
    (tmp_path / "resources/x/local").mkdir(parents=True)
    write_origin(tmp_path / "resources/x/local/pert_info", "drug_screen.sources.x.files.pert_info.path",
                 "geo/pert_info.txt")
    script = textwrap.dedent(f"""
        from biokernels.errors import InputError
        from biokernels.logs import rule_logger
        log = rule_logger("logs/job.log")
        log.info("reading")
        raise {error}
    """)
    proc = subprocess.run([sys.executable, "-c", script], cwd=tmp_path, capture_output=True, text=True,
                          check=False)
    return proc, (tmp_path / "logs/job.log").read_text()


def test_input_error_is_one_line_without_traceback(tmp_path):
    proc, log = _job(tmp_path, "InputError(\"resources/x/local/pert_info: missing column(s) ['canonical_smiles']\")")
    said = "geo/pert_info.txt (drug_screen.sources.x.files.pert_info.path): missing column(s) ['canonical_smiles']"
    assert proc.returncode == 1
    assert proc.stderr.count(said) == 1 and log.count(said) == 1
    assert "Traceback" not in proc.stderr + log


def test_other_errors_keep_one_traceback(tmp_path):
    proc, log = _job(tmp_path, "RuntimeError('solver diverged')")
    assert proc.returncode == 1
    assert proc.stderr.count("Traceback") == 1 and log.count("Traceback") == 1
    assert "RuntimeError: solver diverged" in proc.stderr
