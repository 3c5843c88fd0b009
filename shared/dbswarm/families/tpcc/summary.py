"""TPC-C's figures (the white papers' and the specification's): the window edge's snapshot of
every district's d_next_o_id (``window_snapshot``), the clients' exact count of the New-Orders
in the database's window (``clients_in_window``), the run phase's summary (tpmC, tpmTotal,
NOPM, TPM, p90 against its limits, efficiency: ``phase_summary``), its CSV columns and its
report table."""
from __future__ import annotations

import time
from typing import Any, Optional

from dbswarm.bindings.protocols import SqlSession
from dbswarm.families import base as families
from dbswarm.families.tables import fmt, published_family_table
from dbswarm.families.tpcc import sql as S
from dbswarm.families.tpcc.model import (
    BAND_ORDERS,
    BAND_RECORDS,
    BAND_S,
    MIX,
    P90_LIMIT_S,
    TPMC_PER_WAREHOUSE_MAX,
    TRANSACTIONS,
    TpccWorkload,
)
from dbswarm.measure.recorder import Measurement

CSV = ("warehouses", "virtual_users", "TPM", "NOPM", "tpmC", "tpmTotal", "efficiency_pct", "new_orders_committed",
       "new_order_rollbacks", "errors", "retries")


def window_snapshot(binding: SqlSession, phase: str) -> Optional[dict]:
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


def all_counts(measurement: Measurement) -> dict[str, int]:
    """Transactions per type over the whole phase, warm-up included."""
    out = {t: 0 for t in TRANSACTIONS}
    for ops in (measurement.operations, measurement.warmup or {}):
        for t, s in ops.items():
            if t in out:
                out[t] += s.count
    return out


def client_statements(measurement: Measurement, after_warmup: bool) -> dict:
    """The clients' statements that are transactions in the server's counters: every event
    ended in one COMMIT or ROLLBACK (the 1% New-Orders), and every retried attempt in one more
    ROLLBACK; with a ramp-up (``after_warmup``) the window starts when it ends (the
    transactions of the ramp-up are out; its few retries are not told apart and stay in)."""
    if after_warmup:
        n = sum(s.count for t, s in measurement.operations.items() if t in MIX)
    else:
        n = sum(all_counts(measurement).values())
    return {"transactions": n + measurement.counters.get("retries", 0)}


def committed_new_orders(measurement: Measurement) -> int:
    """New-Orders committed over the whole phase (warm-up included): what the change of
    sum(d_next_o_id) over the same window counts."""
    c = measurement.counters
    return (all_counts(measurement)["NEW_ORDER"] - c.get("new_order_rollbacks", 0)
            - c.get("new_order_rollbacks_warmup", 0))


def clients_in_window(measurement: Measurement, start: Optional[dict]) -> tuple[Optional[int], str]:
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
    whole = committed_new_orders(measurement)
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


def phase_summary(w: TpccWorkload, phase: str, measurement: Measurement, duration: float,
                  window: Optional[dict] = None) -> Optional[dict]:
    """The phase's TPC-C figures: the load's rows; the run's clients' figures
    (``_clients_figures``), NOPM from the database and the clients' count of the same window
    (``_nopm``), TPM from the server's counters (``_tpm``), over the window's minutes."""
    if phase == "load":
        c = measurement.counters
        return {"rows_loaded": c.get("rows_loaded", 0), "units_skipped": c.get("units_skipped", 0),
                "warehouses": w.warehouses}
    if phase != "run":
        return None
    out = _clients_figures(w, measurement, duration)
    # Rates over the measured part of the phase's span (the shards' first start to their last
    # end). The end edge is read after the last shard ended; the start edge when the ramp-up
    # ended (shard 0's call reads it then: ``window_after_warmup``), or, with no ramp-up or when
    # that read was missed, before the start barrier: nothing of the workload commits between
    # that edge and the span's start, so the counts are the span's; dividing by the window's
    # length instead would count the start barrier's lead time as idle minutes.
    window = window or {}
    after_rampup = bool(window.get("after_warmup_s"))
    span_minutes = max(duration - (w.rampup if after_rampup else 0), 1e-9) / 60
    out["window_starts"] = "after the ramp-up" if after_rampup else "before the shards started"
    # both figures share the window; where a ramp-up was to be left out and is not, both say why
    rampup_in = ""
    if w.rampup and not after_rampup:
        why = window.get("after_warmup_missed") or "the start edge was not read when it ended"
        rampup_in = f" (its {w.rampup:g} s ramp-up included because {why})"
        out["window_note"] = f"NOPM and TPM both count the ramp-up{rampup_in}"
    unread = window.get("unread") or {}
    _nopm(out, measurement, window, window.get("family") or {}, unread, after_rampup, span_minutes, rampup_in)
    _tpm(out, measurement, window, unread, after_rampup, span_minutes, rampup_in)
    return out


def _clients_figures(w: TpccWorkload, measurement: Measurement, duration: float) -> dict:
    """The clients' figures over the measured window (the ramp-up left out): tpmC, tpmTotal,
    the mix, the p90 of each transaction against its limit (clause 5.2.5.3), efficiency."""
    minutes = max(duration - w.rampup, 1e-9) / 60
    ops, c = measurement.operations, measurement.counters
    counts = {t: (ops[t].count if t in ops else 0) for t in TRANSACTIONS}
    total = sum(counts.values())
    rbk = c.get("new_order_rollbacks", 0)
    out: dict[str, Any] = {
        "warehouses": w.warehouses, "virtual_users": w.threads, "measured_seconds": round(minutes * 60, 3),
        "rampup_seconds": w.rampup,
        "keying_and_thinking": w.keying_and_thinking,
        "tpmC": round(counts["NEW_ORDER"] / minutes, 1),
        "tpmC_basis": "New-Orders per minute of the measured window counted by the clients, the 1% rolled back "
                      "by design included (as go-tpc; clause 5.4.2); committed ones in new_orders_committed",
        "tpmTotal": round(total / minutes, 1),
        "transactions": counts, "new_orders_committed": counts["NEW_ORDER"] - rbk,
        "new_order_rollbacks": rbk,
        "new_orders_committed_whole_phase": committed_new_orders(measurement),
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
    if w.keying_and_thinking:
        out["efficiency_pct"] = round(100 * out["tpmC"] / (TPMC_PER_WAREHOUSE_MAX * w.warehouses), 2)
    else:
        out["efficiency_pct"] = None
        out["efficiency_note"] = ("keying and think times off (the default, as HammerDB and go-tpc): "
                                  "efficiency against 12.86 tpmC per warehouse does not apply")
    return out


def _nopm(out: dict, measurement: Measurement, window: dict, fam: dict, unread: dict, after_rampup: bool, span_minutes: float,
          rampup_in: str) -> None:
    """NOPM: the change of sum(d_next_o_id) over the window (HammerDB), and the clients' count of
    the same window beside it (exact where ``clients_in_window`` can place each New-Order)."""
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
        clients: Optional[int]
        if not after_rampup:
            clients = committed_new_orders(measurement)
            basis = ("New-Orders committed over the whole phase, ramp-up included (exact: the window is "
                     "the phase)")
        else:
            clients, basis = clients_in_window(measurement, window.get("family_start"))
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


def _tpm(out: dict, measurement: Measurement, window: dict, unread: dict, after_rampup: bool, span_minutes: float,
         rampup_in: str) -> None:
    """TPM: the server's commit + rollback counters over the window (HammerDB), less dbswarm's
    own transactions in it."""
    server = window.get("server") or {}
    c = measurement.counters
    if "transactions" in server:
        # dbswarm's own reads inside the window, where each is a transaction in the server's
        # counters (PostgreSQL): the start edge's one and each shard call's settings read
        own = int(window.get("own_transactions") or 0) + int(c.get(families.OWN_TRANSACTIONS, 0))
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


def csv_fields() -> list[str]:
    return ([f"tpcc_{k}" for k in CSV] + [f"tpcc_p90_ms_{t}" for t in TRANSACTIONS]
            + ["tpcc_p90_limits", "tpcc_check_after_load", "tpcc_check_after_run"])


def csv_values(name: str, run: dict, phase: str, result: dict) -> dict:
    """The TPC-C table's figures on the run phase's rows; the checks' outcome on every row."""
    out = {f"tpcc_check_{stage}": ("passed" if c.get("passed") else "failed")
           for stage, c in (run.get("checks") or {}).items()}
    s = result.get(name) if phase == "run" else None
    if s:
        out.update({f"tpcc_{k}": s.get(k) for k in CSV})
        out.update({f"tpcc_p90_ms_{t}": v for t, v in (s.get("p90_ms") or {}).items()})
        fails = [t for t, v in (s.get("p90_limit") or {}).items() if v == "fail"]
        out["tpcc_p90_limits"] = "fail: " + " ".join(fails) if fails else "pass"
    return out


def report_tables(runs: list) -> str:
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
