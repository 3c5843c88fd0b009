"""MySQL and MariaDB through mysqlclient (MySQLdb: libmariadb / libmysqlclient in C), an
optional faster driver beside PyMySQL (pure Python, the portable default).

Everything but the driver is the ``mysql`` binding's: same URL, same options, same SQL,
same statement cache, same cursor calls, same error classes (MySQL error codes are the
driver's ``args[0]`` in both). Measured on MariaDB 10.11 (BENCHMARKS.md, "Proposed
hot-path changes"): client CPU per YCSB read ~2.7× lower, per sysbench oltp_read_write
transaction ~2.4× lower than with PyMySQL.

Not wired into the registry yet (needs, in ``bindings/__init__.py`` ``_MODULES``:
``"mysqlclient": "dbswarm.bindings.mysqlclient"``, and ``"mysqlclient"`` in
``spec.ENGINES``); needs ``pip install mysqlclient`` (build dependency on Debian:
``libmariadb-dev`` and ``pkg-config``).
"""
from __future__ import annotations

import MySQLdb
from MySQLdb.constants import CLIENT

from . import register
from .base import CONNECTION, DUPLICATE, FATAL, RETRYABLE, ErrorClass
from .mysql import _CONNECTION, _RETRYABLE, MysqlBinding


@register("mysqlclient")
class MysqlclientBinding(MysqlBinding):
    def connect(self):
        kw = self._kwargs
        args = {"host": kw["host"], "port": int(kw["port"]), "user": kw.get("user", ""),
                "password": self.conn.password or "", "charset": kw.get("charset", "utf8mb4"),
                "autocommit": True, "client_flag": CLIENT.FOUND_ROWS,
                "connect_timeout": int(float(kw.get("connect_timeout",
                                                    self.conn.options.get("connect_timeout", 10))))}
        if kw.get("database"):
            args["database"] = kw["database"]
        if kw.get("unix_socket"):
            args["unix_socket"] = kw["unix_socket"]
        for key in ("read_timeout", "write_timeout"):
            if kw.get(key) is not None:
                args[key] = int(float(kw[key]))
        if kw.get("ssl"):
            args["ssl"] = dict(kw["ssl"])
        if self._isolation:
            args["init_command"] = f"SET SESSION TRANSACTION ISOLATION LEVEL {self._isolation}"
        self.db = MySQLdb.connect(**args)
        self.cur = self.db.cursor()
        self._server_version = self.db.get_server_info()

    def close(self):
        db, self.db, self.cur = self.db, None, None
        if db is not None:
            try:
                db.close()
            except Exception:  # already broken: closing must not fail
                pass

    def describe(self):
        out = super().describe()
        out["driver"] = f"mysqlclient {'.'.join(str(v) for v in MySQLdb.version_info[:3])} (MySQLdb, C)"
        out["prepared_statements"] = "client-side (MySQLdb escapes parameters; statements cached)"
        return out

    def classify(self, exc):
        code = exc.args[0] if isinstance(exc, MySQLdb.MySQLError) and exc.args and \
            isinstance(exc.args[0], int) else None
        if code in _RETRYABLE:
            return ErrorClass(RETRYABLE, _RETRYABLE[code])
        if code == 1062:
            return ErrorClass(DUPLICATE, "duplicate_key")
        if code in _CONNECTION:
            return ErrorClass(CONNECTION, _CONNECTION[code])
        if isinstance(exc, MySQLdb.InterfaceError):
            return ErrorClass(CONNECTION, "connection_closed")
        if isinstance(exc, (ConnectionError, TimeoutError, BrokenPipeError)):
            return ErrorClass(CONNECTION, "connection_lost")
        if self.db is None and isinstance(exc, AttributeError):
            return ErrorClass(CONNECTION, "not_connected")
        if isinstance(exc, MySQLdb.OperationalError) and code is not None and code >= 2000:
            return ErrorClass(CONNECTION, f"client_error_{code}")
        return ErrorClass(FATAL, f"{type(exc).__name__}_{code}" if code else type(exc).__name__)

    def sb_create_index(self, table_no):
        try:
            self._execute(f"CREATE INDEX k_{table_no} ON sbtest{table_no}(k)")
        except MySQLdb.OperationalError as exc:
            if exc.args[0] != 1061:  # duplicate key name: the index exists (a resumed campaign)
                raise

    def rollback(self):
        if self.db is not None:
            self.cur.execute("ROLLBACK")
