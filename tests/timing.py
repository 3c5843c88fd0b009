"""Timeouts for a loaded machine: a test must pass on a busy 2-CPU box (other sessions, a CI
run beside it, a CPU hog), so a bound on how long something may take scales with the load
instead of assuming an idle machine. Assertions are on events and counts, never on how fast
something went; these bounds only say when to give up waiting.

``scale()``: $DBSWARM_TEST_TIMEOUT_SCALE when set (a number >= 1: a slow machine, a debugger),
else the machine's load per CPU (the larger of the 1- and 5-minute load averages, divided by
the CPUs this process may use), at least 1 and at most MAX_LOAD_SCALE: with two CPU hogs on
two CPUs beside the suite's own processes the load is about 4-6, the scale 2-3.
"""
from __future__ import annotations

import os

MAX_LOAD_SCALE = 8.0   # a hang still ends: 240 s becomes at most 32 min


def scale() -> float:
    given = os.environ.get("DBSWARM_TEST_TIMEOUT_SCALE")
    if given:
        try:
            value = float(given)
        except ValueError:
            raise ValueError(f"DBSWARM_TEST_TIMEOUT_SCALE: expected a number >= 1, got {given!r}") from None
        if not value >= 1:
            raise ValueError(f"DBSWARM_TEST_TIMEOUT_SCALE: expected a number >= 1, got {given!r}")
        return value
    try:
        load = max(os.getloadavg()[:2])
    except (OSError, AttributeError):
        return 1.0
    cpus = len(os.sched_getaffinity(0)) if hasattr(os, "sched_getaffinity") else (os.cpu_count() or 1)
    return min(MAX_LOAD_SCALE, max(1.0, load / max(cpus, 1)))


def timeout(seconds: float) -> float:
    """``seconds`` (the bound on an idle machine) scaled for the machine's load now."""
    return seconds * scale()
