"""Binding registry: the one list of engines, their aliases and their capabilities.

Every engine is *declared* here (or by a plugin, ``declare``) with the module that
implements it, so a campaign can be validated — engine names, aliases, which workload
families an engine can serve — without importing any driver. The module is imported
lazily, when a binding is first needed (``get``), and registers its class
(``@register``), which receives the declared name, capabilities and
``is_real_database``. A missing driver only matters for the engine that needs it
(``pip install dbswarm[drivers]``).

Capabilities (``base.py`` documents the methods of each):
- ``kv``: a record store keyed by string: read / scan / update / insert / delete and a
  table of N fields (what go-ycsb's ``DB`` interface has). YCSB needs it.
- ``sql``: a thin SQL session: execute / fetch count / fetch rows / begin / commit /
  rollback, a ``dialect`` and error classification. SQL workload families (sysbench,
  TPC-C) own their statements and DDL, per dialect, and run them through it. A SQL engine
  declares its ``dialect``; validation refuses a family whose ``dialects`` lack it.

Each capability is a protocol (``protocols.py``: ``KeyValue``, ``SqlSession``, both
``Connectable``); ``register`` refuses a class that leaves a method of a declared
capability's protocol unimplemented, or whose ``dialect`` is not the declared one.
"""
from __future__ import annotations

import importlib
from dataclasses import dataclass
from typing import Callable, TypeVar

from dbswarm.bindings.base import Binding, Connection
from dbswarm.bindings.protocols import PROTOCOLS, Connectable, KeyValue, ServerIntrospection, SqlSession, missing
from dbswarm.errors import CONNECTION, DUPLICATE, FATAL, RETRYABLE, BindingError, ErrorClass
from dbswarm.plugins import load_plugins

KV = "kv"
SQL = "sql"
CAPABILITIES = {KV: "a key-value engine", SQL: "a SQL engine"}


@dataclass(frozen=True)
class Engine:
    name: str
    module: str
    aliases: tuple[str, ...] = ()
    capabilities: tuple[str, ...] = ()
    is_real_database: bool = True
    needs_url: bool = True      # a networked engine: target.url is required
    embedded: bool = False      # a database file: default target.url is a file under the campaign's folder
    description: str = ""
    url_schemes: tuple[str, ...] = ()  # a URL's accepted schemes (checked at validation); () = any
    url_example: str = ""
    dialect: str = ""           # a SQL engine's dialect: the row of the SQL families' statement tables


_ENGINES: dict[str, Engine] = {}
_ALIASES: dict[str, str] = {}
_REGISTRY: dict[str, type[Binding]] = {}
B = TypeVar("B", bound=Binding)


def declare(name: str, module: str, *, aliases: tuple[str, ...] = (), capabilities: tuple[str, ...] = (),
            is_real_database: bool = True, needs_url: bool = True, embedded: bool = False, description: str = "",
            url_schemes: tuple[str, ...] = (), url_example: str = "", dialect: str = "") -> Engine:
    """Make an engine known (name, aliases, capabilities, a SQL engine's dialect) before its
    module is imported."""
    for n in (name, *aliases):
        if n in _ENGINES or n in _ALIASES:
            raise BindingError(f"engine name {n!r} is declared twice")
    unknown = [c for c in capabilities if c not in CAPABILITIES]
    if unknown:
        raise BindingError(f"engine {name!r}: unknown capabilities {unknown}; known: {', '.join(CAPABILITIES)}")
    if (SQL in capabilities) != bool(dialect):
        raise BindingError(f"engine {name!r}: " + ("a sql engine declares its dialect (dialect='postgresql', ...)"
                                                   if not dialect else f"dialect {dialect!r} without the sql capability"))
    e = _ENGINES[name] = Engine(name, module, tuple(aliases), tuple(capabilities), is_real_database, needs_url,
                                embedded, description, tuple(url_schemes), url_example, dialect)
    for a in aliases:
        _ALIASES[a] = name
    return e


declare("sqlite", "dbswarm.bindings.sqlite", aliases=("sqlite3",), capabilities=(KV, SQL), needs_url=False,
        embedded=True, description="the embedded default (a file under the campaign's results folder)",
        dialect="sqlite")
declare("mongodb", "dbswarm.bindings.mongodb", aliases=("mongo",), capabilities=(KV,),
        description="MongoDB and wire-compatible servers (pymongo)", url_schemes=("mongodb", "mongodb+srv"),
        url_example="mongodb://USER@HOST:27017/ycsb?authSource=admin")
declare("mysql", "dbswarm.bindings.mysql", aliases=("mariadb",), capabilities=(KV, SQL),
        description="MySQL and MariaDB (PyMySQL or mysqlclient)", url_schemes=("mysql", "mariadb", "mysql+pymysql"),
        url_example="mysql://USER@HOST:3306/DATABASE", dialect="mysql")
# PostgreSQL also takes libpq's keyword form (host=... dbname=...), which has no scheme
declare("postgresql", "dbswarm.bindings.postgresql", aliases=("postgres", "pg", "pgsql"), capabilities=(KV, SQL),
        description="PostgreSQL (psycopg 3)", url_schemes=("postgresql", "postgres"),
        url_example="postgresql://USER@HOST:5432/DATABASE", dialect="postgresql")
# noop builds a SQL family's statements in SQLite's dialect (and runs none)
declare("noop", "dbswarm.bindings.noop", capabilities=(KV, SQL), is_real_database=False, needs_url=False,
        description="measures only the load generator", dialect="sqlite")


def canonical(name: object) -> str | None:
    """The engine's own name for a name or alias (any case); None if unknown."""
    load_plugins()
    n = str(name).lower()
    n = _ALIASES.get(n, n)
    return n if n in _ENGINES else None


def engine(name: str) -> Engine:
    c = canonical(name)
    if c is None:
        raise BindingError(f"unknown engine {name!r}; known: {', '.join(names())}")
    return _ENGINES[c]


def register(name: str) -> Callable[[type[B]], type[B]]:
    """Class decorator of a declared engine's binding: ``@register("postgresql")``."""
    def wrap(cls: type[B]) -> type[B]:
        e = _ENGINES.get(name)
        if e is None:
            raise BindingError(f"binding {cls.__name__}: engine {name!r} is not declared (bindings.declare)")
        if name in _REGISTRY:
            raise BindingError(f"binding name {name!r} is registered twice")
        for cap, protocol in [("connection", Connectable)] + [(c, PROTOCOLS[c]) for c in e.capabilities]:
            lacks = missing(cls, protocol)
            if lacks:
                raise BindingError(f"binding {cls.__name__} (engine {name!r}) does not implement "
                                   f"{', '.join(lacks)} of the {cap} protocol ({protocol.__name__}, "
                                   "dbswarm.bindings.protocols)" + (f", which its declared capability {cap} needs"
                                                                    if cap != "connection" else ""))
        if SQL in e.capabilities and getattr(cls, "dialect", "") != e.dialect:
            raise BindingError(f"binding {cls.__name__} (engine {name!r}): its dialect "
                               f"{getattr(cls, 'dialect', '')!r} is not the declared {e.dialect!r}")
        cls.name, cls.capabilities, cls.is_real_database = name, e.capabilities, e.is_real_database
        _REGISTRY[name] = cls
        return cls
    return wrap


def get(name: str) -> type[Binding]:
    e = engine(name)
    if e.name not in _REGISTRY:
        try:
            importlib.import_module(e.module)
        except ImportError as err:
            raise BindingError(f"engine {e.name!r} needs a driver that is not installed: {err}") from None
    if e.name not in _REGISTRY:
        raise BindingError(f"module {e.module} did not register engine {e.name!r}")
    return _REGISTRY[e.name]


def names() -> list[str]:
    load_plugins()
    return list(_ENGINES)


def aliases() -> dict[str, str]:
    load_plugins()
    return dict(_ALIASES)


__all__ = ["Binding", "Connection", "Connectable", "KeyValue", "SqlSession", "ServerIntrospection", "PROTOCOLS",
           "ErrorClass", "RETRYABLE", "CONNECTION", "DUPLICATE", "FATAL", "KV", "SQL", "CAPABILITIES", "Engine",
           "declare", "register", "get", "engine", "canonical", "names", "aliases"]
