"""The binding protocol: what a database must offer dbswarm.

One Binding instance is one client connection, used by one thread. Bindings never time
themselves: ``dbswarm.measure.recorder`` wraps every call. They raise their driver's exceptions and
say, in ``classify``, what kind of error each is (``dbswarm.errors``: retryable,
connection, duplicate, fatal); the retry and reconnect policy lives in the worker, once
for all engines (BenchBase's approach).

A binding offers one or both capabilities (declared in ``bindings/__init__.py``; spec
validation reads them, so a family an engine cannot serve is refused before anything runs),
each a protocol of ``bindings/protocols.py`` (``KeyValue``, ``SqlSession``; every binding is
``Connectable``, and may answer ``ServerIntrospection``), and each with its base class here
(``KeyValueBinding``, ``SqlSessionBinding``; ``Binding``: what every engine implements): the
methods marked ``@unimplemented`` are what a capability's binding must override, and
registration checks it does:

- ``kv``: records of string fields under a string key (YCSB's, go-ycsb's ``DB``).
- ``sql``: a thin SQL session. SQL families keep their statements and DDL per
  ``dialect`` and run them through ``execute`` / ``fetchcount`` / ``fetchall``.
"""
from __future__ import annotations

from dataclasses import dataclass, field
from functools import partial
from typing import Any, Callable, Optional, TypeVar

from dbswarm.bindings.protocols import Split, unimplemented
from dbswarm.errors import CONNECTION, DUPLICATE, FATAL, RETRYABLE, ErrorClass  # noqa: F401 (re-exported)

T = TypeVar("T")
F = TypeVar("F", bound=Callable[..., Any])


class _Pending:
    """A split call's ``finish()`` before its answer is complete (``protocols.Split``)."""
    __slots__ = ()

    def __repr__(self) -> str:
        return "PENDING"


PENDING = _Pending()


@dataclass
class Connection:
    """What a binding needs to connect: never printed (password) — use ``display``."""
    engine: str
    url: Optional[str]
    password: Optional[str] = None
    options: dict[str, Any] = field(default_factory=dict)
    display: str = ""


class Binding:
    """What every engine implements (``protocols.Connectable``): the connection's life cycle, its
    errors' classification, and what the server says of itself (``ServerIntrospection``: nothing
    by default). A capability's methods come with its base (``KeyValueBinding``,
    ``SqlSessionBinding``), multiplexing with ``Multiplexed``. ``name``, ``capabilities`` and
    ``is_real_database`` come from the engine's declaration."""
    name = "base"
    capabilities: tuple[str, ...] = ()
    is_real_database = True

    def __init__(self, conn: Connection):
        self.conn = conn

    # -- life cycle ------------------------------------------------------------------
    @unimplemented
    def connect(self) -> None:
        raise NotImplementedError

    def close(self) -> None:
        pass

    def reconnect(self) -> None:
        try:
            self.close()
        except Exception:
            pass
        self.connect()

    def classify(self, exc: BaseException) -> ErrorClass:
        return ErrorClass(FATAL, type(exc).__name__)

    def peer_addresses(self) -> Optional[list[str]]:
        """The addresses this (open) connection is connected to, as the socket says (an IP
        address; a unix socket's path, or '@name' for an abstract one), read after connect and
        checked against the deployment's AllowedTargets (``admission.check_connected``).
        None: the driver does not say (the plan-time check of the URL is then the only one)."""
        return None

    def describe(self) -> dict:
        """Settings recorded in the result (write concern, isolation ...): no secrets."""
        return {}

    def server_settings(self) -> dict:
        """What the server says about itself on this (open) connection and that a figure
        depends on: its version and durability settings (the white papers state them beside
        every figure). Read once per shard call; an engine without any returns {}."""
        return {}

    def connection_room(self) -> Optional[dict]:
        """How many more client connections the server admits to this user and database, read
        on this (open) connection before a phase's shards start (``engine.connection_room``):
        ``{"free": n, "limits": [{"name", "value", "in_use"}, ...]}``, ``free`` the tightest
        limit's value less its connections in use, this one not counted (it closes before the
        shards connect). None: the engine states no limit (or it could not be read)."""
        return None

    def server_counters(self, settle: bool = False) -> Optional[dict]:
        """The server's own activity counters on this (open) connection, read at both edges of
        a phase's measured window (one connection, un-sharded): numbers only, cumulative since
        the server started, so that after - before is what the phase did. Common keys where the
        engine has them: ``statements`` (statements clients sent) and ``transactions``
        (commits + rollbacks: HammerDB's TPM). ``settle``: the end edge; wait until counters
        that the server publishes late (PostgreSQL's statistics) have caught up. None: the
        engine keeps no counters."""
        return None

    def optional_read(self, read: Callable[[], T]) -> T:
        """``read()``, a read of the server's that may fail (an optional statistic: an extension
        not installed, a view without privilege), isolated so that its failure costs no other
        read on this connection. Here: as it is (a failed statement leaves the transaction
        usable); PostgreSQL, whose transaction a failed statement aborts, runs it in a savepoint."""
        return read()

    def transaction_failed(self) -> bool:
        """Inside a transaction that a failed statement aborted (PostgreSQL: every further
        statement fails until it ends)."""
        return False


class KeyValueBinding(Binding):
    """The ``kv`` capability (``protocols.KeyValue``): records of string fields under a string
    key; the methods marked ``@unimplemented`` are what its engine implements."""

    @unimplemented
    def create_table(self, table: str, fieldcount: int) -> None:
        """Drop and create the table/collection of ``fieldcount`` fields (prepare phase)."""
        raise NotImplementedError

    @unimplemented
    def drop_table(self, table: str) -> None:
        raise NotImplementedError

    def ensure_table(self, table: str, fieldcount: int) -> None:
        """Create the table/collection unless it exists; never drops (dbswarm's own small
        tables, e.g. the campaign lock's)."""
        try:
            self.count(table)
        except Exception:
            try:
                rollback(self)
            except Exception:
                pass
            self.create_table(table, fieldcount)

    @unimplemented
    def count(self, table: str) -> int:
        raise NotImplementedError

    # read and scan return the records, or with rows=False only how many there were (read:
    # 1 or 0): the same query, the whole result still read from the server, its values not
    # turned into Python objects. YCSB's operations use rows=False (they only count
    # not-found reads), as sysbench's events do for their SELECTs.
    @unimplemented
    def read(self, table: str, key: str, fields: Optional[list[str]], rows: bool = True) -> Any:
        """The record's fields, or None when the key does not exist."""
        raise NotImplementedError

    @unimplemented
    def scan(self, table: str, startkey: str, count: int, fields: Optional[list[str]],
             rows: bool = True) -> Any:
        """Up to ``count`` records with key >= startkey, in key order."""
        raise NotImplementedError

    @unimplemented
    def update(self, table: str, key: str, values: dict) -> bool:
        """False when the key does not exist."""
        raise NotImplementedError

    @unimplemented
    def insert(self, table: str, key: str, values: dict) -> None:
        raise NotImplementedError

    def insert_batch(self, table: str, rows: list[tuple[str, dict]]) -> None:
        """Load-phase insert; must be idempotent (existing keys are skipped, not errors)."""
        for key, values in rows:
            try:
                self.insert(table, key, values)
            except Exception as exc:
                if self.classify(exc).kind != DUPLICATE:
                    raise

    @unimplemented
    def delete(self, table: str, key: str) -> bool:
        raise NotImplementedError

    # The hot path's form of read(rows=False) and a one-field update: a function of the key
    # alone (and the value), made once per client thread, so that a YCSB operation is one
    # call into the driver's own statement call instead of read → session → driver. Valid
    # until the connection changes: a caller takes new ones after every reconnect
    # (``engine.calls.Measured.on_reconnect``). Engines override them where the driver allows a
    # shorter path (mysqlclient, PostgreSQL's prepared statements); these defaults are the
    # methods themselves, so every engine has them.
    # the type of the keys ``reader`` and ``updater``'s functions take: str, or bytes where the
    # driver sends bytes (PostgreSQL: the hot path's keys are memoized encoded, not encoded per call)
    hot_key_type: type = str

    def reader(self, table: str, fields: Optional[list[str]]) -> Callable[[Any], int]:
        """``count(key)``: read(table, key, fields, rows=False), 1 or 0."""
        read = self.read
        return lambda key: read(table, key, fields, False)

    def updater(self, table: str, field: str) -> Callable[[Any, Any], Any]:
        """``update(value, key)``: update(table, key, {field: value}), False when not found."""
        update = self.update
        return lambda value, key: update(table, key, {field: value})

    # The other YCSB operations as functions of one connection, in the same way (split calls
    # where the engine has them). Their keys are str, as ``insert`` / ``scan`` / ``update`` take
    # them; ``values`` hold ``fields`` in that order.
    def inserter(self, table: str, fields: list[str]) -> Callable[[str, dict], Any]:
        """``insert(key, values)``: insert(table, key, values)."""
        return partial(self.insert, table)

    def scanner(self, table: str, fields: Optional[list[str]]) -> Callable[[str, int], int]:
        """``count(startkey, n)``: scan(table, startkey, n, fields, rows=False), the rows found."""
        scan = self.scan
        return lambda startkey, n: scan(table, startkey, n, fields, False)

    def row_updater(self, table: str, fields: list[str]) -> Callable[[str, dict], Any]:
        """``update(key, values)``: update(table, key, values) (every field of a record), 0 or
        False when not found."""
        return partial(self.update, table)


class SqlSessionBinding(Binding):
    """The ``sql`` capability (``protocols.SqlSession``): a thin session; the methods marked
    ``@unimplemented`` are what its engine implements."""

    # Statements are written with %s placeholders; ``prepare`` turns one into this session's
    # form (SQLite's ?), and marks it as a per-operation statement the engine may prepare on
    # the server (PostgreSQL). Everything else runs as given.
    dialect: str = ""          # "sqlite" | "mysql" | "postgresql": the engine's declared one (register checks)
    max_params: int = 32766    # bind parameters per statement (batches are cut below it)
    table_options: str = ""    # what a CREATE TABLE ends with here (MySQL: its storage engine)

    @unimplemented
    def prepare(self, sql: str) -> str:
        raise NotImplementedError

    prepare_is_transaction = False  # a server-side prepare counts as a transaction in the server's counters
    # an autocommit statement counts as a transaction in the server's counters (PostgreSQL's
    # xact_commit; MariaDB counts COMMIT statements): dbswarm's own reads inside a measured
    # window then go in one transaction and are counted (engine.target.read_window_edge, TPC-C's TPM)
    statement_is_transaction = False

    def in_transaction(self) -> bool:
        """Inside an explicit transaction (where ``statement_is_transaction``: between begin
        and commit or rollback)."""
        return False

    def begin_own(self) -> None:
        """Begin a read-only transaction of dbswarm's own (a window edge's reads, the server's
        settings), apart from the workload's (PostgreSQL spells it apart, so that the
        server's statement statistics keep the workload's BEGIN and COMMIT exact)."""
        self.begin(writes=False)

    def end_own(self) -> None:
        self.commit()

    def prepare_now(self, sql: str) -> bool:
        """Prepare a statement ``prepare`` returned on the server now, not at its first use:
        a client thread calls it while it sets up, before the measured window (as sysbench's
        thread_init prepares every statement). True when it was prepared now; engines that do
        not prepare on the server do nothing."""
        return False

    @unimplemented
    def execute(self, sql: str, params: Any = ()) -> int:
        """Run a statement; the affected row count."""
        raise NotImplementedError

    @unimplemented
    def fetchall(self, sql: str, params: Any = ()) -> list[tuple]:
        raise NotImplementedError

    def fetchone(self, sql: str, params: Any = ()) -> Optional[tuple]:
        rows = self.fetchall(sql, params)
        return rows[0] if rows else None

    def fetchcount(self, sql: str, params: Any = ()) -> int:
        """Run a query and read its whole result; the number of rows, not turned into Python
        values where the driver allows it."""
        return len(self.fetchall(sql, params))

    def query_counter(self, sql: str) -> Callable[[Any], int]:
        """``count(params)``: ``fetchcount(sql, params)`` for a per-operation query (``prepare``'s)
        with int parameters only (sysbench's selects), in one call where the session has a
        faster one. It belongs to this connection: take it again after a reconnect."""
        return partial(self.fetchcount, sql)  # self.fetchcount as bound now (a C call, no frame)

    def row_counter(self, sql: str) -> Callable[[Any], int]:
        """``count(params)``: ``fetchcount(sql, params)`` for a per-operation query of any
        parameters (YCSB's scans through ``scanner``), split as ``statement_runner``'s run is.
        It belongs to this connection: take it again after a reconnect."""
        return partial(self.fetchcount, sql)

    def row_fetcher(self, sql: str) -> Callable[[Any], Any]:
        """``fetch(params)``: ``fetchall(sql, params)`` for a per-operation query whose rows the
        family reads (TPC-C's), split as ``statement_runner``'s run is. It belongs to this
        connection: take it again after a reconnect."""
        return partial(self.fetchall, sql)

    def statement_runner(self, sql: str) -> Callable[[Any], int]:
        """``run(params)``: ``execute(sql, params)`` for a per-operation statement (``prepare``'s:
        sysbench's updates, deletes, inserts). Where the session multiplexes (``fileno``) it
        carries ``send(params)`` / ``finish()`` as ``query_counter``'s count does (engine.mux).
        It belongs to this connection: take it again after a reconnect."""
        return partial(self.execute, sql)

    def transaction_calls(self, writes: bool = True) -> tuple[Callable[[], Any], Callable[[], Any]]:
        """``(begin(), commit())``: ``begin(writes)`` and ``commit()`` as calls of no argument,
        split into ``send()`` / ``finish()`` where the session multiplexes (engine.mux). They
        belong to this connection: take them again after a reconnect."""
        return partial(self.begin, writes), partial(self.commit)

    def rollback_call(self) -> Callable[[], Any]:
        """``rollback()`` as a call of no argument inside a transaction ``transaction_calls``
        began (TPC-C's New-Order with an unused item), split where the session multiplexes.
        It belongs to this connection: take it again after a reconnect."""
        return partial(self.rollback)

    @unimplemented
    def begin(self, writes: bool = True) -> None:
        """BEGIN; ``writes`` says whether the transaction will write (SQLite locks early)."""
        raise NotImplementedError

    @unimplemented
    def commit(self) -> None:
        raise NotImplementedError

    @unimplemented
    def rollback(self) -> None:
        raise NotImplementedError


def rollback(b: Binding) -> None:
    """Roll back ``b``'s transaction where its engine has transactions (a SQL session); else
    nothing (a document store's operation is its own)."""
    if isinstance(b, SqlSessionBinding):
        b.rollback()


class Multiplexed:
    """An engine's opt-in to the shard's multiplexer (``protocols.Multiplexing``,
    ``fanout.client_model: multiplexed``): mixed into its binding, which says its connection's
    socket in ``fileno`` and keeps in ``splits`` the split form (``protocols.Split``) of each
    call of the connection whose driver can send a statement and read its answer apart (made
    with the call: ``split``). A new table for each connection: a call belongs to its
    connection, and a client takes its calls again after a reconnect."""
    splits: dict[Callable[..., Any], Split]

    def fileno(self) -> Optional[int]:
        raise NotImplementedError

    def split(self, call: F, send: Callable[..., Any], finish: Callable[[], Any]) -> F:
        """``call`` with its split form registered (``send(*args)``, ``finish()``); returns it."""
        self.splits[call] = Split(send, finish)
        return call
