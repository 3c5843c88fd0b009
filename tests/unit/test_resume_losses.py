"""Issue 57, item 8: after a resume, a run lost its server counters with no warning, a lost
attempt skewed the client/server check to 0.54 without a word, and ``lost_s`` was charged as
a whole persistence interval per shard where about half of it was lost. Now the phase's
``server`` says which window edge is missing and why, the cross-check says what the client's
figures lost, and a resume counts the seconds from the last persisted write to the dead call's
last sign of life (``run/runtime/alive.py``), not the bound."""
import json
import os
import time

import pytest

from dbswarm.measure.recorder import Measurement, Timeline
from dbswarm.results.aggregate import merge_phase
from dbswarm.results.store import LocalStore, open_store
from dbswarm.run.runtime import service


def test_a_missing_window_edge_is_said_not_left_out(tmp_path):
    out = service.run_steps({"name": "edges", "target": {"engine": "noop"},
                             "workload": {"preset": "c", "recordcount": 100, "operationcount": 2000, "threads": 1},
                             "fanout": {"shards": 1}, "phases": ["run"]},
                            str(tmp_path), lambda ev, n: [service.run_shard(dict(ev, shard=i)) for i in range(n)],
                            lead_seconds=0)
    store = open_store(out["store"])
    result = store.get_json(out["result_key"])
    run_id = result["runs"][0]["run_id"]
    assert "missing" not in result["runs"][0]["phases"]["run"]["server"]
    # the runner stopped after the shards and before the end edge (killed; a resume that had
    # nothing left to run in the phase never read it)
    os.unlink(os.path.join(store.url, out["campaign_id"], "runs", run_id, "run", "window-end.json"))
    service.aggregate_campaign({"store": out["store"], "campaign_id": out["campaign_id"]})
    phase = store.get_json(out["result_key"])["runs"][0]["phases"]["run"]
    assert phase["server"]["missing"].startswith("the end edge of the run phase's measured window was never read")
    assert "no server-side counters" in phase["server"]["missing"]
    summary = store.get_text(store.key(out["campaign_id"], "summary.md"))
    assert "run phase: the end edge of the run phase's measured window was never read" in summary


def _doc(reads: int, segments: list) -> dict:
    m = Measurement()
    s = m.op("READ")
    s.count = reads
    s.histogram.record_value(200, reads)
    m.timeline = Timeline(100)
    m.timeline.ops = {"READ": [reads // 20] * 20}
    return {"campaign_id": "c", "run_id": "r", "phase": "run", "shard": 0, "threads": 1,
            "binding": {"engine": "postgresql", "is_real_database": True}, "measurement": m.to_dict(),
            "started_at": 100.0, "ended_at": 120.0, "status": "done", "start_skew_s": 0.01, "segments": segments}


def test_a_cross_check_skewed_by_lost_seconds_says_so():
    window = {"seconds": 20.0, "warnings": [], "server": {"statements": 18_500}}
    lost = _doc(10_000, [{"segment": 0, "began_at": 100.0, "ended_at": 108.0},
                         {"segment": 1, "began_at": 111.0, "ended_at": 120.0, "lost_s": 8.2}])
    phase = merge_phase("ycsb", {"family": "ycsb", "warmuptime": 0}, 1, "run", {0: lost}, {}, window=window)
    assert phase["server"]["cross_check"]["statements"]["ratio"] == pytest.approx(0.5405, abs=1e-4)
    note = phase["server"]["cross_check_note"]
    assert "8.2 s measured by shard calls that died after their last persisted write were lost" in note
    assert "ratios read low" in note
    whole = _doc(10_000, [{"segment": 0, "began_at": 100.0, "ended_at": 120.0}])
    phase = merge_phase("ycsb", {"family": "ycsb", "warmuptime": 0}, 1, "run", {0: whole}, {}, window=window)
    assert "cross_check_note" not in phase["server"]


def test_resume_counts_the_seconds_lost_until_the_dead_call_was_last_alive(tmp_path, monkeypatch):
    """The shard file as a running call's second write left it (the call died after it); its
    sign of life says it was alive 0.25 s after that write: the resume counts 0.25 s, not the
    whole persistence interval (0.6 s) it charged before."""
    monkeypatch.setenv("DBSWARM_PERSIST_INTERVAL_S", "0.6")
    written, real_put = [], LocalStore.put_json

    def put_json(self, key, obj):
        if key.endswith("/run/shard-0.json"):
            written.append(json.loads(json.dumps(obj)))
        return real_put(self, key, obj)
    monkeypatch.setattr(LocalStore, "put_json", put_json)
    campaign = {"name": "lost", "seed": 3,
                "workload": {"preset": "c", "table": "lost_s", "recordcount": 300, "operationcount": 3000,
                             "target": 1500, "threads": 1},
                "fanout": {"shards": 1}, "phases": ["prepare", "load", "run"]}
    calls = []
    out = service.run_steps(campaign, str(tmp_path / "r"),
                            lambda ev, n: calls.extend(service.run_shard(dict(ev, shard=i)) for i in range(n)),
                            lead_seconds=0.1)
    key = f"{out['campaign_id']}/runs/{calls[-1]['run_id']}/run/shard-0.json"
    path, alive = tmp_path / "r" / key, tmp_path / "r" / key.replace(".json", ".alive")
    doc = json.loads(path.read_text())
    # the call's sign of life was set while it ran: last at its end (within one beat)
    seg = doc["segments"][-1]
    assert seg["began_at"] <= alive.stat().st_mtime <= seg["ended_at"] + 1.0
    cut = written[1]
    assert cut["status"] == "continue" and cut["segments"][-1]["persisted"] == "interval"
    path.write_text(json.dumps(cut))
    died = cut["segments"][-1]["ended_at"] + 0.25
    os.utime(alive, (died, died))
    assert time.time() - cut["segments"][-1]["ended_at"] > 0.6   # the old bound would charge 0.6 s
    answer = service.run_shard({"store": out["store"], "campaign_id": out["campaign_id"],
                                "run_id": calls[-1]["run_id"], "phase": "run", "shard": 0})
    final = json.loads(path.read_text())
    assert answer["status"] == "done" and answer["ops"] == 3000
    assert final["segments"][1]["lost_s"] == pytest.approx(0.25, abs=0.002)


def test_a_sign_of_life_of_another_call_is_not_taken(tmp_path):
    """A later call that died before its first write left its own sign of life: it says nothing
    of when the call that wrote the last segment died."""
    from dbswarm.run.runtime import alive
    store = LocalStore(tmp_path)
    key = "c/runs/000/run/shard-0.json"
    with alive.Alive(store, key, 3):
        time.sleep(0.05)
    assert alive.last_alive(store, key, 3) is not None
    assert alive.last_alive(store, key, 2) is None
    assert alive.last_alive(LocalStore(tmp_path / "other"), key, 3) is None
