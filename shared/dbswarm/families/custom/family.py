"""The ``custom`` family: a workload written as data (``model.CustomWorkload``) run by the same
engine, loop, recorder, fan-out and report as the built-in families.

- prepare: the tables it creates (portable columns, or DDL per dialect) dropped and created;
  after the load, their indexes. Tables marked ``existing`` are left alone (a user's database).
- load: the tables' rows numbered 1..rows, one global range split over the client threads as
  every family's; a row's values are drawn from a stream seeded by the workload's seed, the
  table and the row number (the same rows for any shard layout, any resume); batches insert
  skipping existing keys (idempotent).
- run: a weighted choice of transaction per operation; its parameters drawn once from their
  generators (the same values again if the transaction is retried), its statements sent as the
  session's prepared statements with the values as parameters (never in the SQL text),
  captures (a row's columns into variables) for the statements after them. Each transaction is
  an operation of its own name (a ``CALL``: a failure recorded as its error; a serialization
  failure or deadlock rolled back and tried again first, up to ``max_tries``, counted in its
  ``retries`` apart from errors, as pgbench's --max-tries); each statement's
  service time goes to a per-statement histogram, kept as ``records`` (bucket, count pairs,
  merged exactly) and summarized under ``custom`` in the phase result.
"""
from __future__ import annotations

import random
import time
from functools import partial
from operator import itemgetter
from pathlib import Path
from typing import TYPE_CHECKING, Any, Callable, Iterable, Optional

import yaml
from pydantic import ValidationError
from pydantic_core import PydanticCustomError

from dbswarm.bindings.protocols import Split, SqlSession, splits_of
from dbswarm.errors import RETRYABLE, FamilyError
from dbswarm.families import base as families
from dbswarm.families.base import (
    CALL,
    BatchLoader,
    Client,
    Family,
    Op,
    Operation,
    RunLimits,
    Steps,
    ThreadContext,
    sleep_unless_stopped,
)
from dbswarm.families.custom import documents as D
from dbswarm.families.custom import model as M
from dbswarm.families.custom import preflight
from dbswarm.families.custom import server as S
from dbswarm.families.custom.generators import Draws, think_seconds
from dbswarm.families.tables import fmt
from dbswarm.measure.recorder import HIST_EXACT_BELOW, HIST_SUB_BUCKET_BITS, Measurement, new_histogram

if TYPE_CHECKING:
    from hdrh.histogram import HdrHistogram

    from dbswarm.bindings import Engine

LOAD_OP = "INSERT"
RECORD_PREFIX = "custom:"  # records "custom:<transaction>.<statement>": (µs bucket, count) pairs
TYPES = {
    "int": ("INTEGER", "INT", "INTEGER"), "integer": ("INTEGER", "INT", "INTEGER"),
    "bigint": ("BIGINT", "BIGINT", "INTEGER"), "smallint": ("SMALLINT", "SMALLINT", "INTEGER"),
    "text": ("TEXT", "TEXT", "TEXT"), "float": ("DOUBLE PRECISION", "DOUBLE", "REAL"),
    "double": ("DOUBLE PRECISION", "DOUBLE", "REAL"), "boolean": ("BOOLEAN", "BOOLEAN", "INTEGER"),
    "timestamp": ("TIMESTAMP", "DATETIME", "TEXT"), "date": ("DATE", "DATE", "TEXT"),
    "uuid": ("UUID", "CHAR(36)", "TEXT"),
}
_DIALECT_COLUMN = {"postgresql": 0, "mysql": 1, "sqlite": 2}
INSERT_IGNORE = {"sqlite": "INSERT OR IGNORE INTO {t} ({cols}) VALUES {rows}",
                 "mysql": "INSERT IGNORE INTO {t} ({cols}) VALUES {rows}",
                 "postgresql": "INSERT INTO {t} ({cols}) VALUES {rows} ON CONFLICT DO NOTHING"}
INDEX = {"sqlite": "CREATE INDEX IF NOT EXISTS {t}_{c}_idx ON {t} ({c})",
         "postgresql": "CREATE INDEX IF NOT EXISTS {t}_{c}_idx ON {t} ({c})",
         "mysql": "CREATE INDEX {t}_{c}_idx ON {t} ({c})"}
MYSQL_INDEX_EXISTS = ("SELECT COUNT(*) FROM information_schema.statistics WHERE table_schema = DATABASE() "
                      "AND table_name = %s AND index_name = %s")


def column_type(t: str, dialect: str) -> str:
    row = TYPES.get(t)
    if row is not None:
        return row[_DIALECT_COLUMN[dialect]]
    return t.upper().replace("DECIMAL", "NUMERIC") if dialect == "sqlite" else t.upper()


def create_table_sql(name: str, table: M.Table, dialect: str, options: str = "") -> str:
    if table.ddl is not None:
        return table.ddl[dialect]  # type: ignore[index]
    cols = table.columns or []
    parts = [f"{c.name} {column_type(c.type, dialect)}{'' if c.nullable and not c.key else ' NOT NULL'}"
             for c in cols]
    parts.append(f"PRIMARY KEY ({', '.join(c.name for c in cols if c.key)})")
    return f"CREATE TABLE {name} ({', '.join(parts)})" + (options if dialect == "mysql" else "")


def _check_dialect(w: M.CustomWorkload, dialect: str) -> None:
    missing = M.missing_dialect(w, dialect)
    if missing:
        raise FamilyError(f"{', '.join(missing)}: no SQL for dialect {dialect!r} (given per dialect without it)")


# ---- the load --------------------------------------------------------------------------------

class _Loaded:
    """One loaded table: its global row offset, its columns and their draw functions."""

    def __init__(self, index: int, name: str, table: M.Table, offset: int, draws: Draws) -> None:
        assert table.load is not None
        ld = table.load
        self.index, self.name, self.offset, self.rows, self.batch = index, name, offset, ld.rows, ld.batch
        self.columns = [ld.key] + list(ld.columns)
        self.fns = [draws.fns[g] for g in ld.columns.values()]


def loaded_tables(w: M.CustomWorkload) -> list[tuple[int, str, M.Table, int]]:
    """(table number, name, table, first global row) of every table the load writes, in order."""
    out, offset = [], 0
    for i, (name, table) in enumerate(w.tables.items()):
        if table.load is not None and not table.existing and table.load.rows:
            out.append((i, name, table, offset))
            offset += table.load.rows
    return out


class _Loader:
    def __init__(self, w: M.CustomWorkload, b: SqlSession) -> None:
        self.w, self.b = w, b
        self.rng = random.Random()
        draws = Draws(w.generators, self.rng, load=True)
        self.draws = draws
        self.tables = [_Loaded(i, n, t, off, draws) for i, n, t, off in loaded_tables(w)]
        self._sql: dict[tuple[int, int], str] = {}

    def table_at(self, row: int) -> _Loaded:
        for t in self.tables:
            if row < t.offset + t.rows:
                return t
        raise IndexError(row)

    def rows(self, t: _Loaded, first: int, last: int) -> list[Any]:
        """The values of rows first..last (1-based, inclusive), flat: each row's its own stream."""
        rng, draws, fns, seed = self.rng, self.draws, t.fns, self.w.seed
        out: list[Any] = []
        for row in range(first, last + 1):
            rng.seed((seed * 1_000_003 + t.index) * (1 << 40) + row)
            draws.row = row
            out.append(row)
            out.extend([f() for f in fns])
        return out

    def insert(self, t: _Loaded, values: list[Any], n: int) -> None:
        sql = self._sql.get((t.index, n))
        if sql is None:
            one = "(" + ", ".join(["%s"] * len(t.columns)) + ")"
            sql = self._sql[t.index, n] = self.b.prepare(INSERT_IGNORE[self.b.dialect].format(
                t=t.name, cols=", ".join(t.columns), rows=", ".join([one] * n)))
        self.b.execute(sql, values)

    def batch(self, nxt: int, end: int) -> tuple:
        t = self.table_at(nxt)
        per = max(1, min(t.batch, self.b.max_params // len(t.columns)))
        hi = min(end, nxt + per, t.offset + t.rows)
        first = nxt - t.offset + 1
        n = hi - nxt
        return hi, n, self.insert, (t, self.rows(t, first, first + n - 1), n)


# ---- the run ---------------------------------------------------------------------------------

QUERY, CAPTURE, WRITE, DOC = 0, 1, 2, 3


class _Stmt:
    __slots__ = ("sql", "params", "mode", "capture", "lat", "record", "doc", "pick", "one", "warm")

    def __init__(self, b: SqlSession, st: M.Statement, dialect: str, record: str) -> None:
        self.capture = tuple(st.capture)
        self.doc: Optional[D.DocStatement] = None
        if st.op is not None:  # a MongoDB operation
            self.sql, self.params, self.mode, self.doc = "", M.statement_params(st), DOC, D.DocStatement(st)
        else:
            text, self.params = M.parse_statement(M.statement_texts(st)[dialect])
            self.sql = b.prepare(text)
            self.mode = CAPTURE if st.capture else QUERY if M.statement_kind(st) == "read" else WRITE
        self.lat: dict[int, int] = {}  # µs bucket -> count, this call's
        self.warm = 0  # executions that returned during the warm-up (the server's window counts them)
        self.record = record
        # the parameters' values as a tuple, without a comprehension's frame a statement:
        # itemgetter's for two or more, (values[one],) for one, () for none
        n = len(self.params)
        self.pick: Optional[Callable[[dict], tuple]] = itemgetter(*self.params) if n > 1 else None
        self.one: Optional[str] = self.params[0] if n == 1 else None


class _Txn:
    def __init__(self, b: SqlSession, name: str, tx: M.Transaction, w: M.CustomWorkload, index: int = 0) -> None:
        self.name, self.tx, self.index = name, tx, index
        self.op = Op(name, CALL)
        self.writes = M.transaction_kind(tx) == "write"
        self.transaction = tx.transaction and not w.documents  # MongoDB: each operation on its own
        dialect = "" if w.documents else b.dialect
        self.stmts = [_Stmt(b, st, dialect, f"{RECORD_PREFIX}{name}.{i}") for i, st in enumerate(tx.statements)]
        self.captures = any(st.capture for st in tx.statements)
        self.begin: Optional[str] = None
        level = M.ISOLATION.get(tx.isolation or "")
        if level and dialect == "postgresql":
            self.begin = f"BEGIN ISOLATION LEVEL {level}"
        elif level and dialect == "mysql":
            self.begin = f"SET TRANSACTION ISOLATION LEVEL {level}"  # then BEGIN: the next transaction's


_PLAIN = (int, float, str, bytes, type(None))


def as_param(value: Any) -> Any:
    """A captured column's value as a parameter every driver takes: numbers, text and NULL as
    they are, a boolean as 0 / 1, anything else (Decimal, date and time, UUID) as its text, which
    the server parses back into the column's type (psycopg's prepared statements take only str,
    int, float and None; sqlite3 no Decimal)."""
    if type(value) in _PLAIN:
        return value
    if isinstance(value, bool):
        return int(value)
    if hasattr(value, "isoformat"):
        return value.isoformat(sep=" ") if hasattr(value, "hour") and hasattr(value, "day") else value.isoformat()
    return str(value)


class _Failed:
    """A statement's failure as the multiplexed steps see it (``_guarded``): the exception."""
    __slots__ = ("exc",)

    def __init__(self, exc: Exception) -> None:
        self.exc = exc


def _guarded(fn: Any, binding: object, on_send_error: Optional[Any] = None) -> Callable[..., Any]:
    """A binding's call of this connection (``statement_runner``'s, ``transaction_calls``'...)
    whose failure comes back to the transaction's steps as a ``_Failed`` value, so that they
    roll back and try again as ``_RunClient._body`` does: the call made here, and its split
    form (engine.mux) where it has one, whose ``finish`` returns the failure. A ``send`` that
    raises (the connection lost before the statement left) raises still, ending the steps: the
    engine records it and reconnects, as for a thread (``on_send_error()`` first: the
    statement's error count). ``binding``: the connection whose call it is (its split calls)."""
    def call(*args: Any) -> Any:
        try:
            return fn(*args)
        except Exception as exc:
            return _Failed(exc)
    splits = splits_of(binding)
    split = splits.get(fn) if splits is not None else None
    if splits is not None and split is not None:
        send, finish = split

        def guarded_send(*args: Any) -> None:
            try:
                send(*args)
            except Exception:
                if on_send_error is not None:
                    on_send_error()
                raise

        def guarded_finish() -> Any:
            try:
                return finish()
            except Exception as exc:
                return _Failed(exc)
        splits[call] = Split(guarded_send, guarded_finish)
    return call


class _Call:
    __slots__ = ("txn", "values")

    def __init__(self, txn: _Txn, values: dict) -> None:
        self.txn, self.values = txn, values


def transaction_params(tx: M.Transaction) -> tuple[tuple[str, ...], tuple[str, ...]]:
    """(parameters drawn once per transaction, in the order of their first use; the generator
    of each): every parameter of its statements but the captured variables."""
    captured = {v for st in tx.statements for v in st.capture}
    seen: list[str] = []
    for st in tx.statements:
        seen += [p for p in M.statement_params(st) if p not in captured and p not in seen]
    return tuple(seen), tuple(tx.bind.get(p, p) for p in seen)


class Picker:
    """A thread's choice of transaction (by weight) and its parameters' values, drawn from its
    stream in that order: the client's and the dry run's (``Custom.sample``) alike."""

    def __init__(self, w: M.CustomWorkload, rng: random.Random, thread: int = 0, threads: int = 1,
                 saved: Optional[dict] = None) -> None:
        self.random = rng.random
        self.draws = Draws(w.generators, rng, thread, threads, saved)
        self.params = [transaction_params(tx) for tx in w.transactions.values()]
        cum, acc = [], 0.0
        for t in w.transactions.values():
            acc += t.weight
            cum.append(acc)
        self.cum, self.total = cum, acc

    def pick(self) -> int:
        u = self.random() * self.total
        for i, c in enumerate(self.cum):
            if u < c:
                return i
        return len(self.cum) - 1

    def values(self, i: int) -> dict:
        fns = self.draws.fns
        params, gens = self.params[i]
        return {p: fns[g]() for p, g in zip(params, gens)}


class _RunClient(Client):
    def __init__(self, w: M.CustomWorkload, ctx: ThreadContext) -> None:
        self.w, self.m = w, ctx.m
        b = ctx.m.binding
        if w.documents:
            D.mongo_db(b)  # refused on an engine without documents
        else:
            _check_dialect(w, b.dialect)
        self.rng = ctx.rng
        self.random = ctx.rng.random
        self.picker = Picker(w, ctx.rng, ctx.thread, ctx.threads, ctx.saved.get("counters"))
        # the session's prepared statements: kept by the binding across reconnects (a new
        # connection prepares them again at their first use)
        self.txns = [_Txn(b, name, tx, w, i) for i, (name, tx) in enumerate(w.transactions.items())]
        for txn in self.txns:  # prepared before the measured window where the engine can (best effort)
            for s in txn.stmts:
                if s.mode == DOC:
                    break
                try:
                    b.prepare_now(s.sql)
                except Exception:
                    break
        self.retries: dict[str, int] = {}
        self.errors: dict[str, int] = {}
        self.no_row: dict[str, int] = {}
        self.perf = time.perf_counter_ns
        # the transactions' statements as the session's calls (stepwise): the shard's
        # multiplexer may drive them where the session offers its socket (engine.mux); not with
        # think times (a sleep would hold every connection) nor MongoDB's operations
        self.multiplexable = not w.documents and all(t.tx.think_time is None for t in self.txns)
        self._bound: Optional[list] = None  # the calls of this connection (_bind), None: taken again
        ctx.m.on_reconnect.append(self._unbind)
        self.body = self._body_fn()

    def _body_fn(self) -> Callable[[SqlSession, _Call], None]:
        """``_body``, carrying ``steps`` (``_steps``: the same transaction, a statement at a time,
        for the multiplexer)."""
        body = self._body

        def run(b: SqlSession, call: _Call) -> None:
            body(b, call)
        return families.stepwise(self._steps, run)

    def _unbind(self) -> None:
        self._bound = None  # the calls belong to the connection replaced

    def _bind(self, b: SqlSession) -> list:
        """Per transaction: (its BEGIN calls, COMMIT, each statement's call), and the rollback
        last, as the session's calls of this connection (split where it multiplexes; BEGIN with
        an isolation level and the rollback are not: made in the multiplexer's thread)."""
        out: list = []
        for txn in self.txns:
            begins: list = []
            commit = None
            if txn.transaction:
                begin, commit = b.transaction_calls(txn.writes)
                if txn.begin is not None:
                    begins.append(partial(b.execute, txn.begin))
                    if b.dialect != "postgresql":
                        begins.append(begin)
                else:
                    begins.append(begin)
            stmts = []
            for s in txn.stmts:
                fn = (b.row_fetcher if s.mode == CAPTURE else b.row_counter if s.mode == QUERY
                      else b.statement_runner)(s.sql)
                stmts.append(_guarded(fn, b, partial(self._count_error, s.record)))
            out.append(([_guarded(c, b) for c in begins], _guarded(commit, b) if commit is not None else None, stmts))
        out.append(_guarded(b.rollback, b))
        self._bound = out
        return out

    def _count_error(self, record: str) -> None:
        self.errors[record] = self.errors.get(record, 0) + 1

    def next_operation(self) -> Operation:
        i = self.picker.pick()
        txn = self.txns[i]
        think = txn.tx.think_time
        if think is not None:
            self._sleep(think_seconds(think, self.random))
        return txn.op, self.body, (self.m.binding, _Call(txn, self.picker.values(i)))

    def _sleep(self, seconds: float) -> None:
        sleep_unless_stopped(seconds, self.m.should_stop)

    def _body(self, b: SqlSession, call: _Call) -> None:
        """One transaction: its attempts, the same values each time, until one commits; a
        serialization failure or deadlock (a retryable error) rolled back and tried again, up to
        the transaction's max_tries, counted in its retries and not as an error (pgbench's
        --max-tries); any other error ends it (rolled back) and the engine records it."""
        txn, tries = call.txn, 0
        while True:
            try:
                self._attempt(b, txn, call.values)
                return
            except Exception as exc:
                try:
                    b.rollback()
                except Exception:
                    pass  # a lost connection: the engine reconnects
                tries += 1
                if tries >= txn.tx.max_tries or self.m.should_stop() or b.classify(exc).kind != RETRYABLE:
                    raise
                self.retries[txn.name] = self.retries.get(txn.name, 0) + 1

    def _attempt(self, b: SqlSession, txn: _Txn, drawn: dict) -> None:  # noqa: C901 (one frame a transaction: a call per statement is its cost)
        values = dict(drawn) if txn.captures else drawn
        perf, rec = self.perf, self.m.rec
        if txn.transaction:
            if txn.begin is not None:
                b.execute(txn.begin)
                if b.dialect != "postgresql":
                    b.begin(txn.writes)
            else:
                b.begin(txn.writes)
        for s in txn.stmts:
            pick = s.pick
            params = pick(values) if pick is not None else (values[s.one],) if s.one is not None else ()
            t0 = perf()
            try:
                if s.mode == QUERY:
                    b.fetchcount(s.sql, params)
                elif s.mode == WRITE:
                    b.execute(s.sql, params)
                elif s.mode == DOC:
                    # the binding's database now: a reconnect makes a new one
                    doc = s.doc.run(b.db, values)  # type: ignore[union-attr,attr-defined]
                    if s.capture and doc is None:
                        self.no_row[s.record] = self.no_row.get(s.record, 0) + 1
                    for v in s.capture:
                        values[v] = as_param(doc.get(v)) if doc is not None else None
                else:
                    row = b.fetchone(s.sql, params)
                    if row is None:
                        self.no_row[s.record] = self.no_row.get(s.record, 0) + 1
                    for i, v in enumerate(s.capture):
                        values[v] = as_param(row[i]) if row is not None and i < len(row) else None
            except Exception:
                self.errors[s.record] = self.errors.get(s.record, 0) + 1
                raise
            t1 = perf()
            if t1 >= rec.warm_until_ns:
                us = (t1 - t0) // 1000  # its histogram bucket's floor (hist_bucket_floor, inlined)
                if us >= HIST_EXACT_BELOW:
                    shift = us.bit_length() - HIST_SUB_BUCKET_BITS
                    us = us >> shift << shift
                elif us < 1:
                    us = 1
                lat = s.lat
                lat[us] = lat.get(us, 0) + 1
            else:
                s.warm += 1
        if txn.transaction:
            b.commit()

    def _steps(self, b: SqlSession, call: _Call) -> Steps:  # noqa: C901 (likewise)
        """``_body``'s transaction a statement at a time (families.base.stepwise): each call
        yielded to the multiplexer, which sends it and gives its answer back (a failure as a
        ``_Failed``); the same statements, values, latencies, captures, counts, rollbacks and
        retries as ``_body`` and ``_attempt``."""
        txn, tries, perf, rec = call.txn, 0, self.perf, self.m.rec
        while True:
            bound = self._bound or self._bind(b)
            begins, commit, stmts = bound[txn.index]
            values = dict(call.values) if txn.captures else call.values
            failure: Any = None
            for c in begins:
                got = yield c, ()
                if got.__class__ is _Failed:
                    failure = got
                    break
            else:
                for s, c in zip(txn.stmts, stmts):
                    pick = s.pick
                    params = pick(values) if pick is not None else (values[s.one],) if s.one is not None else ()
                    t0 = perf()
                    got = yield c, (params,)
                    t1 = perf()
                    if got.__class__ is _Failed:
                        self._count_error(s.record)
                        failure = got
                        break
                    if s.mode == CAPTURE:
                        row = got[0] if got else None
                        if row is None:
                            self.no_row[s.record] = self.no_row.get(s.record, 0) + 1
                        for i, v in enumerate(s.capture):
                            values[v] = as_param(row[i]) if row is not None and i < len(row) else None
                    if t1 >= rec.warm_until_ns:
                        us = (t1 - t0) // 1000
                        if us >= HIST_EXACT_BELOW:
                            shift = us.bit_length() - HIST_SUB_BUCKET_BITS
                            us = us >> shift << shift
                        elif us < 1:
                            us = 1
                        lat = s.lat
                        lat[us] = lat.get(us, 0) + 1
                    else:
                        s.warm += 1  # the server's window counts the warm-up's executions too
                else:
                    if commit is not None:
                        got = yield commit, ()
                        if got.__class__ is _Failed:
                            failure = got
                    if failure is None:
                        return None
            exc = failure.exc
            # the session's rollback as _body's (where it is needed: PostgreSQL's status, an open
            # MySQL connection), made in the multiplexer's thread (an error's path; no lock to
            # wait for), its failure ignored: a lost connection is the engine's to reconnect
            yield bound[-1], ()
            tries += 1
            if tries >= txn.tx.max_tries or self.m.should_stop() or b.classify(exc).kind != RETRYABLE:
                raise exc
            self.retries[txn.name] = self.retries.get(txn.name, 0) + 1

    def state(self) -> dict:
        return {"counters": self.picker.draws.state()}

    def close(self) -> None:
        rec = self.m.rec
        for txn in self.txns:
            for s in txn.stmts:
                if s.lat:
                    out = rec.record_list(s.record)
                    for us, n in s.lat.items():
                        out += (us, n)
                    s.lat = {}
                if s.warm:
                    rec.count(f"custom_warm:{s.record.removeprefix(RECORD_PREFIX)}", s.warm)
                    s.warm = 0
        rec.count("retries", sum(self.retries.values()))
        for prefix, counts in (("retries", self.retries), ("errors", self.errors), ("no_row", self.no_row)):
            for k, v in counts.items():
                rec.count(f"custom_{prefix}:{k.removeprefix(RECORD_PREFIX)}", v)
        self.retries, self.errors, self.no_row = {}, {}, {}


# ---- the family ------------------------------------------------------------------------------

MAX_FILE_BYTES = 1 << 20


def _file_error(path: str, msg: str) -> ValidationError:
    return ValidationError.from_exception_data("CustomWorkload", [
        {"type": PydanticCustomError("custom_workload_file", "{path}: {msg}", {"path": path, "msg": msg}),
         "loc": ("file",), "input": path}])


def read_workload_file(path: Any) -> dict:
    """The workload keys of a YAML file (``workload.file``), refused with ``workload.file`` named:
    missing, unreadable, too large, not YAML, not a mapping."""
    if not isinstance(path, str):
        raise _file_error(str(path), "expected a file name")
    p = Path(path)
    try:
        size = p.stat().st_size
        if size > MAX_FILE_BYTES:
            raise _file_error(path, f"{size:,} bytes: a workload file is at most {MAX_FILE_BYTES:,}")
        text = p.read_text(encoding="utf-8")
    except OSError as e:
        raise _file_error(path, e.strerror or str(e)) from None
    except UnicodeDecodeError:
        raise _file_error(path, "not UTF-8 text") from None
    try:
        doc = yaml.safe_load(text)
    except yaml.YAMLError as e:
        raise _file_error(path, f"not YAML: {str(e).splitlines()[0]}") from None
    if not isinstance(doc, dict):
        raise _file_error(path, "expected a mapping of workload keys (tables, generators, transactions, ...)")
    doc.pop("file", None)  # no file of a file
    return doc


def _ms(us: float) -> float:
    return round(us / 1000, 3)


def _latency(h: HdrHistogram) -> dict:
    return {"avg_ms": _ms(h.get_mean_value()), "p50_ms": _ms(h.get_value_at_percentile(50)),
            "p95_ms": _ms(h.get_value_at_percentile(95)), "p99_ms": _ms(h.get_value_at_percentile(99)),
            "max_ms": _ms(h.get_max_value())}


def _server_lines(runs: Iterable[dict]) -> list[str]:
    """The client-vs-server statement cross-check of each run, or why there is none."""
    rows, why = [], []
    for r in runs:
        s = (r["phases"].get("run", {}).get("custom") or {}).get("server_statements") or {}
        label = r["target"]["label"]
        if s.get("unavailable"):
            why.append(f"- {label}, threads {r['threads']}: {s['unavailable']}")
        for row in s.get("statements") or []:
            ratio = f"{row['ratio']:.4f}" if row.get("ratio") is not None else "–"
            rows.append(f"| {label} | {r['threads']} | {', '.join(row['statements'])} | {row['client']:,} "
                        f"| {row['server']:,} | {ratio} |")
    if not rows and not why:
        return []
    out = ["", "### Custom workload: statements counted by the client and by the server", ""]
    if rows:
        out += ["| instance | threads | statements (transaction.#) | client | server | client/server |",
                "|---|---|---|---|---|---|", *rows, "", f"Server: {S.SOURCE}; the client's count includes the "
                "warm-up, as the window does.", ""]
    return out + why


class Custom(Family[M.CustomWorkload]):
    name = "custom"
    model = M.CustomWorkload
    requires = "sql"
    label_key = "label"
    dialects = M.DIALECTS

    def workload(self, data: dict) -> M.CustomWorkload:
        if isinstance(data, dict) and data.get("file"):
            data = {**read_workload_file(data["file"]), **data}
        w = self.model.model_validate(data)
        found = M.problems(w) or M.masked(w)
        if found:
            raise ValidationError.from_exception_data("CustomWorkload", [
                {"type": PydanticCustomError("custom_workload", msg), "loc": loc, "input": None}
                for loc, msg in found])
        return w

    def read_operations(self, w: M.CustomWorkload) -> tuple[str, ...]:
        return tuple(n for n, t in w.transactions.items() if M.transaction_kind(t) == "read")

    def write_operations(self, w: M.CustomWorkload) -> tuple[str, ...]:
        return (LOAD_OP,) + tuple(n for n, t in w.transactions.items() if M.transaction_kind(t) == "write")

    def presets_text(self) -> list[str]:
        return ["custom: a workload written as data (tables, generators, transactions): docs/custom-workloads.md"]

    def requires_for(self, w: M.CustomWorkload) -> str:
        return "kv" if w.documents else "sql"  # MongoDB's binding has no sql capability

    def limits(self, w: M.CustomWorkload) -> RunLimits:
        return RunLimits(count=w.operations, rate=w.rate, time=w.time)

    def load_range(self, w: M.CustomWorkload) -> tuple[int, int]:
        if w.documents:
            return 0, sum(c.load.documents for _, _, c, _ in D.loaded_collections(w) if c.load)
        return 0, sum(t.load.rows for _, _, t, _ in loaded_tables(w) if t.load)

    def tables(self, w: M.CustomWorkload) -> list[str]:
        return list(w.tables) + list(w.collections)

    def has_stage(self, w: M.CustomWorkload, stage: str) -> bool:
        own = any(not t.existing for t in w.tables.values()) or any(not c.existing for c in w.collections.values())
        return own and stage in ("before_load", "after_load", "cleanup")

    def prepare(self, binding: SqlSession, w: M.CustomWorkload, stage: str) -> Optional[dict]:
        b = binding
        if w.documents:
            D.prepare(b, w, stage)
            return None
        _check_dialect(w, b.dialect)
        for name, table in w.tables.items():
            if table.existing:
                continue
            if stage in ("before_load", "cleanup"):
                b.execute(f"DROP TABLE IF EXISTS {name}")
            if stage == "before_load":
                b.execute(create_table_sql(name, table, b.dialect, b.table_options))
            elif stage == "after_load":
                for c in table.columns or []:
                    if c.index and not self._index_exists(b, name, f"{name}_{c.name}_idx"):
                        b.execute(INDEX[b.dialect].format(t=name, c=c.name))
                for sql in table.indexes:
                    b.execute(sql)
        if stage == "before_load":  # the tables are there: every statement prepared before the load
            found = self.check_statements(b, w)
            if found:
                raise FamilyError("statements the server rejects (nothing was loaded or run): " + "; ".join(found))
        return None

    def window_snapshot(self, binding: SqlSession, w: M.CustomWorkload, phase: str) -> Optional[dict]:
        return S.read_calls(binding, w) if phase == "run" else None

    def engine_problems(self, w: M.CustomWorkload, engine: Engine) -> list[tuple[tuple, str]]:
        return M.engine_problems(w, engine.name, "sql" in engine.capabilities)

    def checks_statements(self, w: M.CustomWorkload) -> bool:
        return not w.documents

    def check_statements(self, binding: SqlSession, w: M.CustomWorkload, temporary: bool = False) -> list[str]:
        return preflight.check_statements(binding, w, create_table_sql, temporary)

    @staticmethod
    def _index_exists(b: SqlSession, table: str, index: str) -> bool:
        if b.dialect != "mysql":
            return False  # IF NOT EXISTS
        row = b.fetchone(b.prepare(MYSQL_INDEX_EXISTS), (table, index))
        return bool(row and row[0])

    def run_client(self, w: M.CustomWorkload, ctx: ThreadContext) -> Client:
        return _RunClient(w, ctx)

    def sample(self, w: M.CustomWorkload, n: int, rng: random.Random, thread: int = 0,
               threads: int = 1) -> list[str]:
        """A dry run: the first ``n`` transactions thread ``thread`` would run, drawn from ``rng``
        as its client draws them, each statement with its parameters' values (no connection)."""
        picker = Picker(w, rng, thread, threads)
        names = list(w.transactions)
        lines = []
        for k in range(n):
            i = picker.pick()
            tx = w.transactions[names[i]]
            think = f", after a think time of {think_seconds(tx.think_time, picker.random):.3f} s" \
                if tx.think_time is not None else ""  # drawn where the client draws it
            values = picker.values(i)
            lines.append(f"#{k + 1} {names[i]} ({M.transaction_kind(tx)}{think})")
            captured: dict[str, int] = {}
            for j, st in enumerate(tx.statements):
                text = M.statement_text(st)
                shown = []
                for p in dict.fromkeys(M.statement_params(st)):
                    shown.append(f"{p}=<captured by statement {captured[p]}>" if p in captured
                                 else f"{p}={values[p]!r}")
                lines.append(f"  [{j}] {text}")
                if shown:
                    lines.append(f"      {', '.join(shown)}")
                for v in st.capture:
                    captured.setdefault(v, j)
                if st.capture:
                    lines.append(f"      capture: {', '.join(st.capture)}")
        return lines

    def load_client(self, w: M.CustomWorkload, ctx: ThreadContext, start: int, count: int) -> Client:
        loader = D.DocLoader(w, ctx.m.binding) if w.documents else _Loader(w, ctx.m.binding)
        return BatchLoader(ctx, start, count, loader.batch, name=LOAD_OP)

    def error_hint(self, w: M.CustomWorkload, phase: str, op: str, kind: str, name: str) -> Optional[str]:
        if phase == "run" and op in w.transactions:
            return (f"transaction {op}: see the statement errors under custom.transactions.{op}.statements; a "
                    "serialization failure or deadlock is retried (counted in retries)")
        return None

    def phase_summary(self, w: M.CustomWorkload, phase: str, measurement: Measurement, duration: float,
                      window: Optional[dict] = None) -> Optional[dict]:
        if phase != "run":
            return None
        c, recs = measurement.counters, measurement.records
        seconds = max(duration - float(w.warmuptime or 0), 1e-9)
        txns, total, executed = {}, 0, {}
        for name, tx in w.transactions.items():
            s = measurement.operations.get(name)
            n = s.count if s else 0
            total += n
            stmts = []
            for i, st in enumerate(tx.statements):
                key = f"{name}.{i}"
                h = new_histogram()
                pairs = recs.get(RECORD_PREFIX + key) or []
                for j in range(0, len(pairs) - 1, 2):
                    h.record_value(pairs[j], pairs[j + 1])
                calls = h.get_total_count()
                executed[key] = calls + c.get(f"custom_warm:{key}", 0)
                stmts.append({"statement": i, "sql": M.statement_text(st)[:200], "kind": M.statement_kind(st),
                              "count": calls, "errors": c.get(f"custom_errors:{key}", 0),
                              "no_row": c.get(f"custom_no_row:{key}", 0),
                              **({"latency": _latency(h)} if calls else {})})
            txns[name] = {"kind": M.transaction_kind(tx), "weight": tx.weight, "count": n,
                          "tps": round(n / seconds, 2), "errors": s.errors if s else 0,
                          "retries": c.get(f"custom_retries:{name}", 0),
                          **({"latency": _latency(s.histogram)} if s and s.histogram.get_total_count() else {}),
                          "statements": stmts}
        return {"transactions": txns, "total": total, "tps": round(total / seconds, 2), "seconds": round(seconds, 3),
                "basis": "committed transactions per second of the phase after the warm-up; statement latencies are "
                         "each statement's service time (every execution that returned, retried attempts included)",
                "published": "not applicable: a custom workload has no published figures",
                "server_statements": S.cross_check(w, executed, window)}

    def report_tables(self, runs: list[dict]) -> str:
        if not runs:
            return ""
        lines = ["### Custom workload: transactions", "",
                 "| instance | workload | threads | transaction | kind | count | TPS | avg ms | p95 ms | p99 ms "
                 "| errors | retries |", "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        stmt_lines = ["", "### Custom workload: statements", "",
                      "| instance | transaction | # | statement | kind | count | avg ms | p95 ms | p99 ms | errors |",
                      "|---|---|---|---|---|---|---|---|---|---|"]
        for r in runs:
            s = r["phases"].get("run", {}).get("custom")
            label = r["target"]["label"]
            if not s:
                lines.append(f"| {label} | {r['workload'].get('label')} | {r['threads']} | missing | | | | | | | | |")
                continue
            for name, t in s["transactions"].items():
                lat = t.get("latency") or {}
                lines.append(f"| {label} | {r['workload'].get('label')} | {r['threads']} | {name} | {t['kind']} "
                             f"| {t['count']:,} | {fmt(t['tps'], 1)} | {lat.get('avg_ms', '')} | {lat.get('p95_ms', '')} "
                             f"| {lat.get('p99_ms', '')} | {t['errors']} | {t['retries']} |")
                for st in t["statements"]:
                    sl = st.get("latency") or {}
                    sql = st["sql"].replace("|", "\\|")[:80]
                    stmt_lines.append(f"| {label} | {name} | {st['statement']} | `{sql}` | {st['kind']} "
                                      f"| {st['count']:,} | {sl.get('avg_ms', '')} | {sl.get('p95_ms', '')} "
                                      f"| {sl.get('p99_ms', '')} | {st['errors']} |")
        return "\n".join(lines + stmt_lines + _server_lines(runs)) + "\n"


families.register(Custom())
