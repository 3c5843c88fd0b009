"""A client thread blocked inside a database call must not hold the shard hostage: after
the stop instant plus shard_state.STUCK_THREAD_GRACE_S it is abandoned and reported, and what
every thread measured until then is written. Real PostgreSQL: another session holds an
ACCESS EXCLUSIVE lock on the table in an open transaction, so reads wait on it (lock_timeout
is 0: they would wait for ever)."""
from __future__ import annotations

import threading
import time

import pytest

from dbswarm.engine import shard_state
from dbswarm.results.store import open_store
from dbswarm.run.runtime import service
from tests import servers

pytestmark = [pytest.mark.servers]


def test_thread_stuck_on_a_lock_is_abandoned_and_the_rest_is_kept(tmp_path, monkeypatch):
    env = servers.start()
    monkeypatch.setattr(shard_state, "STUCK_THREAD_GRACE_S", 1.5)
    table = f"stuck_{int(time.time() * 1000) % 10**9}"
    campaign = {"name": "stuck", "seed": 5, "target": servers.target("postgresql", env),
                "workload": {"preset": "c", "recordcount": 500, "operationcount": 0, "maxexecutiontime": 2,
                             "threads": 2, "table": table},
                "fanout": {"shards": 1}, "phases": ["prepare", "load"]}
    loaded = service.run_steps(campaign, str(tmp_path / "load"),
                               lambda event, n: [service.run_shard(dict(event, shard=i)) for i in range(n)])
    assert loaded["status"] == "complete", loaded

    plan = service.plan_campaign({"campaign": dict(campaign, phases=["run"]), "results": str(tmp_path / "run")})
    event = {"store": plan["store"], "campaign_id": plan["campaign_id"], "run_id": plan["runs"][0]["run_id"],
             "phase": "run", "shard": 0}
    admin = servers.pg_admin(env)
    locked = threading.Event()

    def lock_after_some_reads():
        time.sleep(0.7)
        admin.autocommit = False
        admin.execute(f"LOCK TABLE {table} IN ACCESS EXCLUSIVE MODE")
        locked.set()
    locker = threading.Thread(target=lock_after_some_reads)
    try:
        locker.start()
        t0 = time.monotonic()
        out = service.run_shard(event)
        took = time.monotonic() - t0
        assert locked.is_set()
        # 2 s run + 1.5 s grace (+ connect and upload), not the lock's lifetime
        assert took < 8, took
        doc = open_store(plan["store"]).get_json(out["result_key"])
        errors = doc["segments"][0]["thread_errors"]
        assert len(errors) == 2 and all("abandoned" in e for e in errors), errors
        assert doc["segments"][0]["abandoned_threads"] == 2
        reads = doc["measurement"]["operations"]["READ"]["count"]
        assert reads > 0 and out["ops"] == reads  # the reads before the lock are kept
        # the phase ends at the stop instant (no thread returned), not after the grace period:
        # ops/s is not diluted by 1.5 s without operations
        agg = service.aggregate_campaign({"store": plan["store"], "campaign_id": plan["campaign_id"]})
        store = open_store(plan["store"])
        phase = store.get_json(agg["result_key"])["runs"][0]["phases"]["run"]
        assert phase["abandoned_threads"] == {"count": 2, "per_shard": {"0": 2}}
        assert 1.9 <= phase["duration_s"] <= 2.3, phase["duration_s"]
        assert phase["ops_per_s"] == pytest.approx(reads / phase["duration_s"], rel=1e-3)
        summary = store.get_text(store.key(plan["campaign_id"], "summary.md"))
        assert "**Client threads abandoned**" in summary and "run phase: 2 (shard 0: 2)" in summary
    finally:
        admin.rollback()
        admin.autocommit = True
        admin.execute(f"DROP TABLE IF EXISTS {table}")
        admin.close()
        locker.join()
