"""A requested preparation the server could not do is said, not silent: ``sharded_cluster`` on
FerretDB (no enableSharding) reaches result.json (the run's ``preparation.skipped``) and
summary.md, which says it before the tables."""
from __future__ import annotations

import json
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers]


def test_a_skipped_sharding_on_ferretdb_is_said(tmp_path):
    env = servers.start()
    target = servers.target("mongodb", env, sharded_cluster=True, initial_chunks=8)
    target.pop("password")  # FerretDB runs without authentication here
    campaign = {"name": "skipped-sharding", "seed": 1, "target": target, "fanout": {"shards": 1},
                "workload": {"preset": "S6", "recordcount": 100, "operationcount": 100, "threads": 1,
                             "table": "skipped_sharding"},
                "phases": ["prepare", "load", "run", "cleanup"]}
    out = run_campaign(campaign, str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    folder = Path(out["store"]) / out["campaign_id"]
    result = json.loads((folder / "result.json").read_text())
    prep = result["runs"][0]["preparation"]
    assert prep["sharding"]["status"].startswith("skipped") and prep["sharding"]["requested"]["enableSharding"]
    skipped, = prep["skipped"]
    assert skipped.startswith("sharding: skipped: the server is not a sharded cluster") and "enableSharding" in skipped
    summary = (folder / "summary.md").read_text()
    head = summary.split("###")[0]
    assert "**Requested preparation skipped**" in head and f"- run 000: {skipped}" in head
    # a target asking for nothing has nothing to say
    target.pop("options")
    target["options"] = {"ferretdb_backend_url": servers.ferretdb_backend_url(env)}
    out = run_campaign(campaign, str(tmp_path / "plain"), show_progress=False, lead_seconds=0.5,
                       log=lambda *a: None)
    folder = Path(out["store"]) / out["campaign_id"]
    assert "Requested preparation skipped" not in (folder / "summary.md").read_text()
    assert "skipped" not in (json.loads((folder / "result.json").read_text())["runs"][0].get("preparation") or {})
