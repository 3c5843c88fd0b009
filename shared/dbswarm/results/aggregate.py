"""Merge every shard's measurement into the campaign result, exactly.

Histograms are merged (never percentiles averaged), counters summed, timelines summed on
the wall-clock second. Steady-state throughput is taken over the whole seconds in which
every shard of the phase was running, after the warm-up; the overall figure (all
operations over the phase's wall-clock span) is reported beside it.
"""
from __future__ import annotations

import math
import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Iterable, Optional

from dbswarm import bindings
from dbswarm.campaign.peak import result_section
from dbswarm.credentials.secrets import redact_url
from dbswarm.documents import RESULT_SCHEMA_VERSION, CampaignResult, Plan, RunPlan, ShardResult
from dbswarm.families import base as families
from dbswarm.measure import headroom
from dbswarm.measure.recorder import Measurement, OperationStats
from dbswarm.results import stalls as stalling
from dbswarm.results.phase import PhaseResult, PhaseShards, Steady
from dbswarm.results.store import (
    ADAPTIVE_DOC,
    CAMPAIGN_DOC,
    COST_ESTIMATE_DOC,
    REFUSED_DOC,
    SEARCH_DOC,
    Store,
    campaign_key,
    failure_key,
    phase_prefix,
    prepare_key,
    run_key,
    shard_key,
    window_key,
)

MIN_STEADY_SECONDS = 3


def _merged(stats: dict[str, OperationStats], names: Iterable[str]) -> Optional[OperationStats]:
    out = None
    for n in names:
        if n in stats:
            out = (out or OperationStats()).merge(stats[n])
    return out


RESTART_TOLERANCE_S = 3.0   # a server's start time read twice (MariaDB: its clock less Uptime, to the second)


def server_restarted(start: Optional[dict], end: Optional[dict]) -> Optional[str]:
    """A warning when the server started again between the window's edges, else None."""
    a = (start or {}).get("server_started_at")
    b = (end or {}).get("server_started_at")
    if not isinstance(a, (int, float)) or not isinstance(b, (int, float)) or abs(b - a) <= RESTART_TOLERANCE_S:
        return None
    when = time.strftime("%Y-%m-%d %H:%M:%S UTC", time.gmtime(b))
    return (f"the server restarted inside the measured window (at {when}): its counters started again from "
            "zero, so the server-side figures and the client/server cross-check are left out")


def window_deltas(start: Optional[dict], end: Optional[dict]) -> Optional[dict]:
    """The measured window from its two edge documents (``engine.target.read_window_edge``):
    after - before of every counter both edges have; None unless both were read.

    Beside the deltas, for the family's summary only (``Family.phase_summary``; not copied into
    result.json): ``family_start``, the start edge's ``window_snapshot`` as read (TPC-C: each
    district's d_next_o_id, where the window starts, and when it was read), and ``edges_at``,
    the two edges' wall-clock times (seconds)."""
    if not start or not end:
        return None
    out: dict = {"seconds": round(end["at"] - start["at"], 3),
                 "warnings": list(start.get("warnings", [])) + list(end.get("warnings", [])),
                 "edges_at": [start["at"], end["at"]]}
    own = [e["own_transactions"] for e in (start, end) if e.get("own_transactions") is not None]
    if own:  # the edges' own transactions counted in the window (engine.target.read_window_edge)
        out["own_transactions"] = sum(own)
    if start.get("after_warmup_s"):  # the start edge was read when the warm-up ended (service._warmup_edge)
        out["after_warmup_s"] = start["after_warmup_s"]
    elif start.get("after_warmup_missed"):  # ... and why it was not, where it was to be
        out["after_warmup_missed"] = start["after_warmup_missed"]
    # the reads that failed ({"server" | "family": "<edge> edge: why"}) and the figures the server
    # keeps none of ({figure: why}): what the result's "unavailable because ..." says
    unread = {key: f"{e.get('edge', '?')} edge: {why}" for e in (end, start) for key, why in (e.get("unread") or {}).items()}
    if unread:
        out["unread"] = unread
    missing = {**(end.get("server_unavailable") or {}), **(start.get("server_unavailable") or {})}
    if missing:
        out["server_unavailable"] = missing
    times = statement_time_deltas(start.get("statement_times"), end.get("statement_times"))
    if times:
        out["statement_times"] = times
        out["statement_source"] = end.get("statement_source")
    elif start.get("statement_times_missing") or end.get("statement_times_missing"):
        out["statement_times_missing"] = end.get("statement_times_missing") or start["statement_times_missing"]
    restarted = server_restarted(start.get("server"), end.get("server"))
    if restarted:
        out["warnings"].append(restarted)
    for key in ("server", "family"):
        a, b = start.get(key), end.get(key)
        if key == "server" and restarted:
            continue   # counters that started again from zero: no delta means anything
        if isinstance(a, dict) and isinstance(b, dict):
            out[key] = {k: b[k] - a[k] for k in sorted(b) if k != "server_started_at"
                        and k in a and isinstance(a[k], (int, float)) and isinstance(b[k], (int, float))}
    if isinstance(start.get("family"), dict) and isinstance(end.get("family"), dict):
        out["family_start"] = start["family"]
    return out


def _cross_check_skew(lost_s: float, partial: list, missing: list) -> Optional[str]:
    """Why the client/server ratios of a phase read low, when they do: the server counted what
    the client's figures lost (seconds measured by shard calls that died after their last
    persisted write, shards that stopped early or wrote nothing); None when nothing was lost."""
    why = []
    if lost_s:
        why.append(f"{lost_s:.1f} s measured by shard calls that died after their last persisted write were lost "
                   "(the server counted their operations; the client's figures keep none of them)")
    if missing:
        why.append(f"{len(missing)} shard(s) wrote nothing")
    elif partial:
        why.append(f"{len(partial)} shard(s) stopped before finishing")
    if not why:
        return None
    return ("the client's figures lack what the server counted: " + "; ".join(why)
            + ": the client/server ratios read low by that much, not from a miscount")


def _edge_missing(phase: str, edges: list) -> Optional[str]:
    """Why a phase that ran has no server-side figures when one edge of its measured window was
    never read (else None): said in its ``server`` instead of leaving it out without a word."""
    gone = [name for name, e in zip(("start", "end"), edges) if e is None]
    if not gone:
        return None
    return (f"the {' and '.join(gone)} edge{'s' if len(gone) > 1 else ''} of the {phase} phase's measured window "
            f"{'were' if len(gone) > 1 else 'was'} never read (the campaign stopped before: interrupted, its runner "
            "killed, or a step failed; a resume reads the end edge only after shards it ran): no server-side "
            "counters and no client/server cross-check for this phase")


def cross_check(client: Optional[dict], server: Optional[dict]) -> dict:
    """Client-counted against server-counted, for each figure both sides have."""
    out = {}
    for k, n in (client or {}).items():
        if server and k in server:
            out[k] = {"client": n, "server": server[k],
                      "ratio": round(n / server[k], 4) if server[k] else None}
    return out


def unchecked(client: Optional[dict], checks: dict, window: dict) -> dict:
    """{figure: "unavailable because ..."} for each figure the client counted that the server's
    counters do not cross-check: the server keeps none (pg_stat_statements not created or not
    loaded), or its counters were not read at an edge."""
    unread = (window.get("unread") or {}).get("server")
    kept = window.get("server_unavailable") or {}
    out = {}
    for figure in client or {}:
        if figure in checks:
            continue
        why = (kept.get(figure) or (f"the server's counters were not read at the {unread}" if unread else None)
               or ("the server's counters were not read at both edges" if window.get("server") is None
                   else "this server keeps no such counter"))
        out[figure] = f"unavailable because {why}"
    return out


IDLE_GAP_S = 0.5  # a pause between shard calls shorter than this is a continuation's hand-over, not idle


def idle_seconds(intervals: list[tuple[float, float]], start: float, end: float) -> float:
    """Seconds of [start, end] that no interval covers, counting only gaps of IDLE_GAP_S or more."""
    idle, covered_to = 0.0, start
    for lo, hi in sorted(intervals):
        if lo - covered_to >= IDLE_GAP_S:
            idle += lo - covered_to
        covered_to = max(covered_to, hi)
    if end - covered_to >= IDLE_GAP_S:
        idle += end - covered_to
    return idle


def _client_model(shards: dict) -> Optional[str]:
    """How the phase's shards drove their connections: threads, multiplexed, or mixed."""
    return headroom.common_model(s["model"] for s in shards.values() if s.get("model"))


@dataclass
class _Shards:
    """What the phase's shard documents hold, gathered one document at a time (``_gather``)."""
    expected: int
    measurement: Measurement = field(default_factory=Measurement)
    starts: list[float] = field(default_factory=list)
    ends: list[float] = field(default_factory=list)
    skews: dict[int, float] = field(default_factory=dict)
    complete: list[int] = field(default_factory=list)
    partial: list[dict] = field(default_factory=list)
    missing: list[dict] = field(default_factory=list)
    measuring: list[tuple[float, float]] = field(default_factory=list)  # every shard call's measured interval
    abandoned: dict[int, int] = field(default_factory=dict)  # shard -> client threads given up inside a call
    settings: Optional[dict] = None
    client_cpu: float = 0.0  # the shard processes' CPU over their calls (worker: segments' cpu_s)
    worker_calls: int = 0    # what the worker function was used for (cost: measured beside the estimate)
    worker_s: float = 0.0
    per_shard: dict[int, tuple] = field(default_factory=dict)  # shard -> (first second, ops per second)
    client_figs: dict[int, Optional[dict]] = field(default_factory=dict)  # shard -> its client figures
    client_series: dict[int, list] = field(default_factory=dict)  # shard -> its per-second samples
    exports: list[dict] = field(default_factory=list)  # the shard calls' live metrics export
    duration: float = 0.0      # measured seconds (``_measured``): the span less its pauses
    lost_seconds: float = 0.0  # measured by shard calls that died after their last persisted write


def _gather(shard_count: int, shard_docs: Any, failures: dict[int, str], integrity: _Integrity,
            failed_at: Optional[dict[int, float]]) -> _Shards:
    g = _Shards(shard_count)
    for i in range(shard_count):
        doc = shard_docs.get(i)
        if doc is not None:
            doc = ShardResult.of(doc)
        if doc is None:
            g.missing.append({"shard": i, "reason": failures.get(i, "no result (the shard died or never ran)")})
            continue
        shard_m = Measurement.from_dict(doc.measurement)
        g.per_shard[i] = (shard_m.timeline.start, shard_m.timeline.totals())
        g.client_figs[i] = headroom.shard_figures(doc.segments)
        g.client_series[i] = [seg["client"]["series"] for seg in doc.segments
                              if isinstance(seg.get("client"), dict) and seg["client"].get("series")]
        g.measurement.merge(shard_m)
        g.starts.append(doc.started_at)
        g.ends.append(doc.ended_at)
        g.measuring.extend((seg["began_at"], seg["ended_at"]) for seg in doc.segments
                           if seg.get("began_at") and seg.get("ended_at"))
        if doc.start_skew_s is not None:
            g.skews[i] = doc.start_skew_s
        g.client_cpu += sum(seg.get("cpu_s", 0) for seg in doc.segments)
        g.worker_calls += len(doc.segments)
        g.worker_s += sum(max(0.0, (seg.get("ended_at") or 0) - (seg.get("began_at") or 0)) for seg in doc.segments)
        n = sum(seg.get("abandoned_threads", 0) for seg in doc.segments)
        if n:
            g.abandoned[i] = n
        g.exports.extend(e for seg in doc.segments for e in seg.get("metrics_export") or [])
        g.settings = g.settings or doc.binding.settings
        integrity.shard(i, doc)
        if doc.status == "done" and not integrity.interrupted(doc):
            g.complete.append(i)
        else:
            entry: dict[str, Any] = {"shard": i, "status": "interrupted" if integrity.interrupted(doc) else doc.status,
                                     "reason": failures.get(i, "stopped before finishing")}
            lost = lost_before_failure(doc, (failed_at or {}).get(i))
            if lost:
                entry["lost_s"] = lost
                integrity.lost_seconds += lost
            g.partial.append(entry)
    return g


def merge_phase(family: str, workload: dict, shard_count: int, phase: str,
                shard_docs: Any, failures: dict[int, str], max_error_rate: float = 0.01,
                window: Optional[dict] = None, load_counts: Optional[list[int]] = None,
                failed_at: Optional[dict[int, float]] = None, client_settings: Optional[dict] = None) -> dict:
    """``merge``'s phase as result.json writes it (a dict)."""
    return merge(family, workload, shard_count, phase, shard_docs, failures, max_error_rate, window=window,
                 load_counts=load_counts, failed_at=failed_at, client_settings=client_settings).to_dict()


def merge(family: str, workload: dict, shard_count: int, phase: str,
          shard_docs: Any, failures: dict[int, str], max_error_rate: float = 0.01,
          window: Optional[dict] = None, load_counts: Optional[list[int]] = None,
          failed_at: Optional[dict[int, float]] = None, client_settings: Optional[dict] = None) -> PhaseResult:
    """One run's phase from its shard documents (``shard_docs.get(i)``: a ShardResult, or
    None when shard i wrote nothing); ``window``: ``window_deltas`` of the phase's measured
    window (the server's own counters), when both edges were read. ``load_counts``: the
    units each shard's load was planned to write (a load that wrote fewer is incomplete).
    ``failed_at``: when the state machine recorded a shard's failure (its failure file's time)."""
    integrity = _Integrity(phase, load_counts)
    g = _gather(shard_count, shard_docs, failures, integrity, failed_at)
    out = PhaseResult(phase=phase, status="missing", binding_settings=g.settings,
                      shards=PhaseShards(g.expected, g.complete, g.partial, g.missing))
    if not g.starts:
        return out
    _measured(out, g, integrity, float(workload.get("warmuptime") or 0) if phase == "run" else 0.0)
    _family_figures(out, g, family, workload, max_error_rate, window)
    out.histograms = {k: v["histogram"] for k, v in g.measurement.to_dict()["operations"].items()}
    out.timeline = g.measurement.timeline.to_dict(histograms=False)
    out.intervals = g.measurement.timeline.interval_summary()
    out.shard_series = shard_series(g.per_shard)
    out.client = client_section(g.client_figs, g.client_series, g.measurement, window, client_settings)
    return out


def _measured(out: PhaseResult, g: _Shards, integrity: _Integrity, warm: float) -> None:
    """The phase's span, rates, steady window and integrity: what every family's phase has."""
    measurement = g.measurement
    span_start, span_end = min(g.starts), max(g.ends)
    # measured time only: the span less the pauses in which no shard measured (an interrupted
    # phase resumed later): every rate of the phase divides by it
    paused = idle_seconds(g.measuring, span_start, span_end) if g.measuring else 0.0
    duration = g.duration = max(span_end - span_start - paused, 1e-9)
    g.lost_seconds = integrity.lost_seconds
    measured = measurement.total_ops  # after the warm-up: what the percentiles are of
    warm_ops = measurement.warmup_ops
    total = measured + warm_ops
    tl = measurement.timeline
    ws, we = math.ceil(max(g.starts) + warm), math.floor(min(g.ends))
    totals = tl.totals()
    if tl.start is not None:  # seconds in which nothing completed at the window's end are dead, not steady
        while we > ws and not (0 <= we - 1 - tl.start < len(totals) and totals[we - 1 - tl.start]):
            we -= 1
    # seconds between two calls of a shard (a resumed or continued shard) are not steady either
    gaps = {sec for lo_t, hi_t in integrity.gaps for sec in range(math.floor(lo_t), math.ceil(hi_t))}
    # nor the seconds in which a client thread was stalled: the headline is what every thread did
    gaps |= stalling.stalled_seconds(integrity.stalls)
    seconds = [sec for sec in range(ws, we) if sec not in gaps]
    steady_seconds = len(seconds)
    steady_ops = None
    if steady_seconds >= MIN_STEADY_SECONDS and tl.start is not None:
        steady_ops = sum(totals[sec - tl.start] for sec in seconds if 0 <= sec - tl.start < len(totals)) \
            / steady_seconds
    # an operation's count is after the warm-up (the warm-up's are apart): per second of the
    # measured window, the phase less its warm-up, not of the whole phase
    measured_s = max(duration - warm, 1e-9) if warm > 0 else duration
    problems = integrity.problems(tl, totals, span_end, measurement)
    stalled_s = stalling.stalled_span(integrity.stalls, span_start, span_end) if integrity.stalls else 0.0
    if integrity.stalls:
        problems.append(stalling.problem(integrity.stalls, span_start))
    # without a steady window: the whole phase's operations over its seconds without a stall
    whole = (stalling.unstalled_rate(integrity.stalls, tl.start, totals, span_start, span_end, total, duration)
             if stalled_s else total / duration)
    out.status = (("interrupted" if integrity.stopped and not g.missing else "partial") if g.missing or g.partial
                  else "incomplete" if problems else "complete")
    out.started_at, out.ended_at, out.duration_s = span_start, span_end, round(duration, 3)
    out.paused_s = round(paused, 3) if paused else None
    out.operations_total, out.errors_total = total, measurement.total_errors
    out.ops_per_s = round(total / duration, 2)
    out.steady = Steady([ws, we], steady_seconds, round(steady_ops, 2) if steady_ops is not None else None)
    out.throughput = round(steady_ops if steady_ops is not None else whole, 2)
    out.throughput_basis = ("steady-state window" if steady_ops is not None else
                            "whole phase less its stalled seconds" if stalled_s else "whole phase")
    out.operations = {name: s.summary() | {"ops_per_s": round(s.count / measured_s, 2)}
                      for name, s in sorted(measurement.operations.items())}
    out.errors, out.counters = measurement.errors, measurement.counters
    out.start_skew_s = {"max": round(max(g.skews.values()), 4) if g.skews else None, "per_shard": g.skews}
    out.abandoned_threads = {"count": sum(g.abandoned.values()), "per_shard": g.abandoned}
    out.client_cpu_s = round(g.client_cpu, 3)
    out.usage = {"worker_calls": g.worker_calls, "worker_seconds": round(g.worker_s, 3)}
    out.mix = {name: round(s.count / measured, 6) for name, s in measurement.operations.items()} if measured else {}
    if g.exports:
        out.metrics_export = metrics_export_summary(g.exports)
    caveat = start_caveat(out.phase, out.start_skew_s["max"], duration, steady_ops is not None, steady_seconds,
                          stalled=bool(stalled_s))
    if integrity.stalls:
        out.stalls = stalling.section(integrity.stalls, span_start, span_end)
        out.steady.stalled_seconds_left_out = sorted(
            sec for sec in stalling.stalled_seconds(integrity.stalls) if ws <= sec < we)
        said = stalling.caveat(stalled_s, steady_seconds, steady_ops is not None, out.ops_per_s)
        caveat = f"{caveat}; {said}" if caveat else said
    out.throughput_caveat = caveat or None
    out.problems = problems or None
    out.lost_seconds = round(integrity.lost_seconds, 3) if integrity.lost_seconds else None
    if measurement.warmup:
        # warm-up operations: counted in operations_total and the timeline, out of the percentiles
        out.warmup = {"seconds": warm, "operations_total": warm_ops,
                      "operations": {name: s.summary() for name, s in sorted(measurement.warmup.items())}}
        out.operations_after_warmup = measured


def _family_figures(out: PhaseResult, g: _Shards, family: str, w: dict, max_error_rate: float,
                    window: Optional[dict]) -> None:
    """What the family says of the phase: its reads and writes, its errors' hints, its rate, its
    figures from the server's counters, its own summary."""
    measurement, phase = g.measurement, out.phase
    fam = families.get(family)
    # the family says which of its operations read and which write (a sysbench event, a TPC-C
    # transaction): their merged latencies are what the nightly verdict judges
    model = fam.workload(w)
    reads, writes = fam.read_operations(model), fam.write_operations(model)
    read = _merged(measurement.operations, reads)
    write = _merged(measurement.operations, writes)
    out.error_rate, problems = judge_errors(measurement, phase, max_error_rate,
                                            hint=lambda op, kind, name: fam.error_hint(model, phase, op, kind, name))
    if problems is not None and out.status == "complete":
        out.status, out.error_problems = "complete_with_errors", problems
    out.read_latency = read.summary() if read else None
    out.write_latency = write.summary() if write else None
    out.latency_operations = {"read": [op for op in reads if op in measurement.operations],
                              "write": [op for op in writes if op in measurement.operations]}
    rate = fam.limits(model).rate if phase == "run" else None
    c = measurement.counters
    if rate:
        out.latency_basis = ("service time from each call's start, and response time from its intended start "
                             "on the target rate's schedule (operations.*.intended)")
        out.schedule = {"target_per_s": rate, "steps": c.get("paced_steps", 0),
                        "late_starts": c.get("late_starts", 0)}
    else:
        out.latency_basis = ("service time from each call's start (closed loop, no target rate: a stall "
                             "delays the following operations instead of showing in their latency)")
    if window is not None:
        out.server = _server_section(fam, model, phase, measurement, window, g)
    extra = fam.phase_summary(model, phase, measurement, g.duration, window=window)
    if extra is not None:
        out.extra[fam.name] = extra  # the family's own figures (e.g. TPS and QPS as its reference tool counts them)


def _server_section(fam: Any, model: Any, phase: str, measurement: Measurement, window: dict, g: _Shards) -> dict:
    """The phase's ``server``: the server's counters over the window beside the client's."""
    client = fam.window_client_statements(model, phase, measurement, window)
    checks = cross_check(client, window.get("server"))
    out = {
        "window_s": window["seconds"], "counters": window.get("server"), "family": window.get("family"),
        "client": client, "cross_check": checks,
        **({"cross_check_unavailable": gone} if (gone := unchecked(client, checks, window)) else {}),
        "warnings": window["warnings"] + ferretdb_warnings(g.settings),
        "note": "deltas of the server's own counters between the window's edges, read on one connection "
                "before the shards started and after they all ended; server-wide counters (MariaDB "
                "status, MongoDB serverStatus) include every other client of the server"}
    if window.get("server") is None and not window["warnings"]:
        out["note"] = "this engine keeps no server-side counters"
    skew = _cross_check_skew(g.lost_seconds, g.partial, g.missing)
    if skew and checks:
        out["cross_check_note"] = skew
    return out


def metrics_export_summary(exports: list[dict]) -> dict:
    """The shard calls' live metrics export, added up: a failed push is said, never a failure."""
    out = {"endpoints": sorted({str(e.get("endpoint")) for e in exports}),
           "pushes": sum(e.get("pushes", 0) for e in exports),
           "failed": sum(e.get("failed", 0) for e in exports), "samples": sum(e.get("samples", 0) for e in exports)}
    errors = [e["error"] for e in exports if e.get("error")]
    if errors:
        out["error"] = errors[-1]
        out["note"] = (f"live metrics were not (all) exported: {out['failed']:,} push(es) failed; the figures of "
                       "this result are complete")
    return out


START_SKEW_SHARE = 0.1  # a start skew above this share of the phase makes its figure one to read with care


def start_caveat(phase: str, max_skew: Optional[float], duration: float, steady: bool,
                 steady_seconds: int, stalled: bool = False) -> Optional[str]:
    """Why a phase's throughput is not what every shard did at once (None: nothing to say): the
    start barrier was missed by a large share of the phase (the shards ran partly one after
    another), or no steady window (MIN_STEADY_SECONDS whole seconds with every shard running,
    after the warm-up) exists, so the figure is the whole phase's. summary.md says it first.
    A load phase's figure is its whole span's: only its start skew is said."""
    if phase not in ("run", "load"):
        return None
    why = []
    if max_skew is not None and duration > 0 and max_skew > START_SKEW_SHARE * duration:
        why.append(f"the shards started up to {max_skew:.2f} s after the start barrier, {max_skew / duration:.0%} of "
                   f"the {duration:.1f} s phase (more than {START_SKEW_SHARE:.0%}): they ran partly one after "
                   "another (a longer start lead: fanout.start_lead_s)")
    if not steady and phase == "run":
        why.append(f"no steady window: {steady_seconds} whole second(s) with every shard running after the warm-up "
                   f"(at least {MIN_STEADY_SECONDS} needed), so the throughput is the whole phase's"
                   + (" less its stalled seconds" if stalled else ""))
    return "; ".join(why) or None


# ---- the load generator's own health (issue 31; measure/headroom.py, docs/client-health.md) ------

ALLOW_CLIENT_BOUND_ENV = "DBSWARM_ALLOW_CLIENT_BOUND"
CLIENT_SERIES_SHARDS = 50  # the client-health chart's shards (the first ones; the verdict covers all)


def _client_settings(store: Store, cid: str, run: RunPlan) -> dict:
    """The campaign's results.client_thresholds and results.allow_client_bound (campaign.json),
    and whether a bound phase fails the run: by default for a real database only (the noop
    engine measures the load generator itself: being bound is what it is for)."""
    try:
        results = (store.get_json(campaign_key(store, cid, CAMPAIGN_DOC)) or {}).get("results") or {}
    except (KeyError, ValueError, AttributeError):
        results = {}
    allow = results.get("allow_client_bound")
    env = os.environ.get(ALLOW_CLIENT_BOUND_ENV, "").strip().lower()
    if allow is None and env in ("1", "true", "yes"):
        # the host's default (a shared CI machine whose load is not the campaign's): the campaign's own wins
        return {"thresholds": results.get("client_thresholds"), "allow": True, "allow_source": ALLOW_CLIENT_BOUND_ENV,
                "strict": bool(results.get("strict_client_health"))}
    try:
        embedded = bindings.engine(run.target["engine"]).embedded
    except Exception:
        embedded = False
    # the noop engine measures the load generator itself; an embedded database (SQLite) runs
    # inside it: their client figures are the database's too, so a bound one fails nothing
    own = not run.is_real_database or embedded
    return {"thresholds": results.get("client_thresholds"), "strict": bool(results.get("strict_client_health")),
            "allow": own if allow is None else bool(allow),
            "allow_source": "results.allow_client_bound" if allow is not None else
            ("default: the noop engine" if not run.is_real_database else
             "default: an embedded database (it runs in the load generator)" if embedded else "default")}


def statement_time_deltas(start: Optional[dict], end: Optional[dict]) -> Optional[dict]:
    """The server's own time per statement kind over the window (``Binding.server_counters``'
    ``statement_times``: {kind: {"calls", "exec_us"}} cumulative): end - start per kind."""
    if not isinstance(start, dict) or not isinstance(end, dict):
        return None
    out = {}
    for kind, b in end.items():
        a = start.get(kind) or {"calls": 0, "exec_us": 0.0}
        calls, us = b.get("calls", 0) - a.get("calls", 0), b.get("exec_us", 0.0) - a.get("exec_us", 0.0)
        if calls > 0:
            out[kind] = {"calls": int(calls), "exec_us": round(us, 1), "mean_us": round(us / calls, 1)}
    return out or None


# an operation's server time is its statement kind's only where the server counted at least
# this share of the client's operations as that kind in the window (every other client adds more)
SERVER_COVERAGE = 0.9
# which statement kinds of the server a client operation is made of (one statement per
# operation: the server's mean beside the client's; others: the server's time per operation)
_OP_STATEMENTS = {"READ": "SELECT", "UPDATE": "UPDATE", "INSERT": "INSERT", "SCAN": "SELECT", "DELETE": "DELETE"}
_OP_LATENCIES = {"READ": "reads", "SCAN": "reads", "UPDATE": "writes", "INSERT": "writes", "DELETE": "writes"}  # MongoDB


def server_vs_client(measurement: Measurement, window: Optional[dict]) -> Optional[dict]:
    """The server's own execution time beside the client's mean latency, per operation kind
    where an operation is one statement kind (YCSB), and overall (all statements' time per
    client operation): what the server spent against what the client measured for the same
    window. The rest is the network, the driver and the client's own scheduling."""
    times = (window or {}).get("statement_times")
    if not times:
        return None
    out = {"source": (window or {}).get("statement_source", "the server's statement statistics"), "by_operation": {}}
    ops = measurement.operations
    kinds = _OP_LATENCIES if "reads" in times or "writes" in times else _OP_STATEMENTS
    for op, stats in sorted(ops.items()):
        kind = kinds.get(op)
        calls = stats.histogram.get_total_count()
        if not calls:
            continue
        client_mean = round(stats.histogram.get_mean_value(), 1)
        entry = {"client_mean_us": client_mean}
        # a kind shared by two operations (READ and SCAN are both SELECTs) is not one operation's
        shared = kind and sum(1 for o in ops if kinds.get(o) == kind) > 1
        if kind and kind in times and not shared and times[kind]["calls"] < SERVER_COVERAGE * calls:
            # the server counted fewer such statements than the client's operations: they are not
            # these (MariaDB gives prepared statements no digest: its SELECTs are dbswarm's own reads)
            entry["server_missing"] = (f"the server's statistics counted {times[kind]['calls']:,} {kind} "
                                       f"statements in the window for {calls:,} {op} operations: not these")
        elif kind and kind in times and not shared:
            entry.update({"server_statement": kind, "server_mean_us": times[kind]["mean_us"],
                          "server_calls": times[kind]["calls"],
                          "server_share": round(times[kind]["mean_us"] / client_mean, 4) if client_mean else None})
        out["by_operation"][op] = entry
    calls = sum(s.histogram.get_total_count() for s in ops.values())
    lat = sum(s.histogram.get_mean_value() * s.histogram.get_total_count() for s in ops.values())
    exec_us = sum(t["exec_us"] for t in times.values())
    if calls:
        out["server_us_per_op"] = round(exec_us / calls, 1)
        out["client_mean_us"] = round(lat / calls, 1)
        out["server_share"] = round(exec_us / lat, 4) if lat else None
    out["statements"] = times
    return out


def client_section(figs: dict, series: dict, measurement: Measurement, window: Optional[dict],
                   settings: Optional[dict]) -> dict:
    """The phase's ``client``: each shard's figures and verdict (``headroom.judge``), the
    phase's (its worst shard's verdict; the largest shares, the operations' mean wait), the
    server's time beside the client's, the advice, and the per-second samples for the chart."""
    settings = settings or {}
    thresholds = headroom.thresholds_of(settings.get("thresholds"))
    shards = {}
    for i, fig in sorted(figs.items()):
        shards[str(i)] = {**(fig or {}), **headroom.judge(fig, thresholds)}
    measured = [f for f in figs.values() if f]

    def worst(key: str) -> Any:
        vals = [f[key] for f in measured if f.get(key) is not None]
        return max(vals) if vals else None
    ops = sum(f["ops"] for f in measured)
    rq = [f for f in measured if f.get("runqueue_wait_us_per_op") is not None]
    verdicts = [s["verdict"] for s in shards.values()]
    verdict = max(verdicts, key=lambda v: headroom.VERDICT_ORDER[v]) if verdicts else "unmeasured"
    bound = [int(i) for i, s in shards.items() if s["verdict"] == "bound"]
    near = [int(i) for i, s in shards.items() if s["verdict"] == "near"]
    out = {"verdict": verdict,
           "cpu_share": worst("cpu_share"), "loop_share": worst("loop_share"),
           "runqueue_wait_us_per_op": round(sum(f["runqueue_wait_us_per_op"] * f["ops"] for f in rq) / ops, 1)
           if rq and ops else None,
           "runqueue_share": worst("runqueue_share"), "wakeup_delay_us": worst("wakeup_delay_us"),
           "wakeup_share": worst("wakeup_share"),
           "lock_wait_us": worst("lock_wait_us"), "lock_wait_intervals": worst("lock_wait_intervals"),
           "server_vs_client_latency": server_vs_client(measurement, window),
           "server_time_missing": (window or {}).get("statement_times_missing")
           if not (window or {}).get("statement_times") else None,
           "bound_shards": bound, "near_shards": near,
           "model": _client_model(shards),
           "thresholds": {k: list(v) for k, v in thresholds.items()},
           "allowed": bool(settings.get("allow")), "allowed_by": settings.get("allow_source", "default"),
           "strict": bool(settings.get("strict")),
           "shards": shards}
    judged = [(int(i), s) for i, s in shards.items() if s["verdict"] in ("bound", "near")]
    if verdict in ("bound", "near"):
        first = [s for _, s in judged if s["verdict"] == verdict]
        # a thread's wait for a CPU and the interpreter lock, at most the latency it is part of
        delay = max(min(max(s.get("wakeup_delay_us") or 0, s.get("runqueue_wait_us_per_op") or 0),
                        s.get("mean_latency_us") or float("inf")) for s in first)
        advice = min(a for a in (headroom.advice_threads(s, thresholds) for s in first) if a is not None) \
            if any(s.get("threads") for s in first) else None
        which = ", ".join(str(i) for i in (bound if verdict == "bound" else near))
        # shards that waited for CPUs other processes held: fewer threads per shard is not
        # the remedy (they used little of their own CPU), so the reason gives theirs instead
        others = headroom.waited_for_others(first, thresholds)
        remedy = others or (f"use at most {advice} thread{'s' if advice > 1 else ''} per shard or more shards"
                            if advice else "")
        out["reason"] = (f"{'the load generator was the bottleneck' if verdict == 'bound' else 'the load generator was near its limit'} "
                         f"in shard{'s' if len(first) > 1 else ''} {which}: up to {delay:,.0f} µs of each latency is "
                         f"client scheduling ({first[0]['reason']})" + (f"; {remedy}" if remedy else ""))
        if others:
            out["waited_for_others"] = True
            if verdict == "bound":
                # the host's contention, whichever client ran: its own word (docs/client-health.md)
                out["verdict"] = "contended"
                out["reason"] = "the host was contended: " + out["reason"]
        out["max_threads_per_shard"] = advice
        out["client_scheduling_us"] = round(delay, 1)
    elif verdict == "ok":
        out["reason"] = "every shard's signals were below their near thresholds"
    else:
        out["reason"] = "no shard recorded client figures"
    chart = {}
    for i in sorted(series)[:CLIENT_SERIES_SHARDS]:
        segs = series[i]
        if not segs:
            continue
        cap = (figs.get(i) or {}).get("capacity") or 1.0
        chart[str(i)] = [{"start": s["start"], "step_s": s["step_s"],
                          "cpu_share": [round(c / (s["step_s"] * cap), 3) for c in s["cpu_s"]],
                          "wakeup_delay_us": s.get("wakeup_delay_us"),
                          "runqueue_wait_s": s.get("runqueue_wait_s")} for s in segs]
    if chart:
        out["series"] = chart
    return out


SHARD_SERIES_NUMBERS = 20_000  # the per-shard view's budget: 1,000 shards x 1 h stays ~100 KB


def shard_series(per_shard: dict) -> Optional[dict]:
    """Each shard's operations per step on one grid (the report's "per shard" chart): steps of
    ``step_s`` whole seconds, chosen so that shards x steps stays within SHARD_SERIES_NUMBERS
    (1 s for a few shards over minutes; 1,000 shards over an hour get 3-minute steps)."""
    per_shard = {i: (start, seq) for i, (start, seq) in per_shard.items() if start is not None and seq}
    if not per_shard:
        return None
    start = min(st for st, _ in per_shard.values())
    end = max(st + len(seq) for st, seq in per_shard.values())
    points = max(10, SHARD_SERIES_NUMBERS // len(per_shard))
    step = max(1, math.ceil((end - start) / points))
    out = {}
    for i, (st, seq) in sorted(per_shard.items()):
        row = [0] * math.ceil((end - start) / step)
        for k, v in enumerate(seq):
            row[(st - start + k) // step] += v
        out[str(i)] = row
    return {"start": start, "step_s": step, "ops": out}


def _judge_errors(out: dict, measurement: Measurement, phase: str, max_error_rate: float,
                 hint: Callable[[str, str, str], Optional[str]] = lambda op, kind, name: None) -> None:
    """``judge_errors`` on a phase as a dict: its error_rate, and complete_with_errors with its
    error_problems when it was complete."""
    out["error_rate"], problems = judge_errors(measurement, phase, max_error_rate, hint)
    if problems is not None and out["status"] == "complete":
        out["status"], out["error_problems"] = "complete_with_errors", problems


def judge_errors(measurement: Measurement, phase: str, max_error_rate: float,
                 hint: Callable[[str, str, str], Optional[str]] = lambda op, kind, name: None
                 ) -> tuple[float, Optional[list[str]]]:
    """(error rate, the problems when it is above ``max_error_rate``, else None). A phase whose calls failed more often than ``max_error_rate`` measured something else
    than the workload (a missing table, keys that already exist, a server that answered only
    errors): it is complete_with_errors, and says which operations and why. Errors that were
    retried until the work succeeded (``counters.retries``: a transaction rolled back and run
    again, a load batch sent again) lost no work and are not counted; nor are a load's duplicate
    keys (a resumed load meets the rows it wrote before). The basis is the whole phase, warm-up
    included: errors (and retries) are not kept apart for the warm-up, so its calls count too."""
    warm = measurement.warmup or {}

    def calls_of(op: str) -> int:
        return sum(s.histogram.get_total_count() for s in (measurement.operations.get(op), warm.get(op)) if s)
    failed: dict[str, dict[str, int]] = {}
    for key, n in measurement.errors.items():
        op, kind, name = key.split(":", 2)
        if phase == "load" and kind == "duplicate":
            continue
        failed.setdefault(op, {})[f"{kind}: {name}"] = n
    calls = sum(calls_of(op) for op in set(measurement.operations) | set(warm))
    errors = max(0, sum(sum(v.values()) for v in failed.values()) - measurement.counters.get("retries", 0))
    rate = errors / (calls + errors) if calls + errors else 0.0
    problems: Optional[list[str]] = None
    if rate > max_error_rate:
        problems = []
        for op, kinds in sorted(failed.items()):
            if op not in measurement.operations:
                continue
            calls = calls_of(op) + sum(kinds.values())
            text = (f"{op}: {sum(kinds.values()):,} of {calls:,} calls failed "
                    f"({', '.join(f'{k} ×{n:,}' for k, n in sorted(kinds.items(), key=lambda x: -x[1]))})")
            hints = [h for h in (hint(op, *k.split(": ", 1)) for k in kinds) if h]
            problems.append(text + ("; " + "; ".join(dict.fromkeys(hints)) if hints else ""))
    return round(rate, 6), problems


def lost_before_failure(doc: ShardResult, failed_at: Optional[float]) -> float:
    """Seconds a crashed shard measured and lost, said before it is resumed: from the end of its
    last persisted segment to the recorded failure (its process was dead by then), at most one
    persistence interval. Only for a shard whose last segment was a periodic one (its call went
    on after it); the segment a resume continues with records the same as ``lost_s``, and the
    shard is then done, so the seconds are never counted twice."""
    if failed_at is None or doc.status == "done" or not doc.segments:
        return 0.0
    last = doc.segments[-1]
    if last.get("persisted") != "interval" or not last.get("ended_at"):
        return 0.0
    lost = max(0.0, float(failed_at) - float(last["ended_at"]))
    if last.get("persist_interval_s"):
        lost = min(lost, float(last["persist_interval_s"]))
    return round(lost, 3)


def run_phases(plan: Plan, store: Store, run: RunPlan, missing_all: Optional[list] = None) -> dict:
    """One run's merged load and run phases (``missing_all`` collects its missing shards)."""
    cid = plan.campaign_id
    missing_all = [] if missing_all is None else missing_all
    phases = {}
    client_settings = _client_settings(store, cid, run)
    for phase in [p for p in plan.phases if p in ("load", "run")]:
        failures, failed_at = {}, {}
        for i in range(run.shard_count):
            try:
                record = store.get_json(failure_key(store, cid, run.run_id, phase, i))
            except KeyError:
                continue
            failures[i] = record["error"]
            if isinstance(record.get("at"), (int, float)):
                failed_at[i] = record["at"]
        docs = _ShardDocs(store, cid, run.run_id, phase)
        if not failures and not store.list(phase_prefix(store, cid, run.run_id, phase)):
            # the phase never started (an earlier phase or run stopped the campaign)
            phases[phase] = {"phase": phase, "status": "not run"}
            continue
        edges = []
        for edge in ("start", "end"):
            try:
                edges.append(store.get_json(window_key(store, cid, run.run_id, phase, edge)))
            except KeyError:
                edges.append(None)
        merged = merge(run.family, run.workload, run.shard_count, phase, docs, failures,
                       plan.max_error_rate, window=window_deltas(*edges),
                       load_counts=[s.load_count for s in run.shards] if phase == "load" else None,
                       failed_at=failed_at, client_settings=client_settings)
        gone = _edge_missing(phase, edges) if merged.status != "missing" else None
        if gone:
            merged.server_last = merged.server is None  # (said after the rest of the phase)
            merged.server = {**(merged.server or {}), "missing": gone}
        phases[phase] = merged.to_dict()
        for m in merged.shards.missing if merged.shards else []:
            missing_all.append({"run_id": run.run_id, "phase": phase, **m})
    return phases


def ferretdb_warnings(settings: Optional[dict]) -> list[str]:
    """A FerretDB 1.x target (the server says so) without target.options.ferretdb_backend_url:
    no index serves its _id lookups, and the result says so where its other warnings are."""
    settings = settings or {}
    server = settings.get("server") or {}
    if not (server.get("ferretdb_version") or settings.get("ferretdb_version")) or settings.get("ferretdb_backend_url"):
        return []
    return [f"FerretDB {server.get('ferretdb_version') or settings.get('ferretdb_version')} without "
            "target.options.ferretdb_backend_url: no index serves _id lookups on its PostgreSQL backend, every "
            "point read or update scans the collection (about 5x slower than with it, docs/targets.md); set it "
            "(or run scripts/ferretdb-index) to measure FerretDB rather than the scans"]


def aggregate(plan: Plan, store: Store, redacted_campaign: Optional[dict] = None,
              interrupted: Optional[str] = None, failure: Optional[str] = None) -> dict:
    """Read every shard's file from the store and build result.json's content.
    ``interrupted``: the campaign was stopped (Ctrl-C, SIGTERM: the signal's name): its status
    is ``interrupted`` unless every phase had completed. ``failure``: the error of the step that
    stopped the campaign early (the state machine's run_error, redacted), kept as ``failure``."""
    cid = plan.campaign_id
    runs_out: list = []
    missing_all: list = []
    for run in plan.runs:
        phases = run_phases(plan, store, run, missing_all)
        runs_out.append(_run_result(run, phases, stage_checks(store, cid, run.run_id),
                                    stage_preparation(store, cid, run.run_id)))
        refused = lock_refusal(store, cid, run.run_id)
        if refused:
            runs_out[-1]["refused"] = refused
    statuses = [p.get("status") for r in runs_out for p in r["phases"].values()]
    if interrupted:
        status = "interrupted" if any(s != "complete" for s in statuses) else "complete"
    elif all(s == "complete" for s in statuses):
        status = "complete"
    elif all(s in ("complete", "complete_with_errors") for s in statuses):
        status = "complete_with_errors"
    elif any(s in ("partial", "missing", "interrupted") for s in statuses):
        status = "partial"
    elif all(s in ("complete", "complete_with_errors", "not run") for s in statuses):
        # nothing ran incompletely, but a phase never ran: a step before it failed (a prepare step
        # that could not reach the server, a search step): the campaign failed, as the runner and
        # its exit status (3) say, and summary.md now says the same
        status = "failed"
    else:
        status = "incomplete"
    if status in ("complete", "complete_with_errors") and any(
            not c.get("passed", True) for r in runs_out for c in (r.get("checks") or {}).values()):
        status = "check_failed"  # measured completely, but the database broke a consistency condition
    result = {"schema_version": RESULT_SCHEMA_VERSION, "kind": "dbswarm-result", "campaign_id": cid,
              "name": plan.name, "seed": plan.seed, "created_at": time.time(), "status": status,
              "campaign": redacted_campaign, "runs": runs_out, "missing_shards": missing_all}
    if interrupted:
        result["interrupted"] = {"by": interrupted, "resume": f"dbswarm resume {cid}"}
    if failure:
        result["failure"] = failure
    result["cost"] = _cost(store, cid, runs_out)
    try:
        search_doc = store.get_json(campaign_key(store, cid, SEARCH_DOC))
    except KeyError:
        search_doc = None
    if search_doc:
        result["search"] = result_section(search_doc)
    try:
        adaptive_doc = store.get_json(campaign_key(store, cid, ADAPTIVE_DOC))  # campaign/adaptive.py
    except KeyError:
        adaptive_doc = None
    if adaptive_doc:
        result["adaptive"] = adaptive_section(adaptive_doc)
    CampaignResult.model_validate(result)  # what schema/result.schema.json publishes is what is written
    return result


def adaptive_section(doc: dict) -> dict:
    """result.json's ``adaptive`` (fanout.adaptive): per cell of the matrix, its attempts (each
    a run of the result: shards, verdict) and what it took."""
    cells = []
    for c in doc.get("cells") or []:
        attempts = c.get("attempts") or []
        last = attempts[-1] if attempts else {}
        cells.append({"cell": c["cell"], "attempts": attempts, "stop": c.get("stop"),
                      "took": {"run_id": last.get("run_id"), "shards": last.get("shards"),
                               "verdict": last.get("verdict")} if attempts else None})
    return {"max_doublings": doc.get("max_doublings"), "cells": cells}


def _cost(store: Store, cid: str, runs_out: list[dict]) -> dict:
    """The plan step's estimate (cost-estimate.json) beside what the shards measurably used:
    worker calls and their seconds from the shard documents (each call's phase time; start-up
    and result writing not included, so the billed seconds are somewhat higher)."""
    try:
        estimate = store.get_json(campaign_key(store, cid, COST_ESTIMATE_DOC))
    except (KeyError, ValueError):
        estimate = None
    calls = sum((p.get("usage") or {}).get("worker_calls", 0) for r in runs_out for p in r["phases"].values())
    seconds = sum((p.get("usage") or {}).get("worker_seconds", 0.0) for r in runs_out for p in r["phases"].values())
    measured = {"worker_calls": calls, "worker_seconds": round(seconds, 1)}
    if estimate:
        mem_gb = estimate["lambda"]["worker_memory_mb"] / 1024
        measured["worker_gb_seconds"] = round(seconds * mem_gb, 1)
    return {"estimate": estimate, "measured": measured}


CHECK_STAGES = ("after_load", "after_run")


def stage_checks(store: Store, campaign_id: str, run_id: str) -> Optional[dict]:
    """The family's consistency checks of a run, by stage (``prepare-<stage>.json``'s
    family.check: {"passed", "conditions", "failures", ...}); None when no stage checked."""
    out = {}
    for stage in CHECK_STAGES:
        try:
            doc = store.get_json(prepare_key(store, campaign_id, run_id, stage))
        except KeyError:
            continue
        check = (doc.get("family") or {}).get("check")
        if isinstance(check, dict):
            out[stage] = check
        elif doc.get("error"):  # a stage with work to do (e.g. a check asked for) that could not run
            out[stage] = {"passed": False, "conditions": [], "failures": [], "error": doc["error"]}
    return out or None


def stage_preparation(store: Store, campaign_id: str, run_id: str) -> Optional[dict]:
    """What the binding did to the target before the load beyond the family's tables
    (``prepare-before_load.json``'s binding_settings.cluster_preparation: MongoDB's sharding of
    the collection, FerretDB's index), with ``skipped``: the steps asked for and not done (a
    server that is no sharded cluster: FerretDB has no enableSharding). None: nothing asked."""
    try:
        doc = store.get_json(prepare_key(store, campaign_id, run_id, "before_load"))
    except KeyError:
        return None
    prep = (doc.get("binding_settings") or {}).get("cluster_preparation")
    if not isinstance(prep, dict) or not prep:
        return None
    out = dict(prep)
    skipped = [f"{name}: {step.get('status')}; " + "; ".join(f"{k}: {v}" for k, v in step.items()
                                                             if k not in ("status", "requested") and v != "ok")
               for name, step in prep.items()
               if isinstance(step, dict) and str(step.get("status", "")).startswith("skipped")]
    if skipped:
        out["skipped"] = skipped
    return out


def lock_refusal(store: Store, campaign_id: str, run_id: str) -> Optional[str]:
    """Why the run (or its phases from one on) did not run: the campaign lock refused it
    (run.service.lock_run wrote it), or the server admits fewer client connections than a phase
    opens (run.service.room_check)."""
    try:
        doc = store.get_json(run_key(store, campaign_id, run_id, REFUSED_DOC))
    except KeyError:
        return None
    return str(doc.get("error") or "") or None


def _run_result(run: RunPlan, phases: dict, checks: Optional[dict] = None,
                preparation: Optional[dict] = None) -> dict:
    t = run.target
    out = {
        "index": run.index, "run_id": run.run_id, "axes": run.axes,
        "target": {"engine": t["engine"], "label": t.get("label") or t["engine"],
                   "url": redact_url(t.get("url")), "options": t.get("options", {}),
                   "is_real_database": run.is_real_database},
        "workload": {"family": run.family, "name": run.workload_name, **run.workload},
        "threads": run.threads, "shard_count": run.shard_count,
        "phases": phases,
        **{k: getattr(run, k) for k in ("cell", "arm", "repeat", "search_step") if getattr(run, k) is not None},
    }
    if checks:
        out["checks"] = checks
    if preparation:
        out["preparation"] = preparation
    if getattr(run, "fanout", None):
        out["fanout"] = run.fanout  # threads_per_shard auto: how the shards were sized
    return out


class _ShardDocs:
    """Shard documents read one at a time as merge_phase asks for them, so aggregating
    thousands of shards holds one document in memory, not all of them."""

    def __init__(self, store: Store, campaign_id: str, run_id: str, phase: str) -> None:
        self.store, self.args = store, (campaign_id, run_id, phase)

    def get(self, shard: int) -> Optional[ShardResult]:
        try:
            return ShardResult.of(self.store.get_json(shard_key(self.store, *self.args, shard)))
        except KeyError:
            return None


# ---- is a phase what it claims to be? (issue 20: never call a broken run complete) ----------------

DEAD_TAIL_S = 5   # seconds without a completed operation at a phase's end, with failures: the target died


class _Integrity:
    """What makes a phase that every shard finished still not complete: client threads that
    ended on an error (the target unreachable, a fatal error class), a load that wrote fewer
    units than planned, a phase whose last seconds completed nothing while calls failed; and
    shards stopped by an interrupt (Ctrl-C / SIGTERM: a graceful stop, resumable)."""

    def __init__(self, phase: str, load_counts: Optional[list[int]]) -> None:
        self.phase, self.load_counts = phase, load_counts
        self.thread_errors: dict[int, list[str]] = {}
        self.short: list[str] = []
        self.stopped = False
        self.lost_seconds = 0.0
        self.gaps: list[tuple[float, float]] = []   # (ended, began again) between a shard's calls
        self.stalls: dict[int, list[dict]] = {}     # shard -> its client threads' stalls (results.stalls)

    @staticmethod
    def interrupted(doc: ShardResult) -> bool:
        last = doc.segments[-1] if doc.segments else {}
        return bool(last.get("interrupted"))

    def shard(self, i: int, doc: ShardResult) -> None:
        errors = [e for seg in doc.segments for e in seg.get("thread_errors") or []
                  if "was still inside a database call" not in e]  # abandoned threads are reported apart
        if errors:
            self.thread_errors[i] = errors
        stalls = stalling.shard_stalls(doc.segments)
        if stalls:
            self.stalls[i] = stalls
        self.lost_seconds += sum(seg.get("lost_s") or 0 for seg in doc.segments)
        for a, b in zip(doc.segments, doc.segments[1:]):
            if b.get("began_at") and a.get("ended_at") and b["began_at"] - a["ended_at"] > 0.5:
                self.gaps.append((a["ended_at"], b["began_at"]))
        if self.interrupted(doc):
            self.stopped = True
            return
        if self.load_counts is not None and doc.status == "done" and doc.segments and i < len(self.load_counts):
            done, planned = doc.segments[-1].get("done", 0), self.load_counts[i]
            if done < planned:
                self.short.append(f"shard {i} loaded {done:,} of {planned:,} planned")

    def problems(self, tl: Any, totals: list[int], span_end: float, measurement: Measurement) -> list[str]:
        out = []
        if self.thread_errors:
            n = sum(len(v) for v in self.thread_errors.values())
            first = next(iter(self.thread_errors.values()))[0]
            out.append(f"{n} client thread(s) ended on an error (shards {', '.join(map(str, self.thread_errors))}): "
                       f"{first}")
        if self.short:
            planned = sum(self.load_counts or [])
            out.append(f"the load wrote fewer records than planned ({planned:,}): " + "; ".join(self.short))
        if tl.start is not None and not self.stopped:
            last = tl.start + len(totals)
            while last > tl.start and not totals[last - 1 - tl.start]:
                last -= 1
            dead = span_end - last
            failing = measurement.total_errors or measurement.counters.get("reconnect_failures")
            if dead >= DEAD_TAIL_S and failing:
                out.append(f"no operation completed in the last {dead:.0f} s of the phase while calls failed "
                           f"({measurement.total_errors:,} errors, {measurement.counters.get('reconnect_failures', 0):,} "
                           "failed reconnects): the target stopped answering")
        return out
