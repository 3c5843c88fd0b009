"""Issue 57, item 2: a database frozen mid-run (SIGSTOP of every process of the server: its
calls neither answer nor fail) was reported ``complete`` (exit 0), every client thread
abandoned, its headline from the seconds before the freeze and its ops/s from the whole phase,
neither said. Now the phase is ``incomplete`` (exit 6), its problem names the stalled threads
and from when, result.json keeps each stall, and the headline leaves the stalled seconds out
(said in its caveat, beside the whole phase's figure).

The servers are this checkout's own fault set (``DBSWARM_FAULT_SERVERS_DIR``): never the shared
test servers. Every test SIGCONTs what it stopped, whatever happens."""
import json
import os
import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest

from tests import servers
from tests.faults.conftest import dbswarm_env, kill_group, wait_gone

FAULT_DIR = servers.own_set_dir("faults")  # DIR-faults: never a path another suite uses
STALL_S = 1.0   # DBSWARM_STALL_S of these runs (default 30): the stalls here last a few seconds
GRACE_S = 1.0   # DBSWARM_STUCK_THREAD_GRACE_S (default 10)


@pytest.fixture(scope="module")
def own_servers():
    env = servers.start_servers(FAULT_DIR)
    yield env
    servers.start_servers(FAULT_DIR)  # (idempotent) whatever a test left behind, running again


def server_pids(engine: str, env: dict) -> list[int]:
    """Every process of the server: PostgreSQL's postmaster first, then its children (backends,
    background workers); MariaDB's one mariadbd (its threads stop with it)."""
    if engine == "postgresql":
        main = int((Path(env["DBSWARM_TEST_PG_DATADIR"]) / "postmaster.pid").read_text().split()[0])
        out = subprocess.run(["ps", "-o", "pid=", "--ppid", str(main)], capture_output=True, text=True).stdout
        return [main] + [int(p) for p in out.split()]
    pidfile = Path(env["DBSWARM_TEST_MYSQL_SOCKET"]).parent / "mysqld.pid"
    return [int(pidfile.read_text().strip())]


class Freeze:
    """SIGSTOP every process of the server now; SIGCONT after ``seconds`` (or at ``thaw()``)."""

    def __init__(self, engine, env, seconds: float):
        self.pids = server_pids(engine, env)
        self.at = time.time()
        for pid in self.pids:
            os.kill(pid, signal.SIGSTOP)
        self.timer = threading.Timer(seconds, self.thaw)
        self.timer.start()
        self.thawed_at = None

    def thaw(self):
        if self.thawed_at is None:
            self.thawed_at = time.time()
            for pid in reversed(self.pids):
                try:
                    os.kill(pid, signal.SIGCONT)
                except ProcessLookupError:
                    pass


# the two runs of every campaign here, one after the other: (maxexecutiontime, freeze_s); each frozen
# 1.5 s into its run phase. The first frozen ~3 s inside a 9 s run, thawed before its end; the second
# from inside a 4 s run until after the stuck-thread grace (its threads abandoned inside their calls)
RUNS = ((9, 3.0), (4, 6.0))
FREEZE_AFTER_S = 1.5


def _run_with_freezes(tmp_path, env, engine, model):
    """One `dbswarm run` of a campaign of the RUNS, each run's server frozen as RUNS says: (exit
    code, stderr, result, summary, [each run's Freeze])."""
    table = f"faults_stall_{engine[:2]}"
    spec = tmp_path / "stall.json"
    spec.write_text(json.dumps({
        "name": f"faults-stall-{engine}", "seed": 4,
        "target": servers.target(engine, env, shared_tables=True),
        "workload": {"preset": "c", "table": table, "recordcount": 1000, "operationcount": 0, "threads": 2},
        "matrix": {"workload": [{"maxexecutiontime": seconds} for seconds, _ in RUNS]},
        "fanout": {"shards": 1, "client_model": model}, "phases": ["prepare", "load", "run", "cleanup"]}))
    progress = tmp_path / "progress"
    progress.mkdir()
    proc = subprocess.Popen([sys.executable, "-m", "dbswarm", "run", str(spec), "--results", str(tmp_path / "r"),
                             "--quiet"], stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                            start_new_session=True,
                            env=dbswarm_env(DBSWARM_PROGRESS_DIR=progress, DBSWARM_STALL_S=STALL_S,
                                            DBSWARM_STUCK_THREAD_GRACE_S=GRACE_S, DBSWARM_PERSIST_INTERVAL_S=0))
    freezes: list[Freeze] = []
    try:
        for index, (_, freeze_s) in enumerate(RUNS):
            # the run's run phase under way (its shard's progress file: written from its armed instant
            # on; multiplexed clients count their operations only at their end), then the freeze
            deadline = time.monotonic() + 120
            while len({p.name.split(".")[0] for p in progress.glob("*.run.*.json")}) <= index:
                assert proc.poll() is None, proc.communicate()
                assert time.monotonic() < deadline, f"run {index}'s run phase never got going"
                time.sleep(0.05)
            time.sleep(FREEZE_AFTER_S)
            freezes.append(Freeze(engine, env, freeze_s))
            while freezes[-1].thawed_at is None:  # (its timer thaws it)
                assert proc.poll() is None or index == len(RUNS) - 1, proc.communicate()
                time.sleep(0.05)
        out, err = proc.communicate(timeout=120)
    finally:
        for freeze in freezes:
            freeze.timer.cancel()
            freeze.thaw()
        kill_group(proc.pid)
    assert wait_gone(proc.pid, 10) == []
    result = json.loads(next((tmp_path / "r").glob("*/result.json")).read_text())
    summary = next((tmp_path / "r").glob("*/summary.md")).read_text()
    return proc.returncode, err, result, summary, freezes


@pytest.fixture(scope="module", params=[("postgresql", "threads"), ("mysql", "threads"),
                                        ("postgresql", "multiplexed")], ids=lambda p: "-".join(p))
def frozen(request, own_servers, tmp_path_factory):
    """The campaign of RUNS on an engine, its clients' model: (engine, model, what
    _run_with_freezes returns); one for both tests (also with the clients' connections multiplexed
    on one thread, engine/mux.py)."""
    engine, model = request.param
    return engine, model, _run_with_freezes(tmp_path_factory.mktemp("stall"), own_servers, engine, model)


def _assert_stall_said(code, err, result, summary, freeze, abandoned, index):
    assert code == 6, err
    assert result["status"] == "incomplete"
    run = result["runs"][index]["phases"]["run"]
    assert run["status"] == "incomplete", run.get("problems")
    said = [p for p in run["problems"] if "stalled" in p]
    assert said and "shard 0 threads 0, 1 from " in said[0] and "s into the phase" in said[0], run["problems"]
    assert "stalled" in err and "stalled" in summary.split("###")[0]
    stalls = run["stalls"]["per_shard"]["0"]
    assert {s["thread"] for s in stalls} == {0, 1}, stalls
    for s in stalls:  # from when: the freeze (the last call that returned before it)
        assert freeze.at - 1.0 <= s["from"] <= freeze.at + 0.5, (s, freeze.at)
        assert s["to"] >= freeze.at + STALL_S
        assert bool(s.get("abandoned")) is abandoned, s
    # the headline's window: none of the stalled seconds in it, and it says so beside the whole figure
    stalled = set(run["steady"].get("stalled_seconds_left_out", []))
    frozen = set(range(int(freeze.at) + 1, int(min(freeze.thawed_at, run["ended_at"]))))
    ws, we = run["steady"]["window"]
    assert frozen & set(range(ws, we)) <= stalled, (frozen, stalled, run["steady"])
    assert "stalled" in run["throughput_caveat"] and "ops_per_s" in run["throughput_caveat"]
    if run["steady"]["ops_per_s"] is not None:
        tl = run["timeline"]
        totals = [sum(v[i] for v in tl["ops"].values() if i < len(v)) for i in range(max(map(len, tl["ops"].values())))]
        used = [sec for sec in range(ws, we) if sec not in stalled]
        assert run["steady"]["seconds"] == len(used)
        assert run["throughput"] == pytest.approx(sum(totals[sec - tl["start"]] for sec in used) / len(used), rel=1e-3)
        assert run["throughput"] > run["ops_per_s"]  # the whole phase's (stall included) is not the headline
    else:
        assert run["throughput_basis"] == "whole phase less its stalled seconds"
    return run


def test_server_frozen_then_thawed_mid_run(frozen):
    """Frozen ~3 s inside a 9 s run, thawed before its end: the threads go on after it."""
    engine, model, (code, err, result, summary, freezes) = frozen
    freeze = freezes[0]
    run = _assert_stall_said(code, err, result, summary, freeze, abandoned=False, index=0)
    assert run["client"]["model"] == model
    assert freeze.thawed_at < run["ended_at"]
    tl = run["timeline"]
    after = [sum(v[i] for v in tl["ops"].values() if i < len(v)) for i in range(int(freeze.thawed_at) + 1 - tl["start"],
                                                                                 int(run["ended_at"]) - tl["start"])]
    assert sum(after) > 0, "no operation after the thaw"
    assert not run["abandoned_threads"]["count"]


def test_server_frozen_past_the_phase_end(frozen):
    """Frozen from inside a 4 s run until after the stuck-thread grace: both threads abandoned
    inside their calls, the issue's case (exit 0, complete, before)."""
    engine, model, (code, err, result, summary, freezes) = frozen
    run = _assert_stall_said(code, err, result, summary, freezes[1], abandoned=True, index=1)
    assert run["client"]["model"] == model
    assert run["abandoned_threads"]["count"] == 2
    assert "abandoned" in [p for p in run["problems"] if "stalled" in p][0]
