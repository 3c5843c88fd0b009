"""A shard's segment bookkeeping (``engine.worker.ShardPhase``, here ``phase``): what one call of
the shard returns at its end (``outcome``) or as of a snapshot: its record in the shard file
(``info``: when, how long, how much, the threads' errors and stalls, the client's own figures),
and the checkpoint the next segment begins from.
"""
from __future__ import annotations

import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dbswarm.documents import RunPlan, ShardEvent, ShardPlan, ShardResult
from dbswarm.engine import shard_state
from dbswarm.engine.shard_state import ShardOutcome
from dbswarm.measure import headroom
from dbswarm.measure.recorder import Measurement, Recorder
from dbswarm.results.store import Store


@dataclass
class SegmentCall:
    """One call of a shard's phase, as ``run.service.run_shard`` hands it to its segment: what
    runs (the run, the shard, its phase and index, the event that asked), where the shard's
    file is (``store``, ``key``) and what it held before (``doc``, ``measurement``, the
    ``checkpoint`` to continue from, the seconds ``lost`` by a call that died), and the call's
    bounds: its ``deadline``, the persistence ``interval``, the ``progress`` writer (local
    mode) and the ``stop_event`` (an interrupt)."""
    run: RunPlan
    shard: ShardPlan
    phase: str
    index: int
    event: ShardEvent
    key: str
    store: Store
    password: Optional[str]
    doc: Optional[ShardResult]
    measurement: Optional[Measurement]
    checkpoint: Optional[dict]
    lost: float
    deadline: Optional[float]
    interval: Optional[float]
    progress: Optional[Callable[..., None]]
    stop_event: threading.Event

_capacity_seen: list = []


def _capacity() -> dict:
    """headroom.cpu_capacity(), read once per process (a Lambda's memory and a host's quota do
    not change while it lives)."""
    if not _capacity_seen:
        _capacity_seen.append(headroom.cpu_capacity())
    return dict(_capacity_seen[0])


def outcome(phase: Any, began_wall: float, began_perf: float, skew: Optional[float]) -> ShardOutcome:
    """The call's end: the threads' measurements merged, "done" or "continue" (with its
    checkpoint), and the segment's record."""
    elapsed_before = phase.cp.get("elapsed", 0.0)
    ended_wall = time.time()
    # the measured window ends when the last client thread's loop did: not after the
    # threads' teardown (closing connections, thread 0 reading the server's settings),
    # which no rate of the phase may divide by
    ended = [st.ended_at for st in phase.states if not st.abandoned and st.ended_at is not None]
    if ended and max(ended) > began_wall:
        ended_wall = min(ended_wall, max(ended))
    abandoned = sum(st.abandoned for st in phase.states)
    if abandoned:
        # the measured window ends when the last thread that returned stopped (or, if none
        # did, at the stop instant), not when the stuck ones were given up: the grace
        # period holds no operations, and counting it would dilute ops/s (a 5 s run would
        # report a third of its throughput over 15 s)
        live = [st.ended_at for st in phase.states if not st.abandoned and st.ended_at is not None]
        ended_wall = max(live) if live else began_wall + (phase.clock.stop_perf - began_perf)
    measurement = Recorder.merged(phase.recorders)
    all_finished = all(st.finished for st in phase.states)
    elapsed = elapsed_before + (time.perf_counter() - began_perf)
    status = "done" if all_finished or phase.stop_event.is_set() else "continue"
    interrupted = phase.stop_event.is_set() and not all_finished
    cp = None
    if status == "continue" or interrupted:  # interrupted: kept for `dbswarm resume`
        cp = checkpoint(phase, elapsed, [shard_state.thread_checkpoint(st) for st in phase.states])
    out = info(phase, began_wall, ended_wall, elapsed, sum(st.done for st in phase.states), skew)
    out["client"] = client_info(phase, measurement, out["cpu_s"], ended_wall - began_wall)
    if interrupted:
        out["interrupted"] = True
    if abandoned:
        out["abandoned_threads"] = abandoned
    return ShardOutcome(status, measurement, cp, out, phase.server_settings)


def client_info(phase: Any, measurement: Measurement, cpu_s: float, wall_s: float) -> dict:
    """The client's own figures of this call (``headroom``; aggregate judges them): the
    CPU it may use, its threads' loop time, on-CPU time, run-queue wait and (paced) sleep
    summed over the threads, the latencies they recorded and the operations, and the
    per-second samples of the process's CPU and run-queue wait."""
    ran = [st.health for st in phase.states if st.health is not None]
    known = [h for h in ran if h[2] is not None]
    tl = measurement.timeline
    out = {**_capacity(), "wall_s": round(max(wall_s, 0.0), 3), "cpu_s": cpu_s, "threads": len(ran),
           "thread_s": round(sum(h[0] for h in ran), 4), "slept_s": round(sum(h[3] for h in ran), 4),
           "latency_s": round(sum(tl.latency_us) / 1e6, 4),
           "ops": measurement.total_ops + measurement.warmup_ops}
    muxed = [st for st in phase.states if st.multiplexed]
    out["model"] = "multiplexed" if muxed else "threads"
    if muxed:
        out["multiplexed_threads"] = len(muxed)
        out["blocking_calls"] = sum(st.blocking_calls for st in muxed)
    if known and len(known) == len(ran):
        out["on_cpu_s"] = round(sum(h[1] for h in known) / 1e9, 4)
        out["runqueue_wait_s"] = round(sum(h[2] for h in known) / 1e9, 4)
    sampler = phase.sampler
    series = sampler.series() if sampler is not None else None
    wake = sampler.wakeup() if sampler is not None else None
    if wake:
        out["wakeup_delay"] = wake
    if series:
        out["series"] = series
    return out


def checkpoint(phase: Any, elapsed: float, threads: list[dict]) -> dict:
    """Where the next segment (a continuation, a retry, `dbswarm resume`) begins."""
    return {"segment": phase.segment + 1, "elapsed": elapsed, "threads": threads}


def info(phase: Any, began_wall: float, ended_wall: float, elapsed: float, done: int,
         skew: Optional[float]) -> dict:
    """A segment's record in the shard file (at its end, or as of a snapshot)."""
    out = {"segment": phase.segment, "began_at": began_wall, "ended_at": ended_wall,
           "elapsed_s": round(elapsed, 3), "done": done,
           "thread_errors": [st.error for st in phase.states if st.error], "stopped": phase.stop_event.is_set(),
           # the shard process's CPU over this call's phase (all its threads; start-up and
           # imports not included): the client's cost, which benchmarks set against the reference
           "cpu_s": round(time.process_time() - phase.cpu0, 4)}
    if skew is not None:
        out["start_skew_s"] = round(skew, 4)
    found = stalls(phase)
    if found:
        out["stalls"] = found
    return out


def stalls(phase: Any) -> list[dict]:
    """The client threads' stalls so far (``shard_state.STALL_S``), in wall-clock seconds: thread
    (within the shard), from, to, seconds, abandoned (still inside its call when given up); a
    thread's stalls past MAX_STALLS_PER_THREAD as one entry's ``more``."""
    out: list[dict] = []
    wall = phase.clock.wall_of_perf
    for st in phase.states:
        for began, ended, abandoned in list(st.stalls):
            entry = {"thread": st.index, "from": round(began + wall, 3), "to": round(ended + wall, 3),
                     "seconds": round(ended - began, 3), "stall_s": shard_state.STALL_S}
            if abandoned:
                entry["abandoned"] = True
            out.append(entry)
        if st.stalls_more and out:
            out[-1]["more"] = st.stalls_more
    return out
