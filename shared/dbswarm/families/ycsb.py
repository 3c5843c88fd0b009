"""YCSB CoreWorkload as a workload family: its campaign model (YCSB's property names), the
operations of one client thread (which operation next, on which key, with what values), the
load of its key range, and the white papers' tables (SPEC 2.4).

Keys are YCSB's: "user" + FNV-hashed key number (or the ordered number), padded.
Run-phase inserts of many threads never collide: thread g of T inserts key numbers
recordcount + j*T + g (j = 0, 1, ...), and a thread only reads keys it knows exist
(the loaded ones and its own inserts).
"""
from __future__ import annotations

import bisect
import math
import random
import string
import time
from collections import OrderedDict
from typing import Literal, Optional

from pydantic import Field, model_validator

from dbswarm.bindings.protocols import KeyValue
from dbswarm.errors import DUPLICATE
from dbswarm.families import base as families
from dbswarm.families.base import BatchLoader, Client, Family, RunLimits, ThreadContext, WorkloadModel
from dbswarm.families.generators import (
    _LOW16,
    _MASK64,
    _P5,
    CACHE_LIMIT,
    FNV_PRIME_64,
    MT_RANDOM,
    Hotspot,
    ScrambledZipfian,
    SkewedLatest,
    Uniform,
    _memo_miss,
    fnvhash64,
    memo_table,
    pool_string,
    slot_list,
)
from dbswarm.families.presets import PRESET_DESCRIPTIONS, YCSB_DEFAULT_MIX, YCSB_PRESETS, ycsb_preset
from dbswarm.families.tables import fmt, measured_phase, published_table
from dbswarm.measure.recorder import FAILED, Lane

PROPORTIONS = ("readproportion", "updateproportion", "insertproportion", "scanproportion",
               "readmodifywriteproportion")


class YcsbWorkload(WorkloadModel):
    """YCSB CoreWorkload properties (same names as YCSB's property files)."""
    family: Literal["ycsb"] = "ycsb"
    preset: Optional[str] = Field(None, description="S1..S9, a..f or a read:write ratio like '95:5'; "
                                  "explicit proportions override the preset's")
    table: str = Field("usertable", pattern=r"^[A-Za-z_][A-Za-z0-9_]{0,62}$")
    recordcount: int = Field(1000, ge=1)
    operationcount: int = Field(1000, ge=0, description="0: no count limit (needs maxexecutiontime)")
    readproportion: Optional[float] = Field(None, ge=0, le=1)
    updateproportion: Optional[float] = Field(None, ge=0, le=1)
    insertproportion: Optional[float] = Field(None, ge=0, le=1)
    scanproportion: Optional[float] = Field(None, ge=0, le=1)
    readmodifywriteproportion: Optional[float] = Field(None, ge=0, le=1)
    requestdistribution: Optional[Literal["zipfian", "uniform", "latest", "hotspot"]] = None
    zipfianconstant: float = Field(0.99, gt=0, lt=1)
    hotspotdatafraction: float = Field(0.2, ge=0, le=1)
    hotspotopnfraction: float = Field(0.8, ge=0, le=1)
    fieldcount: int = Field(10, ge=1, le=1000)
    fieldlength: int = Field(100, ge=1, le=65_536, description="bytes per field; at most 65,536 (the size of "
                             "the value pool fields are drawn from)")
    readallfields: bool = True
    writeallfields: bool = False
    maxscanlength: Optional[int] = Field(None, ge=1)
    scanlengthdistribution: Optional[Literal["uniform", "zipfian"]] = None
    insertstart: int = Field(0, ge=0)
    insertcount: Optional[int] = Field(None, ge=1, description="records to load (default recordcount - insertstart)")
    insertorder: Literal["hashed", "ordered"] = Field("hashed", description="YCSB's orderedinserts switch")
    zeropadding: int = Field(1, ge=1, le=40)
    batchsize: int = Field(100, ge=1, le=100_000, description="rows per insert batch in the load phase")
    maxexecutiontime: Optional[float] = Field(None, gt=0, description="seconds; caps the run phase")
    target: Optional[float] = Field(None, gt=0, description="total ops/s over all threads (unthrottled if absent)")

    @model_validator(mode="after")
    def _resolve(self):
        if self.preset is not None:
            preset = ycsb_preset(self.preset)
            if preset is None:
                raise ValueError(f"preset: unknown preset {self.preset!r}; see `dbswarm presets`")
            for key, value in preset.items():
                if key in PROPORTIONS:
                    if getattr(self, key) is None:
                        setattr(self, key, value)
                elif getattr(self, key) is None:
                    setattr(self, key, value)
        elif all(getattr(self, k) is None for k in PROPORTIONS):
            for key, value in YCSB_DEFAULT_MIX.items():
                setattr(self, key, value)
        for key in PROPORTIONS:
            if getattr(self, key) is None:
                setattr(self, key, 0.0)
        total = sum(getattr(self, k) for k in PROPORTIONS)
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            given = ", ".join(f"{k}={getattr(self, k):g}" for k in PROPORTIONS if getattr(self, k))
            raise ValueError(f"proportions must sum to 1, they sum to {total:g} ({given})")
        self.requestdistribution = self.requestdistribution or "zipfian"
        self.maxscanlength = self.maxscanlength or 1000
        self.scanlengthdistribution = self.scanlengthdistribution or "uniform"
        if self.insertstart >= self.recordcount and self.insertcount is None:
            raise ValueError("insertstart must be below recordcount")
        if self.operationcount == 0 and self.maxexecutiontime is None:
            raise ValueError("operationcount 0 means no count limit: set maxexecutiontime too")
        return self

    @property
    def load_count(self):
        return self.insertcount if self.insertcount is not None else self.recordcount - self.insertstart

    @property
    def name(self):
        return self.preset or "custom"

    def mix(self):
        return {k[: -len("proportion")]: getattr(self, k) for k in PROPORTIONS if getattr(self, k) > 0}


OPS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE")
_POOL_SIZE = 1 << 16
KEY_LIST_MAX = 1 << 20  # records up to which the hot path's keys are memoized in a list (8 MB of slots)
_ALPHABET = string.ascii_letters + string.digits


def value_pool(rng: random.Random) -> str:
    return pool_string(rng, _ALPHABET, _POOL_SIZE)


def key_name(keynum: int, ordered: bool, zeropadding: int) -> str:
    if not ordered:
        keynum = fnvhash64(keynum)
    value = str(keynum)
    return "user" + ("0" * (zeropadding - len(value)) + value if len(value) < zeropadding else value)


class YcsbClient:
    def __init__(self, w, rng: random.Random, thread_index: int, total_threads: int,
                 inserted: int = 0, expected_inserts: int = 0, m=None):
        self.m = m  # engine.calls.Measured: every operation goes through it
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
        next_key = self._counted_next_key(expected_inserts)
        if next_key is not None:  # the hot path: each read and update one call of its own
            self.do_read = self._hot_read(next_key)
            if not w.writeallfields:
                self.do_update = self._hot_update(next_key)
        self._dispatch = {"READ": self.do_read, "UPDATE": self.do_update, "INSERT": self.do_insert,
                          "SCAN": self.do_scan, "READ-MODIFY-WRITE": self.do_rmw}
        if len(ops) == 1:  # workload c and the like: no random draw to pick the only operation
            self.do_transaction = self._dispatch[ops[0]]
        # reads and one-field updates only (a, b, c, S1-S9 without inserts): every step in one
        # loop (run_for), a single step being a loop of one
        self.run_for = None
        if next_key is not None and set(ops) <= {"READ", "UPDATE"} and ("UPDATE" not in ops or not w.writeallfields):
            self.run_for = run_for = self._hot_loop()
            self.do_transaction = lambda: run_for(0, 1)

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

    # -- the hot path ------------------------------------------------------------------------
    # Reads and one-field updates of workloads without inserts whose keys are uniform or
    # zipfian (a, b, c, f's reads, S1-S9 but the inserting ones): the key drawn, the operation
    # run through the binding's reader / updater and timed, in two Python calls where the
    # general path makes ten (next_keynum, the chooser, the stream's draw, key, fields_to_read,
    # Measured.call, read, fetchcount, ...). Each call costs more between two round trips
    # than in a loop (cold caches): BENCHMARKS.md, bench/client_layers.py. The same draws
    # in the same order, the same statements and the same measurement as do_read / do_update
    # (tests/unit/test_ycsb_hot_path.py runs both on one seed and compares).
    def _counted_next_key(self, expected_inserts):
        """A function drawing the next key, or None where the hot path does not apply."""
        w, m = self.w, self.m
        if (m is None or expected_inserts or self.inserted or not hasattr(self.rng, "words")
                or w.requestdistribution not in ("uniform", "zipfian")):
            return None
        ordered, zp, n = self.ordered, w.zeropadding, w.recordcount
        if m.binding.hot_key_type is bytes:  # the binding's readers and updaters take bytes
            key_of = lambda k: key_name(k, ordered, zp).encode()  # noqa: E731
            form = "bytes"
        else:
            key_of = lambda k: key_name(k, ordered, zp)  # noqa: E731
            form = "str"
        # keys by key number: a list over the records where it is at most 8 MB, else a memo
        keys = (slot_list(n, "ycsb-keys", form, ordered, zp) if n <= KEY_LIST_MAX
                else self._keys if form == "str" else memo_table("ycsb-key", form, ordered, zp))
        if self.chooser is None:  # uniform: next_keynum's draw
            self._key_draw = (None, n, keys, None, key_of)
            return Uniform(self.rng, 0, n - 1).counted_next_key(self.rng, key_of, keys)
        ch = self.chooser
        popular = slot_list(ScrambledZipfian.POPULAR_ITEMS, "ycsb-popular-keys", form, ch.lo, ch.items, ordered, zp)
        self._key_draw = (ch, n, keys, popular, key_of)
        return ch.counted_next_key(self.rng, key_of, keys, popular)

    def _hot_read(self, next_key):
        m, rng, table, fields = self.m, self.rng, self.table, self.fields
        binding, perf, ok, failed = m.binding, time.perf_counter_ns, m.ok, m.failed
        one_field, nfields, draw = self.read_fields is not None, self._nfields, MT_RANDOM
        readers = self._readers = []  # rebound in place after a reconnect (also the hot loop's)

        def bind():
            readers[:] = ([binding.reader(table, [f]) for f in fields] if one_field
                          else [binding.reader(table, None)])
        bind()
        m.on_reconnect.append(bind)
        rec = m.rec

        lane = Lane() if m.paced else rec.lane("READ")  # paced: every operation through ok_paced

        def do_read():
            key = next_key()
            if one_field:
                rng.words += 2
                read = readers[int(draw(rng) * nfields)]
            else:
                read = readers[0]
            t0 = perf()
            try:
                found = read(key)
            except Exception as exc:
                failed("READ", exc)
                return 1
            t1 = perf()
            if t1 < lane.until:
                lane.lats.append((t1 - t0) // 1000)
            else:
                ok("READ", t0, t1)
            if found == 0:
                rec.m.op("READ").not_found += 1
            return 1
        return do_read

    def _hot_update(self, next_key):
        m, rng, table, fields = self.m, self.rng, self.table, self.fields
        binding, perf, ok, failed = m.binding, time.perf_counter_ns, m.ok, m.failed
        nfields, pool, span, length, draw = self._nfields, self.pool, self._span, self._len, MT_RANDOM
        updaters = self._updaters = []  # rebound in place after a reconnect (also the hot loop's)

        def bind():
            updaters[:] = [binding.updater(table, f) for f in fields]
        bind()
        m.on_reconnect.append(bind)
        rec = m.rec

        lane = Lane() if m.paced else rec.lane("UPDATE")

        def do_update():
            key = next_key()
            rng.words += 4
            update = updaters[int(draw(rng) * nfields)]
            o = int(draw(rng) * span)
            t0 = perf()
            try:
                found = update(pool[o:o + length], key)
            except Exception as exc:
                failed("UPDATE", exc)
                return 1
            t1 = perf()
            if t1 < lane.until:
                lane.lats.append((t1 - t0) // 1000)
            else:
                ok("UPDATE", t0, t1)
            if found is False:
                rec.m.op("UPDATE").not_found += 1
            return 1
        return do_update

    def _hot_loop(self):  # noqa: C901 (the hot loop, inlined on purpose)
        """``run_for(deadline_ns, max_steps)``: steps of a workload of hot reads and one-field
        updates until one ends at or after ``deadline_ns`` (``time.perf_counter_ns``; the
        first step always runs) or ``max_steps`` ran, or a step failed; returns the steps
        run. The worker's loop calls it between its stop checks instead of ``step()`` per
        operation: with 8 threads per process and the server on the same CPUs, each Python
        call and clock read between two round trips costs the GIL's other threads too (two
        calls and a clock read per operation fewer: 24.9 -> 23.5-24.2 µs of client CPU per
        PostgreSQL read, ad hoc; BENCHMARKS.md, point 10). The same draws in the same order as
        do_transaction, do_read and do_update: the operation (a mix), the key (the zipfian
        or uniform draw of ``counted_next_key``, inlined with its key memo), the read field
        (one-field reads), the updated field and its value; the same calls through the
        readers and updaters, the same measurement (lanes; ``ok`` at a second's roll, every
        step of a paced run). The stream's words are counted per call, not per draw.
        tests/unit/test_ycsb_hot_path.py compares it with the general path."""
        m, rng, rec = self.m, self.rng, self.m.rec
        perf, ok, failed, draw, op_stats = time.perf_counter_ns, m.ok, m.failed, MT_RANDOM, rec.m.op
        readers, updaters = getattr(self, "_readers", None), getattr(self, "_updaters", None)
        one_field, nfields = self.read_fields is not None, self._nfields
        pool, span, length = self.pool, self._span, self._len
        ops = self._ops
        mixed = len(ops) > 1
        all_reads = ops == ["READ"]
        read_below = self._cum[0]  # do_transaction's bisect of [p_read, 1]: a read below it
        chooser, n, keys, popular, key_of = self._key_draw
        listed = type(keys) is list
        zipfian = chooser is not None
        if zipfian:
            # no inserts on the hot path: key numbers [0, recordcount), the memos indexed by them
            lo, items, count = chooser.lo, chooser.items, chooser.ITEM_COUNT
            if lo != 0 or items != n:
                raise ValueError(f"YCSB hot loop: key range [{lo}, {lo + items}) is not the loaded [0, {n})")
            zetan, half, eta, alpha = chooser.draw_constants()
        read_lane = Lane() if m.paced else rec.lane("READ")  # paced: every step through ok (ok_paced)
        update_lane = Lane() if m.paced else rec.lane("UPDATE")
        low16, prime, mask, p5 = _LOW16, FNV_PRIME_64, _MASK64, _P5
        step_words = 4 if mixed else 2  # 2 words a draw: the operation's (a mix) and the key's

        def run_for(deadline_ns: int, max_steps: int) -> int:  # noqa: C901
            r_lats, r_until, u_lats, u_until = read_lane.lats, read_lane.until, update_lane.lats, update_lane.until
            read = readers[0] if readers else None
            is_read = all_reads
            steps = words = 0  # words: the draws' beyond step_words a step
            try:
                for steps in range(1, min(max_steps, 1 << 62) + 1):
                    if mixed:
                        is_read = draw(rng) < read_below
                    # the key: counted_next_key's draw and memo (generators.py), inline; the
                    # memo lookup is written out in both branches, not shared after them: a
                    # shared one needs a test per step for the popular items' early key
                    u = draw(rng)
                    if zipfian:
                        uz = u * zetan
                        if uz < 1.0:
                            item = 0
                        elif uz < half:
                            item = 1
                        else:
                            item = int(count * (eta * u - eta + 1) ** alpha)
                        if item < 65536:  # POPULAR_ITEMS
                            key = popular[item]
                            if key is None:
                                key = popular[item] = key_of(fnvhash64(item) % items)
                        else:
                            if item < 0x1_0000_0000:  # fnvhash64's first case, inlined
                                h = ((low16[item & 0xFFFF] ^ ((item >> 16) & 0xFF)) * prime) & mask
                                h = ((h ^ (item >> 24)) * p5) & mask
                                if h & 0x8000_0000_0000_0000:
                                    h = 0x1_0000_0000_0000_0000 - h
                            else:
                                h = fnvhash64(item)
                            k = h % items
                            if listed:
                                key = keys[k]
                                if key is None:
                                    key = keys[k] = key_of(k)
                            else:
                                key = keys.get(k)
                                if key is None:
                                    key = _memo_miss(keys, k, key_of)
                    else:
                        k = int(u * n)
                        if listed:
                            key = keys[k]
                            if key is None:
                                key = keys[k] = key_of(k)
                        else:
                            key = keys.get(k)
                            if key is None:
                                key = _memo_miss(keys, k, key_of)
                    if is_read:
                        if one_field:
                            words += 2
                            read = readers[int(draw(rng) * nfields)]
                        t0 = perf()
                        try:
                            found = read(key)
                        except Exception as exc:
                            failed("READ", exc)  # a reconnect rebinds the readers: the next call takes them
                            return steps
                        t1 = perf()
                        if t1 < r_until:
                            r_lats.append((t1 - t0) // 1000)
                        else:
                            ok("READ", t0, t1)
                            r_lats, r_until = read_lane.lats, read_lane.until
                        if found == 0:
                            op_stats("READ").not_found += 1
                    else:
                        words += 4
                        update = updaters[int(draw(rng) * nfields)]
                        o = int(draw(rng) * span)
                        t0 = perf()
                        try:
                            found = update(pool[o:o + length], key)
                        except Exception as exc:
                            failed("UPDATE", exc)
                            return steps
                        t1 = perf()
                        if t1 < u_until:
                            u_lats.append((t1 - t0) // 1000)
                        else:
                            ok("UPDATE", t0, t1)
                            u_lats, u_until = update_lane.lats, update_lane.until
                        if found is False:
                            op_stats("UPDATE").not_found += 1
                    if t1 >= deadline_ns:
                        break
            finally:
                rng.words += steps * step_words + words
            return steps
        return run_for

    # -- operations: each returns the operations it counts (1) -------------------------------
    def do_transaction(self) -> int:
        return self._dispatch[self._ops[bisect.bisect_right(self._cum, self.random())]]()

    def do_read(self):
        # rows=False: the record is read from the server but not turned into Python values
        # (only found / not found is counted); FAILED is not 0
        m = self.m
        if m.call("READ", m.binding.read, self.table, self.key(self.next_keynum()), self.fields_to_read(), False) == 0:
            m.rec.m.op("READ").not_found += 1
        return 1

    def do_update(self):
        m = self.m
        if m.call("UPDATE", m.binding.update, self.table, self.key(self.next_keynum()), self.update_values()) is False:
            m.rec.m.op("UPDATE").not_found += 1
        return 1

    def do_insert(self):
        m = self.m
        keynum = self.w.recordcount + self.inserted * self.T + self.g
        # a duplicate key is a record that is there: an insert whose reply a lost connection
        # cut off had committed, and its retry finds it. The next insert takes the next key
        # (not advancing made every later insert of the thread a duplicate of it)
        if (m.call("INSERT", m.binding.insert, self.table, self.key(keynum), self.all_values()) is not FAILED
                or m.last_error_kind == DUPLICATE):
            self.inserted += 1
        return 1

    def do_scan(self):
        m = self.m
        m.call("SCAN", m.binding.scan, self.table, self.key(self.next_keynum()), self.scanlen.next(),
               self.fields_to_read(), False)
        return 1

    def do_rmw(self):
        key = self.key(self.next_keynum())
        fields = self.fields_to_read()
        values = self.update_values()
        binding = self.m.binding

        def rmw():
            binding.read(self.table, key, fields, False)
            binding.update(self.table, key, values)
        self.m.call("READ-MODIFY-WRITE", rmw)
        return 1

    # -- load ----------------------------------------------------------------------------
    def load_rows(self, keynums) -> list:
        return [(self.key(k), self.all_values()) for k in keynums]


class _RunClient(Client):
    """The run phase: one step = one operation of the mix."""

    def __init__(self, w, ctx: ThreadContext):
        expected = 0
        if w.insertproportion > 0:
            expected = int((ctx.quota or w.recordcount) * w.insertproportion * 1.2) + 10
        self.client = YcsbClient(w, ctx.rng, ctx.thread, ctx.threads, inserted=ctx.saved.get("inserted", 0),
                                 expected_inserts=expected, m=ctx.m)
        self.step = self.client.do_transaction
        self.run_for = self.client.run_for  # None: one step() per operation

    def state(self):
        return {"inserted": self.client.inserted}


# ---- the family ---------------------------------------------------------------------------------

def _row_key(run):
    w = run["workload"]
    return run["target"]["label"], f"{run['threads']} threads", f"{w['recordcount']:,} records"


class Ycsb(Family[YcsbWorkload]):
    name = "ycsb"
    model = YcsbWorkload
    requires = "kv"
    label_key = "preset"

    def read_operations(self, w):
        return ("READ", "SCAN")  # a scan reads: workload e (95 % SCAN) has a read latency too

    def write_operations(self, w):
        return ("UPDATE", "INSERT", "READ-MODIFY-WRITE")

    def presets_text(self):
        rows = []
        for name, props in YCSB_PRESETS.items():
            mix = ", ".join(f"{k.removesuffix('proportion')} {v:g}" for k, v in props.items()
                            if k.endswith("proportion") and v)
            extra = ", ".join(f"{k}={v}" for k, v in props.items() if not k.endswith("proportion"))
            rows.append((name, mix, PRESET_DESCRIPTIONS.get(name, ""), extra))
        widths = [max(len(r[i]) for r in rows + [("r:w", "", "")]) for i in range(3)]  # aligned; settings last
        lines = ["YCSB presets (workload.preset; explicit *proportion keys override them):"]
        lines += ["  " + "  ".join(f"{c:<{w}}" for c, w in zip(r, widths)) + f"  {r[3]}".rstrip()
                  for r in rows]
        lines = [line.rstrip() for line in lines]
        lines.append("  " + "r:w".ljust(widths[0]) + "  a read:write ratio such as 95:5 (read 0.95, update 0.05)")
        return lines

    def limits(self, w):
        return RunLimits(count=w.operationcount, rate=w.target, time=w.maxexecutiontime)

    def load_range(self, w):
        return w.insertstart, w.load_count

    def tables(self, w):
        return [w.table]

    def prepare(self, binding: KeyValue, w, stage):
        if stage == "before_load":
            binding.create_table(w.table, w.fieldcount)
        elif stage == "cleanup":
            binding.drop_table(w.table)

    def run_client(self, w, ctx):
        return _RunClient(w, ctx)

    def load_client(self, w, ctx, start, count):
        client = YcsbClient(w, ctx.rng, 0, 1)
        insert_batch = ctx.m.binding.insert_batch

        def batch(nxt, end):
            hi = min(end, nxt + w.batchsize)
            rows = client.load_rows(range(nxt, hi))
            return hi, len(rows), insert_batch, (w.table, rows)
        return BatchLoader(ctx, start, count, batch)

    def error_hint(self, w, phase, op, kind, name):
        if phase == "run" and op == "INSERT" and kind == "duplicate":
            return ("the table already holds the run phase's insert keys (they start at recordcount: an earlier "
                    "run inserted them): set recordcount to the table's current record count, or reload it "
                    "(phases: prepare, load, run)")
        return None

    def client_statements(self, w, phase, measurement):
        """Statements sent: one per operation call (a load batch is one), two per
        read-modify-write, the failed ones too (the server saw them), warm-up included (the
        window spans the whole phase)."""
        n = 0
        for stats in (measurement.operations, measurement.warmup or {}):
            for op, s in stats.items():
                n += (s.histogram.get_total_count() + s.errors) * (2 if op == "READ-MODIFY-WRITE" else 1)
        return {"statements": n}

    def report_tables(self, runs):
        """The white papers' tables: rows instance x threads (x records when they vary),
        columns the workloads, cells throughput and read / write latency (avg / p99)."""
        if not runs:
            return ""
        rows, cols = OrderedDict(), []
        for r in runs:
            name = r["workload"]["name"]
            if name not in cols:
                cols.append(name)
            rows.setdefault(_row_key(r), {})[name] = r
        vary_records = len({k[2] for k in rows}) > 1

        def table(title, cell):
            lines = [f"### {title}", ""]
            head = ["instance", "threads"] + (["records"] if vary_records else []) + cols
            lines.append("| " + " | ".join(head) + " |")
            lines.append("|" + "---|" * len(head))
            for key, by_wl in rows.items():
                cells = [key[0], key[1].split()[0]] + ([key[2].split()[0]] if vary_records else [])
                cells += [cell(by_wl[c]) if c in by_wl else "" for c in cols]
                lines.append("| " + " | ".join(cells) + " |")
            return "\n".join(lines) + "\n"

        def ops(r):
            name, p = measured_phase(r)
            if p is None:
                return "missing"
            mark = "" if p["status"] == "complete" else " (partial)"
            return fmt(p["throughput"]) + ("" if name == "run" else " (load)") + mark

        def lat(kind):
            def cell(r):
                _, p = measured_phase(r)
                s = p and p.get(f"{kind}_latency")
                if not s or not s.get("calls"):
                    return "–"
                return f"{fmt(s['avg_us'])} / {fmt(s['p99_us'])}"
            return cell
        return "\n".join([table("Throughput (OPS, operations per second)", ops), published_table(rows, cols),
                          table("Read latency (RAL), µs: average / p99 (READ and SCAN)", lat("read")),
                          table("Write latency (WAL), µs: average / p99", lat("write"))])


families.register(Ycsb())
