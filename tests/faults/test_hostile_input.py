"""Issue 33 item 8 (and the bad-input corpus of its "Also"): input built to break the reader —
1,000 levels of nesting in JSON or YAML, a file that is not UTF-8 — gives exit 2 from `dbswarm
validate` / `dbswarm run` and HTTP 400 from the API, each naming the problem: never a traceback
(a RecursionError ran 3,000 lines, exit 1; the API answered with a Lambda error)."""
import json
import subprocess
import sys

import pytest

from tests.faults.conftest import dbswarm_env

LEVELS = 1000
CASES = {
    "json-objects": '{"name": "faults-deep", "workload": ' + '{"a": ' * LEVELS + "1" + "}" * LEVELS + "}",
    "json-arrays": '{"name": "faults-deep", "matrix": {"threads": ' + "[" * LEVELS + "]" * LEVELS + "}}",
    "yaml-flow": "name: faults-deep\nworkload: " + "[" * LEVELS + "]" * LEVELS + "\n",
    "yaml-block": "name: faults-deep\ntarget:\n  options:\n    x:\n      " + "- " * LEVELS + "1\n",
}


def _problem_named(text: str) -> bool:
    return "levels deep" in text and ("nested too deeply to read" in text or "nested more than 64 levels" in text)


@pytest.mark.parametrize("case", list(CASES))
@pytest.mark.parametrize("command", ["validate", "run"])
def test_deep_nesting_is_exit_2_naming_the_problem(tmp_path, case, command):
    spec = tmp_path / ("c.json" if case.startswith("json") else "c.yaml")
    spec.write_text(CASES[case])
    args = [command, str(spec)] + (["--results", str(tmp_path / "r"), "--quiet"] if command == "run" else [])
    proc = subprocess.run([sys.executable, "-m", "dbswarm", *args], env=dbswarm_env(), capture_output=True,
                          text=True, timeout=120)
    assert proc.returncode == 2, proc.stderr[-2000:]
    assert _problem_named(proc.stderr), proc.stderr[-2000:]
    assert "Traceback" not in proc.stderr and len(proc.stderr.splitlines()) <= 3, proc.stderr[-2000:]
    assert not (tmp_path / "r").exists()


@pytest.mark.parametrize("case", list(CASES))
def test_deep_nesting_is_a_400_from_the_api(tmp_path, case):
    from dbswarm.results.store import LocalStore
    from dbswarm.run import api
    dep = api.Deployment("arn:aws:states:us-east-1:123456789012:stateMachine:dbswarm-campaign",
                         LocalStore(tmp_path / "r"), secret_prefix="dbswarm/", allowed_targets="10.0.0.0/8")
    out = api.handle({"requestContext": {"http": {"method": "POST"}}, "rawPath": "/campaigns",
                      "body": CASES[case]}, dep)
    assert out["statusCode"] == 400, out
    assert _problem_named(" ".join(json.loads(out["body"])["problems"])), out["body"]


def test_a_file_that_is_not_utf8_is_exit_2(tmp_path):
    spec = tmp_path / "c.yaml"
    spec.write_bytes("name: caf\xe9\n".encode("latin-1"))
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "validate", str(spec)], env=dbswarm_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stderr
    assert "is not UTF-8 text (byte 0xe9 at offset 9)" in proc.stderr and "Traceback" not in proc.stderr


@pytest.mark.parametrize("text,problem", [
    ("name: faults-key\nsearch: {key: nosuch}\nworkload: {preset: a}\n",
     "search.key: 'nosuch' is not a numeric key of the ycsb workload of run 000; one of: "),
    ("name: faults-key\nsearch: {key: requestdistribution}\nworkload: {preset: a}\n",
     "search.key: 'requestdistribution' is not a numeric key"),
    ("name: faults-warm\nworkload: {preset: a, maxexecutiontime: 10, warmuptime: 60, operationcount: 0}\n",
     "workload.warmuptime: 60 s is not shorter than run 000's 10 s time limit"),
    ("name: faults-warm\nworkload: {family: sysbench, time: 5, warmuptime: 5}\n",
     "workload.warmuptime: 5 s is not shorter than run 000's 5 s time limit"),
])
def test_cross_field_mistakes_are_exit_2_not_a_traceback(tmp_path, text, problem):
    """The bad-input corpus of issue 33's "Also": an unknown search.key ended in a traceback, a
    warm-up longer than its run was accepted (and measured nothing)."""
    spec = tmp_path / "c.yaml"
    spec.write_text(text)
    proc = subprocess.run([sys.executable, "-m", "dbswarm", "validate", str(spec)], env=dbswarm_env(),
                          capture_output=True, text=True, timeout=60)
    assert proc.returncode == 2, proc.stdout + proc.stderr[-2000:]
    assert problem in proc.stderr and "Traceback" not in proc.stderr, proc.stderr[-2000:]
