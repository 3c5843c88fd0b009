"""The suite in parallel (tests/parallel.py): what each worker runs, in what order, on whose servers."""
import json
import os
import shutil
import subprocess
import sys
import tempfile
from pathlib import Path

import pytest

from tests import parallel, servers

ROOT = Path(__file__).resolve().parents[2]


class _Item:
    def __init__(self, nodeid: str):
        self.nodeid = nodeid


def test_modules_sharing_a_session_campaign_are_one_unit_and_others_their_own():
    # the demo's three readers, the comparison's two, the alternate set's two: one worker each
    assert {parallel.unit_of(m) for m in ("tests/e2e/test_report_browser.py", "tests/e2e/test_terminal.py",
                                          "tests/serverless/test_local_mode.py")} == {"demo_run"}
    assert {parallel.unit_of(m) for m in ("tests/e2e/test_compare.py", "tests/e2e/test_ci_workflow.py")} \
        == {"compare_results"}
    assert {parallel.unit_of(m) for m in ("tests/e2e/test_server_statement_times.py",
                                          "tests/e2e/test_server_statistics_matrix.py")} == {"alt_servers"}
    assert parallel.unit_of("tests/unit/test_plan.py") == "tests/unit/test_plan.py"
    # every module naming a shared fixture is in that fixture's unit (none is split over workers)
    for path in ROOT.glob("tests/**/test_*.py"):
        module = str(path.relative_to(ROOT))
        named = [f for f in parallel.SHARED_FIXTURES if f in path.read_text()]
        assert parallel.unit_of(module) == (named[0] if named else module), module


def test_long_folders_come_first_and_a_units_tests_stay_together_in_order():
    ids = ["tests/unit/test_plan.py::a", "tests/e2e/test_compare.py::x", "tests/unit/test_plan.py::b",
           "tests/faults/test_shard_crash.py::k", "tests/e2e/test_ci_workflow.py::y", "tests/e2e/test_tpcc.py::t",
           "tests/contract/test_binding_contract.py::c"]
    items = [_Item(i) for i in ids]
    parallel.order(items)  # type: ignore[arg-type]
    assert [i.nodeid for i in items] == [
        "tests/e2e/test_compare.py::x", "tests/e2e/test_ci_workflow.py::y", "tests/e2e/test_tpcc.py::t",
        "tests/faults/test_shard_crash.py::k", "tests/contract/test_binding_contract.py::c",
        "tests/unit/test_plan.py::a", "tests/unit/test_plan.py::b"]


@pytest.mark.servers
def test_a_worker_other_than_gw0_runs_on_a_server_set_of_its_own():
    """own_servers("gwN") in a fresh process: DIR-gwN started, the process's environment (which
    every test's subprocess inherits) pointing at it, the fault and alternate sets derived from it."""
    base = Path(tempfile.mkdtemp(prefix="dbswarm-gw-"))  # short: a unix socket's path has 107 bytes
    env = {k: v for k, v in os.environ.items() if not k.startswith("DBSWARM_TEST_")
           and k not in ("DBSWARM_FAULT_SERVERS_DIR", "DBSWARM_ALT_SERVERS_DIR")}
    env.update(DBSWARM_TEST_SERVERS_DIR=str(base), DBSWARM_FAULT_SERVERS_DIR="/elsewhere-faults",
               PYTHONPATH=os.pathsep.join([str(ROOT / "shared"), str(ROOT)]))
    code = ("import json, os; from tests import parallel, servers; parallel.own_servers('gw7');"
            "print(json.dumps({'env': dict(os.environ), 'faults': servers.own_set_dir('faults'),"
            " 'alt': servers.own_set_dir('alt')}))")
    proc = subprocess.run([sys.executable, "-c", code], cwd=ROOT, env=env, capture_output=True, text=True,
                          timeout=600)
    try:
        assert proc.returncode == 0, proc.stderr[-3000:]
        out = json.loads(proc.stdout.strip().splitlines()[-1])
        own = f"{base}-gw7"
        assert out["env"]["DBSWARM_TEST_SERVERS_DIR"] == own and out["env"]["DBSWARM_TEST_DIR"] == own
        assert (out["faults"], out["alt"]) == (f"{own}-faults", f"{own}-alt")
        with servers.pg_admin(out["env"]) as pg:
            assert pg.execute("SHOW data_directory").fetchone()[0].startswith(own)
    finally:
        servers.stop_servers(f"{base}-gw7")
        shutil.rmtree(f"{base}-gw7", ignore_errors=True)
        base.rmdir()
