"""The engine examples in examples/: every file is a valid campaign, and the two that
need two kinds of servers run for real, shrunk to seconds, against the test servers
(only the URL, the password reference and the sizes are replaced)."""
from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
import yaml

from dbswarm.campaign.spec import load_campaign
from dbswarm.run.runtime.local import run_campaign
from tests import servers

ROOT = Path(__file__).resolve().parents[2]
EXAMPLES = ["mongodb-s1-s9.yaml", "sysbench-mariadb.yaml", "sysbench-postgresql.yaml", "two-engines.yaml"]

pytestmark = [pytest.mark.servers, pytest.mark.slow]


@pytest.fixture(scope="module")
def env():
    return servers.start()


@pytest.mark.parametrize("name", EXAMPLES)
def test_example_is_a_valid_campaign(name, monkeypatch):
    monkeypatch.setenv("DBSWARM_PASSWORD", "not-used-here")
    campaign, runs = load_campaign(str(ROOT / "examples" / name))
    assert runs
    for run in runs:
        t = run.target
        assert t.password is not None and t.password.env == "DBSWARM_PASSWORD"
        assert "127.0.0.1" in t.url
    if name.startswith("mongodb"):
        assert [r.workload.preset for r in runs] == [f"S{i}" for i in range(1, 10)]
        assert campaign.target.options["write_concern"] == {"w": 1, "j": False}
    if name.startswith("sysbench"):
        assert {(r.workload.test, r.workload.tables) for r in runs} == {("oltp_read_write", 4)}


def _shrunk(name, env, targets, presets, **workload):
    data = yaml.safe_load((ROOT / "examples" / name).read_text())
    data["workload"].update(workload)
    data["matrix"]["preset"] = presets
    if "target" in data["matrix"]:
        data["matrix"]["target"] = targets
    else:
        data["target"] = targets[0]
    data["fanout"] = {"shards": 1}  # one shard process a phase: what these tests read is the same
    return data


def _with_label(t, label):
    return dict(t, label=label)


def test_two_engines_example_prints_the_white_paper_table(env, tmp_path):
    """Rows: the two targets (their labels); columns: the service models."""
    labels = {"postgresql": "PostgreSQL 15", "mysql": "MariaDB 10.11"}
    targets = [_with_label(servers.target(e, env), labels[e]) for e in ("postgresql", "mysql")]
    data = _shrunk("two-engines.yaml", env, targets, ["S2", "S6"], recordcount=1000, operationcount=1000,
                   threads=4, table="ex_two_engines")
    out = run_campaign(data, str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    assert out["status"] == "complete"
    folder = Path(out["store"]) / out["campaign_id"]
    summary = (folder / "summary.md").read_text()
    ops = summary[summary.index("### Throughput (OPS"):]
    lines = [ln for ln in ops.splitlines() if ln.startswith("|")]
    assert lines[0] == "| instance | threads | S2 | S6 |"
    rows = {ln.split("|")[1].strip(): [c.strip() for c in ln.split("|")[3:-1]] for ln in lines[2:4]}
    assert set(rows) == set(labels.values())
    for cells in rows.values():
        assert all(re.fullmatch(r"[\d,]+", c) and int(c.replace(",", "")) > 0 for c in cells), cells
    for kind in ("RAL", "WAL"):
        assert f"({kind})" in summary
    password = servers.password(env)
    for p in folder.rglob("*"):
        if p.is_file():
            assert password.encode() not in p.read_bytes(), p
    result = json.loads((folder / "result.json").read_text())
    assert {r["target"]["engine"] for r in result["runs"]} == {"postgresql", "mysql"}


def test_mongodb_example_runs_on_ferretdb(env, tmp_path):
    """S1 (load + 100% insert) and S6 (100% read) on FerretDB, write concern recorded."""
    t = servers.target("mongodb", env, write_concern={"w": 1, "j": False}, read_preference="primary",
                       sharded_cluster=True, initial_chunks=200)
    t.pop("password")  # FerretDB runs without authentication here: no user in the URL
    n = 1000
    data = _shrunk("mongodb-s1-s9.yaml", env, [t], ["S1", "S6"], recordcount=n, operationcount=n,
                   table="ex_mongodb", maxexecutiontime=60)
    data["matrix"]["threads"] = [4]
    out = run_campaign(data, str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    assert out["status"] == "complete"
    folder = Path(out["store"]) / out["campaign_id"]
    result = json.loads((folder / "result.json").read_text())
    s1, s6 = result["runs"]
    assert s1["phases"]["run"]["operations"]["INSERT"]["count"] == n
    assert s6["phases"]["run"]["operations"]["READ"]["count"] == n
    assert s6["phases"]["run"]["operations"]["READ"]["not_found"] == 0
    settings = s6["phases"]["run"]["binding_settings"]
    assert settings["write_concern"] == {"w": 1, "j": False} and settings["read_preference"] == "primary"
    # the sharding request was made and FerretDB's answer recorded with the prepare step
    prep = json.loads(next(folder.rglob("prepare-before_load.json")).read_text())
    assert prep["binding_settings"]["cluster_preparation"]["sharding"]["status"].startswith("skipped")
    assert "| instance | threads | S1 | S6 |" in (folder / "summary.md").read_text()
