"""The indexed path's pieces that need no server: the index variable, the step command, and the
Kubernetes manifests, validated offline against the OpenAPI schema of a current release."""
import json
import subprocess
import sys
from pathlib import Path

import pytest
import yaml

from dbswarm.errors import DbswarmError
from dbswarm.run.front import kubernetes
from dbswarm.run.runtime import indexed

ROOT = Path(__file__).resolve().parents[2]
K8S_VERSION = "1.33.0"


@pytest.mark.parametrize("name", indexed.INDEX_VARIABLES)
def test_each_array_system_s_index_variable_names_the_shard(name):
    assert indexed.shard_index(None, {name: "3"}) == 3
    assert indexed.shard_index(5, {name: "3"}) == 5  # --shard wins


@pytest.mark.parametrize("env, words", [
    ({}, "JOB_COMPLETION_INDEX"), ({"JOB_COMPLETION_INDEX": "x1"}, "'x1'"),
    ({"AWS_BATCH_JOB_ARRAY_INDEX": "-2"}, "AWS_BATCH_JOB_ARRAY_INDEX"),
])
def test_a_missing_or_bad_index_is_named(env, words):
    with pytest.raises(DbswarmError, match=words):
        indexed.shard_index(None, env)


def test_the_step_command_runs_a_state_machine_step_with_its_json(tmp_path):
    campaign = {"name": "steps", "workload": {"preset": "c", "recordcount": 100, "operationcount": 100}}
    event = {"campaign": json.dumps(campaign), "results": str(tmp_path), "campaign_id": "steps-1"}
    out = subprocess.run([sys.executable, "-m", "dbswarm", "step", "plan", "-"], input=json.dumps(event),
                         capture_output=True, text=True, cwd=ROOT, timeout=120)
    assert out.returncode == 0, out.stderr
    answer = json.loads(out.stdout)
    assert answer["campaign_id"] == "steps-1" and (tmp_path / "steps-1" / "plan.json").is_file()
    bad = subprocess.run([sys.executable, "-m", "dbswarm", "step", "arm", "{not json"], capture_output=True,
                         text=True, cwd=ROOT, timeout=120)
    assert bad.returncode == 2 and "EVENT: expected a JSON object" in bad.stderr and "Traceback" not in bad.stderr


def _campaign(tmp_path, **extra):
    doc = {"name": "k8s", "target": {"engine": "postgresql", "url": "postgresql://app@db.internal:5432/app",
                                     "password": {"env": "PGPASSWORD"}},
           "workload": {"preset": "a", "recordcount": 1000, "threads": 16}, **extra}
    path = tmp_path / "k8s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def test_manifests_validate_against_the_kubernetes_schema_and_hold_no_secret(tmp_path):
    import kubernetes_validate as kv  # the test extras: a missing package fails, never skips
    path = _campaign(tmp_path, fanout={"threads_per_shard": 4})
    manifests = kubernetes.render(str(path), "s3://bucket/p", "k8s-1", "registry/dbswarm:1", namespace="load",
                                  db_secret="db", aws_secret="s3keys", s3_endpoint="http://minio:9000")
    for m in manifests:
        kv.validate(m, K8S_VERSION, strict=True)
    config, coordinator, workers = manifests
    assert config["kind"] == "ConfigMap" and "PGPASSWORD" in config["data"]["campaign.yaml"]
    spec = workers["spec"]
    assert spec["completionMode"] == "Indexed" and spec["completions"] == spec["parallelism"] == 4
    assert spec["backoffLimitPerIndex"] >= 1 and spec["podFailurePolicy"]["rules"]
    env = {e["name"]: e for e in spec["template"]["spec"]["containers"][0]["env"]}
    assert env["PGPASSWORD"]["valueFrom"]["secretKeyRef"] == {"name": "db", "key": "PGPASSWORD"}
    assert env["AWS_SECRET_ACCESS_KEY"]["valueFrom"]["secretKeyRef"]["name"] == "s3keys"
    assert env["AWS_ENDPOINT_URL_S3"]["value"] == "http://minio:9000"
    args = spec["template"]["spec"]["containers"][0]["args"]
    assert args[:1] == ["worker"] and "k8s-1" in args
    cargs = coordinator["spec"]["template"]["spec"]["containers"][0]["args"]
    assert cargs[0] == "coordinate" and cargs[cargs.index("--workers") + 1] == "4"
    text = kubernetes.render_yaml(manifests)
    assert list(yaml.safe_load_all(text)) == manifests


def test_without_a_fanout_the_array_size_is_the_workers_option(tmp_path):
    manifests = kubernetes.render(str(_campaign(tmp_path)), "s3://b", "k-2", "img", db_secret="db", workers=3)
    assert manifests[2]["spec"]["completions"] == 3


@pytest.mark.parametrize("change, words", [
    ({"results": "/tmp/local"}, "--results"),
    ({"db_secret": None}, "--db-secret"),
    ({"workers": 0}, "--workers"),
])
def test_render_refuses_what_cannot_run_on_a_cluster(tmp_path, change, words):
    kwargs = {"results": "s3://b", "db_secret": "db", "workers": 2, **change}
    with pytest.raises(DbswarmError, match=words):
        kubernetes.render(str(_campaign(tmp_path)), kwargs.pop("results"), "k-3", "img", **kwargs)


def test_a_password_by_file_cannot_be_rendered_as_a_secret_reference(tmp_path):
    path = _campaign(tmp_path)
    doc = yaml.safe_load(path.read_text())
    doc["target"]["password"] = {"file": "/run/pw"}
    path.write_text(yaml.safe_dump(doc))
    with pytest.raises(DbswarmError, match="target.password"):
        kubernetes.render(str(path), "s3://b", "k-4", "img", db_secret="db")


def test_a_peak_search_is_refused_by_the_indexed_path(tmp_path):
    path = _campaign(tmp_path, search={"threads": [4, 8]})
    with pytest.raises(DbswarmError, match="search"):
        kubernetes.render(str(path), "s3://b", "k-5", "img", db_secret="db")
