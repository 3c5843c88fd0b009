"""A graceful stop of a local campaign (issue 20, items 3-4).

The first Ctrl-C or SIGTERM of ``dbswarm run`` asks every shard to stop at its next
operation boundary: the runner creates the stop file (``DBSWARM_STOP_FILE``, in the progress
folder), each shard call watches it, stops its threads, writes what it measured together
with a checkpoint (``dbswarm resume`` continues from it), and answers "done". The runner
refuses every further function call, waits for the running ones, stops the execution and
aggregates what exists with status ``interrupted``. A second Ctrl-C / SIGTERM aborts at once
(the function processes are killed; shard files written so far stay).

No process outlives the campaign: function processes die with their parent, the forkserver
(``die_with_parent``: PR_SET_PDEATHSIG), and with the runner (``dbswarm.run.runtime.emulator``: a
thread watches the answer pipe, whose other end only the runner holds: SIGKILL at once when
it closes); the forkserver ignores SIGTERM and SIGINT (a signal to the whole process group
reaches the shards, which stop and write, and must not kill their parent first) and ends when
the runner and every function process are gone.

The campaign's fence (``claim_campaign``): every function process of a campaign holds a shared
lock on its fence file until it ends, and its runner (``dbswarm run`` or ``resume``) an
exclusive lock on its runner file; a resume is refused while either is held — another runner
of the campaign, or a shard of an earlier runner that can still write (locks die with their
process, so nothing goes stale).
"""
from __future__ import annotations

import ctypes
import fcntl
import os
import re
import signal
import tempfile
import threading
import time
from typing import Any, Callable, Optional

from dbswarm.engine.lock import CampaignLocked

STOP_FILE_ENV = "DBSWARM_STOP_FILE"
FENCE_ENV = "DBSWARM_FENCE_FILE"
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
            def watch() -> None:
                while not _stop.is_set():
                    if os.path.exists(path):
                        _stop.set()
                        return
                    time.sleep(POLL_S)
            _watcher = threading.Thread(target=watch, name="dbswarm-stop-watch", daemon=True)
            _watcher.start()
    return _stop


def request_stop(*_: Any) -> None:
    _stop.set()


def in_function_process() -> None:
    """In a local function's process: SIGTERM asks the shard to stop (as the first Ctrl-C),
    SIGINT is the runner's to handle, and the process dies with its parent."""
    signal.signal(signal.SIGINT, signal.SIG_IGN)
    signal.signal(signal.SIGTERM, request_stop)
    die_with_parent()


def die_with_parent(sig: Any = signal.SIGKILL) -> None:
    """Linux: this process gets ``sig`` when its parent ends (no orphan keeps loading a database)."""
    try:
        libc = ctypes.CDLL(None, use_errno=True)
        libc.prctl(1, int(sig), 0, 0, 0)   # PR_SET_PDEATHSIG
    except Exception:  # not Linux: the runner's close() still kills its children
        pass


# ---- the campaign's fence -----------------------------------------------------------------------

class CampaignBusy(CampaignLocked):
    """Another runner of this campaign, or a function process of an earlier one, still runs."""


_fences: list[int] = []


def _fence_dir() -> str:
    d = os.path.join(tempfile.gettempdir(), f"dbswarm-fences-{os.getuid()}")
    os.makedirs(d, mode=0o700, exist_ok=True)
    return d


def fence_path(campaign_id: str) -> str:
    """The file every function process of the campaign holds a shared lock on (this machine)."""
    return os.path.join(_fence_dir(), re.sub(r"[^A-Za-z0-9_.-]", "_", campaign_id) + ".shards")


def hold_fence(path: str) -> None:
    """In a function process: the campaign's fence, shared, until the process ends."""
    fd = os.open(path, os.O_RDWR | os.O_CREAT, 0o600)
    fcntl.flock(fd, fcntl.LOCK_SH)
    _fences.append(fd)


def claim_campaign(campaign_id: str) -> Callable[[], None]:
    """The runner's claim on a campaign: refused (CampaignBusy) while another runner of it
    runs or a function process of an earlier one can still write; held until the returned
    release is called (or the runner ends). Its function processes get FENCE_ENV."""
    shards = fence_path(campaign_id)
    runner = os.open(shards[:-len(".shards")] + ".runner", os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(runner, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(runner)
        raise CampaignBusy(f"campaign {campaign_id} is being run by another dbswarm process on this machine "
                           "(`dbswarm run` or `dbswarm resume`): wait for it to end") from None
    os.ftruncate(runner, 0)
    os.pwrite(runner, str(os.getpid()).encode(), 0)  # whom `dbswarm cancel` asks to stop
    try:
        os.unlink(_cancel_marker(campaign_id))
    except OSError:
        pass
    fd = os.open(shards, os.O_RDWR | os.O_CREAT, 0o600)
    try:
        fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
    except BlockingIOError:
        os.close(runner)
        raise CampaignBusy(f"campaign {campaign_id}: a shard process of an earlier run of it is still running "
                           "(its runner was killed; it ends within a second or two, or when it is killed): "
                           "resume refused, so that no shard runs twice") from None
    finally:
        os.close(fd)   # closing releases the exclusive probe: this runner's own shards share it

    def release() -> None:
        try:
            os.close(runner)
        except OSError:
            pass
    return release


def _cancel_marker(campaign_id: str) -> str:
    return fence_path(campaign_id)[:-len(".shards")] + ".cancel"


CANCELLED = "cancelled (dbswarm cancel)"


def cancel_local(campaign_id: str) -> int:
    """``dbswarm cancel ID`` for a campaign `dbswarm run` or `dbswarm resume` is running on
    this machine: its runner stops it as at a first Ctrl-C (every shard at its next operation,
    what was measured aggregated), and says it was cancelled. Returns the runner's pid."""
    from dbswarm.errors import DbswarmError  # noqa: PLC0415
    path = fence_path(campaign_id)[:-len(".shards")] + ".runner"
    try:
        fd = os.open(path, os.O_RDWR)
    except OSError:
        raise DbswarmError(f"campaign {campaign_id!r} is not running on this machine (no `dbswarm run` of it); "
                           "a deployed campaign: --api URL or --state-machine ARN") from None
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            pid = int(os.pread(fd, 32, 0).decode() or 0)
        else:
            raise DbswarmError(f"campaign {campaign_id!r} is not running on this machine (it has ended)")
    finally:
        os.close(fd)
    if pid <= 0:
        raise DbswarmError(f"campaign {campaign_id!r}: its runner did not record its process id")
    with open(_cancel_marker(campaign_id), "w") as fh:
        fh.write(str(pid))
    os.kill(pid, signal.SIGTERM)
    return pid


class GracefulStop:
    """Installed by the local runner in its main thread: the first SIGINT/SIGTERM sets
    ``requested`` (and creates the stop file), the second raises KeyboardInterrupt."""

    def __init__(self, stop_file: str, campaign_id: Optional[str] = None):
        self.stop_file = stop_file
        self.campaign_id = campaign_id
        self.requested: Optional[str] = None
        self._saved: dict = {}

    def __enter__(self) -> Any:
        if threading.current_thread() is threading.main_thread():
            for sig in (signal.SIGINT, signal.SIGTERM):
                self._saved[sig] = signal.signal(sig, self._handle)
        return self

    def __exit__(self, *exc: Any) -> None:
        for sig, handler in self._saved.items():
            signal.signal(sig, handler)
        self._saved = {}

    def _handle(self, signum: Any, frame: Any) -> None:
        if self.requested:
            raise KeyboardInterrupt
        self.requested = signal.Signals(signum).name
        if self.campaign_id and os.path.exists(_cancel_marker(self.campaign_id)):
            self.requested = CANCELLED  # `dbswarm cancel` sent it
        try:
            with open(self.stop_file, "w") as fh:
                fh.write(self.requested)
        except OSError:
            pass
