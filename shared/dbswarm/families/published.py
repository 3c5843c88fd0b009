"""Published white-paper figures (data/, from the team's reference folder: published_ops.csv,
published_sysbench.csv, published_tpcc.csv; /work/shared/reference/README.md), so a report can
put a measurement beside the vendor's figure for the same engine and instance class.

A run is compared with a published row when the engine is the same (the run's engine, as the
paper names it: mongodb "DDS (MongoDB)", mysql "RDS for MySQL", postgresql "RDS for
PostgreSQL") and the target's label is the row's instance class (e.g. "4 vCPUs 16 GB"); a run
on an engine the papers do not cover (SQLite), or against another engine's figures (SQL
Server's TPC-C), is compared only when its target names the paper's engine in
``options.reference.engine``, and the table says the engines differ. A run that measures no
database (noop) is never compared. ``options.reference`` may
narrow the rows: any of engine, version, tier, topology, data_volume. Beside every row the
report says which of engine, instance class, threads and data volume matched, which differ
(with both values) and which the paper does not state.
"""
from __future__ import annotations

import csv
import functools
from importlib import resources
from typing import Optional

FILTER_KEYS = ("engine", "version", "tier", "topology", "data_volume")
FILES = {"ycsb": "published_ops.csv", "sysbench": "published_sysbench.csv", "tpcc": "published_tpcc.csv"}
# the run's engine as the papers name it
ENGINES = {"mongodb": "DDS (MongoDB)", "mysql": "RDS for MySQL", "postgresql": "RDS for PostgreSQL"}
# what each paper states of its test conditions (README of the reference folder)
SYSBENCH_THREADS = 200          # "up to 200 threads" (the stress level of its TPS/QPS)
SYSBENCH_TABLES, SYSBENCH_TABLE_SIZE = 64, 10_000_000
FIELDS = ("engine", "instance class", "threads", "data volume")


@functools.lru_cache(maxsize=None)
def rows_of(family: str) -> tuple[dict, ...]:
    with resources.files("dbswarm").joinpath(f"data/{FILES[family]}").open(newline="") as fh:
        return tuple(csv.DictReader(fh))


def published_rows() -> tuple[dict, ...]:
    """The YCSB (DDS) rows."""
    return rows_of("ycsb")


def published_for(label: str, workloads: list[str], filters: dict | None = None) -> dict:
    """{(engine, version, tier, topology, data_volume): {workload: OPS}} for the label (YCSB)."""
    filters = {k: str(v) for k, v in (filters or {}).items() if k in FILTER_KEYS}
    out: dict[tuple, dict] = {}
    for row in published_rows():
        if row["instance_class"] != label or row["metric"] != "OPS" or row["workload"] not in workloads:
            continue
        if any(row.get(k, "") != v for k, v in filters.items()):
            continue
        key = tuple(row.get(k, "") for k in FILTER_KEYS)
        out.setdefault(key, {})[row["workload"]] = float(row["value"])
    return out


def reference_engine(run: dict) -> tuple[Optional[str], Optional[str]]:
    """(the paper's engine to compare the run with, why not when None). A noop run has none."""
    target = run["target"]
    if not target.get("is_real_database", True) or target.get("engine") == "noop":
        return None, f"the run measured no database ({target.get('engine')}: the load generator alone)"
    named = ((target.get("options") or {}).get("reference") or {}).get("engine")
    return (named or ENGINES.get(target.get("engine"))), None


def _threads(family: str, run: dict) -> tuple[str, str]:
    n = run.get("threads")
    if family == "sysbench":
        return ("matched", f"{n}") if n == SYSBENCH_THREADS else \
            ("differs", f"{n} measured, the paper's stress level up to {SYSBENCH_THREADS}")
    return "not stated", ""


def _volume(family: str, run: dict, row: dict) -> tuple[str, str]:
    w = run["workload"]
    if family == "sysbench":
        tables, size = w.get("tables"), w.get("table_size")
        if (tables, size) == (SYSBENCH_TABLES, SYSBENCH_TABLE_SIZE):
            return "matched", f"{tables} x {size:,} rows"
        return "differs", (f"{tables} x {size:,} rows measured, the paper's {SYSBENCH_TABLES} x "
                           f"{SYSBENCH_TABLE_SIZE:,}" if tables and size else "")
    if family == "ycsb" and row.get("data_volume"):
        said = ((run["target"].get("options") or {}).get("reference") or {}).get("data_volume")
        if said is None:
            return "not stated", f"the run does not say (options.reference.data_volume); the paper's {row['data_volume']}"
        return ("matched", row["data_volume"]) if str(said) == row["data_volume"] else \
            ("differs", f"{said} measured, the paper's {row['data_volume']}")
    return "not stated", ""


def matches(family: str, run: dict, workloads: Optional[list[str]] = None) -> list[dict]:
    """The published rows this run is compared with, grouped per source configuration: [{"source",
    "engine", "version", "tier", "topology", "instance_class", "data_volume", "figures": {metric
    (or workload): value}, "fields": {field: (matched | differs | not stated, detail)}}]. Empty
    for a run that measured no database, or whose engine and instance class the papers lack."""
    engine, _ = reference_engine(run)
    if engine is None:
        return []
    target = run["target"]
    label = target.get("label")
    filters = {k: str(v) for k, v in ((target.get("options") or {}).get("reference") or {}).items()
               if k in FILTER_KEYS and k != "engine"}
    own = ENGINES.get(target.get("engine"))
    groups: dict[tuple, dict] = {}
    for row in rows_of(family):
        if row["instance_class"] != label or row["engine"] != engine:
            continue
        if any(row.get(k, "") != v for k, v in filters.items()):
            continue
        if family == "ycsb" and (workloads is None or row["workload"] not in workloads):
            continue
        key = (row["source"], row["table"], row["engine"], row["version"], row["tier"], row["topology"],
               row.get("data_volume", ""))
        g = groups.get(key)
        if g is None:
            fields = {"engine": ("matched", engine) if engine == own else
                      ("differs", f"{target.get('engine')} measured, the paper's {engine} "
                                  "(named by options.reference.engine)"),
                      "instance class": ("matched", label),
                      "threads": _threads(family, run), "data volume": _volume(family, run, row)}
            g = groups[key] = {"source": f"{row['source']} table {row['table']}", "engine": row["engine"],
                               "version": row["version"], "tier": row["tier"], "topology": row["topology"],
                               "instance_class": label, "data_volume": row.get("data_volume", ""),
                               "figures": {}, "fields": fields}
        g["figures"][row["workload"] if family == "ycsb" else row["metric"]] = float(row["value"])
    return list(groups.values())


def fields_text(fields: dict) -> str:
    """"matched: engine, instance class; differs: threads (4 measured, ...); not stated: ..."."""
    out = []
    for state in ("matched", "differs", "not stated"):
        names = [(f, d) for f, (s, d) in fields.items() if s == state]
        if not names:
            continue
        if state == "differs":
            out.append("differs: " + "; ".join(f"{f} ({d})" if d else f for f, d in names))
        else:
            out.append(f"{state}: " + ", ".join(f for f, _ in names))
    return "; ".join(out)
