"""Snakemake entry: the run's configuration and software versions as a
report item (HTML) and the merged config (YAML)."""

import html
import platform
import subprocess
from importlib import metadata
from pathlib import Path

import yaml

from biokernels.logs import rule_logger

smk = snakemake  # noqa: F821
log = rule_logger(smk.log[0])
cfg_text = yaml.safe_dump(dict(smk.params.config), sort_keys=True, width=110)
Path(smk.output.yaml).write_text(cfg_text)


def version(pkg):
    try:
        return metadata.version(pkg)
    except metadata.PackageNotFoundError:
        return "not installed"


def git(*args):
    try:
        out = subprocess.run(["git", *args], cwd=smk.params.basedir, capture_output=True, text=True, timeout=10)
        return out.stdout.strip() if out.returncode == 0 else "unknown"
    except (OSError, subprocess.SubprocessError):
        return "unknown"


versions = {"python": platform.python_version(), "platform": platform.platform(),
            **{p: version(p) for p in smk.params.packages}}
commit = git("rev-parse", "HEAD")
dirty = git("status", "--porcelain")
try:
    import torch

    versions["torch CUDA available"] = str(torch.cuda.is_available())
except ImportError:
    pass
rows = "\n".join(f"<tr><td>{html.escape(k)}</td><td>{html.escape(v)}</td></tr>" for k, v in versions.items())
page = f"""<!DOCTYPE html><html><head><meta charset="utf-8"><title>Configuration and versions</title>
<style>body{{font-family:sans-serif;font-size:13px}}table{{border-collapse:collapse}}
td,th{{border:1px solid #ccc;padding:2px 6px}}pre{{background:#f6f6f6;padding:8px}}</style></head><body>
<h1>Configuration and software versions</h1>
<p>Workflow: {html.escape(smk.params.basedir)}; git commit {html.escape(commit)}
{"(with uncommitted changes)" if dirty not in ("", "unknown") else ""}; working directory
{html.escape(smk.params.workdir)}.</p>
<h2>Software</h2><table><tr><th>package</th><th>version</th></tr>{rows}</table>
<h2>Configuration (merged: config/config.yaml and every --configfile / --config)</h2>
<pre>{html.escape(cfg_text)}</pre></body></html>"""
Path(smk.output.html).write_text(page)
log.info("commit %s; %d packages; config %d lines", commit, len(versions), cfg_text.count("\n"))
