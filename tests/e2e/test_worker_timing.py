"""The worker's wall-clock windows, moved out of the unit tier (tests/unit/test_worker.py
asserts on events and counts only): a time cap and its continuations, the start barrier's
wait and skew, giving up on an unreachable target, a paced backlog's latency. Embedded SQLite
and noop targets, no server; the windows are generous for a loaded 2-CPU machine."""
import time

from dbswarm.results.aggregate import shard_key
from dbswarm.results.store import open_store
from dbswarm.run.runtime import service
from tests.unit.test_worker import _plan, _run_noop, _run_until_done


def test_maxexecutiontime_caps_the_run(tmp_path):
    plan, rid = _plan(tmp_path, {"preset": "S6", "recordcount": 500, "operationcount": 0,
                                 "maxexecutiontime": 1.0, "threads": 2})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": rid, "shard": 0}
    service.prepare_run(dict(base, stage="before_load"))
    _run_until_done(dict(base, phase="load"))
    out, calls = _run_until_done(dict(base, phase="run"))
    assert calls == 1 and out["ops"] > 100
    doc = open_store(plan["store"]).get_json(out["result_key"])
    assert 0.9 <= doc["segments"][0]["elapsed_s"] < 2.0


def test_time_cap_spans_continuations(tmp_path):
    plan, rid = _plan(tmp_path, {"preset": "S6", "recordcount": 500, "operationcount": 0,
                                 "maxexecutiontime": 1.5, "threads": 1})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": rid, "shard": 0}
    service.prepare_run(dict(base, stage="before_load"))
    _run_until_done(dict(base, phase="load"))
    out, calls = _run_until_done(dict(base, phase="run", max_call_seconds=0.6))
    assert calls == 3
    doc = open_store(plan["store"]).get_json(out["result_key"])
    assert 1.4 <= doc["segments"][-1]["elapsed_s"] < 2.2


def test_start_barrier_waits_and_records_skew(tmp_path):
    plan, rid = _plan(tmp_path, {"preset": "S6", "recordcount": 100, "operationcount": 100})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": rid, "shard": 0}
    service.prepare_run(dict(base, stage="before_load"))
    t0 = time.time()
    out = service.run_shard(dict(base, phase="load", start_at=t0 + 0.6))
    assert time.time() - t0 >= 0.6
    doc = open_store(plan["store"]).get_json(out["result_key"])
    assert 0 <= doc["start_skew_s"] < 0.1


def test_unreachable_target_ends_the_shard_instead_of_spinning(tmp_path, monkeypatch):

    from dbswarm.engine import calls
    monkeypatch.setattr(calls, "RECONNECT_GIVE_UP_S", 0.5)
    plan, rid = _plan(tmp_path, {"preset": "S6", "recordcount": 100, "operationcount": 100}, phases=("run",))
    store = open_store(plan["store"])
    p = service.load_plan(store, plan["campaign_id"])
    p.runs[0].target["url"] = str(tmp_path / "no-such-dir" / "x" / "\0bad.db")
    t0 = time.time()
    out = service.run_shard({"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": rid,
                             "shard": 0, "phase": "run"})
    assert time.time() - t0 < 10
    doc = store.get_json(out["result_key"])
    assert "unreachable" in doc["segments"][0]["thread_errors"][0]
    assert out["ops"] == 0


def test_a_backlog_on_the_schedule_survives_the_segments(tmp_path, monkeypatch):
    """A paced run whose server answers slower than the schedule (noop: 20 ms a call, 100
    calls/s asked of one thread, so half a second behind after each second) in calls of 0.3 s
    (a continuation each) persisting every 0.1 s: the response time from the intended start
    keeps counting from the phase's schedule, not from a new one at each segment (which would
    cap it near 0.3 s)."""
    monkeypatch.setenv("DBSWARM_PERSIST_INTERVAL_S", "0.1")
    store, out = _run_noop(tmp_path, "backlog", {"recordcount": 100, "operationcount": 0, "maxexecutiontime": 2,
                                                 "target": 100, "threads": 1}, options={"service_time_ms": 20},
                           max_call_seconds=0.3)
    result = store.get_json(out["result_key"])
    shard = store.get_json(shard_key(store, out["campaign_id"], result["runs"][0]["run_id"], "run", 0))
    assert len(shard["segments"]) >= 4  # calls of at least 0.5 s (service.run_shard): 2 s in 4
    run = result["runs"][0]["phases"]["run"]
    read = run["operations"]["READ"]
    assert 70 <= read["calls"] <= 110, read["calls"]  # 50 a second served, for 2 s
    assert read["p99_us"] < 100_000  # each call took its 20 ms
    # the last calls were due about a second before they started: 2 s of schedule, 1 s served
    assert read["intended"]["max_us"] >= 700_000, read["intended"]
    assert read["intended"]["p50_us"] >= 300_000, read["intended"]
    # every step of the schedule was one call, counted once across the segments; about all late
    assert run["schedule"]["steps"] == read["calls"], run["schedule"]
    assert run["schedule"]["late_starts"] >= 0.8 * read["calls"], run["schedule"]
