"""Server-side prepared statements on MariaDB through mysqlclient's connection
(bindings/mysql_stmt.py): what runs prepared, what stays text, values unchanged, the
server's refusals, no memory growth per execution, and a closed connection."""
from __future__ import annotations

import gc

import pytest

from dbswarm.errors import CONNECTION, DUPLICATE
from tests import servers

pytestmark = pytest.mark.servers


def session_status(b, name: str) -> int:
    return int(b.fetchone(f"SHOW SESSION STATUS LIKE '{name}'")[1])


def stmt_counts(b) -> tuple[int, int]:
    return session_status(b, "Com_stmt_prepare"), session_status(b, "Com_stmt_execute")


def one_record(make):
    """A connected binding and the test's table of one field, holding the record "k"."""
    b = make()
    b.create_table(make.table, 1)
    b.insert(make.table, "k", {"field0": "v"})
    return b, make.table


@pytest.mark.parametrize("engine", ("mysql", "mysql-text"), indirect=True)
def test_per_operation_statements_run_prepared_unless_switched_off(make):
    b = make()
    t = make.table
    b.create_table(t, 3)
    prepared = make.variant == "mysql"
    p0, e0 = stmt_counts(b)
    b.insert(t, "k1", {"field0": "a", "field1": "b", "field2": "c"})
    assert b.read(t, "k1", None, False) == 1 and b.read(t, "nope", None, False) == 0
    read, update = b.reader(t, None), b.updater(t, "field1")
    assert [read("k1"), read("k2"), update("v", "k1"), update("v", "k2")] == [1, 0, True, False]
    assert b.update(t, "k1", {"field0": "w"}) is True and b.delete(t, "k1") is True
    assert b.read(t, "k1", None) is None  # rows converted: the text path, prepared or not
    p1, e1 = stmt_counts(b)
    if prepared:  # insert, read, reader, updater, update of field0, delete; 9 executions
        assert (p1 - p0, e1 - e0) == (6, 9)
        assert b.describe()["prepared_statements"].startswith("server-side")
    else:
        assert (p1 - p0, e1 - e0) == (0, 0)
        assert b.describe()["prepared_statements"].startswith("client-side")


@pytest.mark.parametrize("engine", ("mysql",), indirect=True)
def test_prepared_values_reach_the_server_unchanged(make):
    """Quotes, backslashes, NULL, non-ASCII (Latin-1: MariaDB's default table character set),
    and values longer than a parameter's first buffer (it grows and is bound again) go
    through the binary protocol as they are."""
    b = make()
    t = make.table
    b.create_table(t, 3)
    tricky = ["it's", 'say "hi"', "back\\slash", "%s %d {}", "é ü ß ñ ©", "", "x" * 70, "y" * 10_000]
    for i, v in enumerate(tricky):
        key = f"k{i}-" + v[:8].replace("\\", "")
        b.insert(t, key, {"field0": v, "field1": None, "field2": v[::-1]})
        assert b.read(t, key, None) == {"field0": v, "field1": None, "field2": v[::-1]}, v
        update, read = b.updater(t, "field1"), b.reader(t, None)
        assert update(v + "!", key) is True and read(key) == 1
        assert b.read(t, key, ["field1"]) == {"field1": v + "!"}
    # ints, then strs, on one statement: the specialised int call hands other types to the text path
    sql = b.prepare(f"SELECT ycsb_key FROM {t} WHERE LENGTH(field0) BETWEEN %s AND %s")
    assert b.fetchcount(sql, (0, 100)) == 7 and b.fetchcount(sql, ("0", "100")) == 7
    assert b.fetchcount(sql, (70, 10_000)) == 2
    # ints beyond 64 bits go as text, not wrapped into the bound cell (2^64 would become 0)
    big = b.prepare("SELECT 1 FROM DUAL WHERE %s > %s")
    assert b.fetchcount(big, (2, 1)) == 1 and b.fetchcount(big, (2**64, 2**63 - 1)) == 1
    three = b.prepare("SELECT 1 FROM DUAL WHERE %s = %s AND %s > 0")
    assert b.fetchcount(three, ("a", "a", 1)) == 1 and b.fetchcount(three, ("a", "a", 2**64)) == 1
    assert b.fetchcount(three, ("a", "b", 1)) == 0 and b.fetchcount(three, (1.5, 1.5, True)) == 1


@pytest.mark.parametrize("engine", ("mysql",), indirect=True)
def test_errors_of_prepared_statements_are_classified(make):
    b, t = one_record(make)
    with pytest.raises(Exception) as err:
        b.insert(t, "k", {"field0": "v"})
    assert err.value.args[0] == 1062 and b.classify(err.value).kind == DUPLICATE
    # a statement the server cannot prepare (no such table) runs as text: the text error
    missing = b.prepare("SELECT * FROM no_such_table_here WHERE id = %s")
    with pytest.raises(Exception) as err:
        b.fetchcount(missing, (1,))
    assert err.value.args[0] == 1146


@pytest.mark.parametrize("engine", ("mysql",), indirect=True)
def test_statements_past_the_servers_limit_run_as_text(make, server_env):
    """max_prepared_stmt_count reached (many threads x statements): the statements that do
    not fit run as text on that connection, with the same results."""
    b = make()
    t = make.table
    b.create_table(t, 1)
    admin = servers.mysql_admin(server_env)
    try:
        cur = admin.cursor()
        cur.execute("SELECT @@GLOBAL.max_prepared_stmt_count")
        limit = cur.fetchone()[0]
        cur.execute("SHOW GLOBAL STATUS LIKE 'Prepared_stmt_count'")
        cur.execute(f"SET GLOBAL max_prepared_stmt_count = {int(cur.fetchone()[1])}")
        try:
            e0 = stmt_counts(b)[1]
            b.insert(t, "k", {"field0": "v"})
            assert b.read(t, "k", None, False) == 1 and b.reader(t, None)("k") == 1
            assert stmt_counts(b)[1] == e0  # nothing executed prepared
        finally:
            cur.execute(f"SET GLOBAL max_prepared_stmt_count = {int(limit)}")
    finally:
        admin.close()


@pytest.mark.parametrize("engine", ("mysql",), indirect=True)
def test_executions_do_not_grow_the_process(make):
    """MySQL Connector/Python's prepared statements leak ~575 bytes per execution (measured: 11
    MB per 20,000), which a 60-minute run cannot afford; these must not."""
    b = make()
    t = make.table
    b.create_table(t, 1)
    b.insert_batch(t, [(f"k{i:03d}", {"field0": "v" * 100}) for i in range(200)])
    scan = b.prepare(f"SELECT * FROM {t} WHERE ycsb_key BETWEEN %s AND %s")

    def rss_kb() -> int:
        with open("/proc/self/statm") as f:
            return int(f.read().split()[1]) * 4

    for _ in range(2000):  # warm: buffers, allocator
        b.fetchcount(scan, ("k000", "k099"))
    before = rss_kb()
    for _ in range(20_000):
        assert b.fetchcount(scan, ("k000", "k099")) == 100
    assert rss_kb() - before < 2048, "more than 2 MB for 20,000 executions"


@pytest.mark.parametrize("engine", ("mysql",), indirect=True)
def test_a_closed_connections_statements_fail_cleanly_and_are_freed(make):
    b, t = one_record(make)
    read = b.reader(t, None)
    assert read("k") == 1
    prepared = read.prepared
    b.close()
    with pytest.raises(Exception) as err:  # libmariadb: the statement's connection is gone
        read("k")
    assert b.classify(err.value).kind == CONNECTION
    assert prepared.detached and prepared.handle
    del read, prepared
    gc.collect()  # freed here (mysql_stmt_close of a detached statement sends nothing)
    b.connect()
    assert b.reader(t, None)("k") == 1
