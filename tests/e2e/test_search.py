"""Peak search through the state machine in local mode (moto executes campaign.asl.json: the
plan step plans the first step, NextStep each next one, a Choice loops back to the runs)."""
import json
import subprocess
import sys
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import timing

ROOT = Path(__file__).resolve().parents[2]

# the noop server: 8 calls at once, 50 ms each: 160 calls/s at most. The service time dwarfs the
# client's own work per call even on a loaded machine (a few ms when the CPUs are shared with
# hogs): at 5 ms, 8 threads lost a fifth of the capacity to it, 16 threads hid it, and the
# search saw a gain past the knee (an extra step, issue 35)
CAPACITY, SERVICE_MS = 8, 50.0


@pytest.fixture(scope="module", autouse=True)
def noisy(tmp_path_factory):
    """The noisy search of the last test, a `dbswarm run` of its own started before this module's
    first test: its noop server mostly sleeps, so it runs beside the other tests instead of after
    them. (its folder, the process)"""
    tmp = tmp_path_factory.mktemp("noisy")
    capacity, service_ms = 8, 20.0  # 400 calls/s at most, reached at 8 threads
    campaign = {
        "name": "search-noisy", "seed": 1, "phases": ["run"],
        "target": {"engine": "noop", "options": {
            "capacity": capacity, "service_time_ms": service_ms,
            "noise": {"file": str(tmp / "processes"), "runs": [2], "stall_s": 2, "every_s": 3}}},
        "workload": {"preset": "S6", "recordcount": 1000, "operationcount": 0, "maxexecutiontime": 6},
        "fanout": {"shards": 1},
        "search": {"key": "threads", "start": 1, "factor": 2, "max": 64, "refine": 0,
                   "stop": {"gain_below": 0.1, "gain_steps": 1, "peak_samples": 1}},
    }
    (tmp / "noisy.json").write_text(json.dumps(campaign))
    proc = subprocess.Popen([sys.executable, "-m", "dbswarm", "run", str(tmp / "noisy.json"), "--results",
                             str(tmp / "results"), "--quiet", "--json"], stdout=subprocess.PIPE,
                            stderr=subprocess.PIPE, text=True, cwd=ROOT)
    yield tmp, proc, capacity
    if proc.poll() is None:  # the noisy test was not run (-k)
        proc.kill()
        proc.communicate()


def test_search_finds_the_peak_of_a_noop_server_with_a_capacity(tmp_path):
    campaign = {
        "name": "search-noop", "seed": 1, "phases": ["run"],
        "target": {"engine": "noop", "options": {"capacity": CAPACITY, "service_time_ms": SERVICE_MS}},
        "workload": {"preset": "S6", "recordcount": 1000, "operationcount": 0, "maxexecutiontime": 2},
        "fanout": {"shards": 1},
        "search": {"key": "threads", "start": 1, "factor": 2, "max": 64, "refine": 1,
                   "stop": {"gain_below": 0.1, "gain_steps": 1}},
    }
    out = run_campaign(campaign, str(tmp_path), show_progress=False, lead_seconds=0.3, log=lambda *a: None)
    assert out["execution"]["status"] == "SUCCEEDED", out
    cid = out["campaign_id"]
    result = json.loads((tmp_path / cid / "result.json").read_text())
    cell, = result["search"]["cells"]
    order = cell["order"]
    assert order[:5] == [1, 2, 4, 8, 16]                       # geometric steps, one run each
    # the plateau rests on three runs of each value it compared (stop.peak_samples), interleaved
    assert order[5:9] == [8, 16, 8, 16]
    assert [r["search_step"]["kind"] for r in result["runs"]][5:9] == ["confirm"] * 4
    assert cell["stop"]["rule"] == "plateau" and "gain below 10%" in cell["stop"]["reason"]
    assert "3 samples" in cell["stop"]["reason"]
    assert len(order) == 10 and 4 < order[9] < 8                # one narrowing step below the knee
    assert cell["peak"]["samples"] == 3
    # the peak: within one step of the true capacity
    assert CAPACITY / 2 < cell["knee"]["value"] <= CAPACITY * 2
    assert cell["knee"]["value"] == CAPACITY
    best = CAPACITY / (SERVICE_MS / 1000)
    assert 0.7 * best < cell["peak"]["throughput"] <= 1.05 * best
    # every step is a run of the result, with its shard data kept
    steps = {s["run_id"]: s for s in cell["curve"]}
    assert [r["run_id"] for r in result["runs"]] == [s["run_id"] for s in sorted(cell["curve"], key=lambda s: s["run_id"])]
    for run in result["runs"]:
        assert run["search_step"]["value"] == steps[run["run_id"]]["value"]
        assert (tmp_path / cid / "runs" / run["run_id"] / "run" / "shard-0.json").is_file()
    summary = (tmp_path / cid / "summary.md").read_text()
    assert "### Peak search over threads" in summary and "knee" in summary
    trace = json.loads((tmp_path / cid / "execution.json").read_text())
    assert "NextStep" in json.dumps(trace)
    # report.html draws the curve, the knee and the peak marked as their own points
    import re
    page = (tmp_path / cid / "report.html").read_text()
    charts = json.loads(re.search(r"<script type='application/json' id='dbswarm-charts'>(.*?)</script>", page,
                                  re.S).group(1))
    tput = next(c for c in charts if "search" in c["id"] and c["id"].endswith("tput"))
    assert tput["x"] == sorted(order) and tput["xlabel"] == "threads"
    marks = {sr["label"]: sr["values"] for sr in tput["series"]}
    assert [v for v in marks["knee"] if v is not None] == [cell["knee"]["throughput"]]
    assert marks["knee"][tput["x"].index(CAPACITY)] == cell["knee"]["throughput"]


@pytest.mark.servers
def test_search_on_mariadb_point_select_stops_with_its_reason(tmp_path):
    """sysbench oltp_point_select on MariaDB, in a database of its own (dbswarm_search: other
    tests use sbtest1 in dbswarm on the same server): the search stops and says why."""
    from tests import servers
    env = servers.start()
    import pymysql
    conn = pymysql.connect(host="127.0.0.1", port=int(env["DBSWARM_TEST_MYSQL_URL"].rsplit(":", 1)[1].split("/")[0]),
                           user="dbswarm", password=servers.password(env))
    conn.cursor().execute("CREATE DATABASE IF NOT EXISTS dbswarm_search")
    conn.close()
    target = servers.target("mysql", env)
    target["url"] = target["url"].rsplit("/", 1)[0] + "/dbswarm_search"
    campaign = {
        "name": "search-mariadb", "seed": 2, "target": target,
        "workload": {"family": "sysbench", "test": "oltp_point_select", "tables": 1, "table_size": 1000,
                     "time": 2},
        "phases": ["prepare", "load", "run"],
        "search": {"key": "threads", "start": 1, "factor": 2, "max": 16, "max_steps": 5, "refine": 0,
                   "stop": {"gain_below": 0.05, "gain_steps": 1, "p99_ms": 50, "peak_samples": 1}},
    }
    out = run_campaign(campaign, str(tmp_path), show_progress=False, lead_seconds=0.3, log=lambda *a: None)
    assert out["execution"]["status"] == "SUCCEEDED", out
    cid = out["campaign_id"]
    result = json.loads((tmp_path / cid / "result.json").read_text())
    cell, = result["search"]["cells"]
    assert cell["done"] and cell["stop"]["rule"] in ("plateau", "failure", "max", "max_steps")
    assert cell["stop"]["reason"]
    assert cell["peak"]["throughput"] > 0 and cell["knee"]["value"] in cell["order"]
    for s in cell["curve"]:
        assert (tmp_path / cid / "runs" / s["run_id"] / "run").is_dir() and s["throughput"] > 0
    summary = (tmp_path / cid / "summary.md").read_text()
    assert f"Stopped: **{cell['stop']['rule']}**" in summary


def test_search_on_a_noisy_noop_server_measures_a_noisy_step_again(noisy):
    """A noisy neighbour stalls the server two seconds in three during the second run only (the
    noop binding's ``noise``: 2 threads measure about as much as 1). One number against the
    threshold called that a plateau at 2 threads; the noise-aware test sees the run's per-second
    spread, runs the step again, and grows on to the true knee."""
    tmp_path, proc, capacity = noisy
    stdout, stderr = proc.communicate(timeout=timing.timeout(600))
    assert proc.returncode == 0, stderr[-3000:]
    out = json.loads(stdout)
    assert out["execution"]["status"] == "SUCCEEDED", out
    result = json.loads((tmp_path / "results" / out["campaign_id"] / "result.json").read_text())
    cell, = result["search"]["cells"]
    order, steps = cell["order"], cell["curve"]
    noisy = next(s for s in steps if s["value"] == 2 and s["kind"] == "grow")
    assert noisy["throughput"] < 1.1 * next(s for s in steps if s["value"] == 1)["throughput"]  # "no gain"
    assert order[:3] == [1, 2, 2]
    assert [r["search_step"]["kind"] for r in result["runs"]][:4] == ["grow", "grow", "repeat", "grow"]
    repeat = next(s for s in steps if s["value"] == 2 and s["kind"] == "repeat")
    assert repeat["gain_test"] == "above" and noisy["se"] > repeat["se"]
    assert cell["stop"]["rule"] == "plateau" and cell["stop"]["at"] >= 2 * capacity
    assert cell["knee"]["value"] == capacity
    assert (tmp_path / "processes").read_text() == str(len(order))  # one serving process per run
