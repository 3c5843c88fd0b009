"""`dbswarm kubernetes --apply / --follow / delete` through the official Kubernetes Python client,
against the stand-in of the Kubernetes API in tests/kube_stub.py (no cluster is reachable here):
what the API refuses, Ctrl-C while following, the missing client package. The campaigns that run
to their end through the stand-in's kubelet: tests/e2e/test_kubernetes_submit_path.py."""
import os
import signal
import subprocess
import sys
import time
from pathlib import Path
from unittest import mock

import pytest
import yaml

from tests import kube_stub as ks
from tests import timing
from tests.moto_server import free_port

ROOT = Path(__file__).resolve().parents[2]


@pytest.fixture(scope="module")
def s3():
    with ks.moto_s3() as store:
        yield store


@pytest.fixture
def kube(tmp_path, s3):
    with ks.serve(tmp_path, s3) as fake:
        yield fake


@pytest.fixture
def cli(capsys):
    """`dbswarm ARGS` in this process (the CLI's own main: a user error is its one line, anything else
    escapes as the traceback the test fails with), its output as a finished process's."""
    from dbswarm.cli import main

    def run(*args, env):
        with mock.patch.dict(os.environ, env, clear=True):
            code = main(list(args))
        out = capsys.readouterr()
        return subprocess.CompletedProcess(list(args), code, out.out, out.err)
    return run


def test_api_refusals_are_one_clear_line_naming_the_object(tmp_path, kube, s3, cli):
    path = ks.offline_campaign(tmp_path)
    kube.refuse[("POST", "jobs")] = (403, "Forbidden", 'jobs.batch is forbidden: User "ci" cannot create resource '
                                     '"jobs" in API group "batch" in the namespace "load"')
    out = cli(*ks.render_args(path, kube, s3, "k8s-403", "--apply"), env=s3["env"])
    ks.no_traceback(out)
    assert out.returncode == 2
    assert ("Kubernetes API: create Job k8s-403-coordinator in namespace load: 403 Forbidden: jobs.batch is "
            "forbidden") in out.stderr, out.stderr
    assert "created before it: ConfigMap load/k8s-403-campaign" in out.stderr  # what to clean up
    assert "create, get and delete on configmaps and jobs.batch" in out.stderr

    kube.refuse.clear()
    first = cli(*ks.render_args(path, kube, s3, "k8s-409", "--apply"), env=s3["env"])
    assert first.returncode == 0, first.stderr
    assert "follow it: `dbswarm kubernetes follow k8s-409" in first.stderr
    second = cli(*ks.render_args(path, kube, s3, "k8s-409", "--apply"), env=s3["env"])
    ks.no_traceback(second)
    assert second.returncode == 2
    assert ('create ConfigMap k8s-409-campaign in namespace load: 409 Conflict: configmaps "k8s-409-campaign" '
            'already exists (a campaign id is submitted once') in second.stderr, second.stderr

    config = yaml.safe_load(Path(kube.kubeconfig).read_text())
    config["users"][0]["user"]["token"] = "wrong"
    bad = tmp_path / "bad-kubeconfig"
    bad.write_text(yaml.safe_dump(config))
    refused = cli(*ks.render_args(path, kube, s3, "k8s-401", "--apply", "--kubeconfig", str(bad)), env=s3["env"])
    ks.no_traceback(refused)
    assert refused.returncode == 2 and "401 Unauthorized" in refused.stderr and "credentials" in refused.stderr

    config["clusters"][0]["cluster"]["server"] = f"http://127.0.0.1:{free_port()}"
    bad.write_text(yaml.safe_dump(config))
    down = cli(*ks.render_args(path, kube, s3, "k8s-down", "--apply", "--kubeconfig", str(bad)), env=s3["env"])
    ks.no_traceback(down)
    assert down.returncode == 2 and "Kubernetes API: cannot reach http://127.0.0.1:" in down.stderr, down.stderr

    missing = cli(*ks.render_args(path, kube, s3, "k8s-nocfg", "--apply", "--kubeconfig",
                                     str(tmp_path / "absent")), env=s3["env"])
    ks.no_traceback(missing)
    assert missing.returncode == 2 and "--kubeconfig: no usable Kubernetes configuration" in missing.stderr


# The follower started with SIGINT ignored, as a non-interactive shell starts a background job (and
# so every process of a suite run as `scripts/test &`): a Python started so installs no
# KeyboardInterrupt, and before follow installed its own, Ctrl-C did nothing there. Started so
# here whatever way the suite itself was started; then exec'd: `python -m dbswarm` itself.
SIGINT_IGNORED = ("import os, signal, sys; signal.signal(signal.SIGINT, signal.SIG_IGN); "
                  "os.execv(sys.executable, [sys.executable, *sys.argv[1:]])")


def test_ctrl_c_stops_following_and_deletes_nothing(tmp_path, kube, s3, cli):
    path = ks.offline_campaign(tmp_path)
    assert cli(*ks.render_args(path, kube, s3, "k8s-int", "--apply"), env=s3["env"]).returncode == 0
    log = tmp_path / "follow.err"
    with log.open("w") as err:
        proc = subprocess.Popen([sys.executable, "-c", SIGINT_IGNORED, "-m", "dbswarm", "kubernetes", "follow",
                                 "k8s-int", "--results", "s3://kube/k", "--namespace", "load", "--kubeconfig",
                                 kube.kubeconfig, "--poll", "0.2"], cwd=ROOT, env=s3["env"],
                                stdout=subprocess.DEVNULL, stderr=err)
        try:
            deadline = time.monotonic() + timing.timeout(60)
            while "k8s-int: coordinator" not in log.read_text():  # following: in follow's loop
                assert proc.poll() is None, log.read_text()
                assert time.monotonic() < deadline, f"follow printed no Job line: {log.read_text()}"
                time.sleep(0.1)
            proc.send_signal(signal.SIGINT)
            try:
                code = proc.wait(timing.timeout(30))
            except subprocess.TimeoutExpired:
                pytest.fail(f"SIGINT did not stop following: {log.read_text()}")
        finally:
            proc.kill()
            proc.wait()
    text = log.read_text()
    assert code == 130, text
    assert "k8s-int: coordinator running, workers 1 running; not planned yet" in text  # the Jobs and the store
    assert "nothing was deleted" in text and "Traceback" not in text
    assert not [m for m, *_ in kube.received if m == "DELETE"]
    assert len([k for k in kube.objects if k[2].startswith("k8s-int")]) == 3


def test_follow_or_delete_of_an_unknown_campaign_says_so(tmp_path, kube, s3, cli):
    out = cli("kubernetes", "follow", "nope", "--results", "s3://kube/k", "--namespace", "load",
                   "--kubeconfig", kube.kubeconfig, env=s3["env"])
    ks.no_traceback(out)
    assert out.returncode == 2 and "read Job nope-coordinator in namespace load: 404" in out.stderr, out.stderr
    bare = cli("kubernetes", "follow", env=s3["env"])
    assert bare.returncode == 2 and "name the campaign id" in bare.stderr


def test_without_the_client_package_the_install_is_named(tmp_path):
    path = ks.offline_campaign(tmp_path)
    code = ("import sys; sys.modules['kubernetes'] = None; from dbswarm.cli import main; "
            f"sys.exit(main(['kubernetes', {str(path)!r}, '--results', 's3://b/p', '--db-secret', 'db', '--apply']))")
    out = subprocess.run([sys.executable, "-c", code], capture_output=True, text=True, cwd=ROOT,
                         timeout=timing.timeout(120))
    ks.no_traceback(out)
    assert out.returncode == 2 and "pip install 'dbswarm[kubernetes]'" in out.stderr, out.stderr
    render = subprocess.run([sys.executable, "-c", code.replace(", '--apply'", "")], capture_output=True, text=True,
                            cwd=ROOT, timeout=timing.timeout(120))
    assert render.returncode == 0 and "kind: Job" in render.stdout  # rendering needs no client


def test_index_ranges_as_the_job_api_writes_them():
    assert ks.ranges([]) == "" and ks.ranges([3]) == "3" and ks.ranges([0, 1, 2, 4, 6, 7]) == "0-2,4,6-7"
