"""The binding's protocols: small ``typing.Protocol`` classes, one per thing a binding does.

- ``Connectable``: the connection's life cycle and error classification (every binding);
- ``KeyValue``: the ``kv`` capability, records of string fields under a string key (YCSB);
- ``SqlSession``: the ``sql`` capability, a thin SQL session in one ``dialect`` (sysbench, TPC-C);
- ``ServerIntrospection``: what the server says about itself and its counters (optional:
  ``Binding`` answers "nothing" by default).

A binding (a ``bindings.base.Binding`` subclass) implements the protocols of the capabilities
its engine declares (``bindings.declare``); ``bindings.register`` checks it at registration:
a method a protocol requires that the class leaves as ``Binding``'s stub (``unimplemented``)
refuses the registration, naming the methods. Families ask for the protocol they need (their
``requires``: ``PROTOCOLS[requires]``) and type the binding they are handed with it.

The protocols are types only: nothing is called through them, so the hot path is the
binding's own methods, as before.
"""
from __future__ import annotations

from typing import Any, Callable, Optional, Protocol

from dbswarm.errors import ErrorClass


def unimplemented(fn: Callable) -> Callable:
    """Marks a ``Binding`` stub: a binding whose capability requires the method overrides it."""
    fn.__binding_unimplemented__ = True  # type: ignore[attr-defined]
    return fn


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
    def statement_runner(self, sql: str) -> Callable[[Any], int]: ...
    def transaction_calls(self, writes: bool = True) -> tuple[Callable[[], Any], Callable[[], Any]]: ...
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
        if attr is None or getattr(attr, "__binding_unimplemented__", False):
            out.append(n)
    return out
