"""The custom family's examples (issue 54): both are valid campaigns, and they run for real,
shrunk to seconds, against the test servers (only the URL, the password and the sizes are
replaced): the orders workload on PostgreSQL and MariaDB, the document workload on FerretDB; pgbench's TPC-B-like transaction
against the tables `pgbench -i` made, where PostgreSQL's own counters (pg_stat_statements)
show each of its five statements executed once per transaction, and the balances add up as
TPC-B requires."""
from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path

import pytest
import yaml

from dbswarm.campaign.spec import load_campaign
from dbswarm.run.runtime.local import run_campaign
from tests import servers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["custom-orders.yaml", "custom-pgbench-tpcb.yaml", "custom-mongodb.yaml",
            "custom-sysbench-point-select.yaml", "custom-sysbench-read-only.yaml"]

pytestmark = [pytest.mark.servers]


@pytest.fixture(scope="module")
def env():
    return servers.start()


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_is_a_valid_campaign(name, monkeypatch):
    monkeypatch.setenv("DBSWARM_PASSWORD", "not-used-here")
    _, runs = load_campaign(str(ROOT / "examples" / name))
    assert [r.workload.threads for r in runs] in ([8, 32], [16, 64])
    assert all(r.workload.family == "custom" and r.target.password.env == "DBSWARM_PASSWORD" for r in runs)


def _shrunk(name: str, target: dict, **workload) -> dict:
    data = yaml.safe_load((ROOT / "examples" / name).read_text())
    data.pop("matrix")
    data.pop("results")
    data["target"] = target
    data["workload"].update({"threads": 4, "time": 600, "warmuptime": 0, **workload})
    data["fanout"] = {"shards": 2}
    return data


def _run(campaign: dict, tmp_path: Path) -> dict:
    out = run_campaign(campaign, str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    return json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())


ENGINES = ("postgresql", "mysql")


def _on_both(data: dict, env: dict) -> dict:
    """The campaign on both servers: a matrix of the two targets (its start-up and steps paid once)."""
    return {**data, "matrix": {"target": [servers.target(e, env) for e in ENGINES]}}


def _runs(result: dict) -> list:
    runs = sorted(result["runs"], key=lambda r: r["run_id"])  # the matrix's order
    assert len(runs) == len(ENGINES), [r["run_id"] for r in runs]
    return runs


def test_the_orders_example_runs(env, tmp_path):
    data = _on_both(_shrunk("custom-orders.yaml", servers.target(ENGINES[0], env), operations=400), env)
    data["workload"]["tables"]["customers"]["load"]["rows"] = 3000
    data["workload"]["generators"]["customer"]["max"] = 3000
    data["workload"]["transactions"]["top_customers"].pop("think_time")
    result = _run(data, tmp_path)
    assert result["status"] == "complete", result["status"]
    for engine, run in zip(ENGINES, _runs(result)):
        assert run["phases"]["load"]["operations"]["INSERT"]["count"] == 3000, engine
        phase = run["phases"]["run"]
        assert phase["errors_total"] == 0, (engine, phase["errors"])
        counts = {op: s["count"] for op, s in phase["operations"].items()}
        assert sum(counts.values()) == 400 and set(counts) == {"new_order", "pay", "order_status", "top_customers"}
        assert phase["read_latency"]["calls"] == counts["order_status"] + counts["top_customers"], engine
        assert phase["write_latency"]["calls"] == counts["new_order"] + counts["pay"], engine


def test_the_mongodb_example_runs(env, tmp_path):
    data = _shrunk("custom-mongodb.yaml", servers.target("mongodb", env), operations=200)
    data["workload"]["collections"]["customers"]["load"]["documents"] = 2000
    data["workload"]["generators"]["customer"]["max"] = 2000
    result = _run(data, tmp_path)
    assert result["status"] == "complete", result["status"]
    run = result["runs"][0]
    assert run["phases"]["load"]["operations"]["INSERT"]["count"] == 2000
    phase = run["phases"]["run"]
    assert phase["errors_total"] == 0, phase["errors"]
    counts = {op: s["count"] for op, s in phase["operations"].items()}
    assert sum(counts.values()) == 200 and set(counts) <= {"buy", "top_by_country", "revenue", "cancel"}
    statements = {n: [s["count"] for s in t["statements"]] for n, t in phase["custom"]["transactions"].items()}
    assert statements["buy"] == [counts["buy"]] * 3, statements


def _pgbench_init(env: dict) -> None:
    pgbench = Path(env["DBSWARM_TEST_PG_BINDIR"]) / "pgbench"
    subprocess.run([str(pgbench), "-i", "-s", "1", "-q", "-h", "127.0.0.1", "-p", env["DBSWARM_TEST_PG_PORT"],
                    "-U", "dbswarm", "dbswarm"], check=True, capture_output=True, timeout=300,
                   env={**os.environ, "PGPASSWORD": servers.password(env)})


def test_pgbench_tpcb_like_runs_on_pgbench_tables(env, tmp_path):
    _pgbench_init(env)
    transactions = 500
    data = _shrunk("custom-pgbench-tpcb.yaml", servers.target("postgresql", env), operations=transactions)
    data["workload"]["generators"].update({"aid": {"type": "uniform", "min": 1, "max": 100_000},
                                           "bid": {"type": "uniform", "min": 1, "max": 1},
                                           "tid": {"type": "uniform", "min": 1, "max": 10}})
    with servers.pg_admin(env) as c:
        c.execute("SELECT pg_stat_statements_reset()")
    result = _run(data, tmp_path)
    assert result["status"] == "complete", result["status"]
    phase = result["runs"][0]["phases"]["run"]
    assert phase["errors_total"] == 0, phase["errors"]
    tx = phase["custom"]["transactions"]["tpcb_like"]
    assert tx["count"] == transactions and [s["count"] for s in tx["statements"]] == [transactions] * 5
    with servers.pg_admin(env) as c:  # the statements' counts first: the sums' query is one too
        calls = dict(c.execute(
            "SELECT split_part(query, ' ', 1) || ' ' || split_part(query, ' ', 2), SUM(calls) FROM pg_stat_statements "
            "s JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = current_database() AND query LIKE '%pgbench_%' "
            "GROUP BY 1").fetchall())
        sums = c.execute("SELECT (SELECT SUM(abalance) FROM pgbench_accounts), (SELECT SUM(bbalance) FROM "
                         "pgbench_branches), (SELECT SUM(tbalance) FROM pgbench_tellers), (SELECT SUM(delta) FROM "
                         "pgbench_history), (SELECT COUNT(*) FROM pgbench_history)").fetchone()
    assert sums[0] == sums[1] == sums[2] == sums[3] and sums[4] == transactions, sums
    # the server executed each statement once per transaction, as pgbench's script does
    assert {k: int(v) for k, v in calls.items()} == {
        "UPDATE pgbench_accounts": transactions, "SELECT abalance": transactions, "UPDATE pgbench_tellers": transactions,
        "UPDATE pgbench_branches": transactions, "INSERT INTO": transactions}, calls


SYSBENCH_ROWS = 1000


def test_the_sysbench_examples_run_on_the_sysbench_familys_tables(env, tmp_path):
    """oltp_point_select and oltp_read_only as custom files, on the tables the built-in sysbench
    family loaded (sbtest1..4), on both servers: every statement of every transaction once per
    transaction, the four tables drawn alike, and the statements per transaction sysbench's (1;
    14 + BEGIN/COMMIT)."""
    target = servers.target(ENGINES[0], env)
    load = _run(_on_both({"name": "sb-load", "target": target, "phases": ["prepare", "load"],
                          "workload": {"family": "sysbench", "test": "oltp_read_only", "tables": 4,
                                       "table_size": SYSBENCH_ROWS}}, env), tmp_path / "load")
    assert load["status"] == "complete", load["status"]
    for name, per_txn, txns in (("custom-sysbench-point-select.yaml", 1, 400), ("custom-sysbench-read-only.yaml", 14, 120)):
        data = _on_both(_shrunk(name, target, operations=txns), env)
        data["workload"]["generators"]["id"]["max"] = SYSBENCH_ROWS
        result = _run(data, tmp_path / name)
        assert result["status"] == "complete", result["status"]
        for engine, run in zip(ENGINES, _runs(result)):
            phase = run["phases"]["run"]
            assert phase["errors_total"] == 0, (engine, phase["errors"])
            tx = phase["custom"]["transactions"]
            assert set(tx) == {f"{name.split('-', 2)[2].split('.')[0].replace('-', '_')}_{i}" for i in (1, 2, 3, 4)}
            assert sum(t["count"] for t in tx.values()) == txns and all(t["count"] > 0 for t in tx.values()), tx
            for t in tx.values():
                assert [s["count"] for s in t["statements"]] == [t["count"]] * per_txn, (engine, t)
            assert phase["read_latency"]["calls"] == txns and not phase.get("write_latency"), engine
