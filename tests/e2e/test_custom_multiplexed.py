"""The custom family under ``fanout.client_model: multiplexed`` (engine.mux drives each
transaction a statement at a time: ``_RunClient._steps``) against a thread per connection,
on the real servers (issue 54's pgbench comparison runs it so):

- the same seed gives the same transactions, statements, captures, rows not found and
  duplicate-key errors (counted on the statement and its transaction) in both models, and the
  same rows on the server; only a failed attempt's rollback is called in the multiplexer's
  thread (a blocking call);
- a serialization failure is rolled back and retried inside the multiplexer as a thread
  retries it: counted in retries, not as an error, every transaction committed in the end.
"""
from __future__ import annotations

import hashlib
import json
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers]

OPERATIONS = 600
WORKLOAD = {
    "family": "custom", "threads": 8, "operations": OPERATIONS, "time": 600,
    "tables": {
        "cm_accounts": {"columns": [{"name": "id", "type": "bigint", "key": True},
                                    {"name": "balance", "type": "bigint", "nullable": False}],
                        "load": {"rows": 300, "key": "id", "columns": {"balance": "opening"}}},
        "cm_history": {"columns": [{"name": "id", "type": "bigint", "key": True},
                                   {"name": "aid", "type": "bigint"}, {"name": "seen", "type": "bigint"}]},
        "cm_once": {"columns": [{"name": "id", "type": "int", "key": True}]},
    },
    "generators": {
        "aid": {"type": "uniform", "min": 1, "max": 330},  # 1 in 11 finds no account
        "opening": {"type": "uniform", "min": 0, "max": 1000},
        "delta": {"type": "uniform", "min": -10, "max": 10},
        "hid": {"type": "unique", "start": 1},
        "slot": {"type": "uniform", "min": 1, "max": 40},
    },
    "transactions": {
        "pay": {"weight": 3, "statements": [
            {"sql": "SELECT balance FROM cm_accounts WHERE id = :aid", "capture": ["bal"]},
            {"sql": "UPDATE cm_accounts SET balance = balance + :delta WHERE id = :aid"},
            {"sql": "INSERT INTO cm_history (id, aid, seen) VALUES (:hid, :aid, :bal)"}]},
        "look": {"weight": 2, "statements": [{"sql": "SELECT balance FROM cm_accounts WHERE id = :aid"}]},
        # a key taken already: a duplicate, recorded on the statement and the transaction (not retried)
        "once": {"weight": 1, "statements": [{"sql": "INSERT INTO cm_once (id) VALUES (:slot)"}]},
    },
}


@pytest.fixture(scope="module")
def env():
    return servers.start()


def _target(engine, env):
    return servers.target(engine, env, **({"driver": "mysqlclient"} if engine == "mysql" else {}))


def _run(campaign, results: Path) -> dict:
    out = run_campaign(campaign, str(results), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    return json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())


def _rows(engine, env, sql) -> list:
    con = servers.pg_admin(env) if engine == "postgresql" else servers.mysql_admin(env)
    try:
        cur = con.cursor()
        cur.execute(sql)
        return list(cur.fetchall())
    finally:
        con.close()


def _checksum(rows) -> str:
    return hashlib.sha256(repr(sorted(tuple(str(v) for v in r) for r in rows)).encode()).hexdigest()


def _figures(phase: dict) -> dict:
    out = {}
    for name, t in phase["custom"]["transactions"].items():
        out[name] = {"count": t["count"], "errors": t["errors"], "retries": t["retries"],
                     "statements": [(s["count"], s["errors"], s["no_row"]) for s in t["statements"]]}
    return out


ENGINES = ("postgresql", "mysql")


def test_multiplexed_custom_runs_the_same_transactions_as_threads(env, tmp_path):
    """Each model's campaign runs on both servers (a matrix of the two targets: its start-up and
    steps paid once for both); the same run index in both campaigns, so the same seed."""
    seen = {}
    for model in ("threads", "multiplexed"):
        campaign = {"name": f"cm-{model}", "seed": 3, "target": _target(ENGINES[0], env), "workload": WORKLOAD,
                    "matrix": {"target": [_target(e, env) for e in ENGINES]},
                    "fanout": {"shards": 2, "client_model": model}, "phases": ["prepare", "load", "run"],
                    "results": {"allow_client_bound": True}}
        result = _run(campaign, tmp_path / model)
        assert result["status"] == "complete_with_errors", result["status"]  # the duplicates
        runs = sorted(result["runs"], key=lambda r: r["run_id"])  # the matrix's order
        assert len(runs) == len(ENGINES), [r["run_id"] for r in runs]
        for engine, run in zip(ENGINES, runs):
            phase = run["phases"]["run"]
            assert phase["client"]["model"] == model, (engine, phase.get("problems"))
            figures = _figures(phase)
            # in the multiplexer's thread: only the rollback of each failed attempt (no lock to wait for)
            blocking = sum(s.get("blocking_calls", 0) for s in phase["client"]["shards"].values())
            assert blocking == (figures["once"]["errors"] if model == "multiplexed" else 0), engine
            assert sum(t["count"] + t["errors"] for t in figures.values()) == OPERATIONS, (engine, figures)
            # every transaction's statements ran once, the captures and misses counted; only the
            # duplicate keys failed, each on its statement and its transaction
            pay, once = figures["pay"], figures["once"]
            assert [s[0] for s in pay["statements"]] == [pay["count"]] * 3 and pay["errors"] == 0, engine
            assert 0 < pay["statements"][0][2] < pay["count"], engine  # accounts past 300 are not found
            assert once["errors"] == once["statements"][0][1] > 0, engine
            assert phase["errors_total"] == once["errors"], engine
            # (the balance a payment saw depends on the order of concurrent payments: not compared)
            tables = {t: _checksum(_rows(engine, env, f"SELECT {cols} FROM {t}")) for t, cols in (
                ("cm_accounts", "*"), ("cm_history", "id, aid"), ("cm_once", "*"))}
            seen[model, engine] = (figures, tables)
    for engine in ENGINES:
        assert seen["multiplexed", engine] == seen["threads", engine], engine


def test_multiplexed_custom_retries_serialization_failures_as_threads_do(env, tmp_path):
    """Eight connections bumping two rows at REPEATABLE READ in one multiplexing thread: a
    transaction that waited for another's row lock fails to serialize when that one commits,
    is rolled back and run again with the same values; every one commits in the end."""
    target = servers.target("postgresql", env)
    workload = {
        "family": "custom", "threads": 8, "operations": 400, "time": 600,
        "tables": {"cm_hot": {"columns": [{"name": "id", "type": "int", "key": True},
                                          {"name": "v", "type": "bigint"}],
                              "load": {"rows": 2, "key": "id", "columns": {"v": "zero"}}}},
        "generators": {"zero": {"type": "constant", "value": 0}, "row": {"type": "uniform", "min": 1, "max": 2}},
        "transactions": {"bump": {"isolation": "repeatable_read", "max_tries": 1000, "statements": [
            {"sql": "SELECT v FROM cm_hot WHERE id = :row", "capture": ["v"]},
            {"sql": "UPDATE cm_hot SET v = :v + 1 WHERE id = :row"}]}},
    }
    campaign = {"name": "cm-retries", "seed": 4, "target": target, "workload": workload,
                "fanout": {"shards": 1, "client_model": "multiplexed"}, "phases": ["prepare", "load", "run"],
                "results": {"allow_client_bound": True}}
    result = _run(campaign, tmp_path)
    phase = result["runs"][0]["phases"]["run"]
    assert result["status"] == "complete" and phase["errors_total"] == 0, phase["errors"]
    assert phase["client"]["model"] == "multiplexed"
    bump = phase["custom"]["transactions"]["bump"]
    assert bump["count"] == 400 and bump["retries"] > 0 and bump["retries"] == phase["counters"]["retries"]
    assert _rows("postgresql", env, "SELECT SUM(v) FROM cm_hot")[0][0] == 400  # no update lost
