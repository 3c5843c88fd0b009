"""Settings for the whole test suite, and the fixtures more than one folder of tests shares."""
import json
import os
import subprocess
import sys
from pathlib import Path

import pytest

from tests import parallel, timing

ROOT = Path(__file__).resolve().parents[1]

# The machine the suite runs on is shared by other jobs (a loaded CI runner, several sessions
# on two CPUs): every test's client may wait for a CPU far longer than its database takes, and
# be judged bound (docs/client-health.md). That verdict is reported, but it does not fail the
# campaigns of tests about other things; tests of the verdict set results.allow_client_bound
# themselves (it wins over this default) or remove the variable.
os.environ.setdefault("DBSWARM_ALLOW_CLIENT_BOUND", "1")
# Likewise a client thread that completes no call for DBSWARM_STALL_S (default 30 s) makes its phase
# incomplete: on a loaded 2-CPU runner a thread can wait long for a CPU. The tests of stalls
# (tests/faults/test_stalled_server.py, tests/unit/test_stalls.py) set their own bound.
os.environ.setdefault("DBSWARM_STALL_S", "60")


def pytest_collection_modifyitems(items):
    """The slow tests of tests/tiers.py marked ``slow``: ``-m "not slow"`` is the fast tier. In a
    worker of a parallel run, the units of work and their order (tests/parallel.py)."""
    from tests import tiers
    for item in items:
        if tiers.is_slow(item.nodeid):
            item.add_marker(pytest.mark.slow)
    if parallel.worker():
        parallel.order(items)


@pytest.hookimpl(optionalhook=True)  # xdist's hook: absent without it (-p no:xdist)
def pytest_xdist_make_scheduler(config, log):
    """The controller of a parallel run: units of work of tests/parallel.py."""
    return parallel.make_scheduler(config, log)


def pytest_configure(config):
    """A worker of a parallel run: its own server set (tests/parallel.py)."""
    if parallel.worker():
        parallel.own_servers(parallel.worker())


def pytest_unconfigure(config):
    if parallel.worker():
        parallel.stop_own_servers(parallel.worker())


@pytest.fixture(scope="session")
def demo_run(tmp_path_factory):
    """examples/demo.yaml run once per test session, as scripts/demo runs it (``python -m dbswarm
    run``, the progress bar on, in a terminal of 160 columns: the bar's description whole) into a
    folder of its own: (the finished process, the campaign's results folder). Shared by the tests
    that read what the demo leaves (its report in a browser, the state machine's trace of local
    mode, the progress bars and final tables in the terminal): the demo takes about a minute,
    once is enough."""
    results = tmp_path_factory.mktemp("demo")
    # as a user runs it: the suite's own DBSWARM_STALL_S (below) is not the demo's
    env = {k: v for k, v in os.environ.items() if k not in ("DBSWARM_PROGRESS_DIR", "DBSWARM_STALL_S")}
    env["COLUMNS"] = "160"
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "run", str(ROOT / "examples" / "demo.yaml"),
                           "--results", str(results)], capture_output=True, text=True, env=env,
                          timeout=timing.timeout(600), cwd=ROOT)
    folders = [p for p in results.iterdir() if p.is_dir() and p.name.startswith("demo-")]
    return proc, (folders[0] if len(folders) == 1 else None)


def _compare_campaign(ms: float, threads: int = 4, repeat: int = 5) -> dict:
    return {"name": "cmp", "phases": ["run"], "repeat": repeat,
            "target": {"engine": "noop", "options": {"service_time_ms": ms}},
            "workload": {"preset": "a", "recordcount": 1000, "operationcount": 0, "maxexecutiontime": 1,
                         "threads": threads},
            "fanout": {"shards": 1}}


@pytest.fixture(scope="session")
def compare_results(tmp_path_factory) -> dict:
    """Results for `dbswarm compare` (tests/e2e/test_compare.py, test_ci_workflow.py), run once per
    session: {name: the campaign folder} of tiny noop campaigns of 5 runs of 1 s (``repeat: 5``),
    whose ``service_time_ms`` is the server's time per call: base and same (5 ms), slow (25 ms:
    five times, beyond what a loaded machine does to a 5 ms call, whose p50 was seen at up to
    18 ms), threads (8 threads instead of 4, one run)."""
    root = tmp_path_factory.mktemp("compare")
    specs = {"base": _compare_campaign(5), "same": _compare_campaign(5), "slow": _compare_campaign(25),
             "threads": _compare_campaign(5, threads=8, repeat=1)}
    # two at a time, side by side (`dbswarm run` in its own process each): base and same see the same
    # machine, whatever else loads it meanwhile (run one after the other, a load that came or went
    # between them was a "regression" of the same configuration)
    out = {}
    for pair in (("base", "same"), ("slow", "threads")):
        procs = {}
        for name in pair:
            path = root / f"{name}.json"
            path.write_text(json.dumps(specs[name]))
            procs[name] = subprocess.Popen([sys.executable, "-m", "dbswarm", "run", str(path), "--results",
                                            str(root / name), "--quiet", "--json"], cwd=ROOT,
                                           stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        for name, proc in procs.items():
            stdout, stderr = proc.communicate(timeout=timing.timeout(600))
            assert proc.returncode == 0, (name, stderr[-3000:])
            o = json.loads(stdout)
            assert o["status"] == "complete", o
            out[name] = Path(o["store"]) / o["campaign_id"]
    return out


@pytest.fixture(scope="session")
def alt_servers():
    """The test servers with every optional statistics source inverted (tests/servers.py,
    ALT_OPTIONS): MariaDB with performance_schema on, PostgreSQL without pg_stat_statements
    preloaded. Started once per session; stopped at its end unless DBSWARM_ALT_SERVERS_DIR names
    a set of the caller's own."""
    from tests import servers
    try:
        env = servers.start_alternate()
    except servers.ServersError as exc:
        pytest.fail(str(exc))
    yield env
    if not os.environ.get("DBSWARM_ALT_SERVERS_DIR"):
        servers.stop_servers(servers.alt_servers_dir())
