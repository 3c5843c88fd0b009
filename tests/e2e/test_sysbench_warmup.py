"""sysbench's TPS and QPS with a warm-up (``warmuptime``), on real MariaDB: both count the
events that ended after the warm-up and divide by the seconds after it, as sysbench's
``--warmup-time`` does, so oltp_read_write's QPS is exactly 20 x its TPS (14 reads, 4 writes,
BEGIN and COMMIT per transaction)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers]


def _own_database(env, name: str) -> dict:
    """The MariaDB target in a new database of this test's own (other tests use sbtest1.. in
    dbswarm; an earlier run's lock or tables do not stay)."""
    import pymysql
    port = int(env["DBSWARM_TEST_MYSQL_URL"].rsplit(":", 1)[1].split("/")[0])
    conn = pymysql.connect(host="127.0.0.1", port=port, user="dbswarm", password=servers.password(env))
    conn.cursor().execute(f"DROP DATABASE IF EXISTS {name}")
    conn.cursor().execute(f"CREATE DATABASE {name}")
    conn.close()
    target = servers.target("mysql", env)
    target["url"] = target["url"].rsplit("/", 1)[0] + "/" + name
    return target


def test_sysbench_tps_and_qps_count_the_same_window_after_the_warmup(tmp_path):
    env = servers.start()
    target = _own_database(env, "dbswarm_warmup")
    # uniform ids over 4 tables: two threads hardly ever meet on a row (no deadlock to retry)
    workload = {"family": "sysbench", "test": "oltp_read_write", "tables": 4, "table_size": 2000,
                "rand_type": "uniform", "threads": 2, "time": 6, "warmuptime": 3}
    campaign = {"name": "sb-warmup", "seed": 3, "target": target, "workload": workload,
                "fanout": {"shards": 2}, "phases": ["prepare", "load", "run"]}
    out = run_campaign(campaign, str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    assert result["status"] == "complete", result["status"]
    phase = result["runs"][0]["phases"]["run"]
    sb = phase["sysbench"]
    assert phase["errors_total"] == 0, phase["errors"]
    warm = sb["warmup"]
    assert warm["seconds"] == 3 and warm["transactions"] > 0 and warm["queries"] == 20 * warm["transactions"]
    # the measured window: the events after the warm-up, their queries, the seconds after it
    assert sb["transactions"] == phase["operations"]["TRANSACTION"]["count"] > 10
    assert sb["queries"] == 20 * sb["transactions"]
    assert (sb["queries_read"], sb["queries_write"], sb["queries_other"]) == (
        14 * sb["transactions"], 4 * sb["transactions"], 2 * sb["transactions"])
    assert sb["seconds"] == pytest.approx(phase["duration_s"] - 3, abs=0.01)
    assert sb["tps"] == pytest.approx(sb["transactions"] / sb["seconds"], rel=1e-3)
    assert sb["qps"] == pytest.approx(20 * sb["tps"], abs=0.2)  # both rounded to 0.01
    # the server's view still counts every statement, warm-up included
    client = phase["server"]["client"]
    assert client["statements"] == sb["queries"] + warm["queries"]
