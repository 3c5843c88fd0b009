"""moto's S3 server in a process of its own, as an S3-compatible endpoint a user would run (MinIO,
Ceph): the indexed path, the Kubernetes stand-in and local mode's endpoint tests share it."""
import contextlib
import socket
import subprocess
import sys
import time
from collections.abc import Iterator

from tests import timing


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@contextlib.contextmanager
def moto_server() -> Iterator[str]:
    """The server's URL once it accepts connections; stopped on exit."""
    port = free_port()
    proc = subprocess.Popen([sys.executable, "-m", "moto.server", "-H", "127.0.0.1", "-p", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + timing.timeout(30)
    while time.monotonic() < deadline:
        try:
            socket.create_connection(("127.0.0.1", port), timeout=0.5).close()
            break
        except OSError:
            time.sleep(0.1)
    try:
        yield f"http://127.0.0.1:{port}"
    finally:
        proc.terminate()
        proc.wait(10)
