"""Issue 20 item 5: a running shard persists what it measured every DBSWARM_PERSIST_INTERVAL_S
seconds, so a shard process killed with SIGKILL loses at most one interval; the campaign
names the shard as failed, `dbswarm resume` continues it from its last persisted state, the
totals are exact and the result states how much was lost."""
import json
import os
import signal
import time

from tests.faults.conftest import dbswarm_env, wait_gone

INTERVAL = 2.0


def _shard_file(tmp_path, phase, shard):
    found = list((tmp_path / "r").glob(f"*/runs/*/{phase}/shard-{shard}.json"))
    return json.loads(found[0].read_text()) if found else None


def test_sigkilled_shard_loses_at_most_one_interval_and_resume_completes_it(tmp_path, spawn):
    spec = tmp_path / "crash.json"
    # 24,000 operations at 2,000 ops/s over 2 shards: a 12 s run phase, persisted every 2 s
    spec.write_text(json.dumps({
        "name": "faults-crash", "seed": 5,
        "workload": {"preset": "b", "table": "faults_crash", "recordcount": 2000, "operationcount": 24000,
                     "target": 2000, "threads": 2},
        "fanout": {"shards": 2}, "phases": ["prepare", "load", "run"]}))
    progress = tmp_path / "progress"
    progress.mkdir()
    env = dbswarm_env(DBSWARM_PROGRESS_DIR=progress, DBSWARM_PERSIST_INTERVAL_S=INTERVAL)
    proc = spawn(["run", str(spec), "--results", str(tmp_path / "r"), "--quiet"], env=env)
    deadline = time.monotonic() + 90
    victim = None
    while victim is None:
        assert proc.poll() is None, proc.communicate()
        assert time.monotonic() < deadline, "shard 1 never persisted its run phase twice"
        doc = _shard_file(tmp_path, "run", 1)
        # a write of the running call (persisted every INTERVAL while its threads go on),
        # after the first: a shard that measured for a while
        if doc and doc["segments"][-1].get("persisted") == "interval" and doc["segments"][-1]["elapsed_s"] > INTERVAL:
            for p in progress.glob("*.run.1.json"):
                try:
                    victim = json.loads(p.read_text())["pid"]
                except (ValueError, OSError):
                    pass
        time.sleep(0.1)
    time.sleep(INTERVAL / 2)          # mid-interval: what it measured since its last write is lost
    before = _shard_file(tmp_path, "run", 1)
    os.kill(victim, signal.SIGKILL)
    killed_at = time.time()
    out, err = proc.communicate(timeout=90)
    assert proc.returncode == 3, err  # a shard is missing: partial
    assert wait_gone(proc.pid, 10) == []
    first = json.loads(next((tmp_path / "r").glob("*/result.json")).read_text())
    run = first["runs"][0]["phases"]["run"]
    assert run["status"] == "partial"
    kept = _shard_file(tmp_path, "run", 1)
    # what the shard persisted before it died is kept and merged: not everything is lost
    persisted_ops = sum(o["count"] for o in kept["measurement"]["operations"].values())
    assert persisted_ops > 0 and kept["segments"][-1]["persisted"] == "interval"
    assert len(kept["segments"]) >= len(before["segments"])
    assert killed_at - kept["segments"][-1]["ended_at"] <= INTERVAL + 1.5
    assert run["operations_total"] > 12000    # shard 0's 12,000 + shard 1's persisted share
    # before any resume, the partial result already says what was lost: the seconds from the
    # last persisted segment to the recorded failure, at most one interval
    crashed = [p for p in run["shards"]["partial"] if p["shard"] == 1]
    assert crashed and 0 < crashed[0]["lost_s"] <= INTERVAL, run["shards"]
    assert run["lost_seconds"] == crashed[0]["lost_s"]
    assert crashed[0]["lost_s"] <= killed_at + 5 - kept["segments"][-1]["ended_at"]

    cid = first["campaign_id"]
    again = spawn(["resume", cid, "--results", str(tmp_path / "r")], env=dbswarm_env(DBSWARM_PERSIST_INTERVAL_S=INTERVAL))
    out, err = again.communicate(timeout=120)
    assert again.returncode == 0, err
    assert wait_gone(again.pid, 10) == []
    result = json.loads(next((tmp_path / "r").glob("*/result.json")).read_text())
    run = result["runs"][0]["phases"]["run"]
    assert result["status"] == "complete" and run["status"] == "complete"
    assert run["operations_total"] == 24000   # exact: the lost interval is done again, nothing twice
    # the result says how much was lost: more than nothing, at most one interval
    assert 0 < run["lost_seconds"] <= INTERVAL
    resumed = _shard_file(tmp_path, "run", 1)
    assert [s["segment"] for s in resumed["segments"]] == list(range(len(resumed["segments"])))
    assert any(s.get("lost_s") for s in resumed["segments"])


def test_a_retried_call_continues_from_the_persisted_state(tmp_path, monkeypatch):
    """A Lambda retry re-sends the event the failed attempt got (its old checkpoint): the call
    continues from the shard file instead, and a shard already done is not run again."""
    from dbswarm.measure.recorder import Measurement
    from dbswarm.results.store import LocalStore
    from dbswarm.run.runtime import service
    monkeypatch.setenv("DBSWARM_PERSIST_INTERVAL_S", "0.6")
    written, real_put = [], LocalStore.put_json

    def put_json(self, key, obj):  # the shard file as each write left it
        if key.endswith("/run/shard-0.json"):
            written.append(json.loads(json.dumps(obj)))
        return real_put(self, key, obj)
    monkeypatch.setattr(LocalStore, "put_json", put_json)
    campaign = {"name": "faults-retry", "seed": 3,
                "workload": {"preset": "c", "table": "faults_retry", "recordcount": 300, "operationcount": 3000,
                             "target": 1500, "threads": 1},
                "fanout": {"shards": 1}, "phases": ["prepare", "load", "run"]}
    calls = []

    def shards(event, count):
        for i in range(count):
            calls.append(service.run_shard(dict(event, shard=i)))
    out = service.run_steps(campaign, str(tmp_path / "r"), shards, lead_seconds=0.1)
    assert out["status"] == "complete"
    cid = out["campaign_id"]
    key = f"{cid}/runs/{calls[-1]['run_id']}/run/shard-0.json"
    path = tmp_path / "r" / key
    doc = json.loads(path.read_text())
    # 3,000 operations at 1,500 a second: written every 0.6 s while the call ran, then at its end
    assert len(written) >= 3 and all(w["segments"][-1]["persisted"] == "interval" for w in written[:-1])
    assert written[-1] == doc and len(doc["segments"]) == 1
    # a retry of the first call after the shard finished: answered from the file, nothing runs
    again = service.run_shard({"store": out["store"], "campaign_id": cid, "run_id": calls[-1]["run_id"],
                               "phase": "run", "shard": 0})
    assert again["status"] == "done" and again["ops"] == 3000
    assert json.loads(path.read_text())["segments"] == doc["segments"]
    # the file as its second write left it (the call died then, mid-run): a retry with the
    # first call's event continues from its checkpoint and ends with exactly the planned
    # count, measured and checkpointed: nothing twice, nothing missing
    cut = written[1]
    assert cut["status"] == "continue" and 0 < cut["segments"][-1]["done"] < 3000
    assert Measurement.from_dict(cut["measurement"]).total_ops == cut["segments"][-1]["done"]
    path.write_text(json.dumps(cut))
    # no sign of life of the call (run/runtime/alive.py: it says when a call died; here the call lived on
    # and would say so): the lost seconds are bounded by the persistence interval
    path.with_suffix(".alive").unlink()
    answer = service.run_shard({"store": out["store"], "campaign_id": cid, "run_id": calls[-1]["run_id"],
                                "phase": "run", "shard": 0})
    final = json.loads(path.read_text())
    assert answer["status"] == "done" and answer["ops"] == 3000
    assert [s["segment"] for s in final["segments"]] == [0, 1]
    assert final["segments"][-1]["done"] == 3000
    assert Measurement.from_dict(final["measurement"]).total_ops == 3000
    assert 0 < final["segments"][1]["lost_s"] <= 0.6


def test_resume_after_a_killed_shard_whose_cleanup_ran_says_the_data_is_gone(tmp_path, spawn):
    """Issue 33 item 6: a shard killed for good (every retry), and `cleanup` in the phases: the
    state machine goes on to cleanup, which drops the tables; `dbswarm resume` then refuses,
    saying why, and leaves the partial result as it was (it ran the shard against the dropped
    table, overwrote `partial` with `incomplete`, exit 6, and named the wrong cause)."""
    spec = tmp_path / "cleanup.json"
    spec.write_text(json.dumps({
        "name": "faults-cleanup", "seed": 6,
        "workload": {"preset": "b", "table": "faults_cleanup", "recordcount": 500, "operationcount": 20000,
                     "target": 4000, "threads": 2},
        "fanout": {"shards": 2}, "phases": ["prepare", "load", "run", "cleanup"]}))
    fault = {"function": "WorkerFunction", "match": {"phase": "run", "shard": 1}, "mode": "kill", "after_s": 1.0}
    proc = spawn(["run", str(spec), "--results", str(tmp_path / "r"), "--quiet"],
                 env=dbswarm_env(DBSWARM_EMULATOR_FAULT=json.dumps(fault)))
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 3, err          # a shard is missing: partial
    folder = next((tmp_path / "r").iterdir())
    first = (folder / "result.json").read_text()
    assert json.loads(first)["status"] == "partial"
    assert list(folder.glob("runs/*/prepare-cleanup.json")), "the cleanup step did not run"
    again = spawn(["resume", json.loads(first)["campaign_id"], "--results", str(tmp_path / "r")])
    out, err = again.communicate(timeout=120)
    assert again.returncode == 2, err
    assert "the cleanup step already dropped the tables of run 000" in err and "data" in err and "gone" in err, err
    assert (folder / "result.json").read_text() == first   # the partial result stays as it was
