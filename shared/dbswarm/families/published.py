"""Published white-paper figures (data/published_ops.csv, from the team's reference folder),
so a report can put a measurement beside the vendor's figure for the same instance class.

A target opts in by its label (the instance class, e.g. "4 vCPUs 16 GB") and may narrow
the match with ``options.reference``: any of engine, version, tier, topology, data_volume.
"""
from __future__ import annotations

import csv
import functools
from importlib import resources

FILTER_KEYS = ("engine", "version", "tier", "topology", "data_volume")


@functools.lru_cache(maxsize=1)
def published_rows() -> tuple[dict, ...]:
    with resources.files("dbswarm").joinpath("data/published_ops.csv").open(newline="") as fh:
        return tuple(csv.DictReader(fh))


def published_for(label: str, workloads: list[str], filters: dict | None = None) -> dict:
    """{(engine, version, tier, topology, data_volume): {workload: OPS}} for the label."""
    filters = {k: str(v) for k, v in (filters or {}).items() if k in FILTER_KEYS}
    out: dict[tuple, dict] = {}
    for row in published_rows():
        if row["instance_class"] != label or row["metric"] != "OPS" or row["workload"] not in workloads:
            continue
        if any(row[k] != v for k, v in filters.items()):
            continue
        key = tuple(row[k] for k in FILTER_KEYS)
        out.setdefault(key, {})[row["workload"]] = float(row["value"])
    return out
