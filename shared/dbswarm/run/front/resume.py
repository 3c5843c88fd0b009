"""``dbswarm resume <campaign-id>``: finish a campaign that was interrupted, or whose shards
died, by running what is missing and merging it with what exists (issue 20, item 3).

Per run, in order: a run none of whose shards ever wrote is prepared and run in full; a
phase's shards that are done stay as they are; a shard that was interrupted or died after
writing continues from the checkpoint its file keeps (``resume_checkpoint``: the operations
each thread did and the family client's state, as a Lambda continuation does), adding to the
same file; a shard that never wrote runs from its start. The secondary-index step (and its consistency
check) follows a load that resumed. Every call runs the real worker handler in its own process, as ``dbswarm
run`` does; the campaign is then aggregated again (exact: counts and histograms add up).
"""
from __future__ import annotations

import os
import shutil
import tempfile
import threading
from typing import Any, Callable, Optional

from dbswarm.engine import checks
from dbswarm.errors import DbswarmError
from dbswarm.results.store import Store, open_store, prepare_key, shard_key
from dbswarm.run.runtime import service
from dbswarm.run.runtime.emulator import LocalCloud
from dbswarm.run.runtime.interrupt import FENCE_ENV, STOP_FILE_ENV, GracefulStop, claim_campaign, fence_path
from dbswarm.run.runtime.local import local_parameters, template_path


def _shard_state(store: Store, cid: str, run_id: str, phase: str, i: int) -> Any:
    try:
        doc = store.get_json(shard_key(store, cid, run_id, phase, i))
    except KeyError:
        return None, None
    last = doc["segments"][-1] if doc.get("segments") else {}
    if doc.get("status") == "done" and not last.get("interrupted"):
        return "done", None
    return "resume", doc.get("resume_checkpoint")


def resume_campaign(campaign_id: str, results: Optional[str] = None, log: Callable = print,
                    lead_seconds: float = 1.0) -> dict:
    store = open_store(results or "./results")
    try:
        plan = service.load_plan(store, campaign_id)
    except KeyError:
        raise DbswarmError(f"resume: no campaign {campaign_id} in {store.url} (give --results)") from None
    base = {"store": store.url, "campaign_id": campaign_id}
    gone = _cleaned_up(store, campaign_id, plan)
    if gone:
        raise DbswarmError(f"resume {campaign_id}: nothing resumed: the cleanup step already dropped the tables of "
                           f"{', '.join(gone)} after a shard of it failed, so the data its missing shards needed is "
                           "gone; the result stays as it is (run the campaign again)")
    # refused while another runner of the campaign, or a shard of an earlier one, still runs
    release = claim_campaign(campaign_id)
    progress_dir = tempfile.mkdtemp(prefix="dbswarm-progress-")
    stop_file = os.path.join(progress_dir, "STOP")
    work = 0
    try:
        with GracefulStop(stop_file, campaign_id) as stopper, \
                LocalCloud(template_path(), local_parameters(),
                           extra_env={"DBSWARM_PROGRESS_DIR": progress_dir, FENCE_ENV: fence_path(campaign_id),
                                      STOP_FILE_ENV: stop_file}) as cloud:
            for run in plan.runs:
                phases = [p for p in ("load", "run") if p in plan.phases]
                states = {ph: [_shard_state(store, campaign_id, run.run_id, ph, i) for i in range(run.shard_count)]
                          for ph in phases}
                untouched = all(st[0] is None for ph in phases for st in states[ph])
                if any(st[0] != "done" for ph in phases for st in states[ph]):
                    service.lock_run(dict(base, run_id=run.run_id))  # fails fast if another campaign took the tables
                if untouched and "prepare" in plan.phases:
                    log(f"resume {campaign_id}: run {run.run_id}: prepare")
                    cloud.invoke("PrepareFunction", dict(base, run_id=run.run_id, stage="before_load"))
                for ph in phases:
                    if stopper.requested:
                        break
                    work += _resume_phase(cloud, store, base, run, ph, states, stopper, log, lead_seconds)
                if stopper.requested:
                    break
            event = dict(base, interrupted=stopper.requested) if stopper.requested else base
            out = cloud.invoke("AggregateFunction", event)
    finally:
        release()
        shutil.rmtree(progress_dir, ignore_errors=True)
    out = dict(out, store=store.url, resumed_shards=work)
    if stopper.requested:
        out["signal"] = stopper.requested
    return out


def _resume_phase(cloud: LocalCloud, store: Store, base: dict, run: Any, ph: str, states: dict, stopper: Any,
                  log: Callable,
                  lead_seconds: float) -> int:
    """One phase of a run resumed: its shards not done run (from their checkpoints), between
    the phase's window edges; after the load, its after_load step. Returns the shards run."""
    campaign_id = base["campaign_id"]
    todo = [(i, cp) for i, (state, cp) in enumerate(states[ph]) if state != "done"]
    if not todo:
        if ph == "load" and _after_load_missing(store, campaign_id, run, states.get("run")):
            # every load shard done, but the step after the load never finished (the runner
            # stopped inside it: Ctrl-C twice during the index build): done now
            log(f"resume {campaign_id}: run {run.run_id}: after_load (secondary indexes)")
            _after_load(cloud, base, run.run_id)
        return 0
    log(f"resume {campaign_id}: run {run.run_id}, {ph} phase: shards {', '.join(str(i) for i, _ in todo)}")
    # the phase's measured window: its start edge as first read (a phase that never began reads
    # it now), its end edge once the resumed shards ended
    edge = dict(base, run_id=run.run_id, phase=ph, action="window")
    if not _has(store, service.window_key(store, campaign_id, run.run_id, ph, "start")):
        cloud.invoke("PrepareFunction", dict(edge, edge="start"))
    start_at = service.arm({"lead_seconds": lead_seconds})["start_at"]
    errors = _run_shards(cloud, dict(base, run_id=run.run_id, phase=ph, start_at=start_at), todo)
    for e in errors:
        log(f"resume {campaign_id}: {e}")
    if not stopper.requested:
        cloud.invoke("PrepareFunction", dict(edge, edge="end"))
    if ph == "load" and not stopper.requested:
        _after_load(cloud, base, run.run_id)
    return len(todo)


def _after_load(cloud: LocalCloud, base: dict, run_id: str) -> None:
    """The step after the load (secondary indexes: each family builds those that do not exist)
    and its consistency check, as the state machine's CheckRanges + CheckMerge."""
    step = cloud.invoke("PrepareFunction", dict(base, run_id=run_id, stage="after_load"))
    checks.drive(lambda ev: cloud.invoke("PrepareFunction", ev),
                 dict(base, run_id=run_id, stage="after_load"), step.get("check_ranges") or [])


def _after_load_missing(store: Store, campaign_id: str, run: Any, run_states: Optional[list]) -> bool:
    """The load is done but its after_load step never finished: no ``prepare-after_load.json``
    (the prepare function writes it once the stage's work is done, never before), and the run
    phase has not begun (a run phase that already ran without the indexes measured what it
    measured: building them now would not make it right)."""
    if run_states and any(state is not None for state, _ in run_states):
        return False
    return not _has(store, prepare_key(store, campaign_id, run.run_id, "after_load"))


def _has(store: Store, key: Any) -> bool:
    try:
        store.get_json(key)
    except KeyError:
        return False
    return True


def _cleaned_up(store: Store, campaign_id: str, plan: Any) -> list[str]:
    """Runs with a shard still to do whose cleanup stage already ran (it dropped their tables:
    resuming would measure errors against missing tables, and call that the cause)."""
    out: list[str] = []
    if "cleanup" not in plan.phases:
        return out
    for run in plan.runs:
        phases = [p for p in ("load", "run") if p in plan.phases]
        todo = any(_shard_state(store, campaign_id, run.run_id, ph, i)[0] != "done"
                   for ph in phases for i in range(run.shard_count))
        if not todo:
            continue
        try:
            done = store.get_json(prepare_key(store, campaign_id, run.run_id, "cleanup"))
        except KeyError:
            continue
        if not done.get("error") and not done.get("skipped"):
            out.append(f"run {run.run_id}")
    return out


def _run_shards(cloud: LocalCloud, event: dict, todo: Any) -> list[str]:
    """Each shard in its own thread, calling the worker function (a process per call) until done."""
    errors = []

    def one(i: int, checkpoint: Any) -> None:
        ev = dict(event, shard=i, checkpoint=checkpoint)
        try:
            while True:
                answer = cloud.invoke("WorkerFunction", ev)
                if answer["status"] != "continue":
                    return
                ev = dict(ev, checkpoint=answer["checkpoint"])
        except Exception as exc:  # the shard stays as it is; the result names it
            errors.append(f"shard {i} of {event['run_id']}/{event['phase']}: {exc}")
    threads = [threading.Thread(target=one, args=(i, cp), daemon=True) for i, cp in todo]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    return errors
