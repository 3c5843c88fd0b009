"""The local emulation's start-up shortcut: moto's ASL interpreter imported without
moto.batch's package (and so without moto.ec2), and the real package still importable."""
import subprocess
import sys

PROBE = r"""
import sys, time
from dbswarm.run.emulator import _import_interpreter
t = time.perf_counter()
_import_interpreter()
took = time.perf_counter() - t
assert "moto.stepfunctions.parser.models" in sys.modules
assert "moto.ec2" not in sys.modules, "moto.ec2 was imported: the shortcut no longer applies"
assert not [n for n in sys.modules if n.startswith("moto.batch")], "the stand-in was left behind"
import moto.batch  # the real package, after the shortcut
assert hasattr(moto.batch, "batch_backends")
from moto.batch.utils import JobStatus
print(round(took, 3))
"""


def test_interpreter_imports_without_moto_ec2_and_batch_stays_importable():
    out = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=120)
    assert out.returncode == 0, out.stderr[-2000:]
