"""Merge every shard's measurement into the campaign result, exactly.

Histograms are merged (never percentiles averaged), counters summed, timelines summed on
the wall-clock second. Steady-state throughput is taken over the whole seconds in which
every shard of the phase was running, after the warm-up; the overall figure (all
operations over the phase's wall-clock span) is reported beside it.
"""
from __future__ import annotations

import math
import time
from typing import Optional

from . import families
from .documents import RESULT_SCHEMA_VERSION, CampaignResult, Plan, RunPlan, ShardResult
from .measure import Measurement, OperationStats
from .secrets import redact_url

READ_OPS = ("READ",)
WRITE_OPS = ("UPDATE", "INSERT", "READ-MODIFY-WRITE")
MIN_STEADY_SECONDS = 3


def shard_key(store, campaign_id, run_id, phase, shard) -> str:
    return store.key(campaign_id, "runs", run_id, phase, f"shard-{shard}.json")


def failure_key(store, campaign_id, run_id, phase, shard) -> str:
    return store.key(campaign_id, "runs", run_id, phase, f"shard-{shard}.failed.json")


def _merged(stats: dict[str, OperationStats], names) -> Optional[OperationStats]:
    out = None
    for n in names:
        if n in stats:
            out = (out or OperationStats()).merge(stats[n])
    return out


def window_deltas(start: Optional[dict], end: Optional[dict]) -> Optional[dict]:
    """The measured window from its two edge documents (``worker.read_window_edge``):
    after - before of every counter both edges have; None unless both were read."""
    if not start or not end:
        return None
    out: dict = {"seconds": round(end["at"] - start["at"], 3),
                 "warnings": list(start.get("warnings", [])) + list(end.get("warnings", []))}
    for key in ("server", "family"):
        a, b = start.get(key), end.get(key)
        if isinstance(a, dict) and isinstance(b, dict):
            out[key] = {k: b[k] - a[k] for k in sorted(b)
                        if k in a and isinstance(a[k], (int, float)) and isinstance(b[k], (int, float))}
    return out


def cross_check(client: Optional[dict], server: Optional[dict]) -> dict:
    """Client-counted against server-counted, for each figure both sides have."""
    out = {}
    for k, n in (client or {}).items():
        if server and k in server:
            out[k] = {"client": n, "server": server[k],
                      "ratio": round(n / server[k], 4) if server[k] else None}
    return out


def merge_phase(family: str, workload: dict, shard_count: int, phase: str,
                shard_docs, failures: dict[int, str], max_error_rate: float = 0.01,
                window: Optional[dict] = None) -> dict:
    """One run's phase from its shard documents (``shard_docs.get(i)``: a ShardResult, or
    None when shard i wrote nothing); ``window``: ``window_deltas`` of the phase's measured
    window (the server's own counters), when both edges were read."""
    expected = shard_count
    measurement = Measurement()
    starts, ends, skews, complete, partial, missing = [], [], {}, [], [], []
    abandoned = {}  # shard -> client threads given up inside a database call (worker._join)
    settings = None
    for i in range(expected):
        doc = shard_docs.get(i)
        if doc is not None:
            doc = ShardResult.of(doc)
        if doc is None:
            missing.append({"shard": i, "reason": failures.get(i, "no result (the shard died or never ran)")})
            continue
        measurement.merge(Measurement.from_dict(doc.measurement))
        starts.append(doc.started_at)
        ends.append(doc.ended_at)
        if doc.start_skew_s is not None:
            skews[i] = doc.start_skew_s
        n = sum(seg.get("abandoned_threads", 0) for seg in doc.segments)
        if n:
            abandoned[i] = n
        settings = settings or doc.binding.settings
        if doc.status == "done":
            complete.append(i)
        else:
            partial.append({"shard": i, "status": doc.status,
                            "reason": failures.get(i, "stopped before finishing")})
    out = {"phase": phase, "shards": {"expected": expected, "complete": complete, "partial": partial,
                                      "missing": missing},
           "binding_settings": settings}
    if not starts:
        out["status"] = "missing"
        return out
    w = workload
    span_start, span_end = min(starts), max(ends)
    duration = max(span_end - span_start, 1e-9)
    measured = measurement.total_ops  # after the warm-up: what the percentiles are of
    warm_ops = measurement.warmup_ops
    total = measured + warm_ops
    tl = measurement.timeline
    warm = float(w.get("warmuptime") or 0) if phase == "run" else 0.0
    ws, we = math.ceil(max(starts) + warm), math.floor(min(ends))
    steady_seconds = max(0, we - ws)
    totals = tl.totals()
    steady_ops = None
    if steady_seconds >= MIN_STEADY_SECONDS and tl.start is not None:
        lo, hi = ws - tl.start, we - tl.start
        steady_ops = sum(totals[max(lo, 0):max(hi, 0)]) / steady_seconds
    ops = {name: s.summary() | {"ops_per_s": round(s.count / duration, 2)}
           for name, s in sorted(measurement.operations.items())}
    out.update({
        "status": "complete" if not missing and not partial else "partial",
        "started_at": span_start, "ended_at": span_end, "duration_s": round(duration, 3),
        "operations_total": total, "errors_total": measurement.total_errors,
        "ops_per_s": round(total / duration, 2),
        "steady": {"window": [ws, we], "seconds": steady_seconds,
                   "ops_per_s": round(steady_ops, 2) if steady_ops is not None else None},
        "throughput": round(steady_ops if steady_ops is not None else total / duration, 2),
        "throughput_basis": "steady-state window" if steady_ops is not None else "whole phase",
        "operations": ops, "errors": measurement.errors, "counters": measurement.counters,
        "start_skew_s": {"max": round(max(skews.values()), 4) if skews else None,
                         "per_shard": skews},
        "abandoned_threads": {"count": sum(abandoned.values()), "per_shard": abandoned},
        "mix": {name: round(s.count / measured, 6) for name, s in measurement.operations.items()} if measured else {},
    })
    if measurement.warmup:
        # warm-up operations: counted in operations_total and the timeline, out of the percentiles
        out["warmup"] = {"seconds": warm, "operations_total": warm_ops,
                         "operations": {name: s.summary() for name, s in sorted(measurement.warmup.items())}}
        out["operations_after_warmup"] = measured
    read = _merged(measurement.operations, READ_OPS)
    write = _merged(measurement.operations, WRITE_OPS)
    fam = families.get(family)
    _judge_errors(out, measurement, phase, max_error_rate,
                  hint=lambda op, kind, name: fam.error_hint(fam.workload(w), phase, op, kind, name))
    out["read_latency"] = read.summary() if read else None
    out["write_latency"] = write.summary() if write else None
    rate = fam.limits(fam.workload(w)).rate if phase == "run" else None
    c = measurement.counters
    if rate:
        out["latency_basis"] = ("service time from each call's start, and response time from its intended start "
                                "on the target rate's schedule (operations.*.intended)")
        out["schedule"] = {"target_per_s": rate, "steps": c.get("paced_steps", 0),
                           "late_starts": c.get("late_starts", 0)}
    else:
        out["latency_basis"] = ("service time from each call's start (closed loop, no target rate: a stall "
                                "delays the following operations instead of showing in their latency)")
    if window is not None:
        client = fam.client_statements(fam.workload(w), phase, measurement)
        checks = cross_check(client, window.get("server"))
        out["server"] = {
            "window_s": window["seconds"], "counters": window.get("server"), "family": window.get("family"),
            "client": client, "cross_check": checks, "warnings": window["warnings"],
            "note": "deltas of the server's own counters between the window's edges, read on one connection "
                    "before the shards started and after they all ended; server-wide counters (MariaDB "
                    "status, MongoDB serverStatus) include every other client of the server"}
        if window.get("server") is None and not window["warnings"]:
            out["server"]["note"] = "this engine keeps no server-side counters"
    extra = fam.phase_summary(w, phase, measurement, duration, window=window)
    if extra is not None:
        out[fam.name] = extra  # the family's own figures (e.g. TPS and QPS as its reference tool counts them)
    out["histograms"] = {k: v["histogram"] for k, v in measurement.to_dict()["operations"].items()}
    out["timeline"] = tl.to_dict(histograms=False)
    out["intervals"] = tl.interval_summary()
    return out


def _judge_errors(out: dict, measurement: Measurement, phase: str, max_error_rate: float,
                 hint=lambda op, kind, name: None) -> None:
    """A phase whose calls failed more often than ``max_error_rate`` measured something else
    than the workload (a missing table, keys that already exist, a server that answered only
    errors): it is complete_with_errors, and says which operations and why. A load's duplicate
    keys are not counted: a resumed load meets the rows it wrote before."""
    failed: dict[str, dict[str, int]] = {}
    for key, n in measurement.errors.items():
        op, kind, name = key.split(":", 2)
        if phase == "load" and kind == "duplicate":
            continue
        failed.setdefault(op, {})[f"{kind}: {name}"] = n
    calls = sum(s.histogram.get_total_count() for s in measurement.operations.values())
    errors = sum(sum(v.values()) for v in failed.values())
    rate = errors / (calls + errors) if calls + errors else 0.0
    out["error_rate"] = round(rate, 6)
    if rate > max_error_rate and out["status"] == "complete":
        out["status"] = "complete_with_errors"
        problems = []
        for op, kinds in sorted(failed.items()):
            if op not in measurement.operations:
                continue
            calls = measurement.operations[op].histogram.get_total_count() + sum(kinds.values())
            text = (f"{op}: {sum(kinds.values()):,} of {calls:,} calls failed "
                    f"({', '.join(f'{k} ×{n:,}' for k, n in sorted(kinds.items(), key=lambda x: -x[1]))})")
            hints = [h for h in (hint(op, *k.split(": ", 1)) for k in kinds) if h]
            problems.append(text + ("; " + "; ".join(dict.fromkeys(hints)) if hints else ""))
        out["error_problems"] = problems


def aggregate(plan: Plan, store, redacted_campaign: Optional[dict] = None) -> dict:
    """Read every shard's file from the store and build result.json's content."""
    cid = plan.campaign_id
    runs_out, missing_all = [], []
    for run in plan.runs:
        phases = {}
        for phase in [p for p in plan.phases if p in ("load", "run")]:
            failures = {}
            for i in range(run.shard_count):
                try:
                    failures[i] = store.get_json(failure_key(store, cid, run.run_id, phase, i))["error"]
                except KeyError:
                    pass
            docs = _ShardDocs(store, cid, run.run_id, phase)
            if not failures and not store.list(store.key(cid, "runs", run.run_id, phase) + "/"):
                # the phase never started (an earlier phase or run stopped the campaign)
                phases[phase] = {"phase": phase, "status": "not run"}
                continue
            edges = []
            for edge in ("start", "end"):
                try:
                    edges.append(store.get_json(store.key(cid, "runs", run.run_id, phase, f"window-{edge}.json")))
                except KeyError:
                    edges.append(None)
            merged = merge_phase(run.family, run.workload, run.shard_count, phase, docs, failures,
                                 plan.max_error_rate, window=window_deltas(*edges))
            phases[phase] = merged
            for m in merged["shards"]["missing"]:
                missing_all.append({"run_id": run.run_id, "phase": phase, **m})
        runs_out.append(_run_result(run, phases, stage_checks(store, cid, run.run_id)))
    statuses = [p.get("status") for r in runs_out for p in r["phases"].values()]
    if all(s == "complete" for s in statuses):
        status = "complete"
    elif all(s in ("complete", "complete_with_errors") for s in statuses):
        status = "complete_with_errors"
    else:
        status = "partial"
    if status != "partial" and any(not c.get("passed", True) for r in runs_out for c in (r.get("checks") or {}).values()):
        status = "check_failed"  # measured completely, but the database broke a consistency condition
    result = {"schema_version": RESULT_SCHEMA_VERSION, "kind": "dbswarm-result", "campaign_id": cid,
              "name": plan.name, "seed": plan.seed, "created_at": time.time(), "status": status,
              "campaign": redacted_campaign, "runs": runs_out, "missing_shards": missing_all}
    CampaignResult.model_validate(result)  # what schema/result.schema.json publishes is what is written
    return result


CHECK_STAGES = ("after_load", "after_run")


def stage_checks(store, campaign_id, run_id) -> Optional[dict]:
    """The family's consistency checks of a run, by stage (``prepare-<stage>.json``'s
    family.check: {"passed", "conditions", "failures", ...}); None when no stage checked."""
    out = {}
    for stage in CHECK_STAGES:
        try:
            doc = store.get_json(store.key(campaign_id, "runs", run_id, f"prepare-{stage}.json"))
        except KeyError:
            continue
        check = (doc.get("family") or {}).get("check")
        if isinstance(check, dict):
            out[stage] = check
        elif doc.get("error"):  # a stage with work to do (e.g. a check asked for) that could not run
            out[stage] = {"passed": False, "conditions": [], "failures": [], "error": doc["error"]}
    return out or None


def _run_result(run: RunPlan, phases: dict, checks: Optional[dict] = None) -> dict:
    t = run.target
    out = {
        "index": run.index, "run_id": run.run_id, "axes": run.axes,
        "target": {"engine": t["engine"], "label": t.get("label") or t["engine"],
                   "url": redact_url(t.get("url")), "options": t.get("options", {}),
                   "is_real_database": run.is_real_database},
        "workload": {"family": run.family, "name": run.workload_name, **run.workload},
        "threads": run.threads, "shard_count": run.shard_count,
        "phases": phases,
    }
    if checks:
        out["checks"] = checks
    return out


class _ShardDocs:
    """Shard documents read one at a time as merge_phase asks for them, so aggregating
    thousands of shards holds one document in memory, not all of them."""

    def __init__(self, store, campaign_id, run_id, phase):
        self.store, self.args = store, (campaign_id, run_id, phase)

    def get(self, shard) -> Optional[ShardResult]:
        try:
            return ShardResult.of(self.store.get_json(shard_key(self.store, *self.args, shard)))
        except KeyError:
            return None
