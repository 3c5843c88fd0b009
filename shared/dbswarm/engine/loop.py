"""The operation loop: the one module of the engine that reads the clock around an operation
(``now``: the begin and end of each, the intended start of a paced one) and records it, for
every family, both phases and both client models.

A family's client describes its next operation (``Client.next_operation``: an ``Op``, the
function to call, its arguments); the loop calls it, times it, records it in the thread's
recorder, counts a row not found, and applies the one failure policy of its kind (``Op.policy``;
the classification and reconnects in ``engine.calls.Measured``): a call is recorded as failed,
a transaction (an event) is rolled back and run again, a load batch retried until written.
Families never time or count their operations; bindings never do either.

A thread runs its operations in ``OperationLoop.run`` until one ends at or after a deadline
(the worker's next stop check) or a number of units is done, so the worker's stop checks,
snapshots and pacing stay out of the per-operation path. The multiplexer (``engine.mux``),
which sends an operation and finishes it when its answer is in, takes its begin from ``now``
and ends it through ``OperationLoop.end`` (the same recording) and ``failed`` (the same policy).
A record is an append of the service time to the second's lane while the second (and the
warm-up's side) lasts; ``Recorder.ok`` at each roll.
"""
from __future__ import annotations

import time
from typing import Any, Callable, Optional

from dbswarm.engine.calls import Measured
from dbswarm.engine.shard_state import ThreadState
from dbswarm.errors import DUPLICATE, FATAL
from dbswarm.families.base import CALL, EVENT, ROWS, Client, Exhausted, Op
from dbswarm.measure.recorder import Lane, Recorder

# the clock of an operation's begin and end (ns): every read of it around an operation is here
now: Callable[[], int] = time.perf_counter_ns
EVENT_ATTEMPTS = 100  # an event's attempts, its first included (as sysbench makes them)


def paced(elapsed_zero_ns: int, rate: Optional[float], rec: Optional[Recorder],
          st: Optional[ThreadState] = None) -> tuple[Optional[Callable[[], None]], Optional[list[int]]]:
    """YCSB ClientThread throttle: step n is due at start + n/rate. Each step's due time is
    its intended start (``rec.intended_ns``: operations record their response time from
    it); a step that starts more than one interval after it is counted in ``late_starts``
    (the client could not keep the schedule: the database stalled or the client is
    saturated). The schedule is the phase's, not the segment's: its origin (on the phase's
    elapsed clock) and the steps scheduled so far are kept in the thread's state, so a
    backlog at a segment's end (every DBSWARM_PERSIST_INTERVAL_S, and each continuation
    call) is still late in the next segment instead of being forgotten."""
    if not rate:
        return None, None
    interval = round(1e9 / rate)
    perf_ns = now
    zero = elapsed_zero_ns
    if st is not None and st.schedule:
        start = zero + round(st.schedule["origin_s"] * 1e9)
        steps = int(st.schedule["steps"])
    else:
        start, steps = perf_ns(), 0
        if st is not None:
            st.schedule = {"origin_s": (start - zero) / 1e9, "steps": 0}
    # steps scheduled (the phase's), late starts (this segment's), steps before it, ns slept
    state = [steps, 0, steps, 0]

    def wait() -> None:
        due = start + state[0] * interval
        state[0] += 1
        t = perf_ns()
        if due > t:
            state[3] += due - t
            time.sleep((due - t) / 1e9)
        elif t - due > interval:
            state[1] += 1
        if rec is not None:
            rec.intended_ns = due
    return wait, state


class OperationLoop:
    """The loop of one client thread: ``run(deadline_ns, max_units)`` -> units done.

    ``exhausted`` is set when the client had nothing left (``Exhausted``); ``units`` holds the
    units done by the last ``run`` also when it ended by an exception (a fatal error)."""

    def __init__(self, client: Client, m: Measured, wait: Optional[Callable[[], None]] = None):
        self.client, self.m, self.wait = client, m, wait
        self.exhausted = False
        self.units = 0
        rec = m.rec
        self._lanes: dict[Op, Lane] = {}
        # the client's hook for the warm-up's end, called once after the first operation that
        # ended past it (sysbench splits its query counters there)
        self._warm_hook: Optional[Callable[[], None]] = (
            getattr(client, "warmup_ended", None) if rec.warm_until_ns else None)
        self.run: Callable[[int, int], int] = self._make_run()

    def _lane(self, op: Op) -> Lane:
        """The lane of an Op (lanes are looked up by the Op, made once by the client): the
        recorder's lane of its name; a lane that is never open (until 0) for a load batch's Op
        (its rows, however many, go through ``ok``) and in paced runs (every operation through
        ``ok_paced``)."""
        closed = self.m.paced or op.policy == ROWS or op.units != 1  # a loader's Op changes its units
        lane = self._lanes[op] = Lane() if closed else self.m.rec.lane(op.name)
        return lane

    def share_warm_hook(self, other: "OperationLoop") -> None:
        """``other`` records the same client into another recorder (engine.mux): the client's
        warm-up hook is called once, by whichever loop first records past the edge."""
        hook = self._warm_hook
        if hook is None:
            other._warm_hook = None
            return
        called: list[bool] = []

        def once() -> None:
            if not called:
                called.append(True)
                hook()
        self._warm_hook = other._warm_hook = once

    def _warm_edge(self, t1: int) -> None:
        if self._warm_hook is not None and t1 >= self.m.rec.warm_until_ns:
            hook, self._warm_hook = self._warm_hook, None
            hook()

    def _make_run(self) -> Callable[[int, int], int]:  # noqa: C901 (the loop in one frame: a call per operation is its cost)
        m, client = self.m, self.client
        next_operation, wait = client.next_operation, self.wait
        perf, ok, lanes, new_lane = now, m.ok, self._lanes, self._lane
        op_stats = m.rec.m.op

        def run(deadline_ns: int, max_units: int) -> int:
            done = 0
            try:
                while done < max_units:
                    if wait is not None:
                        wait()
                    try:
                        op, fn, args = next_operation()
                    except Exhausted:
                        self.exhausted = True
                        break
                    t0 = perf()
                    try:
                        result = fn(*args)
                    except Exception as exc:  # drivers raise many types; the policy classifies
                        done += self._failed(op, fn, args, t0, exc)
                        break  # the worker looks at its stop event before the next operation
                    t1 = perf()
                    lane = lanes.get(op) or new_lane(op)
                    if t1 < lane.until:
                        lane.lats.append((t1 - t0) // 1000)
                    else:
                        ok(op.name, t0, t1, op.units)
                        if self._warm_hook is not None:
                            self._warm_edge(t1)
                    if result == 0 and op.missing:  # a read's 0 rows, an update's False
                        op_stats(op.name).not_found += 1
                    if op.then is not None:
                        op.then(True)
                    done += op.units
                    if t1 >= deadline_ns:
                        break
            finally:
                self.units = done
            return done
        return run

    def end(self, op: Op, t0: int, result: Any) -> int:
        """An operation begun at ``t0`` (``now()``) has returned ``result``: its end read and
        recorded as ``run`` records it (``run`` inlines these lines: a call per operation is its
        cost); the multiplexer (engine.mux) calls this. Returns the end (ns)."""
        t1 = now()
        lane = self._lanes.get(op) or self._lane(op)
        if t1 < lane.until:
            lane.lats.append((t1 - t0) // 1000)
        else:
            self.m.ok(op.name, t0, t1, op.units)
        # looked at every operation, not only when the lane rolls: the multiplexer's clients
        # share its recorder's lanes, and a lane rolls past the warm-up's end for one of them
        if self._warm_hook is not None:
            self._warm_edge(t1)
        if result == 0 and op.missing:
            self.m.rec.m.op(op.name).not_found += 1
        if op.then is not None:
            op.then(True)
        return t1

    def failed(self, op: Op, fn: Callable[..., Any], args: tuple, t0: int, exc: Exception) -> int:
        """An operation raised (``run``'s policy of its kind): the units it counts."""
        return self._failed(op, fn, args, t0, exc)

    def event_given_up(self, op: Op) -> None:
        """An event whose attempts ended without a commit (the multiplexer's retries,
        engine.mux): what ``_failed`` does after ``event_failed`` returned False."""
        self._warm_edge(now())
        if op.then is not None:
            op.then(False)

    def _failed(self, op: Op, fn: Callable[..., Any], args: tuple, t0: int, exc: Exception) -> int:
        """An operation raised: the policy of its kind; returns the units it counts."""
        m, name = self.m, op.name
        if op.policy == CALL:
            # recorded as failed (a lost connection reconnects; a fatal error ends the thread);
            # it counts as done, as YCSB counts it. A duplicate key took effect (an insert whose
            # reply a lost connection cut off had committed, and its retry finds it)
            kind = m.failed(name, exc)
            if op.then is not None:
                op.then(kind == DUPLICATE)
            return op.units
        if op.policy == EVENT:  # rolled back and run again, as sysbench does
            committed = event_failed(m, name, fn, args[0], args[1], t0, exc)
            self._warm_edge(now())
        else:  # ROWS: a load batch, idempotent: retried until written or the worker stops
            committed = rows_failed(m, name, op.units, fn, args, exc)
        if op.then is not None:
            op.then(committed)
        return op.units if committed else 0


def event_failed(m: Measured, op: str, body: Callable[[Any, Any], Any], session: Any, state: Any, t0: int,
                 exc: Exception, attempts_left: int = EVENT_ATTEMPTS - 1) -> bool:
    """An attempt of an event started at ``t0`` failed with ``exc``: the error recorded, the
    transaction rolled back (``Measured.retry_event``), and ``body(session, state)`` run again,
    up to ``attempts_left`` more times, while the errors are retryable or of the connection and
    the worker is not stopping (as sysbench does); True when an attempt committed, timed from
    ``t0``."""
    while True:
        if not m.retry_event(op, exc) or attempts_left <= 0:
            return False
        attempts_left -= 1
        try:
            body(session, state)
        except Exception as again:
            exc = again
            continue
        m.ok(op, t0, now())
        return True


def rows_failed(m: Measured, op: str, n: int, fn: Callable[..., Any], args: tuple, exc: Exception) -> bool:
    """An attempt of a batch of n rows failed with ``exc``: recorded, and the batch written
    again until it succeeds (timed from its last attempt), a duplicate key says it is there,
    or the worker stops; True when the rows are written."""
    while True:
        kind = m.failed(op, exc)
        if kind == DUPLICATE:
            return True
        if kind == FATAL or m.should_stop():
            return False
        m.rec.count("retries")
        t0 = now()
        try:
            fn(*args)
        except Exception as again:
            exc = again
            continue
        m.rec.ok(op, t0, now(), n)
        return True
