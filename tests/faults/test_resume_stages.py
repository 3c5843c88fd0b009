"""Issue 57, item 4: Ctrl-C twice during the step after the load (the secondary indexes) left
every load shard done and the step unfinished; `dbswarm resume` then went straight to the run
phase and called it complete with three of four indexes never built. Now a resume runs the
step after the load when it never finished (its record, ``prepare-after_load.json``, is written
only once its work is done), and the family builds the indexes that do not exist.

The campaign is brought where the double Ctrl-C leaves it: planned, prepared and loaded
through the service functions, one of the four indexes built (the step stopped inside its
work), no record of the step. PostgreSQL of this checkout's fault set (the sysbench tables'
names are fixed: never the shared test servers)."""
import json
import os

import pytest

from dbswarm.run import service
from tests import servers
from tests.faults.conftest import wait_gone

FAULT_DIR = os.environ.get("DBSWARM_FAULT_SERVERS_DIR") or "/tmp/dbswarm-faults-servers"
TABLES = 4


@pytest.fixture(scope="module")
def own_pg():
    return servers.start_servers(FAULT_DIR)


def _indexes(env) -> list[str]:
    with servers.pg_admin(env) as c:
        return sorted(r[0] for r in c.execute(
            "SELECT indexname FROM pg_indexes WHERE tablename LIKE 'sbtest%%' AND indexname LIKE 'k\\_%%'"))


def test_resume_builds_the_indexes_an_interrupted_after_load_left_out(tmp_path, own_pg, spawn):
    campaign = {"name": "faults-after-load", "seed": 6,
                "target": servers.target("postgresql", own_pg),
                "workload": {"family": "sysbench", "tables": TABLES, "table_size": 300, "threads": 2, "time": 2},
                "fanout": {"shards": 2}, "phases": ["prepare", "load", "run"]}
    results = str(tmp_path / "r")
    plan = service.plan_campaign({"campaign": campaign, "results": results})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": plan["runs"][0]["run_id"]}
    service.prepare_run(dict(base, stage="before_load"))
    armed = service.arm(dict(base, phase="load", lead_seconds=0))
    for i in range(plan["runs"][0]["shard_count"]):
        assert service.run_shard(dict(base, phase="load", shard=i, **armed))["status"] == "done"
    service.window(dict(base, phase="load", edge="end"))
    with servers.pg_admin(own_pg) as c:   # the interrupted step had built the first index only
        c.execute("CREATE INDEX k_1 ON sbtest1(k)")
    assert _indexes(own_pg) == ["k_1"]

    proc = spawn(["resume", plan["campaign_id"], "--results", results])
    out, err = proc.communicate(timeout=180)
    assert wait_gone(proc.pid, 10) == []
    assert proc.returncode == 0, err
    assert _indexes(own_pg) == [f"k_{n}" for n in range(1, TABLES + 1)]  # three were missing, before
    assert "after_load (secondary indexes)" in out + err
    result = json.loads(next((tmp_path / "r").glob("*/result.json")).read_text())
    assert result["status"] == "complete", result["runs"][0]["phases"]
    record = json.loads(next((tmp_path / "r").glob("*/runs/*/prepare-after_load.json")).read_text())
    assert not record.get("error"), record
    assert result["runs"][0]["phases"]["run"]["status"] == "complete"


def test_resume_leaves_a_finished_after_load_alone(tmp_path, own_pg, spawn):
    """The step's record written (its work done): a resume does not run it again."""
    campaign = {"name": "faults-after-load-done", "seed": 6,
                "target": servers.target("postgresql", own_pg),
                "workload": {"family": "sysbench", "tables": 1, "table_size": 100, "threads": 1, "time": 1},
                "fanout": {"shards": 1}, "phases": ["prepare", "load", "run"]}
    results = str(tmp_path / "r")
    plan = service.plan_campaign({"campaign": campaign, "results": results})
    base = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": plan["runs"][0]["run_id"]}
    service.prepare_run(dict(base, stage="before_load"))
    armed = service.arm(dict(base, phase="load", lead_seconds=0))
    assert service.run_shard(dict(base, phase="load", shard=0, **armed))["status"] == "done"
    service.window(dict(base, phase="load", edge="end"))
    service.prepare_run(dict(base, stage="after_load"))
    proc = spawn(["resume", plan["campaign_id"], "--results", results])
    out, err = proc.communicate(timeout=180)
    assert proc.returncode == 0, err
    assert "after_load" not in out + err
