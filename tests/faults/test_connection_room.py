"""A phase of more client threads than the server admits is refused before it starts, naming the
limit (``engine.connection_room``): before, each shard waited a minute for its refused threads,
started without them and the run ended incomplete, measuring fewer threads than asked. On the
real servers: a PostgreSQL role's CONNECTION LIMIT, a MariaDB account's MAX_USER_CONNECTIONS."""
import json
import os
import subprocess
import sys
import time
from pathlib import Path
from types import SimpleNamespace

import pytest

from tests import servers, timing

ROOT = Path(__file__).resolve().parents[2]
ROLE, ROLE_PW = "faults_room", "faults-room-pw"


def _as_role(url: str) -> str:
    user_at = url.split("://", 1)[1].split("@", 1)[0]
    return url.replace(f"{user_at}@", f"{ROLE}@", 1)


@pytest.fixture(scope="module")
def limited():
    """A PostgreSQL role and a MariaDB account, each admitted 3 connections."""
    env = servers.start()
    with servers.pg_admin(env) as db:
        db.execute(f"DROP ROLE IF EXISTS {ROLE}")
        db.execute(f"CREATE ROLE {ROLE} LOGIN PASSWORD '{ROLE_PW}' CONNECTION LIMIT 3")
    with servers.mysql_admin(env) as db, db.cursor() as cur:
        cur.execute(f"DROP USER IF EXISTS '{ROLE}'@'%'")
        cur.execute(f"CREATE USER '{ROLE}'@'%' IDENTIFIED BY '{ROLE_PW}' WITH MAX_USER_CONNECTIONS 3")
        cur.execute(f"GRANT SELECT ON dbswarm.* TO '{ROLE}'@'%'")
    yield env
    with servers.pg_admin(env) as db:
        db.execute(f"DROP ROLE IF EXISTS {ROLE}")
    with servers.mysql_admin(env) as db, db.cursor() as cur:
        cur.execute(f"DROP USER IF EXISTS '{ROLE}'@'%'")


def _binding(engine, env):
    from dbswarm.engine.target import make_binding
    url = _as_role(env["DBSWARM_TEST_PG_URL" if engine == "postgresql" else "DBSWARM_TEST_MYSQL_URL"])
    return make_binding(SimpleNamespace(target={"engine": engine, "url": url}), ROLE_PW)


@pytest.mark.parametrize("engine,limit_name", [("postgresql", f"role {ROLE}'s CONNECTION LIMIT"),
                                               ("mysql", f"MAX_USER_CONNECTIONS of {ROLE}@%")])
def test_the_room_counts_the_accounts_limit_and_its_open_connections(engine, limit_name, limited):
    reader, held = _binding(engine, limited), _binding(engine, limited)
    reader.connect()
    try:
        room = reader.connection_room()
        assert room["free"] == 3, room          # the reading connection itself is not counted
        tight = min(room["limits"], key=lambda lim: lim["value"] - lim["in_use"])
        assert tight == {"name": limit_name, "value": 3, "in_use": 0}, room
        if engine == "postgresql":              # a role that is no superuser: the reserved slots are not its
            assert room["limits"][0]["name"].startswith("max_connections less superuser_reserved_connections")
        held.connect()
        try:
            again = reader.connection_room()
        finally:
            held.close()
        assert again["free"] == 2, again
        assert max(lim["in_use"] for lim in again["limits"]) >= 1
    finally:
        reader.close()


def _campaign(tmp_path, engine, env, threads, shards, **options) -> Path:
    url = _as_role(env["DBSWARM_TEST_PG_URL" if engine == "postgresql" else "DBSWARM_TEST_MYSQL_URL"])
    opts = {"shared_tables": True, **options}  # no campaign lock (the account may create nothing)
    spec = tmp_path / f"{engine}-{threads}.json"
    spec.write_text(json.dumps({
        "name": f"room-{engine}", "phases": ["run"],
        "target": {"engine": engine, "url": url, "password": {"env": "FAULTS_ROOM_PW"}, "options": opts},
        "workload": {"preset": "c", "recordcount": 100, "operationcount": 0, "maxexecutiontime": 1.0,
                     "threads": threads, "table": "faults_room_none"},
        "fanout": {"shards": shards}}))
    return spec


@pytest.mark.parametrize("engine", ("postgresql", "mysql"))
def test_a_phase_the_server_has_no_room_for_is_refused_before_it_starts(engine, limited, tmp_path):
    env = {k: v for k, v in os.environ.items() if k != "DBSWARM_PROGRESS_DIR"}
    env["FAULTS_ROOM_PW"] = ROLE_PW
    spec = _campaign(tmp_path, engine, limited, threads=4, shards=2)
    began = time.monotonic()
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "run", str(spec), "--results", str(tmp_path / "r"),
                           "--quiet"], capture_output=True, text=True, env=env, timeout=timing.timeout(300), cwd=ROOT)
    took = time.monotonic() - began
    assert proc.returncode == 3, proc.stderr
    assert "opens 4 client connections (2 shards, 4 threads)" in proc.stderr, proc.stderr
    assert "admits 3 more" in proc.stderr and "connection_limit_check: false" in proc.stderr, proc.stderr
    assert ROLE_PW not in proc.stderr and "Traceback" not in proc.stderr
    assert took < 55, took  # not a shard's minute-long wait for its refused threads
    folder, = (tmp_path / "r").iterdir()
    assert not list(folder.glob("runs/*/*/shard-*.json"))  # no shard ran
    result = json.loads((folder / "result.json").read_text())
    assert result["status"] == "failed", result["status"]
    assert "admits 3 more" in result["runs"][0]["refused"], result["runs"][0]
    summary = (folder / "summary.md").read_text()
    assert "**Run 000 did not run**: the run phase of run 000 opens 4 client connections" in summary, summary[:1500]


def test_the_check_is_skipped_where_the_target_opts_out(limited, tmp_path):
    """``connection_limit_check: false``: the phase starts (a pooler in front may admit more
    than the server reports); here the refused thread is the shard's, as before."""
    from dbswarm.campaign.plan import make_plan
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.engine import connection_room
    spec = json.loads(_campaign(tmp_path, "postgresql", limited, 4, 1, connection_limit_check=False).read_text())
    campaign, runs = load_campaign(spec)
    run = make_plan(campaign, runs, "room", 1).runs[0]
    assert connection_room.check(run, "run", ROLE_PW) is None
    spec["target"]["options"].pop("connection_limit_check")
    campaign, runs = load_campaign(spec)
    run = make_plan(campaign, runs, "room", 1).runs[0]
    with pytest.raises(connection_room.TooFewConnections) as err:
        connection_room.check(run, "run", ROLE_PW)
    assert "opens 4 client connections (4 threads)" in str(err.value), str(err.value)
