"""A running shard call's sign of life (issue 57, item 8): in a local results folder, the file
``shard-<i>.alive`` beside its shard file, holding the segment the call writes, whose
modification time the call sets again every ``ALIVE_S`` while it runs. A call that died (its
process killed with its runner) leaves it at its last second alive, so a resume counts what it
lost from the last persisted write to then, instead of the bound it used to charge (a whole
persistence interval: 15 s where about 8 s were lost). In the cloud the state machine records
the failure's time (``shard-<i>.failed.json``)."""
from __future__ import annotations

import threading
from pathlib import Path
from typing import Any, Optional

from dbswarm.results.store import Store

ALIVE_S = 0.5


def path_of(store: Store, key: str) -> Optional[Path]:
    """The sign-of-life file of the shard file ``key`` (None: not a local results folder)."""
    root = getattr(store, "local_root", None)
    if root is None:
        return None
    return Path(root) / (key[:-len(".json")] + ".alive" if key.endswith(".json") else key + ".alive")


def last_alive(store: Store, key: str, segment: int) -> Optional[float]:
    """When the call that writes segment ``segment`` of the shard was last seen alive (epoch
    seconds), or None (no sign of life, or one of another call: a later call that died before
    its first write says nothing of when this one died)."""
    p = path_of(store, key)
    try:
        if p is None or p.read_text().strip() != str(segment):
            return None
        return p.stat().st_mtime
    except (OSError, ValueError):
        return None


class Alive:
    """``with Alive(store, key, segment):`` the call's sign of life, set again every ALIVE_S until it ends
    (its last time is the end's, which the shard file's end records anyway)."""

    def __init__(self, store: Store, key: str, segment: int) -> None:
        self.path = path_of(store, key)
        self.segment = segment  # the segment this call writes: the file's content
        self._stop = threading.Event()
        self._thread: Optional[threading.Thread] = None

    def _beat(self) -> None:
        while True:
            try:
                self.path.touch()  # type: ignore[union-attr]
            except OSError:
                pass  # a sign of life is a help, never a failure of the call
            if self._stop.wait(ALIVE_S):
                return

    def __enter__(self) -> "Alive":
        if self.path is not None:
            try:
                self.path.parent.mkdir(parents=True, exist_ok=True)
                self.path.write_text(str(self.segment))
            except OSError:
                return self
            self._thread = threading.Thread(target=self._beat, name="dbswarm-alive", daemon=True)
            self._thread.start()
        return self

    def __exit__(self, *exc: Any) -> None:
        self._stop.set()
        if self._thread is not None:
            self._thread.join(timeout=2)

