"""Number generators with YCSB's semantics (site.ycsb.generator) and sysbench's rand types.

Each generator owns nothing but arithmetic; the caller passes a seeded ``random.Random``
so every thread of every shard is reproducible from the campaign seed. The pools that values
are cut from (``shared_pool``) are the process's, the same in every process, and take no draw
from a thread's stream.
"""
from __future__ import annotations

import math
import random
import threading
from typing import Any, Callable, Optional, TypeVar

K = TypeVar("K")  # a key as a client sends it (str or bytes)

FNV_OFFSET_BASIS_64 = 0xCBF29CE484222325
FNV_PRIME_64 = 1099511628211
_MASK64 = (1 << 64) - 1
_SIGN = 1 << 63
CACHE_LIMIT = 1 << 18  # entries per memo table on the hot path (cleared when full; both full: ~64 MB)
# memo tables are per process, shared by its client threads (a dict's get and set are atomic
# under the GIL; a race only computes a value twice): popular items are hashed once per process
_MEMOS: dict = {}


def memo_table(*key: object) -> dict:
    """The process's memo table for one pure mapping (named by ``key``)."""
    t = _MEMOS.get(key)
    if t is None:
        t = _MEMOS.setdefault(key, {})
    return t


def _low_two_bytes_table() -> list:
    """FNV-1a state after the two low bytes of a value, for every value of them."""
    P, M = FNV_PRIME_64, _MASK64
    out = []
    for v in range(1 << 16):
        h = ((FNV_OFFSET_BASIS_64 ^ (v & 0xFF)) * P) & M
        out.append(((h ^ (v >> 8)) * P) & M)
    return out


_LOW16 = _low_two_bytes_table()
# a zero byte's step is a multiply by the prime (x ^ 0 == x): trailing zero bytes collapse
# into one multiply by a power of it
_P4 = pow(FNV_PRIME_64, 4, 1 << 64)
_P5 = pow(FNV_PRIME_64, 5, 1 << 64)


def fnvhash64(val: int) -> int:
    """YCSB Utils.fnvhash64: FNV-1a over the 8 bytes of a long (little-endian), Math.abs of
    the signed result. It runs once or twice per operation, so: the two low bytes from a
    table, and the zero high bytes of key numbers below 2^32 / 2^40 as one multiply
    (2-3x faster than eight steps; tests/unit/test_generators.py checks it byte by byte)."""
    P, M = FNV_PRIME_64, _MASK64
    h = ((_LOW16[val & 0xFFFF] ^ ((val >> 16) & 0xFF)) * P) & M
    if 0 <= val < 0x1_0000_0000:
        h = ((h ^ (val >> 24)) * _P5) & M
    elif 0 <= val < 0x100_0000_0000:
        h = ((h ^ ((val >> 24) & 0xFF)) * P) & M
        h = ((h ^ (val >> 32)) * _P4) & M
    else:
        for shift in (24, 32, 40, 48, 56):
            h = ((h ^ ((val >> shift) & 0xFF)) * P) & M
    return (1 << 64) - h if h & _SIGN else h  # to signed, then abs (Java Math.abs)


def zeta(n: int, theta: float, start: int = 0, initial: float = 0.0) -> float:
    total = initial
    for i in range(start, n):
        total += 1.0 / (i + 1) ** theta
    return total


class Zipfian:
    """YCSB ZipfianGenerator over [base, base + items); item count may grow (for 'latest')."""

    def __init__(self, rng: random.Random, base: int, items: int, theta: float = 0.99,
                 zetan: float | None = None) -> None:
        self.rng, self.base, self.items, self.theta = rng, base, items, theta
        self.random = rng.random
        self.alpha = 1.0 / (1.0 - theta)
        self.zeta2theta = zeta(2, theta)
        self.zetan = zetan if zetan is not None else zeta(items, theta)
        self._count_for_zeta = items
        self._half_pow_theta = 1.0 + 0.5 ** theta
        self._eta()

    def _eta(self) -> None:
        self.eta = (1 - (2.0 / self.items) ** (1 - self.theta)) / (1 - self.zeta2theta / self.zetan)

    def next(self) -> int:
        u = self.random()
        uz = u * self.zetan
        if uz < 1.0:
            return self.base
        if uz < self._half_pow_theta:
            return self.base + 1
        return self.base + int(self.items * (self.eta * u - self.eta + 1) ** self.alpha)

    def next_of(self, items: int) -> int:
        """next() over a grown (or shrunk) item count (SkewedLatest)."""
        if items != self._count_for_zeta:
            if items > self._count_for_zeta:  # incremental, as YCSB does
                self.zetan = zeta(items, self.theta, self._count_for_zeta, self.zetan)
            else:
                self.zetan = zeta(items, self.theta)
            self._count_for_zeta = self.items = items
            self._eta()
        return self.next()


class ScrambledZipfian:
    """YCSB ScrambledZipfianGenerator: popular items scattered over the key space by FNV.

    An item's key number is ``lo + fnvhash64(item) % items``. The popular items (below
    POPULAR_ITEMS: about half the draws at the default constant 0.99) are hashed once per
    process, into a list shared by its threads; the others are hashed at every draw: six in
    ten draws are of an item not drawn before in a run of 300,000, so a memo of them would
    mostly fill up and miss (measured: 1.6 -> 0.9 µs a draw with the key's formatting)."""
    ITEM_COUNT = 10_000_000_000
    ZETAN = 26.46902820178302  # zeta(ITEM_COUNT, 0.99), YCSB's precomputed constant
    POPULAR_ITEMS = 1 << 16

    def __init__(self, rng: random.Random, lo: int, hi: int, theta: float = 0.99) -> None:
        self.lo, self.items = lo, hi - lo + 1
        zetan = self.ZETAN if theta == 0.99 else zeta(min(self.ITEM_COUNT, 10_000_000), theta)
        g = Zipfian(rng, 0, self.ITEM_COUNT, theta, zetan=zetan)
        # Zipfian.next inlined below (the item count is fixed): one call less per operation
        self._random, self._zetan, self._half, self._eta, self._alpha = (
            g.random, g.zetan, g._half_pow_theta, g.eta, g.alpha)
        # popular items' key numbers, per process (None: not yet hashed)
        self._popular = slot_list(self.POPULAR_ITEMS, "scrambled-popular", self.lo, self.items)

    def next(self) -> int:
        u = self._random()
        uz = u * self._zetan
        if uz < 1.0:
            item = 0
        elif uz < self._half:
            item = 1
        else:
            eta = self._eta
            item = int(self.ITEM_COUNT * (eta * u - eta + 1) ** self._alpha)
        if item < 65536:  # POPULAR_ITEMS (a constant is cheaper than an attribute)
            k = self._popular[item]
            if k is None:
                k = self._popular[item] = self.lo + fnvhash64(item) % self.items
            return k
        return self.lo + fnvhash64(item) % self.items

    def next_key(self, key_of: Callable[[int], K], keys: Any, popular_keys: list[Optional[K]]) -> Callable[[], K]:
        """A function returning ``key_of(next())``, for a client that formats every key it draws
        (YCSB): ``popular_keys`` (a list of POPULAR_ITEMS, None where not yet made) maps a
        popular item straight to its key, ``keys`` a key number to its key for the others: a
        list over [lo, lo + items) where that is small enough, else a dict (a bounded memo);
        the FNV hash of items below 2^32 inlined. One call where ``key_of(next())`` with its
        lookups made four (measured: 1.6 -> 0.9 µs a draw with the key's formatting). The same
        draws and keys as ``key_of(next())``: tests/unit/test_operation_loop.py compares them."""
        draw, lo, items, zetan, half, eta, alpha = (self._random, self.lo, self.items, self._zetan, self._half,
                                                    self._eta, self._alpha)
        count = self.ITEM_COUNT
        listed = type(keys) is list
        low16, prime, mask, p5 = _LOW16, FNV_PRIME_64, _MASK64, _P5

        def next_key() -> K:
            u = draw()
            uz = u * zetan
            if uz < 1.0:
                item = 0
            elif uz < half:
                item = 1
            else:
                item = int(count * (eta * u - eta + 1) ** alpha)
            if item < 65536:  # POPULAR_ITEMS
                key = popular_keys[item]
                if key is None:
                    key = popular_keys[item] = key_of(lo + fnvhash64(item) % items)
                return key
            if item < 0x1_0000_0000:  # fnvhash64's first case, inlined
                h = ((low16[item & 0xFFFF] ^ ((item >> 16) & 0xFF)) * prime) & mask
                h = ((h ^ (item >> 24)) * p5) & mask
                if h & 0x8000_0000_0000_0000:
                    h = 0x1_0000_0000_0000_0000 - h
            else:
                h = fnvhash64(item)
            k = lo + h % items
            if listed:
                key = keys[k - lo]
                if key is None:
                    key = keys[k - lo] = key_of(k)
                return key
            key = keys.get(k)
            return key if key is not None else _memo_miss(keys, k, key_of)
        return next_key


def _memo_miss(keys: dict[int, K], k: int, key_of: Callable[[int], K]) -> K:
    """A key memo's miss (a dict bounded at CACHE_LIMIT, cleared when full): k's key, stored."""
    if len(keys) >= CACHE_LIMIT:
        keys.clear()
    key = keys[k] = key_of(k)
    return key


def slot_list(n: int, *name: object) -> list:
    """The process's list of n slots (None: not yet filled) named by ``name``, shared by its
    threads (a list's item get and set are atomic under the GIL; a race only fills a slot
    twice with the same value): a memo over a small dense range of integers."""
    key = ("slots", n, *name)  # in the memo tables' registry, beside them
    slots = _MEMOS.get(key)
    if slots is None:
        slots = _MEMOS.setdefault(key, [None] * n)
    return slots


class Uniform:
    def __init__(self, rng: random.Random, lo: int, hi: int) -> None:
        self.rng, self.lo, self.hi = rng, lo, hi
        self.random, self.n = rng.random, hi - lo + 1

    def next(self) -> int:
        # lo + int(random() * n): randint's distribution at a third of its cost (measured 2026-11-23)
        return self.lo + int(self.random() * self.n)

    def next_fn(self) -> Callable[[], int]:
        """``next`` as a closure over its numbers (no attribute lookups: sysbench draws one per
        statement)."""
        draw, lo, n = self.random, self.lo, self.n
        return lambda: lo + int(draw() * n)

    def next_key(self, key_of: Callable[[int], K], keys: Any,
                 popular_keys: Optional[list[Optional[K]]] = None) -> Callable[[], K]:
        """A function returning ``key_of(next())`` (ScrambledZipfian.next_key's; ``keys``: a list
        over [lo, hi] or a dict; no item is more popular than another)."""
        draw, lo, n = self.random, self.lo, self.n
        if type(keys) is list:
            def next_listed_key() -> K:
                i = int(draw() * n)
                key = keys[i]
                if key is None:
                    key = keys[i] = key_of(lo + i)
                return key
            return next_listed_key

        def next_key() -> K:
            k = lo + int(draw() * n)
            key = keys.get(k)
            return key if key is not None else _memo_miss(keys, k, key_of)
        return next_key


class SkewedLatest:
    """YCSB SkewedLatestGenerator: recently inserted keys are the most popular."""

    def __init__(self, rng: random.Random, upper_bound: Callable[[], int], theta: float = 0.99) -> None:
        self.upper_bound = upper_bound  # callable: current record count
        self.zipf = Zipfian(rng, 0, max(upper_bound(), 2), theta)

    def next(self) -> int:
        top = self.upper_bound()
        return top - 1 - self.zipf.next_of(max(top, 2)) % top


class Hotspot:
    """YCSB HotspotIntegerGenerator: opn fraction of requests go to data fraction of keys."""

    def __init__(self, rng: random.Random, lo: int, hi: int, hot_data: float, hot_opn: float) -> None:
        self.rng, self.lo, self.hot_opn = rng, lo, hot_opn
        n = hi - lo + 1
        self.hot = max(1, int(n * hot_data))
        self.cold = n - self.hot

    def next(self) -> int:
        r = self.rng
        if r.random() < self.hot_opn or self.cold <= 0:
            return self.lo + r.randrange(self.hot)
        return self.lo + self.hot + r.randrange(self.cold)


# ---- sysbench ------------------------------------------------------------------------

SysbenchUniform = Uniform  # sysbench's uniform rand type is the same draw


class SysbenchSpecial:
    """sysbench 1.0 sb_rand_special (defaults rand-spec-pct=1, res=75, iter=12): 75% of the
    values land in the middle 1% of the range, the rest follow a bell curve."""

    def __init__(self, rng: random.Random, lo: int, hi: int, pct: int = 1, res: int = 75,
                 iterations: int = 12) -> None:
        self.rng, self.lo = rng, lo
        self.t = hi - lo + 1
        self.range_size = self.t * (100 // (100 - res))
        self.iter = iterations
        self.d = max(1, self.t * pct // 100)
        self.offset = self.t // 2 - self.t * pct // 200

    def next(self) -> int:
        rng, t = self.rng, self.t
        res = rng.randrange(self.range_size)
        if res < t:
            total = 0.0
            for _ in range(self.iter):
                total += rng.random()
            return self.lo + int(total * t / self.iter)
        return self.lo + res % self.d + self.offset


_POOLS: dict = {}
_POOLS_LOCK = threading.Lock()


def shared_pool(alphabet: str, size: int) -> str:
    """The process's pool of ``size`` random characters of ``alphabet`` (ASCII, at most 256),
    made once and shared by every client thread: values are windows of it. The same string
    in every process (seeded by the alphabet and the size, not by a thread's stream).

    Each client thread once made a pool of its own from its stream: 64 KiB drawn a float a
    character, ~8 ms per thread (at 512 threads a shard spent 4-5 s of CPU on them before its
    first operation), 32 MiB held at 512 threads, and each update read a window somewhere in
    them, out of the caches and the TLB's reach
    (docs/decisions/0008-value-pools-per-process.md). One pool large enough that the records of one database page seldom share a
    window keeps the values as incompressible as the per-thread pools made them."""
    key = (alphabet, size)
    pool = _POOLS.get(key)
    if pool is None:
        with _POOLS_LOCK:
            pool = _POOLS.get(key)
            if pool is None:
                pool = _POOLS[key] = _make_pool(alphabet, size)
    return pool


def _make_pool(alphabet: str, size: int) -> str:
    """``size`` characters drawn uniformly from ``alphabet``: random bytes, those at or above
    the largest multiple of its length dropped (no bias toward its first characters), the
    rest mapped onto it (``b % n``); C loops only (a 4-MiB pool in a few ms)."""
    n = len(alphabet)
    if not 0 < n <= 256 or not alphabet.isascii():
        raise ValueError(f"a pool's alphabet is 1-256 ASCII characters, not {alphabet!r}")
    table = bytes(ord(alphabet[b % n]) for b in range(256))
    drop = bytes(range(256 - 256 % n, 256))
    rng = random.Random(f"dbswarm-pool:{alphabet}:{size}")
    out = bytearray()
    while len(out) < size:
        out += rng.randbytes(size - len(out) + size // 8 + 64).translate(table, drop)
    return out[:size].decode("ascii")


def sysbench_rand(name: str, rng: random.Random, lo: int, hi: int) -> Uniform | SysbenchSpecial:
    if name == "uniform":
        return SysbenchUniform(rng, lo, hi)
    if name == "special":
        return SysbenchSpecial(rng, lo, hi)
    raise ValueError(f"unknown rand_type {name!r}")


def zeta_static(n: int, theta: float) -> float:
    """For tests: the exact zeta sum."""
    return math.fsum(1.0 / (i + 1) ** theta for i in range(n))
