"""PostgreSQL (psycopg 3): the YCSB ``usertable`` and sysbench's ``sbtestN``.

URL: ``postgresql://USER@HOST:PORT/DB?sslmode=require&...`` (any libpq parameter in the
query string); the password is ``target.password`` and reaches libpq as a separate
keyword argument, never inside a connection string.

- One connection per client thread, in autocommit mode: a YCSB operation is one
  statement and one implicit transaction.
- The per-operation statements (the ones ``SqlBinding`` builds and caches) are
  server-side prepared statements, parsed and planned once per connection and then only
  bound and executed, as sysbench does with ``PQprepare``/``PQexecPrepared``. They run
  through psycopg's libpq layer (``psycopg.pq``: ``PGconn.exec_prepared``, which releases
  the GIL while it waits) with rows loaded by a ``psycopg.adapt.Transformer`` kept per
  statement: the same libpq calls and the same type loaders as a psycopg cursor, without
  the cursor's per-execute Python machinery — measured at 19 µs of client CPU per
  10-field read against 47 µs through ``cursor.execute(prepare=True)`` (docs/decisions/0005-default-drivers.md).
  DDL and set-up statements go through an ordinary cursor. ``options.prepare: false``
  sends every statement through the cursor, unprepared.
- A sysbench event is ``BEGIN`` ... ``COMMIT`` issued as plain statements, exactly as
  sysbench issues them.
- Errors: deadlock (40P01), lock not available (55P03) and serialization failure (40001)
  are retryable (the worker rolls back and reruns the event, as sysbench does);
  unique violation (23505) is a duplicate; a lost or refused connection (class 08,
  admin shutdown 57P01/57P02, cannot connect now 57P03, or a broken socket) is a
  connection error (reconnect and count).

Options (``target.options``): ``prepare`` (bool, default true), ``connect_timeout``
(seconds, default 10), ``isolation_level`` (e.g. ``"REPEATABLE READ"``; default: the
server's), ``application_name`` (default ``dbswarm``), ``statement_timeout_ms``.
"""
from __future__ import annotations

import time
from functools import partial
from typing import Any, Callable, Iterable, Optional, TypeVar, cast

import psycopg
from psycopg import pq
from psycopg.adapt import Transformer
from psycopg.errors import error_from_result

from dbswarm.bindings import register
from dbswarm.bindings.base import PENDING, Connection, Multiplexed
from dbswarm.bindings.protocols import Split
from dbswarm.bindings.sql import SqlBinding
from dbswarm.errors import CONNECTION, DUPLICATE, FATAL, RETRYABLE, ErrorClass

T = TypeVar("T")
ISOLATION_LEVELS = ("READ UNCOMMITTED", "READ COMMITTED", "REPEATABLE READ", "SERIALIZABLE")
MAX_PARAMS = 65535  # the protocol's limit of parameters per statement

_RETRYABLE = {"40P01": "deadlock", "55P03": "lock_not_available", "40001": "serialization_failure"}
_CONNECTION_STATES = {"57P01": "admin_shutdown", "57P02": "crash_shutdown", "57P03": "cannot_connect_now"}
_OK = (pq.ExecStatus.TUPLES_OK, pq.ExecStatus.COMMAND_OK)
_INT_TEXT = b"%d".__mod__  # an int parameter in libpq's text format (str(v).encode(), in C)


def numbered_placeholders(sql: str) -> str:
    """``%s`` placeholders -> libpq's ``$1, $2, ...`` (our statements hold no other ``%``)."""
    parts = sql.split("%s")
    out = [parts[0]]
    for i, part in enumerate(parts[1:], 1):
        out.append(f"${i}")
        out.append(part)
    return "".join(out)


def text_params(params: Iterable[Any]) -> list:
    """Parameters in libpq's text format; the server infers their types from the statement."""
    out = []
    for v in params:
        t = type(v)
        if t is str:
            out.append(v.encode())
        elif t is int or t is float:
            out.append(str(v).encode())
        elif v is None:
            out.append(None)
        else:
            raise TypeError(f"postgresql binding: parameter of type {t.__name__} is not supported "
                            "by prepared statements (str, int, float, None)")
    return out


def _ntuples(res: pq.abc.PGresult) -> int:
    return res.ntuples


def _changed(res: pq.abc.PGresult) -> bool:
    return (res.command_tuples or 0) > 0


def _affected(res: pq.abc.PGresult) -> int:
    n = res.command_tuples
    return -1 if n is None else n


def _nothing(res: pq.abc.PGresult) -> None:
    return None


def _send_simple(send_query: Callable[[bytes], None], got: list, command: bytes) -> None:
    got.clear()
    send_query(command)


class _Prepared:
    """One server-side prepared statement on one connection, and the loaders of its rows."""
    __slots__ = ("name", "tx", "loaders_set")

    def __init__(self, name: bytes, tx: "Transformer") -> None:  # type: ignore[valid-type]  # psycopg's private class
        self.name, self.tx, self.loaders_set = name, tx, False


def _reason(exc: BaseException) -> str:
    """A server error's first line (at most 200 characters), or its class's name."""
    text = str(exc).strip()
    return text.splitlines()[0][:200] if text else type(exc).__name__


def isolation_level(options: dict) -> Optional[str]:
    level = options.get("isolation_level")
    if level is None:
        return None
    norm = " ".join(str(level).replace("_", " ").upper().split())
    if norm not in ISOLATION_LEVELS:
        raise ValueError(f"target.options.isolation_level: {level!r} is not one of {', '.join(ISOLATION_LEVELS)}")
    return norm


@register("postgresql")
class PostgresBinding(SqlBinding, Multiplexed):
    dialect = "postgresql"
    max_params = MAX_PARAMS
    placeholder = "%s"
    insert_ignore_verb = "INSERT INTO"
    insert_ignore_suffix = " ON CONFLICT DO NOTHING"
    key_type = "VARCHAR(255)"
    field_type = "TEXT"

    def __init__(self, conn: Connection) -> None:
        super().__init__(conn)
        self.db: Optional[psycopg.Connection] = None
        self.cur: Any = None
        self._pg: Any = None                         # the connection's psycopg.pq.PGconn
        self._hot: set[str] = set()                  # statements built by SqlBinding._stmt, if prepared
        self._prepared: dict[str, _Prepared] = {}    # of these, the ones prepared on this connection
        opts = conn.options
        self._prepare = bool(opts.get("prepare", True))
        self._isolation = isolation_level(opts)
        self._server_version: Optional[int] = None
        self.connected_ns: list[int] = []            # when each session of this binding started
        self.splits = {}                             # this connection's split calls (Multiplexed)

    # -- life cycle ------------------------------------------------------------------
    def connect(self) -> None:
        opts = self.conn.options
        kwargs: dict[str, Any] = {"autocommit": True, "prepare_threshold": None,
                  "connect_timeout": int(opts.get("connect_timeout", 10)),
                  "application_name": str(opts.get("application_name", "dbswarm"))}
        if self.conn.password is not None:
            kwargs["password"] = self.conn.password
        if opts.get("statement_timeout_ms") is not None:
            kwargs["options"] = f"-c statement_timeout={int(opts['statement_timeout_ms'])}"
        self.db = psycopg.connect(self.conn.url or "", **kwargs)
        # a session's start-up reads the catalogs in a transaction of its own: one more in the
        # server's xact_commit (worker: dbswarm's own in the window)
        self.connected_ns.append(time.perf_counter_ns())
        if self._isolation:
            self.db.execute(f"SET SESSION CHARACTERISTICS AS TRANSACTION ISOLATION LEVEL {self._isolation}")
        self.cur = self.db.cursor()
        self._pg = self.db.pgconn
        self._prepared = {}
        self.splits = {}
        self._server_version = self.db.info.server_version

    def close(self) -> None:
        db, self.db, self.cur, self._pg = self.db, None, None, None
        if db is not None:
            db.close()

    def peer_addresses(self) -> Optional[list[str]]:
        """libpq's PQhostaddr: the address it connected to (of a host list, the one it chose);
        a unix socket's path when local."""
        info = cast(psycopg.Connection, self.db).info  # connected
        if info.hostaddr:
            return [info.hostaddr]
        host = info.host or ""
        if host.startswith("/"):
            return [f"{host.rstrip('/')}/.s.PGSQL.{info.port}"]
        return [host] if host else None

    def describe(self) -> dict:
        out = {"driver": f"psycopg {psycopg.__version__} ({pq.__impl__})",
               "prepared_statements": "server-side (libpq PQprepare / PQexecPrepared via psycopg.pq)"
            if self._prepare else "off",
               "autocommit": True,
               "transactions": "explicit BEGIN/COMMIT statements (sysbench events)",
               "isolation_level": self._isolation or "server default"}
        if self._server_version:
            v = self._server_version
            out["server_version"] = f"{v // 10000}.{v % 10000}"
        return out

    DURABILITY = ("synchronous_commit", "fsync", "wal_sync_method", "full_page_writes", "wal_level",
                  "default_transaction_isolation", "max_connections")

    def server_settings(self) -> dict:
        # one transaction in the server's counters, read inside the measured window (a statement
        # outside one is two: its Parse and its Execute each end an implicit transaction)
        if self.in_transaction():
            self.rollback()
        self.begin_own()
        try:
            rows = self.fetchall("SELECT name, setting, current_setting('server_version') FROM pg_settings "
                                 "WHERE name = ANY(%s) ORDER BY name", (list(self.DURABILITY),))
            version = rows[0][2] if rows else cast(tuple, self.fetchone("SHOW server_version"))[0]
        finally:
            self.end_own()
        return {"server_version": version, **{n: v for n, v, _ in rows}}

    def connection_room(self) -> Optional[dict]:
        """max_connections less the slots reserved for superusers (superuser_reserved_connections,
        and reserved_connections since PostgreSQL 16) for a role that is not one; the role's and
        the database's CONNECTION LIMIT (-1: none; a superuser is held by none of them). Client
        backends only: background workers and WAL senders have slots of their own."""
        row = self.fetchone(
            "SELECT current_setting('max_connections')::int, "
            "current_setting('superuser_reserved_connections')::int, "
            "coalesce(current_setting('reserved_connections', true), '0')::int, "
            "r.rolsuper, r.rolconnlimit, d.datconnlimit, "
            "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend'), "
            "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' AND usename = current_user), "
            "(SELECT count(*) FROM pg_stat_activity WHERE backend_type = 'client backend' "
            "AND datname = current_database()), current_user, current_database() "
            "FROM pg_roles r, pg_database d WHERE r.rolname = current_user AND d.datname = current_database()")
        if row is None:
            return None
        max_conn, su_reserved, reserved, superuser, role_limit, db_limit, in_use, role_use, db_use, role, db = row
        limits: list[dict[str, Any]] = [{"name": "max_connections" if superuser else
                                        "max_connections less superuser_reserved_connections and reserved_connections",
                                        "value": int(max_conn) - (0 if superuser else int(su_reserved) + int(reserved)),
                                        "in_use": int(in_use) - 1}]
        if not superuser and int(role_limit) >= 0:
            limits.append({"name": f"role {role}'s CONNECTION LIMIT",
                           "value": int(role_limit), "in_use": int(role_use) - 1})
        if not superuser and int(db_limit) >= 0:
            limits.append({"name": f"database {db}'s CONNECTION LIMIT", "value": int(db_limit), "in_use": int(db_use) - 1})
        return {"free": min(max(0, lim["value"] - lim["in_use"]) for lim in limits), "limits": limits}

    DATABASE_COUNTERS = ("xact_commit", "xact_rollback", "tup_returned", "tup_fetched", "tup_inserted",
                         "tup_updated", "tup_deleted")
    SETTLE_S = 3.0

    def server_counters(self, settle: bool = False) -> Optional[dict]:
        """pg_stat_database for this database (transactions = xact_commit + xact_rollback, as
        HammerDB's TPM) and, when the pg_stat_statements extension is installed, the calls of
        every statement on this database (``statements``; without it, ``warnings`` says so and
        ``unavailable`` says why: the result must not look cross-checked when it was not). A
        backend publishes its pg_stat_database counts when it ends or at most once a second,
        so the end edge reads until two reads 0.25 s apart agree (at most SETTLE_S).

        The optional reads (pg_stat_statements, autovacuum runs, the server's start) each run
        in a savepoint of their own inside the edge's transaction (``optional_read``): a failed
        one would otherwise abort the transaction and cost every read after it (the family's
        figures: TPC-C's NOPM)."""
        def database() -> dict[str, Any]:
            row = cast(tuple, self.fetchone("SELECT " + ", ".join(self.DATABASE_COUNTERS)
                                            + " FROM pg_stat_database WHERE datname = current_database()"))
            return {n: int(v or 0) for n, v in zip(self.DATABASE_COUNTERS, row)}
        out = database()
        give_up = time.monotonic() + self.SETTLE_S
        while settle and time.monotonic() < give_up:
            time.sleep(0.25)
            self.fetchone("SELECT pg_stat_clear_snapshot()")
            again = database()
            if again == out:
                break
            out = again
        out["transactions"] = out["xact_commit"] + out["xact_rollback"]
        warnings: list[str] = []
        # the server's own maintenance in this database: an autovacuum or autoanalyze of a table
        # commits its own transactions, counted with the clients' (TPC-C's TPM says how many ran)
        try:
            row = cast(tuple, self.optional_read(lambda: self.fetchone(
                "SELECT coalesce(sum(autovacuum_count), 0), coalesce(sum(autoanalyze_count), 0) "
                "FROM pg_stat_user_tables")))
            out["autovacuum_runs"] = int(row[0] or 0) + int(row[1] or 0)
        except psycopg.Error as exc:
            warnings.append(f"autovacuum runs not read (pg_stat_user_tables: {_reason(exc)})")
        # when the server started: a restart inside the window starts its counters again from zero
        try:
            out["server_started_at"] = float(cast(tuple, self.optional_read(lambda: self.fetchone(
                "SELECT extract(epoch FROM pg_postmaster_start_time())")))[0])
        except psycopg.Error as exc:
            warnings.append(f"the server's start time not read (a restart in the window goes unseen): {_reason(exc)}")
        try:
            statements = self.optional_read(self._statements)
        except psycopg.Error as exc:  # created in this database, not in shared_preload_libraries
            statements = None, f"pg_stat_statements not readable in this database: {_reason(exc)}"
        if statements[0] is not None:
            calls, times = statements[0]
            out["statements"] = calls
            out["statement_times"] = times
            out["statement_source"] = "pg_stat_statements total_exec_time (this database, every client)"
        else:
            reason = statements[1]
            warnings.append(f"{self.STATEMENTS_MISSING} ({reason})")
            out["statement_times_missing"] = reason
            out["unavailable"] = {"statements": reason}
        if warnings:
            out["warnings"] = warnings
        return out

    def _statements(self) -> tuple:
        """((calls, {statement kind: {calls, exec_us}}), None) from pg_stat_statements on this
        database, or (None, why not) when the extension is not created in it; raises when it is
        created but cannot be read (not in shared_preload_libraries)."""
        if cast(tuple, self.fetchone("SELECT to_regclass('pg_stat_statements')"))[0] is None:
            return None, ("pg_stat_statements is not created in this database "
                          "(CREATE EXTENSION pg_stat_statements, with the library in shared_preload_libraries)")
        row = cast(tuple, self.fetchone("SELECT sum(calls) FROM pg_stat_statements WHERE dbid = "
                                        "(SELECT oid FROM pg_database WHERE datname = current_database())"))
        # the server's own execution time per statement kind (the first word), for the
        # client-health verdict's server-vs-client latency (docs/client-health.md)
        rows = self.fetchall("SELECT upper(split_part(ltrim(query), ' ', 1)), sum(calls), sum(total_exec_time) "
                             "FROM pg_stat_statements WHERE dbid = (SELECT oid FROM pg_database "
                             "WHERE datname = current_database()) GROUP BY 1")
        times = {k: {"calls": int(c or 0), "exec_us": float(t or 0) * 1000} for k, c, t in rows if k}
        return (int(row[0] or 0), times), None

    def optional_read(self, read: Callable[[], T]) -> T:
        """``read()`` where its failure must cost nothing else: inside a transaction, in a
        savepoint of its own, rolled back to when it fails (PostgreSQL aborts the whole
        transaction at a failed statement: every read after it would fail too); outside one,
        its statements are transactions of their own already."""
        if not self.in_transaction():
            return read()
        self._simple(b"SAVEPOINT dbswarm_optional_read")
        try:
            value = read()
        except BaseException:
            self._simple(b"ROLLBACK TO SAVEPOINT dbswarm_optional_read")
            raise
        self._simple(b"RELEASE SAVEPOINT dbswarm_optional_read")
        return value

    def transaction_failed(self) -> bool:
        db = self.db
        return db is not None and not db.closed and db.info.transaction_status == pq.TransactionStatus.INERROR

    STATEMENTS_MISSING = "pg_stat_statements not installed: statements not cross-checked"

    def classify(self, exc: BaseException) -> ErrorClass:
        state = getattr(exc, "sqlstate", None)
        if state in _RETRYABLE:
            return ErrorClass(RETRYABLE, _RETRYABLE[state])
        if state == "23505":
            return ErrorClass(DUPLICATE, "duplicate_key")
        if state in _CONNECTION_STATES:
            return ErrorClass(CONNECTION, _CONNECTION_STATES[state])
        if state and state.startswith("08"):
            return ErrorClass(CONNECTION, "connection_exception")
        if state == "53300" or (isinstance(exc, psycopg.OperationalError)
                                and ("too many clients" in str(exc) or "too many connections" in str(exc))):
            # the server's connection limit (max_connections, a role's or database's CONNECTION LIMIT):
            # the target answers, and refuses; not an unreachable one
            return ErrorClass(CONNECTION, "too_many_connections")
        db = self.db
        if db is None and isinstance(exc, AttributeError):
            return ErrorClass(CONNECTION, "not_connected")
        if isinstance(exc, (psycopg.OperationalError, psycopg.InterfaceError)) and (
                state is None or db is None or db.closed or db.broken or db.pgconn.status != pq.ConnStatus.OK):
            return ErrorClass(CONNECTION, "connection_lost" if db is not None else "connect_failed")
        if isinstance(exc, (ConnectionError, TimeoutError)):
            return ErrorClass(CONNECTION, "connection_lost")
        if state == "57014":
            return ErrorClass(FATAL, "query_canceled")
        return ErrorClass(FATAL, type(exc).__name__)

    # -- driver hooks ------------------------------------------------------------------
    def prepare(self, sql: str) -> str:
        """A family's per-operation statement: prepared on the server at its first use on
        each connection (``options.prepare: false``: sent as it is)."""
        if self._prepare:
            self._hot.add(sql)
        return sql

    prepare_is_transaction = True  # a protocol-level Parse outside a transaction block: xact_commit + 1
    statement_is_transaction = True  # xact_commit + 1 for every autocommit statement

    def prepare_now(self, sql: str) -> bool:
        if self._prepare and sql in self._hot and sql not in self._prepared and self._pg is not None:
            self._prepare_statement(sql)
            return True
        return False

    def _stmt(self, key: tuple, build: Callable[[], str]) -> str:
        sql = self._sql.get(key)
        if sql is None:
            sql = self._sql[key] = build()
            if self._prepare:  # the per-operation statements (all take parameters)
                self._hot.add(sql)
        return sql

    def _run(self, sql: str, params: Any) -> Any:
        cur = self.cur
        if params:
            cur.execute(sql, params, prepare=False)
        else:
            cur.execute(sql)
        return cur

    def _exec_hot(self, sql: str, params: Any) -> Optional[tuple[_Prepared, Any]]:
        """Run a hot statement as a prepared statement: its prepared entry and result (raises
        on error); None if sql is not a hot statement."""
        p = self._prepared.get(sql)
        if p is None:
            if sql not in self._hot:
                return None
            p = self._prepare_statement(sql)
        res = self._pg.exec_prepared(p.name, text_params(params))
        if res.status not in _OK:
            raise self._error(res)
        return p, res

    def _prepare_statement(self, sql: str) -> _Prepared:
        name = f"dbswarm_{len(self._prepared)}".encode()
        res = self._pg.prepare(name, numbered_placeholders(sql).encode())
        if res.status not in _OK:
            raise self._error(res)
        p = self._prepared[sql] = _Prepared(name, Transformer(self.db))
        return p

    def _error(self, res: Any) -> Exception:
        """The psycopg exception a cursor would raise for this result (sqlstate, diagnostics);
        a result libpq made up because the connection broke is an OperationalError, as there."""
        if self._pg.status != pq.ConnStatus.OK and not res.error_field(pq.DiagnosticField.SQLSTATE):
            msg = (res.error_message or b"connection lost").decode("utf-8", "replace").strip()
            return psycopg.OperationalError(f"consuming input failed: {msg}")
        return error_from_result(res, encoding=cast(psycopg.Connection, self.db).info.encoding)

    @staticmethod
    def _rows(p: _Prepared, res: Any) -> Any:
        tx: Any = p.tx
        if p.loaders_set:
            tx.set_pgresult(res, set_loaders=False)
        else:
            tx.set_pgresult(res)
            p.loaders_set = True
        return tx

    # The statements of one or two int parameters (sysbench's point selects, ranges, updates
    # and deletes by id) that are prepared on this connection already: libpq's call at once,
    # the ints formatted by one C-level map, without _exec_hot's and text_params' two Python
    # calls (the same statement, parameters and result; the contract suite runs both).
    def execute(self, sql: str, params: Any = ()) -> int:
        p = self._prepared.get(sql)
        if p is not None and 0 < len(params) < 3 and type(params[0]) is int is type(params[-1]):
            res = self._pg.exec_prepared(p.name, list(map(_INT_TEXT, params)))
            if res.status not in _OK:
                raise self._error(res)
            n = res.command_tuples
            return -1 if n is None else n
        hot = self._exec_hot(sql, params)
        if hot is None:
            return self._run(sql, params).rowcount
        n = hot[1].command_tuples
        return -1 if n is None else n

    def fetchall(self, sql: str, params: Any = ()) -> list[tuple]:
        hot = self._exec_hot(sql, params)
        if hot is None:
            return self._run(sql, params).fetchall()
        p, res = hot
        return self._rows(p, res).load_rows(0, res.ntuples, tuple)

    def fetchone(self, sql: str, params: Any = ()) -> Optional[tuple]:
        hot = self._exec_hot(sql, params)
        if hot is None:
            return self._run(sql, params).fetchone()
        p, res = hot
        return self._rows(p, res).load_row(0, tuple) if res.ntuples else None

    def fetchcount(self, sql: str, params: Any = ()) -> int:
        p = self._prepared.get(sql)
        if p is not None and 0 < len(params) < 3 and type(params[0]) is int is type(params[-1]):
            res = self._pg.exec_prepared(p.name, list(map(_INT_TEXT, params)))
            if res.status not in _OK:
                raise self._error(res)
            return res.ntuples
        hot = self._exec_hot(sql, params)
        if hot is None:  # the cursor holds the whole result; rowcount is its row count
            return self._run(sql, params).rowcount
        return hot[1].ntuples  # libpq has received every row; none is loaded

    def query_counter(self, sql: str) -> Callable[[Any], int]:
        """fetchcount's int-parameter case (sysbench's selects) as the prepared statement's
        own libpq call: no statement lookup, no parameter checks per execution (CPUs shared,
        each costs between two round trips several times what it costs in a loop)."""
        p = self._hot_prepared(sql)
        n = sql.count("%s")
        if p is None or n not in (1, 2):
            return super().query_counter(sql)
        exec_prepared, name, error, ok, text = (self._pg.exec_prepared, p.name, self._error, pq.ExecStatus.TUPLES_OK,
                                                _INT_TEXT)
        if n == 1:
            def count(params: Any) -> int:
                res = exec_prepared(name, [text(params[0])])
                if res.status != ok:
                    raise error(res)
                return res.ntuples
        else:
            def count(params: Any) -> int:
                res = exec_prepared(name, [text(params[0]), text(params[1])])
                if res.status != ok:
                    raise error(res)
                return res.ntuples
        self.splits[count] = self._split_prepared(sql, ok, _ntuples)
        return count

    def row_counter(self, sql: str) -> Callable[[Any], int]:
        """``fetchcount(sql, params)`` as it is, for parameters of any type (YCSB's scans: a key
        and a count), with the prepared statement's split calls (engine.mux): ``send(params)``,
        ``finish()`` -> the rows."""
        return self._prepared_call(sql, self.fetchcount, super().row_counter, pq.ExecStatus.TUPLES_OK, _ntuples)

    def row_fetcher(self, sql: str) -> Callable[[Any], Any]:
        """``fetchall(sql, params)`` as it is, with the prepared statement's split calls
        (engine.mux): ``send(params)``, ``finish()`` -> the rows, loaded as fetchall loads them."""
        return self._prepared_call(sql, self.fetchall, super().row_fetcher, pq.ExecStatus.TUPLES_OK, None)

    def statement_runner(self, sql: str) -> Callable[[Any], int]:
        """``execute(sql, params)`` as it is (its int fast path), with the prepared statement's
        split calls (engine.mux): ``send(params)``, ``finish()`` -> the affected rows."""
        return self._prepared_call(sql, self.execute, super().statement_runner, pq.ExecStatus.COMMAND_OK,
                                   _affected)

    def _prepared_call(self, sql: str, blocking: Callable[[str, Any], Any], unprepared: Callable[[str], Any],
                       ok: pq.ExecStatus, value: Optional[Callable[[Any], Any]]) -> Any:
        """``blocking(sql, params)`` as a call of ``params``, carrying the split calls of the
        statement prepared on this connection (``_split_prepared``); ``unprepared(sql)`` where
        statements are not prepared. ``value(result)``: what ``finish`` returns (None: the rows)."""
        if not self._prepare or self._pg is None:
            return unprepared(sql)
        call = partial(blocking, sql)
        self.splits[call] = self._split_prepared(sql, ok, value)
        return call

    def _split_prepared(self, sql: str, ok: pq.ExecStatus,
                        value: Optional[Callable[[Any], Any]]) -> Split:
        """(send(params), finish) of ``sql`` as a statement prepared on this connection: prepared
        at its first send where it is not yet (its Parse sent; when the Parse's answer is in,
        ``finish`` sends the execution and returns PENDING), so that a call taken in the middle
        of a transaction (TPC-C's batched statements, each line count's at its first use) makes
        no round trip in the multiplexer's thread. A client's set-up prepares its statements
        before (``prepare_now``, ``_hot_prepared``): then the first send executes."""
        pg, prepared, rows = self._pg, self._prepared, self._rows
        send_prepared, send_prepare = pg.send_query_prepared, pg.send_prepare
        at: list = [prepared.get(sql), None, None]  # the statement; the Parse in flight's name and parameters

        def loaded(res: Any) -> Any:
            return rows(at[0], res).load_rows(0, res.ntuples, tuple)
        finish_run, got = self._finisher(ok, loaded if value is None else value)
        finish_parse, parse_got = self._finisher(pq.ExecStatus.COMMAND_OK, _nothing)

        def send(params: Any) -> None:
            p = at[0]
            if p is None:
                p = at[0] = prepared.get(sql)  # (prepared since by a blocking call)
            if p is not None:
                got.clear()
                send_prepared(p.name, text_params(params))
                return
            name = f"dbswarm_{len(prepared)}".encode()
            at[2] = text_params(params)
            at[1] = name
            parse_got.clear()
            send_prepare(name, numbered_placeholders(sql).encode())

        def finish() -> Any:
            name = at[1]
            if name is None:
                return finish_run()
            try:
                if finish_parse() is PENDING:
                    return PENDING
            except Exception:  # the Parse failed (a missing table): the next send parses again
                at[1] = at[2] = None
                raise
            params, at[1], at[2] = at[2], None, None
            p = at[0] = prepared[sql] = _Prepared(name, Transformer(self.db))
            got.clear()
            send_prepared(p.name, params)
            return PENDING
        return Split(send, finish)

    def transaction_calls(self, writes: bool = True) -> tuple[Callable[[], Any], Callable[[], Any]]:
        """BEGIN and COMMIT as ``_simple`` sends them, with their split calls (libpq's
        ``send_query``: the simple protocol, one round trip each, as sysbench)."""
        if self._pg is None:
            return super().transaction_calls(writes)
        calls = []
        for command in (b"BEGIN", b"COMMIT"):
            call = partial(self._simple, command)
            finish, got = self._finisher(pq.ExecStatus.COMMAND_OK, _nothing)
            self.split(call, partial(_send_simple, self._pg.send_query, got, command), finish)
            calls.append(call)
        return calls[0], calls[1]

    def rollback_call(self) -> Callable[[], Any]:
        """ROLLBACK inside a transaction begun, as ``rollback`` sends it, split (``_send_simple``)."""
        if self._pg is None:
            return super().rollback_call()
        call = partial(self.rollback)
        finish, got = self._finisher(pq.ExecStatus.COMMAND_OK, _nothing)
        self.split(call, partial(_send_simple, self._pg.send_query, got, b"ROLLBACK"), finish)
        return call

    # -- kv hot path: the prepared statement's libpq call, bound once per client thread -----
    # keys as bytes, as libpq takes them (the YCSB client memoizes them encoded)
    hot_key_type = bytes

    def reader(self, table: str, fields: Optional[list[str]]) -> Callable[[Any], int]:
        p = self._hot_prepared(self._read_sql(table, fields))
        if p is None:
            read = super().reader(table, fields)
            return lambda key: read(key.decode())
        exec_prepared, name, error, ok = self._pg.exec_prepared, p.name, self._error, pq.ExecStatus.TUPLES_OK

        def count(key: bytes) -> int:
            res = exec_prepared(name, [key])
            if res.status != ok:
                raise error(res)
            return res.ntuples
        self.splits[count] = self._split(name, ok, rows=True)
        return count

    def updater(self, table: str, field: str) -> Callable[[Any, Any], Any]:
        p = self._hot_prepared(self._update_sql(table, (field,)))
        if p is None:
            update_ = super().updater(table, field)
            return lambda value, key: update_(value, key.decode())
        exec_prepared, name, error, ok = self._pg.exec_prepared, p.name, self._error, pq.ExecStatus.COMMAND_OK

        def update(value: str, key: bytes) -> bool:
            res = exec_prepared(name, [value.encode(), key])
            if res.status != ok:
                raise error(res)
            return (res.command_tuples or 0) > 0
        self.splits[update] = self._split(name, ok, rows=False)
        return update

    def fileno(self) -> Optional[int]:
        """The connection's socket, where the kv hot path's statements are prepared (their
        split calls: ``_split``)."""
        return self._pg.socket if self._pg is not None and self._prepare else None

    def _split(self, name: bytes, ok: pq.ExecStatus, rows: bool) -> Split:
        """(send, finish) of the reader (``rows``: send(key), finish() -> rows found) or the
        updater (send(value, key), finish() -> a row changed) prepared as ``name``: libpq's
        ``send_query_prepared``, then ``finish`` (``_finisher``) each time the socket is readable."""
        send_prepared = self._pg.send_query_prepared
        finish, got = self._finisher(ok, _ntuples if rows else _changed)

        def send_key(key: bytes) -> None:
            got.clear()
            send_prepared(name, [key])

        def send_value_key(value: str, key: bytes) -> None:
            got.clear()
            send_prepared(name, [value.encode(), key])
        return Split(send_key if rows else send_value_key, finish)

    def _finisher(self, ok: pq.ExecStatus, value: Callable[[Any], Any]) -> tuple[Callable[[], Any], list]:
        """``finish()`` of a statement sent on this connection, and the list its results
        gather in (a send clears it): ``consume_input``, then the results libpq has whole
        (the statement's, then None); ``value(result)`` when they are all read, or PENDING
        while libpq still waits for bytes. An error result is raised once the connection is
        ready for the next statement (its results all read)."""
        pg, error = self._pg, self._error
        consume, busy, get_result = pg.consume_input, pg.is_busy, pg.get_result
        got: list = []

        def finish() -> Any:
            consume()  # raises OperationalError on a broken connection
            while not busy():
                res = get_result()
                if res is not None:
                    got.append(res)
                    continue
                last = got[-1] if got else None
                got.clear()
                if last is None or last.status != ok:
                    raise error(last) if last is not None else psycopg.OperationalError("no result")
                return value(last)
            return PENDING
        return finish, got

    def _hot_prepared(self, sql: str) -> Optional[_Prepared]:
        """sql prepared on this connection now (as prepare_now), or None: not prepared
        statements (``options.prepare: false``), not connected, or the PREPARE failed (a
        missing table: the error then comes from the operation, classified, as without this
        path)."""
        if not self._prepare or self._pg is None:
            return None
        p = self._prepared.get(sql)
        if p is None:
            try:
                p = self._prepare_statement(sql)
            except Exception:
                return None
        return p

    def _simple(self, command: bytes) -> None:
        """BEGIN / COMMIT / ROLLBACK: one simple-protocol round trip, as sysbench sends them."""
        res = self._pg.exec_(command)
        if res.status not in _OK:
            raise self._error(res)

    def begin(self, writes: bool = True) -> None:
        self._simple(b"BEGIN")

    def commit(self) -> None:
        self._simple(b"COMMIT")

    # -- batches: keep under the protocol's parameter limit ------------------------------
    def insert_batch(self, table: str, rows: list[tuple[str, dict]]) -> None:
        if not rows:
            return
        per_row = len(rows[0][1]) + 1
        step = max(1, MAX_PARAMS // per_row)
        for i in range(0, len(rows), step):
            super().insert_batch(table, rows[i:i + step])

    # -- transactions --------------------------------------------------------------------
    def in_transaction(self) -> bool:
        db = self.db
        return db is not None and not db.closed and db.info.transaction_status in (
            pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR)

    def begin_own(self) -> None:
        self._simple(b"START TRANSACTION READ ONLY")

    def end_own(self) -> None:
        self._simple(b"END")

    def rollback(self) -> None:
        db = self.db
        if db is not None and not db.closed and db.info.transaction_status in (
                pq.TransactionStatus.INTRANS, pq.TransactionStatus.INERROR):
            self._simple(b"ROLLBACK")
