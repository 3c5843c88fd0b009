"""statemachines/campaign.asl.json executed by moto's Step Functions engine, every
function call run by the real handler in its own process (dbswarm.run.runtime.emulator), results
in the emulated S3 bucket: the API, the continue loop, failed and killed shards, the
nightly schedule with its baseline, the Distributed Map, Secrets Manager."""
import json
import sqlite3
import time
import uuid

import pytest

from dbswarm.engine import lock
from dbswarm.run.runtime.emulator import FAULT_ENV
from tests import timing

from .conftest import call_api, entered, s3_json, shard_docs

WAIT_S = 240  # on an idle machine; scaled for the load (tests/timing.py): every function call is a process


def start(cloud, campaign, prefix="t", **options):
    """An execution as the API or the schedule would start it (campaign inline here)."""
    cid = f"{prefix}-{uuid.uuid4().hex[:8]}"
    request = {"campaign": campaign, "results": f"s3://{cloud.bucket()}", "lead_seconds": 0.5, **options}
    return cid, cloud.start(request, name=cid)


def finish(cloud, arn):
    return cloud.wait(arn, timeout_s=timing.timeout(WAIT_S))


def sqlite_campaign(tmp_path, name, shards, **workload):
    w = {"preset": "S3", "recordcount": 2000, "operationcount": 4000, "threads": shards, **workload}
    return {"name": name, "seed": 7, "target": {"engine": "sqlite", "url": str(tmp_path / f"{name}.db")},
            "workload": w, "fanout": {"shards": shards}}


def test_api_post_runs_the_state_machine_to_a_result_in_s3(api_env, tmp_path):
    cloud = api_env
    text = (f"name: api-e2e\nseed: 3\ntarget: {{engine: sqlite, url: {tmp_path}/target.db}}\n"
            "workload: {preset: S3, recordcount: 4000, operationcount: 8000, threads: 4}\n"
            "fanout: {shards: 4}\n")
    code, body = call_api("POST", "/campaigns", text, {"lead_seconds": "0.5"})
    assert code == 202, body
    cid = body["id"]
    assert body["links"]["self"] == f"/campaigns/{cid}"
    assert body["execution_arn"].endswith(f":execution:{cloud.machine.name}:{cid}")
    stored = cloud.client("s3").get_object(Bucket=cloud.bucket(), Key=f"campaigns/{cid}/submitted.yaml")
    assert stored["Body"].read().decode() == text

    desc = finish(cloud, body["execution_arn"])
    assert desc["status"] == "SUCCEEDED", (desc.get("error"), desc.get("cause"))
    code, status = call_api("GET", f"/campaigns/{cid}")
    assert code == 200 and status["status"] == "SUCCEEDED"
    assert status["result"] == {"status": "complete", "missing_shards": 0, "verdict": None}
    phases = status["progress"]["runs"][0]["phases"]
    assert phases == {"load": {"shards": 4, "reported": 4, "failed": 0},
                      "run": {"shards": 4, "reported": 4, "failed": 0}}
    assert "url" in status["files"]["result.json"]

    result = s3_json(cloud, f"campaigns/{cid}/result.json")
    run = result["runs"][0]
    assert result["status"] == "complete" and run["shard_count"] == 4
    assert run["phases"]["load"]["operations_total"] == 4000
    assert run["phases"]["run"]["operations_total"] == 8000
    assert run["phases"]["run"]["shards"]["complete"] == list(range(4))
    assert len(run["phases"]["run"]["start_skew_s"]["per_shard"]) == 4
    # the worker answered with keys, the shard files hold the measurements
    assert sorted(shard_docs(cloud, cid, run["run_id"], "run")) == list(range(4))
    states = entered(cloud, body["execution_arn"])
    assert states["Plan"] == 1 and states["Aggregate"] == 1 and states["Work"] == 8
    assert states["Shards"] == 2 and "ShardsDistributed" not in states and "Compare" not in states

    code, listing = call_api("GET", "/campaigns")
    assert code == 200 and cid in [c["id"] for c in listing["campaigns"]]


def test_api_rejects_invalid_campaigns_with_field_messages(api_env):
    code, body = call_api("POST", "/campaigns", "name: bad\nworkload: {preset: S42, threads: 0}\n"
                                                 "target: {engine: mysql, password: hunter2}\n")
    assert code == 400 and body["error"] == "invalid campaign"
    problems = "\n".join(body["problems"])
    assert "target.password: a literal password is not allowed" in problems
    code, body = call_api("POST", "/campaigns", "name: bad\nworkload: {preset: S42}\n")
    assert code == 400 and body["problems"][0].startswith("workload.preset: unknown preset 'S42'")
    code, body = call_api("POST", "/campaigns", "")
    assert code == 400 and "request body" in body["problems"][0]
    code, body = call_api("GET", "/campaigns/no-such-campaign")
    assert code == 404
    code, body = call_api("PATCH", "/campaigns/x")
    assert code == 404
    # a REST API / FunctionGraph APIG event (payload 1.0 shape), body base64-encoded
    import base64

    from dbswarm.run.front import api
    response = api.handle({"httpMethod": "POST", "path": "/prod/campaigns", "isBase64Encoded": True,
                           "body": base64.b64encode(b"name: v1\nworkload: {threads: 0}\n").decode()})
    assert response["statusCode"] == 400 and response["isBase64Encoded"] is False
    assert json.loads(response["body"])["problems"][0].startswith("workload.threads")


def test_api_enforces_the_deployments_shard_limit(api_env, monkeypatch):
    monkeypatch.setenv("DBSWARM_MAX_SHARDS", "4")
    code, body = call_api("POST", "/campaigns", "name: wide\nworkload: {threads: 8}\nfanout: {shards: 8}\n")
    assert code == 400
    assert body["problems"] == ["fanout: run 000 needs 8 shards, this deployment allows 4 (parameter MaxShards)"]


def test_short_worker_deadline_continues_and_totals_match(cloud, tmp_path):
    # 4 shards of one thread at 200 ops/s each: 1.5 s of run per shard; calls end after 0.3 s
    campaign = sqlite_campaign(tmp_path, "deadline", 4, operationcount=1200, target=800)
    # the two executions side by side (each on its own database file)
    cid_a, arn_a = start(cloud, campaign, "whole")
    campaign_b = dict(campaign, target={**campaign["target"], "url": str(tmp_path / "deadline-b.db")})
    cid_b, arn_b = start(cloud, campaign_b, "sliced", max_call_seconds=0.3)
    for arn in (arn_a, arn_b):
        desc = finish(cloud, arn)
        assert desc["status"] == "SUCCEEDED", (desc.get("error"), desc.get("cause"))

    whole, sliced = (s3_json(cloud, f"campaigns/{c}/result.json")["runs"][0] for c in (cid_a, cid_b))
    plan = s3_json(cloud, f"campaigns/{cid_b}/plan.json")["runs"][0]
    docs = shard_docs(cloud, cid_b, plan["run_id"], "run")
    for shard in plan["shards"]:
        doc = docs[shard["index"]]
        assert len(doc["segments"]) >= 3, (shard["index"], doc["segments"])  # continued at least twice
        ops = sum(o["count"] for o in doc["measurement"]["operations"].values())
        assert ops == shard["operationcount"] and doc["status"] == "done"
    for phase in ("load", "run"):
        assert sliced["phases"][phase]["operations_total"] == whole["phases"][phase]["operations_total"]
        assert sliced["phases"][phase]["status"] == "complete"
    assert sliced["phases"]["run"]["operations_total"] == 1200
    assert sliced["phases"]["load"]["operations_total"] == 2000
    assert entered(cloud, arn_b)["Work"] >= 4 + 3 * 4   # 4 load calls, >= 3 per shard in the run


def test_a_shard_that_raises_is_recorded_and_the_campaign_aggregates(cloud, tmp_path):
    cloud.extra_env[FAULT_ENV] = json.dumps({"function": "WorkerFunction", "mode": "raise",
                                             "match": {"phase": "run", "shard": 3}})
    try:
        cid, arn = start(cloud, sqlite_campaign(tmp_path, "raises", 4), "raises")
        desc = finish(cloud, arn)
    finally:
        del cloud.extra_env[FAULT_ENV]
    assert desc["status"] == "SUCCEEDED", (desc.get("error"), desc.get("cause"))
    result = s3_json(cloud, f"campaigns/{cid}/result.json")
    assert result["status"] == "partial"
    assert [(m["phase"], m["shard"]) for m in result["missing_shards"]] == [("run", 3)]
    assert "RuntimeError" in result["missing_shards"][0]["reason"]
    assert "fault injected" in result["missing_shards"][0]["reason"]
    run = result["runs"][0]
    plan = s3_json(cloud, f"campaigns/{cid}/plan.json")["runs"][0]
    assert run["phases"]["load"]["status"] == "complete"
    assert run["phases"]["run"]["shards"]["complete"] == [0, 1, 2]
    docs = shard_docs(cloud, cid, run["run_id"], "run")
    assert sorted(docs) == [0, 1, 2]
    assert run["phases"]["run"]["operations_total"] == sum(plan["shards"][i]["operationcount"] for i in (0, 1, 2))
    failure = s3_json(cloud, f"campaigns/{cid}/runs/{run['run_id']}/run/shard-3.failed.json")
    assert failure["shard"] == 3
    states = entered(cloud, arn)
    assert states["RecordFailure"] == 1 and states["Aggregate"] == 1


def test_a_killed_shard_process_is_reported_missing_not_hung(cloud, tmp_path):
    cloud.extra_env[FAULT_ENV] = json.dumps({"function": "WorkerFunction", "mode": "kill", "after_s": 0.4,
                                             "match": {"phase": "run", "shard": 1}})
    try:
        # each shard runs 2 s (rate-limited): shard 1 is killed in the middle of its call
        cid, arn = start(cloud, sqlite_campaign(tmp_path, "killed", 3, operationcount=1200, target=600), "killed")
        t0 = time.monotonic()
        desc = finish(cloud, arn)
    finally:
        del cloud.extra_env[FAULT_ENV]
    assert desc["status"] == "SUCCEEDED" and time.monotonic() - t0 < 60
    result = s3_json(cloud, f"campaigns/{cid}/result.json")
    assert [(m["phase"], m["shard"]) for m in result["missing_shards"]] == [("run", 1)]
    reason = result["missing_shards"][0]["reason"]
    assert "Runtime.ExitError" in reason and "SIGKILL" in reason
    assert result["runs"][0]["phases"]["run"]["shards"]["complete"] == [0, 2]


# the run phase only, on the noop engine: the subject is the comparison, not the target
NIGHTLY = """name: nightly
seed: 11
target: {engine: noop}
workload: {preset: S6, recordcount: 1000, operationcount: 3000, threads: 2}
fanout: {shards: 2}
phases: [run]
results: {baseline: nightly, thresholds: {throughput: 0.1}}
"""


@pytest.mark.parametrize("baseline_ops, verdict", [(1.0, "pass"), (1e12, "regressed")])
def test_the_nightly_schedule_compares_with_the_stored_baseline(cloud, baseline_ops, verdict):
    schedule, = cloud.app.schedules()
    assert schedule.state == "DISABLED" and schedule.expression.startswith("cron(")
    s3 = cloud.client("s3")
    s3.put_object(Bucket=cloud.bucket(), Key=schedule.input["campaign_key"],
                  Body=NIGHTLY.encode())
    s3.put_object(Bucket=cloud.bucket(), Key="baselines/nightly.json",
                  Body=json.dumps({"schema_version": 1, "campaign_id": "earlier",
                                   "metrics": {"000": {"throughput": baseline_ops}}}).encode())
    # EventBridge Scheduler starts the execution with the schedule's Input (and a name of its own)
    name = f"nightly-{uuid.uuid4().hex[:8]}"
    arn = cloud.start(schedule.input, name=name)
    desc = finish(cloud, arn)
    result = s3_json(cloud, f"campaigns/{name}/result.json")
    assert result["compare"]["verdict"] == verdict and result["compare"]["baseline"] == "nightly"
    delta, = [d for d in result["compare"]["deltas"] if d["metric"] == "throughput"]
    assert delta["regressed"] is (verdict == "regressed")
    states = entered(cloud, arn)
    assert states["Aggregate"] == 1 and states["Compare"] == 1
    if verdict == "pass":
        assert desc["status"] == "SUCCEEDED"
        assert json.loads(desc["output"])["result"]["compare"]["verdict"] == "pass"
        assert result["status"] == "complete"
    else:
        # the result is written first, then the execution fails
        assert desc["status"] == "FAILED" and desc["error"] == "dbswarm.Regressed"
        assert result["status"] == "regressed" and states["Regressed"] == 1
        # the execution says why: the compare step's reasons are the failure's cause
        assert "000 throughput" in desc["cause"] and "threshold 10%" in desc["cause"] and name in desc["cause"]


# the run phase only, on the noop engine: the subject is the verdict, not the target (a load
# phase per run was as many function processes again)
NIGHTLY_REPEAT = """name: nightly-history
seed: 12
target: {engine: noop}
workload: {preset: S6, recordcount: 500, operationcount: 1500, threads: 1}
fanout: {shards: 1}
phases: [run]
repeat: 3
results: {baseline: nightly-history}
"""


@pytest.mark.parametrize("level, verdict", [(1.0, "pass"), (1e9, "regressed")])
def test_the_nightly_schedule_judges_against_its_history(cloud, level, verdict):
    """The schedule's path with the noise-aware verdict: 3 runs tonight (repeat) against 30
    campaigns of history in the bucket: Mann–Whitney, the effect and its interval, the
    change point; tonight is appended to the history."""
    import random
    schedule, = cloud.app.schedules()
    s3 = cloud.client("s3")
    prefix = "history/nightly-history/"
    for obj in s3.list_objects_v2(Bucket=cloud.bucket(), Prefix=prefix).get("Contents", []):
        s3.delete_object(Bucket=cloud.bucket(), Key=obj["Key"])
    rng = random.Random(3)
    for i in range(30):
        doc = {"schema_version": 1, "campaign_id": f"night-{i:02d}", "at": 1000.0 + i, "verdict": "pass",
               "samples": {"000": {"throughput": [level * (1 + rng.uniform(-0.2, 0.2))]}}}
        s3.put_object(Bucket=cloud.bucket(), Key=f"{prefix}{1000.0 + i:017.6f}-night-{i:02d}.json",
                      Body=json.dumps(doc).encode())
    s3.put_object(Bucket=cloud.bucket(), Key=schedule.input["campaign_key"],
                  Body=NIGHTLY_REPEAT.encode())
    name = f"nightly-{uuid.uuid4().hex[:8]}"
    arn = cloud.start(schedule.input, name=name)
    desc = finish(cloud, arn)
    result = s3_json(cloud, f"campaigns/{name}/result.json")
    c = result["compare"]
    assert c["verdict"] == verdict and c["history"] == {"campaigns": 30, "name": "nightly-history"}
    d, = [d for d in c["deltas"] if d["metric"] == "throughput"]
    assert d["method"] == "statistical" and d["n"] == 3 and d["n_reference"] == 30 and d["ci"]
    assert "Mann–Whitney" in d["test"] and d["regressed"] is (verdict == "regressed")
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket=cloud.bucket(), Prefix=prefix)["Contents"]]
    assert len(keys) == 31 and keys[-1].endswith(f"-{name}.json")        # tonight appended
    if verdict == "regressed":
        assert desc["status"] == "FAILED" and desc["error"] == "dbswarm.Regressed"
        assert "000 throughput: regressed" in desc["cause"] and "Mann–Whitney p" in desc["cause"]
        assert "change point at" in desc["cause"]
        assert d["p_adjusted"] < 0.025 and d["change"] < -0.99 and c["reasons"]
        assert any(cp["index"] == 30 and cp["regressed"] for cp in c["change_points"])
        summary = cloud.client("s3").get_object(Bucket=cloud.bucket(), Key=f"campaigns/{name}/summary.md")
        assert "### Verdict: **regressed**" in summary["Body"].read().decode()
    else:
        assert desc["status"] == "SUCCEEDED" and result["status"] == "complete"


@pytest.mark.slow
def test_many_shards_use_a_distributed_map_reading_items_from_s3(cloud):
    campaign = {"name": "wide", "target": {"engine": "noop"}, "phases": ["run"],
                "workload": {"preset": "S6", "recordcount": 1000, "operationcount": 4200, "threads": 42},
                "fanout": {"shards": 42}}
    calls_before = cloud.calls["WorkerFunction"]
    cid, arn = start(cloud, campaign, "wide")
    desc = finish(cloud, arn)
    assert desc["status"] == "SUCCEEDED", (desc.get("error"), desc.get("cause"))
    plan = s3_json(cloud, f"campaigns/{cid}/plan.json")["runs"][0]
    assert plan["map_mode"] == "DISTRIBUTED"
    items = s3_json(cloud, f"campaigns/{cid}/runs/{plan['run_id']}/shards.json")
    assert items == [{"shard": i} for i in range(42)]
    states = entered(cloud, arn)
    assert states["ShardsDistributed"] == 1 and "Shards" not in states
    assert cloud.calls["WorkerFunction"] - calls_before == 42   # the items ran as child executions
    run = s3_json(cloud, f"campaigns/{cid}/result.json")["runs"][0]["phases"]["run"]
    assert run["operations_total"] == 4200 and run["shards"]["complete"] == list(range(42))


def test_workers_resolve_secret_references_from_secrets_manager(cloud):
    secret_value = "pa55-from-secrets-manager"
    cloud.client("secretsmanager").create_secret(Name="dbswarm/noop-target",
                                                 SecretString=json.dumps({"password": secret_value}))
    target = {"engine": "noop", "url": "noop://loader@db.internal/ycsb", "password": {"secret": "dbswarm/noop-target"}}
    campaign = {"name": "secret", "target": target, "phases": ["run"],
                "workload": {"preset": "S6", "operationcount": 400, "threads": 2}, "fanout": {"shards": 2}}
    cid, arn = start(cloud, campaign, "secret")
    assert finish(cloud, arn)["status"] == "SUCCEEDED"
    result = s3_json(cloud, f"campaigns/{cid}/result.json")
    assert result["status"] == "complete"
    s3 = cloud.client("s3")
    for obj in s3.list_objects_v2(Bucket=cloud.bucket(), Prefix=f"campaigns/{cid}/")["Contents"]:
        assert secret_value.encode() not in s3.get_object(Bucket=cloud.bucket(), Key=obj["Key"])["Body"].read()
    history = json.dumps(cloud.history(arn), default=str)
    assert secret_value not in history and "dbswarm/noop-target" in history  # only the reference travels

    missing = dict(campaign, target=dict(target, password={"secret": "dbswarm/absent"}))
    cid, arn = start(cloud, missing, "nosecret")
    assert finish(cloud, arn)["status"] == "SUCCEEDED"
    result = s3_json(cloud, f"campaigns/{cid}/result.json")
    assert len(result["missing_shards"]) == 2
    assert "cannot read secret 'dbswarm/absent'" in result["missing_shards"][0]["reason"]


def test_delete_stops_a_running_campaign(api_env, tmp_path):
    cloud = api_env
    text = (f"name: long\ntarget: {{engine: sqlite, url: {tmp_path}/long.db}}\n"
            "workload: {preset: S6, recordcount: 500, operationcount: 0, maxexecutiontime: 120, threads: 2}\n"
            "fanout: {shards: 2}\n")
    code, body = call_api("POST", "/campaigns", text, {"max_call_seconds": "0.5", "lead_seconds": "0.2"})
    assert code == 202
    deadline = time.monotonic() + timing.timeout(60)
    while time.monotonic() < deadline:
        status = call_api("GET", f"/campaigns/{body['id']}")[1]
        progress = status["progress"]
        if progress.get("planned") and progress["runs"][0]["phases"]["run"]["reported"]:
            break
        assert status["status"] == "RUNNING", (status, cloud.client("stepfunctions").describe_execution(
            executionArn=body["execution_arn"]))
        time.sleep(0.2)
    code, doc = call_api("DELETE", f"/campaigns/{body['id']}")
    calls = cloud.calls["WorkerFunction"]
    desc = finish(cloud, body["execution_arn"])
    # AWS reports ABORTED; moto 5.2.5 reports a stop inside nested Maps as FAILED/States.Runtime, and
    # the DELETE's answer says so too when the emulation has ended the execution by the time it
    # reads it back (it releases the campaign lock in between: on a loaded machine, often)
    stopped = ("ABORTED",) if desc["status"] == "ABORTED" else ("FAILED",)
    assert code == 202 and doc["status"] == "CANCELLED", (doc, desc)
    assert desc["status"] in stopped
    assert desc["status"] == "ABORTED" or (desc["status"] == "FAILED" and desc["error"] == "States.Runtime")
    assert call_api("GET", f"/campaigns/{body['id']}")[1]["status"] == "CANCELLED"
    time.sleep(1.5)
    assert cloud.calls["WorkerFunction"] - calls <= 2   # no new worker calls after the stop
    # the campaign lock the stopped execution held on its tables is released (its aggregate step,
    # which releases it, never runs): the next campaign on them need not wait for it to go stale
    with sqlite3.connect(tmp_path / "long.db") as db:
        rows = db.execute(f"SELECT * FROM {lock.LOCK_TABLE}").fetchall()
    assert not [r for r in rows if body["id"] in map(str, r)], rows


def test_a_cancelled_campaign_stops_its_shards_and_keeps_what_they_measured(api_env, tmp_path):
    """Issue 56 item 7: a DELETE stopped the execution, but the local emulation let each shard
    run its whole phase (120 s here) and then said FAILED with its engine's internal message.
    Now the shards stop at their next operation, what they measured is aggregated, and the
    campaign says CANCELLED."""
    cloud = api_env
    text = (f"name: cancelled\ntarget: {{engine: sqlite, url: {tmp_path}/c.db}}\n"
            "workload: {preset: S6, recordcount: 300, operationcount: 0, maxexecutiontime: 120, threads: 2}\n"
            "fanout: {shards: 2}\n")
    code, body = call_api("POST", "/campaigns", text, {"lead_seconds": "0.2"})
    assert code == 202
    cid = body["id"]
    deadline = time.monotonic() + timing.timeout(90)
    while not shard_docs(cloud, cid, "000", "load") or not cloud.running["WorkerFunction"]:
        assert time.monotonic() < deadline, call_api("GET", f"/campaigns/{cid}")[1]
        time.sleep(0.2)
    time.sleep(2.0)  # the run phase's shards are measuring
    assert cloud.running["WorkerFunction"] == 2
    t0 = time.monotonic()
    code, doc = call_api("DELETE", f"/campaigns/{cid}")
    assert code == 202 and doc["status"] == "CANCELLED", doc
    deadline = t0 + timing.timeout(45)
    while True:
        status = call_api("GET", f"/campaigns/{cid}")[1]
        if status.get("result"):
            break
        assert time.monotonic() < deadline, (status, cloud.running)
        time.sleep(0.3)
    stopped_after = time.monotonic() - t0
    assert stopped_after < 60 and cloud.running["WorkerFunction"] == 0, (stopped_after, cloud.running)
    assert status["status"] == "CANCELLED" and "error" not in status and status["cancelled"]["by"], status
    assert status["result"]["status"] == "interrupted" and "result.json" in status["files"], status
    result = s3_json(cloud, f"campaigns/{cid}/result.json")
    run = result["runs"][0]["phases"]["run"]
    assert result["interrupted"]["by"] == "cancelled" and run["operations_total"] > 0, run
    assert sorted(run["shards"]["complete"] + [p["shard"] for p in run["shards"]["partial"]]) == [0, 1], run
    assert all(p["status"] == "interrupted" for p in run["shards"]["partial"]), run


def test_function_processes_report_timeouts_and_crashes_in_lambdas_shape(cloud, tmp_path):
    from dbswarm.run.runtime.emulator import FunctionSpec
    (tmp_path / "app.py").write_text(
        "import os, time\n"
        "def handler(event, context):\n"
        "    if event['do'] == 'sleep':\n        time.sleep(30)\n"
        "    if event['do'] == 'exit':\n        os._exit(3)\n"
        "    if event['do'] == 'raise':\n        raise ValueError('bad input')\n"
        "    return {'left_ms': context.get_remaining_time_in_millis(), 'cwd': os.getcwd()}\n")
    spec = FunctionSpec("Probe", "probe", "arn:aws:lambda:us-east-1:123456789012:function:probe", tmp_path,
                        "app.handler", "python3.12", timeout=1, memory=128)
    payload, error = cloud.run_function(spec, json.dumps({"do": "answer"}))
    assert error is None and 0 < json.loads(payload)["left_ms"] <= 1000
    t0 = time.monotonic()
    _, error = cloud.run_function(spec, json.dumps({"do": "sleep"}))
    assert error["errorType"] == "Sandbox.Timedout" and time.monotonic() - t0 < 10
    _, error = cloud.run_function(spec, json.dumps({"do": "exit"}))
    assert error["errorType"] == "Runtime.ExitError" and "exit status 3" in error["errorMessage"]
    _, error = cloud.run_function(spec, json.dumps({"do": "raise"}))
    assert (error["errorType"], error["errorMessage"]) == ("ValueError", "bad input")


def test_a_search_step_that_cannot_be_planned_still_aggregates_the_steps_run(cloud):
    """NextStep failing (here: search.json gone from the bucket during the first step) is
    caught: Aggregate writes result.json with the step measured, then the execution fails
    (RunFailed) naming the error, instead of ending with no result."""
    campaign = {"name": "search-lost", "seed": 1, "phases": ["run"], "target": {"engine": "noop"},
                "workload": {"preset": "S6", "recordcount": 100, "operationcount": 0, "maxexecutiontime": 2},
                "fanout": {"shards": 1}, "search": {"key": "threads", "start": 1, "max": 8}}
    cid, arn = start(cloud, campaign, "search-lost")
    s3 = cloud.client("s3")
    key = f"campaigns/{cid}/search.json"
    t0 = time.monotonic()
    while time.monotonic() - t0 < 60:
        if s3.list_objects_v2(Bucket=cloud.bucket(), Prefix=key).get("KeyCount"):
            break
        time.sleep(0.05)
    s3.delete_object(Bucket=cloud.bucket(), Key=key)
    desc = finish(cloud, arn)
    states = entered(cloud, arn)
    assert states["NextStep"] == 1 and states["Aggregate"] == 1 and states["RunFailed"] == 1
    assert desc["status"] == "FAILED" and desc["error"] == "dbswarm.RunFailed"
    result = s3_json(cloud, f"campaigns/{cid}/result.json")
    run, = result["runs"]
    assert run["search_step"]["value"] == 1 and run["phases"]["run"]["throughput"] > 0
