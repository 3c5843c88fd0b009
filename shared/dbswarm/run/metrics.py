"""Live metrics: a running shard's per-second figures pushed to Prometheus (remote write).

Read from what the shard already keeps — the cumulative measurement its snapshots build
every persist interval (``DBSWARM_PERSIST_INTERVAL_S``, 15 s) and at its end: the per-second
timeline and the operations' histograms — so nothing is added to the per-operation path and
nothing is counted twice. Every second since the last push becomes one sample per series,
time-stamped with that second, so Prometheus holds per-second resolution delivered every
interval. Series (labels: campaign, run, phase, shard, operation, engine, family, and the
campaign's own):

- ``dbswarm_operations_total``: operations completed up to the second (warm-up included), a counter;
- ``dbswarm_errors_total``: failed calls up to the second (no operation label);
- ``dbswarm_latency_mean_us``: the mean latency of the second's operations;
- ``dbswarm_latency_us{quantile}``: the shard phase's latency percentiles so far (0.5 … 0.999);
- ``dbswarm_measured_operations``: at the shard's end, its measured count per operation (warm-up
  excluded): what result.json's shard files hold. ``sum by (operation)`` gives the campaign's.

The push runs on a thread of its own with a timeout: a slow or absent endpoint never blocks or
fails the shard; the shard file says what was not exported (``metrics_export``).

The wire format is Prometheus' remote-write 1.0: a protobuf ``WriteRequest`` compressed with
snappy's block format. Both are written here (the message has four fields; the snappy block is
written as literals, which every decoder reads): a few KB a push, not worth a protobuf runtime
and a compression library in every Lambda layer.
"""
from __future__ import annotations

import queue
import struct
import threading
import time
import urllib.error
import urllib.request
from base64 import b64encode
from typing import Any, Optional

QUANTILES = (("0.5", 50.0), ("0.95", 95.0), ("0.99", 99.0), ("0.999", 99.9))
FINAL_WAIT_S = 10.0  # the shard's end waits at most this long for its last push


# ---- the wire format ----------------------------------------------------------------------------

def _varint(n: int) -> bytes:
    out = bytearray()
    while True:
        byte = n & 0x7F
        n >>= 7
        if n:
            out.append(byte | 0x80)
        else:
            out.append(byte)
            return bytes(out)


def _field(number: int, payload: bytes) -> bytes:
    """A length-delimited field (wire type 2)."""
    return _varint(number << 3 | 2) + _varint(len(payload)) + payload


def _sample(value: float, ts_ms: int) -> bytes:
    return b"\x09" + struct.pack("<d", value) + b"\x10" + _varint(ts_ms)


def encode_write_request(series: list[tuple[dict[str, str], list[tuple[float, int]]]]) -> bytes:
    """A remote-write ``WriteRequest`` of (labels, [(value, timestamp ms)]) series."""
    out = bytearray()
    for labels, samples in series:
        ts = bytearray()
        for name in sorted(labels):  # Prometheus wants the labels sorted by name
            ts += _field(1, _field(1, name.encode()) + _field(2, str(labels[name]).encode()))
        for value, ts_ms in samples:
            ts += _field(2, _sample(value, ts_ms))
        out += _field(1, bytes(ts))
    return bytes(out)


def snappy_block(data: bytes) -> bytes:
    """``data`` in snappy's block format, as literals (no back-references)."""
    out = bytearray(_varint(len(data)))
    for i in range(0, len(data), 65536):
        chunk = data[i:i + 65536]
        n = len(chunk) - 1
        if n < 60:
            out.append(n << 2)
        elif n < 256:
            out += bytes((60 << 2, n))
        else:
            out += bytes((61 << 2,)) + struct.pack("<H", n)
        out += chunk
    return bytes(out)


# ---- the pusher ---------------------------------------------------------------------------------

class PrometheusPush:
    """One shard phase's series, pushed as its snapshots come (``update``), on a thread of its own."""

    def __init__(self, settings: dict[str, Any], labels: dict[str, str], password: Optional[str] = None):
        self.url = settings["remote_write"]
        self.timeout_s = float(settings.get("timeout_s") or 2.0)
        self.labels = {**{k: str(v) for k, v in (settings.get("labels") or {}).items()}, **labels}
        self.headers = {"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
                        "X-Prometheus-Remote-Write-Version": "0.1.0", "User-Agent": "dbswarm"}
        if settings.get("username"):
            token = b64encode(f"{settings['username']}:{password or ''}".encode()).decode()
            self.headers["Authorization"] = "Basic " + token
        self.pushed_to = 0          # the first second not pushed yet
        self.pushes = self.failures = self.samples = 0
        self.last_error: Optional[str] = None
        self._queue: "queue.Queue[Optional[bytes]]" = queue.Queue(maxsize=64)
        self._thread = threading.Thread(target=self._send_loop, name="dbswarm-metrics", daemon=True)
        self._thread.start()

    def update(self, measurement: Any, final: bool = False, now: Optional[float] = None) -> None:
        """The seconds of ``measurement`` (the shard's cumulative) not pushed yet: whole seconds
        only until ``final``. Never raises, never blocks."""
        try:
            body = self._body(measurement, final, time.time() if now is None else now)
        except Exception as exc:  # the figures are the shard file's: an export problem is only noted
            self._note(f"{type(exc).__name__}: {exc}")
            return
        if body is None:
            return
        try:
            self._queue.put_nowait(body)
        except queue.Full:
            self._note("the endpoint is slower than the pushes: a push was dropped")

    def close(self, wait_s: float = FINAL_WAIT_S) -> dict[str, Any]:
        """Wait (bounded) for the pushes queued so far; what was exported."""
        try:
            self._queue.put(None, timeout=wait_s)
        except queue.Full:
            pass
        self._thread.join(wait_s)
        if self._thread.is_alive():
            self._note(f"pushes still queued after {wait_s:g} s were given up")
        return self.status()

    def status(self) -> dict[str, Any]:
        out: dict[str, Any] = {"endpoint": "prometheus remote write", "pushes": self.pushes,
                               "failed": self.failures, "samples": self.samples, "pushed_to": self.pushed_to}
        if self.last_error:
            out["error"] = self.last_error[:300]
        return out

    def _note(self, error: str) -> None:
        self.failures += 1
        self.last_error = error

    def _series(self, name: str, **labels: str) -> dict[str, str]:
        return {"__name__": name, **self.labels, **labels}

    def _body(self, m: Any, final: bool, now: float) -> Optional[bytes]:
        tl = m.timeline
        if tl.start is None:
            return None
        end = tl.end if final else min(tl.end, int(now) - 1)  # a second still running is not pushed
        first = max(self.pushed_to, tl.start)
        series: list[tuple[dict[str, str], list[tuple[float, int]]]] = []
        if end > first:
            ts = [(s + 1) * 1000 for s in range(first, end)]  # a second's figures at its end
            per_second = [0] * (end - first)
            for op, counts in tl.ops.items():
                before = sum(counts[:first - tl.start])  # late operations of pushed seconds count on
                samples = []
                for j, s in enumerate(range(first, end)):
                    n = counts[s - tl.start] if 0 <= s - tl.start < len(counts) else 0
                    before += n
                    per_second[j] += n
                    samples.append((float(before), ts[j]))
                series.append((self._series("dbswarm_operations_total", operation=op), samples))
            errors = sum(tl.errors[:first - tl.start])
            err_samples = []
            for j, s in enumerate(range(first, end)):
                errors += tl.errors[s - tl.start] if s - tl.start < len(tl.errors) else 0
                err_samples.append((float(errors), ts[j]))
            series.append((self._series("dbswarm_errors_total"), err_samples))
            mean = [(tl.latency_us[s - tl.start] / per_second[j], ts[j]) for j, s in enumerate(range(first, end))
                    if per_second[j] and s - tl.start < len(tl.latency_us)]
            if mean:
                series.append((self._series("dbswarm_latency_mean_us"), mean))
            self.pushed_to = end
        stamp = int(max(now, end) * 1000)
        for op, stats in m.operations.items():
            h = stats.histogram
            if h.get_total_count():
                for q, p in QUANTILES:
                    series.append((self._series("dbswarm_latency_us", operation=op, quantile=q),
                                   [(float(h.get_value_at_percentile(p)), stamp)]))
            if final:
                series.append((self._series("dbswarm_measured_operations", operation=op),
                               [(float(stats.count), stamp)]))
        if not series:
            return None
        self.samples += sum(len(s) for _, s in series)
        return snappy_block(encode_write_request(series))

    def _send_loop(self) -> None:
        while True:
            body = self._queue.get()
            if body is None:
                return
            request = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
            try:
                with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
                    response.read()
                self.pushes += 1
            except urllib.error.HTTPError as exc:
                detail = exc.read()[:200].decode("utf-8", "replace").strip()
                self._note(f"HTTP {exc.code} from {self.url}: {detail}")
            except Exception as exc:
                self._note(f"{type(exc).__name__}: {getattr(exc, 'reason', exc)} ({self.url})")


def start_export(metrics: Optional[dict[str, Any]], labels: dict[str, str],
                 password: Optional[str] = None) -> Optional[PrometheusPush]:
    """The shard phase's exporter, when the campaign asks for one (``results.metrics``)."""
    prometheus = (metrics or {}).get("prometheus")
    if not prometheus:
        return None
    return PrometheusPush(prometheus, labels, password)
