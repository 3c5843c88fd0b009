"""YCSB CoreWorkload for one client thread: which operation next, on which key, with what
values. Keys are YCSB's: "user" + FNV-hashed key number (or the ordered number), padded.

Run-phase inserts of many threads never collide: thread g of T inserts key numbers
recordcount + j*T + g (j = 0, 1, ...), and a thread only reads keys it knows exist
(the loaded ones and its own inserts).
"""
from __future__ import annotations

import bisect
import random
import string

from ..measure import FAILED
from .generators import CACHE_LIMIT, Hotspot, ScrambledZipfian, SkewedLatest, Uniform, fnvhash64, memo_table

OPS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE")
_POOL_SIZE = 1 << 16
_ALPHABET = string.ascii_letters + string.digits


def value_pool(rng: random.Random) -> str:
    return "".join(rng.choices(_ALPHABET, k=_POOL_SIZE))


def key_name(keynum: int, ordered: bool, zeropadding: int) -> str:
    if not ordered:
        keynum = fnvhash64(keynum)
    value = str(keynum)
    return "user" + ("0" * (zeropadding - len(value)) + value if len(value) < zeropadding else value)


class YcsbClient:
    def __init__(self, w, rng: random.Random, thread_index: int, total_threads: int,
                 inserted: int = 0, expected_inserts: int = 0):
        self.w = w
        self.rng = rng
        self.table = w.table
        self.g, self.T = thread_index, total_threads
        self.inserted = inserted
        self.ordered = w.insertorder == "ordered"
        self.fields = [f"field{i}" for i in range(w.fieldcount)]
        self.read_fields = None if w.readallfields else "one"
        self.pool = value_pool(rng)
        self.random = rng.random
        self._len = min(w.fieldlength, _POOL_SIZE)
        self._span = _POOL_SIZE - self._len
        self._nfields = len(self.fields)
        # a record's values: one window of the pool, cut into the fields (one draw per record)
        row_len = self._len * self._nfields
        self._row = (_POOL_SIZE - row_len, row_len,
                     [slice(i * self._len, (i + 1) * self._len) for i in range(self._nfields)]
                     ) if 0 < row_len <= _POOL_SIZE else None
        self._keys = memo_table("ycsb-key", self.ordered, w.zeropadding)  # popular keys: formatted once
        ops, cum, acc = [], [], 0.0
        for name, p in zip(OPS, (w.readproportion, w.updateproportion, w.insertproportion,
                                 w.scanproportion, w.readmodifywriteproportion)):
            if p > 0:
                acc += p
                ops.append(name)
                cum.append(acc)
        cum[-1] = 1.0 + 1e-12
        self._ops, self._cum = ops, cum
        self._dispatch = {"READ": self.do_read, "UPDATE": self.do_update, "INSERT": self.do_insert,
                          "SCAN": self.do_scan, "READ-MODIFY-WRITE": self.do_rmw}
        if len(ops) == 1:  # workload c and the like: no random draw to pick the only operation
            self.do_transaction = self._dispatch[ops[0]]
        n = w.recordcount
        dist = w.requestdistribution
        if dist == "uniform":
            self.chooser = None
        elif dist == "zipfian":
            self.chooser = ScrambledZipfian(rng, 0, n + expected_inserts - 1, w.zipfianconstant)
        elif dist == "latest":
            self.chooser = SkewedLatest(rng, self.known_count, w.zipfianconstant)
        else:
            self.chooser = Hotspot(rng, 0, n - 1, w.hotspotdatafraction, w.hotspotopnfraction)
        self.scanlen = (Uniform(rng, 1, w.maxscanlength) if w.scanlengthdistribution == "uniform"
                        else ScrambledZipfian(rng, 1, w.maxscanlength))

    # -- keys and values ---------------------------------------------------------------
    def known_count(self) -> int:
        return self.w.recordcount + self.inserted

    def next_keynum(self) -> int:
        """A key number that exists: index k in [0, known) is a loaded key below recordcount,
        else this thread's (k - recordcount)-th insert."""
        n = self.w.recordcount
        known = n + self.inserted
        ch = self.chooser
        if ch is None:  # uniform; int(random() * known) is randrange's distribution at a third of its cost
            k = int(self.random() * known)
        else:
            k = ch.next()
            while k >= known:
                k = ch.next()
        return k if k < n else n + (k - n) * self.T + self.g

    def key(self, keynum: int) -> str:
        cache = self._keys
        k = cache.get(keynum)
        if k is None:
            if len(cache) >= CACHE_LIMIT:
                cache.clear()
            k = cache[keynum] = key_name(keynum, self.ordered, self.w.zeropadding)
        return k

    def value(self) -> str:
        o = int(self.random() * self._span)
        return self.pool[o:o + self._len]

    def all_values(self) -> dict:
        """Every field's value: one random window of the pool per record, cut into the
        fields, at one draw instead of one per field (noop YCSB S3, a quarter of it inserts:
        BENCHMARKS.md). Either way the values are windows of the same 64 KiB pool, so a
        compressing storage engine finds the same repetition in them."""
        if self._row is None:  # records longer than the pool: a window per field
            r, pool, span, n = self.random, self.pool, self._span, self._len
            return {f: pool[(o := int(r() * span)):o + n] for f in self.fields}
        span, row_len, cuts = self._row
        o = int(self.random() * span)
        return dict(zip(self.fields, map(self.pool[o:o + row_len].__getitem__, cuts)))

    def update_values(self) -> dict:
        if self.w.writeallfields:
            return self.all_values()
        return {self.fields[int(self.random() * self._nfields)]: self.value()}

    def fields_to_read(self):
        return None if self.read_fields is None else [self.fields[int(self.random() * self._nfields)]]

    # -- operations ----------------------------------------------------------------------
    def do_transaction(self, m) -> None:
        self._dispatch[self._ops[bisect.bisect_right(self._cum, self.random())]](m)

    def do_read(self, m):
        # rows=False: the record is read from the server but not turned into Python values
        # (only found / not found is counted); FAILED is not 0
        r = m.call("READ", m.binding.read, self.table, self.key(self.next_keynum()), self.fields_to_read(), False)
        if r == 0:
            m.rec.m.operations["READ"].not_found += 1

    def do_update(self, m):
        r = m.call("UPDATE", m.binding.update, self.table, self.key(self.next_keynum()), self.update_values())
        if r is False:
            m.rec.m.operations["UPDATE"].not_found += 1

    def do_insert(self, m):
        keynum = self.w.recordcount + self.inserted * self.T + self.g
        r = m.call("INSERT", m.binding.insert, self.table, self.key(keynum), self.all_values())
        if r is not FAILED:
            self.inserted += 1

    def do_scan(self, m):
        m.call("SCAN", m.binding.scan, self.table, self.key(self.next_keynum()), self.scanlen.next(),
               self.fields_to_read(), False)

    def do_rmw(self, m):
        key = self.key(self.next_keynum())
        fields = self.fields_to_read()
        values = self.update_values()
        binding = m.binding

        def rmw():
            binding.read(self.table, key, fields, False)
            binding.update(self.table, key, values)
        m.call("READ-MODIFY-WRITE", rmw)

    # -- load ----------------------------------------------------------------------------
    def load_rows(self, keynums) -> list:
        return [(self.key(k), self.all_values()) for k in keynums]
