"""sysbench 1.0 OLTP (oltp_common.lua) for one client thread.

An event is one transaction: BEGIN, point selects, the four range queries, the index and
non-index updates, DELETE + INSERT of the same id, COMMIT — counted as sysbench counts them
(read / write / other), so 20 queries per oltp_read_write transaction.
"""
from __future__ import annotations

import random

from .generators import sysbench_rand

_DIGITS = "0123456789"
_POOL = 1 << 15
READ, WRITE, OTHER = 0, 1, 2


class SysbenchClient:
    def __init__(self, w, rng: random.Random):
        self.w = w
        self.rng = rng
        self.random = rng.random
        self.ids = sysbench_rand(w.rand_type, rng, 1, w.table_size)
        self.pool = "".join(rng.choices(_DIGITS, k=_POOL))
        self.writes = bool(w.index_updates or w.non_index_updates or w.delete_inserts)
        # the range queries this workload runs: (count, binding method name), decided once
        self._ranges = tuple((count, name) for count, name in (
            (w.simple_ranges, "sb_simple_range"), (w.sum_ranges, "sb_sum_range"),
            (w.order_ranges, "sb_order_range"), (w.distinct_ranges, "sb_distinct_range")) if count)
        only_point_selects = bool(w.skip_trx and w.point_selects and not self._ranges and not self.writes)
        self.body = self._point_selects if only_point_selects else self._event

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

    def _event(self, b, q):
        w, ids = self.w, self.ids
        if not w.skip_trx:
            b.begin(self.writes)
            q[OTHER] += 1
        if w.point_selects:
            self._point_selects(b, q)
        rs = w.range_size - 1
        for count, name in self._ranges:
            fn = getattr(b, name)
            t = self.table()
            for _ in range(count):
                lo = ids.next()
                fn(t, lo, lo + rs, False)
                q[READ] += 1
        if w.index_updates:
            t = self.table()
            for _ in range(w.index_updates):
                b.sb_index_update(t, ids.next())
                q[WRITE] += 1
        if w.non_index_updates:
            t = self.table()
            for _ in range(w.non_index_updates):
                b.sb_non_index_update(t, ids.next(), self.c_value())
                q[WRITE] += 1
        if w.delete_inserts:
            t = self.table()
            for _ in range(w.delete_inserts):
                id_ = ids.next()
                b.sb_delete(t, id_)
                q[WRITE] += 1
                b.sb_insert(t, id_, 1 + int(self.random() * w.table_size), self.c_value(), self.pad_value())
                q[WRITE] += 1
        if not w.skip_trx:
            b.commit()
            q[OTHER] += 1

    def _point_selects(self, b, q):
        """The event's point selects; alone, the whole event of workloads that run nothing
        else outside a transaction (oltp_point_select), without _event's checks of the
        groups they do not run."""
        t, nxt = self.table(), self.ids.next
        for _ in range(self.w.point_selects):
            b.sb_point_select(t, nxt(), False)  # rows=False: read, not converted
            q[READ] += 1

    def load_rows(self, table_size: int, first_id: int, last_id: int) -> list:
        """(id, k, c, pad) for ids first..last inclusive."""
        rng = self.rng
        return [(i, rng.randint(1, table_size), self.c_value(), self.pad_value())
                for i in range(first_id, last_id + 1)]

    def queries_per_event(self) -> tuple[int, int, int]:
        w = self.w
        reads = w.point_selects + w.simple_ranges + w.sum_ranges + w.order_ranges + w.distinct_ranges
        writes = w.index_updates + w.non_index_updates + 2 * w.delete_inserts
        other = 0 if w.skip_trx else 2
        return reads, writes, other
