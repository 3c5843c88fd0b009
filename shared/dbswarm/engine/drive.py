"""A client thread's loop (``engine.worker.ShardPhase``): paced (``engine.loop.paced``: YCSB's throttle,
on the phase's elapsed clock) or not, around the operation loop (``engine.loop``, which calls,
times and records the client's operations), until the thread's quota, the stop instant, a stop
or the client's end; a stall (``shard_state.STALL_S``) kept as such. Or, multiplexed
(``mux_drive``), the same work done by the shard's multiplexer (``engine.mux``) while the
thread sleeps.
"""
from __future__ import annotations

import sys
import time
from typing import Any, Optional

from dbswarm.engine import shard_state
from dbswarm.engine.calls import Measured
from dbswarm.engine.loop import OperationLoop, paced
from dbswarm.engine.mux import Deposit, Multiplexer
from dbswarm.engine.shard_state import ThreadState
from dbswarm.families.base import Client
from dbswarm.measure import headroom
from dbswarm.measure.recorder import Recorder


def drive(phase: Any, st: ThreadState, client: Client, m: Measured, quota: Optional[int], rate: Optional[float],
          rec: Optional[Recorder] = None, deposit: Optional[Deposit] = None) -> None:
    """The thread's loop around the operation loop (``engine.loop``, which calls, times and
    records the client's operations): until the thread's quota, the time cap (finished),
    the call's deadline (continue), a stop, or the client has nothing left (``Exhausted``:
    finished); paced at ``rate`` per second when given. A snapshot asked for (a new
    ``snapshots.gen``) is answered through ``deposit``, between two operations. ``phase``: the
    ``worker.ShardPhase`` (its phase, clock, stop event and snapshots)."""
    clock, snapshots = phase.clock, phase.snapshots
    wait, schedule = paced(clock.elapsed_zero_ns, rate, rec, st)
    # unpaced, operations run up to the next stop check in one call of the loop; paced, one
    # at a time (each waits for its due time)
    loop = OperationLoop(client, m, wait)
    run = loop.run
    perf = time.perf_counter
    stop_perf = clock.stop_perf
    stopped = phase.stop_event.is_set
    # the stop event is looked at every STOP_CHECK_S, not at every step (Event.is_set is
    # a Python call: a tenth of a µs, three times that between two round trips)
    check_perf = 0.0
    if quota is None:
        quota = sys.maxsize
    done = st.done
    seen = snapshots.gen
    sched0, perf0 = headroom.thread_sched(), perf()
    # a stall: a call of the loop that completed nothing for STALL_S (its pacing sleep left
    # out) with no error recorded (a failure and its reconnects are errors, said as such).
    # Run phase only: a load's unit can be long by design (a TPC-C district: ~50,000 rows);
    # a load thread still inside a call at the give-up is a stall (abandoned) all the same
    last, slept_ns = perf0, 0
    stall_s = shard_state.STALL_S if phase.phase == "run" else float("inf")
    check_s = shard_state.STOP_CHECK_S
    try:
        while True:
            if done >= quota:
                st.finished = True
                break
            now = perf()
            if now >= check_perf:
                if now >= stop_perf:
                    st.finished = clock.cap_reached()
                    break
                if stopped():
                    break
                if snapshots.gen != seen and deposit is not None:
                    seen = snapshots.gen
                    deposit(seen, done, schedule)
                check_perf = min(now + check_s, stop_perf)
            m.last_error_kind = None
            try:
                done += run(0 if wait else int(check_perf * 1e9), quota - done if not wait else 1)
            except BaseException:
                done += loop.units  # what it did before the exception (a fatal error) counts
                raise
            st.done = done
            now = perf()
            if now - last >= stall_s:
                stall_seen(st, m, last, now, schedule, slept_ns)
            if schedule is not None:
                slept_ns = schedule[3]
            last = st.progress_at = now
            if loop.exhausted:
                st.finished = True
                break
    finally:
        st.done = done
        sched1 = headroom.thread_sched() if sched0 is not None else None
        st.health = [perf() - perf0, *((sched1[0] - sched0[0], sched1[1] - sched0[1])
                                       if sched1 is not None and sched0 is not None else (None, None)),
                     schedule[3] / 1e9 if schedule is not None else 0.0]
        if schedule is not None and st.schedule is not None:
            steps, late, before, _ = schedule
            st.schedule["steps"] = steps
            if rec is not None:
                rec.count("late_starts", late)
                rec.count("paced_steps", steps - before)
        st.state = client.state()
        if not st.finished and client.done():
            st.finished = True
        client.close()


def stall_seen(st: ThreadState, m: Measured, last: float, now: float, schedule: Optional[list],
               slept_ns: int) -> None:
    """A call of ``drive``'s loop returned ``now``, STALL_S or more after the one before
    (``last``): a stall of the thread unless it slept for its schedule (paced: ``schedule``'s
    ns slept, ``slept_ns`` of them before this call) or an error was recorded in it (a
    failure and its reconnects are errors, said as such)."""
    slept = (schedule[3] - slept_ns) / 1e9 if schedule is not None else 0.0
    if now - last - slept >= shard_state.STALL_S and m.last_error_kind is None:
        st.stalled(last + slept, now)


def mux_drive(phase: Any, st: ThreadState, client: Client, m: Measured, mux: Multiplexer, quota: Optional[int],
              deposit: Deposit) -> None:
    """``drive``'s work done by the shard's multiplexer (engine.mux): the client handed in,
    this thread asleep until it is given back, then the same end as ``drive``'s."""
    slot = mux.hand_in(st, client, m, quota, deposit)
    st.multiplexed = True
    try:
        slot.released.wait()
    finally:
        st.done, st.health, st.blocking_calls = slot.done, slot.health, slot.blocking_calls
        if slot.abandoned:
            st.abandoned = True  # (its stall recorded by the multiplexer: Multiplexer._abandon)
            st.error = (f"client {st.index} was still waiting for a database answer "
                        f"{shard_state.STUCK_THREAD_GRACE_S:g} s after the stop time: abandoned")
            st.finished = phase.clock.cap_reached()
        st.state = client.state()
        if not st.finished and client.done():
            st.finished = True
        client.close()
    if slot.exc is not None:
        raise slot.exc
