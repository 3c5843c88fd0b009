"""Peak search: step one workload key (client threads / virtual users, or a target rate) run
after run, and stop on the user's rule — the way the white papers' "max connections under
stress" and HammerDB's stepped virtual users are found, planned and executed by the state
machine: the plan step plans the first step's run; after each run the state machine calls
``next_step`` (the plan function, ``action: next_step``), which merges the run's shards,
records the step, decides, and plans the next run (or none); a Choice loops back to the
per-run Map. Every step's shard data stays under ``runs/<run>/``; the decision and its reason
are in ``search.json`` and result.json (``search``). The settings (``Search``), the curve's
marks and result.json's section are ``dbswarm.campaign.peak``'s (the results read them too).

Stepping: geometric (start, start·factor, …) until a stop rule fires or ``max`` /
``max_steps``; then ``refine`` steps narrow the edge (geometric midpoints): the smallest
value on the plateau after a throughput plateau, the largest passing value after an SLO,
error or rate failure (NoSQLBench's findmax: geometric, then narrowing).
"""
from __future__ import annotations

import math
from statistics import NormalDist
from typing import Any, Optional

from dbswarm.campaign.measured import MeasuredPhase
from dbswarm.campaign.peak import Search, by_value, pooled, summarize
from dbswarm.campaign.plan import check_shard_limit, make_plan
from dbswarm.campaign.spec import Campaign, Run, Target, _slug
from dbswarm.errors import CampaignError
from dbswarm.families import base as families
from dbswarm.measure.headroom import limits_figures

# ---- one step's figures ------------------------------------------------------------------------

def step_figures(search: Search, value: Any, run_id: str, phase: MeasuredPhase, shard_count: int) -> dict:
    """What the decision reads from a merged run phase."""
    p99s = []
    for s in phase.operations.values():
        p = (s.get("intended") or {}).get("p99_us") or s.get("p99_us")
        if p is not None:
            p99s.append(p)
    thr = phase.throughput
    out = {"value": value, "run_id": run_id, "shards": shard_count, "status": phase.status,
           "throughput": thr, "p99_us": max(p99s) if p99s else None, "error_rate": phase.error_rate,
           "achieved": round(thr / value, 4) if thr is not None and search.key != "threads" and value else None}
    out["se"], out["intervals"] = interval_spread(phase)
    client = phase.client
    out["client"] = client.get("verdict")
    if limits_figures(client):
        # the load generator's ceiling or the host's contention, not the database's: never a peak,
        # and the growth stops here (docs/client-health.md)
        out["client_bound"] = client.get("reason") or "the load generator was the bottleneck"
    out["failed"] = _failure(search, out)
    return out


def interval_spread(phase: MeasuredPhase) -> tuple[Optional[float], int]:
    """The standard error of a step's throughput from the spread of its per-second totals over
    the steady window (every shard running, after the warm-up), and how many seconds: (None, n)
    with fewer than two."""
    tl = phase.timeline
    window = phase.steady.window if phase.steady else None
    if tl.get("start") is None or not window:
        return None, 0
    start, seqs = tl["start"], list((tl.get("ops") or {}).values())
    values = [sum(seq[sec - start] for seq in seqs if 0 <= sec - start < len(seq))
              for sec in range(window[0], window[1])]
    n = len(values)
    if n < 2:
        return None, n
    mean = sum(values) / n
    sd = math.sqrt(sum((v - mean) ** 2 for v in values) / (n - 1))
    return round(sd / math.sqrt(n), 3), n


def _failure(search: Search, s: dict) -> Optional[str]:
    st = search.stop
    if s.get("client_bound"):
        return f"client-bound: {s['client_bound']}"
    if s["status"] in (None, "missing", "not run", "partial", "interrupted", "incomplete") or s["throughput"] is None:
        return f"the run did not complete ({s['status']})"
    if st.error_rate is not None and (s["error_rate"] or 0) > st.error_rate:
        return f"error rate {s['error_rate']:.2%} > {st.error_rate:.2%}"
    if st.p99_ms is not None and s["p99_us"] is not None and s["p99_us"] > st.p99_ms * 1000:
        return f"p99 {s['p99_us'] / 1000:.1f} ms > {st.p99_ms:g} ms"
    if st.achieved_below is not None and s["achieved"] is not None and s["achieved"] < st.achieved_below:
        return f"achieved {s['throughput']:,.0f}/s is {s['achieved']:.0%} of the {s['value']:g}/s target " \
               f"(< {st.achieved_below:.0%})"
    return None


# ---- the decision -------------------------------------------------------------------------------

def _round(search: Search, v: float) -> Any:
    return max(1, int(round(v))) if search.integer else round(v, 3)


def gain_tests(search: Search, steps: list[dict]) -> list[dict]:
    """Each geometric value's gain over the best passing value before it, both with their
    samples pooled (``peak.pooled``), and the noise-aware test of it: ``below`` when the gain's
    one-sided upper confidence bound (``stop.confidence``; its standard error from the two
    values' standard errors, by the delta method) is below ``stop.gain_below``, ``inconclusive``
    when only the gain itself is, ``above`` otherwise (None: the first value, or a failed one).
    One noisy run no longer ends the growth: it must be surely below the threshold."""
    z = NormalDist().inv_cdf(search.stop.confidence)
    groups = by_value(steps)
    order = list(dict.fromkeys(s["value"] for s in steps))
    out, best = [], None  # best: (throughput, standard error, value) of the best passing value so far
    for v in order:
        samples = groups.get(v)
        if not samples:
            out.append({"value": v, "samples": 0, "gain": None, "upper": None, "test": None, "against": None})
            continue
        mean, se = pooled(samples)
        row = {"value": v, "samples": len(samples), "throughput": mean, "se": se, "gain": None, "upper": None,
               "test": None, "against": None}
        if best is not None and best[0]:
            gain = mean / best[0] - 1
            rel = math.sqrt(sum((e / t) ** 2 for t, e in ((mean, se), best[:2]) if e is not None and t))
            upper = gain + z * (1 + gain) * rel
            row.update(gain=gain, upper=upper, against=best[2], test="below" if upper < search.stop.gain_below
                       else "inconclusive" if gain < search.stop.gain_below else "above")
        out.append(row)
        if best is None or mean > best[0]:
            best = (mean, se, v)
    return out


def _unconfirmed(search: Search, state: dict, values: list) -> Optional[Any]:
    """The value among ``values`` with the fewest runs, while it has fewer than
    ``stop.peak_samples`` and steps remain (None: every one has its runs). Taking the fewest
    first interleaves the repeats of two values, so a load that comes or goes meets both."""
    groups = by_value(state["steps"])
    counts = [(len(groups.get(v, [])), v) for v in dict.fromkeys(values) if groups.get(v)]
    if not counts or len(state["steps"]) >= search.max_steps:
        return None
    n, value = min(counts, key=lambda c: c[0])
    return value if n < search.stop.peak_samples else None


_CONTINUE = object()  # the growth goes on: decide() returns the growth's own answer


def _annotated_tests(search: Search, grow: list[dict]) -> list[dict]:
    """gain_tests, and every sample of a value showing the value's pooled gain and test."""
    tests = gain_tests(search, grow)
    by = {t["value"]: t for t in tests}
    for s in grow:
        t = by[s["value"]]
        s["gain"] = None if t["gain"] is None else round(t["gain"], 4)
        s["gain_upper"] = None if t["upper"] is None else round(t["upper"], 4)
        s["gain_test"] = t["test"]
    return tests


def _grow(search: Search, state: dict) -> Any:
    """The growth's next value, or ``_CONTINUE`` once a stop rule fired and the values it rests
    on have their runs (``state`` gains ``stop`` and the refine phase)."""
    steps = state["steps"]
    grow = [s for s in steps if s.get("kind") in ("grow", "repeat", "confirm")]
    # the growth's frontier: the last value stepped to (repeats and confirmations of earlier
    # values run after it do not move it)
    last = next(s for s in reversed(steps) if s.get("kind", "grow") == "grow")
    tests = _annotated_tests(search, grow)
    reason = rule = None
    k = search.stop.gain_steps
    recent = tests[-k:]
    if last["failed"]:
        rule = "client-bound" if last.get("client_bound") else "failure"
        reason = f"{search.key} {last['value']:g}: {last['failed']}"
    elif tests[-1]["test"] == "inconclusive" and tests[-1]["samples"] <= search.stop.repeats \
            and len(steps) < search.max_steps:
        state["next_kind"] = "repeat"  # the same value again: one more sample of it
        return last["value"]
    elif len(tests) > k and all(t["test"] == "below" for t in recent):
        rule = "plateau"
        reason = (f"throughput gain below {search.stop.gain_below:.0%} for {k} step(s), surely (upper "
                  f"{search.stop.confidence:.0%} bound): "
                  + ", ".join(f"{t['value']:g} → {t['gain']:+.1%} (≤ {t['upper']:+.1%}"
                              + (f", {t['samples']} samples)" if t["samples"] > 1 else ")") for t in recent))
    elif _round(search, last["value"] * search.factor) > search.max:
        rule, reason = "max", f"the next step would exceed max {search.max:g}"
    elif len(steps) >= search.max_steps:
        rule, reason = "max_steps", f"{search.max_steps} steps run (max_steps)"
    if rule is None:
        return _round(search, last["value"] * search.factor)
    # before stopping: the values the decision rests on have their runs (a plateau: the steps it
    # tested and the values they were compared with; and the peak)
    rests_on = [v for t in recent for v in (t["against"], t["value"]) if v is not None] if rule == "plateau" else []
    confirm = _confirm(search, state, rests_on)
    if confirm is not None:
        return confirm
    state["stop"] = {"rule": rule, "reason": reason, "at": last["value"]}
    state["phase"] = "refine"
    return _CONTINUE


def _confirm(search: Search, state: dict, values: list) -> Optional[Any]:
    """A value among ``values`` and the peak still short of its runs (its next run is a
    ``confirm``), or None."""
    peak = summarize(search, state)["peak"]
    confirm = _unconfirmed(search, state, values + ([peak["value"]] if peak else []))
    if confirm is not None:
        state["next_kind"] = "confirm"
    return confirm


def decide(search: Search, state: dict) -> Optional[Any]:
    """The next value for this cell's search, or None when it is done (``state`` gains
    ``stop``). ``state``: {"steps": [...], "phase": "grow" | "refine", "stop"?: {...}}."""
    steps = state["steps"]
    if state.get("phase", "grow") == "grow":
        value = _grow(search, state)
        if value is not _CONTINUE:
            return value
    # narrowing: between the last passing value and the first failing one, or below the knee;
    # then the peak (a narrowing step may be it) gets its runs
    if len([s for s in steps if s.get("kind") == "refine"]) >= search.refine or len(steps) >= search.max_steps:
        return _confirm(search, state, [])
    lo, hi = _edge(search, state)
    if lo is None or hi is None:
        return None
    mid = _round(search, math.sqrt(lo * hi))
    if mid in (lo, hi) or any(s["value"] == mid for s in steps):
        mid = _round(search, (lo + hi) / 2)
        if mid in (lo, hi) or any(s["value"] == mid for s in steps):
            return None
    return mid


def _edge(search: Search, state: dict) -> Any:
    """The interval the narrowing halves: after a failure, (largest passing, smallest failing);
    after a plateau, (largest value below the knee, the knee)."""
    steps = sorted(state["steps"], key=lambda s: s["value"])
    passing = [s for s in steps if not s["failed"]]
    if state["stop"]["rule"] == "failure":
        failing = [s for s in steps if s["failed"]]
        lo = max((s["value"] for s in passing), default=None)
        hi = min((s["value"] for s in failing if lo is None or s["value"] > lo), default=None)
        return lo, hi
    if state["stop"]["rule"] != "plateau":
        return None, None
    knee = summarize(search, state)["knee"]
    if knee is None:
        return None, None
    below = [s["value"] for s in passing if s["value"] < knee["value"]]
    return (max(below) if below else None), knee["value"]


# ---- planning the steps (called by service.plan_campaign and service.next_step) -----------------

def _step_run(search: Search, cell: dict, index: int, value: Any, kind: str, step: int) -> Any:
    fam = families.get(cell["workload"]["family"])
    workload = fam.workload({**cell["workload"], search.key: value})
    run_id = f"{index:03d}-{_slug(cell['cell'][4:] or cell['cell'])}-{search.key}{_slug(f'{value:g}')}"[:80]
    return Run(index=index, run_id=run_id, target=Target.model_validate(cell["target"]), workload=workload,
               axes={**cell["axes"], search.key: value}, seed_index=cell["index"],
               search_step={"cell": cell["cell"], "step": step, "kind": kind, "key": search.key, "value": value})


def geometric_values(search: Search) -> list:
    """The values the geometric steps can reach: start, start·factor, … up to max (decide's rule)."""
    values = [_round(search, search.start)]
    while _round(search, values[-1] * search.factor) <= search.max and len(values) < search.max_steps:
        values.append(_round(search, values[-1] * search.factor))
    return values


def possible_steps(campaign: Any, cells: list) -> list:
    """Every run the search could make, as an upper bound for the cost estimate: per cell the
    geometric values up to max, plus ``refine`` narrowing steps and the confirmations (two
    values run ``peak_samples`` times each) counted at the largest value, the ``max_steps``
    largest of those."""
    search = Search.model_validate(campaign.search.model_dump())
    values = geometric_values(search)
    extra = search.refine + 2 * (search.stop.peak_samples - 1)
    values = sorted(values + [values[-1]] * extra, reverse=True)[:search.max_steps]
    out: list = []
    for c in cells:
        cell = {"cell": c.run_id, "index": c.index, "axes": c.axes,
                "target": c.target.model_dump(mode="json", exclude_none=True),
                "workload": c.workload.model_dump(mode="json")}
        out += [_step_run(search, cell, len(out), v, "grow", k + 1) for k, v in enumerate(values)]
    return out


def first_step(campaign: Any, cells: list, cpu_count: Any = None, max_shards: int = 0) -> tuple[list, dict]:
    """The first step's run (of the first cell) and search.json's initial content. The largest
    value the search can reach is planned too, so that a max no shard can carry (threads per
    shard) or above the deployment's MaxShards is refused now, naming search.max, not after
    hours of steps."""
    search = Search.model_validate(campaign.search.model_dump())
    problems = [f"search.key: {search.key!r} is not a key of the {c.workload.family} workload"
                for c in cells if search.key not in type(c.workload).model_fields]
    if problems:
        raise CampaignError(sorted(set(problems)))
    top = geometric_values(search)[-1]
    for c in cells:
        cell = {"cell": c.run_id, "index": c.index, "axes": c.axes,
                "target": c.target.model_dump(mode="json", exclude_none=True),
                "workload": c.workload.model_dump(mode="json")}
        try:
            largest = make_plan(campaign, [_step_run(search, cell, c.index, top, "grow", 1)], "validate", cpu_count,
                                sqlite_url="validate.db").runs[0]
            check_shard_limit({largest.run_id: largest.shard_count}, max_shards)
        except CampaignError as err:
            raise CampaignError([f"search.max: {search.key} {top:g} (the largest step of cell {c.run_id}) cannot "
                                 f"be planned: {p}" for p in err.problems]) from None
    doc: dict[str, Any] = {"schema_version": 1, "spec": search.model_dump(mode="json"), "current": 0,
           "cells": [{"cell": c.run_id, "index": c.index, "axes": c.axes, "phase": "grow", "steps": [],
                      "target": c.target.model_dump(mode="json", exclude_none=True),
                      "workload": c.workload.model_dump(mode="json")} for c in cells]}
    start = _round(search, search.start)
    return [_step_run(search, doc["cells"][0], 0, start, "grow", 1)], doc


def advance(doc: dict, plan: Any, last_run: Any, phase: MeasuredPhase, campaign_doc: dict,
            max_shards: int = 0) -> Any:
    """Record the step ``last_run`` measured (``phase``: its run phase, else its load phase),
    decide, and return the next step's RunPlan (or None: every cell's search is done). ``doc``
    (search.json's content) is updated in place. A next value that cannot be planned stops the
    cell's growth as its ``max``."""
    search = Search.model_validate(doc["spec"])
    cell = doc["cells"][doc["current"]]
    meta = last_run.search_step or {}
    step = step_figures(search, meta.get("value"), last_run.run_id, phase, last_run.shard_count)
    step["kind"] = meta.get("kind", "grow")
    cell["steps"].append(step)
    campaign = Campaign.model_validate({**{k: campaign_doc[k] for k in ("name", "seed", "fanout", "phases")
                                           if k in campaign_doc},
                                        "results": {"max_error_rate": plan.max_error_rate}})
    while True:
        value = decide(search, cell)
        kind = cell.pop("next_kind", None) or ("grow" if cell["phase"] == "grow" else "refine")
        if value is None:
            cell["phase"] = "done"
            doc["current"] += 1
            if doc["current"] >= len(doc["cells"]):
                return None
            cell = doc["cells"][doc["current"]]
            value, kind = _round(search, search.start), "grow"
        run = _step_run(search, cell, len(plan.runs), value, kind, len(cell["steps"]) + 1)
        embedded = next((r.target.get("url") for r in plan.runs if r.target.get("engine") == run.target.engine),
                        None)
        try:
            new_run = make_plan(campaign, [run], plan.campaign_id, sqlite_url=embedded).runs[0]
            check_shard_limit({new_run.run_id: new_run.shard_count}, max_shards)
            return new_run
        except CampaignError as err:
            if kind != "grow" or cell.get("stop") or not cell["steps"]:
                raise
            # a value no shard can carry (or over MaxShards): the search's max, reached early
            cell["stop"] = {"rule": "max", "reason": f"{search.key} {value:g} cannot be planned: "
                                                    f"{'; '.join(err.problems)}", "at": cell["steps"][-1]["value"]}
            cell["phase"] = "refine"
