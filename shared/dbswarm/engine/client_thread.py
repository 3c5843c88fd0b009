"""One client thread of a shard (``engine.worker.ShardPhase``, here ``phase``), from its set-up
to its end: its binding and connection (a refused connection retried for the time the shard
has left), its random stream and family client, then its loop (``engine.drive``: its own, or
the shard's multiplexer's), and at its end its own statements counted, the server's settings
read (thread 0) and its connection closed once every loop has ended.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

from dbswarm.bindings.protocols import Multiplexing
from dbswarm.campaign.plan import derive_seed
from dbswarm.engine import calls as measured_calls
from dbswarm.engine import drive
from dbswarm.engine.calls import Measured
from dbswarm.engine.shard_state import ThreadState
from dbswarm.engine.snapshots import Snapshots
from dbswarm.engine.target import make_binding
from dbswarm.errors import TargetNotAllowed
from dbswarm.families import base as families
from dbswarm.families.base import ThreadContext
from dbswarm.families.stream import RandomStream
from dbswarm.measure.recorder import Recorder


def run(phase: Any, st: ThreadState, rate: Optional[float], on_ready: Callable[..., None]) -> None:
    """The thread's body; ``on_ready(st)`` when it is connected and its client built (it waits
    there for the armed instant), ``on_ready(st, wait=False)`` when its set-up failed."""
    rec = st.recorder = Recorder(phase.family.interval_seconds(phase.w))  # per-interval histograms, on whole seconds
    binding = make_binding(phase.run, phase.password)
    paced = bool(rate) and phase.phase == "run"
    m = Measured(binding, rec, phase.clock.should_stop, paced=paced)
    mux = phase.mux
    try:
        if not _connect(phase, st, binding, m, rec):
            return  # a stop or a call's deadline: the next call (or a resume) connects again
        # a thread's draws depend on the run's seed and its global index, not on its shard
        # nor on its segments: the same seed gives the same operations with 1, 2 or 8 shards
        # (another machine's default shard count), however often the shard persisted
        thread = phase.shard.thread_offset + st.index
        rng = RandomStream(derive_seed(phase.run.seed, phase.phase, thread))
        ctx = ThreadContext(m=m, rng=rng, thread=thread, threads=phase.run.threads, saved=st.state)
        client = phase.client(st, ctx)
        # the client drew what it builds once (value pools, generators' set-up) from the
        # seed, the same in every segment; its operations continue the stream from there
        if st.rng_position is not None:
            rng.resume(st.rng_position)

        def deposit(gen: int, done: int, schedule: Optional[list]) -> None:
            # between two steps: the recorder and the checkpoint agree exactly
            cp = {"done": done, "state": client.state(), "rng_position": rng.position}
            extra = Snapshots.extra(st, rec, cp, schedule)
            phase.snapshots.deposit(gen, st.index, rec, extra, cp)
        if mux is not None and not (getattr(client, "multiplexable", False) and isinstance(binding, Multiplexing)
                                    and binding.fileno() is not None):
            mux.decline(st.index)  # a thread of its own
            mux = None
        on_ready(st)  # connected, client built: wait for the armed instant
        rec.warm_until_ns = phase.clock.warm_until_ns  # warm-up operations are kept apart (Measurement.warmup)
        rec.warm_end_ns = phase.clock.warm_end_ns
        try:
            if mux is not None:
                drive.mux_drive(phase, st, client, m, mux, ctx.quota, deposit)
            elif phase.phase == "load":
                drive.drive(phase, st, client, m, None, None, deposit=deposit)
            else:
                drive.drive(phase, st, client, m, ctx.quota, rate, rec, deposit=deposit)
        finally:
            st.rng_position = rng.keep()
    except Exception as exc:  # a bug or an unrecoverable driver state: keep what we have
        st.error = f"{type(exc).__name__}: {exc}"
        st.finished = True
    finally:
        _end(phase, st, binding, rec, on_ready)


def _connect(phase: Any, st: ThreadState, binding: Any, m: Measured, rec: Recorder) -> bool:
    """The thread's connection; a refused one retried (``Measured.reconnect``) for what is left
    of RECONNECT_GIVE_UP_S over the shard's calls. False: not connected (at the time cap the
    thread is finished, with its error)."""
    try:
        binding.connect()
    except TargetNotAllowed:
        raise
    except Exception as exc:
        cls = binding.classify(exc)
        rec.error("CONNECT", cls.kind, cls.name)
        # the give-up counts the seconds refused over the shard's calls: a call shorter
        # than RECONNECT_GIVE_UP_S (max_call_seconds) would otherwise start it again each
        # time, and a count-limited phase (no time cap) never end (a resume hours later
        # has not been refused meanwhile: only the time spent trying counts)
        tried = time.monotonic()
        give_up_s = measured_calls.RECONNECT_GIVE_UP_S - st.refused_s
        connected = m.reconnect(give_up_s=max(0.0, give_up_s))
        st.refused_s += time.monotonic() - tried
        if not connected:
            if phase.clock.cap_reached():
                # still refused at the phase's time cap (connections over the server's
                # limit, the shard started without this thread: ClientPool.wait_ready): done,
                # with its error; left unfinished, every next call of the shard would
                # try again, past the cap, and the campaign never ended
                st.error = (f"client thread {st.index} got no connection before the phase's "
                            f"time cap ({cls.kind}: {cls.name})")
                st.finished = True
            return False
    st.refused_s = 0.0
    return True


def _end(phase: Any, st: ThreadState, binding: Any, rec: Recorder, on_ready: Callable[..., None]) -> None:
    if phase.mux is not None:  # its set-up failed before it handed in or declined: no-op otherwise
        phase.mux.decline(st.index)
    if not st.ready:  # the set-up failed: the shard must not wait for this thread
        on_ready(st, wait=False)
    st.ended_at = time.time()
    if not st.abandoned:
        _own_statements(phase, st, binding, rec)
    phase.pool.loop_ended(st, phase.clock)
    try:
        binding.close()
    except Exception:
        pass
    phase.pool.thread_ended()


def _own_statements(phase: Any, st: ThreadState, binding: Any, rec: Recorder) -> None:
    """A thread's end: thread 0 reads the server's settings; where a session's start-up is a
    transaction in the server's counters (PostgreSQL), the sessions this thread started
    inside the measured window (after the warm-up where the family's window starts there)
    are counted as dbswarm's own (``families.OWN_TRANSACTIONS``)."""
    if st.index == 0:
        phase.server_settings = read_server_settings(binding, rec)
    if getattr(binding, "statement_is_transaction", False):
        since = phase.clock.warm_end_ns if phase.family.window_after_warmup(phase.w) else 0
        started = sum(1 for t in getattr(binding, "connected_ns", ()) if t >= since)
        if started:
            rec.count(families.OWN_TRANSACTIONS, started)


def read_server_settings(binding: Any, rec: Optional[Recorder] = None) -> dict:
    """The server's version and durability settings, read by the first client thread at its
    end (not before its first operation: nothing may delay the start); a server that does
    not let this user read them is a warning in the result, not a failure. Where a statement
    is a transaction in the server's counters, the read is one more in the measured window:
    counted (``families.OWN_TRANSACTIONS``) so that server-side rates can leave it out."""
    try:
        settings = binding.server_settings()
        if rec is not None and getattr(binding, "statement_is_transaction", False):
            rec.count(families.OWN_TRANSACTIONS)
        return settings
    except Exception as exc:
        return {"unavailable": f"{type(exc).__name__}: {str(exc)[:200]}"}
