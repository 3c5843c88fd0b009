"""The custom family end to end on the real servers (PostgreSQL, MariaDB) and SQLite (issue 54):
`dbswarm run`'s local campaign prepares, loads and runs a workload written as data, and

- 1 shard and 4 shards with a fixed operation count leave the same rows (a checksum over each
  table: the loaded rows, the run's commutative updates and its inserts drawn from unique
  counters) and count the same transactions per kind;
- a generated value that is SQL (``'; DROP TABLE ...; --``) goes to the server as a parameter:
  the table stays, and the string is stored as it was drawn;
- per-transaction and per-statement figures add up (each statement ran once per transaction).
"""
from __future__ import annotations

import hashlib
import json
import sqlite3
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers]

EVIL = "'; DROP TABLE cw_accounts; --"
ODD = "O'Brien \"quoted\" \\ back; %s ?"
ACCOUNTS = 2000
OPERATIONS = 400

WORKLOAD = {
    "family": "custom", "label": "cw-pay", "threads": 4, "operations": OPERATIONS, "time": 600,
    "tables": {
        "cw_accounts": {"columns": [{"name": "id", "type": "bigint", "key": True},
                                    {"name": "balance", "type": "bigint", "nullable": False},
                                    {"name": "note", "type": "varchar(60)"}],
                        "load": {"rows": ACCOUNTS, "key": "id", "batch": 150,
                                 "columns": {"balance": "opening", "note": "note"}}},
        "cw_history": {"columns": [{"name": "id", "type": "bigint", "key": True},
                                   {"name": "aid", "type": "bigint", "index": True},
                                   {"name": "delta", "type": "int"},
                                   {"name": "note", "type": "varchar(60)"}]},
    },
    "generators": {
        "aid": {"type": "zipfian", "min": 1, "max": ACCOUNTS},
        "opening": {"type": "uniform", "min": 0, "max": 100_000},
        "delta": {"type": "uniform", "min": -100, "max": 100},
        "hid": {"type": "unique", "start": 1},
        "note": {"type": "choice", "values": ["plain", EVIL, ODD], "weights": [1, 2, 1]},
    },
    "transactions": {
        "pay": {"weight": 3, "statements": [
            {"sql": "SELECT balance FROM cw_accounts WHERE id = :aid", "capture": ["bal"]},
            {"sql": "UPDATE cw_accounts SET balance = balance + :delta WHERE id = :aid"},
            {"sql": "INSERT INTO cw_history (id, aid, delta, note) VALUES (:hid, :aid, :delta, :note)"}]},
        "look": {"weight": 1, "statements": [{"sql": "SELECT note FROM cw_accounts WHERE id = :aid"}]},
    },
}


@pytest.fixture(scope="module")
def env():
    return servers.start()


def _target(engine: str, env: dict, tmp_path: Path) -> dict:
    if engine == "sqlite":
        return {"engine": "sqlite", "url": str(tmp_path / "custom.db")}
    return servers.target(engine, env)


def _rows(engine: str, env: dict, target: dict, sql: str) -> list[tuple]:
    if engine == "sqlite":
        con = sqlite3.connect(target["url"])
        try:
            return con.execute(sql).fetchall()
        finally:
            con.close()
    con = servers.pg_admin(env) if engine == "postgresql" else servers.mysql_admin(env)
    try:
        cur = con.cursor()
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        con.close()


def _checksum(rows: list[tuple]) -> str:
    return hashlib.sha256(repr(sorted(tuple(str(v) for v in r) for r in rows)).encode()).hexdigest()


ENGINES = ("sqlite", "postgresql", "mysql")


def _on_every_engine(campaign: dict, env: dict, folder: Path) -> tuple[dict, dict]:
    """The campaign on each engine: a matrix of the three targets (a campaign's start-up and steps
    paid once for all); the result, and each engine's target and run (the matrix's order)."""
    folder.mkdir(parents=True, exist_ok=True)
    targets = {e: _target(e, env, folder) for e in ENGINES}
    campaign = {**campaign, "target": targets[ENGINES[0]], "matrix": {"target": list(targets.values())}}
    out = run_campaign(campaign, str(folder / "results"), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    runs = sorted(result["runs"], key=lambda r: r["run_id"])
    assert len(runs) == len(ENGINES), [r["run_id"] for r in runs]
    return result, {e: (targets[e], run) for e, run in zip(ENGINES, runs)}


def _database(engine: str, env: dict, target: dict) -> dict:
    tables = {t: _checksum(_rows(engine, env, target, f"SELECT * FROM {t}")) for t in ("cw_accounts", "cw_history")}
    evil = _rows(engine, env, target, "SELECT COUNT(*) FROM cw_history WHERE note = '''; DROP TABLE cw_accounts; --'")
    odd = [r[0] for r in _rows(engine, env, target, "SELECT DISTINCT note FROM cw_history")]
    return {"tables": tables, "evil": evil[0][0], "notes": sorted(odd),
            "accounts": _rows(engine, env, target, "SELECT COUNT(*) FROM cw_accounts")[0][0]}


def test_one_shard_and_four_shards_leave_the_same_rows(env, tmp_path):
    """Each shard count's campaign on the three engines (a matrix of their targets)."""
    seen = {}
    for shards in (1, 4):
        campaign = {"name": f"custom-{shards}", "seed": 5, "workload": WORKLOAD, "fanout": {"shards": shards},
                    "phases": ["prepare", "load", "run"]}
        result, runs = _on_every_engine(campaign, env, tmp_path / f"s{shards}")
        assert result["status"] == "complete", result["status"]
        for engine, (target, run) in runs.items():
            db = _database(engine, env, target)
            counts = _check_run(engine, run, db)
            seen[shards, engine] = (counts, db["tables"])
    for engine in ENGINES:
        assert seen[1, engine] == seen[4, engine], engine


def _check_run(engine: str, run: dict, db: dict) -> dict:
    """The run's checks; its count of each transaction."""
    load, phase = run["phases"]["load"], run["phases"]["run"]
    assert load["errors_total"] == 0 and load["operations"]["INSERT"]["count"] == ACCOUNTS, engine
    assert phase["errors_total"] == 0, (engine, phase["errors"])
    counts = {op: s["count"] for op, s in phase["operations"].items()}
    assert sum(counts.values()) == OPERATIONS and set(counts) == {"pay", "look"}, (engine, counts)
    custom = phase["custom"]
    for name, t in custom["transactions"].items():
        assert t["count"] == counts[name] and t["retries"] == 0, engine
        assert [s["count"] for s in t["statements"]] == [counts[name]] * len(t["statements"]), (engine, t)
        assert all(s["latency"]["p99_ms"] > 0 for s in t["statements"]), engine
    # the latencies split by kind: look reads, pay (and the load) write
    assert phase["read_latency"]["calls"] == counts["look"], engine
    assert phase["write_latency"]["calls"] == counts["pay"], engine
    # the SQL-looking value went in as a value: the table is there, the string stored verbatim
    assert db["accounts"] == ACCOUNTS and db["evil"] > 0, engine
    assert db["notes"] == sorted(["plain", EVIL, ODD]), engine
    # the client's count of each statement against the server's own (pg_stat_statements)
    server = custom["server_statements"]
    if engine == "postgresql":
        rows = {tuple(r["statements"]): (r["client"], r["server"]) for r in server["statements"]}
        assert set(rows) == {("pay.0",), ("pay.1",), ("pay.2",), ("look.0",)}, rows
        assert all(c == s for c, s in rows.values()) and rows[("pay.0",)][0] == counts["pay"], rows
    else:
        assert server["unavailable"].startswith("unavailable because ") and "per-statement" in server["unavailable"]
    return counts


def test_a_retried_serialization_failure_is_counted_apart_from_errors(env, tmp_path):
    """PostgreSQL at SERIALIZABLE, four threads updating two rows: serialization failures,
    each retried with the same values (pgbench's --max-tries) and counted as a retry, not an
    error; every transaction commits in the end (the sum over the rows says so)."""
    target = servers.target("postgresql", env)
    workload = {
        "family": "custom", "threads": 4, "operations": 300, "time": 600,
        "tables": {"cw_hot": {"columns": [{"name": "id", "type": "int", "key": True},
                                          {"name": "v", "type": "bigint"}],
                              "load": {"rows": 2, "key": "id", "columns": {"v": "zero"}}}},
        "generators": {"zero": {"type": "constant", "value": 0}, "row": {"type": "uniform", "min": 1, "max": 2}},
        "transactions": {"bump": {"isolation": "serializable", "max_tries": 1000, "statements": [
            {"sql": "SELECT v FROM cw_hot WHERE id = :row", "capture": ["v"]},
            {"sql": "UPDATE cw_hot SET v = :v + 1 WHERE id = :row"}]}},
    }
    campaign = {"name": "custom-serializable", "seed": 2, "target": target, "workload": workload,
                "fanout": {"shards": 2}, "phases": ["prepare", "load", "run"]}
    out = run_campaign(campaign, str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    phase = result["runs"][0]["phases"]["run"]
    assert result["status"] == "complete" and phase["errors_total"] == 0, phase["errors"]
    assert phase["operations"]["bump"]["count"] == 300
    # read-modify-write at SERIALIZABLE: no update lost, whatever was retried
    assert _rows("postgresql", env, target, "SELECT SUM(v) FROM cw_hot")[0][0] == 300
    bump = phase["custom"]["transactions"]["bump"]
    assert bump["retries"] > 0 and bump["retries"] == phase["counters"]["retries"]
    # every attempt's statements that returned are measured: at least once per committed transaction
    assert bump["statements"][0]["count"] >= 300


def test_captured_values_of_every_column_type_go_back_as_parameters(env, tmp_path):
    """A capture of a DECIMAL, a TIMESTAMP, a UUID, a BOOLEAN (the drivers answer Decimal,
    datetime, UUID, bool) used as a parameter of the next statement: the row round-trips."""
    workload = {
        "family": "custom", "threads": 2, "operations": 60, "time": 600,
        "tables": {"cw_types": {"columns": [
            {"name": "id", "type": "int", "key": True}, {"name": "price", "type": "decimal(10,2)"},
            {"name": "at", "type": "timestamp"}, {"name": "token", "type": "uuid"}, {"name": "ok", "type": "boolean"},
            {"name": "copies", "type": "int"}],
            "load": {"rows": 20, "key": "id", "columns": {"price": "price", "at": "at", "token": "token", "ok": "ok",
                                                          "copies": "zero"}}}},
        "generators": {"row": {"type": "uniform", "min": 1, "max": 20},
                       "price": {"type": "choice", "values": ["12.50", "0.99", "100.00"]},
                       "at": {"type": "timestamp"}, "token": {"type": "uuid"},
                       "ok": {"type": "choice", "values": [0, 1]}, "zero": {"type": "constant", "value": 0}},
        "transactions": {"copy": {"statements": [
            {"sql": "SELECT price, at, token, ok FROM cw_types WHERE id = :row", "capture": ["p", "a", "t", "o"]},
            {"sql": "UPDATE cw_types SET copies = copies + 1 WHERE id = :row AND price = :p AND at = :a "
                    "AND :t = token AND ok = :o"}]}},
    }
    campaign = {"name": "custom-types", "seed": 1, "workload": workload, "fanout": {"shards": 1},
                "phases": ["prepare", "load", "run"]}
    result, runs = _on_every_engine(campaign, env, tmp_path)  # on each engine
    for engine, (target, run) in runs.items():
        phase = run["phases"]["run"]
        assert phase["errors_total"] == 0, (engine, phase.get("problems") or phase["errors"])
        # every update matched its row by the captured values
        assert _rows(engine, env, target, "SELECT SUM(copies) FROM cw_types")[0][0] == 60, engine
    assert result["status"] == "complete", result["status"]


def test_the_server_counts_each_statement_as_the_client_over_the_window_warm_up_included(env, tmp_path):
    """PostgreSQL's pg_stat_statements calls per statement against the client's executions over
    the measured window, with a warm-up (counted by both), a constant in a statement (the server
    keeps it as $n) and two statements of one shape (one entry there: compared together); the
    summary shows the table."""
    workload = {
        "family": "custom", "threads": 3, "time": 4, "warmuptime": 1,
        "tables": {"cw_pair": {"columns": [{"name": "id", "type": "int", "key": True}, {"name": "v", "type": "int"}],
                               "load": {"rows": 50, "key": "id", "columns": {"v": "row"}}}},
        "generators": {"row": {"type": "uniform", "min": 1, "max": 50}},
        "transactions": {
            "bump": {"statements": [{"sql": "SELECT v FROM cw_pair WHERE id = :row", "capture": ["v"]},
                                    {"sql": "UPDATE cw_pair SET v = v + 1 WHERE id = :row"}]},
            "look": {"statements": [{"sql": "SELECT v FROM cw_pair WHERE id = :row LIMIT 1"},
                                    {"sql": "select v  FROM cw_pair WHERE id = :row"}]}},
    }
    campaign = {"name": "custom-server-calls", "seed": 3, "target": servers.target("postgresql", env),
                "workload": workload, "fanout": {"shards": 2}, "phases": ["prepare", "load", "run"]}
    out = run_campaign(campaign, str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    folder = Path(out["store"]) / out["campaign_id"]
    result = json.loads((folder / "result.json").read_text())
    custom = result["runs"][0]["phases"]["run"]["custom"]
    rows = {tuple(r["statements"]): r for r in custom["server_statements"]["statements"]}
    assert set(rows) == {("bump.0", "look.1"), ("bump.1",), ("look.0",)}, rows
    assert all(r["client"] == r["server"] > 0 and r["ratio"] == 1 for r in rows.values()), rows
    measured = {f"{n}.{s['statement']}": s["count"] for n, t in custom["transactions"].items() for s in t["statements"]}
    assert rows[("bump.1",)]["client"] > measured["bump.1"]  # the warm-up's executions are in the window too
    summary = (folder / "summary.md").read_text()
    assert "statements counted by the client and by the server" in summary and "| bump.1 |" in summary
