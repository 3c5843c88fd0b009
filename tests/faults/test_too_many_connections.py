"""Issue 33 ("Also"): a server refusing connections because of its connection limit is said so,
not reported as an unreachable target. On the real PostgreSQL, a role whose CONNECTION LIMIT
is 0 gets what a server at max_connections answers (SQLSTATE 53300)."""
import time

import pytest

from tests import servers


@pytest.fixture(scope="module")
def limited_role():
    env = servers.start()
    with servers.pg_admin(env) as db:
        db.execute("DROP ROLE IF EXISTS faults_limited")
        db.execute("CREATE ROLE faults_limited LOGIN PASSWORD 'faults-limited-pw' CONNECTION LIMIT 0")
    yield env
    with servers.pg_admin(env) as db:
        db.execute("DROP ROLE IF EXISTS faults_limited")


def test_too_many_connections_is_named_as_such(limited_role, monkeypatch):
    from types import SimpleNamespace

    from dbswarm.engine import calls
    from dbswarm.engine.target import make_binding
    from dbswarm.measure.recorder import Recorder
    url = limited_role["DBSWARM_TEST_PG_URL"]
    user_at = url.split("://", 1)[1].split("@", 1)[0]
    url = url.replace(f"{user_at}@", "faults_limited@", 1)
    binding = make_binding(SimpleNamespace(target={"engine": "postgresql", "url": url}), "faults-limited-pw")
    with pytest.raises(Exception) as err:
        binding.connect()
    cls = binding.classify(err.value)
    assert (cls.kind, cls.name) == ("connection", "too_many_connections"), (cls, str(err.value))
    monkeypatch.setattr(calls, "RECONNECT_GIVE_UP_S", 0.3)
    m = calls.Measured(binding, Recorder(1.0))
    with pytest.raises(calls.TargetUnreachable) as gave_up:
        m.reconnect()
    text = str(gave_up.value)
    assert "refused every connection" in text and "too many connections" in text, text
    assert "unreachable" not in text


@pytest.mark.parametrize("model", ("threads", "multiplexed"))
def test_threads_refused_until_the_time_cap_end_the_phase(model, limited_role, monkeypatch, tmp_path):
    """More client threads than the server admits: the shard starts without those still
    refused (after READY_TIMEOUT_S), and at the phase's time cap they are done, each with its
    error. They were left unfinished, so every next call of the shard connected again, past
    the cap, and a 10-s campaign of 512 threads against max_connections 300 never ended."""
    import json
    from pathlib import Path

    from dbswarm.campaign.plan import make_plan
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.engine import calls, shard_state, worker
    from dbswarm.run.runtime.local import run_campaign
    env, table = limited_role, f"faults_refused_{model}"
    target = servers.target("postgresql", env)
    wl = {"preset": "c", "recordcount": 200, "operationcount": 0, "maxexecutiontime": 1.0, "threads": 4,
          "table": table}
    out = run_campaign({"name": "refused-load", "target": target, "workload": wl, "phases": ["prepare", "load"]},
                       str(tmp_path), show_progress=False, lead_seconds=0.5, log=lambda *a: None)
    res = json.loads((Path(out["store"]) / out["campaign_id"] / "result.json").read_text())
    assert res["status"] == "complete", res["status"]
    with servers.pg_admin(env) as db:  # two sessions for the role: two of the four threads refused
        db.execute("DROP ROLE IF EXISTS faults_two")
        db.execute("CREATE ROLE faults_two LOGIN PASSWORD 'faults-two-pw' CONNECTION LIMIT 2")
        db.execute(f"GRANT SELECT ON {table} TO faults_two")
    try:
        url = target["url"]
        limited = dict(target, url=url.replace(url.split("://", 1)[1].split("@", 1)[0] + "@", "faults_two@", 1))
        monkeypatch.setattr(shard_state, "READY_TIMEOUT_S", 0.5)      # the shard starts without the refused two
        monkeypatch.setattr(calls, "RECONNECT_GIVE_UP_S", 120.0)  # who still try at the time cap
        campaign, runs = load_campaign({"name": "refused", "target": limited, "workload": wl, "phases": ["run"],
                                        "fanout": {"shards": 1, "client_model": model}})
        run = make_plan(campaign, runs, "refused", 1).runs[0]
        phase = worker.ShardPhase(run, run.shards[0], "run", "faults-two-pw")
        began = time.monotonic()
        outcome = phase.execute()
        took = time.monotonic() - began
    finally:
        with servers.pg_admin(env) as db:
            db.execute(f"REVOKE ALL ON {table} FROM faults_two")
            db.execute("DROP ROLE IF EXISTS faults_two")
    assert outcome.status == "done", (outcome.status, outcome.info.get("thread_errors"))
    assert took < 30, took  # the cap (1 s) plus the reconnect back-off's last sleep, not the 120-s give-up
    errors = outcome.info["thread_errors"]
    assert len(errors) == 2 and all("got no connection before the phase's time cap" in e for e in errors), errors
    assert all("too_many_connections" in e for e in errors), errors
    assert outcome.info["done"] > 0  # the two admitted threads ran their reads
    assert all(st.finished for st in phase.states)


def test_a_count_limited_phase_of_short_calls_ends_when_its_threads_stay_refused(limited_role, monkeypatch):
    """No time cap (an operation count) and calls shorter than the reconnect give-up (a
    ``max_call_seconds`` below 60 s): the give-up counts from a thread's first refusal over the
    shard's calls (checkpointed). It restarted with each call, so a shard whose threads the
    server kept refusing answered ``continue`` for ever."""
    from dbswarm.campaign.plan import make_plan
    from dbswarm.campaign.spec import load_campaign
    from dbswarm.engine import calls, shard_state, worker
    env = limited_role
    target = servers.target("postgresql", env, connection_limit_check=False)
    with servers.pg_admin(env) as db:
        db.execute("DROP ROLE IF EXISTS faults_full")
        db.execute("CREATE ROLE faults_full LOGIN PASSWORD 'faults-full-pw' CONNECTION LIMIT 1")
    url = target["url"]
    full = dict(target, url=url.replace(url.split("://", 1)[1].split("@", 1)[0] + "@", "faults_full@", 1))
    import psycopg
    held = psycopg.connect(full["url"], password="faults-full-pw")  # the role's one slot: every thread refused
    try:
        monkeypatch.setattr(shard_state, "READY_TIMEOUT_S", 0.3)
        monkeypatch.setattr(calls, "RECONNECT_GIVE_UP_S", 4.0)
        wl = {"preset": "c", "recordcount": 200, "operationcount": 400, "threads": 3, "table": "faults_full_none"}
        campaign, runs = load_campaign({"name": "full", "target": full, "workload": wl, "phases": ["run"],
                                        "fanout": {"shards": 1}})
        run = make_plan(campaign, runs, "full", 1).runs[0]
        checkpoint, calls_made, began = None, 0, time.monotonic()
        while calls_made < 12:
            calls_made += 1
            phase = worker.ShardPhase(run, run.shards[0], "run", "faults-full-pw", checkpoint=checkpoint,
                                      deadline=time.time() + 1.5)
            outcome = phase.execute()
            if outcome.status == "done":
                break
            checkpoint = outcome.checkpoint
            assert all(t.get("refused_s", 0) > 0 for t in checkpoint["threads"]), checkpoint
    finally:
        held.close()
        with servers.pg_admin(env) as db:
            db.execute("DROP ROLE IF EXISTS faults_full")
    assert outcome.status == "done", (calls_made, outcome.info.get("thread_errors"))
    assert calls_made >= 2 and time.monotonic() - began < 30, (calls_made, time.monotonic() - began)
    errors = outcome.info["thread_errors"]
    assert len(errors) == 3 and all("refused every connection for 4 s: too many connections" in e for e in errors), errors
