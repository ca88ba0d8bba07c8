"""benchmarks/bench_workflow.py: its pure helpers (targets, variant overlays
and their key check, Snakemake benchmark TSVs and patterns, medians and
ratios). No workflow runs here."""

from __future__ import annotations

import importlib.util
import sys
from pathlib import Path

import pytest
import yaml

REPO = Path(__file__).resolve().parents[2]
SCRIPT = REPO / "benchmarks" / "bench_workflow.py"

# Snakemake 9's benchmark TSV: header, one row per repeat; "NA" when a job ended
# before the first memory sample
HEADER = "s\th:m:s\tmax_rss\tmax_vms\tmax_uss\tmax_pss\tio_in\tio_out\tmean_load\tcpu_time\n"


@pytest.fixture(scope="module")
def bw():
    spec = importlib.util.spec_from_file_location("bench_workflow_under_test", SCRIPT)
    mod = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = mod
    spec.loader.exec_module(mod)
    yield mod
    sys.modules.pop(spec.name, None)


def write_bench(path: Path, *rows: str) -> Path:
    path.parent.mkdir(parents=True, exist_ok=True)
    path.write_text(HEADER + "".join(r + "\n" for r in rows))
    return path


def test_split_targets(bw):
    assert bw.split_targets("all") == [["all"]]
    assert bw.split_targets(" a, b+c ,") == [["a"], ["b", "c"]]
    with pytest.raises(ValueError):
        bw.split_targets(" , ")
    with pytest.raises(ValueError):
        bw.split_targets("a++b")


def test_parse_variant_values_are_yaml(bw):
    assert bw.parse_variant("ref=diffusion.sm1.enabled=true") == ("ref", ["diffusion", "sm1", "enabled"], True)
    assert bw.parse_variant("g=a.b=[1, 2.5]") == ("g", ["a", "b"], [1, 2.5])
    assert bw.parse_variant("n=a.b=") == ("n", ["a", "b"], None)
    assert bw.parse_variant("s=a=x=y") == ("s", ["a"], "x=y")  # the value may hold '='
    for bad in ("noequals", "n=a.b", "default=a=1", "bad name=a=1", "n=a..b=1", "n=a=[1,"):
        with pytest.raises(ValueError):
            bw.parse_variant(bad)


def test_key_path_check_names_the_missing_key(bw):
    cfg = {"diffusion": {"classifier_settings": {"svm": {"class_weight": None}}, "lams": [1, 2]}}
    bw.check_key_path(cfg, ["diffusion", "classifier_settings", "svm", "class_weight"])  # a null leaf exists
    with pytest.raises(KeyError, match=r"'diffusion.classifier_settings.reference'.*has no key 'reference'.*svm"):
        bw.check_key_path(cfg, ["diffusion", "classifier_settings", "reference"])
    with pytest.raises(KeyError, match="not a mapping"):
        bw.check_key_path(cfg, ["diffusion", "lams", "0"])
    with pytest.raises(KeyError, match="'nope'"):
        bw.check_key_path(cfg, ["nope"])


def test_variant_overlays_merge_keys_of_one_name(bw):
    cfg = {"a": {"b": 1, "c": {"d": 2}}, "e": 3}
    ov = bw.variant_overlays(["v=a.b=5", "v=a.c.d=x", "w=e=null"], cfg)
    assert ov == {"v": {"a": {"b": 5, "c": {"d": "x"}}}, "w": {"e": None}}
    with pytest.raises(ValueError, match="overlap"):
        bw.variant_overlays(["v=a.c=1", "v=a.c.d=2"], cfg)
    with pytest.raises(ValueError, match="overlap"):
        bw.variant_overlays(["v=a.b=1", "v=a.b=2"], cfg)
    with pytest.raises(KeyError, match="a.x"):
        bw.variant_overlays(["v=a.x=1"], cfg)


def test_overlay_file_layers_like_configfile(bw, tmp_path):
    base = tmp_path / "config.yaml"
    base.write_text("a:\n  b: 1\n  c: {d: 2, e: [1, 2]}\nf: keep\n")
    tiny = tmp_path / "tiny.yaml"
    tiny.write_text("a:\n  c: {e: [9]}\n")
    cfg = bw.load_config([base, tiny])
    assert cfg == {"a": {"b": 1, "c": {"d": 2, "e": [9]}}, "f": "keep"}  # lists replaced, dicts merged
    ov = bw.variant_overlays(["v=a.c.d=0.5"], cfg)["v"]
    path = bw.write_overlay(tmp_path / "o" / "variant_v.yaml", ov)
    assert yaml.safe_load(path.read_text()) == {"a": {"c": {"d": 0.5}}}
    # the overlay changes only its key when layered after the others
    assert bw.load_config([base, tiny, path]) == {"a": {"b": 1, "c": {"d": 0.5, "e": [9]}}, "f": "keep"}
    assert cfg["a"]["c"]["d"] == 2  # inputs untouched


def test_variant_key_against_the_real_config(bw):
    cfg = bw.load_config([REPO / "config" / "config.yaml"])
    bw.variant_overlays(["v=diffusion.classifier_settings.svm.class_weight=balanced"], cfg)
    with pytest.raises(KeyError, match="diffusion.classifier_settings.no_such_key"):
        bw.variant_overlays(["v=diffusion.classifier_settings.no_such_key=true"], cfg)


def test_unknown_key_is_an_argparse_error(bw, capsys):
    with pytest.raises(SystemExit) as e:
        bw.parse_args(["--targets", "all", "--variant", "ref=diffusion.no_such_key=true"])
    assert e.value.code == 2
    assert "diffusion.no_such_key" in capsys.readouterr().err


def test_read_benchmark_tsv_snakemake_format(bw, tmp_path):
    f = write_bench(tmp_path / "split_00.tsv",
                    "12.5\t0:00:12\t389.80\t1200.00\t350.00\t360.00\t0.10\t2.00\t95.00\t11.90",
                    "13.5\t0:00:13\tNA\tNA\tNA\tNA\tNA\tNA\tNA\tNA")
    rows = bw.read_benchmark_tsv(f)
    assert rows[0]["s"] == 12.5 and rows[0]["h:m:s"] == "0:00:12" and rows[0]["max_rss"] == 389.8
    assert rows[1]["max_rss"] is None and rows[1]["cpu_time"] is None
    rec = bw.job_record(rows)
    assert rec == {"s": 13.0, "max_rss_mib": 389.8, "cpu_time_s": 11.9, "rows": 2}
    assert bw.job_record(bw.read_benchmark_tsv(write_bench(tmp_path / "fast.tsv", "0.2\t0:00:00" + "\tNA" * 8))) \
        == {"s": 0.2, "max_rss_mib": None, "cpu_time_s": None, "rows": 1}
    bad = tmp_path / "bad.tsv"
    bad.write_text("a\tb\n1\t2\n")
    with pytest.raises(ValueError, match="not a Snakemake benchmark"):
        bw.read_benchmark_tsv(bad)


def test_pattern_regex_and_find_jobs(bw, tmp_path):
    pat = "results/pimkl/tiny/benchmarks/s1_{collection,[A-Za-z0-9_]+}_{cohort,[A-Za-z0-9_]+}.tsv"
    assert bw.pattern_root(pat) == "results/pimkl/tiny/benchmarks"
    assert bw.pattern_root("results/diffusion/{ds}/benchmarks/split_{split}.tsv") == "results/diffusion"
    assert bw.pattern_root("{x}.tsv") == ""
    assert bw.pattern_root("results/mmdt/digits/benchmarks/curves.tsv") == "results/mmdt/digits/benchmarks"
    rx = bw.pattern_regex("a/{n,\\d{2}}_{{lit}}_{n}.tsv")  # braces in a constraint, escaped braces, a repeat
    assert rx.match("a/07_{lit}_07.tsv").groupdict() == {"n": "07"}
    assert not rx.match("a/07_{lit}_08.tsv") and not rx.match("a/7_{lit}_7.tsv")

    split = "results/diffusion/{ds}/benchmarks/split_{split}.tsv"
    write_bench(tmp_path / "results/diffusion/tiny/benchmarks/split_01.tsv", "5.0\t0:00:05" + "\t1.0" * 8)
    write_bench(tmp_path / "results/diffusion/tiny/benchmarks/split_00.tsv", "4.0\t0:00:04" + "\t2.0" * 8)
    write_bench(tmp_path / "results/diffusion/tiny/benchmarks/eigen.tsv", "9.0\t0:00:09" + "\t2.0" * 8)
    jobs = bw.find_jobs(tmp_path, split)
    assert [j["wildcards"] for j in jobs] == [{"ds": "tiny", "split": "00"}, {"ds": "tiny", "split": "01"}]
    assert [(j["s"], j["max_rss_mib"]) for j in jobs] == [(4.0, 2.0), (5.0, 1.0)]
    assert jobs[0]["path"] == "results/diffusion/tiny/benchmarks/split_00.tsv"
    assert bw.find_jobs(tmp_path, "results/mmdt/digits/benchmarks/curves.tsv") == []  # rule did not run
    summary = bw.jobs_summary(tmp_path, slowest=2)
    assert summary["n_jobs"] == 3 and summary["sum_s"] == 18.0
    assert [j["s"] for j in summary["slowest"]] == [9.0, 5.0]


def test_fallback_patterns_are_the_rules_own(bw):
    """The fallback paths are those of workflow/rules/*.smk (the script reads
    the rules' own through Snakemake's API; this only guards the fallback)."""
    text = {n: (REPO / "workflow" / "rules" / f"{n}.smk").read_text() for n in ("diffusion", "mmdt", "pimkl")}
    assert f'"{bw.FALLBACK_PATTERNS["diffusion_split"]}"' in text["diffusion"]
    assert f'"{bw.FALLBACK_PATTERNS["mmdt_digits"]}"' in text["mmdt"]
    assert 'f"{PK_DIR}/benchmarks/s1_{{collection}}_{{cohort}}.tsv"' in text["pimkl"]
    assert bw.FALLBACK_PATTERNS["pimkl_s1"].endswith("/benchmarks/s1_{collection}_{cohort}.tsv")


def run(wall, ok=True, order=0, jobs=()):
    return {"wall_s": wall, "ok": ok, "order": order,
            "rules": {"diffusion_split": [{"path": f"p{i}", "wildcards": {"ds": "x", "split": f"{i:02d}"},
                                           "s": s, "max_rss_mib": m} for i, (s, m) in enumerate(jobs)]}}


def test_summary_medians_skip_failed_runs(bw):
    runs = [run(10.0, jobs=[(4.0, 100.0)]), run(99.0, ok=False, jobs=[(50.0, 1.0)]), run(14.0, jobs=[(6.0, 120.0)]),
            run(12.0, jobs=[(5.0, None)])]
    s = bw.summarize_runs(runs)
    assert s["times_s"] == [10.0, 99.0, 14.0, 12.0] and s["ok"] == [True, False, True, True]
    assert (s["median_s"], s["min_s"], s["max_s"], s["n_ok"], s["n_runs"]) == (12.0, 10.0, 14.0, 3, 4)
    job = s["jobs"]["diffusion_split:ds=x,split=00"]
    assert job["s"] == [4.0, 6.0, 5.0] and job["median_s"] == 5.0
    assert job["median_max_rss_mib"] == 110.0  # median of the sampled ones
    none = bw.summarize_runs([run(3.0, ok=False)])
    assert none["median_s"] is None and none["jobs"] == {}
    assert bw.job_key("mmdt_digits", {}) == "mmdt_digits"


def test_ratios_over_rounds_where_both_succeeded(bw):
    h = sys.modules["_harness"]  # imported by the script from benchmarks/
    runs = {"default": [run(10.0, order=0, jobs=[(4.0, 1.0)]), run(20.0, order=1, jobs=[(8.0, 1.0)]),
                        run(12.0, order=0, jobs=[(5.0, 1.0)])],
            "new": [run(5.0, order=1, jobs=[(1.0, 1.0)]), run(1.0, ok=False, order=0),
                    run(9.0, order=1, jobs=[(2.0, 1.0)])]}
    cmp = bw.paired_comparison(runs, "new", "default")
    assert cmp.times == {"new": [5.0, 9.0], "default": [10.0, 12.0]} and cmp.repeats == 2
    assert cmp.order == [["default", "new"], ["default", "new"]]
    entry = h.headline_ratio("t: new / default", cmp, "new", "default", precision="p", output="o")
    assert entry["ratio"] == pytest.approx(7.0 / 11.0)
    assert entry["paired_ratios"] == pytest.approx([0.5, 0.75]) and entry["paired_ratio_median"] == pytest.approx(0.625)
    s_new, s_def = bw.summarize_runs(runs["new"]), bw.summarize_runs(runs["default"])
    assert bw.job_ratios(s_new, s_def) == {"diffusion_split:ds=x,split=00": pytest.approx(1.5 / 5.0)}
    assert bw.paired_comparison({"a": [run(1.0, ok=False)], "b": [run(1.0)]}, "a", "b") is None
    assert bw.median_or_none([None, 3.0, 1.0]) == 2.0 and bw.median_or_none([None]) is None
