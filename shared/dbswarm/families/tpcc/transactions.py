"""TPC-C's transactions (BenchBase's procedures; clause 2.4 - 2.8): the card deck that deals
the mix (``Deck``), the statements on one SQL session (``Session``), the five transactions'
inputs and bodies of one virtual user (``TpccClient``) and its loop with keying and think
times (``RunClient``)."""
from __future__ import annotations

import hashlib
import math
import random
import time
from typing import Any, Callable, Literal, Optional, cast

from dbswarm.bindings.protocols import SqlSession
from dbswarm.families.base import EVENT, Client, Op, Operation, Steps, ThreadContext, sleep_unless_stopped, stepwise
from dbswarm.families.tpcc import sql as S
from dbswarm.families.tpcc.model import (
    BAND_ORDERS,
    BAND_RECORDS,
    BAND_S,
    CUSTOMERS,
    DISTRICTS,
    ITEMS,
    KEYING_S,
    MIX,
    THINK_MEAN_S,
    Strings,
    TpccWorkload,
    last_name,
    money,
    nurand,
    run_constants,
)
from dbswarm.measure.recorder import Recorder

_BAND_NS = BAND_S * 1_000_000_000
_LETTER = {"NEW_ORDER": "N", "PAYMENT": "P", "ORDER_STATUS": "O", "DELIVERY": "D", "STOCK_LEVEL": "S"}
_CARD_OF = {v: k for k, v in _LETTER.items()}
# a New-Order band (TpccClient._open_band): start, end (perf_counter_ns), the orders' list, the
# bands' list, this band's index in it
_Band = tuple[int, int, list[int], list[int], int]


class Deck:
    """Clause 5.2.4.2's card deck: 100 cards (45 New-Order, 43 Payment, 4 of each other type),
    shuffled, dealt one per transaction, reshuffled when empty: the mix is exact over every 100."""
    CARDS = tuple(t for t, n in MIX.items() for _ in range(n))

    def __init__(self, rng: random.Random, saved: Optional[dict] = None) -> None:
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

    def __init__(self, binding: SqlSession) -> None:
        self.b = binding
        self.dialect = d = binding.dialect
        self.sql = {k: binding.prepare(S.text(v, d)) for k, v in S.STATEMENTS.items()}
        self._batched: dict[tuple, str] = {}
        self._calls: dict[tuple, Any] = {}  # (the binding's maker, its arguments) -> the call

    def reset(self) -> None:
        """The calls taken again at their next use: they belong to the connection replaced."""
        self._calls.clear()

    def _take(self, maker: str, *args: Any) -> Any:
        key = (maker, *args)
        call = self._calls.get(key)
        if call is None:
            call = self._calls[key] = getattr(self.b, maker)(*args)
        return call

    def fetch(self, sql: str) -> Callable[[Any], Any]:
        return self._take("row_fetcher", sql)

    def run(self, sql: str) -> Callable[[Any], int]:
        return self._take("statement_runner", sql)

    def tx(self, writes: bool) -> tuple:
        return self._take("transaction_calls", writes)

    def rollback(self) -> Callable[[], Any]:
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

    def __init__(self, w: TpccWorkload, rng: random.Random, thread: int, c_run: dict,
                 deck: Optional[dict] = None) -> None:
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
        self.rec: Optional[Recorder] = None  # the thread's recorder (set by RunClient; None: nothing recorded)
        # the band around the ramp-up's end, set at the first committed New-Order
        self._band: Optional[_Band | Literal[False]] = None
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
    def new_order_input(self) -> tuple[int, int, list[tuple[int, int, int]], bool]:
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

    def payment_input(self) -> tuple[int, int, int, Optional[int], Optional[str], float]:
        r = self.rng
        d = r.randint(1, DISTRICTS)
        if self.W > 1 and r.randint(1, 100) > 85:
            cw, cd = self.other_warehouse(), r.randint(1, DISTRICTS)
        else:
            cw, cd = self.home_w, d
        c_id, c_last = self.customer()
        return d, cw, cd, c_id, c_last, r.randint(100, 500_000) / 100

    def order_status_input(self) -> tuple[int, Optional[int], Optional[str]]:
        return (self.rng.randint(1, DISTRICTS), *self.customer())

    def delivery_input(self) -> int:
        return self.rng.randint(1, 10)

    def stock_level_input(self) -> int:
        return self.rng.randint(10, 20)

    # -- bodies: (session, inputs); run again after a rollback on a retryable error -----------
    # Each transaction is described once, as steps (families.base.stepwise): it yields every
    # statement as (the session's call, (params,)) and is sent the call's answer (rows for a
    # ``fetch``, the affected rows for a ``run``); a thread makes the calls one after another,
    # the shard's multiplexer sends each when the last one's answer is in (engine.mux).
    def _by_name(self, st: Session, w: int, d: int, c_last: Optional[str]) -> Steps:
        ids = yield st.fetch(st.sql["c_by_name"]), ((w, d, c_last),)
        return ids[(len(ids) - 1) // 2][0]  # the row at position ceil(n / 2) (clause 2.5.2.2)

    def _new_order(self, st: Session, inp: tuple[int, int, list[tuple[int, int, int]], bool]) -> Steps:
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
        ol_args: list[Any] = []
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
            ol_args += (o_id, d, w, number, item, supply, qty, money(amount), s_row[1])
        upd: list[Any] = []
        for (supply, item), (s_qty, _, ytd, n, remote) in stock.items():
            upd += (supply, item, s_qty, ytd, n, remote)
        yield run(st.batched("stock_update", len(stock))), (S.stock_update_args(upd, st.dialect),)
        yield run(st.batched("lines", len(lines))), (ol_args,)
        yield commit, ()
        if self.rec is not None:
            self._committed(d, o_id)
        self.counters["new_order_remote_lines"] += sum(sw != w for _, sw, _ in lines)
        _ = total * (1 - float(c_discount)) * (1 + float(w_tax) + float(d_tax))  # the terminal's total

    def _committed(self, d: int, o_id: int) -> None:
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

    def _open_band(self) -> _Band | Literal[False]:
        """(start, end (perf_counter_ns), the orders' list, the bands' list, this band's index in
        it): the band appended to BAND_RECORDS with its wall-clock limits (start rounded up, end
        down, to the ms) and no New-Orders yet; False when the phase has no ramp-up."""
        rec = cast(Recorder, self.rec)  # set: _committed's caller checked
        end = rec.warm_end_ns
        if not end:
            return False
        lo, hi = end - _BAND_NS, end + _BAND_NS
        rows = rec.record_list(BAND_RECORDS)
        i = len(rows)
        rows.extend((math.ceil(rec.wall_time(lo) * 1000), math.floor(rec.wall_time(hi) * 1000), 0, 0))
        return lo, hi, rec.record_list(BAND_ORDERS), rows, i

    def _payment(self, st: Session, inp: tuple[int, int, int, Optional[int], Optional[str], float]) -> Steps:
        d, cw, cd, c_id, c_last, amount = inp
        q, w, fetch, run = st.sql, self.home_w, st.fetch, st.run
        amt = money(amount)
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

    def _order_status(self, st: Session, inp: tuple[int, Optional[int], Optional[str]]) -> Steps:
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

    def _delivery(self, st: Session, carrier: int) -> Steps:
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
            yield update_customer, ((money(float(totals.get(d) or 0)), w, d, customers[d]),)
        yield commit, ()

    def _stock_level(self, st: Session, threshold: int) -> Steps:
        q, w, d, fetch = st.sql, self.home_w, self.home_d, st.fetch
        begin, commit = st.tx(False)
        yield begin, ()
        next_o = (yield fetch(q["sl_d"]), ((w, d),))[0][0]
        yield fetch(q["sl_count"]), ((w, d, next_o, next_o - 20, w, threshold),)
        yield commit, ()


class RunClient(Client):
    """One virtual user's loop: a card from the deck, the keying time, the transaction (an event,
    run by the engine's operation loop), the think time (slept before the next card)."""

    def __init__(self, w: TpccWorkload, ctx: ThreadContext) -> None:
        self.m = ctx.m
        self.w = w
        self.c = TpccClient(w, ctx.rng, ctx.thread, run_constants(w.c_last_load, run_rng(w)), ctx.saved.get("deck"))
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

    def _sleep(self, seconds: float) -> None:
        sleep_unless_stopped(seconds, self.m.should_stop)

    def next_operation(self) -> Operation:
        if self.pause and self.think is not None:  # the last transaction's think time
            mean = THINK_MEAN_S[self.think]
            self._sleep(min(-math.log(1.0 - self.c.rng.random()) * mean, 10 * mean))
        kind = self.c.deck.next()
        make, body = self.kinds[kind]
        if self.pause:
            self._sleep(KEYING_S[kind])
            self.think = kind
        return self.ops[kind], body, (self.st, make())

    def state(self) -> dict:
        return {"deck": self.c.deck.state()}  # resumed, the mix goes on as if uninterrupted

    def close(self) -> None:
        for k, v in self.c.counters.items():
            self.m.rec.count(k, v)


def run_rng(w: TpccWorkload) -> random.Random:
    """The run's C constants are the same for every virtual user of the run: drawn from the
    workload's own description (a different load constant, a different run constant)."""
    digest = hashlib.sha256(w.model_dump_json().encode()).digest()
    return random.Random(int.from_bytes(digest[:8], "big"))


