"""sysbench's hot loop (``run_for``: events in one call, the event inline) against the general
path (``Measured.event`` of the client's ``body``, one event per call): the same statements
with the same ids on the same tables, the same counts of queries, the same measurement, the
same retries after a failed attempt, the stream at the same position.

The binding records what it is asked (the noop engine's answers, no database: what is
compared is the client's own choice of statements; tests/contract runs the events on the
real engines)."""
from __future__ import annotations

import time

import pytest

from dbswarm.bindings.base import Connection
from dbswarm.bindings.noop import NoopBinding
from dbswarm.engine.calls import FatalError, Measured
from dbswarm.engine.worker import ThreadRandom
from dbswarm.errors import FATAL, RETRYABLE, ErrorClass
from dbswarm.families import base as families
from dbswarm.families.base import ThreadContext
from dbswarm.families.sysbench import SysbenchClient, SysbenchTables
from dbswarm.measure.recorder import Recorder

EVENTS = 400


class Deadlock(Exception):
    pass


class Broken(Exception):
    pass


class Recording(NoopBinding):
    """Every statement as (what, statement, params); the selects through query_counter. With
    ``fail_every``, every that many-th statement raises a retryable error (``fatal``: a fatal one)."""

    def __init__(self, fail_every: int = 0, fatal: bool = False):
        super().__init__(Connection("noop", None))
        self.calls, self.fail_every, self.fatal, self.n = [], fail_every, fatal, 0

    def _log(self, *call):
        self.n += 1
        if self.fail_every and self.n % self.fail_every == 0:
            self.calls.append(("failed", *call))
            raise (Broken if self.fatal else Deadlock)(call[0])
        self.calls.append(call)

    def classify(self, exc):
        if isinstance(exc, Deadlock):
            return ErrorClass(RETRYABLE, "Deadlock")
        return ErrorClass(FATAL, type(exc).__name__)

    def query_counter(self, sql):
        return lambda params: self._log("select", sql, tuple(params)) or 1

    def execute(self, sql, params=()):
        self._log("execute", sql, tuple(params))
        return 1

    def begin(self, writes=True):
        self._log("begin", writes)

    def commit(self):
        self._log("commit")

    def rollback(self):
        self.calls.append(("rollback",))


def _workload(props):
    return families.get("sysbench").workload({"tables": 4, "table_size": 5000, "threads": 8, "time": 60, **props})


def _outcome(b, rec, rng, q):
    rec.flush()
    m = rec.m
    trx = m.operations.get("TRANSACTION")
    return {"calls": b.calls, "queries": tuple(q), "transactions": trx.count if trx else 0,
            "timed": trx.histogram.get_total_count() if trx else 0, "errors": dict(m.errors),
            "retries": m.counters.get("retries", 0), "words": rng.words, "next": rng.random()}


def _general(props, b, events):
    """``Measured.event`` of the client's body, one event per call (as before the hot loop)."""
    rec, rng = Recorder(1), ThreadRandom(42)
    m = Measured(b, rec)
    client, tables, q = SysbenchClient(_workload(props), rng), SysbenchTables(b), [0, 0, 0]
    committed = sum(m.event("TRANSACTION", client.body, tables, q) for _ in range(events))
    return committed, _outcome(b, rec, rng, q)


def _hot(props, b, chunks, events=EVENTS):
    """The family's run client (the worker's): its run_for called with these max_steps in turn
    (1: step()) until ``events`` committed, as the worker calls it with its quota."""
    rec, rng = Recorder(1), ThreadRandom(42)
    client = families.get("sysbench").run_client(_workload(props), ThreadContext(
        m=Measured(b, rec), rng=rng, thread=3, threads=8))
    far = 2 ** 62  # no deadline: max_steps decides
    committed = calls = 0
    while committed < events:
        c = min(chunks[calls % len(chunks)], events - committed)
        committed += client.step() if c == 1 else client.run_for(far, c)
        calls += 1
    assert calls >= len(chunks)
    client.close()
    c = rec.m.counters
    return committed, _outcome(b, rec, rng, [c.get("queries_read", 0), c.get("queries_write", 0),
                                             c.get("queries_other", 0)])


CASES = [
    {"test": "oltp_read_only", "rand_type": "uniform"},       # the benchmarks' case: ids inline
    {"test": "oltp_read_only"},                               # special ids: through next_id
    {"test": "oltp_read_write", "rand_type": "uniform"},      # and the writes
    {"test": "oltp_write_only"},
    {"test": "oltp_point_select", "rand_type": "uniform"},    # no transaction, point selects only
    {"test": "oltp_read_only", "rand_type": "uniform", "skip_trx": True, "point_selects": 3},
]
CHUNKS = [1, 7, 150, 2, 1, 239]  # EVENTS in calls of several sizes


@pytest.mark.parametrize("props", CASES, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_hot_loop_runs_what_the_general_event_runs(props):
    committed, hot = _hot(props, Recording(), CHUNKS)
    general_committed, general = _general(props, Recording(), EVENTS)
    assert committed == general_committed == EVENTS
    assert hot == general
    assert hot["timed"] == EVENTS and hot["errors"] == {} and hot["retries"] == 0
    assert hot["words"] > 0
    statements = {c[1] for c in hot["calls"] if c[0] in ("select", "execute")}
    assert len(statements) >= 4  # every table
    w = _workload(props)
    reads, writes, other = SysbenchClient(w, ThreadRandom(1)).queries_per_event()
    assert hot["queries"] == (EVENTS * reads, EVENTS * writes, EVENTS * other)


@pytest.mark.parametrize("props", CASES[:3], ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_hot_loop_retries_a_failed_attempt_as_the_general_event_does(props):
    """Every 23rd statement fails (retryable): the attempt is rolled back and run again by
    Measured.event_failed, the loop returns after it; what was sent, counted and timed is
    what Measured.event sends, counts and times."""
    committed, hot = _hot(props, Recording(fail_every=23), CHUNKS)
    general_committed, general = _general(props, Recording(fail_every=23), EVENTS)
    assert hot == general
    assert committed == general_committed
    failures = sum(1 for c in hot["calls"] if c[0] == "failed")
    assert failures > 10 and hot["retries"] == failures and hot["errors"] == {"TRANSACTION:retryable:Deadlock": failures}
    assert sum(1 for c in hot["calls"] if c[0] == "rollback") == failures
    # every event committed in the end (a retry succeeds), each timed once
    assert hot["timed"] == hot["transactions"] == committed


def test_run_for_stops_at_its_deadline_and_max_steps_and_raises_a_fatal_error():
    b = Recording()
    rec, rng = Recorder(1), ThreadRandom(42)
    client = families.get("sysbench").run_client(_workload({"test": "oltp_read_only"}), ThreadContext(
        m=Measured(b, rec), rng=rng, thread=0, threads=1))
    assert client.run_for(0, 10 ** 9) == 1  # a deadline already past: the first event runs, and only it
    assert client.run_for(2 ** 62, 5) == 5
    assert client.run_for(time.perf_counter_ns() + 50_000_000, 10 ** 9) > 5  # about 50 ms of events
    fatal = families.get("sysbench").run_client(_workload({"test": "oltp_read_only"}), ThreadContext(
        m=Measured(Recording(fail_every=30, fatal=True), Recorder(1)), rng=ThreadRandom(1), thread=0, threads=1))
    with pytest.raises(FatalError):
        fatal.run_for(2 ** 62, 10 ** 9)


def test_a_stop_during_a_failed_attempt_ends_the_loop_without_a_retry():
    b = Recording(fail_every=5)
    rec = Recorder(1)
    m = Measured(b, rec, should_stop=lambda: True)
    client = families.get("sysbench").run_client(_workload({"test": "oltp_read_only"}), ThreadContext(
        m=m, rng=ThreadRandom(3), thread=0, threads=1))
    assert client.run_for(2 ** 62, 100) == 0  # the first event's 5th statement failed: no retry
    rec.flush()
    assert rec.m.counters.get("retries", 0) == 0 and [c[0] for c in b.calls].count("rollback") == 1
