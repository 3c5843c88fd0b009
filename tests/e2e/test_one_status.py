"""One status everywhere: a campaign whose server cannot be reached fails in its prepare step
(nothing ran); the terminal, the exit status, result.json and summary.md all say "failed" — and
result.json, summary.md (its status line, the first thing it says) and report.html (its overview)
say why, not only stderr and execution.json (issue 58 item 4)."""
import json
import os
import socket
import subprocess
import sys
from pathlib import Path

from tests import timing

ROOT = Path(__file__).resolve().parents[2]


def test_an_unreachable_server_is_failed_on_stderr_in_result_json_and_in_summary(tmp_path):
    with socket.socket() as s:   # a port nothing listens on
        s.bind(("127.0.0.1", 0))
        port = s.getsockname()[1]
    spec = tmp_path / "c.yaml"
    spec.write_text(f"name: unreach\ntarget: {{engine: postgresql, url: \"postgresql://dbswarm@127.0.0.1:{port}/dbswarm\", "
                    "password: {env: T35_PW}}\nworkload: {recordcount: 100, operationcount: 100, threads: 1}\n"
                    "fanout: {shards: 1}\n")
    env = {k: v for k, v in os.environ.items() if k != "DBSWARM_PROGRESS_DIR"}
    env.update(T35_PW="x", DBSWARM_RECONNECT_GIVE_UP_S="2")
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "run", str(spec), "--results", str(tmp_path / "r"),
                           "--quiet"], capture_output=True, text=True, env=env, timeout=timing.timeout(300), cwd=ROOT)
    assert proc.returncode == 3, proc.stderr
    assert "campaign finished with status failed" in proc.stderr and "Connection refused" in proc.stderr
    folder, = (tmp_path / "r").iterdir()
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "failed"
    assert {p["status"] for r in result["runs"] for p in r["phases"].values()} == {"not run"}
    assert "Status: **failed**" in (folder / "summary.md").read_text()
    assert "Status: **failed**" in proc.stdout   # the tables printed at the end say it too
    # why: the step's error, in all three files (no stack trace, on one line)
    assert "Connection refused" in result["failure"] and "Traceback" not in result["failure"], result.get("failure")
    status_line = (folder / "summary.md").read_text().splitlines()[2]
    assert status_line.startswith("Status: **failed**: ") and "Connection refused" in status_line, status_line
    html = (folder / "report.html").read_text()
    overview = html[html.index("<h2>Overview</h2>"):html.index("</table>", html.index("<h2>Overview</h2>"))]
    assert "Connection refused" in overview, overview
