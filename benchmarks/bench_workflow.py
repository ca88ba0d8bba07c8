"""Benchmark: wall time of workflow targets from a clean results folder (issue #20).

For each target of ``--targets`` (a comma-separated list; ``a+b`` is one
Snakemake call asking for both ``a`` and ``b``; ``all`` is what ``make run``
asks for), the workflow is run by the venv's ``snakemake`` in a fresh work
directory holding what a fresh clone holds (``workflow/``, ``config/``,
``src/``, ``.test/``, ``profiles/``, ``resources/README.md``, ...: the files
git tracks or would add, copied from one snapshot taken at the start), so
``results/`` and ``resources/`` start empty. Each run imports the library from
its own copy of ``src/`` (``PYTHONPATH``), not from the venv's editable
install, so an edit of the repository during a long benchmark changes no run;
numba's on-disk cache is per run too (``NUMBA_CACHE_DIR``; ``--numba-cache
shared`` keeps the usual one), so every run compiles as a fresh clone does.
A ``shared`` link beside the work directories points to the repository's
``../shared``, so the real-data configs (``../shared/data/...``) resolve.

Measured, per run:

* ``wall_s``: wall clock of the whole ``snakemake`` process (seconds,
  ``time.perf_counter``), Snakemake's start-up and DAG included;
* from the rules' ``benchmark:`` files that the run wrote, for the rules of
  ``--rules`` (default ``diffusion_split``, ``mmdt_digits``, ``pimkl_s1``):
  per job, its wildcards, ``s`` (the job's wall time, seconds) and
  ``max_rss_mib`` (its peak resident set; Snakemake's ``max_rss`` column, in
  MiB: bytes / 1024**2, ``null`` for a job faster than Snakemake's sampling
  interval). The benchmark paths are read from the workflow itself (its rules
  loaded by Snakemake's API with the run's configs), so they follow the
  config (e.g. PIMKL's data-set name);
* ``jobs_summary``: how many jobs wrote a benchmark file, the sum of their
  ``s`` and the slowest ones (every rule has a ``benchmark:``);
* ``returncode`` of snakemake; a failed run (nonzero exit or ``--timeout``)
  is recorded with the tail of its log and excluded from the medians, never
  raised.

Variants (``--variant NAME=KEY=VALUE``, repeatable): a config overlay setting
the nested key ``KEY`` (dot-separated path, e.g.
``diffusion.classifier_settings.svm.class_weight``) to ``VALUE`` (parsed as
YAML: ``true``, ``0.5``, ``[1, 2]``, ``null``); several ``--variant`` with the
same ``NAME`` make one overlay. The key must exist in ``config/config.yaml``
with the ``--configfile`` overlays. Each variant's overlay is written to a
YAML file given to snakemake after the ``--configfile`` ones, and the
variants run beside ``default`` (no overlay) in the same rounds.

Interleaving (``benchmarks/_harness.py``'s standard): every round runs each
(target, variant) once, in an order rotated left by the round's index, so a
change of machine load hits every contender alike; ``--warmup`` untimed
rounds first (default 0: a warm-up is a whole workflow run); the median of
``--repeats`` rounds is quoted (all kept). The headline has, per target and
variant, ``median(variant) / median(default)`` of the wall time and the median
of the per-round ratios (:func:`_harness.headline_ratio`, over the rounds
where both runs succeeded), and the same ratio of each job of interest's
``s``. Outputs are not compared: a variant is a different configuration.

Usage::

    .venv/bin/python benchmarks/bench_workflow.py --targets all --json results/benchmarks/workflow.json
    .venv/bin/python benchmarks/bench_workflow.py --targets theory_projection_vs_nt \\
        --configfile .test/config/theory_tiny.yaml --repeats 1 --json /tmp/smoke.json
    .venv/bin/python benchmarks/bench_workflow.py --targets diffusion_table2 \\
        --configfile .test/config/diffusion_tiny.yaml --variant nosm1=diffusion.sm1.enabled=false
"""

from __future__ import annotations

import argparse
import contextlib
import copy
import os
import re
import shutil
import signal
import statistics
import subprocess
import sys
import tempfile
import time
from pathlib import Path
from typing import Any, Iterable, Mapping, Sequence

import yaml

sys.path.insert(0, str(Path(__file__).resolve().parent))
from _harness import (  # noqa: E402
    MIN_REPEATS,
    REPO,
    Comparison,
    begin_report,
    finish_report,
    headline_ratio,
    log,
    rotated,
)

#: rules whose jobs' benchmark rows are reported (issue #20)
RULES_OF_INTEREST = ("diffusion_split", "mmdt_digits", "pimkl_s1")

#: the rules' ``benchmark:`` patterns as written in workflow/rules/*.smk, used
#: only when the workflow cannot be loaded through Snakemake's API
FALLBACK_PATTERNS = {
    "diffusion_split": "results/diffusion/{ds}/benchmarks/split_{split}.tsv",
    "mmdt_digits": "results/mmdt/digits/benchmarks/curves.tsv",
    "pimkl_s1": "results/pimkl/{dataset}/benchmarks/s1_{collection}_{cohort}.tsv",
}

DEFAULT_VARIANT = "default"

#: what a fresh clone holds for the workflow (as tests/conftest.py's copy_workflow)
WORKFLOW_ITEMS = ("workflow", "src", "config", ".test", "profiles", "resources/README.md", "Makefile",
                  "pyproject.toml")
_IGNORE = shutil.ignore_patterns("__pycache__", "*.egg-info", ".snakemake", "results")

_VARIANT_NAME = re.compile(r"^[A-Za-z0-9_.-]+$")


# --------------------------------------------------------------------------- pure helpers


def split_targets(spec: str) -> list[list[str]]:
    """``"a,b+c"`` -> ``[["a"], ["b", "c"]]``: one Snakemake call per
    comma-separated item, ``+`` joining targets asked for in one call.

    Raises ValueError on an empty list or an empty target name.
    """
    groups = []
    for item in spec.split(","):
        item = item.strip()
        if not item:
            continue
        names = [t.strip() for t in item.split("+")]
        if any(not t for t in names):
            raise ValueError(f"empty target name in {item!r}")
        groups.append(names)
    if not groups:
        raise ValueError(f"no targets in {spec!r}")
    return groups


def parse_variant(spec: str) -> tuple[str, list[str], Any]:
    """``"NAME=KEY=VALUE"`` -> ``(NAME, KEY.split("."), yaml.safe_load(VALUE))``.

    ``VALUE`` may itself hold ``=``; an empty ``VALUE`` is YAML ``null``.

    Raises
    ------
    ValueError
        A missing part, a name other than letters, digits, ``_.-``, the name
        ``default`` (taken by the run without overlay), an empty key
        component, or a value that is not valid YAML.
    """
    parts = spec.split("=", 2)
    if len(parts) != 3:
        raise ValueError(f"--variant {spec!r}: expected NAME=KEY=VALUE (e.g. "
                         "reference=diffusion.classifier_settings.svm.class_weight=balanced)")
    name, key, raw = (p.strip() for p in parts)
    if not _VARIANT_NAME.match(name):
        raise ValueError(f"--variant {spec!r}: the name {name!r} must be letters, digits, '_', '.' or '-'")
    if name == DEFAULT_VARIANT:
        raise ValueError(f"--variant {spec!r}: the name {DEFAULT_VARIANT!r} is the run without overlay")
    path = key.split(".")
    if not key or any(not p for p in path):
        raise ValueError(f"--variant {spec!r}: the key {key!r} must be a dot-separated path like a.b.c")
    try:
        value = yaml.safe_load(raw)
    except yaml.YAMLError as e:
        raise ValueError(f"--variant {spec!r}: the value {raw!r} is not valid YAML: {e}") from None
    return name, path, value


def deep_merge(base: Mapping, overlay: Mapping) -> dict:
    """``base`` updated by ``overlay`` recursively (dicts merged key by key,
    anything else replaced), as Snakemake layers ``--configfile`` files; the
    inputs are not modified."""
    out = copy.deepcopy(dict(base))
    for k, v in overlay.items():
        if isinstance(v, Mapping) and isinstance(out.get(k), Mapping):
            out[k] = deep_merge(out[k], v)
        else:
            out[k] = copy.deepcopy(v)
    return out


def load_config(files: Sequence[str | Path]) -> dict:
    """The config Snakemake would see: the YAML ``files`` merged in order
    (the first is ``config/config.yaml``); an empty file counts as ``{}``."""
    cfg: dict = {}
    for f in files:
        data = yaml.safe_load(Path(f).read_text()) or {}
        if not isinstance(data, Mapping):
            raise ValueError(f"{f}: a config file must hold a mapping, not {type(data).__name__}")
        cfg = deep_merge(cfg, data)
    return cfg


def check_key_path(config: Mapping, path: Sequence[str]) -> None:
    """Raise KeyError, with a message naming the key, unless the nested key
    ``path`` exists in ``config`` (each step a mapping holding the next
    component; the last one's value may be anything, ``null`` included)."""
    node: Any = config
    for i, part in enumerate(path):
        where = ".".join(path[:i]) or "the top level"
        if not isinstance(node, Mapping):
            raise KeyError(f"key {'.'.join(path)!r} is not in the config: {where!r} is a "
                           f"{type(node).__name__}, not a mapping (list indexes are not supported)")
        if part not in node:
            known = ", ".join(sorted(map(str, node))) or "none"
            raise KeyError(f"key {'.'.join(path)!r} is not in the config: {where} has no key {part!r} "
                           f"(its keys: {known})")
        node = node[part]


def variant_overlays(specs: Iterable[str], config: Mapping) -> dict[str, dict]:
    """Parse ``--variant`` specs into ``{name: nested overlay dict}``, each
    key checked against ``config``; the same name repeated adds keys to one
    overlay.

    Raises ValueError (bad spec, a key given twice for one name, or one key a
    prefix of another) or KeyError (a key not in ``config``).
    """
    out: dict[str, dict] = {}
    seen: dict[str, set[tuple[str, ...]]] = {}
    for spec in specs:
        name, path, value = parse_variant(spec)
        check_key_path(config, path)
        keys = seen.setdefault(name, set())
        for other in keys:
            short, long_ = sorted((tuple(path), other), key=len)
            if long_[:len(short)] == short:
                raise ValueError(f"--variant {name}: the keys {'.'.join(other)!r} and {'.'.join(path)!r} "
                                 "overlap (the same key twice, or one inside the other)")
        keys.add(tuple(path))
        node = out.setdefault(name, {})
        for part in path[:-1]:
            node = node.setdefault(part, {})
        node[path[-1]] = value
    return out


def write_overlay(path: str | Path, overlay: Mapping) -> Path:
    """Write ``overlay`` (a nested dict) as a YAML config file for
    ``snakemake --configfile``; returns the path."""
    path = Path(path)
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text("# written by benchmarks/bench_workflow.py\n"
                    + yaml.safe_dump(dict(overlay), sort_keys=False, default_flow_style=False))
    return path


def _scan_pattern(pattern: str) -> list[tuple[str, str, str | None]]:
    """Split a Snakemake file pattern into ``("text", s, None)`` and
    ``("wildcard", name, regex or None)`` pieces; ``{{``/``}}`` are literal
    braces, a constraint may hold braces (``{n,\\d{2}}``)."""
    pieces = []
    i, n, text = 0, len(pattern), []
    while i < n:
        c = pattern[i]
        if pattern.startswith("{{", i) or pattern.startswith("}}", i):
            text.append(c)
            i += 2
            continue
        if c == "{":
            depth, j = 1, i + 1
            while j < n and depth:
                depth += {"{": 1, "}": -1}.get(pattern[j], 0)
                j += 1
            if depth:
                raise ValueError(f"unbalanced '{{' in pattern {pattern!r}")
            if text:
                pieces.append(("text", "".join(text), None))
                text = []
            body = pattern[i + 1:j - 1]
            name, _, constraint = body.partition(",")
            pieces.append(("wildcard", name.strip(), constraint.strip() or None))
            i = j
            continue
        text.append(c)
        i += 1
    if text:
        pieces.append(("text", "".join(text), None))
    return pieces


def pattern_regex(pattern: str) -> re.Pattern:
    """A regex matching the paths of a Snakemake file pattern, a named group
    per wildcard (its constraint, else Snakemake's default ``.+``); a
    wildcard repeated in the pattern must match the same text."""
    out, seen = [], set()
    for kind, s, constraint in _scan_pattern(pattern):
        if kind == "text":
            out.append(re.escape(s))
        elif s in seen:
            out.append(f"(?P={s})")
        else:
            seen.add(s)
            out.append(f"(?P<{s}>{constraint or '.+'})")
    return re.compile("".join(out) + r"\Z")


def pattern_root(pattern: str) -> str:
    """The folder of the pattern before its first wildcard (``""``: the work
    directory itself), under which its files are searched."""
    pieces = _scan_pattern(pattern)
    if not pieces or pieces[0][0] != "text":
        return ""
    prefix = pieces[0][1]
    return prefix.rsplit("/", 1)[0] if "/" in prefix else ""


def _number(s: str) -> float | str | None:
    s = s.strip()
    if s in ("", "-", "NA", "nan", "NaN"):
        return None
    try:
        return float(s)
    except ValueError:
        return s


def read_benchmark_tsv(path: str | Path) -> list[dict]:
    """Rows of a Snakemake ``benchmark:`` TSV (header ``s h:m:s max_rss
    max_vms max_uss max_pss io_in io_out mean_load cpu_time``, one row per
    benchmark repeat): numbers as floats, ``NA``/``-``/empty as None (a job
    faster than Snakemake's sampling has no memory figures), other text
    (``h:m:s``) as str. ``s`` is seconds; ``max_*`` are MiB.

    Raises ValueError when the file has no header with an ``s`` column.
    """
    lines = [ln for ln in Path(path).read_text().splitlines() if ln.strip()]
    if not lines:
        raise ValueError(f"{path}: empty benchmark file")
    header = lines[0].split("\t")
    if "s" not in header:
        raise ValueError(f"{path}: not a Snakemake benchmark TSV (header {header})")
    rows = []
    for ln in lines[1:]:
        cells = ln.split("\t")
        row = {h: (c if h == "h:m:s" else _number(c)) for h, c in zip(header, cells)}
        rows.append(row)
    return rows


def job_record(rows: Sequence[Mapping]) -> dict:
    """One job's figures from its benchmark rows: ``s`` the median of the
    rows' ``s`` (seconds; one row unless the rule uses ``repeat()``),
    ``max_rss_mib`` the largest ``max_rss`` (MiB; None when never sampled),
    ``cpu_time_s`` the median ``cpu_time`` (None when not sampled)."""
    s = [r["s"] for r in rows if isinstance(r.get("s"), float)]
    rss = [r["max_rss"] for r in rows if isinstance(r.get("max_rss"), float)]
    cpu = [r["cpu_time"] for r in rows if isinstance(r.get("cpu_time"), float)]
    return {"s": statistics.median(s) if s else None, "max_rss_mib": max(rss) if rss else None,
            "cpu_time_s": statistics.median(cpu) if cpu else None, "rows": len(rows)}


def find_jobs(workdir: str | Path, pattern: str) -> list[dict]:
    """The benchmark files under ``workdir`` matching a rule's ``benchmark:``
    pattern, each as ``{"path", "wildcards", **job_record(rows)}`` (or with
    ``error`` when the file cannot be read), sorted by path."""
    workdir = Path(workdir)
    rx = pattern_regex(pattern)
    root = workdir / pattern_root(pattern)
    if not root.is_dir():
        return []
    out = []
    for f in sorted(p for p in root.rglob("*") if p.is_file()):
        rel = f.relative_to(workdir).as_posix()
        m = rx.match(rel)
        if not m:
            continue
        rec = {"path": rel, "wildcards": m.groupdict()}
        try:
            rec |= job_record(read_benchmark_tsv(f))
        except (OSError, ValueError) as e:
            rec["error"] = str(e)
        out.append(rec)
    return out


def jobs_summary(workdir: str | Path, slowest: int = 10) -> dict:
    """Every ``results/**/benchmarks/*.tsv`` of a run: how many, the sum of
    their ``s`` (seconds of job wall time; more than the run's wall time when
    jobs ran in parallel) and the ``slowest`` jobs (path, s, max_rss_mib)."""
    workdir = Path(workdir)
    jobs = []
    for f in sorted((workdir / "results").rglob("benchmarks/*.tsv")) if (workdir / "results").is_dir() else []:
        try:
            rec = job_record(read_benchmark_tsv(f))
        except (OSError, ValueError):
            continue
        jobs.append({"path": f.relative_to(workdir).as_posix(), "s": rec["s"], "max_rss_mib": rec["max_rss_mib"]})
    total = sum(j["s"] for j in jobs if j["s"] is not None)
    top = sorted((j for j in jobs if j["s"] is not None), key=lambda j: -j["s"])[:slowest]
    return {"n_jobs": len(jobs), "sum_s": total, "slowest": top}


def median_or_none(values: Iterable[float | None]) -> float | None:
    """Median of the values that are not None, None when there are none."""
    v = [x for x in values if x is not None]
    return float(statistics.median(v)) if v else None


def summarize_runs(runs: Sequence[Mapping]) -> dict:
    """Per (target, variant): the wall times of every round (seconds, failed
    ones included, with ``ok``), their median / min / max over the successful
    runs only, and per rule of interest and job (``rule:wildcards``) the
    job's ``s`` and ``max_rss_mib`` in every successful round with their
    medians."""
    ok_times = [r["wall_s"] for r in runs if r["ok"]]
    out = {"times_s": [r["wall_s"] for r in runs], "ok": [bool(r["ok"]) for r in runs],
           "median_s": median_or_none(ok_times), "min_s": min(ok_times) if ok_times else None,
           "max_s": max(ok_times) if ok_times else None, "n_ok": len(ok_times), "n_runs": len(runs)}
    jobs: dict[str, dict] = {}
    for r in runs:
        if not r["ok"]:
            continue
        for rule, recs in r.get("rules", {}).items():
            for rec in recs:
                key = job_key(rule, rec.get("wildcards", {}))
                j = jobs.setdefault(key, {"rule": rule, "wildcards": rec.get("wildcards", {}), "path": rec["path"],
                                          "s": [], "max_rss_mib": []})
                j["s"].append(rec.get("s"))
                j["max_rss_mib"].append(rec.get("max_rss_mib"))
    for j in jobs.values():
        j["median_s"] = median_or_none(j["s"])
        j["median_max_rss_mib"] = median_or_none(j["max_rss_mib"])
    out["jobs"] = dict(sorted(jobs.items()))
    return out


def job_key(rule: str, wildcards: Mapping[str, str]) -> str:
    """``"rule"`` or ``"rule:k=v,k=v"`` (wildcards in pattern order)."""
    return rule if not wildcards else rule + ":" + ",".join(f"{k}={v}" for k, v in wildcards.items())


def paired_comparison(runs: Mapping[str, Sequence[Mapping]], numerator: str, denominator: str) -> Comparison | None:
    """A :class:`_harness.Comparison` of two variants' wall times over the
    rounds where both succeeded (so the harness's paired ratios compare
    runs of the same round); None when there is no such round."""
    pairs = [(a, b) for a, b in zip(runs[numerator], runs[denominator]) if a["ok"] and b["ok"]]
    if not pairs:
        return None
    times = {numerator: [a["wall_s"] for a, _ in pairs], denominator: [b["wall_s"] for _, b in pairs]}
    order = [[numerator, denominator] if a["order"] < b["order"] else [denominator, numerator] for a, b in pairs]
    return Comparison([numerator, denominator], 0, len(pairs), order, times)


def job_ratios(num: Mapping, den: Mapping) -> dict[str, float | None]:
    """Per job of interest in both summaries: ``median_s`` of the variant
    over that of the default (None where either is missing or zero)."""
    out = {}
    for key in sorted(set(num["jobs"]) & set(den["jobs"])):
        a, b = num["jobs"][key]["median_s"], den["jobs"][key]["median_s"]
        out[key] = a / b if a is not None and b else None
    return out


# --------------------------------------------------------------------------- work directories


def project_files(repo: Path = REPO) -> list[str] | None:
    """Files a clone of ``repo`` would hold (tracked, plus new files not
    ignored by git), or None outside a git checkout."""
    try:
        proc = subprocess.run(["git", "ls-files", "--cached", "--others", "--exclude-standard"],
                              cwd=repo, capture_output=True, text=True, timeout=60)
    except (OSError, subprocess.SubprocessError):
        return None
    return proc.stdout.splitlines() if proc.returncode == 0 else None


def snapshot_workflow(dest: Path, repo: Path = REPO) -> Path:
    """Copy the workflow's parts of ``repo`` to ``dest`` as a fresh clone
    would have them (tests/conftest.py's ``copy_workflow``): in a git
    checkout the files git tracks or would add, else the folders of
    :data:`WORKFLOW_ITEMS` without results and caches."""
    dest.mkdir(parents=True, exist_ok=True)
    files = project_files(repo)
    if files is not None:
        for rel in files:
            if rel.split("/")[0] in WORKFLOW_ITEMS or rel in WORKFLOW_ITEMS:
                src = repo / rel
                if src.is_file():
                    (dest / rel).parent.mkdir(parents=True, exist_ok=True)
                    shutil.copy2(src, dest / rel)
        return dest
    for item in WORKFLOW_ITEMS:
        src = repo / item
        if src.is_dir():
            shutil.copytree(src, dest / item, ignore=_IGNORE)
        elif src.is_file():
            (dest / item).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(src, dest / item)
    return dest


def benchmark_patterns(workdir: Path, configfiles: Sequence[Path], rules: Sequence[str]) -> tuple[dict, str]:
    """``{rule: benchmark pattern}`` of ``rules`` as the workflow in
    ``workdir`` declares them with ``configfiles`` (Snakemake's API; config
    validation included), and where they came from ("workflow", or
    "fallback: <why>" with :data:`FALLBACK_PATTERNS` when the workflow
    cannot be loaded)."""
    cwd = os.getcwd()
    try:
        from snakemake.api import SnakemakeApi
        from snakemake.settings.enums import Quietness
        from snakemake.settings.types import ConfigSettings, OutputSettings, ResourceSettings

        with SnakemakeApi(OutputSettings(quiet={Quietness.ALL})) as api:
            wf = api.workflow(resource_settings=ResourceSettings(),
                              config_settings=ConfigSettings(configfiles=[Path(f) for f in configfiles]),
                              snakefile=workdir / "workflow" / "Snakefile", workdir=workdir)
            found = {r.name: str(r.benchmark) for r in wf._workflow.rules if r.name in rules and r.benchmark}
        missing = [r for r in rules if r not in found]
        if missing:
            raise RuntimeError(f"no rule or no benchmark: for {missing}")
        return found, "workflow"
    except Exception as e:  # noqa: BLE001 - any failure: the documented fallback, said in the report
        why = f"{type(e).__name__}: " + " ".join(str(e).split())[:500]
        return {r: FALLBACK_PATTERNS[r] for r in rules if r in FALLBACK_PATTERNS}, f"fallback: {why}"
    finally:
        os.chdir(cwd)


def _tail(path: Path, n: int = 4000) -> str:
    try:
        data = path.read_bytes()
    except OSError:
        return ""
    return data[-n:].decode(errors="replace")


def run_target(template: Path, workdir: Path, targets: Sequence[str], configfiles: Sequence[Path],
               patterns: Mapping[str, str], *, snakemake: str, cores: int, profile: str | None,
               timeout: float | None, numba_cache: str, logfile: Path) -> dict:
    """One timed run: copy ``template`` to ``workdir`` (untimed), run
    ``snakemake <targets> --cores N [--profile P] [--configfile ...]`` in it
    (timed: ``wall_s``, seconds), then read the benchmark files of the rules
    of interest. Never raises for a failed run: ``ok`` False with
    ``returncode`` (None on a timeout), ``error`` and ``log_tail``."""
    shutil.copytree(template, workdir, ignore=shutil.ignore_patterns(".snakemake", "__pycache__"), symlinks=True)
    cmd = [snakemake, *targets, "--cores", str(cores)]
    if profile:
        cmd += ["--profile", profile]
    if configfiles:
        cmd += ["--configfile", *map(str, configfiles)]
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(workdir / "src"), *filter(None, [env.get("PYTHONPATH")])])
    if numba_cache == "fresh":
        env["NUMBA_CACHE_DIR"] = str(workdir / ".numba_cache")
    logfile.parent.mkdir(parents=True, exist_ok=True)
    rec: dict[str, Any] = {"targets": list(targets), "command": cmd[1:]}
    with open(logfile, "wb") as fh:
        t0 = time.perf_counter()
        # its own process group: a timeout stops snakemake and the jobs it started
        proc = subprocess.Popen(cmd, cwd=workdir, stdout=fh, stderr=subprocess.STDOUT, env=env,
                                start_new_session=True)
        try:
            rec["returncode"] = proc.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            try:
                proc.wait(timeout=30)
            except subprocess.TimeoutExpired:
                with contextlib.suppress(ProcessLookupError):
                    os.killpg(proc.pid, signal.SIGKILL)
                proc.wait()
            rec["returncode"] = None
            rec["error"] = f"timed out after {timeout} s"
        except BaseException:  # Ctrl-C: stop the run before leaving
            with contextlib.suppress(ProcessLookupError):
                os.killpg(proc.pid, signal.SIGTERM)
            proc.wait()
            raise
        rec["wall_s"] = time.perf_counter() - t0
    rec["ok"] = rec["returncode"] == 0
    if not rec["ok"]:
        rec.setdefault("error", f"snakemake exit status {rec['returncode']}")
        rec["log_tail"] = _tail(logfile)
    rec["rules"] = {rule: find_jobs(workdir, pat) for rule, pat in patterns.items()}
    rec["jobs_summary"] = jobs_summary(workdir)
    return rec


# --------------------------------------------------------------------------- CLI


def build_parser() -> argparse.ArgumentParser:
    ap = argparse.ArgumentParser(
        description="Wall time of workflow targets, each from a fresh copy of the workflow with empty "
                    "results/ and resources/, interleaved repeats, with the jobs of diffusion_split, "
                    "mmdt_digits and pimkl_s1 read from their Snakemake benchmark files (issue #20).",
        epilog="Example: %(prog)s --targets theory_projection_vs_nt --configfile .test/config/theory_tiny.yaml "
               "--repeats 1 --json /tmp/bench_workflow.json")
    ap.add_argument("--targets", required=True,
                    help="comma-separated targets, each timed on its own run; 'a+b' asks for a and b in one run "
                         "('all' = make run)")
    ap.add_argument("--json", "--out", dest="json", default="results/benchmarks/workflow.json",
                    help="output JSON path (default %(default)s)")
    ap.add_argument("--configfile", nargs="+", default=[], metavar="YAML",
                    help="config overlays after config/config.yaml, for every run (e.g. .test/config/*_tiny.yaml)")
    ap.add_argument("--variant", action="append", default=[], metavar="NAME=KEY=VALUE",
                    help="a variant run beside the default one: nested config key (a.b.c) set to a YAML value; "
                         "repeat the option for several variants, or the same NAME for several keys")
    ap.add_argument("--cores", type=int, default=2, help="snakemake --cores (default %(default)s)")
    ap.add_argument("--repeats", type=int, default=MIN_REPEATS,
                    help=f"timed rounds, each running every target and variant once, order rotated; the median "
                         f"is quoted (default %(default)s; below {MIN_REPEATS} is a smoke test)")
    ap.add_argument("--warmup", type=int, default=0,
                    help="untimed rounds first (default %(default)s: each is a whole set of workflow runs)")
    ap.add_argument("--rules", default=",".join(RULES_OF_INTEREST),
                    help="rules whose jobs' benchmark rows are reported (default %(default)s)")
    ap.add_argument("--profile", default="profiles/local",
                    help="snakemake --profile, as make run (default %(default)s; '' for none)")
    ap.add_argument("--timeout", type=float, default=None,
                    help="seconds after which a run is stopped and recorded as failed (default: none)")
    ap.add_argument("--numba-cache", choices=("fresh", "shared"), default="fresh",
                    help="fresh: a numba cache per run, compiled as in a fresh clone (default); shared: numba's "
                         "usual cache next to the sources")
    ap.add_argument("--workroot", default=None,
                    help="folder for the work directories (default: a new temporary folder)")
    ap.add_argument("--keep", action="store_true", help="keep the work directories (their path is printed)")
    return ap


def parse_args(argv: Sequence[str] | None = None) -> tuple[argparse.Namespace, dict]:
    """Parse and check the options; returns the args and what they resolve
    to (target groups, config files, config, overlays, rules). Every
    mistake is an argparse error naming the option."""
    ap = build_parser()
    args = ap.parse_args(argv)
    try:
        groups = split_targets(args.targets)
    except ValueError as e:
        ap.error(f"--targets: {e}")
    if args.cores < 1:
        ap.error(f"--cores must be >= 1, got {args.cores}")
    if args.repeats < 1:
        ap.error(f"--repeats must be >= 1, got {args.repeats}")
    if args.warmup < 0:
        ap.error(f"--warmup must be >= 0, got {args.warmup}")
    if args.timeout is not None and args.timeout <= 0:
        ap.error(f"--timeout must be > 0 seconds, got {args.timeout}")
    rules = [r.strip() for r in args.rules.split(",") if r.strip()]
    configfiles = []
    for f in args.configfile:
        p = Path(f)
        p = p if p.is_absolute() or p.exists() else REPO / p
        if not p.is_file():
            ap.error(f"--configfile {f}: no such file (relative paths are read from the current folder, "
                     f"then from {REPO})")
        configfiles.append(p.resolve())
    base = REPO / "config" / "config.yaml"
    try:
        config = load_config([base, *configfiles])
    except (OSError, ValueError, yaml.YAMLError) as e:
        ap.error(f"cannot read the config: {e}")
    try:
        overlays = variant_overlays(args.variant, config)
    except KeyError as e:
        ap.error(f"--variant: {e.args[0]} (config/config.yaml with the --configfile overlays)")
    except ValueError as e:
        ap.error(str(e))
    snakemake = Path(sys.executable).parent / "snakemake"
    if not snakemake.exists():
        ap.error(f"no snakemake next to this Python ({snakemake}); run the venv's python (.venv/bin/python)")
    return args, {"groups": groups, "configfiles": configfiles, "overlays": overlays, "rules": rules,
                  "snakemake": str(snakemake)}


def main(argv: Sequence[str] | None = None) -> int:
    args, res = parse_args(argv)
    groups, overlays, rules = res["groups"], res["overlays"], res["rules"]
    variants = [DEFAULT_VARIANT, *overlays]
    root = Path(args.workroot).resolve() if args.workroot else Path(tempfile.mkdtemp(prefix="bench_workflow_"))
    root.mkdir(parents=True, exist_ok=True)
    report = begin_report("workflow", args, packages=("snakemake", "numba", "PyYAML"),
                          targets=["+".join(g) for g in groups], variants={v: overlays.get(v, {}) for v in variants},
                          configfiles=[str(p) for p in res["configfiles"]], rules=rules, workroot=str(root))
    try:
        # one snapshot: every run copies it, so all runs see the same code and configs
        template = snapshot_workflow(root / "template")
        shared = REPO.parent / "shared"
        if shared.exists() and not (root / "shared").exists():
            (root / "shared").symlink_to(shared, target_is_directory=True)
        user_cfgs = []
        for i, p in enumerate(res["configfiles"]):
            dst = root / "overlays" / f"{i:02d}_{p.name}"
            dst.parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(p, dst)
            user_cfgs.append(dst)
        cfgs = {v: [*user_cfgs, *([write_overlay(root / "overlays" / f"variant_{v}.yaml", overlays[v])]
                                   if v in overlays else [])] for v in variants}
        patterns, pattern_source = {}, {}
        for v in variants:
            log(f"loading the workflow's benchmark paths ({v})")
            patterns[v], pattern_source[v] = benchmark_patterns(template, cfgs[v], rules)
            if pattern_source[v] != "workflow":
                log(f"  {pattern_source[v]}")
        bad = [v for v in variants[1:] if pattern_source[v] != "workflow"]
        if pattern_source[DEFAULT_VARIANT] == "workflow" and bad:
            raise SystemExit(f"bench_workflow.py: the workflow does not load with the overlay of variant(s) "
                             f"{', '.join(bad)}: " + "; ".join(pattern_source[v] for v in bad))
        report["meta"]["benchmark_patterns"] = patterns
        report["meta"]["benchmark_patterns_source"] = pattern_source
        shutil.rmtree(template / ".snakemake", ignore_errors=True)

        items = [("+".join(g), v) for g in groups for v in variants]
        group_of = {"+".join(g): g for g in groups}
        runs: dict[str, dict[str, list]] = {t: {v: [] for v in variants} for t, _ in items}
        order, warm = [], []
        for r in range(-args.warmup, args.repeats):
            this = rotated(items, r)
            if r >= 0:
                order.append([f"{t}|{v}" for t, v in this])
            for pos, (t, v) in enumerate(this):
                tag = f"{'w' if r < 0 else 'r'}{abs(r) if r < 0 else r + 1}_{re.sub(r'[^A-Za-z0-9_.-]', '_', t)}_{v}"
                what = f"warm-up {-r}/{args.warmup}" if r < 0 else f"round {r + 1}/{args.repeats}"
                log(f"{what}: {t} [{v}] ...")
                rec = run_target(template, root / tag, group_of[t], cfgs[v], patterns[v], snakemake=res["snakemake"],
                                 cores=args.cores, profile=args.profile or None, timeout=args.timeout,
                                 numba_cache=args.numba_cache, logfile=root / "logs" / f"{tag}.log")
                rec["round"], rec["order"] = r + 1, pos
                log(f"  {rec['wall_s']:.1f} s, {'ok' if rec['ok'] else 'FAILED: ' + rec['error']}")
                if not args.keep:
                    shutil.rmtree(root / tag, ignore_errors=True)
                (warm if r < 0 else runs[t][v]).append(rec)

        results, headline = {}, []
        for t in runs:
            results[t] = {v: summarize_runs(runs[t][v]) | {"runs": runs[t][v]} for v in variants}
            for v in variants[1:]:
                name = f"{t}: {v} / {DEFAULT_VARIANT}"
                cmp = paired_comparison(runs[t], v, DEFAULT_VARIANT)
                if cmp is None:
                    headline.append({"name": name, "ratio": None, "error": "no round where both runs succeeded"})
                    continue
                headline.append(headline_ratio(
                    name, cmp, v, DEFAULT_VARIANT, precision="as each config sets it",
                    output=f"snakemake {' '.join(group_of[t])} from empty results/ and resources/ "
                           "(outputs not compared: a variant is another configuration)",
                    overlay=overlays[v], jobs_median_s_ratio=job_ratios(results[t][v], results[t][DEFAULT_VARIANT])))
        report["summary"] = {t: {v: {"median_s": results[t][v]["median_s"], "n_ok": results[t][v]["n_ok"],
                                     "jobs_median_s": {k: j["median_s"] for k, j in results[t][v]["jobs"].items()},
                                     "jobs_median_max_rss_mib": {k: j["median_max_rss_mib"]
                                                                 for k, j in results[t][v]["jobs"].items()}}
                                 for v in variants} for t in results}
        report["order"] = order
        report["results"] = results
        if warm:
            report["warmup_runs"] = warm
        notes = ["wall_s: the whole snakemake process, seconds; jobs: s (seconds) and max_rss_mib "
                 "(MiB) from the rules' benchmark files; medians over the successful runs only"]
        if args.repeats < MIN_REPEATS:
            notes.append(f"only {args.repeats} repeat(s): below the harness's minimum of {MIN_REPEATS}, "
                         "a smoke test, not a figure to quote")
        out = finish_report(report, headline, args.json, notes=notes)
    finally:
        if args.keep:
            log(f"work directories kept under {root}")
        else:
            shutil.rmtree(root, ignore_errors=True)
    failed = sum(not r["ok"] for per in runs.values() for rs in per.values() for r in rs)
    log(f"wrote {out}" + (f" ({failed} failed run(s), recorded)" if failed else ""))
    for t, per in report["summary"].items():
        log(f"  {t}: " + ", ".join(f"{v} median {s['median_s']:.1f} s ({s['n_ok']} ok)" if s["median_s"] is not None
                                   else f"{v}: no successful run" for v, s in per.items()))
    for h in headline:
        if h.get("ratio") is not None:
            log(f"  {h['name']}: {h['ratio']:.3f} (paired median {h['paired_ratio_median']:.3f})")
    return 0


if __name__ == "__main__":
    sys.exit(main())
