"""Live metrics pushed to a real Prometheus (Debian's package, its remote-write receiver on),
started here on a free port: after a campaign, PromQL over the HTTP API gives result.json's
operation counts per operation and shard; with the endpoint down, the campaign completes and
its result says the metrics were not exported."""
import json
import shutil
import socket
import subprocess
import time
import urllib.parse
import urllib.request
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import timing

pytestmark = pytest.mark.slow
PROMETHEUS = shutil.which("prometheus") or "/usr/bin/prometheus"


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def prometheus(tmp_path_factory):
    if not Path(PROMETHEUS).exists():
        pytest.fail("prometheus is not installed (scripts/install --test installs Debian's package)")
    folder = tmp_path_factory.mktemp("prometheus")
    (folder / "prometheus.yml").write_text("global:\n  scrape_interval: 1h\n")
    port = _free_port()
    proc = subprocess.Popen([PROMETHEUS, f"--config.file={folder / 'prometheus.yml'}",
                             f"--storage.tsdb.path={folder / 'data'}", f"--web.listen-address=127.0.0.1:{port}",
                             "--web.enable-remote-write-receiver"],
                            stdout=subprocess.DEVNULL, stderr=(folder / "log").open("w"))
    url = f"http://127.0.0.1:{port}"
    deadline = time.monotonic() + timing.timeout(60)
    while time.monotonic() < deadline:
        try:
            with urllib.request.urlopen(url + "/-/ready", timeout=1) as r:
                if r.status == 200:
                    break
        except OSError:
            time.sleep(0.2)
    else:
        proc.kill()
        pytest.fail("prometheus did not start: " + (folder / "log").read_text()[-2000:])
    yield url
    proc.terminate()
    proc.wait(20)


def _query(url: str, promql: str) -> list:
    # evaluated a second and a bit after now: each second's figures are stamped at that second's
    # end, and the final push's last second ends up to a second after the push (a query in the
    # same second, as a quiet machine makes it right after the campaign, would not see it yet)
    at = f"{time.time() + 1.1:.3f}"
    with urllib.request.urlopen(url + "/api/v1/query?" + urllib.parse.urlencode({"query": promql, "time": at}),
                                timeout=10) as r:
        body = json.loads(r.read())
    assert body["status"] == "success", body
    return body["data"]["result"]


def _campaign(remote_write: str, name: str) -> dict:
    return {"name": name, "seed": 4,
            "workload": {"preset": "a", "recordcount": 1000, "operationcount": 6000, "threads": 4},
            "fanout": {"shards": 2},
            "results": {"metrics": {"prometheus": {"remote_write": remote_write, "labels": {"team": "db"},
                                                   "timeout_s": 2}}}}


def test_promql_counts_equal_result_json_per_operation_and_shard(prometheus, tmp_path):
    out = run_campaign(_campaign(prometheus + "/api/v1/write", "prom"), str(tmp_path), show_progress=False,
                       log=lambda *_: None)
    assert out["status"] == "complete"
    folder = Path(out["store"]) / out["campaign_id"]
    result = json.loads((folder / "result.json").read_text())
    run = result["runs"][0]["phases"]["run"]
    assert run["metrics_export"]["failed"] == 0 and run["metrics_export"]["pushes"] >= 2
    cid = out["campaign_id"]
    got = {}
    for series in _query(prometheus, f'dbswarm_measured_operations{{campaign="{cid}",phase="run"}}'):
        m = series["metric"]
        assert m["team"] == "db" and m["family"] == "ycsb" and m["engine"] == "sqlite"
        got[(m["shard"], m["operation"])] = int(float(series["value"][1]))
    want = {}
    for shard in (0, 1):
        doc = json.loads((folder / "runs" / "000" / "run" / f"shard-{shard}.json").read_text())
        for op, stats in doc["measurement"]["operations"].items():
            want[(str(shard), op)] = stats["count"]
    assert got == want
    assert sum(got.values()) == run["operations_total"] == 6000
    # result.json's own figures: per operation (operations.<op>.count) and per shard (shard_series)
    per_op = _query(prometheus, f'sum by (operation) (dbswarm_measured_operations{{campaign="{cid}",phase="run"}})')
    assert {s["metric"]["operation"]: int(float(s["value"][1])) for s in per_op} == {
        op: stats["count"] for op, stats in run["operations"].items()}
    per_shard = _query(prometheus, f'sum by (shard) (max_over_time(dbswarm_operations_total{{campaign="{cid}",'
                                   f'phase="run"}}[1h]))')
    assert {s["metric"]["shard"]: int(float(s["value"][1])) for s in per_shard} == {
        shard: sum(seq) for shard, seq in run["shard_series"]["ops"].items()}
    # the live counter's last value per shard and operation: every operation the shard completed
    live = _query(prometheus, f'sum by (operation) (max_over_time(dbswarm_operations_total{{campaign="{cid}",'
                              f'phase="run"}}[1h]))')
    total = {s["metric"]["operation"]: int(float(s["value"][1])) for s in live}
    timeline = run["timeline"]["ops"]
    assert total == {op: sum(seq) for op, seq in timeline.items()}
    load = _query(prometheus, f'sum(dbswarm_measured_operations{{campaign="{cid}",phase="load"}})')
    assert int(float(load[0]["value"][1])) == 1000
    p99 = _query(prometheus, f'dbswarm_latency_us{{campaign="{cid}",phase="run",quantile="0.99"}}')
    assert p99 and all(float(s["value"][1]) > 0 for s in p99)



def test_an_endpoint_that_is_down_costs_nothing_measured(tmp_path):
    down = f"http://127.0.0.1:{_free_port()}/api/v1/write"  # nothing listens there
    out = run_campaign(_campaign(down, "prom-down"), str(tmp_path), show_progress=False, log=lambda *_: None)
    assert out["status"] == "complete"
    folder = Path(out["store"]) / out["campaign_id"]
    result = json.loads((folder / "result.json").read_text())
    run = result["runs"][0]["phases"]["run"]
    assert run["operations_total"] == 6000
    export = run["metrics_export"]
    assert export["failed"] >= 1 and export["pushes"] == 0 and "not (all) exported" in export["note"]
    assert "Connection refused" in export["error"] or "URLError" in export["error"]
    assert "live metrics were not" in (folder / "summary.md").read_text()


def test_the_grafana_dashboard_queries_the_series_that_are_pushed(prometheus, tmp_path):
    """Every panel's PromQL runs on the real Prometheus and returns the campaign's series."""
    out = run_campaign(_campaign(prometheus + "/api/v1/write", "prom-dash"), str(tmp_path), show_progress=False,
                       log=lambda *_: None)
    assert out["status"] == "complete"
    dash = json.loads((Path(__file__).resolve().parents[2] / "examples" / "grafana" / "dbswarm-dashboard.json")
                      .read_text())
    for panel in dash["panels"]:
        for target in panel["targets"]:
            expr = (target["expr"].replace("$campaign", out["campaign_id"]).replace("$run", ".*")
                    .replace("$phase", "run").replace("[10s]", "[1h]"))
            assert _query(prometheus, expr), (panel["title"], expr)
