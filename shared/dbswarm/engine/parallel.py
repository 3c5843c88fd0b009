"""Calls run at once in threads (the consistency check's ranges; tests' shards in-process)."""
from __future__ import annotations

import threading
from typing import Callable, Iterable


def run_in_threads(fn: Callable[..., object], calls: Iterable[tuple]) -> None:
    """``fn(*args)`` for every ``args`` of ``calls``, each in its own thread, all at once. Waits for
    every thread; the first error raised by any of them is raised then (in the caller's thread),
    so one failing call never leaves the others running unwatched."""
    errors: list[BaseException] = []

    def one(args: tuple) -> None:
        try:
            fn(*args)
        except BaseException as exc:  # raised below, in the caller's thread
            errors.append(exc)
    threads = [threading.Thread(target=one, args=(args,), daemon=True) for args in calls]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise errors[0]
