"""examples/github-actions.yml, run on this machine (issue 55): the workflow file is parsed and
its steps run in order, as a runner would, for a push to main and then for a pull request,
against the test servers' PostgreSQL instead of the service container. ``run:`` steps run in
bash (``set -e``, as Actions' default shell) with the job's env and a step-summary file; the
``uses:`` steps are played by the test: checkout and setup-python (this checkout and this
Python), upload-artifact and download-artifact (a folder per artifact name, main's kept for the
pull request), the JUnit reporter (each report read back by the JUnit structure check). The
install step is skipped (dbswarm is installed): a ``dbswarm`` on PATH runs this tree's. The
campaign's port is the test server's, its runs 1 s of 1,000 records instead of 10 s of 10,000.
The two workflow runs (two jobs on GitHub) are played side by side, as Actions may run them, the
pull request's waiting for main's to end before it downloads main's result; the pull request's
campaign on a table of its own (two campaigns on one table: the campaign lock refuses the second)."""
import json
import os
import re
import shutil
import subprocess
import sys
import threading
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path

import pytest
import yaml

from tests import servers, timing
from tests.junit_xml import check_junit

ROOT = Path(__file__).resolve().parents[2]
WORKFLOW = ROOT / "examples" / "github-actions.yml"
pytestmark = [pytest.mark.servers, pytest.mark.slow]


@pytest.fixture(scope="module")
def env():
    return servers.start()


def _condition(expr, event: str) -> bool:
    """The ``if:`` expressions the example uses."""
    if expr is None:
        return True
    expr = str(expr).replace("always()", "true").replace("github.event_name", repr(event))
    expr = expr.replace("&&", " and ").replace("||", " or ").replace("true", "True")
    assert re.fullmatch(r"[\w\s'=!()]+", expr), f"an expression the test does not know: {expr}"
    return bool(eval(expr))  # noqa: S307 (the workflow's own `if:`, checked above)


def _workspace(tmp: Path, pg: dict, table: str | None = None) -> Path:
    """A checkout: the campaign file with the test server's port and a short run (on ``table``)."""
    ws = tmp
    (ws / "examples").mkdir(parents=True)
    campaign = yaml.safe_load((ROOT / "examples" / "ci-campaign.yaml").read_text())
    campaign["target"]["url"] = campaign["target"]["url"].replace(":5432/", f":{pg['DBSWARM_TEST_PG_PORT']}/")
    campaign["workload"].update(maxexecutiontime=1, recordcount=1000)
    if table:
        campaign["workload"]["table"] = table
    (ws / "examples" / "ci-campaign.yaml").write_text(yaml.safe_dump(campaign))
    return ws


def _play(job: dict, event: str, ws: Path, artifacts: Path, pg: dict, bin_dir: Path,
          main_done: threading.Event | None = None) -> dict:
    """Every step of the job for one event; {step name: exit status} of the ``run:`` steps.
    ``main_done``: set when main's run has ended (its artifact uploaded): awaited before the download."""
    summary = ws / "step-summary.md"
    run_env = {**os.environ, **{k: str(v) for k, v in job.get("env", {}).items()},
               "DBSWARM_PASSWORD": servers.password(pg), "GITHUB_STEP_SUMMARY": str(summary),
               "GITHUB_EVENT_NAME": event, "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    run_env.pop("DBSWARM_PROGRESS_DIR", None)
    statuses: dict = {}
    failed = False
    for step in job["steps"]:
        cond = step.get("if")
        if failed and "always()" not in str(cond):
            continue
        if not _condition(cond, event):
            continue
        name = step.get("name") or step.get("uses")
        uses = step.get("uses", "")
        if uses.startswith("actions/upload-artifact@"):
            src = ws / step["with"]["path"]
            if src.exists():
                dest = artifacts / event / step["with"]["name"]
                if src.is_dir():
                    shutil.copytree(src, dest, dirs_exist_ok=True)
                else:
                    dest.mkdir(parents=True, exist_ok=True)
                    shutil.copy(src, dest)
            elif step["with"].get("if-no-files-found") != "ignore":
                raise AssertionError(f"{name}: nothing at {src}")
        elif uses.startswith("dawidd6/action-download-artifact@"):
            w = step["with"]
            assert w["branch"] == "main"
            assert main_done is None or main_done.wait(timing.timeout(900)), "main's run never ended"
            src = artifacts / "push" / w["name"]  # main's last run
            if src.exists():
                shutil.copytree(src, ws / w["path"])
        elif uses.startswith("mikepenz/action-junit-report@"):
            reports = sorted(ws.glob(step["with"]["report_paths"]))
            assert reports, "no JUnit report"
            for r in reports:
                check_junit(r)
        elif uses:
            assert uses.split("@")[0] in ("actions/checkout", "actions/setup-python"), uses
        elif step["run"].startswith("pip install"):
            continue  # dbswarm is installed here (this tree, through the dbswarm on PATH)
        else:
            proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=ws, env=run_env, capture_output=True,
                                  text=True, timeout=timing.timeout(900))
            statuses[name] = proc.returncode
            assert proc.returncode == 0, f"{event}: step {name!r} exited {proc.returncode}:\n" \
                                         f"{proc.stdout[-3000:]}\n{proc.stderr[-3000:]}"
    statuses["summary"] = summary.read_text() if summary.exists() else ""
    return statuses


def test_the_github_actions_example_runs_green(env, tmp_path):
    workflow = yaml.safe_load(WORKFLOW.read_text())
    on = workflow.get("on", workflow.get(True))  # YAML 1.1 reads a bare `on` as true
    assert on["push"]["branches"] == ["main"] and "pull_request" in on
    (job,) = workflow["jobs"].values()
    assert job["services"]["postgres"]["image"].startswith("postgres:")
    assert job["services"]["postgres"]["env"]["POSTGRES_PASSWORD"] == job["env"]["DBSWARM_PASSWORD"]
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    shim = bin_dir / "dbswarm"
    shim.write_text(f"#!/bin/sh\nexec {sys.executable} -m dbswarm \"$@\"\n")
    shim.chmod(0o755)
    artifacts = tmp_path / "artifacts"

    main_done = threading.Event()

    def play_main() -> dict:
        try:
            return _play(job, "push", _workspace(tmp_path / "main", env), artifacts, env, bin_dir)
        finally:
            main_done.set()

    pr_ws = _workspace(tmp_path / "pr", env, table="usertable_pr")
    with ThreadPoolExecutor(2) as pool:
        main_run = pool.submit(play_main)
        pr_run = pool.submit(_play, job, "pull_request", pr_ws, artifacts, env, bin_dir, main_done)
        main, pr = main_run.result(), pr_run.result()
    assert main["Run the campaign"] == 0 and "Compare with main" not in main
    assert "ci-ycsb-postgresql" in main["summary"]  # summary.md appended by `dbswarm run`
    kept = json.loads((artifacts / "push" / "dbswarm-result" / "result.json").read_text())
    assert kept["status"] == "complete" and len(kept["runs"]) == 5

    assert pr["Compare with main"] == 0
    assert "## dbswarm compare: pass" in pr["summary"]
    compare = check_junit(pr_ws / "reports" / "compare.xml")
    assert [c.get("name") for c in compare.iter("testcase")] == ["load", "run"]
    campaign = check_junit(pr_ws / "reports" / "campaign.xml")
    assert len(list(campaign.iter("testcase"))) == 5 * 2  # 5 runs, each with a load and a run phase
    assert "dbswarm-charts" in (pr_ws / "compare.html").read_text()


def test_the_compare_step_fails_on_a_regression(compare_results, tmp_path):
    """The workflow's compare step, given a candidate slower than its baseline (the noop
    campaigns of test_compare.py: 5 ms a call, then 25): exit 4, which fails the job, and the
    step summary and JUnit report say why."""
    job, = yaml.safe_load(WORKFLOW.read_text())["jobs"].values()
    (step,) = [s for s in job["steps"] if s.get("name") == "Compare with main"]
    for side, name in (("baseline", "base"), ("this-result", "slow")):
        (tmp_path / side).mkdir()
        shutil.copy(compare_results[name] / "result.json", tmp_path / side)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    (bin_dir / "dbswarm").write_text(f"#!/bin/sh\nexec {sys.executable} -m dbswarm \"$@\"\n")
    (bin_dir / "dbswarm").chmod(0o755)
    run_env = {**os.environ, "GITHUB_STEP_SUMMARY": str(tmp_path / "summary.md"),
               "PATH": f"{bin_dir}{os.pathsep}{os.environ['PATH']}"}
    proc = subprocess.run(["bash", "-e", "-c", step["run"]], cwd=tmp_path, env=run_env, capture_output=True,
                          text=True, timeout=timing.timeout(300))
    assert proc.returncode == 4, proc.stderr
    assert "## dbswarm compare: regressed" in (tmp_path / "summary.md").read_text()
    failure = check_junit(tmp_path / "reports" / "compare.xml").find(".//failure")
    assert failure.get("type") == "regression" and "throughput" in failure.text
