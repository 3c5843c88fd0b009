"""bench/bare_client.py's YCSB tests draw dbswarm's keys with dbswarm's distribution. No
servers: the driver calls are replaced by recorders."""
import argparse
import random
import threading
import time

import pytest

from bench import bare_client as B
from dbswarm.families.generators import ScrambledZipfian
from dbswarm.families.ycsb import key_name


def _args(**kw):
    a = dict(engine="mysql", test="ycsb_c", recordcount=1000, table="usertable", fieldcount=10, fieldlength=100,
             seed=7, mysql_protocol="text")
    a.update(kw)
    return argparse.Namespace(**a)


def _run_thread(monkeypatch, a, seconds=0.05):
    """One thread's loop for ``seconds``, the driver calls recorded: [("read", key) or
    ("update", field, value, key)]."""
    calls = []

    def fake_driver(_a, _password):
        return (lambda key: calls.append(("read", key)) or 1,
                lambda field, value, key: calls.append(("update", field, value, key)) or 1)

    monkeypatch.setattr(B, "ycsb_mysql_thread", fake_driver)
    monkeypatch.setattr(B, "ycsb_pg_thread", fake_driver)
    counts, misses = [0], [0]
    go = threading.Event()
    go.set()
    B.ycsb_thread_body(a, "pw", B.YcsbKeys(a), threading.Barrier(1), go, [time.monotonic() + seconds], counts,
                       misses, 0)
    assert counts[0] == len(calls) > 100 and misses[0] == 0
    return calls


def test_ycsb_c_reads_dbswarms_keys_in_dbswarms_zipfian_order(monkeypatch):
    """The inline draw is YCSB's ScrambledZipfian over [0, recordcount) as dbswarm's generator
    makes it, from the same random stream, and the key is dbswarm's key_name of it (quoted
    bytes for MariaDB's text statement; bare bytes for PostgreSQL's parameter). (Until issue 36
    also a str for MariaDB's prepared statement: that protocol was removed with the ctypes path.)"""
    for engine, protocol, key_of in (("mysql", "text", lambda k: f"'{k}'".encode()),
                                     ("postgresql", "prepared", str.encode)):
        a = _args(engine=engine, mysql_protocol=protocol)
        calls = _run_thread(monkeypatch, a)
        assert {c[0] for c in calls} == {"read"}
        gen = ScrambledZipfian(random.Random(a.seed), 0, a.recordcount - 1)
        expected = [key_of(key_name(gen.next(), False, 1)) for _ in calls]
        assert [c[1] for c in calls] == expected


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_ycsb_a_half_updates_of_one_field_with_a_pool_window(monkeypatch, engine):
    a = _args(test="ycsb_a", engine=engine)  # MariaDB: text statements, keys quoted (issue 36: no prepared path)
    calls = _run_thread(monkeypatch, a)
    keys = {key_name(k, False, 1) for k in range(a.recordcount)}
    keys = {k.encode() for k in keys} if engine == "postgresql" else {f"'{k}'".encode() for k in keys}
    updates = [c for c in calls if c[0] == "update"]
    assert 0.4 < len(updates) / len(calls) < 0.6
    assert all(c[-1] in keys for c in calls)
    assert {c[1] for c in updates} == set(range(a.fieldcount))
    assert all(len(c[2]) == a.fieldlength and c[2].isalnum() for c in updates)


def test_ycsb_b_updates_one_operation_in_twenty(monkeypatch):
    a = _args(test="ycsb_b", engine="postgresql")
    calls = _run_thread(monkeypatch, a, seconds=0.3)
    updates = sum(c[0] == "update" for c in calls)
    assert len(calls) > 1000 and 0.03 < updates / len(calls) < 0.07, (updates, len(calls))
