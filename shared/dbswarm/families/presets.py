"""Workload presets as data: the white papers' service models S1-S9, YCSB's workloads a-f,
read:write ratios ("95:5"), and the sysbench OLTP variants.

A YCSB preset is a dict of YCSB property names; explicit properties in a campaign override it.
"""
import math
from typing import Any, Optional

_P = ("readproportion", "updateproportion", "insertproportion", "scanproportion",
      "readmodifywriteproportion")


def _mix(read: float = 0.0, update: float = 0.0, insert: float = 0.0, scan: float = 0.0, rmw: float = 0.0,
         **extra: Any) -> dict[str, Any]:
    return dict(zip(_P, (read, update, insert, scan, rmw)), **extra)


# SPEC 2.1: service models published for MongoDB-compatible document stores.
SERVICE_MODELS = {
    "S1": _mix(insert=1.0),
    "S2": _mix(read=0.10, update=0.90),
    "S3": _mix(read=0.65, update=0.10, insert=0.25),
    "S4": _mix(read=0.90, update=0.05, insert=0.05),
    "S5": _mix(read=0.50, update=0.50),
    "S6": _mix(read=1.0),
    "S7": _mix(read=0.95, update=0.05),
    "S8": _mix(read=0.05, update=0.95),
    "S9": _mix(update=1.0),
}

# YCSB's standard workloads (workloads/workloada .. workloadf in the YCSB repository).
YCSB_WORKLOADS = {
    "a": _mix(read=0.5, update=0.5, requestdistribution="zipfian"),
    "b": _mix(read=0.95, update=0.05, requestdistribution="zipfian"),
    "c": _mix(read=1.0, requestdistribution="zipfian"),
    "d": _mix(read=0.95, insert=0.05, requestdistribution="latest"),
    "e": _mix(scan=0.95, insert=0.05, requestdistribution="zipfian", maxscanlength=100,
              scanlengthdistribution="uniform"),
    "f": _mix(read=0.5, rmw=0.5, requestdistribution="zipfian"),
}

YCSB_PRESETS = {**SERVICE_MODELS, **YCSB_WORKLOADS}

# YCSB CoreWorkload's own defaults when neither a preset nor proportions are given.
YCSB_DEFAULT_MIX = _mix(read=0.95, update=0.05)

PRESET_DESCRIPTIONS = {
    **{k: "service model (SPEC 2.1)" for k in SERVICE_MODELS},
    "a": "YCSB workload a: update heavy", "b": "YCSB workload b: read mostly",
    "c": "YCSB workload c: read only", "d": "YCSB workload d: read latest",
    "e": "YCSB workload e: short ranges", "f": "YCSB workload f: read-modify-write",
}

# sysbench 1.0 OLTP scripts: statements per event. "delete_inserts" counts one DELETE and
# one INSERT. skip_trx removes BEGIN/COMMIT.
SYSBENCH_TESTS = {
    "oltp_read_write": dict(point_selects=10, simple_ranges=1, sum_ranges=1, order_ranges=1,
                            distinct_ranges=1, index_updates=1, non_index_updates=1,
                            delete_inserts=1, skip_trx=False),
    "oltp_read_only": dict(point_selects=10, simple_ranges=1, sum_ranges=1, order_ranges=1,
                           distinct_ranges=1, index_updates=0, non_index_updates=0,
                           delete_inserts=0, skip_trx=False),
    "oltp_write_only": dict(point_selects=0, simple_ranges=0, sum_ranges=0, order_ranges=0,
                            distinct_ranges=0, index_updates=1, non_index_updates=1,
                            delete_inserts=1, skip_trx=False),
    "oltp_point_select": dict(point_selects=1, simple_ranges=0, sum_ranges=0, order_ranges=0,
                              distinct_ranges=0, index_updates=0, non_index_updates=0,
                              delete_inserts=0, skip_trx=True),
}


def parse_ratio(name: object) -> Optional[dict[str, Any]]:
    """'95:5' -> read 0.95 / update 0.05 (the r:w way white papers state a mix); else None."""
    if not isinstance(name, str) or name.count(":") != 1:
        return None
    left, right = name.split(":")
    try:
        r, w = float(left), float(right)
    except ValueError:
        return None
    if not (math.isfinite(r) and math.isfinite(w) and math.isfinite(r + w)) or r < 0 or w < 0 or r + w <= 0:
        return None   # 'nan:5', 'inf:1', '0:0': parts that cannot be a mix
    return _mix(read=r / (r + w), update=w / (r + w))


def canonical_preset(name: object) -> Optional[str]:
    """A YCSB preset's own spelling whatever the case given ('A' -> 'a', 's4' -> 'S4'), a
    read:write ratio as given; None if the name is unknown."""
    if not isinstance(name, str):
        return None
    key = name.strip().lower()
    for known in YCSB_PRESETS:
        if known.lower() == key:
            return known
    return name if parse_ratio(name) else None


def ycsb_preset(name: object) -> Optional[dict[str, Any]]:
    """The properties of a preset (any case), or None if the name is unknown."""
    known = canonical_preset(name)
    if known is None:
        return None
    return dict(YCSB_PRESETS[known]) if known in YCSB_PRESETS else parse_ratio(known)
