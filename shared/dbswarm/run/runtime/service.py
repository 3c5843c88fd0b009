"""The campaign steps as functions of small JSON events: what the Lambda handlers, the
state machine and the local runner all call. Each step reads what it needs from the
store and returns a small dict (Step Functions payloads stay small).

Events (every one carries "store": results location and "campaign_id" after planning):
  plan       {"campaign": dict | YAML text} | {"campaign_key": key in store}, "results"?: url,
             "campaign_id"?, "max_call_seconds"?, "lead_seconds"?   (both passed through to the
             output, where the state machine finds them; "shard_phases" lists load/run in order)
  arm        {"lead_seconds"?: float}                      -> {"start_at": epoch seconds}
  prepare    {"run_id", "stage": before_load | after_load | after_run | cleanup}
             -> {"check_ranges": [0 .. n-1], the ranges of the family's consistency check ([]: none)}
  check      {"action": "check_range", "run_id", "stage", "range": i, "max_call_seconds"?} -> {"more"}
             {"action": "check_merge", "run_id", "stage"}   (``dbswarm.engine.checks``)
  worker     {"run_id", "phase": load | run, "shard": i, "start_at"?, "checkpoint"?,
              "max_call_seconds"?}                           -> {"status": done | continue, ...}
  failure    {"run_id", "phase", "shard", "error"}         (a shard that failed for good)
  aggregate  {}                                             -> {"result_key", "status", ...}
  compare    {"baseline"?, "thresholds"?}                   -> {"verdict": pass | regressed | ...}
"""
from __future__ import annotations

import json
import os
import secrets as _random
import sys
import tempfile
import threading
import time
from typing import Any, Callable, Optional

from dbswarm.bindings.base import Binding
from dbswarm.campaign import adaptive
from dbswarm.campaign.admission import check_targets
from dbswarm.campaign.cost import check_max_cost, estimate
from dbswarm.campaign.limits import MAX_CALL_SECONDS, MAX_LEAD_SECONDS, positive_number
from dbswarm.campaign.plan import check_shard_limit, make_plan
from dbswarm.campaign.search import advance, first_step
from dbswarm.campaign.spec import check_deployed_references, load_campaign, redacted_campaign
from dbswarm.credentials import secrets
from dbswarm.documents import (
    Plan,
    PrepareEvent,
    ShardAnswer,
    ShardBinding,
    ShardEvent,
    ShardFailureEvent,
    ShardResult,
)
from dbswarm.engine import checks, connection_room, lock
from dbswarm.engine.segment import SegmentCall
from dbswarm.engine.target import make_binding, prepare_target, read_window_edge
from dbswarm.engine.worker import ShardPhase
from dbswarm.errors import CampaignError, DbswarmError, step_error_text
from dbswarm.families import base as families
from dbswarm.measure.recorder import Measurement
from dbswarm.results.aggregate import aggregate, run_phases
from dbswarm.results.phase import PhaseResult
from dbswarm.results.report.files import write_reports
from dbswarm.results.store import (
    ADAPTIVE_DOC,
    CAMPAIGN_DOC,
    COST_ESTIMATE_DOC,
    PLAN_DOC,
    REFUSED_DOC,
    RESULT_DOC,
    SEARCH_DOC,
    SHARDS_DOC,
    LocalStore,
    Store,
    cache_plan,
    campaign_key,
    failure_key,
    load_plan,
    open_store,
    prepare_key,
    redact_error,
    run_key,
    shard_key,
    window_key,
)
from dbswarm.results.verdict.regression import compare_with_baseline
from dbswarm.run.runtime import alive, interrupt, metrics, statements

DEFAULT_LEAD_SECONDS = 2.0
LEAD_PER_SHARD_ENV = "DBSWARM_LEAD_PER_SHARD_S"  # seconds of start lead per shard (default: lead_per_shard)
LOCAL_SHARD_START_CPU_S = 0.9  # a local shard's process start-up, CPU seconds (2 CPUs, busy: 100 shards
# began over 44 s with a fixed lead, 0.44 s each)
SAFETY_MARGIN_S = 15.0   # stop this long before the platform kills the function
PERSIST_INTERVAL_S = 15.0  # a running shard writes what it measured this often (a crash loses at most this)
PERSIST_INTERVAL_ENV = "DBSWARM_PERSIST_INTERVAL_S"


def new_campaign_id(name: str) -> str:
    return f"{name}-{time.strftime('%Y%m%dT%H%M%S', time.gmtime())}-{_random.token_hex(2)}"


def _store(event: dict) -> Any:
    return open_store(event["store"])


# ---- plan ---------------------------------------------------------------------------------

def plan_campaign(event: dict) -> dict:
    source = event.get("campaign")
    if source is None and event.get("campaign_key"):
        source = open_store(event["store"]).get_text(event["campaign_key"])
    if source is None:
        raise DbswarmError("plan: the event names no campaign (campaign or campaign_key)")
    campaign, runs = load_campaign(source)
    if secrets.in_cloud():  # a schedule or a direct execution does not pass the API: the same rules
        check_deployed_references(campaign, os.environ.get("DBSWARM_SECRET_PREFIX"))
    check_targets(runs)  # the deployment's AllowedTargets (DBSWARM_ALLOWED_TARGETS), when set
    location = event.get("results") or event.get("store") or campaign.results.location
    store = open_store(location)
    cid = event.get("campaign_id") or new_campaign_id(campaign.name)
    if isinstance(store, LocalStore):
        assert store.local_root is not None  # a local store has its folder
        sqlite_url = str(store.local_root / cid / "sqlite" / "dbswarm.db")
    else:
        sqlite_url = os.path.join(tempfile.gettempdir(), "dbswarm", cid, "dbswarm.db")
    search_doc = None
    cells = runs  # the matrix's cells: a search's cost is estimated over every step it could run
    adaptive_doc = None
    if campaign.search:
        runs, search_doc = first_step(campaign, runs, event.get("cpu_count"),
                                      int(os.environ.get("DBSWARM_MAX_SHARDS") or 0))
    elif campaign.fanout.adaptive:  # one run at a time: a bound one is run again with twice the shards
        runs, adaptive_doc = adaptive.first_run(campaign, runs)
    plan = make_plan(campaign, runs, cid, event.get("cpu_count"), sqlite_url=sqlite_url)
    check_shard_limit({run.run_id: run.shard_count for run in plan.runs}, int(os.environ.get("DBSWARM_MAX_SHARDS") or 0))
    cost = estimate(campaign, cells, cpu_count=event.get("cpu_count"))
    check_max_cost(cost, campaign.max_cost)  # refused before anything is written or run
    check_plan_statements(plan, "prepare" in plan.phases)
    store.put_json(campaign_key(store, cid, CAMPAIGN_DOC), redacted_campaign(campaign))
    store.put_json(campaign_key(store, cid, PLAN_DOC), plan.to_dict())
    store.put_json(campaign_key(store, cid, COST_ESTIMATE_DOC), cost)  # beside the result: what the cloud would use
    if search_doc:
        store.put_json(campaign_key(store, cid, SEARCH_DOC), search_doc)
    if adaptive_doc:
        store.put_json(campaign_key(store, cid, ADAPTIVE_DOC), adaptive_doc)
    out_runs = [_run_item(store, cid, run) for run in plan.runs]
    phases = plan.phases
    return {"campaign_id": cid, "store": store.url, "name": campaign.name,
            "bucket": getattr(store, "bucket", None),
            "items_prefix": getattr(store, "prefix", ""),
            "has_load": "load" in phases, "has_run": "run" in phases,
            "has_prepare": "prepare" in phases, "has_cleanup": "cleanup" in phases,
            "search": bool(search_doc or adaptive_doc),  # NextStep after each run: the search's, or adaptive's
            "runs": out_runs,
            "baseline": campaign.results.baseline, "save_baseline": campaign.results.save_baseline,
            "thresholds": campaign.results.thresholds,
            # the compare step runs for a named baseline, a baseline to save, or a baseline configuration
            "compare": bool(campaign.results.baseline or campaign.results.save_baseline
                            or (campaign.repeat and campaign.repeat.baseline)),
            "shard_phases": [p for p in ("load", "run") if p in phases],
            "max_call_seconds": positive_number(event.get("max_call_seconds"), "max_call_seconds", MAX_CALL_SECONDS),
            "lead_seconds": positive_number(event.get("lead_seconds"), "lead_seconds", MAX_LEAD_SECONDS)
            or DEFAULT_LEAD_SECONDS}


def check_plan_statements(plan: Any, prepares: bool) -> None:
    """The runs' statements prepared on one connection before anything is written or run
    (``run.statements``), for the workloads whose tables this campaign does not create: those it
    creates are checked by the prepare phase's before_load step, once they exist."""
    runs = [r for r in plan.runs if not (prepares and families.get(r.family).has_stage(
        families.get(r.family).workload(r.workload), "before_load"))]
    problems, _ = statements.check_runs(runs, temporary=False)
    if problems:
        raise CampaignError(problems)


def _run_item(store: Store, cid: str, run: Any) -> dict:
    """A run as the state machine's per-run Map iterates it: shard items inline, or in S3."""
    item = {"run_id": run.run_id, "index": run.index, "shard_count": run.shard_count, "map_mode": run.map_mode}
    items = [{"shard": i} for i in range(run.shard_count)]
    if run.map_mode == "INLINE":
        item["shards"] = items
    else:
        item["items_key"] = run_key(store, cid, run.run_id, SHARDS_DOC)
        store.put_json(item["items_key"], items)
    return item


def next_step(event: dict) -> dict:
    """A search's decision after each of its runs (the state machine's NextStep): merge the
    run just measured, record the step in search.json, decide, and plan the next run.
    Returns the state machine's state (``event["state"]``) with ``runs`` = [the next run] and
    ``more``: whether to loop back to the per-run Map."""
    state = dict(event["state"])
    store = open_store(state["store"])
    cid = state["campaign_id"]
    plan = Plan.of(store.get_json(campaign_key(store, cid, PLAN_DOC)))  # the newest: this process may hold an older one
    try:  # fanout.adaptive (campaign/adaptive.py) rides the search's loop with a document of its own
        doc, name, step = store.get_json(campaign_key(store, cid, ADAPTIVE_DOC)), ADAPTIVE_DOC, adaptive.advance
    except KeyError:
        doc, name, step = store.get_json(campaign_key(store, cid, SEARCH_DOC)), SEARCH_DOC, advance
    last = plan.runs[-1]
    phases = run_phases(plan, store, last)
    measured = PhaseResult.of(phases.get("run") or phases.get("load") or {})  # ({}: neither, nothing measured)
    campaign_doc = store.get_json(campaign_key(store, cid, CAMPAIGN_DOC))
    new_run = step(doc, plan, last, measured, campaign_doc, int(os.environ.get("DBSWARM_MAX_SHARDS") or 0))
    if new_run is not None:
        plan.runs.append(new_run)
        store.put_json(campaign_key(store, cid, PLAN_DOC), plan.to_dict())
        cache_plan(store, cid, plan)
    store.put_json(campaign_key(store, cid, name), doc)
    state["runs"] = [_run_item(store, cid, new_run)] if new_run is not None else []
    state["more"] = new_run is not None
    return state


# ---- un-sharded steps -----------------------------------------------------------------------

def arm(event: dict) -> dict:
    """The start instant of a phase's shards: now + lead time for cold starts. Given the
    run and phase, it first reads the measured window's start edge (``window``)."""
    if event.get("run_id") and event.get("phase"):
        try:
            lock_run(event)  # a campaign without a prepare step takes the lock here
        except lock.CampaignLocked:
            raise
        except Exception:  # a target that does not answer: the shards say what is wrong with it
            pass
        room_check(event)
        window(dict(event, edge="start"))
    lead = start_lead(event)
    return {"start_at": round(time.time() + lead, 3)}


def room_check(event: dict) -> None:
    """Raises ``TooFewConnections`` (the run's error: the campaign ends ``failed`` before the
    phase starts) when the server admits fewer client connections than the phase opens
    (``engine.connection_room``), rather than the shards waiting a minute for the refused
    ones and measuring fewer threads than asked."""
    store = _store(event)
    plan = load_plan(store, event["campaign_id"], event["run_id"])
    run = plan.run(event["run_id"])
    if not connection_room.wanted(run):
        return
    try:
        password = secrets.resolve(run.target.get("password"))
    except Exception:  # a secret that cannot be read: the shards say so, as before the check
        return
    try:
        connection_room.check(run, event["phase"], password)
    except connection_room.TooFewConnections as err:
        text = redact_error(event, str(err))
        _record_refusal(store, plan, run, text)
        raise connection_room.TooFewConnections(text) from None


def start_lead(event: dict) -> float:
    """Seconds from now to a phase's start barrier: the campaign's ``fanout.start_lead_s`` when
    it sets one; else the event's ``lead_seconds`` plus, where shards are started one after
    another on few CPUs (local mode), ``lead_per_shard`` per shard of the run after the first:
    with a fixed lead, 100 local shards began up to 44 s after the barrier."""
    given = event.get("lead_seconds")
    lead = DEFAULT_LEAD_SECONDS if given is None else float(given)  # 0 is a lead too (in-process tests)
    if not event.get("run_id"):
        return lead
    try:
        plan = load_plan(_store(event), event["campaign_id"], event["run_id"])
        run = plan.run(event["run_id"])
    except Exception:  # no plan to read: the event's lead
        return lead
    if plan.start_lead_s:
        return float(plan.start_lead_s)
    # the event's lead covers the first shard's start; each further one starts after it
    return lead + lead_per_shard() * max(0, run.shard_count - 1)


def lead_per_shard() -> float:
    """Seconds of start lead per shard: DBSWARM_LEAD_PER_SHARD_S when set; in local mode (the
    emulated functions' AWS_EXECUTION_ENV) every shard is an OS process started on this machine,
    the last one running about LOCAL_SHARD_START_CPU_S / CPUs per shard after the first; in the
    cloud none (the Map starts the functions at once; the event's lead covers a cold start)."""
    if os.environ.get(LEAD_PER_SHARD_ENV):
        return float(os.environ[LEAD_PER_SHARD_ENV])
    if os.environ.get("AWS_EXECUTION_ENV") == "dbswarm-local":
        return round(LOCAL_SHARD_START_CPU_S / max(1, os.cpu_count() or 1), 3)
    return 0.0


def window(event: dict, binding: Any = None) -> dict:
    """One edge of a phase's measured window (before its shards start, after they all
    ended): the server's counters and the family's figures, stored beside the shard files."""
    store = _store(event)
    plan = load_plan(store, event["campaign_id"], event["run_id"])
    run = plan.run(event["run_id"])
    phase, edge = event["phase"], event["edge"]
    try:
        doc = read_window_edge(run, secrets.resolve(run.target.get("password")), phase, edge, binding=binding,
                               mid_phase=bool(event.get("after_warmup_s")))
    except Exception as exc:  # never the campaign's failure: the shards say what is wrong with the target
        doc = {"phase": phase, "edge": edge, "at": time.time(),
               "warnings": [f"the window's {edge} edge was not read: {type(exc).__name__}: {str(exc)[:300]}"]}
    if doc["warnings"]:
        doc["warnings"] = [redact_error(event, w) for w in doc["warnings"]]
    if event.get("after_warmup_s"):
        if doc.get("unread") or not ("server" in doc or "family" in doc):
            # a read failed: keep the edge read before the shards started rather than a broken one,
            # and say why there (the figures then include the warm-up: their basis says so). A
            # warning alone (an optional statistic the server does not keep) breaks nothing.
            why = "; ".join(doc["warnings"]) or "nothing was read"
            _note_warmup_edge_missed(store, plan.campaign_id, run.run_id, phase,
                                     f"the start edge read when the warm-up ended failed: {why}")
            return {"run_id": run.run_id, "phase": phase, "edge": edge, "warnings": len(doc["warnings"])}
        doc["after_warmup_s"] = event["after_warmup_s"]  # the window starts when the warm-up ended
    store.put_json(window_key(store, plan.campaign_id, run.run_id, phase, edge), doc)
    return {"run_id": run.run_id, "phase": phase, "edge": edge, "warnings": len(doc["warnings"])}


def lock_run(event: dict) -> Optional[dict]:
    """Take (or refresh) the campaign's lock on a run's tables (``dbswarm.engine.lock``); raises
    ``CampaignLocked`` naming the campaign that holds them. None when the run takes no lock."""
    store = _store(event)
    plan = load_plan(store, event["campaign_id"])
    run = plan.run(event["run_id"])
    if not lock.wanted(run):
        return None
    try:
        return lock.on_target(run, secrets.resolve(run.target.get("password")), lock.acquire, plan.campaign_id)
    except lock.CampaignLocked as err:
        _record_refusal(store, plan, run, str(err))
        raise


def _record_refusal(store: Store, plan: Any, run: Any, text: str) -> None:
    """Why the run (or its phases from one on) did not run: its story in result.json's run and
    summary.md (the state machine's error alone reached only the runner's stderr); put_json redacts."""
    store.put_json(run_key(store, plan.campaign_id, run.run_id, REFUSED_DOC), {"error": text, "at": time.time()})


def release_locks(event: dict, timeout: float = 10.0) -> None:
    """Release the campaign's locks on every run's target (best effort, bounded in time: a
    target that is gone keeps a lock that goes stale on its own)."""
    store = _store(event)
    plan = load_plan(store, event["campaign_id"])
    done, seen = [], set()
    for run in plan.runs:
        if not lock.wanted(run):
            continue
        where = (json.dumps(run.target, sort_keys=True, default=str), tuple(lock._tables(run)))
        if where in seen:
            continue
        seen.add(where)
        password = secrets.resolve(run.target.get("password"))
        t = threading.Thread(target=_quietly, args=(lock.on_target, run, password, lock.release, plan.campaign_id),
                             daemon=True)
        t.start()
        done.append(t)
    end = time.monotonic() + timeout
    for t in done:
        t.join(max(0.0, end - time.monotonic()))


def _quietly(fn: Any, *args: Any) -> None:
    try:
        fn(*args)
    except Exception:
        pass


def prepare_run(event: dict) -> dict:
    ev = PrepareEvent.of(event)
    store = open_store(ev.store)
    plan = load_plan(store, ev.campaign_id, ev.run_id)
    run = plan.run(ev.run_id)
    password = secrets.resolve(run.target.get("password")) if ev.stage != "after_run" else None
    if ev.stage == "after_run":  # after the measurement: what fails here is recorded, never the campaign's end
        try:
            out = prepare_target(run, secrets.resolve(run.target.get("password")), ev.stage)
        except Exception as exc:
            out = {"stage": ev.stage, "seconds": 0.0,
                   "error": redact_error(event, f"{type(exc).__name__}: {str(exc)[:500]}")}
    else:
        held = lock_run(event) if ev.stage != "cleanup" else None
        with lock.heartbeat(run, password, plan.campaign_id):
            out = prepare_target(run, password, ev.stage)
        if ev.stage == "cleanup" and lock.wanted(run):
            _quietly(lock.on_target, run, password, lock.release, plan.campaign_id)
        if held and held.get("taken_over"):
            out["lock_taken_over"] = held["taken_over"]  # stale locks of campaigns that died
    store.put_json(prepare_key(store, plan.campaign_id, run.run_id, ev.stage), out)
    # the family's consistency check follows (the state machine's CheckRanges Map over these, then CheckMerge)
    ranges = checks.start(store, plan, run, ev.stage) if not out.get("error") else []
    return {"run_id": run.run_id, "stage": ev.stage, "seconds": out["seconds"], "error": out.get("error"),
            "check_ranges": ranges}


# ---- shards ---------------------------------------------------------------------------------

def persist_interval() -> Optional[float]:
    """Seconds between two persisted states of a running shard (``DBSWARM_PERSIST_INTERVAL_S``,
    default 15; 0 turns it off: a shard then writes only at the end of its call)."""
    raw = os.environ.get(PERSIST_INTERVAL_ENV)
    if raw is None or not raw.strip():
        return PERSIST_INTERVAL_S
    try:
        value = float(raw)
    except ValueError:
        value = -1.0
    if not 0 <= value < float("inf"):
        raise DbswarmError(f"{PERSIST_INTERVAL_ENV}: expected seconds (a number >= 0), got {raw!r}")
    return value or None


def _note_warmup_edge_missed(store: Store, campaign_id: str, run_id: str, phase: str, why: str) -> None:
    """Why the window's start edge was not read when the warm-up ended, into the edge read
    before the shards started (which then stands for the window's start): the family's figures
    say their window includes the warm-up, and why."""
    key = window_key(store, campaign_id, run_id, phase, "start")
    try:
        doc = store.get_json(key)
    except KeyError:
        return
    if doc.get("after_warmup_missed"):  # the first reason stands (a later call of shard 0 finds the instant passed)
        return
    doc["after_warmup_missed"] = why[:600]
    store.put_json(key, doc)


def _warmup_edge(event: dict, run: Any, phase: str, index: int, start_at: Any) -> Optional["_Cancel"]:
    """The measured window's start edge read again when the warm-up ends (a family whose
    window excludes it: TPC-C's ramp-up, as HammerDB), by shard 0's call, at the instant the
    shards' warm-up ends (the start barrier + warmuptime). None when nothing is to be read
    (another shard, another phase, no warm-up, already read, or the instant has passed: the
    window then starts before the shards, and the family's summary says so)."""
    if phase != "run" or index != 0 or not start_at:
        return None
    family = families.get(run.family)
    w = family.workload(run.workload)
    if not family.window_after_warmup(w):
        return None
    store = _store(event)
    try:
        if store.get_json(window_key(store, event["campaign_id"], run.run_id, phase, "start")).get("after_warmup_s"):
            return None
    except KeyError:
        pass
    delay = start_at + w.warmuptime - time.time()
    if delay <= 0:
        _note_warmup_edge_missed(store, event["campaign_id"], run.run_id, phase,
                                 f"shard 0's call began {-delay:.1f} s after the warm-up had ended")
        return None
    base = {k: event[k] for k in ("store", "campaign_id")}
    edge_event = dict(base, run_id=run.run_id, phase=phase, edge="start", after_warmup_s=w.warmuptime)
    due = start_at + w.warmuptime
    cancelled = threading.Event()

    def read_at_the_instant() -> None:
        # connected beforehand: the edge is read at the instant, not a connection later
        made = make_binding(run, secrets.resolve(run.target.get("password")))
        b: Optional[Binding] = made
        try:
            made.connect()
        except Exception:
            b = None  # window() connects (and records what fails)
        try:
            if not cancelled.wait(max(0.0, due - time.time())):
                window(edge_event, binding=b)
        finally:
            if b is not None:
                _quietly(b.close)

    thread = threading.Thread(target=_quietly, args=(read_at_the_instant,), daemon=True)
    thread.start()
    return _Cancel(cancelled, thread)


class _Cancel:
    """The warm-up edge's reader: cancel() stops it if not yet due and waits for a read under way."""

    def __init__(self, flag: threading.Event, thread: threading.Thread):
        self.flag, self.thread = flag, thread

    def cancel(self) -> None:
        self.flag.set()
        self.thread.join(timeout=10)


def _stored_state(store: Store, key: Any, checkpoint: Any) -> Any:
    """What the results store already holds of this shard, and where this call starts from:
    (doc or None, the checkpoint to start from, seconds lost, already done?).

    The stored file wins over the event's checkpoint when it is ahead of it: a call retried
    (by Lambda or the state machine) after the failed attempt persisted segments continues
    from the last persisted state, and a shard already done is not run again, so nothing is
    counted twice. When the last stored segment was a periodic one (``persisted: interval``:
    its call went on after it), that call died: what it measured since is lost, at most one
    persistence interval, and the next segment says how much (``lost_s``)."""
    try:
        doc = ShardResult.of(store.get_json(key))
    except KeyError:
        return None, checkpoint, 0.0, False
    if not doc.segments:
        return None, checkpoint, 0.0, False
    last = doc.segments[-1]
    last_segment = last.get("segment", 0)
    if (checkpoint or {}).get("segment", 0) <= last_segment:  # a retry: its state is already persisted
        if doc.status == "done" and not last.get("interrupted"):
            return doc, None, 0.0, True
        checkpoint = getattr(doc, "resume_checkpoint", None)
        if not checkpoint:
            return None, None, 0.0, False
    lost = 0.0
    if last.get("persisted") == "interval" and checkpoint.get("segment") == last_segment + 1:
        lost = _lost_since(store, key, doc, last_segment, float(last["ended_at"]), last.get("persist_interval_s"))
    return doc, checkpoint, round(lost, 3), False


def _lost_since(store: Store, key: str, doc: ShardResult, segment: int, persisted_at: float,
                interval: Optional[float]) -> float:
    """Seconds a call that died measured after its last persisted write (``persisted_at``):
    until its last sign of life (``alive``: a local results folder), else until the recorded
    failure (the state machine's), at most one persistence interval when neither says when it
    died (the call's process was dead by now, which bounds it)."""
    seen = alive.last_alive(store, key, segment)  # the sign of life of the call that wrote ``segment``
    if seen is not None and seen >= persisted_at:
        return max(0.0, seen - persisted_at)
    died_by = time.time()
    try:  # the state machine recorded the shard's failure: its process was dead by then
        failed = store.get_json(failure_key(store, doc.campaign_id, doc.run_id, doc.phase, doc.shard))
        died_by = min(died_by, float(failed["at"]))
    except (KeyError, ValueError, TypeError):
        pass
    lost = max(0.0, died_by - persisted_at)
    return min(lost, float(interval)) if interval else lost


def run_shard(event: dict, remaining_seconds: Optional[Callable[[], float]] = None,
              stop_event: Optional[threading.Event] = None) -> dict:
    """One call of one shard's phase. Writes the shard's cumulative result to the store and
    returns {"status": "done" | "continue", "checkpoint", "result_key", ...}.

    Within the call, the shard persists what it measured every ``persist_interval()`` seconds:
    its threads hand in their state between two operations and go on, and the cumulative file
    is written with the checkpoint to continue from (worker.ShardPhase snapshots). A process
    killed mid-call (SIGKILL, out of memory, a Lambda crash) loses at most one interval (and
    a thread inside one long call, up to that call); a retried or resumed call continues from
    the file."""
    ev = ShardEvent.of(event)
    store = open_store(ev.store)
    cid = ev.campaign_id
    plan = load_plan(store, cid, ev.run_id)
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
    interval = persist_interval()
    key = shard_key(store, cid, run.run_id, phase, index)
    doc, checkpoint, lost, already_done = _stored_state(store, key, ev.checkpoint)
    if already_done:
        m = Measurement.from_dict(doc.measurement)
        return ShardAnswer(run_id=run.run_id, phase=phase, shard=index, status="done", checkpoint=None,
                           result_key=key, segment=doc.segments[-1].get("segment", 0),
                           ops=m.total_ops, errors=m.total_errors).to_dict()
    progress = _progress_writer(run.run_id, phase, index)
    password = secrets.resolve(run.target.get("password"))
    if stop_event is None:
        stop_event = interrupt.shard_stop_event()
    measurement = Measurement.from_dict(doc.measurement) if doc is not None else None
    edge = _warmup_edge(event, run, phase, index, ev.start_at)
    try:
        with lock.heartbeat(run, password, cid, enabled=index == 0), \
                alive.Alive(store, key, (checkpoint or {}).get("segment", 0)):  # (lock by shard 0; sign of life)
            outcome, measurement, interrupted = _run_segment(SegmentCall(
                run=run, shard=shard, phase=phase, index=index, event=ev, key=key, store=store, password=password,
                doc=doc, measurement=measurement, checkpoint=checkpoint, lost=lost, deadline=deadline,
                interval=interval, progress=progress, stop_event=stop_event))
    finally:
        if edge is not None:
            edge.cancel()  # not due yet: the next call of shard 0 schedules it again
    if progress:
        # the phase's own figures as result.json will merge them: every operation of the shard
        # (warm-up included) between its first call's start and this call's end
        started = doc.started_at if doc is not None else outcome.info["began_at"]
        progress(outcome.info["done"], measurement.total_errors, final=True, classes=measurement.errors,
                 total=measurement.total_ops + measurement.warmup_ops, started_at=started,
                 ended_at=outcome.info["ended_at"], status=outcome.status)
    return ShardAnswer(run_id=run.run_id, phase=phase, shard=index, status=outcome.status,
                       checkpoint=None if interrupted else outcome.checkpoint, result_key=key, segment=outcome.info["segment"],
                       ops=measurement.total_ops, errors=measurement.total_errors).to_dict()


def _run_segment(call: SegmentCall) -> Any:
    """The call's segment (see ``run_shard``): -> (outcome, cumulative measurement, interrupted).
    While it runs, the shard's file is written every ``interval`` seconds with what it
    measured so far and the checkpoint to continue from (ShardPhase snapshots: the threads go
    on); at its end, with its outcome."""
    run, shard, phase, index, ev, key, store = (call.run, call.shard, call.phase, call.index, call.event, call.key,
                                                call.store)
    password, doc, measurement, checkpoint, lost = call.password, call.doc, call.measurement, call.checkpoint, call.lost
    deadline, interval, progress, stop_event = call.deadline, call.interval, call.progress, call.stop_event
    cid = ev.campaign_id
    exports = _metrics_export(store, cid, run, phase, index)
    if exports and doc is not None and doc.segments:  # a call continued: from where the last one was
        before = {e.get("endpoint"): e for e in doc.segments[-1].get("metrics_export") or []}
        for export in exports:
            export.pushed_to = int((before.get(export.endpoint) or {}).get("pushed_to") or 0)

    def document(outcome: Any, final: bool) -> Any:
        """The shard's file: the calls before this one (``doc``, ``measurement``) and this
        call's outcome, final or as of a snapshot."""
        info = outcome.info
        total = outcome.measurement if measurement is None else outcome.measurement.merge(measurement)
        for export in exports:  # live metrics, from what this snapshot holds anyway
            export.update(total, final=final and outcome.status == "done")
        if exports:
            info["metrics_export"] = [e.close() if final else e.status() for e in exports]
        if password and info.get("thread_errors"):
            info["thread_errors"] = [secrets.Redactor(password)(e) for e in info["thread_errors"]]
        if lost:
            info["lost_s"] = lost  # measured by a call that died after its last persisted write
        if not final:
            info["persisted"] = "interval"   # the call went on after this write
            info["persist_interval_s"] = interval
        d = doc
        if d is None:
            d = ShardResult(campaign_id=cid, run_id=run.run_id, phase=phase, shard=index, threads=shard.threads,
                            binding=ShardBinding(engine=run.engine, is_real_database=run.is_real_database,
                                                 settings=_binding_settings(run, password)),
                            started_at=info["began_at"], start_skew_s=info.get("start_skew_s"),
                            measurement={})
        if outcome.server_settings:
            d.binding.settings = {**d.binding.settings, "server": outcome.server_settings}
        data = d.to_dict()
        data["segments"] = [*data["segments"], info]
        data["ended_at"] = info["ended_at"]
        data["status"] = outcome.status
        data["measurement"] = total.to_dict()
        data["resume_checkpoint"] = outcome.checkpoint  # where a retry or `dbswarm resume` continues
        store.put_json(key, data)
        return total

    def on_snapshot(outcome: Any) -> None:
        try:
            document(outcome, final=False)
        except Exception as exc:  # a failed write loses nothing yet: the next one and the end write again
            print(f"dbswarm: shard {run.run_id}/{phase}/{index}: writing what it measured so far failed: "
                  f"{type(exc).__name__}: {exc}", file=sys.stderr)

    shard_phase = ShardPhase(run, shard, phase, password, start_at=ev.start_at, deadline=deadline,
                             checkpoint=checkpoint, progress=None, stop_event=stop_event,
                             snapshot_every=interval or None, on_snapshot=on_snapshot)
    if progress:  # the live display names the error classes, not only their count
        shard_phase.progress = _with_error_classes(progress, shard_phase)
    outcome = shard_phase.execute()
    interrupted = bool(outcome.info.get("interrupted"))
    return outcome, document(outcome, final=True), interrupted


def _metrics_export(store: Store, cid: str, run: Any, phase: str, index: int) -> Any:
    """The shard phase's live metrics exporters (``dbswarm.run.runtime.metrics``), maybe none."""
    plan = load_plan(store, cid, run.run_id)
    prometheus = (plan.metrics or {}).get("prometheus") or {}
    password = secrets.resolve(prometheus["password"]) if prometheus.get("password") else None
    labels = {"campaign": cid, "run": run.run_id, "phase": phase, "shard": str(index), "engine": run.engine,
              "family": run.family}
    return metrics.start_export(plan.metrics, labels, password)


def _binding_settings(run: Any, password: Any) -> Any:
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


def _progress_writer(run_id: str, phase: str, shard: int) -> Any:
    """Local mode: shards report progress through small files the runner polls."""
    folder = os.environ.get("DBSWARM_PROGRESS_DIR")
    if not folder:
        return None
    path = os.path.join(folder, f"{run_id}.{phase}.{shard}.json")

    def write(done: Any, errors: Any, final: bool = False, classes: Any = None, **figures: Any) -> None:
        """``figures`` (the call's end): total, started_at, ended_at, status (done | continue)."""
        tmp = path + ".tmp"
        with open(tmp, "w") as fh:
            json.dump({"done": done, "errors": errors, "error_classes": classes or {}, "final": final,
                       "t": time.time(), "pid": os.getpid(), **figures}, fh)
        os.replace(tmp, path)
    return write


def _with_error_classes(progress: Any, shard_phase: Any) -> Any:
    """The worker's progress callback (done, errors) with the error classes counted so far
    ("OP:kind:name" -> count) from the shard's client threads."""
    def report(done: Any, errors: Any) -> None:
        progress(done, errors, classes=shard_phase.error_counts()[1])
    return report


# ---- aggregate and compare -------------------------------------------------------------------

def aggregate_campaign(event: dict) -> dict:
    store = _store(event)
    cid = event["campaign_id"]
    plan = Plan.of(store.get_json(campaign_key(store, cid, PLAN_DOC)))  # never a cached one: a search adds runs
    try:
        campaign = store.get_json(campaign_key(store, cid, CAMPAIGN_DOC))
    except KeyError:
        campaign = None
    # a step that failed (the state machine caught it: run_error): result.json, summary.md and
    # report.html name it, not only the execution history
    run_error = (event.get("state") or {}).get("run_error")
    failure = " ".join(step_error_text(run_error).split()) if run_error else None
    for run in plan.runs if failure else ():  # any run's password, as every stored error text
        failure = redact_error(dict(event, run_id=run.run_id), failure)
    result = aggregate(plan, store, campaign, interrupted=event.get("interrupted"), failure=failure)
    keys = write_reports(store, cid, result)
    if not event.get("interrupted"):  # an interrupted campaign keeps its tables for `dbswarm resume`
        release_locks(event)
    return {"campaign_id": cid, "status": result["status"], "result_key": keys[RESULT_DOC],
            "missing_shards": len(result["missing_shards"]), "runs": len(result["runs"])}


def check_call(event: dict) -> dict:
    """The prepare function's check actions (``dbswarm.engine.checks``): one call of a range, or the merge."""
    if event.get("action") == "check_merge":
        return checks.merge_check(event)
    return checks.check_range(event)


def compare_campaign(event: dict) -> dict:
    return compare_with_baseline(_store(event), event["campaign_id"], event.get("baseline"),
                                 event.get("thresholds") or {}, bool(event.get("save_baseline")))


def run_steps(campaign: Any, results: str, run_shards: Callable[[dict, int], None],
              lead_seconds: float = 1.0, max_call_seconds: Optional[float] = None,
              campaign_id: Optional[str] = None, refuse_search: Optional[str] = None,
              compare: bool = False, cpu_count: Optional[int] = None) -> dict:
    """The state machine's step order driven directly (benchmarks, tests that run shards
    their own way): plan; per run: prepare -> arm + ``run_shards(event, shard_count)`` for
    the load -> window end -> after_load (secondary indexes) -> arm + run_shards for the run ->
    window end -> after_run -> cleanup; aggregate. After each of the two after_ stages, a family's
    consistency check: its ranges in parallel threads, each looping while it needs another call.
    ``run_shards`` runs every shard of one phase (event + "shard": i) to completion.
    Returns the aggregate step's answer plus "store". ``refuse_search``: the caller's name, when
    it cannot run a peak search or an adaptive fan-out (their NextStep loop is not driven here):
    such a campaign is refused before anything is planned."""
    if refuse_search:
        parsed, _ = load_campaign(campaign)
        if parsed.search or parsed.fanout.adaptive:
            what = "search" if parsed.search else "fanout.adaptive"
            raise DbswarmError(f"{what}: {refuse_search} does not run peak searches or adaptive fan-outs yet "
                               "(`dbswarm run` and the state machine do)")
    plan = plan_campaign({"campaign": campaign, "results": results, "campaign_id": campaign_id, "cpu_count": cpu_count})
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
            step = prepare_run(dict(base, run_id=rid, stage=f"after_{phase}"))
            checks.drive(check_call, dict(base, run_id=rid, stage=f"after_{phase}", max_call_seconds=max_call_seconds),
                         step["check_ranges"])  # the state machine's CheckRanges Map, then CheckMerge
        if plan["has_cleanup"]:
            prepare_run(dict(base, run_id=rid, stage="cleanup"))
    answer = aggregate_campaign(base) | {"store": plan["store"]}
    if compare and plan["compare"]:  # the state machine's Compare step: a baseline named or saved
        answer["compare"] = compare_campaign(dict(base, baseline=plan["baseline"], thresholds=plan["thresholds"],
                                                  save_baseline=plan["save_baseline"]))
    return answer

