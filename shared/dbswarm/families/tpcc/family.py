"""TPC-C (standard specification 5.11) as a workload family: the nine tables and their
population (clause 4.3), the five transactions (clause 2.4 - 2.8) dealt from a card deck
(45/43/4/4/4, clause 5.2.4.2), keying and think times (off by default), the consistency
conditions (clause 3.3.2) and the white papers' figures: tpmC / tpmTotal from the clients,
NOPM from the database (HammerDB: the change of sum(d_next_o_id) over the window), the
clients' count of the same window, exact (the New-Orders committed around the ramp-up's end
placed by their o_id: ``BAND_S``), and TPM from the server's commit + rollback counters.

Warehouses are the unit of partitioning (go-tpc, CockroachDB's workload/tpcc):
- load: units of work are ITEM chunks (10 x 10,000 items, all for global client thread 0)
  and districts (one unit = one district of one warehouse: its DISTRICT row, 3,000
  customers and their history, 3,000 orders, their order lines, 900 new orders, and a tenth
  of the warehouse's STOCK; district 1 also writes the WAREHOUSE row), each in one
  transaction. A unit whose DISTRICT row (ITEM chunk's last item) exists was committed
  before: it is skipped, so a load that stopped half-way (a deadline, a killed shard) resumes
  without duplicates, and re-running a whole load changes nothing.
- run: virtual user g of G (global client thread index) has home warehouse g mod W + 1 and
  home district (g div W) mod 10 + 1; remote accesses (1% of order lines, 15% of payments)
  go to any other warehouse.

Transactions run through the binding's ``sql`` session inside ``Measured.event``, which times
them and rolls back and reruns deadlocks / serialization failures (counted in ``retries``).
The 1% New-Order rollback (an unused item number) is the transaction's own outcome, not an
error: its body rolls back itself and returns, so it is neither retried nor an error; it is
timed as a New-Order and counted in ``new_order_rollbacks`` (tpmC counts it, as go-tpc and
the specification's clause 5.4.2 do; the committed New-Orders are reported beside it).
"""
from __future__ import annotations

import hashlib
import math
import random
import string
import time
from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from dbswarm.bindings.protocols import SqlSession
from dbswarm.families import base as families
from dbswarm.families.base import (
    EVENT,
    Client,
    Exhausted,
    Family,
    Op,
    RunLimits,
    ThreadContext,
    WorkloadModel,
    sleep_unless_stopped,
    split,
    stepwise,
)
from dbswarm.families.generators import shared_pool
from dbswarm.families.tables import fmt, published_family_table
from dbswarm.families.tpcc import sql as S
from dbswarm.measure.recorder import Recorder

ITEMS = 100_000
DISTRICTS = 10
CUSTOMERS = 3_000          # per district
ORDERS = 3_000             # per district
FIRST_UNDELIVERED = 2_101  # orders 2101..3000 of each district are new orders (900)
ITEM_CHUNK = 10_000
ITEM_UNITS = ITEMS // ITEM_CHUNK
STOCK_PER_DISTRICT_UNIT = ITEMS // DISTRICTS

TRANSACTIONS = ("NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL")
READ_ONLY = ("ORDER_STATUS", "STOCK_LEVEL")  # the read-only transactions (the others write)
MIX = {"NEW_ORDER": 45, "PAYMENT": 43, "ORDER_STATUS": 4, "DELIVERY": 4, "STOCK_LEVEL": 4}
_LETTER = {"NEW_ORDER": "N", "PAYMENT": "P", "ORDER_STATUS": "O", "DELIVERY": "D", "STOCK_LEVEL": "S"}
_CARD_OF = {v: k for k, v in _LETTER.items()}
# clause 5.2.5.7: keying time (s) and mean think time (s) per transaction type
KEYING_S = {"NEW_ORDER": 18, "PAYMENT": 3, "ORDER_STATUS": 2, "DELIVERY": 2, "STOCK_LEVEL": 2}
THINK_MEAN_S = {"NEW_ORDER": 12, "PAYMENT": 12, "ORDER_STATUS": 10, "DELIVERY": 5, "STOCK_LEVEL": 5}
# clause 5.2.5.3: 90th percentile response time limits (s); Delivery's is the terminal's answer
P90_LIMIT_S = {"NEW_ORDER": 5, "PAYMENT": 5, "ORDER_STATUS": 5, "DELIVERY": 5, "STOCK_LEVEL": 20}
TPMC_PER_WAREHOUSE_MAX = 12.86  # clause 4.2: the most a warehouse can do with keying and think times

SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING")
C_LAST_LOAD = 157  # the load's C for C_LAST (clause 2.1.6): the run derives its own from it (C-delta rule)

# NOPM from the clients, exactly (issue 16). The database's window (HammerDB) runs from the
# start edge's snapshot of d_next_o_id per district to the end edge's; in a district the o_ids of
# committed New-Orders are contiguous (d_next_o_id is read and bumped under the row lock, and a
# rolled-back New-Order gives its o_id back), so that window is exactly "o_id >= the district's
# d_next_o_id at the start edge". A virtual user records each New-Order it commits within BAND_S
# seconds of its ramp-up's end as (warehouse, district, o_id), and only counts those before and
# after that band; the start edge, read by shard 0's call when the ramp-up ends, then places each
# recorded one on its side (Tpcc.phase_summary). That is exact when the edge was read inside every
# virtual user's band: BAND_S covers the shards' start skew (each shard ends its ramp-up at the
# start barrier + rampup; a late shard, the edge read's own delay or another machine's clock move
# them apart by milliseconds to seconds) with room to spare, and keeps the records to about 60 s
# of New-Orders (12 bytes each in a shard file). What it assumes: a COMMIT's answer reaches its
# client within the band's half (a New-Order counted after the band committed after the edge).
BAND_S = 30
BAND_RECORDS = "tpcc_new_order_band"          # Measurement.records: per virtual user and call, 4 values:
                                              # band start, band end (wall-clock ms), New-Orders before, after it
BAND_ORDERS = "tpcc_new_order_band_orders"    # per New-Order committed in the band, 3 values: warehouse, district, o_id
_BAND_NS = BAND_S * 1_000_000_000

_ALNUM = string.ascii_letters + string.digits
_DIGITS = string.digits
_POOL = 1 << 20  # the process's pools of characters (generators.shared_pool)


# presets: the keys they set unless the workload (or the matrix) gives them
PRESETS = {
    "quick": {"warehouses": 1, "threads": 4, "time": 20, "rampup": 5, "check": ["after_load", "after_run"]},
    "published": {"warehouses": 100, "threads": 64, "time": 3600, "rampup": 300, "check": ["after_load"]},
}


class TpccWorkload(WorkloadModel):
    """TPC-C: ``warehouses`` is the scale, ``threads`` the virtual users, ``time`` the
    measured seconds after ``rampup`` (HammerDB's names)."""
    family: Literal["tpcc"] = "tpcc"
    preset: Optional[Literal["quick", "published"]] = Field(
        None, description="a size to start from; the keys given beside it win. quick: 1 warehouse, 4 virtual users, "
        "20 s after a 5 s ramp-up, checks after the load and the run (a demo: about a minute with its load); "
        "published: the white papers' shape, 100 warehouses, 64 virtual users, 3,600 s after a 300 s ramp-up, "
        "check after the load (step threads in a matrix)")
    warehouses: int = Field(1, ge=1, le=100_000, description="the scale: 10 districts, 30,000 customers, "
                            "100,000 stock rows each (ITEM: 100,000 rows)")
    time: float = Field(60, gt=0, description="measured seconds of the run phase, after rampup")
    rampup: float = Field(0, ge=0, description="seconds before the measured window (kept out of the "
                          "percentiles and tpmC, as warmuptime; the run phase lasts rampup + time)")
    transactions: int = Field(0, ge=0, description="transactions over all virtual users (0: until time)")
    keying_and_thinking: bool = Field(False, description="the specification's keying and think times "
                                      "(clause 5.2.5.7); off by default, as HammerDB and go-tpc")
    c_last_load: int = Field(C_LAST_LOAD, ge=0, le=255, description="C for C_LAST used by the load (clause "
                             "2.1.6); the run's C satisfies the C-delta rule against it")
    batchsize: int = Field(1000, ge=1, le=100_000, description="rows per INSERT while loading")
    check: list[Literal["after_load", "after_run"]] = Field(
        default_factory=list, description="run the consistency conditions (clause 3.3.2, and the population: the "
        "warehouse, district, stock, customer and order rows present) on every warehouse after the load (stage "
        "after_load: all of them) and / or after the run (stage after_run: all but 3.3.2.11, which holds only "
        "before any run), the warehouses split into contiguous ranges, one per shard, checked in parallel, each a "
        "warehouse at a time over as many calls as it takes; in result.json's run checks and summary.md; a failed "
        "condition makes the campaign check_failed (dbswarm run exits 8)")

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, data):
        if isinstance(data, dict) and isinstance(data.get("preset"), str) and data["preset"].lower() in PRESETS:
            data = {**data, "preset": data["preset"].lower()}   # any case, as YCSB's presets
        if isinstance(data, dict) and data.get("preset") in PRESETS:
            warm = data.get("warmuptime")
            data = {**{k: v for k, v in PRESETS[data["preset"]].items()
                       if not (k == "rampup" and warm)}, **data}
        return data

    @model_validator(mode="after")
    def _rampup(self):
        if self.rampup and not self.warmuptime:
            self.warmuptime = self.rampup
        elif self.warmuptime and not self.rampup:
            self.rampup = self.warmuptime
        elif self.rampup != self.warmuptime:
            raise ValueError(f"rampup ({self.rampup:g}) and warmuptime ({self.warmuptime:g}) differ: give one")
        return self

    @property
    def name(self):
        return f"tpcc-{self.warehouses}w"


# ---- random values (clause 2.1.6, 4.3.2) -----------------------------------------------------

def nurand(rng: random.Random, a: int, x: int, y: int, c: int) -> int:
    """NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x."""
    return (((rng.randint(0, a) | rng.randint(x, y)) + c) % (y - x + 1)) + x


def c_delta_ok(c_load: int, c_run: int) -> bool:
    """Clause 2.1.6.1: |C_RUN - C_LOAD| for C_LAST in [65, 119], and neither 96 nor 112."""
    d = abs(c_run - c_load)
    return 65 <= d <= 119 and d not in (96, 112)


def run_constants(c_last_load: int, rng: random.Random) -> dict:
    """The run's C for C_LAST (satisfying the C-delta rule), C_ID and OL_I_ID."""
    while True:
        c_last = rng.randint(0, 255)
        if c_delta_ok(c_last_load, c_last):
            break
    return {"c_last": c_last, "c_id": rng.randint(0, 1023), "ol_i_id": rng.randint(0, 8191)}


def last_name(n: int) -> str:
    """C_LAST of number n in 0..999: three syllables (clause 4.3.2.3)."""
    return SYLLABLES[n // 100] + SYLLABLES[(n // 10) % 10] + SYLLABLES[n % 10]


class Strings:
    """Random a-strings and n-strings (clause 4.3.2.2), cut from a pool of random characters."""
    __slots__ = ("rng", "alnum", "digits")

    def __init__(self, rng: random.Random):
        self.rng = rng
        self.alnum = shared_pool(_ALNUM, _POOL)  # the process's: no draw from the thread's stream
        self.digits = shared_pool(_DIGITS, _POOL)

    def a(self, lo: int, hi: int) -> str:
        n = self.rng.randint(lo, hi) if lo != hi else lo
        o = int(self.rng.random() * (_POOL - n))
        return self.alnum[o:o + n]

    def n(self, length: int) -> str:
        o = int(self.rng.random() * (_POOL - length))
        return self.digits[o:o + length]

    def data(self, lo: int, hi: int) -> str:
        """i_data / s_data: 10% hold "ORIGINAL" at a random position."""
        s = self.a(lo, hi)
        if self.rng.random() < 0.1:
            p = self.rng.randint(0, len(s) - 8)
            s = s[:p] + "ORIGINAL" + s[p + 8:]
        return s

    def zip(self) -> str:
        return self.n(4) + "11111"

    def state(self) -> str:
        return "".join(self.rng.choices(string.ascii_uppercase, k=2))


def _money(v: float) -> str:
    return f"{v:.2f}"


def _rate(v: float) -> str:
    return f"{v:.4f}"


# ---- the population (clause 4.3.3.1) ----------------------------------------------------------

class Population:
    """Rows of the load's units; ``now`` is the load's timestamp for every date column."""

    def __init__(self, rng: random.Random, c_last_load: int):
        self.rng, self.s, self.c = rng, Strings(rng), c_last_load
        self.now = time.strftime("%Y-%m-%d %H:%M:%S")

    def items(self, first: int, last: int) -> list[tuple]:
        r, s = self.rng, self.s
        return [(i, r.randint(1, 10_000), s.a(14, 24), _money(r.randint(100, 10_000) / 100), s.data(26, 50))
                for i in range(first, last + 1)]

    def warehouse(self, w: int) -> tuple:
        s = self.s
        return (w, s.a(6, 10), s.a(10, 20), s.a(10, 20), s.a(10, 20), s.state(), s.zip(),
                _rate(self.rng.randint(0, 2000) / 10_000), "300000.00")

    def district(self, w: int, d: int) -> tuple:
        s = self.s
        return (d, w, s.a(6, 10), s.a(10, 20), s.a(10, 20), s.a(10, 20), s.state(), s.zip(),
                _rate(self.rng.randint(0, 2000) / 10_000), "30000.00", ORDERS + 1)

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
                         s.zip(), s.n(16), now, credit, "50000.00", _rate(r.randint(0, 5000) / 10_000), "-10.00",
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
                              "0.00" if delivered else _money(r.randint(1, 999_999) / 100), s.a(24, 24)))
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


class _LoadClient(Client):
    """One client thread's load units [start, start + count): one event per unit (rolled back
    and rerun on retryable and connection errors), resumable from the first
    unit not written; rows counted in ``rows_loaded``, skipped units in ``units_skipped``."""

    def __init__(self, w, ctx: ThreadContext, start: int, count: int):
        self.m = ctx.m
        self.end = start + count
        saved = ctx.saved.get("load_next")
        self.next = start if saved is None else saved
        self.pop = Population(ctx.rng, w.c_last_load)
        self.loader = Loader(ctx.m.binding, w.batchsize)
        self.rows = [0, 0]  # rows written, units skipped
        self.ops = (Op("LOAD_ITEMS", EVENT, then=self._written), Op("LOAD_DISTRICT", EVENT, then=self._written))

    def _body(self, loader, unit):
        n = loader.write(unit, self.pop)
        if n:
            self.rows[0] += n
        else:
            self.rows[1] += 1

    def next_operation(self):
        unit = self.next
        if unit >= self.end:
            raise Exhausted
        return self.ops[unit >= ITEM_UNITS], self._body, (self.loader, unit)

    def _written(self, written: bool) -> None:
        if written or not self.m.should_stop():  # a unit stopped unwritten is redone on resume
            self.next += 1

    def state(self):
        return {"load_next": self.next}

    def done(self):
        return self.next >= self.end

    def close(self):
        self.m.rec.count("rows_loaded", self.rows[0])
        self.m.rec.count("units_skipped", self.rows[1])


# ---- the transactions (clause 2.4 - 2.8) ---------------------------------------------------------

class Deck:
    """Clause 5.2.4.2's card deck: 100 cards (45 New-Order, 43 Payment, 4 of each other type),
    shuffled, dealt one per transaction, reshuffled when empty: the mix is exact over every 100."""
    CARDS = tuple(t for t, n in MIX.items() for _ in range(n))

    def __init__(self, rng: random.Random, saved: Optional[dict] = None):
        self.rng = rng
        self.cards = list(self.CARDS)
        self.i = len(self.cards)
        if saved:  # a continued thread deals on from where its last segment stopped
            self.cards = [_CARD_OF[c] for c in saved["cards"]]
            self.i = saved["i"]

    def state(self) -> dict:
        """The deck as dealt so far (a checkpoint's): its order, one letter a card, and the next."""
        return {"cards": "".join(_LETTER[c] for c in self.cards), "i": self.i}

    def next(self) -> str:
        if self.i >= len(self.cards):
            self.rng.shuffle(self.cards)
            self.i = 0
        card = self.cards[self.i]
        self.i += 1
        return card


class Session:
    """The transactions' statements on one SQL session, each prepared at its first use; New-Order's
    batched statements per line count (and district), built at their first use. Each statement's
    call on this connection (``fetch``: its rows; ``run``: its affected rows; ``tx``: BEGIN and
    COMMIT; ``rollback``) is the binding's, taken at its first use and again after a reconnect
    (``reset``), split into send / finish where the session multiplexes (engine.mux)."""

    def __init__(self, binding: SqlSession):
        self.b = binding
        self.dialect = d = binding.dialect
        self.sql = {k: binding.prepare(S.text(v, d)) for k, v in S.STATEMENTS.items()}
        self._batched: dict[tuple, str] = {}
        self._calls: dict[tuple, Any] = {}  # (the binding's maker, its arguments) -> the call

    def reset(self) -> None:
        """The calls taken again at their next use: they belong to the connection replaced."""
        self._calls.clear()

    def _take(self, maker: str, *args):
        key = (maker, *args)
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = getattr(self.b, maker)(*args)
        return call

    def fetch(self, sql: str):
        return self._take("row_fetcher", sql)

    def run(self, sql: str):
        return self._take("statement_runner", sql)

    def tx(self, writes: bool) -> tuple:
        return self._take("transaction_calls", writes)

    def rollback(self):
        return self._take("rollback_call")

    def batched(self, kind: str, n: int, district: int = 0) -> str:
        key = (kind, n, district)
        sql = self._batched.get(key)
        if sql is None:
            if kind == "items":
                text = S.new_order_items(n)
            elif kind == "stock":
                text = S.new_order_stock(n, district, self.dialect)
            elif kind == "stock_update":
                text = S.new_order_stock_update(n, self.dialect)
            elif kind == "lines":
                text = S.new_order_lines(n)
            else:
                text = S.delivery(kind, n)
            sql = self._batched[key] = self.b.prepare(text)
        return sql


class TpccClient:
    """One virtual user: its home warehouse and district, its deck, the inputs of each
    transaction (drawn before the transaction is timed) and the transactions' bodies."""

    def __init__(self, w, rng: random.Random, thread: int, c_run: dict, deck: Optional[dict] = None):
        self.w, self.rng = w, rng
        self.W = w.warehouses
        self.home_w = thread % self.W + 1
        self.home_d = (thread // self.W) % DISTRICTS + 1
        self.c = c_run
        self.deck = Deck(rng, deck)
        self.s = Strings(rng)
        self.counters = {"new_order_rollbacks": 0, "new_order_rollbacks_warmup": 0, "payment_remote": 0,
                         "payment_by_name": 0, "order_status_by_name": 0, "new_order_remote_lines": 0,
                         "delivery_skipped_districts": 0}
        self.rec: Optional[Recorder] = None  # the thread's recorder (set by _RunClient; None: nothing recorded)
        self._band = None  # the band around the ramp-up's end, set at the first committed New-Order
        # the transactions: called by a thread, driven step by step by the multiplexer (.steps)
        self.new_order, self.payment = stepwise(self._new_order), stepwise(self._payment)
        self.order_status, self.delivery = stepwise(self._order_status), stepwise(self._delivery)
        self.stock_level = stepwise(self._stock_level)

    def other_warehouse(self) -> int:
        w = self.rng.randint(1, self.W - 1)
        return w + 1 if w >= self.home_w else w

    def customer(self) -> tuple[Optional[int], Optional[str]]:
        """60% by last name (NURand(255, 0, 999)), 40% by number (NURand(1023, 1, 3000))."""
        r = self.rng
        if r.randint(1, 100) <= 60:
            return None, last_name(nurand(r, 255, 0, 999, self.c["c_last"]))
        return nurand(r, 1023, 1, CUSTOMERS, self.c["c_id"]), None

    # -- inputs (clause 2.x.1) -------------------------------------------------------------
    def new_order_input(self):
        r = self.rng
        d = r.randint(1, DISTRICTS)
        c = nurand(r, 1023, 1, CUSTOMERS, self.c["c_id"])
        n = r.randint(5, 15)
        rbk = r.randint(1, 100) == 1
        lines = []
        for i in range(n):
            item = ITEMS + 1 if rbk and i == n - 1 else nurand(r, 8191, 1, ITEMS, self.c["ol_i_id"])
            supply = self.home_w
            if self.W > 1 and r.randint(1, 100) == 1:
                supply = self.other_warehouse()
            lines.append((item, supply, r.randint(1, 10)))
        return d, c, lines, rbk

    def payment_input(self):
        r = self.rng
        d = r.randint(1, DISTRICTS)
        if self.W > 1 and r.randint(1, 100) > 85:
            cw, cd = self.other_warehouse(), r.randint(1, DISTRICTS)
        else:
            cw, cd = self.home_w, d
        c_id, c_last = self.customer()
        return d, cw, cd, c_id, c_last, r.randint(100, 500_000) / 100

    def order_status_input(self):
        return (self.rng.randint(1, DISTRICTS), *self.customer())

    def delivery_input(self):
        return self.rng.randint(1, 10)

    def stock_level_input(self):
        return self.rng.randint(10, 20)

    # -- bodies: (session, inputs); run again after a rollback on a retryable error -----------
    # Each transaction is described once, as steps (families.base.stepwise): it yields every
    # statement as (the session's call, (params,)) and is sent the call's answer (rows for a
    # ``fetch``, the affected rows for a ``run``); a thread makes the calls one after another,
    # the shard's multiplexer sends each when the last one's answer is in (engine.mux).
    def _by_name(self, st, w, d, c_last):
        ids = yield st.fetch(st.sql["c_by_name"]), ((w, d, c_last),)
        return ids[(len(ids) - 1) // 2][0]  # the row at position ceil(n / 2) (clause 2.5.2.2)

    def _new_order(self, st, inp):
        """Clause 2.4.2, batched as go-tpc does: the items in one SELECT, the stock rows in one
        locking SELECT, their updates in one UPDATE, the order lines in one INSERT (11 statements
        with BEGIN and COMMIT, whatever the line count). An item number that appears on several
        lines of the same supply warehouse updates its stock row once with what the lines one
        after the other would have done (the quantity rule applied line by line)."""
        d, c, lines, rbk = inp
        q, w, fetch, run = st.sql, self.home_w, st.fetch, st.run
        begin, commit = st.tx(True)
        yield begin, ()
        c_discount, _, _, w_tax = (yield fetch(q["no_cw"]), ((w, d, c),))[0]
        d_tax, o_id = (yield fetch(q["no_d"]), ((w, d),))[0]
        yield run(q["no_d_upd"]), ((o_id + 1, w, d),)
        all_local = int(all(sw == w for _, sw, _ in lines))
        yield run(q["no_o_ins"]), ((o_id, d, w, c, len(lines), all_local),)
        yield run(q["no_no_ins"]), ((o_id, d, w),)
        items = sorted({item for item, _, _ in lines})
        prices = {row[0]: row[1] for row in (yield fetch(st.batched("items", len(items))), (items,))}
        if len(prices) < len(items):  # the unused item of the 1% rollback (clause 2.4.2.3)
            yield st.rollback(), ()
            # the recorder's warm-up end, read now: it is set when the threads are released, after
            # the clients were built
            key = ("new_order_rollbacks_warmup" if self.rec is not None and time.perf_counter_ns()
                   < self.rec.warm_until_ns else "new_order_rollbacks")
            self.counters[key] += 1
            return
        pairs = sorted({(supply, item) for item, supply, _ in lines})  # one global lock order
        args = [v for pair in pairs for v in pair]
        stock = {(r[0], r[1]): [r[2], r[4], 0, 0, 0] for r in (yield fetch(st.batched("stock", len(pairs), d)), (args,))}
        ol_args = []
        total = 0.0
        for number, (item, supply, qty) in enumerate(lines, 1):
            s_row = stock[supply, item]  # [quantity, dist, ytd added, orders added, remote added]
            s_qty = s_row[0] - qty
            s_row[0] = s_qty if s_qty >= 10 else s_qty + 91
            s_row[2] += qty
            s_row[3] += 1
            s_row[4] += supply != w
            amount = qty * float(prices[item])
            total += amount
            ol_args += (o_id, d, w, number, item, supply, qty, _money(amount), s_row[1])
        upd = []
        for (supply, item), (s_qty, _, ytd, n, remote) in stock.items():
            upd += (supply, item, s_qty, ytd, n, remote)
        yield run(st.batched("stock_update", len(stock))), (S.stock_update_args(upd, st.dialect),)
        yield run(st.batched("lines", len(lines))), (ol_args,)
        yield commit, ()
        if self.rec is not None:
            self._committed(d, o_id)
        self.counters["new_order_remote_lines"] += sum(sw != w for _, sw, _ in lines)
        _ = total * (1 - float(c_discount)) * (1 + float(w_tax) + float(d_tax))  # the terminal's total

    def _committed(self, d: int, o_id: int):
        """A New-Order committed (its COMMIT returned: never a rollback or a failed attempt, so a
        retried one once): recorded as (warehouse, district, o_id) when it committed inside the
        band around the ramp-up's end (``BAND_S``), else counted before or after the band."""
        band = self._band
        if band is None:
            band = self._band = self._open_band()
        if band:
            lo, hi, orders, rows, i = band
            t = time.perf_counter_ns()
            if t < lo:
                rows[i + 2] += 1
            elif t > hi:
                rows[i + 3] += 1
            else:
                orders.extend((self.home_w, d, o_id))

    def _open_band(self):
        """(start, end (perf_counter_ns), the orders' list, the bands' list, this band's index in
        it): the band appended to BAND_RECORDS with its wall-clock limits (start rounded up, end
        down, to the ms) and no New-Orders yet; False when the phase has no ramp-up."""
        rec = self.rec
        end = rec.warm_end_ns
        if not end:
            return False
        lo, hi = end - _BAND_NS, end + _BAND_NS
        rows = rec.record_list(BAND_RECORDS)
        i = len(rows)
        rows.extend((math.ceil(rec.wall_time(lo) * 1000), math.floor(rec.wall_time(hi) * 1000), 0, 0))
        return lo, hi, rec.record_list(BAND_ORDERS), rows, i

    def _payment(self, st, inp):
        d, cw, cd, c_id, c_last, amount = inp
        q, w, fetch, run = st.sql, self.home_w, st.fetch, st.run
        amt = _money(amount)
        begin, commit = st.tx(True)
        yield begin, ()
        yield run(q["p_w_upd"]), ((amt, w),)
        w_name = (yield fetch(q["p_w"]), ((w,),))[0][0]
        yield run(q["p_d_upd"]), ((amt, w, d),)
        d_name = (yield fetch(q["p_d"]), ((w, d),))[0][0]
        if c_id is None:
            c_id = yield from self._by_name(st, cw, cd, c_last)
        row = (yield fetch(q["p_c"]), ((cw, cd, c_id),))[0]
        if row[9] == "BC":
            data = (yield fetch(q["p_c_data"]), ((cw, cd, c_id),))[0][0]
            data = f"{c_id} {cd} {cw} {d} {w} {amt} | {data}"[:500]
            yield run(q["p_c_upd_bc"]), ((amt, amt, data, cw, cd, c_id),)
        else:
            yield run(q["p_c_upd"]), ((amt, amt, cw, cd, c_id),)
        yield run(q["p_h_ins"]), ((c_id, cd, cw, d, w, amt, f"{w_name}    {d_name}"[:24]),)
        yield commit, ()
        if cw != w:
            self.counters["payment_remote"] += 1
        if c_last is not None:
            self.counters["payment_by_name"] += 1

    def _order_status(self, st, inp):
        d, c_id, c_last = inp
        q, w, fetch = st.sql, self.home_w, st.fetch
        begin, commit = st.tx(False)
        yield begin, ()
        if c_id is None:
            c_id = yield from self._by_name(st, w, d, c_last)
        yield fetch(q["os_c"]), ((w, d, c_id),)
        o = yield fetch(q["os_o"]), ((w, d, c_id),)
        if o:
            yield fetch(q["os_ol"]), ((w, d, o[0][0]),)
        yield commit, ()
        if c_last is not None:
            self.counters["order_status_by_name"] += 1

    def _delivery(self, st, carrier):
        """Clause 2.7.4, batched as go-tpc: each district's oldest new order found (and locked)
        one district at a time, then all of them delivered by one statement per table, the
        customers updated one per district (17 to 27 statements instead of 72)."""
        q, w, fetch, run = st.sql, self.home_w, st.fetch, st.run
        begin, commit = st.tx(True)
        yield begin, ()
        found = []  # (district, order)
        oldest = fetch(q["dl_no"])
        for d in range(1, DISTRICTS + 1):
            rows = yield oldest, ((w, d),)
            if rows:
                found.append((d, rows[0][0]))
        self.counters["delivery_skipped_districts"] += DISTRICTS - len(found)
        if not found:
            yield commit, ()
            return
        n = len(found)
        keys = [v for d, o in found for v in (w, d, o)]
        yield run(st.batched("delete", n)), (keys,)
        customers = dict((yield fetch(st.batched("orders", n)), (keys,)))
        yield run(st.batched("orders_upd", n)), ([carrier, *keys],)
        yield run(st.batched("lines_upd", n)), (keys,)
        totals = dict((yield fetch(st.batched("lines_sum", n)), (keys,)))
        update_customer = run(q["dl_c_upd"])
        for d, _ in found:
            yield update_customer, ((_money(float(totals.get(d) or 0)), w, d, customers[d]),)
        yield commit, ()

    def _stock_level(self, st, threshold):
        q, w, d, fetch = st.sql, self.home_w, self.home_d, st.fetch
        begin, commit = st.tx(False)
        yield begin, ()
        next_o = (yield fetch(q["sl_d"]), ((w, d),))[0][0]
        yield fetch(q["sl_count"]), ((w, d, next_o, next_o - 20, w, threshold),)
        yield commit, ()


class _RunClient(Client):
    """One virtual user's loop: a card from the deck, the keying time, the transaction (an event,
    run by the engine's operation loop), the think time (slept before the next card)."""

    def __init__(self, w, ctx: ThreadContext):
        self.m = ctx.m
        self.w = w
        self.c = TpccClient(w, ctx.rng, ctx.thread, run_constants(w.c_last_load, _run_rng(w)), ctx.saved.get("deck"))
        self.c.rec = ctx.m.rec  # its warm-up instants are set when the threads are released
        self.st = Session(ctx.m.binding)
        ctx.m.on_reconnect.append(self.st.reset)
        c = self.c
        self.kinds = {"NEW_ORDER": (c.new_order_input, c.new_order), "PAYMENT": (c.payment_input, c.payment),
                      "ORDER_STATUS": (c.order_status_input, c.order_status),
                      "DELIVERY": (c.delivery_input, c.delivery), "STOCK_LEVEL": (c.stock_level_input, c.stock_level)}
        self.pause = w.keying_and_thinking
        self.think: Optional[str] = None  # the transaction whose think time is still due
        self.ops = {kind: Op(kind, EVENT) for kind in self.kinds}
        # the transactions are steps of the session's calls (stepwise): the shard's multiplexer may
        # drive them (engine.mux), unless keying and think times pace this user (slept in
        # next_operation, which the multiplexer's thread calls for every connection)
        self.multiplexable = not self.pause

    def _sleep(self, seconds: float):
        sleep_unless_stopped(seconds, self.m.should_stop)

    def next_operation(self):
        if self.pause and self.think is not None:  # the last transaction's think time
            mean = THINK_MEAN_S[self.think]
            self._sleep(min(-math.log(1.0 - self.c.rng.random()) * mean, 10 * mean))
        kind = self.c.deck.next()
        make, body = self.kinds[kind]
        if self.pause:
            self._sleep(KEYING_S[kind])
            self.think = kind
        return self.ops[kind], body, (self.st, make())

    def state(self):
        return {"deck": self.c.deck.state()}  # resumed, the mix goes on as if uninterrupted

    def close(self):
        for k, v in self.c.counters.items():
            self.m.rec.count(k, v)


def _run_rng(w) -> random.Random:
    """The run's C constants are the same for every virtual user of the run: drawn from the
    workload's own description (a different load constant, a different run constant)."""
    digest = hashlib.sha256(w.model_dump_json().encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


# ---- consistency conditions (clause 3.3.2) ----------------------------------------------------

def refresh_statistics(binding) -> None:
    """The planner's statistics of the TPC-C tables brought up to date (``tpcc_sql.ANALYZE``:
    why), where the dialect needs it."""
    sql = S.ANALYZE.get(binding.dialect)
    if sql:
        binding.execute(sql)


def check_warehouse(binding, warehouse: int, after_load: bool = False) -> list[dict]:
    """The consistency conditions of one warehouse on an SQL session: the failures, each naming
    the condition, the warehouse and (where it applies) the district."""
    failures = []
    for cond, (title, sql, nparams) in S.CONDITIONS.items():
        if cond in S.AFTER_LOAD_ONLY and not after_load:
            continue
        for district, found in binding.fetchall(binding.prepare(sql), (warehouse,) * nparams):
            failures.append({"condition": cond, "title": title, "warehouse": warehouse,
                             "district": int(district) if district is not None else None,
                             "found": float(found) if found is not None else None})
    return failures


def check(binding, warehouses, after_load: bool = False) -> dict:
    """Every condition on every warehouse given; {"passed", "conditions", "warehouses", "failures"}."""
    t0 = time.time()
    failures = []
    warehouses = list(warehouses)
    for wh in warehouses:
        failures += check_warehouse(binding, wh, after_load)
    return check_result(failures, len(warehouses), after_load, time.time() - t0)


def check_result(failures: list[dict], warehouses: int, after_load: bool, seconds: float) -> dict:
    """A check's outcome from its failures (in warehouse order): what the campaign's stages,
    ``check`` and the command report."""
    conds = [c for c in S.CONDITIONS if after_load or c not in S.AFTER_LOAD_ONLY]
    return {"passed": not failures, "conditions": conds, "warehouses": warehouses,
            "failures": failures[:100], "failures_total": len(failures), "seconds": round(seconds, 3)}


# ---- the family -------------------------------------------------------------------------------

class Tpcc(Family[TpccWorkload]):
    name = "tpcc"
    model = TpccWorkload
    requires = "sql"
    label_key = "warehouses"
    dialects = tuple(S.TYPES)  # the dialects sql.py has rows for (a test checks every table has them)

    def read_operations(self, w):
        return READ_ONLY  # Order-Status and Stock-Level only read (clauses 2.6, 2.8)

    def write_operations(self, w):
        return tuple(t for t in TRANSACTIONS if t not in READ_ONLY) + ("LOAD_ITEMS", "LOAD_DISTRICT")

    def presets_text(self):
        return ["tpcc (workload.family: tpcc): warehouses, threads (virtual users), time, rampup;",
                "  preset: quick      " + ", ".join(f"{k}: {v}" for k, v in PRESETS["quick"].items()),
                "  preset: published  " + ", ".join(f"{k}: {v}" for k, v in PRESETS["published"].items())
                + " (the white papers: 100-1000 warehouses, threads stepped 8..256 until tpmC peaks)",
                "  mix 45/43/4/4/4 (New-Order, Payment, Order-Status, Delivery, Stock-Level) from a card deck; "
                "keying_and_thinking: false"]

    def limits(self, w):
        return RunLimits(count=w.transactions, time=w.rampup + w.time)

    def load_range(self, w):
        return 0, ITEM_UNITS + DISTRICTS * w.warehouses

    def split_load(self, w, threads):
        """ITEM (units 0..9) to global thread 0, then the districts in contiguous ranges of whole
        warehouses (of districts when there are more threads than warehouses)."""
        W = w.warehouses
        if threads <= W:
            shares = [n * DISTRICTS for n in split(W, threads)]
        else:
            shares = split(DISTRICTS * W, threads)
        out, start = [], ITEM_UNITS
        for i, n in enumerate(shares):
            if i == 0:
                out.append([0, ITEM_UNITS + n])
            else:
                out.append([start, n])
            start += n
        return out

    def tables(self, w):
        return list(S.TABLES)

    def prepare(self, binding: SqlSession, w, stage):
        d = binding.dialect
        if stage == "before_load":
            for t in S.TABLES:
                binding.execute(S.DROP.format(t=t))
                binding.execute(S.text(S.CREATE[t], d, options=binding.table_options))
        elif stage == "after_load":
            for name, (table, cols) in S.INDEXES.items():
                exists = S.INDEX_EXISTS.get(d)
                if exists and (binding.fetchone(binding.prepare(exists), (table, name)) or (0,))[0]:
                    continue
                binding.execute(S.CREATE_INDEX[d].format(name=name, table=table, cols=cols))
            refresh_statistics(binding)  # the check after the load plans its joins on them
        elif stage == "cleanup":
            for t in S.TABLES:
                binding.execute(S.DROP.format(t=t))
        return None

    def has_stage(self, w, stage):
        return stage != "after_run"  # the check after the run is dbswarm.engine.checks', by warehouse

    # the consistency check, a warehouse at a time (dbswarm.engine.checks splits the warehouses into
    # ranges over the run's shards, checked in parallel, each over as many calls as it takes)
    check_unit_name = "warehouses"

    def check_units(self, w, stage):
        return w.warehouses if stage in w.check else 0

    def check_unit(self, binding: SqlSession, w, stage, unit):
        return check_warehouse(binding, unit + 1, after_load=stage == "after_load")

    def check_summary(self, w, stage, failures, seconds):
        return check_result(failures, w.warehouses, stage == "after_load", seconds)

    def window_after_warmup(self, w):
        return w.rampup > 0

    def check(self, binding, w, after_load: bool = False) -> dict:
        """The consistency conditions on every warehouse of the workload."""
        return check(binding, range(1, w.warehouses + 1), after_load)

    def run_client(self, w, ctx):
        return _RunClient(w, ctx)

    def load_client(self, w, ctx, start, count):
        return _LoadClient(w, ctx, start, count)

    def window_snapshot(self, binding: SqlSession, w, phase):
        """The run's window edge: every district's d_next_o_id in one statement (one snapshot,
        autocommit: taken when the statement starts), as ``new_orders`` (their sum: HammerDB's
        NOPM is its change), ``district_next_o_id`` ({warehouse: [district 1's, ..., 10's]}:
        where the window starts in each district, for the clients' exact count) and ``read_at``
        ([wall-clock seconds before the statement, after it]: the snapshot lies between)."""
        if phase != "run":
            return None
        t0 = time.time()
        rows = binding.fetchall(S.DISTRICT_NEXT_O_IDS)
        t1 = time.time()
        per_w: dict[str, list] = {}
        total = 0
        for w_id, d_id, n in rows:
            n, d_id = int(n), int(d_id)
            total += n
            row = per_w.setdefault(str(int(w_id)), [])
            if len(row) < d_id:
                row.extend([None] * (d_id - len(row)))
            row[d_id - 1] = n
        return {"new_orders": total, "district_next_o_id": dict(sorted(per_w.items(), key=lambda kv: int(kv[0]))),
                "read_at": [round(t0, 6), round(t1, 6)]}

    @staticmethod
    def _all_counts(measurement) -> dict[str, int]:
        """Transactions per type over the whole phase, warm-up included."""
        out = {t: 0 for t in TRANSACTIONS}
        for ops in (measurement.operations, measurement.warmup or {}):
            for t, s in ops.items():
                if t in out:
                    out[t] += s.count
        return out

    def client_statements(self, w, phase, measurement):
        if phase != "run":
            return None
        # every event ended in one COMMIT or ROLLBACK (the 1% New-Orders), and every retried
        # attempt in one more ROLLBACK; with a ramp-up the window starts when it ends (the
        # transactions of the ramp-up are out; its few retries are not told apart and stay in)
        if self.window_after_warmup(w):
            n = sum(s.count for t, s in measurement.operations.items() if t in MIX)
        else:
            n = sum(self._all_counts(measurement).values())
        return {"transactions": n + measurement.counters.get("retries", 0)}

    def window_client_statements(self, w, phase, measurement, window):
        """The clients' transactions over the window as read: from the ramp-up's end where the
        start edge was read then, else (read before the shards) over the whole phase."""
        if phase != "run" or not self.window_after_warmup(w) or (window or {}).get("after_warmup_s"):
            return self.client_statements(w, phase, measurement)
        return {"transactions": sum(self._all_counts(measurement).values()) + measurement.counters.get("retries", 0)}

    def committed_new_orders(self, measurement) -> int:
        """New-Orders committed over the whole phase (warm-up included): what the change of
        sum(d_next_o_id) over the same window counts."""
        c = measurement.counters
        return (self._all_counts(measurement)["NEW_ORDER"] - c.get("new_order_rollbacks", 0)
                - c.get("new_order_rollbacks_warmup", 0))

    def clients_in_window(self, measurement, start: Optional[dict]) -> tuple[Optional[int], str]:
        """(New-Orders the clients committed in the database's window, how) when the window's
        start edge was read as the ramp-up ended (``start``: that edge's ``window_snapshot``):
        the New-Orders committed over the whole phase less those before the window, which are
        the ones committed before their virtual user's band (``BAND_S``) and the ones recorded
        in it whose o_id is below their district's d_next_o_id at the edge. Exact when the
        edge's snapshot lies inside every band that counted a New-Order outside it (a band that
        counted one before it started before the snapshot's read; one that counted one after it
        ended after it): the snapshot then holds every New-Order committed before a band and
        none committed after one. (None, why not) when it is not exact: no per-district
        snapshot, clients that kept no band (older shard files), an edge read outside a band."""
        nxt = (start or {}).get("district_next_o_id")
        at = (start or {}).get("read_at")
        if not nxt or not at:
            return None, "the start edge holds no per-district d_next_o_id"
        records = measurement.records
        bands, orders = records.get(BAND_RECORDS, []), records.get(BAND_ORDERS, [])
        whole = self.committed_new_orders(measurement)
        before_band, after_band, recorded = sum(bands[2::4]), sum(bands[3::4]), len(orders) // 3
        if before_band + recorded + after_band != whole:
            return None, (f"the clients' band records account for {before_band + recorded + after_band:,} of the "
                          f"{whole:,} New-Orders committed")
        lo_ms, hi_ms = at[0] * 1000, at[1] * 1000
        outside = sum(1 for i in range(0, len(bands), 4)
                      if (bands[i + 2] and bands[i] > lo_ms) or (bands[i + 3] and bands[i + 1] < hi_ms))
        if outside:
            return None, (f"the start edge was read outside the band (±{BAND_S} s around the ramp-up's end) of "
                          f"{outside} of {len(bands) // 4} virtual users' calls")
        in_band_before = 0
        for j in range(0, len(orders), 3):
            w, d, o_id = orders[j], orders[j + 1], orders[j + 2]
            starts = nxt.get(str(w)) or ()
            if d > len(starts) or starts[d - 1] is None:
                return None, f"district {d} of warehouse {w} is not in the start edge's snapshot"
            if o_id < starts[d - 1]:
                in_band_before += 1
        return whole - before_band - in_band_before, (
            f"New-Orders committed over the whole phase ({whole:,}) less those before the window: "
            f"{before_band:,} committed before their virtual user's band (±{BAND_S} s around its ramp-up's end) "
            f"and {in_band_before:,} of the {recorded:,} committed in it whose o_id is below their district's "
            "d_next_o_id at the start edge (exact: the edge was read inside every band)")

    def phase_summary(self, w, phase, measurement, duration, window=None):
        if phase == "load":
            c = measurement.counters
            return {"rows_loaded": c.get("rows_loaded", 0), "units_skipped": c.get("units_skipped", 0),
                    "warehouses": w.warehouses}
        if phase != "run":
            return None
        wm = w
        minutes = max(duration - wm.rampup, 1e-9) / 60
        ops, c = measurement.operations, measurement.counters
        counts = {t: (ops[t].count if t in ops else 0) for t in TRANSACTIONS}
        total = sum(counts.values())
        rbk = c.get("new_order_rollbacks", 0)
        out = {
            "warehouses": wm.warehouses, "virtual_users": wm.threads, "measured_seconds": round(minutes * 60, 3),
            "rampup_seconds": wm.rampup,
            "keying_and_thinking": wm.keying_and_thinking,
            "tpmC": round(counts["NEW_ORDER"] / minutes, 1),
            "tpmC_basis": "New-Orders per minute of the measured window counted by the clients, the 1% rolled back "
                          "by design included (as go-tpc; clause 5.4.2); committed ones in new_orders_committed",
            "tpmTotal": round(total / minutes, 1),
            "transactions": counts, "new_orders_committed": counts["NEW_ORDER"] - rbk,
            "new_order_rollbacks": rbk,
            "new_orders_committed_whole_phase": self.committed_new_orders(measurement),
            "errors": measurement.total_errors, "retries": c.get("retries", 0),
            "reconnects": c.get("reconnects", 0),
            "mix": {t: round(n / total, 4) for t, n in counts.items()} if total else {},
        }
        p90 = {}
        limits = {}
        for t in TRANSACTIONS:
            s = ops.get(t)
            if s and s.histogram.get_total_count():
                v = s.histogram.get_value_at_percentile(90) / 1000
                p90[t] = round(v, 3)
                limits[t] = "pass" if v <= P90_LIMIT_S[t] * 1000 else "fail"
        out["p90_ms"], out["p90_limit"] = p90, limits
        if wm.keying_and_thinking:
            out["efficiency_pct"] = round(100 * out["tpmC"] / (TPMC_PER_WAREHOUSE_MAX * wm.warehouses), 2)
        else:
            out["efficiency_pct"] = None
            out["efficiency_note"] = ("keying and think times off (the default, as HammerDB and go-tpc): "
                                      "efficiency against 12.86 tpmC per warehouse does not apply")
        # Rates over the measured part of the phase's span (the shards' first start to their last
        # end). The end edge is read after the last shard ended; the start edge when the ramp-up
        # ended (shard 0's call reads it then: ``window_after_warmup``), or, with no ramp-up or when
        # that read was missed, before the start barrier: nothing of the workload commits between
        # that edge and the span's start, so the counts are the span's; dividing by the window's
        # length instead would count the start barrier's lead time as idle minutes.
        fam = (window or {}).get("family") or {}
        after_rampup = bool((window or {}).get("after_warmup_s"))
        span_minutes = max(duration - (wm.rampup if after_rampup else 0), 1e-9) / 60
        out["window_starts"] = "after the ramp-up" if after_rampup else "before the shards started"
        # both figures share the window; where a ramp-up was to be left out and is not, both say why
        rampup_in = ""
        if wm.rampup and not after_rampup:
            why = (window or {}).get("after_warmup_missed") or "the start edge was not read when it ended"
            rampup_in = f" (its {wm.rampup:g} s ramp-up included because {why})"
            out["window_note"] = f"NOPM and TPM both count the ramp-up{rampup_in}"
        unread = (window or {}).get("unread") or {}
        if "new_orders" in fam:
            database = fam["new_orders"]
            out["NOPM"] = round(database / span_minutes, 1)
            out["new_orders_database"] = database
            out["NOPM_basis"] = ("change of sum(d_next_o_id) read from the database "
                                 + ("when the ramp-up ended" if after_rampup else "before the phase's shards started")
                                 + " and after they all ended (HammerDB), per minute of "
                                 + ("the measured window" if after_rampup else "the phase")
                                 + rampup_in
                                 + "; the clients' count of the same window in new_orders_clients "
                                   "(new_orders_clients_basis)")
            # the clients' New-Orders over the database's window, to compare with it
            exact = True
            if not after_rampup:
                clients = self.committed_new_orders(measurement)
                basis = ("New-Orders committed over the whole phase, ramp-up included (exact: the window is "
                         "the phase)")
            else:
                clients, basis = self.clients_in_window(measurement, (window or {}).get("family_start"))
                if clients is None:
                    exact = False
                    clients = out["new_orders_committed"]
                    basis = ("approximate: New-Orders committed after each virtual user's ramp-up ended by its "
                             "own clock (those in flight while the start edge was read fall on either side); "
                             "not placed by o_id because " + basis)
            out["new_orders_clients"] = clients
            out["new_orders_clients_basis"] = basis
            out["new_orders_agreement"] = ("approximate" if not exact else "exact" if clients == database
                                           else "differs")
            out["new_orders_difference"] = clients - database
        else:
            out["NOPM"] = None
            out["NOPM_basis"] = ("unavailable because the database's New-Orders were not read at "
                                 + (f"the {unread['family']}" if unread.get("family")
                                    else "both edges of the window (an edge's document is missing)"))
        server = (window or {}).get("server") or {}
        if "transactions" in server:
            # dbswarm's own reads inside the window, where each is a transaction in the server's
            # counters (PostgreSQL): the start edge's one and each shard call's settings read
            own = int((window or {}).get("own_transactions") or 0) + int(c.get(families.OWN_TRANSACTIONS, 0))
            out["TPM"] = round((server["transactions"] - own) / span_minutes, 1)
            out["TPM_dbswarm_own_transactions"] = own
            out["TPM_basis"] = ("the server's commit + rollback counters over the window (HammerDB), per minute of "
                                + ("the measured window" if after_rampup else "the phase")
                                + rampup_in
                                + (f", less dbswarm's own {own} (its reads of the window's start edge and of the "
                                   "server's settings)" if own else "")
                                + (f"; it counts the server's own maintenance too: {server['autovacuum_runs']} "
                                   "autovacuum / autoanalyze runs on this database's tables in the window"
                                   if server.get("autovacuum_runs") else "")
                                + "; server-wide counters (MariaDB) include every other client's")
        else:
            out["TPM"] = None
            out["TPM_basis"] = ("unavailable because the server's counters were not read at "
                                + (f"the {unread['server']}" if unread.get("server")
                                   else "both edges of the window (an edge's document is missing, or the server "
                                        "restarted inside it)"))
        return out

    CSV = ("warehouses", "virtual_users", "TPM", "NOPM", "tpmC", "tpmTotal", "efficiency_pct", "new_orders_committed",
           "new_order_rollbacks", "errors", "retries")

    def csv_fields(self):
        return ([f"tpcc_{k}" for k in self.CSV] + [f"tpcc_p90_ms_{t}" for t in TRANSACTIONS]
                + ["tpcc_p90_limits", "tpcc_check_after_load", "tpcc_check_after_run"])

    def csv_values(self, run, phase, result):
        """The TPC-C table's figures on the run phase's rows; the checks' outcome on every row."""
        out = {f"tpcc_check_{stage}": ("passed" if c.get("passed") else "failed")
               for stage, c in (run.get("checks") or {}).items()}
        s = result.get(self.name) if phase == "run" else None
        if s:
            out.update({f"tpcc_{k}": s.get(k) for k in self.CSV})
            out.update({f"tpcc_p90_ms_{t}": v for t, v in (s.get("p90_ms") or {}).items()})
            fails = [t for t, v in (s.get("p90_limit") or {}).items() if v == "fail"]
            out["tpcc_p90_limits"] = "fail: " + " ".join(fails) if fails else "pass"
        return out

    def report_tables(self, runs):
        if not runs:
            return ""
        lines = ["### TPC-C", "",
                 "| instance | warehouses | virtual users | TPM | NOPM | tpmC | tpmTotal | p90 ms NO / P / OS / D / SL "
                 "| p90 limits | New-Order rollbacks | errors / retries | efficiency % |",
                 "|---|---|---|---|---|---|---|---|---|---|---|---|"]
        notes = set()
        for r in runs:
            p = r["phases"].get("run", {})
            s = p.get("tpcc")
            w = r["workload"]
            if not s:
                lines.append(f"| {r['target']['label']} | {w['warehouses']} | {r['threads']} | | | missing | | | | | | |")
                continue
            p90 = " / ".join(fmt(s["p90_ms"].get(t), 1) if s["p90_ms"].get(t) is not None else "–"
                             for t in TRANSACTIONS)
            fails = [t for t, v in s["p90_limit"].items() if v == "fail"]
            lines.append(
                f"| {r['target']['label']} | {s['warehouses']} | {s['virtual_users']} | {fmt(s.get('TPM'))} "
                f"| {fmt(s.get('NOPM'))} | {fmt(s['tpmC'])} | {fmt(s['tpmTotal'])} | {p90} "
                f"| {'pass' if not fails else 'fail: ' + ', '.join(fails)} | {s['new_order_rollbacks']:,} "
                f"| {s['errors']:,} / {s['retries']:,} "
                f"| {'–' if s.get('efficiency_pct') is None else s['efficiency_pct']} |")
            if s.get("NOPM") is None:
                notes.add("NOPM: " + s["NOPM_basis"])
            if s.get("TPM") is None:
                notes.add("TPM: " + s["TPM_basis"])
            if not s["keying_and_thinking"]:
                notes.add("Keying and think times off (as HammerDB's and go-tpc's defaults): no efficiency figure.")
            else:
                notes.add("Efficiency: tpmC against the most a warehouse can do with keying and think times "
                          "(12.86 tpmC per warehouse, clause 4.2).")
        lines.append("")
        lines.append("tpmC counts New-Orders per measured minute (ramp-up excluded), the 1% rolled back by design "
                     "included; tpmTotal all five types. p90 limits: clause 5.2.5.3 (5 s, Stock-Level 20 s).")
        for n in sorted(notes):
            lines.append(f"{n}")
        published = published_family_table(
            "tpcc", runs, "TPC-C TPM / NOPM; the papers' HammerDB TPM counts every transaction type, about 54.5 x "
            "its TPS", [("TPM", "TPM", lambda s: s.get("TPM") if s.get("TPM") is not None else s.get("tpmTotal")),
                        ("NOPM", "", lambda s: s.get("NOPM")), ("TPS", "TPS", lambda s: None)])
        return "\n".join(lines) + "\n" + ("\n" + published if published else "")


families.register(Tpcc())  # the consistency check as a command: `dbswarm check` (run/tpcc_check.py)
