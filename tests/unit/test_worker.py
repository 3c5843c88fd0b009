"""The worker against the embedded SQLite target: deadlines, continue + resume, time caps."""
import json
import threading
import time

import pytest

from dbswarm.results.aggregate import shard_key
from dbswarm.results.store import open_store
from dbswarm.run.runtime import service


def _plan(tmp_path, workload, shards=1, phases=("prepare", "load", "run")):
    out = service.plan_campaign({"campaign": {"name": "w", "seed": 3, "workload": workload,
                                              "fanout": {"shards": shards}, "phases": list(phases)},
                                 "results": str(tmp_path)})
    return out, out["runs"][0]["run_id"]


def _run_until_done(event, max_calls=50):
    calls, out = 0, None
    checkpoint = None
    while calls < max_calls:
        out = service.run_shard(dict(event, checkpoint=checkpoint))
        calls += 1
        if out["status"] == "done":
            return out, calls
        checkpoint = out["checkpoint"]
    raise AssertionError("never finished")


def test_continue_and_resume_keeps_exact_totals(tmp_path):
    plan, rid = _plan(tmp_path, {"preset": "S3", "recordcount": 2000, "operationcount": 12000, "threads": 3,
                                 "target": 6000})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": rid, "shard": 0}
    service.prepare_run(dict(base, stage="before_load"))
    load, _ = _run_until_done(dict(base, phase="load"))
    assert load["ops"] == 2000
    # 12k ops at 6k ops/s take ~2 s: with 0.5 s per call the shard must continue several times
    out, calls = _run_until_done(dict(base, phase="run", max_call_seconds=0.5))
    assert calls >= 3
    assert out["ops"] == 12000
    doc = open_store(plan["store"]).get_json(out["result_key"])
    assert doc["status"] == "done" and len(doc["segments"]) == calls
    assert sum(s["count"] for s in doc["measurement"]["operations"].values()) == 12000
    # the inserts of every segment landed under distinct keys: 2000 loaded + every INSERT
    inserts = doc["measurement"]["operations"]["INSERT"]["count"]
    import sqlite3
    db = sqlite3.connect(service.load_plan(open_store(plan["store"]), plan["campaign_id"]).runs[0].target["url"])
    assert db.execute("SELECT COUNT(*) FROM usertable").fetchone()[0] == 2000 + inserts


def test_resumed_load_is_idempotent(tmp_path):
    # 100k rows load in ~2 s here, four times the shortest call (run_shard gives every call at
    # least 0.5 s); 30k rows took 0.6 s and a quiet moment once loaded them all in one call
    plan, rid = _plan(tmp_path, {"recordcount": 100000, "threads": 2, "batchsize": 50})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": rid, "shard": 0, "phase": "load"}
    service.prepare_run(dict(base, stage="before_load"))
    first = service.run_shard(dict(base, max_call_seconds=0.5))
    assert first["status"] == "continue", f"the whole load fit in one 0.5 s call ({first['ops']} rows): raise recordcount"
    # replay the same segment (as a retried Lambda call would), then finish
    service.run_shard(dict(base, max_call_seconds=0.5, checkpoint=first["checkpoint"]))
    out, _ = _run_until_done(dict(base, checkpoint=first["checkpoint"]))
    import sqlite3
    url = service.load_plan(open_store(plan["store"]), plan["campaign_id"]).runs[0].target["url"]
    n = sqlite3.connect(url).execute("SELECT COUNT(*), COUNT(DISTINCT ycsb_key) FROM usertable").fetchone()
    assert n == (100000, 100000)


def test_sysbench_counts_queries_like_sysbench(tmp_path):
    plan, rid = _plan(tmp_path, {"family": "sysbench", "tables": 2, "table_size": 500, "events": 200,
                                 "threads": 2, "time": 30})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": rid, "shard": 0}
    service.prepare_run(dict(base, stage="before_load"))
    _run_until_done(dict(base, phase="load"))
    service.prepare_run(dict(base, stage="after_load"))
    out, _ = _run_until_done(dict(base, phase="run"))
    doc = open_store(plan["store"]).get_json(out["result_key"])
    c = doc["measurement"]["counters"]
    trx = doc["measurement"]["operations"]["TRANSACTION"]["count"]
    assert trx == 200
    retries = c.get("retries", 0)
    assert c["queries_other"] >= 2 * trx and c["queries_read"] >= 14 * trx and c["queries_write"] >= 4 * trx
    if not retries:
        assert (c["queries_read"], c["queries_write"], c["queries_other"]) == (14 * trx, 4 * trx, 2 * trx)


@pytest.mark.parametrize("preset", ["a", "e", "f", "d"])
def test_every_operation_type_runs_on_sqlite(tmp_path, preset):
    plan, rid = _plan(tmp_path, {"preset": preset, "recordcount": 300, "operationcount": 600, "threads": 2})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": rid, "shard": 0}
    service.prepare_run(dict(base, stage="before_load"))
    _run_until_done(dict(base, phase="load"))
    out, _ = _run_until_done(dict(base, phase="run"))
    doc = open_store(plan["store"]).get_json(out["result_key"])
    m = doc["measurement"]
    assert sum(o["count"] for o in m["operations"].values()) == 600
    assert not m["errors"], m["errors"]
    assert sum(o["not_found"] for o in m["operations"].values()) == 0


def test_shards_above_max_shards_is_an_error():
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.errors import CampaignError
    with pytest.raises(CampaignError, match="fanout: shards .4000. exceeds max_shards .1000."):
        load_campaign({"workload": {"threads": 4000}, "fanout": {"shards": 4000}})


def test_reads_of_missing_keys_are_counted_not_found(tmp_path):
    # no load phase: the table is empty, so every read (rows=False: found or not, nothing
    # converted) and every update finds no record
    plan, rid = _plan(tmp_path, {"preset": "a", "recordcount": 300, "operationcount": 400, "threads": 2},
                      phases=("prepare", "run"))
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": rid, "shard": 0}
    service.prepare_run(dict(base, stage="before_load"))
    out, _ = _run_until_done(dict(base, phase="run"))
    ops = open_store(plan["store"]).get_json(out["result_key"])["measurement"]["operations"]
    assert ops["READ"]["count"] > 100 and ops["READ"]["not_found"] == ops["READ"]["count"]
    assert ops["UPDATE"]["not_found"] == ops["UPDATE"]["count"]
    assert ops["READ"]["count"] + ops["UPDATE"]["count"] == 400


@pytest.mark.parametrize("workload,persist_s", [
    ({"preset": "S3", "recordcount": 1000, "operationcount": 6000, "threads": 4}, None),
    ({"preset": "e", "recordcount": 1000, "operationcount": 3000, "threads": 5}, None),
    # longer than a call: each shard's call ends every 0.3 s (a continuation, as a Lambda
    # call's time limit ends it) and persists every 0.1 s (snapshots) in the middle of every
    # thread's operations; the streams must go on across both
    ({"preset": "S3", "recordcount": 1000, "operationcount": 3000, "threads": 4, "target": 1500}, 0.3)])
def test_same_seed_same_operations_whatever_the_shard_layout(tmp_path, monkeypatch, workload, persist_s):
    """Reproducible on another machine: its default shard count differs, the operations must not."""
    if persist_s:
        monkeypatch.setenv("DBSWARM_PERSIST_INTERVAL_S", "0.1")
    counts = []
    for shards in (1, 2, 4):
        out = service.run_steps({"name": "repro", "seed": 11, "target": {"engine": "noop"}, "workload": workload,
                                 "fanout": {"shards": shards}, "phases": ["run"]},
                                str(tmp_path / str(shards)), _calls_until_done(persist_s), lead_seconds=0)
        result = open_store(out["store"]).get_json(out["result_key"])
        phase = result["runs"][0]["phases"]["run"]
        assert result["runs"][0]["shard_count"] == shards
        if persist_s:
            store = open_store(out["store"])
            for i in range(shards):
                shard = store.get_json(shard_key(store, out["campaign_id"], result["runs"][0]["run_id"], "run", i))
                assert len(shard["segments"]) >= 4, "the run was meant to span segments"
        counters = {k: v for k, v in phase["counters"].items() if k not in ("late_starts", "paced_steps")}
        counts.append(({op: s["count"] for op, s in phase["operations"].items()}, counters))
    assert counts[0] == counts[1] == counts[2], counts
    assert len(counts[0][0]) == {"S3": 3, "e": 2}[workload["preset"]]  # every operation type was drawn


def _calls_until_done(max_call_seconds=None):
    """run_steps' shard runner: every shard called (one after another) until it is done, each
    call at most ``max_call_seconds`` (the state machine's continuation loop)."""
    extra = {"max_call_seconds": max_call_seconds} if max_call_seconds else {}
    return lambda ev, n: [_run_until_done(dict(ev, shard=i, **extra)) for i in range(n)]


def _run_noop(tmp_path, name, workload, options=None, shards=1, max_call_seconds=None):
    """A run-only campaign on the noop binding through the service functions in-process; the
    result's store and the run_steps answer."""
    target = {"engine": "noop", **({"options": options} if options else {})}
    out = service.run_steps({"name": name, "target": target, "workload": {"preset": "c", **workload},
                             "fanout": {"shards": shards}, "phases": ["run"]},
                            str(tmp_path), _calls_until_done(max_call_seconds), lead_seconds=0)
    return open_store(out["store"]), out


def test_warm_up_samples_are_out_of_the_percentiles_and_in_their_own_section(tmp_path):
    store, out = _run_noop(tmp_path, "warm", {"recordcount": 1000, "operationcount": 0, "maxexecutiontime": 2.5,
                                              "warmuptime": 1, "target": 4000, "threads": 2}, shards=2)
    phase = store.get_json(out["result_key"])["runs"][0]["phases"]["run"]
    warm = phase["warmup"]
    # 4,000 ops/s: about 4,000 in the first second, about 6,000 after it
    assert 3_000 < warm["operations_total"] < 4_500 and warm["seconds"] == 1
    assert phase["operations_after_warmup"] == phase["operations"]["READ"]["count"] == phase["operations"]["READ"]["calls"]
    assert phase["operations_total"] == warm["operations_total"] + phase["operations_after_warmup"]
    assert 4_500 < phase["operations_after_warmup"] < 6_500
    assert warm["operations"]["READ"]["intended"]["calls"] == warm["operations_total"]  # paced: both latencies
    summary = store.get_text(store.key(out["campaign_id"], "summary.md"))
    assert "### Warm-up (kept out of the latency percentiles" in summary


def test_connecting_is_outside_the_measured_window(tmp_path):
    """Client threads connect (here 0.4 s each, one after another's worth of a slow server's
    authentication) and build their clients before the shard is armed: a 1 s paced run then
    has its whole second of operations, as sysbench and go-ycsb connect before they measure.
    Connecting inside the window left 0.6 s of operations (about 600 of 1,000)."""
    store, out = _run_noop(tmp_path, "conn", {"recordcount": 1000, "operationcount": 0, "maxexecutiontime": 1.0,
                                              "target": 1000, "threads": 4}, options={"connect_ms": 400})
    phase = store.get_json(out["result_key"])["runs"][0]["phases"]["run"]
    assert 900 <= phase["operations_total"] <= 1_050, phase["operations_total"]
    # connecting inside the window made about 600 of the 1,000 starts late; a loaded machine
    # (threads descheduled for a few ms) makes some late too, so the bound is far from both
    assert phase["schedule"]["late_starts"] < 300, phase["schedule"]


@pytest.mark.parametrize("same_process", [True, False])
def test_a_thread_random_stream_continues_where_its_segment_ended(same_process):
    """The next segment puts the stream where the last one stopped: from this process's kept
    state, or (another process: a continuation call) by drawing its floats again from the seed."""
    from dbswarm.families import stream

    def draws(rng):
        return ([rng.random() for _ in range(5)] + [rng.randint(1, 10 ** 30) for _ in range(5)]
                + rng.choices("abc", k=20) + [rng.getrandbits(70), rng.randrange(7)] + rng.sample(range(1000), 5))
    whole = stream.RandomStream(17)
    first, second = draws(whole), draws(whole)
    segment = stream.RandomStream(17)
    assert draws(segment) == first
    position = segment.keep()
    if not same_process:
        stream._ended_streams.clear()
    again = stream.RandomStream(17)
    draws(again)  # a client's constructor drawing from the seed again before the stream is put back
    again.resume(position)
    assert draws(again) == second and again.position == whole.position


@pytest.mark.parametrize("start_at, elapsed", [(True, 0.0), (True, 20.0), (False, 0.0), (False, 20.0)])
def test_the_warm_up_end_is_known_in_every_call_on_the_start_barriers_clock(tmp_path, start_at, elapsed):
    """The instant a run's warm-up (TPC-C's ramp-up) ends, handed to the recorders as
    warm_end_ns: also in a call that continues after it (then in the past: TPC-C's clients place
    the New-Orders around it). With a start barrier, on its clock (start_at + rampup: when shard
    0's call reads the window's start edge), whatever the segment; without one, on the phase's
    elapsed clock."""
    import time

    from dbswarm.engine.worker import ShardPhase
    plan, rid = _plan(tmp_path, {"family": "tpcc", "warehouses": 1, "threads": 1, "time": 60, "rampup": 10},
                      phases=("run",))
    run = service.load_plan(open_store(plan["store"]), plan["campaign_id"], rid).run(rid)
    at = time.time() - 5 if start_at else None  # the barrier was 5 s ago (a late shard, a continuation)
    cp = {"segment": 1, "elapsed": elapsed, "threads": [{}]} if elapsed else None
    sp = ShardPhase(run, run.shards[0], "run", None, start_at=at, checkpoint=cp)
    began_wall, began_perf, _ = sp.arm()
    end_wall = began_wall + (sp.clock.warm_end_ns / 1e9 - began_perf)
    if start_at:
        assert end_wall == pytest.approx(at + 10, abs=0.01)
    else:
        assert end_wall == pytest.approx(began_wall + 10 - elapsed, abs=0.01)
    if not elapsed:  # the first call: the warm-up's own end is the same instant
        assert sp.clock.warm_until_ns == pytest.approx(sp.clock.warm_end_ns, abs=10 ** 7)
    else:
        assert sp.clock.warm_until_ns == 0  # no warm-up left in this call


def test_a_running_shard_persists_while_its_threads_go_on(tmp_path, monkeypatch):
    """Every DBSWARM_PERSIST_INTERVAL_S the shard's file is written with what it measured so
    far and the checkpoint to continue from, while the threads go on (before, each write
    ended a segment: every thread stopped, closed its connection and connected again, a
    throughput dip every 15 s). Each write's measurement agrees exactly with its checkpoint."""
    from dbswarm.bindings import noop
    from dbswarm.measure.recorder import Measurement
    from dbswarm.results.store import LocalStore
    monkeypatch.setenv("DBSWARM_PERSIST_INTERVAL_S", "0.2")
    connects, writes = [], []
    real_connect, real_put = noop.NoopBinding.connect, LocalStore.put_json

    def connect(self):
        connects.append(threading.current_thread().name)  # the client threads': shard<i>-t<j>
        return real_connect(self)

    def put_json(self, key, obj):
        if "/run/shard-" in key:
            writes.append(json.loads(json.dumps(obj)))
        return real_put(self, key, obj)
    monkeypatch.setattr(noop.NoopBinding, "connect", connect)
    monkeypatch.setattr(LocalStore, "put_json", put_json)
    # 4,000 operations at 2,000 a second over 2 threads: a 2 s run phase in one call
    store, out = _run_noop(tmp_path, "snap", {"recordcount": 100, "operationcount": 4000, "target": 2000,
                                              "threads": 2})
    assert sorted(c for c in connects if c.startswith("shard")) == ["shard0-t0", "shard0-t1"]  # for the whole phase
    snapshots, final = writes[:-1], writes[-1]
    assert len(snapshots) >= 5, len(snapshots)
    done = []
    for doc in snapshots:
        last = doc["segments"][-1]
        assert len(doc["segments"]) == 1 and last["persisted"] == "interval" and doc["status"] == "continue"
        cp = doc["resume_checkpoint"]
        assert cp["segment"] == 1 and len(cp["threads"]) == 2
        # the measurement and the checkpoint agree: the operations counted are the steps done
        assert Measurement.from_dict(doc["measurement"]).total_ops == sum(t["done"] for t in cp["threads"]) == \
            last["done"]
        done.append(last["done"])
    assert done == sorted(done) and 0 < done[0] < done[-1] < 4000
    assert final["status"] == "done" and len(final["segments"]) == 1
    assert "persisted" not in final["segments"][0] and final["segments"][0]["done"] == 4000
    assert Measurement.from_dict(final["measurement"]).total_ops == 4000


def test_snapshots_go_on_while_a_thread_that_ended_early_waits_to_close(tmp_path, monkeypatch):
    """A client thread whose loop has ended keeps its connection until every loop has ended
    (ClientPool.loop_ended); the snapshots meanwhile take its final state, as an
    ended thread's, and do not wait for it to hand one in (each would give up after
    SNAPSHOT_WAIT_S: no snapshot for the rest of the call)."""
    from dbswarm.engine import worker
    from dbswarm.measure.recorder import Measurement
    from dbswarm.results.store import LocalStore
    monkeypatch.setenv("DBSWARM_PERSIST_INTERVAL_S", "0.2")
    writes = []
    real_put, real_client = LocalStore.put_json, worker.ShardPhase.client

    def put_json(self, key, obj):
        if "/run/shard-" in key:
            writes.append(json.loads(json.dumps(obj)))
        return real_put(self, key, obj)

    def first_thread_ends_early(self, st, ctx):
        client = real_client(self, st, ctx)
        if st.index == 0:
            ctx.quota = 100  # 0.1 s at its 1,000 a second; the other thread goes on for 2 s
        return client
    monkeypatch.setattr(LocalStore, "put_json", put_json)
    monkeypatch.setattr(worker.ShardPhase, "client", first_thread_ends_early)
    store, out = _run_noop(tmp_path, "early", {"recordcount": 100, "operationcount": 4000, "target": 2000,
                                               "threads": 2})
    snapshots, final = writes[:-1], writes[-1]
    assert len(snapshots) >= 5, len(snapshots)
    for doc in snapshots:
        cp = doc["resume_checkpoint"]
        assert Measurement.from_dict(doc["measurement"]).total_ops == sum(t["done"] for t in cp["threads"])
    assert snapshots[-1]["resume_checkpoint"]["threads"][0]["done"] == 100
    assert final["status"] == "done" and final["segments"][0]["done"] == 2100


def test_what_a_skipped_snapshot_was_handed_is_in_the_next_and_in_the_end(tmp_path, monkeypatch):
    """A snapshot is skipped when a thread is inside a long call (SNAPSHOT_WAIT_S); the other
    threads have handed over their parts to it by then (Recorder.detach): those parts are in
    the next snapshot and in the end, never lost nor counted twice."""
    from dbswarm.bindings import noop
    from dbswarm.engine import shard_state
    from dbswarm.engine.snapshots import Snapshots
    from dbswarm.measure.recorder import Measurement
    from dbswarm.results.store import LocalStore
    monkeypatch.setenv("DBSWARM_PERSIST_INTERVAL_S", "0.2")
    monkeypatch.setattr(shard_state, "SNAPSHOT_WAIT_S", 0.3)
    writes, deposited = [], []
    real_put, real_read, real_deposit = LocalStore.put_json, noop.NoopBinding.read, Snapshots.deposit
    reads = {"n": 0}

    def put_json(self, key, obj):
        if "/run/shard-" in key:
            writes.append(json.loads(json.dumps(obj)))
        return real_put(self, key, obj)

    def read(self, *args, **kwargs):
        if threading.current_thread().name.endswith("-t1"):
            reads["n"] += 1
            if reads["n"] == 300:  # one long call: the snapshots meanwhile give up waiting for it
                time.sleep(1.5)
        return real_read(self, *args, **kwargs)

    def deposit(self, gen, index, rec, extra, checkpoint):
        deposited.append((gen, index))
        return real_deposit(self, gen, index, rec, extra, checkpoint)
    monkeypatch.setattr(LocalStore, "put_json", put_json)
    monkeypatch.setattr(noop.NoopBinding, "read", read)
    monkeypatch.setattr(Snapshots, "deposit", deposit)
    store, out = _run_noop(tmp_path, "skip", {"recordcount": 100, "operationcount": 6000, "target": 2000,
                                              "threads": 2})
    snapshots, final = writes[:-1], writes[-1]
    # thread 0 handed its part over to snapshots that were not written
    gens_of_t0 = {g for g, i in deposited if i == 0}
    assert len(gens_of_t0) > len(snapshots) >= 3, (len(gens_of_t0), len(snapshots))
    for doc in snapshots:
        cp = doc["resume_checkpoint"]
        assert Measurement.from_dict(doc["measurement"]).total_ops == sum(t["done"] for t in cp["threads"])
    assert final["status"] == "done" and final["segments"][0]["done"] == 6000
    assert Measurement.from_dict(final["measurement"]).total_ops == 6000


def test_the_progress_error_count_never_falls_when_parts_are_handed_over(tmp_path, monkeypatch):
    """The live display's error count (ShardPhase.error_counts) includes what the threads
    handed over to the snapshots, added up or not yet: it never falls while the shard runs
    (read from the threads' recorders alone, it fell to the errors since the last snapshot at
    each one), and ends at the run's error count."""
    from dbswarm.bindings import noop
    from dbswarm.bindings.base import ErrorClass
    from dbswarm.engine import shard_state, worker
    from dbswarm.errors import RETRYABLE
    monkeypatch.setenv("DBSWARM_PERSIST_INTERVAL_S", "0.2")
    monkeypatch.setenv("DBSWARM_PROGRESS_DIR", str(tmp_path / "progress"))
    (tmp_path / "progress").mkdir()
    monkeypatch.setattr(shard_state, "PROGRESS_INTERVAL_S", 0.02)
    real_read, real_counts = noop.NoopBinding.read, worker.ShardPhase.error_counts
    calls, seen, handed = {"n": 0}, [], []
    lock = threading.Lock()

    def read(self, *args, **kwargs):
        with lock:
            calls["n"] += 1
            fail = calls["n"] % 40 == 0
        if fail:
            raise RuntimeError("every 40th read fails")
        return real_read(self, *args, **kwargs)

    def counts(self):
        total, classes = real_counts(self)
        seen.append(total)
        handed.append(self.snapshots.accumulated is not None)
        return total, classes
    monkeypatch.setattr(noop.NoopBinding, "read", read)
    monkeypatch.setattr(noop.NoopBinding, "classify", lambda self, exc: ErrorClass(RETRYABLE, type(exc).__name__))
    monkeypatch.setattr(worker.ShardPhase, "error_counts", counts)
    store, out = _run_noop(tmp_path, "errs", {"recordcount": 100, "operationcount": 4000, "target": 2000,
                                              "threads": 2})
    errors = store.get_json(out["result_key"])["runs"][0]["phases"]["run"]["errors_total"]
    assert errors == 100, errors  # every 40th of 4,000 reads
    assert len(seen) >= 20 and sum(handed) >= 10, (len(seen), sum(handed))
    assert seen == sorted(seen) and 0 < seen[-1] <= errors, seen


def test_a_thread_abandoned_at_a_calls_deadline_continues_the_shard(tmp_path, monkeypatch):
    """A client thread still inside a call STUCK_THREAD_GRACE_S after a call's deadline is
    abandoned, and the shard continues in the next call: not "done" with its work left (a
    TPC-C load on a loaded machine was declared done with 7 of its districts unloaded)."""
    from dbswarm.engine import shard_state
    out = service.plan_campaign({"campaign": {
        "name": "abandon", "seed": 3, "phases": ["run"], "fanout": {"shards": 1},
        "target": {"engine": "noop", "options": {"capacity": 1, "service_time_ms": 1500}},
        "workload": {"preset": "S2", "recordcount": 10, "operationcount": 3, "threads": 1}},
        "results": str(tmp_path)})
    event = {"store": out["store"], "campaign_id": out["campaign_id"], "run_id": out["runs"][0]["run_id"],
             "shard": 0, "phase": "run", "max_call_seconds": 0.1}
    monkeypatch.setattr(shard_state, "STUCK_THREAD_GRACE_S", 0.2)
    first = service.run_shard(event)   # stops at 0.5 s inside a 1.5 s call: abandoned 0.2 s later
    doc = open_store(out["store"]).get_json(first["result_key"])
    assert doc["segments"][-1].get("abandoned_threads") == 1, doc["segments"]
    assert first["status"] == "continue" and first["checkpoint"], first
    monkeypatch.setattr(shard_state, "STUCK_THREAD_GRACE_S", 30.0)  # now every call waits for its operation
    answer, calls = _run_until_done(dict(event, checkpoint=first["checkpoint"], max_call_seconds=None), max_calls=5)
    assert answer["status"] == "done" and answer["ops"] >= 3, answer


def test_the_set_up_is_frozen_for_the_window_and_thawed_after(tmp_path, monkeypatch):
    """When every client thread is ready the shard freezes what the set-up made (gc.freeze:
    a full collection inside the window walked 400,000 set-up objects for 0.2-0.5 s, every
    connection waiting), so each operation runs frozen, and gives it back to the collector
    when the window ends (a warm Lambda's next call keeps none of it)."""
    import gc

    from dbswarm.bindings import noop
    real_read = noop.NoopBinding.read
    frozen_in_window: list = []

    def read(self, *a, **k):
        frozen_in_window.append(gc.get_freeze_count())
        return real_read(self, *a, **k)
    monkeypatch.setattr(noop.NoopBinding, "read", read)
    assert gc.get_freeze_count() == 0
    for model in ("threads", "multiplexed"):
        frozen_in_window.clear()
        target = {"engine": "noop"}
        out = service.run_steps({"name": f"freeze-{model}", "target": target,
                                 "workload": {"preset": "c", "recordcount": 100, "operationcount": 200, "threads": 2},
                                 "fanout": {"shards": 1, "client_model": model}, "phases": ["run"]},
                                str(tmp_path / model), _calls_until_done(None), lead_seconds=0)
        assert out["status"] == "complete", out
        assert len(frozen_in_window) == 200 and min(frozen_in_window) > 0, (model, frozen_in_window[:3])
        assert gc.get_freeze_count() == 0  # thawed
