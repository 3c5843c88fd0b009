"""Issue 58 item 6: two test suites on one machine, each with its own DBSWARM_TEST_SERVERS_DIR,
share no server set and no install folder: the fault tests' and the optional-statistics tests'
server sets and the SAM CLI's virtualenv are derived from that DIR (scripts/lib/server-dirs.sh,
scripts/lib/sam-cli-dir, tests/servers.py alike), never the fixed /tmp/dbswarm-faults-servers,
/tmp/dbswarm-alt-servers or /opt/sam-cli."""
import os
import re
import subprocess
from pathlib import Path

from tests import servers

ROOT = Path(__file__).resolve().parents[2]
OWN = ("DBSWARM_FAULT_SERVERS_DIR", "DBSWARM_ALT_SERVERS_DIR", "SAM_CLI_VENV", "DBSWARM_TEST_DIR")


def _paths(servers_dir: str, monkeypatch) -> dict:
    env = {k: v for k, v in os.environ.items() if k not in OWN}
    env["DBSWARM_TEST_SERVERS_DIR"] = servers_dir
    # what scripts/test exports, and where scripts/install --test puts the SAM CLI
    out = subprocess.run(["bash", "-c", "source scripts/lib/server-dirs.sh; echo \"$DBSWARM_FAULT_SERVERS_DIR\"; "
                          "echo \"$DBSWARM_ALT_SERVERS_DIR\"; scripts/lib/sam-cli-dir"], cwd=ROOT, env=env,
                         capture_output=True, text=True, check=True).stdout.split("\n")
    # what the tests use when run without scripts/test
    for k in OWN:
        monkeypatch.delenv(k, raising=False)
    monkeypatch.setenv("DBSWARM_TEST_SERVERS_DIR", servers_dir)
    assert [servers.own_set_dir("faults"), servers.own_set_dir("alt")] == out[:2]
    return {"servers": servers_dir, "faults": out[0], "alt": out[1], "sam-cli": out[2]}


def test_two_suites_with_a_servers_dir_each_share_no_server_and_no_install_folder(monkeypatch, tmp_path):
    one = _paths(str(tmp_path / "one"), monkeypatch)
    two = _paths(str(tmp_path / "two") + "/", monkeypatch)
    every = list(one.values()) + list(two.values())
    assert len(set(every)) == len(every), (one, two)
    for path in every:
        assert path.startswith(str(tmp_path)), path
        assert not {"/tmp/dbswarm-faults-servers", "/tmp/dbswarm-alt-servers", "/opt/sam-cli"} & {path}
    assert one["faults"] == f"{tmp_path}/one-faults" and one["sam-cli"] == f"{tmp_path}/one-sam-cli"
    # a folder given for one of them wins
    env = dict(os.environ, DBSWARM_TEST_SERVERS_DIR=str(tmp_path / "one"), SAM_CLI_VENV=str(tmp_path / "sam"))
    assert subprocess.run([str(ROOT / "scripts" / "lib" / "sam-cli-dir")], env=env, capture_output=True,
                          text=True).stdout.strip() == str(tmp_path / "sam")


FIXED = re.compile(r"/tmp/dbswarm-(faults|pfs|alt)-servers|/opt/sam-cli")


def test_no_test_or_script_falls_back_to_a_fixed_shared_path():
    """A test module run without scripts/test derives its own set's folder (tests/servers.py
    own_set_dir), never a fixed path another suite uses: /opt/sam-cli is scripts/lib/sam-cli-dir's
    default only where no DBSWARM_TEST_SERVERS_DIR is given (and said so in scripts/install)."""
    allowed = {"scripts/lib/sam-cli-dir", "scripts/install", "tests/unit/test_own_paths.py"}
    files = subprocess.run(["git", "ls-files", "tests", "scripts", ".ci"], cwd=ROOT, capture_output=True, text=True,
                           check=True).stdout.split()
    found = [f"{name}:{n}" for name in files if name not in allowed and (ROOT / name).is_file()
             for n, line in enumerate((ROOT / name).read_text(errors="replace").splitlines(), 1)
             if FIXED.search(line)]
    assert files and not found, found
