"""The custom family's client-vs-server statement cross-check (issue 54, results): each statement's
executions as the client counted them against the server's own count of that statement over the
run phase's measured window, where the server keeps one.

PostgreSQL with pg_stat_statements: ``calls`` per normalized statement of this database, read at
both edges of the window (``Family.window_snapshot``); a workload statement is matched by its
shape — the text with parameters, numbers and quoted strings as ``?``, case and spacing ignored —
which is what pg_stat_statements keeps (its constants become ``$n``). Statements of one shape are
one entry there: compared together. Elsewhere (MariaDB, SQLite, MongoDB) "unavailable because ...".
"""
from __future__ import annotations

import re
from typing import Any, Optional

from dbswarm.families.custom import model as M

CALLS = "calls:"  # window_snapshot's keys: "calls:<transaction>.<statement>" -> the server's calls of its shape
_SHAPE = re.compile(r"'(?:[^']|'')*'|\$\d+|%s|\b\d+(?:\.\d+)?\b")
SOURCE = "pg_stat_statements calls (this database, every client) between the measured window's edges"


def shape(sql: str) -> str:
    """A statement as pg_stat_statements keeps it, reduced to compare: parameters, numbers and
    quoted strings as ``?``, lower case, one space between words, no trailing ``;``."""
    return " ".join(_SHAPE.sub("?", sql).lower().replace("(", " ( ").replace(")", " ) ").replace(",", " , ")
                    .split()).rstrip(";").strip()


def statement_shapes(w: M.CustomWorkload, dialect: str) -> dict[str, str]:
    """"<transaction>.<i>" -> the shape of its SQL on this dialect."""
    out = {}
    for name, tx in w.transactions.items():
        for i, st in enumerate(tx.statements):
            text = M.statement_texts(st).get(dialect)
            if text is not None:
                out[f"{name}.{i}"] = shape(M.parse_statement(text)[0])
    return out


def unavailable_on(dialect: str) -> Optional[str]:
    if dialect == "postgresql":
        return None
    return {"mysql": "dbswarm reads no per-statement counters of MySQL / MariaDB (performance_schema digests)",
            "sqlite": "SQLite keeps no per-statement counters"}.get(dialect, f"{dialect or 'this engine'} keeps no "
                                                                               "per-statement counters dbswarm reads")


def read_calls(b: Any, w: M.CustomWorkload) -> dict:
    """One edge: {"calls:<transaction>.<i>": calls of its shape} from pg_stat_statements, or
    {"unavailable": why}."""
    if w.documents:
        return {"unavailable": "MongoDB's per-operation counters are not read (serverStatus counts by kind)"}
    why = unavailable_on(b.dialect)
    if why:
        return {"unavailable": why}
    if b.fetchone("SELECT to_regclass('pg_stat_statements')")[0] is None:
        return {"unavailable": "pg_stat_statements is not created in this database (CREATE EXTENSION "
                               "pg_stat_statements, with the library in shared_preload_libraries)"}
    by_shape: dict[str, int] = {}
    for query, calls in b.fetchall("SELECT query, calls FROM pg_stat_statements WHERE dbid = (SELECT oid FROM "
                                   "pg_database WHERE datname = current_database())"):
        k = shape(query or "")
        by_shape[k] = by_shape.get(k, 0) + int(calls or 0)
    shapes = statement_shapes(w, b.dialect)
    return {**{f"{CALLS}{key}": by_shape.get(s, 0) for key, s in shapes.items()},
            **{f"shape:{key}": s for key, s in shapes.items()}}


def cross_check(w: M.CustomWorkload, client: dict[str, int], window: Optional[dict]) -> dict:
    """{"source", "statements": [{transaction, statements, client, server, ratio}]} per shape, or
    {"unavailable": "unavailable because ..."}. ``client``: "<transaction>.<i>" -> executions
    counted by the client over the window (warm-up included, as the window)."""
    if window is None:
        return {"unavailable": "unavailable because the measured window's edges were not read"}
    start = window.get("family_start") or {}
    if start.get("unavailable"):
        return {"unavailable": f"unavailable because {start['unavailable']}"}
    unread = (window.get("unread") or {}).get("family")
    deltas = window.get("family") or {}
    if unread or not any(k.startswith(CALLS) for k in deltas):
        return {"unavailable": f"unavailable because {unread or 'the server counters were not read at both edges'}"}
    groups: dict[str, list[str]] = {}
    for key in client:  # statements of one shape share the server's count: compared together
        if f"{CALLS}{key}" in deltas:
            groups.setdefault(start.get(f"shape:{key}") or key, []).append(key)
    rows = []
    for keys in groups.values():
        n = sum(client[k] for k in keys)
        server = int(deltas[f"{CALLS}{keys[0]}"])
        rows.append({"statements": keys, "client": n, "server": server,
                     "ratio": round(n / server, 4) if server else None})
    return {"source": SOURCE, "statements": rows}
