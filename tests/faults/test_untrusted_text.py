"""Issue 33 item 4: text a user chose (a target's label, a campaign's name) reaches report.html,
summary.md and the terminal as text: escaped in HTML, never acting as markup or script; control
characters are refused in a campaign (names, labels and values) and stripped from what is
printed (a result written before they were refused)."""
import json
import re
import subprocess
import sys

import pytest

from tests.faults.conftest import dbswarm_env

XSS = "<script>alert(1)</script><img src=x onerror=alert(2)>"


def _campaign(tmp_path, label, name="faults-xss"):
    spec = tmp_path / f"{name}.json"
    spec.write_text(json.dumps({
        "name": name, "seed": 1,
        "target": {"engine": "sqlite", "label": label},
        "workload": {"preset": "c", "table": "faults_xss", "recordcount": 100, "operationcount": 300, "threads": 1},
        "fanout": {"shards": 1}, "phases": ["prepare", "load", "run"]}))
    return spec


def _dbswarm(*args, timeout=180):
    return subprocess.run([sys.executable, "-m", "dbswarm", *args], env=dbswarm_env(), capture_output=True,
                          text=True, timeout=timeout)


def test_a_label_with_markup_renders_as_text_in_the_report(tmp_path):
    proc = _dbswarm("run", str(_campaign(tmp_path, XSS)), "--results", str(tmp_path / "r"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    folder = next((tmp_path / "r").iterdir())
    page = (folder / "report.html").read_text()
    # the label is in the page, escaped, wherever it appears; never as a tag
    assert "&lt;script&gt;alert(1)&lt;/script&gt;" in page
    assert "<script>alert(1)" not in page and "<img src=x" not in page
    # the only scripts are the report's own: the chart data (JSON, '</' escaped), uPlot, report.js
    scripts = re.findall(r"<script[^>]*>", page)
    assert scripts == ["<script type='application/json' id='dbswarm-charts'>", "<script>", "<script>"], scripts
    assert "alert(1)</script>" not in page.split("id='dbswarm-charts'>", 1)[1].split("</script>", 1)[0] + "</script>"


@pytest.mark.parametrize("label", ["red\x1b[31mtext", "a\x00b", "over\u202eride", "two\nlines", "bell\x07"])
def test_control_characters_in_a_label_are_refused(tmp_path, label):
    proc = _dbswarm("validate", str(_campaign(tmp_path, label)))
    assert proc.returncode == 2, proc.stdout + proc.stderr
    assert "target.label: contains a control character" in proc.stderr, proc.stderr
    assert "\x1b" not in proc.stderr and "\u202e" not in proc.stderr


def test_control_characters_are_refused_by_the_api(tmp_path):
    from dbswarm.results.store import LocalStore
    from dbswarm.run.front import api
    dep = api.Deployment("arn:aws:states:us-east-1:123456789012:stateMachine:dbswarm-campaign",
                         LocalStore(tmp_path / "r"), secret_prefix="dbswarm/", allowed_targets="*")
    body = {"name": "faults-ctl", "target": {"engine": "postgresql", "url": "postgresql://u@10.0.0.5/db",
                                             "label": "x\x1b]0;owned\x07", "password": {"secret": "dbswarm/x"}}}
    out = api.handle({"requestContext": {"http": {"method": "POST"}}, "rawPath": "/campaigns",
                      "body": json.dumps(body)}, dep)
    assert out["statusCode"] == 400, out
    assert any(p.startswith("target.label: contains a control character")
               for p in json.loads(out["body"])["problems"]), out["body"]


def test_summary_and_terminal_never_print_control_characters(tmp_path):
    """A result written before labels were checked (or edited): summary.md and `dbswarm show`
    print its label without the control characters."""
    proc = _dbswarm("run", str(_campaign(tmp_path, "plain")), "--results", str(tmp_path / "r"), "--quiet")
    assert proc.returncode == 0, proc.stderr
    folder = next((tmp_path / "r").iterdir())
    result = json.loads((folder / "result.json").read_text())
    for run in result["runs"]:
        run["target"]["label"] = "evil\x1b[2J\x1b]0;title\x07\u202eeulav"
    (folder / "result.json").write_text(json.dumps(result))
    from dbswarm.results.report.files import summary_markdown
    text = summary_markdown(result)
    assert "evil" in text and not re.search("[\x00-\x08\x0b-\x1f\x7f-\x9f\u202a-\u202e]", text), repr(text)
    shown = _dbswarm("show", str(folder / "result.json"))
    assert shown.returncode == 0, shown.stderr
    assert "evil" in shown.stdout and "\x1b" not in shown.stdout and "\u202e" not in shown.stdout
