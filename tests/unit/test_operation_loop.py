"""The engine's operation loop (``engine.loop.OperationLoop``) against a reference
implementation of what it must do (below: ``reference``, one operation at a time through
``Measured``'s plain call / event / call_rows): for YCSB and sysbench, the same calls with the
same keys, fields, values and statements, the same measurement (counts, rows not found,
errors, retries), the same client state and the random stream at the same position, run in
calls of several sizes as the worker makes them; and what the loop does at a deadline, a
failure, a fatal error and a stop.

The bindings record what they are asked (the noop engine's answers, no database: what is
compared is the choice of operations and the loop's bookkeeping; tests/contract runs every
family through the loop on real engines)."""
from __future__ import annotations

import time

import pytest

from dbswarm.bindings.base import Connection
from dbswarm.bindings.noop import NoopBinding
from dbswarm.engine.calls import FatalError, Measured
from dbswarm.engine.loop import OperationLoop
from dbswarm.errors import DUPLICATE, FATAL, RETRYABLE, ErrorClass
from dbswarm.families import base as families
from dbswarm.families.base import CALL, EVENT, Exhausted, ThreadContext
from dbswarm.families.generators import ScrambledZipfian, Uniform
from dbswarm.families.stream import RandomStream
from dbswarm.families.sysbench import SysbenchClient
from dbswarm.measure.recorder import FAILED, Recorder
from tests import measured

FAR = 2 ** 62  # no deadline: max_units decides
CHUNKS = [1, 7, 150, 2, 1, 239, 600]


def reference(client, m: Measured, units: int) -> int:
    """What the loop must do, written plainly: each operation through Measured's own call,
    event or call_rows, a 0 / False result of a ``missing`` Op counted as not found, ``then``
    told whether it took effect."""
    done = 0
    while done < units:
        try:
            op, fn, args = client.next_operation()
        except Exhausted:
            break
        if op.policy == CALL:
            result = measured.call(m, op.name, fn, *args)
            if result is not FAILED and op.missing and result == 0:
                m.rec.m.op(op.name).not_found += 1
            took = result is not FAILED or m.last_error_kind == DUPLICATE
            done += op.units
        elif op.policy == EVENT:
            took = measured.event(m, op.name, fn, *args)
            done += op.units if took else 0
        else:
            took = measured.call_rows(m, op.name, op.units, fn, *args)
            done += op.units if took else 0
        if op.then is not None:
            op.then(took)
    return done


def looped(client, m: Measured, units: int, chunks=CHUNKS) -> int:
    """The loop called as the worker calls it: up to a number of units per call, in turn."""
    loop = OperationLoop(client, m)
    done = calls = 0
    while done < units and not loop.exhausted:
        done += loop.run(FAR, min(chunks[calls % len(chunks)], units - done))
        calls += 1
    return done


# ---- YCSB ---------------------------------------------------------------------------------------

class KvRecording(NoopBinding):
    """Every kv call as (operation, key, fields or values); a key ending in 7 is not found.
    ``fail_at``: the call with that index raises (``kind``: the error's class)."""

    def __init__(self, fail_at: int = -1, kind: str = RETRYABLE):
        super().__init__(Connection("noop", None))
        self.calls, self.fail_at, self.kind = [], fail_at, kind

    def _log(self, *call):
        if len(self.calls) == self.fail_at:
            self.calls.append(("failed", *call))
            raise KeyError(self.kind)
        self.calls.append(call)

    def classify(self, exc):
        if isinstance(exc, KeyError):
            return ErrorClass(self.kind, self.kind + "_error")
        return super().classify(exc)

    def read(self, table, key, fields, rows=True):
        self._log("read", table, key, fields and tuple(fields))
        return 0 if key.endswith("7") else 1

    def update(self, table, key, values):
        self._log("update", table, key, tuple(values.items()))
        return not key.endswith("7")

    def insert(self, table, key, values):
        self._log("insert", table, key, tuple(values.items()))

    def scan(self, table, startkey, count, fields, rows=True):
        self._log("scan", table, startkey, count)
        return 1


class BytesKeys(KvRecording):
    """A binding whose readers and updaters take bytes keys (as PostgreSQL's)."""
    hot_key_type = bytes

    def reader(self, table, fields):
        return lambda key: self.read(table, key.decode(), fields, False)

    def updater(self, table, field):
        return lambda value, key: self.update(table, key.decode(), {field: value})


def _ycsb(props: dict, binding, rng_seed=42):
    m = Measured(binding, Recorder(1))
    fam = families.get("ycsb")
    w = fam.workload({"recordcount": 5000, "operationcount": 0, "maxexecutiontime": 60, "threads": 8, **props})
    rng = RandomStream(rng_seed)
    return fam.run_client(w, ThreadContext(m=m, rng=rng, thread=3, threads=8)), m, rng


def _ycsb_outcome(props, binding_type, drive, units=3000):
    b = binding_type()
    client, m, rng = _ycsb(props, b)
    done = drive(client, m, units)
    m.rec.flush()
    ops = {k: (s.count, s.not_found) for k, s in m.rec.m.operations.items()}
    return done, b.calls, ops, dict(m.rec.m.errors), client.state(), rng.position, rng.random()


YCSB_CASES = [
    {"preset": "c"},                                                      # zipfian reads
    {"preset": "a"},                                                      # reads and updates
    {"preset": "b", "readallfields": False},                              # one field read
    {"preset": "a", "requestdistribution": "uniform"},
    {"preset": "a", "writeallfields": True},                              # whole-record updates
    {"preset": "f"},                                                      # read-modify-write beside reads
    {"preset": "d"},                                                      # inserts, latest
    {"preset": "e"},                                                      # scans and inserts
    {"preset": "c", "requestdistribution": "hotspot"},
    {"preset": "c", "recordcount": 70_000, "zeropadding": 12, "insertorder": "ordered"},
]


@pytest.mark.parametrize("binding_type", [KvRecording, BytesKeys], ids=["str-keys", "bytes-keys"])
@pytest.mark.parametrize("props", YCSB_CASES, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_the_loop_runs_ycsb_as_the_reference_does(props, binding_type):
    got = _ycsb_outcome(props, binding_type, looped)
    want = _ycsb_outcome(props, binding_type, reference)
    assert got == want
    done, calls, ops = got[:3]
    assert done == 3000 and len(calls) == 3000 + sum(1 for c in calls if c[0] == "update" and props.get("preset") == "f")
    assert sum(count for count, _ in ops.values()) == 3000
    if props.get("preset") in ("a", "b", "c"):
        assert sum(nf for _, nf in ops.values()) > 0  # some keys end in 7: counted alike


def test_bytes_and_str_keys_draw_the_same_operations():
    """A binding's key form changes the keys' type, not the operations drawn."""
    for props in ({"preset": "a"}, {"preset": "d"}):
        a = _ycsb_outcome(props, KvRecording, looped)
        b = _ycsb_outcome(props, BytesKeys, looped)
        assert a == b


def test_the_loop_stops_at_its_deadline_and_after_a_failure():
    b = KvRecording(fail_at=5)
    client, m, rng = _ycsb({"preset": "c"}, b)
    built = rng.position  # the client's set-up draws (its value pool)
    loop = OperationLoop(client, m)
    assert loop.run(0, 100) == 1  # a deadline passed: one operation
    assert loop.run(FAR, 100) == 5  # the 5th of this call failed: the call ends with it (counted, as YCSB does)
    assert m.rec.m.errors == {"READ:retryable:retryable_error": 1}
    assert loop.run(time.perf_counter_ns() + 10 ** 9, 50) == 50
    assert rng.position - built == 56  # a draw per operation (zipfian key), the failed one's too


def test_a_fatal_error_ends_the_loop_with_what_it_did_counted():
    client, m, _ = _ycsb({"preset": "c"}, KvRecording(fail_at=9, kind=FATAL))
    loop = OperationLoop(client, m)
    with pytest.raises(FatalError):
        loop.run(FAR, 100)
    m.rec.flush()
    assert loop.units == 9 and m.rec.m.operations["READ"].count == 9


def test_a_reconnect_rebinds_the_readers_and_updaters():
    """After Measured.reconnect the client's readers and updaters are taken again from the
    binding (they belong to its old connection)."""
    b = KvRecording()
    made = []
    reader, updater = b.reader, b.updater
    b.reader = lambda *a: made.append("reader") or reader(*a)
    b.updater = lambda *a: made.append("updater") or updater(*a)
    client, m, _ = _ycsb({"preset": "a"}, b)
    assert made.count("reader") == 1 and made.count("updater") == 10
    assert m.reconnect() is True
    assert made.count("reader") == 2 and made.count("updater") == 20
    assert m.rec.m.counters["reconnects"] == 1


def test_a_duplicate_insert_moves_on_to_the_next_key():
    """An insert whose reply a lost connection cut off had committed; its retry is a duplicate
    key. The record is there, so the thread's next insert takes the next key."""
    b = KvRecording(fail_at=1, kind=DUPLICATE)
    client, m, _ = _ycsb({"readproportion": 0, "updateproportion": 0, "insertproportion": 1, "recordcount": 100}, b)
    loop = OperationLoop(client, m)
    assert loop.run(FAR, 5) == 2  # the second failed: the call ends with it (counted, as YCSB does)
    assert loop.run(FAR, 5) == 5
    assert b.calls[1][0] == "failed"
    keys = [c[-2] for c in b.calls]  # (["failed",] "insert", table, key, values)
    assert len(set(keys)) == len(keys) == 7, keys
    assert m.rec.m.errors == {"INSERT:duplicate:duplicate_error": 1}
    assert client.state() == {"inserted": 7}


@pytest.mark.parametrize("memo", ["list", "dict"])
def test_a_generators_key_function_draws_its_own_next(memo):
    """next_key: key_of(next()) on the same stream, with the keys memoized in a list over the
    key numbers or in a dict, the stream at the same position."""
    for make in (lambda r: ScrambledZipfian(r, 0, 99_999), lambda r: Uniform(r, 0, 99_999),
                 lambda r: ScrambledZipfian(r, 10, 1_000_000_009)):
        a, b = RandomStream(7), RandomStream(7)
        ga, gb = make(a), make(b)
        items = ga.items if isinstance(ga, ScrambledZipfian) else ga.n
        keys = [None] * items if memo == "list" and items < 10 ** 6 else {}
        nk = ga.next_key(lambda k: f"k{k}", keys, [None] * ScrambledZipfian.POPULAR_ITEMS)
        got = [nk() for _ in range(20_000)]
        want = [f"k{gb.next()}" for _ in range(20_000)]
        assert got == want
        assert a.position == b.position == 20_000


# ---- sysbench -----------------------------------------------------------------------------------

class Deadlock(Exception):
    pass


class Broken(Exception):
    pass


class SqlRecording(NoopBinding):
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


def _sysbench_workload(props):
    return families.get("sysbench").workload({"tables": 4, "table_size": 5000, "threads": 8, "time": 60, **props})


def _sysbench(props, b, drive, events=400, stop=lambda: False):
    rec, rng = Recorder(1), RandomStream(42)
    m = Measured(b, rec, should_stop=stop)
    client = families.get("sysbench").run_client(_sysbench_workload(props), ThreadContext(
        m=m, rng=rng, thread=3, threads=8))
    committed = drive(client, m, events)
    client.close()
    rec.flush()
    trx = rec.m.operations.get("TRANSACTION")
    c = rec.m.counters
    return {"committed": committed, "calls": b.calls,
            "queries": (c.get("queries_read", 0), c.get("queries_write", 0), c.get("queries_other", 0)),
            "transactions": trx.count if trx else 0, "timed": trx.histogram.get_total_count() if trx else 0,
            "errors": dict(rec.m.errors), "retries": c.get("retries", 0), "position": rng.position,
            "next": rng.random()}


SYSBENCH_CASES = [
    {"test": "oltp_read_only", "rand_type": "uniform"},
    {"test": "oltp_read_only"},                               # special ids
    {"test": "oltp_read_write", "rand_type": "uniform"},      # and the writes
    {"test": "oltp_write_only"},
    {"test": "oltp_point_select", "rand_type": "uniform"},    # no transaction, point selects only
    {"test": "oltp_read_only", "rand_type": "uniform", "skip_trx": True, "point_selects": 3},
]


@pytest.mark.parametrize("props", SYSBENCH_CASES, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_the_loop_runs_sysbench_events_as_the_reference_does(props):
    got = _sysbench(props, SqlRecording(), looped)
    want = _sysbench(props, SqlRecording(), reference)
    assert got == want
    assert got["committed"] == got["timed"] == 400 and got["errors"] == {} and got["retries"] == 0
    assert len({c[1] for c in got["calls"] if c[0] in ("select", "execute")}) >= 4  # every table
    reads, writes, other = SysbenchClient(_sysbench_workload(props), RandomStream(1)).queries_per_event()
    assert got["queries"] == (400 * reads, 400 * writes, 400 * other)


@pytest.mark.parametrize("props", SYSBENCH_CASES[:3], ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_a_failed_attempt_is_rolled_back_and_run_again_as_the_reference_does(props):
    """Every 23rd statement fails (retryable): the attempt is rolled back and run again, the
    loop's call ends after it; what was sent, counted and timed is the reference's."""
    got = _sysbench(props, SqlRecording(fail_every=23), looped)
    want = _sysbench(props, SqlRecording(fail_every=23), reference)
    assert got == want
    failures = sum(1 for c in got["calls"] if c[0] == "failed")
    assert failures > 10 and got["retries"] == failures
    assert got["errors"] == {"TRANSACTION:retryable:Deadlock": failures}
    assert sum(1 for c in got["calls"] if c[0] == "rollback") == failures
    assert got["timed"] == got["transactions"] == got["committed"] == 400  # each committed once, timed once


def test_sysbench_loop_stops_at_its_deadline_and_max_units_and_raises_a_fatal_error():
    rec = Recorder(1)
    m = Measured(SqlRecording(), rec)
    client = families.get("sysbench").run_client(_sysbench_workload({"test": "oltp_read_only"}), ThreadContext(
        m=m, rng=RandomStream(42), thread=0, threads=1))
    loop = OperationLoop(client, m)
    assert loop.run(0, 10 ** 9) == 1  # a deadline already past: the first event runs, and only it
    assert loop.run(FAR, 5) == 5
    assert loop.run(time.perf_counter_ns() + 50_000_000, 10 ** 9) > 5  # about 50 ms of events
    m = Measured(SqlRecording(fail_every=30, fatal=True), Recorder(1))
    fatal = families.get("sysbench").run_client(_sysbench_workload({"test": "oltp_read_only"}), ThreadContext(
        m=m, rng=RandomStream(1), thread=0, threads=1))
    with pytest.raises(FatalError):
        OperationLoop(fatal, m).run(FAR, 10 ** 9)


def test_a_stop_during_a_failed_attempt_ends_the_loop_without_a_retry():
    b = SqlRecording(fail_every=5)
    out = _sysbench({"test": "oltp_read_only"}, b, lambda client, m, n: OperationLoop(client, m).run(FAR, 100),
                    stop=lambda: True)
    assert out["committed"] == 0  # the first event's 5th statement failed: no retry
    assert out["retries"] == 0 and [c[0] for c in b.calls].count("rollback") == 1


def test_the_warm_up_share_of_the_queries_is_taken_after_the_first_event_past_it():
    """sysbench's warm-up queries: the loop tells the client once, after the first event that
    ended past the warm-up, and the queries before that event are the warm-up's."""
    rec = Recorder(1)
    m = Measured(SqlRecording(), rec)
    w = _sysbench_workload({"test": "oltp_read_only", "warmuptime": 1})
    client = families.get("sysbench").run_client(w, ThreadContext(m=m, rng=RandomStream(5), thread=0, threads=1))
    rec.warm_until_ns = warm_end = time.perf_counter_ns() + 200_000_000  # 0.2 s of warm-up
    loop = OperationLoop(client, m)
    loop.run(warm_end, 10 ** 9)  # events until one ends past the warm-up: that one is measured
    loop.run(FAR, 20)
    client.close()
    rec.flush()
    warm, measured = rec.m.warmup["TRANSACTION"].count, rec.m.operations["TRANSACTION"].count
    assert warm > 0 and measured == 21
    reads = SysbenchClient(w, RandomStream(1)).queries_per_event()[0]
    assert rec.m.counters["queries_read_warmup"] == warm * reads
    assert rec.m.counters["queries_read"] == (warm + measured) * reads


# ---- load batches ---------------------------------------------------------------------------------

def test_load_batches_count_their_rows_whatever_the_first_batch_holds():
    """A loader's one Op changes its units with each batch: a first batch of one row (a thread's
    range starting at a table's last row) must not open the one-unit lane for the others."""
    from dbswarm.families.base import BatchLoader

    b = KvRecording()
    m = Measured(b, Recorder(1))
    sizes = iter([1, 3, 3, 3, 2])

    def batch(nxt, end):
        hi = min(end, nxt + next(sizes))
        rows = [(f"k{i}", {}) for i in range(nxt, hi)]
        return hi, len(rows), b.insert_batch, ("t", rows)
    loader = BatchLoader(ThreadContext(m=m, rng=RandomStream(1), thread=0, threads=1, saved={}), 0, 12, batch)
    loop = OperationLoop(loader, m)
    assert loop.run(FAR, 100) == 12 and loop.exhausted
    m.rec.flush()
    assert m.rec.m.operations["INSERT"].count == 12 and loader.state() == {"load_next": 12}


# ---- the random stream --------------------------------------------------------------------------

@pytest.mark.parametrize("same_process", [True, False])
def test_a_draw_taken_before_a_resume_draws_from_the_resumed_stream(same_process):
    """Clients take ``rng.random`` once, when they are built, and the worker resumes the stream
    after that: the callable they hold must draw the continued stream (a new callable on resume
    would leave them drawing from the seed again)."""
    from dbswarm.families import stream

    whole = RandomStream(11)
    expected = [whole.random() for _ in range(1000)]
    first = RandomStream(11)
    draw = first.random
    head = [draw() for _ in range(300)]  # a segment that ends inside a block of 256
    position = first.keep()
    assert position == 300 and head == expected[:300]
    if not same_process:
        stream._ended_streams.clear()
    again = RandomStream(11)
    held = again.random
    [held() for _ in range(40)]  # the client's set-up draws, from the seed
    again.resume(position)
    assert again.position == 300
    assert [held() for _ in range(700)] == expected[300:] and again.position == 1000
