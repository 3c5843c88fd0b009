"""Result files: result.csv, timeseries.csv, summary.md (white-paper tables), report.html.

The white-paper tables are the families' (``Family.report_tables``: YCSB's rows are the
target's instance label x threads, columns the workloads, cells throughput and read / write
latency, SPEC 2.4); this module holds what every result has: status, missing shards, the
runs table, CSV, timelines and the HTML page.
"""
from __future__ import annotations

import csv
import io
import json
import re
from typing import Optional

from dbswarm.campaign.peak import search_markdown
from dbswarm.credentials.redact import redact_doc
from dbswarm.errors import DbswarmError
from dbswarm.families import base as families
from dbswarm.families.tables import fmt
from dbswarm.measure.recorder import PERCENTILES, _pname
from dbswarm.results.phase import phases_of
from dbswarm.results.report import markdown
from dbswarm.results.report.client_note import ACCEPT, MEASURE_DB, client_note, client_phases
from dbswarm.results.report.html import error_rows, server_lines
from dbswarm.results.report.html import report_html as page
from dbswarm.results.store import Store, campaign_key


def white_paper_tables(result: dict) -> str:
    """Each family's tables of its runs (families.Family.report_tables), in registry order."""
    out = []
    for family in families.all_families():
        runs = [r for r in result["runs"] if r["workload"]["family"] == family.name]
        if runs:
            out.append(family.report_tables(runs))
    return "\n".join(t for t in out if t)


def client_first_lines(result: dict) -> list[str]:
    """The phases whose load generator was the bottleneck (client verdict bound) and not accepted:
    the first thing summary.md says after the status, with what the user can do; phases bound and
    accepted, or near the limit: one note line (client_note; docs/client-health.md)."""
    unaccepted, _, _, _ = client_phases(result)
    bound = [f"- run {run_id}, {name} phase: {c.get('reason', '')}" for run_id, name, c in unaccepted]
    out = []
    short = [f"- run {r['run_id']}: {r['fanout']['note']}" for r in result["runs"]
             if (r.get("fanout") or {}).get("short_of_cpus")]
    if short:
        out += ["", "**Not enough CPUs for the load generator** (`threads_per_shard: auto`):", "", *short]
    adaptive = [c for c in (result.get("adaptive") or {}).get("cells", []) if len(c.get("attempts") or []) > 1
                or (c.get("took") or {}).get("verdict") == "bound"]
    if adaptive:
        out += ["", "**Shards adapted to the load generator** (`fanout.adaptive`: a bound run again with twice the "
                "shards):", ""]
        out += [f"- {c['cell']}: " + " → ".join(f"{a['shards']} shard{'s' if a['shards'] != 1 else ''} "
                                                f"{a.get('verdict')}" for a in c["attempts"])
                + (f" ({c['stop']})" if c.get("stop") else "") for c in adaptive]
    if bound:
        out += ["", "**The load generator was the bottleneck** (client verdict `bound`): these figures are the "
                "client's ceiling and its scheduling delay, not the database's:", "", *bound, "",
                f"To measure the database: {MEASURE_DB}. To accept these figures as they are: `{ACCEPT}`."]
    note = client_note(result)
    if note:
        out += ["", note.replace("Note:", "**Note**:", 1)]
    return out


def client_health_table(result: dict) -> list[str]:
    """Per run phase: the client verdict, its signals and the server's time beside the client's."""
    rows = []
    for r in result["runs"]:
        for name, p in phases_of(r):
            c = p.client
            if not c or c.get("verdict") == "unmeasured":
                continue

            def f(v: Optional[float], fmt: str) -> str:
                return format(v, fmt) if v is not None else "–"
            svc = c.get("server_vs_client_latency") or {}
            server = (f"{svc['server_us_per_op']:,.0f} / {svc['client_mean_us']:,.0f}"
                      if svc.get("server_us_per_op") is not None else "–")
            rows.append(f"| {r['run_id']} | {name} | {c['verdict']} | {f(c.get('cpu_share'), '.2f')} | "
                        f"{f(c.get('wakeup_delay_us'), ',.0f')} | {f(c.get('runqueue_wait_us_per_op'), ',.0f')} | "
                        f"{f(c.get('lock_wait_intervals'), '.2f')} | {f(c.get('loop_share'), '.2f')} | {server} |")
    if not rows:
        return []
    _, accepted, near, _ = client_phases(result)
    why = [f"- run {run_id}, {name} phase: {c.get('reason', '')}"
           + (f" (accepted: {c.get('allowed_by')})" if c.get("allowed") else "") for run_id, name, c in accepted + near]
    return ["", "### Client health (the load generator's own headroom; docs/client-health.md)", "",
            "| run | phase | verdict | CPU share | wake-up delay µs | run-queue wait µs/op | "
            "interpreter-lock wait (switch intervals) | loop share | server µs/op / client mean µs |",
            "|---|---|---|---|---|---|---|---|---|", *rows] + (["", *why, ""] if why else [])


# what never reaches a terminal or summary.md: control characters (C0 but tab and newline, DEL,
# C1) and the bidirectional overrides (a result written before names were checked, an error text)
_UNPRINTABLE = re.compile("[\x00-\x08\x0b-\x1f\x7f-\x9f\u200e\u200f\u202a-\u202e\u2066-\u2069]")


def printable(text: str) -> str:
    """``text`` without control characters (a terminal would act on them)."""
    return _UNPRINTABLE.sub("", text)


def _refused_what(run: dict) -> str:
    """What a refusal stopped: the whole run, or (a phase of it ran) the phases after."""
    ran = [name for name, p in phases_of(run) if p.status not in (None, "not run")]
    return "did not run" if not ran else f"stopped after its {' and '.join(ran)} phase{'s' if len(ran) > 1 else ''}"


def _failure_said(result: dict) -> str:
    """The status line's end: why the campaign stopped early (result.json's ``failure``), or "."."""
    why = (result.get("failure") or "").strip()
    return f": {why}" + ("" if why[-1] in ".?!" else ".") if why else "."


def summary_markdown(result: dict) -> str:
    """summary.md: printable text only (``printable``), every string of the result written as
    literal Markdown (``markdown.escaped``: no HTML, link or code span, no broken table)."""
    return printable(_summary_markdown(markdown.escaped(result)))


def _summary_markdown(result: dict) -> str:  # noqa: C901 (one section after another)
    lines = [f"# dbswarm campaign {result['name']} ({result['campaign_id']})", "",
             f"Status: **{result['status']}**" + _failure_said(result) + f" Seed {result['seed']}."]
    lines += [f"\n**Run {r['run_id']} {_refused_what(r)}**: {r['refused']}" for r in result["runs"] if r.get("refused")]
    lines += client_first_lines(result)  # a load generator that was the bottleneck: said before anything else
    caveats = [(r["run_id"], name, p.throughput_caveat) for r in result["runs"]
               for name, p in phases_of(r) if p.throughput_caveat]
    lines += _caveats_first(caveats)
    skipped = [(r["run_id"], s) for r in result["runs"] for s in (r.get("preparation") or {}).get("skipped", [])]
    if skipped:
        lines.append("\n**Requested preparation skipped** (the target was not prepared as the campaign asked; "
                     "result.json: the run's `preparation`):\n")
        lines += [f"- run {run_id}: {text}" for run_id, text in skipped]
    if result.get("interrupted"):
        lines.append(f"\n**Interrupted** ({result['interrupted']['by']}): every shard stopped at its next operation "
                     "and wrote what it measured; phases not finished are marked. Continue with "
                     f"`{result['interrupted']['resume']}`.")
    broken = [(r["run_id"], name, p) for r in result["runs"] for name, p in phases_of(r) if p.problems]
    if broken:
        lines.append("\n**Incomplete**: these phases did not do what was planned; their figures are not the "
                     "workload's:\n")
        for run_id, name, p in broken:
            for problem in p.problems or []:
                lines.append(f"- run {run_id}, {name} phase: {problem}")
    unexported = [(r["run_id"], name, p.metrics_export) for r in result["runs"] for name, p in phases_of(r)
                  if p.metrics_export and p.metrics_export.get("note")]
    if unexported:
        lines.append("\n**Live metrics** (`results.metrics`):\n")
        lines += [f"- run {run_id}, {name} phase: {e['note']} (last error: {e.get('error', '?')})"
                  for run_id, name, e in unexported]
    if any(not r["target"]["is_real_database"] for r in result["runs"]):
        lines.append("\n> Runs on the **noop** binding measure the load generator only, not a database.")
    servers = server_lines(result)
    if servers:
        lines += ["", *servers]
    failing = [(r["run_id"], name, p) for r in result["runs"] for name, p in phases_of(r)
               if p.status == "complete_with_errors"]
    if failing:
        lines.append("\n**Errors above the threshold** (`results.max_error_rate`): these phases measured failures, "
                     "not the workload:\n")
        for run_id, name, p in failing:
            for problem in p.error_problems or []:
                lines.append(f"- run {run_id}, {name} phase ({p.error_rate:.1%} of calls failed): {problem}")
    checks = [(r["run_id"], stage, c) for r in result["runs"] for stage, c in (r.get("checks") or {}).items()]
    if checks and all(c.get("passed") and not c.get("error") and not c.get("failures") for _, _, c in checks):
        # all passed: one line (the tables come sooner)
        lines.append("\n**Consistency checks passed**: "
                     + "; ".join(f"run {run_id}, {stage} ({len(c.get('conditions') or [])} conditions, "
                                 f"{c.get('seconds', '?')} s"
                                 + (f", in {c['ranges']} ranges at once" if (c.get("ranges") or 0) > 1 else "") + ")"
                                 for run_id, stage, c in checks) + ".")
    elif checks:
        lines.append("\n**Consistency checks** (the family's conditions on the database, after a stage):\n")
        for run_id, stage, c in checks:
            conds = c.get("conditions") or []
            split = (f" in {c['ranges']} ranges at once, {c.get('wall_seconds', '?')} s elapsed"
                     if (c.get("ranges") or 0) > 1 else "")
            lines.append(f"- run {run_id}, {stage}: **{'passed' if c.get('passed') else 'FAILED'}** "
                         f"({len(conds)} conditions, {c.get('seconds', '?')} s of checking{split})")
            if c.get("error"):
                lines.append(f"  - the check did not run: {c['error']}")
            for f in (c.get("failures") or [])[:20]:
                where = ", ".join(f"{k} {v}" for k, v in f.items()
                                  if k not in ("condition", "title", "found") and v is not None)
                lines.append(f"  - {f.get('condition')} {f.get('title', '')}: {where} (found {f.get('found')})")
            if c.get("failures_total", 0) > 20:
                lines.append(f"  - … {c['failures_total'] - 20} more in result.json")
    if result["missing_shards"]:
        lines.append("\n**Missing shards** (their data is absent; every other shard's data is kept):\n")
        for m in result["missing_shards"]:
            lines.append(f"- run {m['run_id']}, {m['phase']} phase, shard {m['shard']}: {m['reason']}")
    stuck = [(r["run_id"], name, p.abandoned_threads) for r in result["runs"] for name, p in phases_of(r)
             if p.abandoned_threads.get("count")]
    if stuck:
        lines.append("\n**Client threads abandoned** (still inside a database call "
                     "DBSWARM_STUCK_THREAD_GRACE_S after the stop time; what they measured before is kept, and the "
                     "phase's duration ends when the other threads stopped):\n")
        for run_id, name, a in stuck:
            shards = ", ".join(f"shard {s}: {n}" for s, n in sorted(a["per_shard"].items(), key=lambda x: int(x[0])))
            lines.append(f"- run {run_id}, {name} phase: {a['count']} ({shards})")
    lines += ["", white_paper_tables(result)]
    lines += errors_table(result)
    lines += paced_latency_table(result)
    lines += server_counters_table(result)
    lines += client_health_table(result)
    warm = [(r["run_id"], name, p.warmup) for r in result["runs"] for name, p in phases_of(r) if p.warmup]
    if warm:
        lines += ["", "### Warm-up (kept out of the latency percentiles above and of the steady window)", "",
                  "| run | phase | warm-up s | operations | p99 µs by operation |", "|---|---|---|---|---|"]
        for run_id, name, w in warm:
            p99 = ", ".join(f"{op} {fmt(s.get('p99_us'))}" for op, s in w["operations"].items())
            lines.append(f"| {run_id} | {name} | {w['seconds']:g} | {w['operations_total']:,} | {p99} |")
    lines += ["### Runs", "", "| run | phase | shards ok/expected | ops | errors | duration s | ops/s overall "
              "| ops/s steady (s) | mix | max start skew s |", "|---|---|---|---|---|---|---|---|---|---|"]
    for r in result["runs"]:
        for name, p in phases_of(r):
            if p.operations_total is None or p.steady is None or p.shards is None:
                lines.append(f"| {r['run_id']} | {name} | 0/{r['shard_count']} | | | | | | {p.status} | |")
                continue
            mix = ", ".join(f"{k} {v:.1%}" for k, v in sorted(p.mix.items()))
            st = p.steady
            steady = "–" if st.ops_per_s is None else f"{fmt(st.ops_per_s)} ({st.seconds})"
            if p.throughput_caveat:
                steady += " ⚠"
            lines.append(
                f"| {r['run_id']} | {name} | {len(p.shards.complete)}/{p.shards.expected} "
                f"| {p.operations_total:,} | {p.errors_total:,} | {p.duration_s} | {fmt(p.ops_per_s)} "
                f"| {steady} | {mix} | {p.start_skew_s['max']} |")
    if len(caveats) > 1:  # said in one line at the top, each phase's reason here
        lines += ["", "### Throughput to read with care", ""]
        lines += [f"- run {run_id}, {name} phase: {why}" for run_id, name, why in caveats]
    lines += cost_lines(result)
    if result.get("search"):
        lines += search_markdown(result["search"])
    if result.get("compare"):
        lines += verdict_markdown(result["compare"])
    return "\n".join(lines) + "\n"


def _caveats_first(caveats: list[tuple[str, str, str]]) -> list[str]:
    """What summary.md says of the phases whose throughput is to be read with care before its
    tables: one phase's reason in full; several phases (a loaded host starts every shard late)
    in one line, their reasons in a section at the end, so the first table stays on screen."""
    if not caveats:
        return []
    if len(caveats) == 1:
        run_id, name, why = caveats[0]
        return ["\n**Throughput to read with care** (marked ⚠ below; result.json: the phase's "
                "`throughput_caveat`):\n", f"- run {run_id}, {name} phase: {why}"]
    return [f"\n**Throughput to read with care** in {len(caveats)} phases (marked ⚠ below; why, phase by phase, "
            "at the end; result.json: each phase's `throughput_caveat`)."]


def errors_table(result: dict) -> list[str]:
    """Every error class with its count and what the worker did with it (retried or not)."""
    rows = error_rows(result)
    if not rows:
        return []
    return ["", "### Errors by class", "", "| run | phase | operation | kind | class | count | what dbswarm did |",
            "|---|---|---|---|---|---|---|",
            *(f"| {a} | {b} | {c} | {d} | {e} | {f:,} | {g}{' (**retried**)' if d in ('retryable', 'connection') or 'run again' in g else ''} |"
              for a, b, c, d, e, f, g in rows)]


def server_counters_table(result: dict) -> list[str]:
    """What the client counted against what the server counted over the same window (the
    server's own counters: MariaDB status, pg_stat_database / pg_stat_statements, MongoDB
    serverStatus), and what could not be read."""
    rows, warnings = [], []
    for r in result["runs"]:
        for name, p in phases_of(r):
            srv = p.server
            if not srv:
                continue
            for figure, c in (srv.get("cross_check") or {}).items():
                ratio = f"{c['ratio']:.4f}" if c.get("ratio") is not None else "–"
                rows.append(f"| {r['run_id']} | {name} | {figure} | {c['client']:,} | {c['server']:,} | {ratio} "
                            f"| {srv['window_s']:g} |")
            said = [*(srv.get("warnings") or []), *(srv[k] for k in ("missing", "cross_check_note") if srv.get(k))]
            warnings += [f"- run {r['run_id']}, {name} phase: {w}" for w in said]
    if not rows and not warnings:
        return []
    out = ["", "### Client-counted against server-counted (the server's own counters over the phase)", ""]
    if rows:
        out += ["| run | phase | figure | client | server | client/server | window s |",
                "|---|---|---|---|---|---|---|", *rows, "",
                "Server-wide counters include every other client of the server during the window.", ""]
    if warnings:
        out += ["", *warnings]
    return out


def cost_lines(result: dict) -> list[str]:
    """What the plan step estimated the campaign would use in the cloud, beside what the shards
    measurably used (worker calls and their phase seconds)."""
    cost = result.get("cost") or {}
    est, got = cost.get("estimate"), cost.get("measured")
    if not est or not got:
        return []
    lam, pr = est["lambda"], est["prices"]
    return ["", "### Cloud usage: estimated at plan time, measured", "",
            "| | worker calls | worker seconds | worker GB-s | price |", "|---|---|---|---|---|",
            f"| estimate | {lam['worker_calls']:,} | {lam['worker_seconds']:,} | "
            f"{lam['worker_seconds'] * lam['worker_memory_mb'] / 1024:,.1f} | "
            f"{est['price']['total']:,.4f} {pr['currency']} ({pr['region']}, prices of {pr['date']}) |",
            f"| measured | {got['worker_calls']:,} | {got['worker_seconds']:,} | {got.get('worker_gb_seconds', '–')} "
            f"| – |", "",
            "Measured seconds are the shards' phase time per call (start-up and result writing not included). "
            f"The price is the whole campaign's: the workers, the {lam['requests'] - lam['worker_calls']:,} other "
            f"Lambda requests (plan, prepare, aggregate, compare; {lam['gb_seconds']:,.1f} GB-s with the workers'), "
            "Step Functions and S3, as `dbswarm validate` prints it."
            + (" Assumed: " + "; ".join(est["assumptions"]) + "." if est.get("assumptions") else "")]


def paced_latency_table(result: dict) -> list[str]:
    """Runs with a target rate: service time beside the response time from the intended start
    (what a user waiting on the schedule saw; a stall shows here), and the late starts."""
    rows = []
    for r in result["runs"]:
        for name, p in phases_of(r):
            sched = p.schedule
            if not sched:
                continue
            for op, s in sorted(p.operations.items()):
                i = s.get("intended")
                if not i or not s.get("calls"):
                    continue
                rows.append(f"| {r['run_id']} | {name} | {op} | {fmt(sched['target_per_s'], 1)} | {fmt(s['p99_us'])} "
                            f"| {fmt(s['max_us'])} | {fmt(i['p99_us'])} | {fmt(i['p99_9_us'])} | {fmt(i['max_us'])} "
                            f"| {sched['late_starts']:,} of {sched['steps']:,} |")
    if not rows:
        return ["", "Latencies are service times, from each call's start (no run had a target rate: closed loop)."]
    return ["", "### Latency at a target rate: service time and response time from the intended start, µs", "",
            "| run | phase | operation | target /s | service p99 | service max | response p99 | response p99.9 "
            "| response max | late starts |", "|---|---|---|---|---|---|---|---|---|---|", *rows,
            "", "A step that starts more than one interval after its place on the schedule is a late start; "
            "its wait counts in the response time (coordinated omission corrected), not in the service time."]


CSV_FIELDS = ["run_id", "phase", "engine", "label", "family", "workload", "threads", "shards", "operation",
              "count", "errors", "not_found", "ops_per_s", "avg_us"] + [_pname(p) for p in PERCENTILES] + ["max_us"] + [
              "intended_p50_us", "intended_p99_us", "intended_max_us"]  # paced runs: from the intended start


def _result_families(result: dict) -> dict:
    """The families of a result's runs that are known here, by name (a result read where a
    plugin family is not installed still has its common columns)."""
    out: dict[str, Optional[families.Family]] = {}
    for r in result["runs"]:
        name = r["workload"]["family"]
        if name not in out:
            try:
                out[name] = families.get(name)
            except DbswarmError:
                out[name] = None
    return out


def result_csv(result: dict) -> str:
    """One row per run, phase and operation; then the columns each family of the result adds
    (``Family.csv_fields``: e.g. its white-paper figures per phase, repeated on the phase's rows)."""
    fams = _result_families(result)
    extra = list(dict.fromkeys(f for fam in fams.values() if fam for f in fam.csv_fields()))
    buf = io.StringIO()
    w = csv.DictWriter(buf, CSV_FIELDS + [f for f in extra if f not in CSV_FIELDS], extrasaction="ignore")
    w.writeheader()
    for r in result["runs"]:
        fam = fams.get(r["workload"]["family"])
        for name, p in phases_of(r):
            more = fam.csv_values(r, name, r["phases"][name]) if fam else {}  # the family's API: result.json's phase
            for op, s in p.operations.items():
                w.writerow({"run_id": r["run_id"], "phase": name, "engine": r["target"]["engine"],
                            "label": r["target"]["label"], "family": r["workload"]["family"],
                            "workload": r["workload"]["name"], "threads": r["threads"],
                            "shards": r["shard_count"], "operation": op, **s,
                            **{f"intended_{k}": v for k, v in (s.get("intended") or {}).items()}, **more})
    return buf.getvalue()


def timeseries_csv(result: dict) -> str:
    """One row per run, phase, second and operation: its count, and the percentiles of the
    operation over the interval (``report_interval``) that holds the second (the same on every
    second of one interval), merged exactly across shards; at a target rate also the same
    percentiles of the response time from the intended start (``interval_intended_*``: result.json's
    ``intervals.intended``; empty for closed-loop runs)."""
    buf = io.StringIO()
    w = csv.writer(buf)
    pcols = [_pname(p) for p in PERCENTILES] + ["max_us"]
    w.writerow(["run_id", "phase", "epoch_second", "second", "operation", "count", "errors_all_ops",
                "avg_latency_us_all_ops", "interval_s", "interval_start"] + [f"interval_{c}" for c in pcols]
               + [f"interval_intended_{c}" for c in pcols])
    for r in result["runs"]:
        for name, p in phases_of(r):
            tl = p.timeline
            if not tl or tl.get("start") is None:
                continue
            start, errs, lat = tl["start"], tl["errors"], tl["latency_us"]
            n = max([len(v) for v in tl["ops"].values()] + [len(errs)], default=0)
            totals = [sum(v[i] for v in tl["ops"].values() if i < len(v)) for i in range(n)]
            iv = p.intervals or {}
            for op, seq in sorted(tl["ops"].items()):
                series = (iv.get("by_operation") or {}).get(op)
                intended = ((iv.get("intended") or {}).get("by_operation") or {}).get(op)
                for i, c in enumerate(seq):
                    e = errs[i] if i < len(errs) else 0
                    avg = round(lat[i] / totals[i], 1) if i < len(lat) and totals[i] else ""
                    row = [r["run_id"], name, start + i, i, op, c, e, avg]
                    k = (start + i - iv["start"]) // iv["interval_s"] if series else -1
                    if series and 0 <= k < iv["intervals"]:
                        row += [iv["interval_s"], iv["start"] + k * iv["interval_s"]]
                        row += ["" if series[col][k] is None else series[col][k] for col in pcols]
                        row += ["" if not intended or intended[col][k] is None else intended[col][k]
                                for col in pcols]
                    else:
                        row += [""] * (2 + 2 * len(pcols))
                    w.writerow(row)
    return buf.getvalue()


def report_html(result: dict) -> str:
    """The self-contained HTML page (htmlreport.py: overview, tables, charts drawn by uPlot)."""
    return page(result, summary_markdown(result))


def short_number(v: float) -> str:
    return f"{v:,.0f}" if abs(v) >= 100 else f"{v:.3g}"


# a history campaign's client model written before the history recorded it
MODEL_NOT_RECORDED = "not recorded (threads before 2026-11-28, unless named)"


def verdict_markdown(c: dict) -> list[str]:
    """summary.md's section: the verdict and why (metric, effect, interval, p, change points)."""
    title = f"### Verdict: **{c['verdict']}**" + (f" (baseline `{c['baseline']}`)" if c.get("baseline") else "")
    lines = ["", title, ""]
    for r in c.get("reasons") or []:
        lines.append(f"- {r}")
    for m in c.get("client_model_changes") or []:  # another client measured the reference
        before = m["before"] or MODEL_NOT_RECORDED
        lines.append(f"- {m['run_id']}: the client model changed, {before} → {m['now']} (newest reference "
                     f"{m['campaign_id']}): `fanout.client_model` names one to keep")
    if c.get("deltas"):
        lines += ["", "| run | metric | reference | now | change | 95% CI | p (Holm) | Cliff's δ | n | method "
                  "| regressed |", "|---|---|---|---|---|---|---|---|---|---|---|"]
        for d in c["deltas"]:
            if d["metric"] == "run":
                lines.append(f"| {d['run_id']} | run | present | missing | | | | | | | yes |")
                continue
            ci = f"{d['ci'][0]:+.1%} … {d['ci'][1]:+.1%}" if d.get("ci") else ""
            p = f"{d['p_adjusted']:.3g}" if "p_adjusted" in d else ""
            delta = f"{d['cliffs_delta']:+.2f}" if "cliffs_delta" in d else ""
            method = {"statistical": "Mann–Whitney", "prediction": "prediction interval",
                      "inconclusive": "inconclusive"}.get(d["method"], f"threshold {d['threshold']:.0%}")
            lines.append(f"| {d['run_id']} | {d['metric']} | {short_number(d['baseline'])} | {short_number(d['value'])} | "
                         f"{d['change']:+.1%} | {ci} | {p} | {delta} | {d.get('n', 1)} vs {d.get('n_reference', 1)} "
                         f"| {method} | {'yes' if d['regressed'] else ''} |")
    if c.get("change_points"):
        lines += ["", "Change points in the history (E-Divisive means):", "",
                  "| run | metric | at campaign | p | median before → after | recent | regressed |",
                  "|---|---|---|---|---|---|---|"]
        for cp in c["change_points"]:
            lines.append(f"| {cp['run_id']} | {cp['metric']} | {cp['campaign_id']} | {cp['p']:.3f} | "
                         f"{short_number(cp['before_median'])} → {short_number(cp['after_median'])} ({cp['change']:+.1%}) | "
                         f"{'yes' if cp['recent'] else ''} | {'yes' if cp['regressed'] else ''} |")
    return lines


def write_reports(store: Store, campaign_id: str, result: dict) -> dict:
    result = redact_doc(result)  # the HTML report embeds it escaped, out of the text redaction's reach
    keys = {}
    for name, text, ctype in (
            ("result.json", json.dumps(result, indent=1), "application/json"),
            ("result.csv", result_csv(result), "text/csv"),
            ("timeseries.csv", timeseries_csv(result), "text/csv"),
            ("summary.md", summary_markdown(result), "text/markdown; charset=utf-8"),
            ("report.html", report_html(result), "text/html; charset=utf-8")):
        keys[name] = campaign_key(store, campaign_id, name)
        if name == "result.json":  # redacted as a document above: a text pass over JSON could cut a string
            store.put_bytes(keys[name], text.encode(), ctype)
        else:
            store.put_text(keys[name], text, ctype)
    return keys
