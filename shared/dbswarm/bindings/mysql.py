"""MySQL and MariaDB: the YCSB ``usertable`` and sysbench's ``sbtestN``.

URL: ``mysql://USER@HOST:PORT/DB`` (also ``mariadb://``); query parameters ``charset``
(default utf8mb4), ``unix_socket``, ``connect_timeout``, ``read_timeout``,
``write_timeout``, ``ssl_ca`` (turns TLS on), ``ssl_verify_identity``. The password
is ``target.password``, handed to the driver as its own argument.

- Two drivers, one binding (the engine is the server, not the driver): mysqlclient
  (``MySQLdb``, a C extension on libmariadb / libmysqlclient: 2-3x less client CPU per
  operation; ``bindings/mysqlclient.py``), chosen by default whenever it imports (the
  README's set-up builds it), and PyMySQL (pure Python: it installs anywhere), the portable
  fallback. Both have the same cursor API, so everything but connecting, closing and the
  exception classes is shared; ``describe()`` records which one ran, and why.
- One connection per client thread, ``autocommit=1``: a YCSB operation is one statement.
- Every statement is built once per (kind, table), cached, and sent as text with the
  parameters formatted client-side (escaped literals), on every driver. (From d1db372 to
  issue 36 the per-operation statements ran as server-side prepared statements on
  mysqlclient through ctypes into libmariadb; measured against text and removed:
  docs/decisions/0006-mariadb-binary-protocol.md.) The
  statements a family marks with ``prepare()`` are still collected (``options.prepare``),
  for a driver with a supported prepared-statement API. ``describe()`` records how
  statements ran.
- ``CLIENT_FOUND_ROWS`` is set so that an UPDATE reports the rows it matched (an update
  that writes the value already stored still counts as found, as in YCSB).
- A sysbench event is ``BEGIN`` ... ``COMMIT`` issued as plain statements, as sysbench
  issues them.
- Errors: deadlock (1213), lock wait timeout (1205) and "record changed" (1020) are
  retryable (sysbench's --mysql-ignore-errors default); duplicate key (1062) is a
  duplicate; server gone (2006), lost connection (2013), cannot connect (2002, 2003),
  connection killed (MariaDB 1927), server shutdown (1053), too many connections (1040),
  other client errors (2xxx), commands out of sync and a closed connection
  (InterfaceError) are connection errors.

Options (``target.options``): ``driver`` (``"auto"``, the default: mysqlclient when it
imports, else MySQL Connector/Python's C extension (the Lambda layer's), else PyMySQL; or
``"mysqlclient"`` / ``"connector"`` / ``"pymysql"`` to insist on one), ``prepare`` (default true;
no driver prepares on the server today: text statements either way), ``table_engine`` (default InnoDB), ``isolation_level`` (e.g.
``"READ COMMITTED"``; default: the server's), ``connect_timeout`` (seconds).
"""
from __future__ import annotations

import re
from typing import Any, Callable, Optional, Protocol, cast
from urllib.parse import parse_qsl, unquote, urlsplit

from dbswarm.bindings import register
from dbswarm.bindings.base import Connection, Multiplexed
from dbswarm.bindings.sql import SqlBinding
from dbswarm.errors import CONNECTION, DUPLICATE, FATAL, RETRYABLE, BindingError, ErrorClass

DRIVERS = ("auto", "mysqlclient", "connector", "pymysql")
ISOLATION_LEVELS = ("READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE")
URL_PARAMS = ("charset", "unix_socket", "connect_timeout", "read_timeout", "write_timeout", "ssl_ca",
              "ssl_verify_identity")

_RETRYABLE = {1213: "deadlock", 1205: "lock_wait_timeout", 1020: "record_changed"}
_CONNECTION = {2006: "server_gone", 2013: "connection_lost", 2002: "connect_failed", 2003: "connect_failed",
               2055: "connection_lost", 1927: "connection_killed", 1053: "server_shutdown",
               1040: "too_many_connections", 1152: "connection_aborted", 1158: "connection_aborted",
               1159: "connection_aborted", 1160: "connection_aborted", 1161: "connection_aborted",
               4031: "disconnected_idle"}


def parse_mysql_url(url: Optional[str]) -> dict:
    """Connection keyword arguments, PyMySQL's names (everything but the password)."""
    if not url:
        raise ValueError("mysql target needs a URL: mysql://USER@HOST:PORT/DATABASE")
    parts = urlsplit(url)
    if parts.scheme not in ("mysql", "mariadb", "mysql+pymysql"):
        raise ValueError(f"mysql target URL must start with mysql:// or mariadb://, not {parts.scheme}://")
    kw: dict = {"host": parts.hostname or "localhost", "port": parts.port or 3306}
    if parts.username:
        kw["user"] = unquote(parts.username)
    db = parts.path.lstrip("/")
    if db:
        kw["database"] = unquote(db)
    for key, value in parse_qsl(parts.query):
        if key not in URL_PARAMS:
            raise ValueError(f"mysql URL parameter {key!r} is not supported; known: {', '.join(URL_PARAMS)}")
        if key in ("connect_timeout", "read_timeout", "write_timeout"):
            kw[key] = float(value)
        elif key == "ssl_ca":
            kw["ssl"] = {**kw.get("ssl", {}), "ca": value}
        elif key == "ssl_verify_identity":
            kw["ssl_verify_identity"] = value.lower() in ("1", "true", "yes")
        else:
            kw[key] = value
    return kw


def socket_peer(db: Any) -> Optional[list[str]]:
    """[the peer address] of a MySQL connection's socket, where the driver exposes it."""
    import os
    import socket
    sock = getattr(db, "_sock", None)            # PyMySQL
    if sock is None:
        sock = getattr(getattr(db, "_socket", None), "sock", None)   # MySQL Connector (pure Python)
    if sock is not None:
        return [_peer_name(sock.getpeername())]
    fileno = getattr(db, "fileno", None)         # mysqlclient
    if callable(fileno):
        with socket.socket(fileno=os.dup(fileno())) as s:
            return [_peer_name(s.getpeername())]
    return None


def _peer_name(peer: Any) -> str:
    if isinstance(peer, tuple):
        return str(peer[0])
    if isinstance(peer, bytes):                  # an abstract unix socket
        return "@" + peer.lstrip(b"\0").decode("utf-8", "replace")
    return str(peer)


_MAX_USER_CONNECTIONS = re.compile(r"MAX_USER_CONNECTIONS\s+(-?\d+)", re.IGNORECASE)  # in SHOW GRANTS


class Driver(Protocol):
    """A driver adapter (PyMysqlDriver, MysqlclientDriver, ConnectorDriver): the exception
    classes and the calls the binding makes of the driver; ``choice``: why it was chosen."""
    name: str
    choice: str
    Error: Any  # exception classes
    OperationalError: Any
    InterfaceError: Any

    def connect(self, kw: dict, password: str, init_command: Optional[str], connect_timeout: float) -> Any: ...
    def statements(self, db: Any, hot: Optional[set] = None, read_timeout: Optional[float] = None) -> Any: ...
    def close(self, db: Any) -> None: ...
    def is_open(self, db: Any) -> bool: ...
    def out_of_sync(self, exc: BaseException, code: Optional[int]) -> bool: ...
    def describe(self, prepare: bool = False) -> dict: ...


class PyMysqlDriver:
    """PyMySQL: pure Python, the portable fallback. A driver adapter (this one, or MysqlclientDriver in
    bindings/mysqlclient.py) gives the binding its exception classes (``Error``,
    ``OperationalError``, ``InterfaceError``) and ``connect`` / ``statements`` / ``close`` /
    ``is_open`` / ``out_of_sync`` / ``describe``."""
    name = "pymysql"
    choice: str  # set by make_driver

    def __init__(self) -> None:
        try:
            import pymysql
            from pymysql.constants import CLIENT
        except ImportError as err:
            raise BindingError(f"target.options.driver pymysql: {err}; pip install PyMySQL "
                               "(or dbswarm[drivers])") from None
        self.pymysql = pymysql
        self.found_rows = CLIENT.FOUND_ROWS
        self.Error = pymysql.err.MySQLError
        self.OperationalError = pymysql.err.OperationalError
        self.InterfaceError = pymysql.err.InterfaceError

    def connect(self, kw: dict, password: str, init_command: Optional[str], connect_timeout: float) -> Any:
        kw = dict(kw)
        kw.setdefault("charset", "utf8mb4")
        kw.setdefault("connect_timeout", connect_timeout)
        return self.pymysql.connect(password=password, autocommit=True, client_flag=self.found_rows,
                                    init_command=init_command, **kw)

    @staticmethod
    def statements(db: Any, hot: Optional[set] = None, read_timeout: Optional[float] = None) -> "CursorStatements":
        return CursorStatements(db.cursor())

    @staticmethod
    def close(db: Any) -> None:
        try:
            db.close()
        except Exception:  # already broken: closing must not fail
            db._force_close()

    @staticmethod
    def is_open(db: Any) -> bool:
        return db.open

    def out_of_sync(self, exc: BaseException, code: Optional[int]) -> bool:
        return isinstance(exc, self.pymysql.err.InternalError) and "sequence" in str(exc).lower()

    def describe(self, prepare: bool = False) -> dict:
        return {"driver": f"PyMySQL {self.pymysql.__version__}",
                "prepared_statements": "client-side (PyMySQL formats parameters; statements cached)"}


class CursorStatements:
    """The binding's driver calls through a DB-API cursor (PyMySQL's)."""
    __slots__ = ("cur",)

    def __init__(self, cur: Any) -> None:
        self.cur = cur

    def execute(self, sql: str, params: Any = ()) -> int:
        return self.cur.execute(sql, params if params else None)

    def fetchall(self, sql: str, params: Any = ()) -> list[tuple]:
        cur = self.cur
        cur.execute(sql, params if params else None)
        return cur.fetchall()

    def fetchone(self, sql: str, params: Any = ()) -> Optional[tuple]:
        cur = self.cur
        cur.execute(sql, params if params else None)
        return cur.fetchone()

    def fetchcount(self, sql: str, params: Any = ()) -> int:
        # PyMySQL reads and converts every row inside execute(); it returns their number
        return self.cur.execute(sql, params if params else None)


def make_driver(name: str) -> Driver:
    """The driver adapter for ``target.options.driver`` (``auto``: mysqlclient when it
    imports, else PyMySQL, with the reason in ``choice``)."""
    if name == "pymysql":
        return PyMysqlDriver()
    if name == "mysqlclient":
        from dbswarm.bindings.mysqlclient import MysqlclientDriver
        return MysqlclientDriver()
    if name == "connector":
        from dbswarm.bindings.mysqlconnector import ConnectorDriver
        return ConnectorDriver()
    if name == "auto":
        from dbswarm.bindings.mysqlclient import MysqlclientDriver
        from dbswarm.bindings.mysqlconnector import ConnectorDriver
        driver: Driver
        try:
            driver = MysqlclientDriver()
            driver.choice = "auto: mysqlclient (the C driver) imports"
            return driver
        except BindingError as err:
            missing = str(err).split(": ", 1)[-1]
        try:  # the Lambda layer's C driver (manylinux wheels)
            driver = ConnectorDriver()
            driver.choice = f"auto: MySQL Connector/Python's C extension (mysqlclient: {missing})"
            return driver
        except BindingError as err:
            missing += f"; connector: {str(err).split(': ', 1)[-1]}"
        driver = PyMysqlDriver()
        driver.choice = (f"auto: PyMySQL, the portable fallback (about twice the client CPU per statement): "
                         f"{missing}")
        return driver
    raise ValueError(f"target.options.driver: {name!r} is not one of {', '.join(DRIVERS)}")


@register("mysql")
class MysqlBinding(SqlBinding, Multiplexed):
    dialect = "mysql"
    max_params = 65535
    placeholder = "%s"
    insert_ignore_verb = "INSERT IGNORE INTO"
    insert_ignore_suffix = ""
    key_type = "VARCHAR(255)"
    field_type = "TEXT"

    def __init__(self, conn: Connection) -> None:
        super().__init__(conn)
        self.db: Any = None  # the driver's connection
        self._kwargs = parse_mysql_url(conn.url)
        opts = conn.options
        level = opts.get("isolation_level")
        self._isolation = None
        if level is not None:
            self._isolation = " ".join(str(level).replace("_", " ").upper().split())
            if self._isolation not in ISOLATION_LEVELS:
                raise ValueError(f"target.options.isolation_level: {level!r} is not one of "
                                 f"{', '.join(ISOLATION_LEVELS)}")
        engine = str(opts.get("table_engine", "InnoDB"))
        if not engine.isidentifier():
            raise ValueError(f"target.options.table_engine: {engine!r} is not an engine name")
        self._table_engine = engine
        self.table_options = f" ENGINE={engine}"  # what a family's CREATE TABLE ends with on this server
        self._driver = make_driver(str(opts.get("driver", "auto")).lower())
        self._statements: Any = None  # the driver's execute / fetchall / fetchone on this connection
        self.splits = {}  # this connection's split calls (Multiplexed: mysqlclient's)
        prepare = opts.get("prepare", True)
        if not isinstance(prepare, bool):
            raise ValueError(f"target.options.prepare: {prepare!r} is not true or false")
        # the per-operation statements (a family's prepare(), the kv statements): run as
        # server-side prepared statements where the driver can (mysqlclient on libmariadb)
        self._hot: Optional[set] = set() if prepare else None
        self._server_version = None

    # -- life cycle ------------------------------------------------------------------
    def connect(self) -> None:
        init = None
        if self._isolation:
            init = f"SET SESSION TRANSACTION ISOLATION LEVEL {self._isolation}"
        self.db = self._driver.connect(self._kwargs, self.conn.password or "", init,
                                       float(self.conn.options.get("connect_timeout", 10)))
        st = self._statements = self._driver.statements(self.db, self._hot, self._kwargs.get("read_timeout"))
        self.splits = getattr(st, "splits", {})  # mysqlclient's split calls (Multiplexed)
        # the driver's calls bound onto the binding itself, over the class's hooks below: one
        # Python call less per statement, on the hot path
        self.execute, self.fetchall, self.fetchone, self.fetchcount = (  # type: ignore[method-assign]
            st.execute, st.fetchall, st.fetchone, st.fetchcount)
        self._server_version = self.db.get_server_info()

    def close(self) -> None:
        db, self.db, self._statements = self.db, None, None
        for hook in ("execute", "fetchall", "fetchone", "fetchcount"):  # back to the class's hooks (not connected)
            self.__dict__.pop(hook, None)
        if db is not None:
            self._driver.close(db)

    def peer_addresses(self) -> Optional[list[str]]:
        """The connected socket's peer: PyMySQL's socket, or mysqlclient's (its fileno); None
        for MySQL Connector's C extension, which does not expose its socket."""
        return socket_peer(self.db)

    def describe(self) -> dict:
        out = {**self._driver.describe(self._hot is not None),
               "driver_choice": getattr(self._driver, "choice", "target.options.driver"),
               "autocommit": True, "client_flags": ["FOUND_ROWS"],
               "transactions": "explicit BEGIN/COMMIT statements (sysbench events)",
               "isolation_level": self._isolation or "server default",
               "table_engine": self._table_engine}
        if self._server_version:
            out["server_version"] = self._server_version
        return out

    DURABILITY = ("innodb_flush_log_at_trx_commit", "sync_binlog", "log_bin", "innodb_doublewrite",
                  "transaction_isolation", "tx_isolation", "version", "max_connections")

    STATUS_COUNTERS = ("Questions", "Com_select", "Com_insert", "Com_update", "Com_delete", "Com_begin",
                       "Com_commit", "Com_rollback", "Com_stmt_execute", "Innodb_rows_read",
                       "Innodb_rows_inserted", "Innodb_rows_updated", "Innodb_rows_deleted",
                       "Handler_commit", "Handler_rollback", "Innodb_data_reads", "Innodb_data_writes",
                       "Innodb_log_writes")

    def connection_room(self) -> Optional[dict]:
        """max_connections against Threads_connected (an account with SUPER or CONNECTION ADMIN
        has one connection more, not counted here), and the account's limit: its own
        MAX_USER_CONNECTIONS (SHOW GRANTS) where set, else the global max_user_connections (0:
        none) against the account's connections (the process list shows an account its own)."""
        max_conn, max_user, account = cast(tuple, self.fetchone(
            "SELECT @@max_connections, @@max_user_connections, CURRENT_USER()"))
        connected = int(cast(tuple, self.fetchone("SHOW GLOBAL STATUS LIKE 'Threads_connected'"))[1])
        limits: list[dict[str, Any]] = [{"name": "max_connections", "value": int(max_conn), "in_use": connected - 1}]
        own = None
        try:
            for (grant,) in self.fetchall("SHOW GRANTS FOR CURRENT_USER()"):
                found = _MAX_USER_CONNECTIONS.search(str(grant))
                if found and int(found.group(1)) > 0:
                    own = int(found.group(1))
        except Exception:  # no grants to read: the global limit stands
            pass
        per_account = own or int(max_user or 0)
        if per_account > 0:
            user = str(account).rsplit("@", 1)[0]
            mine = int(cast(tuple, self.fetchone("SELECT COUNT(*) FROM information_schema.PROCESSLIST WHERE USER = %s",
                                                 (user,)))[0])
            limits.append({"name": f"MAX_USER_CONNECTIONS of {account}" if own else "max_user_connections",
                           "value": per_account, "in_use": mine - 1})
        return {"free": min(max(0, lim["value"] - lim["in_use"]) for lim in limits), "limits": limits}

    def server_counters(self, settle: bool = False) -> Optional[dict]:
        """SHOW GLOBAL STATUS (server-wide: every client's statements count): statements =
        Questions (what clients sent; the SHOW itself is in both edges), transactions =
        Com_commit + Com_rollback (HammerDB's TPM for MySQL)."""
        rows = self.fetchall("SHOW GLOBAL STATUS WHERE Variable_name IN ("
                             + ", ".join(["%s"] * len(self.STATUS_COUNTERS)) + ")", self.STATUS_COUNTERS)
        out: dict[str, Any] = {str(n).lower(): int(v) for n, v in rows}
        out["statements"] = out.get("questions", 0)
        out["transactions"] = out.get("com_commit", 0) + out.get("com_rollback", 0)
        # when the server started (its clock less its Uptime; to the second): a restart inside the
        # window starts its counters again from zero
        row = self.fetchone("SELECT UNIX_TIMESTAMP() - CAST(VARIABLE_VALUE AS UNSIGNED) FROM "
                            "information_schema.GLOBAL_STATUS WHERE VARIABLE_NAME = 'UPTIME'")
        if row and row[0] is not None:
            out["server_started_at"] = float(row[0])
        times, missing = self._statement_times()
        if times is not None:
            out["statement_times"] = times
            out["statement_source"] = self.STATEMENT_SOURCE
        else:
            out["statement_times_missing"] = missing
        return out

    STATEMENT_SOURCE = ("performance_schema.events_statements_summary_by_digest SUM_TIMER_WAIT "
                        "(this schema, every client)")

    def _statement_times(self) -> tuple[Optional[dict], Optional[str]]:
        """(the server's own time per statement kind, why there is none): the digests' first
        words in this schema (SELECT, UPDATE ...), when performance_schema is on (off by default
        in MariaDB): the client-health verdict's server-vs-client latency (docs/client-health.md).
        Statements sent as text have digests; a server-side prepared statement's execution has
        none in MariaDB (10.11: statement/com/Execute, no text, no schema): an operation of
        them gets no server mean (aggregate.server_vs_client), never another statement's."""
        try:
            if not int(cast(tuple, self.fetchone("SELECT @@performance_schema"))[0] or 0):
                return None, ("performance_schema is off on this server (MariaDB's default): start it with "
                              "performance_schema=ON for the server's own time per statement")
            rows = self.fetchall("SELECT UPPER(SUBSTRING_INDEX(TRIM(DIGEST_TEXT), ' ', 1)), SUM(COUNT_STAR), "
                                 "SUM(SUM_TIMER_WAIT) FROM performance_schema.events_statements_summary_by_digest "
                                 "WHERE SCHEMA_NAME = DATABASE() GROUP BY 1")
        except Exception as exc:  # no privilege on performance_schema: the other counters stand
            return None, f"performance_schema not readable: {type(exc).__name__}: {str(exc)[:200]}"
        # SUM_TIMER_WAIT is in picoseconds
        return {str(k): {"calls": int(c or 0), "exec_us": float(t or 0) / 1e6} for k, c, t in rows if k}, None

    def server_settings(self) -> dict:
        rows = self.fetchall("SHOW GLOBAL VARIABLES WHERE Variable_name IN ("
                             + ", ".join(["%s"] * len(self.DURABILITY)) + ")", self.DURABILITY)
        out = {str(n): str(v) for n, v in rows}
        if "version" in out:
            out["server_version"] = out.pop("version")
        return out

    def classify(self, exc: BaseException) -> ErrorClass:
        d = self._driver
        code = exc.args[0] if isinstance(exc, d.Error) and exc.args and isinstance(exc.args[0], int) else None
        if code in _RETRYABLE:
            return ErrorClass(RETRYABLE, _RETRYABLE[code])
        if code == 1062:
            return ErrorClass(DUPLICATE, "duplicate_key")
        if code in _CONNECTION:
            return ErrorClass(CONNECTION, _CONNECTION[code])
        if isinstance(exc, d.InterfaceError):
            return ErrorClass(CONNECTION, "connection_closed")
        if d.out_of_sync(exc, code):
            return ErrorClass(CONNECTION, "protocol_out_of_sync")
        if isinstance(exc, (ConnectionError, TimeoutError, BrokenPipeError)):
            return ErrorClass(CONNECTION, "connection_lost")
        if self.db is None and isinstance(exc, AttributeError):
            return ErrorClass(CONNECTION, "not_connected")
        if isinstance(exc, d.OperationalError) and code is not None and code >= 2000:
            return ErrorClass(CONNECTION, f"client_error_{code}")
        return ErrorClass(FATAL, f"{type(exc).__name__}_{code}" if code else type(exc).__name__)

    # -- per-operation statements -------------------------------------------------------
    def prepare(self, sql: str) -> str:
        """A family's per-operation statement, marked as one (``options.prepare: false``: not
        marked); every MySQL driver sends it as text today (the module docstring)."""
        if self._hot is not None:
            self._hot.add(sql)
        return sql

    _KV_PREPARED = ("read", "update", "insert", "delete", "scan")

    def _stmt(self, key: tuple, build: Callable[[], str]) -> str:
        sql = self._sql.get(key)
        if sql is None:
            sql = self._sql[key] = build()
            if self._hot is not None and key[0] in self._KV_PREPARED:
                self._hot.add(sql)
        return sql

    # -- driver hooks: used only while not connected (connect() binds the driver's own) ----
    # (self._statements is None: an AttributeError, which classify() calls not_connected)
    def execute(self, sql: str, params: Any = ()) -> int:
        return self._statements.execute(sql, params)

    def fetchall(self, sql: str, params: Any = ()) -> list[tuple]:
        return self._statements.fetchall(sql, params)

    def fetchone(self, sql: str, params: Any = ()) -> Optional[tuple]:
        return self._statements.fetchone(sql, params)

    def fetchcount(self, sql: str, params: Any = ()) -> int:
        return self._statements.fetchcount(sql, params)

    # -- kv hot path: the C driver's own closures where it has them ----------------------
    def fileno(self) -> Optional[int]:
        """The socket, where the driver's closures also split into send / finish (mysqlclient)."""
        f = getattr(self._statements, "fileno", None)
        return f() if f is not None and self.db is not None else None

    def reader(self, table: str, fields: Optional[list[str]]) -> Callable[[Any], int]:
        st = self._statements
        if hasattr(st, "counter"):
            return st.counter(self._read_sql(table, fields))
        return super().reader(table, fields)

    def updater(self, table: str, field: str) -> Callable[[Any, Any], Any]:
        st = self._statements
        if hasattr(st, "updater"):
            return st.updater(self._update_sql(table, (field,)))
        return super().updater(table, field)

    # sysbench's statements: the driver's own where it has them (mysqlclient: split calls too)
    def query_counter(self, sql: str) -> Callable[[Any], int]:
        st = self._statements
        return st.query_counter(sql) if hasattr(st, "query_counter") else super().query_counter(sql)

    def row_counter(self, sql: str) -> Callable[[Any], int]:  # mysqlclient's query_counter takes parameters of any type
        st = self._statements
        return st.query_counter(sql) if hasattr(st, "query_counter") else super().row_counter(sql)

    def row_fetcher(self, sql: str) -> Callable[[Any], Any]:
        st = self._statements
        return st.row_fetcher(sql) if hasattr(st, "row_fetcher") else super().row_fetcher(sql)

    def statement_runner(self, sql: str) -> Callable[[Any], int]:
        st = self._statements
        return st.statement_runner(sql) if hasattr(st, "statement_runner") else super().statement_runner(sql)

    def transaction_calls(self, writes: bool = True) -> tuple[Callable[[], Any], Callable[[], Any]]:
        st = self._statements
        return st.transaction_calls(writes) if hasattr(st, "transaction_calls") else super().transaction_calls(writes)

    def rollback_call(self) -> Callable[[], Any]:
        st = self._statements
        return st.rollback_call() if hasattr(st, "rollback_call") else super().rollback_call()

    # -- DDL ---------------------------------------------------------------------------
    def kv_table_ddl(self, table: str, fieldcount: int) -> str:
        return super().kv_table_ddl(table, fieldcount) + f" ENGINE={self._table_engine}"
    # -- transactions --------------------------------------------------------------------
    def rollback(self) -> None:
        if self.db is not None and self._driver.is_open(self.db):
            self._statements.execute("ROLLBACK")
