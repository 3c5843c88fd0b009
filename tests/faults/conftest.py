"""Fault tests: real servers, real processes, each bounded in time. Tests here never stop
or fill the shared test servers: a test that stops a server starts its own instances
(``scripts/test-servers start DIR``), and tables and campaign names are the tests' own."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def dbswarm_env(**extra) -> dict:
    """The environment of a `python -m dbswarm` subprocess running this checkout."""
    env = dict(os.environ)
    env["PYTHONPATH"] = os.pathsep.join([str(ROOT / "shared"), str(ROOT)] +
                                        ([env["PYTHONPATH"]] if env.get("PYTHONPATH") else []))
    env.update({k: str(v) for k, v in extra.items()})
    return env


def processes_in_group(pgid: int) -> list[str]:
    """'pid args' of every live process of a process group (a process listing)."""
    out = subprocess.run(["ps", "-eo", "pid=,pgid=,stat=,args="], capture_output=True, text=True).stdout
    rows = []
    for line in out.splitlines():
        parts = line.split(None, 3)
        if len(parts) >= 3 and parts[1] == str(pgid) and not parts[2].startswith("Z"):
            rows.append(f"{parts[0]} {parts[3] if len(parts) > 3 else ''}")
    return rows


def wait_gone(pgid: int, timeout: float) -> list[str]:
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        left = processes_in_group(pgid)
        if not left:
            return []
        time.sleep(0.1)
    return processes_in_group(pgid)


def kill_group(pgid: int):
    try:
        os.killpg(pgid, signal.SIGKILL)
    except ProcessLookupError:
        pass


@pytest.fixture
def spawn():
    """Start `python -m dbswarm ARGS` in its own session; every group left is killed at the end."""
    started = []

    def start(args, env=None, **kw):
        proc = subprocess.Popen([sys.executable, "-m", "dbswarm", *args], env=env or dbswarm_env(),
                                stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True,
                                start_new_session=True, cwd=kw.get("cwd"))
        started.append(proc.pid)
        return proc
    yield start
    for pgid in started:
        kill_group(pgid)
