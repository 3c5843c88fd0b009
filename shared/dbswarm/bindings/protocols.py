"""The binding's protocols: small ``typing.Protocol`` classes, one per thing a binding does.

- ``Connectable``: the connection's life cycle and error classification (every binding);
- ``KeyValue``: the ``kv`` capability, records of string fields under a string key (YCSB);
- ``SqlSession``: the ``sql`` capability, a thin SQL session in one ``dialect`` (sysbench, TPC-C);
- ``ServerIntrospection``: what the server says about itself and its counters (optional:
  ``Binding`` answers "nothing" by default);
- ``Multiplexing``: split calls (``Split``: a statement sent, its answer finished apart) on the
  connection's socket, which the shard's multiplexer drives (engine.mux); an engine opts in
  (``bindings.base.Multiplexed``), for the calls whose driver allows it.

A binding (a ``bindings.base.Binding`` subclass) implements the protocols of the capabilities
its engine declares (``bindings.declare``); ``bindings.register`` checks it at registration:
a method a protocol requires that the class leaves as ``Binding``'s stub (``unimplemented``)
refuses the registration, naming the methods. Families ask for the protocol they need (their
``requires``: ``PROTOCOLS[requires]``) and type the binding they are handed with it.

The protocols are types only: nothing is called through them, so the hot path is the
binding's own methods, as before.
"""
from __future__ import annotations

from typing import Any, Callable, NamedTuple, Optional, Protocol, TypeVar, runtime_checkable

from dbswarm.errors import ErrorClass

F = TypeVar("F", bound=Callable[..., Any])
# the stubs of ``Binding`` that a capability's binding must override (``unimplemented``)
UNIMPLEMENTED: set[Callable[..., Any]] = set()


def unimplemented(fn: F) -> F:
    """Marks a ``Binding`` stub: a binding whose capability requires the method overrides it."""
    UNIMPLEMENTED.add(fn)
    return fn


class Split(NamedTuple):
    """A call's split form (engine.mux): ``send(*args)`` sends what ``call(*args)`` would (nothing
    read); ``finish()``, called when the connection's socket is readable, returns what the call
    would return, or ``bindings.base.PENDING`` while the answer is incomplete, and raises what
    it would raise."""
    send: Callable[..., Any]
    finish: Callable[[], Any]


@runtime_checkable
class Multiplexing(Protocol):
    """An engine whose connection's calls can be split (engine.mux): ``fileno()``, the
    connection's socket (None: no split calls on this connection), and ``splits``, the split
    form of each call of this connection that has one (``reader``'s, ``statement_runner``'s ...:
    the calls a client takes from the binding), looked up by the call. A call that is not in it
    is called whole (blocking the multiplexer's other connections)."""
    splits: dict[Callable[..., Any], Split]

    def fileno(self) -> Optional[int]: ...


def splits_of(binding: object) -> Optional[dict[Callable[..., Any], Split]]:
    """The binding's split calls (``Multiplexing.splits``), or None for an engine that does not
    multiplex: where a wrapper of a binding's call (``bindings.sql.reshaped``, a family's)
    registers its own split form."""
    return binding.splits if isinstance(binding, Multiplexing) else None


class Connectable(Protocol):
    """One client connection, used by one thread (every binding)."""
    name: str
    capabilities: tuple[str, ...]
    is_real_database: bool

    def connect(self) -> None: ...
    def close(self) -> None: ...
    def reconnect(self) -> None: ...
    def classify(self, exc: BaseException) -> ErrorClass: ...
    def peer_addresses(self) -> Optional[list[str]]: ...
    def describe(self) -> dict: ...


class ServerIntrospection(Protocol):
    """The server's settings and activity counters on an open connection."""

    def server_settings(self) -> dict: ...
    def server_counters(self, settle: bool = False) -> Optional[dict]: ...
    def connection_room(self) -> Optional[dict]: ...
    def optional_read(self, read: Callable[[], Any]) -> Any: ...
    def transaction_failed(self) -> bool: ...


class KeyValue(Connectable, Protocol):
    """The ``kv`` capability: records of string fields under a string key."""
    hot_key_type: type

    def create_table(self, table: str, fieldcount: int) -> None: ...
    def drop_table(self, table: str) -> None: ...
    def ensure_table(self, table: str, fieldcount: int) -> None: ...
    def count(self, table: str) -> int: ...
    def read(self, table: str, key: str, fields: Optional[list[str]], rows: bool = True) -> Any: ...
    def scan(self, table: str, startkey: str, count: int, fields: Optional[list[str]], rows: bool = True) -> Any: ...
    def update(self, table: str, key: str, values: dict) -> bool: ...
    def insert(self, table: str, key: str, values: dict) -> None: ...
    def insert_batch(self, table: str, rows: list[tuple[str, dict]]) -> None: ...
    def delete(self, table: str, key: str) -> bool: ...
    def reader(self, table: str, fields: Optional[list[str]]) -> Callable[[Any], int]: ...
    def updater(self, table: str, field: str) -> Callable[[Any, Any], Any]: ...
    def inserter(self, table: str, fields: list[str]) -> Callable[[str, dict], Any]: ...
    def scanner(self, table: str, fields: Optional[list[str]]) -> Callable[[str, int], int]: ...
    def row_updater(self, table: str, fields: list[str]) -> Callable[[str, dict], Any]: ...


class SqlSession(Connectable, Protocol):
    """The ``sql`` capability: a thin session; statements written with %s placeholders."""
    dialect: str               # the engine's declared dialect: the row of a family's SQL tables
    max_params: int
    table_options: str
    prepare_is_transaction: bool

    def prepare(self, sql: str) -> str: ...
    def prepare_now(self, sql: str) -> bool: ...
    def execute(self, sql: str, params: Any = ()) -> int: ...
    def fetchall(self, sql: str, params: Any = ()) -> list[tuple]: ...
    def fetchone(self, sql: str, params: Any = ()) -> Optional[tuple]: ...
    def fetchcount(self, sql: str, params: Any = ()) -> int: ...
    def query_counter(self, sql: str) -> Callable[[Any], int]: ...
    def row_counter(self, sql: str) -> Callable[[Any], int]: ...
    def row_fetcher(self, sql: str) -> Callable[[Any], Any]: ...
    def statement_runner(self, sql: str) -> Callable[[Any], int]: ...
    def transaction_calls(self, writes: bool = True) -> tuple[Callable[[], Any], Callable[[], Any]]: ...
    def rollback_call(self) -> Callable[[], Any]: ...
    def begin(self, writes: bool = True) -> None: ...
    def commit(self) -> None: ...
    def rollback(self) -> None: ...


# the protocol of each capability (bindings.CAPABILITIES)
PROTOCOLS: dict[str, type] = {"kv": KeyValue, "sql": SqlSession}


def members(protocol: type) -> list[str]:
    """A protocol's methods and attributes, its bases' included."""
    out: list[str] = []
    for klass in reversed(protocol.__mro__):
        if not getattr(klass, "_is_protocol", False) or klass is Protocol:
            continue
        for n in [*getattr(klass, "__annotations__", {}), *vars(klass)]:
            if not n.startswith("_") and n not in out:
                out.append(n)
    return out


def missing(cls: type, protocol: type) -> list[str]:
    """What ``cls`` lacks of ``protocol``: members it does not have, or has only as ``Binding``'s stub."""
    out = []
    for n in members(protocol):
        attr = getattr(cls, n, None)
        if attr is None or (callable(attr) and attr in UNIMPLEMENTED):
            out.append(n)
    return out
