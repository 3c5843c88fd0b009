"""The context adapter (AWS Lambda and Huawei FunctionGraph shapes), and the handlers
using it: the worker stops before the platform's limit, whatever the platform."""
import importlib.util
import time

import pytest

from dbswarm.run.runtime import context as runtime
from dbswarm.run.runtime import service

from .conftest import ROOT


class AwsContext:
    aws_request_id = "aws-req-1"
    function_name = "dbswarm-WorkerFunction"

    def __init__(self, ms):
        self._end = time.time() + ms / 1000

    def get_remaining_time_in_millis(self):
        return int((self._end - time.time()) * 1000)


class FunctionGraphContext:
    """Huawei FunctionGraph's Python context: camel-case getters."""

    def __init__(self, ms):
        self._end = time.time() + ms / 1000

    def getRemainingTimeInMilliSeconds(self):
        return int((self._end - time.time()) * 1000)

    def getRequestID(self):
        return "fg-req-1"

    def getFunctionName(self):
        return "dbswarm-worker"


@pytest.mark.parametrize("cls, request_id", [(AwsContext, "aws-req-1"), (FunctionGraphContext, "fg-req-1")])
def test_adapter_reads_both_context_shapes(cls, request_id):
    ctx = cls(60_000)
    assert 59.0 < runtime.remaining_seconds(ctx) <= 60.0
    remaining = runtime.remaining_time(ctx)
    assert callable(remaining) and 59.0 < remaining() <= 60.0
    assert runtime.request_id(ctx) == request_id


def test_adapter_without_a_context():
    assert runtime.remaining_seconds(None) is None and runtime.remaining_time(None) is None
    assert runtime.remaining_time(object()) is None and runtime.request_id(None) is None


def _handler(name):
    spec = importlib.util.spec_from_file_location(f"fn_{name}", ROOT / "functions" / name / "app.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.handler


@pytest.mark.parametrize("cls", [AwsContext, FunctionGraphContext])
def test_worker_handler_stops_before_the_platform_limit(cls, tmp_path, monkeypatch):
    monkeypatch.delenv("DBSWARM_PROGRESS_DIR", raising=False)
    plan = _handler("plan")({"campaign": {"name": "limit", "target": {"engine": "noop"}, "phases": ["run"],
                                          "workload": {"preset": "S6", "operationcount": 0,
                                                       "maxexecutiontime": 60, "threads": 1}},
                             "results": str(tmp_path)}, None)
    event = {"campaign_id": plan["campaign_id"], "store": plan["store"], "run_id": plan["runs"][0]["run_id"],
             "phase": "run", "shard": 0}
    # 15.8 s left: the worker keeps its 15 s safety margin and stops after ~0.8 s
    t0 = time.monotonic()
    out = _handler("worker")(event, cls(service.SAFETY_MARGIN_S * 1000 + 800))
    assert time.monotonic() - t0 < 5
    assert out["status"] == "continue" and out["checkpoint"]["segment"] == 1 and out["ops"] > 0
    out = _handler("worker")(dict(event, checkpoint=out["checkpoint"]), cls(service.SAFETY_MARGIN_S * 1000 + 600))
    assert out["status"] == "continue" and out["segment"] == 1


def test_arm_and_record_failure_actions(tmp_path):
    armed = _handler("prepare")({"action": "arm", "lead_seconds": 3}, None)
    assert abs(armed["start_at"] - (time.time() + 3)) < 1
    plan = _handler("plan")({"campaign": {"name": "f", "target": {"engine": "noop"},
                                          "workload": {"operationcount": 10}}, "results": str(tmp_path)}, None)
    out = _handler("worker")({"action": "record_failure", "campaign_id": plan["campaign_id"], "store": plan["store"],
                              "run_id": "000", "phase": "run", "shard": 0,
                              "error": {"Error": "Runtime.ExitError", "Cause": "signal: killed"}}, None)
    assert out == {"shard": 0, "status": "failed"}
    assert (tmp_path / plan["campaign_id"] / "runs" / "000" / "run" / "shard-0.failed.json").is_file()
