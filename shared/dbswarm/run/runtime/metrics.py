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
  excluded): what result.json's shard files hold. ``sum by (operation)`` gives the campaign's;
- ``dbswarm_errors_by_class_total{operation, kind, error_class}`` and ``dbswarm_counter{counter}``
  (``retries`` among them): so far, at each push.

The push runs on a thread of its own with a timeout: a slow or absent endpoint never blocks or
fails the shard; the shard file says what was not exported (``metrics_export``).

The wire format is Prometheus' remote-write 1.0: a protobuf ``WriteRequest`` compressed with
snappy's block format. Both are written here (the message has four fields; the snappy block is
written as literals, which every decoder reads): a few KB a push, not worth a protobuf runtime
and a compression library in every Lambda layer.
"""
from __future__ import annotations

import os
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


# ---- what a push carries ----------------------------------------------------------------------

class Figures:
    """The seconds ``[first, end)`` not pushed yet of a shard's cumulative measurement: per
    second the operations per operation (and their running totals, late operations of pushed
    seconds included), the errors, the mean latency; the percentiles so far; at the end, the
    measured counts (warm-up excluded)."""

    def __init__(self, m: Any, first: int, end: int, final: bool, now: float):
        tl = m.timeline
        self.seconds = list(range(first, end))
        self.ops: dict[str, list[tuple[int, int, int]]] = {}  # op -> [(second, count, running total)]
        per_second = [0] * len(self.seconds)
        for op, counts in tl.ops.items():
            before = sum(counts[:max(0, first - tl.start)])
            rows = []
            for j, sec in enumerate(self.seconds):
                n = counts[sec - tl.start] if 0 <= sec - tl.start < len(counts) else 0
                before += n
                per_second[j] += n
                rows.append((sec, n, before))
            self.ops[op] = rows
        errors = sum(tl.errors[:max(0, first - tl.start)])
        self.errors: list[tuple[int, int, int]] = []
        for sec in self.seconds:
            n = tl.errors[sec - tl.start] if 0 <= sec - tl.start < len(tl.errors) else 0
            errors += n
            self.errors.append((sec, n, errors))
        self.mean_us = [(sec, tl.latency_us[sec - tl.start] / per_second[j]) for j, sec in enumerate(self.seconds)
                        if per_second[j] and 0 <= sec - tl.start < len(tl.latency_us)]
        self.stamp = max(now, end)
        self.quantiles: dict[str, list[tuple[str, float]]] = {}
        self.measured: dict[str, int] = {}
        # so far: failed calls per operation and error class ("OP:kind:name"), and the recorder's
        # counters (retries among them)
        self.error_classes = {k: int(v) for k, v in (getattr(m, "errors", None) or {}).items()}
        self.counters = {k: float(v) for k, v in (getattr(m, "counters", None) or {}).items()
                         if isinstance(v, (int, float)) and not isinstance(v, bool)}
        for op, stats in m.operations.items():
            h = stats.histogram
            if h.get_total_count():
                self.quantiles[op] = [(q, float(h.get_value_at_percentile(p))) for q, p in QUANTILES]
            if final:
                self.measured[op] = stats.count

    def empty(self) -> bool:
        return not self.seconds and not self.quantiles and not self.measured and not self.error_classes


# ---- the pushers --------------------------------------------------------------------------------

class Push:
    """One shard phase's series, pushed as its snapshots come (``update``), on a thread of its own."""
    endpoint = "?"

    def __init__(self, labels: dict[str, str], timeout_s: float = 2.0):
        self.labels = labels
        self.timeout_s = timeout_s
        self.pushed_to = 0          # the first second not pushed yet
        self.pushes = self.failures = self.samples = 0
        self.last_error: Optional[str] = None
        self._queue: "queue.Queue[Any]" = queue.Queue(maxsize=64)
        self._thread = threading.Thread(target=self._send_loop, name="dbswarm-metrics", daemon=True)
        self._thread.start()

    def update(self, measurement: Any, final: bool = False, now: Optional[float] = None) -> None:
        """The seconds of ``measurement`` (the shard's cumulative) not pushed yet: whole seconds
        only until ``final``. Never raises, never blocks."""
        try:
            tl = measurement.timeline
            if tl.start is None:
                return
            now = time.time() if now is None else now
            end = tl.end if final else min(tl.end, int(now) - 1)  # a second still running is not pushed
            first = max(self.pushed_to, tl.start)
            figures = Figures(measurement, first, max(first, end), final, now)
            if figures.empty():
                return
            body = self.encode(figures)
            self.pushed_to = max(self.pushed_to, end)
        except Exception as exc:  # the figures are the shard file's: an export problem is only noted
            self._note(f"{type(exc).__name__}: {exc}")
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
        out: dict[str, Any] = {"endpoint": self.endpoint, "pushes": self.pushes, "failed": self.failures,
                               "samples": self.samples, "pushed_to": self.pushed_to}
        if self.last_error:
            out["error"] = self.last_error[:300]
        return out

    def _note(self, error: str) -> None:
        self.failures += 1
        self.last_error = error

    def _send_loop(self) -> None:
        while True:
            body = self._queue.get()
            if body is None:
                return
            try:
                self.send(body)
                self.pushes += 1
            except Exception as exc:
                self._note(self.describe_error(exc))

    def encode(self, figures: Figures) -> Any:
        raise NotImplementedError

    def send(self, body: Any) -> None:
        raise NotImplementedError

    def describe_error(self, exc: Exception) -> str:
        return f"{type(exc).__name__}: {exc}"


class PrometheusPush(Push):
    """Prometheus remote write: a counter's running total per second, gauges."""
    endpoint = "prometheus remote write"

    def __init__(self, settings: dict[str, Any], labels: dict[str, str], password: Optional[str] = None):
        super().__init__({**{k: str(v) for k, v in (settings.get("labels") or {}).items()}, **labels},
                         float(settings.get("timeout_s") or 2.0))
        self.url = settings["remote_write"]
        self.headers = {"Content-Encoding": "snappy", "Content-Type": "application/x-protobuf",
                        "X-Prometheus-Remote-Write-Version": "0.1.0", "User-Agent": "dbswarm"}
        if settings.get("username"):
            token = b64encode(f"{settings['username']}:{password or ''}".encode()).decode()
            self.headers["Authorization"] = "Basic " + token

    def _series(self, name: str, **labels: str) -> dict[str, str]:
        return {"__name__": name, **self.labels, **labels}

    def encode(self, f: Figures) -> bytes:
        series: list[tuple[dict[str, str], list[tuple[float, int]]]] = []
        if f.seconds:  # a second's figures at its end
            for op, rows in f.ops.items():
                series.append((self._series("dbswarm_operations_total", operation=op),
                               [(float(total), (sec + 1) * 1000) for sec, _, total in rows]))
            series.append((self._series("dbswarm_errors_total"),
                           [(float(total), (sec + 1) * 1000) for sec, _, total in f.errors]))
            if f.mean_us:
                series.append((self._series("dbswarm_latency_mean_us"),
                               [(v, (sec + 1) * 1000) for sec, v in f.mean_us]))
        stamp = int(f.stamp * 1000)
        for op, values in f.quantiles.items():
            series += [(self._series("dbswarm_latency_us", operation=op, quantile=q), [(v, stamp)]) for q, v in values]
        for op, count in f.measured.items():
            series.append((self._series("dbswarm_measured_operations", operation=op), [(float(count), stamp)]))
        for key, count in f.error_classes.items():
            op, _, rest = key.partition(":")
            kind, _, name = rest.partition(":")
            series.append((self._series("dbswarm_errors_by_class_total", operation=op, kind=kind, error_class=name),
                           [(float(count), stamp)]))
        for name, value in f.counters.items():
            series.append((self._series("dbswarm_counter", counter=name), [(value, stamp)]))
        self.samples += sum(len(s) for _, s in series)
        return snappy_block(encode_write_request(series))

    def send(self, body: bytes) -> None:
        request = urllib.request.Request(self.url, data=body, headers=self.headers, method="POST")
        with urllib.request.urlopen(request, timeout=self.timeout_s) as response:
            response.read()

    def describe_error(self, exc: Exception) -> str:
        if isinstance(exc, urllib.error.HTTPError):
            return f"HTTP {exc.code} from {self.url}: {exc.read()[:200].decode('utf-8', 'replace').strip()}"
        return f"{type(exc).__name__}: {getattr(exc, 'reason', exc)} ({self.url})"


CLOUDWATCH_BATCH = 500  # metric data per PutMetricData call (the API takes 1,000)


class CloudWatchPush(Push):
    """CloudWatch high-resolution metrics (PutMetricData, 1-second storage): per second the
    operations (Count) per operation, the errors, the mean latency; the percentiles so far."""
    endpoint = "cloudwatch"

    def __init__(self, namespace: str, labels: dict[str, str], timeout_s: float = 5.0):
        super().__init__(labels, timeout_s)
        self.namespace = namespace
        self._client: Any = None

    def _dimensions(self, **extra: str) -> list[dict[str, str]]:
        names = {"campaign": "Campaign", "run": "Run", "phase": "Phase", "shard": "Shard"}
        out = [{"Name": names[k], "Value": self.labels[k]} for k in names if k in self.labels]
        return out + [{"Name": k, "Value": v} for k, v in extra.items()]

    def encode(self, f: Figures) -> list[dict[str, Any]]:
        from datetime import datetime, timezone  # noqa: PLC0415
        data: list[dict[str, Any]] = []

        def at(sec: float) -> datetime:
            return datetime.fromtimestamp(sec, tz=timezone.utc)

        for op, rows in f.ops.items():
            data += [{"MetricName": "Operations", "Dimensions": self._dimensions(Operation=op), "Timestamp": at(sec),
                      "Value": n, "Unit": "Count", "StorageResolution": 1} for sec, n, _ in rows]
        data += [{"MetricName": "Errors", "Dimensions": self._dimensions(), "Timestamp": at(sec), "Value": n,
                  "Unit": "Count", "StorageResolution": 1} for sec, n, _ in f.errors if n]
        data += [{"MetricName": "LatencyMean", "Dimensions": self._dimensions(), "Timestamp": at(sec), "Value": v,
                  "Unit": "Microseconds", "StorageResolution": 1} for sec, v in f.mean_us]
        for op, values in f.quantiles.items():
            data += [{"MetricName": f"LatencyP{q[2:] if q != '0.5' else '50'}",
                      "Dimensions": self._dimensions(Operation=op), "Timestamp": at(f.stamp), "Value": v,
                      "Unit": "Microseconds", "StorageResolution": 1} for q, v in values]
        self.samples += len(data)
        return data

    def send(self, data: list[dict[str, Any]]) -> None:
        if self._client is None:
            import boto3  # noqa: PLC0415 (a deployment's workers only)
            from botocore.config import Config  # noqa: PLC0415
            self._client = boto3.client("cloudwatch", config=Config(connect_timeout=self.timeout_s,
                                                                    read_timeout=self.timeout_s,
                                                                    retries={"max_attempts": 2}))
        for i in range(0, len(data), CLOUDWATCH_BATCH):
            self._client.put_metric_data(Namespace=self.namespace, MetricData=data[i:i + CLOUDWATCH_BATCH])


CLOUDWATCH_ENV = "DBSWARM_CLOUDWATCH_NAMESPACE"


def start_export(metrics: Optional[dict[str, Any]], labels: dict[str, str],
                 password: Optional[str] = None) -> list[Push]:
    """The shard phase's exporters: the campaign's Prometheus endpoint (``results.metrics``), and
    CloudWatch in a deployment whose functions name a namespace (``DBSWARM_CLOUDWATCH_NAMESPACE``,
    template parameter MetricsNamespace)."""
    out: list[Push] = []
    prometheus = (metrics or {}).get("prometheus")
    if prometheus:
        out.append(PrometheusPush(prometheus, labels, password))
    namespace = os.environ.get(CLOUDWATCH_ENV, "").strip()
    if namespace:
        out.append(CloudWatchPush(namespace, labels))
    return out
