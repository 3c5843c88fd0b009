"""A local campaign's processes import what they use (issue 60, docs/decisions/0018): the runner
no part of moto it does not run (Lambda, DynamoDB, EC2, Batch), and a function process forked
for a campaign whose results are a folder neither moto nor boto3; the execution history read
from moto's backend equals what its API answers, a failed execution's too."""
import json
import subprocess
import sys

PROBE = r"""
import json, sys, tempfile
from pathlib import Path
from dbswarm.run.runtime import emulator
from dbswarm.run.runtime.local import run_campaign

HEAVY = ("moto.awslambda", "moto.awslambda_simple", "moto.dynamodb", "moto.ec2", "moto.batch")
same_history = []
_read = emulator.LocalCloud.history


def history(cloud, arn):
    events = _read(cloud, arn)
    api, token = [], None
    while True:  # the API's pages, as before the backend was read
        page = cloud.sfn.get_execution_history(executionArn=arn, maxResults=1000,
                                               **({"nextToken": token} if token else {}))
        api += page["events"]
        token = page.get("nextToken")
        if not token:
            break
    same_history.append((len(events), events == api))
    return events


emulator.LocalCloud.history = history
if __name__ == "__main__":
    tmp = Path(tempfile.mkdtemp())
    noop = {"name": "imports", "target": {"engine": "noop"}, "phases": ["run"],
            "workload": {"family": "ycsb", "preset": "c", "operationcount": 16, "threads": 1}}
    out = run_campaign(noop, str(tmp / "results"), show_progress=False, log=lambda *_: None, quiet=True)
    runner = [m for m in HEAVY if m in sys.modules]
    probe = tmp / "probe.py"
    probe.write_text("import sys\n\ndef handler(event, context):\n"
                     "    return sorted(m for m in ('boto3', 'botocore', 'moto', 's3transfer') if m in sys.modules)\n")
    job = {"logical_id": "Probe", "name": "probe", "arn": "arn:probe", "memory": 128, "timeout": 30,
           "code_dir": str(tmp), "module_file": str(probe), "function_name": "handler", "event": {},
           "cwd": str(tmp), "env": {"PATH": "/usr/bin:/bin"}, "request_id": "probe"}
    processes = emulator.FunctionProcesses(aws=False)  # the campaign's forkserver, still running
    status, value = processes.call(job, 30)
    processes.close()
    bad = {"name": "badrun", "target": {"engine": "sqlite", "url": "/proc/dbswarm-cannot/x.db"},
           "workload": {"operationcount": 100, "threads": 1}}
    failed = run_campaign(bad, str(tmp / "results"), show_progress=False, log=lambda *_: None, quiet=True)
    print(json.dumps({"status": out["status"], "runner": runner, "function": [status, value],
                      "failed": failed["execution"]["error"], "history": same_history}))
"""


def test_a_local_campaign_s_processes_import_only_what_they_use():
    proc = subprocess.run([sys.executable, "-c", PROBE], capture_output=True, text=True, timeout=600)
    assert proc.returncode == 0, proc.stderr[-3000:]
    got = json.loads(proc.stdout.strip().splitlines()[-1])
    assert got["status"] == "complete"
    assert got["runner"] == [], f"the runner imported {got['runner']}: moto's Lambda is not run locally"
    status, value = got["function"]
    assert status == "ok" and json.loads(value) == [], \
        f"a function process of a campaign writing to a folder has {value} imported (forkserve.PRELOAD)"
    assert got["failed"] == "dbswarm.RunFailed"
    assert len(got["history"]) == 2 and all(n > 10 and same for n, same in got["history"]), got["history"]
