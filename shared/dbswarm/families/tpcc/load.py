"""TPC-C's load (BenchBase's TPCCLoader; clause 4.3.3.1): the rows of each unit (``Population``),
written in one transaction each (``Loader``: a unit already written is skipped, so a load resumes
without duplicates), and the client thread that writes its range of units (``LoadClient``).
Units 0..9 are ITEM chunks, each other unit one district of one warehouse (``unit_district``)."""
from __future__ import annotations

import random
import time

from dbswarm.bindings.protocols import SqlSession
from dbswarm.families.base import EVENT, Client, Exhausted, Op, Operation, ThreadContext
from dbswarm.families.tpcc import sql as S
from dbswarm.families.tpcc.model import (
    CUSTOMERS,
    DISTRICTS,
    FIRST_UNDELIVERED,
    ITEM_CHUNK,
    ITEM_UNITS,
    ITEMS,
    ORDERS,
    STOCK_PER_DISTRICT_UNIT,
    Strings,
    TpccWorkload,
    last_name,
    money,
    nurand,
    rate,
)


class Population:
    """Rows of the load's units; ``now`` is the load's timestamp for every date column."""

    def __init__(self, rng: random.Random, c_last_load: int):
        self.rng, self.s, self.c = rng, Strings(rng), c_last_load
        self.now = time.strftime("%Y-%m-%d %H:%M:%S")

    def items(self, first: int, last: int) -> list[tuple]:
        r, s = self.rng, self.s
        return [(i, r.randint(1, 10_000), s.a(14, 24), money(r.randint(100, 10_000) / 100), s.data(26, 50))
                for i in range(first, last + 1)]

    def warehouse(self, w: int) -> tuple:
        s = self.s
        return (w, s.a(6, 10), s.a(10, 20), s.a(10, 20), s.a(10, 20), s.state(), s.zip(),
                rate(self.rng.randint(0, 2000) / 10_000), "300000.00")

    def district(self, w: int, d: int) -> tuple:
        s = self.s
        return (d, w, s.a(6, 10), s.a(10, 20), s.a(10, 20), s.a(10, 20), s.state(), s.zip(),
                rate(self.rng.randint(0, 2000) / 10_000), "30000.00", ORDERS + 1)

    def stock(self, w: int, first: int, last: int) -> list[tuple]:
        r, s = self.rng, self.s
        a = s.a
        return [(i, w, r.randint(10, 100), a(24, 24), a(24, 24), a(24, 24), a(24, 24), a(24, 24), a(24, 24),
                 a(24, 24), a(24, 24), a(24, 24), a(24, 24), 0, 0, 0, s.data(26, 50))
                for i in range(first, last + 1)]

    def customers(self, w: int, d: int) -> tuple[list, list]:
        """(CUSTOMER rows, HISTORY rows) of one district."""
        r, s, now = self.rng, self.s, self.now
        cust, hist = [], []
        for c in range(1, CUSTOMERS + 1):
            last = last_name(c - 1 if c <= 1000 else nurand(r, 255, 0, 999, self.c))
            credit = "BC" if r.random() < 0.1 else "GC"
            cust.append((c, d, w, s.a(8, 16), "OE", last, s.a(10, 20), s.a(10, 20), s.a(10, 20), s.state(),
                         s.zip(), s.n(16), now, credit, "50000.00", rate(r.randint(0, 5000) / 10_000), "-10.00",
                         "10.00", 1, 0, s.a(300, 500)))
            hist.append((c, d, w, d, w, now, "10.00", s.a(12, 24)))
        return cust, hist

    def orders(self, w: int, d: int) -> tuple[list, list, list]:
        """(ORDERS, ORDER_LINE, NEW_ORDER rows) of one district: o_c_id a permutation of the
        customers, orders from 2101 undelivered (no carrier, no delivery date, a new order)."""
        r, s, now = self.rng, self.s, self.now
        perm = list(range(1, CUSTOMERS + 1))
        r.shuffle(perm)
        orders, lines, new = [], [], []
        for o in range(1, ORDERS + 1):
            delivered = o < FIRST_UNDELIVERED
            cnt = r.randint(5, 15)
            orders.append((o, d, w, perm[o - 1], now, r.randint(1, 10) if delivered else None, cnt, 1))
            for n in range(1, cnt + 1):
                lines.append((o, d, w, n, r.randint(1, ITEMS), w, now if delivered else None, 5,
                              "0.00" if delivered else money(r.randint(1, 999_999) / 100), s.a(24, 24)))
            if not delivered:
                new.append((o, d, w))
        return orders, lines, new


class Loader:
    """Writes load units on one SQL session: multi-row INSERTs, one transaction per unit."""

    def __init__(self, binding: SqlSession, batchsize: int):
        self.b = binding
        self.batchsize = batchsize
        self._stmts: dict[tuple[str, int], str] = {}
        self.district_exists = binding.prepare(S.DISTRICT_EXISTS)
        self.items_exist = binding.prepare(S.ITEMS_EXIST)

    def insert(self, table: str, rows: list[tuple]) -> int:
        cols = S.COLUMNS[table]
        step = max(1, min(self.batchsize, self.b.max_params // len(cols)))
        one = "(" + ", ".join(["%s"] * len(cols)) + ")"
        for i in range(0, len(rows), step):
            part = rows[i:i + step]
            sql = self._stmts.get((table, len(part)))
            if sql is None:
                sql = self._stmts[table, len(part)] = self.b.prepare(
                    f"INSERT INTO {table} ({', '.join(cols)}) VALUES " + ", ".join([one] * len(part)))
            self.b.execute(sql, [v for row in part for v in row])
        return len(rows)

    def unit_written(self, unit: int) -> bool:
        b = self.b
        if unit < ITEM_UNITS:
            first = unit * ITEM_CHUNK + 1
            return int((b.fetchone(self.items_exist, (first, first + ITEM_CHUNK - 1)) or (0,))[0]) == ITEM_CHUNK
        w, d = unit_district(unit)
        return int((b.fetchone(self.district_exists, (w, d)) or (0,))[0]) > 0

    def write(self, unit: int, pop: Population) -> int:
        """Write one unit in one transaction; 0 when it was written before."""
        if self.unit_written(unit):
            return 0
        b = self.b
        n = 0
        if unit < ITEM_UNITS:
            first = unit * ITEM_CHUNK + 1
            rows = pop.items(first, first + ITEM_CHUNK - 1)
            b.begin(True)
            n += self.insert("item", rows)
            b.commit()
            return n
        w, d = unit_district(unit)
        first = (d - 1) * STOCK_PER_DISTRICT_UNIT + 1
        stock = pop.stock(w, first, first + STOCK_PER_DISTRICT_UNIT - 1)
        cust, hist = pop.customers(w, d)
        orders, lines, new = pop.orders(w, d)
        b.begin(True)
        if d == 1:
            n += self.insert("warehouse", [pop.warehouse(w)])
        n += self.insert("stock", stock)
        n += self.insert("customer", cust)
        n += self.insert("history", hist)
        n += self.insert("orders", orders)
        n += self.insert("order_line", lines)
        n += self.insert("new_order", new)
        n += self.insert("district", [pop.district(w, d)])  # last: its presence marks the unit written
        b.commit()
        return n


def unit_district(unit: int) -> tuple[int, int]:
    """(warehouse, district) of a district unit (units 0..9 are ITEM chunks)."""
    k = unit - ITEM_UNITS
    return k // DISTRICTS + 1, k % DISTRICTS + 1


class LoadClient(Client):
    """One client thread's load units [start, start + count): one event per unit (rolled back
    and rerun on retryable and connection errors), resumable from the first
    unit not written; rows counted in ``rows_loaded``, skipped units in ``units_skipped``."""

    def __init__(self, w: TpccWorkload, ctx: ThreadContext, start: int, count: int) -> None:
        self.m = ctx.m
        self.end = start + count
        saved = ctx.saved.get("load_next")
        self.next = start if saved is None else saved
        self.pop = Population(ctx.rng, w.c_last_load)
        self.loader = Loader(ctx.m.binding, w.batchsize)
        self.rows = [0, 0]  # rows written, units skipped
        self.ops = (Op("LOAD_ITEMS", EVENT, then=self._written), Op("LOAD_DISTRICT", EVENT, then=self._written))

    def _body(self, loader: Loader, unit: int) -> None:
        n = loader.write(unit, self.pop)
        if n:
            self.rows[0] += n
        else:
            self.rows[1] += 1

    def next_operation(self) -> Operation:
        unit = self.next
        if unit >= self.end:
            raise Exhausted
        return self.ops[unit >= ITEM_UNITS], self._body, (self.loader, unit)

    def _written(self, written: bool) -> None:
        if written or not self.m.should_stop():  # a unit stopped unwritten is redone on resume
            self.next += 1

    def state(self) -> dict:
        return {"load_next": self.next}

    def done(self) -> bool:
        return self.next >= self.end

    def close(self) -> None:
        self.m.rec.count("rows_loaded", self.rows[0])
        self.m.rec.count("units_skipped", self.rows[1])


