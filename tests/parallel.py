"""The suite in parallel (pytest-xdist: ``scripts/test`` runs ``-n N``).

Each worker has a server set of its own, as two suites on one machine do (tests/servers.py): gw0
the one scripts/test started (DIR), every other worker DIR-gwN, started when the worker starts
(about 4 s) and stopped when it ends, with its fault and alternate sets derived from it
(DIR-gwN-faults, DIR-gwN-alt: the session fixtures that start those stop them). A test therefore
sees what it sees in a serial run: its own servers' tables, connections, restarts and statistics,
nothing another worker does to them. What workers still share is the machine (its CPUs), which
every test already tolerates (the suite runs on a loaded 2-CPU machine).

Work is handed out a module at a time (a module's fixtures are set up once), modules sharing a
session fixture that runs a campaign (the demo, the comparison's campaigns, the alternate server
set) as one unit, and the units in ``UNIT_ORDER``: the long end-to-end folders first, the many
short unit tests last, where they fill the gaps the long ones leave at the end.
"""
from __future__ import annotations

import os
import subprocess
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
# the session fixtures (tests/conftest.py) a unit of work keeps together: each runs once per worker
SHARED_FIXTURES = ("demo_run", "compare_results", "alt_servers")
UNIT_ORDER = ("tests/e2e/", "tests/faults/", "tests/serverless/", "tests/fidelity/", "tests/contract/", "tests/unit/")


def worker() -> str | None:
    """This process's xdist worker id (gw0, gw1, ...), None in a serial run or in the controller."""
    return os.environ.get("PYTEST_XDIST_WORKER")


def own_servers(name: str) -> None:
    """A worker other than gw0: start its server set, DIR-<name>, and point this process's
    environment (and so every subprocess a test starts) at it."""
    from tests import servers
    if name == "gw0":
        return
    if not os.environ.get("SAM_CLI_VENV"):
        # the SAM CLI scripts/install put beside the shared set's DIR: one install for every worker
        os.environ["SAM_CLI_VENV"] = subprocess.run([str(ROOT / "scripts" / "lib" / "sam-cli-dir")],
                                                    capture_output=True, text=True, check=True).stdout.strip()
    own = f"{servers.servers_dir().rstrip('/')}-{name}"
    os.environ["DBSWARM_TEST_SERVERS_DIR"] = own
    # derived from DIR-gwN (tests/servers.py own_set_dir) and stopped by the fixtures that start them
    os.environ.pop("DBSWARM_FAULT_SERVERS_DIR", None)
    os.environ.pop("DBSWARM_ALT_SERVERS_DIR", None)
    try:
        env = servers.start_servers(own)
    except servers.ServersError as exc:
        pytest.exit(f"worker {name}: its own test servers did not start: {exc}", returncode=3)
    os.environ.update(env)


def stop_own_servers(name: str) -> None:
    from tests import servers
    if name != "gw0" and Path(servers.servers_dir(), "env").exists():
        servers.stop_servers(servers.servers_dir())


def unit_of(module: str, _cache: dict[str, str] = {}) -> str:  # noqa: B006 (a cache on purpose)
    """The unit of work of a test module (its path from the root): the first of SHARED_FIXTURES its
    source names, else the module itself. The controller schedules by nodeid alone (it collects
    nothing), hence the source, not the collected items' fixtures."""
    if module not in _cache:
        try:
            text = (ROOT / module).read_text()
        except OSError:
            text = ""
        _cache[module] = next((f for f in SHARED_FIXTURES if f in text), module)
    return _cache[module]


def make_scheduler(config: pytest.Config, log: object) -> object:
    """xdist's load-by-scope scheduler with unit_of as the scope (pytest 9.2's node ids cannot
    carry xdist_group's "@group" suffix any more: xdist 3.8's loadgroup falls back to one test at
    a time)."""
    from xdist.scheduler import LoadScopeScheduling

    class UnitScheduling(LoadScopeScheduling):
        def _split_scope(self, nodeid: str) -> str:
            return unit_of(nodeid.split("::", 1)[0])
    return UnitScheduling(config, log)


def order(items: list[pytest.Item]) -> None:
    """The units in UNIT_ORDER, then in collection order: every worker collects the same order,
    the order the scheduler hands them out in."""
    first_seen: dict[str, int] = {}
    for item in items:
        first_seen.setdefault(unit_of(item.nodeid.split("::", 1)[0]), len(first_seen))

    def rank(item: pytest.Item) -> tuple[int, int]:
        folder = next((i for i, f in enumerate(UNIT_ORDER) if item.nodeid.startswith(f)), len(UNIT_ORDER))
        return folder, first_seen[unit_of(item.nodeid.split("::", 1)[0])]
    items.sort(key=rank)  # stable: a unit's tests keep their order
