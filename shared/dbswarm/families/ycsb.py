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
from collections import OrderedDict
from typing import Any, Callable, Iterable, Literal, Optional, cast

from pydantic import Field, field_validator, model_validator

from dbswarm.bindings.protocols import KeyValue
from dbswarm.errors import did_you_mean
from dbswarm.families import base as families
from dbswarm.families.base import BatchLoader, Client, Family, Op, RunLimits, ThreadContext, WorkloadModel, stepwise
from dbswarm.families.generators import (
    Hotspot,
    ScrambledZipfian,
    SkewedLatest,
    Uniform,
    _memo_miss,
    fnvhash64,
    memo_table,
    shared_pool,
    slot_list,
)
from dbswarm.families.presets import (
    PRESET_DESCRIPTIONS,
    YCSB_DEFAULT_MIX,
    YCSB_PRESETS,
    canonical_preset,
    ycsb_preset,
)
from dbswarm.families.tables import fmt, measured_phase, published_table
from dbswarm.measure.recorder import Measurement

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
    fieldlength: int = Field(100, ge=1, le=65_536, description="bytes per field; at most 65,536 (a field's value "
                             "is a window of the process's 4-MiB value pool)")
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

    @field_validator("preset")
    @classmethod
    def _known_preset(cls, v: Optional[str]) -> Optional[str]:
        """A field's check, so that a bad preset is named with the workload's other problems."""
        if v is None:
            return v
        known = canonical_preset(v)
        if known is None and v.count(":") == 1:
            raise ValueError(f"{v[:40]!r} is not a read:write ratio: its two parts must be numbers >= 0, not both "
                             "0 (e.g. '95:5')")
        if known is None:
            raise ValueError(f"unknown preset {v[:40]!r} (S1..S9 and a..f in any case, or a read:write ratio like "
                             f"'95:5': `dbswarm presets`){did_you_mean(v, YCSB_PRESETS)}")
        return known

    @model_validator(mode="after")
    def _resolve(self) -> "YcsbWorkload":  # noqa: C901 - a flat list of the keys' cross-checks
        from_preset = []
        if self.preset is not None:
            preset = ycsb_preset(self.preset)
            assert preset is not None  # the field's validator refused an unknown name
            for key, value in preset.items():
                if getattr(self, key) is None:
                    setattr(self, key, value)
                    from_preset.append(key)
        elif all(getattr(self, k) is None for k in PROPORTIONS):
            for key, value in YCSB_DEFAULT_MIX.items():
                setattr(self, key, value)
        for key in PROPORTIONS:
            if getattr(self, key) is None:
                setattr(self, key, 0.0)
        total = sum(getattr(self, k) for k in PROPORTIONS)
        if not math.isclose(total, 1.0, abs_tol=1e-9):
            given = ", ".join(f"{k}={getattr(self, k):g}" for k in PROPORTIONS if getattr(self, k)
                              and k not in from_preset)
            filled = ", ".join(f"{k}={getattr(self, k):g}" for k in PROPORTIONS if getattr(self, k)
                               and k in from_preset)
            parts = "; ".join(x for x in (given and f"given: {given}", filled and
                                          f"from preset {self.preset!r}: {filled} (a preset fills only the "
                                          "proportions the workload leaves out)") if x)
            raise ValueError(f"proportions must sum to 1, they sum to {total:g} ({parts})")
        self.requestdistribution = self.requestdistribution or "zipfian"
        self.maxscanlength = self.maxscanlength or 1000
        self.scanlengthdistribution = self.scanlengthdistribution or "uniform"
        if self.insertstart >= self.recordcount and self.insertcount is None:
            raise ValueError("insertstart must be below recordcount")
        if self.insertcount is not None and self.insertstart + self.insertcount > self.recordcount:
            raise ValueError(f"insertstart ({self.insertstart:,}) + insertcount ({self.insertcount:,}) = "
                             f"{self.insertstart + self.insertcount:,} is past recordcount ({self.recordcount:,}): "
                             "the run reads keys below recordcount and inserts from recordcount on")
        if self.operationcount == 0 and self.maxexecutiontime is None:
            raise ValueError("operationcount 0 means no count limit: set maxexecutiontime too")
        return self

    @property
    def load_count(self) -> int:
        return self.insertcount if self.insertcount is not None else self.recordcount - self.insertstart

    @property
    def name(self) -> str:
        return self.preset or "custom"

    def mix(self) -> dict[str, float]:
        return {k[: -len("proportion")]: getattr(self, k) for k in PROPORTIONS if getattr(self, k) > 0}


OPS = ("READ", "UPDATE", "INSERT", "SCAN", "READ-MODIFY-WRITE")
_POOL_SIZE = 1 << 22  # the process's value pool (generators.shared_pool): 4 MiB of characters
KEY_LIST_MAX = 1 << 20  # records up to which the hot path's keys are memoized in a list (8 MB of slots)
_ALPHABET = string.ascii_letters + string.digits


def value_pool() -> str:
    return shared_pool(_ALPHABET, _POOL_SIZE)


def key_name(keynum: int, ordered: bool, zeropadding: int) -> str:
    if not ordered:
        keynum = fnvhash64(keynum)
    value = str(keynum)
    return "user" + ("0" * (zeropadding - len(value)) + value if len(value) < zeropadding else value)


class YcsbClient:
    """One client thread's YCSB operations: which operation next, on which key, with what
    values (``next_operation``, run by the engine's operation loop), and the load's rows.

    Reads and one-field updates go through the binding's reader and updater functions (a
    prepared statement's driver call where the engine has one), keyed in the form they take
    (``Binding.hot_key_type``): keys are formatted once per process and kept in a list over the
    records (up to KEY_LIST_MAX) or a bounded memo. ``binding`` None: a loader (keys and values
    only)."""

    next_operation: Callable[[], families.Operation]  # made for the mix (_bind_operations)

    def __init__(self, w: YcsbWorkload, rng: random.Random, thread_index: int, total_threads: int,
                 inserted: int = 0, expected_inserts: int = 0, binding: Optional[KeyValue] = None,
                 on_reconnect: Optional[list] = None) -> None:
        self.w = w
        self.rng = rng
        self.table = w.table
        self.g, self.T = thread_index, total_threads
        self.inserted = inserted
        self.ordered = w.insertorder == "ordered"
        self.fields = [f"field{i}" for i in range(w.fieldcount)]
        self.read_fields = None if w.readallfields else "one"
        self.pool = value_pool()  # the process's, shared: no draw from the thread's stream
        self.random = rng.random
        self._len = w.fieldlength  # at most 65,536 (the model's bound): a window of the pool
        self._span = _POOL_SIZE - self._len
        self._nfields = len(self.fields)
        # a record's values: one window of the pool, cut into the fields (one draw per record)
        row_len = self._len * self._nfields
        self._row = (_POOL_SIZE - row_len, row_len,
                     [slice(i * self._len, (i + 1) * self._len) for i in range(self._nfields)]
                     ) if 0 < row_len <= _POOL_SIZE else None
        self._keys = memo_table("ycsb-key", self.ordered, w.zeropadding)  # popular keys: formatted once
        ops, cum, acc = [], [], 0.0
        for name, p in zip(OPS, cast("tuple[float, ...]", (w.readproportion, w.updateproportion, w.insertproportion,
                                                           w.scanproportion, w.readmodifywriteproportion))):
            if p > 0:
                acc += p
                ops.append(name)
                cum.append(acc)
        cum[-1] = 1.0 + 1e-12
        self._ops, self._cum = ops, cum
        n = w.recordcount
        dist = w.requestdistribution
        self.chooser: Optional[ScrambledZipfian | SkewedLatest | Hotspot]
        if dist == "uniform":
            self.chooser = None
        elif dist == "zipfian":
            self.chooser = ScrambledZipfian(rng, 0, n + expected_inserts - 1, w.zipfianconstant)
        elif dist == "latest":
            self.chooser = SkewedLatest(rng, self.known_count, w.zipfianconstant)
        else:
            self.chooser = Hotspot(rng, 0, n - 1, w.hotspotdatafraction, w.hotspotopnfraction)
        self.scanlen = (Uniform(rng, 1, cast(int, w.maxscanlength)) if w.scanlengthdistribution == "uniform"
                        else ScrambledZipfian(rng, 1, cast(int, w.maxscanlength)))  # set by the model
        if binding is not None:
            self._bind_operations(binding, on_reconnect, expected_inserts)

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
        return _form_key(self._keys, keynum, self._key_name)

    def _key_name(self, keynum: int) -> str:
        return key_name(keynum, self.ordered, self.w.zeropadding)

    def value(self) -> str:
        o = int(self.random() * self._span)
        return self.pool[o:o + self._len]

    def all_values(self) -> dict[str, str]:
        """Every field's value: one random window of the pool per record, cut into the
        fields, at one draw instead of one per field (noop YCSB S3, a quarter of it inserts:
        bench/generator_cost.py). Either way the values are windows of the same 4-MiB pool, so a
        compressing storage engine finds the same repetition in them."""
        if self._row is None:  # records longer than the pool: a window per field
            r, pool, span, n = self.random, self.pool, self._span, self._len
            return {f: pool[(o := int(r() * span)):o + n] for f in self.fields}
        span, row_len, cuts = self._row
        o = int(self.random() * span)
        return dict(zip(self.fields, map(self.pool[o:o + row_len].__getitem__, cuts)))

    # -- the operations --------------------------------------------------------------------
    def _bind_operations(self, binding: KeyValue, on_reconnect: Optional[list], expected_inserts: int) -> None:
        """The operations' Ops, functions and key draw on this connection (readers and updaters
        taken again after every reconnect), and ``next_operation`` for this mix."""
        table, fields = self.table, self.fields
        self._read_op = Op("READ", missing=True)      # rows=False reads count 1 or 0: 0 is not found
        self._update_op = Op("UPDATE", missing=True)  # an update of no row returns False
        self._insert_op = Op("INSERT", then=self._took_effect)
        self._scan_op, self._rmw_op = Op("SCAN"), Op("READ-MODIFY-WRITE")
        readers: list = []
        updaters: list = []
        self._readers, self._updaters = readers, updaters
        one_field = self.read_fields is not None
        # the other operations' functions, made only for a mix that has them (each may prepare
        # a statement on the server): [inserter], scanners as readers, [whole-record updater]
        ops = self._ops
        self._inserters: list = []
        self._scanners: list = []
        self._row_updaters: list = []
        whole = self.w.writeallfields and ("UPDATE" in ops or "READ-MODIFY-WRITE" in ops)

        def bind() -> None:  # rebound in place: next_operation indexes the same lists
            readers[:] = ([binding.reader(table, [f]) for f in fields] if one_field
                          else [binding.reader(table, None)])
            updaters[:] = [binding.updater(table, f) for f in fields]
            if "INSERT" in ops:
                self._inserters[:] = [binding.inserter(table, fields)]
            if "SCAN" in ops:
                self._scanners[:] = ([binding.scanner(table, [f]) for f in fields] if one_field
                                     else [binding.scanner(table, None)])
            if whole:
                self._row_updaters[:] = [binding.row_updater(table, fields)]
        bind()
        if on_reconnect is not None:
            on_reconnect.append(bind)
        self.next_key = next_key = self._key_draw(binding.hot_key_type, expected_inserts)
        # reads and one-field updates: closures over their state (an operation is described in
        # a call or two; the others are methods)
        r, nfields, pool, span, length = self.random, self._nfields, self.pool, self._span, self._len
        read_op, update_op = self._read_op, self._update_op
        if one_field:
            def read() -> families.Operation:
                return read_op, readers[int(r() * nfields)], (next_key(),)
        else:
            def read() -> families.Operation:
                return read_op, readers[0], (next_key(),)
        if self.w.writeallfields:
            update = self._update_all
        else:
            def update() -> families.Operation:
                o = int(r() * span)
                return update_op, updaters[int(r() * nfields)], (pool[o:o + length], next_key())
        if ops == ["READ"]:  # workload c and the like: no draw to pick the only operation
            self.next_operation = read
        elif ops == ["UPDATE"]:
            self.next_operation = update
        elif ops == ["READ", "UPDATE"]:  # a, b, S1-S9 without inserts
            read_below = self._cum[0]

            def read_or_update() -> families.Operation:
                return read() if r() < read_below else update()
            self.next_operation = read_or_update
        else:
            by_name = {"READ": read, "UPDATE": update, "INSERT": self._insert, "SCAN": self._scan,
                       "READ-MODIFY-WRITE": self._rmw}
            choices, cum, right = [by_name[o] for o in ops], self._cum, bisect.bisect_right
            self.next_operation = lambda: choices[right(cum, r())]()

    def _key_draw(self, form: type, expected_inserts: int) -> Callable[[], Any]:
        """``next_key()``: the next key to read or update, in the readers' form (``form``)."""
        w, ordered, zp, n = self.w, self.ordered, self.w.zeropadding, self.w.recordcount
        key_of: Callable[[int], Any]
        if form is bytes:
            key_of = lambda k: key_name(k, ordered, zp).encode()  # noqa: E731
        else:
            key_of = lambda k: key_name(k, ordered, zp)  # noqa: E731
        if expected_inserts or self.inserted or w.requestdistribution not in ("uniform", "zipfian"):
            if form is str:
                return lambda: self.key(self.next_keynum())
            memo = memo_table("ycsb-key", "bytes", ordered, zp)
            return lambda: _form_key(memo, self.next_keynum(), key_of)
        # no inserts: key numbers [0, recordcount); keys by key number in a list where it is at
        # most 8 MB, else a memo
        name = form.__name__
        keys = (slot_list(n, "ycsb-keys", name, ordered, zp) if n <= KEY_LIST_MAX
                else self._keys if form is str else memo_table("ycsb-key", name, ordered, zp))
        if self.chooser is None:  # uniform: next_keynum's draw
            return Uniform(self.rng, 0, n - 1).next_key(key_of, keys)
        ch = cast(ScrambledZipfian, self.chooser)  # zipfian: the only other one without inserts
        popular = slot_list(ScrambledZipfian.POPULAR_ITEMS, "ycsb-popular-keys", name, ch.lo, ch.items, ordered, zp)
        return ch.next_key(key_of, keys, popular)

    def _update_all(self) -> families.Operation:
        key = self._str_key(self.next_key())
        return self._update_op, self._row_updaters[0], (key, self.all_values())

    def _str_key(self, key: Any) -> str:  # the readers' form: str or bytes
        return key.decode() if type(key) is bytes else key

    def _insert(self) -> families.Operation:
        # thread g of T inserts key numbers recordcount + j*T + g: no two threads collide
        keynum = self.w.recordcount + self.inserted * self.T + self.g
        return self._insert_op, self._inserters[0], (self.key(keynum), self.all_values())

    def _took_effect(self, inserted: bool) -> None:
        # a duplicate key took effect too (an insert whose reply a lost connection cut off had
        # committed, and its retry finds it): the next insert takes the next key (not advancing
        # made every later insert of the thread a duplicate of it)
        if inserted:
            self.inserted += 1

    def _field_index(self) -> int:
        """Which field a read or scan reads where it reads one (readallfields false: a draw), the
        index of its reader or scanner; 0 (no draw) where it reads every field."""
        return 0 if self.read_fields is None else int(self.random() * self._nfields)

    def _scan(self) -> families.Operation:
        key = self._str_key(self.next_key())
        n = self.scanlen.next()
        return self._scan_op, self._scanners[self._field_index()], (key, n)

    def _rmw(self) -> families.Operation:
        # a read, then an update of the same key: two statements (stepwise), so the
        # multiplexer sends the update when the read's answer is in; a thread runs both
        key = self.next_key()
        reader = self._readers[self._field_index()]
        if not self.w.writeallfields:
            i = int(self.random() * self._nfields)
            return self._rmw_op, _rmw_call, (reader, key, self._updaters[i], (self.value(), key))
        return self._rmw_op, _rmw_call, (reader, key, self._row_updaters[0], (self._str_key(key), self.all_values()))

    # -- load ----------------------------------------------------------------------------
    def load_rows(self, keynums: Iterable[int]) -> list[tuple[str, dict[str, str]]]:
        return [(self.key(k), self.all_values()) for k in keynums]


def _form_key(memo: dict, keynum: int, key_of: Callable[[int], Any]) -> Any:
    """keynum's key from a bounded memo (``key_of`` on a miss)."""
    key = memo.get(keynum)
    return key if key is not None else _memo_miss(memo, keynum, key_of)


def _rmw_steps(reader: Callable, key: Any, updater: Callable, update_args: tuple) -> families.Steps:
    yield reader, (key,)
    return (yield updater, update_args)


_rmw_call = stepwise(_rmw_steps)  # YCSB's read-modify-write: the read, then the update


class _RunClient(Client):
    """The run phase: one operation of the mix at a time."""

    def __init__(self, w: YcsbWorkload, ctx: ThreadContext) -> None:
        expected, insert_p = 0, cast(float, w.insertproportion)  # set by the model
        if insert_p > 0:
            expected = int((ctx.quota or w.recordcount) * insert_p * 1.2) + 10
        self.client = YcsbClient(w, ctx.rng, ctx.thread, ctx.threads, inserted=ctx.saved.get("inserted", 0),
                                 expected_inserts=expected, binding=ctx.m.binding, on_reconnect=ctx.m.on_reconnect)
        self.next_operation = self.client.next_operation  # type: ignore[method-assign]
        # every operation is a binding's function (reader, updater, inserter, scanner,
        # row_updater), split into send / finish where the binding multiplexes (engine.mux), or
        # two of them one after another (read-modify-write: stepwise)
        self.multiplexable = True

    def state(self) -> dict:
        return {"inserted": self.client.inserted}


# ---- the family ---------------------------------------------------------------------------------

def per_workload_table(runs: Iterable[dict]) -> str:
    """The ApsaraDB papers' shape: one row per workload (a read:write ratio, a service model)
    and instance, with its record count, threads, throughput and average read / write latency
    (RAL / WAL, µs) side by side."""
    lines = ["### One row per workload: records, threads, OPS, RAL, WAL (average, µs)", "",
             "| instance | workload | records | threads | OPS | RAL µs | WAL µs |", "|---|---|---|---|---|---|---|"]
    for r in runs:
        name, p = measured_phase(r)
        w = r["workload"]

        def avg(kind: str, p: Optional[dict] = p) -> str:
            s = p and p.get(f"{kind}_latency")
            return fmt(s["avg_us"]) if s and s.get("calls") and s.get("avg_us") is not None else "–"
        ops = "missing" if p is None else fmt(p["throughput"]) + ("" if name == "run" else " (load)") + (
            "" if p["status"] == "complete" else " (partial)")
        lines.append(f"| {r['target']['label']} | {w['name']} | {w['recordcount']:,} | {r['threads']} | {ops} | "
                     f"{avg('read')} | {avg('write')} |")
    return "\n".join(lines) + "\n"


def _row_key(run: dict) -> tuple[str, str, str]:
    w = run["workload"]
    return run["target"]["label"], f"{run['threads']} threads", f"{w['recordcount']:,} records"


class Ycsb(Family[YcsbWorkload]):
    name = "ycsb"
    model = YcsbWorkload
    requires = "kv"
    label_key = "preset"

    def read_operations(self, w: YcsbWorkload) -> tuple[str, ...]:
        return ("READ", "SCAN")  # a scan reads: workload e (95 % SCAN) has a read latency too

    def write_operations(self, w: YcsbWorkload) -> tuple[str, ...]:
        return ("UPDATE", "INSERT", "READ-MODIFY-WRITE")

    def presets_text(self) -> list[str]:
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

    def limits(self, w: YcsbWorkload) -> RunLimits:
        return RunLimits(count=w.operationcount, rate=w.target, time=w.maxexecutiontime)

    def load_range(self, w: YcsbWorkload) -> tuple[int, int]:
        return w.insertstart, w.load_count

    def thread_memory(self, w: YcsbWorkload) -> Optional[tuple[int, str]]:
        """A load batch's records, or a scan's (the longest), each fieldcount values of
        fieldlength characters (a Python str each: some 60 bytes of its own)."""
        record = w.fieldcount * (w.fieldlength + 60) + 100
        keys = "workload.fieldcount × workload.fieldlength"
        load = w.batchsize * record
        scan = (w.maxscanlength or 1) * record if w.scanproportion else record
        return (load, f"{keys} × workload.batchsize") if load >= scan else (scan, f"{keys} × workload.maxscanlength")

    def tables(self, w: YcsbWorkload) -> list[str]:
        return [w.table]

    def prepare(self, binding: KeyValue, w: YcsbWorkload, stage: str) -> None:
        if stage == "before_load":
            binding.create_table(w.table, w.fieldcount)
        elif stage == "cleanup":
            binding.drop_table(w.table)

    def run_client(self, w: YcsbWorkload, ctx: ThreadContext) -> Client:
        return _RunClient(w, ctx)

    def load_client(self, w: YcsbWorkload, ctx: ThreadContext, start: int, count: int) -> Client:
        client = YcsbClient(w, ctx.rng, 0, 1)
        insert_batch = ctx.m.binding.insert_batch

        def batch(nxt: int, end: int) -> tuple:
            hi = min(end, nxt + w.batchsize)
            rows = client.load_rows(range(nxt, hi))
            return hi, len(rows), insert_batch, (w.table, rows)
        return BatchLoader(ctx, start, count, batch)

    def error_hint(self, w: YcsbWorkload, phase: str, op: str, kind: str, name: str) -> Optional[str]:
        if phase == "run" and op == "INSERT" and kind == "duplicate":
            return ("the table already holds the run phase's insert keys (they start at recordcount: an earlier "
                    "run inserted them): set recordcount to the table's current record count, or reload it "
                    "(phases: prepare, load, run)")
        return None

    def client_statements(self, w: YcsbWorkload, phase: str, measurement: Measurement) -> Optional[dict]:
        """Statements sent: one per operation call (a load batch is one), two per
        read-modify-write, the failed ones too (the server saw them), warm-up included (the
        window spans the whole phase)."""
        n = 0
        for stats in (measurement.operations, measurement.warmup or {}):
            for op, s in stats.items():
                n += (s.histogram.get_total_count() + s.errors) * (2 if op == "READ-MODIFY-WRITE" else 1)
        return {"statements": n}

    def report_tables(self, runs: list[dict]) -> str:
        """The white papers' tables: rows instance x threads (x records when they vary),
        columns the workloads, cells throughput and read / write latency (avg / p99)."""
        if not runs:
            return ""
        rows, cols = OrderedDict(), []  # type: OrderedDict[tuple, dict[str, dict]], list[str]
        for r in runs:
            name = r["workload"]["name"]
            if name not in cols:
                cols.append(name)
            rows.setdefault(_row_key(r), {})[name] = r
        vary_records = len({k[2] for k in rows}) > 1

        def table(title: str, cell: Callable[[dict], str]) -> str:
            lines = [f"### {title}", ""]
            head = ["instance", "threads"] + (["records"] if vary_records else []) + cols
            lines.append("| " + " | ".join(head) + " |")
            lines.append("|" + "---|" * len(head))
            for key, by_wl in rows.items():
                cells = [key[0], key[1].split()[0]] + ([key[2].split()[0]] if vary_records else [])
                cells += [cell(by_wl[c]) if c in by_wl else "" for c in cols]
                lines.append("| " + " | ".join(cells) + " |")
            return "\n".join(lines) + "\n"

        def ops(r: dict) -> str:
            name, p = measured_phase(r)
            if p is None:
                return "missing"
            mark = "" if p["status"] == "complete" else " (partial)"
            return fmt(p["throughput"]) + ("" if name == "run" else " (load)") + mark

        tails: list[str] = []  # cells whose average is above their p99: said under the table

        def lat(kind: str) -> Callable[[dict], str]:
            def cell(r: dict) -> str:
                _, p = measured_phase(r)
                s = p and p.get(f"{kind}_latency")
                if not s or not s.get("calls"):
                    return "–"
                if s.get("avg_us") is not None and s.get("p99_us") is not None and s["avg_us"] > s["p99_us"]:
                    tails.append(f"{r['run_id']} {kind}: average {fmt(s['avg_us'])} µs above p99 {fmt(s['p99_us'])} µs "
                                 f"(max {fmt(s.get('max_us'))} µs)")
                return f"{fmt(s['avg_us'])} / {fmt(s['p99_us'])}"
            return cell

        def latency_table(title: str, kind: str) -> str:
            tails.clear()
            text = table(title, lat(kind))
            if tails:  # measured, not a fault: fewer than 1 % of the calls were slow enough to pull the mean past p99
                text += ("\nAn average above p99 means fewer than 1 % of the operations took so long that they "
                         "outweigh the other 99 % (a lock wait, a checkpoint, a stall): " + "; ".join(tails) + ".\n")
            return text
        return "\n".join([table("Throughput (OPS, operations per second)", ops), published_table(rows, cols),
                          latency_table("Read latency (RAL), µs: average / p99 (READ and SCAN)", "read"),
                          latency_table("Write latency (WAL), µs: average / p99", "write"),
                          per_workload_table(runs)])


families.register(Ycsb())
