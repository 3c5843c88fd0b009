"""The fast path is the default (issue 21): with nothing in target.options, a MariaDB
campaign runs on the mysqlclient C driver that the README's set-up builds, and the result
and summary say so."""
from __future__ import annotations

import pytest

from dbswarm.results.store import open_store
from dbswarm.run.runtime import service
from tests import servers

pytestmark = [pytest.mark.servers]


def test_a_default_mariadb_campaign_runs_on_mysqlclient(tmp_path):
    env = servers.start()
    target = servers.target("mysql", env)
    assert "driver" not in (target.get("options") or {})
    campaign = {"name": "default-driver", "target": target,
                "workload": {"preset": "c", "recordcount": 100, "operationcount": 200, "table": "driver_usertable"},
                "phases": ["prepare", "load", "run", "cleanup"], "fanout": {"shards": 1}}
    out = service.run_steps(campaign, str(tmp_path), lambda ev, n: [service.run_shard(dict(ev, shard=i))
                                                                    for i in range(n)], lead_seconds=0)
    store = open_store(out["store"])
    result = store.get_json(out["result_key"])
    settings = result["runs"][0]["phases"]["run"]["binding_settings"]
    assert settings["driver"].startswith("mysqlclient "), settings
    assert settings["driver_choice"] == "auto: mysqlclient (the C driver) imports"
    # its per-operation statements prepared on the server (the binary protocol on mysqlclient's own
    # connection: bindings/mysql_binary.py; issue 36 had removed the ctypes path into libmariadb)
    assert settings["prepared_statements"].startswith("server-side for the per-operation statements"), settings
    summary = store.get_text(store.key(out["campaign_id"], "summary.md"))
    assert "client driver `mysqlclient " in summary
