"""Live metrics in a deployment: the workers' per-second series as CloudWatch metrics
(PutMetricData, 1-second resolution) and the template's dashboard, in moto."""
import datetime as dt
import json
import re

import pytest
from moto import mock_aws

from dbswarm.results.store import open_store
from dbswarm.run.runtime import metrics, service
from dbswarm.run.runtime.template import load_yaml

from .conftest import ROOT

NAMESPACE = "dbswarm-test"


@pytest.fixture
def cloudwatch(aws_env, monkeypatch):
    monkeypatch.setenv(metrics.CLOUDWATCH_ENV, NAMESPACE)
    with mock_aws():
        import boto3
        yield boto3.client("cloudwatch", region_name="us-east-1")


def _sum(cw, name: str, dims: dict) -> float:
    now = dt.datetime.now(dt.timezone.utc)
    stats = cw.get_metric_statistics(Namespace=NAMESPACE, MetricName=name,
                                     Dimensions=[{"Name": k, "Value": v} for k, v in dims.items()],
                                     StartTime=now - dt.timedelta(hours=1), EndTime=now + dt.timedelta(minutes=5),
                                     Period=3600 * 2, Statistics=["Sum"])
    return sum(p["Sum"] for p in stats["Datapoints"])


def test_every_shard_s_operations_reach_cloudwatch_per_operation(cloudwatch, tmp_path):
    campaign = {"name": "cw", "seed": 2, "workload": {"preset": "a", "recordcount": 300, "operationcount": 1200,
                                                      "threads": 2}}
    out = service.run_steps(campaign, str(tmp_path),
                            lambda ev, n: [service.run_shard(dict(ev, shard=i)) for i in range(n)], lead_seconds=0)
    assert out["status"] == "complete"
    store = open_store(out["store"])
    result = store.get_json(out["result_key"])
    cid = out["campaign_id"]
    run = result["runs"][0]["phases"]["run"]
    assert run["metrics_export"]["endpoints"] == ["cloudwatch"] and run["metrics_export"]["failed"] == 0
    for shard in range(result["runs"][0]["shard_count"]):
        doc = store.get_json(store.key(cid, "runs", "000", "run", f"shard-{shard}.json"))
        for op, seq in doc["measurement"]["timeline"]["ops"].items():
            dims = {"Campaign": cid, "Run": "000", "Phase": "run", "Shard": str(shard), "Operation": op}
            assert _sum(cloudwatch, "Operations", dims) == sum(seq), (shard, op)
    listed = {m["MetricName"] for m in cloudwatch.list_metrics(Namespace=NAMESPACE)["Metrics"]}
    assert {"Operations", "LatencyMean", "LatencyP99", "LatencyP50"} <= listed


def test_the_template_s_dashboard_reads_the_metrics_the_workers_push(cloudwatch):
    doc = load_yaml(ROOT / "template.yaml")
    worker = doc["Resources"]["WorkerFunction"]["Properties"]
    assert "DBSWARM_CLOUDWATCH_NAMESPACE" in worker["Environment"]["Variables"]
    assert {"CloudWatchPutMetricPolicy": {}} in worker["Policies"]
    dash = doc["Resources"]["MetricsDashboard"]
    assert dash["Type"] == "AWS::CloudWatch::Dashboard" and dash["Condition"] == "PushMetrics"
    body_template = dash["Properties"]["DashboardBody"]
    body_template = body_template.get("Fn::Sub", body_template) if isinstance(body_template, dict) else body_template
    body = body_template.replace("${MetricsNamespace}", NAMESPACE).replace("${AWS::Region}", "us-east-1")
    widgets = json.loads(body)["widgets"]
    names = {m for w in widgets for e in w["properties"]["metrics"] for m in re.findall(r'MetricName="(\w+)"',
                                                                                       e[0]["expression"])}
    assert names <= {"Operations", "Errors", "LatencyMean", "LatencyP50", "LatencyP95", "LatencyP99", "LatencyP999"}
    cloudwatch.put_dashboard(DashboardName="stack-campaigns", DashboardBody=body)
    assert json.loads(cloudwatch.get_dashboard(DashboardName="stack-campaigns")["DashboardBody"]) == json.loads(body)


def test_local_mode_does_not_push_to_cloudwatch(aws_env, monkeypatch):
    """The template's default namespace is a deployment's: local functions do not get it."""
    from dbswarm.run.runtime.emulator import LocalCloud
    monkeypatch.delenv(metrics.CLOUDWATCH_ENV, raising=False)
    with LocalCloud(ROOT / "template.yaml", {"RetryIntervalSeconds": 1}) as cloud:
        assert metrics.CLOUDWATCH_ENV not in cloud.function_environment("WorkerFunction")
    assert cloud.functions["WorkerFunction"].environment[metrics.CLOUDWATCH_ENV] == "dbswarm"
