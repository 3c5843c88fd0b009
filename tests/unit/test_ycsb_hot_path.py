"""The YCSB client's hot path (reads and one-field updates in one call each, through
Binding.reader / updater) against its general path: the same draws in the same order, the
same keys, fields and values, the same measurement, the stream at the same position.

The binding records what it is asked (the noop engine's answers, no database: what is
compared is the client's own choice of operations)."""
from __future__ import annotations

import pytest

from dbswarm import families
from dbswarm.bindings.base import Connection
from dbswarm.bindings.noop import NoopBinding
from dbswarm.families import ThreadContext
from dbswarm.measure import Measured, Recorder
from dbswarm.worker import ThreadRandom
from dbswarm.workloads import ycsb
from dbswarm.workloads.generators import ScrambledZipfian, Uniform

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
