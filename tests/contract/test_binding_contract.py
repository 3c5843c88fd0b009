"""The binding contract: one suite, every engine (sqlite, postgresql on PostgreSQL 15,
mysql on MariaDB 10.11, mongodb on FerretDB 1.24), real servers, no mocks.

What a binding must do for the worker: CRUD with YCSB's semantics (missing key -> None /
False), ordered scans, an idempotent batch insert, duplicate keys and lost connections
classified so the one retry/reconnect policy in ``dbswarm.measure.recorder`` can act; the SQL
engines also run sysbench's statements inside real BEGIN/COMMIT transactions.
"""
from __future__ import annotations

import json
import random
import threading
import time

import pytest

from dbswarm.bindings.protocols import Multiplexing, splits_of
from dbswarm.engine.calls import Measured
from dbswarm.errors import CONNECTION, DUPLICATE, RETRYABLE, ErrorClass
from dbswarm.families.sysbench import SysbenchClient, SysbenchTables, SysbenchWorkload
from dbswarm.measure.recorder import FAILED, Recorder
from tests import measured, servers

pytestmark = pytest.mark.servers

FIELDS = 4
SQL_ENGINES = servers.with_variants("sqlite", "postgresql", "mysql")


def values(tag: str, fields=FIELDS) -> dict:
    return {f"field{i}": f"{tag}-{i}-" + "x" * 20 for i in range(fields)}


def keys_of(rows):
    return [r["ycsb_key"] for r in rows]


# ---- YCSB CRUD ---------------------------------------------------------------------------

def test_crud_semantics(make):
    b = make()
    t = make.table
    b.create_table(t, FIELDS)
    assert b.count(t) == 0
    b.insert(t, "user1", values("a"))
    b.insert(t, "user2", values("b"))
    assert b.read(t, "user1", None) == values("a")
    assert b.read(t, "user2", ["field2"]) == {"field2": values("b")["field2"]}
    assert b.read(t, "nope", None) is None
    assert b.read(t, "nope", ["field1"]) is None
    # rows=False (what the worker's YCSB operations use): found or not, nothing converted
    assert b.read(t, "user1", None, False) == 1 and b.read(t, "user2", ["field2"], False) == 1
    assert b.read(t, "nope", None, False) == 0 and b.read(t, "nope", ["field1"], False) == 0

    assert b.update(t, "user1", {"field1": "new"}) is True
    assert b.read(t, "user1", None) == {**values("a"), "field1": "new"}
    # writing the value already stored still finds the record (MySQL: CLIENT_FOUND_ROWS)
    assert b.update(t, "user1", {"field1": "new"}) is True
    assert b.update(t, "missing", {"field1": "x"}) is False
    assert b.read(t, "missing", None) is None  # update never inserts

    # the hot path's forms (Binding.reader / updater, one per table and field list, keys of
    # the binding's hot_key_type: PostgreSQL bytes): the same answers as read(rows=False) and
    # a one-field update
    k = hot_key(b)
    read_all, read_one = b.reader(t, None), b.reader(t, ["field2"])
    assert read_all(k("user1")) == 1 and read_one(k("user2")) == 1
    assert read_all(k("nope")) == 0 and read_one(k("nope")) == 0
    update_one = b.updater(t, "field3")
    assert update_one("hot", k("user2")) is True and update_one("x", k("missing")) is False
    assert b.read(t, "user2", None) == {**values("b"), "field3": "hot"}

    assert b.delete(t, "user2") is True
    assert b.delete(t, "user2") is False
    assert b.read(t, "user2", None) is None
    assert b.count(t) == 1

    # create_table drops what was there
    b.create_table(t, FIELDS)
    assert b.count(t) == 0


def hot_key(b):
    """A key as the binding's reader and updater functions take it (hot_key_type)."""
    assert b.hot_key_type in (str, bytes)
    return (lambda key: key.encode()) if b.hot_key_type is bytes else (lambda key: key)


TRICKY = ["it's", 'say "hi"', "back\\slash \\' end\\", "100% %s %d %(x)s", "line\nbreak\ttab\r",
          "héllo ü ß", "", " padded  ", "-- ; DROP TABLE x; /*", "x" * 5000]


@pytest.mark.parametrize("engine", SQL_ENGINES, indirect=True)
def test_values_reach_the_server_unchanged(make):
    # the drivers' parameter formatting (mysqlclient's is dbswarm's own for str and int):
    # quotes, backslashes, format characters, control and non-ASCII characters (Latin-1 ones:
    # MariaDB's default table character set), long values
    b = make()
    t = make.table
    b.create_table(t, 1)
    for i, v in enumerate(TRICKY):
        key = f"k{i}:{v[:40]}"
        b.insert(t, key, {"field0": v})
        assert b.read(t, key, None) == {"field0": v}, v
        assert b.update(t, key, {"field0": v[::-1]}) is True
        assert b.read(t, key, ["field0"]) == {"field0": v[::-1]}
        # the hot path escapes and encodes as the session does
        hk = hot_key(b)(key)
        assert b.reader(t, None)(hk) == 1 and b.reader(t, ["field0"])(hk) == 1
        assert b.updater(t, "field0")(v + "!", hk) is True
        assert b.read(t, key, None) == {"field0": v + "!"}
    assert b.count(t) == len(TRICKY)


@pytest.mark.parametrize("engine", servers.with_variants("mysql"), indirect=True)
def test_parameters_of_every_type_keep_their_value(make):
    """mysqlclient formats one or two int parameters with a cached %d template (the hot
    path); a float, a bool, a str or a third parameter must take the general path, and a
    literal "%%s" must stay a literal: each round-trips its exact value."""
    b = make()
    sql = b.prepare("SELECT %s, %s")
    one = lambda stmt, params: b.fetchall(stmt, params)[0]  # fetchall: it takes the hot path
    assert one(sql, (7, -3)) == one(sql, (7, -3))  # the second call: the cached template
    cases = [((7, -3), ("7", "-3")), ((2.75, 1), ("2.75", "1")), ((1, 2.5), ("1", "2.5")),
             ((True, 5), ("1", "5")), ((5, "x'y"), ("5", "x'y")), ((2**62, 0), (str(2**62), "0"))]
    for params, want in cases:
        got = tuple(str(v.decode() if isinstance(v, bytes) else v) for v in one(sql, params))
        assert got == want, params
    three = b.prepare("SELECT %s, %s, %s")
    assert [str(v) for v in one(three, (1, 2, 3))] == ["1", "2", "3"]
    literal = b.prepare("SELECT '100%%s', %s")
    for _ in range(2):
        first, second = one(literal, (4,))
        assert (first.decode() if isinstance(first, bytes) else first) == "100%s" and str(second) == "4"
    assert b.fetchcount(b.prepare("SELECT 1 FROM DUAL WHERE %s < %s"), (1, 2)) == 1
    assert b.fetchcount(b.prepare("SELECT 1 FROM DUAL WHERE %s < %s"), (1.5, 1)) == 0


def test_scan_order_and_limit(make):
    b = make()
    t = make.table
    b.create_table(t, FIELDS)
    keys = [f"user{n:04d}" for n in range(0, 200, 2)]  # user0000, user0002, ... user0198
    shuffled = keys[:]
    random.Random(1).shuffle(shuffled)
    b.insert_batch(t, [(k, values(k)) for k in shuffled])

    rows = b.scan(t, "user0050", 10, None)
    assert keys_of(rows) == keys[25:35]
    assert {k: v for k, v in rows[0].items() if k != "ycsb_key"} == values("user0050")
    # a start key that does not exist: the next ones, in order
    assert keys_of(b.scan(t, "user0051", 3, None)) == ["user0052", "user0054", "user0056"]
    # projection
    rows = b.scan(t, "user0000", 2, ["field3"])
    assert rows == [{"ycsb_key": "user0000", "field3": values("user0000")["field3"]},
                    {"ycsb_key": "user0002", "field3": values("user0002")["field3"]}]
    # the end of the key space: fewer than asked
    assert keys_of(b.scan(t, "user0195", 50, None)) == ["user0196", "user0198"]
    assert b.scan(t, "zzz", 5, None) == []
    # rows=False: only how many records the same scan returned
    assert b.scan(t, "user0050", 10, None, False) == 10 and b.scan(t, "user0000", 2, ["field3"], False) == 2
    assert b.scan(t, "user0195", 50, None, False) == 2 and b.scan(t, "zzz", 5, None, False) == 0


def test_insert_batch_is_idempotent(make):
    b = make()
    t = make.table
    b.create_table(t, FIELDS)
    b.insert_batch(t, [(f"user{n}", values("first")) for n in range(50)])
    # a resumed load replays a batch that partly landed: no error, nothing doubled or overwritten
    b.insert_batch(t, [(f"user{n}", values("second")) for n in range(25, 75)])
    b.insert_batch(t, [(f"user{n}", values("second")) for n in range(25, 75)])
    b.insert_batch(t, [])
    assert b.count(t) == 75
    assert b.read(t, "user30", None) == values("first")
    assert b.read(t, "user70", None) == values("second")


def test_duplicate_insert_is_classified_duplicate(make):
    b = make()
    t = make.table
    b.create_table(t, FIELDS)
    b.insert(t, "user1", values("a"))
    with pytest.raises(Exception) as err:
        b.insert(t, "user1", values("b"))
    assert b.classify(err.value).kind == DUPLICATE
    assert b.read(t, "user1", None) == values("a")
    # and the binding goes on working on the same connection
    b.insert(t, "user2", values("b"))
    assert b.count(t) == 2


def test_describe_records_settings_without_secrets(make):
    b = make()
    d = b.describe()
    assert isinstance(d, dict) and d
    text = json.dumps(d)
    if make.password:
        assert make.password not in text
    if make.engine == "mysql":  # the driver the target's options chose
        assert d["driver"].startswith({"mysql": "mysqlclient ", "mysql-pymysql": "PyMySQL ", "mysql-text": "mysqlclient ",
                                        "mysql-connector": "mysql-connector-python "}[make.variant]), d
        # mysqlclient prepares its per-operation statements on the server (the binary protocol on its
        # connection: bindings/mysql_binary.py) unless options.prepare is false; the other drivers send text
        assert d["prepared_statements"].startswith("server-side" if make.variant == "mysql" else "client-side"), d
    if make.engine == "mongodb":
        assert d["write_concern"] == {"w": 1, "j": False}
        assert d["read_preference"] == "primary"
    # describe() also works before connect() (the worker records it that way)
    assert make(connect=False).describe()


# ---- connection loss, reconnect -----------------------------------------------------------

def _kill_session(make, b, env):
    """Cut binding b's connection from the server side."""
    if make.engine == "sqlite":
        b.db.close()  # the closest thing an embedded database has
    elif make.engine == "postgresql":
        with servers.pg_admin(env) as admin:
            assert admin.execute("SELECT pg_terminate_backend(%s)", (b.db.info.backend_pid,)).fetchone()[0]
    elif make.engine == "mysql":
        admin = servers.mysql_admin(env)
        try:
            admin.cursor().execute(f"KILL CONNECTION {int(b.db.thread_id())}")
        finally:
            admin.close()
    else:
        raise AssertionError(make.engine)


@pytest.mark.parametrize("engine", SQL_ENGINES, indirect=True)
def test_killed_connection_is_classified_and_reconnected(make, request):
    env = request.getfixturevalue("server_env") if make.engine != "sqlite" else None
    b = make()
    t = make.table
    b.create_table(t, FIELDS)
    b.insert(t, "user1", values("a"))
    _kill_session(make, b, env)
    time.sleep(0.2)
    m = Measured(b, Recorder())
    # the first call after the kill fails, is classified as a connection error and reconnects
    assert measured.call(m, "READ", b.read, t, "user1", None) is FAILED
    (key, count), = m.rec.m.errors.items()
    assert key.startswith("READ:connection:") and count == 1, m.rec.m.errors
    assert m.rec.m.counters.get("reconnects") == 1
    # the next one works on the new connection
    assert measured.call(m, "READ", b.read, t, "user1", None) == values("a")
    assert measured.call(m, "UPDATE", b.update, t, "user1", {"field0": "z"}) is True


@pytest.mark.parametrize("engine", SQL_ENGINES, indirect=True)
def test_ycsb_goes_on_after_a_killed_connection(make, request):
    """The YCSB client's readers and updaters belong to a connection: after it is cut, the
    failed operation is counted once, Measured reconnects, and the client's readers and
    updaters run on the new connection (taken again through Measured.on_reconnect), every
    record found."""
    from dbswarm.engine.loop import OperationLoop
    from dbswarm.families import base as families
    from dbswarm.families.base import ThreadContext
    from dbswarm.families.stream import RandomStream
    from dbswarm.families.ycsb import key_name
    env = request.getfixturevalue("server_env") if make.engine != "sqlite" else None
    b = make()
    t = make.table
    b.create_table(t, 10)
    for k in range(50):
        b.insert(t, key_name(k, False, 1), values(str(k), 10))
    m = Measured(b, Recorder())
    fam = families.get("ycsb")
    w = fam.workload({"preset": "a", "table": t, "recordcount": 50, "operationcount": 0,
                      "maxexecutiontime": 60, "threads": 1})
    loop = OperationLoop(fam.run_client(w, ThreadContext(m=m, rng=RandomStream(3), thread=0, threads=1)), m)
    assert loop.run(2 ** 62, 20) == 20
    assert not m.rec.m.errors
    _kill_session(make, b, env)
    time.sleep(0.2)
    done = 0
    while done < 200:
        done += loop.run(2 ** 62, 200 - done)  # a failure ends a call: the next goes on
    m.rec.flush()
    (key, count), = m.rec.m.errors.items()
    assert key.split(":")[1] == "connection" and count == 1, m.rec.m.errors
    assert m.rec.m.counters.get("reconnects") == 1
    ops = m.rec.m.operations
    assert ops["READ"].count + ops["UPDATE"].count == 219
    assert ops["READ"].not_found == 0 and ops["UPDATE"].not_found == 0


@pytest.mark.parametrize("engine", ("postgresql",), indirect=True)
def test_postgresql_hot_path_takes_bytes_keys_prepared_or_not(make):
    """PostgreSQL's readers and updaters take the keys as libpq sends them (bytes, memoized
    encoded by the YCSB client); without prepared statements (options.prepare: false) they
    go through the session with the key decoded, with the same answers."""
    t = make.table
    for prepare in (True, False):
        b = make(prepare=prepare)
        assert b.hot_key_type is bytes
        b.create_table(t, 2)
        b.insert(t, "user1", {"field0": "a", "field1": "b"})
        assert b.reader(t, None)(b"user1") == 1 and b.reader(t, ["field1"])(b"nope") == 0
        assert b.updater(t, "field1")("c", b"user1") is True and b.updater(t, "field0")("x", b"nope") is False
        assert b.read(t, "user1", None) == {"field0": "a", "field1": "c"}


def test_mongodb_server_restart_is_classified_and_reconnected(targets, tmp_path):
    """FerretDB restarted under a running client: operations during the outage fail as
    connection errors, the binding reconnects, and work goes on. (pymongo retries a read
    once by itself, which hides a sub-second restart: retryReads=false shows the loss.)"""
    from tests.contract.conftest import Factory
    t = targets["mongodb"]
    url = t["url"] + ("&" if "?" in t["url"] else "?") + "retryReads=false&retryWrites=false"
    f = Factory("mongodb", dict(t, url=url), tmp_path)
    try:
        b = f(server_selection_timeout_ms=300)
        t = f.table
        b.create_table(t, FIELDS)
        b.insert(t, "user1", values("a"))
        m = Measured(b, Recorder())
        done = threading.Event()
        thread = threading.Thread(target=lambda: (servers.restart("ferretdb"), done.set()), daemon=True)
        thread.start()
        ok = 0
        deadline = time.time() + 60
        while not done.is_set() and time.time() < deadline:
            if measured.call(m, "READ", b.read, t, "user1", None) is not FAILED:
                ok += 1
            time.sleep(0.01)
        thread.join(60)
        assert done.is_set(), "restart-ferretdb did not finish"
        # after the restart: it works (reconnecting if the last call failed)
        for _ in range(50):
            r = measured.call(m, "READ", b.read, t, "user1", None)
            if r is not FAILED:
                break
        assert r == values("a")
        errors = m.rec.m.errors
        assert errors and all(k.startswith("READ:connection:") for k in errors), errors
        assert m.rec.m.counters.get("reconnects", 0) >= 1
        b.drop_table(t)
    finally:
        f.close()


@pytest.mark.parametrize("engine", servers.with_variants(*servers.SERVER_ENGINES), indirect=True)
def test_refused_connection_is_classified_connection(make):
    """Nothing listens on the port: connect() raises, classify() says CONNECTION."""
    import socket
    s = socket.socket()
    s.bind(("127.0.0.1", 0))
    port = s.getsockname()[1]
    s.close()  # a port nobody listens on
    url = make.target["url"]
    host_port = url.split("@")[-1].split("/")[0] if "@" in url else url.split("://")[1].split("/")[0]
    dead = url.replace(host_port, f"127.0.0.1:{port}")
    make.target = dict(make.target, url=dead)
    b = make(connect=False, server_selection_timeout_ms=300, connect_timeout=2)
    with pytest.raises(Exception) as err:
        b.connect()
    assert b.classify(err.value).kind == CONNECTION, repr(err.value)
    if make.password:
        assert make.password not in str(err.value)


# ---- lock conflicts ------------------------------------------------------------------------

def _two_way_deadlock(b1, b2, t):
    """b1 locks user1, b2 locks user2, then each wants the other's: one of them is chosen
    as the deadlock victim. Returns the victim's exception."""
    b1.begin()
    b1.update(t, "user1", {"field0": "b1"})
    b2.begin()
    b2.update(t, "user2", {"field0": "b2"})
    caught = {}

    def other():
        try:
            b1.update(t, "user2", {"field0": "b1"})
        except Exception as exc:
            caught["b1"] = exc

    th = threading.Thread(target=other)
    th.start()
    time.sleep(0.3)  # b1 now waits for b2's lock
    try:
        b2.update(t, "user1", {"field0": "b2"})
    except Exception as exc:
        caught["b2"] = exc
    th.join(30)
    assert not th.is_alive()
    assert len(caught) == 1, caught
    for b in (b1, b2):
        b.rollback()
    return next(iter(caught.values()))


@pytest.mark.parametrize("engine", servers.with_variants("postgresql", "mysql"), indirect=True)
def test_real_deadlock_is_retryable(make):
    b1, b2 = make(), make()
    t = make.table
    b1.create_table(t, FIELDS)
    b1.insert_batch(t, [("user1", values("a")), ("user2", values("b"))])
    exc = _two_way_deadlock(b1, b2, t)
    cls = b1.classify(exc)
    assert (cls.kind, cls.name) == (RETRYABLE, "deadlock"), repr(exc)
    # both connections are usable after the rollback
    assert b1.read(t, "user1", None) == values("a") and b2.read(t, "user2", None) == values("b")


@pytest.mark.parametrize("engine", servers.with_variants("postgresql", "mysql", "sqlite"), indirect=True)
def test_lock_wait_timeout_is_retryable(make):
    t = make.table
    if make.engine == "sqlite":
        b1, b2 = make(), make(busy_timeout_ms=50)
    else:
        b1, b2 = make(), make()
    b1.create_table(t, FIELDS)
    b1.insert(t, "user1", values("a"))
    if make.engine == "postgresql":
        b2.execute("SET lock_timeout = '200ms'")
    elif make.engine == "mysql":
        b2.execute("SET SESSION innodb_lock_wait_timeout = 1")
    b1.begin()
    b1.update(t, "user1", {"field0": "b1"})
    with pytest.raises(Exception) as err:
        b2.begin()  # sqlite: BEGIN IMMEDIATE already waits for the write lock
        b2.update(t, "user1", {"field0": "b2"})
    cls = b2.classify(err.value)
    assert cls.kind == RETRYABLE, repr(err.value)
    assert cls.name == {"postgresql": "lock_not_available", "mysql": "lock_wait_timeout",
                        "sqlite": "database_locked"}[make.engine]
    b2.rollback()
    b1.rollback()
    assert b2.update(t, "user1", {"field0": "b2"}) is True


@pytest.mark.parametrize("engine", ("postgresql",), indirect=True)
def test_serialization_failure_is_retryable(make):
    b1, b2 = make(isolation_level="repeatable read"), make()
    t = make.table
    b1.create_table(t, FIELDS)
    b1.insert(t, "user1", values("a"))
    b1.begin()
    assert b1.read(t, "user1", None) == values("a")  # the snapshot is taken here
    assert b2.update(t, "user1", {"field0": "b2"}) is True  # autocommit: committed at once
    with pytest.raises(Exception) as err:
        b1.update(t, "user1", {"field0": "b1"})
    assert b1.classify(err.value).kind == RETRYABLE and b1.classify(err.value).name == "serialization_failure"
    b1.rollback()
    assert b1.describe()["isolation_level"] == "REPEATABLE READ"


# ---- sysbench ------------------------------------------------------------------------------

def _sb_rows(n, first=1):
    rng = random.Random(7)
    return [(i, rng.randint(1, 1000), f"c-{i:03d}-" + "9" * 100, f"pad-{i}") for i in range(first, first + n)]


@pytest.mark.parametrize("engine", SQL_ENGINES, indirect=True)
def test_sysbench_schema_load_and_statements(make):
    b = make()
    s = SysbenchTables(b)  # sysbench's statements, in this engine's dialect, on b's session
    n = make.sb_no
    s.create(n)
    rows = _sb_rows(300)
    s.load(n, rows[:200])
    s.load(n, rows[100:])  # overlapping: idempotent
    assert s.count(n) == 300
    s.create_index(n)
    by_id = {r[0]: r for r in rows}

    assert [r[0].rstrip() for r in s.point_select(n, 5)] == [by_id[5][2]]  # CHAR(120): padded
    assert list(s.point_select(n, 10_000)) == []
    got = [r[0].rstrip() for r in s.simple_range(n, 11, 110)]
    assert sorted(got) == sorted(by_id[i][2] for i in range(11, 111)) and len(got) == 100
    assert int(s.sum_range(n, 11, 110)[0][0]) == sum(by_id[i][1] for i in range(11, 111))
    ordered = [r[0].rstrip() for r in s.order_range(n, 11, 110)]
    assert ordered == sorted(by_id[i][2] for i in range(11, 111))
    distinct = [r[0].rstrip() for r in s.distinct_range(n, 11, 110)]
    assert distinct == sorted({by_id[i][2] for i in range(11, 111)})
    # rows=False (what the worker's events use): the same queries, only the row counts
    assert s.point_select(n, 5, False) == 1 and s.point_select(n, 10_000, False) == 0
    assert s.simple_range(n, 11, 110, False) == 100 and s.sum_range(n, 11, 110, False) == 1
    assert s.order_range(n, 11, 110, False) == 100
    assert s.distinct_range(n, 11, 110, False) == len(distinct)
    # the events' form: one count(params) per statement and table (Binding.query_counter)
    for kind, params, want in (("point_select", (5,), 1), ("point_select", (10_000,), 0),
                               ("simple_range", (11, 110), 100), ("sum_range", (11, 110), 1),
                               ("order_range", (11, 110), 100), ("distinct_range", (11, 110), len(distinct))):
        assert s.counters[kind][n](params) == want, kind

    assert s.index_update(n, 20) == 1
    assert int(s.sum_range(n, 20, 20)[0][0]) == by_id[20][1] + 1
    assert s.non_index_update(n, 21, "new-c") == 1
    assert [r[0].rstrip() for r in s.point_select(n, 21)] == ["new-c"]
    assert s.delete(n, 22) == 1
    assert s.delete(n, 22) == 0
    assert s.insert(n, 22, 5, "again", "pad") == 1
    with pytest.raises(Exception) as err:
        s.insert(n, 22, 5, "again", "pad")
    assert b.classify(err.value).kind == DUPLICATE
    assert s.count(n) == 300


@pytest.mark.parametrize("engine", SQL_ENGINES, indirect=True)
def test_sysbench_transactions_are_real(make):
    """BEGIN ... ROLLBACK undoes, BEGIN ... COMMIT publishes (seen by another connection
    only after the COMMIT)."""
    b, other = make(), make()
    s = SysbenchTables(b)
    n = make.sb_no
    s.create(n)
    s.load(n, _sb_rows(10))

    def c_of(conn, id_):
        return [r[0].rstrip() for r in SysbenchTables(conn).point_select(n, id_)]

    before = c_of(b, 3)
    b.begin()
    s.non_index_update(n, 3, "rolled-back")
    s.delete(n, 4)
    b.rollback()
    assert c_of(b, 3) == before and s.count(n) == 10

    b.begin()
    s.non_index_update(n, 3, "committed")
    assert c_of(b, 3) == ["committed"]
    assert c_of(other, 3) == before  # not yet visible
    b.commit()
    assert c_of(other, 3) == ["committed"]


@pytest.mark.parametrize("engine", SQL_ENGINES, indirect=True)
def test_sysbench_event_counts_queries_like_sysbench(make):
    """One oltp_read_write event through the worker's wrapper: 14 reads, 4 writes, 2 other,
    and the table keeps its row count (DELETE + INSERT of the same id)."""
    b = make()
    n = make.sb_no
    w = SysbenchWorkload(tables=1, table_size=300, threads=1)
    s = SysbenchTables(b)
    s.create(n)
    s.load(n, _sb_rows(300))
    s.create_index(n)
    s.table_name = lambda table_no: f"sbtest{n}"  # the event names table 1: this test's sbtest<N>

    m = Measured(b, Recorder())
    client = SysbenchClient(w, random.Random(3))
    q = [0, 0, 0]
    for _ in range(20):
        assert measured.event(m, "TRANSACTION", client.body, s, q)
    assert q == [14 * 20, 4 * 20, 2 * 20]
    assert m.rec.measurement().operations["TRANSACTION"].count == 20
    assert m.rec.m.errors == {}
    assert s.count(n) == 300


@pytest.mark.parametrize("engine", servers.with_variants("postgresql", "mysql"), indirect=True)
def test_sysbench_events_go_on_after_a_killed_connection(make, request):
    """The events' selects run through count functions of the connection (query_counter):
    after it is cut, the event fails once as a connection error, Measured reconnects, the
    functions are taken again (SysbenchTables.reset_counters) and the event is retried on
    the new connection; every later event commits and reads its rows."""
    env = request.getfixturevalue("server_env")
    b = make()
    n = make.sb_no
    w = SysbenchWorkload(test="oltp_read_only", tables=1, table_size=300, threads=1)
    s = SysbenchTables(b)
    s.create(n)
    s.load(n, _sb_rows(300))
    s.table_name = lambda table_no: f"sbtest{n}"
    m = Measured(b, Recorder())
    m.on_reconnect.append(s.reset_counters)
    client = SysbenchClient(w, random.Random(5))
    q = [0, 0, 0]
    for _ in range(3):
        assert measured.event(m, "TRANSACTION", client.body, s, q)
    old = s.counters["point_select"][1]
    _kill_session(make, b, env)
    time.sleep(0.2)
    for _ in range(10):
        assert measured.event(m, "TRANSACTION", client.body, s, q)
    (key, count), = m.rec.m.errors.items()
    assert key.split(":")[1] == "connection" and count == 1, m.rec.m.errors
    assert m.rec.m.counters.get("reconnects") == 1 and m.rec.m.counters.get("retries") == 1
    assert s.counters["point_select"][1] is not old
    assert m.rec.measurement().operations["TRANSACTION"].count == 13
    assert s.counters["simple_range"][1]((1, 100)) == 100


@pytest.mark.parametrize("engine", servers.with_variants("postgresql", "mysql"), indirect=True)
def test_sysbench_index_creation_is_idempotent(make):
    s = SysbenchTables(make())
    n = make.sb_no
    s.create(n)
    s.create_index(n)
    s.create_index(n)  # a resumed campaign builds it again: no error, and no second index
    b, table = s.b, s.table_name(n)
    if b.dialect == "postgresql":
        rows = b.fetchall(b.prepare("SELECT indexname, indexdef FROM pg_indexes WHERE tablename = %s"), (table,))
        names = [str(name) for name, definition in rows if str(definition).endswith("(k)")]
    else:
        names = [str(r[0]) for r in b.fetchall(b.prepare(
            "SELECT DISTINCT index_name FROM information_schema.statistics WHERE table_schema = DATABASE() "
            "AND table_name = %s AND column_name = 'k'"), (table,))]
    assert names == [f"k_{n}"], names


# ---- the server's connection room (engine.connection_room) ----------------------------------

def test_connection_room_counts_the_limits_and_another_connection(make):
    """Every driver of an engine reads the same room: SQLite and MongoDB state no limit; the
    SQL servers name each limit with its value and the connections open besides this one, and
    a connection opened meanwhile is one less free."""
    b = make()
    room = b.connection_room()
    if make.engine in ("sqlite", "mongodb"):
        assert room is None
        return
    limits = room["limits"]
    assert limits and all(isinstance(lim["name"], str) and type(lim["value"]) is int and type(lim["in_use"]) is int
                          for lim in limits), limits
    assert limits[0]["name"].startswith("max_connections") and limits[0]["value"] >= 10, limits
    assert room["free"] == min(lim["value"] - lim["in_use"] for lim in limits) > 0, room
    other = make()
    try:
        again = b.connection_room()
    finally:
        other.close()
    # others (a server's own pool, FerretDB's) may come and go meanwhile: at least ours is counted
    assert again["limits"][0]["in_use"] >= 1, again
    assert again["free"] <= room["free"] - 1 or again["limits"][0]["in_use"] > limits[0]["in_use"], (room, again)


# ---- engine specifics ----------------------------------------------------------------------

@pytest.mark.parametrize("engine", ("mongodb",), indirect=True)
def test_mongodb_sharding_request_is_reported_when_unsupported(make):
    b = make(sharded_cluster=True, initial_chunks=8)
    b.create_table(make.table, FIELDS)
    prep = b.describe()["cluster_preparation"]
    sharding = prep["sharding"]
    assert sharding["requested"]["key"] == {"_id": "hashed"}
    assert sharding["requested"]["numInitialChunks"] == 8
    if "ferretdb_version" in b.describe():
        # FerretDB has no sharding commands: tolerated, and said so
        assert sharding["status"].startswith("skipped")
        assert "CommandNotFound" in sharding["enableSharding"]
    # the collection is usable either way
    b.insert(make.table, "user1", values("a"))
    assert b.read(make.table, "user1", None) == values("a")


@pytest.mark.parametrize("engine", ("mongodb",), indirect=True)
def test_mongodb_ferretdb_id_index_is_created(make, server_env):
    b = make()
    b.create_table(make.table, FIELDS)
    prep = b.describe()["cluster_preparation"]
    assert "dbswarm_id_gin_" in prep["ferretdb_index"]["index"]
    import psycopg
    with psycopg.connect(servers.ferretdb_backend_url(server_env), autocommit=True) as pg:
        rows = pg.execute("SELECT indexdef FROM pg_indexes WHERE schemaname = %s AND indexname LIKE "
                          "'dbswarm_id_gin_%%'", (b.describe()["database"],)).fetchall()
    assert any("jsonb_path_ops" in r[0] for r in rows)


@pytest.mark.parametrize("engine", ("mongodb",), indirect=True)
def test_mongodb_write_concern_from_url_and_options(make):
    base = make.target["url"]
    sep = "&" if "?" in base else "?"
    make.target = dict(make.target, url=base + sep + "w=majority&journal=true&readPreference=secondaryPreferred")
    d = make(connect=False).describe()
    assert d["write_concern"] == {"w": "majority", "j": True}
    assert d["read_preference"] == "secondaryPreferred"
    d = make(connect=False, write_concern={"w": 0}, read_preference="nearest").describe()
    assert d["write_concern"] == {"w": 0, "j": True} and d["read_preference"] == "nearest"
    # w: 0 (unacknowledged) against the server
    b = make(write_concern={"w": 0, "j": False}, read_preference="primary")
    if "ferretdb_version" in b.describe():
        # FerretDB 1.24 answers unacknowledged writes (and w:0 commands such as drop)
        # anyway; pymongo then reads that stale reply for its next request: the stream is
        # out of step. dbswarm classifies it as a lost connection (reconnect), and
        # docs/targets.md says w: 0 is unusable there.
        with pytest.raises(Exception) as err:
            b.create_table(make.table, FIELDS)
            b.insert(make.table, "user1", values("a"))
            b.read(make.table, "user1", None)
        assert b.classify(err.value) == ErrorClass(CONNECTION, "protocol_error"), repr(err.value)
        return
    b.create_table(make.table, FIELDS)
    b.insert(make.table, "user1", values("a"))
    assert b.update(make.table, "user1", {"field0": "x"}) is True
    deadline = time.time() + 5
    while b.read(make.table, "user1", ["field0"]) != {"field0": "x"} and time.time() < deadline:
        time.sleep(0.05)
    assert b.read(make.table, "user1", ["field0"]) == {"field0": "x"}


@pytest.mark.parametrize("engine", ("postgresql", "mysql"), indirect=True)
def test_sysbench_statements_are_prepared_before_the_first_event(make):
    """A sysbench client thread prepares all its statements on the server while it sets up
    (sysbench's thread_init: SysbenchTables.prepare_all -> prepare_now), so that none is
    prepared inside the measured window; the first event then runs on them. MariaDB (since
    issue 36: text statements on every driver) prepares nothing, before or in the window."""
    b = make()
    s = SysbenchTables(b)
    n = make.sb_no
    s.create(n)
    kinds = ["point_select", "simple_range", "sum_range", "order_range", "distinct_range"]
    if make.engine == "postgresql":
        def prepared():
            return b.fetchone("SELECT count(*) FROM pg_prepared_statements")[0]
    else:  # the session's COM_STMT_PREPARE and COM_STMT_EXECUTE (the binary protocol's commands)
        def prepared():
            return int(b.fetchone("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'")[1])

        def executed():
            return int(b.fetchone("SHOW SESSION STATUS LIKE 'Com_stmt_execute'")[1])
        executions = executed()
    before = prepared()
    for kind in kinds:
        assert b.prepare_now(s.sql(kind, n)) is (make.engine == "postgresql")
    after = prepared()
    assert after - before == (len(kinds) if make.engine == "postgresql" else 0)
    assert s.point_select(n, 1, False) == 0 and s.simple_range(n, 1, 50, False) == 0
    assert prepared() == after  # the events ran on the statements prepared before (MariaDB: none)
    if make.engine == "mysql":
        assert executed() - executions == 0  # text statements: no COM_STMT_EXECUTE
    s.prepare_all(kinds, 2)  # best effort: a table that does not exist here ends the pass quietly
    s.drop(n)


@pytest.mark.parametrize("engine", ("postgresql", "mysql"), indirect=True)
def test_sysbench_calls_are_taken_at_set_up_and_the_events_use_them(make):
    """A sysbench client thread takes every statement's call (the session's query_counter /
    statement_runner, BEGIN / COMMIT) while it sets up (SysbenchTables.take_calls), not at
    its first use in the measured window, where making them set off the collector's full
    passes; the events then run on those very calls, preparing nothing more. Tables that do
    not exist (numbers below this test's own) are taken quietly, their error left to their use."""
    b = make()
    s = SysbenchTables(b)
    # a table number of its own below 100 (no campaign of the suite has 10 tables): take_calls
    # takes every table's calls up to it, a round trip each for the missing ones (sb_no's
    # 900-9,900 tables took 60-200 s under load)
    n = 10 + make.sb_no % 90
    s.create(n)
    try:
        selects, writes = ["point_select", "sum_range"], ["index_update", "non_index_update"]
        for kind in selects + writes:  # prepare_all's work on this table (it stops at the first missing one)
            b.prepare_now(s.sql(kind, n))
        s.take_calls(selects + writes, n, True)
        taken = {k: s.counters[k][n] for k in selects} | {k: s.runners[k][n] for k in writes}
        assert all(len(s.counters[k]) == n for k in selects) and all(len(s.runners[k]) == n for k in writes)
        assert not any(s.runners[k] for k in selects) and not any(s.counters[k] for k in writes)
        begin, commit = s.transaction(True)
        if make.engine == "postgresql":
            def prepared():
                return b.fetchone("SELECT count(*) FROM pg_prepared_statements")[0]
            before = prepared()
        begin()
        assert s.counters["point_select"][n]((1,)) == 0 and s.runners["index_update"][n]((1,)) == 0
        commit()
        assert {k: s.counters[k][n] for k in selects} | {k: s.runners[k][n] for k in writes} == taken
        assert s.transaction(True) == (begin, commit)
        if make.engine == "postgresql":
            assert prepared() == before  # prepared at set-up, not at the first event
    finally:
        s.drop(n)


# ---- split calls (engine.mux) --------------------------------------------------------------

def _fileno(b):
    """The session's socket where its engine multiplexes (bindings.protocols.Multiplexing)."""
    return b.fileno() if isinstance(b, Multiplexing) else None


def _has_split(b, call) -> bool:
    splits = splits_of(b)
    return splits is not None and call in splits


def _split_call(b, call, *args):
    """``call``'s split form (the binding's ``splits``) driven by hand as the multiplexer
    drives it: ``send``, then ``finish`` each time the session's socket is readable, until it
    is not PENDING."""
    import select

    from dbswarm.bindings.base import PENDING
    send, finish = b.splits[call]
    send(*args)
    fd = b.fileno()
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        select.select([fd], [], [], 1.0)
        result = finish()
        if result is not PENDING:
            return result
    raise AssertionError("no answer within 10 s")


@pytest.mark.parametrize("engine", SQL_ENGINES, indirect=True)
def test_sysbench_calls_split_as_they_block(make):
    """Where a session offers its socket (``fileno``), every call a sysbench event makes
    (``query_counter``, ``statement_runner``, ``transaction_calls``) has a split form (``send`` /
    ``finish``) that give what the blocking call gives, its errors included, inside a real
    transaction; the kv reader and updater too. Elsewhere (SQLite, PyMySQL, MySQL
    Connector/Python) the calls block, and the multiplexer is not used."""
    b, other = make(), make()
    s = SysbenchTables(b)
    n = make.sb_no
    s.create(n)
    s.load(n, _sb_rows(50))
    calls = [s.counters["point_select"][n], s.counters["simple_range"][n], s.runners["index_update"][n],
             *s.transaction(True)]
    if _fileno(b) is None:
        assert make.variant in ("sqlite", "mysql-pymysql", "mysql-connector"), make.variant
        assert not any(_has_split(b, c) for c in calls)
        return
    select_, range_, update = calls[:3]
    begin, commit = s.transaction(True)
    assert _split_call(b, select_, (5,)) == select_((5,)) == 1
    assert _split_call(b, select_, (10_000,)) == 0
    assert _split_call(b, range_, (11, 40)) == range_((11, 40)) == 30
    _split_call(b, begin)
    assert b.in_transaction() or make.engine == "mysql"  # (MariaDB's binding does not track it)
    assert _split_call(b, update, (20,)) == 1 and _split_call(b, update, (10_000,)) == 0
    insert, delete = s.runners["insert"][n], s.runners["delete"][n]
    assert _split_call(b, delete, (21,)) == 1
    assert _split_call(b, insert, (21, 7, "split-c", "split-pad")) == 1
    with pytest.raises(Exception) as err:  # an error answer is raised by finish, classified as the blocking call's
        _split_call(b, insert, (22, 7, "dup", "dup"))
    assert b.classify(err.value).kind == DUPLICATE
    b.rollback()
    assert SysbenchTables(other).point_select(n, 21, False) == 1  # rolled back: row 21 as loaded
    assert [r[0].rstrip() for r in SysbenchTables(other).point_select(n, 21)] == [_sb_rows(50)[20][2]]
    _split_call(b, begin)
    assert _split_call(b, s.runners["non_index_update"][n], ("split-committed", 30)) == 1
    _split_call(b, commit)
    assert [r[0].rstrip() for r in SysbenchTables(other).point_select(n, 30)] == ["split-committed"]
    # the session goes on with blocking calls after split ones
    assert select_((30,)) == 1 and s.count(n) == 50
    s.drop(n)


@pytest.mark.parametrize("engine", SQL_ENGINES, indirect=True)
def test_row_fetcher_and_rollback_call_split_as_they_block(make):
    """TPC-C's calls (``row_fetcher``: a statement's rows; ``rollback_call``), and a statement
    runner taken in the middle of a transaction for a statement not prepared yet (New-Order's
    batched statements at their first use), split by hand as the multiplexer drives them give
    what the blocking calls give: the same rows, the update undone by the split rollback,
    a failed statement raised (the session then goes on); where the session offers no socket
    the calls block."""
    b, other = make(), make()
    s = SysbenchTables(b)
    n = make.sb_no
    s.create(n)
    s.load(n, _sb_rows(50))
    table, ph = s.table_name(n), b.placeholder
    rows_sql = b.prepare(f"SELECT id, k FROM {table} WHERE id BETWEEN {ph} AND {ph} ORDER BY id")
    fetch, rollback = b.row_fetcher(rows_sql), b.rollback_call()
    begin, _ = b.transaction_calls(True)
    if _fileno(b) is None:
        assert make.variant in ("sqlite", "mysql-pymysql", "mysql-connector"), make.variant
        assert not any(_has_split(b, c) for c in (fetch, rollback))
        split = False
    else:
        split = True

    def call(f, *args):
        return _split_call(b, f, *args) if split else f(*args)
    expected = [(i, k) for i, k, _, _ in _sb_rows(50)[4:8]]
    got = call(fetch, (5, 8))
    assert [tuple(r) for r in got] == [tuple(r) for r in fetch((5, 8))] == expected
    assert list(call(fetch, (1000, 2000))) == []
    call(begin)
    # taken inside the transaction, never prepared before: prepared at its first send
    update = b.statement_runner(b.prepare(f"UPDATE {table} SET k = {ph} WHERE id = {ph}"))
    assert call(update, (-7, 6)) == 1
    assert [tuple(r) for r in call(fetch, (6, 6))] == [(6, -7)]
    call(rollback)
    assert [tuple(r) for r in fetch((6, 6))] == [expected[1]]
    assert [tuple(r) for r in other.fetchall(rows_sql, (6, 6))] == [expected[1]]
    assert call(update, (-8, 7)) == 1 and update((-9, 8)) == 1  # autocommit, split then blocking
    missing = b.row_fetcher(b.prepare(f"SELECT id FROM no_such_table_here WHERE id = {ph}"))
    with pytest.raises(Exception) as err:
        call(missing, (1,))
    assert b.classify(err.value).kind != DUPLICATE
    b.rollback()
    assert [tuple(r) for r in call(fetch, (7, 8))] == [(7, -8), (8, -9)]  # the session goes on
    s.drop(n)


def test_kv_inserter_scanner_and_row_updater_as_the_methods_and_split(make):
    """YCSB's other operations as functions of one connection (``inserter``, ``scanner``,
    ``row_updater``: the engine's statements, taken once) give what ``insert``, ``scan(rows=False)``
    and ``update`` give, a duplicate key raised and classified alike; where the session offers
    its socket each carries ``send`` / ``finish`` that give the same (engine.mux), elsewhere
    none does."""
    b = make()
    t = make.table
    b.create_table(t, FIELDS)
    fields = [f"field{i}" for i in range(FIELDS)]
    insert, scan_all, scan_one = b.inserter(t, fields), b.scanner(t, None), b.scanner(t, ["field2"])
    update_all = b.row_updater(t, fields)
    split = _fileno(b) is not None
    if not split:
        assert not any(_has_split(b, f) for f in (insert, scan_all, scan_one, update_all))

    def call(f, *args):
        return _split_call(b, f, *args) if split else f(*args)
    for n in range(0, 20, 2):  # user00, user02, ... user18: half blocking, half split
        if n % 4:
            insert(f"user{n:02d}", values(f"v{n}"))
        else:
            call(insert, f"user{n:02d}", values(f"v{n}"))
    assert b.count(t) == 10 and b.read(t, "user04", None) == values("v4")
    with pytest.raises(Exception) as err:
        call(insert, "user04", values("again"))
    assert b.classify(err.value).kind == DUPLICATE
    assert b.read(t, "user04", None) == values("v4")
    for start, n, found in (("user03", 4, 4), ("user00", 50, 10), ("user17", 5, 1), ("zzz", 5, 0)):
        assert call(scan_all, start, n) == scan_all(start, n) == b.scan(t, start, n, None, False) == found
        assert call(scan_one, start, n) == found
    assert call(update_all, "user06", values("w")) and update_all("user08", values("w"))
    assert b.read(t, "user06", None) == values("w") == b.read(t, "user08", None)
    assert not call(update_all, "nope", values("w")) and not update_all("nope", values("w"))
    assert b.count(t) == 10  # update never inserts


@pytest.mark.parametrize("engine", SQL_ENGINES, indirect=True)
def test_kv_reader_and_updater_split_as_they_block(make):
    b = make()
    t = make.table
    b.create_table(t, FIELDS)
    b.insert(t, "user1", values("a"))
    read, update = b.reader(t, None), b.updater(t, "field1")
    if _fileno(b) is None:
        assert not _has_split(b, read) and not _has_split(b, update)
        return
    key = (lambda k: k.encode()) if getattr(b, "hot_key_type", str) is bytes else (lambda k: k)
    assert _split_call(b, read, key("user1")) == read(key("user1")) == 1
    assert _split_call(b, read, key("nope")) == 0
    assert _split_call(b, update, "split", key("user1")) is True
    assert _split_call(b, update, "split", key("nope")) is False
    assert b.read(t, "user1", ["field1"]) == {"field1": "split"}


def _session_status(b, name) -> int:
    return int(b.fetchone("SHOW SESSION STATUS LIKE %s", (name,))[1])


@pytest.mark.parametrize("engine", ("mysql", "mysql-text"), indirect=True)
def test_mysqlclient_prepares_its_per_operation_statements_on_the_server(make, request):
    """mysqlclient's per-operation statements go as server-side prepared statements (the binary
    protocol on its connection: bindings/mysql_binary.py), each prepared once per connection,
    again after a reconnect; ``options.prepare: false`` (mysql-text) keeps them text. The same
    answers either way, blocking or split, with text statements (BEGIN, COMMIT) between them."""
    env = request.getfixturevalue("server_env")
    b = make()
    t = make.table
    b.create_table(t, FIELDS)
    b.insert(t, "user1", values("a"))
    binary = make.variant == "mysql"
    read, update = b.reader(t, None), b.updater(t, "field1")
    point = b.row_counter(b.prepare(f"SELECT field0 FROM {t} WHERE ycsb_key = %s"))
    touch = b.statement_runner(b.prepare(f"UPDATE {t} SET field2 = %s WHERE ycsb_key = %s"))
    begin, commit = b.transaction_calls()
    prepared0, executed0 = _session_status(b, "Com_stmt_prepare"), _session_status(b, "Com_stmt_execute")
    for i in range(3):
        assert read("user1") == 1 and read("nope") == 0
        assert update(f"v{i}", "user1") is True and update("v", "nope") is False
        begin()
        assert point(("user1",)) == 1 and point(("nope",)) == 0
        assert touch((f"w{i}", "user1")) == 1 and touch(("w", "nope")) == 0
        commit()
        assert _split_call(b, read, "user1") == 1 and _split_call(b, update, "s", "user1") is True
        assert _split_call(b, point, ("user1",)) == 1 and _split_call(b, touch, ("s", "user1")) == 1
    assert b.read(t, "user1", ["field1", "field2"]) == {"field1": "s", "field2": "s"}
    executed = _session_status(b, "Com_stmt_execute") - executed0
    assert _session_status(b, "Com_stmt_prepare") - prepared0 == 0  # prepared when the calls were made
    assert executed == (3 * 12 if binary else 0), executed
    # a reconnect: the calls made again on the new connection prepare again and go on
    _kill_session(make, b, env)
    time.sleep(0.2)
    m = Measured(b, Recorder())
    assert measured.call(m, "READ", read, "user1") is FAILED
    assert m.rec.m.counters.get("reconnects") == 1
    read = b.reader(t, None)
    assert read("user1") == 1
    assert _session_status(b, "Com_stmt_execute") == (1 if binary else 0)
    # a statement the server will not prepare stays text, with the server's own error
    bad = b.statement_runner(b.prepare("UPDATE no_such_table_here SET a = %s"))
    with pytest.raises(Exception) as err:
        bad((1,))
    assert b.classify(err.value).name == "ProgrammingError_1146"
    assert read("user1") == 1  # and the connection is in step
