"""TPC-C against the real servers (PostgreSQL 15, MariaDB 10.11), checked against what the
database holds:

- load: 2 warehouses over 2 shards; one shard's process is killed (SIGKILL) after it
  committed its first district, then every shard runs in calls of 0.5 s (continue +
  checkpoint) until done: afterwards every table holds exactly the population of clause 4.3
  per warehouse (HISTORY has no key: a duplicated district would show there), the committed
  district was skipped, not written twice;
- the consistency conditions of clause 3.3.2 (and the population) pass after the load (the
  campaign's after_load stage, checked a warehouse per call: 2 calls) and after a 30 s run
  (after a 3 s ramp-up) of 4 virtual users over 2 shards, once per engine;
- New-Orders committed by the clients over the run phase equal the change of
  sum(d_next_o_id) read from the database before and after it (HammerDB's NOPM), and the
  campaign itself read the figure at its window's edges, the start edge when the ramp-up
  ended: NOPM and TPM (the server's commit + rollback counters) per minute of the measured
  window, in the result and in the TPC-C table of summary.md; the clients' New-Orders over
  that window (those around the ramp-up's end placed by their o_id against the start edge's
  d_next_o_id per district) equal the database's exactly.
"""
from __future__ import annotations

import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from dbswarm import bindings
from dbswarm.bindings.base import Connection
from dbswarm.families import base as families
from dbswarm.results.report.files import fmt
from dbswarm.run.runtime import service
from dbswarm.run.runtime.local import run_campaign
from tests import servers, timing

pytestmark = [pytest.mark.servers, pytest.mark.slow]

ROOT = Path(__file__).resolve().parents[2]
ENGINES = ("postgresql", "mysql")
WAREHOUSES = 2
RUN_S, RAMPUP_S = 30, 3  # the acceptance's 30 s run, once per engine
FAMILY = families.get("tpcc")
FAMILY_TRANSACTIONS = ("NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL")


@pytest.fixture(scope="module")
def env():
    return servers.start()


def connect(engine, env):
    t = servers.target(engine, env)
    b = bindings.get(engine)(Connection(engine=engine, url=t["url"], password=servers.password(env),
                                        options={}, display=engine))
    b.connect()
    return b


def population(b) -> dict:
    """Rows per table and warehouse, as the database counts them."""
    out = {}
    for table, col in (("warehouse", "w_id"), ("district", "d_w_id"), ("customer", "c_w_id"), ("history", "h_w_id"),
                       ("orders", "o_w_id"), ("new_order", "no_w_id"), ("order_line", "ol_w_id"),
                       ("stock", "s_w_id")):
        out[table] = {int(w): int(n) for w, n in b.fetchall(f"SELECT {col}, COUNT(*) FROM {table} GROUP BY {col}")}
    out["item"] = int(b.fetchone("SELECT COUNT(*) FROM item")[0])
    out["ol_cnt"] = {int(w): int(n) for w, n in b.fetchall("SELECT o_w_id, SUM(o_ol_cnt) FROM orders GROUP BY o_w_id")}
    return out


def _kill_after_first_district(event, engine, env):
    """Shard 1's load in its own process, killed as soon as it has committed a district."""
    code = ("import json, sys; from dbswarm.run.runtime import service; "
            "service.run_shard(json.loads(sys.argv[1]))")
    proc = subprocess.Popen([sys.executable, "-c", code, json.dumps(dict(event, shard=1))],
                            env=dict(os.environ, PYTHONPATH=f"{ROOT / 'shared'}:{ROOT}"))
    b = connect(engine, env)
    try:
        deadline = time.time() + 120
        while time.time() < deadline and proc.poll() is None:
            if int(b.fetchone("SELECT COUNT(*) FROM district WHERE d_w_id = 2")[0]) >= 1:
                break
            time.sleep(0.05)
        proc.send_signal(signal.SIGKILL)
        proc.wait()
        written = int(b.fetchone("SELECT COUNT(*) FROM district WHERE d_w_id = 2")[0])
    finally:
        b.close()
    assert 1 <= written < 10, f"the killed shard should have committed some districts of warehouse 2, not {written}"
    return written


def _resuming_shards(calls: dict, kill=None):
    """run_shards for service.run_steps: every shard in its own thread, in calls of 0.5 s that
    answer continue with a checkpoint until the shard is done (the state machine's loop)."""
    def run_shards(event, shard_count):
        if kill and event["phase"] == "load":
            kill(event)
        errors = []

        def one(i):
            try:
                cp = None
                while True:
                    out = service.run_shard(dict(event, shard=i, checkpoint=cp, max_call_seconds=0.5))
                    calls[event["phase"], i] = calls.get((event["phase"], i), 0) + 1
                    if out["status"] == "done":
                        return
                    cp = out["checkpoint"]
            except Exception as exc:  # pragma: no cover - reported below
                errors.append(exc)
        threads = [threading.Thread(target=one, args=(i,)) for i in range(shard_count)]
        for t in threads:
            t.start()
        for t in threads:
            t.join()
        assert not errors, errors
    return run_shards


def _result(out) -> dict:
    return json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())


@pytest.mark.parametrize("engine", ENGINES)
def test_tpcc_load_killed_resumes_checks_pass_and_nopm_matches(engine, env, tmp_path, monkeypatch):
    target = servers.target(engine, env)
    # the load's 0.5 s calls: on a loaded machine one district takes seconds (8-10 s seen under two CPU
    # hogs); a call waits for its unit instead of abandoning the thread after 10 s (whose unit the next
    # call would then find committed and skip: one skip more than the killed shard's)
    from dbswarm.engine import shard_state
    monkeypatch.setattr(shard_state, "STUCK_THREAD_GRACE_S", timing.timeout(60))
    workload = {"family": "tpcc", "warehouses": WAREHOUSES, "threads": 2, "check": ["after_load"]}

    # ---- load: shard 1 killed after its first district, then all shards resumed in 0.5 s calls
    calls: dict = {}
    killed = {}
    out = service.run_steps(
        {"name": f"tpcc-load-{engine}", "seed": 3, "target": target, "workload": workload,
         "fanout": {"shards": 2}, "phases": ["prepare", "load"]}, str(tmp_path / "load"),
        _resuming_shards(calls, kill=lambda ev: killed.setdefault("n", _kill_after_first_district(ev, engine, env))),
        lead_seconds=0.2, max_call_seconds=0.01)
    res = _result(out)
    load = res["runs"][0]["phases"]["load"]
    assert load["status"] == "complete", (load.get("shards"), load.get("error_problems"), load.get("errors"))
    assert max(calls.values()) > 1, calls  # the load went on over continued calls
    # the districts the killed process committed were found and skipped, not written again
    assert load["tpcc"]["units_skipped"] == killed["n"], (load["tpcc"], killed)
    assert load["operations"]["LOAD_DISTRICT"]["count"] == 10 * WAREHOUSES
    assert load["operations"]["LOAD_ITEMS"]["count"] == 10

    b = connect(engine, env)
    try:
        pop = population(b)
        per_w = {w: 1 for w in range(1, WAREHOUSES + 1)}
        assert pop["warehouse"] == per_w
        assert pop["district"] == {w: 10 for w in per_w}
        assert pop["item"] == 100_000
        assert pop["stock"] == {w: 100_000 for w in per_w}
        assert pop["customer"] == {w: 30_000 for w in per_w}
        assert pop["history"] == {w: 30_000 for w in per_w}  # no key: a district written twice shows here
        assert pop["orders"] == {w: 30_000 for w in per_w}
        assert pop["new_order"] == {w: 9_000 for w in per_w}
        assert pop["order_line"] == pop["ol_cnt"]
        assert all(270_000 <= n <= 330_000 for n in pop["order_line"].values()), pop["order_line"]
        bc = b.fetchone("SELECT SUM(CASE WHEN c_credit = 'BC' THEN 1 ELSE 0 END), COUNT(*) FROM customer")
        assert 0.08 < int(bc[0]) / int(bc[1]) < 0.12

        # the campaign's after_load stage ran the consistency check
        stage = json.loads((Path(out["store"]) / out["campaign_id"] / "runs" / res["runs"][0]["run_id"]
                            / "prepare-after_load.json").read_text())
        assert stage["family"]["check"]["passed"], stage["family"]["check"]["failures"]
        assert "3.3.2.11" in stage["family"]["check"]["conditions"] and "4.3.3.1" in stage["family"]["check"]["conditions"]
        # split over the 2 shards: a range of one warehouse each, checked at once, a call each
        check = stage["family"]["check"]
        assert (check["calls"], check["warehouses"], check["ranges"]) == (WAREHOUSES, WAREHOUSES, 2), check
        run_dir = Path(out["store"]) / out["campaign_id"] / "runs" / res["runs"][0]["run_id"]
        ranges = [json.loads((run_dir / f"check-after_load-{i}.json").read_text()) for i in (0, 1)]
        assert [(r["first"], r["end"], r["next"]) for r in ranges] == [(0, 1, 1), (1, 2, 2)], ranges

        # ---- run: 4 virtual users over 2 shards, RUN_S after a 3 s ramp-up; sum(d_next_o_id) read
        # before and after
        w = FAMILY.workload({"family": "tpcc", "warehouses": WAREHOUSES})
        before = FAMILY.window_snapshot(b, w, "run")
        out = run_campaign({"name": f"tpcc-run-{engine}", "seed": 4, "target": target,
                            "workload": {"family": "tpcc", "warehouses": WAREHOUSES, "threads": 4, "time": RUN_S,
                                         "rampup": RAMPUP_S, "check": ["after_run"]},
                            "fanout": {"shards": 2}, "phases": ["run"]},
                           str(tmp_path / "run"), show_progress=False, lead_seconds=0.5)
        after = FAMILY.window_snapshot(b, w, "run")
        run = _result(out)["runs"][0]["phases"]["run"]
        assert run["status"] == "complete", run.get("shards")
        s = run["tpcc"]
        assert s["tpmC"] > 0 and s["transactions"]["DELIVERY"] > 0 and s["transactions"]["STOCK_LEVEL"] > 0
        # errors only of the kind that is rolled back and retried (deadlocks, lock waits)
        assert all(k.split(":")[1] == "retryable" for k in run["errors"]), run["errors"]
        # HammerDB's NOPM: the database's count of committed New-Orders equals the clients', exactly
        database = after["new_orders"] - before["new_orders"]
        assert database == s["new_orders_committed_whole_phase"] > 0, (database, s)
        # ... and the campaign read it itself at the window's edges: the start edge when the ramp-up
        # ended (shard 0's call), the end edge after every shard ended (WindowEnd). Both exclude the
        # ramp-up. The clients' count of the same window is exact: the New-Orders they committed
        # around the ramp-up's end placed by o_id against the start edge's d_next_o_id per district
        # (the time-based count, new_orders_committed, is off by what commits while the edge is
        # read and what is in flight at it: printed for comparison)
        measured_s = run["duration_s"] - RAMPUP_S
        assert s["window_starts"] == "after the ramp-up", s
        window = run["server"]["family"]["new_orders"]
        print(f"\n{engine}: New-Orders in the window: database {window}, clients {s['new_orders_clients']} "
              f"({s['new_orders_agreement']}), by time {s['new_orders_committed']} "
              f"(off by {s['new_orders_committed'] - window:+d}; the ramp-up's "
              f"{run['counters'].get('new_order_rollbacks_warmup', 0)} rollbacks apart); whole phase {database}")
        assert s["new_orders_database"] == window == s["new_orders_clients"], s
        assert s["new_orders_agreement"] == "exact" and s["new_orders_difference"] == 0, s
        assert "exact: the edge was read inside every band" in s["new_orders_clients_basis"], s
        assert 0 < window < database, (window, database)  # the ramp-up's New-Orders are out
        assert s["NOPM"] == pytest.approx(window * 60 / measured_s, rel=2e-4), (s["NOPM"], measured_s)
        # the warm-up (ramp-up) kept apart: its seconds, and its table in summary.md
        assert run["warmup"]["seconds"] == RAMPUP_S, run.get("warmup")
        # TPM from the server's commit + rollback counters (server-wide: at least the clients' own)
        assert run["server"]["counters"]["transactions"] > 0, run["server"]
        own = s["TPM_dbswarm_own_transactions"]
        assert s["TPM"] == pytest.approx((run["server"]["counters"]["transactions"] - own) * 60 / measured_s,
                                         rel=2e-4), s
        if engine == "postgresql":
            # every autocommit statement and every session's start-up is a transaction in xact_commit:
            # dbswarm's own in the window are counted (the edges' reads, the shards' settings read,
            # the client threads' sessions) and left out, so the rest is the clients' own count, up
            # to what the start edge, read while the clients run, could not see yet (a backend
            # publishes its counts at most once a second: a second of commits at most) and the
            # server's autovacuum (it commits its own transactions)
            # the end edge's session and a settings read per shard call (the window starts after the
            # ramp-up: the client sessions began before it)
            assert own >= 1 + 2, s
            client = run["server"]["client"]["transactions"]
            late = run["server"]["counters"]["transactions"] - own - client
            # "a second" is PostgreSQL's least interval between a backend's flushes: it flushes at its
            # first idle moment after it, which on a loaded machine comes later (1.23 s of commits
            # under two CPU hogs): the bound on that lag scales with the load as a timeout does
            allowed = client / measured_s * timing.scale() + 4 * (1 + run["server"]["counters"].get("autovacuum_runs", 0))
            print(f"postgresql: transactions in the window: server {late + own + client} = clients {client} + "
                  f"dbswarm's own {own} + {late} not placed (allowed {allowed:.0f})")
            assert -4 <= late <= allowed, (late, allowed, run["server"])
        if engine == "mysql":  # MariaDB counts every COMMIT / ROLLBACK statement: the clients' are a lower bound,
            # up to what commits while the start edge is read (the read is not an instant: 20-40 ms on
            # this shared machine) and what is in flight at it, allowed as 0.1 s of transactions + 4
            client = run["server"]["client"]["transactions"]
            assert run["server"]["counters"]["transactions"] >= client - (4 + 0.1 * timing.scale() * client / measured_s), \
                run["server"]
        # the TPC-C table of summary.md shows both
        summary = (Path(out["store"]) / out["campaign_id"] / "summary.md").read_text()
        assert "### Warm-up" in summary
        row = next(line for line in summary.splitlines() if line.startswith("| ") and f"| {WAREHOUSES} | 4 |" in line)
        cells = [c.strip() for c in row.split("|")]
        assert cells[4] == fmt(s["TPM"]) and cells[5] == fmt(s["NOPM"]), (row, s["TPM"], s["NOPM"])

        # the campaign's after_run stage checked the conditions (3.3.2.11 only holds after the load)
        res = _result(out)
        assert res["status"] == "complete", res["status"]
        after_run = res["runs"][0]["checks"]["after_run"]
        assert after_run["passed"] and len(after_run["conditions"]) == 12, after_run
        assert "**Consistency checks passed**" in summary and "after_run (12 conditions" in summary
        # result.csv: the family's columns on the run phase's rows (TPM, NOPM, tpmC, p90s, the check)
        import csv
        rows = list(csv.DictReader((Path(out["store"]) / out["campaign_id"] / "result.csv").open()))
        run_rows = [r for r in rows if r["phase"] == "run"]
        assert {r["operation"] for r in run_rows} == set(FAMILY_TRANSACTIONS), run_rows
        for r in run_rows:
            assert float(r["tpcc_NOPM"]) == s["NOPM"] and float(r["tpcc_TPM"]) == s["TPM"], r
            assert float(r["tpcc_tpmC"]) == s["tpmC"] and int(r["tpcc_warehouses"]) == WAREHOUSES
            assert float(r["tpcc_p90_ms_NEW_ORDER"]) == s["p90_ms"]["NEW_ORDER"]
            assert r["tpcc_check_after_run"] == "passed" and r["tpcc_p90_limits"] == "pass"
        # the consistency conditions still hold after the run, checked again here
        result = FAMILY.check(b, w)
        assert result["passed"], result["failures"]
        assert len(result["conditions"]) == 12
    finally:
        b.close()


def test_tpm_on_postgresql_is_the_clients_transactions_exactly_when_the_window_starts_before_the_shards(env, tmp_path):
    """Issue 34, item 6: every autocommit statement and every session's start-up is a transaction
    in PostgreSQL's xact_commit. dbswarm's own in the window (the edges' reads, each in one
    transaction; the shards' settings reads; the client threads' sessions) are counted and left
    out of TPM, and the start edge waits for the counters to settle (the lock's session, just
    ended, publishes its commits a moment later): the rest is the clients' count exactly, but
    for the server's autovacuum (its own transactions; a worker's visit commits one or two)."""
    target = servers.target("postgresql", env)
    # the tables just loaded and run by the tests above are autovacuum's next work: its worker,
    # visiting them, commits transactions of its own in this database (a CI run: 4 in the window,
    # no vacuum or analyze completed), so it is kept off these tables for the window
    b = connect("postgresql", env)
    tables = [t for t, in b.fetchall("SELECT relname FROM pg_stat_user_tables")]
    try:
        for t in tables:
            b.execute(f'ALTER TABLE "{t}" SET (autovacuum_enabled = false)')
        out = run_campaign({"name": "tpm-exact", "target": target, "phases": ["run"], "fanout": {"shards": 2},
                            "workload": {"family": "tpcc", "warehouses": WAREHOUSES, "threads": 4, "time": 3}},
                           str(tmp_path), show_progress=False, lead_seconds=0.5)
    finally:
        for t in tables:
            b.execute(f'ALTER TABLE "{t}" RESET (autovacuum_enabled)')
        b.close()
    run = _result(out)["runs"][0]["phases"]["run"]
    assert run["status"] == "complete", run.get("shards")
    s, server = run["tpcc"], run["server"]
    own, client = s["TPM_dbswarm_own_transactions"], server["client"]["transactions"]
    assert s["window_starts"] == "before the shards started", s
    # the start edge's one, the end edge's session, 4 client sessions, a settings read per shard call
    assert own == 1 + 1 + 4 + 2, s
    late = server["counters"]["transactions"] - own - client
    # an autovacuum worker's visit to the database still commits a few of its own (it lists and
    # rechecks the tables, each in a transaction): 4 were seen in a CI run before the tables were
    # kept off its list; dbswarm's own, before they were counted, were 12-28 in such a window
    assert 0 <= late <= 6 + 4 * server["counters"]["autovacuum_runs"], (late, server)
    assert s["TPM"] == pytest.approx((client + late) * 60 / run["duration_s"], rel=2e-4), s


def test_check_names_the_broken_condition_and_district(env):
    """A consistency check that can fail: on data loaded by the test above (or any TPC-C load on
    PostgreSQL), a district's year-to-date changed without its history breaks 3.3.2.1 and 3.3.2.9
    for that warehouse and district; restored afterwards."""
    b = connect("postgresql", env)
    try:
        if not int(b.fetchone("SELECT COUNT(*) FROM district WHERE d_w_id = 1 AND d_id = 3")[0]):
            pytest.fail("no TPC-C data on PostgreSQL: run the load test first (same module)")
        b.execute("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 1 AND d_id = 3")
        try:
            result = FAMILY.check(b, FAMILY.workload({"family": "tpcc", "warehouses": 1}))
        finally:
            b.execute("UPDATE district SET d_ytd = d_ytd - 1 WHERE d_w_id = 1 AND d_id = 3")
        assert not result["passed"]
        found = {(f["condition"], f["warehouse"], f["district"]) for f in result["failures"]}
        assert found == {("3.3.2.1", 1, None), ("3.3.2.9", 1, 3)}, result["failures"]
    finally:
        b.close()


def _break_warehouse_2(b):
    b.execute("UPDATE district SET d_ytd = d_ytd + 1 WHERE d_w_id = 2 AND d_id = 3")


def _restore_warehouse_2(b):
    b.execute("UPDATE district SET d_ytd = d_ytd - 1 WHERE d_w_id = 2 AND d_id = 3")


def _short_run_checked_after(env, tmp_path, name: str, seed: int, shards: int) -> dict:
    """A 2 s run-only campaign on the PostgreSQL data the load test left, checked after the run."""
    return run_campaign({"name": name, "seed": seed, "target": servers.target("postgresql", env),
                         "workload": {"family": "tpcc", "warehouses": WAREHOUSES, "threads": 2, "time": 2,
                                      "check": ["after_run"]},
                         "fanout": {"shards": shards}, "phases": ["run"]},
                        str(tmp_path), show_progress=False, lead_seconds=0.3)


def test_the_check_after_the_run_is_split_over_the_shards_names_warehouse_2_and_marks_the_campaign(env, tmp_path):
    """The state machine (local mode) checks after the run in two ranges, one per shard, at once
    (the CheckRanges Map: two prepare function processes under way together): warehouse 2's
    district 3 year-to-date changed without its history (on the data the load test left; the run
    does not repair it) is found by the second range and named in the merged check. The failed
    check marks the campaign: its status is check_failed, result.json's run checks and summary.md
    name the conditions and the district (`dbswarm run` exits 8 on this status), the measurement
    itself complete. Restored after."""
    b = connect("postgresql", env)
    try:
        if int(b.fetchone("SELECT COUNT(*) FROM district WHERE d_w_id = 2")[0]) != 10:
            pytest.fail("no TPC-C data on PostgreSQL: run the load test first (same module)")
        _break_warehouse_2(b)
        try:
            out = _short_run_checked_after(env, tmp_path, "tpcc-check-split", 6, shards=2)
        finally:
            _restore_warehouse_2(b)
    finally:
        b.close()
    res = _result(out)
    assert out["status"] == res["status"] == "check_failed", (out["status"], res["status"])
    assert res["runs"][0]["phases"]["run"]["status"] == "complete"  # the measurement itself is complete
    check = res["runs"][0]["checks"]["after_run"]
    assert (check["passed"], check["warehouses"], check["ranges"]) == (False, WAREHOUSES, 2), check
    assert {(f["condition"], f["warehouse"], f["district"]) for f in check["failures"]} == {
        ("3.3.2.1", 2, None), ("3.3.2.9", 2, 3)}, check["failures"]
    run_dir = Path(out["store"]) / out["campaign_id"] / "runs" / res["runs"][0]["run_id"]
    ranges = [json.loads((run_dir / f"check-after_run-{i}.json").read_text()) for i in (0, 1)]
    assert [(r["first"], r["end"], r["next"]) for r in ranges] == [(0, 1, 1), (1, 2, 2)], ranges
    assert ranges[0]["failures"] == [] and {f["warehouse"] for f in ranges[1]["failures"]} == {2}
    trace = json.loads((Path(out["store"]) / out["campaign_id"] / "execution.json").read_text())
    assert trace["states_entered"]["CheckRange"] == 2 and trace["states_entered"]["CheckMerge"] == 1, trace
    assert trace["function_peak_concurrency"]["PrepareFunction"] == 2, trace  # the two ranges at once
    summary = (Path(out["store"]) / out["campaign_id"] / "summary.md").read_text()
    assert "after_run: **FAILED**" in summary and "3.3.2.9" in summary and "district 3" in summary


def test_the_check_command_with_two_jobs_names_warehouse_2(env, tmp_path):
    """`dbswarm check --jobs 2`: warehouses 1 and 2 checked on two
    connections at once, a progress line per warehouse on stderr; the broken condition of
    warehouse 2 (the second range) named, exit status 1; the same failures with --jobs 1."""
    import yaml
    path = tmp_path / "tpcc.yaml"
    path.write_text(yaml.safe_dump({"name": "tpcc-check-command", "target": servers.target("postgresql", env),
                                    "workload": {"family": "tpcc", "warehouses": WAREHOUSES}}))
    command = [sys.executable, "-m", "dbswarm", "check", str(path)]
    run_env = dict(os.environ, PYTHONPATH=f"{ROOT / 'shared'}:{ROOT}")
    b = connect("postgresql", env)
    try:
        before = b.fetchone("SELECT now()")[0]
        _break_warehouse_2(b)
        try:
            two = subprocess.run(command + ["--jobs", "2"], capture_output=True, text=True, timeout=300, env=run_env)
            one = subprocess.run(command + ["--jobs", "1", "--json"], capture_output=True, text=True, timeout=300,
                                 env=run_env)
        finally:
            _restore_warehouse_2(b)
        # the command analyzed the tables first: unanalyzed (a load by another tool), condition
        # 3.3.2.10 was planned as nested loops and ran for more than 15 minutes on 2 warehouses
        analyzed = dict(b.fetchall("SELECT relname, last_analyze >= %s FROM pg_stat_user_tables "
                                   "WHERE relname IN ('customer', 'orders', 'order_line', 'history')", (before,)))
    finally:
        b.close()
    assert analyzed == {"customer": True, "orders": True, "order_line": True, "history": True}, analyzed
    assert two.returncode == 1, two.stderr[-3000:]
    assert "FAILED" in two.stdout and "2 warehouses" in two.stdout, two.stdout
    assert "3.3.2.9" in two.stdout and "warehouse 2, district 3" in two.stdout, two.stdout
    assert "warehouse 1, " not in two.stdout, two.stdout
    lines = [line for line in two.stderr.splitlines() if line.startswith("check ")]
    assert len(lines) == 2 and "(1/2, " in lines[0] and "(2/2, 2 failures so far)" in lines[1], two.stderr
    assert one.returncode == 1, one.stderr[-3000:]
    check = json.loads(one.stdout)[0]["check"]
    assert {(f["condition"], f["warehouse"], f["district"]) for f in check["failures"]} == {
        ("3.3.2.1", 2, None), ("3.3.2.9", 2, 3)}, check["failures"]


@pytest.mark.parametrize("name", ["tpcc-postgresql.yaml", "tpcc-mariadb.yaml"])
def test_tpcc_examples_are_valid_campaigns(name, monkeypatch):
    from dbswarm.campaign.spec import load_campaign
    monkeypatch.setenv("DBSWARM_PASSWORD", "not-used-here")
    campaign, runs = load_campaign(str(ROOT / "examples" / name))
    assert [r.workload.threads for r in runs] == [4, 8, 16]
    for run in runs:
        assert run.target.password.env == "DBSWARM_PASSWORD" and "127.0.0.1" in run.target.url
        assert run.workload.family == "tpcc" and run.workload.warmuptime == run.workload.rampup > 0


def test_dbswarm_run_of_the_example_prints_the_tpcc_table(env, tmp_path):
    """`dbswarm run examples/tpcc-postgresql.yaml`, shrunk to seconds (URL, password reference,
    sizes replaced; the run phase only, on the 2 warehouses the load test above left)."""
    import yaml
    data = yaml.safe_load((ROOT / "examples" / "tpcc-postgresql.yaml").read_text())
    t = servers.target("postgresql", env)
    data["target"].update(url=t["url"], password=t["password"])
    # the run phase only: its after_load check could never run (validation refuses it); the
    # after_run check is the tests' above (here seconds of CPU more, and nothing checked of it)
    data["workload"].update(warehouses=WAREHOUSES, time=3, rampup=1, check=[])
    data["matrix"] = {"threads": [2]}
    data["phases"] = ["run"]
    data["results"] = str(tmp_path)
    path = tmp_path / "tpcc.yaml"
    path.write_text(yaml.safe_dump(data))
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "run", str(path)], capture_output=True, text=True,
                          timeout=120, env=dict(os.environ, PYTHONPATH=f"{ROOT / 'shared'}:{ROOT}", COLUMNS="200"))
    assert proc.returncode == 0, proc.stderr[-3000:]
    text = proc.stdout + proc.stderr
    assert "### TPC-C" in text or "TPC-C" in text, text[-3000:]
    assert "NOPM" in text and "tpmC" in text
    # the progress display (stderr): the run phase's line with its counts, rate, errors and time
    assert "ops/s" in proc.stderr and " err" in proc.stderr, proc.stderr[-3000:]
    row = [line for line in text.splitlines() if "PostgreSQL 15, laptop" in line and "|" in line]
    assert row, text[-3000:]


def test_the_state_machine_checks_ranges_in_parallel_after_the_load_and_the_run(tmp_path):
    """Local mode (the template's state machine): 3 warehouses over 2 shards on SQLite, calls of
    0.3 s: after the load and after the run the check is split into two ranges (warehouses 1-2,
    3) checked at once by the CheckRanges Map, each range's RangeMore? loop calling the prepare
    function again until the range is done (a warehouse per call), then CheckMerge."""
    out = run_campaign({"name": "tpcc-check-loop", "seed": 1, "target": {"engine": "sqlite"},
                        "workload": {"family": "tpcc", "warehouses": 3, "threads": 2, "time": 2,
                                     "check": ["after_load", "after_run"]},
                        "fanout": {"shards": 2}},
                       str(tmp_path), show_progress=False, lead_seconds=0.5, max_call_seconds=0.3)
    res = _result(out)
    assert res["status"] == "complete", res["status"]
    checks = res["runs"][0]["checks"]
    assert {k: (v["passed"], v["calls"], v["warehouses"], v["ranges"]) for k, v in checks.items()} == {
        "after_load": (True, 3, 3, 2), "after_run": (True, 3, 3, 2)}, checks
    run_dir = Path(out["store"]) / out["campaign_id"] / "runs" / res["runs"][0]["run_id"]
    for stage in ("after_load", "after_run"):
        ranges = [json.loads((run_dir / f"check-{stage}-{i}.json").read_text()) for i in (0, 1)]
        assert [(r["first"], r["end"], r["next"], r["calls"]) for r in ranges] == [(0, 2, 2, 2), (2, 3, 3, 1)], ranges
    trace = json.loads((Path(out["store"]) / out["campaign_id"] / "execution.json").read_text())
    entered = trace["states_entered"]
    assert (entered["CheckRanges"], entered["CheckRange"], entered["RangeDone"], entered["CheckMerge"]) == (2, 6, 4, 2)
    assert trace["function_peak_concurrency"]["PrepareFunction"] == 2, trace  # two ranges at once
    summary = (Path(out["store"]) / out["campaign_id"] / "summary.md").read_text()
    assert "after_load (13 conditions" in summary and "in 2 ranges at once" in summary, summary
