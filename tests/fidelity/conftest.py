"""Fixtures of the fidelity tests: the real servers (tests/servers.py: scripts/test-servers,
nothing skipped), a database of their own on MariaDB and PostgreSQL (so that
pg_stat_statements can be filtered to it and no other test's tables are touched), and a
way to run a campaign in this process through dbswarm's service functions (the same
steps the state machine runs: plan, prepare, shards, aggregate)."""
from __future__ import annotations

import json
import threading
from pathlib import Path

import pytest

from dbswarm import service
from tests import servers

FIDELITY_DB = "dbswarm_fidelity"


@pytest.fixture(scope="session")
def server_env():
    return servers.start()


@pytest.fixture(scope="session")
def fidelity_targets(server_env):
    """engine -> campaign target in the fidelity database (created if missing)."""
    env = server_env
    con = servers.mysql_admin(env)
    with con.cursor() as cur:
        cur.execute(f"CREATE DATABASE IF NOT EXISTS {FIDELITY_DB}")
    con.close()
    with servers.pg_admin(env) as pg:
        if not pg.execute("SELECT 1 FROM pg_database WHERE datname = %s", (FIDELITY_DB,)).fetchone():
            pg.execute(f"CREATE DATABASE {FIDELITY_DB} OWNER dbswarm")
    out = {}
    for engine, key in (("mysql", "DBSWARM_TEST_MYSQL_URL"), ("postgresql", "DBSWARM_TEST_PG_URL")):
        t = servers.target(engine, env)
        t["url"] = env[key].rsplit("/", 1)[0] + "/" + FIDELITY_DB
        out[engine] = t
    return out


def run_inprocess(campaign: dict, results_dir: Path) -> dict:
    """Plan, prepare, run every shard of every phase (shards in parallel threads of this
    process: each shard still runs its own client threads), aggregate; the result document."""
    plan = service.plan_campaign({"campaign": campaign, "results": str(results_dir)})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"]}
    for run in plan["runs"]:
        rid = run["run_id"]
        if plan["has_prepare"]:
            service.prepare_run(dict(base, run_id=rid, stage="before_load"))
        for phase in ("load", "run"):
            if not plan[f"has_{phase}"]:
                continue
            ev = dict(base, run_id=rid, phase=phase, **service.arm({"lead_seconds": 0.2}))
            errors = []

            def shard(i, ev=ev):
                try:
                    service.run_shard(dict(ev, shard=i))
                except BaseException as exc:  # surfaced below
                    errors.append(exc)
            threads = [threading.Thread(target=shard, args=(i,)) for i in range(run["shard_count"])]
            for t in threads:
                t.start()
            for t in threads:
                t.join()
            if errors:
                raise errors[0]
            if phase == "load":
                service.prepare_run(dict(base, run_id=rid, stage="after_load"))
    agg = service.aggregate_campaign(base)
    store = service.open_store(plan["store"])
    return json.loads(store.get_text(agg["result_key"]))
