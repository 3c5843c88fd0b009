"""Issue 56, item 1: one optional statistic never costs another figure. A matrix of servers with
and without each optional source of the server's statistics: PostgreSQL with pg_stat_statements
not created in the database, created, and created but not loaded (the other set of test
servers, tests/servers.py ALT_OPTIONS: not in shared_preload_libraries); MariaDB with
performance_schema off (the shared set, MariaDB's default) and on (the other set). In every
cell, TPC-C's NOPM and TPM are both present over the same window (after the ramp-up), and
sysbench's client/server cross-check of each figure is present or says "unavailable because ...".

Before the fix, the failed read of pg_stat_statements ran inside the window edge's transaction
and aborted it: the TPC-C read after it failed (InFailedSqlTransaction), NOPM was unavailable
and, the edge read when the ramp-up ended being dropped for its warning, TPM counted the
ramp-up."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers]

ABSENT = "pg_stat_statements is not created in this database"
NOT_LOADED = "shared_preload_libraries"


def _pg_database(env: dict, name: str, extension: bool) -> str:
    """A PostgreSQL database of this test's own, with or without the extension; its URL."""
    import psycopg
    with servers.pg_admin(env) as con:
        if not con.execute("SELECT 1 FROM pg_database WHERE datname = %s", (name,)).fetchone():
            con.execute(f"CREATE DATABASE {name} OWNER dbswarm")
    url = env["DBSWARM_TEST_PG_URL"].rsplit("/", 1)[0] + "/" + name
    with psycopg.connect(url, password=servers.password(env), autocommit=True) as con:
        con.execute("CREATE EXTENSION IF NOT EXISTS pg_stat_statements" if extension
                    else "DROP EXTENSION IF EXISTS pg_stat_statements")
    return url


def _mysql_database(env: dict, name: str) -> str:
    with servers.mysql_admin(env) as con:
        con.cursor().execute(f"CREATE DATABASE IF NOT EXISTS {name}")
    return env["DBSWARM_TEST_MYSQL_URL"].rsplit("/", 1)[0] + "/" + name


def _target(engine: str, env: dict, url: str, label: str) -> dict:
    return dict(servers.target(engine, env), url=url, label=label)


# the cells: label -> (what pg_stat_statements / performance_schema is, the statements' cross-check reason
# when unavailable, the server-time reason when missing)
CELLS = {
    "pg-absent": ("postgresql", ABSENT, ABSENT),
    "pg-present": ("postgresql", None, None),
    "pg-not-loaded": ("postgresql", NOT_LOADED, NOT_LOADED),
    "mariadb-pfs-off": ("mysql", None, "performance_schema is off"),
    "mariadb-pfs-on": ("mysql", None, None),
}


@pytest.fixture(scope="module")
def matrix(alt_servers, tmp_path_factory):
    """Every cell's TPC-C and sysbench runs, one campaign (a matrix of targets and workloads):
    {(cell, family): the run's phase "run"}."""
    env = servers.start()
    targets = [
        _target("postgresql", env, _pg_database(env, "dbswarm_stats_absent", False), "pg-absent"),
        _target("postgresql", env, _pg_database(env, "dbswarm_stats_present", True), "pg-present"),
        _target("postgresql", alt_servers, _pg_database(alt_servers, "dbswarm_stats_unloaded", True),
                "pg-not-loaded"),
        _target("mysql", env, _mysql_database(env, "dbswarm_stats"), "mariadb-pfs-off"),
        _target("mysql", alt_servers, _mysql_database(alt_servers, "dbswarm_stats"), "mariadb-pfs-on"),
    ]
    campaign = {"name": "server-statistics", "seed": 7, "phases": ["prepare", "load", "run", "cleanup"],
                "fanout": {"shards": 1}, "results": {"allow_client_bound": True},
                "matrix": {"target": targets, "workload": [
                    {"family": "tpcc", "warehouses": 1, "threads": 2, "time": 2, "rampup": 1},
                    {"family": "sysbench", "test": "oltp_read_write", "tables": 1, "table_size": 200,
                     "threads": 2, "events": 300}]}}
    out = run_campaign(campaign, str(tmp_path_factory.mktemp("matrix")), show_progress=False, lead_seconds=0.5,
                       log=lambda *a: None)
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    runs = {(r["target"]["label"], r["workload"]["family"]): r["phases"]["run"] for r in result["runs"]}
    assert len(runs) == 2 * len(CELLS), sorted(runs)
    return runs


@pytest.mark.parametrize("cell", CELLS)
def test_tpcc_nopm_and_tpm_are_both_there_over_the_same_window(matrix, cell):
    run = matrix[(cell, "tpcc")]
    assert run["status"] == "complete", run.get("problems")
    s, srv = run["tpcc"], run["server"]
    assert not [w for w in srv["warnings"] if "counters unavailable" in w], srv["warnings"]
    assert s["NOPM"] and s["NOPM"] > 0, (s["NOPM"], s["NOPM_basis"], srv["warnings"])
    assert s["TPM"] and s["TPM"] > 0, (s["TPM"], s["TPM_basis"], srv["warnings"])
    # the same basis: both per minute of the window after the ramp-up, neither with it included
    assert s["window_starts"] == "after the ramp-up", (s["window_starts"], srv["warnings"])
    for basis in (s["NOPM_basis"], s["TPM_basis"]):
        assert "per minute of the measured window" in basis and "ramp-up included" not in basis, basis
    assert "window_note" not in s, s["window_note"]
    assert s["new_orders_database"] == srv["family"]["new_orders"] > 0


@pytest.mark.parametrize("cell", CELLS)
def test_sysbench_cross_check_is_there_or_says_why_not(matrix, cell):
    engine, statements_missing, time_missing = CELLS[cell]
    run = matrix[(cell, "sysbench")]
    assert run["status"] == "complete", run.get("problems")
    srv = run["server"]
    assert set(srv["client"]) == {"statements", "transactions"}, srv["client"]
    checks, unavailable = srv["cross_check"], srv.get("cross_check_unavailable") or {}
    # every figure the client counted: cross-checked, or unavailable with the reason
    assert set(checks) | set(unavailable) == set(srv["client"]) and not set(checks) & set(unavailable), srv
    assert "transactions" in checks and 0.9 <= checks["transactions"]["ratio"] <= 1.1, checks
    if statements_missing:
        assert set(unavailable) == {"statements"}, srv
        assert unavailable["statements"].startswith("unavailable because ") \
            and statements_missing in unavailable["statements"], unavailable
        assert any(statements_missing in w for w in srv["warnings"]), srv["warnings"]
    else:
        assert "statements" in checks and 0.9 <= checks["statements"]["ratio"] <= 1.1, checks
    # the server's own time per statement (client health): there, or the reason
    client = run["client"]
    if time_missing:
        assert client["server_vs_client_latency"] is None and time_missing in client["server_time_missing"], client
    else:
        assert client["server_time_missing"] is None, client["server_time_missing"]
        if engine == "postgresql":
            assert client["server_vs_client_latency"], client
