"""One shard, one phase: its threads against the target, until its operation count,
its time cap, or the deadline it was given (then it answers "continue" with a checkpoint
and resumes from it on the next call).

Also the un-sharded steps of a run: create the schema before the load, build secondary
indexes after it (as sysbench does), drop everything at cleanup.
"""
from __future__ import annotations

import os
import random
import threading
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import bindings
from .bindings.base import Connection
from .measure import Measured, Measurement, Recorder
from .plan import derive_seed
from .secrets import redact_url
from .spec import SysbenchWorkload, YcsbWorkload
from .workloads.sysbench import SysbenchClient
from .workloads.ycsb import YcsbClient

DEADLINE_MARGIN_S = 0.0  # callers pass a deadline that already keeps their own margin
PROGRESS_INTERVAL_S = 0.5
# A client thread still inside one database call this long after the stop instant is
# abandoned (counted in thread_errors), so that what every thread measured is still written:
# a call can block for hours (a metadata lock, a server that stopped answering). It must stay
# below service.SAFETY_MARGIN_S, which is what a Lambda has left to write the result.
STUCK_THREAD_GRACE_S = float(os.environ.get("DBSWARM_STUCK_THREAD_GRACE_S", "10"))


def workload_model(run: dict):
    w = run["workload"]
    return (YcsbWorkload if w["family"] == "ycsb" else SysbenchWorkload).model_validate(w)


def make_binding(run: dict, password: Optional[str]):
    t = run["target"]
    cls = bindings.get(t["engine"])
    conn = Connection(engine=t["engine"], url=t.get("url"), password=password,
                      options=dict(t.get("options") or {}), display=redact_url(t.get("url")) or t["engine"])
    return cls(conn)


# ---- un-sharded steps -------------------------------------------------------------------

def prepare_target(run: dict, password: Optional[str], stage: str) -> dict:
    """stage: before_load (drop + create), after_load (secondary indexes), cleanup (drop)."""
    w = workload_model(run)
    b = make_binding(run, password)
    t0 = time.time()
    b.connect()
    try:
        if w.family == "ycsb":
            if stage == "before_load":
                b.ycsb_create(w.table, w.fieldcount)
            elif stage == "cleanup":
                b.ycsb_drop(w.table)
        else:
            for n in range(1, w.tables + 1):
                if stage == "before_load":
                    b.sb_create(n)
                elif stage == "after_load":
                    b.sb_create_index(n)
                elif stage == "cleanup":
                    b.sb_drop(n)
        settings = b.describe()
    finally:
        b.close()
    return {"stage": stage, "seconds": round(time.time() - t0, 3), "binding_settings": settings}


# ---- sharded phases ---------------------------------------------------------------------

@dataclass
class ThreadState:
    index: int                 # within the shard
    done: int = 0              # ops / events / rows completed, all segments
    inserted: int = 0          # ycsb run-phase inserts, all segments
    load_next: Optional[int] = None
    finished: bool = False     # quota or time cap reached (not merely the deadline)
    error: Optional[str] = None
    abandoned: bool = False    # still inside a database call after the grace period: given up
    ended_at: Optional[float] = None  # wall time its loop ended (this segment)


@dataclass
class ShardOutcome:
    status: str                         # "done" | "continue"
    measurement: Measurement
    checkpoint: Optional[dict]
    info: dict = field(default_factory=dict)


class ShardPhase:
    def __init__(self, run: dict, shard: dict, phase: str, password: Optional[str], *,
                 start_at: Optional[float] = None, deadline: Optional[float] = None,
                 checkpoint: Optional[dict] = None, progress: Optional[Callable] = None,
                 stop_event: Optional[threading.Event] = None):
        if phase not in ("load", "run"):
            raise ValueError(f"a shard runs the load or run phase, not {phase!r}")
        self.run, self.shard, self.phase, self.password = run, shard, phase, password
        self.w = workload_model(run)
        self.start_at, self.deadline = start_at, deadline
        self.cp = checkpoint or {}
        self.segment = self.cp.get("segment", 0)
        self.progress = progress
        self.stop_event = stop_event or threading.Event()
        n = shard["threads"]
        saved = self.cp.get("threads") or [{} for _ in range(n)]
        self.states = [ThreadState(i, s.get("done", 0), s.get("inserted", 0), s.get("load_next"))
                       for i, s in enumerate(saved)]
        self.recorders: list[Recorder] = []
        self._lock = threading.Lock()
        self._deadline_hit = False

    # -- limits ----------------------------------------------------------------------
    def _time_cap(self) -> Optional[float]:
        if self.phase != "run":
            return None
        cap = self.w.maxexecutiontime if self.w.family == "ycsb" else self.w.time
        return cap

    def execute(self) -> ShardOutcome:
        # start barrier: every shard of the phase begins at the armed instant
        skew = None
        if self.start_at and self.segment == 0:
            delay = self.start_at - time.time()
            if delay > 0:
                time.sleep(delay)
            skew = time.time() - self.start_at
        began_wall, began_perf = time.time(), time.perf_counter()
        elapsed_before = self.cp.get("elapsed", 0.0)
        cap = self._time_cap()
        stop_perf = float("inf")
        self._cap_limited = False
        if cap is not None:
            stop_perf = began_perf + max(0.0, cap - elapsed_before)
            self._cap_limited = True
        self._deadline_perf = float("inf")
        if self.deadline is not None:
            self._deadline_perf = began_perf + (self.deadline - DEADLINE_MARGIN_S - began_wall)
        self._stop_perf = min(stop_perf, self._deadline_perf)

        target = self.shard.get("target")
        per_thread_rate = (target / self.shard["threads"]) if target else None
        threads = [threading.Thread(target=self._thread_main, args=(st, per_thread_rate),
                                    name=f"shard{self.shard['index']}-t{st.index}", daemon=True)
                   for st in self.states]
        for t in threads:
            t.start()
        monitor, joined = None, threading.Event()
        if self.progress:
            monitor = threading.Thread(target=self._monitor, args=(joined,), daemon=True)
            monitor.start()
        self._join(threads)
        joined.set()  # also ends the monitor when abandoned threads are still alive
        if monitor:
            monitor.join()
        ended_wall = time.time()
        abandoned = sum(st.abandoned for st in self.states)
        if abandoned:
            # the measured window ends when the last thread that returned stopped (or, if none
            # did, at the stop instant), not when the stuck ones were given up: the grace
            # period holds no operations, and counting it would dilute ops/s (a 5 s run would
            # report a third of its throughput over 15 s)
            live = [st.ended_at for st in self.states if not st.abandoned and st.ended_at is not None]
            ended_wall = max(live) if live else began_wall + (self._stop_perf - began_perf)
        measurement = Measurement()
        for rec in list(self.recorders):
            measurement.merge(rec.measurement())
        thread_errors = [st.error for st in self.states if st.error]
        all_finished = all(st.finished for st in self.states)
        elapsed = elapsed_before + (time.perf_counter() - began_perf)
        status = "done" if all_finished or self.stop_event.is_set() else "continue"
        checkpoint = None
        if status == "continue":
            checkpoint = {"segment": self.segment + 1, "elapsed": elapsed,
                          "threads": [{"done": st.done, "inserted": st.inserted, "load_next": st.load_next}
                                      for st in self.states]}
        info = {"segment": self.segment, "began_at": began_wall, "ended_at": ended_wall,
                "elapsed_s": round(elapsed, 3), "done": sum(st.done for st in self.states),
                "thread_errors": thread_errors, "stopped": self.stop_event.is_set()}
        if skew is not None:
            info["start_skew_s"] = round(skew, 4)
        if abandoned:
            info["abandoned_threads"] = abandoned
        return ShardOutcome(status, measurement, checkpoint, info)

    def _join(self, threads):
        """Wait for the client threads; one still blocked in a database call
        STUCK_THREAD_GRACE_S after the stop instant is abandoned (a daemon thread: it cannot
        be interrupted inside the driver) and reported, and the others' results are kept."""
        if self._stop_perf == float("inf"):
            for t in threads:
                t.join()
            return
        give_up = self._stop_perf + STUCK_THREAD_GRACE_S
        for t in threads:
            t.join(max(0.0, give_up - time.perf_counter()))
        stuck = [st for t, st in zip(threads, self.states) if t.is_alive()]
        # a stuck call that returns later finds the stop instant passed and ends its thread
        # after at most one more record; its recorder is read now, while it is blocked
        if stuck:
            for st in stuck:
                st.abandoned = True
                st.error = (f"client thread {st.index} was still inside a database call "
                            f"{STUCK_THREAD_GRACE_S:g} s after the stop time: abandoned (its connection stays open "
                            "until the process ends)")
                st.finished = True

    def _monitor(self, joined: threading.Event):
        while not joined.wait(PROGRESS_INTERVAL_S):
            try:
                self.progress(sum(st.done for st in self.states),
                              sum(r.m.total_errors for r in list(self.recorders)))
            except Exception:
                pass

    def _should_stop(self) -> bool:
        return self.stop_event.is_set() or time.perf_counter() >= self._stop_perf

    # -- threads ---------------------------------------------------------------------
    def _thread_main(self, st: ThreadState, rate: Optional[float]):
        rec = Recorder()
        with self._lock:
            self.recorders.append(rec)
        binding = make_binding(self.run, self.password)
        m = Measured(binding, rec, self._should_stop)
        try:
            try:
                binding.connect()
            except Exception as exc:
                cls = binding.classify(exc)
                rec.error("CONNECT", cls.kind, cls.name)
                if not m.reconnect():
                    return
            seed = derive_seed(self.shard["seed"], self.phase, st.index, self.segment)
            rng = random.Random(seed)
            if self.phase == "load":
                self._load(st, m, rng)
            elif self.w.family == "ycsb":
                self._ycsb_run(st, m, rng, rate)
            else:
                self._sysbench_run(st, m, rng, rate)
        except Exception as exc:  # a bug or an unrecoverable driver state: keep what we have
            st.error = f"{type(exc).__name__}: {exc}"
            st.finished = True
        finally:
            st.ended_at = time.time()
            try:
                binding.close()
            except Exception:
                pass

    def _paced(self, rate: Optional[float]):
        """YCSB ClientThread throttle: op n is due at start + n/rate."""
        if not rate:
            return None
        interval = 1.0 / rate
        start = time.perf_counter()
        state = {"n": 0}

        def wait():
            due = start + state["n"] * interval
            state["n"] += 1
            delay = due - time.perf_counter()
            if delay > 0:
                time.sleep(delay)
        return wait

    def _ycsb_run(self, st, m, rng, rate):
        w = self.w
        quota = self.shard["thread_ops"][st.index] if w.operationcount else None
        expected = 0
        if w.insertproportion > 0:
            expected = int((quota or w.recordcount) * w.insertproportion * 1.2) + 10
        client = YcsbClient(w, rng, self.shard["thread_offset"] + st.index, self.run["threads"],
                            inserted=st.inserted, expected_inserts=expected)
        wait = self._paced(rate)
        perf = time.perf_counter
        stop_perf = self._stop_perf
        stopped = self.stop_event.is_set
        do = client.do_transaction
        done = st.done
        try:
            while True:
                if quota is not None and done >= quota:
                    st.finished = True
                    break
                if perf() >= stop_perf:
                    st.finished = self._cap_reached()
                    break
                if stopped():
                    break
                if wait:
                    wait()
                do(m)
                done += 1
                st.done = done
        finally:
            st.done = done
            st.inserted = client.inserted

    def _cap_reached(self) -> bool:
        """At stop time: the time cap (finished) rather than the deadline (continue)?"""
        return self._cap_limited and self._stop_perf < self._deadline_perf

    def _sysbench_run(self, st, m, rng, rate):
        w = self.w
        quota = self.shard["thread_ops"][st.index] if w.events else None
        client = SysbenchClient(w, rng)
        q = [0, 0, 0]
        wait = self._paced(rate)
        perf = time.perf_counter
        stop_perf = self._stop_perf
        body = client.body
        event = m.event
        stopped = self.stop_event.is_set
        try:
            while True:
                if quota is not None and st.done >= quota:
                    st.finished = True
                    break
                if perf() >= stop_perf:
                    st.finished = self._cap_reached()
                    break
                if stopped():
                    break
                if wait:
                    wait()
                if event("TRANSACTION", body, q):
                    st.done += 1  # a failed event does not count toward `events`
        finally:
            rec = m.rec
            rec.count("queries_read", q[0])
            rec.count("queries_write", q[1])
            rec.count("queries_other", q[2])

    def _load(self, st, m, rng):
        w = self.w
        start, count = self.shard["thread_load"][st.index]
        nxt = st.load_next if st.load_next is not None else start
        end = start + count
        b = m.binding
        if w.family == "ycsb":
            client = YcsbClient(w, rng, 0, 1)
            while nxt < end:
                if self._should_stop():
                    break
                hi = min(end, nxt + w.batchsize)
                rows = client.load_rows(range(nxt, hi))
                written = m.call_rows("INSERT", len(rows), b.insert_batch, w.table, rows)
                if not written and self._should_stop():
                    break  # this batch is redone on resume
                nxt = hi
                st.load_next = nxt
                if written:
                    st.done += len(rows)
        else:
            client = SysbenchClient(w, rng)
            size = w.table_size
            while nxt < end:
                if self._should_stop():
                    break
                table, first = divmod(nxt, size)
                hi = min(end, nxt + w.batchsize, (table + 1) * size)
                rows = client.load_rows(size, first + 1, first + (hi - nxt))
                written = m.call_rows("INSERT", len(rows), b.sb_load, table + 1, rows)
                if not written and self._should_stop():
                    break  # this batch is redone on resume
                nxt = hi
                st.load_next = nxt
                if written:
                    st.done += len(rows)
        if nxt >= end:
            st.finished = True
        st.load_next = nxt
