"""`dbswarm schema | head -1` and the like: when the reader of stdout has gone, dbswarm ends
quietly (exit 141, as a process ended by SIGPIPE), never with a BrokenPipeError traceback."""
import os
import subprocess
import sys
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[2]


def _closed_reader_run(args):
    """Run `python -m dbswarm ARGS` with stdout a pipe whose read end is already closed."""
    read_end, write_end = os.pipe()
    os.close(read_end)
    try:
        proc = subprocess.run([sys.executable, "-m", "dbswarm", *args], stdout=write_end, stderr=subprocess.PIPE,
                              text=True, timeout=120, cwd=ROOT)
    finally:
        os.close(write_end)
    return proc


@pytest.mark.parametrize("args", [["schema"], ["schema", "--result"], ["presets"],
                                  ["validate", str(ROOT / "examples" / "demo.yaml")]])
def test_a_closed_pipe_ends_quietly(args):
    proc = _closed_reader_run(args)
    assert proc.returncode == 141, (proc.returncode, proc.stderr)
    assert proc.stderr == "", proc.stderr


def test_a_broken_pipe_that_is_not_stdout_is_not_hidden(monkeypatch, capsys):
    from dbswarm import cli

    def boom(args):
        raise BrokenPipeError("a subprocess's pipe")
    monkeypatch.setattr(cli, "_main", lambda argv=None: boom(argv))
    with pytest.raises(BrokenPipeError):
        cli.main(["schema"])
