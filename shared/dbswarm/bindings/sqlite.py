"""SQLite (stdlib): the embedded default target, a file under the campaign's results folder.

SQLite has one writer at a time: writing transactions take the lock at BEGIN (IMMEDIATE)
and wait for it (busy_timeout) instead of failing on upgrade; "database is locked" that
still escapes is retryable.
"""
from __future__ import annotations

import os
import sqlite3
from typing import Any, Optional

from dbswarm.bindings import register
from dbswarm.bindings.sql import SqlBinding
from dbswarm.errors import CONNECTION, DUPLICATE, FATAL, RETRYABLE, ErrorClass


def sqlite_path(url: str | None) -> str:
    if not url:
        raise ValueError("sqlite target needs a file path")
    for prefix in ("sqlite:///", "sqlite://", "file:"):
        if url.startswith(prefix):
            return url[len(prefix):] if prefix != "sqlite:///" else "/" + url[len(prefix):]
    return url


@register("sqlite")
class SqliteBinding(SqlBinding):
    dialect = "sqlite"
    placeholder = "?"
    max_params = 32766  # SQLite 3.32's SQLITE_MAX_VARIABLE_NUMBER
    insert_ignore_verb = "INSERT OR IGNORE INTO"
    db: Any  # the open connection (a sqlite3.Connection); None once closed

    def connect(self) -> None:
        path = sqlite_path(self.conn.url)
        os.makedirs(os.path.dirname(os.path.abspath(path)), exist_ok=True)
        timeout_ms = int(self.conn.options.get("busy_timeout_ms", 30_000))
        self.db = sqlite3.connect(path, timeout=timeout_ms / 1000, isolation_level=None,
                                  check_same_thread=False)
        self.db.execute(f"PRAGMA busy_timeout={timeout_ms}")
        self.db.execute(f"PRAGMA journal_mode={self.conn.options.get('journal_mode', 'WAL')}")
        self.db.execute(f"PRAGMA synchronous={self.conn.options.get('synchronous', 'NORMAL')}")

    def close(self) -> None:
        db = getattr(self, "db", None)
        if db is not None:
            db.close()
            self.db = None

    def peer_addresses(self) -> Optional[list[str]]:
        return []   # no network

    def describe(self) -> dict:
        return {"journal_mode": self.conn.options.get("journal_mode", "WAL"),
                "synchronous": self.conn.options.get("synchronous", "NORMAL")}

    def server_settings(self) -> dict:
        return {"server_version": f"SQLite {sqlite3.sqlite_version}",
                "journal_mode": self.db.execute("PRAGMA journal_mode").fetchone()[0],
                "synchronous": {0: "OFF", 1: "NORMAL", 2: "FULL", 3: "EXTRA"}.get(
                    self.db.execute("PRAGMA synchronous").fetchone()[0])}

    def classify(self, exc: BaseException) -> ErrorClass:
        msg = str(exc).lower()
        if isinstance(exc, sqlite3.IntegrityError) and "unique" in msg:
            return ErrorClass(DUPLICATE, "duplicate_key")
        if isinstance(exc, sqlite3.OperationalError) and ("locked" in msg or "busy" in msg):
            return ErrorClass(RETRYABLE, "database_locked")
        if isinstance(exc, sqlite3.ProgrammingError) and "closed" in msg:
            return ErrorClass(CONNECTION, "connection_closed")
        if isinstance(exc, AttributeError) and getattr(self, "db", None) is None:
            return ErrorClass(CONNECTION, "not_connected")
        return ErrorClass(FATAL, type(exc).__name__)

    def execute(self, sql: str, params: Any = ()) -> int:
        return self.db.execute(sql, params).rowcount

    def fetchall(self, sql: str, params: Any = ()) -> list[tuple]:
        return self.db.execute(sql, params).fetchall()

    def fetchone(self, sql: str, params: Any = ()) -> Optional[tuple]:
        return self.db.execute(sql, params).fetchone()

    def begin(self, writes: bool = True) -> None:
        self.db.execute("BEGIN IMMEDIATE" if writes else "BEGIN")

    def commit(self) -> None:
        self.db.execute("COMMIT")

    def rollback(self) -> None:
        if self.db.in_transaction:
            self.db.execute("ROLLBACK")
