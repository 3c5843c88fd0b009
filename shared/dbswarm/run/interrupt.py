"""A graceful stop of a local campaign (issue 20, items 3-4).

The first Ctrl-C or SIGTERM of ``dbswarm run`` asks every shard to stop at its next
operation boundary: the runner creates the stop file (``DBSWARM_STOP_FILE``, in the progress
folder), each shard call watches it, stops its threads, writes what it measured together
with a checkpoint (``dbswarm resume`` continues from it), and answers "done". The runner
refuses every further function call, waits for the running ones, stops the execution and
aggregates what exists with status ``interrupted``. A second Ctrl-C / SIGTERM aborts at once
(the function processes are killed; shard files written so far stay).

No process outlives the campaign: function processes die with their parent
(``die_with_parent``: PR_SET_PDEATHSIG), the forkserver ends when the runner does.
"""
from __future__ import annotations

import os
import signal
import threading
import time
from typing import Optional

STOP_FILE_ENV = "DBSWARM_STOP_FILE"
POLL_S = 0.1

_stop = threading.Event()
_watcher: Optional[threading.Thread] = None
_lock = threading.Lock()


def shard_stop_event() -> threading.Event:
    """The event a shard call stops on: set by SIGTERM to the function's process, or when the
    runner's stop file appears."""
    global _watcher
    path = os.environ.get(STOP_FILE_ENV)
    with _lock:
        if path and _watcher is None:
            def watch():
                while not _stop.is_set():
                    if os.path.exists(path):
                        _stop.set()
                        return
                    time.sleep(POLL_S)
            _watcher = threading.Thread(target=watch, name="dbswarm-stop-watch", daemon=True)
            _watcher.start()
    return _stop


def request_stop(*_):
    _stop.set()


def in_function_process():
    """In a local function's process: SIGTERM asks the shard to stop (as the first Ctrl-C),
    SIGINT is the runner's to handle, and the process dies with its parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, request_stop)
    die_with_parent()


def die_with_parent(sig=signal.SIGKILL):
    """Linux: this process gets ``sig`` when its parent ends (no orphan keeps loading a database)."""
    try:
        import ctypes
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(sig), 0, 0, 0)   # PR_SET_PDEATHSIG
    except Exception:  # not Linux: the runner's close() still kills its children
        pass


class GracefulStop:
    """Installed by the local runner in its main thread: the first SIGINT/SIGTERM sets
    ``requested`` (and creates the stop file), the second raises KeyboardInterrupt."""

    def __init__(self, stop_file: str):
        self.stop_file = stop_file
        self.requested: Optional[str] = None
        self._saved = {}

    def __enter__(self):
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._saved[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc):
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)
        self._saved = {}

    def _handle(self, signum, frame):
        if self.requested:
            raise KeyboardInterrupt
        self.requested = signal.Signals(signum).name
        try:
            with open(self.stop_file, "w") as fh:
                fh.write(self.requested)
        except OSError:
            pass
