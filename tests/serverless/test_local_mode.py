"""`dbswarm run` executes statemachines/campaign.asl.json (moto's engine, handlers in
processes): the execution trace in the results proves it; results may go to a real
S3-compatible endpoint, which the emulation must not swallow."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests.moto_server import moto_server


def _trace(out):
    return json.loads((Path(out["store"]) / out["campaign_id"] / "execution.json").read_text())


def test_run_campaign_goes_through_the_state_machine(tmp_path):
    campaign = {"name": "local-sm", "seed": 4,
                "workload": {"recordcount": 1000, "operationcount": 1200, "threads": 3, "target": 1200},
                "matrix": {"preset": ["S2", "S6"]}, "fanout": {"shards": 3}}
    out = run_campaign(campaign, str(tmp_path), max_call_seconds=0.3, lead_seconds=0.3, show_progress=False,
                       log=lambda *_: None)
    assert out["status"] == "complete" and out["execution"]["status"] == "SUCCEEDED"
    trace = _trace(out)
    assert trace["engine"].startswith("moto 5.2.5 Step Functions")
    assert trace["state_machine"]["definition"] == "statemachines/campaign.asl.json"
    assert trace["execution"]["name"] == out["campaign_id"] and trace["execution"]["status"] == "SUCCEEDED"
    states = trace["states_entered"]
    assert states["Plan"] == 1 and states["ForEachRun"] == 1 and states["Aggregate"] == 1
    assert states["Prepare"] == 2 and states["Arm"] == 4 and states["Index"] == 2 and states["AfterRun"] == 2
    # two runs x two phases x three shards, and the run phase (1 s per shard) continued
    assert states["ShardDone"] == 12 and states["Work"] >= 12 + 2 * 3 * 2
    assert trace["function_calls"]["WorkerFunction"] == states["Work"]
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    assert [r["phases"]["run"]["operations_total"] for r in result["runs"]] == [1200, 1200]


def test_baseline_saved_then_regression_fails_the_execution(tmp_path):
    base = {"name": "reg", "target": {"engine": "noop"}, "phases": ["run"],
            "workload": {"preset": "S6", "operationcount": 2000, "threads": 2},
            "results": {"baseline": "local", "save_baseline": True}}
    first = run_campaign(base, str(tmp_path), show_progress=False, log=lambda *_: None)
    assert first["compare"]["verdict"] == "no-baseline" and first["compare"]["baseline_saved"] is True
    baseline = tmp_path / "baselines" / "local.json"
    doc = json.loads(baseline.read_text())
    doc["metrics"]["000"]["throughput"] *= 1000      # a baseline no machine can match
    doc["samples"]["000"]["throughput"] = [v * 1000 for v in doc["samples"]["000"]["throughput"]]  # its runs too
    baseline.write_text(json.dumps(doc))
    second = run_campaign(base, str(tmp_path), show_progress=False, log=lambda *_: None)
    assert second["compare"]["verdict"] == "regressed"
    assert second["execution"] == {**second["execution"], "status": "FAILED", "error": "dbswarm.Regressed"}
    assert _trace(second)["states_entered"]["Regressed"] == 1


def test_an_inconclusive_night_fails_the_execution_when_the_campaign_asks(tmp_path):
    """results.verdict.fail_inconclusive: three nights of history are too few to judge one run
    by; the verdict is inconclusive, and the execution fails (dbswarm.Inconclusive, exit 4)."""
    from dbswarm.cli import report_outcome
    from dbswarm.results.store import open_store
    from dbswarm.results.verdict.regression import append_history
    store = open_store(str(tmp_path))
    for i in range(3):
        append_history(store, "blind", {"campaign_id": f"old-{i}", "created_at": 1000.0 + i},
                       {"000": {"throughput": [1000.0 + i]}}, "pass")
    campaign = {"name": "blind", "target": {"engine": "noop"}, "phases": ["run"],
                "workload": {"preset": "S6", "operationcount": 2000, "threads": 2},
                "results": {"baseline": "none-saved", "verdict": {"fail_inconclusive": True}}}
    out = run_campaign(campaign, str(tmp_path), show_progress=False, log=lambda *_: None)
    assert out["compare"]["verdict"] == "inconclusive" and out["compare"]["fail"] is True
    assert out["execution"] == {**out["execution"], "status": "FAILED", "error": "dbswarm.Inconclusive"}
    assert out["status"] == "complete" and _trace(out)["states_entered"]["Inconclusive"] == 1
    assert report_outcome(out, False) == 4
    campaign["results"]["verdict"]["fail_inconclusive"] = False  # the default: it passes
    out = run_campaign(campaign, str(tmp_path), show_progress=False, log=lambda *_: None)
    assert out["compare"]["verdict"] == "inconclusive" and out["execution"]["status"] == "SUCCEEDED"


def test_a_run_that_fails_outside_its_shards_still_aggregates(tmp_path):
    # the prepare step cannot create the database file: the run stops, the campaign aggregates
    campaign = {"name": "badrun", "target": {"engine": "sqlite", "url": "/proc/dbswarm-cannot/x.db"},
                "workload": {"operationcount": 100, "threads": 1}}
    said = []
    out = run_campaign(campaign, str(tmp_path), show_progress=False, log=said.append)
    assert out["status"] == "failed" and out["execution"]["error"] == "dbswarm.RunFailed"
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    assert result["runs"][0]["phases"]["run"]["status"] == "not run"
    assert any("a run stopped early" in m and "/proc/dbswarm-cannot" in m for m in said), said
    assert _trace(out)["states_entered"]["RunFailed"] == 1


@pytest.fixture
def s3_endpoint(monkeypatch):
    """An S3-compatible server of the user's, in its own process (as MinIO or OBS would be)."""
    with moto_server() as url:
        for key in [k for k in os.environ if k.startswith("AWS_ENDPOINT_URL") or k == "AWS_PROFILE"]:
            monkeypatch.delenv(key)
        monkeypatch.setenv("AWS_ENDPOINT_URL", url)
        monkeypatch.setenv("AWS_ACCESS_KEY_ID", "minio-user")
        monkeypatch.setenv("AWS_SECRET_ACCESS_KEY", "minio-secret")
        monkeypatch.setenv("AWS_DEFAULT_REGION", "us-east-1")
        yield url


def test_results_on_a_user_s3_endpoint_are_not_swallowed_by_the_emulation(s3_endpoint, tmp_path):
    import boto3
    s3 = boto3.client("s3", endpoint_url=s3_endpoint)
    s3.create_bucket(Bucket="user-results")
    campaign = {"name": "s3res", "target": {"engine": "sqlite", "url": str(tmp_path / "t.db")},
                "workload": {"preset": "S3", "recordcount": 500, "operationcount": 1000, "threads": 2}}
    out = run_campaign(campaign, "s3://user-results/team", show_progress=False, log=lambda *_: None)
    assert out["status"] == "complete" and out["store"] == "s3://user-results/team"
    keys = {o["Key"] for o in s3.list_objects_v2(Bucket="user-results", Prefix="team/")["Contents"]}
    cid = out["campaign_id"]
    for name in ("plan.json", "result.json", "summary.md", "execution.json", "runs/000/run/shard-1.json"):
        assert f"team/campaigns/{cid}/{name}" in keys, name
    trace = json.loads(s3.get_object(Bucket="user-results", Key=f"team/campaigns/{cid}/execution.json")["Body"].read())
    assert trace["states_entered"]["Work"] == 4


@pytest.mark.slow
def test_local_distributed_map_mirrors_the_items_into_the_emulated_bucket(tmp_path):
    # start_lead_s: the barrier 1 s after arming, not the local default's 0.5 s + 0.45 s a shard on 2 CPUs
    # (19 s here): what is tested is the Map, not when its 41 shards begin (tests/unit/test_start_barrier.py)
    campaign = {"name": "wide-local", "target": {"engine": "noop"}, "phases": ["run"],
                "workload": {"preset": "S6", "operationcount": 4100, "threads": 41},
                "fanout": {"shards": 41, "start_lead_s": 1}}
    out = run_campaign(campaign, str(tmp_path), show_progress=False, log=lambda *_: None)
    assert out["status"] == "complete"
    trace = _trace(out)
    assert trace["states_entered"]["ShardsDistributed"] == 1 and trace["function_calls"]["WorkerFunction"] == 41


@pytest.mark.slow
def test_cli_run_on_the_demo_campaign_goes_through_the_state_machine(demo_run):
    proc, folder = demo_run  # `dbswarm run examples/demo.yaml`, once per session (tests/conftest.py)
    assert proc.returncode == 0, proc.stderr
    assert folder, "the demo left no demo-* campaign folder (or more than one)"
    trace = json.loads((folder / "execution.json").read_text())
    assert trace["execution"]["status"] == "SUCCEEDED"
    states = trace["states_entered"]
    assert states["Plan"] == 1 and states["Aggregate"] == 1
    assert states["Prepare"] == 5 and states["ShardDone"] == trace["function_calls"]["WorkerFunction"] >= 20
    # the demo's TPC-C run on SQLite: NOPM from the database, its consistency check after the run
    result = json.loads((folder / "result.json").read_text())
    tpcc, = [r for r in result["runs"] if r["workload"]["family"] == "tpcc"]
    assert tpcc["phases"]["run"]["tpcc"]["NOPM"] > 0 and tpcc["checks"]["after_run"]["passed"]
    assert result["status"] == "complete"


def test_dbswarm_cancel_stops_a_local_campaign_and_keeps_what_was_measured(tmp_path, capsys):
    """Issue 56 item 7: `dbswarm cancel ID` had no local campaign to cancel (it asked for a
    deployment). Now it asks the runner of a `dbswarm run` on this machine to stop: every shard
    stops at its next operation, what they measured is aggregated, and the runner says CANCELLED."""
    from dbswarm.cli import main
    from tests import timing
    spec = tmp_path / "long.yaml"
    spec.write_text("name: long-local\ntarget: {engine: noop}\nphases: [run]\n"
                    "workload: {preset: S6, operationcount: 0, maxexecutiontime: 120, threads: 2}\n"
                    "fanout: {shards: 2}\n")
    results = tmp_path / "results"
    proc = subprocess.Popen([sys.executable, "-m", "dbswarm", "run", str(spec), "--results", str(results), "--quiet"],
                            stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    try:
        deadline = time.monotonic() + timing.timeout(90)
        while not list(results.glob("long-local-*/plan.json")):
            assert proc.poll() is None and time.monotonic() < deadline, proc.communicate()
            time.sleep(0.2)
        cid = next(results.glob("long-local-*")).name
        time.sleep(timing.timeout(4))  # the shards are measuring
        assert main(["cancel", cid]) == 0
        assert f"{cid}: CANCELLED" in capsys.readouterr().out
        t0 = time.monotonic()
        out, err = proc.communicate(timeout=timing.timeout(60))
        stopped_after = time.monotonic() - t0
    finally:
        if proc.poll() is None:
            proc.kill()
    assert proc.returncode == 130 and f"campaign {cid} CANCELLED (dbswarm cancel)" in err, (proc.returncode, err)
    assert stopped_after < 90  # the run phase would have lasted 120 s
    result = json.loads((results / cid / "result.json").read_text())
    assert result["status"] == "interrupted" and result["interrupted"]["by"] == "cancelled (dbswarm cancel)"
    assert result["runs"][0]["phases"]["run"]["operations_total"] > 0
    assert main(["cancel", cid]) == 2  # it has ended
    assert "is not running on this machine" in capsys.readouterr().err
