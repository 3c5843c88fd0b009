"""Whether a run's shards fit the memory they will run in, checked when a campaign is validated
(issue 57, item 7: fieldcount x fieldlength x batchsize large enough passed validation and the
shard died with an empty MemoryError).

A client thread's peak is its family's ``thread_memory`` (YCSB: a load batch's records or a
scan's, as Python strings), times ``COPIES`` for the driver's copy of them (the statement it
builds, the rows it decodes). Measured on this machine's test servers, a YCSB load batch of
15-131 MB of values raised a process's peak resident memory by 1.9-2.1 times the values on
SQLite, 2.4-2.9 on MongoDB, 2.9-3.1 on PostgreSQL and MariaDB; under ulimit -v 3 GB, 2 threads
of 626-MB batches (100 fields of 65,536 bytes, batchsize 100) loaded SQLite and died of an empty
MemoryError on PostgreSQL, as these factors say (2.5 GB and 3.7 GB).

Where it must fit: in the cloud, one worker function per shard, of the template's
WorkerMemorySize (DBSWARM_WORKER_MEMORY_MB, default 1,769 MB) less the function's own
``CLOUD_BASE_MB``; locally, every shard of a phase at once on this machine: its available
memory (MemAvailable, and the cgroup's memory.max where one is set), and each shard within the
address-space limit (ulimit -v) with its threads' stacks.
"""
from __future__ import annotations

import math
import os
import resource
import threading
from pathlib import Path
from typing import Any, Callable, Optional

from dbswarm.credentials.secrets import in_cloud
from dbswarm.families import base as families

WORKER_MEMORY_MB = 1769  # template.yaml WorkerMemorySize's default (campaign.cost prices it)
COPIES = 3           # the values and the driver's copy of them (measured 2.4-3.1 times; above)
ENGINE_COPIES = {"sqlite": 2, "noop": 1}   # SQLite measured 1.9-2.1 times; noop keeps no copy
CLOUD_BASE_MB = 160  # a worker function's own memory: the runtime, the drivers, boto3
SHARD_BASE_MB = 90   # a local shard process's own address space (VmSize after importing the drivers: 86 MB)
GB = 1024 ** 3


def memory_problems(runs: list, shards_of: Callable[[Any], int], cloud: Optional[bool] = None) -> list[str]:
    """One problem per run whose shards cannot hold what their client threads will hold.
    ``shards_of(run)``: the run's shard count, as it will be planned."""
    cloud = in_cloud() if cloud is None else cloud
    out: list[str] = []
    for run in runs:
        w = run.workload
        need = families.get(w.family).thread_memory(w)
        if need is None:
            continue
        per_thread, keys = need
        shards = max(1, shards_of(run))
        threads = math.ceil(w.threads / shards)
        copies = ENGINE_COPIES.get(run.target.engine, COPIES)
        shard = per_thread * copies * threads
        held = f"{threads:,} client threads per shard hold" if threads > 1 else "client thread holds"
        what = (f"{keys}: run {run.run_id}'s {held} about {_size(shard)} ({_size(per_thread)} of values each, "
                f"{copies} times with the {run.target.engine} driver's copy)")
        room = _cloud_room() if cloud else _local_room(shards, threads)
        if room is not None and shard > room[0]:
            spread = ", or spread the threads over more shards" if threads > 1 and room[2] else ""
            out.append(f"{what}; {room[1]}: lower {_lowest(keys)}{spread}")
    return out


def _lowest(keys: str) -> str:
    names = [k.strip().removeprefix("workload.") for k in keys.split("×")]
    return ", ".join(names[:-1]) + " or " + names[-1]


def _size(n: float) -> str:
    return f"{n / GB:,.1f} GB" if n >= GB else f"{n / 1024 ** 2:,.0f} MB"


def _cloud_room() -> tuple[int, str, bool]:
    """(bytes one shard may hold, what limits it, whether more shards would help)."""
    mb = int(os.environ.get("DBSWARM_WORKER_MEMORY_MB") or WORKER_MEMORY_MB)
    return (mb - CLOUD_BASE_MB) * 1024 ** 2, (f"a worker function has {mb:,} MB (template parameter "
                                              f"WorkerMemorySize), {CLOUD_BASE_MB} MB of it its own"), True


def _local_room(shards: int, threads: int) -> Optional[tuple[int, str, bool]]:
    """The most one shard may hold here: the available memory shared by the shards running at
    once, or the address-space limit of one shard process, whichever is lower."""
    rooms = []
    avail = available_memory()
    if avail is not None:
        rooms.append((avail[0] // shards, f"this machine has {_size(avail[0])} available ({avail[1]})"
                      + (f" for {shards:,} shards running at once" if shards > 1 else ""), False))
    limit = resource.getrlimit(resource.RLIMIT_AS)[0]
    if limit != resource.RLIM_INFINITY and limit > 0:
        stacks = threads * (threading.stack_size() or _default_stack())
        rooms.append((limit - SHARD_BASE_MB * 1024 ** 2 - stacks,
                      f"a shard process may map {_size(limit)} (ulimit -v), {SHARD_BASE_MB} MB of it its own and "
                      f"{_size(stacks)} its threads' stacks", True))
    return min(rooms) if rooms else None


def _default_stack() -> int:
    soft = resource.getrlimit(resource.RLIMIT_STACK)[0]
    return soft if 0 < soft != resource.RLIM_INFINITY else 8 * 1024 ** 2


def available_memory() -> Optional[tuple[int, str]]:
    """(bytes this machine can give now, where that figure comes from): MemAvailable, lowered to
    the room left under the cgroup's memory limit where one is set; None where neither is known."""
    found = []
    try:
        for line in Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemAvailable:"):
                found.append((int(line.split()[1]) * 1024, "MemAvailable"))
    except (OSError, ValueError, IndexError):
        pass
    for limit_file, usage_file in (("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory.current"),
                                   ("/sys/fs/cgroup/memory/memory.limit_in_bytes",
                                    "/sys/fs/cgroup/memory/memory.usage_in_bytes")):
        try:
            limit = Path(limit_file).read_text().strip()
            if limit != "max" and int(limit) < 1 << 60:
                used = int(Path(usage_file).read_text().strip())
                found.append((max(0, int(limit) - used), f"the cgroup's memory limit, {_size(int(limit))}"))
                break
        except (OSError, ValueError):
            continue
    return min(found) if found else None
