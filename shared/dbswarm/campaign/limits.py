"""What a deployment (or this machine) accepts in size: a campaign before its matrix is expanded,
the client threads one shard process can run, request sizes, and the numbers of a request (query
parameters of the API, a step's event).

  DBSWARM_MAX_RUNS, DBSWARM_MAX_SHARD_RUNS, DBSWARM_MAX_THREADS_PER_SHARD: the limits below, where a
  deployment sets them.
"""
from __future__ import annotations

import math
import os
import re
from typing import Any, Iterable, Optional

from dbswarm.errors import CampaignError

# ---- sizes ------------------------------------------------------------------------------------
MAX_RUNS = int(os.environ.get("DBSWARM_MAX_RUNS") or 1000)             # runs of one campaign's matrix
MAX_SHARD_CALLS = int(os.environ.get("DBSWARM_MAX_SHARD_RUNS") or 100_000)  # shards x runs of one campaign
MAX_BODY_BYTES = 256 * 1024                                               # a campaign file sent to the API
MAX_THREADS_PER_SHARD = int(os.environ.get("DBSWARM_MAX_THREADS_PER_SHARD") or 1024)
MAX_FIELD_BYTES = 65_536   # the value pool's size (families' generators cap a field there)
MAX_CALL_SECONDS = 24 * 3600
MAX_LEAD_SECONDS = 600


def matrix_size(matrix: Any) -> tuple[int, list[str]]:
    """The number of runs a matrix expands to, computed before expanding it; problems with its shape."""
    if not isinstance(matrix, dict):
        return 1, []
    n, problems = 1, []
    for axis, values in matrix.items():
        if not isinstance(values, list):
            problems.append(f"matrix.{axis}: expected a list of values")
            continue
        n *= max(len(values), 1)
    return n, problems


def repeat_factor(repeat: Any) -> int:
    """Runs per matrix cell: repeat.count, twice that when a baseline configuration is
    interleaved (B A B A). A malformed repeat counts as 1 (its validation names it)."""
    if isinstance(repeat, int) and not isinstance(repeat, bool):
        count: Any = repeat
        baseline: Any = None
    elif isinstance(repeat, dict):
        count, baseline = repeat.get("count"), repeat.get("baseline")
    else:
        return 1
    if not isinstance(count, int) or isinstance(count, bool) or count < 1:
        return 1
    return count * (2 if baseline else 1)


def check_campaign_size(data: Any) -> None:
    """Refuse a campaign whose matrix or shards x runs are beyond the limits, before the matrix
    is expanded (a 10 KB file can expand to a million runs)."""
    if not isinstance(data, dict):
        return
    runs, problems = matrix_size(data.get("matrix"))
    repeats = repeat_factor(data.get("repeat"))
    if runs * repeats > MAX_RUNS:
        how = f"{runs:,} cells x {repeats:,} repeated runs = " if repeats > 1 else ""
        field = "matrix" if runs > MAX_RUNS else "repeat"
        problems.append(f"{field}: expands to {how}{runs * repeats:,} runs; at most "
                        f"{MAX_RUNS:,} per campaign (split it into several campaigns)")
    runs *= repeats
    fanout: dict = data["fanout"] if isinstance(data.get("fanout"), dict) else {}
    threads = _max_threads(data)
    shards = fanout.get("shards")
    if not isinstance(shards, int) or isinstance(shards, bool):
        tps = fanout.get("threads_per_shard")
        shards = math.ceil(threads / tps) if isinstance(tps, int) and tps > 0 and threads else 1
    if isinstance(shards, int) and runs <= MAX_RUNS and shards * runs > MAX_SHARD_CALLS:
        problems.append(f"fanout: {shards:,} shards x {runs:,} runs = {shards * runs:,} shard phases; at most "
                        f"{MAX_SHARD_CALLS:,} per campaign")
    if problems:
        raise CampaignError(problems)


def _max_threads(data: dict) -> int:
    values: list[int] = []
    w = data.get("workload")
    if isinstance(w, dict) and isinstance(w.get("threads"), int):
        values.append(w["threads"])
    m = data.get("matrix")
    if isinstance(m, dict):
        for v in m["threads"] if isinstance(m.get("threads"), list) else []:
            if isinstance(v, int):
                values.append(v)
        for wl in m["workload"] if isinstance(m.get("workload"), list) else []:
            if isinstance(wl, dict) and isinstance(wl.get("threads"), int):
                values.append(wl["threads"])
    return max(values, default=1)


def threads_per_shard_problems(runs: Iterable[Any], shard_counts: dict[str, int]) -> list[str]:
    """One shard process runs its client threads under one GIL: beyond MAX_THREADS_PER_SHARD
    they only wait for each other (100,000 threads measured 0 operations in 150 s)."""
    out = []
    for run in runs:
        n = shard_counts.get(run.run_id) or 1
        per = math.ceil(run.workload.threads / n)
        if per > MAX_THREADS_PER_SHARD:
            out.append(f"workload.threads: run {run.run_id} puts {per:,} client threads in one shard; one shard "
                       f"process runs at most {MAX_THREADS_PER_SHARD:,} (set fanout.shards or "
                       "fanout.threads_per_shard to spread them)")
    return out


# ---- numbers from a request -------------------------------------------------------------------

def positive_number(value: Any, name: str, maximum: float, *, allow_zero: bool = False) -> Optional[float]:
    """A finite number in (0, maximum] (or [0, maximum]); None for absent. ValueError names ``name``."""
    if value is None or value == "":
        return None
    try:
        x = float(value)
    except (TypeError, ValueError):
        raise ValueError(f"{name}: expected a number, got {str(value)[:40]!r}") from None
    if not math.isfinite(x) or x < 0 or (x == 0 and not allow_zero) or x > maximum:
        raise ValueError(f"{name}: expected a number {'>=' if allow_zero else '>'} 0 and <= {maximum:g}, got {value!r}")
    return x


def positive_int(value: Any, name: str, maximum: int) -> Optional[int]:
    if value is None or value == "":
        return None
    if not re.fullmatch(r"\s*[0-9]+\s*", str(value)):
        raise ValueError(f"{name}: expected a whole number from 1 to {maximum}, got {str(value)[:40]!r}")
    x = int(value)
    if x < 1 or x > maximum:
        raise ValueError(f"{name}: expected a whole number from 1 to {maximum}, got {x}")
    return x
