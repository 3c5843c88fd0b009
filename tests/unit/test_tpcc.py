"""TPC-C's generators, population and bookkeeping, without a database: NURand and the C-delta
rule, last names, the card deck's mix, the population's sizes per district and warehouse, the
load's split over client threads, the model's rampup and the phase summary."""
from __future__ import annotations

import random
import time
from collections import Counter

import pytest
from pydantic import ValidationError

from dbswarm.families import base as families
from dbswarm.families.tpcc import check as tpcc_check
from dbswarm.families.tpcc import load as tpcc_load
from dbswarm.families.tpcc import model as tpcc
from dbswarm.families.tpcc import transactions as tpcc_tx
from dbswarm.families.tpcc.load import Population
from dbswarm.families.tpcc.model import C_LAST_LOAD, DISTRICTS, ITEM_UNITS, c_delta_ok, last_name, nurand, run_constants
from dbswarm.families.tpcc.transactions import Deck
from dbswarm.measure.recorder import Measurement, OperationStats
from tests import measured

FAMILY = families.get("tpcc")


def test_nurand_stays_in_range_and_is_skewed():
    rng = random.Random(1)
    draws = [nurand(rng, 1023, 1, 3000, 259) for _ in range(60_000)]
    assert min(draws) >= 1 and max(draws) <= 3000
    counts = Counter(draws)
    # non-uniform: the most drawn value comes up far more often than a uniform draw would (20 per value)
    assert max(counts.values()) > 3 * 60_000 / 3000
    names = [nurand(rng, 255, 0, 999, C_LAST_LOAD) for _ in range(20_000)]
    assert min(names) >= 0 and max(names) <= 999


def test_nurand_is_the_specification_formula():
    class Queued:  # returns the queued draws in order, checking their ranges
        def __init__(self, *draws):
            self.draws = list(draws)

        def randint(self, a, b):
            v, lo, hi = self.draws.pop(0)
            assert (a, b) == (lo, hi)
            return v
    # (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x
    assert nurand(Queued((1000, 0, 1023), (7, 1, 3000)), 1023, 1, 3000, 5) == ((1000 | 7) + 5) % 3000 + 1
    assert nurand(Queued((255, 0, 255), (999, 0, 999)), 255, 0, 999, 900) == (1023 + 900) % 1000
    assert nurand(Queued((0, 0, 8191), (100000, 1, 100000)), 8191, 1, 100000, 0) == 1


@pytest.mark.parametrize("load, run, ok", [(157, 157 + 65, True), (157, 157 - 119, True), (157, 157 + 64, False),
                                           (157, 157 + 120, False), (157, 157 + 96, False), (157, 157 - 112, False),
                                           (200, 100, True)])
def test_c_delta_rule(load, run, ok):
    assert c_delta_ok(load, run) is ok


def test_run_constants_satisfy_the_c_delta_rule():
    for seed in range(200):
        for load in (0, 100, 157, 255):
            c = run_constants(load, random.Random(seed))
            assert c_delta_ok(load, c["c_last"])
            assert 0 <= c["c_last"] <= 255 and 0 <= c["c_id"] <= 1023 and 0 <= c["ol_i_id"] <= 8191


def test_run_constants_are_shared_by_the_run_and_follow_the_load_constant():
    w = FAMILY.workload({"family": "tpcc", "warehouses": 2})
    a = run_constants(w.c_last_load, tpcc_tx.run_rng(w))
    b = run_constants(w.c_last_load, tpcc_tx.run_rng(FAMILY.workload({"family": "tpcc", "warehouses": 2})))
    assert a == b
    other = FAMILY.workload({"family": "tpcc", "warehouses": 2, "c_last_load": 40})
    assert c_delta_ok(40, run_constants(40, tpcc_tx.run_rng(other))["c_last"])


def test_last_names_from_syllables():
    assert last_name(0) == "BARBARBAR"
    assert last_name(371) == "PRICALLYOUGHT"  # the specification's example
    assert last_name(999) == "EINGEINGEING"
    assert len({last_name(n) for n in range(1000)}) == 1000


def test_deck_mix_is_exact_per_100_and_within_1_percent_over_10000():
    deck = Deck(random.Random(5))
    draws = [deck.next() for _ in range(10_000)]
    counts = Counter(draws)
    for kind, pct in tpcc.MIX.items():
        assert abs(counts[kind] / 10_000 - pct / 100) < 0.01, counts
    assert counts == {k: v * 100 for k, v in tpcc.MIX.items()}  # 100 full decks
    first = Counter(draws[:100])
    assert first == tpcc.MIX
    assert draws[:100] != draws[100:200]  # reshuffled


def test_population_sizes_per_warehouse():
    pop = Population(random.Random(2), C_LAST_LOAD)
    customers = history = orders = lines = new = 0
    bc = 0
    delivered_lines_amount = []
    for d in range(1, DISTRICTS + 1):
        cust, hist = pop.customers(1, d)
        o, ol, no = pop.orders(1, d)
        customers += len(cust)
        history += len(hist)
        orders += len(o)
        lines += len(ol)
        new += len(no)
        bc += sum(c[13] == "BC" for c in cust)
        assert sorted(r[3] for r in o) == list(range(1, 3001))  # o_c_id: a permutation of the customers
        assert [r[0] for r in no] == list(range(2101, 3001))
        assert all(5 <= r[6] <= 15 for r in o)
        assert sum(r[6] for r in o) == len(ol)
        delivered_lines_amount += [r[8] for r in ol if r[0] < 2101]
        assert all((r[5] is None) == (r[0] >= 2101) for r in o)
        assert [c[5] for c in cust[:1000]] == [last_name(n) for n in range(1000)]
    stock = sum(len(pop.stock(1, (d - 1) * 10_000 + 1, d * 10_000)) for d in range(1, DISTRICTS + 1))
    assert (customers, history, orders, new, stock) == (30_000, 30_000, 30_000, 9_000, 100_000)
    assert 290_000 <= lines <= 310_000  # ~300k: 10 lines per order on average
    assert 0.08 < bc / customers < 0.12  # 10% bad credit (clause 4.3.3.1)
    assert set(delivered_lines_amount) == {"0.00"}
    items = pop.items(1, 100_000)
    original = sum("ORIGINAL" in i[4] for i in items)
    assert 0.09 < original / len(items) < 0.11


def test_load_split_item_once_and_warehouses_disjoint():
    for W, threads in ((1, 1), (2, 2), (5, 2), (3, 8), (100, 7)):
        w = FAMILY.workload({"family": "tpcc", "warehouses": W, "threads": threads})
        split = FAMILY.split_load(w, threads)
        assert len(split) == threads
        covered = [u for start, count in split for u in range(start, start + count)]
        assert covered == list(range(ITEM_UNITS + DISTRICTS * W))  # every unit once, in order
        assert split[0][0] == 0 and split[0][1] >= ITEM_UNITS  # ITEM: global thread 0 only
        if threads <= W:  # whole warehouses per thread
            for start, count in split[1:]:
                assert (start - ITEM_UNITS) % DISTRICTS == 0 and count % DISTRICTS == 0


def test_rampup_is_the_warmup():
    w = FAMILY.workload({"family": "tpcc", "rampup": 30, "time": 120})
    assert w.warmuptime == 30
    assert FAMILY.limits(w).time == 150
    with pytest.raises(ValidationError):
        FAMILY.workload({"family": "tpcc", "rampup": 30, "warmuptime": 10})
    assert FAMILY.workload({"family": "tpcc", "warmuptime": 10}).rampup == 10
    assert not FAMILY.workload({"family": "tpcc"}).keying_and_thinking


def _measurement(counts, rollbacks=0, warm=None, retries=0):
    m = Measurement()
    for op, n in counts.items():
        s = m.op(op)
        s.count = n
        for _ in range(n):
            s.histogram.record_value(2000)
    if warm:
        m.warmup = {}
        for op, n in warm.items():
            s = m.warmup[op] = OperationStats()
            s.count = n
    m.counters = {"new_order_rollbacks": rollbacks, "retries": retries}
    return m


def test_phase_summary_with_and_without_the_window():
    w = {"family": "tpcc", "warehouses": 2, "threads": 4, "time": 60, "rampup": 10}
    m = _measurement({"NEW_ORDER": 450, "PAYMENT": 430, "ORDER_STATUS": 40, "DELIVERY": 40, "STOCK_LEVEL": 40},
                     rollbacks=5, warm={"NEW_ORDER": 90}, retries=3)
    s = FAMILY.phase_summary(FAMILY.workload(w), "run", m, 70.0)
    assert s["tpmC"] == 450.0 and s["tpmTotal"] == 1000.0
    assert s["new_orders_committed"] == 445 and s["new_order_rollbacks"] == 5
    assert s["NOPM"] is None and "unavailable" in s["NOPM_basis"] and s["TPM"] is None
    assert s["p90_limit"]["NEW_ORDER"] == "pass" and s["efficiency_pct"] is None
    s = FAMILY.phase_summary(FAMILY.workload(w), "run", m, 70.0, window={"seconds": 70.0, "family": {"new_orders": 535},
                                                       "server": {"transactions": 1183}})
    assert s["NOPM"] == round(535 * 60 / 70, 1) and s["new_orders_database"] == 535
    assert s["new_orders_clients"] == 450 + 90 - 5
    assert s["TPM"] == round(1183 * 60 / 70, 1)
    # with a ramp-up the window starts when it ends: the ramp-up's transactions are not the server's
    assert FAMILY.client_statements(FAMILY.workload(w), "run", m) == {"transactions": 1000 + 3}
    assert FAMILY.client_statements(FAMILY.workload(dict(w, rampup=0)), "run", m) == {"transactions": 1000 + 90 + 3}
    table = FAMILY.report_tables([{"run_id": "000", "target": {"label": "PG"}, "workload": w, "threads": 4,
                                   "phases": {"run": {"tpcc": s}}}])
    assert "| PG | 2 | 4 | 1,014 | 459 | 450 | 1,000 |" in table


def test_nopm_and_tpm_over_the_window_after_the_rampup():
    """The window's start edge read when the ramp-up ended (after_warmup_s): NOPM and TPM per
    minute of the measured window (the phase less its ramp-up), the clients' New-Orders after
    the ramp-up beside the database's; read before the shards instead, the ramp-up is in both
    and the basis says so."""
    w = {"family": "tpcc", "warehouses": 2, "threads": 4, "time": 60, "rampup": 10}
    m = _measurement({"NEW_ORDER": 450, "PAYMENT": 430, "ORDER_STATUS": 40, "DELIVERY": 40, "STOCK_LEVEL": 40},
                     rollbacks=5, warm={"NEW_ORDER": 90})
    win = {"seconds": 61.0, "family": {"new_orders": 445}, "server": {"transactions": 1000}, "after_warmup_s": 10}
    s = FAMILY.phase_summary(FAMILY.workload(w), "run", m, 70.0, window=win)
    assert s["NOPM"] == 445.0 and s["TPM"] == 1000.0  # per minute of the 60 s after the ramp-up
    assert s["new_orders_database"] == s["new_orders_clients"] == 445
    assert s["window_starts"] == "after the ramp-up" and "when the ramp-up ended" in s["NOPM_basis"]
    s = FAMILY.phase_summary(FAMILY.workload(w), "run", m, 70.0, window=dict(win, after_warmup_s=None))
    assert s["NOPM"] == round(445 * 60 / 70, 1) and s["new_orders_clients"] == 450 + 90 - 5
    assert "ramp-up included" in s["NOPM_basis"]


# ---- the batched New-Order and Delivery on a real (SQLite) database, a few rows -------------------

def _sqlite_session(tmp_path):
    from dbswarm import bindings
    from dbswarm.bindings.base import Connection
    from dbswarm.families.tpcc import sql as S
    b = bindings.get("sqlite")(Connection(engine="sqlite", url=str(tmp_path / "t.db"), password=None, options={},
                                          display="sqlite"))
    b.connect()
    FAMILY.prepare(b, FAMILY.workload({"family": "tpcc", "warehouses": 2}), "before_load")
    loader = tpcc_load.Loader(b, 100)
    b.begin(True)
    loader.insert("warehouse", [(w, "w", "s", "s", "c", "ST", "123411111", "0.1000", "300000.00") for w in (1, 2)])
    loader.insert("district", [(1, 1, "d", "s", "s", "c", "ST", "123411111", "0.0500", "30000.00", 3001)])
    loader.insert("customer", [(7, 1, 1, "f", "OE", "BARBARBAR", "s", "s", "c", "ST", "1", "1", "2020-01-01", "GC",
                                "50000.00", "0.1000", "-10.00", "10.00", 1, 0, "x")])
    loader.insert("item", [(i, 1, f"item{i}", "2.50", "data") for i in (11, 12, 13)])
    loader.insert("stock", [(i, w, q, *[f"dist{d:02d}-{w}-{i}" for d in range(1, 11)], 0, 0, 0, "data")
                            for w in (1, 2) for i, q in ((11, 20), (12, 12), (13, 50))])
    b.commit()
    st = tpcc_tx.Session(b)
    assert "FOR UPDATE" not in S.new_order_stock(2, 1, "sqlite")
    return b, st


def _client():
    w = FAMILY.workload({"family": "tpcc", "warehouses": 2, "threads": 1})
    return tpcc_tx.TpccClient(w, random.Random(1), 0, run_constants(w.c_last_load, tpcc_tx.run_rng(w)))


def test_batched_new_order_applies_the_stock_rule_line_by_line(tmp_path):
    """Item 12 on three lines of warehouse 1 (quantity 12 -> 7+91=98 -> 88 -> 79), item 11 once
    from warehouse 1 and once remotely from warehouse 2: the stock rows end as the specification's
    one-line-at-a-time processing leaves them; the order lines carry the district's s_dist_01."""
    b, st = _sqlite_session(tmp_path)
    c = _client()
    lines = [(12, 1, 5), (11, 1, 3), (12, 1, 10), (11, 2, 4), (12, 1, 9)]
    c.new_order(st, (1, 7, lines, False))
    stock = {(w, i): (q, ytd, n, r) for w, i, q, ytd, n, r in b.fetchall(
        "SELECT s_w_id, s_i_id, s_quantity, s_ytd, s_order_cnt, s_remote_cnt FROM stock")}
    assert stock[1, 12] == (79, 24, 3, 0)
    assert stock[1, 11] == (17, 3, 1, 0)
    assert stock[2, 11] == (16, 4, 1, 1)
    assert stock[1, 13] == (50, 0, 0, 0) and stock[2, 12] == (12, 0, 0, 0)
    ol = b.fetchall("SELECT ol_number, ol_i_id, ol_supply_w_id, ol_quantity, ol_amount, ol_dist_info FROM order_line "
                    "WHERE ol_o_id = 3001 ORDER BY ol_number")
    assert [(n, i, sw, q) for n, i, sw, q, _, _ in ol] == [(n, *line) for n, line in enumerate(lines, 1)]
    assert [round(float(a), 2) for *_, a, _ in ol] == [12.5, 7.5, 25.0, 10.0, 22.5]
    assert [dist for *_, dist in ol] == ["dist01-1-12", "dist01-1-11", "dist01-1-12", "dist01-2-11", "dist01-1-12"]
    assert b.fetchone("SELECT d_next_o_id FROM district")[0] == 3002
    assert b.fetchone("SELECT o_ol_cnt, o_all_local FROM orders WHERE o_id = 3001") == (5, 0)
    assert c.counters["new_order_remote_lines"] == 1
    # the 1% rollback: an unused item number leaves nothing behind and is counted
    c.new_order(st, (1, 7, [(13, 1, 2), (tpcc.ITEMS + 1, 1, 1)], True))
    assert b.fetchone("SELECT d_next_o_id FROM district")[0] == 3002
    assert b.fetchone("SELECT s_quantity, s_order_cnt FROM stock WHERE s_w_id = 1 AND s_i_id = 13") == (50, 0)
    assert c.counters["new_order_rollbacks"] == 1
    # then Delivery delivers order 3001 (the district's only new order) in its batched statements
    c.delivery(st, 4)
    assert b.fetchone("SELECT COUNT(*) FROM new_order")[0] == 0
    assert b.fetchone("SELECT o_carrier_id FROM orders WHERE o_id = 3001")[0] == 4
    assert b.fetchone("SELECT COUNT(*) FROM order_line WHERE ol_delivery_d IS NULL")[0] == 0
    assert b.fetchone("SELECT c_balance, c_delivery_cnt FROM customer")[0:2] == (pytest.approx(-10 + 77.5), 1)
    assert c.counters["delivery_skipped_districts"] == 9
    b.close()


def test_presets_set_what_the_workload_does_not_give():
    quick = FAMILY.workload({"family": "tpcc", "preset": "quick"})
    assert (quick.warehouses, quick.threads, quick.time, quick.rampup, quick.warmuptime, quick.check) == (
        1, 4, 20, 5, 5, ["after_load", "after_run"])
    mine = FAMILY.workload({"family": "tpcc", "preset": "published", "threads": 8, "warmuptime": 60})
    assert (mine.warehouses, mine.threads, mine.time, mine.rampup) == (100, 8, 3600, 60)
    assert FAMILY.workload({"family": "tpcc"}).warehouses == 1 and FAMILY.workload({"family": "tpcc"}).rampup == 0
    # the preset stays in the validated workload: a plan's workload validates to the same values again
    again = FAMILY.workload(mine.model_dump())
    assert again == mine
    with pytest.raises(ValidationError):
        FAMILY.workload({"family": "tpcc", "preset": "huge"})
    assert any("preset: quick" in line for line in FAMILY.presets_text())


# ---- the 90th-percentile limits, efficiency, the home warehouses, a retried transaction -------------

def _slow(m, op, micros):
    s = m.op(op)
    for _ in range(10):
        s.histogram.record_value(micros)
    s.count += 10


def test_p90_limit_fails_past_the_specification_limit_and_says_which():
    w = {"family": "tpcc", "warehouses": 1, "threads": 2, "time": 60}
    m = _measurement({"PAYMENT": 10, "ORDER_STATUS": 10, "DELIVERY": 10, "STOCK_LEVEL": 10})
    _slow(m, "NEW_ORDER", 6_000_000)      # 6 s > 5 s
    _slow(m, "STOCK_LEVEL", 19_000_000)   # 19 s < Stock-Level's 20 s (its other 10 at 2 ms: p90 well under)
    s = FAMILY.phase_summary(FAMILY.workload(w), "run", m, 60.0)
    assert s["p90_limit"]["NEW_ORDER"] == "fail" and s["p90_ms"]["NEW_ORDER"] >= 6000
    assert s["p90_limit"]["STOCK_LEVEL"] == "pass" and s["p90_limit"]["PAYMENT"] == "pass"
    run = {"run_id": "000", "target": {"label": "PG"}, "workload": w, "threads": 2, "phases": {"run": {"tpcc": s}}}
    assert FAMILY.csv_values(run, "run", {"tpcc": s})["tpcc_p90_limits"] == "fail: NEW_ORDER"
    assert "| fail: NEW_ORDER |" in FAMILY.report_tables([run])


def test_efficiency_with_keying_and_think_times_in_the_table_and_csv():
    w = {"family": "tpcc", "warehouses": 10, "threads": 100, "time": 600, "keying_and_thinking": True}
    m = _measurement({"NEW_ORDER": 1200, "PAYMENT": 1150, "ORDER_STATUS": 100, "DELIVERY": 100, "STOCK_LEVEL": 100})
    s = FAMILY.phase_summary(FAMILY.workload(w), "run", m, 600.0)
    assert s["tpmC"] == 120.0
    assert s["efficiency_pct"] == round(100 * 120 / (12.86 * 10), 2) == 93.31
    run = {"run_id": "000", "target": {"label": "PG"}, "workload": w, "threads": 100, "phases": {"run": {"tpcc": s}}}
    assert "tpcc_efficiency_pct" in FAMILY.csv_fields()
    assert FAMILY.csv_values(run, "run", {"tpcc": s})["tpcc_efficiency_pct"] == 93.31
    table = FAMILY.report_tables([run])
    assert "efficiency %" in table and "| 93.31 |" in table
    off = FAMILY.phase_summary(FAMILY.workload(dict(w, keying_and_thinking=False)), "run", m, 600.0)
    assert off["efficiency_pct"] is None and "does not apply" in off["efficiency_note"]


@pytest.mark.parametrize("warehouses, threads, shards", [(4, 8, 3), (3, 30, 4), (10, 10, 7)])
def test_home_warehouses_spread_evenly_over_the_shards_global_threads(tmp_path, warehouses, threads, shards):
    """Every virtual user's home warehouse from its global index: whatever the shard layout,
    every warehouse gets threads / warehouses of them, and no two share a home district
    while there are districts left."""
    from dbswarm.documents import Plan
    from dbswarm.results.store import open_store
    from dbswarm.run.runtime import service
    out = service.plan_campaign({"campaign": {"name": "h", "workload": {"family": "tpcc", "warehouses": warehouses,
                                                                        "threads": threads},
                                              "fanout": {"shards": shards}}, "results": str(tmp_path)})
    store = open_store(out["store"])
    run = Plan.of(store.get_json(store.key(out["campaign_id"], "plan.json"))).runs[0]
    assert run.shard_count == shards
    w = FAMILY.workload(run.workload)
    homes = []
    for shard in run.shards:
        for g in range(shard.thread_offset, shard.thread_offset + shard.threads):
            c = tpcc_tx.TpccClient(w, random.Random(g), g, {"c_last": 0, "c_id": 0, "ol_i_id": 0})
            homes.append((c.home_w, c.home_d))
    assert len(homes) == threads
    per_w = Counter(h for h, _ in homes)
    assert set(per_w) == set(range(1, warehouses + 1))
    assert set(per_w.values()) == {threads // warehouses}
    assert len(set(homes)) == len(homes)  # 10 districts per warehouse: a district each


def _locked_once(c, attempts: list):
    """A New-Order body whose first attempt takes district (1, 1)'s next o_id and then fails as
    a locked SQLite database does (rolled back and run again by Measured.event); ``attempts``
    counts the attempts."""
    import sqlite3

    def body(st, inp):
        attempts.append(1)
        if len(attempts) == 1:
            st.b.begin(True)
            st.b.execute("UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 1")
            raise sqlite3.OperationalError("database is locked")
        c.new_order(st, inp)
    return body


def test_a_retryable_error_rolls_back_reruns_once_and_commits_once(tmp_path):
    """A New-Order whose first attempt updated the district and then hit a retryable error
    (SQLite's 'database is locked', as a deadlock on a server): Measured.event rolls it back
    and runs it again; one retry counted, one New-Order timed, one order committed."""
    from dbswarm.engine.calls import Measured
    from dbswarm.measure.recorder import Recorder
    b, st = _sqlite_session(tmp_path)
    c = _client()
    attempts = []
    body = _locked_once(c, attempts)
    m = Measured(b, Recorder())
    assert measured.event(m, "NEW_ORDER", body, st, (1, 7, [(11, 1, 1), (12, 1, 2)], False)) is True
    assert len(attempts) == 2
    meas = m.rec.measurement()
    assert meas.counters.get("retries") == 1
    assert meas.operations["NEW_ORDER"].count == 1
    assert list(meas.errors) == ["NEW_ORDER:retryable:database_locked"]
    assert b.fetchone("SELECT d_next_o_id FROM district WHERE d_w_id = 1 AND d_id = 1")[0] == 3002  # not 3003
    assert b.fetchone("SELECT COUNT(*) FROM orders")[0] == 1


# ---- NOPM from the clients, exactly: the New-Orders around the ramp-up's end placed by o_id (issue 16) ------

def _band_client(tmp_path, warm_end_from_now_s):
    """A virtual user on SQLite (warehouse 1, district 1 at d_next_o_id 3001) whose recorder's
    ramp-up ends ``warm_end_from_now_s`` from now, set after the client was built (as the worker does)."""
    from dbswarm.engine.calls import Measured
    from dbswarm.measure.recorder import Recorder
    b, st = _sqlite_session(tmp_path)
    c = _client()
    rec = Recorder()
    c.rec = rec
    rec.warm_end_ns = time.perf_counter_ns() + int(warm_end_from_now_s * 1e9)
    return b, st, c, Measured(b, rec)


ORDER = (1, 7, [(11, 1, 1), (12, 1, 2)], False)


@pytest.mark.parametrize("warm_end_from_now_s, where", [(0, "band"), (tpcc.BAND_S + 5, "before"),
                                                       (-tpcc.BAND_S - 5, "after")])
def test_a_committed_new_order_is_recorded_in_the_band_or_counted_before_or_after_it(tmp_path, warm_end_from_now_s,
                                                                                       where):
    """Inside the band (BAND_S either side of the ramp-up's end) a New-Order is recorded as
    (warehouse, district, o_id); outside it only counted, before or after. A rolled-back one
    (the 1%) is neither; the band itself is recorded once, with its wall-clock limits."""
    b, st, c, m = _band_client(tmp_path, warm_end_from_now_s)
    assert measured.event(m, "NEW_ORDER", c.new_order, st, ORDER)
    assert measured.event(m, "NEW_ORDER", c.new_order, st, (1, 7, [(13, 1, 2), (tpcc.ITEMS + 1, 1, 1)], True))  # rolled back
    assert measured.event(m, "NEW_ORDER", c.new_order, st, ORDER)
    records = m.rec.measurement().records
    lo_ms, hi_ms, before, after = records[tpcc.BAND_RECORDS]
    now_ms = time.time() * 1000
    assert hi_ms - lo_ms == pytest.approx(2 * tpcc.BAND_S * 1000, abs=2)
    assert lo_ms + tpcc.BAND_S * 1000 == pytest.approx(now_ms + warm_end_from_now_s * 1000, abs=1000)
    orders = records.get(tpcc.BAND_ORDERS, [])
    assert (before, len(orders) // 3, after) == {"before": (2, 0, 0), "band": (0, 2, 0), "after": (0, 0, 2)}[where]
    if where == "band":
        assert orders == [1, 1, 3001, 1, 1, 3002]  # warehouse, district, o_id: the rolled-back one gave 3002 back
    assert c.counters["new_order_rollbacks"] == 1
    b.close()


def test_a_retried_new_order_is_recorded_once_with_the_o_id_it_committed(tmp_path):
    """The first attempt takes o_id 3001 and fails (a deadlock, SQLite's 'database is locked'):
    rolled back, it gives 3001 back; the retry commits 3001, recorded once."""
    b, st, c, m = _band_client(tmp_path, 0)
    attempts = []
    body = _locked_once(c, attempts)
    assert measured.event(m, "NEW_ORDER", body, st, ORDER) and len(attempts) == 2
    meas = m.rec.measurement()
    assert meas.counters["retries"] == 1 and meas.operations["NEW_ORDER"].count == 1
    assert meas.records[tpcc.BAND_ORDERS] == [1, 1, 3001]
    assert meas.records[tpcc.BAND_RECORDS][2:] == [0, 0]
    b.close()


def test_no_band_without_a_rampup_and_warmup_rollbacks_read_the_recorders_instant(tmp_path):
    """No ramp-up (warm_end_ns 0): nothing recorded. The 1% rollback during the ramp-up is
    counted apart, the recorder's warm-up end read when it happens (the worker sets it after the
    client was built)."""
    b, st, c, m = _band_client(tmp_path, 0)
    m.rec.warm_end_ns = 0
    m.rec.warm_until_ns = time.perf_counter_ns() + 60 * 10 ** 9
    assert measured.event(m, "NEW_ORDER", c.new_order, st, ORDER)
    assert measured.event(m, "NEW_ORDER", c.new_order, st, (1, 7, [(13, 1, 2), (tpcc.ITEMS + 1, 1, 1)], True))
    assert m.rec.measurement().records == {}
    assert c.counters["new_order_rollbacks_warmup"] == 1 and c.counters["new_order_rollbacks"] == 0
    b.close()


def test_window_snapshot_reads_every_districts_next_o_id_in_one_statement(tmp_path):
    b, _ = _sqlite_session(tmp_path)
    b.execute("INSERT INTO district (d_id, d_w_id, d_name, d_street_1, d_street_2, d_city, d_state, d_zip, d_tax, "
              "d_ytd, d_next_o_id) VALUES (3, 2, 'd', 's', 's', 'c', 'ST', '123411111', '0.0500', '30000.00', 3050)")
    t0 = time.time()
    snap = FAMILY.window_snapshot(b, FAMILY.workload({"family": "tpcc", "warehouses": 2}), "run")
    assert snap["new_orders"] == 3001 + 3050
    assert snap["district_next_o_id"] == {"1": [3001], "2": [None, None, 3050]}
    assert t0 <= snap["read_at"][0] <= snap["read_at"][1] <= time.time()
    assert FAMILY.window_snapshot(b, FAMILY.workload({"family": "tpcc"}), "load") is None
    b.close()


EDGE_S = 1_700_000_100.0  # when the start edge's snapshot was read (wall clock)


def _banded(bands, orders, whole=None, rollbacks=2):
    """A run phase's measurement: bands [(start s, end s, before, after)] and orders
    [(w, d, o_id)] as the clients record them; New-Orders over the phase = their total."""
    m = Measurement()
    committed = sum(bd[2] + bd[3] for bd in bands) + len(orders) if whole is None else whole
    m.op("NEW_ORDER").count = committed - 40 + rollbacks  # 40 in the ramp-up
    m.warmup = {"NEW_ORDER": OperationStats()}
    m.warmup["NEW_ORDER"].count = 40
    m.counters = {"new_order_rollbacks": rollbacks}
    m.records = {tpcc.BAND_RECORDS: [v for lo, hi, bf, af in bands for v in (int(lo * 1000), int(hi * 1000), bf, af)],
                 tpcc.BAND_ORDERS: [v for o in orders for v in o]}
    return m


def _window(new_orders, start=None):
    start = start if start is not None else {"new_orders": 6000 + 6100, "read_at": [EDGE_S, EDGE_S + 0.02],
                                             "district_next_o_id": {"1": [3000, 3100], "2": [3000, 3000]}}
    return {"seconds": 61.0, "family": {"new_orders": new_orders}, "family_start": start, "after_warmup_s": 10,
            "edges_at": [EDGE_S + 0.03, EDGE_S + 61]}


W_BAND = {"family": "tpcc", "warehouses": 2, "threads": 2, "time": 60, "rampup": 10}


def test_clients_count_is_exact_when_the_edge_lies_inside_every_band():
    """Two virtual users' bands around the edge: 30 + 20 New-Orders before their bands, 50 + 10
    after; in the bands, those with an o_id below the district's d_next_o_id at the edge were
    committed before it. Clients in the window = whole - before the bands - those below."""
    bands = [(EDGE_S - 30, EDGE_S + 30, 30, 50), (EDGE_S - 29.5, EDGE_S + 30.5, 20, 10)]
    orders = [(1, 1, 2998), (1, 1, 2999), (1, 1, 3000), (1, 1, 3001),  # district (1, 1) starts at 3000
              (1, 2, 3099), (1, 2, 3100), (2, 1, 3000), (2, 2, 2999)]
    m = _banded(bands, orders)
    whole = 30 + 50 + 20 + 10 + 8
    in_window = whole - 50 - 4  # 2998, 2999, 3099 and warehouse 2's 2999 are before the edge
    s = FAMILY.phase_summary(FAMILY.workload(W_BAND), "run", m, 70.0, window=_window(in_window))
    assert s["new_orders_committed_whole_phase"] == whole
    assert s["new_orders_clients"] == s["new_orders_database"] == in_window == 64
    assert s["new_orders_agreement"] == "exact" and s["new_orders_difference"] == 0
    assert "exact: the edge was read inside every band" in s["new_orders_clients_basis"]
    assert "new_orders_clients" in s["NOPM_basis"] and s["NOPM"] == 64.0
    # the database says one more (a New-Order the clients did not count): said, not hidden
    s = FAMILY.phase_summary(FAMILY.workload(W_BAND), "run", m, 70.0, window=_window(in_window + 1))
    assert s["new_orders_agreement"] == "differs" and s["new_orders_difference"] == -1
    # the order of the records (shards, threads merged in another order) changes nothing
    again = Measurement()
    for bd, part in ((bands[1:], orders[4:]), (bands[:1], orders[:4])):
        piece = _banded(bd, part)
        piece.operations, piece.warmup, piece.counters = {}, None, {}
        again.merge(Measurement.from_dict(piece.to_dict()))
    m.records = again.records
    assert FAMILY.phase_summary(FAMILY.workload(W_BAND), "run", m, 70.0, window=_window(in_window))["new_orders_clients"] == 64


def test_a_band_that_counted_nothing_on_a_side_does_not_need_the_edge_on_that_side():
    """A call that began after the edge (a continuation) counted nothing before its band: its
    band's start may lie after the edge and the count is still exact; one that counted a
    New-Order after a band that ended before the edge makes the count approximate."""
    orders = [(1, 1, 3000)]
    late = [(EDGE_S - 30, EDGE_S + 30, 5, 5), (EDGE_S + 10, EDGE_S + 70, 0, 7)]
    s = FAMILY.phase_summary(FAMILY.workload(W_BAND), "run", _banded(late, orders), 70.0, window=_window(13))
    assert s["new_orders_agreement"] == "exact" and s["new_orders_clients"] == 13
    early = [(EDGE_S - 30, EDGE_S + 30, 5, 5), (EDGE_S - 70, EDGE_S - 10, 0, 7)]
    s = FAMILY.phase_summary(FAMILY.workload(W_BAND), "run", _banded(early, orders), 70.0, window=_window(13))
    assert s["new_orders_agreement"] == "approximate"


@pytest.mark.parametrize("case", ["edge outside a band", "no per-district snapshot", "records do not add up",
                                  "district not in the snapshot"])
def test_the_clients_count_falls_back_to_time_and_says_why(case):
    """Not exact: the time-based count (New-Orders after each virtual user's ramp-up by its own
    clock, new_orders_committed), the agreement approximate and the basis saying why."""
    bands = [(EDGE_S - 30, EDGE_S + 30, 30, 50)]
    orders = [(1, 1, 2999), (1, 1, 3000)]
    window, whole = _window(51), None
    if case == "edge outside a band":
        bands.append((EDGE_S + 0.01, EDGE_S + 60, 3, 0))  # counted 3 before a band that began during the read
        why = "outside the band (±30 s around the ramp-up's end) of 1 of 2"
    elif case == "no per-district snapshot":
        window = _window(51, start={"new_orders": 12100})
        why = "the start edge holds no per-district d_next_o_id"
    elif case == "records do not add up":  # e.g. an older dbswarm's shard file among the others
        whole = 100
        why = "account for 82 of the 100 New-Orders committed"
    else:
        orders.append((3, 1, 3000))
        why = "district 1 of warehouse 3 is not in the start edge's snapshot"
    m = _banded(bands, orders, whole=whole)
    s = FAMILY.phase_summary(FAMILY.workload(W_BAND), "run", m, 70.0, window=window)
    assert s["new_orders_clients"] == s["new_orders_committed"] == m.operations["NEW_ORDER"].count - 2
    assert s["new_orders_agreement"] == "approximate"
    assert s["new_orders_difference"] == s["new_orders_clients"] - 51
    assert s["new_orders_clients_basis"].startswith("approximate: ") and why in s["new_orders_clients_basis"], \
        s["new_orders_clients_basis"]


def test_without_a_rampup_the_clients_count_is_the_whole_phase():
    m = _banded([], [], whole=500)
    s = FAMILY.phase_summary(FAMILY.workload(dict(W_BAND, rampup=0)), "run", m, 60.0,
                             window={"seconds": 60.5, "family": {"new_orders": 500}, "edges_at": [0, 60.5]})
    assert s["new_orders_clients"] == 500 and s["new_orders_agreement"] == "exact"
    assert "whole phase" in s["new_orders_clients_basis"]


def test_window_deltas_hand_the_start_snapshot_to_the_family_and_keep_it_out_of_the_result():
    """The start edge's snapshot reaches phase_summary (window["family_start"]); the merged phase
    (result.json) keeps the deltas only, and the shards' records through their documents."""
    import json

    from dbswarm.results.aggregate import merge_phase, window_deltas
    start = {"at": EDGE_S + 0.03, "warnings": [], "after_warmup_s": 10, "server": {"transactions": 5},
             "family": {"new_orders": 6100, "read_at": [EDGE_S, EDGE_S + 0.02],
                        "district_next_o_id": {"1": [3000, 3100]}}}
    end = {"at": EDGE_S + 61, "warnings": [], "server": {"transactions": 905},
           "family": {"new_orders": 6164, "read_at": [EDGE_S + 60.9, EDGE_S + 60.95],
                      "district_next_o_id": {"1": [3032, 3132]}}}
    win = window_deltas(start, end)
    assert win["family"] == {"new_orders": 64} and win["server"] == {"transactions": 900}
    assert win["family_start"] == start["family"] and win["edges_at"] == [start["at"], end["at"]]
    assert win["after_warmup_s"] == 10
    assert "family_start" not in window_deltas(start, dict(end, family=None))
    # two shards' documents, merged: the clients' count over the window is the database's
    shards = [_banded([(EDGE_S - 30, EDGE_S + 30, 10, 20)], [(1, 1, 2999), (1, 2, 3100)]),
              _banded([(EDGE_S - 30, EDGE_S + 30, 5, 40)], [(1, 1, 3000), (1, 1, 3001)])]
    docs = {i: {"campaign_id": "c", "run_id": "r", "phase": "run", "shard": i, "threads": 1,
                "binding": {"engine": "postgresql", "is_real_database": True}, "measurement": m.to_dict(),
                "started_at": EDGE_S - 10, "ended_at": EDGE_S + 60, "status": "done"} for i, m in enumerate(shards)}
    whole = 10 + 20 + 2 + 5 + 40 + 2
    phase = merge_phase("tpcc", W_BAND, 2, "run", docs, {}, window=dict(win, family={"new_orders": whole - 15 - 1}))
    assert phase["tpcc"]["new_orders_clients"] == whole - 15 - 1 == 63, phase["tpcc"]
    assert phase["tpcc"]["new_orders_agreement"] == "exact"
    assert "district_next_o_id" not in json.dumps(phase) and "records" not in phase


# ---- the consistency check on a loaded SQLite warehouse: each condition can fail -------------------

@pytest.fixture(scope="module")
def loaded(tmp_path_factory):
    """One warehouse loaded by the family's own loader into SQLite (a few seconds)."""
    from dbswarm import bindings
    from dbswarm.bindings.base import Connection
    path = tmp_path_factory.mktemp("tpcc") / "w1.db"
    b = bindings.get("sqlite")(Connection(engine="sqlite", url=str(path), password=None, options={},
                                          display="sqlite"))
    b.connect()
    w = FAMILY.workload({"family": "tpcc", "warehouses": 1})
    FAMILY.prepare(b, w, "before_load")
    loader, pop = tpcc_load.Loader(b, 1000), Population(random.Random(1), w.c_last_load)
    for unit in range(ITEM_UNITS + DISTRICTS):
        loader.write(unit, pop)
    FAMILY.prepare(b, w, "after_load")
    yield b
    b.close()


# each condition, the change that breaks it (warehouse 1, district 2 where the condition is per district)
BREAKS = {
    "4.3.3.1": "DELETE FROM stock WHERE s_w_id = 1 AND s_i_id = 5",
    "3.3.2.1": "UPDATE warehouse SET w_ytd = w_ytd + 1 WHERE w_id = 1",
    "3.3.2.2": "UPDATE district SET d_next_o_id = d_next_o_id + 1 WHERE d_w_id = 1 AND d_id = 2",
    "3.3.2.3": "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 2 AND no_o_id = 2500",
    "3.3.2.4": "DELETE FROM order_line WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 5 AND ol_number = 1",
    "3.3.2.5": "UPDATE orders SET o_carrier_id = NULL WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = 5",
    "3.3.2.6": "UPDATE orders SET o_ol_cnt = o_ol_cnt + 1 WHERE o_w_id = 1 AND o_d_id = 2 AND o_id = 5",
    "3.3.2.7": "UPDATE order_line SET ol_delivery_d = NULL WHERE ol_w_id = 1 AND ol_d_id = 2 AND ol_o_id = 5",
    "3.3.2.8": "UPDATE history SET h_amount = h_amount + 1 WHERE h_w_id = 1 AND h_d_id = 2 AND h_c_id = 7",
    "3.3.2.9": "UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 2",
    "3.3.2.10": "UPDATE customer SET c_balance = c_balance + 1 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 7",
    "3.3.2.11": "DELETE FROM new_order WHERE no_w_id = 1 AND no_d_id = 2 AND no_o_id = 2101",
    "3.3.2.12": "UPDATE customer SET c_ytd_payment = c_ytd_payment + 1 WHERE c_w_id = 1 AND c_d_id = 2 AND c_id = 7",
}


def test_every_condition_has_a_break_and_the_load_passes_them_all(loaded):
    from dbswarm.families.tpcc import sql as S
    assert set(BREAKS) == set(S.CONDITIONS) and len(BREAKS) == 13
    assert tpcc_check.check_warehouse(loaded, 1, after_load=True) == []


@pytest.mark.parametrize("condition", list(BREAKS))
def test_each_condition_fails_when_broken_and_names_the_place(loaded, condition):
    b = loaded
    b.begin(True)
    try:
        b.execute(BREAKS[condition])
        failures = tpcc_check.check_warehouse(b, 1, after_load=True)
    finally:
        b.rollback()
    mine = [f for f in failures if f["condition"] == condition]
    assert mine, (condition, failures)
    assert all(f["warehouse"] == 1 and f["title"] for f in mine)
    if condition not in ("4.3.3.1", "3.3.2.1", "3.3.2.8"):  # the others are per district
        assert {f["district"] for f in mine} == {2}, mine


def test_the_check_fails_on_empty_tables(tmp_path):
    """The twelve conditions hold on empty tables: the population condition does not."""
    from dbswarm import bindings
    from dbswarm.bindings.base import Connection
    b = bindings.get("sqlite")(Connection(engine="sqlite", url=str(tmp_path / "e.db"), password=None, options={},
                                          display="sqlite"))
    b.connect()
    try:
        FAMILY.prepare(b, FAMILY.workload({"family": "tpcc", "warehouses": 1}), "before_load")
        result = tpcc_check.check(b, [1], after_load=True)
    finally:
        b.close()
    assert not result["passed"]
    assert {f["condition"] for f in result["failures"]} == {"4.3.3.1"}
    assert sorted(f["found"] for f in result["failures"]) == [0, 0, 0]  # warehouse, districts, stock


def _check_campaign(tmp_path, warehouses, shards, stage="after_run", tables=True):
    """A planned TPC-C campaign on SQLite with a check at ``stage``, its tables created empty
    (``tables``): (store, event of the stage's prepare call)."""
    from dbswarm import bindings
    from dbswarm.bindings.base import Connection
    from dbswarm.results.store import open_store
    from dbswarm.run.runtime import service
    plan = service.plan_campaign({"campaign": {
        "name": "c", "target": {"engine": "sqlite"}, "phases": ["run"] if stage == "after_run" else ["load", "run"],
        "fanout": {"shards": shards},
        "workload": {"family": "tpcc", "warehouses": warehouses, "threads": shards, "time": 1, "check": [stage]}},
        "results": str(tmp_path)})
    assert plan["runs"][0]["shard_count"] == shards
    store = open_store(plan["store"])
    cid, rid = plan["campaign_id"], plan["runs"][0]["run_id"]
    if tables:
        url = service.load_plan(store, cid, rid).run(rid).target["url"]
        b = bindings.get("sqlite")(Connection(engine="sqlite", url=url, password=None, options={}, display="sqlite"))
        b.connect()
        FAMILY.prepare(b, FAMILY.workload({"family": "tpcc", "warehouses": warehouses}), "before_load")
        b.close()
    return store, {"store": plan["store"], "campaign_id": cid, "run_id": rid, "stage": stage}


@pytest.mark.parametrize("units, shards, expected", [
    (2, 2, [(0, 1), (1, 2)]), (5, 2, [(0, 3), (3, 5)]), (1, 3, [(0, 1)]), (3, 3, [(0, 1), (1, 2), (2, 3)])])
def test_check_ranges_are_contiguous_disjoint_and_one_per_shard(units, shards, expected):
    from dbswarm.engine import checks
    n = min(units, shards)
    assert [checks.range_bounds(units, n, i) for i in range(n)] == expected


def test_check_ranges_at_most_the_inline_maps_concurrency(tmp_path):
    from dbswarm.engine import checks
    from dbswarm.run.runtime import service
    store, ev = _check_campaign(tmp_path, 50, 45, tables=False)
    run = service.load_plan(store, ev["campaign_id"], ev["run_id"]).run(ev["run_id"])
    assert run.shard_count == 45 and checks.range_count(run, "after_run") == checks.MAX_RANGES == 40
    assert checks.range_count(run, "after_load") == 0  # no check asked for after the load


def test_a_check_range_goes_on_over_calls_and_the_merge_names_every_warehouse(tmp_path):
    """The service's check after the run: 3 warehouses over 2 shards, two ranges (warehouses 1-2,
    3), calls of (at most) a few milliseconds: each call checks one warehouse (at least one,
    whatever its limit) and stores where it stopped (``check-after_run-<i>.json``); range 1's
    second call goes on from there (warehouse 2 only, warehouse 1 not checked again); the merge
    puts every range's failures, in warehouse order, into the stage's check (empty tables: the
    population condition fails on each warehouse)."""
    from dbswarm.results.store import check_range_key
    from dbswarm.run.runtime import service
    store, event = _check_campaign(tmp_path, 3, 2)
    cid, rid = event["campaign_id"], event["run_id"]
    stage = service.prepare_run(event)
    assert stage["check_ranges"] == [0, 1]
    key = lambda i: check_range_key(store, cid, rid, "after_run", i)  # noqa: E731
    assert [store.get_json(key(i))["next"] for i in (0, 1)] == [0, 2]  # started afresh by the stage
    call = dict(event, action="check_range", max_call_seconds=0.001)
    first = service.check_call(dict(call, range=0))
    assert first["more"] is True and (first["first"], first["end"], first["checked"]) == (0, 2, 1)
    progress = store.get_json(key(0))
    assert progress["next"] == 1 and progress["calls"] == 1 and {f["warehouse"] for f in progress["failures"]} == {1}
    assert service.check_call(dict(call, range=1))["more"] is False
    second = service.check_call(dict(call, range=0))  # a new call (a new process in the state machine) goes on
    assert second["more"] is False and second["checked"] == 2
    progress = store.get_json(key(0))
    assert progress["calls"] == 2 and [f["warehouse"] for f in progress["failures"]].count(1) == 3  # not again
    assert service.check_call(dict(call, range=0))["more"] is False  # a retried call: nothing more
    doc = store.get_json(store.key(cid, "runs", rid, "prepare-after_run.json"))
    assert "check" not in (doc.get("family") or {})  # not before the merge
    merged = service.check_call(dict(event, action="check_merge"))
    assert merged == {"run_id": rid, "stage": "after_run", "ranges": 2, "passed": False, "failures_total": 9,
                      "error": False}
    check = store.get_json(store.key(cid, "runs", rid, "prepare-after_run.json"))["family"]["check"]
    assert (check["calls"], check["warehouses"], check["ranges"], check["passed"]) == (3, 3, 2, False)
    assert [f["warehouse"] for f in check["failures"]] == [1, 1, 1, 2, 2, 2, 3, 3, 3]
    assert {f["condition"] for f in check["failures"]} == {"4.3.3.1"}
    assert check["wall_seconds"] >= 0 and check["seconds"] > 0
    # the stage run again (a retried or resumed prepare call) starts its check afresh
    assert service.prepare_run(event)["check_ranges"] == [0, 1]
    assert store.get_json(key(0))["next"] == 0 and store.get_json(key(0))["failures"] == []


def test_a_check_range_that_cannot_run_after_the_run_fails_the_check_not_the_campaign(tmp_path):
    """After the run, a range whose check raises (here: no tables) records the error; the merge
    makes the stage's check failed, naming the range, never raising. After the load it raises."""
    from dbswarm.run.runtime import service
    store, event = _check_campaign(tmp_path, 2, 2, tables=False)
    assert service.prepare_run(event)["check_ranges"] == [0, 1]
    answer = service.check_call(dict(event, action="check_range", range=1))
    assert answer["more"] is False and "OperationalError" in answer["error"]
    service.check_call(dict(event, action="check_range", range=0))
    service.check_call(dict(event, action="check_merge"))
    doc = store.get_json(store.key(event["campaign_id"], "runs", event["run_id"], "prepare-after_run.json"))
    assert not doc["family"]["check"]["passed"] and doc["error"] == doc["family"]["check"]["error"]
    assert "range 2 of 2 (warehouses 2): OperationalError" in doc["error"], doc["error"]

    store, event = _check_campaign(tmp_path / "load", 2, 2, stage="after_load", tables=False)
    with pytest.raises(Exception, match="no such table"):
        service.check_call(dict(event, action="check_range", range=0))


def test_gotpc_check_counts_as_passed_only_without_failed_in_its_output():
    """go-tpc's check exits 0 after printing "execute check failed": the benchmark reads both."""
    from bench.vs_gotpc import gotpc_check_passed
    assert gotpc_check_passed(0, "begin to check warehouse 1 at condition 3.3.2.1\nfinished\n")
    assert not gotpc_check_passed(0, "[2024-01-01] execute check failed, err check condition 3.3.2.4 failed")
    assert not gotpc_check_passed(1, "")


def test_a_window_that_includes_the_rampup_says_so_in_both_figures_and_why():
    """Issue 56, item 1: where the start edge could not be read when the ramp-up ended, NOPM and
    TPM both count the ramp-up, both bases say so and why, and the clients' transactions for
    the cross-check are the whole phase's as the server's are; a figure not read says
    "unavailable because" with the edge and the reason."""
    w = {"family": "tpcc", "warehouses": 2, "threads": 4, "time": 60, "rampup": 10}
    m = _measurement({"NEW_ORDER": 450, "PAYMENT": 430, "ORDER_STATUS": 40, "DELIVERY": 40, "STOCK_LEVEL": 40},
                     rollbacks=5, warm={"NEW_ORDER": 90}, retries=3)
    why = "the start edge read when the warm-up ended failed: server counters unavailable: OperationalError: gone"
    win = {"seconds": 71.0, "family": {"new_orders": 535}, "server": {"transactions": 1183}, "after_warmup_missed": why}
    model = FAMILY.workload(w)
    s = FAMILY.phase_summary(model, "run", m, 70.0, window=win)
    assert s["window_starts"] == "before the shards started"
    for basis in (s["NOPM_basis"], s["TPM_basis"]):
        assert f"its 10 s ramp-up included because {why}" in basis, basis
    assert "NOPM and TPM both count the ramp-up" in s["window_note"]
    assert FAMILY.window_client_statements(model, "run", m, win) == {"transactions": 1000 + 90 + 3}
    assert FAMILY.window_client_statements(model, "run", m, dict(win, after_warmup_s=10)) == {"transactions": 1003}
    unread = {"family": "end edge: InFailedSqlTransaction: aborted", "server": "start edge: PermissionError: no"}
    s = FAMILY.phase_summary(model, "run", m, 70.0, window={"seconds": 71.0, "unread": unread})
    assert s["NOPM"] is None and s["NOPM_basis"] == ("unavailable because the database's New-Orders were not read at "
                                                     "the end edge: InFailedSqlTransaction: aborted")
    assert s["TPM"] is None and s["TPM_basis"] == ("unavailable because the server's counters were not read at the "
                                                   "start edge: PermissionError: no")
