"""A campaign submitted with `dbswarm kubernetes --apply --follow`, run by the stand-in of the
Kubernetes API in tests/kube_stub.py (its kubelet starts the Jobs' pods as local processes, as
the manifests say), followed to its end and cleaned up: on the test PostgreSQL, the results on an
S3 endpoint served by moto's server. No cluster is reachable here: the protocol is the API's, the
cluster is not."""
import json
import re

import pytest

from tests import kube_stub as ks

pytestmark = [pytest.mark.servers, pytest.mark.slow]


@pytest.fixture(scope="module")
def s3():
    with ks.moto_s3() as store:
        yield store


@pytest.fixture
def kube(tmp_path, s3):
    with ks.serve(tmp_path, s3) as fake:
        yield fake


def test_apply_and_follow_runs_the_campaign_and_exits_with_its_status(tmp_path, kube, s3):
    import kubernetes_validate as kv
    path, password = ks.pg_campaign(tmp_path, "k8s-ok")
    kube.run_pods = True
    kube.secrets[("load", "db-password")] = {"PGPASSWORD": password}
    out = ks.dbswarm(*ks.render_args(path, kube, s3, "k8s-ok", "--phase-timeout", "120", "--apply", "--follow",
                                 "--poll", "0.3"), env=s3["env"], timeout=300)
    ks.no_traceback(out)
    assert out.returncode == 0, out.stderr[-3000:] + ks.pod_logs(kube)
    posts = [body for method, _, _, body in kube.received if method == "POST"]
    assert [b["kind"] for b in posts] == ["ConfigMap", "Job", "Job"]
    for body in posts:  # what the cluster received validates against the API's schema
        kv.validate(body, ks.K8S_VERSION, strict=True)
    assert password not in json.dumps(posts) and "k8s-secret" not in json.dumps(posts)  # secrets by reference only
    err = out.stderr
    for words in ("created ConfigMap load/k8s-ok-campaign", "created Job load/k8s-ok-workers",
                  "coordinator running", "index(es) 0-1 done", "/load 2/2", "/run 2/2",
                  "coordinator ended (Job Complete)"):
        assert words in err, (words, err[-3000:])
    assert "result.json:" in out.stdout  # the campaign's tables and files, as `dbswarm run` prints them
    import boto3
    result = json.loads(boto3.client("s3", endpoint_url=s3["url"], region_name="us-east-1", aws_access_key_id="a",
                                     aws_secret_access_key="b").get_object(
        Bucket="kube", Key="k/campaigns/k8s-ok/result.json")["Body"].read())
    run = result["runs"][0]["phases"]["run"]
    counted = sum(s["count"] for s in run["operations"].values())
    assert result["status"] == "complete" and counted == 600  # every planned operation, counted once

    gone = ks.dbswarm("kubernetes", "delete", "k8s-ok", "--namespace", "load", "--kubeconfig", kube.kubeconfig,
                    env=s3["env"])
    ks.no_traceback(gone)
    assert gone.returncode == 0, gone.stderr
    for words in ("deleted Job load/k8s-ok-coordinator and its pods", "deleted Job load/k8s-ok-workers and its pods",
                  "deleted ConfigMap load/k8s-ok-campaign", "results stay"):
        assert words in gone.stderr
    deletes = [(path, query) for method, path, query, _ in kube.received if method == "DELETE"]
    assert len(deletes) == 3 and all(q.get("propagationPolicy") == ["Background"] for _, q in deletes)
    again = ks.dbswarm("kubernetes", "delete", "k8s-ok", "--namespace", "load", "--kubeconfig", kube.kubeconfig,
                     env=s3["env"])
    assert again.returncode == 2 and "nothing deleted" in again.stderr
    ks.no_traceback(again)


def test_follow_names_a_failed_index_and_exits_with_the_partial_campaign_s_status(tmp_path, kube, s3):
    path, password = ks.pg_campaign(tmp_path, "k8s-bad", phases=["prepare", "load"])
    kube.run_pods = True
    kube.secrets[("load", "db-password")] = {"PGPASSWORD": password}
    # index 1's pod gets an index its worker refuses (exit 2): the pod failure policy fails that index at once
    kube.env_override[("k8s-bad-workers", 1)] = {"JOB_COMPLETION_INDEX": "one"}
    # a short phase timeout: shard 1 is recorded missing after it (were shard 0 too slow for it on a loaded
    # machine, it would be missing too: the campaign partial all the same)
    out = ks.dbswarm(*ks.render_args(path, kube, s3, "k8s-bad", "--phase-timeout", "8", "--apply",
                                 "--follow", "--poll", "0.3"), env=s3["env"], timeout=300)
    ks.no_traceback(out)
    assert out.returncode == 3, out.stderr[-3000:] + ks.pod_logs(kube)  # partial: a shard missing
    assert "index(es) 1 FAILED" in out.stderr and "coordinator ended (Job Failed)" in out.stderr, out.stderr[-3000:]
    assert "workers: index(es) 1 failed for good" in out.stderr and "job-name=k8s-bad-workers" in out.stderr
    assert re.search(r"shard 1 missing: no worker finished shard 1", out.stderr), out.stderr[-3000:]


# ---- without pods: what the API refuses, Ctrl-C, the missing client ---------------------------
