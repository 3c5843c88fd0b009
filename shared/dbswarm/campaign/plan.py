"""Split each run of a campaign into shards (a pure function of the campaign).

Shard i of a run gets: a contiguous share of the client threads (global thread indexes
``thread_offset .. thread_offset + threads - 1``), the load ranges of its threads (the
family splits the load over the run's threads: ``Family.split_load``), the operation count
and target rate of its threads (threads share both evenly, remainders to the first), and
its own seed derived from the campaign seed.
"""
from __future__ import annotations

import hashlib
from typing import Any

from dbswarm import bindings
from dbswarm.campaign.fanout_auto import client_model_for
from dbswarm.campaign.limits import threads_per_shard_problems
from dbswarm.campaign.spec import Campaign, Run, auto_fanout, shard_count
from dbswarm.documents import Plan, RunPlan, ShardPlan
from dbswarm.errors import CampaignError
from dbswarm.families import base as families
from dbswarm.families.base import split

INLINE_MAP_LIMIT = 40  # above this many shards the state machine uses a Distributed Map


def derive_seed(seed: int, *path: Any) -> int:
    digest = hashlib.sha256("/".join(str(p) for p in (seed, *path)).encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


def plan_run(campaign: Campaign, run: Run, cpu_count: int | None = None) -> list[ShardPlan]:
    w = run.workload
    family = families.get(w.family)
    threads = w.threads
    n = shard_count(campaign, threads, cpu_count, run)
    per_shard_threads = split(threads, n)
    limits = family.limits(w)
    rate = limits.rate
    thread_ops = split(limits.count, threads)
    thread_loads = family.split_load(w, threads)
    shards, t0 = [], 0
    for i, t in enumerate(per_shard_threads):
        loads = thread_loads[t0:t0 + t]
        shards.append(ShardPlan(
            index=i, threads=t, thread_offset=t0,
            load_start=loads[0][0], load_count=sum(c for _, c in loads),
            operationcount=sum(thread_ops[t0:t0 + t]),
            target=(rate * t / threads) if rate else None,
            seed=derive_seed(campaign.seed, _seed_index(run), i),
            thread_ops=thread_ops[t0:t0 + t], thread_load=loads))
        t0 += t
    return shards


def _seed_index(run: Run) -> int:
    """Repetitions of a cell (and its baseline configuration) draw the same operations."""
    return run.index if run.seed_index is None else run.seed_index


def make_plan(campaign: Campaign, runs: list[Run], campaign_id: str, cpu_count: int | None = None,
              sqlite_url: str | None = None) -> Plan:
    """The plan document (plan.json): everything a worker needs, no secrets."""
    out_runs = []
    for run in runs:
        target = run.target.model_dump(mode="json", exclude_none=True)
        engine = bindings.engine(run.target.engine)
        if not run.target.url and engine.embedded:
            target["url"] = sqlite_url  # the embedded database's file under the campaign's folder
        shards = plan_run(campaign, run, cpu_count)
        out_runs.append(RunPlan(
            index=run.index, run_id=run.run_id, axes=run.axes, target=target,
            workload=run.workload.model_dump(mode="json"), family=run.workload.family,
            workload_name=run.workload.name, seed=derive_seed(campaign.seed, _seed_index(run)),
            cell=run.cell, arm=run.arm, repeat=run.repeat, search_step=run.search_step,
            is_real_database=engine.is_real_database,
            operation_total=families.get(run.workload.family).limits(run.workload).count,
            threads=run.workload.threads, shard_count=len(shards),
            map_mode="DISTRIBUTED" if len(shards) > INLINE_MAP_LIMIT else "INLINE", shards=shards,
            fanout=auto_fanout(campaign, run, run.workload.threads, cpu_count)
            if campaign.fanout.threads_per_shard == "auto" and not campaign.fanout.shards else None,
            client_model=client_model_for(campaign.fanout.client_model, target, run.workload.threads,
                                          len(shards))))
    problems = threads_per_shard_problems(runs, {r.run_id: r.shard_count for r in out_runs})
    if problems:
        raise CampaignError(problems)
    return Plan(campaign_id=campaign_id, name=campaign.name, seed=campaign.seed, phases=list(campaign.phases),
                runs=out_runs, max_error_rate=campaign.results.max_error_rate,
                start_lead_s=campaign.fanout.start_lead_s,
                metrics=campaign.results.metrics.model_dump(exclude_none=True) or None)


def check_shard_limit(shard_counts: dict[str, int], limit: int) -> None:
    """A deployment caps the shards of one run (template parameter MaxShards): checked when
    the API accepts a campaign and again when the state machine plans it (a schedule or a
    direct execution does not pass the API)."""
    problems = [f"fanout: run {run_id} needs {n} shards, this deployment allows {limit} (parameter MaxShards)"
                for run_id, n in shard_counts.items() if limit and n > limit]
    if problems:
        raise CampaignError(problems)
