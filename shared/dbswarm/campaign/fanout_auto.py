"""``fanout: {threads_per_shard: auto}``: as many client threads per shard as its CPU can
carry with headroom (issue 31; docs/client-health.md).

A client thread of a closed loop uses ``c / cycle`` of a CPU: its client CPU per operation
(``c``: the driver, the generator, the recording) over the time one operation takes from
call to call (``cycle``: the client's CPU plus the round trip and the server's time). A
shard's Python runs on one CPU at a time (less on a Lambda below 1,769 MB), so a shard
carries ``headroom × capacity × cycle / c`` threads before its own CPU, not the database,
sets the pace. ``c`` and ``cycle`` come from ``CLIENT_COST``: one client thread alone against
the engine on the test machine, where the round trip is a loopback's and the server idle —
the shortest cycle, so the most threads' demand a shard can meet (a real network's round trip
makes each thread lighter: the plan errs towards more shards).

Locally the shards share this machine's CPUs: more shard processes than CPUs only take the
CPU from each other (docs/decisions/0002-one-process-per-shard.md), so the plan keeps one shard per usable CPU at
most and says how many CPUs the campaign needs; in the cloud every shard is its own function.
"""
from __future__ import annotations

import math
import os
from typing import Any, Optional

from dbswarm.bindings.endpoints import target_endpoints
from dbswarm.campaign.admission import host_allowed

LAMBDA_MB_PER_VCPU = 1769  # AWS Lambda docs, "Memory and computing power" (measure/headroom.py)

# (family, engine) -> (client CPU µs per operation, µs per operation from call to call), one
# client thread, 6 s of YCSB a zipfian (20,000 records) / sysbench oltp_read_only (2 x 10,000
# rows; an operation is a transaction), the server on the same 2 CPUs, 2026-11-26 18:18 UTC,
# load average 7-9 from other sessions (python bench/client_cost_table.py; docs/client-health.md)
CLIENT_COST = {
    ("ycsb", "postgresql"): (44.6, 208.2),
    ("ycsb", "mysql"): (65.9, 236.3),
    ("sysbench", "postgresql"): (718.6, 2510.2),
    ("sysbench", "mysql"): (883.3, 5811.2),
}
# a family or engine not measured: YCSB on MariaDB's (0.28 of a CPU a thread: the heaviest of
# the one-statement workloads measured)
DEFAULT_COST = (65.9, 236.3)
NOOP_COST = (2.5, 2.5)  # the noop engine answers at once: a thread is all client (bench/generator_cost.py)


def client_cost(family: str, engine: str) -> tuple[tuple[float, float], str]:
    if engine == "noop":
        return NOOP_COST, "noop: the client's own work only"
    cost = CLIENT_COST.get((family, engine))
    if cost:
        return cost, f"measured: {family} on {engine}, one thread"
    return DEFAULT_COST, f"not measured for {family} on {engine}: YCSB on MariaDB's figures"


def shard_capacity(in_cloud: bool, worker_memory_mb: Optional[int] = None) -> float:
    """One CPU of Python per shard; on a Lambda below 1,769 MB, its memory's share of a vCPU."""
    if in_cloud:
        mb = worker_memory_mb or int(os.environ.get("DBSWARM_WORKER_MEMORY_MB") or LAMBDA_MB_PER_VCPU)
        return min(1.0, mb / LAMBDA_MB_PER_VCPU)
    return 1.0


def auto_plan(family: str, engine: str, threads: int, headroom: float, cpus: int, in_cloud: bool,
              max_shards: int, worker_memory_mb: Optional[int] = None) -> dict:
    """{threads_per_shard, shards (planned), shards_needed, cpus_needed, cpus (locally), note}."""
    (c, cycle), source = client_cost(family, engine)
    demand = c / cycle  # CPUs one thread uses
    capacity = shard_capacity(in_cloud, worker_memory_mb)
    per_shard = max(1, math.floor(headroom * capacity / demand))
    needed = min(math.ceil(threads / per_shard), max_shards, threads)
    out = {"threads_per_shard": "auto", "headroom": headroom, "client_us_per_op": c, "cycle_us": cycle,
           "cost_source": source, "thread_cpu": round(demand, 4), "shard_capacity": round(capacity, 3),
           "max_threads_per_shard": per_shard, "shards_needed": needed}
    if in_cloud:
        out["shards"] = needed
        out["note"] = (f"{threads} threads at {per_shard} per shard ({demand:.2f} of a CPU each, {headroom:.0%} of "
                       f"a shard's {capacity:.2f} vCPU): {needed} shards")
        return out
    # locally the client's CPUs: every thread's demand with headroom (the server's own CPU not counted)
    cpus_needed = math.ceil(threads * demand / headroom)
    out.update(cpus=cpus, cpus_needed=cpus_needed, shards=max(1, min(needed, cpus)))
    if needed <= cpus and cpus_needed <= cpus:
        out["note"] = (f"{threads} threads at {per_shard} per shard ({demand:.2f} of a CPU each, {headroom:.0%} "
                       f"headroom): {needed} shards on {cpus} CPUs")
    else:
        out["note"] = (f"this campaign needs {max(cpus_needed, needed)} CPUs for its client ({threads} threads at "
                       f"{demand:.2f} of a CPU each, {headroom:.0%} headroom: {needed} shards of at most "
                       f"{per_shard} threads), this machine gives it {cpus}: planned {out['shards']} shards; expect "
                       "a client verdict near or bound (run it in the cloud, or with fewer threads)")
        out["short_of_cpus"] = True
    return out


# fanout.client_model auto: the multiplexed model where it measured ahead of a thread per
# connection through `dbswarm run` (docs/concurrency.md): shards of 64+ connections whose
# CPUs the database server shares (1.06-1.42x the operations per second at 0.5-0.9x the
# client CPU per operation, YCSB a/c/f and sysbench oltp_read_write on PostgreSQL and
# MariaDB). With the server on CPUs of its own the two were level (0.88-1.06x), and with a
# few connections per shard not ahead on both engines: threads there.
MULTIPLEX_MIN_THREADS = 64
LOOPBACK_NETS = "127.0.0.0/8,::1/128,localhost"


def client_model_for(requested: str, target: dict, threads: int, shards: int) -> str:
    """The client model a run's shards use: ``requested`` unless it is ``auto``, which is
    ``multiplexed`` where each shard holds at least MULTIPLEX_MIN_THREADS connections and the
    target's server is on this machine (every host a loopback address or ``localhost``, or a
    unix socket: it shares the client's CPUs), else ``threads``. No name is resolved."""
    if requested != "auto":
        return requested
    if shards < 1 or threads // shards < MULTIPLEX_MIN_THREADS:
        return "threads"
    hosts, sockets, problems = target_endpoints(target)
    if problems or not (hosts or sockets):
        return "threads"
    local = all(host_allowed(h, LOOPBACK_NETS, resolve=_no_resolution) for h in hosts)
    return "multiplexed" if local else "threads"


def _no_resolution(host: Any, port: Any) -> None:
    raise OSError("not resolved")  # a name other than localhost is not taken for this machine
