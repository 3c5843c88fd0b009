"""Issue 20 item 8: a campaign holds a lock on its tables in the target (``dbswarm.engine.lock``): a
second campaign on the same tables fails fast, naming the running one and when it started,
unless it opts into shared tables (``target.options.shared_tables: true``)."""
import json
import time
from types import SimpleNamespace

import pytest

from tests import servers, timing
from tests.faults.conftest import dbswarm_env, wait_gone


def _run(engine, table, options=None):
    if engine == "sqlite":
        target = {"engine": "sqlite", "url": None, "options": dict(options or {})}
    else:
        target = servers.target(engine, servers.start(), **(options or {}))
    return SimpleNamespace(run_id="r1", family="ycsb", workload={"table": table}, target=target,
                           is_real_database=True)


@pytest.mark.parametrize("engine", ["postgresql", "mysql", "mongodb", "sqlite"])
def test_the_lock_on_every_engine(engine, tmp_path, monkeypatch):
    from dbswarm.credentials import secrets
    from dbswarm.engine import lock
    run = _run(engine, f"faults_lock_{engine}")
    if engine == "sqlite":
        run.target["url"] = str(tmp_path / "lock.db")
    password = secrets.resolve(run.target.get("password"))
    on = lambda fn, *a: lock.on_target(run, password, fn, *a)  # noqa: E731
    on(lock.release, "faults-lock-a")
    on(lock.release, "faults-lock-b")
    try:
        assert on(lock.acquire, "faults-lock-a")["tables"] == [f"faults_lock_{engine}"]
        assert on(lock.acquire, "faults-lock-a")["taken_over"] == []       # its own lock: refreshed
        with pytest.raises(lock.CampaignLocked) as err:
            on(lock.acquire, "faults-lock-b")
        text = str(err.value)
        assert "in use by campaign faults-lock-a (started " in text and "shared_tables: true" in text
        # issue 57 item 6: what frees the tables, said on every engine
        assert "`dbswarm resume faults-lock-a --results <its results folder>` finishes it" in text, text
        assert "`dbswarm cancel faults-lock-a`" in text and "its lock is taken over in " in text, text
        assert on(lock.refresh, "faults-lock-a") and not on(lock.refresh, "faults-lock-b")
        on(lock.release, "faults-lock-b")                                   # not b's: nothing happens
        with pytest.raises(lock.CampaignLocked):
            on(lock.acquire, "faults-lock-b")
        on(lock.release, "faults-lock-a")
        assert on(lock.acquire, "faults-lock-b")["taken_over"] == []
        monkeypatch.setenv("DBSWARM_LOCK_STALE_S", "1")                     # b died: its lock goes stale
        time.sleep(1.3)
        taken = on(lock.acquire, "faults-lock-a")["taken_over"]
        assert [t["campaign_id"] for t in taken] == ["faults-lock-b"]
        run.target.setdefault("options", {})["shared_tables"] = True
        assert not lock.wanted(run)
    finally:
        on(lock.release, "faults-lock-a")
        on(lock.release, "faults-lock-b")


def _spec(tmp_path, name, target, phases, seconds, **options):
    spec = tmp_path / f"{name}.json"
    if options:
        target = dict(target, options={**target.get("options", {}), **options})
    spec.write_text(json.dumps({
        "name": name, "seed": 7, "target": target,
        "workload": {"preset": "c", "table": "faults_lock_campaign", "recordcount": 500, "operationcount": 0,
                     "maxexecutiontime": seconds, "target": 300, "threads": 1},
        "fanout": {"shards": 1}, "phases": phases}))
    return spec


def test_a_second_campaign_on_the_same_tables_fails_fast_unless_shared(tmp_path, spawn):
    target = servers.target("postgresql", servers.start())
    first = spawn(["run", str(_spec(tmp_path, "faults-lock-first", target, ["prepare", "load", "run", "cleanup"], 45)),
                   "--results", str(tmp_path / "r1"), "--quiet"], env=dbswarm_env())
    deadline = time.monotonic() + 60
    while not list((tmp_path / "r1").glob("*/runs/*/run/shard-0.json")):   # the first is in its run phase
        assert first.poll() is None, first.communicate()
        assert time.monotonic() < deadline, "the first campaign never reached its run phase"
        time.sleep(0.2)
    first_id = next((tmp_path / "r1").iterdir()).name

    t0 = time.monotonic()
    second = spawn(["run", str(_spec(tmp_path, "faults-lock-second", target, ["prepare", "load", "run"], 5)),
                    "--results", str(tmp_path / "r2"), "--quiet"], env=dbswarm_env())
    # opted into shared tables: runs beside the first on its table (no prepare: it keeps the data)
    third = spawn(["run", str(_spec(tmp_path, "faults-lock-third", target, ["run"], 4, shared_tables=True)),
                   "--results", str(tmp_path / "r3"), "--quiet"], env=dbswarm_env())
    out, err = second.communicate(timeout=60)
    assert time.monotonic() - t0 < timing.timeout(30)                  # fast: nothing of it ran
    assert second.returncode == 3, (out, err)
    assert f"in use by campaign {first_id} (started " in err and "shared_tables: true" in err
    assert f"`dbswarm resume {first_id} --results <its results folder>`" in err, err   # issue 57 item 6
    assert "Traceback" not in err
    assert not list((tmp_path / "r2").glob("*/runs/*/*/shard-*.json"))   # no shard of it ran
    # issue 33: the refusal is stored as the README says (failed) and summary.md gives its reason
    refused = json.loads(next((tmp_path / "r2").glob("*/result.json")).read_text())
    assert refused["status"] == "failed", refused["status"]
    assert f"in use by campaign {first_id}" in refused["runs"][0]["refused"], refused["runs"][0]
    summary = next((tmp_path / "r2").glob("*/summary.md")).read_text()
    assert "**Run 000 did not run**: " in summary and f"in use by campaign {first_id}" in summary, summary[:1500]
    out, err = third.communicate(timeout=60)
    assert third.returncode == 0, err
    assert first.poll() is None                                          # the first went on meanwhile

    out, err = first.communicate(timeout=90)
    assert first.returncode == 0, err
    assert wait_gone(first.pid, 10) == []
    for folder in ("r1", "r3"):
        result = json.loads(next((tmp_path / folder).glob("*/result.json")).read_text())
        assert result["status"] == "complete", result["runs"][0]["phases"]
        # no operation on a missing table (a connection lost when someone restarts the shared server is not ours)
        assert not [e for e in result["runs"][0]["phases"]["run"]["errors"] if ":fatal:" in e]
    # the first released its lock at cleanup: a new campaign takes the tables at once
    again = spawn(["run", str(_spec(tmp_path, "faults-lock-again", target, ["prepare", "cleanup"], 1)),
                   "--results", str(tmp_path / "r4"), "--quiet"], env=dbswarm_env())
    out, err = again.communicate(timeout=60)
    assert again.returncode == 0, err
