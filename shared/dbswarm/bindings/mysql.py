"""MySQL and MariaDB (PyMySQL): the YCSB ``usertable`` and sysbench's ``sbtestN``.

URL: ``mysql://USER@HOST:PORT/DB`` (also ``mariadb://``); query parameters ``charset``
(default utf8mb4), ``unix_socket``, ``connect_timeout``, ``read_timeout``,
``write_timeout``, ``ssl_ca`` (turns TLS on), ``ssl_verify_identity``. The password
is ``target.password``, handed to PyMySQL as its own argument.

- One connection per client thread, ``autocommit=1``: a YCSB operation is one statement.
- PyMySQL has no server-side prepared statements: statements are built once per
  (kind, table) and cached, and PyMySQL formats the parameters client-side (escaped
  literals). ``describe()`` records this, since sysbench uses server-side prepared
  statements by default (``--db-ps-mode=auto``).
- ``CLIENT_FOUND_ROWS`` is set so that an UPDATE reports the rows it matched (an update
  that writes the value already stored still counts as found, as in YCSB).
- A sysbench event is ``BEGIN`` ... ``COMMIT`` issued as plain statements, as sysbench
  issues them.
- Errors: deadlock (1213), lock wait timeout (1205) and "record changed" (1020) are
  retryable (sysbench's --mysql-ignore-errors default); duplicate key (1062) is a
  duplicate; server gone (2006), lost connection (2013), cannot connect (2002, 2003),
  connection killed (MariaDB 1927), server shutdown (1053), too many connections (1040)
  and a closed socket are connection errors.

Options (``target.options``): ``table_engine`` (default InnoDB), ``isolation_level``
(e.g. ``"READ COMMITTED"``; default: the server's), ``connect_timeout`` (seconds).
"""
from __future__ import annotations

from typing import Optional
from urllib.parse import parse_qsl, unquote, urlsplit

import pymysql
from pymysql.constants import CLIENT

from . import register
from .base import CONNECTION, DUPLICATE, FATAL, RETRYABLE, ErrorClass
from .sql import SqlBinding

ISOLATION_LEVELS = ("READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE")
URL_PARAMS = ("charset", "unix_socket", "connect_timeout", "read_timeout", "write_timeout", "ssl_ca",
              "ssl_verify_identity")

_RETRYABLE = {1213: "deadlock", 1205: "lock_wait_timeout", 1020: "record_changed"}
_CONNECTION = {2006: "server_gone", 2013: "connection_lost", 2002: "connect_failed", 2003: "connect_failed",
               2055: "connection_lost", 1927: "connection_killed", 1053: "server_shutdown",
               1040: "too_many_connections", 1152: "connection_aborted", 1158: "connection_aborted",
               1159: "connection_aborted", 1160: "connection_aborted", 1161: "connection_aborted",
               4031: "disconnected_idle"}


def parse_mysql_url(url: str) -> dict:
    """Connection keyword arguments for PyMySQL (everything but the password)."""
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


@register("mysql", "mariadb")
class MysqlBinding(SqlBinding):
    placeholder = "%s"
    insert_ignore_verb = "INSERT IGNORE INTO"
    insert_ignore_suffix = ""
    key_type = "VARCHAR(255)"
    field_type = "TEXT"

    def __init__(self, conn):
        super().__init__(conn)
        self.db: Optional[pymysql.connections.Connection] = None
        self.cur = None
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
        self._server_version = None

    # -- life cycle ------------------------------------------------------------------
    def connect(self):
        kw = dict(self._kwargs)
        kw.setdefault("charset", "utf8mb4")
        kw.setdefault("connect_timeout", float(self.conn.options.get("connect_timeout", 10)))
        init = None
        if self._isolation:
            init = f"SET SESSION TRANSACTION ISOLATION LEVEL {self._isolation}"
        self.db = pymysql.connect(password=self.conn.password or "", autocommit=True,
                                  client_flag=CLIENT.FOUND_ROWS, init_command=init, **kw)
        self.cur = self.db.cursor()
        self._server_version = self.db.get_server_info()

    def close(self):
        db, self.db, self.cur = self.db, None, None
        if db is not None:
            try:
                db.close()
            except Exception:  # already broken: closing must not fail
                db._force_close()

    def describe(self):
        out = {"driver": f"PyMySQL {pymysql.__version__}",
               "prepared_statements": "client-side (PyMySQL formats parameters; statements cached)",
               "autocommit": True, "client_flags": ["FOUND_ROWS"],
               "transactions": "explicit BEGIN/COMMIT statements (sysbench events)",
               "isolation_level": self._isolation or "server default",
               "table_engine": self._table_engine}
        if self._server_version:
            out["server_version"] = self._server_version
        return out

    def classify(self, exc):
        code = exc.args[0] if isinstance(exc, pymysql.err.MySQLError) and exc.args and \
            isinstance(exc.args[0], int) else None
        if code in _RETRYABLE:
            return ErrorClass(RETRYABLE, _RETRYABLE[code])
        if code == 1062:
            return ErrorClass(DUPLICATE, "duplicate_key")
        if code in _CONNECTION:
            return ErrorClass(CONNECTION, _CONNECTION[code])
        if isinstance(exc, pymysql.err.InterfaceError):
            return ErrorClass(CONNECTION, "connection_closed")
        if isinstance(exc, pymysql.err.InternalError) and "sequence" in str(exc).lower():
            return ErrorClass(CONNECTION, "protocol_out_of_sync")
        if isinstance(exc, (ConnectionError, TimeoutError, BrokenPipeError)):
            return ErrorClass(CONNECTION, "connection_lost")
        if self.db is None and isinstance(exc, AttributeError):
            return ErrorClass(CONNECTION, "not_connected")
        if isinstance(exc, pymysql.err.OperationalError) and code is not None and code >= 2000:
            return ErrorClass(CONNECTION, f"client_error_{code}")
        return ErrorClass(FATAL, f"{type(exc).__name__}_{code}" if code else type(exc).__name__)

    # -- driver hooks ------------------------------------------------------------------
    def _execute(self, sql, params=()):
        return self.cur.execute(sql, params if params else None)

    def _fetchall(self, sql, params=()):
        cur = self.cur
        cur.execute(sql, params if params else None)
        return cur.fetchall()

    def _fetchone(self, sql, params=()):
        cur = self.cur
        cur.execute(sql, params if params else None)
        return cur.fetchone()

    # -- DDL ---------------------------------------------------------------------------
    def ycsb_table_ddl(self, table, fieldcount):
        return super().ycsb_table_ddl(table, fieldcount) + f" ENGINE={self._table_engine}"

    def sb_table_ddl(self, table_no):
        # sysbench 1.0 oltp_common.lua, mysql flavour
        return (f"CREATE TABLE sbtest{table_no} (id INTEGER NOT NULL AUTO_INCREMENT, "
                f"k INTEGER DEFAULT '0' NOT NULL, c CHAR(120) DEFAULT '' NOT NULL, "
                f"pad CHAR(60) DEFAULT '' NOT NULL, PRIMARY KEY (id)) ENGINE={self._table_engine}")

    def sb_create_index(self, table_no):
        try:
            self._execute(f"CREATE INDEX k_{table_no} ON sbtest{table_no}(k)")
        except pymysql.err.OperationalError as exc:
            if exc.args[0] != 1061:  # duplicate key name: the index exists (a resumed campaign)
                raise

    # -- transactions --------------------------------------------------------------------
    def rollback(self):
        if self.db is not None and self.db.open:
            self.cur.execute("ROLLBACK")
