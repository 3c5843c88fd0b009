"""Calls and retries: ``Measured``, the one timing wrapper every binding call of a worker
thread goes through, and its one retry / reconnect policy, acting on the error kinds the
bindings classify (``dbswarm.errors``) for every engine alike. It records into a
``measure.recorder.Recorder``; a failed call returns ``FAILED``."""
from __future__ import annotations

import os
import time
from typing import Optional

from dbswarm.errors import CONNECTION, DUPLICATE, FATAL, TargetNotAllowed
from dbswarm.measure.recorder import FAILED, Recorder

RECONNECT_GIVE_UP_S = float(os.environ.get("DBSWARM_RECONNECT_GIVE_UP_S", "60"))


class TargetUnreachable(Exception):
    """Reconnecting failed for longer than RECONNECT_GIVE_UP_S."""


class FatalError(Exception):
    """A call failed with a fatal error class (an undefined table, permission denied, a
    statement the server refuses): the thread ends and its shard is not complete, instead of
    counting failures as the workload."""


class Measured:
    """The one timing wrapper: every binding call of a worker thread goes through it.

    It times, records, classifies errors (``binding.classify``) and applies the one retry /
    reconnect policy: connection loss -> reconnect (with back-off) and count; retryable
    errors in a multi-statement event -> roll back and run the event again, as sysbench does.
    """
    __slots__ = ("binding", "rec", "should_stop", "_perf", "ok", "paced", "on_reconnect", "last_error_kind")

    def __init__(self, binding, recorder: Recorder, should_stop=lambda: False, paced: bool = False):
        self.binding = binding
        self.rec = recorder
        self.should_stop = should_stop
        self._perf = time.perf_counter_ns
        # paced (a target rate): every operation's response time from its intended start too
        self.paced = paced
        self.ok = recorder.ok_paced if paced else recorder.ok
        # called after every successful reconnect: what a client bound to the old connection
        # (Binding.reader / updater) takes again
        self.on_reconnect: list = []
        self.last_error_kind: Optional[str] = None  # the kind of the last failed call's error

    def call(self, op: str, fn, *args):
        """One operation; returns fn's result, or ``FAILED`` after recording the error."""
        perf = self._perf
        t0 = perf()
        try:
            result = fn(*args)
        except Exception as exc:  # drivers raise many types; classify decides
            self.failed(op, exc)
            return FAILED
        self.ok(op, t0, perf())
        return result

    def call_rows(self, op: str, n: int, fn, *args):
        """A batch of n rows (load phase): retried until it succeeds or the worker stops,
        since batches are idempotent. Returns True when the rows were written."""
        t0 = self._perf()
        try:
            fn(*args)
        except Exception as exc:
            return self.rows_failed(op, n, fn, args, exc)
        self.rec.ok(op, t0, self._perf(), n)
        return True

    def rows_failed(self, op: str, n: int, fn, args, exc: Exception) -> bool:
        """An attempt of a batch of n rows failed with ``exc``: recorded, and the batch written
        again until it succeeds (timed from its last attempt), a duplicate key says it is
        there, or the worker stops; True when the rows are written."""
        while True:
            kind = self.failed(op, exc)
            if kind == DUPLICATE:
                return True
            if kind == FATAL or self.should_stop():
                return False
            self.rec.count("retries")
            t0 = self._perf()
            try:
                fn(*args)
            except Exception as again:
                exc = again
                continue
            self.rec.ok(op, t0, self._perf(), n)
            return True

    def event(self, op: str, body, session, state, max_attempts: int = 100) -> bool:
        """A multi-statement event (a transaction): ``body(session, state)`` — the family's
        statements on the binding's session, and what its thread keeps (sysbench: its query
        counters) — timed as one, rolled back and run again on retryable and connection errors
        (as sysbench does); True when it committed."""
        t0 = self._perf()
        try:
            body(session, state)
        except Exception as exc:
            return self.event_failed(op, body, session, state, t0, exc, max_attempts - 1)
        self.ok(op, t0, self._perf())
        return True

    def event_failed(self, op: str, body, session, state, t0: int, exc: Exception, attempts_left: int = 99) -> bool:
        """An attempt of an event started at ``t0`` failed with ``exc`` (in ``event``, or in a
        client's own loop of events: sysbench's hot loop): the error recorded, the
        transaction rolled back, and ``body`` run again, up to ``attempts_left`` more times,
        while the errors are retryable or of the connection and the worker is not stopping
        (as sysbench does); True when an attempt committed, timed from ``t0``."""
        while True:
            if not self.retry_event(op, exc) or attempts_left <= 0:
                return False
            attempts_left -= 1
            try:
                body(session, state)
            except Exception as again:
                exc = again
                continue
            self.ok(op, t0, self._perf())
            return True

    def retry_event(self, op: str, exc: Exception) -> bool:
        """An attempt of event ``op`` failed with ``exc``: the error recorded (a lost
        connection reconnected, a fatal error raised), the transaction rolled back; True when
        it should run again (not fatal, the worker not stopping: counted in ``retries``).
        ``event_failed``'s step, and the multiplexer's (engine.mux), which runs the event
        again without blocking its other connections."""
        kind = self.failed(op, exc)
        try:
            self.binding.rollback()
        except Exception:
            pass
        if kind == FATAL or self.should_stop():
            return False
        self.rec.count("retries")
        return True

    def failed(self, op, exc) -> str:
        """Record a failed operation's error and apply the policy (reconnect, or raise on a
        fatal one); returns the error's kind. A client that times an operation itself (the
        YCSB hot path, through Binding.reader) calls it in its ``except``."""
        cls = self.binding.classify(exc)
        self.last_error_kind = cls.kind
        self.rec.error(op, cls.kind, cls.name)
        if cls.kind == CONNECTION:
            self.reconnect()
        elif cls.kind == FATAL:
            raise FatalError(f"{op}: fatal error {cls.name}: {str(exc)[:300]}") from None
        return cls.kind

    def reconnect(self, give_up_s: Optional[float] = None):
        """Reconnect with back-off until it works or the worker must stop; a target that
        stays unreachable for RECONNECT_GIVE_UP_S ends the thread (TargetUnreachable) instead
        of spinning until the deadline. ``give_up_s``: what is left of those seconds (a thread
        refused since an earlier call of its shard)."""
        delay = 0.05
        give_up = time.monotonic() + (RECONNECT_GIVE_UP_S if give_up_s is None else give_up_s)
        while not self.should_stop():
            try:
                self.binding.reconnect()
                self.rec.count("reconnects")
                for rebind in self.on_reconnect:
                    rebind()
                return True
            except TargetNotAllowed:
                raise
            except Exception as exc:
                self.rec.count("reconnect_failures")
                if time.monotonic() >= give_up:
                    cls = self.binding.classify(exc)
                    if cls.name == "too_many_connections":
                        raise TargetUnreachable(
                            f"the target refused every connection for {RECONNECT_GIVE_UP_S:g} s: too many connections "
                            "(its connection limit: max_connections, or the user's or database's limit): fewer "
                            f"client threads, or a higher limit ({cls.kind}: {cls.name})") from None
                    raise TargetUnreachable(f"target unreachable for {RECONNECT_GIVE_UP_S:g} s "
                                            f"({cls.kind}: {cls.name})") from None
                time.sleep(delay)
                delay = min(delay * 2, 1.0)
        return False
