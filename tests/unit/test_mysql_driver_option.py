"""target.options.driver of the mysql binding: auto (default: mysqlclient when it imports,
else PyMySQL), mysqlclient (MySQLdb) or PyMySQL.
No server here: the contract suite runs both drivers against MariaDB."""
from __future__ import annotations

import sys

import pytest

from dbswarm import bindings
from dbswarm.bindings.base import Connection
from dbswarm.errors import CONNECTION, DUPLICATE, FATAL, RETRYABLE, BindingError

URL = "mysql://bench@db.example:3307/ycsb"


def binding(url=URL, password="pw-secret", **options):
    return bindings.get("mysql")(Connection("mysql", url, password, options))


def test_default_driver_is_mysqlclient_when_it_imports():
    d = binding().describe()
    assert d["driver"].startswith("mysqlclient ") and d["driver_choice"].startswith("auto: mysqlclient")
    assert binding(driver="mysqlclient").describe()["driver"] == d["driver"]
    p = binding(driver="PyMySQL").describe()
    assert p["driver"].startswith("PyMySQL ") and "PyMySQL formats parameters" in p["prepared_statements"]
    assert p["driver_choice"] == "target.options.driver"


def test_default_driver_falls_back_to_the_connector_then_pymysql_and_says_why(monkeypatch):
    monkeypatch.setitem(sys.modules, "MySQLdb", None)  # import MySQLdb -> ImportError
    d = binding().describe()
    assert d["driver"].startswith("mysql-connector-python 8.4.0 (C extension")
    assert d["driver_choice"].startswith("auto: MySQL Connector/Python's C extension (mysqlclient: ")
    monkeypatch.setitem(sys.modules, "_mysql_connector", None)
    d = binding().describe()
    assert d["driver"].startswith("PyMySQL ")
    assert d["driver_choice"].startswith("auto: PyMySQL, the portable fallback")
    assert "pip install mysqlclient" in d["driver_choice"] and "mysql-connector-python" in d["driver_choice"]


def test_unknown_driver_names_the_option_and_the_choices():
    with pytest.raises(ValueError) as err:
        binding(driver="mariadb-connector")
    msg = str(err.value)
    assert "target.options.driver" in msg and "'mariadb-connector'" in msg
    assert "pymysql" in msg and "mysqlclient" in msg and "connector" in msg


def test_mysqlclient_is_described():
    import MySQLdb
    d = binding(driver="mysqlclient").describe()
    version = ".".join(str(p) for p in MySQLdb.version_info[:3])
    assert d["driver"].startswith(f"mysqlclient {version} (MySQLdb, ")
    assert "C client" in d["driver"]
    # the per-operation statements prepared on the server (the binary protocol on its connection)
    assert d["prepared_statements"].startswith("server-side for the per-operation statements")
    assert binding(driver="mysqlclient", prepare=False).describe()["prepared_statements"].startswith(
        "client-side (MySQLdb formats parameters")
    assert d["client_flags"] == ["FOUND_ROWS"] and d["autocommit"] is True
    assert "pw-secret" not in repr(d)


def test_mariadb_alias_takes_the_option_too():
    b = bindings.get("mariadb")(Connection("mariadb", URL, None, {"driver": "mysqlclient"}))
    assert b.describe()["driver"].startswith("mysqlclient ")


def test_missing_mysqlclient_says_how_to_install(monkeypatch):
    monkeypatch.setitem(sys.modules, "MySQLdb", None)  # import MySQLdb -> ImportError
    with pytest.raises(BindingError) as err:
        binding(driver="mysqlclient")
    msg = str(err.value)
    assert "pip install mysqlclient" in msg and "libmariadb-dev" in msg and "pkg-config" in msg
    assert "target.options.driver" in msg


def _captured_connect(monkeypatch, url, **options):
    import MySQLdb
    seen = {}

    class FakeDb:
        open = 1

        def cursor(self):
            return object()

        def get_server_info(self):
            return "10.11.0-MariaDB"

        # what the binding's Statements bind at connect time (nothing is executed here)
        query = literal = string_literal = store_result = affected_rows = None
        encoding = "utf8"

    def connect(**kw):
        seen.update(kw)
        return FakeDb()
    monkeypatch.setattr(MySQLdb, "connect", connect)
    b = binding(url, driver="mysqlclient", **options)
    b.connect()
    return b, seen


def test_mysqlclient_connect_arguments(monkeypatch):
    from MySQLdb.constants import CLIENT
    b, kw = _captured_connect(monkeypatch, URL + "?read_timeout=2.5&write_timeout=0.2",
                              isolation_level="read committed", connect_timeout=1.5)
    assert kw == {"host": "db.example", "port": 3307, "user": "bench", "database": "ycsb", "password": "pw-secret",
                  "charset": "utf8mb4", "autocommit": True, "client_flag": CLIENT.FOUND_ROWS,
                  "multi_statements": False, "connect_timeout": 2, "read_timeout": 3, "write_timeout": 1,
                  "init_command": "SET SESSION TRANSACTION ISOLATION LEVEL READ COMMITTED"}
    assert b.describe()["server_version"] == "10.11.0-MariaDB"
    assert b._driver.is_open(b.db)


def test_mysqlclient_connect_socket_tls_and_localhost(monkeypatch):
    _, kw = _captured_connect(monkeypatch, "mysql://u@localhost/db?unix_socket=/run/mysqld.sock&charset=latin1")
    assert (kw["host"], kw["unix_socket"], kw["charset"], kw["connect_timeout"]) == \
        ("localhost", "/run/mysqld.sock", "latin1", 10)
    _, kw = _captured_connect(monkeypatch, "mysql://u@localhost/db")
    assert kw["host"] == "127.0.0.1" and "unix_socket" not in kw  # TCP, as PyMySQL
    _, kw = _captured_connect(monkeypatch, "mysql://u@h/db?ssl_ca=/ca.pem")
    assert kw["ssl"] == {"ca": "/ca.pem"} and kw["ssl_mode"] == "VERIFY_CA"
    _, kw = _captured_connect(monkeypatch, "mysql://u@h/db?ssl_ca=/ca.pem&ssl_verify_identity=true")
    assert kw["ssl"] == {"ca": "/ca.pem"} and kw["ssl_mode"] == "VERIFY_IDENTITY"
    _, kw = _captured_connect(monkeypatch, "mysql://u@h/db")
    assert "ssl" not in kw and "ssl_mode" not in kw and "init_command" not in kw


@pytest.mark.parametrize("make_exc, expected", [
    (lambda m: m.OperationalError(1213, "Deadlock found"), (RETRYABLE, "deadlock")),
    (lambda m: m.OperationalError(1205, "Lock wait timeout exceeded"), (RETRYABLE, "lock_wait_timeout")),
    (lambda m: m.IntegrityError(1062, "Duplicate entry"), (DUPLICATE, "duplicate_key")),
    (lambda m: m.OperationalError(2013, "Lost connection to server during query"), (CONNECTION, "connection_lost")),
    (lambda m: m.OperationalError(2006, "Server has gone away"), (CONNECTION, "server_gone")),
    (lambda m: m.OperationalError(2002, "Can't connect to server"), (CONNECTION, "connect_failed")),
    (lambda m: m.OperationalError(1927, "Connection was killed"), (CONNECTION, "connection_killed")),
    (lambda m: m.InterfaceError(0, ""), (CONNECTION, "connection_closed")),
    (lambda m: m.ProgrammingError(2014, "Commands out of sync"), (CONNECTION, "protocol_out_of_sync")),
    (lambda m: m.OperationalError(2026, "TLS/SSL error"), (CONNECTION, "client_error_2026")),
    (lambda m: m.ProgrammingError(1146, "Table doesn't exist"), (FATAL, "ProgrammingError_1146")),
])
def test_mysqlclient_errors_are_classified(make_exc, expected):
    import MySQLdb
    b = binding(driver="mysqlclient")
    cls = b.classify(make_exc(MySQLdb))
    assert (cls.kind, cls.name) == expected


def test_each_driver_classifies_only_its_own_exceptions():
    import MySQLdb
    import pymysql
    assert binding(driver="pymysql").classify(pymysql.err.OperationalError(1213, "x")).kind == RETRYABLE
    assert binding(driver="pymysql").classify(pymysql.err.InterfaceError(0, "")).kind == CONNECTION
    # a MySQLdb error reaching the PyMySQL binding (or the reverse) is nothing it knows
    assert binding(driver="pymysql").classify(MySQLdb.OperationalError(1213, "x")).kind == FATAL
    assert binding(driver="mysqlclient").classify(pymysql.err.OperationalError(1213, "x")).kind == FATAL


def test_a_wrong_prepare_option_is_named():
    """(Until issue 36 this test also checked the ctypes path's fallback to text statements;
    that path is gone: every MySQL driver sends text.)"""
    with pytest.raises(ValueError) as err:
        binding(prepare="yes")
    assert "target.options.prepare" in str(err.value) and "'yes'" in str(err.value)
