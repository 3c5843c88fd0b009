"""``fanout: {adaptive: true}``: a run whose load generator was the bottleneck (client verdict
bound; docs/client-health.md) is run again with twice the shards, until it is not, the shards
cannot double (max_shards, the deployment's MaxShards, the threads; locally this machine's
CPUs: more shard processes than CPUs only share them), or ``adaptive_max`` doublings. The state
machine's loop of a peak search carries it: the plan step plans the first run, and after each
run NextStep (``service.next_step``) calls ``advance``, which records the attempt in
``adaptive.json`` and plans the next run (the same cell with twice the shards, or the next
cell). Every attempt is a run of the result, with its shard data; result.json's ``adaptive``
says what each cell took.
"""
from __future__ import annotations

from typing import Any, Optional

from dbswarm.campaign.measured import MeasuredPhase
from dbswarm.campaign.plan import check_shard_limit, make_plan
from dbswarm.campaign.spec import Campaign, Run, Target, usable_cpus
from dbswarm.credentials.secrets import in_cloud
from dbswarm.errors import CampaignError
from dbswarm.families import base as families


def _cell(run: Run) -> dict:
    return {"cell": run.run_id, "index": run.index, "axes": run.axes,
            "target": run.target.model_dump(mode="json", exclude_none=True),
            "workload": run.workload.model_dump(mode="json"), "repeat": run.repeat, "arm": run.arm,
            "of_cell": run.cell, "seed_index": run.seed_index if run.seed_index is not None else run.index,
            "attempts": []}


def _run_of(cell: dict, index: int, shards: Optional[int]) -> Run:
    fam = families.get(cell["workload"]["family"])
    run_id = cell["cell"] if shards is None else f"{cell['cell']}-shards{shards}"[:80]
    return Run(index=index, run_id=run_id, target=Target.model_validate(cell["target"]),
               workload=fam.workload(cell["workload"]), axes=cell["axes"], cell=cell.get("of_cell"),
               arm=cell.get("arm"), repeat=cell.get("repeat"), seed_index=cell["seed_index"])


def first_run(campaign: Campaign, runs: list[Run]) -> tuple[list[Run], dict]:
    """The first cell's run (planned as the campaign says) and adaptive.json's content."""
    doc: dict[str, Any] = {"schema_version": 1, "kind": "adaptive", "max_doublings": campaign.fanout.adaptive_max, "current": 0,
           "cells": [_cell(r) for r in runs]}
    return [_run_of(doc["cells"][0], 0, None)], doc


def _campaign(campaign_doc: dict, plan: Any, shards: Optional[int]) -> Campaign:
    fanout = dict(campaign_doc.get("fanout") or {})
    if shards is not None:
        fanout.update(shards=shards, threads_per_shard=None)
    return Campaign.model_validate({**{k: campaign_doc[k] for k in ("name", "seed", "phases") if k in campaign_doc},
                                    "fanout": fanout, "results": {"max_error_rate": plan.max_error_rate}})


def _limit(campaign: Campaign, threads: int, max_shards: int) -> tuple[int, str]:
    """The most shards a re-run may have, and what sets it."""
    limits = [(campaign.fanout.max_shards, "fanout.max_shards"), (threads, "one thread per shard")]
    if max_shards:
        limits.append((max_shards, "the deployment's MaxShards"))
    if not in_cloud():
        limits.append((usable_cpus(), "this machine's CPUs (more shard processes than CPUs only share them)"))
    return min(limits, key=lambda x: x[0])


def advance(doc: dict, plan: Any, last_run: Any, phase: MeasuredPhase, campaign_doc: dict,
            max_shards: int = 0) -> Any:
    """Record the attempt ``last_run`` measured (``phase``: its run phase, else its load phase)
    and return the next RunPlan (None: done)."""
    cell = doc["cells"][doc["current"]]
    client = phase.client
    verdict = client.get("verdict")
    cell["attempts"].append({"run_id": last_run.run_id, "shards": last_run.shard_count,
                             "threads": last_run.threads, "verdict": verdict, "status": phase.status,
                             "reason": client.get("reason")})
    index = len(plan.runs)
    embedded = next((r.target.get("url") for r in plan.runs if r.target.get("engine") == cell["target"]["engine"]),
                    None)
    if verdict == "bound" and not client.get("allowed"):
        doublings = len(cell["attempts"]) - 1
        shards = last_run.shard_count * 2
        limit, why = _limit(_campaign(campaign_doc, plan, None), last_run.threads, max_shards)
        if doublings >= doc["max_doublings"]:
            cell["stop"] = f"still bound after {doublings} doubling(s) (fanout.adaptive_max)"
        elif shards > limit:
            cell["stop"] = f"still bound at {last_run.shard_count} shards: {shards} exceed {limit}, {why}"
        else:
            try:
                new = make_plan(_campaign(campaign_doc, plan, shards), [_run_of(cell, index, shards)], plan.campaign_id, sqlite_url=embedded).runs[0]
                check_shard_limit({new.run_id: new.shard_count}, max_shards)
                return new
            except CampaignError as err:
                cell["stop"] = f"still bound at {last_run.shard_count} shards: {'; '.join(err.problems)}"
    else:
        cell["stop"] = (f"{verdict} at {last_run.shard_count} shard(s)" if verdict else
                        "no client verdict (the run did not measure)")
    doc["current"] += 1
    if doc["current"] >= len(doc["cells"]):
        return None
    nxt = doc["cells"][doc["current"]]
    return make_plan(_campaign(campaign_doc, plan, None), [_run_of(nxt, index, None)], plan.campaign_id,
                     sqlite_url=embedded).runs[0]
