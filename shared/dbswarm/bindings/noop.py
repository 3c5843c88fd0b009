"""noop: answers every call at once, touching no database. It measures the load
generator itself (benchmarks); never a default, and results say so."""
from __future__ import annotations

from . import register
from .base import Binding


@register("noop")
class NoopBinding(Binding):
    is_real_database = False
    _record = {f"field{i}": "x" for i in range(10)}

    def connect(self):
        pass

    def describe(self):
        return {"note": "noop binding: generator only, no database"}

    def ycsb_create(self, table, fieldcount):
        pass

    def ycsb_drop(self, table):
        pass

    def ycsb_count(self, table):
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

    def sb_create(self, table_no):
        pass

    def sb_load(self, table_no, rows):
        pass

    def sb_create_index(self, table_no):
        pass

    def sb_drop(self, table_no):
        pass

    def sb_count(self, table_no):
        return 0

    def begin(self, writes=True):
        pass

    def commit(self):
        pass

    def rollback(self):
        pass

    def _nothing(self, *args, rows=True):
        return () if rows else 0

    sb_point_select = sb_simple_range = sb_sum_range = sb_order_range = sb_distinct_range = _nothing
    sb_index_update = sb_non_index_update = sb_delete = sb_insert = _nothing
