"""The HTML report as a reader sees it: build it on a small run of the landed
studies, open it in a real headless browser (Debian's chromium, driven over
the DevTools protocol), and check that every figure is listed under its
paper, opens from the menu and renders (a decoded image with a width), that
the reproduction table renders on the front category, and that the page logs
no errors. A screenshot goes to results/report_screenshot.png.

Skips, saying why, where chromium or a websocket client is missing
(`.ci/run` installs chromium)."""

from __future__ import annotations

import json
import shutil
import subprocess
import tempfile
import time
import urllib.request
from pathlib import Path

import pytest

from conftest import REPO, copy_workflow, run_snakemake

pytestmark = pytest.mark.slow

CONFIGS = [REPO / ".test/config/theory_tiny.yaml", REPO / ".test/config/diffusion_tiny.yaml",
           REPO / ".test/config/drug_screen_tiny.yaml", REPO / ".test/config/pimkl_tiny.yaml",
           REPO / ".test/config/mmdt_tiny.yaml", REPO / ".test/config/mkl_transfer_tiny.yaml"]
# The landed studies and what each must show in the report (figure file
# names per paper category prefix).
EXPECTED = {
    "1. Transfer learning": ["projection_vs_nt.png", "projection_vs_cs.png", "translation_vs_ns.png",
                             "translation_vs_angle.png", "theory_vs_simulation_grid.png",
                             "fig4a.png", "fig4b.png", "fig4c.png", "fig4d.png", "fig4e.png", "fig4f.png",
                             "figS9a.png", "figS9b.png", "figS7.png", "figS7_bio.png"],
    "2. Adaptive diffusion": ["roc_threshold.png", "roc_per_kernel.png", "best_roc_per_task.png",
                              "scatter_vs_ubaseline.png", "sensitivity.png"],
    "3. PIMKL": ["fig3a.png", "fig3b.png", "fig4.png", "fig5.png", "fig6.png", "figS1.png", "figS2.png",
                 "figS4.png", "sensitivity.png"],
    "4. LS-MMDT": ["learning_curve.png"],
    "0. Paper vs reproduction": ["reproduction.html", "coverage.html", "run_info.html"],
}
BROWSER_FLAGS = ["--headless", "--no-sandbox", "--disable-gpu", "--disable-background-networking",
                 "--disable-component-update", "--disable-default-apps", "--disable-extensions", "--disable-sync",
                 "--disable-breakpad", "--disable-client-side-phishing-detection", "--disable-domain-reliability",
                 "--disable-features=Translate,MediaRouter,OptimizationHints,AutofillServerCommunication",
                 "--no-first-run", "--no-default-browser-check", "--metrics-recording-only", "--mute-audio",
                 "--password-store=basic", "--window-size=1400,1000"]


def _chromium() -> str | None:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        if shutil.which(name):
            return shutil.which(name)
    return None


class Browser:
    """A headless chromium and one page, over the DevTools protocol."""

    def __init__(self, binary: str):
        import websocket

        self.profile = tempfile.mkdtemp(prefix="report-browser-")
        self.proc = subprocess.Popen([binary, *BROWSER_FLAGS, f"--user-data-dir={self.profile}",
                                      "--remote-debugging-address=127.0.0.1", "--remote-debugging-port=0",
                                      "about:blank"], stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        port_file = Path(self.profile) / "DevToolsActivePort"
        deadline = time.time() + 30
        while not (port_file.exists() and port_file.read_text().strip()):
            if time.time() > deadline or self.proc.poll() is not None:
                err = self.proc.stderr.read().decode(errors="replace") if self.proc.poll() is not None else ""
                self.close()
                raise RuntimeError(f"chromium did not start its DevTools endpoint: {err[-2000:]}")
            time.sleep(0.1)
        port = int(port_file.read_text().split()[0])
        targets = json.load(urllib.request.urlopen(f"http://127.0.0.1:{port}/json/list", timeout=10))
        url = next(t["webSocketDebuggerUrl"] for t in targets if t["type"] == "page")
        self.ws = websocket.create_connection(url, suppress_origin=True, timeout=60)
        self.next_id = 0
        self.events: list[dict] = []
        for domain in ("Runtime", "Log", "Page"):
            self.call(f"{domain}.enable")

    def call(self, method: str, **params):
        self.next_id += 1
        self.ws.send(json.dumps({"id": self.next_id, "method": method, "params": params}))
        while True:
            msg = json.loads(self.ws.recv())
            if msg.get("id") == self.next_id:
                if "error" in msg:
                    raise RuntimeError(f"{method}: {msg['error']}")
                return msg["result"]
            self.events.append(msg)

    def js(self, expression: str, context_id: int | None = None):
        params = {"expression": expression, "returnByValue": True, "awaitPromise": True}
        if context_id is not None:
            params["contextId"] = context_id
        res = self.call("Runtime.evaluate", **params)
        if "exceptionDetails" in res:
            raise RuntimeError(f"{expression[:200]}: {res['exceptionDetails']}")
        return res["result"].get("value")

    def wait_for(self, expression: str, timeout: float = 20.0):
        deadline = time.time() + timeout
        while time.time() < deadline:
            value = self.js(expression)
            if value:
                return value
            time.sleep(0.1)
        raise AssertionError(f"timed out waiting for: {expression}")

    def errors(self) -> list[str]:
        """Console errors, uncaught exceptions and failed loads logged so far."""
        out = []
        for ev in self.events:
            m, p = ev.get("method"), ev.get("params", {})
            if m == "Runtime.exceptionThrown":
                d = p["exceptionDetails"]
                out.append(f"exception: {d.get('exception', {}).get('description', d.get('text'))}")
            elif m == "Runtime.consoleAPICalled" and p.get("type") in ("error", "assert"):
                out.append("console.error: " + " ".join(str(a.get("value", a.get("description"))) for a in p["args"]))
            elif m == "Log.entryAdded" and p["entry"]["level"] == "error":
                out.append(f"log: {p['entry']['text']} {p['entry'].get('url', '')}")
        return out

    def close(self):
        try:
            self.ws.close()
        except Exception:  # noqa: BLE001 - best effort on teardown
            pass
        if self.proc.poll() is None:
            self.proc.terminate()
            try:
                self.proc.wait(timeout=10)
            except subprocess.TimeoutExpired:
                self.proc.kill()
        shutil.rmtree(self.profile, ignore_errors=True)


@pytest.fixture(scope="module")
def built_report(tmp_path_factory):
    binary = _chromium()
    if binary is None:
        pytest.skip("no chromium on PATH (Debian: apt-get install -y chromium; .ci/run installs it)")
    pytest.importorskip("websocket", reason="websocket-client (test extra) is needed to drive chromium")
    wd = copy_workflow(tmp_path_factory.mktemp("report") / "wf")
    args = ["--configfile", *map(str, CONFIGS)]
    t0 = time.time()
    run_snakemake(["--cores", "2", "reproduce", *args], wd, timeout=1800)
    t1 = time.time()
    run_snakemake(["--report", "results/report.html", "reproduce", *args], wd)
    print(f"run {t1 - t0:.0f} s, report {time.time() - t1:.0f} s")
    return wd, binary


def test_reproduction_table_has_a_row_per_paper_value(built_report):
    import pandas as pd
    import yaml

    wd, _ = built_report
    table = pd.read_csv(wd / "results/reproduction.tsv", sep="\t")
    ids = [e["id"] for e in yaml.safe_load((wd / "config/paper_values.yaml").read_text())["entries"]]
    assert set(table["id"]) == set(ids)
    from biokernels.report import VERDICT_KINDS, verdict_kind

    # every verdict is one of the kinds (a deviation entry's carries ": <its deviation>")
    assert set(table["verdict"].map(verdict_kind)) <= set(VERDICT_KINDS)
    assert {"data", "protocol", "tolerance_source"} <= set(table.columns)
    # synthetic data everywhere but the theory: nothing judged there
    data = table[table["study"].isin(["diffusion", "drug_screen", "depmap"]) & (table["verdict"] != "not run")]
    assert len(data) > 0 and (data["verdict"] == "not comparable on this data").all()
    assert table.loc[table["study"] == "theory", "verdict"].isin(["reproduced", "differs"]).all()


def test_report_in_a_headless_browser(built_report):
    wd, binary = built_report
    produced = sorted(p.name for p in (wd / "results").rglob("figures/*.png"))
    browser = Browser(binary)
    try:
        browser.call("Page.navigate", url=(wd / "results/report.html").as_uri())
        browser.wait_for("typeof app !== 'undefined' && typeof categories !== 'undefined' "
                         "&& document.readyState === 'complete'")
        cats = browser.js("categories")
        listed = {}  # file name -> categories it is listed under (names repeat across studies)
        for cat, subs in cats.items():
            for sub, paths in subs.items():
                for p in paths:
                    listed.setdefault(Path(p).name, []).append(cat)
        # every figure the run made is in the report, under its paper
        missing = sorted(set(produced) - set(listed))
        assert not missing, f"figures missing from the report: {missing}"
        for prefix, names in EXPECTED.items():
            for name in names:
                assert name in listed, f"{name} not in the report"
                assert any(c.startswith(prefix) for c in listed[name]), f"{name} is under {listed[name]}, not {prefix!r}"
        checked = 0
        for cat, subs in cats.items():
            for sub, paths in subs.items():
                _open_subcategory(browser, cat, sub)
                for path in paths:
                    entry = browser.js(f"(() => {{ const r = results[{json.dumps(path)}]; "
                                       f"return {{mime: r.mime_type, caption: r.caption, uri: r.data_uri}}; }})()")
                    assert entry["caption"].strip(), f"{path} has no caption"
                    # images and HTML open in the page; other files (the TSV
                    # behind each figure) are a download link: not clicked
                    viewed = entry["mime"].startswith("image/") or entry["mime"] == "text/html"
                    found = browser.wait_for(f"""(() => {{
                        const row = Array.from(document.querySelectorAll('nav tr'))
                            .find(r => r.cells.length && r.cells[0].innerText.trim() === {json.dumps(path)});
                        const eye = row && row.querySelector('a[iconname=eye]');
                        if (!eye) return false;
                        if ({json.dumps(viewed)}) eye.click();
                        return true; }})()""")
                    assert found, f"{path}: no row with a view button under {cat} / {sub}"
                    if entry["mime"] == "text/tab-separated-values":
                        import base64
                        import io

                        import pandas as pd

                        data = base64.b64decode(entry["uri"].split("base64,", 1)[1]).decode()
                        assert len(pd.read_csv(io.StringIO(data), sep="\t")) > 0, f"{path}: an empty table"
                    elif entry["mime"].startswith("image/"):
                        info = browser.wait_for(f"""(async () => {{
                            const img = Array.from(document.images).find(i => i.src === {json.dumps(entry['uri'])});
                            if (!img) return null;
                            try {{ await img.decode(); }} catch (e) {{ return {{broken: String(e)}}; }}
                            return {{w: img.naturalWidth, h: img.naturalHeight,
                                    shown: img.getBoundingClientRect().width}};
                        }})()""")
                        assert "broken" not in info, f"{path}: image does not decode: {info}"
                        assert info["w"] > 0 and info["h"] > 0 and info["shown"] > 0, f"{path}: {info}"
                        assert "Paper" in entry["caption"] or "paper" in entry["caption"], \
                            f"{path}: the caption does not say what the paper showed"
                    else:
                        # HTML items (reproduction table, run info) render in an iframe
                        browser.wait_for(f"Array.from(document.querySelectorAll('iframe'))"
                                         f".some(f => f.src === {json.dumps(entry['uri'])})")
                        rows = _iframe_rows(browser)
                        assert rows > 1, f"{path}: its table did not render in the iframe ({rows} rows)"
                    checked += 1
        assert checked >= sum(len(v) for v in EXPECTED.values())
        # front item: the reproduction table, captured
        _open_subcategory(browser, "0. Paper vs reproduction", "Reproduction table")
        browser.wait_for("""(() => { const row = Array.from(document.querySelectorAll('nav tr'))
            .find(r => r.cells.length && r.cells[0].innerText.includes('reproduction.html'));
            if (!row) return false; row.querySelector('a[iconname=eye]').click(); return true; })()""")
        time.sleep(0.5)
        shot = browser.call("Page.captureScreenshot", format="png")["data"]
        import base64

        png = base64.b64decode(shot)
        for dest in (wd / "results/report_screenshot.png", REPO / "results/report_screenshot.png"):
            dest.parent.mkdir(parents=True, exist_ok=True)
            dest.write_bytes(png)
        assert len(png) > 10_000
        errors = browser.errors()
        assert not errors, "errors in the page:\n" + "\n".join(errors)
    finally:
        browser.close()


def _open_subcategory(browser: Browser, cat: str, sub: str) -> None:
    """Open a category from the main menu and then its subcategory, clicking
    the menu's links as a reader does."""
    browser.js("app.setView({navbarMode: 'menu'})")
    browser.wait_for(f"""(() => {{
        const a = Array.from(document.querySelectorAll('nav a')).find(a => a.innerText.trim() === {json.dumps(cat)});
        if (!a) return false; a.click(); return true; }})()""")
    browser.wait_for(f"app.state.category === {json.dumps(cat)}")
    if browser.js("app.state.navbarMode") == "category":
        browser.wait_for(f"""(() => {{
            const a = Array.from(document.querySelectorAll('nav a'))
                .find(a => a.innerText.trim() === {json.dumps(sub)});
            if (!a) return false; a.click(); return true; }})()""")
    browser.wait_for(f"app.state.navbarMode === 'subcategory' && app.state.subcategory === {json.dumps(sub)}")


def _iframe_rows(browser: Browser) -> int:
    """Table rows in the (data: URL, cross-origin) iframe: evaluated in an
    isolated world of that frame."""
    deadline = time.time() + 20
    while time.time() < deadline:
        tree = browser.call("Page.getFrameTree")["frameTree"]
        for child in tree.get("childFrames", []):
            ctx = browser.call("Page.createIsolatedWorld", frameId=child["frame"]["id"],
                               worldName="report-test")["executionContextId"]
            n = browser.js("document.querySelectorAll('table tr').length", context_id=ctx)
            if n:
                return n
        time.sleep(0.2)
    return 0
