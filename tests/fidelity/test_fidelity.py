"""Fidelity: dbswarm's numbers mean what the reference tools' numbers mean.

1. The same sysbench workload (oltp_read_write, uniform, 1 thread, a fixed number of
   events) run by dbswarm and by sysbench 1.0.20 issues the same statements per
   transaction (the difference between a run of 2N and one of N transactions, so that
   per-run statements such as sysbench's PREPAREs cancel out), counted by the server: MariaDB's Com_* counters (global deltas),
   PostgreSQL's pg_stat_statements (calls per statement kind, filtered to the test's own
   database) and pg_stat_database (committed / rolled back transactions of that database).
2. The percentiles dbswarm reports from K shards (each shard's HdrHistogram encoded into
   its shard file, decoded and merged by the aggregate step) are exactly those of one
   histogram into which every latency any thread recorded was recorded: each value the
   Recorder sees is captured on the side, from a real campaign on PostgreSQL.
"""
from __future__ import annotations

import contextlib
import re
import subprocess
import time
from collections import Counter

import pytest

from dbswarm.measure.recorder import HIST_HIGHEST_US, PERCENTILES, Lane, Recorder, _pname, new_histogram
from tests import servers

from .conftest import FIDELITY_DB, run_inprocess

pytestmark = pytest.mark.servers

SYSBENCH = "/usr/bin/sysbench"
TABLES, TABLE_SIZE, EVENTS = 2, 1000, 60
# sysbench 1.0 oltp_read_write: 10 point selects + 4 ranges, 2 updates, 1 delete, 1 insert
EXPECTED = {"select": 14, "update": 2, "insert": 1, "delete": 1, "begin": 1, "commit": 1}
MYSQL_COUNTERS = {"Com_select": "select", "Com_update": "update", "Com_insert": "insert",
                  "Com_delete": "delete", "Com_begin": "begin", "Com_commit": "commit"}


def _workload(**extra):
    return {"family": "sysbench", "test": "oltp_read_write", "tables": TABLES, "table_size": TABLE_SIZE,
            "rand_type": "uniform", **extra}


@pytest.fixture(scope="module")
def loaded(fidelity_targets, tmp_path_factory):
    """sbtest1..2 in the fidelity database of both SQL servers, loaded by dbswarm."""
    for engine, target in fidelity_targets.items():
        result = run_inprocess({"name": f"fidelity-load-{engine}", "target": target,
                                "workload": _workload(threads=2), "phases": ["prepare", "load"],
                                "fanout": {"shards": 1}}, tmp_path_factory.mktemp(f"load-{engine}"))
        assert result["status"] == "complete", result
    return fidelity_targets


@contextlib.contextmanager
def autovacuum_off(env):
    """autovacuum / autoanalyze workers run transactions in the fidelity database (on its
    tables and on the catalogs the loads churned), and pg_stat_database counts them with the
    clients' commits: no new worker starts while the statement mix is measured (running ones
    are waited for by _pgss, like every other backend of the database)."""
    with servers.pg_admin(env) as pg:
        pg.execute("ALTER SYSTEM SET autovacuum = off")
        pg.execute("SELECT pg_reload_conf()")
    try:
        yield
    finally:
        with servers.pg_admin(env) as pg:
            pg.execute("ALTER SYSTEM RESET autovacuum")
            pg.execute("SELECT pg_reload_conf()")


def _run_dbswarm_events(target, tmp_path, events) -> int:
    result = run_inprocess({"name": "fidelity-run", "target": target,
                            "workload": _workload(threads=1, events=events, time=300),
                            "phases": ["run"], "fanout": {"shards": 1}}, tmp_path / f"run-{events}")
    sb = result["runs"][0]["phases"]["run"]["sysbench"]
    assert sb["errors"] == 0
    return sb["transactions"]


def _run_sysbench_events(engine, env, events) -> int:
    pw = servers.password(env)
    if engine == "mysql":
        conn = ["--db-driver=mysql", "--mysql-host=127.0.0.1", f"--mysql-port={env['DBSWARM_TEST_MYSQL_PORT']}",
                "--mysql-user=dbswarm", f"--mysql-password={pw}", f"--mysql-db={FIDELITY_DB}"]
    else:
        conn = ["--db-driver=pgsql", "--pgsql-host=127.0.0.1", f"--pgsql-port={env['DBSWARM_TEST_PG_PORT']}",
                "--pgsql-user=dbswarm", f"--pgsql-password={pw}", f"--pgsql-db={FIDELITY_DB}"]
    proc = subprocess.run([SYSBENCH, "oltp_read_write", *conn, f"--tables={TABLES}", f"--table-size={TABLE_SIZE}",
                           "--threads=1", f"--events={events}", "--time=0", "--rand-type=uniform", "run"],
                          capture_output=True, text=True, timeout=300)
    assert proc.returncode == 0, proc.stdout[-2000:] + proc.stderr[-2000:]
    return int(re.search(r"transactions:\s+(\d+)", proc.stdout).group(1))


# ---- MariaDB: Com_* ------------------------------------------------------------------------

def _com(env) -> Counter:
    con = servers.mysql_admin(env)
    with con.cursor() as cur:
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN (" + ", ".join(["%s"] * len(MYSQL_COUNTERS)) + ")",
                    list(MYSQL_COUNTERS))
        rows = cur.fetchall()
    con.close()
    return Counter({MYSQL_COUNTERS[k]: int(v) for k, v in rows})


def marginal_mix(snapshot, run, kinds) -> dict:
    """Statements per transaction, counted by the server, as the difference between a run
    of 2 x EVENTS and a run of EVENTS transactions: what a run does once (connect,
    prepare statements, catalog queries) cancels out, what every transaction does stays."""
    deltas = {}
    for events in (EVENTS, 2 * EVENTS):
        before = snapshot()
        assert run(events) == events
        after = snapshot()
        deltas[events] = kinds(before, after)
    return {k: (deltas[2 * EVENTS][k] - deltas[EVENTS][k]) / EVENTS for k in deltas[EVENTS]}


def _com_delta(before: Counter, after: Counter) -> dict:
    return {k: after[k] - before[k] for k in EXPECTED}


@pytest.mark.parametrize("driver", ["pymysql", "mysqlclient"])
def test_statement_mix_mariadb_com_counters(loaded, server_env, tmp_path, driver):
    env = server_env
    target = dict(loaded["mysql"], options={**loaded["mysql"].get("options", {}), "driver": driver})
    mix_dbswarm = marginal_mix(lambda: _com(env), lambda n: _run_dbswarm_events(target, tmp_path, n),
                               _com_delta)
    mix_sysbench = marginal_mix(lambda: _com(env), lambda n: _run_sysbench_events("mysql", env, n), _com_delta)
    assert mix_sysbench == EXPECTED, f"sysbench's own mix on this server: {mix_sysbench}"
    assert mix_dbswarm == mix_sysbench


# ---- PostgreSQL: pg_stat_statements --------------------------------------------------------------

KINDS = (  # first match wins
    ("begin", re.compile(r"^\s*BEGIN\b", re.I)),
    ("commit", re.compile(r"^\s*COMMIT\b", re.I)),
    ("select_distinct", re.compile(r"^\s*SELECT\s+DISTINCT\s+c\s+FROM\s+sbtest\d+\s+WHERE\s+id\s+BETWEEN", re.I)),
    ("select_sum", re.compile(r"^\s*SELECT\s+SUM\(k\)\s+FROM\s+sbtest\d+\s+WHERE\s+id\s+BETWEEN", re.I)),
    ("select_order", re.compile(r"^\s*SELECT\s+c\s+FROM\s+sbtest\d+\s+WHERE\s+id\s+BETWEEN.*ORDER\s+BY\s+c", re.I | re.S)),
    ("select_range", re.compile(r"^\s*SELECT\s+c\s+FROM\s+sbtest\d+\s+WHERE\s+id\s+BETWEEN", re.I)),
    ("select_point", re.compile(r"^\s*SELECT\s+c\s+FROM\s+sbtest\d+\s+WHERE\s+id\s*=", re.I)),
    ("update_index", re.compile(r"^\s*UPDATE\s+sbtest\d+\s+SET\s+k\s*=\s*k\s*\+\s*(1\b|\$\d+)", re.I)),  # constants normalised to $n
    ("update_non_index", re.compile(r"^\s*UPDATE\s+sbtest\d+\s+SET\s+c\s*=", re.I)),
    ("delete", re.compile(r"^\s*DELETE\s+FROM\s+sbtest\d+", re.I)),
    ("insert", re.compile(r"^\s*INSERT\s+INTO\s+sbtest\d+", re.I)),
)
# BEGIN and COMMIT are counted from pg_stat_database (xact_commit): sysbench prepares them
# once and pg_stat_statements does not count the executions of a prepared utility statement
PG_EXPECTED = {"transactions_committed": 1, "transactions_rolled_back": 0, "select_point": 10, "select_range": 1, "select_sum": 1, "select_order": 1,
               "select_distinct": 1, "update_index": 1, "update_non_index": 1, "delete": 1, "insert": 1}


def _pgss(env) -> dict:
    """(userid, queryid, query) -> calls, for the fidelity database only; plus its
    pg_stat_database commit/rollback counts. A backend flushes its statistics when it ends
    (before it leaves pg_stat_activity), so first wait until the clients' backends are
    gone, then read until two reads agree."""
    with servers.pg_admin(env) as pg:
        for _ in range(100):
            others = pg.execute("SELECT count(*) FROM pg_stat_activity WHERE datname = %s AND pid <> "
                                "pg_backend_pid()", (FIDELITY_DB,)).fetchone()[0]
            if not others:
                break
            time.sleep(0.1)
        rows = pg.execute(
            "SELECT s.userid, s.queryid, s.query, s.calls FROM pg_stat_statements s "
            "JOIN pg_database d ON d.oid = s.dbid WHERE d.datname = %s", (FIDELITY_DB,)).fetchall()
        last = None
        for _ in range(30):
            pg.execute("SELECT pg_stat_clear_snapshot()")
            xact = pg.execute("SELECT xact_commit, xact_rollback FROM pg_stat_database WHERE datname = %s",
                              (FIDELITY_DB,)).fetchone()
            if xact == last:
                break
            last = xact
            time.sleep(0.3)
    out = {(u, q, text): calls for u, q, text, calls in rows}
    out[(0, 0, "@transactions_committed")], out[(0, 0, "@transactions_rolled_back")] = last
    return out


def _pg_delta(before: dict, after: dict) -> dict:
    kinds = Counter()
    for key, calls in after.items():
        delta = calls - before.get(key, 0)
        if delta <= 0:
            continue
        text = key[2]
        if text.startswith("@"):
            kinds[text[1:]] += delta
            continue
        kind = next((k for k, rx in KINDS if rx.search(text)), None)
        if kind in ("begin", "commit"):
            continue  # counted by pg_stat_database
        assert kind is not None or not re.search(r"sbtest|^\s*(BEGIN|COMMIT)", text, re.I), \
            f"a statement of neither kind: {text!r}"
        if kind:
            kinds[kind] += delta
    return {k: kinds[k] for k in PG_EXPECTED}


def _pgss_evictions(env) -> int:
    with servers.pg_admin(env) as pg:
        return pg.execute("SELECT dealloc FROM pg_stat_statements_info").fetchone()[0]


def test_statement_mix_postgresql_pg_stat_statements(loaded, server_env, tmp_path):
    env = server_env
    # the rest of the suite fills pg_stat_statements (FerretDB's and the loads' statements);
    # a full table evicts entries, those of a running measurement too (CI saw sysbench's
    # mix come out at 1.03 of a statement per transaction): start from an empty one
    with servers.pg_admin(env) as pg:
        pg.execute("SELECT pg_stat_statements_reset()")
    evicted = _pgss_evictions(env)
    with autovacuum_off(env):
        mix_dbswarm = marginal_mix(lambda: _pgss(env),
                                   lambda n: _run_dbswarm_events(loaded["postgresql"], tmp_path, n), _pg_delta)
        mix_sysbench = marginal_mix(lambda: _pgss(env), lambda n: _run_sysbench_events("postgresql", env, n),
                                    _pg_delta)
    assert _pgss_evictions(env) == evicted, \
        "pg_stat_statements evicted entries during the measurement: raise pg_stat_statements.max"
    assert mix_sysbench == PG_EXPECTED, f"sysbench's own mix on this server: {mix_sysbench}"
    assert mix_dbswarm == mix_sysbench


# ---- merged percentiles ----------------------------------------------------------------------

def test_merged_percentiles_equal_one_histogram_of_all_samples(fidelity_targets, monkeypatch, tmp_path):
    """K = 3 shards of YCSB a on PostgreSQL; every latency the Recorder receives is also
    kept raw, then recorded into ONE histogram. The result's percentiles (from the
    shards' encoded histograms, decoded and merged by the aggregate step) must equal that
    histogram's exactly, operation by operation; counts too."""
    target = fidelity_targets["postgresql"]
    load = {"family": "ycsb", "recordcount": 300, "table": "fidelity_usertable"}
    res = run_inprocess({"name": "fidelity-pct-load", "target": target, "workload": dict(load, threads=3),
                         "phases": ["prepare", "load"], "fanout": {"shards": 3}}, tmp_path / "load")
    assert res["status"] == "complete"

    samples: list[tuple[str, int]] = []
    through_lanes: list[int] = []
    original_ok = Recorder.ok

    def capturing_ok(self, op, t0, t1, n=1):
        samples.append((op, (t1 - t0) // 1000))
        return original_ok(self, op, t0, t1, n)

    class CapturingLane(Lane):
        """The YCSB hot path records most operations through its lane, not ok(): the lane's
        appends are kept raw as well (the lane itself unchanged: ok() points it at the
        recorder's array of the second)."""
        __slots__ = ("_op", "_array")

        def __init__(self, op):
            self._op = op
            super().__init__()

        @property
        def lats(self):
            return self

        @lats.setter
        def lats(self, array):
            self._array = array

        def append(self, lat):
            samples.append((self._op, lat))
            through_lanes.append(lat)
            self._array.append(lat)

    def capturing_lane(self, op):
        lane = self._lanes.get(op)
        if lane is None:
            lane = self._lanes[op] = CapturingLane(op)
        return lane

    monkeypatch.setattr(Recorder, "ok", capturing_ok)
    monkeypatch.setattr(Recorder, "lane", capturing_lane)
    result = run_inprocess({"name": "fidelity-pct", "target": target,
                            "workload": dict(load, preset="a", operationcount=1500, threads=6),
                            "phases": ["run"], "fanout": {"shards": 3}}, tmp_path / "run")
    monkeypatch.setattr(Recorder, "ok", original_ok)
    assert len(through_lanes) > 1000  # most operations took the hot path's lane
    run = result["runs"][0]
    assert run["shard_count"] == 3
    phase = run["phases"]["run"]
    assert phase["status"] == "complete" and phase["errors_total"] == 0
    assert len(samples) == phase["operations_total"] == 1500

    per_op = {}
    for op, lat in samples:
        per_op.setdefault(op, new_histogram()).record_value(min(max(lat, 1), HIST_HIGHEST_US))
    assert set(per_op) == set(phase["operations"]) == {"READ", "UPDATE"}
    for op, h in per_op.items():
        got = phase["operations"][op]
        want = {_pname(p): h.get_value_at_percentile(p) for p in PERCENTILES}
        want.update(calls=h.get_total_count(), min_us=h.get_min_value(), max_us=h.get_max_value())
        assert {k: got[k] for k in want} == want, op
    # and the merged READ+UPDATE view (read_latency / write_latency are the per-kind merges)
    assert phase["read_latency"]["p99_us"] == per_op["READ"].get_value_at_percentile(99)
    # the check can fail: a histogram missing one shard's worth of samples has other counts
    partial = new_histogram()
    for op, lat in samples[: len(samples) * 2 // 3]:
        if op == "READ":
            partial.record_value(min(max(lat, 1), HIST_HIGHEST_US))
    assert partial.get_total_count() != phase["operations"]["READ"]["calls"]
