"""report.html in a real browser: headless Chromium (Debian's ``chromium``, installed by
``scripts/install --test``) opens the report of the demo campaign (examples/demo.yaml, as
``scripts/demo`` runs it) and of a MariaDB campaign with a matrix over threads, and reads
back what the page's script read from the drawn charts (``pre#dbswarm-render-status``, through
``--dump-dom``): each uPlot instance's data and shown series (every series with points) and
the painted pixels of its plot area (none blank), and no console message, neither from the
page's own hooks nor in Chromium's log (``--enable-logging=stderr``: an uncaught error before
the hooks, a script that failed to parse). A deliberately broken chart (an empty series, a
chart given data that paints nothing) and a script error make the check fail.
"""
from __future__ import annotations

import html
import json
import os
import re
import shutil
import subprocess
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
STATUS = re.compile(r'<pre id="dbswarm-render-status">(.*?)</pre>', re.S)


def chromium() -> str:
    for name in ("chromium", "chromium-browser", "google-chrome"):
        path = shutil.which(name)
        if path:
            return path
    pytest.fail("headless Chromium is missing: scripts/install --test installs Debian's chromium package")


def chromium_args(*extra) -> list[str]:
    return [chromium(), "--headless", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
            "--no-first-run", "--virtual-time-budget=10000", *extra]


# Chromium logs every console message of the page, whatever its level, as
# "[...:INFO:CONSOLE:1] "message", source: ..." (older versions: ERROR:CONSOLE); report.js
# writes nothing to the console, so any such line is a problem
CONSOLE_LINE = re.compile(r":CONSOLE[:(\]]|Uncaught")


def render_status(page: Path) -> dict:
    """What report.js read back from the charts it drew, as the browser rendered them, plus
    ``browser_console``: the page's console messages from Chromium's own log."""
    proc = subprocess.run(chromium_args("--enable-logging=stderr", "--v=0", "--dump-dom", page.resolve().as_uri()),
                          capture_output=True, text=True, timeout=120)
    m = STATUS.search(proc.stdout)
    assert m, f"no render status in the page (chromium exit {proc.returncode}): {proc.stderr[-2000:]}"
    assert m.group(1).strip(), "the page's script did not run (render status empty)"
    status = json.loads(html.unescape(m.group(1)))
    status["browser_console"] = [ln for ln in proc.stderr.splitlines() if CONSOLE_LINE.search(ln)]
    return status


def assert_rendered(page: Path, min_charts: int = 1) -> dict:
    status = render_status(page)
    assert not status["errors"], f"errors in the page's console: {status['errors']}"
    assert not status["browser_console"], f"console messages in Chromium's log: {status['browser_console']}"
    assert status["charts"] >= min_charts, status
    assert status["rendered"] == status["charts"], status
    assert status["read_back"], "the page did not read its charts back from uPlot"
    assert len(status["per_chart"]) == status["charts"], status
    assert not status["empty"], f"charts with a shown series without a drawable point: {status['empty']}"
    assert not status["blank"], f"charts whose plot area has no painted pixel: {status['blank']}"
    for chart in status["per_chart"]:  # a line, not a dot: two points or more and more ink than a marker
        assert chart["series"] > 0 and chart["points"] >= 2 and chart["pixels"] > 100, chart
    return status


def _run(campaign, results: Path) -> tuple[dict, Path]:
    out = run_campaign(campaign, str(results), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    folder = Path(out["store"]) / out["campaign_id"]
    return json.loads((folder / "result.json").read_text()), folder / "report.html"


@pytest.fixture(scope="module")
def demo(demo_run):
    """The demo campaign exactly as scripts/demo runs it (tests/conftest.py: once per session)."""
    proc, folder = demo_run
    assert proc.returncode == 0 and folder, proc.stderr[-3000:]
    return json.loads((folder / "result.json").read_text()), folder / "report.html"


def test_demo_report_renders_every_chart(demo):
    result, page = demo
    assert result["status"] == "complete"
    for r in result["runs"]:  # every run long enough for a steady-state window
        st = r["phases"]["run"]["steady"]
        assert st["ops_per_s"] and st["seconds"] >= 3, (r["run_id"], st)
    text = page.read_text()
    assert "cdn" not in text.lower() and "<script src" not in text  # one file, offline
    status = assert_rendered(page, min_charts=3 * len(result["runs"]))
    assert status["charts"] == text.count("class='chart'")
    if os.environ.get("DBSWARM_SCREENSHOT"):  # docs/report-demo.png: DBSWARM_SCREENSHOT=docs/report-demo.png
        subprocess.run(chromium_args("--hide-scrollbars", "--window-size=1400,5200",
                                     f"--screenshot={Path(os.environ['DBSWARM_SCREENSHOT']).resolve()}",
                                     page.resolve().as_uri()), capture_output=True, timeout=120, check=True)


FIRST_CHART = ("<pre id='first-chart'></pre><script>addEventListener('load', function () {"
               "var r = document.querySelector('.chart').getBoundingClientRect();"
               "document.getElementById('first-chart').textContent = JSON.stringify("
               "{top: r.top + scrollY, height: r.height, screen: innerHeight});});</script>")


def test_the_demo_reports_first_screen_shows_a_chart(demo, tmp_path):
    """Issue 58 item 6: report.html's first screen (a laptop's 1280 x 800 window) holds a chart:
    the first one's title and at least a third of its plot above the fold (its first 3,000 px
    held none; then its first chart began just above the fold, the overview a row per key)."""
    page = tmp_path / "report.html"
    page.write_text(demo[1].read_text().replace("</body>", FIRST_CHART + "</body>"))
    proc = subprocess.run(chromium_args("--window-size=1280,800", "--dump-dom", page.resolve().as_uri()),
                          capture_output=True, text=True, timeout=120)
    m = re.search(r'<pre id="first-chart">(.*?)</pre>', proc.stdout, re.S)
    assert m and m.group(1).strip(), proc.stderr[-2000:]
    first = json.loads(html.unescape(m.group(1)))
    assert first["height"] > 100 and first["top"] + first["height"] / 3 <= first["screen"], first


def _break(page: Path, tmp_path: Path, how: str) -> Path:
    text = page.read_text()
    m = re.search(r"<script type='application/json' id='dbswarm-charts'>(.*?)</script>", text, re.S)
    charts = json.loads(m.group(1))
    if how == "empty series":
        charts[0]["series"].append({"label": "broken", "values": [None] * len(charts[0]["x"])})
    elif how == "script error":
        charts[1]["series"] = None
    elif how == "blank canvas":  # the data is there, every line is invisible: only the pixels tell
        for series in charts[2]["series"]:
            series["color"] = "rgba(0,0,0,0)"
    text = text[:m.start(1)] + json.dumps(charts).replace("</", "<\\/") + text[m.end(1):]
    if how == "blank canvas":
        assert "points: {show: spec.x.length <= 40}" in text
        text = text.replace("points: {show: spec.x.length <= 40}", "points: {show: false}")
    elif how == "uncaught error":  # thrown before report.js installs its hooks: only Chromium's log sees it
        text = text.replace("<pre id='dbswarm-render-status'>", "<script>null.broken;</script>"
                            "<pre id='dbswarm-render-status'>")
    broken = tmp_path / "broken.html"
    broken.write_text(text)
    return broken


@pytest.mark.parametrize("how, caught_by", [("empty series", "without a drawable point"),
                                            ("script error", "errors in the page's console"),
                                            ("blank canvas", "no painted pixel"),
                                            ("uncaught error", "console messages in Chromium's log")])
def test_a_broken_chart_fails_the_check(demo, tmp_path, how, caught_by):
    with pytest.raises(AssertionError, match=caught_by):
        assert_rendered(_break(demo[1], tmp_path, how))


@pytest.mark.servers
def test_mariadb_campaign_report_renders_every_chart(tmp_path):
    env = servers.start()
    campaign = {
        "name": "report-mariadb", "seed": 3, "target": servers.target("mysql", env),
        # 6 s: the per-second client-health charts get 4+ points per shard also on a loaded machine
        # (at 4 s a CI run drew 3 points a shard, a line of 77 painted pixels: "a dot")
        "workload": {"preset": "S3", "table": "report_browser", "recordcount": 3000, "operationcount": 0,
                     "maxexecutiontime": 6, "warmuptime": 1},
        "matrix": {"threads": [2, 4]}, "fanout": {"shards": 2}, "phases": ["prepare", "load", "run", "cleanup"]}
    result, page = _run(campaign, tmp_path)
    assert result["status"] == "complete"
    status = assert_rendered(page, min_charts=2 + 3 * 2)  # the scaling pair + three per run phase
    text = page.read_text()
    assert "Throughput against client threads" in text and "innodb_flush_log_at_trx_commit" in text
    assert status["charts"] == text.count("class='chart'")
