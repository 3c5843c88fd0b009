"""The only things the handlers take from their platform's invocation context.

AWS Lambda's Python context has ``get_remaining_time_in_millis()`` and
``aws_request_id``; Huawei FunctionGraph's has ``getRemainingTimeInMilliSeconds()`` and
``getRequestID()``. Handlers call these helpers and nothing else, so the same
``functions/<name>/app.py`` runs on both (and under ``dbswarm.run.runtime.emulator``'s emulation).
"""
from __future__ import annotations

from typing import Any, Callable, Optional

_REMAINING = ("get_remaining_time_in_millis", "getRemainingTimeInMilliSeconds")
_REQUEST_ID = ("aws_request_id", "request_id", "getRequestID")


def _call_first(context: Any, names: Any) -> Any:
    for name in names:
        attr = getattr(context, name, None)
        if attr is None:
            continue
        return attr() if callable(attr) else attr
    return None


def remaining_seconds(context: Any) -> Optional[float]:
    """Seconds left before the platform stops this call; None without a known context."""
    if context is None:
        return None
    ms = _call_first(context, _REMAINING)
    return None if ms is None else float(ms) / 1000.0


def remaining_time(context: Any) -> Optional[Callable[[], float]]:
    """A callable giving the remaining seconds (what ``service.run_shard`` takes), or None."""
    if remaining_seconds(context) is None:
        return None
    return lambda: remaining_seconds(context) or 0.0


def request_id(context: Any) -> Optional[str]:
    if context is None:
        return None
    value = _call_first(context, _REQUEST_ID)
    return None if value is None else str(value)
