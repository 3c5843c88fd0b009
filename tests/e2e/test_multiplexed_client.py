"""``fanout.client_model: multiplexed`` (engine.mux: one thread driving a shard's connections
over the binding's split calls) against the real servers, through the local campaign runner:

- it runs the same operations as a thread per connection: the same seed gives the same
  per-operation counts, every read finds its row and every update its record (so each
  answer was read back from the server, not assumed), also when every shard call is cut
  short and continued in a new process (the checkpoint between two operations);
- a connection the server kills in the middle is counted, reconnected in the
  multiplexer's thread and watched again: the run goes on and completes;
- what it cannot multiplex (sysbench's transactions, unprepared PostgreSQL statements)
  runs in threads, and the result says which model ran.
"""
from __future__ import annotations

import json
import threading
import time
from pathlib import Path

import pytest

from dbswarm.run.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers]

THREADS, SHARDS = 8, 2


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


def _shard_segments(out, res) -> list[list[dict]]:
    run = res["runs"][0]
    folder = Path(out["store"]) / out["campaign_id"] / "runs" / run["run_id"] / "run"
    return [json.loads(p.read_text())["segments"] for p in sorted(folder.glob("shard-*.json"))]


@pytest.mark.parametrize("engine", ("postgresql", "mysql"))
def test_multiplexed_runs_the_same_operations_as_threads_also_continued(engine, env, tmp_path):
    workload = {"preset": "a", "table": f"e2e_mux_{engine}", "recordcount": 1000, "operationcount": 6000,
                "threads": THREADS, "requestdistribution": "zipfian"}
    target = _target(engine, env)
    _, threads = _run(_campaign("mux-threads", target, workload, "threads"), tmp_path / "threads")
    # every shard call ends after 0.4 s and continues in a new process from its checkpoint
    out, muxed = _run(_campaign("mux-muxed", target, workload, "multiplexed", phases=("run",)), tmp_path / "mux",
                      max_call_seconds=0.4)
    a, b = (r["runs"][0]["phases"]["run"] for r in (threads, muxed))
    assert b["status"] == "complete" and b["errors_total"] == 0, (b["status"], b.get("errors"))
    counts = {op: (o["count"], o["not_found"]) for op, o in b["operations"].items()}
    assert counts == {op: (o["count"], o["not_found"]) for op, o in a["operations"].items()}
    assert set(counts) == {"READ", "UPDATE"} and sum(c for c, _ in counts.values()) == 6000
    assert all(nf == 0 for _, nf in counts.values()), counts  # each answer read back: rows found
    assert a["client"]["model"] == "threads" and b["client"]["model"] == "multiplexed"
    segments = _shard_segments(out, muxed)
    assert len(segments) == SHARDS and sum(len(s) for s in segments) > SHARDS, "no call was continued"
    for segs in segments:
        for seg in segs:
            client = seg["client"]
            assert client["model"] == "multiplexed" and client["multiplexed_threads"] == THREADS // SHARDS
            assert client["blocking_calls"] == 0


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
            if not kill:  # a session shows its statement while the server runs it: polled
                cur.execute("SELECT id FROM information_schema.processlist WHERE id <> CONNECTION_ID() "
                            "AND command = 'Query' AND info LIKE %s", (f"SELECT%{table}%",))
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
    the next ``after_s`` seconds are ended by the server."""
    try:
        deadline = time.time() + 120
        seen: set = set()
        while time.time() < deadline and not seen:
            seen = _sessions(engine, env, table)
            time.sleep(0.02)
        until = time.time() + after_s
        while time.time() < until:
            seen |= _sessions(engine, env, table)
            time.sleep(0.02)
        box["killed"] = len(_sessions(engine, env, table, kill=seen))
        box["at"] = time.time()
    except Exception as exc:  # reported by the test
        box["error"] = exc


@pytest.mark.parametrize("engine", ("postgresql", "mysql"))
def test_multiplexed_clients_reconnect_after_the_server_kills_their_sessions(engine, env, tmp_path):
    target = _target(engine, env)
    workload = {"preset": "c", "table": f"e2e_mux_kill_{engine}", "recordcount": 500, "threads": THREADS,
                "operationcount": 0, "maxexecutiontime": 6}
    box: dict = {}
    killer = threading.Thread(target=_kill_when_running, args=(engine, env, workload["table"], box, 1.5), daemon=True)
    killer.start()
    _, res = _run(_campaign("mux-kill", target, workload, "multiplexed"), tmp_path / "run")
    killer.join(30)
    assert "error" not in box, box.get("error")
    run = res["runs"][0]["phases"]["run"]
    assert res["status"] == "complete" and run["client"]["model"] == "multiplexed"
    if not box.get("killed"):
        pytest.fail(f"no session was killed (the run had not started?): {box}")
    assert run["errors_total"] > 0, "the killed sessions' operations were not counted as failed"
    assert all(":connection:" in k for k in run["errors"]), run["errors"]
    assert run["counters"].get("reconnects", 0) >= 1, run["counters"]
    tl = run["timeline"]
    burst = [i for i, n in enumerate(tl["errors"]) if n]
    ops = [sum(v[i] if i < len(v) else 0 for v in tl["ops"].values()) for i in range(len(tl["errors"]) + 10)]
    assert sum(ops[burst[-1] + 1:]) > 0, "no operations after the sessions were killed"


def test_what_cannot_be_multiplexed_runs_in_threads(env, tmp_path):
    target = servers.target("postgresql", env, prepare=False)  # no prepared statements: no split calls
    workload = {"preset": "c", "table": "e2e_mux_unprepared", "recordcount": 200, "operationcount": 400,
                "threads": 4}
    _, res = _run(_campaign("mux-unprepared", target, workload, "multiplexed"), tmp_path / "unprepared")
    run = res["runs"][0]["phases"]["run"]
    assert res["status"] == "complete" and run["operations_total"] == 400
    assert run["client"]["model"] == "threads"
    sysbench = {"family": "sysbench", "test": "oltp_read_only", "tables": 1, "table_size": 200, "threads": 4,
                "events": 40, "time": 30}
    _, res = _run(_campaign("mux-sysbench", _target("mysql", env), sysbench, "multiplexed"), tmp_path / "sysbench")
    run = res["runs"][0]["phases"]["run"]
    assert res["status"] == "complete" and run["client"]["model"] == "threads"
