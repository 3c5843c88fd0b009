"""Failures and reconnects: ``Measured``, a client thread's connection, recorder and stop, and
the one retry / reconnect policy, acting on the error kinds the bindings classify
(``dbswarm.errors``) for every engine alike. The clock around an operation is read in
``engine.loop`` only, which calls, times and records every operation and hands a failure here."""
from __future__ import annotations

import os
import time
from typing import Any, Callable, Optional

from dbswarm.bindings.base import Binding, rollback
from dbswarm.errors import CONNECTION, FATAL, TargetNotAllowed
from dbswarm.measure.recorder import Recorder

RECONNECT_GIVE_UP_S = float(os.environ.get("DBSWARM_RECONNECT_GIVE_UP_S", "60"))


class TargetUnreachable(Exception):
    """Reconnecting failed for longer than RECONNECT_GIVE_UP_S."""


class FatalError(Exception):
    """A call failed with a fatal error class (an undefined table, permission denied, a
    statement the server refuses): the thread ends and its shard is not complete, instead of
    counting failures as the workload."""


class Measured:
    """A client thread's connection (``binding``), recorder (``rec``) and stop, and the one
    failure policy of its operations (``engine.loop`` times and records them): errors recorded
    and classified (``binding.classify``); a lost connection reconnected (with back-off) and
    counted; a retryable error in a multi-statement event rolled back for the event to run
    again, as sysbench does; a fatal one raised (``FatalError``).
    """
    __slots__ = ("binding", "rec", "should_stop", "ok", "paced", "on_reconnect", "last_error_kind")

    def __init__(self, binding: Binding, recorder: Recorder, should_stop: Callable[[], bool] = lambda: False,
                 paced: bool = False):
        self.binding = binding
        self.rec = recorder
        self.should_stop = should_stop
        # paced (a target rate): every operation's response time from its intended start too
        self.paced = paced
        self.ok = recorder.ok_paced if paced else recorder.ok
        # called after every successful reconnect: what a client bound to the old connection
        # (Binding.reader / updater) takes again
        self.on_reconnect: list[Callable[[], Any]] = []
        self.last_error_kind: Optional[str] = None  # the kind of the last failed call's error

    def retry_event(self, op: str, exc: Exception) -> bool:
        """An attempt of event ``op`` failed with ``exc``: the error recorded (a lost
        connection reconnected, a fatal error raised), the transaction rolled back; True when
        it should run again (not fatal, the worker not stopping: counted in ``retries``).
        ``engine.loop.event_failed``'s step, and the multiplexer's (engine.mux), which runs the event
        again without blocking its other connections."""
        kind = self.failed(op, exc)
        try:
            rollback(self.binding)
        except Exception:
            pass
        if kind == FATAL or self.should_stop():
            return False
        self.rec.count("retries")
        return True

    def failed(self, op: str, exc: BaseException) -> str:
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

    def reconnect(self, give_up_s: Optional[float] = None) -> bool:
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
