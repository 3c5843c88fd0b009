"""What a campaign will use in the cloud, before it runs, and what that costs.

The estimate follows the state machine (statemachines/campaign.asl.json) call by call:

- **Lambda**: every worker call of every shard of every phase (a shard longer than one call,
  ``WorkerTimeoutSeconds`` less the 15 s a call keeps for its result, continues in further
  calls: counted), at ``WorkerMemorySize``; plan, prepare / window / arm calls (2 per run and 2
  per sharded phase), aggregate and compare at their own memory for ``SHORT_CALL_S`` each.
  GB-seconds = calls' seconds x memory in GB.
- **Step Functions** (standard workflow) state transitions: 5 per campaign, 7 per run, 5 per
  sharded phase, 1 per shard and phase plus 2 per worker call (Work, Continue?), and for a
  Distributed Map 1 more per child execution; a peak search 2 more per step (NextStep, More?). (The count matches local mode's execution
  trace: tests/unit/test_cost.py.)
- **S3** requests: the campaign's files, one shard file written per worker call and read by the
  aggregate step and each continuation, the plan read by each call, the result files.

A peak search (``search``) is estimated over every step it could run (an upper bound: the
geometric steps up to ``max``, the refine steps at the largest value, capped by
``max_steps``), so ``max_cost`` and the deployment's cap protect a search too.

A phase's length: a run with a time limit lasts that long (plus the start barrier's lead); a
count-bound run or a load is estimated at ``ASSUMED_OPS_PER_THREAD_S`` operations per client
thread and second, ``ASSUMED_LOAD_ROWS_PER_S`` rows per shard and second (said in the
estimate's ``assumptions``). Prices are data (``data/prices.json``: date and region stated;
``DBSWARM_PRICES`` names a JSON file of overrides).
"""
from __future__ import annotations

import json
import math
import os
from importlib import resources
from typing import Any, Optional

from dbswarm.campaign.memory import WORKER_MEMORY_MB  # template.yaml WorkerMemorySize's default
from dbswarm.campaign.plan import INLINE_MAP_LIMIT, plan_run
from dbswarm.campaign.search import possible_steps
from dbswarm.documents import ShardPlan
from dbswarm.errors import DbswarmError
from dbswarm.families import base as families

WORKER_TIMEOUT_S = 900       # WorkerTimeoutSeconds' default
CALL_RESERVE_S = 15          # a worker call stops this long before its limit
OTHER_MEMORY_MB = {"plan": 512, "prepare": 512, "aggregate": 1769, "compare": 512}
SHORT_CALL_S = 2.0           # an un-sharded call's assumed length
CALL_OVERHEAD_S = 1.0        # start-up, result write
ASSUMED_OPS_PER_THREAD_S = 1000
ASSUMED_LOAD_ROWS_PER_S = 5000
LEAD_S = 1.0                 # the start barrier's lead (DEFAULT_LEAD_SECONDS)


def prices() -> dict:
    table = json.loads(resources.files("dbswarm").joinpath("data", "prices.json").read_text())
    path = os.environ.get("DBSWARM_PRICES")
    if path:
        try:
            table.update(json.loads(open(path).read()))
        except (OSError, ValueError) as err:
            raise DbswarmError(f"DBSWARM_PRICES={path}: {err}") from None
    return table


def _phase_seconds(fam: Any, w: Any, phase: str, shard: ShardPlan, assumptions: set[str]) -> float:
    if phase == "load":
        rows = getattr(shard, "load_count", 0) or 0
        if rows:
            assumptions.add(f"a load writes {ASSUMED_LOAD_ROWS_PER_S:,} rows/s per shard")
        return rows / ASSUMED_LOAD_ROWS_PER_S
    limits = fam.limits(w)
    if limits.time:
        return float(limits.time)
    count = shard.operationcount or 0
    if count:
        assumptions.add(f"a run without a time limit does {ASSUMED_OPS_PER_THREAD_S:,} operations/s per client thread")
        return count / (ASSUMED_OPS_PER_THREAD_S * max(1, shard.threads))
    return 0.0


def estimate(campaign: Any, runs: Any, *, worker_memory_mb: Optional[int] = None,
             worker_timeout_s: Optional[int] = None,
             cpu_count: Optional[int] = 1, price_table: Optional[dict] = None) -> dict:
    """The cloud usage and price of ``campaign`` (spec.load_campaign's pair) on a deployment
    with the given worker memory and time limit (template.yaml's defaults when not given)."""
    mem = (worker_memory_mb or int(os.environ.get("DBSWARM_WORKER_MEMORY_MB") or WORKER_MEMORY_MB)) / 1024
    timeout = worker_timeout_s or int(os.environ.get("DBSWARM_WORKER_TIMEOUT_S") or WORKER_TIMEOUT_S)
    per_call = max(1.0, timeout - CALL_RESERVE_S)
    p = price_table or prices()
    sharded = [ph for ph in ("load", "run") if ph in campaign.phases]
    assumptions: set[str] = set()
    search_steps = 0
    if getattr(campaign, "search", None):
        runs = possible_steps(campaign, runs)
        search_steps = len(runs)
        assumptions.add(f"a peak search is counted as an upper bound: every geometric step up to search.max and "
                        f"each refine step at the largest value, at most max_steps per cell ({search_steps} runs)")
    worker_calls = worker_s = 0.0
    transitions = 5 + 7 * len(runs)
    puts = 2 + 5 + 1       # campaign.json, plan.json; the result files; execution trace
    gets = 0
    other_calls = {"plan": 1 + search_steps, "aggregate": 1, "prepare": 0,
                   "compare": 1 if campaign.results.baseline else 0}
    transitions += 2 * search_steps  # NextStep and More? after each search step
    for run in runs:
        shards = plan_run(campaign, run, cpu_count=cpu_count)
        fam = families.get(run.workload.family)
        distributed = len(shards) > INLINE_MAP_LIMIT  # a Distributed Map, items in S3
        puts += 1 if distributed else 0
        other_calls["prepare"] += 2 + 2 * len(sharded)
        for phase in sharded:
            transitions += 5
            puts += 2  # the server counters' window edges
            for shard in shards:
                seconds = _phase_seconds(fam, run.workload, phase, shard, assumptions) + LEAD_S
                calls = max(1, math.ceil(seconds / per_call))
                worker_calls += calls
                worker_s += seconds + calls * CALL_OVERHEAD_S
                transitions += 1 + 2 * calls + (1 if distributed else 0)
                puts += calls
                gets += 1 + calls + (calls - 1)  # aggregate reads it; each call reads the plan; continuations
    other_gb_s = sum(n * SHORT_CALL_S * OTHER_MEMORY_MB[k] / 1024 for k, n in other_calls.items())
    gb_s = worker_s * mem + other_gb_s
    requests = int(worker_calls + sum(other_calls.values()))
    cost = {"lambda_compute": gb_s * p["lambda_gb_second"], "lambda_requests": requests * p["lambda_request"],
            "step_functions": transitions * p["sfn_state_transition"],
            "s3": puts * p["s3_put"] + gets * p["s3_get"]}
    return {
        "lambda": {"gb_seconds": round(gb_s, 1), "requests": requests, "worker_calls": int(worker_calls),
                   "worker_seconds": round(worker_s, 1), "worker_memory_mb": round(mem * 1024)},
        "step_functions": {"state_transitions": transitions},
        "s3": {"put_requests": puts, "get_requests": gets},
        "price": {k: round(v, 6) for k, v in cost.items()} | {"total": round(sum(cost.values()), 4)},
        "prices": {"date": p["date"], "region": p["region"], "currency": p.get("currency", "USD")},
        "assumptions": sorted(assumptions),
    }


def check_max_cost(est: dict, campaign_max: Optional[float], deployment_max: Optional[float] = None) -> None:
    """Refuse a campaign whose estimate exceeds its ``max_cost`` or the deployment's cap
    (``DBSWARM_MAX_COST``, template parameter MaxCampaignCost), before anything runs."""
    if deployment_max is None:
        deployment_max = float(os.environ.get("DBSWARM_MAX_COST") or 0) or None
    parts = [v for k, v in est["price"].items() if k != "total"]
    total, cur = (sum(parts) if parts else est["price"]["total"]), est["prices"]["currency"]  # the parts: 6 decimals
    for limit, what in ((campaign_max, "the campaign's max_cost"), (deployment_max, "this deployment's cap "
                                                                    "(MaxCampaignCost)")):
        if limit is not None and total > limit:
            raise DbswarmError(
                f"max_cost: the campaign would cost about {money(total)} {cur}, over {what} of {money(limit)} {cur} "
                f"({summary(est)})")


def money(v: float) -> str:
    """An amount with at least three significant digits: 0.1226, 0.0500, but 0.000100 (a cap
    of a hundredth of a cent is not "0.0000")."""
    if not v:
        return "0"
    return f"{v:,.{max(4, 2 - math.floor(math.log10(abs(v))))}f}"


def summary(est: dict) -> str:
    return (f"Lambda {est['lambda']['gb_seconds']:,.1f} GB-s in {est['lambda']['requests']:,} requests, "
            f"Step Functions {est['step_functions']['state_transitions']:,} state transitions, "
            f"S3 {est['s3']['put_requests']:,} PUT + {est['s3']['get_requests']:,} GET; "
            f"about {est['price']['total']:,.4f} {est['prices']['currency']} at {est['prices']['region']} prices "
            f"of {est['prices']['date']}")
