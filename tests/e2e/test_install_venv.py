"""Issue 58 item 1: the README's commands on a python3 that refuses `pip install` (a stock
Debian 12's: externally managed, PEP 668). With no virtualenv active and PYTHON not set,
scripts/install makes the checkout's own virtualenv .venv/, installs dbswarm there, says
where, and scripts/dbswarm reaches it. Here the refusing python3 is a stand-in first on PATH
(pip refused as Debian's refuses it; `-m venv` and the rest go to this Python), in a copy of
the checkout's tracked files (the test's .venv/ is its own). The real thing was checked in a
debootstrap'ed Debian 12 (docs/testing.md)."""
import os
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from tests import timing

pytestmark = pytest.mark.slow

ROOT = Path(__file__).resolve().parents[2]
REFUSING = """#!/bin/sh
if [ "$1" = "-m" ] && [ "$2" = "pip" ]; then
    echo "error: externally-managed-environment (a stand-in for Debian's python3, PEP 668)" >&2
    exit 1
fi
exec {real} "$@"
"""


def test_install_makes_and_uses_a_project_venv_where_python3_refuses_pip(tmp_path):
    repo = tmp_path / "repo"
    files = subprocess.run(["git", "ls-files", "-z"], cwd=ROOT, capture_output=True, text=True, check=True)
    for name in filter(None, files.stdout.split("\0")):
        if (ROOT / name).is_file():
            (repo / name).parent.mkdir(parents=True, exist_ok=True)
            shutil.copy2(ROOT / name, repo / name)
    bin_dir = tmp_path / "bin"
    bin_dir.mkdir()
    base = getattr(sys, "_base_executable", None) or sys.executable  # not a venv's python: a system one
    (bin_dir / "python3").write_text(REFUSING.format(real=base))
    (bin_dir / "python3").chmod(0o755)
    env = {k: v for k, v in os.environ.items() if k not in ("VIRTUAL_ENV", "PYTHON", "PYTHONPATH", "BASE_PYTHON")}
    env["PATH"] = f"{bin_dir}:{env.get('PATH', '')}"
    refused = subprocess.run(["python3", "-m", "pip", "install", "hdrhistogram"], env=env, capture_output=True,
                             text=True)
    assert refused.returncode == 1 and "externally-managed" in refused.stderr
    proc = subprocess.run(["scripts/install"], cwd=repo, env=env, capture_output=True, text=True,
                          timeout=timing.timeout(1200))
    assert proc.returncode == 0, proc.stderr[-3000:]
    venv = repo / ".venv"
    assert f"a virtualenv for dbswarm in {venv}" in proc.stderr  # says where
    assert "source .venv/bin/activate" in proc.stderr and "scripts/dbswarm" in proc.stderr
    where = subprocess.run([str(venv / "bin" / "python"), "-c", "import dbswarm; print(dbswarm.__file__)"], env=env,
                           capture_output=True, text=True)
    assert where.stdout.strip() == str(repo / "shared" / "dbswarm" / "__init__.py"), where.stderr
    # dbswarm reachable: the wrapper, and the venv's own entry point
    wrapped = subprocess.run(["scripts/dbswarm", "presets"], cwd=repo, env=env, capture_output=True, text=True)
    assert wrapped.returncode == 0 and "S1" in wrapped.stdout, wrapped.stderr
    assert (venv / "bin" / "dbswarm").exists()
    # a given PYTHON (.ci/run's venv) is used as it is: no .venv/ is made
    shutil.rmtree(venv)
    given = subprocess.run(["bash", "-c", "source scripts/lib/python.sh; dbswarm_make_venv; echo \"$PY\""],
                           cwd=repo, env=dict(env, PYTHON=sys.executable), capture_output=True, text=True)
    assert given.stdout.strip() == sys.executable and not venv.exists(), given.stderr
