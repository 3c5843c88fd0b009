"""What the parts of a shard phase (``engine.worker.ShardPhase``) share: the timing settings
of its client threads, each thread's state (``ThreadState``: what it has done, where its
random stream and schedule stand, how it ended) and what a call of the shard returns
(``ShardOutcome``).

The settings are read from this module when used (``shard.STALL_S``), so that a test that
sets one here sets it for every part.
"""
from __future__ import annotations

import os
from dataclasses import dataclass, field
from typing import Optional

from dbswarm.measure.recorder import Measurement, Recorder

PROGRESS_INTERVAL_S = 0.5
# how often a client thread looks at the stop event and snapshot requests between steps (the
# time cap itself is exact): also the length of a client's run_for calls, whose re-entry cost
# about 1 µs an operation of PostgreSQL YCSB c reads at 5 ms (8 threads, CPUs shared; ad hoc)
STOP_CHECK_S = 0.05
# A client thread still inside one database call this long after the stop instant is
# abandoned (counted in thread_errors), so that what every thread measured is still written:
# a call can block for hours (a metadata lock, a server that stopped answering). It must stay
# below service.SAFETY_MARGIN_S, which is what a Lambda has left to write the result.
STUCK_THREAD_GRACE_S = float(os.environ.get("DBSWARM_STUCK_THREAD_GRACE_S", "10"))
# A run phase's client thread none of whose calls completed for this long, without an error (a
# failed call and its reconnects are counted as errors), stalled: the server stopped answering
# (frozen, a lock never released); so is any thread abandoned at the give-up. Each stall is kept
# (thread, from, to) and the phase that had one is not complete (aggregate); its seconds are out
# of the steady window
# 30 s: at 5 s the demo's TPC-C on SQLite was "stalled" (a thread waits that long for the write lock)
STALL_S = float(os.environ.get("DBSWARM_STALL_S", "30"))
MAX_STALLS_PER_THREAD = 10  # the first ones of each thread and call; more are only counted
# how long the shard waits, after the grace, for a client thread that has ended its loop to close
# its connection: STUCK_THREAD_GRACE_S + CLOSE_WAIT_S stays below service.SAFETY_MARGIN_S too
CLOSE_WAIT_S = 2.0
# how long a shard waits for its client threads to connect before it starts without the late ones
READY_TIMEOUT_S = float(os.environ.get("DBSWARM_READY_TIMEOUT_S", "60"))
# a snapshot waits this long for every running thread to hand in its state (one inside a long
# database call holds it up: the snapshot is then skipped, and the next interval's taken)
SNAPSHOT_WAIT_S = 2.0
SNAPSHOT_MIN_LEFT_S = 1.0  # no snapshot this close to the stop instant: the end's own write follows


@dataclass
class ThreadState:
    index: int                 # within the shard
    done: int = 0              # ops / events / rows completed, all segments
    state: dict = field(default_factory=dict)  # the family client's state() for a continuation
    rng_position: Optional[int] = None  # where its random stream stood (RandomStream.position); None: at its seed
    schedule: Optional[dict] = None  # paced: {"origin_s" on the phase's elapsed clock, "steps" scheduled}
    finished: bool = False     # quota or time cap reached (not merely the deadline)
    error: Optional[str] = None
    abandoned: bool = False    # still inside a database call after the grace period: given up
    ended_at: Optional[float] = None  # wall time its loop ended (this segment)
    closing: bool = False      # its measurement final, waiting to close its connection (ClientPool.loop_ended)
    ready: bool = False        # connected and its client built (waiting for the armed instant)
    recorder: Optional[Recorder] = None  # what it measured (this segment)
    # its loop's own clock (this segment): [wall s, on-CPU ns, run-queue wait ns, s slept
    # pacing] (headroom.thread_sched, read where the loop begins and ends); None: not run
    health: Optional[list] = None
    multiplexed: bool = False  # driven by the shard's multiplexer (engine.mux), not a loop of its own
    blocking_calls: int = 0    # multiplexed: operations with no split form, called in the multiplexer's thread
    # seconds it has spent refused a connection at its start, summed over its shard's calls
    # (checkpointed): RECONNECT_GIVE_UP_S counts them, not each call's alone
    refused_s: float = 0.0
    # when its last call returned (perf_counter s; this segment): where a stall that is still
    # under way at the give-up began
    progress_at: Optional[float] = None
    # [from, to, abandoned] (perf_counter s) of each stall (STALL_S) this segment; stalls_more:
    # those past MAX_STALLS_PER_THREAD
    stalls: list = field(default_factory=list)
    stalls_more: int = 0

    def stalled(self, began: float, ended: float, abandoned: bool = False) -> None:
        """A stall of this thread: no call of it completed from ``began`` to ``ended``."""
        if len(self.stalls) < MAX_STALLS_PER_THREAD:
            self.stalls.append([began, ended, abandoned])
        else:
            self.stalls_more += 1


@dataclass
class ShardOutcome:
    status: str                         # "done" | "continue"
    measurement: Measurement
    checkpoint: Optional[dict]
    info: dict = field(default_factory=dict)
    server_settings: Optional[dict] = None  # the server's version and durability settings


def thread_checkpoint(st: ThreadState) -> dict:
    """Where a client thread's next segment begins (its part of the shard's checkpoint)."""
    out = {"done": st.done, "state": st.state}
    if st.rng_position is not None:
        out["rng_position"] = st.rng_position
    if st.schedule is not None:
        out["schedule"] = st.schedule
    if st.refused_s:
        out["refused_s"] = round(st.refused_s, 3)
    return out
