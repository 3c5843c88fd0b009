"""Submit, follow and delete a campaign's manifests (``dbswarm.run.front.kubernetes``) through the
Kubernetes API, with the official Python client: the optional extra ``dbswarm[kubernetes]``.

- ``apply``: creates the ConfigMap and the two Jobs, in that order; an API refusal (403, 409
  already exists, ...) is one line naming the object, the namespace and the API's message.
- ``follow``: polls the two Jobs' status (the workers' completed and failed indexes, the
  coordinator's end) and the campaign's progress in the results store, prints a line when it
  changes, and when the coordinator's Job ends, the campaign's tables and its exit status (as
  ``dbswarm run``). Ctrl-C stops following; nothing is deleted, the campaign goes on. Whatever
  SIGINT's disposition at start (a shell's background job inherits it ignored, and Python then
  installs no KeyboardInterrupt: Ctrl-C or ``kill -INT`` would do nothing), follow installs its
  own, as ``dbswarm run`` does (``interrupt.GracefulStop``).
- ``delete``: deletes the three objects (the Jobs with their pods); the results stay in the store.

Configuration: ``--kubeconfig`` (else ``KUBECONFIG``, else ``~/.kube/config``), or the pod's
service account when run inside a cluster (``KUBERNETES_SERVICE_HOST``).
"""
from __future__ import annotations

import json
import os
import signal
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable, Optional

from dbswarm.errors import DbswarmError
from dbswarm.results.store import RESULT_DOC, campaign_key, open_store
from dbswarm.run.front import api
from dbswarm.run.front.kubernetes import object_base

Log = Callable[[str], None]
POLL_S = 5.0
WORKERS_GRACE_S = 60.0  # after the coordinator's end, how long to wait for the workers' Job to end
INSTALL_HINT = "pip install 'dbswarm[kubernetes]' (or: pip install kubernetes)"


def _client_package() -> Any:
    try:
        import kubernetes as k8s  # noqa: PLC0415 (an optional extra: only the submit path needs it)
        import urllib3  # noqa: PLC0415 (the client's transport, to name a connection failure)
    except ImportError:
        raise DbswarmError(f"--apply, --follow and delete talk to the cluster with the Kubernetes Python client, "
                           f"which is not installed: {INSTALL_HINT}") from None
    return k8s, urllib3


@dataclass
class Cluster:
    """The API clients of one cluster and namespace."""
    core: Any
    batch: Any
    namespace: str
    host: str
    api_exception: type[BaseException]
    transport_error: type[BaseException]

    def call(self, what: str, fn: Callable[..., Any], *args: Any, **kwargs: Any) -> Any:
        """One API call; its refusal or a network failure as a DbswarmError naming ``what``."""
        try:
            return fn(*args, **kwargs)
        except self.api_exception as exc:
            raise DbswarmError(f"Kubernetes API: {what} in namespace {self.namespace}: {_refusal(exc)}") from None
        except self.transport_error as exc:
            raise DbswarmError(f"Kubernetes API: cannot reach {self.host} ({what}): "
                               f"{getattr(exc, 'reason', None) or exc}") from None


def _refusal(exc: Any) -> str:
    """An ApiException as "403 Forbidden: <the API's message>" and what to do about it."""
    status = int(getattr(exc, "status", 0) or 0)
    message = ""
    try:
        message = str(json.loads(exc.body or "{}").get("message") or "")
    except (ValueError, AttributeError, TypeError):
        message = str(exc.body or "")[:300]
    text = f"{status} {getattr(exc, 'reason', '') or ''}".strip() + (f": {message}" if message else "")
    hint = {401: "the credentials of the kubeconfig were refused",
            403: "the account needs create, get and delete on configmaps and jobs.batch in this namespace",
            404: "not found (another namespace? deleted?)",
            409: "a campaign id is submitted once: choose another --campaign-id, or delete the old objects "
                 "(`dbswarm kubernetes delete ID`)"}.get(status)
    return text + (f" ({hint})" if hint else "")


def connect(namespace: str, kubeconfig: Optional[str] = None, context: Optional[str] = None) -> Cluster:
    """The API clients: a kubeconfig (given, KUBECONFIG, ~/.kube/config), else in a pod its service account."""
    k8s, urllib3 = _client_package()
    from kubernetes.config.config_exception import ConfigException  # noqa: PLC0415 (the optional extra)
    try:
        if kubeconfig or context or not os.environ.get("KUBERNETES_SERVICE_HOST"):
            client = k8s.config.new_client_from_config(config_file=kubeconfig, context=context,
                                                       persist_config=False)
        else:
            cfg = k8s.client.Configuration()
            k8s.config.load_incluster_config(client_configuration=cfg)
            client = k8s.client.ApiClient(cfg)
    except (ConfigException, OSError, ValueError, TypeError) as exc:
        where = kubeconfig or os.environ.get("KUBECONFIG") or "~/.kube/config"
        raise DbswarmError(f"--kubeconfig: no usable Kubernetes configuration in {where} "
                           f"(or the pod's service account): {exc}") from None
    return Cluster(core=k8s.client.CoreV1Api(client), batch=k8s.client.BatchV1Api(client), namespace=namespace,
                   host=client.configuration.host, api_exception=k8s.client.ApiException,
                   transport_error=urllib3.exceptions.HTTPError)


def object_names(campaign_id: str) -> dict[str, str]:
    """The names ``kubernetes.render`` gives a campaign's objects."""
    base = object_base(campaign_id)
    return {"configmap": f"{base}-campaign", "coordinator": f"{base}-coordinator", "workers": f"{base}-workers"}


def apply(cluster: Cluster, manifests: list[dict[str, Any]], log: Log) -> list[str]:
    """Creates the manifests in order; returns "Kind namespace/name" of each created. A refusal
    names what was created before it (delete them, or keep them and fix the rest)."""
    created: list[str] = []
    for m in manifests:
        kind, name = m["kind"], m["metadata"]["name"]
        if kind == "ConfigMap":
            fn = cluster.core.create_namespaced_config_map
        elif kind == "Job":
            fn = cluster.batch.create_namespaced_job
        else:  # render makes only these two kinds
            raise DbswarmError(f"cannot submit a {kind}")
        try:
            cluster.call(f"create {kind} {name}", fn, cluster.namespace, m)
        except DbswarmError as err:
            if created:
                raise DbswarmError(f"{err}; created before it: {', '.join(created)}") from None
            raise
        created.append(f"{kind} {cluster.namespace}/{name}")
        log(f"created {kind} {cluster.namespace}/{name}")
    return created


def delete(cluster: Cluster, campaign_id: str, log: Log) -> list[str]:
    """Deletes the campaign's Jobs (and their pods: background propagation) and ConfigMap;
    returns what was deleted. None of them found: an error (a wrong id or namespace)."""
    names = object_names(campaign_id)
    targets = [("Job", names["coordinator"], cluster.batch.delete_namespaced_job),
               ("Job", names["workers"], cluster.batch.delete_namespaced_job),
               ("ConfigMap", names["configmap"], cluster.core.delete_namespaced_config_map)]
    deleted = []
    for kind, name, fn in targets:
        try:
            fn(name, cluster.namespace, propagation_policy="Background")
        except cluster.api_exception as exc:
            if int(getattr(exc, "status", 0) or 0) == 404:
                log(f"{kind} {cluster.namespace}/{name}: not found")
                continue
            raise DbswarmError(f"Kubernetes API: delete {kind} {name} in namespace {cluster.namespace}: "
                               f"{_refusal(exc)}") from None
        except cluster.transport_error as exc:
            raise DbswarmError(f"Kubernetes API: cannot reach {cluster.host} (delete {kind} {name}): "
                               f"{getattr(exc, 'reason', None) or exc}") from None
        what = f"{kind} {cluster.namespace}/{name}" + (" and its pods" if kind == "Job" else "")
        deleted.append(what)
        log(f"deleted {what}")
    if not deleted:
        raise DbswarmError(f"campaign {campaign_id}: none of {', '.join(n for _, n, _ in targets)} exists in "
                           f"namespace {cluster.namespace}: nothing deleted")
    return deleted


# ---- following a campaign ----------------------------------------------------------------------

def _job_state(job: Any) -> dict[str, Any]:
    status = job.status
    conditions = {c.type for c in (status.conditions or []) if str(c.status) == "True"}
    end = "succeeded" if "Complete" in conditions else "failed" if "Failed" in conditions else None
    return {"end": end, "active": status.active or 0, "succeeded": status.succeeded or 0,
            "failed": status.failed or 0, "completed_indexes": status.completed_indexes or "",
            "failed_indexes": status.failed_indexes or ""}


def job_line(coordinator: dict[str, Any], workers: dict[str, Any]) -> str:
    end = {"succeeded": "ended (Job Complete)", "failed": "ended (Job Failed)"}.get(coordinator["end"] or "")
    parts = [f"coordinator {end or ('running' if coordinator['active'] else 'pending')}"]
    w = f"workers {workers['active']} running"
    if workers["completed_indexes"]:
        w += f", index(es) {workers['completed_indexes']} done"
    if workers["failed_indexes"]:
        w += f", index(es) {workers['failed_indexes']} FAILED"
    elif workers["failed"]:
        w += f", {workers['failed']} pod(s) failed and restarted"
    return ", ".join(parts + [w])


def progress_line(progress: dict[str, Any]) -> str:
    if not progress.get("planned"):
        return "not planned yet"
    parts = []
    for run in progress["runs"]:
        for phase, p in run["phases"].items():
            parts.append(f"{run['run_id']}/{phase} {p['reported']}/{p['shards']}"
                         + (f" ({p['failed']} failed)" if p["failed"] else ""))
    return "shards reported: " + ", ".join(parts)


def follow(cluster: Cluster, campaign_id: str, results: str, finish: Callable[[dict], int], log: Log,
           poll_s: float = POLL_S) -> int:
    """Follows the campaign until its coordinator's Job ends; returns ``finish``'s exit status
    for its result (the CLI prints it as ``dbswarm run`` does), 3 when the coordinator failed
    before writing one, 130 on Ctrl-C (nothing is deleted)."""
    names = object_names(campaign_id)
    store = open_store(results)
    store_note = None
    last = None
    ended_at = None
    failed_indexes = ""
    saved = _catch_sigint()
    try:
        while True:
            coordinator = _job_state(cluster.call(f"read Job {names['coordinator']}",
                                                  cluster.batch.read_namespaced_job_status,
                                                  names["coordinator"], cluster.namespace))
            workers = _job_state(cluster.call(f"read Job {names['workers']}", cluster.batch.read_namespaced_job_status,
                                              names["workers"], cluster.namespace))
            try:
                shards = progress_line(api.progress(store, campaign_id))
            except Exception as exc:  # credentials or endpoint of the store not set here: the Jobs still tell
                shards = "shards: the results store is not readable from here"
                if store_note is None:
                    store_note = f"{results}: {str(exc)[:200]}"
                    log(f"{store_note} (set AWS_ENDPOINT_URL_S3 / DBSWARM_S3_ENDPOINT and the credentials here "
                        "to see the shards' progress)")
            if workers["failed_indexes"] != failed_indexes:
                failed_indexes = workers["failed_indexes"]
                log(f"workers: index(es) {failed_indexes} failed for good (backoffLimitPerIndex reached, or bad "
                    "input: exit 2): their shards are recorded missing --phase-timeout after their phase's start "
                    f"and the campaign ends partial; their pods: `kubectl -n {cluster.namespace} get pods -l "
                    f"job-name={names['workers']}`")
            line = f"{campaign_id}: {job_line(coordinator, workers)}; {shards}"
            if line != last:
                log(line)
                last = line
            if coordinator["end"]:  # the workers exit when they see the campaign's end: a few seconds
                ended_at = ended_at or time.monotonic()
                if workers["end"] or time.monotonic() - ended_at > WORKERS_GRACE_S:
                        return _finish(store, campaign_id, results, coordinator["end"], finish, log, cluster, names)
            time.sleep(poll_s)
    except KeyboardInterrupt:
        log(f"stopped following {campaign_id}; nothing was deleted and the campaign goes on in the cluster: "
            f"follow it again with `dbswarm kubernetes follow {campaign_id} --results {results} --namespace "
            f"{cluster.namespace}`, clean up with `dbswarm kubernetes delete {campaign_id} --namespace "
            f"{cluster.namespace}`")
        return 130
    finally:
        if saved is not None:
            signal.signal(signal.SIGINT, saved)


def _catch_sigint() -> Any:
    """SIGINT raises KeyboardInterrupt here, even when inherited ignored; returns the handler to
    restore (None: not the main thread, where only the main thread's handler applies)."""
    if threading.current_thread() is not threading.main_thread():
        return None
    return signal.signal(signal.SIGINT, signal.default_int_handler)


def _finish(store: Any, campaign_id: str, results: str, end: str, finish: Callable[[dict], int], log: Log,
            cluster: Cluster, names: dict[str, str]) -> int:
    try:
        result = store.get_json(campaign_key(store, campaign_id, RESULT_DOC))
    except Exception as exc:  # absent, or the store not readable from here
        logs = f"kubectl -n {cluster.namespace} logs job/{names['coordinator']}"
        if end == "succeeded":
            log(f"the coordinator's Job succeeded, but {results}'s result.json is not readable here ({str(exc)[:200]}): "
                f"`dbswarm show {results.rstrip('/')}/campaigns/{campaign_id}` where the store is reachable")
            return 0
        log(f"the coordinator's Job failed before writing the campaign's result: `{logs}` says why")
        return 3
    status = str(result.get("status"))
    compare = result.get("compare") or {}
    return finish({"store": results, "campaign_id": campaign_id,
                   "status": "complete" if status == "regressed" else status,
                   "compare": {"verdict": compare.get("verdict")}})
