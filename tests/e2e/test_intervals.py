"""Latency percentiles over time reach result.json and timeseries.csv: a two-shard campaign
with report_interval 2 on real processes' shard files, merged by the aggregate step; with a
thread per connection (SQLite) and multiplexed (PostgreSQL: engine.mux), whose operations are
timed and recorded through the same owner of the clock (engine.loop)."""
from __future__ import annotations

import csv
import io

import pytest

from dbswarm.results.store import open_store
from dbswarm.run.runtime import service
from tests import servers


@pytest.mark.parametrize("model", ["threads", pytest.param("multiplexed", marks=pytest.mark.servers)])
def test_per_interval_percentiles_in_the_result_and_timeseries(tmp_path, model):
    if model == "threads":
        target = {"engine": "sqlite", "url": str(tmp_path / "i.db")}
    else:
        target = servers.target("postgresql", servers.start())
    campaign = {"name": "intervals", "target": target,
                "workload": {"preset": "c", "recordcount": 200, "operationcount": 0, "maxexecutiontime": 4.5,
                             "threads": 2, "report_interval": 2, "table": f"iv_{model}"},
                "fanout": {"shards": 2, "client_model": model}}
    out = service.run_steps(campaign, str(tmp_path / "results"),
                            lambda ev, n: [service.run_shard(dict(ev, shard=i)) for i in range(n)], lead_seconds=0)
    store = open_store(out["store"])
    result = store.get_json(out["result_key"])
    run = result["runs"][0]["phases"]["run"]
    assert run["client"]["model"] == model, run.get("client")
    iv = run["intervals"]
    assert iv["interval_s"] == 2 and iv["start"] % 2 == 0 and iv["intervals"] >= 2
    assert sum(c for c in iv["all"]["count"] if c) == run["operations_total"]
    assert set(iv["by_operation"]) == {"READ"}
    for i, n in enumerate(iv["all"]["count"]):
        if n:
            assert 0 <= iv["all"]["p50_us"][i] <= iv["all"]["p99_us"][i] <= iv["all"]["max_us"][i]
    # the plan step's cloud estimate beside the measured usage: 2 shards x (load + run), one call each
    cost = result["cost"]
    assert cost["estimate"]["lambda"]["worker_calls"] == 4 and cost["measured"]["worker_calls"] == 4
    assert 4 <= cost["measured"]["worker_seconds"] < cost["estimate"]["lambda"]["worker_seconds"] + 10
    assert "| measured | 4 |" in store.get_text(store.key(out["campaign_id"], "summary.md"))
    assert "hist" not in run["timeline"]  # the histograms stay in the shard files; the result has percentiles
    rows = list(csv.DictReader(io.StringIO(store.get_text(store.key(out["campaign_id"], "timeseries.csv")))))
    run_rows = [r for r in rows if r["phase"] == "run" and int(r["count"])]
    assert run_rows and all(r["interval_s"] == "2" and r["interval_p99_us"] for r in run_rows)
    for r in run_rows:
        k = (int(r["interval_start"]) - iv["start"]) // 2
        assert int(r["epoch_second"]) - int(r["interval_start"]) in (0, 1)
        assert int(r["interval_p99_us"]) == iv["by_operation"]["READ"]["p99_us"][k]
