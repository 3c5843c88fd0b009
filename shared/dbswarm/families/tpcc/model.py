"""TPC-C's model (BenchBase's TPCCConfig and TPCCUtil): the population's sizes, the mix and its
time limits, the workload's keys (``TpccWorkload``) and presets, the records that place the
New-Orders around the ramp-up's end (``BAND_S``), and the random values of clause 2.1.6 and
4.3.2 (NURand, the C-delta rule, last names, a- and n-strings)."""
from __future__ import annotations

import random
import string
from typing import Any, Literal, Optional

from pydantic import Field, model_validator

from dbswarm.families.base import WorkloadModel
from dbswarm.families.generators import shared_pool

ITEMS = 100_000
DISTRICTS = 10
CUSTOMERS = 3_000          # per district
ORDERS = 3_000             # per district
FIRST_UNDELIVERED = 2_101  # orders 2101..3000 of each district are new orders (900)
ITEM_CHUNK = 10_000
ITEM_UNITS = ITEMS // ITEM_CHUNK
STOCK_PER_DISTRICT_UNIT = ITEMS // DISTRICTS

TRANSACTIONS = ("NEW_ORDER", "PAYMENT", "ORDER_STATUS", "DELIVERY", "STOCK_LEVEL")
READ_ONLY = ("ORDER_STATUS", "STOCK_LEVEL")  # the read-only transactions (the others write)
MIX = {"NEW_ORDER": 45, "PAYMENT": 43, "ORDER_STATUS": 4, "DELIVERY": 4, "STOCK_LEVEL": 4}
# clause 5.2.5.7: keying time (s) and mean think time (s) per transaction type
KEYING_S = {"NEW_ORDER": 18, "PAYMENT": 3, "ORDER_STATUS": 2, "DELIVERY": 2, "STOCK_LEVEL": 2}
THINK_MEAN_S = {"NEW_ORDER": 12, "PAYMENT": 12, "ORDER_STATUS": 10, "DELIVERY": 5, "STOCK_LEVEL": 5}
# clause 5.2.5.3: 90th percentile response time limits (s); Delivery's is the terminal's answer
P90_LIMIT_S = {"NEW_ORDER": 5, "PAYMENT": 5, "ORDER_STATUS": 5, "DELIVERY": 5, "STOCK_LEVEL": 20}
TPMC_PER_WAREHOUSE_MAX = 12.86  # clause 4.2: the most a warehouse can do with keying and think times

SYLLABLES = ("BAR", "OUGHT", "ABLE", "PRI", "PRES", "ESE", "ANTI", "CALLY", "ATION", "EING")
C_LAST_LOAD = 157  # the load's C for C_LAST (clause 2.1.6): the run derives its own from it (C-delta rule)

# NOPM from the clients, exactly (issue 16). The database's window (HammerDB) runs from the
# start edge's snapshot of d_next_o_id per district to the end edge's; in a district the o_ids of
# committed New-Orders are contiguous (d_next_o_id is read and bumped under the row lock, and a
# rolled-back New-Order gives its o_id back), so that window is exactly "o_id >= the district's
# d_next_o_id at the start edge". A virtual user records each New-Order it commits within BAND_S
# seconds of its ramp-up's end as (warehouse, district, o_id), and only counts those before and
# after that band; the start edge, read by shard 0's call when the ramp-up ends, then places each
# recorded one on its side (Tpcc.phase_summary). That is exact when the edge was read inside every
# virtual user's band: BAND_S covers the shards' start skew (each shard ends its ramp-up at the
# start barrier + rampup; a late shard, the edge read's own delay or another machine's clock move
# them apart by milliseconds to seconds) with room to spare, and keeps the records to about 60 s
# of New-Orders (12 bytes each in a shard file). What it assumes: a COMMIT's answer reaches its
# client within the band's half (a New-Order counted after the band committed after the edge).
BAND_S = 30
BAND_RECORDS = "tpcc_new_order_band"          # Measurement.records: per virtual user and call, 4 values:
                                              # band start, band end (wall-clock ms), New-Orders before, after it
BAND_ORDERS = "tpcc_new_order_band_orders"    # per New-Order committed in the band, 3 values: warehouse, district, o_id

_ALNUM = string.ascii_letters + string.digits
_DIGITS = string.digits
_POOL = 1 << 20  # the process's pools of characters (generators.shared_pool)


# presets: the keys they set unless the workload (or the matrix) gives them
PRESETS = {
    "quick": {"warehouses": 1, "threads": 4, "time": 20, "rampup": 5, "check": ["after_load", "after_run"]},
    "published": {"warehouses": 100, "threads": 64, "time": 3600, "rampup": 300, "check": ["after_load"]},
}


class TpccWorkload(WorkloadModel):
    """TPC-C: ``warehouses`` is the scale, ``threads`` the virtual users, ``time`` the
    measured seconds after ``rampup`` (HammerDB's names)."""
    family: Literal["tpcc"] = "tpcc"
    preset: Optional[Literal["quick", "published"]] = Field(
        None, description="a size to start from; the keys given beside it win. quick: 1 warehouse, 4 virtual users, "
        "20 s after a 5 s ramp-up, checks after the load and the run (a demo: about a minute with its load); "
        "published: the white papers' shape, 100 warehouses, 64 virtual users, 3,600 s after a 300 s ramp-up, "
        "check after the load (step threads in a matrix)")
    warehouses: int = Field(1, ge=1, le=100_000, description="the scale: 10 districts, 30,000 customers, "
                            "100,000 stock rows each (ITEM: 100,000 rows)")
    time: float = Field(60, gt=0, description="measured seconds of the run phase, after rampup")
    rampup: float = Field(0, ge=0, description="seconds before the measured window (kept out of the "
                          "percentiles and tpmC, as warmuptime; the run phase lasts rampup + time)")
    transactions: int = Field(0, ge=0, description="transactions over all virtual users (0: until time)")
    keying_and_thinking: bool = Field(False, description="the specification's keying and think times "
                                      "(clause 5.2.5.7); off by default, as HammerDB and go-tpc")
    c_last_load: int = Field(C_LAST_LOAD, ge=0, le=255, description="C for C_LAST used by the load (clause "
                             "2.1.6); the run's C satisfies the C-delta rule against it")
    batchsize: int = Field(1000, ge=1, le=100_000, description="rows per INSERT while loading")
    check: list[Literal["after_load", "after_run"]] = Field(
        default_factory=list, description="run the consistency conditions (clause 3.3.2, and the population: the "
        "warehouse, district, stock, customer and order rows present) on every warehouse after the load (stage "
        "after_load: all of them) and / or after the run (stage after_run: all but 3.3.2.11, which holds only "
        "before any run), the warehouses split into contiguous ranges, one per shard, checked in parallel, each a "
        "warehouse at a time over as many calls as it takes; in result.json's run checks and summary.md; a failed "
        "condition makes the campaign check_failed (dbswarm run exits 8)")

    @model_validator(mode="before")
    @classmethod
    def _preset(cls, data: Any) -> Any:
        if isinstance(data, dict) and isinstance(data.get("preset"), str) and data["preset"].lower() in PRESETS:
            data = {**data, "preset": data["preset"].lower()}   # any case, as YCSB's presets
        if isinstance(data, dict) and data.get("preset") in PRESETS:
            warm = data.get("warmuptime")
            data = {**{k: v for k, v in PRESETS[data["preset"]].items()
                       if not (k == "rampup" and warm)}, **data}
        return data

    @model_validator(mode="after")
    def _rampup(self) -> "TpccWorkload":
        if self.rampup and not self.warmuptime:
            self.warmuptime = self.rampup
        elif self.warmuptime and not self.rampup:
            self.rampup = self.warmuptime
        elif self.rampup != self.warmuptime:
            raise ValueError(f"rampup ({self.rampup:g}) and warmuptime ({self.warmuptime:g}) differ: give one")
        return self

    @property
    def name(self) -> str:
        return f"tpcc-{self.warehouses}w"


# ---- random values (clause 2.1.6, 4.3.2) -----------------------------------------------------

def nurand(rng: random.Random, a: int, x: int, y: int, c: int) -> int:
    """NURand(A, x, y) = (((random(0, A) | random(x, y)) + C) % (y - x + 1)) + x."""
    return (((rng.randint(0, a) | rng.randint(x, y)) + c) % (y - x + 1)) + x


def c_delta_ok(c_load: int, c_run: int) -> bool:
    """Clause 2.1.6.1: |C_RUN - C_LOAD| for C_LAST in [65, 119], and neither 96 nor 112."""
    d = abs(c_run - c_load)
    return 65 <= d <= 119 and d not in (96, 112)


def run_constants(c_last_load: int, rng: random.Random) -> dict:
    """The run's C for C_LAST (satisfying the C-delta rule), C_ID and OL_I_ID."""
    while True:
        c_last = rng.randint(0, 255)
        if c_delta_ok(c_last_load, c_last):
            break
    return {"c_last": c_last, "c_id": rng.randint(0, 1023), "ol_i_id": rng.randint(0, 8191)}


def last_name(n: int) -> str:
    """C_LAST of number n in 0..999: three syllables (clause 4.3.2.3)."""
    return SYLLABLES[n // 100] + SYLLABLES[(n // 10) % 10] + SYLLABLES[n % 10]


class Strings:
    """Random a-strings and n-strings (clause 4.3.2.2), cut from a pool of random characters."""
    __slots__ = ("rng", "alnum", "digits")

    def __init__(self, rng: random.Random) -> None:
        self.rng = rng
        self.alnum = shared_pool(_ALNUM, _POOL)  # the process's: no draw from the thread's stream
        self.digits = shared_pool(_DIGITS, _POOL)

    def a(self, lo: int, hi: int) -> str:
        n = self.rng.randint(lo, hi) if lo != hi else lo
        o = int(self.rng.random() * (_POOL - n))
        return self.alnum[o:o + n]

    def n(self, length: int) -> str:
        o = int(self.rng.random() * (_POOL - length))
        return self.digits[o:o + length]

    def data(self, lo: int, hi: int) -> str:
        """i_data / s_data: 10% hold "ORIGINAL" at a random position."""
        s = self.a(lo, hi)
        if self.rng.random() < 0.1:
            p = self.rng.randint(0, len(s) - 8)
            s = s[:p] + "ORIGINAL" + s[p + 8:]
        return s

    def zip(self) -> str:
        return self.n(4) + "11111"

    def state(self) -> str:
        return "".join(self.rng.choices(string.ascii_uppercase, k=2))


def money(v: float) -> str:
    return f"{v:.2f}"


def rate(v: float) -> str:
    return f"{v:.4f}"


