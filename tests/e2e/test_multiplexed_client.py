"""``fanout.client_model: multiplexed`` (engine.mux: one thread driving a shard's connections
over the binding's split calls) against the real servers, through the local campaign runner:

- it runs the same operations as a thread per connection: the same seed gives the same
  per-operation counts, every read finds its row and every update its record (so each
  answer was read back from the server, not assumed), also when every shard call is cut
  short and continued in a new process (the checkpoint between two operations);
- a connection the server kills in the middle is counted, reconnected in the
  multiplexer's thread and watched again: the run goes on and completes;
- sysbench's transactions are driven statement by statement (``families.base.stepwise``):
  the same seed gives the same events and queries as threads, also continued, and
  oltp_read_write's writes reach the server (its DELETE + INSERT pairs keep every table's rows);
- YCSB's inserts, scans, read-modify-writes (a read, then an update: stepwise) and
  whole-record updates are multiplexed too: the same counts as threads, every insert on the
  server;
- what it cannot multiplex (unprepared PostgreSQL statements, a pure-Python driver) runs in
  threads, and the result says which model ran.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers]

THREADS, SHARDS = 8, 2
TPCC_TRANSACTIONS = 1200


@pytest.fixture(scope="module")
def env():
    return servers.start()


def _target(engine, env, **options):
    if engine == "mysql":
        options = {"driver": "mysqlclient", **options}
    return servers.target(engine, env, **options)


def _campaign(name, target, workload, model, phases=("prepare", "load", "run"), seed=11):
    return {"name": name, "seed": seed, "target": target, "workload": workload,
            "fanout": {"shards": SHARDS, "client_model": model}, "phases": list(phases),
            "results": {"allow_client_bound": True}}  # a loaded test machine's verdict is not the subject


def _run(campaign, results: Path, **kw):
    out = run_campaign(campaign, str(results), show_progress=False, lead_seconds=0.5, log=lambda *a: None, **kw)
    res = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    return out, res


def _shard_segments(out, run) -> list[list[dict]]:
    folder = Path(out["store"]) / out["campaign_id"] / "runs" / run["run_id"] / "run"
    return [json.loads(p.read_text())["segments"] for p in sorted(folder.glob("shard-*.json"))]


ENGINES = ("postgresql", "mysql")
MODELS = ("threads", "multiplexed")


def _matrix(name, env, workload, model, cells=None, phases=("prepare", "load", "run")):
    """One campaign of a run per (cell, engine): a campaign's start-up and steps are paid once
    for the runs of both servers. The workload axis outermost: two campaigns with the same first
    cells give each the same run index, so the same seed."""
    campaign = _campaign(name, _target(ENGINES[0], env), workload, model, phases)
    campaign["matrix"] = {**({"workload": list(cells)} if cells else {}),
                          "target": [_target(e, env) for e in ENGINES]}
    return campaign


def _runs(res, cells=None) -> dict:
    """(cell index, engine) -> the run's result, in the matrix's order."""
    runs = sorted(res["runs"], key=lambda r: r["run_id"])
    n = len(cells) if cells else 1
    assert len(runs) == n * len(ENGINES), [r["run_id"] for r in runs]
    return {(i, e): runs[i * len(ENGINES) + k] for i in range(n) for k, e in enumerate(ENGINES)}


def _sessions(engine, env, table, kill=()) -> set:
    """The client sessions seen reading ``table`` (not the campaign's own steps: its lock,
    the server counters, the aggregate); ``kill``: sessions the server ends instead."""
    if engine == "postgresql":
        with servers.pg_admin(env) as pg:
            if kill:
                return {r[0] for r in pg.execute("SELECT pid FROM unnest(%s::int[]) AS pid "
                                                 "WHERE pg_terminate_backend(pid)", (sorted(kill),)).fetchall()}
            return {r[0] for r in pg.execute("SELECT pid FROM pg_stat_activity WHERE pid <> pg_backend_pid() "
                                             "AND application_name = 'dbswarm' AND query ILIKE %s",
                                             (f"SELECT%{table}%",)).fetchall()}
    my = servers.mysql_admin(env)
    try:
        with my.cursor() as cur:
            if not kill:  # a session shows its statement while the server runs it: polled (a
                # prepared statement's execution is command 'Execute', with its text)
                cur.execute("SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() "
                            "AND command IN ('Query', 'Execute') AND info LIKE %s", (f"SELECT%{table}%",))
                return {r[0] for r in cur.fetchall()}
            killed = set()
            for i in kill:
                try:
                    cur.execute(f"KILL CONNECTION {int(i)}")
                    killed.add(i)
                except Exception:  # ended meanwhile
                    pass
            return killed
    finally:
        my.close()


def _kill_when_running(engine, env, table, box, after_s):
    """Once the run's clients read (the load only inserts), the sessions seen reading over
    the next ``after_s`` seconds are ended by the server. When none of them is left to end
    (the first seen was a step's before the run, a check reading the loaded rows, and the run
    had not started ``after_s`` later on a loaded machine), it looks again."""
    try:
        deadline = time.time() + 120
        box["killed"] = 0
        while time.time() < deadline and not box["killed"]:
            seen: set = set()
            while time.time() < deadline and not seen:
                seen = _sessions(engine, env, table)
                time.sleep(0.02)
            until = time.time() + after_s
            while time.time() < until:
                seen |= _sessions(engine, env, table)
                time.sleep(0.02)
            box["killed"] = len(_sessions(engine, env, table, kill=seen)) if seen else 0
            box["at"] = time.time()
    except Exception as exc:  # reported by the test
        box["error"] = exc


def test_multiplexed_clients_reconnect_after_the_server_kills_their_sessions(env, tmp_path):
    """Both servers' runs in one campaign (a matrix of their targets), a killer watching each."""
    workload = {"preset": "c", "table": "e2e_mux_kill", "recordcount": 500, "threads": THREADS,
                "operationcount": 0, "maxexecutiontime": 6}
    boxes: dict = {e: {} for e in ENGINES}
    killers = [threading.Thread(target=_kill_when_running, args=(e, env, workload["table"], boxes[e], 1.5), daemon=True)
               for e in ENGINES]
    for killer in killers:
        killer.start()
    _, res = _run(_matrix("mux-kill", env, workload, "multiplexed"), tmp_path / "run")
    for killer in killers:
        killer.join(30)
    assert res["status"] == "complete", res["status"]
    runs = _runs(res)
    for engine in ENGINES:
        box, run = boxes[engine], runs[0, engine]["phases"]["run"]
        assert "error" not in box, (engine, box.get("error"))
        assert run["client"]["model"] == "multiplexed", engine
        if not box.get("killed"):
            pytest.fail(f"{engine}: no session was killed (the run had not started?): {box}")
        assert run["errors_total"] > 0, f"{engine}: the killed sessions' operations were not counted as failed"
        assert all(":connection:" in k for k in run["errors"]), (engine, run["errors"])
        assert run["counters"].get("reconnects", 0) >= 1, (engine, run["counters"])
        tl = run["timeline"]
        burst = [i for i, n in enumerate(tl["errors"]) if n]
        ops = [sum(v[i] if i < len(v) else 0 for v in tl["ops"].values()) for i in range(len(tl["errors"]) + 10)]
        assert sum(ops[burst[-1] + 1:]) > 0, f"{engine}: no operations after the sessions were killed"


def test_what_cannot_be_multiplexed_runs_in_threads(env, tmp_path):
    target = servers.target("postgresql", env, prepare=False)  # no prepared statements: no split calls
    workload = {"preset": "c", "table": "e2e_mux_unprepared", "recordcount": 200, "operationcount": 400,
                "threads": 4}
    _, res = _run(_campaign("mux-unprepared", target, workload, "multiplexed"), tmp_path / "unprepared")
    run = res["runs"][0]["phases"]["run"]
    assert res["status"] == "complete" and run["operations_total"] == 400
    assert run["client"]["model"] == "threads"
    pure = {"preset": "e", "table": "e2e_mux_pymysql", "recordcount": 200, "operationcount": 200, "threads": 4}
    _, res = _run(_campaign("mux-pymysql", _target("mysql", env, driver="pymysql"), pure, "multiplexed"),
                  tmp_path / "pymysql")  # a pure-Python driver: no socket it reads apart
    run = res["runs"][0]["phases"]["run"]
    assert res["status"] == "complete" and run["client"]["model"] == "threads"


def _row_count(engine, env, table) -> int:
    return int(_scalar(engine, env, f"SELECT count(*) FROM {table}"))


def _scalar(engine, env, sql):
    if engine == "postgresql":
        with servers.pg_admin(env) as pg:
            return pg.execute(sql).fetchone()[0]
    my = servers.mysql_admin(env)
    try:
        with my.cursor() as cur:
            cur.execute(sql)
            return cur.fetchone()[0]
    finally:
        my.close()


# every YCSB operation: reads and updates alone (preset a), then inserts, scans,
# read-modify-writes; whole-record updates and one-field reads and scans in the second mix
MIX = {"preset": "a", "recordcount": 500, "operationcount": 2000, "requestdistribution": "zipfian",
       "readproportion": 0.3, "updateproportion": 0.2, "insertproportion": 0.2, "scanproportion": 0.1,
       "readmodifywriteproportion": 0.2, "maxscanlength": 20}
YCSB_CELLS = {"a": {"preset": "a", "recordcount": 1000, "operationcount": 2000, "requestdistribution": "zipfian"},
              "one_field": {**MIX, "readallfields": True, "writeallfields": False},
              "whole_record": {**MIX, "readallfields": False, "writeallfields": True}}


def test_multiplexed_runs_every_ycsb_operation_as_threads_also_continued(env, tmp_path):
    """Each cell on both servers, threads against multiplexed with every shard call cut at 0.4 s
    and continued in a new process from its checkpoint (the one between two operations)."""
    runs = {}
    for model in MODELS:  # a table each: the inserts take the same keys
        cells = [{**wl, "table": f"e2e_mux_{name}_{model}"} for name, wl in YCSB_CELLS.items()]
        out, res = _run(_matrix(f"mux-ycsb-{model}", env, {"threads": THREADS}, model, cells), tmp_path / model,
                        max_call_seconds=0.4 if model == "multiplexed" else None)
        runs[model] = (out, _runs(res, cells))
    for i, name in enumerate(YCSB_CELLS):
        for engine in ENGINES:
            where = (name, engine)
            a, b = (runs[m][1][i, engine]["phases"]["run"] for m in MODELS)
            assert b["status"] == "complete" and b["errors_total"] == 0, (where, b["status"], b.get("errors"))
            assert a["client"]["model"] == "threads" and b["client"]["model"] == "multiplexed", where
            counts = {op: (o["count"], o["not_found"]) for op, o in b["operations"].items()}
            assert counts == {op: (o["count"], o["not_found"]) for op, o in a["operations"].items()}, where
            assert all(nf == 0 for _, nf in counts.values()), (where, counts)  # each answer read back: rows found
            if name == "a":
                assert set(counts) == {"READ", "UPDATE"} and sum(c for c, _ in counts.values()) == 2000, counts
            else:
                assert set(counts) == {"READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE"}, (where, counts)
                assert sum(c for c, _ in counts.values()) == 2000, (where, counts)
                for model in MODELS:  # every insert reached the server
                    table = f"e2e_mux_{name}_{model}"
                    assert _row_count(engine, env, table) == 500 + counts["INSERT"][0], (where, model)
            segments = _shard_segments(runs["multiplexed"][0], runs["multiplexed"][1][i, engine])
            assert len(segments) == SHARDS and sum(len(s) for s in segments) > SHARDS, f"{where}: no call was continued"
            for seg in (seg for segs in segments for seg in segs):
                client = seg["client"]
                assert client["model"] == "multiplexed" and client["multiplexed_threads"] == THREADS // SHARDS, where
                assert client["blocking_calls"] == 0, where


QUERIES = ("queries_read", "queries_write", "queries_other")


def _pg_writes(env) -> int:
    """Rows updated, deleted and inserted in sbtest1 and sbtest2, as PostgreSQL counts them."""
    with servers.pg_admin(env) as pg:
        return int(pg.execute("SELECT coalesce(sum(n_tup_upd + n_tup_del + n_tup_ins), 0) FROM pg_stat_user_tables "
                              "WHERE relname IN ('sbtest1', 'sbtest2')").fetchone()[0])


def _sysbench_figures(run) -> dict:
    return {"events": run["operations"]["TRANSACTION"]["count"],
            **{k: run["counters"].get(k, 0) for k in QUERIES}}


def _sb_rows(engine, env) -> list:
    return [int(_scalar(engine, env, f"SELECT count(*) FROM sbtest{n}")) for n in (1, 2)]


def test_multiplexed_sysbench_runs_the_same_events_and_queries_as_threads(env, tmp_path):
    """oltp_read_only (no two transactions conflict: exact) and oltp_point_select on both servers,
    threads against multiplexed with every shard call cut at 0.4 s and continued; oltp_read_write
    multiplexed on both, its writes checked on the server."""
    base = {"family": "sysbench", "tables": 2, "table_size": 500, "threads": THREADS, "time": 60}
    same = [{"test": "oltp_read_only", "events": 400}, {"test": "oltp_point_select", "events": 4000}]
    rw_events = 300
    _, threads = _run(_matrix("mux-sb-threads", env, base, "threads", same), tmp_path / "threads")
    threads_runs = _runs(threads, same)
    out, muxed = _run(_matrix("mux-sb-muxed", env, base, "multiplexed", same, phases=("run",)), tmp_path / "mux",
                      max_call_seconds=0.4)
    muxed_runs = _runs(muxed, same)
    for i, cell in enumerate(same):
        for engine in ENGINES:
            where, events = (cell["test"], engine), cell["events"]
            a, b = threads_runs[i, engine]["phases"]["run"], muxed_runs[i, engine]["phases"]["run"]
            assert b["status"] == "complete" and b["errors_total"] == 0, (where, b["status"], b.get("errors"))
            assert _sysbench_figures(b) == _sysbench_figures(a) and _sysbench_figures(b)["events"] == events, where
            assert a["client"]["model"] == "threads" and b["client"]["model"] == "multiplexed", where
            segments = _shard_segments(out, muxed_runs[i, engine])
            assert sum(len(s) for s in segments) > SHARDS, f"{where}: no call was continued"
            for seg in (seg for segs in segments for seg in segs):
                assert seg["client"]["model"] == "multiplexed" and seg["client"]["blocking_calls"] == 0, where
    # read_write: every statement of it multiplexed, its writes done on the server (its calls not cut)
    before = _pg_writes(env)
    _, rw = _run(_matrix("mux-sb-rw", env, {**base, "test": "oltp_read_write", "events": rw_events}, "multiplexed",
                         phases=("run",)), tmp_path / "rw")
    for engine in ENGINES:
        run = _runs(rw)[0, engine]["phases"]["run"]
        assert run["status"] == "complete" and run["client"]["model"] == "multiplexed", (engine, run.get("errors"))
        got = _sysbench_figures(run)
        retries = run["counters"].get("retries", 0)
        assert got["events"] == rw_events, engine
        # 4 writes and BEGIN + COMMIT an event, and at most an attempt's more per retry (a conflict)
        assert 4 * rw_events <= got["queries_write"] <= 4 * (rw_events + retries), (engine, got, retries)
        assert 2 * rw_events <= got["queries_other"] <= 2 * (rw_events + retries), (engine, got, retries)
        assert _sb_rows(engine, env) == [500, 500], engine  # each DELETE's INSERT put its row back
    # PostgreSQL: 4 rows written an event, less the few a concurrent event's DELETE had taken away
    # (an UPDATE or DELETE of that id then changes no row): at least 3 an event
    deadline = time.time() + 10  # the backends' statistics reach the server as they end
    while _pg_writes(env) - before < 3 * rw_events and time.time() < deadline:
        time.sleep(0.2)
    assert _pg_writes(env) - before >= 3 * rw_events, (before, _pg_writes(env))


def test_the_default_multiplexes_64_connections_a_shard_on_this_machine_s_server(env, tmp_path):
    """``client_model: auto`` (the default): the test server is on this machine (a loopback
    address), so 128 threads in 2 shards run multiplexed and 8 run in threads."""
    workload = {"preset": "c", "table": "e2e_mux_auto", "recordcount": 500, "operationcount": 0,
                "maxexecutiontime": 1.5}
    campaign = {**_campaign("mux-auto", _target("postgresql", env), workload, "auto"), "matrix": {"threads": [8, 128]}}
    del campaign["fanout"]["client_model"]  # the default
    _, res = _run(campaign, tmp_path)
    assert res["status"] == "complete"
    models = {}
    for threads, run in zip((8, 128), sorted(res["runs"], key=lambda r: r["run_id"])):  # the matrix's order
        phase = run["phases"]["run"]
        assert phase["errors_total"] == 0 and phase["operations_total"] > 0
        models[threads] = phase["client"]["model"]
    assert models == {8: "threads", 128: "multiplexed"}


def _new_orders_in_database(engine, env) -> int:
    """sum(d_next_o_id): every committed New-Order took its district's next number."""
    return int(_scalar(engine, env, "SELECT SUM(d_next_o_id) FROM district"))


@pytest.mark.slow
def test_multiplexed_tpcc_runs_the_same_transactions_as_threads_and_the_checks_pass(env, tmp_path):
    """TPC-C's transactions as steps (``families.base.stepwise``; a statement's rows sent back
    into its transaction): 1,200 transactions of 8 virtual users on one warehouse, threads
    against multiplexed with every shard call cut at 1.5 s and continued (a call's start-up
    takes most of a shorter one; 600 transactions a shard take about 3 s on an idle machine
    here, so some call is cut however fast the machine: 400 once all ran in the first calls).
    The same per-type
    counts and unused-item rollbacks (the same seed), every call split (no blocking call:
    New-Order's batched statements prepared at their first send, its rollback split too), the
    committed New-Orders in the database (sum(d_next_o_id)), and the consistency conditions
    after each run."""
    workload = {"family": "tpcc", "warehouses": 1, "threads": THREADS, "transactions": TPCC_TRANSACTIONS, "time": 120,
                "check": ["after_run"]}
    runs, before = {}, {}
    for model in MODELS:  # on both servers
        if model == "multiplexed":
            before = {e: _new_orders_in_database(e, env) for e in ENGINES}
        phases = ("prepare", "load", "run") if model == "threads" else ("run",)
        out, res = _run(_matrix(f"mux-tpcc-{model}", env, workload, model, phases=phases), tmp_path / model,
                        max_call_seconds=1.5 if model == "multiplexed" else None)
        runs[model] = (out, _runs(res))
        for engine in ENGINES:
            run = runs[model][1][0, engine]
            phase = run["phases"]["run"]
            assert phase["status"] == "complete" and phase["client"]["model"] == model, (
                model, engine, phase["status"], phase.get("errors"))
            assert run["checks"]["after_run"]["passed"], (model, engine, run["checks"]["after_run"])
    for engine in ENGINES:
        a, b = (runs[m][1][0, engine]["phases"]["run"] for m in MODELS)
        counts = {op: o["count"] for op, o in b["operations"].items()}
        assert counts == {op: o["count"] for op, o in a["operations"].items()}, (engine, counts)
        assert sum(counts.values()) == TPCC_TRANSACTIONS, (engine, counts)
        rollbacks = b["counters"].get("new_order_rollbacks", 0) + b["counters"].get("new_order_rollbacks_warmup", 0)
        assert rollbacks == a["counters"].get("new_order_rollbacks", 0) + a["counters"].get(
            "new_order_rollbacks_warmup", 0), engine
        committed = counts["NEW_ORDER"] - rollbacks
        assert _new_orders_in_database(engine, env) - before[engine] == committed, engine
        segments = _shard_segments(runs["multiplexed"][0], runs["multiplexed"][1][0, engine])
        assert sum(len(s) for s in segments) > SHARDS, f"{engine}: no call was continued"
        for seg in (seg for segs in segments for seg in segs):
            assert seg["client"]["model"] == "multiplexed" and seg["client"]["blocking_calls"] == 0, (engine, seg["client"])


# the tables of the tests that run a shard in this process: loaded once, by one campaign
IN_PROCESS = {"teardown": {"preset": "c", "recordcount": 300, "operationcount": 0, "maxexecutiontime": 1.0,
                           "threads": 24, "table": "e2e_mux_teardown"},
              "snap": {"preset": "b", "recordcount": 500, "operationcount": 0, "maxexecutiontime": 2.0, "threads": 12,
                       "table": "e2e_mux_snap", "requestdistribution": "zipfian"}}


@pytest.fixture(scope="module")
def in_process_tables(env, tmp_path_factory):
    """Both tables on both servers (their reads and updates keep every row)."""
    out, _ = _run(_matrix("in-process-load", env, {}, "threads", list(IN_PROCESS.values()), phases=("prepare", "load")),
                  tmp_path_factory.mktemp("in-process-load"))
    assert out["status"] == "complete", out


@pytest.mark.parametrize("model", ("threads", "multiplexed"))
def test_no_connection_closes_before_every_client_s_loop_has_ended(model, env, in_process_tables, monkeypatch):
    """A server spends CPU on each session's end (PostgreSQL's backend exit): a client that
    closed its connection as soon as its own loop ended held the others' last operations
    behind those exits (512 connections on one server CPU: 6-7 s of latency reported as the
    database's). Every close comes after the last loop's end, in both models."""
    from dbswarm.bindings.postgresql import PostgresBinding
    from dbswarm.campaign.plan import make_plan
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.engine.mux import Multiplexer
    from dbswarm.engine.worker import ShardPhase
    target = _target("postgresql", env)
    wl = IN_PROCESS["teardown"]
    closes: list[float] = []
    close = PostgresBinding.close

    def timed_close(self):
        closes.append(time.time())
        return close(self)
    monkeypatch.setattr(PostgresBinding, "close", timed_close)
    answers: list[float] = []
    record = Multiplexer._record

    def timed_record(self, slot, op, t0, result):
        answers.append(time.time())
        return record(self, slot, op, t0, result)
    monkeypatch.setattr(Multiplexer, "_record", timed_record)
    campaign, runs = load_campaign({"name": "teardown", "seed": 3, "target": target, "workload": wl,
                                    "fanout": {"shards": 1, "client_model": model}, "phases": ["run"]})
    run = make_plan(campaign, runs, "teardown", 1).runs[0]
    phase = ShardPhase(run, run.shards[0], "run", Path(env["DBSWARM_TEST_PASSWORD_FILE"]).read_text().strip())
    outcome = phase.execute()
    ended = [st.ended_at for st in phase.states]
    assert all(e is not None for e in ended) and not [st.error for st in phase.states if st.error]
    assert outcome.info["client"]["model"] == model
    assert len(closes) == 24 and outcome.info["done"] > 24
    assert min(closes) >= max(ended), (min(closes), max(ended))
    if model == "multiplexed":  # and no client thread woke before the multiplexer's last answer
        assert len(answers) == outcome.info["done"] and min(ended) >= max(answers), (min(ended), max(answers))


@pytest.mark.parametrize("engine", ("postgresql", "mysql"))
def test_a_multiplexed_shard_s_snapshots_agree_with_their_checkpoints(engine, env, in_process_tables):
    """The multiplexer records every client it drives into one recorder of its own (engine.mux),
    not each client's; a snapshot (a running shard persisting) takes what it holds (hands it
    over) when it first sees the snapshot's generation, and each client's operations between
    that instant and its deposit go to its own recorder, whose part the deposit hands over.
    Every snapshot's operations are then exactly the steps its checkpoint says were done, and
    the end's are every step."""
    import copy

    from dbswarm.campaign.plan import make_plan
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.engine.worker import ShardPhase
    target = _target(engine, env)
    wl = IN_PROCESS["snap"]
    campaign, runs = load_campaign({"name": "snap", "seed": 5, "target": target, "workload": wl,
                                    "fanout": {"shards": 1, "client_model": "multiplexed"}, "phases": ["run"]})
    run = make_plan(campaign, runs, "snap", 1).runs[0]
    snapshots = []
    phase = ShardPhase(run, run.shards[0], "run", Path(env["DBSWARM_TEST_PASSWORD_FILE"]).read_text().strip(),
                       snapshot_every=0.15, on_snapshot=snapshots.append)
    own_parts = []  # the operations of the parts the clients' own recorders handed over
    real_deposit = phase.snapshots.deposit

    def deposit(gen, index, rec, extra, checkpoint):
        own_parts.append(copy.deepcopy(rec).measurement().total_ops)  # what the deposit hands over
        return real_deposit(gen, index, rec, extra, checkpoint)
    phase.snapshots.deposit = deposit
    outcome = phase.execute()
    assert outcome.info["client"]["model"] == "multiplexed" and phase.mux.recorder is not None
    assert not [st.error for st in phase.states if st.error]
    assert len(snapshots) >= 4, len(snapshots)
    done = []
    for snap in snapshots:
        steps = sum(t["done"] for t in snap.checkpoint["threads"])
        assert snap.measurement.total_ops == steps, (snap.measurement.total_ops, steps)
        done.append(steps)
    assert done == sorted(done) and 0 < done[0] < done[-1] < outcome.info["done"]
    assert outcome.measurement.total_ops == outcome.info["done"] == sum(st.done for st in phase.states)
    # most operations went through the multiplexer's recorder, not the clients' own
    own = sum(own_parts) + sum(st.recorder.measurement().total_ops for st in phase.states)
    assert own < outcome.info["done"] / 2, (own, outcome.info["done"])


@pytest.mark.parametrize("model", ("threads", "multiplexed"))
def test_sysbench_s_warm_up_queries_are_its_events_in_either_model(model, env, tmp_path):
    """sysbench's --warmup-time: the queries of the events that ended in the warm-up are the
    warm-up's (each client's hook at its first event past the edge). The multiplexer's clients
    share its recorder's lanes, and a lane rolls past the edge for one of them only: each
    client's hook must still be called at its own first event past it (before, it was called
    at whichever later second its client rolled the lane: the window's point selects counted
    30,278 queries for 71,137 events)."""
    target = _target("postgresql", env)
    wl = {"family": "sysbench", "test": "oltp_point_select", "tables": 2, "table_size": 500, "threads": THREADS,
          "time": 3, "warmuptime": 1}
    _, res = _run(_campaign(f"warm-sb-{model}", target, wl, model), tmp_path / model)
    run = res["runs"][0]["phases"]["run"]
    sb = run["sysbench"]
    assert run["status"] == "complete" and run["client"]["model"] == model, run.get("errors")
    # oltp_point_select: one read query an event, no BEGIN / COMMIT
    assert sb["transactions"] > 0 and sb["warmup"]["transactions"] > 0, sb
    assert sb["queries_read"] == sb["queries"] == sb["transactions"], sb
    assert sb["warmup"]["queries"] == sb["warmup"]["transactions"], sb
