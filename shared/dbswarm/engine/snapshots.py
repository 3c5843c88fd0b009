"""A running shard's snapshots and hand-overs (``engine.worker.ShardPhase``): every
``snapshot_every`` seconds the measurement and checkpoint as of now, handed to ``on_snapshot``
while the threads go on. The main thread asks (a new generation, ``gen``), each running thread
hands in what its recorder recorded since its last deposit and its checkpoint between two
steps (the two agree exactly), and the main thread merges them.

Each deposit hands over what its thread recorded since its last (``Recorder.detach``): pending
in ``moved``, then added to the accumulated part (``drain_moved``), which with the threads'
recorders holds everything measured. A copy of each thread's whole recorder at every snapshot
cost what the run had recorded so far, in every thread, holding the interpreter
(docs/decisions/0007-snapshots-hand-over.md).
"""
from __future__ import annotations

import threading
import time
from typing import Any, Callable, Optional

from dbswarm.engine import segment, shard_state
from dbswarm.engine.shard_state import ShardOutcome, ThreadState
from dbswarm.measure.recorder import Recorder


class Snapshots:
    def __init__(self, every: Optional[float], on_snapshot: Optional[Callable[[ShardOutcome], None]]):
        self.every, self.on_snapshot = every, on_snapshot
        self.gen = 0
        # also what a client thread's end (its ``closing``) and the pool's counts change under
        self.cond = threading.Condition()
        self.deposits: dict[int, tuple] = {}   # thread index -> (generation, snapshot-only extras, checkpoint)
        self.moved: list[Recorder] = []
        self.accumulated: Optional[Recorder] = None
        self.accumulated_lock = threading.Lock()

    def drain_moved(self) -> Optional[Recorder]:
        """The parts the threads' deposits handed over, added to the accumulated part
        (``Recorder.accumulate``); returns it (None before any deposit)."""
        with self.accumulated_lock:
            with self.cond:
                batch, self.moved = self.moved, []
            if batch:
                self.accumulated = Recorder.accumulate(self.accumulated, batch)
            return self.accumulated

    def hand_over(self, rec: Recorder) -> None:
        """What ``rec`` recorded so far (``Recorder.detach``: the multiplexer's, engine.mux),
        kept for the snapshots and the end whether or not the snapshot asked for completes.
        Taken under the lock that ``error_counts`` reads under: no error is in neither place."""
        with self.cond:
            self.moved.append(rec.detach())

    def deposit(self, gen: int, index: int, rec: Recorder, extra: Optional[Recorder], checkpoint: dict) -> None:
        """A running thread's part of snapshot ``gen``: what its recorder ``rec`` recorded since
        its last deposit (handed over: kept whether or not this snapshot completes), what only
        this snapshot adds (``extra``: its records, a paced schedule's counts as of now), its
        checkpoint."""
        with self.cond:
            self.moved.append(rec.detach())
            self.deposits[index] = (gen, extra, checkpoint)
            self.cond.notify_all()

    def error_counts(self, states: list[ThreadState], mux: Any) -> tuple[int, dict[str, int]]:
        """The errors counted so far, in all and by class ("OP:kind:name"), for the progress
        output: the threads' (``states``) and the multiplexer's recorders, the parts handed over
        and not yet added up, and the accumulated part, read while no part changes hands (a
        read between a hand-over and its adding up missed the part's errors for a tick)."""
        classes: dict[str, int] = {}
        with self.accumulated_lock, self.cond:
            recs = [st.recorder for st in states if st.recorder is not None]
            recs += self.moved
            if self.accumulated is not None:
                recs.append(self.accumulated)
            if mux is not None and mux.recorder is not None:
                recs.append(mux.recorder)
            for rec in recs:
                for key, n in list(rec.m.errors.items()):
                    classes[key] = classes.get(key, 0) + n
        return sum(classes.values()), classes

    @staticmethod
    def extra(st: ThreadState, rec: Recorder, cp: dict, schedule: Optional[list]) -> Optional[Recorder]:
        """What a thread's deposit adds to its snapshot alone, not to what it hands over (the
        end adds it to the thread's recorder): its records as of now (a family's lists stay in
        its recorder) and, paced, what ``drive``'s end counts of its schedule (also put in the
        checkpoint ``cp``). None when there is nothing."""
        if schedule is None and not rec.m.records:
            return None
        extra = Recorder(rec.interval_s)
        extra.m.timeline.start = None
        extra.m.records = {k: list(v) for k, v in rec.m.records.items() if v}
        if schedule is not None:
            cp["schedule"] = {**st.schedule, "steps": schedule[0]}  # type: ignore[dict-item]
            extra.count("late_starts", schedule[1])
            extra.count("paced_steps", schedule[0] - schedule[2])
        return extra

    def run(self, phase: Any, threads: list[threading.Thread], began_wall: float, began_perf: float,
            skew: Optional[float]) -> None:
        """Every ``every`` seconds until the stop instant, the stop event or the threads' end:
        ``on_snapshot(outcome as of now)``. Before, the shard persisted by ending a segment:
        every thread stopped, closed its connection, and the next segment connected, built its
        clients and prepared its statements again: a throughput dip of about 1.5 s every 15 s at
        128 threads (docs/decisions/0012-persist-without-stopping.md). ``phase``: the
        ``worker.ShardPhase``."""
        every = self.every
        if not every or self.on_snapshot is None:
            return
        due = time.perf_counter() + every
        while not phase.stop_event.is_set() and not phase.pool.all_ended.is_set():
            now = time.perf_counter()
            if due + shard_state.SNAPSHOT_MIN_LEFT_S >= phase.clock.stop_perf:
                return  # the end comes first, with its own write
            if now < due:  # woken when the threads end (a stop ends them too)
                phase.pool.all_ended.wait(min(due - now, 0.5))
                continue
            self.take(phase, threads, began_wall, began_perf, skew)
            due = time.perf_counter() + every

    def _collect(self, threads: list[threading.Thread],
                 states: list[ThreadState]) -> Optional[tuple[int, dict, float]]:
        """A new generation asked for; waits until every running thread has deposited for it:
        (generation, the deposits, when it gave up waiting), or None when one has not within
        SNAPSHOT_WAIT_S."""
        with self.cond:
            self.gen += 1
            gen = self.gen
            give_up = time.monotonic() + shard_state.SNAPSHOT_WAIT_S
            while any(t.is_alive() and not st.closing and self.deposits.get(st.index, (0,))[0] != gen
                      for t, st in zip(threads, states)):
                left = give_up - time.monotonic()
                if left <= 0:
                    return None  # a thread inside a long call: the next interval's snapshot
                self.cond.wait(min(left, 0.05))
            return gen, dict(self.deposits), give_up

    def take(self, phase: Any, threads: list[threading.Thread], began_wall: float, began_perf: float,
             skew: Optional[float]) -> None:
        """One snapshot: the threads' deposits (an ended thread's final state), the
        multiplexer's part, what was handed over, merged and handed to ``on_snapshot``."""
        assert self.on_snapshot is not None
        requested_perf = time.perf_counter()
        got_all = self._collect(threads, phase.states)
        if got_all is None:
            return
        gen, deposits, give_up = got_all
        copies, checkpoints = [], []
        for st in phase.states:
            got = deposits.get(st.index)
            if got is not None and got[0] == gen:
                _, rec, cp = got
            else:  # the thread has ended its loop (or never began): its final state (its parts
                # handed over before are accumulated; this is what it recorded after them)
                rec = st.recorder.snapshot_copy() if st.recorder is not None else None
                cp = shard_state.thread_checkpoint(st)
            if rec is not None:
                copies.append(rec)
            checkpoints.append(cp)
        if phase.mux is not None:  # the operations it recorded until it saw this generation: handed over
            handed, rec = phase.mux.part_for(gen, max(0.0, give_up - time.monotonic()))
            if not handed:
                return
            if rec is not None:
                copies.append(rec)
        accumulated = self.drain_moved()  # every running thread's part up to its deposit, the multiplexer's
        if all(st.finished for st in phase.states):
            # every thread is done (their final states taken above): the shard's end writes next,
            # as "done"; a "continue" with nothing left to continue would say otherwise meanwhile
            return
        measurement = Recorder.merged(copies)
        if accumulated is not None:
            with self.accumulated_lock:  # (the progress monitor may be adding to it)
                measurement.merge(accumulated.m)
        elapsed = phase.cp.get("elapsed", 0.0) + (requested_perf - began_perf)
        info = segment.info(phase, began_wall, time.time(), elapsed, sum(cp["done"] for cp in checkpoints), skew)
        self.on_snapshot(ShardOutcome("continue", measurement, segment.checkpoint(phase, elapsed, checkpoints),
                                      info, phase.server_settings))
