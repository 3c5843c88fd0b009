"""The YCSB client's hot path (reads and one-field updates in one call each, through
Binding.reader / updater) against its general path: the same draws in the same order, the
same keys, fields and values, the same measurement, the stream at the same position.

The binding records what it is asked (the noop engine's answers, no database: what is
compared is the client's own choice of operations)."""
from __future__ import annotations

import pytest

from dbswarm.bindings.base import Connection
from dbswarm.bindings.noop import NoopBinding
from dbswarm.engine.calls import Measured
from dbswarm.engine.worker import ThreadRandom
from dbswarm.families import base as families
from dbswarm.families import ycsb
from dbswarm.families.base import ThreadContext
from dbswarm.families.generators import ScrambledZipfian, Uniform
from dbswarm.measure.recorder import Recorder

STEPS = 3000


class Recording(NoopBinding):
    """Every kv call as (operation, key, fields or values); a key ending in 7 is not found."""

    def __init__(self):
        super().__init__(Connection("noop", None))
        self.calls = []

    def read(self, table, key, fields, rows=True):
        self.calls.append(("read", table, key, fields and tuple(fields)))
        return 0 if key.endswith("7") else 1

    def update(self, table, key, values):
        self.calls.append(("update", table, key, tuple(values.items())))
        return not key.endswith("7")

    def insert(self, table, key, values):
        self.calls.append(("insert", table, key, tuple(values.items())))

    def scan(self, table, startkey, count, fields, rows=True):
        self.calls.append(("scan", table, startkey, count))
        return 1


def _run(props: dict, hot: bool, monkeypatch, steps=STEPS):
    """The client of thread 3 of 8 on seed 42: its calls, measurement and stream position."""
    with monkeypatch.context() as mp:
        if not hot:
            mp.setattr(ycsb.YcsbClient, "_counted_next_key", lambda self, expected: None)
        b = Recording()
        rec = Recorder(1)
        m = Measured(b, rec)
        fam = families.get("ycsb")
        w = fam.workload({"recordcount": 5000, "operationcount": 0, "maxexecutiontime": 60, "threads": 8, **props})
        rng = ThreadRandom(42)
        client = fam.run_client(w, ThreadContext(m=m, rng=rng, thread=3, threads=8))
        hot_read = client.client.do_read.__qualname__.startswith("YcsbClient._hot_read")
        for _ in range(steps):
            client.step()
        rec.flush()
        ops = {k: (s.count, s.not_found) for k, s in rec.m.operations.items()}
        return b.calls, ops, rng.words, rng.random(), hot_read


CASES = [
    {"preset": "c"},                                                      # zipfian reads
    {"preset": "a"},                                                      # reads and updates
    {"preset": "b", "readallfields": False},                              # one field read
    {"preset": "a", "requestdistribution": "uniform"},
    {"preset": "a", "writeallfields": True},                              # updates: general path
    {"preset": "f"},                                                      # read-modify-write beside reads
    {"preset": "c", "recordcount": 70_000, "zeropadding": 12, "insertorder": "ordered"},
]


@pytest.mark.parametrize("props", CASES, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_hot_path_does_what_the_general_path_does(props, monkeypatch):
    hot = _run(props, True, monkeypatch)
    general = _run(props, False, monkeypatch)
    assert hot[4] is True and general[4] is False  # each path was the one taken
    calls, ops, words, nxt, _ = hot
    assert calls == general[0]
    assert ops == general[1]
    assert (words, nxt) == (general[2], general[3])  # the continued stream resumes at the same draw
    assert len(calls) >= STEPS
    assert any(c[2].endswith("7") for c in calls)  # some not found: counted alike


LOOP_CASES = [
    {"preset": "c"},
    {"preset": "a"},
    {"preset": "b", "readallfields": False},
    {"preset": "a", "requestdistribution": "uniform"},
    {"readproportion": 0, "updateproportion": 1},                        # updates only
    {"preset": "c", "recordcount": 70_000, "zeropadding": 12, "insertorder": "ordered"},
]


def _client(props, b, rec):
    fam = families.get("ycsb")
    w = fam.workload({"recordcount": 5000, "operationcount": 0, "maxexecutiontime": 60, "threads": 8, **props})
    rng = ThreadRandom(42)
    return fam.run_client(w, ThreadContext(m=Measured(b, rec), rng=rng, thread=3, threads=8)), rng


@pytest.mark.parametrize("memo", ["list", "dict"])
@pytest.mark.parametrize("props", LOOP_CASES, ids=lambda p: "-".join(f"{k}={v}" for k, v in p.items()))
def test_run_for_is_step_after_step(props, memo, monkeypatch):
    """The worker's several steps per call (run_for, between two stop checks) make the same
    calls, draws and measurement as one step() per operation, whatever the calls' sizes."""
    if memo == "dict":  # the key memo of runs over KEY_LIST_MAX records
        monkeypatch.setattr(ycsb, "KEY_LIST_MAX", 1000)
    results = []
    for chunks in ([1] * STEPS, [1, 7, 500, 2, 1000, 1490]):
        b, rec = Recording(), Recorder(1)
        client, rng = _client(props, b, rec)
        assert client.run_for is not None
        far = 2 ** 62  # no deadline: max_steps decides
        for c in chunks:
            if c == 1:
                assert client.step() == 1
            else:
                assert client.run_for(far, c) == c
        rec.flush()
        results.append((b.calls, {k: (s.count, s.not_found) for k, s in rec.m.operations.items()},
                        sum(s.histogram.get_total_count() for s in rec.m.operations.values()),
                        rng.words, rng.random()))
    assert results[0] == results[1]
    assert len(results[0][0]) == STEPS and results[0][2] == STEPS
    assert any(c[2].endswith("7") for c in results[0][0])  # some not found: counted alike


def test_run_for_stops_at_its_deadline_and_at_a_failure():
    import time

    from dbswarm.errors import RETRYABLE, ErrorClass

    class Failing(Recording):
        def read(self, table, key, fields, rows=True):
            if len(self.calls) == 5:
                self.calls.append(("failed", key))
                raise RuntimeError("deadlock")
            return super().read(table, key, fields, rows)

        def classify(self, exc):
            return ErrorClass(RETRYABLE, "deadlock") if isinstance(exc, RuntimeError) else super().classify(exc)

    b, rec = Failing(), Recorder(1)
    client, rng = _client({"preset": "c"}, b, rec)
    built = rng.words  # the client's set-up draws (its value pool)
    assert client.run_for(0, 100) == 1  # a deadline passed: one step
    assert client.run_for(2 ** 62, 100) == 5  # the 5th step of this call failed: the call ends with it
    assert rec.m.errors == {"READ:retryable:deadlock": 1}
    assert client.run_for(time.perf_counter_ns() + 10**9, 50) == 50
    assert rng.words - built == 2 * 56  # a draw per step, the failed one's too


@pytest.mark.parametrize("props", [{"preset": "f"}, {"preset": "a", "writeallfields": True}, {"preset": "e"}])
def test_other_mixes_have_no_run_for(props):
    client, _ = _client(props, Recording(), Recorder(1))
    assert client.run_for is None


@pytest.mark.parametrize("props", [{"preset": "d"}, {"preset": "e"}, {"preset": "c", "requestdistribution": "latest"},
                                   {"preset": "c", "requestdistribution": "hotspot"}])
def test_workloads_with_inserts_or_other_distributions_keep_the_general_path(props, monkeypatch):
    assert _run(props, True, monkeypatch, steps=10)[4] is False


@pytest.mark.parametrize("memo", ["list", "dict"])
def test_counted_draws_are_the_generators_own(memo):
    """counted_next_key: key_of(next()) on the same stream, counting 2 words a draw, with the
    keys memoized in a list over the key numbers or in a dict."""
    for make in (lambda r: ScrambledZipfian(r, 0, 99_999), lambda r: Uniform(r, 0, 99_999),
                 lambda r: ScrambledZipfian(r, 10, 1_000_000_009)):
        a, b = ThreadRandom(7), ThreadRandom(7)
        ga, gb = make(a), make(b)
        items = ga.items if isinstance(ga, ScrambledZipfian) else ga.n
        keys = [None] * items if memo == "list" and items < 10**6 else {}
        nk = ga.counted_next_key(a, lambda k: f"k{k}", keys, [None] * ScrambledZipfian.POPULAR_ITEMS)
        got = [nk() for _ in range(20_000)]
        want = [f"k{gb.next()}" for _ in range(20_000)]
        assert got == want
        assert a.words == b.words == 40_000
        assert len(keys) <= max(items if isinstance(keys, list) else 20_000, 1)


def test_a_reconnect_rebinds_the_hot_path():
    """After Measured.reconnect the client's readers and updaters are taken again from the
    binding (they belong to its old connection)."""
    b = Recording()
    made = []
    reader, updater = b.reader, b.updater
    b.reader = lambda *a: made.append("reader") or reader(*a)
    b.updater = lambda *a: made.append("updater") or updater(*a)
    m = Measured(b, Recorder(1))
    fam = families.get("ycsb")
    w = fam.workload({"preset": "a", "recordcount": 100, "operationcount": 0, "maxexecutiontime": 60, "threads": 1})
    fam.run_client(w, ThreadContext(m=m, rng=ThreadRandom(1), thread=0, threads=1))
    assert made.count("reader") == 1 and made.count("updater") == 10
    assert m.reconnect() is True
    assert made.count("reader") == 2 and made.count("updater") == 20
    assert m.rec.m.counters["reconnects"] == 1


def test_a_duplicate_insert_moves_on_to_the_next_key():
    """An insert whose reply a lost connection cut off had committed; its retry is a duplicate
    key. The record is there, so the thread's next insert takes the next key (before: the
    same key again, a duplicate at every later insert)."""
    from dbswarm.errors import DUPLICATE, ErrorClass

    class Duplicate(Recording):
        def insert(self, table, key, values):
            super().insert(table, key, values)
            if len(self.calls) == 2:
                raise KeyError("duplicate")

        def classify(self, exc):
            return ErrorClass(DUPLICATE, "duplicate_key") if isinstance(exc, KeyError) else super().classify(exc)

    b = Duplicate()
    m = Measured(b, Recorder(1))
    fam = families.get("ycsb")
    w = fam.workload({"readproportion": 0, "updateproportion": 0, "insertproportion": 1, "recordcount": 100,
                      "operationcount": 0, "maxexecutiontime": 60, "threads": 1})
    client = fam.run_client(w, ThreadContext(m=m, rng=ThreadRandom(1), thread=0, threads=1))
    for _ in range(5):
        client.step()
    keys = [c[2] for c in b.calls]
    assert len(set(keys)) == 5, keys
    assert m.rec.m.errors == {"INSERT:duplicate:duplicate_key": 1}
    assert client.state() == {"inserted": 5}
