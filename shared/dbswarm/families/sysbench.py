"""sysbench 1.0 OLTP (oltp_common.lua) as a workload family: its campaign model, its
tables and statements per SQL dialect (data, below), and the event one client thread runs.

An event is one transaction: BEGIN, point selects, the four range queries, the index and
non-index updates, DELETE + INSERT of the same id, COMMIT — counted as sysbench counts them
(read / write / other), so 20 queries per oltp_read_write transaction. The load fills
``sbtest1 .. sbtestN`` (the run's global rows split contiguously over the client threads)
and the secondary index on ``k`` is built after it, as sysbench does.
"""
from __future__ import annotations

import random
from functools import partial
from typing import Any, Callable, Iterable, Literal, Optional, cast

from pydantic import Field, model_validator

from dbswarm.bindings.protocols import SqlSession
from dbswarm.families import base as families
from dbswarm.families.base import (
    EVENT,
    BatchLoader,
    Client,
    Family,
    Op,
    RunLimits,
    Steps,
    ThreadContext,
    WorkloadModel,
    stepwise,
)
from dbswarm.families.generators import SysbenchUniform, shared_pool, sysbench_rand
from dbswarm.families.presets import SYSBENCH_TESTS
from dbswarm.families.sysbench_sql import PER_OPERATION, SELECTS, SQL, sql_text
from dbswarm.families.tables import fmt, max_connections, published_family_table, server_iops
from dbswarm.measure.recorder import Measurement

_DIGITS = "0123456789"
_POOL = 1 << 20  # the process's pool of digits (generators.shared_pool)
READ, WRITE, OTHER = 0, 1, 2


class SysbenchWorkload(WorkloadModel):
    """sysbench 1.0 OLTP options (same names as sysbench's command-line options)."""
    family: Literal["sysbench"] = "sysbench"
    test: Literal["oltp_read_write", "oltp_read_only", "oltp_write_only", "oltp_point_select"] = "oltp_read_write"
    tables: int = Field(1, ge=1, le=10_000)
    table_size: int = Field(10_000, ge=1)
    range_size: int = Field(100, ge=1)
    point_selects: Optional[int] = Field(None, ge=0)
    simple_ranges: Optional[int] = Field(None, ge=0)
    sum_ranges: Optional[int] = Field(None, ge=0)
    order_ranges: Optional[int] = Field(None, ge=0)
    distinct_ranges: Optional[int] = Field(None, ge=0)
    index_updates: Optional[int] = Field(None, ge=0)
    non_index_updates: Optional[int] = Field(None, ge=0)
    delete_inserts: Optional[int] = Field(None, ge=0)
    skip_trx: Optional[bool] = None
    rand_type: Literal["uniform", "special"] = Field(
        "special", description="sysbench 1.0's --rand-type (its default is special: 75% of "
        "requests to 1% of the rows)")
    time: float = Field(60, gt=0, description="seconds of the run phase (0 not allowed)")
    events: int = Field(0, ge=0, description="transactions to run over all threads (0: until time)")
    rate: Optional[float] = Field(None, gt=0, description="total transactions/s (unthrottled if absent)")
    batchsize: int = Field(1000, ge=1, le=100_000, description="rows per INSERT in the load phase")

    @model_validator(mode="after")
    def _resolve(self) -> "SysbenchWorkload":
        for key, value in SYSBENCH_TESTS[self.test].items():
            if getattr(self, key) is None:
                setattr(self, key, value)
        if self.range_size > self.table_size:
            raise ValueError(f"range_size ({self.range_size}) exceeds table_size ({self.table_size})")
        return self

    @property
    def name(self) -> str:
        return self.test

    @property
    def recordcount(self) -> int:
        return self.tables * self.table_size


class _PerTable(dict):
    """table number -> one kind of statement on one session, prepared at its first use (a hit
    is a plain dict lookup: the hot path)."""
    __slots__ = ("tables", "kind")

    def __init__(self, tables: "SysbenchTables", kind: str) -> None:
        super().__init__()
        self.tables, self.kind = tables, kind

    def __missing__(self, n: int) -> str:
        t = self.tables
        sql = self[n] = t.b.prepare(t._text(self.kind, n))
        return sql


class _PerTableCalls(dict):
    """table number -> one kind of statement's call on one session: a select's ``count(params)``
    (the binding's ``query_counter``) or a write's ``run(params)`` (``statement_runner``), made
    at its first use; cleared when the session reconnects."""
    __slots__ = ("tables", "kind", "make")

    def __init__(self, tables: "SysbenchTables", kind: str, make: str) -> None:
        super().__init__()
        self.tables, self.kind, self.make = tables, kind, make

    def __missing__(self, n: int) -> Callable[[Any], int]:
        t = self.tables
        call = self[n] = getattr(t.b, self.make)(t.stmts[self.kind][n])
        return call


class SysbenchTables:
    """sysbench's tables on one SQL session (a binding with the ``sql`` capability). Each
    per-operation statement is built for a table at its first use and handed to the session
    as a prepared statement (``binding.prepare``). The SELECTs return their rows, or with
    rows=False only how many there were (the result is still read from the server;
    sysbench never looks at the values either, and the events use rows=False)."""

    def __init__(self, binding: SqlSession) -> None:
        self.b = binding
        self.dialect = binding.dialect
        self.stmts = {k: _PerTable(self, k) for k in PER_OPERATION}  # kind -> table -> statement
        self._loads: dict[tuple[int, int], str] = {}  # (table, rows) -> the load's INSERT
        self.point_selects = self.stmts["point_select"]  # table -> statement: the hottest lookup, direct
        # kind -> table -> count(params) of the events' selects, run(params) of their writes:
        # one call per statement, no statement lookup in the session (taken again after a
        # reconnect: reset_counters)
        self.counters = {k: _PerTableCalls(self, k, "query_counter") for k in PER_OPERATION}
        self.runners = {k: _PerTableCalls(self, k, "statement_runner") for k in PER_OPERATION}
        self._transaction: dict[bool, tuple] = {}  # writes -> the session's (begin, commit) calls

    def reset_counters(self) -> None:
        """The session reconnected: its statements' calls belong to the old connection."""
        for per_table in (*self.counters.values(), *self.runners.values()):
            per_table.clear()
        self._transaction.clear()

    def transaction(self, writes: bool) -> tuple:
        """(begin, commit) of this session (``Binding.transaction_calls``)."""
        calls = self._transaction.get(writes)
        if calls is None:
            calls = self._transaction[writes] = self.b.transaction_calls(writes)
        return calls

    def table_name(self, n: int) -> str:
        return f"sbtest{n}"

    def prepare_all(self, kinds: Iterable[str], tables: int) -> int:
        """Every statement of these kinds on every table, prepared on the server now (sysbench's
        thread_init): a client thread does it before the measured window, so a short run with
        many threads does not measure thousands of PREPAREs. Best effort: a statement that
        cannot be prepared now fails at its first use, where its error is measured. Returns
        how many were prepared on the server."""
        prepared = 0
        for kind in kinds:
            for n in range(1, tables + 1):
                try:
                    prepared += self.b.prepare_now(self.stmts[kind][n])
                except Exception:
                    return prepared
        return prepared

    def take_calls(self, kinds: Iterable[str], tables: int, transaction: Optional[bool]) -> None:
        """Every statement's call of these kinds on every table (and BEGIN / COMMIT unless
        ``transaction`` is None: the event's ``writes``) taken now, during the client's set-up,
        rather than at its first use in the measured window: at 128 connections that is about
        9,000 calls and 400,000 objects, whose creation over the window's first seconds set off
        the collector's full passes (0.2-0.5 s each, every connection of the process waiting;
        engine.worker freezes what the set-up made). Best effort, as ``prepare_all``: a call
        that cannot be taken now is taken at its first use, where its error is measured."""
        try:
            for kind in kinds:
                calls = self.counters[kind] if kind in SELECTS else self.runners[kind]
                for n in range(1, tables + 1):
                    calls[n]  # noqa: B018 (made by __missing__)
            if transaction is not None:
                self.transaction(transaction)
        except Exception:
            return

    def _text(self, kind: str, n: int, **extra: Any) -> str:
        return sql_text(kind, self.dialect).format(t=self.table_name(n), n=n, options=self.b.table_options, **extra)

    def sql(self, kind: str, n: int) -> str:
        """The per-operation statement ``kind`` on table n, prepared on this session."""
        return self.stmts[kind][n]

    # -- set-up ------------------------------------------------------------------------
    def create(self, n: int) -> None:
        """Drop and create sbtest<N> without the secondary index on k."""
        self.b.execute(self._text("drop", n))
        self.b.execute(self._text("create", n))

    def drop(self, n: int) -> None:
        self.b.execute(self._text("drop", n))

    def count(self, n: int) -> int:
        return int(cast(tuple, self.b.fetchone(self._text("count", n)))[0])  # a count has a row

    def create_index(self, n: int) -> None:
        """CREATE INDEX k_<N> ON sbtest<N>(k), after the load as sysbench does; again: nothing."""
        exists = SQL["index_exists"].get(self.dialect)
        if exists and cast(tuple, self.b.fetchone(self.b.prepare(exists), (self.table_name(n), f"k_{n}")))[0]:
            return
        self.b.execute(self._text("create_index", n))

    def load(self, n: int, rows: list[tuple[int, int, str, str]]) -> None:
        """Insert (id, k, c, pad) rows; existing ids are skipped (idempotent)."""
        step = max(1, self.b.max_params // 4)
        for i in range(0, len(rows), step):
            part = rows[i:i + step]
            sql = self._loads.get((n, len(part)))
            if sql is None:
                sql = self._loads[n, len(part)] = self.b.prepare(
                    self._text("load", n, rows=", ".join(["(%s, %s, %s, %s)"] * len(part))))
            self.b.execute(sql, [v for row in part for v in row])

    # -- the event's statements ------------------------------------------------------------
    def point_select(self, n: int, id_: int, rows: bool = True) -> int | list[tuple]:
        sql = self.point_selects[n]
        return self.b.fetchcount(sql, (id_,)) if not rows else self.b.fetchall(sql, (id_,))

    def _range(self, kind: str, n: int, lo: int, hi: int, rows: bool) -> int | list[tuple]:
        sql = self.stmts[kind][n]
        return self.b.fetchcount(sql, (lo, hi)) if not rows else self.b.fetchall(sql, (lo, hi))

    def simple_range(self, n: int, lo: int, hi: int, rows: bool = True) -> int | list[tuple]:
        return self._range("simple_range", n, lo, hi, rows)

    def sum_range(self, n: int, lo: int, hi: int, rows: bool = True) -> int | list[tuple]:
        return self._range("sum_range", n, lo, hi, rows)

    def order_range(self, n: int, lo: int, hi: int, rows: bool = True) -> int | list[tuple]:
        return self._range("order_range", n, lo, hi, rows)

    def distinct_range(self, n: int, lo: int, hi: int, rows: bool = True) -> int | list[tuple]:
        return self._range("distinct_range", n, lo, hi, rows)

    def index_update(self, n: int, id_: int) -> int:
        return self.b.execute(self.stmts["index_update"][n], (id_,))

    def non_index_update(self, n: int, id_: int, c: str) -> int:
        return self.b.execute(self.stmts["non_index_update"][n], (c, id_))

    def delete(self, n: int, id_: int) -> int:
        return self.b.execute(self.stmts["delete"][n], (id_,))

    def insert(self, n: int, id_: int, k: int, c: str, pad: str) -> int:
        return self.b.execute(self.stmts["insert"][n], (id_, k, c, pad))


def queries_per_event(w: SysbenchWorkload) -> tuple[int, int, int]:
    """(reads, writes, other) of one event that commits at its first attempt."""
    counts = cast("tuple[int, ...]", (w.point_selects, w.simple_ranges, w.sum_ranges, w.order_ranges,
                                      w.distinct_ranges, w.index_updates, w.non_index_updates,
                                      w.delete_inserts))  # resolved (SysbenchWorkload._resolve)
    reads = sum(counts[:5])
    writes = counts[5] + counts[6] + 2 * counts[7]
    other = 0 if w.skip_trx else 2
    return reads, writes, other


class SysbenchClient:
    """One client thread's events. ``body(tables, q)`` is one transaction's statements,
    ``tables.sql(kind, n)`` run on the session ``tables.b`` (``Measured.event`` times the
    body, and retries it after a rollback); ``q`` accumulates [reads, writes, other]."""

    def __init__(self, w: SysbenchWorkload, rng: random.Random) -> None:
        self.w = w
        self.rng = rng
        self.random = rng.random
        self.ids = sysbench_rand(w.rand_type, rng, 1, w.table_size)
        # the statements' ids (uniform: a closure over its numbers, one draw per statement)
        self._next_id = self.ids.next_fn() if isinstance(self.ids, SysbenchUniform) else self.ids.next
        self.pool = shared_pool(_DIGITS, _POOL)  # the process's: no draw from the thread's stream
        self.writes = _writes(w)
        # the range queries this workload runs: (count, statement kind), decided once
        self._ranges = tuple((count, name) for count, name in (
            (w.simple_ranges, "simple_range"), (w.sum_ranges, "sum_range"),
            (w.order_ranges, "order_range"), (w.distinct_ranges, "distinct_range")) if count)
        only_point_selects = bool(w.skip_trx and w.point_selects and not self._ranges and not self.writes)
        self.body: Callable[..., Any]
        if only_point_selects:  # the same statements and draws as the steps, without a generator
            self.body = stepwise(self._event, partial(SysbenchClient._point_selects, self))
        else:
            self.body = stepwise(self._event)

    def statement_kinds(self) -> list[str]:
        """The per-operation statements this workload's events run."""
        w = self.w
        kinds = ["point_select"] if w.point_selects else []
        kinds += [name for _, name in self._ranges]
        kinds += ["index_update"] if w.index_updates else []
        kinds += ["non_index_update"] if w.non_index_updates else []
        kinds += ["delete", "insert"] if w.delete_inserts else []
        return kinds

    # sysbench.rand.string("###########-" * 10 minus the last dash): 119 chars; pad: 59 chars
    def _digits(self, groups: int) -> str:
        o = int(self.random() * (_POOL - 11 * groups))
        p = self.pool
        return "-".join([p[o + 11 * i:o + 11 * i + 11] for i in range(groups)])

    def c_value(self) -> str:
        return self._digits(10)

    def pad_value(self) -> str:
        return self._digits(5)

    def table(self) -> int:
        return 1 + int(self.random() * self.w.tables)

    def _event(self, st: SysbenchTables, q: list[int]) -> Steps:
        """One event's statements, described once (``stepwise``): each ``(call, (params,))``
        the session's own call of that statement (``st.counters`` / ``st.runners`` /
        ``st.transaction``: split into send / finish where the session multiplexes). The
        engine's operation loop times the event and runs it again after a failed attempt; a
        thread runs the statements one after another, the shard's multiplexer sends each
        when the last one's answer is in (engine.mux). A group's table is drawn once (as
        ``table()`` draws it) and its call looked up once; the session's calls are looked up
        per event (a reconnect between attempts replaces them)."""
        w, next_id = self.w, self._next_id
        if not w.skip_trx:
            begin, commit = st.transaction(self.writes)
            yield begin, ()
            q[OTHER] += 1
        if w.point_selects:
            select = st.counters["point_select"][1 + int(self.random() * w.tables)]
            for _ in range(w.point_selects):
                yield select, ((next_id(),),)  # read, not converted
                q[READ] += 1
        if self._ranges:
            rs, rnd, tables, counters = w.range_size - 1, self.random, w.tables, st.counters
            for count, kind in self._ranges:
                select = counters[kind][1 + int(rnd() * tables)]
                for _ in range(count):
                    lo = next_id()
                    yield select, ((lo, lo + rs),)
                    q[READ] += 1
        if self.writes:
            runners = st.runners
            if w.index_updates:
                run = runners["index_update"][self.table()]
                for _ in range(w.index_updates):
                    yield run, ((next_id(),),)
                    q[WRITE] += 1
            if w.non_index_updates:
                run = runners["non_index_update"][self.table()]
                for _ in range(w.non_index_updates):
                    id_ = next_id()
                    yield run, ((self.c_value(), id_),)
                    q[WRITE] += 1
            if w.delete_inserts:
                t = self.table()
                delete, insert = runners["delete"][t], runners["insert"][t]
                for _ in range(w.delete_inserts):
                    id_ = next_id()
                    yield delete, ((id_,),)
                    q[WRITE] += 1
                    yield insert, ((id_, 1 + int(self.random() * w.table_size), self.c_value(), self.pad_value()),)
                    q[WRITE] += 1
        if not w.skip_trx:
            yield commit, ()
            q[OTHER] += 1

    def _point_selects(self, st: SysbenchTables, q: list[int]) -> None:
        """An event of point selects only (oltp_point_select: no transaction, no other group):
        ``_event``'s statements and draws for it, called straight, for a thread (one statement
        an event: the generator would be a third of its cost on the noop binding)."""
        w = self.w
        select, nxt = st.counters["point_select"][1 + int(self.random() * w.tables)], self._next_id
        for _ in range(w.point_selects):  # type: ignore[arg-type]  # resolved: an int
            select((nxt(),))  # read, not converted
            q[READ] += 1

    def load_rows(self, table_size: int, first_id: int, last_id: int) -> list:
        """(id, k, c, pad) for ids first..last inclusive."""
        rng = self.rng
        return [(i, rng.randint(1, table_size), self.c_value(), self.pad_value())
                for i in range(first_id, last_id + 1)]

    def queries_per_event(self) -> tuple[int, int, int]:
        return queries_per_event(self.w)


class _EventClient(Client):
    """The run phase: one operation = one event (a transaction: run again after a retryable
    error, as sysbench does; a failed event does not count toward ``events``), the queries
    counted as sysbench counts them."""

    def __init__(self, w: SysbenchWorkload, ctx: ThreadContext) -> None:
        self.rec, self.w = ctx.m.rec, w
        self.q = [0, 0, 0]
        self.client = client = SysbenchClient(w, ctx.rng)
        tables = SysbenchTables(ctx.m.binding)
        ctx.m.on_reconnect.append(tables.reset_counters)
        prepared = tables.prepare_all(client.statement_kinds(), w.tables)
        tables.take_calls(client.statement_kinds(), w.tables, None if w.skip_trx else client.writes)
        if prepared:
            ctx.m.rec.count("prepared_at_setup", prepared)
            # inside the server's window; in PostgreSQL's counters each is a transaction of its
            # own (a protocol-level prepare outside a transaction block): the cross-check counts
            # those (MariaDB's COM_STMT_PREPARE is no transaction)
            if ctx.m.binding.prepare_is_transaction:
                ctx.m.rec.count("setup_transactions", prepared)
        operation = (Op("TRANSACTION", EVENT), client.body, (tables, self.q))
        self.next_operation = lambda: operation  # type: ignore[method-assign]
        # the event's statements are the session's calls (stepwise): the shard's multiplexer
        # may drive them where the session offers its socket (engine.mux)
        self.multiplexable = True
        self.warm_q: Optional[list] = None

    def warmup_ended(self) -> None:
        """The loop's call after the first event that ended past the warm-up: the queries so
        far less that event's own (one that committed at its first attempt) are the warm-up's,
        so that TPS and QPS count the same events."""
        per_event = self.client.queries_per_event()
        self.warm_q = [self.q[i] - per_event[i] for i in range(3)]

    def close(self) -> None:
        rec, q = self.rec, self.q
        rec.count("queries_read", q[READ])
        rec.count("queries_write", q[WRITE])
        rec.count("queries_other", q[OTHER])
        if self.w.warmuptime:
            # the warm-up's share (every query when the thread never got past it)
            warm = self.warm_q if self.warm_q is not None else q
            rec.count("queries_read_warmup", warm[READ])
            rec.count("queries_write_warmup", warm[WRITE])
            rec.count("queries_other_warmup", warm[OTHER])


def _writes(w: SysbenchWorkload) -> bool:
    """Whether the test's event writes (its updates, deletes and inserts)."""
    return bool(w.index_updates or w.non_index_updates or w.delete_inserts)


class Sysbench(Family[SysbenchWorkload]):
    name = "sysbench"
    model = SysbenchWorkload
    requires = "sql"
    label_key = "test"
    dialects = tuple(SQL["create"])  # the dialects SQL has rows for (a test checks every table has them)

    def read_operations(self, w: SysbenchWorkload) -> tuple[str, ...]:
        """An event that writes nothing (oltp_read_only, oltp_point_select) is a read."""
        return () if _writes(w) else ("TRANSACTION",)

    def write_operations(self, w: SysbenchWorkload) -> tuple[str, ...]:
        return ("INSERT", "TRANSACTION") if _writes(w) else ("INSERT",)

    def presets_text(self) -> list[str]:
        lines = ["sysbench tests (workload.test):"]
        for name, props in SYSBENCH_TESTS.items():
            stmts = ", ".join(f"{k}={v}" for k, v in props.items() if v)
            lines.append(f"  {name:<18} {stmts}")
        return lines

    def limits(self, w: SysbenchWorkload) -> RunLimits:
        return RunLimits(count=w.events, rate=w.rate, time=w.time)

    def load_range(self, w: SysbenchWorkload) -> tuple[int, int]:
        return 0, w.tables * w.table_size  # global rows: table = row // table_size

    def tables(self, w: SysbenchWorkload) -> list[str]:
        return [f"sbtest{n}" for n in range(1, w.tables + 1)]

    def prepare(self, binding: SqlSession, w: SysbenchWorkload, stage: str) -> None:
        st = SysbenchTables(binding)
        for n in range(1, w.tables + 1):
            if stage == "before_load":
                st.create(n)
            elif stage == "after_load":
                st.create_index(n)
            elif stage == "cleanup":
                st.drop(n)

    def run_client(self, w: SysbenchWorkload, ctx: ThreadContext) -> Client:
        return _EventClient(w, ctx)

    def load_client(self, w: SysbenchWorkload, ctx: ThreadContext, start: int, count: int) -> Client:
        client = SysbenchClient(w, ctx.rng)
        st = SysbenchTables(ctx.m.binding)
        size = w.table_size

        def batch(nxt: int, end: int) -> tuple:
            table, first = divmod(nxt, size)
            hi = min(end, nxt + w.batchsize, (table + 1) * size)
            rows = client.load_rows(size, first + 1, first + (hi - nxt))
            return hi, len(rows), st.load, (table + 1, rows)
        return BatchLoader(ctx, start, count, batch)

    def client_statements(self, w: SysbenchWorkload, phase: str, measurement: Measurement) -> Optional[dict]:
        """The run phase's statements as sysbench counts them (reads, writes, BEGIN/COMMIT),
        and its transactions (committed events and the rolled-back attempts that were retried)."""
        if phase != "run":
            return None
        c = measurement.counters
        trx = sum(s.histogram.get_total_count() for s in (measurement.operations.get("TRANSACTION"),
                                                          (measurement.warmup or {}).get("TRANSACTION")) if s)
        return {"statements": c.get("queries_read", 0) + c.get("queries_write", 0) + c.get("queries_other", 0),
                "transactions": trx + c.get("retries", 0) + c.get("setup_transactions", 0)}

    def phase_summary(self, w: SysbenchWorkload, phase: str, measurement: Measurement, duration: float,
                      window: Optional[dict] = None) -> Optional[dict]:
        if phase != "run":
            return None
        c = measurement.counters
        trx = measurement.operations.get("TRANSACTION")
        # as sysbench's --warmup-time: the warm-up's transactions and queries are left out of
        # both counts and its seconds out of the time they are divided by
        warm_s = float(w.warmuptime or 0)
        kinds = ("queries_read", "queries_write", "queries_other")
        measured = {k: c.get(k, 0) - c.get(f"{k}_warmup", 0) for k in kinds}
        q = sum(measured.values())
        n = trx.count if trx else 0
        seconds = max(duration - warm_s, 1e-9)
        out_warm = {}
        if warm_s:
            warm_trx = ((measurement.warmup or {}).get("TRANSACTION"))
            out_warm = {"warmup": {"seconds": warm_s, "transactions": warm_trx.count if warm_trx else 0,
                                   "queries": sum(c.get(f"{k}_warmup", 0) for k in kinds)}}
        return {
            "transactions": n, "tps": round(n / seconds, 2),
            "queries": q, "qps": round(q / seconds, 2),
            "seconds": round(seconds, 3),
            "basis": ("transactions and queries of the events that ended after the warm-up, per second of the "
                      "phase after it (as sysbench's --warmup-time)" if warm_s else
                      "transactions and queries per second of the phase"),
            "queries_read": measured["queries_read"], "queries_write": measured["queries_write"],
            "queries_other": measured["queries_other"], **out_warm,
            "errors": measurement.total_errors, "reconnects": c.get("reconnects", 0),
            **self._retried_note(w, c.get("retries", 0), q, n),
            "latency_avg_ms": round(trx.histogram.get_mean_value() / 1000, 3) if trx and n else None,
            "latency_p95_ms": round(trx.histogram.get_value_at_percentile(95) / 1000, 3) if trx and n else None,
        } | ({"latency_p95_from_intended_start_ms": round(trx.intended.get_value_at_percentile(95) / 1000, 3)}
             if trx and trx.intended.get_total_count() else {})

    @staticmethod
    def _retried_note(w: SysbenchWorkload, retries: int, queries: int, events: int) -> dict:
        """Where events were retried: QPS counts the queries of the attempts rolled back (as
        sysbench's does), TPS only the events that committed, so QPS is more than the
        queries-per-event multiple of TPS: ``qps_note`` says by how much."""
        per_event = sum(queries_per_event(w))
        if not retries or not events or not per_event:
            return {}
        return {"retried_attempts": retries,
                "qps_note": (f"{retries:,} attempts were rolled back and retried (deadlocks, lock waits): as sysbench "
                             "counts them, their queries are in QPS and they are not in TPS, so QPS is "
                             f"{queries / events:.2f} × TPS here, not {per_event}")}

    def report_tables(self, runs: list[dict]) -> str:
        if not runs:
            return ""
        lines = ["### sysbench OLTP", "",
                 "| instance | test | threads | tables x rows | TPS | QPS | read / write / other queries "
                 "| latency avg ms | p95 ms | errors | reconnects | max connections | IOPS |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|---|"]
        notes: list[str] = []
        for r in runs:
            p = r["phases"].get("run", {})
            s = p.get("sysbench")
            w = r["workload"]
            if not s:
                lines.append(f"| {r['target']['label']} | {w['test']} | {r['threads']} | | missing | | | | | | | | |")
                continue
            iops, why = server_iops(p)
            lines.append(
                f"| {r['target']['label']} | {w['test']} | {r['threads']} | {w['tables']}x{w['table_size']:,} "
                f"| {fmt(s['tps'], 1)} | {fmt(s['qps'], 1)} | {s['queries_read']:,} / {s['queries_write']:,} / "
                f"{s['queries_other']:,} | {s['latency_avg_ms']} | {s['latency_p95_ms']} | {s['errors']} "
                f"| {s['reconnects']} | {max_connections(p)} | {fmt(iops, 0) if iops is not None else '–'} |")
            if s.get("qps_note"):
                notes.append(f"- {r['target']['label']} ({r.get('run_id', '?')}): {s['qps_note']}")
            if why:
                notes.append(f"- {r['target']['label']} ({r.get('run_id', '?')}): IOPS unavailable: {why}")
        lines += ["", "Max connections: the server's max_connections setting (the papers' column is the connections "
                  "each class sustained under stress). IOPS: the server's own I/O counters over the measured window "
                  "(MariaDB/MySQL: InnoDB data file reads and writes and redo log writes a second), not the "
                  "storage device's."]
        if notes:
            lines += ["", *notes]
        published = published_family_table(
            "sysbench", runs, "sysbench TPS / QPS; the papers' transaction: oltp_legacy, 18 statements, QPS 20 a "
            "transaction", [("TPS", "TPS", lambda s: s.get("tps")), ("QPS", "QPS", lambda s: s.get("qps"))])
        return "\n".join(lines) + "\n" + ("\n" + published if published else "")


families.register(Sysbench())
