"""A shard phase's instants (``engine.worker.ShardPhase``): the start barrier every shard of the
phase waits for, the warm-up's end, the stop instant (the phase's time cap or the call's
deadline, whichever comes first) and the give-up of a thread still inside a call after it.
All on ``time.perf_counter``; ``wall_of_perf`` turns one into wall-clock seconds.
"""
from __future__ import annotations

import threading
import time
from typing import Any, Optional

from dbswarm.engine import shard_state


class PhaseClock:
    def __init__(self, stop_event: threading.Event):
        self.stop_event = stop_event
        # set by arm when the threads are released; before that (connecting) nothing stops on time
        self.stop_perf = self.deadline_perf = float("inf")
        self.wall_of_perf = time.time() - time.perf_counter()  # perf_counter s + this = wall s (arm sets it again)
        self.warm_until_ns = self.warm_end_ns = 0
        self.cap_limited = False
        self.began_perf: Optional[float] = None
        self.elapsed_zero_ns = 0

    def arm(self, phase: str, w: Any, family: Any, *, start_at: Optional[float], segment: int,
            elapsed_before: float, deadline: Optional[float]) -> tuple[float, float, Optional[float]]:
        """Wait for the start barrier (every shard of the phase begins at the armed instant,
        ``start_at``, on the first segment), then set the stop instants: (wall start, perf
        start, start skew). ``elapsed_before``: the phase's seconds in the segments before."""
        skew = None
        if start_at and segment == 0:
            delay = start_at - time.time()
            if delay > 0:
                time.sleep(delay)
            skew = time.time() - start_at
        began_wall, began_perf = time.time(), time.perf_counter()
        self.wall_of_perf = began_wall - began_perf
        self.began_perf = began_perf
        # the phase's elapsed clock (segments end to end, the gaps between them left out) in ns
        # of the operations' clock (engine.loop.now): a paced thread's schedule is kept on it
        # across segments and calls
        self.elapsed_zero_ns = int((began_perf - elapsed_before) * 1e9)
        # the run phase's warm-up ends warmuptime after the phase began (the first call's start)
        warm = (w.warmuptime - elapsed_before) if phase == "run" else 0.0
        if warm > 0 and skew and family.window_after_warmup(w):
            # a shard that began late ends its warm-up with the others, at start_at + warmuptime:
            # when shard 0's call reads the measured window's start edge (service._warmup_edge)
            warm -= skew
        self.warm_until_ns = int((began_perf + warm) * 1e9) if warm > 0 else 0
        # the warm-up's end also when this call begins after it (a continuation): TPC-C's clients
        # record the New-Orders committed around it (workloads.tpcc, BAND_S); on the start
        # barrier's clock when there is one (the instant shard 0's call reads the window's start
        # edge), else on the phase's elapsed clock
        self.warm_end_ns = 0
        if phase == "run" and w.warmuptime > 0:
            if start_at and family.window_after_warmup(w):
                end = began_perf + (start_at + w.warmuptime - began_wall)
            else:
                end = began_perf + w.warmuptime - elapsed_before
            self.warm_end_ns = int(end * 1e9)
        cap = family.limits(w).time if phase == "run" else None
        stop_perf = float("inf")
        self.cap_limited = False
        if cap is not None:
            stop_perf = began_perf + max(0.0, cap - elapsed_before)
            self.cap_limited = True
        self.deadline_perf = float("inf")
        if deadline is not None:
            self.deadline_perf = began_perf + (deadline - began_wall)
        self.stop_perf = min(stop_perf, self.deadline_perf)
        return began_wall, began_perf, skew

    def cap_reached(self) -> bool:
        """At stop time: the time cap (finished) rather than the deadline (continue)?"""
        return self.cap_limited and self.stop_perf < self.deadline_perf

    def give_up_perf(self) -> float:
        """When a thread still inside a call is given up: the stuck-thread grace after the stop
        instant (infinite before ``arm`` and in a phase without one)."""
        return self.stop_perf + shard_state.STUCK_THREAD_GRACE_S

    def should_stop(self) -> bool:
        return self.stop_event.is_set() or time.perf_counter() >= self.stop_perf
