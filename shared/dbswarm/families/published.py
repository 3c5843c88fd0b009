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
report says which of engine, version, instance class, threads, data volume and test matched,
which differ (with both values) and which the paper does not state. The server the run
measured is read from its phase's binding settings: MariaDB (its version says so) is not MySQL
and FerretDB not MongoDB, and the row says so. A run of another test than the paper's (sysbench
oltp_point_select or oltp_read_only against the papers' oltp_read_write) is not compared.
"""
from __future__ import annotations

import csv
import functools
import io
from importlib import resources
from typing import Optional

FILTER_KEYS = ("engine", "version", "tier", "topology", "data_volume")
FILES = {"ycsb": "published_ops.csv", "sysbench": "published_sysbench.csv", "tpcc": "published_tpcc.csv"}
# the run's engine as the papers name it
ENGINES = {"mongodb": "DDS (MongoDB)", "mysql": "RDS for MySQL", "postgresql": "RDS for PostgreSQL"}
# what each paper states of its test conditions (README of the reference folder)
SYSBENCH_THREADS = 200          # "up to 200 threads" (the stress level of its TPS/QPS)
SYSBENCH_TABLES, SYSBENCH_TABLE_SIZE = 64, 10_000_000
# the DDS (YCSB) papers' stated conditions (SPEC 2.1): 100-400 client threads, 128 typical; data
# volumes of 1 M to 100 M records, "low" and "high" per instance class (the rows say which)
YCSB_THREADS = (100, 400)
YCSB_RECORDS = (1_000_000, 100_000_000)
FIELDS = ("engine", "version", "instance class", "threads", "data volume", "test")
PAPER_TESTS = {"sysbench": "oltp_read_write"}  # the test the papers' TPS and QPS are of (README)
PAPER_PRODUCTS = {"mysql": "MySQL", "mongodb": "MongoDB", "postgresql": "PostgreSQL"}


@functools.lru_cache(maxsize=None)
def rows_of(family: str) -> tuple[dict, ...]:
    data = resources.files("dbswarm").joinpath(f"data/{FILES[family]}")
    with io.TextIOWrapper(data.open("rb"), newline="") as fh:  # open(newline="") (not in Traversable's)
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


def reference_engine(run: dict, family: Optional[str] = None) -> tuple[Optional[str], Optional[str]]:
    """(the paper's engine to compare the run with, why not when None). A noop run has none;
    nor has a run of another test than the paper's."""
    target = run["target"]
    if not target.get("is_real_database", True) or target.get("engine") == "noop":
        return None, f"the run measured no database ({target.get('engine')}: the load generator alone)"
    test = run_test(family, run) if family else None
    if family in PAPER_TESTS and test != PAPER_TESTS[family]:
        return None, f"the papers measured {PAPER_TESTS[family]}, this run {test}: another test is not a match"
    named = ((target.get("options") or {}).get("reference") or {}).get("engine")
    return (named or ENGINES.get(target.get("engine"))), None


def run_test(family: Optional[str], run: dict) -> str:
    """The test the run measured (sysbench's ``test``, its default oltp_read_write)."""
    if family == "sysbench":
        return str(run["workload"].get("test") or "oltp_read_write")
    return family or ""


def measured_server(run: dict) -> tuple[Optional[str], Optional[str]]:
    """(product, version) of the server the run measured, from its phases' binding settings
    (MariaDB and FerretDB by name); (None, None) when the run did not read them."""
    engine = run["target"].get("engine")
    for phase in ("run", "load"):
        settings = ((run.get("phases") or {}).get(phase) or {}).get("binding_settings") or {}
        info = {**(settings.get("server") or {}), **settings}
        if info.get("ferretdb_version"):
            return "FerretDB", str(info["ferretdb_version"]).lstrip("v")
        version = info.get("server_version")
        if version:
            version = str(version)
            if "mariadb" in version.lower():
                return "MariaDB", version.split("-")[0]
            return PAPER_PRODUCTS.get(engine, engine), version.split("-")[0]
    return None, None


def _engine_and_version(engine: str, own: Optional[str], run: dict, row: dict) -> tuple[tuple, tuple]:
    target = run["target"]
    product, version = measured_server(run)
    paper = PAPER_PRODUCTS.get(target.get("engine"))
    if engine != own:
        field = ("differs", f"{product or target.get('engine')} measured, the paper's {engine} "
                            "(named by options.reference.engine)")
    elif product and paper and product != paper:
        field = ("differs", f"{product} {version} measured ({paper}-compatible, not {paper}), the paper's {engine}")
    else:
        field = ("matched", engine)
    if not version:
        ver = ("not stated", f"the run did not read its server's version; the paper's {row['version']}")
    elif engine == own and (not product or product == paper) and (
            version == row["version"] or version.startswith(row["version"] + ".")):
        ver = ("matched", row["version"])
    else:
        ver = ("differs", f"{product} {version} measured, the paper's {row['version']}")
    return field, ver


def _threads(family: str, run: dict) -> tuple[str, str]:
    n = run.get("threads")
    if family == "sysbench":
        return ("matched", f"{n}") if n == SYSBENCH_THREADS else \
            ("differs", f"{n} measured, the paper's stress level up to {SYSBENCH_THREADS}")
    if family == "ycsb" and n is not None:
        low, high = YCSB_THREADS
        return ("matched", f"{n}, within the papers' {low}-{high}") if low <= n <= high else \
            ("differs", f"{n} measured, the papers' {low}-{high} (128 typical)")
    return "not stated", ""


def _ycsb_records(run: dict, row: dict) -> Optional[tuple[str, str]]:
    """A differing record count against the papers' stated range, or None when within it."""
    records = run["workload"].get("recordcount")
    low, high = YCSB_RECORDS
    if records is None or low <= int(records) <= high:
        return None
    return "differs", (f"{int(records):,} records measured, the papers' {low // 10**6} M-{high // 10**6} M "
                       f"(this row: {row['data_volume']} volume)")


def _volume(family: str, run: dict, row: dict) -> tuple[str, str]:
    w = run["workload"]
    if family == "sysbench":
        tables, size = w.get("tables"), w.get("table_size")
        if (tables, size) == (SYSBENCH_TABLES, SYSBENCH_TABLE_SIZE):
            return "matched", f"{tables} x {size:,} rows"
        return "differs", (f"{tables} x {size:,} rows measured, the paper's {SYSBENCH_TABLES} x "
                           f"{SYSBENCH_TABLE_SIZE:,}" if tables and size else "")
    if family == "ycsb" and row.get("data_volume"):
        outside = _ycsb_records(run, row)
        if outside is not None:
            return outside
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
    engine, _ = reference_engine(run, family)
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
            engine_field, version_field = _engine_and_version(engine, own, run, row)
            fields = {"engine": engine_field, "version": version_field, "instance class": ("matched", label),
                      "threads": _threads(family, run), "data volume": _volume(family, run, row),
                      "test": ("matched", PAPER_TESTS.get(family) or run_test(family, run))}
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
