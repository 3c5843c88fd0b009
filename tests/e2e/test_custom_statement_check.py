"""The custom family's statements checked before the fan-out (issue 54, "before running
anything"), on the real PostgreSQL and MariaDB: each statement prepared on one connection, and
one the server rejects named — transaction, statement index, the server's message —

- by ``dbswarm validate`` (the workload's own tables made as temporary ones: nothing is left);
- by a run's prepare phase, once its tables exist: nothing is loaded nor run;
- by a run's plan step when the campaign creates no tables: nothing is written nor run.
"""
from __future__ import annotations

import copy
import json
from pathlib import Path

import pytest

from dbswarm.cli import main
from dbswarm.errors import DbswarmError
from dbswarm.run.runtime.local import run_campaign
from tests import servers

pytestmark = [pytest.mark.servers]

WORKLOAD = {
    "family": "custom", "operations": 20, "time": 600, "threads": 2,
    "tables": {"cc_acc": {"columns": [{"name": "id", "type": "bigint", "key": True}, {"name": "balance", "type": "int"}],
                          "load": {"rows": 50, "key": "id", "columns": {"balance": "aid"}}}},
    "generators": {"aid": {"type": "uniform", "min": 1, "max": 50}},
    "transactions": {
        "pay": {"statements": [{"sql": "SELECT balance FROM cc_acc WHERE id = :aid", "capture": ["bal"]},
                               {"sql": "UPDATE cc_acc SET balance = :bal + 1 WHERE id = :aid"}]},
        "look": {"statements": [{"sql": "SELECT balance FROM cc_acc WHERE id = :aid"}]}},
}
BAD = {"pay": (1, "UPDATE cc_acc SET balanse = balance + 1 WHERE id = :aid", "balanse"),
       "look": (0, "SELECT x FROM cc_nowhere WHERE id = :aid", "cc_nowhere")}


def _bad() -> dict:
    w = copy.deepcopy(WORKLOAD)
    for name, (i, sql, _) in BAD.items():
        w["transactions"][name]["statements"][i]["sql"] = sql
    return w


@pytest.fixture(scope="module")
def env():
    return servers.start()


def _tables(engine: str, env: dict) -> set[str]:
    con = servers.pg_admin(env) if engine == "postgresql" else servers.mysql_admin(env)
    try:
        cur = con.cursor()
        cur.execute("SELECT table_name FROM information_schema.tables WHERE table_name LIKE 'cc\\_%'")
        return {r[0] for r in cur.fetchall()}
    finally:
        con.close()


def _drop(engine: str, env: dict) -> None:
    con = servers.pg_admin(env) if engine == "postgresql" else servers.mysql_admin(env)
    try:
        con.cursor().execute("DROP TABLE IF EXISTS cc_acc")
        if engine == "mysql":
            con.commit()
    finally:
        con.close()


def _assert_named(problems: list[str], engine: str) -> None:
    for name, (i, _, word) in BAD.items():
        assert any(p.startswith(f"workload.transactions.{name}.statements[{i}].sql: {engine} rejects it: ")
                   and word in p for p in problems), problems
    assert len(problems) == 2, problems  # the good statements were accepted
    assert not any("Traceback" in p for p in problems)


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_validate_names_the_statements_the_server_rejects(engine, env, tmp_path, capsys):
    _drop(engine, env)
    spec = tmp_path / "c.yaml"
    campaign = {"name": "cc", "target": servers.target(engine, env), "workload": _bad()}
    spec.write_text(json.dumps(campaign))
    assert main(["validate", str(spec)]) == 2
    err = capsys.readouterr().err
    _assert_named([line.strip()[2:] for line in err.splitlines() if line.strip().startswith("- ")], engine)
    # the good workload: every statement accepted, on tables that do not exist yet (temporary ones)
    spec.write_text(json.dumps({**campaign, "workload": WORKLOAD}))
    assert main(["validate", str(spec)]) == 0
    assert f"every statement prepared on {engine}: accepted" in capsys.readouterr().out
    assert _tables(engine, env) == set()  # validate left nothing behind
    # --offline: not connected, not checked
    spec.write_text(json.dumps(campaign))
    assert main(["validate", str(spec), "--offline"]) == 0


def test_an_unreachable_target_is_not_checked_and_says_so(tmp_path, capsys, monkeypatch):
    monkeypatch.setenv("PW", "x")
    spec = tmp_path / "c.yaml"
    spec.write_text(json.dumps({"name": "cc", "target": {"engine": "postgresql", "password": {"env": "PW"},
                                                         "url": "postgresql://u@127.0.0.1:1/db"},
                                "workload": _bad()}))
    assert main(["validate", str(spec)]) == 0
    assert "statements not checked: the target is not reachable" in capsys.readouterr().out


@pytest.mark.parametrize("engine", ["postgresql", "mysql"])
def test_a_run_stops_before_its_load_on_a_rejected_statement(engine, env, tmp_path):
    campaign = {"name": "cc-run", "target": servers.target(engine, env), "workload": _bad(),
                "phases": ["prepare", "load", "run"]}
    out = run_campaign(campaign, str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    result = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    assert result["status"] == "failed"
    text = json.dumps(result)
    for name, (i, _, word) in BAD.items():
        assert f"workload.transactions.{name}.statements[{i}].sql: {engine} rejects it" in text and word in text
    phases = result["runs"][0]["phases"]
    assert not (phases.get("load") or {}).get("operations") and not (phases.get("run") or {}).get("operations")
    con = servers.pg_admin(env) if engine == "postgresql" else servers.mysql_admin(env)
    try:
        cur = con.cursor()
        cur.execute("SELECT COUNT(*) FROM cc_acc")  # created by the prepare step, never loaded
        assert cur.fetchone()[0] == 0
    finally:
        con.close()


def test_a_campaign_creating_no_tables_is_refused_at_its_plan(env, tmp_path):
    """phases [run] on tables a previous campaign made: the plan step checks the statements
    before anything is written (no campaign folder) or run."""
    target = servers.target("postgresql", env)
    setup = {"name": "cc-setup", "target": target, "workload": WORKLOAD, "phases": ["prepare", "load"]}
    out = run_campaign(setup, str(tmp_path / "a"), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    assert json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())["status"] == "complete"
    with pytest.raises(DbswarmError) as err:  # the plan step's refusal, as the state machine ended
        run_campaign({**setup, "name": "cc-bad", "workload": _bad(), "phases": ["run"]}, str(tmp_path / "b"),
                     show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    _assert_named([line.strip()[2:] for line in str(err.value).splitlines() if line.strip().startswith("- ")],
                  "postgresql")
    assert not list((tmp_path / "b").glob("cc-bad-*"))
    out = run_campaign({**setup, "name": "cc-good", "phases": ["run"]}, str(tmp_path / "c"), show_progress=False,
                       lead_seconds=0.5, log=lambda *a: None)
    assert json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())["status"] == "complete"
