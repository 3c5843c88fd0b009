"""The indexed path (docs/kubernetes.md) as an array-job system runs it: a coordinator process
and N worker processes, each given only the results store, the campaign id and its index
variable, sharing results through an S3 endpoint served over HTTP by moto's server in its own
process; the real PostgreSQL of the test servers. Its figures equal `dbswarm run`'s."""
import json
import os
import signal
import subprocess
import sys
import time
from pathlib import Path

import pytest

from dbswarm.run.runtime.local import run_campaign
from tests import servers, timing
from tests.moto_server import moto_server

ROOT = Path(__file__).resolve().parents[2]
pytestmark = [pytest.mark.servers, pytest.mark.slow]


@pytest.fixture(scope="module")
def s3():
    """moto's S3 server in its own process; the environment every process of the campaign gets."""
    with moto_server() as url:
        env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k != "DBSWARM_PROGRESS_DIR"}
        env.update(AWS_ENDPOINT_URL_S3=url, AWS_ACCESS_KEY_ID="array-user", AWS_SECRET_ACCESS_KEY="array-secret",
                   AWS_DEFAULT_REGION="us-east-1", DBSWARM_PERSIST_INTERVAL_S="1")
        import boto3
        boto3.client("s3", endpoint_url=url, region_name="us-east-1", aws_access_key_id="a",
                     aws_secret_access_key="b").create_bucket(Bucket="array")
        yield env


# the campaign the first test reads, run once both ways (in-process `dbswarm run`, and the array of
# indexed workers): YCSB and sysbench, each run's figures equal
WORKLOADS = {
    "ycsb": {"preset": "a", "recordcount": 2000, "operationcount": 6000, "threads": 8},
    "sysbench": {"family": "sysbench", "test": "oltp_read_write", "tables": 2, "table_size": 1000, "events": 400,
                 "threads": 8},
}


def _campaign(tmp_path: Path, name: str, workloads: list[dict]) -> Path:
    env = servers.start()
    doc = {"name": name, "seed": 11, "target": servers.target("postgresql", env), "fanout": {"shards": 4},
           **({"workload": workloads[0]} if len(workloads) == 1 else {"matrix": {"workload": workloads}})}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path


def _cli(*args: str, env: dict) -> list[str]:
    return [sys.executable, "-m", "dbswarm", *args]


def _worker(index: int, cid: str, env: dict, log: Path) -> subprocess.Popen:
    wenv = dict(env, JOB_COMPLETION_INDEX=str(index))  # the index variable, nothing else per worker
    return subprocess.Popen(_cli("worker", "--results", "s3://array/t", "--campaign-id", cid, env=wenv),
                            env=wenv, stdout=log.open("w"), stderr=subprocess.STDOUT, cwd=ROOT)


def _result(env: dict, cid: str) -> dict:
    import boto3
    s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL_S3"], region_name="us-east-1",
                      aws_access_key_id="a", aws_secret_access_key="b")
    return json.loads(s3.get_object(Bucket="array", Key=f"t/campaigns/{cid}/result.json")["Body"].read())


def _counts(run: dict) -> dict:
    return {phase: {op: s["count"] for op, s in p["operations"].items()} for phase, p in run["phases"].items()}


def _indexed(path: Path, cid: str, env: dict, tmp_path: Path, kill_index: int | None = None) -> dict:
    coord = subprocess.Popen(_cli("coordinate", str(path), "--results", "s3://array/t", "--campaign-id", cid,
                                  "--lead-seconds", "2", "--json", env=env),
                             env=env, stdout=subprocess.PIPE, stderr=(tmp_path / f"{cid}.coord.log").open("w"),
                             cwd=ROOT, text=True)
    workers = {i: _worker(i, cid, env, tmp_path / f"{cid}.w{i}.log") for i in range(4)}
    killed = False
    if kill_index is not None:
        # kill the index once its shard of the run phase has persisted a checkpoint, then start it again
        import boto3
        s3 = boto3.client("s3", endpoint_url=env["AWS_ENDPOINT_URL_S3"], region_name="us-east-1",
                          aws_access_key_id="a", aws_secret_access_key="b")
        key = f"t/campaigns/{cid}/runs/000/run/shard-{kill_index}.json"
        deadline = time.monotonic() + timing.timeout(120)
        while time.monotonic() < deadline and not killed:
            try:
                doc = json.loads(s3.get_object(Bucket="array", Key=key)["Body"].read())
            except s3.exceptions.NoSuchKey:
                doc = {}
            if doc.get("status") == "continue" and doc.get("segments"):
                workers[kill_index].send_signal(signal.SIGKILL)
                workers[kill_index].wait(30)
                killed = True
                workers[kill_index] = _worker(kill_index, cid, env, tmp_path / f"{cid}.w{kill_index}.again.log")
            time.sleep(0.2)
        assert killed, "the shard never persisted a checkpoint to kill after"
    out, _ = coord.communicate(timeout=timing.timeout(300))
    assert coord.returncode == 0, (tmp_path / f"{cid}.coord.log").read_text()[-3000:]
    for i, w in workers.items():
        assert w.wait(timing.timeout(60)) == 0, (tmp_path / f"{cid}.w{i}.log").read_text()[-3000:]
    assert json.loads(out)["status"] == "complete"
    return _result(env, cid)


@pytest.fixture(scope="module")
def both(s3, tmp_path_factory) -> tuple[dict, dict]:
    """(`dbswarm run`'s result, the array's) of the campaign of WORKLOADS: one coordinator and four
    indexed workers for both runs."""
    tmp_path = tmp_path_factory.mktemp("indexed")
    path = _campaign(tmp_path, "ix", list(WORKLOADS.values()))
    local = run_campaign(str(path), str(tmp_path / "local"), show_progress=False, log=lambda *_: None)
    assert local["status"] == "complete"
    want = json.loads((Path(local["store"]) / local["campaign_id"] / "result.json").read_text())
    got = _indexed(path, "ix-1", s3, tmp_path)
    assert got["missing_shards"] == [] and got["status"] == "complete"
    assert [r["run_id"] for r in got["runs"]] == [r["run_id"] for r in want["runs"]]
    assert len(got["runs"]) == len(WORKLOADS)
    return want, got


@pytest.mark.parametrize("workload", ["ycsb", "sysbench"])
def test_an_array_of_workers_gives_what_dbswarm_run_gives(both, workload):
    want, got = (result["runs"][list(WORKLOADS).index(workload)] for result in both)
    assert _counts(got) == _counts(want)  # every operation type of every phase, exactly
    for phase in got["phases"].values():
        assert phase["shards"]["complete"] == [0, 1, 2, 3] and phase["status"] == "complete"
        assert set(phase["start_skew_s"]["per_shard"]) == {"0", "1", "2", "3"}  # the barrier, measured
    if workload == "sysbench":
        assert got["phases"]["run"]["sysbench"]["transactions"] == 400


def test_a_killed_index_started_again_resumes_from_its_checkpoint(s3, tmp_path):
    # paced so that the run phase lasts a few seconds: the index is killed after a checkpoint
    path = _campaign(tmp_path, "ix-kill", [{"preset": "c", "recordcount": 2000, "operationcount": 6000,
                                            "threads": 4, "target": 1000}])
    got = _indexed(path, "ix-kill-1", s3, tmp_path, kill_index=1)
    run = got["runs"][0]["phases"]["run"]
    assert run["operations_total"] == 6000  # nothing lost, nothing counted twice
    assert got["runs"][0]["phases"]["load"]["operations_total"] == 2000
