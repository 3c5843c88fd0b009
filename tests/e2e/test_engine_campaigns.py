"""Local campaigns against the real servers (PostgreSQL 15, MariaDB 10.11, FerretDB 1.24),
shards in OS processes, checked against what the database itself saw:

- load: 4 shards load their key ranges; afterwards the table holds exactly the expected
  key set (count = recordcount, no duplicates, no key missing);
- run: the operation mix matches the requested proportions within 1 point, and the
  summed shard counts equal the server's own counters (PostgreSQL pg_stat_statements
  calls and pg_stat_database tuple counters, MariaDB Com_select / Com_update /
  Com_insert, FerretDB serverStatus().metrics.commands: it has no opcounters);
- a database restarted in the middle of a run: shards count the errors, reconnect and
  finish; the timeline shows the error burst;
- no file a campaign wrote contains the password.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from dbswarm.families.ycsb import key_name
from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers, pytest.mark.slow]

# records loaded per engine: 20k everywhere, in 4 key ranges of 10 batches (the key set is the
# check, not the size; FerretDB loads in batches at ~8k docs/s; only its point operations are
# slow, so its run phase is shorter)
RECORDS = {"postgresql": 20_000, "mysql": 20_000, "mongodb": 20_000}
# run-phase operations: enough for the mix to be within 1 point of the proportions
# (binomial sd of a 0.65 share: 0.34 points over 20k ops, 0.44 over 12k; the seeds are
# fixed, so the drawn mix is the same at every run)
RUN_OPS = {"postgresql": 20_000, "mysql": 20_000, "mongodb": 12_000}
MIX = {"READ": 0.65, "UPDATE": 0.10, "INSERT": 0.25}  # service model S3
SHARDS = 4
THREADS = 8


@pytest.fixture(scope="module")
def env():
    return servers.start()


def _result(out) -> dict:
    return json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())


def assert_no_password(folder: Path, password: str, logs=()):
    """Every file the campaign wrote, and every log line, is free of the password."""
    assert len(password) >= 8
    files = [p for p in folder.rglob("*") if p.is_file()]
    assert files
    for p in files:
        assert password.encode() not in p.read_bytes(), f"{p} contains the password"
    for line in logs:
        assert password not in line, line


def _campaign(name, target, workload, phases, seed=1):
    return {"name": name, "seed": seed, "target": target, "workload": workload,
            "fanout": {"shards": SHARDS}, "phases": phases}


def _run(campaign, results: Path):
    logs = []
    out = run_campaign(campaign, str(results), show_progress=False, lead_seconds=0.5,
                       log=lambda *a: logs.append(" ".join(str(x) for x in a)))
    return out, _result(out), logs


# ---- what the database saw --------------------------------------------------------------

def db_keys(engine, env, table) -> list[str]:
    if engine == "postgresql":
        with servers.pg_admin(env) as c:
            return [r[0] for r in c.execute(f"SELECT ycsb_key FROM {table}").fetchall()]
    if engine == "mysql":
        c = servers.mysql_admin(env)
        try:
            cur = c.cursor()
            cur.execute(f"SELECT ycsb_key FROM {table}")
            return [r[0] for r in cur.fetchall()]
        finally:
            c.close()
    client = servers.mongo_admin(env)
    try:
        return [d["_id"] for d in client.get_default_database()[table].find({}, {"_id": 1})]
    finally:
        client.close()


# MariaDB's Com_select is server-wide: besides the workload's reads it counts dbswarm's own few
# per campaign (at each window edge the server's start time and its performance_schema flag, on
# each process's first connection the prepared-statement layout probe: 16 and 31 seen here).
# Inserts and updates stay exact; reads may exceed the client's count by that much, never fall short.
OWN_READS_MAX = 64


def assert_server_saw(engine, seen: dict, counts: dict) -> None:
    if engine != "mysql":
        assert {k: seen[k] for k in MIX} == {k: counts[k] for k in MIX}, (seen, counts)
        return
    assert {k: seen[k] for k in MIX if k != "READ"} == {k: counts[k] for k in MIX if k != "READ"}, (seen, counts)
    assert counts["READ"] <= seen["READ"] <= counts["READ"] + OWN_READS_MAX, (seen, counts)


def server_counters(engine, env, table) -> dict:
    """Statements the server executed, by kind (cumulative)."""
    if engine == "postgresql":
        with servers.pg_admin(env) as c:
            out = {"READ": 0, "UPDATE": 0, "INSERT": 0}
            for query, calls in c.execute(
                    "SELECT query, calls FROM pg_stat_statements s JOIN pg_database d ON d.oid = s.dbid "
                    "WHERE d.datname = current_database() AND query LIKE %s", (f"% {table} %",)).fetchall():
                kind = query.split()[0].upper()
                key = {"SELECT": "READ", "UPDATE": "UPDATE", "INSERT": "INSERT"}.get(kind)
                if key:
                    out[key] += calls
            # the rows written to this table alone: pg_stat_database's database-wide counts also
            # take in autoanalyze's pg_statistic rows (CI once saw 74 more inserts than sent)
            tup = c.execute("SELECT n_tup_ins, n_tup_upd FROM pg_stat_user_tables WHERE relname = %s",
                            (table,)).fetchone()
            out["tup_inserted"], out["tup_updated"] = tup or (0, 0)
            return out
    if engine == "mysql":
        c = servers.mysql_admin(env)
        try:
            cur = c.cursor()
            cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_select', 'Com_update', 'Com_insert')")
            st = {k: int(v) for k, v in cur.fetchall()}
            return {"READ": st["Com_select"], "UPDATE": st["Com_update"], "INSERT": st["Com_insert"]}
        finally:
            c.close()
    client = servers.mongo_admin(env)
    try:
        ss = client.get_default_database().command("serverStatus")
        assert "opcounters" not in ss or ss["opcounters"], "FerretDB grew opcounters: use them"
        cmds = ss["metrics"]["commands"]
        return {"READ": cmds.get("find", {}).get("total", 0), "UPDATE": cmds.get("update", {}).get("total", 0),
                "INSERT": cmds.get("insert", {}).get("total", 0)}
    finally:
        client.close()


# ---- load + run, checked against the database --------------------------------------------

@pytest.mark.parametrize("engine", servers.SERVER_ENGINES)
def test_load_and_run_match_the_database(engine, env, tmp_path):
    password = servers.password(env)
    table = f"e2e_{engine}"
    records = RECORDS[engine]
    target = servers.target(engine, env)
    # the server counts every statement: without the campaign lock's own (its lock row) in the window
    target["options"] = {**(target.get("options") or {}), "shared_tables": True}
    base = {"table": table, "recordcount": records, "threads": THREADS, "fieldcount": 10,
            "fieldlength": 100, "batchsize": 500}

    # load: 4 shards, each its own key range, in batches
    t0 = time.time()
    out, res, logs = _run(_campaign(f"e2e-load-{engine}", target, dict(base, operationcount=0,
                                                                        maxexecutiontime=600),
                                    ["prepare", "load"]), tmp_path / "load")
    load_s = time.time() - t0
    assert res["status"] == "complete", res.get("missing_shards")
    load = res["runs"][0]["phases"]["load"]
    assert load["operations"]["INSERT"]["count"] == records
    assert load["errors_total"] == 0, load["errors"]
    keys = db_keys(engine, env, table)
    assert len(keys) == records and len(set(keys)) == records
    assert set(keys) == {key_name(n, False, 1) for n in range(records)}
    assert_no_password(Path(out["store"]) / out["campaign_id"], password, logs)

    # run: S3 against the loaded table, the server's counters before and after
    before = server_counters(engine, env, table)
    t1 = time.time()
    out, res, logs = _run(_campaign(f"e2e-run-{engine}", target,
                                    dict(base, preset="S3", operationcount=RUN_OPS[engine]), ["run"]),
                          tmp_path / "run")
    run_s = time.time() - t1
    assert res["status"] == "complete", res.get("missing_shards")
    run = res["runs"][0]["phases"]["run"]
    assert run["errors_total"] == 0, run["errors"]
    counts = {op: s["count"] for op, s in run["operations"].items()}
    assert sum(counts.values()) == RUN_OPS[engine]
    for op, p in MIX.items():
        assert abs(counts[op] / RUN_OPS[engine] - p) <= 0.01, (op, counts)
    assert run["operations"]["READ"]["not_found"] == 0
    assert run["operations"]["UPDATE"]["not_found"] == 0

    deadline = time.time() + 5
    while True:
        after = server_counters(engine, env, table)
        seen = {k: after[k] - before[k] for k in after}
        if engine != "postgresql" or (seen["tup_inserted"] >= counts["INSERT"]) or time.time() > deadline:
            break
        time.sleep(0.2)  # table statistics are flushed by the backends shortly after they exit
    assert_server_saw(engine, seen, counts)
    if engine == "postgresql":
        assert seen["tup_inserted"] == counts["INSERT"] and seen["tup_updated"] == counts["UPDATE"], seen
    assert len(db_keys(engine, env, table)) == records + counts["INSERT"]
    assert_no_password(Path(out["store"]) / out["campaign_id"], password, logs)

    settings = run["binding_settings"]
    if engine == "mongodb":
        assert settings["write_concern"] == {"w": 1, "j": False}
    print(f"\n{engine}: load {records:,} rows in {load_s:.1f} s wall "
          f"({load['throughput']:,.0f} rows/s measured); run {RUN_OPS[engine]:,} S3 ops in {run_s:.1f} s wall "
          f"({run['throughput']:,.0f} ops/s measured); server saw {seen}")


def test_mariadb_campaign_on_mysqlclient(env, tmp_path):
    """target.options.driver: mysqlclient (the C driver) through a whole local campaign:
    prepare + load + run on MariaDB, the counts checked against the table and the server's
    Com_* counters, and the result records the driver."""
    password = servers.password(env)
    table, records, ops = "e2e_mysqlclient", 3000, 3000
    target = servers.target("mysql", env, driver="mysqlclient")
    # the server counts every statement: without the campaign lock's own (its lock row) in the window
    target["options"] = {**(target.get("options") or {}), "shared_tables": True}
    workload = {"table": table, "recordcount": records, "operationcount": ops, "threads": 2, "preset": "S3",
                "batchsize": 500}
    out, res, logs = _run(_campaign("e2e-mysqlclient-load", target, workload, ["prepare", "load"]),
                          tmp_path / "load")
    assert res["status"] == "complete", res.get("missing_shards")
    load = res["runs"][0]["phases"]["load"]
    assert load["operations"]["INSERT"]["count"] == records and load["errors_total"] == 0, load["errors"]
    assert len(db_keys("mysql", env, table)) == records

    before = server_counters("mysql", env, table)
    out, res, logs = _run(_campaign("e2e-mysqlclient-run", target, workload, ["run"]), tmp_path / "run")
    assert res["status"] == "complete", res.get("missing_shards")
    run = res["runs"][0]["phases"]["run"]
    assert run["errors_total"] == 0, run["errors"]
    counts = {op: s["count"] for op, s in run["operations"].items()}
    assert sum(counts.values()) == ops and set(counts) == set(MIX), counts
    assert run["operations"]["READ"]["not_found"] == 0 and run["operations"]["UPDATE"]["not_found"] == 0
    after = server_counters("mysql", env, table)
    assert_server_saw("mysql", {k: after[k] - before[k] for k in MIX}, counts)
    assert len(db_keys("mysql", env, table)) == records + counts["INSERT"]
    assert run["binding_settings"]["driver"].startswith("mysqlclient "), run["binding_settings"]
    assert_no_password(Path(out["store"]) / out["campaign_id"], password, logs)


# ---- a restart in the middle of a run -----------------------------------------------------

def _restart_when_running(engine, env, table, delay, box):
    """Wait until the run phase is under way (the server has answered reads on the table:
    the load phase only inserts), then restart the server."""
    try:
        base = server_counters(engine, env, table)["READ"]
        deadline = time.time() + 120
        while time.time() < deadline and server_counters(engine, env, table)["READ"] - base < 200:
            time.sleep(0.1)
        time.sleep(delay)
        box["at"] = time.time()
        box["took"] = servers.restart({"postgresql": "pg", "mysql": "mysql"}[engine])
    except Exception as exc:  # reported by the test
        box["error"] = exc


RESTART_ENGINES = ("postgresql", "mysql")


def test_restart_in_the_middle_of_a_run(env, tmp_path):
    """Both servers' runs in one campaign (a matrix of their targets), each server restarted in
    the middle of its own run."""
    password = servers.password(env)
    workload = {"table": "e2e_restart", "recordcount": 5000, "threads": 4, "preset": "S4",
                "operationcount": 0, "maxexecutiontime": 7}
    boxes: dict = {e: {} for e in RESTART_ENGINES}
    restarters = [threading.Thread(target=_restart_when_running, args=(e, env, workload["table"], 2.0, boxes[e]),
                                   daemon=True) for e in RESTART_ENGINES]
    for restarter in restarters:
        restarter.start()
    campaign = {**_campaign("e2e-restart", servers.target(RESTART_ENGINES[0], env), workload,
                            ["prepare", "load", "run"]),
                "matrix": {"target": [servers.target(e, env) for e in RESTART_ENGINES]}}
    out, res, logs = _run(campaign, tmp_path)
    for restarter in restarters:
        restarter.join(60)
    assert res["status"] == "complete", res.get("missing_shards")
    runs = sorted(res["runs"], key=lambda r: r["run_id"])  # the matrix's order
    assert len(runs) == len(RESTART_ENGINES), [r["run_id"] for r in runs]
    for engine, run in zip(RESTART_ENGINES, runs):
        _check_restarted_run(engine, run["phases"]["run"], boxes[engine], workload)
    assert_no_password(Path(out["store"]) / out["campaign_id"], password, logs)


def _check_restarted_run(engine, run, box, workload):
    assert "error" not in box, (engine, box.get("error"))
    assert "at" in box, f"{engine}: the restart never happened"
    assert run["shards"]["complete"] == list(range(SHARDS)), engine
    # every thread lost its connection, counted it, and reconnected
    assert run["errors_total"] > 0, engine
    # an insert the restart cut off after it committed is a connection error, and the thread's
    # next insert reuses its key and finds it there (YcsbClient.do_insert): one duplicate per
    # such insert at most, never a duplicate without a cut-off insert
    errors = run["errors"]
    duplicates = errors.get("INSERT:duplicate:duplicate_key", 0)
    assert duplicates <= sum(n for k, n in errors.items() if k.startswith("INSERT:connection:")), errors
    assert all(":connection:" in k for k in errors if k != "INSERT:duplicate:duplicate_key"), errors
    assert run["counters"].get("reconnects", 0) >= workload["threads"], (engine, run["counters"])
    tl = run["timeline"]
    burst = [i for i, n in enumerate(tl["errors"]) if n]
    assert burst, (engine, tl["errors"])
    # the burst is around the restart, and operations went on afterwards
    restart_second = int(box["at"]) - tl["start"]
    assert restart_second - 2 <= burst[0] <= restart_second + int(box["took"]) + 2, (engine, burst, restart_second)
    totals = [sum(v[i] if i < len(v) else 0 for v in tl["ops"].values()) for i in range(len(tl["errors"]) + 30)]
    assert sum(totals[burst[-1] + 1:]) > 0, f"{engine}: no operations after the error burst"
    print(f"\n{engine}: restart took {box['took']:.1f} s; errors {run['errors']}; "
          f"reconnects {run['counters'].get('reconnects')}; error seconds {burst}")


# ---- sysbench OLTP ------------------------------------------------------------------------

def _sb_state(engine, env, tables) -> dict:
    """Rows per table, whether k_N exists, and the server's BEGIN / COMMIT counts."""
    out = {"rows": [], "k_index": []}
    if engine == "postgresql":
        with servers.pg_admin(env) as c:
            for n in range(1, tables + 1):
                out["rows"].append(c.execute(f"SELECT COUNT(*), COUNT(DISTINCT id) FROM sbtest{n}").fetchone())
                out["k_index"].append(bool(c.execute("SELECT 1 FROM pg_indexes WHERE tablename = %s AND "
                                                     "indexname = %s", (f"sbtest{n}", f"k_{n}")).fetchone()))
            calls = dict(c.execute("SELECT upper(query), sum(calls) FROM pg_stat_statements s JOIN pg_database d "
                                   "ON d.oid = s.dbid WHERE d.datname = current_database() AND upper(query) "
                                   "IN ('BEGIN', 'COMMIT') GROUP BY 1").fetchall())
            out["begin"], out["commit"] = int(calls.get("BEGIN", 0)), int(calls.get("COMMIT", 0))
        return out
    c = servers.mysql_admin(env)
    try:
        cur = c.cursor()
        for n in range(1, tables + 1):
            cur.execute(f"SELECT COUNT(*), COUNT(DISTINCT id) FROM sbtest{n}")
            out["rows"].append(cur.fetchone())
            cur.execute(f"SHOW INDEX FROM sbtest{n} WHERE Key_name = 'k_{n}'")
            out["k_index"].append(bool(cur.fetchall()))
        cur.execute("SHOW GLOBAL STATUS WHERE Variable_name IN ('Com_begin', 'Com_commit')")
        st = {k: int(v) for k, v in cur.fetchall()}
        out["begin"], out["commit"] = st["Com_begin"], st["Com_commit"]
        return out
    finally:
        c.close()


def _max_connections(engine, env) -> int:
    if engine == "postgresql":
        with servers.pg_admin(env) as c:
            return int(c.execute("SHOW max_connections").fetchone()[0])
    c = servers.mysql_admin(env)
    try:
        cur = c.cursor()
        cur.execute("SELECT @@max_connections")
        return int(cur.fetchone()[0])
    finally:
        c.close()


SB_ENGINES = ("postgresql", "mysql")


def test_sysbench_campaign(env, tmp_path):
    """oltp_read_write on both servers (a matrix of their targets: a campaign's start-up and steps
    paid once for both): 4 shards load 2 tables in parallel, k_N is built after the load, the
    run counts 20 queries per transaction and the server committed exactly as many transactions
    as dbswarm counted."""
    password = servers.password(env)
    tables, size = 2, 3000
    workload = {"family": "sysbench", "test": "oltp_read_write", "tables": tables, "table_size": size,
                "threads": 4, "time": 3, "batchsize": 500}

    def campaign(name, phases):
        return {**_campaign(name, servers.target(SB_ENGINES[0], env), workload, phases),
                "matrix": {"target": [servers.target(e, env) for e in SB_ENGINES]}}
    out, res, logs = _run(campaign("e2e-sb", ["prepare", "load"]), tmp_path / "load")
    assert res["status"] == "complete"
    state = {e: _sb_state(e, env, tables) for e in SB_ENGINES}
    for engine in SB_ENGINES:
        assert state[engine]["rows"] == [(size, size)] * tables, engine
        assert state[engine]["k_index"] == [True] * tables, engine  # created after the load (prepare stage after_load)

    out, res, run_logs = _run(campaign("e2e-sb-run", ["run"]), tmp_path / "run")
    assert res["status"] == "complete"
    folder = Path(out["store"]) / out["campaign_id"]
    summary = (folder / "summary.md").read_text()
    runs = sorted(res["runs"], key=lambda r: r["run_id"])  # the matrix's order
    assert len(runs) == len(SB_ENGINES), [r["run_id"] for r in runs]
    for engine, run in zip(SB_ENGINES, runs):
        _check_sysbench_run(engine, env, run, workload, state[engine], summary)
    assert_no_password(folder, password, logs + run_logs)


def _check_sysbench_run(engine, env, run, workload, state, summary):
    tables, size = workload["tables"], workload["table_size"]
    after = _sb_state(engine, env, tables)
    sb = run["phases"]["run"]["sysbench"]
    trx = sb["transactions"]
    assert trx > 50, engine
    # 20 queries per transaction (14 read, 4 write, 2 other). Like sysbench, the statements
    # of an attempt that failed (deadlock, duplicate key: retried; or cut by the time cap)
    # count too: each failed attempt had run its BEGIN and not its COMMIT.
    phase = run["phases"]["run"]
    errors, failed = phase["errors"], phase["errors_total"]
    retries = phase["counters"].get("retries", 0)
    assert all(k.split(":")[1] in ("retryable", "duplicate") for k in errors), errors
    assert retries <= failed <= retries + workload["threads"], engine
    assert sb["queries_other"] == 2 * trx + failed, engine
    assert 14 * trx <= sb["queries_read"] <= 14 * (trx + failed), engine
    assert 4 * trx <= sb["queries_write"] <= 4 * (trx + failed), engine
    if failed == 0:
        assert sb["queries"] == 20 * trx, engine
    # the server's view: one COMMIT per counted transaction, one BEGIN per attempt
    assert after["commit"] - state["commit"] == trx, engine
    assert after["begin"] - state["begin"] == trx + failed, engine
    assert after["rows"] == [(size, size)] * tables, engine  # DELETE + INSERT of the same id keeps the count
    # the RDS paper's columns (issue 56 item 6): max connections as the server said it; IOPS from
    # the server's own I/O counters where it keeps them (InnoDB), else unavailable, saying why
    head = next(line for line in summary.splitlines() if line.startswith("| instance | test | threads |"))
    row = next(line for line in summary.splitlines() if line.startswith(f"| {run['target']['label']} |")
               and "| oltp_read_write |" in line)
    cells = dict(zip([c.strip() for c in head.strip("|").split("|")], [c.strip() for c in row.strip("|").split("|")]))
    assert int(cells["max connections"].replace(",", "")) == _max_connections(engine, env)
    if engine == "mysql":
        counters = phase["server"]["counters"]
        assert counters["innodb_log_writes"] > 0  # commits write the redo log (grouped: fewer than commits)
        iops = sum(counters[k] for k in ("innodb_data_reads", "innodb_data_writes", "innodb_log_writes")) \
            / phase["server"]["window_s"]
        assert cells["IOPS"] == f"{iops:,.0f}" and iops > 0
    else:
        assert cells["IOPS"] == "–" and "IOPS unavailable: PostgreSQL before 16 keeps no count of I/O" in summary
    print(f"\n{engine}: sysbench oltp_read_write 4 threads: {sb['tps']} TPS, {sb['qps']} QPS, "
          f"p95 {sb['latency_p95_ms']} ms, retries {retries}, errors {errors}")


# ---- credentials ----------------------------------------------------------------------------

def test_failure_reasons_never_carry_the_password(env, tmp_path):
    """A shard failure's reason is stored and printed: the run's password and URL
    credentials in it are replaced (service.redact_error), whatever a driver put there."""
    from dbswarm.run.runtime import service
    password = servers.password(env)
    plan = service.plan_campaign({"campaign": _campaign("e2e-redact", servers.target("postgresql", env),
                                                        {"recordcount": 10}, ["prepare", "load"]),
                                  "results": str(tmp_path)})
    event = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": plan["runs"][0]["run_id"],
             "phase": "load", "shard": 0,
             "error": f"OperationalError: connection to postgresql://dbswarm:{password}@127.0.0.1/x failed; "
                      f"password was {password}"}
    service.record_shard_failure(event)
    assert_no_password(tmp_path, password)
    stored = [p.read_text() for p in tmp_path.rglob("shard-*.failed.json")]
    assert stored and "dbswarm:***@127.0.0.1" in stored[0] and "password was ***" in stored[0]
