"""Local mode: the campaign flow on this machine, every shard call in its own OS process.

The flow (plan -> per run: prepare -> arm + Map(load shards) -> indexes -> arm + Map(run
shards) -> cleanup; then aggregate -> compare) is the state machine's; ``Flow`` runs it
with ``ProcessFanout`` for the Map steps. A shard answering "continue" is called again
with its checkpoint, in a new process, as a Lambda function would be.
"""
from __future__ import annotations

import json
import multiprocessing as mp
import os
import shutil
import signal
import tempfile
import time
from dataclasses import dataclass, field
from typing import Callable, Optional

from . import service
from .spec import read_campaign_data

POLL_S = 0.1


def _shard_entry(event, conn):
    """Child process: one shard call."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)  # the parent decides when to stop
    try:
        out = service.run_shard(event)
        conn.send(("ok", out))
    except BaseException as exc:  # report everything; the parent records the failure
        conn.send(("error", f"{type(exc).__name__}: {exc}"))
    finally:
        conn.close()


@dataclass
class ShardCall:
    shard: int
    event: dict
    process: mp.Process
    conn: object
    calls: int = 1


@dataclass
class PhaseOutcome:
    done: list = field(default_factory=list)
    failed: dict = field(default_factory=dict)   # shard -> reason
    calls: int = 0


class ProcessFanout:
    """Runs the shards of one phase in parallel processes; loops on "continue"."""

    def __init__(self, progress_dir: str, on_progress: Optional[Callable] = None, max_call_seconds=None):
        self.ctx = mp.get_context("spawn")
        self.progress_dir = progress_dir
        self.on_progress = on_progress
        self.max_call_seconds = max_call_seconds

    def _start(self, shard, event) -> ShardCall:
        parent, child = self.ctx.Pipe(duplex=False)
        p = self.ctx.Process(target=_shard_entry, args=(event, child), daemon=True,
                             name=f"dbswarm-shard-{event['run_id']}-{event['phase']}-{shard}")
        p.start()
        child.close()
        with open(os.path.join(self.progress_dir, f"{event['run_id']}.{event['phase']}.{shard}.pid"), "w") as fh:
            fh.write(str(p.pid))
        return ShardCall(shard, event, p, parent)

    def run_phase(self, base_event: dict, shard_count: int) -> PhaseOutcome:
        out = PhaseOutcome()
        active = {}
        for i in range(shard_count):
            ev = dict(base_event, shard=i)
            if self.max_call_seconds:
                ev["max_call_seconds"] = self.max_call_seconds
            active[i] = self._start(i, ev)
            out.calls += 1
        try:
            while active:
                time.sleep(POLL_S)
                if self.on_progress:
                    self.on_progress()
                for i, call in list(active.items()):
                    if call.process.is_alive() and not call.conn.poll():
                        continue
                    msg = None
                    if call.conn.poll():
                        try:
                            msg = call.conn.recv()
                        except EOFError:
                            msg = None
                    call.process.join(5)
                    del active[i]
                    if msg is None:
                        code = call.process.exitcode
                        reason = (f"process {call.process.pid} died (signal {-code})" if code and code < 0
                                  else f"process {call.process.pid} exited with code {code} without a result")
                        out.failed[i] = reason
                        self._record_failure(base_event, i, reason)
                    elif msg[0] == "error":
                        out.failed[i] = msg[1]
                        self._record_failure(base_event, i, msg[1])
                    elif msg[1]["status"] == "continue":
                        ev = dict(call.event, checkpoint=msg[1]["checkpoint"])
                        active[i] = self._start(i, ev)
                        active[i].calls = call.calls + 1
                        out.calls += 1
                    else:
                        out.done.append(i)
        except KeyboardInterrupt:
            for call in active.values():
                call.process.terminate()
            raise
        return out

    @staticmethod
    def _record_failure(event, shard, reason):
        service.record_shard_failure(dict(event, shard=shard, error=reason))


class ProgressBoard:
    """Reads the shards' progress files; renders a rich progress bar with the current OPS."""

    def __init__(self, progress_dir, console=None, enabled=True):
        self.dir = progress_dir
        self.enabled = enabled
        self.progress = None
        self.task = None
        self._last = (0, time.time())
        self._ops = 0.0
        if enabled:
            from rich.console import Console
            from rich.progress import BarColumn, Progress, ProgressColumn, TextColumn, TimeElapsedColumn
            from rich.text import Text

            class Count(ProgressColumn):
                def render(self, task):
                    total = f"/{task.total:,.0f}" if task.total else ""
                    return Text(f"{task.completed:,.0f}{total}")
            self.console = console or Console(stderr=True)
            self.progress = Progress(TextColumn("{task.description}"), BarColumn(), Count(),
                                     TextColumn("[bold]{task.fields[ops]:>10,.0f} ops/s"),
                                     TextColumn("errors {task.fields[errors]:,}"), TimeElapsedColumn(),
                                     console=self.console, transient=False)

    def start_phase(self, description, total, prefix):
        self.prefix = prefix
        self._last = (0, time.time())
        self._ops = 0.0
        if self.progress:
            if not self.progress.live.is_started:
                self.progress.start()
            self.task = self.progress.add_task(description, total=total or None, ops=0.0, errors=0)

    def poll(self):
        done = errors = 0
        for name in os.listdir(self.dir):
            if name.startswith(self.prefix) and name.endswith(".json"):
                try:
                    with open(os.path.join(self.dir, name)) as fh:
                        d = json.load(fh)
                except (OSError, ValueError):
                    continue
                done += d["done"]
                errors += d["errors"]
        now = time.time()
        last_done, last_t = self._last
        if now - last_t >= 1.0:
            self._ops = max(0.0, (done - last_done) / (now - last_t))
            self._last = (done, now)
        if self.progress and self.task is not None:
            self.progress.update(self.task, completed=done, ops=self._ops, errors=errors)
        return done, errors

    def end_phase(self):
        self.poll()
        if self.progress and self.task is not None:
            t = self.progress.tasks[-1]
            if not t.total:
                self.progress.update(self.task, total=t.completed)

    def stop(self):
        if self.progress and self.progress.live.is_started:
            self.progress.stop()


def run_campaign(source, results: Optional[str] = None, *, shards: Optional[int] = None,
                 max_call_seconds: Optional[float] = None, show_progress: bool = True,
                 lead_seconds: float = 1.0, console=None, log=print) -> dict:
    """Plan, run and aggregate a campaign locally; returns the aggregate step's answer
    plus the result folder/location."""
    data = read_campaign_data(source)
    if shards:
        data = dict(data, fanout={**(data.get("fanout") or {}), "shards": shards, "threads_per_shard": None})
        data["fanout"] = {k: v for k, v in data["fanout"].items() if v is not None}
    # shards report progress (and their pid) in small files; a caller may choose the folder
    given_dir = os.environ.get("DBSWARM_PROGRESS_DIR")
    progress_dir = given_dir or tempfile.mkdtemp(prefix="dbswarm-progress-")
    os.environ["DBSWARM_PROGRESS_DIR"] = progress_dir
    board = ProgressBoard(progress_dir, console, enabled=show_progress)
    try:
        plan = service.plan_campaign({"campaign": data, "results": results})
        cid, store = plan["campaign_id"], plan["store"]
        base = {"store": store, "campaign_id": cid}
        log(f"campaign {cid}: {len(plan['runs'])} run(s); results in {store}")
        fanout = ProcessFanout(progress_dir, board.poll, max_call_seconds)
        full_plan = service.load_plan(service.open_store(store), cid)
        for run in plan["runs"]:
            prun = service.find_run(full_plan, run["run_id"])
            rid = run["run_id"]
            if plan["has_prepare"]:
                service.prepare_run(dict(base, run_id=rid, stage="before_load"))
            for phase in ("load", "run"):
                if not plan[f"has_{phase}"]:
                    continue
                ev = dict(base, run_id=rid, phase=phase, **service.arm({"lead_seconds": lead_seconds}))
                total = _phase_total(prun, phase)
                board.start_phase(f"{rid} {phase:<4} ({run['shard_count']} shards)", total, f"{rid}.{phase}.")
                outcome = fanout.run_phase(ev, run["shard_count"])
                board.end_phase()
                for shard, reason in sorted(outcome.failed.items()):
                    log(f"  shard {shard} of {rid}/{phase} failed: {reason}")
                if phase == "load":
                    service.prepare_run(dict(base, run_id=rid, stage="after_load"))
            if plan["has_cleanup"]:
                service.prepare_run(dict(base, run_id=rid, stage="cleanup"))
        board.stop()
        agg = service.aggregate_campaign(base)
        if plan.get("baseline") or plan.get("save_baseline"):
            agg["compare"] = service.compare_campaign(dict(base, baseline=plan["baseline"],
                                                           thresholds=plan["thresholds"],
                                                           save_baseline=plan["save_baseline"]))
        agg["store"] = store
        return agg
    finally:
        board.stop()
        if not given_dir:
            os.environ.pop("DBSWARM_PROGRESS_DIR", None)
            shutil.rmtree(progress_dir, ignore_errors=True)


def _phase_total(run, phase):
    w = run["workload"]
    if phase == "load":
        return sum(s["load_count"] for s in run["shards"])
    if w["family"] == "ycsb":
        return w["operationcount"] or None
    return w["events"] or None
