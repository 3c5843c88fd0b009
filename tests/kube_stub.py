"""A stand-in of the Kubernetes API for the tests of `dbswarm kubernetes --apply / --follow /
delete` (tests/unit/test_kubernetes_submit.py, tests/e2e/test_kubernetes_submit_path.py): no
cluster is reachable here. An HTTP server on loopback speaks the few endpoints the official
Python client calls (create, read status and delete of ConfigMaps and batch/v1 Jobs) with the
API's own JSON (objects, Status errors), behind a bearer token; the client reaches it through a
kubeconfig file. With ``run_pods``, its small kubelet runs a Job's pods as local processes of the
manifest's args and env (Secrets resolved by secretKeyRef, the ConfigMap mounted as files), the
workers with their JOB_COMPLETION_INDEX, and reports the Job's status as the Job controller does
(completed and failed indexes, backoffLimitPerIndex, the pod failure policy's FailIndex, Complete
/ Failed). The results store: moto's S3 server in its own process."""
import contextlib
import json
import os
import re
import subprocess
import sys
import threading
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer
from pathlib import Path
from urllib.parse import parse_qs, urlsplit

import yaml

from tests import servers, timing
from tests.moto_server import moto_server

ROOT = Path(__file__).resolve().parents[1]
K8S_VERSION = "1.33.0"
TOKEN = "test-token-7"
PATHS = [(re.compile(r"^/api/v1/namespaces/([^/]+)/(configmaps)(?:/([^/]+))?$"), "ConfigMap"),
         (re.compile(r"^/apis/batch/v1/namespaces/([^/]+)/(jobs)(?:/([^/]+))?(/status)?$"), "Job")]


def ranges(indexes) -> str:
    """The Job API's index list: "0-2,4"."""
    out, run = [], []
    for i in sorted(indexes):
        if run and i == run[-1] + 1:
            run.append(i)
            continue
        if run:
            out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
        run = [i]
    if run:
        out.append(f"{run[0]}-{run[-1]}" if len(run) > 1 else str(run[0]))
    return ",".join(out)


class JobRun:
    """A Job's pods as processes; its status as the Job controller reports it."""

    def __init__(self, kube, ns, job):
        self.kube, self.ns, self.job = kube, ns, job
        spec = job["spec"]
        self.indexed = spec.get("completionMode") == "Indexed"
        self.count = spec.get("completions", 1) if self.indexed else 1
        self.retries = spec.get("backoffLimitPerIndex", 0) if self.indexed else spec.get("backoffLimit", 6)
        self.fail_codes = {c for r in (spec.get("podFailurePolicy") or {}).get("rules", [])
                           if r["action"] == "FailIndex" for c in r.get("onExitCodes", {}).get("values", [])}
        self.pods, self.attempts, self.done, self.failed_idx, self.failed_pods = {}, {}, set(), set(), 0
        for i in range(self.count):
            self._start(i)

    def _env(self, container, index):
        env = dict(self.kube.base_env)
        if self.indexed:
            env["JOB_COMPLETION_INDEX"] = str(index)
        for e in container.get("env", []):
            if "value" in e:
                env[e["name"]] = e["value"]
            else:
                ref = e["valueFrom"]["secretKeyRef"]
                env[e["name"]] = self.kube.secrets[(self.ns, ref["name"])][ref["key"]]
        env.update(self.kube.env_override.get((self.job["metadata"]["name"], index), {}))
        return env

    def _start(self, index):
        pod = self.job["spec"]["template"]["spec"]
        container = pod["containers"][0]
        args = list(container["args"])
        for mount in container.get("volumeMounts", []):  # the ConfigMap's keys as files
            volume = next(v for v in pod["volumes"] if v["name"] == mount["name"])
            folder = Path(self.kube.folder) / self.ns / volume["configMap"]["name"]
            folder.mkdir(parents=True, exist_ok=True)
            for key, text in self.kube.objects[("configmaps", self.ns, volume["configMap"]["name"])]["data"].items():
                (folder / key).write_text(text)
            prefix = mount["mountPath"].rstrip("/") + "/"
            args = [str(folder / a[len(prefix):]) if a.startswith(prefix) else a for a in args]
        self.attempts[index] = self.attempts.get(index, 0) + 1
        log = Path(self.kube.folder) / f"{self.job['metadata']['name']}-{index}-{self.attempts[index]}.log"
        self.pods[index] = subprocess.Popen([sys.executable, "-m", "dbswarm", *args], env=self._env(container, index),
                                            cwd=ROOT, stdout=log.open("w"), stderr=subprocess.STDOUT)

    def status(self) -> dict:
        for i, proc in list(self.pods.items()):
            code = proc.poll()
            if code is None:
                continue
            del self.pods[i]
            if code == 0:
                self.done.add(i)
                continue
            self.failed_pods += 1
            if code in self.fail_codes or self.attempts[i] > self.retries:
                self.failed_idx.add(i)
            else:
                self._start(i)
        st = {"active": len(self.pods), "succeeded": len(self.done), "failed": self.failed_pods}
        if self.indexed:
            st.update(completedIndexes=ranges(self.done), failedIndexes=ranges(self.failed_idx))
        if not self.pods:
            st["conditions"] = [{"type": "Failed" if self.failed_idx else "Complete", "status": "True"}]
        return st

    def stop(self):
        for proc in self.pods.values():
            proc.kill()
            proc.wait()


class FakeKube:
    """The stand-in API server's state: objects, Secrets, refusals to make, what it received."""

    def __init__(self, folder, run_pods=False, base_env=None):
        self.folder, self.run_pods, self.base_env = folder, run_pods, base_env or {}
        self.objects, self.secrets, self.jobs, self.refuse, self.env_override = {}, {}, {}, {}, {}
        self.received = []
        self.lock = threading.Lock()

    def handle(self, method, path, query, body):
        """(code, JSON answer) for one request."""
        found = [(m, kind) for m, kind in ((p.match(path), kind) for p, kind in PATHS) if m]
        if not found:
            return 404, _status(404, "NotFound", f"the server could not find the requested resource ({path})")
        m, kind = found[0]
        ns, plural, name = m.group(1), m.group(2), m.group(3)
        self.received.append((method, path, query, body))
        refusal = self.refuse.get((method, plural))
        if refusal:
            return refusal[0], _status(*refusal)
        key = (plural, ns, name or (body or {}).get("metadata", {}).get("name"))
        if method == "POST":
            if key in self.objects:
                return 409, _status(409, "AlreadyExists", f'{plural}{"" if kind == "ConfigMap" else ".batch"} '
                                    f'"{key[2]}" already exists')
            obj = dict(body, metadata=dict(body["metadata"], uid=f"uid-{len(self.objects)}"))
            self.objects[key] = obj
            if kind == "Job" and self.run_pods:
                self.jobs[key] = JobRun(self, ns, obj)
            return 201, obj
        if key not in self.objects:
            return 404, _status(404, "NotFound", f'{plural} "{name}" not found')
        if method == "GET":
            obj = dict(self.objects[key])
            job = self.jobs.get(key)
            obj["status"] = job.status() if job else {"active": 1}
            return 200, obj
        if method == "DELETE":
            del self.objects[key]
            job = self.jobs.pop(key, None)
            if job:
                job.stop()
            return 200, _status(200, "", "", "Success")
        return 405, _status(405, "MethodNotAllowed", method)

    def stop(self):
        for job in self.jobs.values():
            job.stop()


def _status(code, reason, message, status="Failure"):
    return {"kind": "Status", "apiVersion": "v1", "metadata": {}, "status": status, "message": message,
            "reason": reason, "code": code}


class _Handler(BaseHTTPRequestHandler):
    kube: FakeKube

    def _serve(self):
        split = urlsplit(self.path)
        length = int(self.headers.get("Content-Length") or 0)
        body = json.loads(self.rfile.read(length)) if length else None
        if self.headers.get("Authorization") != f"Bearer {TOKEN}":
            code, answer = 401, _status(401, "Unauthorized", "Unauthorized")
        else:
            with self.kube.lock:
                code, answer = self.kube.handle(self.command, split.path, parse_qs(split.query), body)
        data = json.dumps(answer).encode()
        self.send_response(code)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_DELETE = _serve

    def log_message(self, *args):
        pass


@contextlib.contextmanager
def moto_s3():
    """moto's S3 server in its own process: the results store of the pods and of the follower."""
    with moto_server() as url:
        yield _store(url)


def _store(url: str) -> dict:
    env = {k: v for k, v in os.environ.items() if not k.startswith("AWS_") and k not in (
        "DBSWARM_PROGRESS_DIR", "KUBECONFIG", "KUBERNETES_SERVICE_HOST", "DBSWARM_S3_ENDPOINT")}
    env.update(DBSWARM_PERSIST_INTERVAL_S="1")
    keys = {"AWS_ACCESS_KEY_ID": "k8s-user", "AWS_SECRET_ACCESS_KEY": "k8s-secret"}
    import boto3
    boto3.client("s3", endpoint_url=url, region_name="us-east-1", **{k.lower(): v for k, v in keys.items()}
                 ).create_bucket(Bucket="kube")
    return {"url": url, "pod_env": env, "keys": keys,
            "env": dict(env, AWS_ENDPOINT_URL_S3=url, AWS_DEFAULT_REGION="us-east-1", **keys)}


@contextlib.contextmanager
def serve(tmp_path, s3):
    """The stand-in API on loopback and a kubeconfig pointing the client at it."""
    fake = FakeKube(str(tmp_path / "pods"), base_env=s3["pod_env"])
    Path(fake.folder).mkdir()
    server = ThreadingHTTPServer(("127.0.0.1", 0), type("H", (_Handler,), {"kube": fake}))
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    config = {"apiVersion": "v1", "kind": "Config", "current-context": "stub",
              "clusters": [{"name": "stub", "cluster": {"server": f"http://127.0.0.1:{server.server_port}"}}],
              "users": [{"name": "u", "user": {"token": TOKEN}}],
              "contexts": [{"name": "stub", "context": {"cluster": "stub", "user": "u", "namespace": "load"}}]}
    fake.kubeconfig = str(tmp_path / "kubeconfig")
    Path(fake.kubeconfig).write_text(yaml.safe_dump(config))
    fake.secrets[("load", "s3-keys")] = dict(s3["keys"])
    try:
        yield fake
    finally:
        server.shutdown()
        server.server_close()
        fake.stop()


def dbswarm(*args, env, timeout=120.0):
    return subprocess.run([sys.executable, "-m", "dbswarm", *args], capture_output=True, text=True, cwd=ROOT,
                          env=env, timeout=timing.timeout(timeout))


def render_args(path, kube, s3, cid, *extra):
    return ["kubernetes", str(path), "--results", "s3://kube/k", "--image", "registry/dbswarm:1", "--namespace",
            "load", "--campaign-id", cid, "--db-secret", "db-password", "--aws-secret", "s3-keys", "--s3-endpoint",
            s3["url"], "--kubeconfig", kube.kubeconfig, *extra]


def offline_campaign(tmp_path):
    doc = {"name": "k8s", "target": {"engine": "postgresql", "url": "postgresql://app@db.internal:5432/app",
                                     "password": {"env": "PGPASSWORD"}},
           "workload": {"preset": "a", "recordcount": 1000, "threads": 4}}
    path = tmp_path / "k8s.yaml"
    path.write_text(yaml.safe_dump(doc))
    return path


def pg_campaign(tmp_path, name, **extra):
    env = servers.start()
    target = servers.target("postgresql", env)
    password = Path(target["password"]["file"]).read_text().strip()
    target["password"] = {"env": "PGPASSWORD"}
    doc = {"name": name, "seed": 5, "target": target, "fanout": {"shards": 2},
           "workload": {"preset": "a", "recordcount": 400, "operationcount": 600, "threads": 2,
                        "table": f"usertable_{name.replace('-', '_')}"}, **extra}
    path = tmp_path / f"{name}.json"
    path.write_text(json.dumps(doc))
    return path, password


def pod_logs(kube) -> str:
    return "\n".join(f"== {p.name}\n{p.read_text()[-1500:]}" for p in sorted(Path(kube.folder).glob("*.log")))


def no_traceback(proc):
    assert "Traceback" not in proc.stderr + proc.stdout, proc.stderr[-3000:]


# ---- a campaign submitted, followed, cleaned up ------------------------------------------------

