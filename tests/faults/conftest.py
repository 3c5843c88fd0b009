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


@pytest.fixture(scope="session", autouse=True)
def _stop_the_fault_set_at_the_end():
    """The fault tests' own server set (tests/servers.py own_set_dir("faults"), started by the
    modules that stop servers) is stopped when the session ends, as the alternate set is, unless
    DBSWARM_FAULT_SERVERS_DIR names a set of the caller's own (scripts/test stops that one)."""
    yield
    from tests import servers
    folder = servers.own_set_dir("faults")
    if not os.environ.get("DBSWARM_FAULT_SERVERS_DIR") and Path(folder, "env").exists():
        servers.stop_servers(folder)


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


# ---- the planted-password scan over every output of the fault suite (issue 33) -------------------
# Every fault test that plants a password (tests/faults/test_secrets.py's PLANT, the test servers'
# own password) leaves its outputs where this scan reads them once the session ends: every file of
# every campaign folder (a folder with campaign.json, plan.json or result.json: shard files,
# result.*, summary.md, report.html, execution.json, submitted.yaml) and every progress folder under
# the session's temporary folder, and the stdout and stderr of every `dbswarm` process the tests
# ran; in every encoding below. A find fails the session (an error at the last test's teardown).
PLANT = "Pl4nted-S3cret-0xC0FFEE"
_OUTPUTS: list[tuple[str, bytes]] = []   # (what, bytes) of every dbswarm process's stdout/stderr


def _encodings(secret: str) -> dict[str, bytes]:
    import base64
    import json as _json
    from urllib.parse import quote, quote_plus
    raw = secret.encode()
    out = {"utf-8": raw, "hex": raw.hex().encode(), "HEX": raw.hex().upper().encode(),
           "url": quote(secret, safe="").encode(), "url+": quote_plus(secret).encode(),
           "json-\\u": "".join(f"\\u{ord(c):04x}" for c in secret).encode(),
           "json": _json.dumps(secret)[1:-1].encode()}
    for codec in ("utf-16-le", "utf-16-be", "utf-32-le", "utf-32-be"):
        out[codec] = secret.encode(codec)
    for name, enc in (("base64", base64.b64encode), ("base64url", base64.urlsafe_b64encode),
                      ("base32", base64.b32encode)):
        block = 5 if name == "base32" else 3
        for shift in range(block):   # the secret at any offset of a longer encoded text
            text = enc(b"\0" * shift + raw)
            lead = -(-shift * (8 if block == 5 else 4) // block) + 1 if shift else 0
            out[f"{name}@{shift}"] = text[lead:-8 if block == 5 else -4]
    return {k: v for k, v in out.items() if len(v) >= 8}


def _planted() -> dict[str, str]:
    found = {"PLANT": PLANT}
    path = os.environ.get("DBSWARM_TEST_PASSWORD_FILE")
    if path and os.path.exists(path):
        found["the test servers' password"] = Path(path).read_text().strip()
    return {k: v for k, v in found.items() if len(v) >= 6}


def _output_files(base: Path):
    """Files dbswarm wrote under the session's temporary folder: campaign folders, progress folders."""
    seen = set()
    for marker in ("campaign.json", "plan.json", "result.json"):
        for hit in base.rglob(marker):
            folder = hit.parent
            if folder in seen:
                continue
            seen.add(folder)
            yield from (p for p in folder.rglob("*") if p.is_file())
    for folder in list(base.rglob("progress")) + list(base.rglob("dbswarm-progress-*")):
        if folder.is_dir() and folder not in seen:
            seen.add(folder)
            yield from (p for p in folder.rglob("*") if p.is_file())


def scan_for_planted(base: Path, outputs) -> tuple[int, int, list[str]]:
    """(files scanned, process outputs scanned, findings "where: which secret in which encoding")."""
    patterns = [(name, enc, blob) for name, secret in _planted().items()
                for enc, blob in _encodings(secret).items()]
    findings, files = [], 0
    for path in _output_files(base):
        files += 1
        data = path.read_bytes()
        findings += [f"{path}: {name} ({enc})" for name, enc, blob in patterns if blob in data]
    for what, data in outputs:
        findings += [f"{what}: {name} ({enc})" for name, enc, blob in patterns if blob in data]
    return files, len(outputs), findings


_communicate = subprocess.Popen.communicate


def _recording_communicate(self, *args, **kwargs):
    out, err = _communicate(self, *args, **kwargs)
    argv = self.args if isinstance(self.args, (list, tuple)) else [str(self.args)]
    if any("dbswarm" in str(a) for a in argv):
        for name, data in (("stdout", out), ("stderr", err)):
            if data:
                _OUTPUTS.append((f"`{' '.join(map(str, argv[-6:]))}` {name}",
                                 data.encode("utf-8", "surrogateescape") if isinstance(data, str) else data))
    return out, err


@pytest.fixture(scope="session", autouse=True)
def planted_password_scan(tmp_path_factory):
    """After the fault suite: no planted password in any of its outputs (see above)."""
    subprocess.Popen.communicate = _recording_communicate
    try:
        yield
    finally:
        subprocess.Popen.communicate = _communicate
    files, outputs, findings = scan_for_planted(tmp_path_factory.getbasetemp(), _OUTPUTS)
    _SCANNED.append(f"planted-password scan: {files} files and {outputs} process outputs of the fault suite, "
                    f"{len(_encodings(PLANT))} encodings of {len(_planted())} secrets: {len(findings)} found")
    assert not findings, "a planted password in the fault suite's outputs:\n" + "\n".join(findings[:50])


_SCANNED: list[str] = []


def pytest_terminal_summary(terminalreporter):
    for line in _SCANNED:
        terminalreporter.write_line(line)


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
