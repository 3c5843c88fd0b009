"""The campaign steps as functions of small JSON events: what the Lambda handlers, the
state machine and the local runner all call. Each step reads what it needs from the
store and returns a small dict (Step Functions payloads stay small).

Events (every one carries "store": results location and "campaign_id" after planning):
  plan       {"campaign": dict | YAML text} | {"campaign_key": key in store}, "results"?: url,
             "campaign_id"?, "max_call_seconds"?, "lead_seconds"?   (both passed through to the
             output, where the state machine finds them; "shard_phases" lists load/run in order)
  arm        {"lead_seconds"?: float}                      -> {"start_at": epoch seconds}
  prepare    {"run_id", "stage": before_load | after_load | after_run | cleanup}
  worker     {"run_id", "phase": load | run, "shard": i, "start_at"?, "checkpoint"?,
              "max_call_seconds"?}                           -> {"status": done | continue, ...}
  failure    {"run_id", "phase", "shard", "error"}         (a shard that failed for good)
  aggregate  {}                                             -> {"result_key", "status", ...}
  compare    {"baseline"?, "thresholds"?}                   -> {"verdict": pass | regressed | ...}
"""
from __future__ import annotations

import json
import os
import re
import secrets as _random
import tempfile
import threading
import time
from typing import Callable, Optional

from . import secrets
from .aggregate import aggregate, failure_key, shard_key
from .documents import (Plan, PrepareEvent, ShardAnswer, ShardBinding, ShardEvent, ShardFailureEvent,
                        ShardResult)
from .errors import DbswarmError
from .measure import Measurement
from .plan import check_shard_limit, make_plan
from .report import write_reports
from .spec import load_campaign, redacted_campaign
from .store import LocalStore, open_store
from .worker import ShardPhase, make_binding, prepare_target, read_window_edge

DEFAULT_LEAD_SECONDS = 2.0
SAFETY_MARGIN_S = 15.0   # stop this long before the platform kills the function
_plan_cache: dict = {}
_lock = threading.Lock()


def new_campaign_id(name: str) -> str:
    return f"{name}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{_random.token_hex(2)}"


def _store(event):
    return open_store(event["store"])


def load_plan(store, campaign_id) -> Plan:
    key = (store.url, campaign_id)
    with _lock:
        if key in _plan_cache:
            return _plan_cache[key]
    plan = Plan.of(store.get_json(store.key(campaign_id, "plan.json")))
    with _lock:
        _plan_cache[key] = plan
    return plan



# ---- plan ---------------------------------------------------------------------------------

def plan_campaign(event: dict) -> dict:
    source = event.get("campaign")
    if source is None and event.get("campaign_key"):
        source = open_store(event["store"]).get_text(event["campaign_key"])
    if source is None:
        raise DbswarmError("plan: the event names no campaign (campaign or campaign_key)")
    campaign, runs = load_campaign(source)
    location = event.get("results") or event.get("store") or campaign.results.location
    store = open_store(location)
    cid = event.get("campaign_id") or new_campaign_id(campaign.name)
    if isinstance(store, LocalStore):
        sqlite_url = str(store.local_root / cid / "sqlite" / "dbswarm.db")
    else:
        sqlite_url = os.path.join(tempfile.gettempdir(), "dbswarm", cid, "dbswarm.db")
    plan = make_plan(campaign, runs, cid, event.get("cpu_count"), sqlite_url=sqlite_url)
    check_shard_limit({run.run_id: run.shard_count for run in plan.runs}, int(os.environ.get("DBSWARM_MAX_SHARDS") or 0))
    store.put_json(store.key(cid, "campaign.json"), redacted_campaign(campaign))
    store.put_json(store.key(cid, "plan.json"), plan.to_dict())
    out_runs = []
    for run in plan.runs:
        item = {"run_id": run.run_id, "index": run.index, "shard_count": run.shard_count, "map_mode": run.map_mode}
        items = [{"shard": i} for i in range(run.shard_count)]
        if run.map_mode == "INLINE":
            item["shards"] = items
        else:
            item["items_key"] = store.key(cid, "runs", run.run_id, "shards.json")
            store.put_json(item["items_key"], items)
        out_runs.append(item)
    phases = plan.phases
    return {"campaign_id": cid, "store": store.url, "name": campaign.name,
            "bucket": getattr(store, "bucket", None),
            "items_prefix": getattr(store, "prefix", ""),
            "has_load": "load" in phases, "has_run": "run" in phases,
            "has_prepare": "prepare" in phases, "has_cleanup": "cleanup" in phases,
            "runs": out_runs,
            "baseline": campaign.results.baseline, "save_baseline": campaign.results.save_baseline,
            "thresholds": campaign.results.thresholds,
            "shard_phases": [p for p in ("load", "run") if p in phases],
            "max_call_seconds": event.get("max_call_seconds"),
            "lead_seconds": float(event.get("lead_seconds") or DEFAULT_LEAD_SECONDS)}


# ---- un-sharded steps -----------------------------------------------------------------------

def arm(event: dict) -> dict:
    """The start instant of a phase's shards: now + lead time for cold starts. Given the
    run and phase, it first reads the measured window's start edge (``window``)."""
    if event.get("run_id") and event.get("phase"):
        window(dict(event, edge="start"))
    lead = float(event.get("lead_seconds", DEFAULT_LEAD_SECONDS))
    return {"start_at": round(time.time() + lead, 3)}


def window_key(store, campaign_id, run_id, phase, edge) -> str:
    return store.key(campaign_id, "runs", run_id, phase, f"window-{edge}.json")


def window(event: dict) -> dict:
    """One edge of a phase's measured window (before its shards start, after they all
    ended): the server's counters and the family's figures, stored beside the shard files."""
    store = _store(event)
    plan = load_plan(store, event["campaign_id"])
    run = plan.run(event["run_id"])
    phase, edge = event["phase"], event["edge"]
    try:
        doc = read_window_edge(run, secrets.resolve(run.target.get("password")), phase, edge)
    except Exception as exc:  # never the campaign's failure: the shards say what is wrong with the target
        doc = {"phase": phase, "edge": edge, "at": time.time(),
               "warnings": [f"the window's {edge} edge was not read: {type(exc).__name__}: {str(exc)[:300]}"]}
    if doc["warnings"]:
        doc["warnings"] = [redact_error(event, w) for w in doc["warnings"]]
    store.put_json(window_key(store, plan.campaign_id, run.run_id, phase, edge), doc)
    return {"run_id": run.run_id, "phase": phase, "edge": edge, "warnings": len(doc["warnings"])}


def prepare_run(event: dict) -> dict:
    ev = PrepareEvent.of(event)
    store = open_store(ev.store)
    plan = load_plan(store, ev.campaign_id)
    run = plan.run(ev.run_id)
    if ev.stage == "after_run":  # after the measurement: what fails here is recorded, never the campaign's end
        try:
            out = prepare_target(run, secrets.resolve(run.target.get("password")), ev.stage)
        except Exception as exc:
            out = {"stage": ev.stage, "seconds": 0.0,
                   "error": redact_error(event, f"{type(exc).__name__}: {str(exc)[:500]}")}
    else:
        out = prepare_target(run, secrets.resolve(run.target.get("password")), ev.stage)
    store.put_json(store.key(plan.campaign_id, "runs", run.run_id, f"prepare-{ev.stage}.json"), out)
    return {"run_id": run.run_id, "stage": ev.stage, "seconds": out["seconds"], "error": out.get("error")}


# ---- shards ---------------------------------------------------------------------------------

def run_shard(event: dict, remaining_seconds: Optional[Callable[[], float]] = None,
              stop_event: Optional[threading.Event] = None) -> dict:
    """One call of one shard's phase. Writes the shard's cumulative result to the store and
    returns {"status": "done" | "continue", "checkpoint", "result_key", ...}."""
    ev = ShardEvent.of(event)
    store = open_store(ev.store)
    cid = ev.campaign_id
    plan = load_plan(store, cid)
    run = plan.run(ev.run_id)
    if ev.shard >= run.shard_count:
        raise DbswarmError(f"shard {ev.shard}: run {run.run_id} has {run.shard_count} shards")
    phase, index = ev.phase, ev.shard
    shard = run.shards[index]
    now = time.time()
    limits = []
    if remaining_seconds is not None:
        limits.append(remaining_seconds() - SAFETY_MARGIN_S)
    if ev.max_call_seconds:
        limits.append(ev.max_call_seconds)
    deadline = now + max(min(limits), 0.5) if limits else None
    checkpoint = ev.checkpoint
    key = shard_key(store, cid, run.run_id, phase, index)
    progress = _progress_writer(run.run_id, phase, index)
    password = secrets.resolve(run.target.get("password"))
    outcome = ShardPhase(run, shard, phase, password, start_at=ev.start_at, deadline=deadline,
                         checkpoint=checkpoint, progress=progress, stop_event=stop_event).execute()
    if password and outcome.info.get("thread_errors"):
        outcome.info["thread_errors"] = [secrets.Redactor(password)(e) for e in outcome.info["thread_errors"]]
    doc = None
    if checkpoint and checkpoint.get("segment", 0) > 0:
        try:
            doc = ShardResult.of(store.get_json(key))
        except KeyError:
            doc = None
    if doc is None:
        doc = ShardResult(campaign_id=cid, run_id=run.run_id, phase=phase, shard=index, threads=shard.threads,
                          binding=ShardBinding(engine=run.engine, is_real_database=run.is_real_database,
                                               settings=_binding_settings(run, password)),
                          started_at=outcome.info["began_at"], start_skew_s=outcome.info.get("start_skew_s"),
                          measurement=Measurement().to_dict())
        measurement = outcome.measurement
    else:
        measurement = Measurement.from_dict(doc.measurement).merge(outcome.measurement)
    if outcome.server_settings:
        doc.binding.settings = {**doc.binding.settings, "server": outcome.server_settings}
    doc.segments.append(outcome.info)
    doc.ended_at = outcome.info["ended_at"]
    doc.status = outcome.status
    doc.measurement = measurement.to_dict()
    store.put_json(key, doc.to_dict())
    if progress:
        progress(outcome.info["done"], measurement.total_errors, final=True)
    return ShardAnswer(run_id=run.run_id, phase=phase, shard=index, status=outcome.status,
                       checkpoint=outcome.checkpoint, result_key=key, segment=outcome.info["segment"],
                       ops=measurement.total_ops, errors=measurement.total_errors).to_dict()


def _binding_settings(run, password):
    try:
        return make_binding(run, password).describe()
    except Exception:
        return {}


def record_shard_failure(event: dict) -> dict:
    """A shard that failed for good (its function raised after retries): keep the reason.
    The error text is trimmed and carries no secrets (bindings' messages are redacted)."""
    ev = ShardFailureEvent.of(event)
    store = open_store(ev.store)
    err = ev.error
    if isinstance(err, dict):
        err = f"{err.get('Error', '')}: {str(err.get('Cause', ''))[:500]}"
    err = redact_error(event, err)
    key = failure_key(store, ev.campaign_id, ev.run_id, ev.phase, ev.shard)
    store.put_json(key, {"shard": ev.shard, "error": str(err)[:1000], "at": time.time()})
    return {"shard": ev.shard, "status": "failed"}


def redact_error(event: dict, text) -> str:
    """An error text as it may be stored or printed: the run's password (when it can be
    resolved) and any credentials in URLs replaced by ***."""
    text = str(text)
    try:
        run = load_plan(_store(event), event["campaign_id"]).run(event["run_id"])
        text = secrets.Redactor(secrets.resolve(run.target.get("password")))(text)
    except Exception:  # no plan, no secret: URL redaction still applies
        pass
    return re.sub(r"([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@]*):[^@\s/]*@", r"\1:***@", text)


def _progress_writer(run_id, phase, shard):
    """Local mode: shards report progress through small files the runner polls."""
    folder = os.environ.get("DBSWARM_PROGRESS_DIR")
    if not folder:
        return None
    path = os.path.join(folder, f"{run_id}.{phase}.{shard}.json")

    def write(done, errors, final=False):
        tmp = path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump({"done": done, "errors": errors, "final": final, "t": time.time(), "pid": os.getpid()}, fh)
        os.replace(tmp, path)
    return write


# ---- aggregate and compare -------------------------------------------------------------------

def aggregate_campaign(event: dict) -> dict:
    store = _store(event)
    cid = event["campaign_id"]
    plan = load_plan(store, cid)
    try:
        campaign = store.get_json(store.key(cid, "campaign.json"))
    except KeyError:
        campaign = None
    result = aggregate(plan, store, campaign)
    keys = write_reports(store, cid, result)
    return {"campaign_id": cid, "status": result["status"], "result_key": keys["result.json"],
            "missing_shards": len(result["missing_shards"]), "runs": len(result["runs"])}


def compare_campaign(event: dict) -> dict:
    from .compare import compare_with_baseline
    return compare_with_baseline(_store(event), event["campaign_id"], event.get("baseline"),
                                 event.get("thresholds") or {}, bool(event.get("save_baseline")))


def run_steps(campaign, results: str, run_shards: Callable[[dict, int], None],
              lead_seconds: float = 1.0) -> dict:
    """The state machine's step order driven directly (benchmarks, tests that run shards
    their own way): plan; per run: prepare -> arm + ``run_shards(event, shard_count)`` for
    the load -> window end -> after_load (secondary indexes) -> arm + run_shards for the run ->
    window end -> after_run (a family's check) -> cleanup; aggregate.
    ``run_shards`` runs every shard of one phase (event + "shard": i) to completion.
    Returns the aggregate step's answer plus "store"."""
    plan = plan_campaign({"campaign": campaign, "results": results})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"]}
    for run in plan["runs"]:
        rid = run["run_id"]
        if plan["has_prepare"]:
            prepare_run(dict(base, run_id=rid, stage="before_load"))
        for phase in ("load", "run"):
            if not plan[f"has_{phase}"]:
                continue
            armed = arm(dict(base, run_id=rid, phase=phase, lead_seconds=lead_seconds))
            run_shards(dict(base, run_id=rid, phase=phase, **armed), run["shard_count"])
            window(dict(base, run_id=rid, phase=phase, edge="end"))
            prepare_run(dict(base, run_id=rid, stage=f"after_{phase}"))
        if plan["has_cleanup"]:
            prepare_run(dict(base, run_id=rid, stage="cleanup"))
    return aggregate_campaign(base) | {"store": plan["store"]}

