"""The ``mysql`` binding's other C driver: MySQL Connector/Python's C extension
(``_mysql_connector``, from ``mysql-connector-python``), the one the Lambda layer carries.

Why a second C driver: mysqlclient ships no Linux wheels, so a Lambda layer would need it
compiled against the Lambda runtime's glibc with a MariaDB/MySQL client library bundled;
``mysql-connector-python`` 8.4 ships manylinux_2_17 wheels with its C client linked in, which
``pip install --platform manylinux2014_x86_64 --only-binary=:all:`` puts into the layer
reproducibly (layers/drivers/requirements.txt). 8.4, not 9.x: the 9.x client has no
``mysql_native_password`` plugin, which MariaDB accounts use. Client CPU per point select,
measured side by side on MariaDB 10.11 (raw calls, 3 × 5,000 queries): 17 µs, against
mysqlclient's 21–24 µs and PyMySQL's ~120 µs.

Chosen with ``target.options.driver: connector``, and by ``auto`` when mysqlclient does not
import. Statements run on the extension's ``MySQL`` object directly (``query`` with the
parameters escaped by its own ``escape_string``, buffered results), not through
``mysql.connector``'s cursor classes, as the mysqlclient adapter does with ``_mysql``.

Errors: the extension raises ``MySQLInterfaceError`` with ``errno`` (the same server and
client codes as the other drivers) and ``sqlstate``; they are re-raised as this module's
``OperationalError(errno, message)`` (``InterfaceError`` when not connected), so that the
binding's one classification applies.
"""
from __future__ import annotations

import math
from typing import Any, Callable, NoReturn, Optional, Sequence

from dbswarm.bindings.mysqlclient import statement_template
from dbswarm.errors import BindingError

INSTALL_HINT = "pip install 'mysql-connector-python==8.4.*' (manylinux wheels with the C extension)"
CLIENT_FOUND_ROWS = 2
CLIENT_DEFAULT = 0x1 | 0x4 | 0x200 | 0x8000 | 0x80000  # LONG_PASSWD, LONG_FLAG, PROTOCOL_41, SECURE_CONNECTION, PLUGIN_AUTH


class Error(Exception):
    """Base of what this adapter raises (``args``: (errno, message), as the other drivers)."""


class OperationalError(Error):
    pass


class InterfaceError(Error):
    pass


def _reraise(exc: BaseException) -> NoReturn:
    errno = getattr(exc, "errno", None)
    if not errno:
        raise InterfaceError(0, str(exc)) from None
    raise OperationalError(errno, str(exc)) from None


class ConnectorDriver:
    name = "connector"
    choice: str  # set by make_driver

    def __init__(self) -> None:
        try:
            import _mysql_connector
            import mysql.connector
        except ImportError as err:
            raise BindingError(f"target.options.driver connector: the MySQL Connector/Python C extension "
                               f"cannot be imported ({err}); {INSTALL_HINT}") from None
        self.mc = _mysql_connector
        self.Error = Error
        self.OperationalError = OperationalError
        self.InterfaceError = InterfaceError
        self.found_rows = CLIENT_FOUND_ROWS
        self.version = mysql.connector.__version__

    def connect(self, kw: dict, password: str, init_command: Optional[str], connect_timeout: float) -> Any:
        """``kw``: what ``parse_mysql_url`` returns (PyMySQL's names)."""
        kw = dict(kw)
        timeout = max(1, math.ceil(float(kw.pop("connect_timeout", connect_timeout))))
        for key in ("read_timeout", "write_timeout"):  # no per-statement timeouts in the C extension's API
            if kw.pop(key, None) is not None:
                raise ValueError(f"mysql URL parameter {key} is not supported with target.options.driver connector")
        db = self.mc.MySQL(buffered=True, raw=False, charset_name=kw.pop("charset", "utf8mb4"),
                           connection_timeout=timeout, use_unicode=True)
        args = {"host": kw.pop("host"), "port": int(kw.pop("port")), "user": kw.pop("user", ""),
                "password": password, "database": kw.pop("database", None),
                "client_flags": CLIENT_DEFAULT | CLIENT_FOUND_ROWS, "ssl_disabled": True}
        sock = kw.pop("unix_socket", None)
        if sock:
            args["unix_socket"] = sock
        ssl, verify_identity = kw.pop("ssl", None), kw.pop("ssl_verify_identity", False)
        if ssl:
            args.update(ssl_disabled=False, ssl_ca=ssl.get("ca"), ssl_verify_cert=True,
                        ssl_verify_identity=bool(verify_identity))
        if kw:
            raise ValueError(f"mysql URL parameters {', '.join(sorted(kw))} are not supported with "
                             f"target.options.driver connector")
        try:
            db.connect(**args)
            db.autocommit(True)
            if init_command:
                db.query(init_command.encode())
                db.free_result()
        except self.mc.MySQLInterfaceError as exc:
            _reraise(exc)
        return db

    @staticmethod
    def statements(db: Any, hot: Optional[set] = None, read_timeout: Optional[float] = None) -> "Statements":
        return Statements(db)  # (no server-side prepared statements: module docstring)

    @staticmethod
    def close(db: Any) -> None:
        try:
            db.close()
        except Exception:  # already closed: closing must not fail
            pass

    @staticmethod
    def is_open(db: Any) -> bool:
        try:
            return bool(db.connected())
        except Exception:
            return False

    @staticmethod
    def out_of_sync(exc: BaseException, code: Optional[int]) -> bool:
        return code == 2014

    def describe(self, prepare: bool = False) -> dict:
        return {"driver": f"mysql-connector-python {self.version} (C extension _mysql_connector)",
                "prepared_statements": "client-side (the C extension's escape_string formats parameters; "
                                       "statements cached)"}


class Statements:
    """The binding's driver calls on one ``_mysql_connector.MySQL`` connection.

    As mysqlclient's (bindings/mysqlclient.py): a statement of one or two int parameters
    (sysbench's ids) is formatted by one ``%`` on a cached ``%d`` template, and the kv hot
    path (``counter`` / ``updater``) is one closure per statement with the quotes in its
    template, so a YCSB read is one Python call and the extension's three (query,
    num_rows, free_result)."""
    __slots__ = ("_db", "_query", "_escape", "_free", "_num_rows", "_affected", "_sql", "_ints", "_Err")

    def __init__(self, db: Any) -> None:
        import _mysql_connector
        self._db, self._query, self._escape, self._free = db, db.query, db.escape_string, db.free_result
        self._num_rows, self._affected = db.num_rows, db.affected_rows
        self._sql: dict[str, bytes] = {}   # statement -> its bytes (statements are cached, few)
        self._ints: dict[str, bytes] = {}  # statement -> its bytes with %d placeholders
        self._Err = _mysql_connector.MySQLInterfaceError

    def _bytes(self, sql: str, params: Any) -> bytes:
        """The general path: the statement's bytes with every parameter formatted."""
        b = self._sql.get(sql)
        if b is None:
            b = self._sql[sql] = sql.encode()
            if "%%" not in sql:  # "%%s" is a literal "%s", not a placeholder to rewrite
                self._ints[sql] = sql.replace("%s", "%d").encode()
        if params:
            esc = self._escape
            b = b % tuple([b"%d" % p if type(p) is int else b"'" + esc(p) + b"'" if type(p) in (str, bytes)
                           else b"NULL" if p is None else str(p).encode() for p in params])
        return b

    def _run(self, sql: str, params: Any) -> None:
        # the fast path's test: one or two parameters, ints both (``type(x) is int`` is exact:
        # a bool or a float would not pass)
        t = self._ints.get(sql)
        try:
            if t is not None and 0 < len(params) < 3 and type(params[0]) is int is type(params[-1]):
                self._query(t % params)
            else:
                self._query(self._bytes(sql, params))
        except self._Err as exc:
            _reraise(exc)

    def execute(self, sql: str, params: Any = ()) -> int:
        self._run(sql, params)
        db = self._db
        if db.have_result_set:
            self._free()
        return self._affected()

    def fetchall(self, sql: str, params: Any = ()) -> Sequence[tuple]:
        self._run(sql, params)
        db = self._db
        if not db.have_result_set:
            return ()
        rows = []
        row = db.fetch_row()
        while row is not None:
            rows.append(row)
            row = db.fetch_row()
        self._free()
        return rows

    def fetchone(self, sql: str, params: Any = ()) -> Optional[tuple]:
        self._run(sql, params)
        db = self._db
        if not db.have_result_set:
            return None
        row = db.fetch_row()
        self._free()
        return row

    def fetchcount(self, sql: str, params: Any = ()) -> int:
        self._run(sql, params)  # buffered: every row is read into the client library's buffer
        if not self._db.have_result_set:
            return 0
        n = self._num_rows()
        self._free()
        return n

    # The kv hot path (Binding.reader / updater)
    def counter(self, sql: str) -> Callable[[str], int]:
        """``count(key)``: fetchcount(sql, (key,)) for a SELECT of one str parameter."""
        b = statement_template(sql, 1).replace(b"%s", b"'%b'")
        query, esc, num_rows, free, err = self._query, self._escape, self._num_rows, self._free, self._Err

        def count(key: str) -> int:
            try:
                query(b % esc(key))
            except err as exc:
                _reraise(exc)
            n = num_rows()
            free()
            return n
        return count

    def updater(self, sql: str) -> Callable[[Any, Any], Any]:
        """``update(value, key)``: execute(sql, (value, key)) > 0 for an UPDATE of two str
        parameters (no result set)."""
        b = statement_template(sql, 2).replace(b"%s", b"'%b'")
        query, esc, affected, err = self._query, self._escape, self._affected, self._Err

        def update(value: str, key: str) -> bool:
            try:
                query(b % (esc(value), esc(key)))
            except err as exc:
                _reraise(exc)
            return affected() > 0
        return update
