"""The ``custom`` family's named generators: one draw function per generator of the workload,
made for one client thread (its stream: ``ctx.rng``) or for the load (a stream reseeded per row
from the workload's seed and the row number, so that a row's values are the same whatever
thread, shard or call writes it).

Every draw comes from the stream the generators were made with, in the order the client asks
for values; counters (unique, sequential) keep their position in ``state()`` for a checkpoint.
The number generators are YCSB's (``families.generators``): uniform, scrambled zipfian with
YCSB's constant, hotspot, skewed latest.
"""
from __future__ import annotations

import bisect
import math
import random
import uuid
from datetime import datetime, timezone
from itertools import accumulate
from typing import Any, Callable, Optional

from dbswarm.families.custom.model import (
    ChoiceGen,
    ConstantGen,
    ExponentialGen,
    GaussianGen,
    HotspotGen,
    LatestGen,
    SequentialGen,
    StringGen,
    TimestampGen,
    UniformGen,
    UniqueGen,
    UuidGen,
    ZipfianGen,
)
from dbswarm.families.generators import Hotspot, ScrambledZipfian, Uniform, Zipfian, shared_pool, zeta

Draw = Callable[[], Any]
POOL = 1 << 20  # characters of the process's pool per alphabet (strings are windows of it)
_ZETA: dict = {}  # (items, theta) -> zeta: computed once per process (O(items))
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"


def _zeta(items: int, theta: float) -> float:
    z = _ZETA.get((items, theta))
    if z is None:
        z = _ZETA[items, theta] = zeta(items, theta)
    return z


def _epoch(text: str) -> float:
    d = datetime.fromisoformat(text)
    return (d if d.tzinfo else d.replace(tzinfo=timezone.utc)).timestamp()


def _clamp(lo: Optional[float], hi: Optional[float], integer: bool) -> Callable[[float], Any]:
    def fit(v: float) -> Any:
        if lo is not None and v < lo:
            v = lo
        if hi is not None and v > hi:
            v = hi
        return int(round(v)) if integer else v
    return fit


class Draws:
    """The draw functions of a workload's generators (``fns``: name -> draw), made on one stream.

    ``thread`` / ``threads``: the client thread's global index and the run's thread count
    (unique counters interleave by them: thread t draws start + t, start + t + threads, ...,
    values no other thread of any shard draws). ``row``: a load's draws, where counters follow
    the row number instead (``self.row``, set per row)."""

    def __init__(self, specs: dict, rng: random.Random, thread: int = 0, threads: int = 1,
                 saved: Optional[dict] = None, load: bool = False):
        self.rng, self.thread, self.threads, self.load = rng, thread, max(1, threads), load
        self.row = 0
        self.counts: dict[str, int] = dict(saved or {})  # counter -> values drawn by this thread
        self.fns: dict[str, Draw] = {}
        for name, spec in specs.items():  # counters first: latest follows one
            if spec.type in ("unique", "sequential"):
                self.fns[name] = self._make(name, spec, specs)
        for name, spec in specs.items():
            if name not in self.fns and not (load and spec.type == "latest"):
                self.fns[name] = self._make(name, spec, specs)

    def state(self) -> dict:
        return dict(self.counts)

    def _make(self, name: str, spec: Any, specs: dict) -> Draw:  # noqa: C901 (one branch per type)
        rng = self.rng
        rnd = rng.random
        if isinstance(spec, UniformGen):
            return Uniform(rng, spec.min, spec.max).next_fn()
        if isinstance(spec, ZipfianGen):
            if spec.scrambled:
                return ScrambledZipfian(rng, spec.min, spec.max, spec.constant).next
            items = spec.max - spec.min + 1
            return Zipfian(rng, spec.min, items, spec.constant, zetan=_zeta(items, spec.constant)).next
        if isinstance(spec, HotspotGen):
            return Hotspot(rng, spec.min, spec.max, spec.hot_fraction, spec.hot_ops).next
        if isinstance(spec, UniqueGen):
            return self._unique(name, spec)
        if isinstance(spec, SequentialGen):
            return self._sequential(name, spec)
        if isinstance(spec, LatestGen):
            return self._latest(spec, specs[spec.counter])
        if isinstance(spec, GaussianGen):
            fit, gauss, mean, sd = _clamp(spec.min, spec.max, spec.integer), rng.gauss, spec.mean, spec.stddev
            return lambda: fit(gauss(mean, sd))
        if isinstance(spec, ExponentialGen):
            fit, mean, lo = _clamp(spec.min, spec.max, spec.integer), spec.mean, spec.min
            return lambda: fit(lo - math.log(1.0 - rnd()) * mean)
        if isinstance(spec, ChoiceGen):
            return self._choice(spec)
        if isinstance(spec, StringGen):
            return self._string(spec)
        if isinstance(spec, UuidGen):
            bits = rng.getrandbits
            return lambda: str(uuid.UUID(int=bits(128), version=4))
        if isinstance(spec, TimestampGen):
            if spec.now:
                return lambda: datetime.now(timezone.utc).strftime(TIME_FORMAT)
            lo, span = _epoch(spec.min), _epoch(spec.max) - _epoch(spec.min)
            return lambda: datetime.fromtimestamp(int(lo + rnd() * span), timezone.utc).strftime(TIME_FORMAT)
        if isinstance(spec, ConstantGen):
            value = spec.value
            return lambda: value
        raise ValueError(f"generator {name!r}: unknown type {spec.type!r}")

    def _unique(self, name: str, spec: UniqueGen) -> Draw:
        counts, start, t, threads = self.counts, spec.start, self.thread, self.threads
        if self.load:
            return lambda: start + self.row - 1
        counts.setdefault(name, 0)

        def draw() -> int:
            n = counts[name]
            counts[name] = n + 1
            return start + t + n * threads
        return draw

    def _sequential(self, name: str, spec: SequentialGen) -> Draw:
        lo, span = spec.min, spec.max - spec.min + 1
        if self.load:
            return lambda: lo + (self.row - 1) % span
        counts = self.counts
        counts.setdefault(name, 0)
        offset = self.thread * span // self.threads  # threads start spread over the range

        def draw() -> int:
            n = counts[name]
            counts[name] = n + 1
            return lo + (offset + n) % span
        return draw

    def highest(self, counter: str, spec: Any) -> int:
        """The highest value a counter has reached over all threads, as this thread can tell
        (the threads draw at about the same pace): unique: start - 1 + its draws x threads."""
        n = self.counts.get(counter, 0)
        if spec.type == "unique":
            return spec.start - 1 + n * self.threads
        return spec.min + (self.thread * (spec.max - spec.min + 1) // self.threads + max(n - 1, 0)) % (
            spec.max - spec.min + 1)

    def _latest(self, spec: LatestGen, counter: Any) -> Draw:
        """1 .. the counter's highest value, the highest the most popular (YCSB's skewed
        latest: a zipfian offset down from it); while it is below 3 (a zipfian over fewer
        than 3 items is undefined), the highest itself (at least 1)."""
        zipf = Zipfian(self.rng, 0, 3, spec.constant)
        highest, name = self.highest, spec.counter

        def draw() -> int:
            top = highest(name, counter)
            if top < 3:
                return max(top, 1)
            return top - zipf.next_of(top) % top
        return draw

    def _choice(self, spec: ChoiceGen) -> Draw:
        values, rnd = list(spec.values), self.rng.random
        n = len(values)
        if spec.weights is None:
            return lambda: values[int(rnd() * n)]
        cum = list(accumulate(spec.weights))
        total, pick = cum[-1], bisect.bisect_right
        return lambda: values[min(pick(cum, rnd() * total), n - 1)]

    def _string(self, spec: StringGen) -> Draw:
        lo, n = spec.min_length, spec.max_length - spec.min_length + 1
        size = max(POOL, 2 * spec.max_length)
        pool, rnd = shared_pool(spec.alphabet, size), self.rng.random
        room = size - spec.max_length

        def draw() -> str:
            length = lo + int(rnd() * n)
            o = int(rnd() * room)
            return pool[o:o + length]
        return draw


def load_stream(seed: int, table_index: int) -> Callable[[int], None]:
    """A reseeding function of a load's stream: ``reseed(row)`` puts it at the row's own place
    (the workload's seed, the table, the row: the same values whoever writes the row)."""
    def reseed(rng: random.Random, row: int) -> None:
        rng.seed((seed * 1_000_003 + table_index) * (1 << 40) + row)
    return reseed  # type: ignore[return-value]


def think_seconds(spec: Any, rnd: Callable[[], float]) -> float:
    """One think time (seconds) of a transaction's ``think_time``."""
    if spec.distribution == "constant":
        return spec.mean
    if spec.distribution == "uniform":
        return spec.min + rnd() * (spec.max - spec.min)
    return min(-math.log(1.0 - rnd()) * spec.mean, 10 * spec.mean)
