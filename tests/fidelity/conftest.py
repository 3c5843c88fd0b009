"""Fixtures of the fidelity tests: the real servers (tests/servers.py: scripts/test-servers,
nothing skipped), a database of their own on MariaDB and PostgreSQL (so that
pg_stat_statements can be filtered to it and no other test's tables are touched), and a
way to run a campaign in this process through dbswarm's service functions (the same
steps the state machine runs: plan, prepare, shards, aggregate)."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbswarm.engine.parallel import run_in_threads
from dbswarm.run.runtime import service
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
    def run_shards(event, shard_count):
        run_in_threads(lambda i: service.run_shard(dict(event, shard=i)), [(i,) for i in range(shard_count)])
    agg = service.run_steps(campaign, str(results_dir), run_shards, lead_seconds=0.2)
    return json.loads(service.open_store(agg["store"]).get_text(agg["result_key"]))
