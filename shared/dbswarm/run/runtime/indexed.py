"""The indexed path: a campaign fanned out by any array-job system (Kubernetes Indexed Jobs,
AWS Batch array jobs, Cloud Run jobs, a CI matrix) instead of the state machine.

Two commands of one image share a results store (a folder or any S3-compatible bucket):

- the **coordinator** (``dbswarm coordinate``) runs the state machine's un-sharded steps in
  their order — plan, prepare, and for each run and phase: arm (the start barrier) → wait for
  every shard → the window's end edge → the after-stage and its consistency check — then
  aggregate and compare. Instead of invoking workers it *releases* each phase: it writes
  ``runs/<run>/<phase>/release.json`` (the start instant) and waits for the shard files;
- N **indexed workers** (``dbswarm worker``), each told only the store, the campaign id and
  its index (``JOB_COMPLETION_INDEX``, ``AWS_BATCH_JOB_ARRAY_INDEX``, ``CLOUD_RUN_TASK_INDEX``,
  ``DBSWARM_SHARD_INDEX`` or ``--shard``), run shard *i* of every released phase to its end
  (no 15-minute cut), exactly as the Lambda worker does (``service.run_shard``: the same
  barrier, the same periodic checkpoints, the same shard file). A worker started again after
  a crash continues from its shard file's last checkpoint: nothing counted twice.

The protocol is files only (no network between the processes), so it works wherever the
store is reachable. The coordinator ends with ``end.json``; workers exit when they see it.
"""
from __future__ import annotations

import os
import time
from dataclasses import dataclass, field
from typing import Any, Callable, Optional

from dbswarm.campaign.plan import plan_run
from dbswarm.campaign.spec import load_campaign
from dbswarm.documents import Plan
from dbswarm.errors import CampaignError, DbswarmError
from dbswarm.results.store import (
    END_DOC,
    PLAN_DOC,
    Store,
    campaign_key,
    failure_key,
    open_store,
    release_key,
    shard_key,
)
from dbswarm.run.runtime import service

INDEX_VARIABLES = ("JOB_COMPLETION_INDEX", "AWS_BATCH_JOB_ARRAY_INDEX", "CLOUD_RUN_TASK_INDEX",
                   "DBSWARM_SHARD_INDEX")
DEFAULT_PHASE_TIMEOUT_S = 3600.0
POLL_S = 0.5

Log = Callable[[str], None]


def shard_index(explicit: Optional[int] = None, environ: Optional[dict] = None) -> int:
    """The worker's index: ``--shard``, else the first array-job variable that is set."""
    if explicit is not None:
        if explicit < 0:
            raise DbswarmError(f"--shard: expected a whole number >= 0, got {explicit}")
        return explicit
    env = os.environ if environ is None else environ
    for name in INDEX_VARIABLES:
        raw = env.get(name)
        if raw is None or not raw.strip():
            continue
        try:
            value = int(raw)
        except ValueError:
            raise DbswarmError(f"{name}: expected a whole number >= 0 (the shard index), got {raw[:40]!r}") from None
        if value < 0:
            raise DbswarmError(f"{name}: expected a whole number >= 0 (the shard index), got {value}")
        return value
    raise DbswarmError("no shard index: give --shard N or set one of " + ", ".join(INDEX_VARIABLES))


def _exists(store: Store, key: str) -> bool:
    try:
        store.get_bytes(key)
        return True
    except KeyError:
        return False


# ---- the coordinator ---------------------------------------------------------------------------

@dataclass
class PhaseWait:
    """Waits until every shard of a released phase is done (or recorded failed)."""
    store: Store
    campaign_id: str
    log: Log
    timeout_s: float = DEFAULT_PHASE_TIMEOUT_S
    poll_s: float = POLL_S
    waited: list = field(default_factory=list)

    def __call__(self, event: dict, shard_count: int) -> None:
        rid, phase = event["run_id"], event["phase"]
        self.store.put_json(release_key(self.store, self.campaign_id, rid, phase),
                            {"run_id": rid, "phase": phase, "start_at": event["start_at"], "shards": shard_count,
                             "at": time.time()})
        self.log(f"{rid} {phase}: released {shard_count} shard(s), start at {event['start_at']:.3f}; "
                 "waiting for the workers")
        pending = set(range(shard_count))
        give_up = max(time.time(), float(event["start_at"])) + self.timeout_s
        last_note = 0.0
        while pending:
            for i in sorted(pending):
                if self._finished(rid, phase, i):
                    pending.discard(i)
            if not pending:
                break
            now = time.time()
            if now > give_up:
                for i in sorted(pending):  # the aggregate counts it missing and says why
                    self.store.put_json(failure_key(self.store, self.campaign_id, rid, phase, i),
                                        {"shard": i, "at": now, "error": f"no worker finished shard {i} within "
                                         f"{self.timeout_s:g} s of the phase's start (--phase-timeout)"})
                self.log(f"{rid} {phase}: gave up on shard(s) {sorted(pending)} after {self.timeout_s:g} s")
                break
            if now - last_note >= 10:
                self.log(f"{rid} {phase}: {shard_count - len(pending)} of {shard_count} shards done")
                last_note = now
            time.sleep(self.poll_s)
        self.waited.append((rid, phase))

    def _finished(self, rid: str, phase: str, i: int) -> bool:
        try:
            doc = self.store.get_json(shard_key(self.store, self.campaign_id, rid, phase, i))
            if doc.get("status") == "done":
                return True
        except (KeyError, ValueError):
            pass
        return _exists(self.store, failure_key(self.store, self.campaign_id, rid, phase, i))


def coordinate(campaign: Any, results: str, campaign_id: str, log: Log = print,
               phase_timeout_s: float = DEFAULT_PHASE_TIMEOUT_S, lead_seconds: float = 5.0,
               workers: Optional[int] = None) -> dict:
    """The campaign's un-sharded steps in the state machine's order, releasing each phase to
    the indexed workers; returns the aggregate step's answer plus "store". ``workers``: the
    array's size, the shard count of a run whose fanout names none (as CPUs are locally)."""
    if not campaign_id or "/" in campaign_id:
        raise DbswarmError(f"--campaign-id: expected a name without '/', got {campaign_id!r}")
    if workers is not None:
        problems = shards_past_workers(campaign, workers)
        if problems:
            raise CampaignError(problems)
    store = open_store(results)
    if _exists(store, campaign_key(store, campaign_id, PLAN_DOC)):
        raise DbswarmError(f"campaign {campaign_id} already exists in {store.url}: choose another --campaign-id")
    wait = PhaseWait(store, campaign_id, log, timeout_s=phase_timeout_s)
    try:
        return service.run_steps(campaign, results, wait, lead_seconds=lead_seconds, campaign_id=campaign_id,
                                 refuse_search="the indexed path", compare=True, cpu_count=workers)
    finally:  # the workers exit on it, whatever happened here
        store.put_json(campaign_key(store, campaign_id, END_DOC), {"at": time.time()})


def shards_past_workers(campaign: Any, workers: int) -> list[str]:
    """A run planned with more shards than the array has workers: a worker runs the shard of its
    index only, so the shards past the last index would never run (the coordinator would wait
    --phase-timeout for them). Each named with its fanout and --workers."""
    spec, runs = load_campaign(campaign)
    out = []
    for run in runs:
        shards = len(plan_run(spec, run, cpu_count=workers))
        if shards > workers:
            out.append(f"fanout.shards: run {run.run_id} has {shards} shards, more than --workers {workers}: each "
                       f"worker runs the shard of its index, shards {workers}-{shards - 1} would never run (give "
                       f"--workers {shards}, or fewer shards)")
    return out


# ---- a worker ----------------------------------------------------------------------------------

def _wait_plan(store: Store, campaign_id: str, poll_s: float) -> Optional[Plan]:
    key = campaign_key(store, campaign_id, PLAN_DOC)
    while True:
        try:
            return Plan.of(store.get_json(key))
        except KeyError:
            if _exists(store, campaign_key(store, campaign_id, END_DOC)):
                return None
        time.sleep(poll_s)


def work(results: str, campaign_id: str, index: int, log: Log = print, poll_s: float = POLL_S) -> int:
    """Shard ``index`` of every phase the coordinator releases, in the plan's order, until the
    campaign ends. Returns the number of phases this worker ran a shard of."""
    store = open_store(results)
    done: set = set()
    ran = 0
    while True:
        plan = _wait_plan(store, campaign_id, poll_s)
        if plan is None:
            return ran
        todo = [(run, phase) for run in plan.runs for phase in ("load", "run")
                if phase in plan.phases and (run.run_id, phase) not in done]
        progressed = False
        for run, phase in todo:
            try:
                release = store.get_json(release_key(store, campaign_id, run.run_id, phase))
            except KeyError:
                break  # phases are released in order: wait for this one
            done.add((run.run_id, phase))
            progressed = True
            if index >= run.shard_count:
                log(f"{run.run_id} {phase}: {run.shard_count} shard(s), none for index {index}")
                continue
            _run_to_end(store, campaign_id, run.run_id, phase, index, float(release["start_at"]), log)
            ran += 1
        if not progressed:
            if _exists(store, campaign_key(store, campaign_id, END_DOC)):
                return ran
            time.sleep(poll_s)


class WorkerStopped(DbswarmError):
    """The worker was asked to stop (SIGTERM): its shard file holds what it measured."""


def _run_to_end(store: Store, campaign_id: str, run_id: str, phase: str, index: int, start_at: float,
                log: Log) -> None:
    event = {"store": store.url, "campaign_id": campaign_id, "run_id": run_id, "phase": phase, "shard": index,
             "start_at": start_at}
    log(f"{run_id} {phase}: shard {index} starting")
    while True:
        answer = service.run_shard(event)  # no deadline: to the phase's end, checkpointing as it goes
        if answer["status"] == "done":
            log(f"{run_id} {phase}: shard {index} done: {answer['ops']:,} operations, {answer['errors']:,} errors")
            return
        if not answer.get("checkpoint"):  # interrupted: the array system starts the index again
            raise WorkerStopped(f"shard {index} of {run_id} {phase} stopped: started again, it continues "
                                "from its shard file")
        event["checkpoint"] = answer["checkpoint"]
