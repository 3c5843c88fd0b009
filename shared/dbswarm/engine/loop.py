"""The operation loop: the one place that reads the clock around an operation and records it,
for every family and both phases.

A family's client describes its next operation (``Client.next_operation``: an ``Op``, the
function to call, its arguments); the loop calls it, times it, records it in the thread's
recorder, counts a row not found, and applies the one failure policy of its kind (``Op.policy``,
through ``engine.calls.Measured``): a call is recorded as failed, a transaction (an event) is
rolled back and run again, a load batch retried until written. Families never time or count
their operations; bindings never do either.

The loop runs operations until one ends at or after a deadline (the worker's next stop check)
or a number of units is done, so the worker's stop checks, snapshots and pacing stay out of
the per-operation path. A record is an append of the service time to the second's lane while
the second (and the warm-up's side) lasts; ``Recorder.ok`` at each roll.
"""
from __future__ import annotations

import time
from typing import Callable, Optional

from dbswarm.engine.calls import Measured
from dbswarm.errors import DUPLICATE
from dbswarm.families.base import CALL, EVENT, ROWS, Exhausted
from dbswarm.measure.recorder import Lane


class OperationLoop:
    """The loop of one client thread: ``run(deadline_ns, max_units)`` -> units done.

    ``exhausted`` is set when the client had nothing left (``Exhausted``); ``units`` holds the
    units done by the last ``run`` also when it ended by an exception (a fatal error)."""

    def __init__(self, client, m: Measured, wait: Optional[Callable[[], None]] = None):
        self.client, self.m, self.wait = client, m, wait
        self.exhausted = False
        self.units = 0
        rec = m.rec
        self._lanes: dict = {}  # Op -> Lane
        # the client's hook for the warm-up's end, called once after the first operation that
        # ended past it (sysbench splits its query counters there)
        self._warm_hook = getattr(client, "warmup_ended", None) if rec.warm_until_ns else None
        self.run = self._make_run()

    def _lane(self, op) -> Lane:
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
        called: list = []

        def once() -> None:
            if not called:
                called.append(True)
                hook()
        self._warm_hook = other._warm_hook = once

    def _warm_edge(self, t1: int) -> None:
        if self._warm_hook is not None and t1 >= self.m.rec.warm_until_ns:
            hook, self._warm_hook = self._warm_hook, None
            hook()

    def _make_run(self):  # noqa: C901 (the loop, in one frame on purpose: a call per operation is its cost)
        m, client = self.m, self.client
        next_operation, wait = client.next_operation, self.wait
        perf, ok, lanes, new_lane = time.perf_counter_ns, m.ok, self._lanes, self._lane
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

    def record(self, op, t0: int, t1: int, result) -> None:
        """An operation that returned, recorded as ``run`` records it (``run`` inlines these
        lines: a call per operation is its cost); the multiplexer (engine.mux) calls this."""
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

    def failed(self, op, fn, args, t0: int, exc: Exception) -> int:
        """An operation raised (``run``'s policy of its kind): the units it counts."""
        return self._failed(op, fn, args, t0, exc)

    def event_given_up(self, op) -> None:
        """An event whose attempts ended without a commit (the multiplexer's retries,
        engine.mux): what ``_failed`` does after ``event_failed`` returned False."""
        self._warm_edge(time.perf_counter_ns())
        if op.then is not None:
            op.then(False)

    def _failed(self, op, fn, args, t0: int, exc: Exception) -> int:
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
            committed = m.event_failed(name, fn, args[0], args[1], t0, exc)
            self._warm_edge(time.perf_counter_ns())
        else:  # ROWS: a load batch, idempotent: retried until written or the worker stops
            committed = m.rows_failed(name, op.units, fn, args, exc)
        if op.then is not None:
            op.then(committed)
        return op.units if committed else 0
