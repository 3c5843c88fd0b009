"""A shard's pool of client threads (``engine.worker.ShardPhase``): started together, waited for
until each is ready (connected, its client built), and ended together: none closes its
connection before every loop has ended, and one still inside a database call past the
stuck-thread grace is abandoned.
"""
from __future__ import annotations

import threading
import time
from typing import Any

from dbswarm.engine import shard_state
from dbswarm.engine.shard_state import ThreadState


class ClientPool:
    def __init__(self, n: int, cond: threading.Condition):
        # what a thread's end changes is changed under the snapshots' condition (engine.snapshots),
        # which reads a thread's ``closing`` under it
        self.cond = cond
        self.running = 0                       # client threads not yet ended
        self.all_ended = threading.Event()     # set when the last one ends
        # client threads whose loop has not ended; none closes its connection before they all
        # have (loop_ended)
        self.looping = n
        self.loops_over = threading.Event()

    def start(self, threads: list[threading.Thread]) -> None:
        self.running = len(threads)
        for t in threads:
            t.start()

    def wait_ready(self, ready: threading.Semaphore, n: int, stop_event: threading.Event) -> None:
        """Until every client thread has connected and built its client (a thread whose set-up
        failed counts as ready: it has ended), at most READY_TIMEOUT_S or a stop: a thread
        still connecting then starts late, and the start skew says so."""
        give_up = time.monotonic() + shard_state.READY_TIMEOUT_S
        waiting = n
        while waiting and not stop_event.is_set():
            left = give_up - time.monotonic()
            if left <= 0:
                break
            if ready.acquire(timeout=min(left, 0.25)):
                waiting -= 1

    def loop_ended(self, st: ThreadState, clock: Any) -> None:
        """A client thread whose loop has ended waits for every other's loop to end before it
        closes its connection (at most until the stuck-thread grace after the stop instant).
        A server spends CPU on each session's end (PostgreSQL's backend exit): closed while
        others still had an operation in flight, 512 connections on one server CPU held the
        last operations for 6-7 s, which their latencies and the window reported as the
        database's (docs/decisions/0010-close-after-every-loop.md)."""
        with self.cond:
            st.closing = True  # a snapshot takes its final state from now on, as an ended thread's
            self.looping -= 1
            if self.looping <= 0:
                self.loops_over.set()
                return
        while True:  # the stop instant is set when the threads are released (arm): read it again
            left = clock.give_up_perf() - time.perf_counter()
            if left <= 0 or self.loops_over.wait(0.5 if left == float("inf") else left):
                return

    def thread_ended(self) -> None:
        with self.cond:
            self.running -= 1
            if self.running <= 0:
                self.all_ended.set()

    def join(self, threads: list[threading.Thread], states: list[ThreadState], clock: Any) -> None:
        """Wait for the client threads; one still blocked in a database call
        STUCK_THREAD_GRACE_S after the stop instant is abandoned (a daemon thread: it cannot
        be interrupted inside the driver) and reported, and the others' results are kept."""
        if clock.stop_perf == float("inf"):
            for t in threads:
                t.join()
            return
        give_up = clock.give_up_perf()
        self.loops_over.wait(max(0.0, give_up - time.perf_counter()))
        # a thread whose loop has ended is closing its connection (loop_ended): its own
        # statements are done, it ends at once; any other is stuck in a call
        closed_by = max(give_up, time.perf_counter()) + shard_state.CLOSE_WAIT_S
        for t, st in zip(threads, states):
            if st.closing:
                t.join(max(0.0, closed_by - time.perf_counter()))
        stuck = [st for t, st in zip(threads, states) if t.is_alive() and not st.closing]
        # a stuck call that returns later finds the stop instant passed and ends its thread
        # after at most one more record; its recorder is read now, while it is blocked
        if stuck:
            now = time.perf_counter()
            for st in stuck:
                st.abandoned = True
                # stalled since its last call returned (or the armed instant), still at the give-up;
                # a multiplexed client's stall is the multiplexer's to record (Multiplexer._abandon)
                if not st.multiplexed:
                    began = clock.began_perf if clock.began_perf is not None else now
                    st.stalled(st.progress_at or began, now, abandoned=True)
                st.error = (f"client thread {st.index} was still inside a database call "
                            f"{shard_state.STUCK_THREAD_GRACE_S:g} s after the stop time: abandoned (its connection "
                            "stays open until the process ends)")
                # finished only when the phase's time cap has come: at a call's deadline the shard
                # continues in the next call from the thread's checkpoint (its unit redone or, when
                # the abandoned call commits it after all, found and skipped), never "done" with its
                # work left (a TPC-C load on a loaded machine was declared done 7 districts short)
                st.finished = clock.cap_reached()
