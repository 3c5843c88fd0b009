"""Issue 20 items 7-9: a run that did not do what was planned is never called complete.

The database stopped for good mid-run (its own throwaway PostgreSQL instance, never the
shared test servers), a load cut short, and a fatal error class (an undefined table): each
ends with status ``incomplete``, exit 6, the reason on stderr even with --quiet, the reason
in summary.md's first lines, and a steady window without dead seconds."""
import json
import os
import subprocess
import time
from pathlib import Path

import pytest

from tests import servers
from tests.faults.conftest import dbswarm_env, wait_gone

# a folder of its own per checkout running fault tests at the same time (they stop these servers)
FAULT_DIR = servers.own_set_dir("faults")


@pytest.fixture
def own_pg():
    """A PostgreSQL of this test's own (scripts/test-servers start DIR): the test may stop it."""
    env = servers.start_servers(FAULT_DIR)
    yield env
    # start again what the test stopped, for the next test (idempotent)
    servers.start_servers(FAULT_DIR)


def _stop_pg(env):
    owner = Path(env["DBSWARM_TEST_PG_DATADIR"]).owner()
    prefix = ["runuser", "-u", owner, "--"] if os.geteuid() == 0 else []
    proc = subprocess.run(prefix + [f"{env['DBSWARM_TEST_PG_BINDIR']}/pg_ctl", "stop", "-m", "immediate", "-D",
                                    env["DBSWARM_TEST_PG_DATADIR"]], capture_output=True, text=True, timeout=60,
                          cwd="/")
    assert proc.returncode == 0, proc.stderr


def _progress(folder: Path, phase: str) -> int:
    done = 0
    for p in folder.glob(f"*.{phase}.*.json"):
        try:
            done += json.loads(p.read_text())["done"]
        except (ValueError, OSError):
            pass
    return done


def _campaign(tmp_path, env, name, workload, phases=("prepare", "load", "run")):
    spec = tmp_path / f"{name}.json"
    # shared_tables: a campaign whose database was stopped cannot release its table lock, and the
    # test run again within DBSWARM_LOCK_STALE_S would fail on it (the lock is tested elsewhere)
    spec.write_text(json.dumps({"name": name, "seed": 1,
                                "target": servers.target("postgresql", env, shared_tables=True),
                                "workload": workload, "fanout": {"shards": 2}, "phases": list(phases)}))
    return spec


def _run_until(spawn, tmp_path, spec, phase, min_done, then, timeout=120):
    progress = tmp_path / "progress"
    progress.mkdir(exist_ok=True)
    proc = spawn(["run", str(spec), "--results", str(tmp_path / "r"), "--quiet"],
                 env=dbswarm_env(DBSWARM_PROGRESS_DIR=progress, DBSWARM_RECONNECT_GIVE_UP_S=3))
    deadline = time.monotonic() + timeout
    while _progress(progress, phase) < min_done:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "the phase never got going"
        time.sleep(0.2)
    then()
    out, err = proc.communicate(timeout=timeout)
    assert wait_gone(proc.pid, 10) == []
    result = json.loads(next((tmp_path / "r").glob("*/result.json")).read_text())
    summary = next((tmp_path / "r").glob("*/summary.md")).read_text()
    return proc.returncode, out, err, result, summary


def test_database_stopped_for_good_mid_run(tmp_path, own_pg, spawn):
    spec = _campaign(tmp_path, own_pg, "faults-dead-run",
                     {"preset": "c", "table": "faults_dead", "recordcount": 2000, "operationcount": 0,
                      "maxexecutiontime": 14, "threads": 2})
    code, out, err, result, summary = _run_until(spawn, tmp_path, spec, "run", 3000, lambda: _stop_pg(own_pg))
    assert code == 6, err
    assert result["status"] == "incomplete"
    run = result["runs"][0]["phases"]["run"]
    assert run["status"] == "incomplete"
    assert any("ended on an error" in p and "unreachable" in p for p in run["problems"]), run["problems"]
    assert "unreachable" in err and "incomplete" in err          # the reason on stderr, with --quiet
    assert "**Incomplete**" in summary.split("###")[0]             # and in the summary's first lines
    # the steady window holds no dead second: every second of it completed operations
    tl, (ws, we) = run["timeline"], run["steady"]["window"]
    totals = [sum(v[i] for v in tl["ops"].values() if i < len(v)) for i in range(we - tl["start"])]
    assert all(totals[s - tl["start"]] > 0 for s in range(ws, we)), (ws, we, totals)
    assert result["runs"][0]["phases"]["load"]["status"] == "complete"


def test_load_cut_short_is_not_complete(tmp_path, own_pg, spawn):
    spec = _campaign(tmp_path, own_pg, "faults-dead-load",
                     {"preset": "c", "table": "faults_dead_load", "recordcount": 3_000_000, "operationcount": 100,
                      "threads": 2, "batchsize": 50})
    code, out, err, result, summary = _run_until(spawn, tmp_path, spec, "load", 2000, lambda: _stop_pg(own_pg))
    # the step after the load (secondary indexes) cannot reach the server either: the run stopped
    # early (said on stderr); result.json is incomplete and so is the exit status (6, as docs/failure-and-safety.md maps it)
    assert code == 6, err
    assert result["status"] == "incomplete" and "dbswarm.RunFailed" in err
    assert "finished with status incomplete" in err
    load = result["runs"][0]["phases"]["load"]
    assert load["status"] == "incomplete"
    assert any("fewer records than planned (3,000,000)" in p for p in load["problems"]), load["problems"]
    assert "fewer records than planned" in err


def test_fatal_error_class_ends_the_phase(tmp_path, spawn):
    """A run phase against a table that does not exist: every call fails with a fatal class
    (undefined table). The threads end at the first one, the phase is incomplete, and the
    failures are not counted as the workload."""
    env = servers.start()
    spec = _campaign(tmp_path, env, "faults-fatal",
                     {"preset": "c", "table": "faults_no_such_table", "recordcount": 100, "operationcount": 50000,
                      "threads": 2}, phases=("run",))
    proc = spawn(["run", str(spec), "--results", str(tmp_path / "r"), "--quiet"])
    out, err = proc.communicate(timeout=120)
    assert proc.returncode == 6, err
    run = json.loads(next((tmp_path / "r").glob("*/result.json")).read_text())["runs"][0]["phases"]["run"]
    assert run["status"] == "incomplete" and run["operations_total"] == 0
    assert sum(run["errors"].values()) == 2        # one fatal error per client thread, then they ended
    assert any("fatal error UndefinedTable" in p for p in run["problems"]), run["problems"]
