"""noop: answers every call at once, touching no database. It measures the load
generator itself (benchmarks); never a default, and results say so."""
from __future__ import annotations

from . import register
from .base import Binding


@register("noop")
class NoopBinding(Binding):
    dialect = "sqlite"  # SQL families build their statements in some dialect; none is run
    _record = {f"field{i}": "x" for i in range(10)}

    def connect(self):
        pass

    def describe(self):
        return {"note": "noop binding: generator only, no database"}

    # -- kv ------------------------------------------------------------------------------
    def create_table(self, table, fieldcount):
        pass

    def drop_table(self, table):
        pass

    def count(self, table):
        return 0

    def read(self, table, key, fields, rows=True):
        return self._record if rows else 1

    def scan(self, table, startkey, count, fields, rows=True):
        return [self._record] if rows else 1

    def update(self, table, key, values):
        return True

    def insert(self, table, key, values):
        pass

    def insert_batch(self, table, rows):
        pass

    def delete(self, table, key):
        return True

    # -- sql -------------------------------------------------------------------------------
    def prepare(self, sql):
        return sql

    def execute(self, sql, params=()):
        return 0

    def fetchall(self, sql, params=()):
        return []

    def fetchcount(self, sql, params=()):
        return 0

    def begin(self, writes=True):
        pass

    def commit(self):
        pass

    def rollback(self):
        pass
