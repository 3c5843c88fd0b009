"""One operation at a time through a ``Measured`` (``engine.calls``), outside the engine's
operation loop: the plain call, event and batch of rows that tests (and the loop's reference,
tests/unit/test_operation_loop.py) use to drive a binding or a family's transaction directly.
The engine times its operations in ``engine.loop`` only; these time theirs the same way (its
``now``, its ``event_failed`` / ``rows_failed`` policies, the recorder's ``ok``)."""
from __future__ import annotations

from typing import Any, Callable

from dbswarm.engine.calls import Measured
from dbswarm.engine.loop import EVENT_ATTEMPTS, event_failed, now, rows_failed
from dbswarm.measure.recorder import FAILED


def call(m: Measured, op: str, fn: Callable[..., Any], *args: Any) -> Any:
    """One operation; returns fn's result, or ``FAILED`` after recording the error."""
    t0 = now()
    try:
        result = fn(*args)
    except Exception as exc:  # drivers raise many types; classify decides
        m.failed(op, exc)
        return FAILED
    m.ok(op, t0, now())
    return result


def call_rows(m: Measured, op: str, n: int, fn: Callable[..., Any], *args: Any) -> bool:
    """A batch of n rows (load phase): retried until it succeeds or the worker stops, since
    batches are idempotent. Returns True when the rows were written."""
    t0 = now()
    try:
        fn(*args)
    except Exception as exc:
        return rows_failed(m, op, n, fn, args, exc)
    m.rec.ok(op, t0, now(), n)
    return True


def event(m: Measured, op: str, body: Callable[[Any, Any], Any], session: Any, state: Any,
          max_attempts: int = EVENT_ATTEMPTS) -> bool:
    """A multi-statement event (a transaction) ``body(session, state)`` timed as one, rolled
    back and run again on retryable and connection errors (as sysbench does); True when it
    committed."""
    t0 = now()
    try:
        body(session, state)
    except Exception as exc:
        return event_failed(m, op, body, session, state, t0, exc, max_attempts - 1)
    m.ok(op, t0, now())
    return True
