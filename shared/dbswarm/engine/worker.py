"""One shard, one phase: its threads against the target, until its operation count,
its time cap, or the deadline it was given (then it answers "continue" with a checkpoint
and resumes from it on the next call).

The work itself is the workload family's (``dbswarm.families.base``): its client describes its
operations, the operation loop (``engine.loop``) runs and records them, and each thread's loop
(``engine.drive``) paces it and stops it, for the load and run phases of every family.
``ShardPhase`` is the coordinator of its parts:

- ``engine.shard_state``: the timing settings, each client thread's state, the outcome;
- ``engine.phase_clock``: the start barrier, the warm-up's end, the stop instant;
- ``engine.client_thread``: a client thread from its connection to its end;
- ``engine.drive``: the thread's loop, paced or not (or the multiplexer's, ``engine.mux``);
- ``engine.client_pool``: the threads started, waited for, ended together, abandoned;
- ``engine.snapshots``: the measurement and checkpoint as of now, while the threads go on;
- ``engine.segment``: the call's outcome, its record and checkpoint.

The un-sharded steps of a run (the family's prepare stages, the window's edges) and the
binding every connection is made with are ``engine.target``'s.
"""
from __future__ import annotations

import contextlib
import gc
import threading
import time
from typing import Callable, Iterator, Optional

from dbswarm.documents import RunPlan, ShardPlan
from dbswarm.engine import client_thread, segment, shard_state
from dbswarm.engine.client_pool import ClientPool
from dbswarm.engine.mux import Multiplexer
from dbswarm.engine.phase_clock import PhaseClock
from dbswarm.engine.shard_state import ShardOutcome, ThreadState
from dbswarm.engine.snapshots import Snapshots
from dbswarm.families import base as families
from dbswarm.families.base import Client, ThreadContext
from dbswarm.measure import headroom
from dbswarm.measure.recorder import Recorder


@contextlib.contextmanager
def _thawed() -> Iterator[None]:
    """What ``gc.freeze()`` froze when the clients were ready given back to the collector when
    the measured window ends. Frozen meanwhile: the clients' set-up (connections, prepared
    statements, each statement's calls: some 400,000 objects at 128 connections) is never
    traversed by a full collection inside the window, where one took 0.2-0.5 s of the process
    with every connection of the shard waiting (docs/decisions/0009-gc-freeze-after-setup.md). Thawed after, so
    that a warm Lambda container's next call does not keep this call's cyclic garbage."""
    try:
        yield
    finally:
        gc.unfreeze()


class ShardPhase:
    def __init__(self, run: RunPlan, shard: ShardPlan, phase: str, password: Optional[str], *,
                 start_at: Optional[float] = None, deadline: Optional[float] = None,
                 checkpoint: Optional[dict] = None, progress: Optional[Callable] = None,
                 stop_event: Optional[threading.Event] = None, snapshot_every: Optional[float] = None,
                 on_snapshot: Optional[Callable[[ShardOutcome], None]] = None):
        if phase not in ("load", "run"):
            raise ValueError(f"a shard runs the load or run phase, not {phase!r}")
        self.run, self.shard, self.phase, self.password = run, shard, phase, password
        self.family = families.get(run.family)
        self.w = self.family.workload(run.workload)
        self.start_at, self.deadline = start_at, deadline
        self.cp = checkpoint or {}
        self.segment = self.cp.get("segment", 0)
        self.progress = progress
        self.stop_event = stop_event or threading.Event()
        n = shard.threads
        saved = self.cp.get("threads") or [{} for _ in range(n)]
        self.states = [ThreadState(i, s.get("done", 0), dict(s.get("state") or {}), s.get("rng_position"),
                                   dict(s["schedule"]) if s.get("schedule") else None)
                       for i, s in enumerate(saved)]
        for st, s in zip(self.states, saved):
            st.refused_s = float(s.get("refused_s") or 0.0)
        self.server_settings: Optional[dict] = None
        self.clock = PhaseClock(self.stop_event)
        # snapshots (``snapshot_every`` seconds, handed to ``on_snapshot``): the measurement and
        # checkpoint as of now, while the threads go on
        self.snapshots = Snapshots(snapshot_every, on_snapshot)
        self.pool = ClientPool(n, self.snapshots.cond)
        self.mux: Optional[Multiplexer] = None  # fanout.client_model multiplexed (execute)
        self.cpu0 = 0.0  # the process's CPU time at the armed instant
        self.sampler: Optional[headroom.Sampler] = None

    @property
    def recorders(self) -> list[Recorder]:
        """The client threads' recorders (those that began), the part their deposits handed
        over, and the multiplexer's (engine.mux: the operations of the clients it drove)."""
        own = [st.recorder for st in self.states if st.recorder is not None]
        accumulated = self.snapshots.drain_moved()
        if accumulated is not None:
            own.append(accumulated)
        mux = self.mux.recorder if self.mux is not None else None
        return own if mux is None else [*own, mux]

    def error_counts(self) -> tuple[int, dict[str, int]]:
        """The errors counted so far, in all and by class (``Snapshots.error_counts``)."""
        return self.snapshots.error_counts(self.states, self.mux)

    def arm(self) -> tuple[float, float, Optional[float]]:
        """Wait for the start barrier, then set the stop instants (``PhaseClock.arm``): (wall
        start, perf start, start skew)."""
        return self.clock.arm(self.phase, self.w, self.family, start_at=self.start_at, segment=self.segment,
                              elapsed_before=self.cp.get("elapsed", 0.0), deadline=self.deadline)

    def client(self, st: ThreadState, ctx: ThreadContext) -> Client:
        """The family's client of this thread and phase (a run client's quota set in ``ctx``)."""
        if self.phase == "load":
            start, count = self.shard.thread_load[st.index]
            return self.family.load_client(self.w, ctx, start, count)
        if self.family.limits(self.w).count:
            ctx.quota = self.shard.thread_ops[st.index]
        return self.family.run_client(self.w, ctx)

    def _thread_rate(self) -> Optional[float]:
        target = self.shard.target
        return (target / self.shard.threads) if target else None

    def execute(self) -> ShardOutcome:
        """Every client thread connects and builds its client (sysbench prepares its
        statements) first; the shard waits until all are ready, then for the start barrier,
        and releases them together: connections and statement preparation are never inside
        the measured window (sysbench's thread_init, go-ycsb's and YCSB's init, do the same)."""
        rate = self._thread_rate()
        ready, go = threading.Semaphore(0), threading.Event()
        if self.run.client_model == "multiplexed" and self.phase == "run" and not rate:
            # one thread drives the connections of the clients that can be multiplexed; paced
            # runs and the load phase keep a thread per connection (engine.mux)
            self.mux = Multiplexer(self, len(self.states), shard_state.STUCK_THREAD_GRACE_S, shard_state.STALL_S)

        def on_ready(st: ThreadState, wait: bool = True) -> None:
            if not st.ready:
                st.ready = True
                ready.release()
            if wait:
                go.wait()
        threads = [threading.Thread(target=client_thread.run, args=(self, st, rate, on_ready),
                                    name=f"shard{self.shard.index}-t{st.index}", daemon=True)
                   for st in self.states]
        self.pool.start(threads)
        self.pool.wait_ready(ready, len(threads), self.stop_event)
        gc.freeze()  # the set-up's objects out of the collector's passes over the window (_thawed)
        with _thawed():
            began_wall, began_perf, skew = self.arm()
            self.cpu0 = time.process_time()
            self.sampler = headroom.Sampler()
            self.sampler.start()
            if self.mux is not None:
                self.mux.start(f"shard{self.shard.index}-mux")
            go.set()
            monitor, joined = None, threading.Event()
            if self.progress:
                monitor = threading.Thread(target=self._monitor, args=(joined, self.progress), daemon=True)
                monitor.start()
            self.snapshots.run(self, threads, began_wall, began_perf, skew)
            self.pool.join(threads, self.states, self.clock)
            if self.mux is not None:
                self.mux.join(timeout=5.0)  # every client given back: it ends at once
            self.sampler.stop()
            joined.set()  # also ends the monitor when abandoned threads are still alive
            if monitor:
                monitor.join()
        return segment.outcome(self, began_wall, began_perf, skew)

    def execute_inline(self) -> ShardOutcome:
        """A shard of one client thread, run in the calling thread (benchmarks and profilers
        measure that thread): the same set-up, limits, loop and outcome as ``execute``."""
        if len(self.states) != 1:
            raise ValueError(f"execute_inline runs a shard of one client thread, not {len(self.states)}")
        armed = []

        def on_ready(st: ThreadState, wait: bool = True) -> None:
            if not st.ready:
                st.ready = True
                gc.freeze()  # as execute does
                armed.append(self.arm())
                self.cpu0 = time.process_time()
        with _thawed():
            client_thread.run(self, self.states[0], self._thread_rate(), on_ready)
        if not armed:  # the set-up failed before the thread was ready
            armed.append(self.arm())
            self.cpu0 = time.process_time()
        return segment.outcome(self, *armed[0])

    def _monitor(self, joined: threading.Event, progress: Callable) -> None:
        while not joined.wait(shard_state.PROGRESS_INTERVAL_S):
            try:
                progress(sum(st.done for st in self.states), self.error_counts()[0])
            except Exception:
                pass
