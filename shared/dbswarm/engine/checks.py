"""A family's consistency check (TPC-C: clause 3.3.2, by warehouse) after a stage
(after_load, after_run), split by unit into contiguous ranges checked in parallel.

The flow, as the state machine runs it (local mode and Lambda alike; ``drive`` runs the same
calls from Python for ``service.run_steps`` and ``dbswarm resume``):

  prepare (stage)  the stage's own step; answers ``check_ranges``: [0 .. n-1], n = one range
                   per shard of the run, no more than the units (nor ``MAX_RANGES``); [] when
                   the stage has no check. It starts every range afresh.
  CheckRanges      a Map over the range indices, all at once: each range is ``check_range``
                   calls that go on from the range's progress (``check-<stage>-<i>.json``),
                   looping while a call answers ``more``.
  CheckMerge       ``merge_check``: every range's failures into ``prepare-<stage>.json`` as
                   ``family.check`` (what aggregate reads).

A range checks its units one after the other on one connection and stores its progress after
every unit, so a call that dies loses at most the unit it was on; a call stops when one more
unit would pass its time (``max_call_seconds``, at most ``CHECK_CALL_SECONDS``; each call
checks at least one unit). After the run, a check that cannot run is recorded as the stage's
error (a failed check in the result), never the campaign's end, as the rest of after_run;
after the load it fails the run, as the stage's other steps do.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

from dbswarm.bindings.base import Binding
from dbswarm.campaign.limits import MAX_CALL_SECONDS, positive_number
from dbswarm.campaign.plan import INLINE_MAP_LIMIT, split
from dbswarm.credentials import secrets
from dbswarm.documents import CheckEvent, Plan, RunPlan
from dbswarm.engine.parallel import run_in_threads
from dbswarm.engine.target import make_binding
from dbswarm.errors import DbswarmError
from dbswarm.families import base as families
from dbswarm.results.store import Store, check_range_key, load_plan, open_store, prepare_key, redact_error

STAGES = ("after_load", "after_run")
CHECK_CALL_SECONDS = 600.0  # a check call stops after this (the prepare function's limit is 900 s)
# the ranges run in an inline Map, whose iterations Step Functions runs at most 40 at a time:
# more ranges would only wait (and each holds a connection to the database under test)
MAX_RANGES = INLINE_MAP_LIMIT


def _family(run: RunPlan) -> tuple[families.Family, Any]:
    family = families.get(run.family)
    return family, family.workload(run.workload)


def range_count(run: RunPlan, stage: str) -> int:
    """How many ranges the stage's check is split into: one per shard of the run, fewer when
    there are fewer units (or more than ``MAX_RANGES`` shards); 0: the stage has no check."""
    if stage not in STAGES:
        return 0
    family, w = _family(run)
    units = family.check_units(w, stage)
    return min(units, run.shard_count, MAX_RANGES) if units else 0


def range_bounds(units: int, ranges: int, index: int) -> tuple[int, int]:
    """Units [first, end) of range ``index`` of ``ranges``: contiguous, disjoint, sizes differing
    by at most one (larger first), together every unit."""
    sizes = split(units, ranges)
    first = sum(sizes[:index])
    return first, first + sizes[index]


def _fresh(index: int, first: int, end: int) -> dict:
    return {"range": index, "first": first, "end": end, "next": first, "failures": [], "seconds": 0.0,
            "calls": 0, "started_at": None, "ended_at": None}


def start(store: Store, plan: Plan, run: RunPlan, stage: str) -> list[int]:
    """The stage's check begins (the prepare step, after the stage's own work): every range's
    progress written afresh (a stage run again, e.g. after a resumed load, checks the database
    as it is now, not as an earlier check found it). -> the range indices, the Map's items."""
    n = range_count(run, stage)
    if not n:
        return []
    family, w = _family(run)
    units = family.check_units(w, stage)
    for i in range(n):
        store.put_json(check_range_key(store, plan.campaign_id, run.run_id, stage, i), _fresh(i, *range_bounds(units, n, i)))
    return list(range(n))


def check_range(event: dict) -> dict:
    """One call of one range of a stage's check (the CheckRanges Map's task). -> {"more"}."""
    ev = CheckEvent.of(event)
    store = open_store(ev.store)
    plan = load_plan(store, ev.campaign_id, ev.run_id)
    run = plan.run(ev.run_id)
    try:
        return _check_range(ev, store, plan, run)
    except Exception as exc:
        if ev.stage != "after_run":
            raise
        # after the run, what fails is recorded (the merge makes it the stage's error), never the campaign's end
        key = check_range_key(store, plan.campaign_id, run.run_id, ev.stage, ev.range)
        try:
            progress = store.get_json(key)
        except KeyError:
            progress = {"range": ev.range}
        progress["error"] = _redacted(event, f"{type(exc).__name__}: {str(exc)[:500]}")
        store.put_json(key, progress)
        return {"run_id": run.run_id, "stage": ev.stage, "range": ev.range, "more": False, "error": progress["error"]}


def _check_range(ev: CheckEvent, store: Store, plan: Plan, run: RunPlan) -> dict:
    family, w = _family(run)
    units, n = family.check_units(w, ev.stage), range_count(run, ev.stage)
    if ev.range >= n:
        raise DbswarmError(f"check range {ev.range}: the {ev.stage} check of run {run.run_id} has {n} ranges")
    first, end = range_bounds(units, n, ev.range)
    key = check_range_key(store, plan.campaign_id, run.run_id, ev.stage, ev.range)
    try:
        progress = store.get_json(key)
    except KeyError:
        progress = None
    if not progress or (progress.get("first"), progress.get("end")) != (first, end):
        progress = _fresh(ev.range, first, end)  # never started (a direct call), or another split
    answer = {"run_id": run.run_id, "stage": ev.stage, "range": ev.range, "first": first, "end": end}
    if progress.get("error") or progress["next"] >= end:  # a retried call: the range is over
        return dict(answer, more=False, checked=progress["next"] - first, error=progress.get("error"))
    budget = min(positive_number(ev.max_call_seconds, "max_call_seconds", MAX_CALL_SECONDS) or CHECK_CALL_SECONDS,
                 CHECK_CALL_SECONDS)
    t0 = time.time()
    progress["calls"] += 1
    progress["started_at"] = progress.get("started_at") or t0
    b = _binding(run)
    b.connect()
    try:
        slowest = 0.0
        while progress["next"] < end:
            u0 = time.time()
            progress["failures"] += family.check_unit(b, w, ev.stage, progress["next"])
            progress["next"] += 1
            u1 = time.time()
            slowest = max(slowest, u1 - u0)
            progress["seconds"] = round(progress["seconds"] + u1 - u0, 3)
            progress["ended_at"] = u1
            store.put_json(key, progress)  # a call that dies loses at most the unit it was on
            if u1 - t0 + slowest > budget:  # one more unit would pass the call's limit
                break
    finally:
        b.close()
    return dict(answer, more=progress["next"] < end, checked=progress["next"] - first)


def _binding(run: RunPlan) -> Binding:
    return make_binding(run, secrets.resolve(run.target.get("password")))


def _redacted(event: dict, text: str) -> str:
    return redact_error(event, text)


def merge_check(event: dict) -> dict:
    """After every range (the CheckMerge task): their failures, in unit order, merged into
    ``prepare-<stage>.json`` ``family.check`` ({passed, conditions, warehouses, failures[:100],
    failures_total, seconds (checking, summed over the ranges), wall_seconds (the first range's
    start to the last one's end), calls, ranges}). A range that recorded an error (after the
    run) or did not finish makes the check failed with that error; after the load, one that did
    not finish raises (the run fails, as the stage's other steps)."""
    ev = CheckEvent.of(event)
    store = open_store(ev.store)
    plan = load_plan(store, ev.campaign_id, ev.run_id)
    run = plan.run(ev.run_id)
    family, w = _family(run)
    n = range_count(run, ev.stage)
    if not n:
        return {"run_id": run.run_id, "stage": ev.stage, "ranges": 0, "passed": None}
    units = family.check_units(w, ev.stage)
    failures: list = []
    starts: list = []
    ends: list = []
    errors: list = []
    seconds, calls = 0.0, 0
    for i in range(n):
        first, end = range_bounds(units, n, i)
        try:
            p = store.get_json(check_range_key(store, plan.campaign_id, run.run_id, ev.stage, i))
        except KeyError:
            p = {}
        where = f"range {i + 1} of {n} ({family.check_unit_name} {first + 1}" + (f"-{end})" if end > first + 1 else ")")
        if p.get("error"):
            errors.append(f"{where}: {p['error']}")
        elif (p.get("first"), p.get("end")) != (first, end) or p.get("next", first) < end:
            errors.append(f"{where}: not finished ({max(0, p.get('next', first) - first)} of {end - first} checked)")
        failures += p.get("failures") or []
        seconds += p.get("seconds") or 0.0
        calls += p.get("calls") or 0
        starts += [p["started_at"]] if p.get("started_at") else []
        ends += [p["ended_at"]] if p.get("ended_at") else []
    if errors and ev.stage != "after_run":
        raise DbswarmError(f"the {ev.stage} consistency check: " + "; ".join(errors))
    check = family.check_summary(w, ev.stage, failures, seconds)
    check.update(calls=calls, ranges=n,
                 wall_seconds=round(max(ends) - min(starts), 3) if starts and ends else 0.0)
    pkey = prepare_key(store, plan.campaign_id, run.run_id, ev.stage)
    try:
        doc = store.get_json(pkey)
    except KeyError:
        doc = {"stage": ev.stage, "seconds": 0.0}
    if errors:
        check["passed"] = False
        check["error"] = doc["error"] = _redacted(event, "consistency check: " + "; ".join(errors))[:2000]
    doc.setdefault("family", {})["check"] = check
    store.put_json(pkey, doc)
    return {"run_id": run.run_id, "stage": ev.stage, "ranges": n, "passed": check["passed"],
            "failures_total": check.get("failures_total", len(failures)), "error": bool(errors)}


def drive(invoke: Callable[[dict], dict], event: dict, ranges: list[int]) -> Optional[dict]:
    """The state machine's CheckRanges + CheckMerge from Python (``service.run_steps``, ``dbswarm
    resume``): every range in its own thread, ``invoke``-ing its calls while it answers more,
    then the merge. ``event``: store, campaign_id, run_id, stage, max_call_seconds?. None when
    there are no ranges; an error of a range is raised after every range ended."""
    if not ranges:
        return None
    def one(i: int) -> None:
        while invoke(dict(event, action="check_range", range=i))["more"]:
            pass
    run_in_threads(one, [(i,) for i in ranges])
    return invoke(dict(event, action="check_merge"))
