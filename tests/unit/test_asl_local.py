"""The local emulation's start-up shortcut: moto's ASL interpreter imported without
moto.batch's package (and so without moto.ec2), and the real package still importable."""
import os
import subprocess
import sys

PROBE = r"""
import sys, time
from dbswarm.run.runtime.emulator import _import_interpreter
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


ENGINE_PROBE = r"""
from jsonpath_ng.ext.parser import ExtendedJsonPathParser
from dbswarm.run.runtime import emulator
from dbswarm.run.runtime.asl_engine import LocalLambda
emulator._import_interpreter()
from moto.stepfunctions.parser.asl.utils import json_path
from moto.stepfunctions.parser.asl.component.state.exec.state_task import lambda_eval_utils
original_client_for = lambda_eval_utils.boto_client_for
built = []
init = ExtendedJsonPathParser.__init__
ExtendedJsonPathParser.__init__ = lambda self, *a, **k: (built.append(1), init(self, *a, **k))[1]
data = {"a": {"b": [1, 2]}, "c": "x"}
before = json_path.extract_json("$.c", data), len(built)
cloud = object()
emulator._register(cloud, {})
try:
    values = [json_path.extract_json(p, data) for p in ("$.a.b", "$.c", "$.a.b[1]", "$.a", "$.c")]
    assert values == [[1, 2], "x", 2, {"a": {"b": [1, 2]}}["a"], "x"], values
    assert len(built) <= before[1] + 1, f"{len(built) - before[1]} parsers built for 5 paths (1 at most)"
    lam = lambda_eval_utils.boto_client_for(region="us-east-1", service="lambda")
    assert lambda_eval_utils.boto_client_for(region="us-east-1", service="lambda") is lam
    assert isinstance(lam, LocalLambda) and lam.region == "us-east-1"  # the functions' processes, not moto's API
    s3 = lambda_eval_utils.boto_client_for(region="us-east-1", service="s3")
    assert s3 is not lam and s3.meta.service_model.service_name == "s3"
finally:
    emulator._unregister(cloud)  # ... and keeps the parsed paths (DBSWARM_CACHE) for the next process
assert lambda_eval_utils.boto_client_for is original_client_for, "the patch outlived the emulation"
assert before[0] == "x"
print("ok", len(built) - before[1])
"""


def test_the_interpreter_builds_one_jsonpath_parser_and_one_client_per_service(tmp_path):
    """moto's interpreter builds a jsonpath_ng parser (22 ms of CPU) for every path it evaluates
    and a boto3 client for every Task it runs; while an emulation is registered, one parser
    serves every path (each parsed once, results unchanged) and one client each service, and
    moto's own functions are back when it ends. The parsed paths are kept: a second process
    builds no parser for them."""
    env = dict(os.environ, DBSWARM_CACHE=str(tmp_path))
    for parsers in ("1", "0"):
        out = subprocess.run([sys.executable, "-c", ENGINE_PROBE], capture_output=True, text=True, timeout=120, env=env)
        assert out.returncode == 0 and out.stdout.split() == ["ok", parsers], (out.stdout, out.stderr[-2000:])
