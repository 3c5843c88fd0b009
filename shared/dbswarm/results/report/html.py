"""report.html: one self-contained page (opens offline) with the campaign's overview, the
white-paper tables and, per run and phase, charts drawn by uPlot (vendored in
``dbswarm/static`` with its MIT license, embedded in the page):

- throughput over time (per operation type and in total, all shards summed; per shard in a
  folded section when the result has ``shard_series``),
- p50 / p99 / p99.9 latency over time (the per-interval histograms, merged across shards),
- the latency percentile spectrum per operation type (HdrHistogram's percentile
  distribution: x = 1 / (1 - percentile) on a log axis, labelled "90%, 99%, 99.9%, ..."),
- errors by class, what was retried, the start skew per shard, and for a matrix campaign
  throughput and p99 against threads.

Each chart is a small JSON spec (``charts``); ``static/report.js`` draws them and writes what
it drew into ``pre#dbswarm-render-status``, which the browser test reads back.
"""
from __future__ import annotations

import html
import json
import math
import time
from importlib import resources
from typing import Any, Callable, Optional

import markdown_it  # rich depends on it, so it is always installed

from dbswarm import __version__
from dbswarm.families.tables import measured_phase
from dbswarm.measure.recorder import decode_histogram
from dbswarm.results.phase import PhaseResult, phases_of
from dbswarm.results.report import markdown
from dbswarm.results.report.client_note import ACCEPT, MEASURE_DB, client_note, client_phases

MIN_POINTS = 2  # a time chart needs two points; a shorter phase gets a note instead
MIN_CHART_SECONDS = 3  # throughput over fewer seconds is a stub of a line: the phase gets a note instead
COLORS = {"p50": "#16a34a", "p99": "#ea580c", "p99.9": "#dc2626", "max": "#6b7280", "total": "#111827",
          "errors": "#dc2626"}
# what the worker did after an error of each kind (errors.py)
ERROR_KIND_ACTION = {"retryable": "rolled back and retried", "connection": "reconnected, then retried",
                     "duplicate": "counted, not retried (a key that exists)", "fatal": "counted, not retried"}


def _static(name: str) -> str:
    return resources.files("dbswarm").joinpath("static", name).read_text(encoding="utf-8")


def _e(v: Any) -> str:
    return html.escape(str(v))


def _fmt(v: Any, digits: int = 0) -> str:
    if v is None:
        return "–"
    if isinstance(v, float) and digits:
        return f"{v:,.{digits}f}"
    return f"{round(v):,}"


def _when(epoch: Optional[float]) -> str:
    if not isinstance(epoch, (int, float)):
        return "–" if epoch is None else str(epoch)
    return time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(epoch))


def _slug(*parts: Any) -> str:
    return "c-" + "-".join("".join(ch if ch.isalnum() else "_" for ch in str(p)) for p in parts)


# ---- chart specs -----------------------------------------------------------------------------

def throughput_chart(cid: str, run_id: str, phase: str, p: PhaseResult) -> dict | None:
    tl = p.timeline or {}
    ops = {op: seq for op, seq in (tl.get("ops") or {}).items() if any(seq)}
    if tl.get("start") is None or not ops:
        return None
    n = max(len(v) for v in ops.values())
    errs = (list(tl.get("errors") or []) + [0] * n)[:n]
    totals = [sum(v[i] for v in ops.values() if i < len(v)) for i in range(n)]
    # the seconds the phase measured in: none before its first operation or error, none after its last
    # (a 6-s phase is drawn over 6 s, not over the timeline's whole seconds with zeros at its ends)
    busy = [i for i in range(n) if totals[i] or errs[i]]
    lo, hi = busy[0], busy[-1] + 1
    if hi - lo < max(MIN_POINTS, MIN_CHART_SECONDS):
        return None
    series = []
    if len(ops) > 1:
        series.append({"label": "all operations", "values": totals[lo:hi], "color": COLORS["total"], "width": 2})
    for op, seq in sorted(ops.items()):
        series.append({"label": op, "values": (list(seq) + [0] * (n - len(seq)))[lo:hi]})
    if any(errs):
        series.append({"label": "errors", "values": errs[lo:hi], "color": COLORS["errors"], "dash": [4, 3]})
    steady = p.steady.window if p.steady else None
    note = ""
    if steady and steady[1] > steady[0]:
        note = f"; steady window {steady[0] - tl['start']}–{steady[1] - tl['start']} s"
    return {"id": _slug(cid, run_id, phase, "tput"), "title": f"{run_id} · {phase}: throughput, all shards{note}",
            "x": list(range(lo, hi)), "xlabel": "seconds since the phase started", "ylabel": "operations / s",
            "yunit": " /s", "series": series}


def latency_chart(cid: str, run_id: str, phase: str, p: PhaseResult) -> dict | None:
    iv = p.intervals or {}
    allv = iv.get("all") or {}
    tl = p.timeline or {}
    if len(allv.get("count") or []) < MIN_POINTS or tl.get("start") is None:
        return None
    x = [iv["start"] + k * iv["interval_s"] - tl["start"] for k in range(iv["intervals"])]
    series = []
    for label, key in (("p50", "p50_us"), ("p99", "p99_us"), ("p99.9", "p99_9_us"), ("max", "max_us")):
        values = [v if v else None for v in allv.get(key) or []]  # a log axis: no zeros
        if any(v is not None for v in values):
            series.append({"label": label, "values": values, "color": COLORS[label],
                           "dash": [2, 3] if label == "max" else None})
    if not series:
        return None
    return {"id": _slug(cid, run_id, phase, "lat"),
            "title": f"{run_id} · {phase}: latency per {iv['interval_s']} s interval, all operations, all shards",
            "x": x, "xlabel": "seconds since the phase started", "ylabel": "latency, µs (log)", "ylog": True,
            "yunit": " µs", "series": series}


def percentile_spectrum(text: str, grid: list[float]) -> list:
    """The latency at percentile 100 (1 - 1/x) for each x of ``grid`` (HdrHistogram's
    percentile distribution), None past what the histogram's count can resolve."""
    h = decode_histogram(text)
    n = h.get_total_count()
    return [h.get_value_at_percentile(100.0 * (1 - 1 / x)) if n and x <= n else None for x in grid]


def spectrum_chart(cid: str, run_id: str, phase: str, p: PhaseResult) -> dict | None:
    hists = {op: t for op, t in (p.histograms or {}).items() if t}
    ops = p.operations or {}
    counts = {op: ops.get(op, {}).get("calls") or ops.get(op, {}).get("count") or 0 for op in hists}
    top = max(counts.values(), default=0)
    if not hists or top < 2:
        return None
    steps = 8  # points per decade of 1 / (1 - p)
    grid = [10 ** (k / steps) for k in range(int(math.log10(top) * steps) + 1)]
    series = []
    for op, text in sorted(hists.items()):
        values = percentile_spectrum(text, grid)
        if any(v for v in values):
            series.append({"label": op, "values": [v or None for v in values]})
    if not series:
        return None
    return {"id": _slug(cid, run_id, phase, "spec"),
            "title": f"{run_id} · {phase}: latency percentile spectrum (after warm-up)", "x": grid,
            "xlabel": "percentile", "xlog": True, "xpercent": True, "ylabel": "latency, µs (log)", "ylog": True,
            "yunit": " µs", "series": series}


def shard_chart(cid: str, run_id: str, phase: str, p: PhaseResult) -> dict | None:
    ss = p.shard_series or {}
    per = {s: seq for s, seq in (ss.get("ops") or {}).items() if any(seq)}
    tl = p.timeline or {}
    if not per or ss.get("start") is None or tl.get("start") is None:
        return None
    n = max(len(v) for v in per.values())
    step = ss.get("step_s", 1)
    if n * step < MIN_CHART_SECONDS or n < MIN_POINTS:  # a short load: one point per shard says nothing over time
        return None
    x = [ss["start"] - tl["start"] + k * step for k in range(n)]
    series = [{"label": f"shard {s}", "values": [v / step for v in seq] + [0] * (n - len(seq))}
              for s, seq in sorted(per.items(), key=lambda kv: int(kv[0]))]
    return {"id": _slug(cid, run_id, phase, "shards"), "title": f"{run_id} · {phase}: throughput per shard"
            + (f" ({step} s steps)" if step != 1 else ""), "x": x, "xlabel": "seconds since the phase started",
            "ylabel": "operations / s", "yunit": " /s", "series": series}


def client_charts(cid: str, run_id: str, phase: str, p: PhaseResult) -> list[dict]:
    """The client-health chart per shard over time (``client.series``: per-second samples of
    each shard's CPU share and wake-up delay; docs/client-health.md)."""
    c = p.client or {}
    series = c.get("series") or {}
    tl = p.timeline or {}
    if not series or tl.get("start") is None:
        return []
    t0 = tl["start"]
    grids: dict = {"cpu_share": {}, "wakeup_delay_us": {}}
    n = 0
    for shard, segs in series.items():
        for seg in segs:
            step = seg.get("step_s") or 1
            for key, grid in grids.items():
                row = grid.setdefault(shard, {})
                for k, v in enumerate(seg.get(key) or []):
                    sec = int(round(seg["start"] - t0 + (k + 1) * step))
                    if v is not None and sec >= 0:
                        row[sec] = v
                        n = max(n, sec + 1)
    # two samples of one shard at least: a phase of one sample per shard (a 2-s TPC-C load) starting
    # seconds into the timeline would otherwise get a chart of lone dots
    if n < MIN_POINTS or max((len(row) for grid in grids.values() for row in grid.values()), default=0) < MIN_POINTS:
        return []
    x = list(range(n))
    out = []
    for key, title, ylabel, unit, log in (
            ("cpu_share", "client CPU share per shard (process CPU over what it may use)", "share of its CPU", "",
             False),
            ("wakeup_delay_us", "client wake-up delay per shard (waiting for a CPU and the interpreter lock)",
             "µs (log)", " µs", True)):
        rows = grids[key]
        lines = [{"label": f"shard {s}", "values": [(rows[s].get(i) or None) if log else rows[s].get(i)
                                                    for i in range(n)]}
                 for s in sorted(rows, key=int) if rows[s]]
        if lines:
            spec: dict[str, Any] = {
                "id": _slug(cid, run_id, phase, "client", key), "title": f"{run_id} · {phase}: {title}",
                "x": x, "xlabel": "seconds since the phase started", "ylabel": ylabel, "yunit": unit,
                "series": lines}
            if log:
                spec["ylog"] = True
            out.append(spec)
    return out


def client_alert_html(result: dict) -> str:
    """The phases whose load generator was the bottleneck and not accepted: the first thing the
    report says, with what the user can do; phases bound and accepted, or near: one note line."""
    bound, _, _, _ = client_phases(result)
    if not bound:
        return _note_html(client_note(result))
    items = [f"<li>run {_e(run_id)}, {_e(name)} phase: {_e(c.get('reason', ''))}</li>" for run_id, name, c in bound]
    return ("<div class='client-bound'><b>The load generator was the bottleneck</b> (client verdict "
            "<code>bound</code>): these figures are the client's ceiling and its scheduling delay, not the "
            "database's.<ul>" + "".join(items) + f"</ul>To measure the database: {_e(MEASURE_DB)}. To accept these "
            f"figures as they are: <code>{_e(ACCEPT)}</code>.</div>")


def _note_html(note: Optional[str]) -> str:
    """An accepted client verdict's note as one line on the first screen (its head, up to the
    reasons in brackets), the whole note one click away: a long note pushed the first chart
    below a laptop window's fold."""
    if not note:
        return ""
    label, _, text = note.rpartition("Note: ")
    cut = min((i for i in (text.find(" ("), text.find("; "), text.find(": ")) if i > 0), default=-1)
    if cut < 0:
        return f"<p class='client-note'>{_e(note)}</p>"
    head = label + "Note: " + text[:cut]
    return f"<details class='client-note'><summary>{_e(head)} …</summary>{_e(note)}</details>"


def scaling_charts(cid: str, result: dict) -> list[dict]:
    """A matrix over threads: throughput and p99 of the measured phase against threads, one
    line per (instance, workload)."""
    groups: dict = {}
    for r in result["runs"]:
        _, d = measured_phase(r)
        if not d:
            continue
        p = PhaseResult.of(d)
        key = f"{r['target']['label']} · {r['workload']['name']}"
        p99 = max((s.get("p99_us") or 0 for s in (p.operations or {}).values()), default=0) or None
        groups.setdefault(key, {})[r["threads"]] = (p.throughput, p99)
    groups = {k: v for k, v in groups.items() if len(v) > 1}
    if not groups:
        return []
    threads = sorted({t for g in groups.values() for t in g})
    tput = [{"label": k, "values": [g.get(t, (None, None))[0] for t in threads]} for k, g in groups.items()]
    p99 = [{"label": k, "values": [g.get(t, (None, None))[1] for t in threads]} for k, g in groups.items()]
    return [{"id": _slug(cid, "scaling", "tput"), "title": "Throughput against client threads (steady state)",
             "x": threads, "xlabel": "client threads", "ylabel": "operations / s", "yunit": " /s", "series": tput},
            {"id": _slug(cid, "scaling", "p99"), "title": "p99 latency against client threads (slowest operation type)",
             "x": threads, "xlabel": "client threads", "ylabel": "p99, µs (log)", "ylog": True, "yunit": " µs",
             "series": p99}]


def search_charts(cid: str, result: dict) -> list[dict]:
    """A peak search (result.search): throughput and p99 against the stepped key, with the
    chosen peak and the knee marked as their own points."""
    out = []
    for i, c in enumerate((result.get("search") or {}).get("cells") or []):
        curve = [s for s in c.get("curve") or [] if s.get("throughput") is not None]
        if not curve:
            continue
        x = [s["value"] for s in curve]
        key = c.get("key") or "value"

        def mark(name: str, field: str, c: dict = c, curve: list = curve) -> list:
            # one point per mark, at its value's first run: a value run several times (its
            # samples pooled) is marked with the pooled figure, not once per run
            m = c.get(name) or {}
            first = next((k for k, s in enumerate(curve) if m and s["value"] == m["value"]), None)
            return [(m.get(field, s.get(field)) if k == first else None) for k, s in enumerate(curve)]
        tput = [{"label": "throughput", "values": [s["throughput"] for s in curve]}]
        tput += [{"label": name, "values": mark(name, "throughput")} for name in ("peak", "knee") if c.get(name)]
        out.append({"id": _slug(cid, "search", str(i), "tput"), "x": x, "xlabel": key, "ylabel": "operations / s",
                    "yunit": " /s", "series": tput,
                    "title": f"Peak search over {key} ({c['cell']}): throughput; stopped: "
                             f"{(c.get('stop') or {}).get('rule', 'not finished')}"})
        p99 = [s.get("p99_us") for s in curve]
        if any(v for v in p99):
            series = [{"label": "worst p99", "values": [v or None for v in p99]}]
            series += [{"label": name, "values": mark(name, "p99_us")} for name in ("peak", "knee") if c.get(name)]
            out.append({"id": _slug(cid, "search", str(i), "p99"), "x": x, "xlabel": key, "ylabel": "p99, µs (log)",
                        "ylog": True, "yunit": " µs", "series": series,
                        "title": f"Peak search over {key} ({c['cell']}): p99 latency (slowest operation type)"})
    return out


HISTORY_LABELS = {  # the verdict's metrics (regression.METRICS): what the history chart's y axis shows
    "throughput": ("operations / s", " /s"), "read_p99_us": ("read p99 latency, µs", " µs"),
    "write_p99_us": ("write p99 latency, µs", " µs"), "read_avg_us": ("read mean latency, µs", " µs"),
    "write_avg_us": ("write mean latency, µs", " µs")}


def history_charts(cid: str, result: dict) -> list[dict]:
    """The nightly history the verdict compared with (result.compare.series): every run's
    figure oldest first, tonight's runs, exactly the reference samples compared with, the
    flagged nights held out of it and the change points, each as their own points."""
    out = []
    for i, s in enumerate(((result.get("compare") or {}).get("series")) or []):
        values = s.get("values") or []
        if not values:
            continue
        x = list(range(1, len(values) + 1))
        tonight, ref_from, cps = s["tonight_from"], s.get("reference_from", 0), set(s.get("change_points") or [])
        # a series written before the compared samples were recorded: the segment from its start
        ref = set(s["reference"]) if "reference" in s else set(range(ref_from, tonight))
        held = set(s.get("held_out") or [])

        def only(keep: Callable[..., bool], values: list = values) -> list:
            return [v if keep(k) else None for k, v in enumerate(values)]
        series = [{"label": "history", "values": only(lambda k, tonight=tonight: k < tonight), "color": "#6b7280"},
                  {"label": "reference (compared)", "values": only(lambda k, r=ref: k in r),
                   "color": "#2563eb", "width": 2.5},
                  {"label": "tonight", "values": only(lambda k, tonight=tonight: k >= tonight), "color": "#16a34a",
                   "width": 2.5}]
        if held:
            series.append({"label": "flagged, held out", "values": only(lambda k, h=held: k in h),
                           "color": "#9333ea"})
        if cps:
            series.append({"label": "change point", "values": only(lambda k, cps=cps: k in cps), "color": "#dc2626"})
        ylabel, yunit = HISTORY_LABELS.get(s["metric"], (s["metric"], ""))
        where = ", ".join(f"run {k + 1} ({s['campaigns'][k]})" for k in sorted(cps) if k < len(s["campaigns"]))
        compared = (f"reference: {len(ref)} run(s) from run {ref_from + 1}"
                    + (f", {len(held)} flagged held out" if held else ""))
        out.append({"id": _slug(cid, "history", str(i), s["metric"]), "x": x, "xlabel": "run (oldest first)",
                    "ylabel": ylabel, "yunit": yunit, "series": series,
                    "title": f"History of {s['run_id']} {s['metric']}: {len(values)} runs; {compared}; "
                             f"change points: {where or 'none'}"})
    return out


# ---- HTML --------------------------------------------------------------------------------------

def _table(head: list[str], rows: list, cls: str = "") -> str:
    return (f"<table class='{cls}'><thead><tr>" + "".join(f"<th>{_e(h)}</th>" for h in head) + "</tr></thead><tbody>"
            + "".join("<tr>" + "".join(f"<td>{c}</td>" for c in row) + "</tr>" for row in rows) + "</tbody></table>")


def error_rows(result: dict) -> list[tuple]:
    """(run, phase, operation, kind, name, count, what was done) for every error class."""
    rows = []
    for r in result["runs"]:
        for name, p in phases_of(r):
            for key, count in sorted(p.errors.items()):
                op, _, rest = key.partition(":")
                kind, _, cls = rest.partition(":")
                rows.append((r["run_id"], name, op, kind, cls, count, error_action(r, name, kind)))
    return rows


# a multi-statement event (sysbench's transaction, TPC-C's, a TPC-C load unit) that hits a duplicate key
# is rolled back and run again (engine/calls.py: Measured.event), as sysbench does: its PostgreSQL driver
# rolls back and restarts the event on SQLSTATE 23505 (and 40P01, 40001); its MySQL driver ignores only
# --mysql-ignore-errors (default 1213,1020,1205) and stops on ER_DUP_ENTRY (1062) unless that is added;
# dbswarm restarts it on both engines. A batch of load rows that exists is counted as written
# (Measured.call_rows); a YCSB insert of an existing key is counted, not retried.


def error_action(run: dict, phase: str, kind: str) -> str:
    """What the worker did after an error of ``kind`` in ``run``'s ``phase``."""
    family = (run.get("workload") or {}).get("family")
    if kind == "duplicate":
        if family == "tpcc" or (family == "sysbench" and phase != "load"):  # events (sysbench's load: batches)
            return "rolled back, the event run again (as sysbench does on SQLSTATE 23505)"
        if phase == "load":
            return "counted as written (the rows were there: a resumed load)"
    return ERROR_KIND_ACTION.get(kind, "")


def overview_html(result: dict) -> str:
    items = [("campaign", f"{_e(result['name'])} (<code>{_e(result['campaign_id'])}</code>)"),
             ("status", f"<b class='status-{_e(result['status'])}'>{_e(result['status'])}</b>"
              + (f": {_e(result['failure'])}" if result.get("failure") else "")),
             ("created", _e(_when(result.get("created_at")))), ("seed", _e(result.get("seed"))),
             ("dbswarm", f"{_e(__version__)}, result schema {_e(result.get('schema_version'))}"),
             ("runs", f"{len(result['runs'])}" + (f", missing shards: {len(result['missing_shards'])}"
                                                  if result.get("missing_shards") else ""))]
    # one row of keys over one of values (was a row each): the first screen keeps room for a chart
    out = ["<h2>Overview</h2><table class='kv'><tr>" + "".join(f"<th>{k}</th>" for k, _ in items) + "</tr><tr>"
           + "".join(f"<td>{v}</td>" for _, v in items) + "</tr></table>"]
    errs = error_rows(result)
    if errs:
        out.append("<h3>Errors by class</h3>" + _table(
            ["run", "phase", "operation", "kind", "class", "count", "what dbswarm did"],
            [(_e(a), _e(b), _e(c), _e(d), _e(e), _fmt(f), _e(g) + (" <b>(retried)</b>" if d in ("retryable", "connection") else ""))
             for a, b, c, d, e, f, g in errs]))
    else:
        out.append("<p>No database errors in any phase.</p>")
    return "\n".join(out)


def targets_html(result: dict) -> str:
    """The targets' server version and settings: a detail, after the figures."""
    targets: dict = {}
    for r in result["runs"]:
        t = r["target"]
        entry = targets.setdefault((t["label"], t["engine"]), {"url": t.get("url"), "driver": set(), "server": {}})
        for _, p in phases_of(r):
            bs = p.binding_settings or {}
            if bs.get("driver"):
                entry["driver"].add(str(bs["driver"]) + (f" ({bs['driver_choice']})" if bs.get("driver_choice") else ""))
            if isinstance(bs.get("server"), dict) and not entry["server"]:
                entry["server"] = bs["server"]
        if not t.get("is_real_database"):
            entry["note"] = "noop binding: measures the load generator only"
    rows = []
    for (label, engine), e in targets.items():
        server = ", ".join(f"{_e(k)} <code>{_e(v)}</code>" for k, v in e["server"].items()) or "–"
        rows.append((_e(label), _e(engine), f"<code>{_e(e['url'] or '–')}</code>",
                     _e(", ".join(sorted(e["driver"])) or "–"), server + (f" <i>{_e(e['note'])}</i>" if e.get("note") else "")))
    return ("<h2>Targets: server version and durability settings, as the server reported them</h2>"
            + _table(["instance", "engine", "URL (redacted)", "client driver", "server settings"], rows, "left"))


def phase_html(cid: str, r: dict, name: str, p: PhaseResult, charts: list[dict]) -> str:
    head = (f"<h3 id='{_slug(cid, r['run_id'], name)}'>{_e(r['run_id'])} · {_e(name)} "
            f"<small>{_e(r['workload']['family'])} {_e(r['workload']['name'])}, {r['threads']} threads, "
            f"{r['shard_count']} shard{'s' if r['shard_count'] != 1 else ''}, {_e(p.status)}</small></h3>")
    if p.operations_total is None:
        return head + "<p>No shard of this phase reported a measurement.</p>"
    st = p.steady
    facts = [("operations", _fmt(p.operations_total)), ("errors", _fmt(p.errors_total)),
             ("duration", f"{p.duration_s} s"), ("ops/s overall", _fmt(p.ops_per_s)),
             ("ops/s steady", f"{_fmt(st.ops_per_s)} over {st.seconds} s" if st and st.ops_per_s is not None
              else "– (no steady window)")]
    skew = p.start_skew_s or {}
    if skew.get("max") is not None:  # None: no shard call waited at the start barrier (continuations)
        per = ", ".join(f"{s}: {v * 1000:.1f} ms" for s, v in sorted((skew.get("per_shard") or {}).items(),
                                                                     key=lambda kv: int(kv[0])) if v is not None)
        facts.append(("start skew", f"max {skew['max'] * 1000:.1f} ms" + (f" <small>({per})</small>" if per else "")))
    out = [head, "<p class='facts'>" + " · ".join(f"{k} <b>{v}</b>" for k, v in facts) + "</p>"]
    ops = p.operations or {}
    for maker in (throughput_chart, latency_chart, spectrum_chart):  # the charts first, the table after
        spec = maker(cid, r["run_id"], name, p)
        if spec:
            charts.append(spec)
            out.append(f"<div class='chart' id='{spec['id']}'></div>")
        elif maker is throughput_chart and (p.timeline or {}).get("start") is not None:
            out.append(f"<p class='note'>The phase lasted {p.duration_s} s: too short for a chart over "
                       "time (one point per second).</p>")
    if ops:
        cols = ["count", "errors", "avg_us", "p50_us", "p90_us", "p95_us", "p99_us", "p99_9_us", "max_us"]
        out.append(_table(["operation", "count", "errors", "avg µs", "p50", "p90", "p95", "p99", "p99.9", "max µs"],
                          [(_e(op),) + tuple(_fmt(s.get(c), 1 if c == "avg_us" else 0) for c in cols)
                           for op, s in sorted(ops.items())], "ops"))
    spec = shard_chart(cid, r["run_id"], name, p)
    if spec:
        charts.append(spec)
        out.append(f"<details><summary>Throughput per shard</summary><div class='chart' id='{spec['id']}'></div>"
                   "</details>")
    client = p.client or {}
    if client.get("verdict") and client["verdict"] != "unmeasured":
        specs = client_charts(cid, r["run_id"], name, p)
        charts += specs
        out.append(f"<details{' open' if client['verdict'] == 'bound' else ''}><summary>Client health: "
                   f"<b>{_e(client['verdict'])}</b> — {_e(client.get('reason', ''))}</summary>"
                   + "".join(f"<div class='chart' id='{s['id']}'></div>" for s in specs) + "</details>")
    srv = (p.server or {}).get("cross_check") or {}
    if srv:
        out.append("<h4>Client-counted against server-counted</h4>" + _table(
            ["figure", "client", "server", "client/server"],
            [(_e(f), _fmt(c.get("client")), _fmt(c.get("server")),
              f"{c['ratio']:.4f}" if c.get("ratio") is not None else "–") for f, c in srv.items()]))
    return "\n".join(out)


CSS = """
body{font-family:system-ui,-apple-system,"Segoe UI",sans-serif;max-width:1100px;margin:2em auto;padding:0 1em;color:#111827}
h1{font-size:1.6em}h2{border-bottom:2px solid #e5e7eb;padding-bottom:.2em;margin-top:1.8em}
h3 small{font-weight:normal;color:#6b7280}
table{border-collapse:collapse;margin:.6em 0;font-size:.9em}
td,th{border:1px solid #d1d5db;padding:3px 8px;text-align:right}
th{background:#f3f4f6}
table.left td,table.kv td,table.kv th{text-align:left}
code{font-size:.9em}
.facts{color:#374151}.note{color:#6b7280;font-style:italic}
.chart{margin:.8em 0}
.status-complete{color:#15803d}.status-partial,.status-complete_with_errors,.status-failed{color:#b91c1c}
.status-incomplete,.status-interrupted,.status-check_failed{color:#b45309}
details{margin:.5em 0}
pre#dbswarm-render-status{display:none}
.client-bound{border:2px solid #b91c1c;background:#fef2f2;padding:.6em 1em;margin:1em 0}
.client-note{color:#374151;border-left:3px solid #9ca3af;padding:.2em .8em;margin:1em 0}
"""


def server_lines(result: dict) -> list[str]:
    """One Markdown line per instance: the server's version and durability settings, as it
    reported them, and the client driver."""
    servers: dict = {}  # the server's version and durability settings, as it reported them
    for r in result["runs"]:
        for _, p in phases_of(r):
            bs = p.binding_settings or {}
            settings = bs.get("server")
            if settings:
                extra = {"client driver": bs["driver"]} if bs.get("driver") else {}
                if "fallback" in str(bs.get("driver_choice", "")):
                    extra["driver choice"] = bs["driver_choice"]
                servers.setdefault(r["target"]["label"], {**extra, **settings})
    return [f"- **{label}**: " + ", ".join(f"{k} `{v}`" for k, v in settings.items())
            for label, settings in servers.items()]


def report_html(result: dict, summary_md: str) -> str:
    cid = result["campaign_id"]
    charts: list[dict] = []
    sections = [overview_html(result)]
    search = search_charts(cid, result)
    if search:
        charts += search
        sections.append("<h2>Peak search</h2>" + "".join(f"<div class='chart' id='{s['id']}'></div>" for s in search))
    history = history_charts(cid, result)
    if history:
        charts += history
        sections.append("<h2>History</h2>" + "".join(f"<div class='chart' id='{h['id']}'></div>" for h in history))
    scaling = scaling_charts(cid, result)
    if scaling:
        charts += scaling
        sections.append("<h2>Scaling</h2>" + "".join(f"<div class='chart' id='{s['id']}'></div>" for s in scaling))
    # the title, status and server lines are the overview's
    escaped = markdown.escaped(result)  # summary.md was written from it
    skip = set(server_lines(escaped))
    note = client_note(escaped)  # said once, above the overview
    if note:
        skip.add(note.replace("Note:", "**Note**:", 1))
    tables = "\n".join(line for line in summary_md.splitlines()[3:] if line not in skip)
    # the figures first (each phase's charts), the white-paper tables and the details after
    sections.append("<h2>Runs</h2>")
    toc = []
    for r in result["runs"]:
        for name, p in phases_of(r):
            toc.append(f"<a href='#{_slug(cid, r['run_id'], name)}'>{_e(r['run_id'])} · {_e(name)}</a>")
            sections.append(phase_html(cid, r, name, p, charts))
    sections.append(targets_html(result))
    toc.append(f"<a href='#{_slug(cid, 'tables')}'>Tables</a>")
    sections.append(f"<h2 id='{_slug(cid, 'tables')}'>Tables</h2>"
                    + markdown_it.MarkdownIt("commonmark", {"html": False}).enable("table").render(tables))
    # one line on the first screen (a matrix campaign's dozens of phases wrapped over several,
    # pushing the first chart below the fold), the links one click away
    sections.insert(1, f"<details class='toc'><summary>Phases ({len(toc) - 1}) and tables</summary>"
                       + " · ".join(toc) + "</details>")
    data = json.dumps(charts, separators=(",", ":")).replace("</", "<\\/")
    return ("<!doctype html><html lang='en'><head><meta charset='utf-8'>"
            f"<title>dbswarm {_e(result['name'])} · {_e(cid)}</title>"
            f"<style>{_static('uPlot.min.css')}</style><style>{CSS}</style></head><body>"
            f"<h1>dbswarm campaign {_e(result['name'])}</h1>" + client_alert_html(result) + "\n".join(sections)
            + "<pre id='dbswarm-render-status'></pre>"
            + f"<script type='application/json' id='dbswarm-charts'>{data}</script>"
            + "<!-- uPlot 1.6.32, MIT License, Copyright (c) 2022 Leon Sorokin -->"
            + f"<script>{_static('uPlot.iife.min.js')}</script><script>{_static('report.js')}</script>"
            + "</body></html>")
