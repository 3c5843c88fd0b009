"""Measurements that merge exactly, in any order.

- ``OperationStats``: per operation type, a count and an HdrHistogram of latencies (µs).
- ``Timeline``: per wall-clock second, operations per type, errors and latency sums; and per
  interval (``report_interval``), a sparse log-linear latency histogram per type
  (``interval_bucket``), so that percentiles over time merge exactly across shards; for paced
  runs, the same of the response time from the intended start (where a stall shows).
- ``Measurement``: both, plus error counts by class, free counters (sysbench queries) and
  free integer records (``records``: lists merged by concatenation, e.g. TPC-C's New-Orders
  committed around the ramp-up's end).
- ``Recorder``: the per-thread hot path that fills a Measurement (``engine.calls.Measured``,
  the one timing wrapper every binding call goes through, records into it; bindings never
  time themselves).

This package imports nothing else of dbswarm (the import contract in pyproject.toml).

Percentiles are computed only from merged histograms (``summary()``).
"""
from __future__ import annotations

import base64
import copy
import ctypes
import itertools
import math
import time
import zlib
from array import array
from collections import Counter
from typing import Any, Iterable, Optional, cast

import pyhdrh  # HdrHistogram's C codec (hdrhistogram's own extension)
from hdrh.histogram import HdrHistogram

HIST_LOWEST_US = 1
HIST_HIGHEST_US = 3_600_000_000  # one hour
HIST_DIGITS = 3
# the histogram's buckets (HdrHistogram, 3 significant digits, lowest value 1): values below
# 2048 exact, above it 2048 sub-buckets per power of two (Recorder._record_latencies)
HIST_SUB_BUCKET_BITS = 11
HIST_EXACT_BELOW = 1 << HIST_SUB_BUCKET_BITS


def hist_bucket_floor(lat: int) -> int:
    """The lowest value of ``lat``'s histogram bucket (``lat`` itself below HIST_EXACT_BELOW)."""
    if lat < HIST_EXACT_BELOW:
        return lat
    shift = lat.bit_length() - HIST_SUB_BUCKET_BITS
    return lat >> shift << shift
PERCENTILES = (50, 90, 95, 99, 99.9)
NS_PER_S = 1_000_000_000


class Histogram(HdrHistogram):
    """HdrHistogram with its mean computed without its recorded-values iterator, which walks
    every bucket below the highest recorded one through several Python calls each: 0.1-0.3 s a
    histogram of these bounds (23,552 buckets), paid for every operation of every phase a result
    merges. The same sum: each recorded bucket's count times its median equivalent value."""

    def get_mean_value(self) -> float:
        if not self.total_count:
            return 0.0
        n = min(self.counts_len, self.encoder.payload.counts_len)  # a decoded one's may be shorter
        median, highest, value_at = self._hdr_median_equiv_value, self.get_highest_equivalent_value, \
            self.get_value_from_index
        total = 0
        for index, count in enumerate(self.counts[:n]):
            if count:
                total += count * median(highest(value_at(index)))
        return float(total) / self.total_count


def new_histogram() -> HdrHistogram:
    return Histogram(HIST_LOWEST_US, HIST_HIGHEST_US, HIST_DIGITS)


def decode_histogram(text: str) -> HdrHistogram:
    h = new_histogram()
    if text:
        h.decode_and_add(text)
    return h


class _LazyHistogram:
    """An attribute holding a histogram made at its first read (in slot ``_<name>``)."""

    def __set_name__(self, owner: type, name: str) -> None:
        self.slot = "_" + name

    def __get__(self, obj: Any, owner: Optional[type] = None) -> HdrHistogram:
        h = getattr(obj, self.slot)
        if h is None:
            h = new_histogram()
            setattr(obj, self.slot, h)
        return h

    def __set__(self, obj: Any, h: HdrHistogram) -> None:
        setattr(obj, self.slot, h)


class OperationStats:
    """``count`` is rows/operations done; ``histogram`` holds one latency per call (a load
    batch is one call of many rows): the service time, from when the call started.
    ``intended`` holds, for paced runs only (a target rate), each call's response time from
    its intended start on the schedule: a stalled database shows there, not in the service
    time, which only the one stalled call would carry (coordinated omission; YCSB's
    "Intended-" measurements, wrk2).

    Both histograms are made at their first use: a thread's recorder pools its latencies and
    rarely fills its own (``Recorder``), and each snapshot hands the thread's stats over and
    starts new ones (``Recorder.detach``): two 184-KB arrays per operation type and thread,
    most of them empty, were most of what 512 threads' recorders held."""
    __slots__ = ("count", "not_found", "errors", "_histogram", "_intended")

    def __init__(self) -> None:
        self.count = 0
        self.not_found = 0
        self.errors = 0
        self._histogram: Optional[HdrHistogram] = None
        self._intended: Optional[HdrHistogram] = None

    histogram = _LazyHistogram()
    intended = _LazyHistogram()

    @staticmethod
    def _filled(h: Optional[HdrHistogram]) -> bool:
        return h is not None and h.get_total_count() > 0

    def merge(self, other: "OperationStats") -> "OperationStats":
        self.count += other.count
        self.not_found += other.not_found
        self.errors += other.errors
        # an empty histogram is not added: HdrHistogram's add takes the other's minimum, 0 when
        # it is empty, and a minimum of 0 stays through every later merge (an operation that
        # only failed in one thread, or in one snapshot's parts, made the run's min_us 0)
        if self._filled(other._histogram):
            self.histogram.add(other._histogram)
        if self._filled(other._intended):
            self.intended.add(other._intended)
        return self

    @staticmethod
    def _percentiles(h: HdrHistogram) -> dict:
        return dict(avg_us=round(h.get_mean_value(), 1), min_us=h.get_min_value(), max_us=h.get_max_value(),
                    **{_pname(p): h.get_value_at_percentile(p) for p in PERCENTILES})

    def summary(self) -> dict:
        h = self.histogram
        calls = h.get_total_count()
        out = {"count": self.count, "calls": calls, "not_found": self.not_found, "errors": self.errors}
        if calls:
            out.update(self._percentiles(h))
        if self._filled(self._intended):
            out["intended"] = {"calls": self.intended.get_total_count(), **self._percentiles(self.intended)}
        return out

    def to_dict(self) -> dict:
        out = {"count": self.count, "not_found": self.not_found, "errors": self.errors,
               "histogram": self.histogram.encode().decode("ascii") if self._filled(self._histogram) else ""}
        if self._filled(self._intended):
            out["intended_histogram"] = self.intended.encode().decode("ascii")
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "OperationStats":
        s = cls()
        s.count, s.not_found, s.errors = d["count"], d.get("not_found", 0), d.get("errors", 0)
        s.histogram = decode_histogram(d.get("histogram", ""))
        if d.get("intended_histogram"):
            s.intended = decode_histogram(d["intended_histogram"])
        return s


def _pname(p: float) -> str:
    return "p" + (str(p).replace(".", "_") if p != int(p) else str(int(p))) + "_us"


# Per-interval histograms: log-linear buckets of 32 per octave (values below 64 µs exact), a
# bucket at most 1/32 (3.1 %) of its value wide: HdrHistogram's layout at its coarsest useful
# precision, enough for a p99-over-time chart, and small enough that an hour of 1-second
# intervals of 1,000 shards merges in one function (docs/decisions/0014-per-interval-histograms.md).
INTERVAL_SUB_BITS = 6


def interval_bucket(us: int) -> int:
    """The bucket of a latency (µs) in a per-interval histogram: monotonic in ``us``."""
    if us < 64:
        return us
    shift = us.bit_length() - INTERVAL_SUB_BITS
    return (shift << 5) + (us >> shift)


def interval_bucket_value(bucket: int) -> int:
    """The highest latency (µs) a bucket holds (HdrHistogram's highest equivalent value)."""
    if bucket < 64:
        return bucket
    shift = (bucket >> 5) - 1
    return (((bucket & 31) + 33) << shift) - 1


INTERVAL_BUCKETS = 896  # interval_bucket(2**32 - 1) + 1: every latency up to 71 minutes
_BUCKET_RANGE = range(INTERVAL_BUCKETS)


class IntervalTable:
    """One operation's per-interval histograms as a dense table (a row per interval from
    ``first``, a column per bucket) of C int64 counts: what shard files hold and the
    aggregation merges. Encoded with HdrHistogram's own codec (``pyhdrh``: ZigZag varints with
    zero runs, in C) + zlib + base64, and added row-aligned in C (``pyhdrh.add_array``), so
    that merging an hour of 1-second intervals of 1,000 shards stays in seconds (Python-level
    dicts took minutes)."""
    __slots__ = ("first", "rows", "counts")

    def __init__(self, first: int, rows: int):
        self.first, self.rows = first, rows
        self.counts = (ctypes.c_int64 * (rows * INTERVAL_BUCKETS))()

    @classmethod
    def of(cls, intervals: "dict[int, dict[int, int]] | IntervalTable") -> "IntervalTable":
        """From a recorder's sparse {interval: {bucket: count}} (or a table: itself)."""
        if isinstance(intervals, IntervalTable):
            return intervals
        first, last = min(intervals), max(intervals)
        t = cls(first, last - first + 1)
        c = t.counts
        for iv, buckets in intervals.items():
            base = (iv - first) * INTERVAL_BUCKETS
            for b, n in buckets.items():
                c[base + min(b, INTERVAL_BUCKETS - 1)] += n  # beyond 71 minutes: the last bucket
        return t

    def copy(self) -> "IntervalTable":
        t = IntervalTable(self.first, self.rows)
        ctypes.memmove(ctypes.addressof(t.counts), ctypes.addressof(self.counts), self.rows * INTERVAL_BUCKETS * 8)
        return t

    def add(self, other: "IntervalTable") -> "IntervalTable":
        """Add ``other`` row by row (growing this table to cover its intervals); returns the
        table that holds the sum (this one, or a larger copy)."""
        t = self
        lo, hi = min(self.first, other.first), max(self.first + self.rows, other.first + other.rows)
        if lo != self.first or hi != self.first + self.rows:
            t = IntervalTable(lo, hi - lo)
            ctypes.memmove(ctypes.addressof(t.counts) + (self.first - lo) * INTERVAL_BUCKETS * 8,
                           ctypes.addressof(self.counts), self.rows * INTERVAL_BUCKETS * 8)
        pyhdrh.add_array(ctypes.addressof(t.counts) + (other.first - t.first) * INTERVAL_BUCKETS * 8,
                         ctypes.addressof(other.counts), other.rows * INTERVAL_BUCKETS, 8)
        return t

    def row(self, interval: int) -> dict[int, int]:
        """{bucket: count} of one interval (empty outside the table)."""
        i = interval - self.first
        if not 0 <= i < self.rows:
            return {}
        base = i * INTERVAL_BUCKETS
        c = self.counts[base:base + INTERVAL_BUCKETS]
        return {b: c[b] for b in itertools.compress(_BUCKET_RANGE, c)}  # the non-zero ones, found in C

    def sparse(self) -> dict[int, dict[int, int]]:
        out = {}
        for iv in range(self.first, self.first + self.rows):
            r = self.row(iv)
            if r:
                out[iv] = r
        return out

    def encode(self) -> dict:
        n = self.rows * INTERVAL_BUCKETS
        buf = (ctypes.c_byte * (n * 9 + 16))()
        size = pyhdrh.encode(ctypes.addressof(self.counts), n, 8, ctypes.addressof(buf), len(buf))
        return {"first": self.first, "rows": self.rows,
                "counts": base64.b64encode(zlib.compress(ctypes.string_at(buf, size))).decode("ascii")}

    @classmethod
    def decode(cls, d: dict) -> "IntervalTable":
        t = cls(int(d["first"]), int(d["rows"]))
        pyhdrh.decode(zlib.decompress(base64.b64decode(d["counts"])), 0, ctypes.addressof(t.counts),
                      t.rows * INTERVAL_BUCKETS, 8)
        return t


def interval_percentiles(buckets: dict[int, int], percentiles: tuple[float, ...] = PERCENTILES) -> dict:
    """count, pNN_us and max_us of one interval's buckets (values are the buckets' highest)."""
    total = sum(buckets.values())
    out = {"count": total}
    if not total:
        return out
    order = sorted(buckets.items())
    targets = sorted((max(1, math.ceil(total * p / 100)), p) for p in percentiles)
    seen, i = 0, 0
    for bucket, n in order:
        seen += n
        while i < len(targets) and seen >= targets[i][0]:
            out[_pname(targets[i][1])] = interval_bucket_value(bucket)
            i += 1
    out["max_us"] = interval_bucket_value(order[-1][0])
    return out


def _merge_interval_hists(into: dict, other: dict) -> None:
    """Add one timeline's per-interval histograms ({op: intervals}) to another's."""
    for op, intervals in other.items():
        if not intervals:
            continue
        mine = into.get(op)
        if not mine:
            into[op] = intervals.copy() if isinstance(intervals, IntervalTable) else \
                {iv: dict(b) for iv, b in intervals.items()}
        elif isinstance(mine, dict) and not isinstance(intervals, IntervalTable):
            for iv, buckets in intervals.items():  # two recorders' sparse dicts (within a worker)
                acc = mine.setdefault(iv, {})
                for b, n in buckets.items():
                    acc[b] = acc.get(b, 0) + n
        else:  # shard files: dense tables, added in C
            into[op] = (IntervalTable.of(mine) if isinstance(mine, dict) else mine).add(IntervalTable.of(intervals))


class Timeline:
    """Per wall-clock second (epoch seconds from ``start``): ops per type, errors, latency sum.
    Per interval of ``interval_s`` seconds (aligned on the epoch, so every shard's intervals
    are the same): ``hist[op]`` = {epoch_second // interval_s: {bucket: count}} while recording,
    an ``IntervalTable`` once read from a shard file; ``intended[op]`` the same of the response
    time from the intended start (paced runs only: a stall is in it, not in ``hist``), by the
    second the operation ended in, as ``hist``."""
    __slots__ = ("start", "ops", "errors", "latency_us", "interval_s", "hist", "intended")

    def __init__(self, start: Optional[int] = None, interval_s: int = 1):
        self.start = start
        self.ops: dict[str, list[int]] = {}
        self.errors: list[int] = []
        self.latency_us: list[int] = []
        self.interval_s = interval_s
        self.hist: dict = {}
        self.intended: dict = {}

    @property
    def end(self) -> Optional[int]:
        """One past the last second with data."""
        if self.start is None:
            return None
        n = max([len(v) for v in self.ops.values()] + [len(self.errors), len(self.latency_us)], default=0)
        return self.start + n

    def merge(self, other: "Timeline") -> "Timeline":
        if other.start is None:
            return self
        if self.start is None:
            self.start = other.start
        start = min(self.start, other.start)
        end = max(cast(int, self.end), cast(int, other.end))  # both have a start
        n = end - start

        def add(a: list[int], a_start: int, b: list[int], b_start: int) -> list[int]:
            # into this timeline's list, in place where it starts at the union's start (a
            # snapshot adds each thread's part, a few seconds long, to the run so far: the cost
            # is the part's length, not the run's); ``b`` is only read
            if a_start != start:
                a = [0] * (a_start - start) + a
            if len(a) < n:
                a.extend([0] * (n - len(a)))
            off = b_start - start
            for i, v in enumerate(b):
                if v:
                    a[off + i] += v
            return a

        for op in set(self.ops) | set(other.ops):
            self.ops[op] = add(self.ops.get(op) or [], self.start, other.ops.get(op, []), other.start)
        self.errors = add(self.errors, self.start, other.errors, other.start)
        self.latency_us = add(self.latency_us, self.start, other.latency_us, other.start)
        self.start = start
        self.trim()
        if other.hist or other.intended:
            if (self.hist or self.intended) and other.interval_s != self.interval_s:
                raise ValueError(f"timelines of {self.interval_s} s and {other.interval_s} s intervals do not merge")
            self.interval_s = other.interval_s
            _merge_interval_hists(self.hist, other.hist)
            _merge_interval_hists(self.intended, other.intended)
        return self

    def sparse_hist(self, intended: bool = False) -> dict[str, dict[int, dict[int, int]]]:
        """{op: {interval: {bucket: count}}}, whatever the form each operation is held in (of
        the response time from the intended start when ``intended``)."""
        hist = self.intended if intended else self.hist
        return {op: (iv.sparse() if isinstance(iv, IntervalTable) else iv) for op, iv in hist.items() if iv}

    def interval_summary(self) -> Optional[dict]:
        """Percentiles per interval, all operations together and per operation: what a
        p99-over-time chart draws (interval i starts at ``start + i * interval_s``). Paced runs
        also have ``intended``: the same of the response time from the intended start, on the
        same intervals (a stall shows there as a p99 of about its length)."""
        tables = {op: IntervalTable.of(iv) for op, iv in sorted(self.hist.items()) if iv}
        intended = {op: IntervalTable.of(iv) for op, iv in sorted(self.intended.items()) if iv}
        if not tables and not intended:
            return None
        alls: dict = {}
        for name, group in (("service", tables), ("intended", intended)):
            for t in group.values():
                alls[name] = t.copy() if name not in alls else alls[name].add(t)
        first = min(t.first for t in alls.values())
        n = max(t.first + t.rows for t in alls.values()) - first
        keys = ["count"] + [_pname(p) for p in PERCENTILES] + ["max_us"]

        def series(table: IntervalTable) -> dict:
            rows = [interval_percentiles(table.row(i)) for i in range(first, first + n)]
            return {k: [r.get(k) for r in rows] for k in keys}
        out = {"interval_s": self.interval_s, "start": first * self.interval_s, "intervals": n,
               "precision": "log-linear buckets, 32 per octave: values at most 3.1 % above the exact ones"}
        if tables:
            out.update({"all": series(alls["service"]), "by_operation": {op: series(t) for op, t in tables.items()}})
        if intended:
            out["intended"] = {"basis": "response time from each operation's intended start on the schedule",
                               "all": series(alls["intended"]),
                               "by_operation": {op: series(t) for op, t in intended.items()}}
        return out

    def trim(self) -> None:
        """Drop trailing zeros (lists of one timeline may have different lengths)."""
        for seq in self.ops.values():
            while seq and seq[-1] == 0:
                seq.pop()
        for seq in (self.errors, self.latency_us):
            while seq and seq[-1] == 0:
                seq.pop()

    def totals(self) -> list[int]:
        """Operations per second, all types together."""
        if self.start is None:
            return []
        n = cast(int, self.end) - self.start
        out = [0] * n
        for seq in self.ops.values():
            for i, v in enumerate(seq):
                out[i] += v
        return out

    def to_dict(self, histograms: bool = True) -> dict:
        out: dict[str, Any] = {"start": self.start, "ops": self.ops, "errors": self.errors,
                               "latency_us": self.latency_us}
        if histograms and (self.hist or self.intended):
            # per op: the first interval and, from it, each interval's [bucket, count, ...] pairs
            out["interval_s"] = self.interval_s
            out["hist"] = {op: IntervalTable.of(iv).encode() for op, iv in sorted(self.hist.items()) if iv}
            intended = {op: IntervalTable.of(iv).encode() for op, iv in sorted(self.intended.items()) if iv}
            if intended:
                out["intended_hist"] = intended
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Timeline":
        t = cls(d.get("start"), int(d.get("interval_s", 1)))
        t.ops = {k: list(v) for k, v in d.get("ops", {}).items()}
        t.errors = list(d.get("errors", []))
        t.latency_us = list(d.get("latency_us", []))
        for op, enc in (d.get("hist") or {}).items():
            t.hist[op] = IntervalTable.decode(enc)
        for op, enc in (d.get("intended_hist") or {}).items():
            t.intended[op] = IntervalTable.decode(enc)
        return t


class Measurement:
    """Everything one thread, shard, phase or run measured; merges exactly in any order.
    ``warmup`` holds the operations of a run phase's warm-up (``warmuptime``), kept apart
    from the measured ones so that they stay out of the reported percentiles; the timeline
    has every second.

    ``records``: named lists of integers a family keeps per event where a count is not enough
    (TPC-C: each New-Order committed around the ramp-up's end, as warehouse, district, order
    number; ``workloads.tpcc``). They merge by concatenation: the same multiset of values in
    whatever order shards and threads are merged (a list's order carries no meaning; a family
    that appends groups of k values keeps every list a multiple of k long, so the groups stay
    whole). Absent from documents that have none (older shard files load with none)."""
    __slots__ = ("operations", "errors", "counters", "timeline", "warmup", "records")

    def __init__(self) -> None:
        self.operations: dict[str, OperationStats] = {}
        self.errors: dict[str, int] = {}     # "OP:kind:name" -> count
        self.counters: dict[str, int] = {}   # queries_read, reconnects, retries ...
        self.timeline = Timeline()
        self.warmup: Optional[dict[str, OperationStats]] = None  # operation -> stats during the warm-up
        self.records: dict[str, list[int]] = {}  # name -> integers, merged by concatenation

    def op(self, name: str) -> OperationStats:
        s = self.operations.get(name)
        if s is None:
            s = self.operations[name] = OperationStats()
        return s

    def merge(self, other: "Measurement") -> "Measurement":
        for name, stats in other.operations.items():
            self.op(name).merge(stats)
        for k, v in other.errors.items():
            self.errors[k] = self.errors.get(k, 0) + v
        for k, v in other.counters.items():
            self.counters[k] = self.counters.get(k, 0) + v
        for k, values in other.records.items():
            self.records.setdefault(k, []).extend(values)
        self.timeline.merge(other.timeline)
        if other.warmup:
            if self.warmup is None:
                self.warmup = {}
            for name, stats in other.warmup.items():
                self.warmup.setdefault(name, OperationStats()).merge(stats)
        return self

    @property
    def total_ops(self) -> int:
        return sum(s.count for s in self.operations.values())

    @property
    def total_errors(self) -> int:
        return sum(self.errors.values())

    @property
    def warmup_ops(self) -> int:
        return sum(s.count for s in (self.warmup or {}).values())

    def to_dict(self) -> dict:
        out = {"operations": {k: v.to_dict() for k, v in sorted(self.operations.items())},
               "errors": dict(sorted(self.errors.items())), "counters": dict(sorted(self.counters.items())),
               "timeline": self.timeline.to_dict()}
        if self.warmup:
            out["warmup"] = {k: v.to_dict() for k, v in sorted(self.warmup.items())}
        if any(self.records.values()):
            out["records"] = {k: list(v) for k, v in sorted(self.records.items()) if v}
        return out

    @classmethod
    def from_dict(cls, d: dict) -> "Measurement":
        m = cls()
        m.operations = {k: OperationStats.from_dict(v) for k, v in d.get("operations", {}).items()}
        m.errors = dict(d.get("errors", {}))
        m.counters = dict(d.get("counters", {}))
        m.timeline = Timeline.from_dict(d.get("timeline", {}))
        if d.get("warmup"):
            m.warmup = {k: OperationStats.from_dict(v) for k, v in d["warmup"].items()}
        m.records = {k: [int(x) for x in v] for k, v in (d.get("records") or {}).items()}
        return m


class _OpRecorder:
    """One operation type's hot-path state: the current second's latencies appended to an
    array (``sec_lats``: one C-level append per operation; counted per distinct µs value
    when the second changes, then added to the timeline, the interval's histogram and the
    operation's count) and the latencies of the seconds before counted per exact µs value
    (``lat``: flushed into the HdrHistogram in bulk: same buckets, same result, a fraction of
    the cost); the same of the response times from the intended start for paced runs
    (``ilat`` / ``islat`` / ``iivals``)."""
    __slots__ = ("stats", "lat", "sec_lats", "ilat", "islat", "row", "ivals", "iivals", "sec", "sec_extra")

    def __init__(self, stats: OperationStats, row: list[int], ivals: dict[int, dict[int, int]],
                 iivals: dict[int, dict[int, int]]) -> None:
        self.lat: dict[int, int]
        self.ilat: dict[int, int]
        self.islat: dict[int, int]
        self.stats, self.lat, self.sec_lats, self.ilat, self.islat = stats, {}, array("q"), {}, {}
        self.row, self.ivals, self.iivals = row, ivals, iivals
        # the second's count is len(sec_lats) + sec_extra (a call of n > 1 units: a load batch)
        self.sec, self.sec_extra = -1, 0


class Lane:
    """A client's own path into one operation's recorder (``Recorder.lane``): while
    ``perf_counter_ns() < until`` (the same second, the same side of the warm-up's end), an
    operation's service time in µs is only appended to ``lats``; otherwise the client calls
    ``Recorder.ok``, which rolls the second and sets the lane again. The same result as ``ok``
    at every operation, without its call (the YCSB hot path: families/ycsb.py)."""
    __slots__ = ("lats", "until")

    def __init__(self) -> None:
        # None until Recorder.ok sets it, and ``until`` (0) lets no client append before that
        self.lats: array[int] = None  # type: ignore[assignment]
        self.until = 0


class Recorder:
    """Fills one Measurement from one thread (no locks). Times come from perf_counter_ns;
    the timeline index is the wall-clock second, anchored once per recorder. Call
    ``flush()`` (or ``measurement()``) before reading the Measurement's counts, histograms
    and timeline (errors and counters are current)."""
    MAX_DISTINCT_LATENCIES = 4096

    def __init__(self, interval_s: int = 1):
        self.m = Measurement()
        self.interval_s = self.m.timeline.interval_s = max(1, int(interval_s))
        wall = time.time_ns()
        perf = time.perf_counter_ns()
        self.second0 = wall // NS_PER_S
        self.base = perf - (wall - self.second0 * NS_PER_S)  # perf time at second0's boundary
        self.m.timeline.start = self.second0
        # after a ``detach`` the timeline starts at the first second recorded next (``_anchor``),
        # not at second0 again
        self._unanchored = False
        self._ops: dict[str, _OpRecorder] = {}
        self._errors = self.m.timeline.errors
        self.intended_ns = 0  # paced runs: the intended start (perf_counter_ns) of the current step
        self.warm_until_ns = 0  # run phases with a warm-up: operations ending before it are the warm-up's
        # the instant the run phase's warm-up ends (its window's start edge is due), also when it
        # ended before this call (a continuation: then in the past); 0: no warm-up. Set, as
        # warm_until_ns, when the threads are released (after the clients were built)
        self.warm_end_ns = 0
        self._wops: dict[str, _OpRecorder] = {}
        self._lanes: dict[str, Lane] = {}

    def lane(self, op: str) -> Lane:
        """The lane of operation ``op`` (not for paced runs: their response times need ``ok_paced``)."""
        lane = self._lanes.get(op)
        if lane is None:
            lane = self._lanes[op] = Lane()
        return lane

    def _op(self, op: str) -> _OpRecorder:
        tl = self.m.timeline
        r = self._ops[op] = _OpRecorder(self.m.op(op), tl.ops.setdefault(op, []), tl.hist.setdefault(op, {}),
                                        tl.intended.setdefault(op, {}))
        return r

    def _wop(self, op: str) -> _OpRecorder:
        if self.m.warmup is None:
            self.m.warmup = {}
        stats = self.m.warmup.setdefault(op, OperationStats())
        tl = self.m.timeline
        r = self._wops[op] = _OpRecorder(stats, tl.ops.setdefault(op, []), tl.hist.setdefault(op, {}),
                                         tl.intended.setdefault(op, {}))
        return r

    def ok(self, op: str, t0: int, t1: int, n: int = 1) -> None:
        if t1 < self.warm_until_ns:  # the warm-up: its own stats, the same timeline
            r = self._wops.get(op) or self._wop(op)
        else:
            r = self._ops.get(op) or self._op(op)
        sec = (t1 - self.base) // 1_000_000_000  # NS_PER_S (a constant is cheaper than a global)
        if sec != r.sec:
            self._roll(r, sec)
            if len(r.lat) > self.MAX_DISTINCT_LATENCIES or len(r.ilat) > self.MAX_DISTINCT_LATENCIES:
                self._flush_latencies(r)
        # an append, not a dict's get and set: between two round trips, with the server's work
        # in the caches, a dict of thousands of distinct latencies missed at every operation
        # (CPUs shared: 3.5 µs an operation for ok(), against about 1 in a loop)
        r.sec_lats.append((t1 - t0) // 1000)
        if n != 1:
            r.sec_extra += n - 1
        if self._lanes:
            lane = self._lanes.get(op)
            if lane is not None:
                until = self.base + (sec + 1) * 1_000_000_000
                warm = self.warm_until_ns
                if t1 < warm < until:
                    until = warm
                lane.lats, lane.until = r.sec_lats, until

    def ok_paced(self, op: str, t0: int, t1: int, n: int = 1) -> None:
        """``ok`` for a paced run: also the response time from the step's intended start."""
        self.ok(op, t0, t1, n)
        r = (self._wops if t1 < self.warm_until_ns else self._ops)[op]
        lat = (t1 - self.intended_ns) // 1000
        if lat >= HIST_EXACT_BELOW:
            # the histogram's own resolution (3 significant digits: 2048 sub-buckets): the value
            # lands in the same bucket, and a schedule running late (a wait that grows with every
            # step) does not make every value distinct and the dict flush at each operation
            lat = hist_bucket_floor(lat)
        d = r.islat  # this second's: into the interval's histogram and the operation's at the roll
        d[lat] = d.get(lat, 0) + 1

    def _roll(self, r: _OpRecorder, sec: int) -> None:
        """Move the finished second's counts into the timeline and the operation's count, and
        its latencies into the interval's histogram and the operation's (once per second and
        distinct latency, not per operation)."""
        lats = r.sec_lats
        sec_count, sec_lat = len(lats) + r.sec_extra, sum(lats)
        r.stats.count += sec_count
        if r.sec >= 0 and (sec_count or sec_lat):
            if self._unanchored:
                self._anchor(r.sec)
            idx = self.second0 + r.sec - self.m.timeline.start  # type: ignore[operator]  # anchored: a start
            if idx < 0:  # a second before the last hand-over's (its operation recorded after it)
                idx = self._widen(idx)
            for seq, v in ((r.row, sec_count), (self.m.timeline.latency_us, sec_lat)):
                if idx >= len(seq):
                    seq.extend([0] * (idx + 1 - len(seq)))
                seq[idx] += v
        if lats:
            self._roll_latencies(Counter(lats), r.lat, r.ivals, (self.second0 + r.sec) // self.interval_s)
            del lats[:]
        if r.islat:
            self._roll_latencies(r.islat, r.ilat, r.iivals, (self.second0 + r.sec) // self.interval_s)
            r.islat = {}
        r.sec, r.sec_extra = sec, 0

    @staticmethod
    def _roll_latencies(second: dict, lat_all: dict, intervals: dict, iv: int) -> None:
        buckets = intervals.get(iv)
        if buckets is None:
            buckets = intervals[iv] = {}
        for lat, c in second.items():
            lat_all[lat] = lat_all.get(lat, 0) + c
            if lat < 64:
                b = lat
            else:
                shift = lat.bit_length() - 6  # INTERVAL_SUB_BITS (interval_bucket, inlined)
                b = (shift << 5) + (lat >> shift)
            buckets[b] = buckets.get(b, 0) + c

    @staticmethod
    def _record_latencies(seen: dict, stats: OperationStats, intended: bool = False) -> None:
        """{latency µs: count} into one of the stats' histograms (made only when there is a
        value), one call per histogram bucket: latencies of one bucket are added up first.

        Why: ``record_value`` is a Python call of about 3 µs, and a snapshot at 512 threads adds
        up some 70,000 distinct latencies (15 s of reads around 40 ms); the histogram keeps 3
        significant digits, so those fall in a few thousand buckets. The same counts land in
        the same buckets either way; the histogram's exact minimum and maximum become their
        buckets' lowest value, and it reports both as their buckets' (lowest / highest
        equivalent value) in any case."""
        if not seen:
            return
        h = stats.intended if intended else stats.histogram
        by_bucket: dict = {}
        get = by_bucket.get
        for lat, count in seen.items():
            lat = hist_bucket_floor(min(max(lat, 1), HIST_HIGHEST_US))
            by_bucket[lat] = get(lat, 0) + count
        for lat, count in by_bucket.items():
            h.record_value(lat, count)

    @classmethod
    def _flush_latencies(cls, r: _OpRecorder) -> None:
        cls._record_latencies(r.lat, r.stats)
        cls._record_latencies(r.ilat, r.stats, intended=True)
        r.lat, r.ilat = {}, {}

    def _anchor(self, sec: int) -> None:
        """The timeline, empty since a hand-over, starts at second ``sec`` (from second0)."""
        self._unanchored = False
        self.m.timeline.start = self.second0 + sec

    def _widen(self, idx: int) -> int:
        """The timeline started ``-idx`` seconds earlier (every list grown at its front, in
        place: the operations' recorders hold them); returns ``idx``'s index then, 0."""
        tl = self.m.timeline
        for seq in (*tl.ops.values(), tl.errors, tl.latency_us):
            if seq:
                seq[:0] = [0] * -idx
        tl.start = cast(int, tl.start) + idx
        return 0

    def _roll_all(self) -> None:
        """Every operation's current second into its counts (the next operation goes
        through ok() again)."""
        for lane in self._lanes.values():
            lane.until = 0
        for r in (*self._ops.values(), *self._wops.values()):
            self._roll(r, -1)

    def flush(self) -> None:
        self._roll_all()
        for r in (*self._ops.values(), *self._wops.values()):
            self._flush_latencies(r)

    def measurement(self) -> Measurement:
        self.flush()
        return self.m

    def snapshot_copy(self) -> "Recorder":
        """A copy of this recorder to merge while it may still be written to (a running
        shard's snapshot takes a copy only of what a thread that has ended its loop, or a
        multiplexer that has ended, recorded since its last hand-over: worker.ShardPhase; the
        running ones hand their parts over, ``detach``). Empty histograms are not copied."""
        memo: dict = {}
        for stats in (*self.m.operations.values(), *(self.m.warmup or {}).values()):
            for h in (stats._histogram, stats._intended):
                if h is not None and not h.get_total_count():
                    memo[id(h)] = None
        return copy.deepcopy(self, memo)

    def detach(self) -> "Recorder":
        """Everything recorded so far, handed over as a recorder of its own (to merge with
        ``merged``), this one going on from nothing: the same clock anchor, warm-up edges and
        lanes, and the same ``Measurement`` object (a loop holds its bound methods). Nothing is
        copied: a running shard's snapshot takes each thread's part this way (worker.ShardPhase),
        where a copy of the whole recorder (``snapshot_copy``) costs what the run has recorded so
        far, at every snapshot, in every thread. ``records`` stay here (a family appends to its
        lists, and updates them, in place): they are not in the part handed over."""
        self._roll_all()
        moved = copy.copy(self)
        live, part = self.m, Measurement()
        part.operations, part.errors, part.counters, part.timeline, part.warmup = \
            live.operations, live.errors, live.counters, live.timeline, live.warmup
        live.operations, live.errors, live.counters, live.warmup = {}, {}, {}, None
        # the recorder's timeline starts again at the next second it records (an operation's
        # roll or an error): a part's lists are as long as its own seconds, not the run so far
        live.timeline = Timeline(part.timeline.start, part.timeline.interval_s)
        self._unanchored = True
        moved.m, moved._lanes = part, {}
        self._errors = live.timeline.errors
        self._ops, self._wops = {}, {}
        return moved

    @staticmethod
    def accumulate(into: Optional["Recorder"], parts: Iterable["Recorder"]) -> "Recorder":
        """``parts`` (handed over by ``detach``) added to ``into`` (None: a new one), a recorder
        holding only a Measurement, to pass to ``merged`` with the recorders still recording.
        Its per-interval histograms are kept as dense tables, which a merge copies in C: as
        sparse dicts, every snapshot of a long run copied the whole run's in Python."""
        m = Recorder.merged(parts)
        if into is None:
            into = Recorder(m.timeline.interval_s)
            into.m = m
        else:
            into.m.merge(m)
        tl = into.m.timeline
        for hists in (tl.hist, tl.intended):
            for op, intervals in hists.items():
                if isinstance(intervals, dict) and intervals:
                    hists[op] = IntervalTable.of(intervals)
        return into

    @staticmethod
    def merged(recorders: Iterable["Recorder"]) -> Measurement:
        """Several threads' recorders as one Measurement: what merging each one's
        ``measurement()`` gives, with their latencies added per exact µs value before a
        histogram sees them, so that each distinct latency of the shard is recorded once
        rather than once per thread (a Python call each: at 64 threads a process, a quarter
        of a second per merge, the main thread holding the GIL while the threads run)."""
        total = Measurement()
        pending: dict = {}  # (operation, warm-up?) -> ({latency: count}, {intended latency: count})
        for rec in recorders:
            rec._roll_all()
            for warm, group in ((False, rec._ops), (True, rec._wops)):
                for op, r in group.items():
                    lat, ilat = pending.setdefault((op, warm), ({}, {}))
                    for seen, into in ((r.lat, lat), (r.ilat, ilat)):
                        get = into.get
                        for v, c in seen.items():
                            into[v] = get(v, 0) + c
                    r.lat, r.ilat = {}, {}
            total.merge(rec.measurement())
        for (op, warm), (lat, ilat) in pending.items():
            stats = cast(dict, total.warmup)[op] if warm else total.op(op)
            Recorder._record_latencies(lat, stats)
            Recorder._record_latencies(ilat, stats, intended=True)
        return total

    def not_found(self, op: str, t0: int, t1: int) -> None:
        self.ok(op, t0, t1)
        self._ops[op].stats.not_found += 1

    def error(self, op: str, kind: str, name: str, t1: Optional[int] = None) -> None:
        r = self._ops.get(op) or self._op(op)
        r.stats.errors += 1
        key = f"{op}:{kind}:{name}"
        self.m.errors[key] = self.m.errors.get(key, 0) + 1
        sec = ((t1 or time.perf_counter_ns()) - self.base) // NS_PER_S
        if self._unanchored:
            self._anchor(sec)
        idx = self.second0 + sec - self.m.timeline.start  # type: ignore[operator]  # anchored: a start
        if idx < 0:
            idx = self._widen(idx)
        errs = self._errors
        if idx >= len(errs):
            errs.extend([0] * (idx + 1 - len(errs)))
        errs[idx] += 1

    def count(self, counter: str, n: int = 1) -> None:
        c = self.m.counters
        c[counter] = c.get(counter, 0) + n

    def record_list(self, name: str) -> list[int]:
        """The list of ``Measurement.records`` named ``name`` this thread appends to (once, then
        appended to directly on the hot path: no lookup per event)."""
        return self.m.records.setdefault(name, [])

    def wall_time(self, perf_ns: int) -> float:
        return self.second0 + (perf_ns - self.base) / NS_PER_S


class _Failed:
    __slots__ = ()

    def __repr__(self) -> str:
        return "FAILED"


FAILED = _Failed()
