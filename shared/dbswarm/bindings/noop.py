"""noop: answers every call at once, touching no database. It measures the load
generator itself (benchmarks); never a default, and results say so.

Options ``capacity`` and ``service_time_ms`` make it an artificial server for tests of the
peak search: at most ``capacity`` calls are served at once (per process, i.e. per shard:
``fanout: {shards: 1}`` makes it the whole run's), each taking ``service_time_ms``; so
throughput rises with the client threads up to capacity / service time and stays there.
``connect_ms`` makes every connection take that long to open (a server's authentication):
what a shard does before its measured window. ``busy_us`` makes every call spin on the
CPU that long (holding the interpreter lock, as a client's own Python does): a client that
is its own bottleneck, for tests of the client-health verdict (docs/client-health.md).
``noise: {file, runs, stall_s, every_s}`` injects a noisy neighbour into some runs, for tests
of the peak search's noise-aware decision: the processes that serve calls are numbered in the
order they serve their first one (a counter in ``file``; one process per run with one shard),
and in those whose number is in ``runs`` every call waits out a stall of ``stall_s`` seconds
at the start of each ``every_s`` seconds of the wall clock."""
from __future__ import annotations

import fcntl
import threading
import time
from typing import Any, Optional

from dbswarm.bindings import register
from dbswarm.bindings.base import KeyValueBinding, SqlSessionBinding

_servers: dict = {}
_servers_lock = threading.Lock()
_ordinal: list = []  # this process's number among those that served a call (the noise option)


def _process_ordinal(path: str) -> int:
    """This process's number (1, 2, ...) among the processes that served a call: a counter in
    ``path``, incremented under an exclusive lock once per process."""
    with _servers_lock:
        if not _ordinal:
            with open(path, "a+") as fh:
                fcntl.flock(fh, fcntl.LOCK_EX)
                fh.seek(0)
                n = int(fh.read().strip() or 0) + 1
                fh.seek(0)
                fh.truncate()
                fh.write(str(n))
            _ordinal.append(n)
        return _ordinal[0]


@register("noop")
class NoopBinding(KeyValueBinding, SqlSessionBinding):
    dialect = "sqlite"  # SQL families build their statements in some dialect; none is run
    _record = {f"field{i}": "x" for i in range(10)}

    def connect(self) -> None:
        options = self.conn.options or {}
        if options.get("connect_ms"):
            time.sleep(float(options["connect_ms"]) / 1000)
        cap = options.get("capacity")
        self._service_s = float(options.get("service_time_ms") or 0) / 1000
        self._slots = None
        self._busy_s = float(options.get("busy_us") or 0) / 1e6
        self._noise: Any = options.get("noise") or None
        if cap:
            with _servers_lock:
                self._slots = _servers.setdefault(int(cap), threading.BoundedSemaphore(int(cap)))

    def _stall(self) -> None:
        noise = self._noise
        if _process_ordinal(noise["file"]) in noise.get("runs", ()):
            every, stall = float(noise["every_s"]), float(noise["stall_s"])
            into = time.time() % every
            if into < stall:
                time.sleep(stall - into)

    def _serve(self) -> None:
        if getattr(self, "_noise", None):
            self._stall()
        busy = getattr(self, "_busy_s", 0)
        if busy:
            until = time.perf_counter() + busy
            while time.perf_counter() < until:
                pass
        slots = getattr(self, "_slots", None)
        if slots is None:
            if getattr(self, "_service_s", 0):
                time.sleep(self._service_s)
            return
        with slots:
            time.sleep(self._service_s)

    def peer_addresses(self) -> Optional[list[str]]:
        return []   # no network

    def describe(self) -> dict:
        return {"note": "noop binding: generator only, no database"}

    # -- kv ------------------------------------------------------------------------------
    def create_table(self, table: str, fieldcount: int) -> None:
        pass

    def drop_table(self, table: str) -> None:
        pass

    def count(self, table: str) -> int:
        return 0

    def read(self, table: str, key: str, fields: Optional[list[str]], rows: bool = True) -> Any:
        self._serve()
        return self._record if rows else 1

    def scan(self, table: str, startkey: str, count: int, fields: Optional[list[str]], rows: bool = True) -> Any:
        self._serve()
        return [self._record] if rows else 1

    def update(self, table: str, key: str, values: dict) -> bool:
        self._serve()
        return True

    def insert(self, table: str, key: str, values: dict) -> None:
        self._serve()
        pass

    def insert_batch(self, table: str, rows: list[tuple[str, dict]]) -> None:
        pass

    def delete(self, table: str, key: str) -> bool:
        self._serve()
        return True

    # -- sql -------------------------------------------------------------------------------
    def prepare(self, sql: str) -> str:
        return sql

    def execute(self, sql: str, params: Any = ()) -> int:
        self._serve()
        return 0

    def fetchall(self, sql: str, params: Any = ()) -> list[tuple]:
        self._serve()
        return []

    def fetchcount(self, sql: str, params: Any = ()) -> int:
        self._serve()
        return 0

    def begin(self, writes: bool = True) -> None:
        pass

    def commit(self) -> None:
        pass

    def rollback(self) -> None:
        pass
