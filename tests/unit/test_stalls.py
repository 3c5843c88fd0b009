"""Issue 57, item 2, on the noop target: a call that blocks without failing is a stall of its
thread (shard_state.STALL_S); the shard's segment keeps it (thread, from, to), and the phase is
incomplete, names it, and keeps its seconds out of the steady window. A slow phase whose calls
fail and reconnect is not called a stall (its errors say it), nor is a paced thread's sleep.
The stalled-server fault test (tests/faults/test_stalled_server.py) does it with real servers."""
import threading
import time

import pytest

from dbswarm.bindings import noop
from dbswarm.engine import shard_state
from dbswarm.errors import CONNECTION, ErrorClass
from dbswarm.results import stalls as stalling
from dbswarm.results.aggregate import shard_key
from dbswarm.results.store import open_store
from dbswarm.run.runtime import service


def _run(tmp_path, workload):
    out = service.run_steps({"name": "stall", "target": {"engine": "noop"},
                             "workload": {"preset": "c", "recordcount": 100, "operationcount": 0, **workload},
                             "fanout": {"shards": 1}, "phases": ["run"]},
                            str(tmp_path), lambda ev, n: [service.run_shard(dict(ev, shard=i)) for i in range(n)],
                            lead_seconds=0)
    store = open_store(out["store"])
    result = store.get_json(out["result_key"])
    shard = store.get_json(shard_key(store, out["campaign_id"], result["runs"][0]["run_id"], "run", 0))
    return result, shard


def _one_blocked_call(monkeypatch, after_s: float, block_s: float, thread_name: str = "t0"):
    """Thread ``thread_name``'s first read ``after_s`` into the run blocks ``block_s`` seconds."""
    real, state = noop.NoopBinding.read, {"t0": None, "done": False}
    lock = threading.Lock()

    def read(self, *a, **k):
        now = time.time()
        with lock:
            if state["t0"] is None:
                state["t0"] = now
            hit = (not state["done"] and now - state["t0"] >= after_s
                   and threading.current_thread().name.endswith(thread_name))
            if hit:
                state["done"] = True
                state["at"] = now
        if hit:
            time.sleep(block_s)
        return real(self, *a, **k)
    monkeypatch.setattr(noop.NoopBinding, "read", read)
    return state


@pytest.mark.parametrize("paced", [False, True])
def test_a_blocked_call_is_a_stall_of_its_thread(tmp_path, monkeypatch, paced):
    monkeypatch.setattr(shard_state, "STALL_S", 0.5)
    state = _one_blocked_call(monkeypatch, after_s=0.8, block_s=1.5)
    result, shard = _run(tmp_path, {"maxexecutiontime": 5, "threads": 2, **({"target": 2000} if paced else {})})
    stalls = [s for seg in shard["segments"] for s in seg.get("stalls", [])]
    assert len(stalls) == 1 and stalls[0]["thread"] == 0 and not stalls[0].get("abandoned"), stalls
    assert state["at"] - 0.3 <= stalls[0]["from"] <= state["at"] + 0.05, (stalls, state["at"])
    assert 1.45 <= stalls[0]["seconds"] <= 2.5 and stalls[0]["stall_s"] == 0.5
    phase = result["runs"][0]["phases"]["run"]
    assert result["status"] == "incomplete" and phase["status"] == "incomplete"
    assert any(p.startswith("1 client thread(s) stalled") and "shard 0 thread 0 from" in p for p in phase["problems"])
    assert phase["stalls"]["threads"] == 1 and phase["stalls"]["per_shard"]["0"][0]["thread"] == 0
    left_out = set(phase["steady"]["stalled_seconds_left_out"])
    assert left_out and all(int(stalls[0]["from"]) <= s < stalls[0]["to"] for s in left_out), (left_out, stalls)


def test_a_paced_threads_sleep_is_no_stall(tmp_path, monkeypatch):
    """One operation a second per thread: a second between two, slept; with STALL_S at 0.4 s only
    a call that blocked counts, not the schedule's sleep. (At 20 a second and STALL_S 0.04 s, a
    noop call that a loaded machine left unscheduled for 61 ms was a stall: the test failed for
    the machine's load, not for the sleep.)"""
    monkeypatch.setattr(shard_state, "STALL_S", 0.4)
    result, shard = _run(tmp_path, {"maxexecutiontime": 3.5, "threads": 2, "target": 2})
    assert not [s for seg in shard["segments"] for s in seg.get("stalls", [])], shard["segments"]
    assert result["runs"][0]["phases"]["run"]["status"] == "complete"


def test_failed_calls_and_reconnects_are_errors_not_stalls(tmp_path, monkeypatch):
    """Every call of thread 0 after 0.5 s fails on its connection for 1 s (the reconnects
    succeed at once): its seconds without a completed call are errors, counted as such."""
    monkeypatch.setattr(shard_state, "STALL_S", 0.3)
    real, t0 = noop.NoopBinding.read, []

    def read(self, *a, **k):
        now = time.time()
        if not t0:
            t0.append(now)
        if threading.current_thread().name.endswith("t0") and 0.5 <= now - t0[0] < 1.5:
            time.sleep(0.35)
            raise ConnectionError("connection reset")
        return real(self, *a, **k)
    monkeypatch.setattr(noop.NoopBinding, "read", read)
    monkeypatch.setattr(noop.NoopBinding, "classify", lambda self, exc: ErrorClass(CONNECTION, "reset"))
    result, shard = _run(tmp_path, {"maxexecutiontime": 2.5, "threads": 2})
    assert not [s for seg in shard["segments"] for s in seg.get("stalls", [])], shard["segments"]
    assert result["runs"][0]["phases"]["run"]["errors_total"] > 0


def test_the_problem_names_shards_threads_and_when():
    stalls = {0: [{"thread": 0, "from": 1000.25, "to": 1004.0, "seconds": 3.75, "stall_s": 5.0, "abandoned": True},
                  {"thread": 3, "from": 1000.3, "to": 1004.0, "seconds": 3.7, "stall_s": 5.0, "abandoned": True}],
              2: [{"thread": 1, "from": 1002.0, "to": 1003.0, "seconds": 1.0, "stall_s": 5.0}]}
    text = stalling.problem(stalls, 999.0)
    assert text.startswith("3 client thread(s) stalled: no call completed for 5 s or more without an error")
    assert "shard 0 threads 0, 3 from 00:16:40.2 UTC (1.2 s into the phase), up to 3.8 s (threads 0, 3 still " \
           "inside a call at the give-up: abandoned)" in text
    assert "shard 2 thread 1 from 00:16:42.0 UTC (3.0 s into the phase), up to 1.0 s;" in text
    assert stalling.stalled_seconds(stalls) == {1000, 1001, 1002, 1003}
    assert stalling.stalled_span(stalls, 999.0, 1003.5) == pytest.approx(3.25)


def test_without_a_steady_window_the_headline_takes_out_the_stalled_seconds_ops_and_time():
    """One thread stalled over seconds 1001-1002 of a 4 s phase while the others went on: those
    seconds' operations and time both left out (ops over the remaining time alone would count
    the others' work in the stalled seconds over time that no longer includes them)."""
    stalls = {0: [{"thread": 0, "from": 1001.2, "to": 1002.5, "seconds": 1.3}]}
    totals = [100, 40, 30, 100]   # seconds 1000..1003
    rate = stalling.unstalled_rate(stalls, 1000, totals, 1000.0, 1004.0, sum(totals), 4.0)
    assert rate == pytest.approx(200 / 2.0)
