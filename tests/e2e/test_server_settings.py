"""Every result states the server's version and durability settings as the server reports
them (the white papers state them beside every figure), and a server that will not tell is a
warning in the result, not a failure."""
from __future__ import annotations

import pytest

from dbswarm.results.store import open_store
from dbswarm.run.runtime import service
from tests import servers

pytestmark = [pytest.mark.servers]


def _campaign(engine, env, table):
    return {"name": f"settings-{engine}", "target": servers.target(engine, env),
            "workload": {"preset": "c", "recordcount": 100, "operationcount": 200, "table": table},
            "phases": ["prepare", "load", "run", "cleanup"], "fanout": {"shards": 1}}


def _run(campaign, tmp_path):
    out = service.run_steps(campaign, str(tmp_path), lambda ev, n: [service.run_shard(dict(ev, shard=i))
                                                                    for i in range(n)], lead_seconds=0)
    store = open_store(out["store"])
    return store.get_json(out["result_key"]), store.get_text(store.key(out["campaign_id"], "summary.md"))


@pytest.mark.parametrize("engine", ("postgresql", "mysql"))
def test_durability_settings_are_in_the_result_and_the_summary(engine, tmp_path):
    env = servers.start()
    result, summary = _run(_campaign(engine, env, f"settings_{engine}"), tmp_path)
    settings = result["runs"][0]["phases"]["run"]["binding_settings"]["server"]
    if engine == "postgresql":
        with servers.pg_admin(env) as con:
            for name in ("fsync", "synchronous_commit", "wal_sync_method", "full_page_writes"):
                assert settings[name] == con.execute(f"SHOW {name}").fetchone()[0], name
            assert settings["server_version"] == con.execute("SHOW server_version").fetchone()[0]
    else:
        con = servers.mysql_admin(env)
        with con.cursor() as cur:
            cur.execute("SELECT @@innodb_flush_log_at_trx_commit, @@sync_binlog, @@log_bin, @@version")
            flush, sync, log_bin, version = cur.fetchone()
        con.close()
        assert settings["innodb_flush_log_at_trx_commit"] == str(flush) and settings["sync_binlog"] == str(sync)
        assert settings["log_bin"] == ("ON" if log_bin else "OFF") and settings["server_version"] == version
    label = servers.target(engine, env)["label"]
    line = next(line for line in summary.splitlines() if line.startswith(f"- **{label}**"))
    assert "server_version" in line and ("fsync" in line or "innodb_flush_log_at_trx_commit" in line)


def test_a_server_that_will_not_tell_is_a_warning_not_a_failure(tmp_path, monkeypatch):
    from dbswarm.bindings.sqlite import SqliteBinding

    def refuse(self):
        raise PermissionError("permission denied for view pg_settings")
    monkeypatch.setattr(SqliteBinding, "server_settings", refuse)
    result, _ = _run({"name": "refused", "workload": {"preset": "c", "recordcount": 50, "operationcount": 50},
                      "fanout": {"shards": 1}}, tmp_path)
    run = result["runs"][0]["phases"]["run"]
    assert result["status"] == "complete" and run["operations_total"] == 50
    assert run["binding_settings"]["server"] == {
        "unavailable": "PermissionError: permission denied for view pg_settings"}
